"""Reading other harnesses' trial output into TrialRecords (Harbor job directories)."""

from termgrade.ingest.harbor import (
    IngestResult,
    ReadTrial,
    SkippedTrial,
    ingest_harbor,
    number_attempts,
    read_trial,
    write_jsonl,
)
from termgrade.ingest.harbor_layout import Layout, detect_layout, find_trial_dirs

__all__ = ["IngestResult", "Layout", "ReadTrial", "SkippedTrial", "detect_layout",
           "find_trial_dirs", "ingest_harbor", "number_attempts", "read_trial", "write_jsonl"]
