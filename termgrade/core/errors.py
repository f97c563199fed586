"""Every exception TermGrade defines, in one place.

Each exception subclasses the builtin it resembles and carries structured attributes;
its message names what failed, the task or path, and the fix. The CLI maps any
:class:`TermGradeError` to that message and exit status 1.

The second part of this module holds the signals one part of TermGrade raises for another
to catch (an endpoint that gave up, a layer too large to review, a Hub parent that moved):
they are handled inside the library, so they are not subclasses of :class:`TermGradeError`
and keep the builtin bases their handlers catch. Only the code that runs inside containers, where
TermGrade is not installed (``termgrade/scoring/incontainer/``, ``termgrade/attacks/
scripts/``), defines its own.
"""

from __future__ import annotations

from pathlib import Path


class TermGradeError(Exception):
    """Base of every error TermGrade raises on purpose."""

    fix: str | None = None

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.fix = fix
        super().__init__(message if fix is None else f"{message}\n  fix: {fix}")


class OutputError(TermGradeError, OSError):
    """An output path cannot be written (not a regular file, not writable, no space)."""

    def __init__(self, path: object, reason: str, *, fix: str | None = None) -> None:
        self.path = path
        super().__init__(f"cannot write {path}: {reason}",
                         fix=fix or "choose a writable path for the output (-o / --output)")


def output_error(path: object, exc: OSError) -> OutputError:
    """The OSError of writing ``path`` as a message that names it."""
    return OutputError(exc.filename or path, exc.strerror or str(exc))


class TaskLoadError(TermGradeError, ValueError):
    """A task directory is missing a file or has a malformed one."""

    def __init__(
        self, path: Path, message: str, *, field: str | None = None, fix: str | None = None
    ) -> None:
        self.path = path
        self.field = field
        where = f"{path}" + (f" [{field}]" if field else "")
        super().__init__(f"{where}: {message}", fix=fix)


class EngineUnavailableError(TermGradeError, ConnectionError):
    """No Docker engine answers."""


class ImageBuildError(TermGradeError, RuntimeError):
    """`docker build` of a task or the base image failed."""

    def __init__(self, image: str, log_tail: str, *, fix: str | None = None) -> None:
        self.image = image
        self.log_tail = log_tail
        super().__init__(f"building image {image} failed:\n{log_tail}", fix=fix)


class MissingImageError(ImageBuildError):
    """A task's Dockerfile starts FROM an image that is neither here nor pullable."""

    def __init__(self, image: str, missing: str, reason: str, *, fix: str | None = None) -> None:
        self.image = image
        self.missing = missing
        self.log_tail = ""
        TermGradeError.__init__(
            self, f"FROM {missing}: the image is not on this machine and could not be pulled "
            f"({reason}), so {image} was not built", fix=fix)


class SandboxError(TermGradeError, RuntimeError):
    """A container operation (start, exec, copy) failed for infrastructure reasons."""


class VerifierError(TermGradeError, RuntimeError):
    """The verifier crashed, timed out, or wrote no usable reward."""


class RecordError(TermGradeError, ValueError):
    """A JSON/JSONL record is malformed or violates its schema."""

    def __init__(self, source: str, message: str, *, fix: str | None = None) -> None:
        self.source = source
        super().__init__(f"{source}: {message}", fix=fix)


class BuildError(TermGradeError, ValueError):
    """A dataset repo cannot be built from these inputs (names the record and the fix)."""


class DataWarning(UserWarning):
    """Suspicious but usable input data (NaN rewards, mixed k, missing tasks), with counts.

    Library functions both return these as records and emit them through :mod:`warnings`;
    the CLI prints them. Data is never silently zeroed.
    """


class PublishError(TermGradeError, RuntimeError):
    """Publishing a staged repo to the Hub failed or was refused (names the repo and the fix)."""


class MaterializeError(TermGradeError, ValueError):
    """A dataset row cannot be turned back into a task directory."""


class UnsafeArchiveError(MaterializeError):
    """A task archive tries to write outside its directory, holds links or devices, or is a
    bomb; nothing was written."""


class EndpointUnusableError(TermGradeError, ConnectionError):
    """A model endpoint that no trial could use: a malformed URL, nothing listening, a
    refused key, a model it does not serve, no tool calling. Found before any container
    starts (names the URL and the fix)."""

    def __init__(self, url: str, message: str, *, fix: str | None = None) -> None:
        self.url = url
        super().__init__(f"{url}: {message}", fix=fix)


class GradeIncompleteError(TermGradeError, RuntimeError):
    """A grading run that finished without measuring what it was asked to: no trial was
    counted, or tasks were given up after repeated infrastructure losses."""


class OptionError(TermGradeError, ValueError):
    """An option or configuration value that cannot work (bad cut points, k, range, spec)."""


class IngestError(TermGradeError, ValueError):
    """Harbor (or other) trial output cannot be ingested: nothing found, or no output path."""

    def __init__(self, path: str, message: str, *, fix: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {message}", fix=fix)


class TrialSkippedError(IngestError):
    """One trial folder is incomplete (no result.json) or malformed; ingestion skips it."""

    def __init__(self, path: str, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        super().__init__(path, reason)


class MixedDigestsError(RecordError):
    """One task's trials graded different versions of its files (``labels --mix-digests``)."""


class SecretsReviewError(TermGradeError, ValueError):
    """``termgrade secrets review``: no repo there, or a baseline it cannot read."""


class ReuseError(TermGradeError):
    """``grade --reuse`` names no earlier run, or the run being written itself."""


class AnswerError(TermGradeError, ValueError):
    """The model's answer is not a well-formed generated task (the reason is fed back)."""


class GradeAborted(TermGradeError):
    """The endpoint refuses every request; finished trials are in the journal."""


class RayUnavailableError(TermGradeError, ConnectionError):
    """No Ray cluster answers at the address, or its nodes cannot run trials."""


# --- signals handled inside the library ---------------------------------------------------


class EndpointError(RuntimeError):
    """The endpoint did not answer usefully after every retry: an infrastructure loss.

    ``fatal``: no trial can succeed against it (401, 403, 404: a wrong URL, model or key)."""

    def __init__(self, message: str, *, fatal: bool = False, retries: int = 0) -> None:
        super().__init__(message)
        self.fatal = fatal
        self.retries = retries
        """Tries of this request that failed before it was given up, less one."""


class RequestRejected(RuntimeError):
    """The endpoint refused this conversation (400, 422) for what the model wrote in it:
    the episode ends there and is scored."""


class ContextLengthError(RuntimeError):
    """The request is longer than the model's context window."""


class DiffTooLargeError(Exception):
    """The writable layer holds more entries than
    :data:`~termgrade.sandbox.overlay_diff.MAX_ENTRIES`."""


class IntegrityBudgetError(Exception):
    """The review ran past its time budget."""


class CarryError(OSError):
    """The agent's work could not be written into the scoring container's layer."""


class StaleParent(Exception):
    """The target moved since the plan was made (HTTP 412): re-plan and try again."""


class PageNotFound(LookupError):
    """``termgrade view``: no page at this path (the server answers 404)."""


class Untranslatable(ValueError):
    """A Python regex construct with no RE2 superset here."""
