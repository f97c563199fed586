"""Why a verdict, in one line a maintainer can act on.

``unsatisfiable``: the reference tests that failed, with what each failure said.
``vacuous``: the tests the untouched container passed. ``build_failed``: the failing build
step, its command, exit status and first error line, ANSI codes removed; the missing
network is blamed only when the failing step reached for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from termgrade.records.evidence import TestEvidence, failure_lines

MAX_REASON = 600
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_STEP = re.compile(r"^(?:Step (\d+/\d+) : |#\d+ \[[^\]]*\] )(.*)$")
_EXIT = re.compile(r"(?:returned a non-zero code|exit code|did not complete successfully: "
                   r"exit code)[: ]+(\d+)")
_NOISE = re.compile(r"^\s*(?:---> |Removing intermediate|Sending build context|$)")
_NETWORK_COMMANDS = re.compile(
    r"\b(?:apt-get|apt|apk|yum|dnf|pip3?|uv|npm|yarn|pnpm|cargo|go get|go install|gem|"
    r"curl|wget|git clone|git fetch|conda|mamba)\b")
_NETWORK_ERRORS = re.compile(
    r"(?i)temporary failure in name resolution|could not resolve|network is unreachable|"
    r"name or service not known|failed to establish a new connection|no route to host|"
    r"connection refused|failed to fetch|unable to access")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def build_reason(log_tail: str, *, offline: bool = True) -> str | None:
    """``step 3/5 `RUN chmdo +x run.sh` exited 127: /bin/sh: 1: chmdo: not found``, and
    ``(the build has no network ...)`` only when that step fetched or failed to reach a
    host. None when the log names no failing step."""
    lines = [line.rstrip() for line in strip_ansi(log_tail).splitlines()]
    step_at = max((i for i, line in enumerate(lines) if _STEP.match(line)), default=None)
    if step_at is None:
        return None
    match = _STEP.match(lines[step_at])
    assert match is not None
    where = f"step {match.group(1)} " if match.group(1) else ""
    command = match.group(2).strip()
    after = lines[step_at + 1:]
    codes = [m.group(1) for line in after for m in [_EXIT.search(line)] if m]
    errors = [line.strip() for line in after if not _NOISE.match(line)
              and not _EXIT.search(line)]
    status = f" exited {codes[-1]}" if codes else " failed"
    # the engine's log stream may cut a line in two ("/bin/sh: 1:" | "chmdo: not found")
    while len(errors) > 1 and errors[0].endswith(":"):
        errors[:2] = [f"{errors[0]} {errors[1]}"]
    first = f": {errors[0][:200]}" if errors else ""
    reason = f"{where}`{command[:200]}`{status}{first}"
    touched = bool(_NETWORK_COMMANDS.search(command)) or any(
        _NETWORK_ERRORS.search(line) for line in after)
    if offline and touched:
        reason += (" (the build has no network: this step reaches for it; vendor what it "
                   "fetches into the task or the base image)")
    return reason[:MAX_REASON]


def unsatisfiable_reason(evidence: Iterable[TestEvidence]) -> str | None:
    """``reference solution fails N test(s): test_a: assert 0 == 3; ...``."""
    lines = failure_lines(evidence, limit=3)
    failed = sum(1 for e in evidence if e.outcome in ("failed", "error")) \
        if isinstance(evidence, list) else len(lines)
    if not lines:
        return None
    more = f" (and {failed - len(lines)} more)" if failed > len(lines) else ""
    return (f"the reference solution fails {failed} test(s): " + "; ".join(lines)
            + more)[:MAX_REASON]


def vacuous_reason(evidence: Iterable[TestEvidence]) -> str | None:
    """``the untouched container passes N test(s): test_a, test_b, ...``."""
    passed = [e.name.split("::")[-1] for e in evidence if e.outcome == "passed"]
    if not passed:
        return None
    shown = ", ".join(passed[:8]) + (f" (and {len(passed) - 8} more)" if len(passed) > 8 else "")
    return f"the untouched container passes {len(passed)} test(s): {shown}"[:MAX_REASON]
