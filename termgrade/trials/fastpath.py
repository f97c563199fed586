"""A fast, strict JSONL reader for pydantic records, built on pyarrow.

pyarrow parses the whole file and infers its schema; the inferred types are then checked
against the pydantic model. The fast path only answers when it can prove every line is what
the model would accept (no unknown keys, no wrong types, no
missing required keys, no explicit nulls where the model forbids them, ranges kept);
otherwise it answers ``None`` and the caller validates line by line with pydantic, which
is the ground truth and names the file, line and field of the first error.
"""

from __future__ import annotations

import contextlib
import io
import re
import types
from datetime import datetime
from functools import cache
from typing import Any, Union, get_args, get_origin

import annotated_types
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
from pydantic import BaseModel
from pydantic.fields import FieldInfo

_SCALARS: dict[Any, pa.DataType] = {str: pa.string(), int: pa.int64(), float: pa.float64(),
                                    bool: pa.bool_(), datetime: pa.string()}


def unwrap(annotation: Any) -> tuple[Any, bool]:
    """``X | None`` -> (X, True); anything else -> (annotation, False)."""
    if get_origin(annotation) in (Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        return inner[0], True
    return annotation, False


def arrow_type(annotation: Any) -> pa.DataType:
    tp, _ = unwrap(annotation)
    if tp in _SCALARS:
        return _SCALARS[tp]
    if get_origin(tp) is list:
        return pa.list_(arrow_type(get_args(tp)[0]))
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return pa.struct([(name, arrow_type(f.annotation))
                          for name, f in tp.model_fields.items()])
    raise TypeError(f"no arrow type for {tp!r}")


def _models(model: type[BaseModel]) -> list[type[BaseModel]]:
    """The model and every model nested in it."""
    found = [model]
    for f in model.model_fields.values():
        tp, _ = unwrap(f.annotation)
        while get_origin(tp) is list:
            tp, _ = unwrap(get_args(tp)[0])
        if isinstance(tp, type) and issubclass(tp, BaseModel) and tp not in found:
            found += [m for m in _models(tp) if m not in found]
    return found


@cache
def _plan(model: type[BaseModel]) -> tuple[re.Pattern[bytes] | None, tuple[str, ...]]:
    """(regex of forbidden explicit nulls, top-level keys that must be present)."""
    no_null: set[str] = set()
    must_have: list[str] = []
    for sub in _models(model):
        for name, f in sub.model_fields.items():
            nullable = unwrap(f.annotation)[1]
            if not nullable and not f.is_required():
                no_null.add(name)
            if nullable and f.is_required():
                if sub is not model:
                    raise TypeError(f"{sub.__name__}.{name}: nested required-nullable field")
                must_have.append(name)
    keys = b"|".join(re.escape(n.encode()) for n in sorted(no_null))
    pattern = re.compile(rb'"(?:' + keys + rb')"\s*:\s*null') if no_null else None
    return pattern, tuple(must_have)


def _holds(meta: object, low: Any, high: Any) -> bool | None:
    """Whether a range constraint holds for values in [low, high]; None if not a range."""
    if isinstance(meta, annotated_types.Ge):
        return bool(low >= meta.ge)
    if isinstance(meta, annotated_types.Gt):
        return bool(low > meta.gt)
    if isinstance(meta, annotated_types.Le):
        return bool(high <= meta.le)
    if isinstance(meta, annotated_types.Lt):
        return bool(high < meta.lt)
    return None


def _bounds_ok(child: pa.Array, f: FieldInfo) -> bool:
    """Range constraints hold; any other kind of constraint is not vouched for (False)."""
    if not f.metadata:
        return True
    if len(child) == child.null_count:
        return all(_holds(m, 0, 0) is not None for m in f.metadata)
    if pa.types.is_floating(child.type) and pc.any(pc.is_nan(child)).as_py():
        return False
    low, high = pc.min(child).as_py(), pc.max(child).as_py()
    return all(_holds(m, low, high) is True for m in f.metadata)


def _iso_ok(values: pa.Array) -> bool:
    present = pc.drop_null(values).to_pylist()
    if not present:
        return True
    parsed = pd.to_datetime(pd.Series(present), format="ISO8601", errors="coerce", utc=True)
    return not bool(parsed.isna().any())


def _valid(array: pa.StructArray, model: type[BaseModel]) -> bool:
    """Every row of ``array`` (types as pyarrow inferred them) is what ``model`` accepts."""
    if array.null_count:
        return False
    present = {array.type.field(i).name for i in range(array.type.num_fields)}
    if present - set(model.model_fields):
        return False  # unknown key
    for name, f in model.model_fields.items():
        tp, nullable = unwrap(f.annotation)
        if name not in present:
            if f.is_required() and not nullable:
                return False
            continue
        child = pc.struct_field(array, name)
        if child.null_count and not nullable and f.is_required():
            return False
        if not _valid_values(child, tp, f):
            return False
    return True


_ARROW_OK: dict[Any, tuple[Any, ...]] = {
    str: (pa.types.is_string,), bool: (pa.types.is_boolean,),
    int: (pa.types.is_int64,), float: (pa.types.is_float64, pa.types.is_int64),
}


def _valid_values(child: pa.Array, tp: Any, f: FieldInfo | None) -> bool:
    kind = child.type
    if pa.types.is_null(kind):
        return True  # all null: the caller checked nullability
    if get_origin(tp) is list:
        if not pa.types.is_list(kind) or (f is not None and f.metadata):
            return False  # length constraints are left to pydantic
        inner, nullable = unwrap(get_args(tp)[0])
        flat = pc.list_flatten(child)
        if flat.null_count and not nullable:
            return False
        return _valid_values(flat, inner, None)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return pa.types.is_struct(kind) and _valid(child, tp)
    if tp is datetime:
        return pa.types.is_timestamp(kind) or (pa.types.is_string(kind) and _iso_ok(child))
    if not any(test(kind) for test in _ARROW_OK.get(tp, ())):
        return False
    return f is None or _bounds_ok(child, f)


def conform(table: pa.Table, model: type[BaseModel]) -> pa.Table:
    """Give every field of ``model`` a column of its declared type: nulls where the key is
    absent, the field's default where it has a plain one (lists with a default factory stay
    null, meaning empty)."""
    columns = []
    for name, f in model.model_fields.items():
        want = arrow_type(f.annotation)
        if name in table.column_names:
            column = table.column(name)
            if pa.types.is_timestamp(column.type):
                column = pc.strftime(column, format="%Y-%m-%dT%H:%M:%S")
            with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError):
                column = column.cast(want) if column.type != want else column
        else:
            column = pa.chunked_array([pa.nulls(table.num_rows, want)])
        if f.default is not None and not f.is_required() and f.default_factory is None:
            column = pc.fill_null(column, pa.scalar(f.default, want))
        columns.append(column)
    return pa.Table.from_arrays(columns, names=list(model.model_fields))


def nonblank_lines(data: bytes) -> list[int]:
    """1-based numbers of the lines that hold something."""
    return [i for i, line in enumerate(data.split(b"\n"), 1) if line.strip()]


def fast_read(data: bytes, model: type[BaseModel], lines: list[int]) -> pa.Table | None:
    """The records in ``data`` (JSON Lines) as a table, or None when it cannot vouch for them.

    ``lines`` are the numbers of the non-blank lines (one record each).
    """
    null_pattern, must_have = _plan(model)
    if null_pattern is not None and null_pattern.search(data):
        return None
    for key in must_have:
        # A quoted word followed by ':' is a key: string values cannot be, escaped quotes
        # inside strings are preceded by a backslash and so never match ``"key"``.
        if len(re.findall(rb'"' + re.escape(key.encode()) + rb'"\s*:', data)) != len(lines):
            return None
    breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))
    longest = int(np.diff(breaks, prepend=-1, append=len(data)).max())
    options = pj.ReadOptions(block_size=max(1 << 20, longest + 2), use_threads=True)
    try:
        table = pj.read_json(io.BytesIO(data), read_options=options)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != len(lines):
        return None
    table = table.combine_chunks()
    struct = pa.StructArray.from_arrays([c.chunk(0) for c in table.columns],
                                        names=table.column_names)
    return conform(table, model) if _valid(struct, model) else None
