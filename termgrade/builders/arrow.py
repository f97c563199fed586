"""Arrow schemas derived from the row models, so parquet, JSON Schema and card agree.

Python types map to Arrow as: ``str`` -> string, ``int`` -> int64, ``float`` -> float64,
``bool`` -> bool, ``bytes`` -> large_binary, ``list[X]`` -> list<X>, a model -> struct;
``X | None`` is nullable. ``Annotated[..., ArrowType("large_string")]`` (see
:data:`LargeStr`, :data:`Int32`) picks a wider or narrower type where payloads are big
or values small. Each file's schema metadata names its row model
(:data:`ROW_SCHEMA_KEY`), which is how ``termgrade validate`` knows what to check.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pyarrow as pa
from pydantic import BaseModel

ROW_SCHEMA_KEY = b"termgrade.row_schema"
"""Parquet schema metadata key: the row model's name in ``SCHEMA_MODELS`` / schemas/."""
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
_DEFAULT: dict[type, pa.DataType] = {
    str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_(),
    bytes: pa.large_binary(),
}


def _resolve(annotation: Any, extra: tuple[Any, ...] = ()) -> tuple[pa.DataType, bool]:
    """Arrow type of an annotation, and whether it is nullable."""
    marker = next((m for m in extra if isinstance(m, ArrowType)), None)
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *more = get_args(annotation)
        return _resolve(base, (*extra, *more))
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation!r}: use X | None")
        arrow_type, _ = _resolve(args[0], extra)
        return arrow_type, True
    if origin is Literal:
        kinds = {type(value) for value in get_args(annotation)}
        if len(kinds) != 1:
            raise TypeError(f"unsupported mixed Literal {annotation!r}")
        return _resolve(kinds.pop(), extra)
    if origin is list:
        (item,) = get_args(annotation)
        item_type, item_nullable = _resolve(item)
        return pa.list_(pa.field("item", item_type, nullable=item_nullable)), False
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct(model_fields(annotation)), False
    if marker is not None:
        return _NAMED[marker.name], False
    if annotation in _DEFAULT:
        return _DEFAULT[annotation], False
    raise TypeError(f"no Arrow type for {annotation!r}")


def model_fields(model: type[BaseModel]) -> list[pa.Field]:
    fields = []
    for name, info in model.model_fields.items():
        arrow_type, nullable = _resolve(info.annotation, tuple(info.metadata))
        fields.append(pa.field(name, arrow_type, nullable=nullable))
    return fields


def arrow_schema(model: type[BaseModel], row_schema: str) -> pa.Schema:
    """The fixed Arrow schema of one config's rows, tagged with the row model's name."""
    return pa.schema(model_fields(model), metadata={
        ROW_SCHEMA_KEY: row_schema.encode(),
        FORMAT_VERSION_KEY: FORMAT_VERSION.encode(),
    })
