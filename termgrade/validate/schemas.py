"""The schema registry: every model TermGrade writes files of, by schema name, in one dict
(:data:`SCHEMAS`). Its JSON Schemas in ``schemas/`` are generated from it
(``termgrade schemas``), never hand-edited; a test proves files and models agree.

Each model names its own schema (:func:`termgrade.records.arrow.schema_name`: a record's
format, a row model's ``row_schema``), so a name is written once, on the model; the
registry lives on the validate floor, which can import every model it lists (records,
generate, verify, builders).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel

from termgrade.builders.kinds import registry_version, row_kinds
from termgrade.core.atomic import atomic_write_text
from termgrade.core.package_data import data_path
from termgrade.generate.funnel import Funnel
from termgrade.generate.records import CandidateRecord
from termgrade.records.arrow import schema_name
from termgrade.records.kept_work import KeptWork
from termgrade.records.label import LabelRow, SplitRow
from termgrade.records.run import RunRecord
from termgrade.records.trial import TrialRecord
from termgrade.verify.record import VerifyRecord

SCHEMA_DIR = data_path("schemas")
"""The schemas TermGrade validates against: the checkout's schemas/, or the installed
package's copy of them."""


def default_schema_dir() -> Path:
    """Where ``termgrade schemas`` writes: the checkout's schemas/, else the package's."""
    return SCHEMA_DIR


def _by_name(*models: type[BaseModel]) -> dict[str, type[BaseModel]]:
    registry: dict[str, type[BaseModel]] = {}
    for model in models:
        name = schema_name(model)
        if name in registry:
            raise TypeError(f"{model.__name__} and {registry[name].__name__} both name "
                            f"schema {name!r}")
        registry[name] = model
    return registry


RECORDS: tuple[type[BaseModel], ...] = (
    TrialRecord, RunRecord, LabelRow, SplitRow, VerifyRecord, CandidateRecord, Funnel,
    KeptWork)
"""The record models with files of their own (JSONL); dataset rows come from the repo kinds."""


def schema_registry() -> dict[str, type[BaseModel]]:
    """Every model with a JSON Schema in schemas/, by schema name: the records, then each
    registered repo kind's row models (:mod:`termgrade.builders.kinds`)."""
    return dict(_registry(registry_version()))


@functools.lru_cache(maxsize=4)
def _registry(version: int) -> dict[str, type[BaseModel]]:
    models = list(RECORDS)
    for row in row_kinds():
        model = row.resolve_model()
        if model not in models:
            models.append(model)
    return _by_name(*models)


class _Schemas(Mapping[str, type[BaseModel]]):
    """:func:`schema_registry` read on each use, so a kind registered later is in it."""

    def __getitem__(self, name: str) -> type[BaseModel]:
        return _registry(registry_version())[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_registry(registry_version()))

    def __len__(self) -> int:
        return len(_registry(registry_version()))


SCHEMAS: Mapping[str, type[BaseModel]] = _Schemas()
"""Every model with a JSON Schema in schemas/, by schema name: the one registry."""


def render(name: str, model: type[BaseModel]) -> str:
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://termgrade.dev/schemas/{name}.schema.json"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path | None = None) -> list[Path]:
    """Write every schema (into :func:`default_schema_dir` unless told where)."""
    directory = directory or default_schema_dir()
    written = []
    for name, model in sorted(SCHEMAS.items()):
        path = directory / f"{name}.schema.json"
        atomic_write_text(path, render(name, model))
        written.append(path)
    return written


def stale_schemas(directory: Path | None = None) -> list[str]:
    directory = directory or default_schema_dir()
    stale = []
    for name, model in sorted(SCHEMAS.items()):
        path = directory / f"{name}.schema.json"
        if not path.exists() or path.read_text() != render(name, model):
            stale.append(path.name)
    return stale


def load_schema(name: str, directory: Path = SCHEMA_DIR) -> dict[str, object]:
    data: dict[str, object] = json.loads((directory / f"{name}.schema.json").read_text())
    return data
