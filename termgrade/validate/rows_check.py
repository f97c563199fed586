"""Every parquet file: its schema is its config's fixed schema, its row groups and size are
in budget, each row validates against its JSON Schema in schemas/, and keys are unique."""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

from termgrade.builders.kinds import registry_version, row_kinds
from termgrade.builders.layout import RepoPaths
from termgrade.builders.parquet_writer import FILE_BYTES, ROW_GROUP_LIMIT
from termgrade.builders.rows import schema_for
from termgrade.records.arrow import ROW_SCHEMA_KEY, schema_name
from termgrade.validate.cache import ValidationCache
from termgrade.validate.card_check import ConfigFiles
from termgrade.validate.findings import ValidationFinding, ValidationReport
from termgrade.validate.schemas import SCHEMA_DIR, SCHEMAS, load_schema

MAX_FINDINGS_PER_FILE = 20
FILE_LIMIT = FILE_BYTES + ROW_GROUP_LIMIT


def row_keys() -> dict[str, tuple[str, ...]]:
    """The key columns of every row schema a parquet file may name: those of the registered
    repo kinds' rows (:mod:`termgrade.builders.kinds`); a file naming another is refused."""
    return dict(_keys(registry_version()))


@functools.lru_cache(maxsize=4)
def _keys(version: int) -> dict[str, tuple[str, ...]]:
    keys: dict[str, tuple[str, ...]] = {}
    for row in row_kinds():
        name = schema_name(row.resolve_model())
        if keys.setdefault(name, row.key) != row.key:
            raise TypeError(f"row schema {name!r} has two keys: {keys[name]} and {row.key}")
    return keys


class _Keys(Mapping[str, tuple[str, ...]]):
    """:func:`row_keys` read on each use."""

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return _keys(registry_version())[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_keys(registry_version()))

    def __len__(self) -> int:
        return len(_keys(registry_version()))


KEYS: Mapping[str, tuple[str, ...]] = _Keys()


@dataclass
class SplitInfo:
    config: str
    split: str
    row_schema: str | None
    rows: int
    files: list[Path]


def json_ready(value: Any) -> Any:
    """A parquet row as JSON would hold it (bytes -> base64, as the row models dump them)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    return value


def _dig(row: dict[str, Any], dotted: str) -> Any:
    value: Any = row
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def iter_rows(path: Path, columns: list[str] | None = None) -> Iterator[dict[str, Any]]:
    parquet = pq.ParquetFile(path)
    for batch in parquet.iter_batches(batch_size=64, columns=columns):
        yield from batch.to_pylist()


def _schema_name(path: Path, rel: str, report: ValidationReport) -> str | None:
    try:
        schema = pq.read_schema(path)
    except Exception as exc:
        report.add(ValidationFinding("rows", rel, f"not readable as parquet: {exc}"))
        return None
    name = str((schema.metadata or {}).get(ROW_SCHEMA_KEY, b"").decode())
    if name not in KEYS:
        report.add(ValidationFinding(
            "rows", rel, f"schema metadata names no known row model ({name!r})"))
        return None
    expected = schema_for(SCHEMAS[name])
    if not schema.remove_metadata().equals(expected.remove_metadata()):
        report.add(ValidationFinding("rows", rel, f"parquet schema differs from the {name} schema",
                           field=", ".join(f.name for f in schema
                                           if f not in expected) or None))
    return name


def _budget(path: Path, rel: str, report: ValidationReport) -> None:
    meta = pq.ParquetFile(path).metadata
    for i in range(meta.num_row_groups):
        size = meta.row_group(i).total_byte_size
        if size > ROW_GROUP_LIMIT:
            report.add(ValidationFinding(
                "budget", rel, f"row group {i} is {size:,} bytes uncompressed "
                f"(budget {ROW_GROUP_LIMIT:,})"))
    if path.stat().st_size > FILE_LIMIT:
        report.add(ValidationFinding("budget", rel, f"file is {path.stat().st_size:,} bytes "
                                          f"(limit {FILE_LIMIT:,}): roll it"))


def _unique(row: dict[str, Any], index: int, rel: str, name: str,
            seen: set[tuple[Any, ...]], report: ValidationReport) -> bool:
    key = tuple(_dig(row, k) for k in KEYS[name])
    duplicate = key in seen
    if duplicate:
        report.add(ValidationFinding("rows", rel, f"duplicate key {key}", row=index,
                           field=",".join(KEYS[name])))
    seen.add(key)
    return not duplicate


def _model_accepts(model: type[BaseModel], row: dict[str, Any]) -> bool:
    try:
        model.model_validate(row)
    except ValidationError:
        return False
    return True


def _rows(path: Path, rel: str, name: str, seen: set[tuple[Any, ...]],
          report: ValidationReport, cache: ValidationCache, used: set[str]) -> int:
    try:
        schema = load_schema(name, SCHEMA_DIR)
        validator = Draft202012Validator(schema)
    except (OSError, ValueError) as exc:
        report.add(ValidationFinding(
            "rows", rel, f"cannot load schemas/{name}.schema.json ({exc}); "
            "run `termgrade schemas`"))
        rows: int = pq.ParquetFile(path).metadata.num_rows
        return rows
    cached = cache.rows_key(path, name, json.dumps(schema, sort_keys=True))
    if cache.hit(cached):
        # Unchanged since its rows passed: only its keys are read, for uniqueness across files.
        used.add(cached)
        columns = sorted({k.split(".")[0] for k in KEYS[name]})
        for index, row in enumerate(iter_rows(path, columns)):
            _unique(row, index, rel, name, seen, report)
        known: int = pq.ParquetFile(path).metadata.num_rows
        return known
    found = 0
    count = 0
    clean = True
    model = SCHEMAS[name]
    for index, row in enumerate(iter_rows(path)):
        count += 1
        if index and _model_accepts(model, row):
            # The row model is what schemas/ is generated from (`termgrade schemas --check`
            # keeps them equal), and its compiled validator is orders of magnitude faster
            # than walking the JSON Schema; the first row of each file and any row the
            # model refuses still go through the JSON Schema, which words the findings.
            clean &= _unique(row, index, rel, name, seen, report)
            continue
        for error in validator.iter_errors(json_ready(row)):
            found += 1
            if found <= MAX_FINDINGS_PER_FILE:
                report.add(ValidationFinding("rows", rel, error.message, row=index,
                                   field=".".join(str(p) for p in error.absolute_path) or None))
        clean &= _unique(row, index, rel, name, seen, report)
    if found > MAX_FINDINGS_PER_FILE:
        report.notes.append(f"{rel}: {found - MAX_FINDINGS_PER_FILE} more schema findings")
    if clean and not found:
        cache.remember(cached)
        used.add(cached)
    return count


def check_rows(paths: RepoPaths, configs: list[ConfigFiles], report: ValidationReport,
               cache: ValidationCache | None = None,
               used: set[str] | None = None) -> list[SplitInfo]:
    """``cache``: files whose rows passed before, unchanged, have only their keys read;
    ``used`` collects the cache entries this run relied on or earned."""
    cache = cache or ValidationCache(paths, enabled=False)
    used = used if used is not None else set()
    before = len(report.findings)
    infos = []
    total = 0
    for config in configs:
        names: set[str] = set()
        seen: set[tuple[Any, ...]] = set()
        for split, files in config.splits.items():
            rows = 0
            for path in files:
                rel = paths.rel(path)
                name = _schema_name(path, rel, report)
                if name is None:
                    continue
                names.add(name)
                _budget(path, rel, report)
                rows += _rows(path, rel, name, seen, report, cache, used)
            infos.append(SplitInfo(config.name, split, next(iter(names), None), rows, files))
            total += rows
        if len(names) > 1:
            report.add(ValidationFinding("rows", paths.rel(paths.config_dir(config.name)),
                               f"config {config.name} mixes row schemas {sorted(names)}"))
    report.record("rows", f"{total:,} rows match their JSON Schemas and fixed parquet "
                          "schemas; keys unique; row groups and files in budget", before)
    return infos
