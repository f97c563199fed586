"""The one strict JSONL reader of TermGrade's records (one pydantic model per line).

Every reader of record files (trials, labels, split flags, verify records; the builders'
streaming reader and the analysis readers alike) validates a line with
:func:`validate_line`, so the same bad file gives the same message whichever command reads
it: ``file:line (record id): Model field 'x': what is wrong (got value)`` and a fix naming
the record's JSON Schema and the command that writes it (from the model's
:class:`~termgrade.records.version.RecordFormat`). A ``schema_version`` this TermGrade does
not know is refused with the version found, the version supported and how to migrate; an
older one its format declares a migration for is upgraded on read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from termgrade.core.errors import RecordError
from termgrade.records.version import VERSION_ERROR, record_format, validate_record

M = TypeVar("M", bound=BaseModel)

_ID_KEYS = ("trial_id", "task_id")
_SHOWN = 80


def record_fix(model: type[BaseModel], fix: str | None = None) -> str:
    """The fix for a malformed ``model`` record: its format's (schema + writer) when it
    declares one, else ``fix``, else a generic one."""
    declared = record_format(model)
    if declared is not None:
        return declared.fix
    return fix or f"make each line one JSON object that is a valid {model.__name__}"


def _record_name(line: bytes) -> str:
    """`` (trial_id=x)`` / `` (task_id=x)`` when the line is a JSON object naming one."""
    try:
        data = json.loads(line)
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    for key in _ID_KEYS:
        if isinstance(data.get(key), str):
            return f" ({key}={data[key]})"
    return ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 3] + "..."


def describe_validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """The first problem of a failed validation, in words: field, message and value."""
    errors = exc.errors()
    first = errors[0]
    more = f" (and {len(errors) - 1} more problem(s) on this line)" if len(errors) > 1 else ""
    if first["type"] == "json_invalid":
        return f"not valid JSON: {first['msg']}{more}"
    loc = ".".join(str(part) for part in first["loc"]) or "(record)"
    owner = f"{model.__name__} " if model is not None else ""
    if first["type"] == VERSION_ERROR:
        ctx = first.get("ctx") or {}
        return (f"{owner}field '{loc}': version {ctx.get('found')!r} is not supported "
                f"(this TermGrade reads {ctx.get('supported')!r}){more}")
    got = "" if first["type"] == "missing" else f" (got {_shown(first.get('input'))})"
    return f"{owner}field '{loc}': {first['msg']}{got}{more}"


def line_error(path: Path | str, number: int, line: bytes, model: type[BaseModel],
               exc: ValidationError, fix: str | None = None) -> RecordError:
    """The RecordError for line ``number`` of ``path`` that ``model`` refused."""
    first = exc.errors()[0]
    if first["type"] == VERSION_ERROR:
        fix = str((first.get("ctx") or {}).get("migrate"))
    else:
        fix = record_fix(model, fix)
    return RecordError(f"{path}:{number}{_record_name(line)}",
                       describe_validation_error(exc, model), fix=fix)


def validate_line(path: Path | str, number: int, line: bytes, model: type[M],
                  fix: str | None = None) -> M:
    """Line ``number`` of ``path`` as a ``model`` (an older version its format migrates is
    upgraded: :func:`~termgrade.records.version.validate_record`); RecordError
    (:func:`line_error`) if not."""
    try:
        return validate_record(model, line)
    except ValidationError as exc:
        raise line_error(path, number, line, model, exc, fix) from None


def check_input(path: Path) -> None:
    """RecordError unless ``path`` is a readable file."""
    if path.is_dir():
        raise RecordError(str(path), "is a directory, not a JSONL file",
                          fix="pass the .jsonl file(s) inside it")
    if not path.is_file():
        raise RecordError(str(path), "no such file", fix="check the path")


def read_input_bytes(path: Path) -> bytes:
    """The whole file; RecordError (as :func:`check_input`) if it is not a file."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        check_input(path)
        raise


def parse_lines(path: Path, data: bytes, model: type[M],
                fix: str | None = None) -> Iterator[tuple[int, M]]:
    """``(line number, record)`` per non-blank line of ``data``; the first bad one raises.

    ``fix`` is used only for models that declare no record format (those that do always
    name their own schema and writer, so every reader says the same).
    """
    for number, line in enumerate(data.split(b"\n"), 1):
        if line.strip():
            yield number, validate_line(path, number, line, model, fix)


def iter_jsonl(path: Path, model: type[M], *,
               on_line: Callable[[int], None] | None = None) -> Iterator[tuple[str, M]]:
    """``(where, record)`` per non-blank line, ``where`` = ``path:line``; one line in memory.

    ``on_line`` is called with each line's size in bytes (for progress). The first bad line
    raises the same RecordError as :func:`parse_lines` would for it.
    """
    check_input(path)
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if on_line is not None:
                on_line(len(line))
            if line.strip():
                line = line[:-1] if line.endswith(b"\n") else line  # as parse_lines sees it
                yield f"{path}:{number}", validate_line(path, number, line, model)
