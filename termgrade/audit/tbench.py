"""Read tasks in the older Terminal-Bench format (the ``tasks/<id>/`` layout of TB 1.x).

::

    <task_id>/
    ├── task.yaml          # instruction: |  ... ; difficulty, category, author_*, tags
    ├── Dockerfile         # (or docker-compose.yaml building one)
    ├── solution.sh        # or solution.yaml: a list of commands
    ├── run-tests.sh       # the verifier entry point
    └── tests/
        └── test_outputs.py

Early tasks keep the instruction in ``descriptions: [{key: base, description: ...}]``
instead of ``instruction``; both are read. ``category`` is reported as ``domain``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from termgrade.audit.documents import AuditDoc, SourceFile, python_sources, read_text


def _instruction(data: dict[str, Any]) -> str | None:
    value = data.get("instruction")
    if isinstance(value, str):
        return value
    descriptions = data.get("descriptions")
    if isinstance(descriptions, list):
        for item in descriptions:
            if isinstance(item, dict) and item.get("key", "base") == "base":
                text = item.get("description")
                if isinstance(text, str):
                    return text
    return None


def _metadata(data: dict[str, Any]) -> dict[str, Any]:
    keep = ("difficulty", "category", "tags", "author_name", "author_email")
    metadata = {key: data[key] for key in keep if key in data}
    if "category" in data:
        metadata["domain"] = data["category"]
    return metadata


def _solution(directory: Path) -> tuple[SourceFile, ...]:
    found = []
    for name in ("solution.sh", "solution.yaml"):
        text = read_text(directory / name)
        if text is not None:
            found.append(SourceFile(name, text))
    return tuple(found)


def read_tbench(directory: Path) -> AuditDoc:
    """Read a Terminal-Bench task; unreadable parts become ``problems``, never exceptions."""
    problems: list[str] = []
    data: dict[str, Any] = {}
    try:
        loaded = yaml.safe_load(read_text(directory / "task.yaml") or "")
        if isinstance(loaded, dict):
            data = loaded
        else:
            problems.append("task.yaml is not a mapping")
    except yaml.YAMLError as exc:
        problems.append(f"task.yaml is not valid YAML: {exc}")
    instruction = _instruction(data)
    if instruction is None:
        problems.append("task.yaml has no `instruction` (nor `descriptions[key=base]`)")
    return AuditDoc(
        task_id=directory.name, root=directory, format="tbench",
        instruction=instruction or "",
        test_sources=python_sources(directory / "tests"),
        test_script=read_text(directory / "run-tests.sh"),
        solution=_solution(directory),
        dockerfile=read_text(directory / "Dockerfile"),
        metadata=_metadata(data), problems=tuple(problems),
    )
