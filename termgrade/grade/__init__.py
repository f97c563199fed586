"""Grading a model: k attempts per task in the bash tool-calling scaffold, journaled, scored
by the grader, locally or on a Ray cluster; adaptive grading stops once a band is decided.

Names load lazily (``from termgrade.grade import grade_model`` imports what it needs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from termgrade.core.lazy import lazy_exports

_API: dict[str, str] = {
    "AdaptiveRule": "termgrade.grade.adaptive",
    "AdaptiveScheduler": "termgrade.grade.adaptive",
    "AdaptiveSummary": "termgrade.grade.adaptive",
    "Pool": "termgrade.pools.executors",
    "local_pool": "termgrade.pools.executors",
    "make_pool": "termgrade.pools.executors",
    "TrialJob": "termgrade.grade.jobs",
    "run_job": "termgrade.grade.jobs",
    "TRIALS_FILE": "termgrade.grade.journal",
    "TrialJournal": "termgrade.grade.journal",
    "GradeReport": "termgrade.grade.runner",
    "grade_model": "termgrade.grade.runner",
    "RegradeReport": "termgrade.grade.regrade",
    "regrade_run": "termgrade.grade.regrade",
}

__all__ = ["TRIALS_FILE", "AdaptiveRule", "AdaptiveScheduler", "AdaptiveSummary",
           "GradeReport", "Pool", "RegradeReport", "TrialJob", "TrialJournal", "grade_model",
           "local_pool", "make_pool", "regrade_run", "run_job"]


__getattr__ = lazy_exports(__name__, _API)


if TYPE_CHECKING:
    from termgrade.grade.adaptive import AdaptiveRule, AdaptiveScheduler, AdaptiveSummary
    from termgrade.grade.jobs import TrialJob, run_job
    from termgrade.grade.journal import TRIALS_FILE, TrialJournal
    from termgrade.grade.regrade import RegradeReport, regrade_run
    from termgrade.grade.runner import GradeReport, grade_model
    from termgrade.pools.executors import Pool, local_pool, make_pool
