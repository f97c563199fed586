"""Card rendering: ``{{ name }}`` templates, YAML front matter, markdown and field tables.

Field tables come from the row models' ``Field(description=...)``, the same source as
schemas/ and the parquet schemas, so the card cannot drift from the data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from termgrade.builders.errors import BuildError
from termgrade.core.package_data import data_path
from termgrade.records.arrow import arrow_type, record_fields

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")
TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
DATASET_CARD_TEMPLATE = data_path("DATASET_CARD.md")
"""The environments card template (the package's copy of the repo's DATASET_CARD.md);
the other cards are in ``templates/``."""


def render_template(template: str, values: dict[str, str], *, name: str = "template") -> str:
    """Replace every ``{{ key }}``; a placeholder with no value raises, naming it."""
    missing = sorted({m.group(1) for m in _PLACEHOLDER.finditer(template)} - set(values))
    if missing:
        raise BuildError(f"{name}: no value for placeholder(s) {', '.join(missing)}",
                         fix="add them to the card context or remove them from the template")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def load_template(name: str) -> str:
    return (TEMPLATE_DIR / name).read_text(encoding="utf-8")


def front_matter(data: dict[str, Any]) -> str:
    return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True) + "---\n"


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``(yaml_dict, body)`` of a card; raises ValueError when the front matter is broken."""
    if not text.startswith("---\n"):
        raise ValueError("no YAML front matter (the card must start with '---')")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ValueError("YAML front matter is not closed by '---'")
    data = yaml.safe_load(text[4:end])
    if not isinstance(data, dict):
        raise ValueError("YAML front matter is not a mapping")
    return data, text[end + 5:]


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_row(row: Sequence[object]) -> str:
    return "| " + " | ".join(_cell(v) for v in row) + " |"


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    lines += [markdown_row(row) for row in rows]
    return "\n".join(lines)


def _type_name(arrow_type: pa.DataType) -> str:
    if pa.types.is_list(arrow_type):
        return f"list<{_type_name(arrow_type.value_type)}>"
    if pa.types.is_struct(arrow_type):
        return "struct"
    return str(arrow_type)


def _rows(model: type[Any], prefix: str) -> list[tuple[str, str, str]]:
    rows = []
    struct = arrow_type(model)
    fields = _fields(model)
    for field in (struct.field(i) for i in range(struct.num_fields)):
        info = fields[field.name]
        name = prefix + field.name
        kind = _type_name(field.type) + (" (nullable)" if field.nullable else "")
        rows.append((f"`{name}`", kind, info.description or ""))
        nested = _nested_model(info.annotation)
        if nested is not None:
            suffix = "[]." if pa.types.is_list(field.type) else "."
            rows += _rows(nested, name + suffix)
    return rows


def _fields(model: type[Any]) -> dict[str, FieldInfo]:
    fields = record_fields(model)
    if fields is None:
        raise TypeError(f"{model!r} is not a pydantic model or dataclass")
    return fields


def _nested_model(annotation: Any) -> type[Any] | None:
    """The model (or pydantic dataclass, e.g. a test verdict) a column holds, if any."""
    from typing import get_args

    if record_fields(annotation) is not None:
        return annotation  # type: ignore[no-any-return]
    for arg in get_args(annotation):
        found = _nested_model(arg)
        if found is not None:
            return found
    return None


def field_table(model: type[BaseModel]) -> str:
    """A markdown table of every column (nested fields dotted) with its type and meaning."""
    return markdown_table(("field", "type", "description"), _rows(model, ""))


def card_configs(configs: list[tuple[str, list[tuple[str, str]], bool]]) -> list[dict[str, Any]]:
    """YAML ``configs`` entries from ``(name, [(split, path_glob)], is_default)``."""
    out: list[dict[str, Any]] = []
    for name, splits, default in configs:
        entry: dict[str, Any] = {"config_name": name}
        if default:
            entry["default"] = True
        entry["data_files"] = [{"split": s, "path": p} for s, p in splits]
        out.append(entry)
    return out
