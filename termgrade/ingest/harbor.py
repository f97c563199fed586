"""Harbor job directories -> :class:`~termgrade.records.TrialRecord` rows.

One record per finished trial. Attempts are numbered per task x model x scaffold by
start time (Harbor's trial folder suffixes are random); the model of an oracle or nop
run is the agent's name, and the scaffold is always the agent's name. A trial whose
reward Harbor's error policy invalidates (sandbox, model API or verifier failure) is
kept with ``counted = False``; an agent that timed out or crashed and was still graded
counts. Harbor retries a failed trial by deleting its folder and running it again under
the same name, so only the final try is on disk and ``retry_index`` stays 0.

Trial folders without a ``result.json`` (still running, or killed) and folders whose
result cannot be parsed are skipped, counted, and reported; they never stop the run.
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from termgrade.core.atomic import atomic_write_text
from termgrade.core.errors import DataWarning
from termgrade.core.progress import track
from termgrade.core.text import head_and_tail
from termgrade.ingest.agent_logs import read_agent_logs
from termgrade.ingest.errors import IngestError, TrialSkippedError
from termgrade.ingest.harbor_layout import TrialPaths, detect_layout, find_trial_dirs, read_json
from termgrade.ingest.trial_result import HarborTrialResult
from termgrade.ingest.verdicts import read_verdicts
from termgrade.records import TrialRecord
from termgrade.records.verdict import count_outcomes
from termgrade.task import discover_tasks
from termgrade.task.digest import task_digest

NOT_FOUND_FIX = ("pass a Harbor job directory (the folder `harbor run` wrote, holding "
                 "config.json and <task>__<id>/ trial folders), a trial folder, or a "
                 "folder of jobs")


@dataclass(frozen=True)
class SkippedTrial:
    path: Path
    kind: str
    """``incomplete`` (no result.json) or ``malformed`` (result.json unusable)."""
    reason: str


@dataclass
class IngestResult:
    records: list[TrialRecord] = field(default_factory=list)
    skipped: list[SkippedTrial] = field(default_factory=list)
    duplicates: int = 0
    layouts: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    """Kept trials with an unreadable part (e.g. a broken trajectory), one line each."""

    def skipped_count(self, kind: str) -> int:
        return sum(1 for s in self.skipped if s.kind == kind)


class ReadTrial(NamedTuple):
    record: TrialRecord
    """The trial with attempt 0; :func:`number_attempts` sets the real index."""
    layout: str
    harbor_id: str
    """Harbor's UUID of the trial (the resolved folder path when it has none)."""


def load_result(paths: TrialPaths) -> tuple[HarborTrialResult, str]:
    """The parsed result and its layout. TrialSkippedError if incomplete or malformed."""
    where = str(paths.root)
    if not paths.result.is_file():
        raise TrialSkippedError(where, "incomplete", "no result.json (the trial never finished)")
    try:
        raw = read_json(paths.result)
        result = HarborTrialResult.model_validate(raw)
    except (OSError, ValueError) as exc:  # ValidationError is a ValueError
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        detail = (f"field {'.'.join(map(str, first['loc']))}: {first['msg']}" if first
                  else str(exc).splitlines()[0])
        raise TrialSkippedError(where, "malformed", f"result.json unusable: {detail}") from exc
    if result.finished_at is None:
        raise TrialSkippedError(where, "incomplete",
                                "result.json has no finished_at (the trial never finished)")
    return result, detect_layout(raw)


def _verifier_dir(paths: TrialPaths, result: HarborTrialResult) -> Path:
    if paths.verifier.is_dir() and any(paths.verifier.iterdir()):
        return paths.verifier
    for step in reversed(result.step_results or []):
        if paths.step_verifier(step.step_name).is_dir():
            return paths.step_verifier(step.step_name)
    return paths.verifier


VERIFIER_OUTPUT_CHARS = 16_000
"""How much of the verifier's stdout a trial record keeps (its head and tail)."""


def _job_id(result: HarborTrialResult) -> str | None:
    job_id = (result.config or {}).get("job_id")
    return str(job_id) if job_id else None


def _provider(result: HarborTrialResult) -> str | None:
    info = result.agent_info.model_info
    if info is not None and info.provider:
        return info.provider
    configured = ((result.config or {}).get("agent") or {}).get("model_name")
    if isinstance(configured, str) and "/" in configured:
        return configured.split("/", 1)[0]
    return None


def _verifier_output(verifier: Path) -> str | None:
    stdout = verifier / "test-stdout.txt"
    if not stdout.is_file():
        return None
    text = stdout.read_bytes().decode("utf-8", errors="replace")
    return head_and_tail(text, VERIFIER_OUTPUT_CHARS)


def read_trial(trial_dir: Path, *, notes: list[str] | None = None,
               transcripts: bool = True) -> ReadTrial:
    """One trial folder. TrialSkippedError when it is incomplete or malformed."""
    paths = TrialPaths(trial_dir)
    result, layout = load_result(paths)
    reward, _ = result.reward()
    counted = result.counted(reward)
    tests = read_verdicts(_verifier_dir(paths, result))
    n_passed, n_failed = count_outcomes(tests)
    n_in, n_out, n_cached = result.tokens()
    exceptions = result.exceptions()
    transcript = read_agent_logs(paths, result, notes if notes is not None else []) \
        if transcripts else None
    n_episodes = result.metadata().get("n_episodes")
    turns = transcript.turns if transcript is not None else (
        n_episodes if isinstance(n_episodes, int) and n_episodes >= 0 else None)
    record = TrialRecord(
        trial_id=result.trial_name, task_id=result.task_name, model=result.model_name(),
        scaffold=result.agent_info.name, attempt=0, reward=reward,
        passed=counted and reward is not None and reward >= 1.0, counted=counted,
        tests=tests, n_tests_passed=n_passed, n_tests_failed=n_failed,
        input_tokens=n_in, output_tokens=n_out, cached_tokens=n_cached, turns=turns,
        per_turn=transcript.per_turn if transcript else [], duration_s=result.duration_s(),
        started_at=result.started_at, finished_at=result.finished_at,
        agent_timed_out=any(e.exception_type == "AgentTimeoutError" for e in exceptions),
        exception_type=exceptions[0].exception_type if exceptions else None,
        exception_message=exceptions[0].exception_message if exceptions else None,
        source=str(trial_dir.parent),
        job_id=_job_id(result),
        model_provider=_provider(result),
        verifier_output=_verifier_output(_verifier_dir(paths, result)),
        messages=transcript.messages if transcript and transcript.messages else None,
        episode=transcript.episode if transcript and transcript.episode else None,
        messages_source=transcript.messages_source if transcript and transcript.messages
        else None,
    )
    return ReadTrial(record, layout, result.id or str(trial_dir.resolve()))


_NEVER = datetime.max.replace(tzinfo=UTC)


def number_attempts(records: list[TrialRecord]) -> list[TrialRecord]:
    """Attempt = rank by start time within task x model x scaffold; sorted output."""
    groups: dict[tuple[str, str, str], list[TrialRecord]] = defaultdict(list)
    for record in records:
        groups[(record.task_id, record.model, record.scaffold)].append(record)
    numbered: list[TrialRecord] = []
    for key in sorted(groups):
        ordered = sorted(groups[key], key=lambda r: (r.started_at or _NEVER, r.trial_id))
        numbered += [r.model_copy(update={"attempt": i}) for i, r in enumerate(ordered)]
    return numbered


def ingest_harbor(job_dirs: Sequence[Path], *, transcripts: bool = True,
                  task_roots: Sequence[Path] = ()) -> IngestResult:
    """Read every trial under ``job_dirs``. IngestError if a path holds no trial folder.

    ``task_roots``: the task directories the job graded (as ``grade --tasks`` takes them);
    each trial of a task found there records that task's content digest, which ``grade
    --reuse`` and ``labels`` compare. A trial of a task not found there records none: a
    task on disk is not assumed to be the version Harbor graded unless it is named."""
    digests = {path.name: task_digest(path) for path in discover_tasks(*task_roots)} \
        if task_roots else {}
    trial_dirs: list[Path] = []
    for job_dir in job_dirs:
        if not job_dir.exists():
            raise IngestError(str(job_dir), "no such file or directory", fix=NOT_FOUND_FIX)
        found = find_trial_dirs(job_dir)
        if not found:
            raise IngestError(str(job_dir), "no Harbor trial folders found", fix=NOT_FOUND_FIX)
        trial_dirs += found
    out = IngestResult()
    seen: set[str] = set()
    records: list[TrialRecord] = []
    with track("ingest harbor", total=len(trial_dirs)) as progress:
        for trial_dir in trial_dirs:
            progress.advance()
            try:
                trial = read_trial(trial_dir, notes=out.notes, transcripts=transcripts)
            except TrialSkippedError as skip:
                out.skipped.append(SkippedTrial(trial_dir, skip.kind, skip.reason))
                continue
            if trial.harbor_id in seen:
                out.duplicates += 1
                continue
            seen.add(trial.harbor_id)
            out.layouts[trial.layout] += 1
            digest = digests.get(trial.record.task_id)
            records.append(trial.record if digest is None
                           else trial.record.model_copy(update={"task_digest": digest}))
    out.records = number_attempts(_unique_ids(records, out))
    if out.skipped:
        counts = Counter(s.kind for s in out.skipped)
        summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
        warnings.warn(f"skipped {len(out.skipped)} Harbor trial folder(s) ({summary}); "
                      f"first: {out.skipped[0].path}: {out.skipped[0].reason}",
                      DataWarning, stacklevel=2)
    return out


def _unique_ids(records: list[TrialRecord], out: IngestResult) -> list[TrialRecord]:
    """Two trials of different jobs may share a Harbor name: qualify the later ones."""
    used: set[str] = set()
    unique: list[TrialRecord] = []
    for record in records:
        trial_id = record.trial_id
        if trial_id in used:
            trial_id = f"{Path(record.source).name}/{record.trial_id}"
            out.notes.append(f"{record.source}: trial name {record.trial_id} seen in another "
                             f"job; its trial_id is {trial_id}")
        used.add(trial_id)
        unique.append(record if trial_id == record.trial_id
                      else record.model_copy(update={"trial_id": trial_id}))
    return unique


def write_jsonl(path: Path, records: Sequence[TrialRecord]) -> None:
    """Write records as JSONL, atomically (a temp file renamed over ``path``)."""
    atomic_write_text(path, "".join(r.model_dump_json() + "\n" for r in records))
