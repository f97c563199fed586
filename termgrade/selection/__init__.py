"""Band-central selection of training and validation tasks, and split flags."""

from termgrade.selection.bandcentral import (
    CORPUS,
    Selection,
    SelectionConfig,
    build_pool,
    select_band_central,
)
from termgrade.selection.chosen import (
    ChosenTask,
    SelectionReport,
    build_selection_report,
    write_selection_report,
)
from termgrade.selection.io import read_splits, split_rows, write_splits

__all__ = [
    "CORPUS",
    "ChosenTask",
    "Selection",
    "SelectionConfig",
    "SelectionReport",
    "build_pool",
    "build_selection_report",
    "read_splits",
    "select_band_central",
    "split_rows",
    "write_selection_report",
    "write_splits",
]
