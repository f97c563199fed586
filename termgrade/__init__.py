"""TermGrade: build, verify, grade, package and publish terminal-agent RL tasks.

The library is the API; the ``termgrade`` command is a thin layer over it. The whole
pipeline, from Python::

    from pathlib import Path
    import termgrade as tg

    report = tg.verify_tasks([Path("environments")], repeat=2)          # Docker
    trials = tg.read_trials([Path("runs/trials.jsonl")])
    labels = tg.compute_labels(trials)
    tg.build_environments(Path("dist/env"), task_roots=[Path("environments")])
    print(tg.validate_repo(Path("dist/env")).ok)

Names load on first use, so ``import termgrade`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termgrade.builders.kinds import api_names
from termgrade.core.lazy import lazy_exports
from termgrade.core.version import __version__

_API: dict[str, str] = {
    "Task": "termgrade.task",
    "load_task": "termgrade.task",
    "discover_tasks": "termgrade.task",
    "verify_task": "termgrade.verify",
    "verify_tasks": "termgrade.verify",
    "audit_corpus": "termgrade.audit",
    "run_task": "termgrade.scoring",
    "grade_model": "termgrade.grade",
    "regrade_run": "termgrade.grade",
    "AdaptiveRule": "termgrade.grade",
    "Endpoint": "termgrade.agent",
    "ScaffoldConfig": "termgrade.agent",
    "ModelAgent": "termgrade.agent.kinds",
    "load_attacks": "termgrade.attacks",
    "read_trials": "termgrade.trialsets.io",
    "write_trials": "termgrade.trialsets.io",
    "compute_labels": "termgrade.labels.compute",
    "select_band_central": "termgrade.selection.bandcentral",
    "SelectionConfig": "termgrade.selection.bandcentral",
    "build_checkpoint_card": "termgrade.training.checkpoint_card",
    "validate_repo": "termgrade.validate",
    "publish": "termgrade.publish.publisher",
    "PublishOptions": "termgrade.publish.publisher",
    "materialize": "termgrade.materialize.materializer",
    "TermGradeError": "termgrade.core.errors",
    # what each stage returns
    "VerifyReport": "termgrade.verify",
    "AuditReport": "termgrade.audit",
    "GenerationReport": "termgrade.generate",
    "GradeReport": "termgrade.grade",
    "RegradeReport": "termgrade.grade",
    "LabelSet": "termgrade.labels",
    "TrialSet": "termgrade.trialsets",
    "Selection": "termgrade.selection",
    "SelectionReport": "termgrade.selection",
    "PassRateReport": "termgrade.passrates",
    "ValidationReport": "termgrade.validate",
    "PublishResult": "termgrade.publish.publisher",
    "MaterializeResult": "termgrade.materialize.materializer",
    "IngestResult": "termgrade.ingest",
    "MonitorReport": "termgrade.training",
    "Issue": "termgrade.records",
    "build_repo": "termgrade.builders.kinds",
    "repo_kinds": "termgrade.builders.kinds",
    "register_repo_kind": "termgrade.builders.kinds",
    # each repo kind's builder and summary (build_environments, EnvironmentsSummary, ...)
    **api_names(),
}
"""Public name -> the module that defines it."""

__all__ = [
    "AdaptiveRule",
    "AuditReport",
    "Endpoint",
    "GenerationReport",
    "GradeReport",
    "IngestResult",
    "Issue",
    "LabelSet",
    "MaterializeResult",
    "ModelAgent",
    "MonitorReport",
    "PassRateReport",
    "PublishOptions",
    "PublishResult",
    "RegradeReport",
    "ScaffoldConfig",
    "Selection",
    "SelectionConfig",
    "SelectionReport",
    "Task",
    "TermGradeError",
    "TrialSet",
    "ValidationReport",
    "VerifyReport",
    "__version__",
    "audit_corpus",
    "build_checkpoint_card",
    "compute_labels",
    "discover_tasks",
    "grade_model",
    "load_attacks",
    "load_task",
    "materialize",
    "publish",
    "read_trials",
    "regrade_run",
    "run_task",
    "select_band_central",
    "validate_repo",
    "verify_task",
    "verify_tasks",
    "write_trials",
    "build_repo",
    "repo_kinds",
    "register_repo_kind",
    *api_names(),
]


__getattr__ = lazy_exports(__name__, _API, keep=True)


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from termgrade.agent import Endpoint, ScaffoldConfig
    from termgrade.agent.kinds import ModelAgent
    from termgrade.attacks import load_attacks
    from termgrade.audit import AuditReport, audit_corpus

    # the repo kinds' builders and summaries (listed by the registry; aliased to re-export)
    from termgrade.builders.bandcentral import BandcentralSummary as BandcentralSummary
    from termgrade.builders.bandcentral import build_bandcentral as build_bandcentral
    from termgrade.builders.environments import EnvironmentsSummary as EnvironmentsSummary
    from termgrade.builders.environments import build_environments as build_environments
    from termgrade.builders.kinds import build_repo, register_repo_kind, repo_kinds
    from termgrade.builders.trajectories import TrajectoriesSummary as TrajectoriesSummary
    from termgrade.builders.trajectories import build_trajectories as build_trajectories
    from termgrade.core.errors import TermGradeError
    from termgrade.generate import GenerationReport
    from termgrade.grade import AdaptiveRule, GradeReport, RegradeReport, grade_model, regrade_run
    from termgrade.ingest import IngestResult
    from termgrade.labels import LabelSet
    from termgrade.labels.compute import compute_labels
    from termgrade.materialize.materializer import MaterializeResult, materialize
    from termgrade.passrates import PassRateReport
    from termgrade.publish.publisher import PublishOptions, PublishResult, publish
    from termgrade.records import Issue
    from termgrade.scoring import run_task
    from termgrade.selection import Selection, SelectionReport
    from termgrade.selection.bandcentral import SelectionConfig, select_band_central
    from termgrade.task import Task, discover_tasks, load_task
    from termgrade.training import MonitorReport
    from termgrade.training.checkpoint_card import build_checkpoint_card
    from termgrade.trialsets import TrialSet
    from termgrade.trialsets.io import read_trials, write_trials
    from termgrade.validate import ValidationReport, validate_repo
    from termgrade.verify import VerifyReport, verify_task, verify_tasks
