"""Trial records in bulk: strict JSONL reading and writing, checks, synthetic corpora."""

from termgrade.trialsets.io import TrialSet, iter_trial_records, read_trials, write_trials
from termgrade.trialsets.issues import DataIssue, IssueLog

__all__ = ["DataIssue", "IssueLog", "TrialSet", "iter_trial_records", "read_trials",
           "write_trials"]
