"""Records other tools read: trials, labels, split flags. Their JSON Schemas are in schemas/.

A test's name and outcome is :class:`TestVerdict` (:mod:`termgrade.records.verdict`); every
record's ``schema_version`` is checked when read (:mod:`termgrade.records.version`); the one
strict JSONL reader is :mod:`termgrade.records.jsonl`. The registry of every schema is
:data:`termgrade.validate.schemas.SCHEMAS`.
"""

from termgrade.records.issues import Issue, Severity
from termgrade.records.label import LabelRow, SplitRow
from termgrade.records.trial import ChatMessage, EpisodeStep, TrialRecord, TurnMetrics
from termgrade.records.verdict import Outcome, TestVerdict
from termgrade.records.version import RecordFormat, record_format

__all__ = ["ChatMessage", "EpisodeStep", "Issue", "LabelRow", "Outcome", "RecordFormat",
           "Severity", "SplitRow", "TestVerdict", "TrialRecord", "TurnMetrics", "record_format"]
