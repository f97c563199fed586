"""Regrading that pays only for what changed: ``termgrade grade --reuse EARLIER_RUN``.

Every trial a grading run writes records its task's content digest (``task_digest``, the
digest the environments rows carry: :func:`termgrade.task.digest.task_digest`) and its
scaffold's (``scaffold_digest``: the prompt, tools, limits and sampling parameters,
:func:`scaffold_digest`). A trial of an earlier run is as good as a new one when the
task, the model and the scaffold are all unchanged; ``--reuse`` copies those trials
(counted ones only, attempts below k) into the new run's journal, and the run then grades
only what is left, as a resumed run would.

Reuse is not resume: resume continues the *same* output folder after an interruption and
trusts its journal as is; reuse reads *another* run's trials and takes only those whose
digests match the tasks and scaffold graded now. A trial without digests (written before
they were recorded) is never reused.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from termgrade.agent.kinds import ModelAgent
from termgrade.agent.scaffolds import config_of, scaffold_for
from termgrade.core.errors import TermGradeError
from termgrade.grade.errors import ReuseError
from termgrade.grade.journal import TRIALS_FILE, TrialJournal
from termgrade.records.trial import TrialRecord


def scaffold_config(agent: ModelAgent) -> str:
    """The limits and sampling of ``agent``'s scaffold as a trial records them (JSON)."""
    return json.dumps(config_of(agent), sort_keys=True, default=str)


def scaffold_digest(agent: ModelAgent) -> str:
    """sha256 of everything of the scaffold that shapes a trial (its registered
    :meth:`~termgrade.agent.scaffolds.Scaffold.identity`: name, prompt, tools or turn
    format, :func:`scaffold_config`). The endpoint's address is not in it: the same model
    served elsewhere is the same model."""
    return scaffold_for(agent.scaffold).digest(agent)


@dataclass
class ReusePlan:
    """What an earlier run gives the new one."""

    records: list[TrialRecord] = field(default_factory=list)
    """Counted trials to copy, in the earlier run's order."""
    tasks: set[str] = field(default_factory=set)
    """Tasks with at least one reused trial."""
    changed: dict[str, str] = field(default_factory=dict)
    """Task id -> why its earlier trials were not reused (task changed, scaffold changed,
    no digests recorded)."""


def earlier_trials(path: Path) -> Path:
    """The trials file of ``--reuse PATH``: a run folder or its trials.jsonl."""
    trials = path / TRIALS_FILE if path.is_dir() else path
    if not trials.is_file():
        raise ReuseError(f"--reuse {path}: no {TRIALS_FILE} there",
                         fix="pass the output folder (-o) of an earlier `termgrade grade`")
    return trials


def plan_reuse(earlier: Sequence[TrialRecord], *, model: str, scaffold: str,
               scaffold_digest: str, task_digests: Mapping[str, str],
               k_max: int) -> ReusePlan:
    """Which of ``earlier``'s trials the new run takes: counted trials of ``model`` and
    ``scaffold`` whose ``scaffold_digest`` is the new run's and whose ``task_digest`` is
    the task's now (``task_digests``: the tasks graded now), one per attempt below
    ``k_max``."""
    plan = ReusePlan()
    taken: set[tuple[str, int]] = set()
    reasons: dict[str, str] = {}
    kept: dict[str, int] = defaultdict(int)
    for record in earlier:
        task = record.task_id
        if (record.model != model or record.scaffold != scaffold or not record.counted
                or task not in task_digests):
            continue
        if record.task_digest is None or record.scaffold_digest is None:
            reasons.setdefault(task, "no digests recorded")
            continue
        if record.scaffold_digest != scaffold_digest:
            reasons.setdefault(task, "scaffold configuration changed")
            continue
        if record.task_digest != task_digests[task]:
            reasons.setdefault(task, "task files changed")
            continue
        key = (task, record.attempt)
        if key in taken or record.attempt >= k_max:
            continue
        taken.add(key)
        kept[task] += 1
        plan.records.append(record)
    plan.tasks = set(kept)
    plan.changed = {task: why for task, why in reasons.items() if task not in kept}
    return plan


def apply_reuse(plan: ReusePlan, journal: TrialJournal) -> int:
    """Append the plan's trials the journal does not hold yet; returns how many."""
    held = {r.trial_id for r in journal.load()}
    added = 0
    for record in plan.records:
        if record.trial_id not in held:
            journal.append(record)
            held.add(record.trial_id)
            added += 1
    return added


def load_earlier(path: Path, out_dir: Path) -> list[TrialRecord]:
    """The trials of the earlier run at ``path`` (refusing the run being written)."""
    trials = earlier_trials(path)
    if trials.resolve() == (out_dir / TRIALS_FILE).resolve():
        raise ReuseError(f"--reuse {path} is this run's own output",
                         fix="to continue an interrupted run, rerun without --reuse (it "
                         "resumes); to regrade, write to a new -o folder and --reuse this one")
    return TrialJournal(trials).load()


def adopt_kept(plan: ReusePlan, reuse: Path, out_dir: Path) -> int:
    """``grade --reuse --keep-work``: the reused trials' kept work, from the earlier run's
    store into this run's (blobs linked), so this run can be regraded whole; how many.
    A reused trial the earlier run kept nothing of stays without (regrade: must rerun)."""
    from termgrade.scoring.kept import WorkStore

    mine, theirs = WorkStore.of_run(out_dir), WorkStore.of_run(earlier_trials(reuse).parent)
    adopted = 0
    for record in plan.records:
        with contextlib.suppress(OSError, TermGradeError):  # a grade never fails for it
            adopted += mine.adopt(theirs, record.trial_id)
    return adopted
