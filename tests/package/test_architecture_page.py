"""docs/architecture.md is true of the code: its drawing's floors are the import contract's
layers in order, its table's folders are the package's folders, ``core/``'s row names every
module core holds, and each floor with its own ``errors.py`` says it owns its errors. Each
check is also shown failing on a changed copy of the page."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "termgrade"


def _layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "floors")
    return [" | ".join(part.strip() for part in layer.split("|")) for layer in contract["layers"]]


def drawn_floors(page: str) -> list[str]:
    """The floors of the drawing, top to bottom: ``│ name | name   what it does │``."""
    drawing = page.split("```text", 1)[1].split("```", 1)[0]
    floors = []
    for line in drawing.splitlines():
        match = re.search(r"│ ([a-z_]+(?: \| [a-z_]+)*)\s{2,}", line)
        if match:
            floors.append(match.group(1))
    return floors


def table_rows(page: str) -> dict[str, str]:
    """Folder -> its "owns" cell, from the "What each folder owns" table."""
    rows: dict[str, str] = {}
    for line in page.splitlines():
        match = re.match(r"^\| (`[a-z_]+/`(?:, `[a-z_]+/`)*) \| (.*) \| (.*) \|$", line)
        if match:
            for folder in re.findall(r"`([a-z_]+)/`", match.group(1)):
                rows[folder] = match.group(2)
    return rows


def package_folders() -> set[str]:
    return {p.parent.name for p in PACKAGE.glob("*/__init__.py")}


def _problems(page: str) -> list[str]:
    problems = []
    floors = drawn_floors(page)
    if floors != _layers():
        problems.append(f"drawing {floors} != [tool.importlinter] layers {_layers()}")
    drawn = {name for floor in floors for name in floor.split(" | ")}
    if drawn != package_folders():
        problems.append(f"drawing's folders differ: {sorted(drawn ^ package_folders())}")
    rows = table_rows(page)
    if set(rows) != package_folders():
        problems.append(f"table's folders differ: {sorted(set(rows) ^ package_folders())}")
    core = rows.get("core", "")
    for module in sorted(PACKAGE.glob("core/*.py")):
        if module.stem != "__init__" and f"`{module.stem}`" not in core:
            problems.append(f"core's row does not name core/{module.name}")
    for errors in sorted(PACKAGE.glob("*/errors.py")):
        folder = errors.parent.name
        if folder != "core" and "errors" not in rows.get(folder, ""):
            problems.append(f"{folder}'s row does not say it owns its errors ({folder}/errors.py)")
    return problems


def test_the_page_is_true_of_the_code() -> None:
    assert _problems(PAGE.read_text()) == []


@pytest.mark.parametrize(("old", "new", "says"), [
    ("│ validate ", "│ validata ", "drawing"),
    ("| `view/` |", "| `viewer/` |", "table's folders"),
    ("the JSONL `journal`", "the JSONL journal", "core/journal.py"),
    ("; its errors (no Ray cluster)", "", "pools/errors.py"),
])
def test_the_check_fails_on_a_page_that_drifted(old: str, new: str, says: str) -> None:
    page = PAGE.read_text()
    assert old in page
    problems = _problems(page.replace(old, new, 1))
    assert any(says in problem for problem in problems), problems


def scoring_rooms(page: str) -> list[list[str]]:
    """The "Inside scoring/" table's rooms, top to bottom: each row's ``scoring/x`` names."""
    section = page.split("## Inside `scoring/`", 1)[1].split("\n## ", 1)[0]
    name = re.compile(r"`scoring/([a-z_]+)(?:\.py|/)`")
    return [name.findall(line.split(" | ", 1)[0])
            for line in section.splitlines() if line.startswith("| `scoring/")]


def _rooms_problems(page: str) -> list[str]:
    rooms = scoring_rooms(page)
    named = {name for room in rooms for name in room}
    scoring = PACKAGE / "scoring"
    present = {p.stem for p in scoring.glob("*.py") if p.stem != "__init__"} | {
        p.parent.name for p in scoring.glob("*/__init__.py")}
    problems = []
    if named != present:
        problems.append(f"the rooms table and scoring/ differ: {sorted(named ^ present)}")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if c["id"] == "scoring-rooms")
    layered = [name.strip() for layer in contract["layers"] for name in layer.split("|")]
    row = {name: i for i, room in enumerate(rooms) for name in room}
    order = [row.get(name, -1) for name in layered]  # one row may hold several layers
    if order != sorted(order) or -1 in order:
        problems.append(f"the table's rows {rooms} are not in the scoring-rooms "
                        f"contract's order {layered}")
    return problems


def test_the_scoring_rooms_table_is_true_of_the_code_and_its_contract() -> None:
    assert _rooms_problems(PAGE.read_text()) == []


def test_the_rooms_check_fails_on_a_table_that_drifted() -> None:
    page = PAGE.read_text()
    assert any("differ" in p for p in _rooms_problems(
        page.replace("| `scoring/kept.py` |", "| `scoring/kept_work.py` |")))
    swapped = page.replace("| `scoring/pair/` |", "| `scoring/PAIR/` |").replace(
        "| `scoring/review/` |", "| `scoring/pair/` |").replace("| `scoring/PAIR/` |",
                                                                "| `scoring/review/` |")
    assert any("contract" in p for p in _rooms_problems(swapped))
