"""A fast, strict JSONL reader for pydantic records, built on pyarrow.

pyarrow parses the whole file and infers its schema; the inferred types are then checked
against the pydantic model. The fast path only answers when it can prove every line is what
the model would accept (no unknown keys, no wrong types, no missing required keys, no
explicit nulls where the model forbids them, ranges kept, enum values and the record's
``schema_version`` known, datetimes written in a form pyarrow and pydantic read alike);
otherwise it answers ``None`` and the caller validates line by line with pydantic
(:mod:`termgrade.records.jsonl`), which is the ground truth and names the file, line and
field of the first error. The table it answers has the Arrow types of the one converter,
:func:`termgrade.records.arrow.arrow_type` (datetimes: timestamp[us, UTC]).
"""

from __future__ import annotations

import io
import re
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Annotated, Any, get_args, get_origin

import annotated_types
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from termgrade.records.arrow import (
    TIMESTAMP,
    ArrowType,
    arrow_type,
    optional_inner,
    record_fields,
)
from termgrade.records.roles import Role
from termgrade.records.version import RecordFormat

_ISO_DATETIME = (rb'"\d{4}-\d{2}-\d{2}[T ](?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?'
                 rb'(?:Z|[+-]\d{2}:\d{2})?"')
"""The datetime strings the fast path vouches for: pyarrow and pydantic read them alike."""
_OFFSET = r"(?:Z|[+-]\d{2}:\d{2})$"


def _fields(model: type[Any]) -> dict[str, FieldInfo]:
    fields = record_fields(model)
    if fields is None:
        raise TypeError(f"{model!r} is not a pydantic model or dataclass")
    return fields


def _models(model: type[Any]) -> list[type[Any]]:
    """The model and every model (or pydantic dataclass) nested in it."""
    found = [model]
    for f in _fields(model).values():
        tp, _ = optional_inner(f.annotation)
        while get_origin(tp) is list:
            tp, _ = optional_inner(get_args(tp)[0])
        if record_fields(tp) is not None and tp not in found:
            found += [m for m in _models(tp) if m not in found]
    return found


def _keys(names: set[str]) -> bytes:
    return b"|".join(re.escape(n.encode()) for n in sorted(names))


@cache
def _plan(model: type[BaseModel]) -> tuple[re.Pattern[bytes] | None, tuple[str, ...],
                                           re.Pattern[bytes] | None]:
    """(regex of forbidden explicit nulls, top-level keys that must be present, regex of a
    datetime key whose value is neither null nor a datetime string pyarrow reads as pydantic
    does)."""
    no_null: set[str] = set()
    must_have: list[str] = []
    stamps: set[str] = set()
    for sub in _models(model):
        for name, f in _fields(sub).items():
            tp, nullable = optional_inner(f.annotation)
            if tp is datetime:
                stamps.add(name)
            if not nullable and not f.is_required():
                no_null.add(name)
            if nullable and f.is_required():
                if sub is not model:
                    raise TypeError(f"{sub.__name__}.{name}: nested required-nullable field")
                must_have.append(name)
    nulls = re.compile(rb'"(?:' + _keys(no_null) + rb')"\s*:\s*null') if no_null else None
    odd = (re.compile(rb'"(?:' + _keys(stamps) + rb')"\s*:\s*+(?!null\b|' + _ISO_DATETIME + rb')')
           if stamps else None)
    return nulls, tuple(must_have), odd


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


def _all_in(child: pa.Array, allowed: list[Any]) -> bool:
    """Every non-null value of ``child`` is one of ``allowed``."""
    present = pc.drop_null(child)
    return bool(pc.all(pc.is_in(present, value_set=pa.array(allowed))).as_py() is not False)


def _bounds_ok(child: pa.Array, f: FieldInfo) -> bool:
    """Range constraints and record versions hold; any other kind of constraint is not
    vouched for (False)."""
    ranges = [m for m in f.metadata if not isinstance(m, RecordFormat | ArrowType | Role)]
    versions = [m.version for m in f.metadata if isinstance(m, RecordFormat)]
    if versions and not _all_in(child, versions):
        return False  # pydantic names the version found and how to migrate
    if not ranges:
        return True
    if len(child) == child.null_count:
        return all(_holds(m, 0, 0) is not None for m in ranges)
    if pa.types.is_floating(child.type) and pc.any(pc.is_nan(child)).as_py():
        return False
    low, high = pc.min(child).as_py(), pc.max(child).as_py()
    return all(_holds(m, low, high) is True for m in ranges)


def _valid(array: pa.StructArray, model: type[Any]) -> bool:
    """Every row of ``array`` (types as pyarrow inferred them) is what ``model`` accepts."""
    if array.null_count:
        return False
    fields = _fields(model)
    present = {array.type.field(i).name for i in range(array.type.num_fields)}
    if present - set(fields):
        return False  # unknown key
    for name, f in fields.items():
        tp, nullable = optional_inner(f.annotation)
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


def _plain(tp: Any) -> Any:
    """``tp`` without the Arrow type markers of ``Annotated[X, ArrowType(...)]`` (they choose
    the table's type, :func:`conform` applies it); None when it carries anything else (a
    constraint left to pydantic)."""
    if get_origin(tp) is not Annotated:
        return tp
    base, *extra = get_args(tp)
    return base if all(isinstance(m, ArrowType) for m in extra) else None


def _valid_values(child: pa.Array, tp: Any, f: FieldInfo | None) -> bool:
    kind = child.type
    tp = _plain(tp)
    if tp is None:
        return False
    if pa.types.is_null(kind):
        return True  # all null: the caller checked nullability
    if get_origin(tp) is list:
        if not pa.types.is_list(kind) or (
                f is not None and any(not isinstance(m, Role) for m in f.metadata)):
            return False  # length constraints are left to pydantic
        inner, nullable = optional_inner(get_args(tp)[0])
        flat = pc.list_flatten(child)
        if flat.null_count and not nullable:
            return False
        return _valid_values(flat, inner, None)
    if record_fields(tp) is not None:
        return pa.types.is_struct(kind) and _valid(child, tp)
    if tp is datetime:  # the text was checked (_plan); _timestamps converts or refuses
        return bool(pa.types.is_timestamp(kind) or pa.types.is_string(kind))
    if isinstance(tp, type) and issubclass(tp, Enum):
        values = [member.value for member in tp]
        return bool(kind == pa.array(values).type) and _all_in(child, values)
    if not any(test(kind) for test in _ARROW_OK.get(tp, ())):
        return False
    return f is None or _bounds_ok(child, f)


def _timestamps(values: pa.Array) -> pa.Array:
    """Datetimes as :data:`~termgrade.records.arrow.TIMESTAMP`: pyarrow already moved an
    inferred timestamp to UTC; strings with an offset are converted to UTC, naive ones taken
    as UTC (as pydantic's datetimes are when converted). ArrowInvalid if neither parses."""
    if pa.types.is_timestamp(values.type):
        return values.cast(pa.timestamp(values.type.unit)).cast(TIMESTAMP)
    aware = pc.match_substring_regex(values, _OFFSET)
    none = pa.scalar(None, values.type)
    return pc.if_else(aware, pc.if_else(aware, values, none).cast(TIMESTAMP),
                      pc.if_else(aware, none, values).cast(pa.timestamp("us")).cast(TIMESTAMP))


def _conform_array(values: pa.Array, annotation: Any, metadata: Any = ()) -> pa.Array:
    """``values`` (types as pyarrow inferred them) as the declared Arrow type."""
    want = arrow_type(annotation, metadata)
    tp, _ = optional_inner(annotation)
    kind = values.type
    if pa.types.is_null(kind):
        return pa.nulls(len(values), want)
    if tp is datetime:
        return _timestamps(values)
    if get_origin(tp) is list:
        items = _conform_array(values.values, get_args(tp)[0])
        return pa.ListArray.from_arrays(values.offsets, items, type=want,
                                        mask=values.is_null())
    if record_fields(tp) is not None:
        children = _conform_fields(values, tp, len(values))
        return pa.StructArray.from_arrays(children, fields=list(want), mask=values.is_null())
    return values.cast(want) if kind != want else values


def _default(f: FieldInfo) -> Any:
    """What pydantic fills in for an absent key: the plain default, ``[]`` for a list
    factory; None for required fields, None defaults and other factories."""
    if f.is_required():
        return None
    if f.default_factory is not None:
        return [] if f.default_factory is list else None
    return f.default


def _conform_fields(values: pa.StructArray | pa.Table, model: type[Any],
                    n: int) -> list[pa.Array]:
    names = ([values.type.field(i).name for i in range(values.type.num_fields)]
             if isinstance(values, pa.Array) else values.column_names)
    columns = []
    for name, f in _fields(model).items():
        want = arrow_type(f.annotation, f.metadata)
        if name in names:
            child = (pc.struct_field(values, name) if isinstance(values, pa.Array)
                     else values.column(name).combine_chunks())
            column = _conform_array(child, f.annotation, f.metadata)
        else:
            column = pa.nulls(n, want)
        default = _default(f)
        if default is not None and column.null_count:
            column = pc.fill_null(column, pa.scalar(default, want))
        columns.append(column)
    return columns


def conform(table: pa.Table, model: type[BaseModel]) -> pa.Table:
    """Give every field of ``model``, nested ones too, a column of its declared Arrow type
    (:func:`termgrade.records.arrow.arrow_type`, the builders' too): nulls where the key is
    absent, the field's default where it has one (a plain one, or ``[]`` from ``list``):
    what pydantic would give. ArrowInvalid when a value does not convert."""
    return pa.Table.from_arrays(_conform_fields(table, model, table.num_rows),
                                names=list(model.model_fields))


def nonblank_lines(data: bytes) -> list[int]:
    """1-based numbers of the lines that hold something."""
    return [i for i, line in enumerate(data.split(b"\n"), 1) if line.strip()]


def fast_read(data: bytes, model: type[BaseModel], lines: list[int]) -> pa.Table | None:
    """The records in ``data`` (JSON Lines) as a table, or None when it cannot vouch for them.

    ``lines`` are the numbers of the non-blank lines (one record each).
    """
    null_pattern, must_have, odd_datetime = _plan(model)
    if null_pattern is not None and null_pattern.search(data):
        return None
    if odd_datetime is not None and odd_datetime.search(data):
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
    if not _valid(struct, model):
        return None
    try:
        return conform(table, model)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
