"""Which detect-secrets findings are known false positives, for the repo's text files
(:mod:`.secrets_check`) and its parquet cells (:mod:`.cell_secrets`) alike.

Findings in pytest function names (a secret value that starts with ``test_``, or a flagged
line that defines a ``test_`` function); TermGrade's own digests, a sha256 in hex written
as the value of one of the fields that hold them (:data:`OWN_DIGEST_FIELDS`); and a test's
outcome in a reference record.
"""

from __future__ import annotations

import re

_PYTEST_NAME = re.compile(r"^\s*(async\s+)?def\s+test_\w+\s*\(")
OWN_DIGEST_FIELDS = ("task_digest", "scaffold_digest", "archive_sha256", "sha256")
"""Fields in which TermGrade writes a sha256 of its own (task contents, scaffold
configuration, archives, manifest entries)."""
SHA256 = re.compile(r"^[0-9a-f]{64}$")
_OWN_DIGEST = re.compile(r'"(?:' + "|".join(OWN_DIGEST_FIELDS)
                         + r')"\s*:\s*"([0-9a-f]{64})"')
_OUTCOMES = frozenset({"passed", "failed", "error", "skipped", "xfailed", "xpassed",
                       "deselected"})
"""The values of a reference record's per-test outcomes (node id -> outcome)."""


def is_own_digest(secret_value: str | None, line: str) -> bool:
    """A sha256 TermGrade wrote as the value of one of :data:`OWN_DIGEST_FIELDS` on this
    line (JSON, as label rows, traces and ATIF files hold them)."""
    value = secret_value or ""
    return bool(SHA256.match(value)) and value in _OWN_DIGEST.findall(line)


def is_known_false_positive(secret_value: str | None, line: str) -> bool:
    """A pytest name mistaken for a key (the Hub's scanner reports these too), one of
    TermGrade's own digests (:func:`is_own_digest`), or a test's outcome in a reference
    record (``"test_outputs.py::test_no_secret_key": "passed"``)."""
    value = secret_value or ""
    return (value.startswith("test_") or bool(_PYTEST_NAME.search(line))
            or is_own_digest(value, line)
            or (value in _OUTCOMES and "::test_" in line))  # a test's outcome, by node id
