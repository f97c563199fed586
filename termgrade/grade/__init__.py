"""Grading a model: k attempts per task in the bash tool-calling scaffold, journaled, scored
by the grader, locally or on a Ray cluster; adaptive grading stops once a band is decided."""

from termgrade.grade.adaptive import AdaptiveRule, AdaptiveScheduler, AdaptiveSummary
from termgrade.grade.executors import Pool, local_pool, make_pool
from termgrade.grade.jobs import TrialJob, run_job
from termgrade.grade.journal import TRIALS_FILE, TrialJournal
from termgrade.grade.runner import GradeAborted, GradeReport, grade_model

__all__ = ["TRIALS_FILE", "AdaptiveRule", "AdaptiveScheduler", "AdaptiveSummary",
           "GradeAborted", "GradeReport", "Pool", "TrialJob", "TrialJournal", "grade_model",
           "local_pool", "make_pool", "run_job"]
