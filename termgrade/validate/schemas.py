"""The JSON Schemas in ``schemas/`` are generated from the typed models, never hand-edited.

Later stages add their models to :data:`MODELS`; a test proves files and models agree.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from termgrade.core.atomic import atomic_write_text
from termgrade.core.package_data import data_path
from termgrade.generate.funnel import Funnel
from termgrade.generate.records import CandidateRecord
from termgrade.verify.record import VerifyRecord

SCHEMA_DIR = data_path("schemas")
"""The schemas TermGrade validates against: the checkout's schemas/, or the installed
package's copy of them."""


def default_schema_dir() -> Path:
    """Where ``termgrade schemas`` writes: the checkout's schemas/, else the package's."""
    return SCHEMA_DIR

MODELS: dict[str, type[BaseModel]] = {
    "verify_record": VerifyRecord,
    "candidate": CandidateRecord,
    "generation_funnel": Funnel,
}


OPTIONAL_SCHEMA_MODULES = ("termgrade.records", "termgrade.builders.rows")
"""Modules that export ``SCHEMA_MODELS: dict[str, type[BaseModel]]``, loaded when present."""


def _extra_models() -> dict[str, type[BaseModel]]:
    import importlib

    found: dict[str, type[BaseModel]] = {}
    for name in OPTIONAL_SCHEMA_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        found.update(getattr(module, "SCHEMA_MODELS", {}))
    return found


def all_models() -> dict[str, type[BaseModel]]:
    return {**MODELS, **_extra_models()}


def render(name: str, model: type[BaseModel]) -> str:
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://termgrade.dev/schemas/{name}.schema.json"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path | None = None) -> list[Path]:
    """Write every schema (into :func:`default_schema_dir` unless told where)."""
    directory = directory or default_schema_dir()
    written = []
    for name, model in sorted(all_models().items()):
        path = directory / f"{name}.schema.json"
        atomic_write_text(path, render(name, model))
        written.append(path)
    return written


def stale_schemas(directory: Path | None = None) -> list[str]:
    directory = directory or default_schema_dir()
    stale = []
    for name, model in sorted(all_models().items()):
        path = directory / f"{name}.schema.json"
        if not path.exists() or path.read_text() != render(name, model):
            stale.append(path.name)
    return stale


def load_schema(name: str, directory: Path = SCHEMA_DIR) -> dict[str, object]:
    data: dict[str, object] = json.loads((directory / f"{name}.schema.json").read_text())
    return data
