"""Publishing a staged dataset repo to the Hugging Face Hub.

``publish(DIR, PublishOptions(repo_id=...))`` validates the directory, plans the diff
against the remote (:mod:`.plan`), commits it atomically or through a pull request of
several commits (:mod:`.commit`), retries 429 / 5xx with backoff (:mod:`.retry`), resumes
from a journal after a failure (:mod:`.journal`) and tags the release.
"""

from termgrade.core.lazy import callable_package
from termgrade.core.retry import RetryPolicy
from termgrade.publish.files import LocalFile, RemoteFile, scan_local
from termgrade.publish.plan import CommitLimits, Plan, make_plan
from termgrade.publish.publisher import PublishOptions, PublishResult, publish
from termgrade.publish.validation import ValidationOutcome, Validator, check_staged_repo

__all__ = [
    "CommitLimits",
    "LocalFile",
    "Plan",
    "PublishOptions",
    "PublishResult",
    "RemoteFile",
    "RetryPolicy",
    "ValidationOutcome",
    "Validator",
    "check_staged_repo",
    "make_plan",
    "publish",
    "scan_local",
]

# `termgrade.publish` is this package once it is imported: calling it calls publish().
callable_package(__name__, "publish")
