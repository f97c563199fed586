"""Rows waiting to become one row group: sized as they come, converted column by column.

Sizes are the approximate Arrow payload (UTF-8 bytes of strings, 8 per scalar or list
entry). A row over the row budget is refused with the name of its source record; a row
that does not fit the schema is found and named when the buffer is converted.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from termgrade.builders.errors import BuildError

_CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, KeyError,
                      OverflowError)


def payload_size(value: Any) -> int:
    """Approximate Arrow payload of a row: UTF-8 bytes of strings, 8 per scalar / offset."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            total += len(item) if item.isascii() else len(item.encode("utf-8"))
        elif kind is dict:
            total += 8 * len(item)
            stack.extend(item.values())
        elif kind is list:
            total += 8 * len(item)
            stack.extend(item)
        elif kind is bytes:
            total += len(item)
        else:
            total += 8
    return total


def rows_to_table(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows -> a table of ``schema``, column by column (several times faster than
    ``pa.Table.from_pylist`` on nested rows). A missing key raises KeyError; a null in a
    non-nullable column raises ValueError."""
    columns = []
    for spec in schema:
        column = pa.array([row[spec.name] for row in rows], type=spec.type)
        if not spec.nullable and column.null_count:
            raise ValueError(f"column {spec.name} is not nullable but holds a null")
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


class RowBuffer:
    """Up to ``row_group_bytes`` of payload (or ``row_group_rows`` rows) of one schema."""

    def __init__(self, schema: pa.Schema, *, row_group_bytes: int, row_group_rows: int,
                 max_row_bytes: int) -> None:
        self.schema = schema
        self.row_group_bytes = row_group_bytes
        self.row_group_rows = row_group_rows
        self.max_row_bytes = max_row_bytes
        self.rows: list[dict[str, Any]] = []
        self.wheres: list[str] = []
        self.payload = 0

    def size_of(self, row: dict[str, Any], where: str) -> int:
        """The row's payload; raises :class:`BuildError` naming ``where`` when over budget."""
        size = payload_size(row)
        if size > self.max_row_bytes:
            raise BuildError(f"{where}: row is {size:,} bytes, over the {self.max_row_bytes:,}"
                             " byte row budget", fix="trim the record's payload (e.g. cap "
                             "terminal frames) or raise the budget")
        return size

    def full_with(self, size: int) -> bool:
        """Would a row of ``size`` overflow the group (so the buffer must be flushed first)?"""
        return bool(self.rows) and (self.payload + size > self.row_group_bytes
                                    or len(self.rows) >= self.row_group_rows)

    def append(self, row: dict[str, Any], where: str, size: int) -> None:
        self.rows.append(row)
        self.wheres.append(where)
        self.payload += size

    def take_table(self, name: str) -> pa.Table:
        """Convert and empty the buffer; a row that does not fit is named (``name``: config)."""
        rows, wheres = self.rows, self.wheres
        self.rows, self.wheres, self.payload = [], [], 0
        try:
            return rows_to_table(rows, self.schema)
        except _CONVERSION_ERRORS:
            for row, where in zip(rows, wheres, strict=True):
                try:
                    rows_to_table([row], self.schema)
                except _CONVERSION_ERRORS as exc:
                    raise BuildError(f"{where}: does not fit the {name} schema: {exc}",
                                     fix="correct the record") from None
            raise
