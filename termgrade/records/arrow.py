"""Arrow types derived from pydantic models: the one converter, used by the builders'
parquet schemas and by the trial reader's pyarrow fast path (:mod:`termgrade.trialsets.fastpath`).

Python types map to Arrow as: ``str`` -> string, ``int`` -> int64, ``float`` -> float64,
``bool`` -> bool, ``bytes`` -> large_binary, ``datetime`` -> timestamp[us, UTC] (an aware
datetime is converted to UTC; a naive one is taken as UTC, as pyarrow does), a string enum
-> string, ``list[X]`` -> list<X>, a model or pydantic dataclass -> struct; ``X | None`` is
nullable. ``Annotated[..., ArrowType("large_string")]`` (see :data:`LargeStr`,
:data:`Int32`) picks a wider or narrower type where payloads are big or values small. Each
file's schema metadata names its row model (:data:`ROW_SCHEMA_KEY`), which is how
``termgrade validate`` knows what to check.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pyarrow as pa
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from termgrade.records.version import record_format

ROW_SCHEMA_KEY = b"termgrade.row_schema"
"""Parquet schema metadata key: the row model's schema name (:func:`schema_name`)."""
FORMAT_VERSION_KEY = b"termgrade.format_version"
FORMAT_VERSION = "1.0"


@dataclass(frozen=True)
class ArrowType:
    """Marker in ``Annotated[...]``: the Arrow type name to use instead of the default."""

    name: str


LargeStr = Annotated[str, ArrowType("large_string")]
Int32 = Annotated[int, ArrowType("int32")]

_NAMED: dict[str, pa.DataType] = {
    "large_string": pa.large_string(),
    "string": pa.string(),
    "int32": pa.int32(),
    "int64": pa.int64(),
}

TIMESTAMP = pa.timestamp("us", tz="UTC")
"""The Arrow type of every ``datetime`` field."""

_DEFAULT: dict[type, pa.DataType] = {
    str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_(),
    bytes: pa.large_binary(), datetime: TIMESTAMP,
}


def optional_inner(annotation: Any) -> tuple[Any, bool]:
    """``X | None`` -> (X, True); anything else -> (annotation, False)."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation!r}: use X | None")
        return args[0], True
    return annotation, False


def record_fields(annotation: Any) -> dict[str, FieldInfo] | None:
    """The fields of a pydantic model or pydantic dataclass (a struct in Arrow); else None."""
    if not isinstance(annotation, type):
        return None
    if issubclass(annotation, BaseModel):
        return annotation.model_fields
    if dataclasses.is_dataclass(annotation):
        fields: dict[str, FieldInfo] | None = getattr(annotation, "__pydantic_fields__", None)
        return fields
    return None


def _value_type(values: list[Any], what: Any) -> type:
    kinds = {type(value) for value in values}
    if len(kinds) != 1:
        raise TypeError(f"unsupported mixed {what!r}")
    return kinds.pop()


def _resolve(annotation: Any, extra: tuple[Any, ...] = ()) -> tuple[pa.DataType, bool]:
    """Arrow type of an annotation, and whether it is nullable."""
    marker = next((m for m in extra if isinstance(m, ArrowType)), None)
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *more = get_args(annotation)
        return _resolve(base, (*extra, *more))
    inner, nullable = optional_inner(annotation)
    if nullable:
        return _resolve(inner, extra)[0], True
    if origin is Literal:
        return _resolve(_value_type(list(get_args(annotation)), annotation), extra)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        values = [member.value for member in annotation]
        return _resolve(_value_type(values, annotation), extra)
    if origin is list:
        (item,) = get_args(annotation)
        item_type, item_nullable = _resolve(item)
        return pa.list_(pa.field("item", item_type, nullable=item_nullable)), False
    fields = record_fields(annotation)
    if fields is not None:
        return pa.struct(_arrow_fields(fields)), False
    if marker is not None:
        return _NAMED[marker.name], False
    if annotation in _DEFAULT:
        return _DEFAULT[annotation], False
    raise TypeError(f"no Arrow type for {annotation!r}")


def arrow_type(annotation: Any, metadata: Sequence[Any] = ()) -> pa.DataType:
    """The Arrow type of an annotation (with a field's ``metadata``, where its ArrowType
    marker may be); whether it is nullable is :func:`model_fields`' business."""
    return _resolve(annotation, tuple(metadata))[0]


def _arrow_fields(fields: dict[str, FieldInfo]) -> list[pa.Field]:
    out = []
    for name, info in fields.items():
        kind, nullable = _resolve(info.annotation, tuple(info.metadata))
        out.append(pa.field(name, kind, nullable=nullable))
    return out


def model_fields(model: type[BaseModel]) -> list[pa.Field]:
    """The Arrow fields of a model's fields, in order."""
    return _arrow_fields(model.model_fields)


def schema_name(model: type[BaseModel]) -> str:
    """The name of a model's JSON Schema (``schemas/<name>.schema.json``) and of its parquet
    files' rows: the schema its record format declares (``schema_version``'s
    :class:`~termgrade.records.version.RecordFormat`), else its ``row_schema`` class
    variable (the dataset row models). TypeError for a model that names none."""
    declared = record_format(model)
    if declared is not None:
        return declared.schema
    name = getattr(model, "row_schema", None)
    if not isinstance(name, str):
        raise TypeError(f"{model.__name__} names no schema (no record format, no row_schema)")
    return name


def arrow_schema(model: type[BaseModel], row_schema: str | None = None) -> pa.Schema:
    """The fixed Arrow schema of one config's rows, tagged with the row model's schema name
    (:func:`schema_name` unless given)."""
    name = row_schema if row_schema is not None else schema_name(model)
    return pa.schema(model_fields(model), metadata={
        ROW_SCHEMA_KEY: name.encode(),
        FORMAT_VERSION_KEY: FORMAT_VERSION.encode(),
    })
