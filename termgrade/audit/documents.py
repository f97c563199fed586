"""What the audit reads of a task, whatever its on-disk format.

An :class:`AuditDoc` holds the texts every audit stage needs (instruction, test code,
verifier script, solution, Dockerfile) and the metadata table. :func:`read_harbor` reads
a Harbor task (``task.toml``); :func:`read_tbench` reads the older Terminal-Bench format
(the ``tasks/<id>/`` layout of TB 1.x)::

    <task_id>/
    ├── task.yaml          # instruction: |  ... ; difficulty, category, author_*, tags
    ├── Dockerfile         # (or docker-compose.yaml building one)
    ├── solution.sh        # or solution.yaml: a list of commands
    ├── run-tests.sh       # the verifier entry point
    └── tests/
        └── test_outputs.py

(early Terminal-Bench tasks keep the instruction in ``descriptions: [{key: base,
description: ...}]`` instead of ``instruction``; both are read; ``category`` is reported
as ``domain``). :func:`read_task` picks the right reader and :func:`find_tasks` walks
folders for either format.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from termgrade.task.errors import TaskLoadError
from termgrade.task.paths import TaskPaths

TaskFormat = Literal["harbor", "tbench"]
MAX_DEPTH = 4
"""How deep :func:`find_tasks` looks below each root for task directories."""


@dataclass(frozen=True)
class SourceFile:
    """One text file of a task, named by its path relative to the task directory."""

    path: str
    text: str


@dataclass(frozen=True)
class AuditDoc:
    task_id: str
    root: Path
    format: TaskFormat
    instruction: str
    test_sources: tuple[SourceFile, ...]
    """Python files under ``tests/`` (sorted by path)."""
    test_script: str | None
    """``tests/test.sh`` (Harbor) or ``run-tests.sh`` (Terminal-Bench)."""
    solution: tuple[SourceFile, ...]
    dockerfile: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    """``task.toml``'s ``[environment]`` table (Harbor; empty for Terminal-Bench)."""
    problems: tuple[str, ...] = ()
    """What could not be read (a missing file, malformed TOML/YAML): the reason, per item."""
    test_scripts: tuple[SourceFile, ...] = ()
    """Scripts under ``tests/`` that are not Python (``*.sh``, ``*.bash``, or text starting
    with ``#!``; the verifier script included), sorted by path: runners test.sh may run."""

    @property
    def test_code(self) -> str:
        """All Python test code as one text. The verifier script is not included: in a
        Harbor corpus it is shared boilerplate, identical from task to task."""
        return "\n".join(source.text for source in self.test_sources)


def read_text(path: Path) -> str | None:
    """A file's text (undecodable bytes replaced), or None when it is not a file."""
    if not path.is_file():
        return None
    return path.read_text(encoding="utf-8", errors="replace")


def python_sources(tests_dir: Path) -> tuple[SourceFile, ...]:
    if not tests_dir.is_dir():
        return ()
    files = sorted(p for p in tests_dir.rglob("*.py") if p.is_file())
    root = tests_dir.parent
    return tuple(SourceFile(p.relative_to(root).as_posix(), read_text(p) or "") for p in files)


def text_files(directory: Path) -> tuple[SourceFile, ...]:
    if not directory.is_dir():
        return ()
    root = directory.parent
    found = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if b"\0" not in data[:4096]:
            found.append(SourceFile(path.relative_to(root).as_posix(),
                                    data.decode("utf-8", errors="replace")))
    return tuple(found)


SCRIPT_SUFFIXES = (".sh", ".bash")
MAX_SCRIPT_BYTES = 256 * 1024
"""Larger files under ``tests/`` are data, not a runner script."""


def shell_scripts(tests_dir: Path) -> tuple[SourceFile, ...]:
    """The scripts under ``tests_dir`` that are not Python (:attr:`AuditDoc.test_scripts`)."""
    if not tests_dir.is_dir():
        return ()
    root = tests_dir.parent
    found = []
    for path in sorted(p for p in tests_dir.rglob("*") if p.is_file() and p.suffix != ".py"):
        if path.stat().st_size > MAX_SCRIPT_BYTES:
            continue
        data = path.read_bytes()
        if b"\0" in data[:4096] or not (path.suffix in SCRIPT_SUFFIXES
                                          or data.startswith(b"#!")):
            continue
        found.append(SourceFile(path.relative_to(root).as_posix(),
                                data.decode("utf-8", errors="replace")))
    return tuple(found)


def read_harbor(directory: Path) -> AuditDoc:
    """Read a Harbor task; unreadable parts become ``problems``, never exceptions."""
    paths = TaskPaths(directory)
    problems: list[str] = []
    metadata: dict[str, Any] = {}
    environment: dict[str, Any] = {}
    try:
        raw = tomllib.loads(read_text(paths.config) or "")
        table = raw.get("metadata", {})
        metadata = dict(table) if isinstance(table, dict) else {}
        table = raw.get("environment", {})
        environment = dict(table) if isinstance(table, dict) else {}
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"task.toml is not valid TOML: {exc}")
    instruction = read_text(paths.instruction)
    if instruction is None:
        problems.append("instruction.md is missing")
    return AuditDoc(
        task_id=directory.name, root=directory, format="harbor",
        instruction=instruction or "",
        test_sources=python_sources(paths.tests_dir),
        test_script=read_text(paths.test_script),
        solution=text_files(paths.solution_dir),
        dockerfile=read_text(paths.dockerfile),
        metadata=metadata, environment=environment, problems=tuple(problems),
        test_scripts=shell_scripts(paths.tests_dir),
    )


def _tbench_instruction(data: dict[str, Any]) -> str | None:
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


def _tbench_metadata(data: dict[str, Any]) -> dict[str, Any]:
    keep = ("difficulty", "category", "tags", "author_name", "author_email")
    metadata = {key: data[key] for key in keep if key in data}
    if "category" in data:
        metadata["domain"] = data["category"]
    return metadata


def _tbench_solution(directory: Path) -> tuple[SourceFile, ...]:
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
    instruction = _tbench_instruction(data)
    if instruction is None:
        problems.append("task.yaml has no `instruction` (nor `descriptions[key=base]`)")
    return AuditDoc(
        task_id=directory.name, root=directory, format="tbench",
        instruction=instruction or "",
        test_sources=python_sources(directory / "tests"),
        test_script=read_text(directory / "run-tests.sh"),
        solution=_tbench_solution(directory),
        dockerfile=read_text(directory / "Dockerfile"),
        metadata=_tbench_metadata(data), problems=tuple(problems),
    )


def task_format(directory: Path) -> TaskFormat | None:
    if (directory / "task.toml").is_file():
        return "harbor"
    if (directory / "task.yaml").is_file():
        return "tbench"
    return None


def read_task(directory: Path) -> AuditDoc:
    kind = task_format(directory)
    if kind == "harbor":
        return read_harbor(directory)
    if kind == "tbench":
        return read_tbench(directory)
    raise TaskLoadError(directory, "neither task.toml (Harbor) nor task.yaml (Terminal-Bench)",
                        fix="pass a task directory or a folder of them")


def find_tasks(root: Path, max_depth: int = MAX_DEPTH) -> Iterator[Path]:
    """Task directories (either format) at or below ``root``, sorted; a task directory's
    own subfolders are not searched. Hidden folders are skipped."""
    if not root.is_dir():
        raise TaskLoadError(root, "no such directory", fix="pass a folder of tasks")
    if task_format(root) is not None:
        yield root
        return
    if max_depth <= 0:
        return
    for child in sorted(root.iterdir()):
        if child.is_dir() and not child.name.startswith("."):
            yield from find_tasks(child, max_depth - 1)
