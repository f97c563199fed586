"""Records other tools read: trials, labels, split flags. Their JSON Schemas are in schemas/."""

from termgrade.records.label import LabelRow, SplitRow
from termgrade.records.trial import (
    ChatMessage,
    EpisodeStep,
    TestResult,
    TrialRecord,
    TurnMetrics,
)

SCHEMA_MODELS = {"trial": TrialRecord, "label": LabelRow, "split": SplitRow}

__all__ = ["SCHEMA_MODELS", "ChatMessage", "EpisodeStep", "LabelRow", "SplitRow", "TestResult",
           "TrialRecord", "TurnMetrics"]
