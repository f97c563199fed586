"""Both trajectory configs from one buffer: each trial's payload goes to Arrow once.

The ``sft`` table is made of the ``episodes`` table's own columns (its shared columns,
and ``conversations`` as ``messages``), so the two configs flush at the same trial
boundaries and share their Arrow buffers; only the episode row is sized (it holds the
sft row). Parquet encoding runs on background threads while the next group is built.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from termgrade.builders.layout import RepoPaths
from termgrade.builders.parquet_writer import ParquetSplitWriter, SplitFiles
from termgrade.builders.row_buffer import RowBuffer
from termgrade.builders.rows import SftRow, schema_for

SPLIT = "train"
SFT_COLUMNS = tuple(SftRow.model_fields)
SFT_FROM_EPISODE = {name: name for name in SFT_COLUMNS} | {"messages": "conversations"}
"""sft column -> the episodes column it is."""


class TrajectoryWriter:
    def __init__(self, paths: RepoPaths, *, row_group_bytes: int, row_group_rows: int,
                 file_bytes: int) -> None:
        episode_schema = schema_for("trajectory_episode_row")
        self.sft_schema = schema_for("trajectory_sft_row")
        self.buffer = RowBuffer(episode_schema, row_group_bytes=row_group_bytes,
                                row_group_rows=row_group_rows, max_row_bytes=row_group_bytes)
        self.episodes = ParquetSplitWriter(paths.config_dir("episodes"), SPLIT, episode_schema,
                                           file_bytes=file_bytes, background=True)
        self.sft = ParquetSplitWriter(paths.config_dir("sft"), SPLIT, self.sft_schema,
                                      file_bytes=file_bytes, background=True)

    def add(self, episode_row: dict[str, Any], *, where: str) -> None:
        size = self.buffer.size_of(episode_row, where)
        if self.buffer.full_with(size):
            self.flush()
        self.buffer.append(episode_row, where, size)

    def flush(self) -> None:
        if not self.buffer.rows:
            return
        payload = self.buffer.payload
        episodes = self.buffer.take_table("episodes")
        self.episodes.write_table(episodes, payload=payload)
        columns = [episodes.column(SFT_FROM_EPISODE[name]) for name in self.sft_schema.names]
        self.sft.write_table(pa.Table.from_arrays(columns, schema=self.sft_schema))

    def close(self) -> dict[str, SplitFiles]:
        self.flush()
        return {"sft": self.sft.close(), "episodes": self.episodes.close()}

    def abort(self) -> None:
        self.sft.abort()
        self.episodes.abort()
