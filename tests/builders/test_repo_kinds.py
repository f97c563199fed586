"""The repo-kind door: a kind registered once shows up in the schema registry, the row and
archive checks, ``termgrade build`` and ``validate`` with no other edit; and no module but
:mod:`termgrade.builders.kinds` lists the kinds (their schema names or default repo ids)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
import typer
from typer.testing import CliRunner

from termgrade.builders.card import card_configs, front_matter
from termgrade.builders.kinds import (
    RepoKind,
    RowKind,
    build_repo,
    register_repo_kind,
    repo_kind,
    repo_kinds,
    unregister_repo_kind,
)
from termgrade.builders.layout import RepoPaths
from termgrade.builders.parquet_writer import ParquetSplitWriter
from termgrade.builders.rows import RowModel, schema_for
from termgrade.records.arrow import schema_name
from termgrade.validate import rows_check
from termgrade.validate.archive_check import task_schemas
from termgrade.validate.findings import ValidationFinding, ValidationReport
from termgrade.validate.repo import validate_repo
from termgrade.validate.rows_check import KEYS
from termgrade.validate.schemas import SCHEMAS, write_schemas

PACKAGE = Path(__file__).resolve().parents[2] / "termgrade"


class ToyRow(RowModel):
    """A row of the test's own repo kind."""

    row_schema: ClassVar[str | None] = "toy_row"
    name: str
    size: int


def build_toy(out: Path, *, repo_id: str, overwrite: bool = False, rows: str = "2") -> str:
    """The toy kind's builder: ``rows`` rows in config ``toys`` and a card naming it."""
    paths = RepoPaths(out)
    writer = ParquetSplitWriter(paths.config_dir("toys"), "train", schema_for(ToyRow))
    for i in range(int(rows)):
        writer.add(ToyRow(name=f"toy-{i}", size=i).model_dump(), where=f"toy {i}")
    writer.close()
    meta = {"configs": card_configs([("toys", [("train", paths.split_glob("toys", "train"))],
                                      True)]), "license": "mit"}
    paths.readme.write_text(front_matter(meta) + f"\n# {repo_id}\n", encoding="utf-8")
    return repo_id


CHECKED: list[Path] = []


def check_toy(paths: RepoPaths, report: ValidationReport) -> None:
    """The toy kind's own check: it runs only on a repo holding toy rows."""
    CHECKED.append(paths.root)
    report.add(ValidationFinding("toy", "README.md", "the toy check ran"))


TOY = RepoKind(
    name="toy", about="A test's own kind.", builder=f"{__name__}:build_toy",
    summary=f"{__name__}:ToyRow", default_repo_id="tests/toy", card=__name__,
    rows=(RowKind("toys", f"{__name__}:ToyRow", ("name",), archives=False),),
    checks=(f"{__name__}:check_toy",))


@pytest.fixture
def toy() -> Iterator[RepoKind]:
    register_repo_kind(TOY)
    CHECKED.clear()
    yield TOY
    unregister_repo_kind(TOY.name)


def test_a_registered_kind_is_in_every_list(toy: RepoKind, tmp_path: Path) -> None:
    assert "toy_row" not in task_schemas()
    assert SCHEMAS["toy_row"] is ToyRow
    assert KEYS["toy_row"] == ("name",)
    written = {p.name for p in write_schemas(tmp_path)}
    assert "toy_row.schema.json" in written


def test_a_registered_kind_builds_from_the_cli_and_validates(
        toy: RepoKind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.cli.build import register

    app = typer.Typer()
    register(app)
    out = tmp_path / "toy"
    done = CliRunner().invoke(app, ["build", "toy", "--out", str(out), "--set", "rows=3"])
    assert done.exit_code == 0, done.output
    assert f"# {toy.default_repo_id}" in (out / "README.md").read_text()
    # The contributor's `termgrade schemas`: the registry writes the new kind's schema.
    schemas = tmp_path / "schemas"
    write_schemas(schemas)
    monkeypatch.setattr(rows_check, "SCHEMA_DIR", schemas)
    report = validate_repo(out, load=False, secrets=False, cache=False)
    assert [out.resolve()] == CHECKED
    assert [f.message for f in report.findings] == ["the toy check ran"], \
        [str(f) for f in report.findings]


def test_a_duplicate_key_of_a_new_kind_is_found(toy: RepoKind, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "toy"
    build_repo("toy", out, repo_id="tests/toy", rows="2")
    writer = ParquetSplitWriter(RepoPaths(out).config_dir("toys"), "extra", schema_for(ToyRow))
    writer.add(ToyRow(name="toy-0", size=9).model_dump(), where="dup")
    writer.close()
    readme = RepoPaths(out).readme
    readme.write_text(readme.read_text().replace(
        "data/toys/train-*.parquet", "data/toys/*.parquet"))
    schemas = tmp_path / "schemas"
    write_schemas(schemas)
    monkeypatch.setattr(rows_check, "SCHEMA_DIR", schemas)
    report = validate_repo(out, load=False, secrets=False, cache=False)
    assert any("duplicate key ('toy-0',)" in f.message for f in report.findings), \
        [str(f) for f in report.findings]


def test_without_registration_the_kind_is_unknown(tmp_path: Path) -> None:
    assert "toy" not in {k.name for k in repo_kinds()}
    assert "toy_row" not in SCHEMAS
    with pytest.raises(KeyError, match="no repo kind 'toy'"):
        build_repo("toy", tmp_path / "x")


def _literal_strings(text: str) -> set[str]:
    return set(re.findall(r'"([^"\n]+)"', text))


def test_no_other_module_lists_the_kinds() -> None:
    """Row schema names are written on their row models (records' names, such as
    ``label``, are plain words and not checked); repo ids and kinds in the registry."""
    kinds = PACKAGE / "builders" / "kinds.py"
    names: dict[str, set[str]] = {}
    for kind in repo_kinds():
        names.setdefault(kind.default_repo_id, set())
        for row in kind.rows:
            model = row.resolve_model()
            if model.__module__.startswith("termgrade.builders."):
                module = model.__module__.removeprefix("termgrade.").replace(".", "/") + ".py"
                names.setdefault(schema_name(model), set()).add(module)
    assert "env_task_row" in names and "ai-and/termgrade-environments" in names
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if path == kinds:
            continue
        for literal in _literal_strings(path.read_text()) & set(names):
            if rel not in names[literal]:
                found.setdefault(literal, []).append(rel)
    # training/ exports a function that happens to be named verl_prompt_row (lazily, by name).
    if found.get("verl_prompt_row") == ["training/__init__.py"]:
        del found["verl_prompt_row"]
    assert found == {}, found


def test_the_shipped_kinds_and_their_defaults() -> None:
    from termgrade.builders.bandcentral import DEFAULT_REPO_ID as BANDCENTRAL
    from termgrade.builders.environments import DEFAULT_REPO_ID as ENVIRONMENTS

    assert [k.name for k in repo_kinds()][:3] == ["environments", "trajectories", "bandcentral"]
    assert repo_kind("environments").default_repo_id == ENVIRONMENTS
    assert repo_kind("bandcentral").default_repo_id == BANDCENTRAL
    assert task_schemas() == {"env_task_row", "bandcentral_task_row"}
    import termgrade
    from termgrade.builders.environments import EnvironmentsSummary, build_environments

    # the public API's builder names are the registry's
    assert termgrade.build_environments is build_environments
    assert termgrade.EnvironmentsSummary is EnvironmentsSummary
    assert {"build_environments", "build_trajectories", "build_bandcentral"} <= set(
        termgrade.__all__)
