"""Both trajectory configs from one buffer: each trial's payload goes to Arrow once.

The buffer holds the union of the two configs' columns (one row per trial, from
:func:`~termgrade.builders.trajectory_rows.trajectory_row`); each flush splits it into the
``sft`` and ``episodes`` tables, which share ``trial_id`` and nothing else of size, at the
same trial boundaries. Parquet encoding runs on background threads while the next group
is built.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from termgrade.builders.layout import RepoPaths
from termgrade.builders.parquet_writer import ParquetSplitWriter, SplitFiles
from termgrade.builders.row_buffer import RowBuffer
from termgrade.builders.rows import EpisodeRow, SftRow, schema_for

SPLIT = "train"


def combined_schema(sft: pa.Schema, episodes: pa.Schema) -> pa.Schema:
    """Every column of either config, once (``trial_id`` is in both)."""
    return pa.schema([*sft, *(f for f in episodes if f.name not in sft.names)])


class TrajectoryWriter:
    def __init__(self, paths: RepoPaths, *, row_group_bytes: int, row_group_rows: int,
                 file_bytes: int) -> None:
        self.episode_schema = schema_for(EpisodeRow)
        self.sft_schema = schema_for(SftRow)
        self.buffer = RowBuffer(combined_schema(self.sft_schema, self.episode_schema),
                                row_group_bytes=row_group_bytes,
                                row_group_rows=row_group_rows, max_row_bytes=row_group_bytes)
        self.episodes = ParquetSplitWriter(paths.config_dir("episodes"), SPLIT,
                                           self.episode_schema,
                                           file_bytes=file_bytes, background=True)
        self.sft = ParquetSplitWriter(paths.config_dir("sft"), SPLIT, self.sft_schema,
                                      file_bytes=file_bytes, background=True)

    def add(self, row: dict[str, Any], *, where: str) -> None:
        """``row``: both configs' columns of one trial."""
        size = self.buffer.size_of(row, where)
        if self.buffer.full_with(size):
            self.flush()
        self.buffer.append(row, where, size)

    def flush(self) -> None:
        if not self.buffer.rows:
            return
        both = self.buffer.take_table("trajectory")
        for writer, schema in ((self.episodes, self.episode_schema), (self.sft, self.sft_schema)):
            table = pa.Table.from_arrays([both.column(n) for n in schema.names], schema=schema)
            writer.write_table(table)

    def close(self) -> dict[str, SplitFiles]:
        self.flush()
        return {"sft": self.sft.close(), "episodes": self.episodes.close()}

    def abort(self) -> None:
        self.sft.abort()
        self.episodes.abort()
