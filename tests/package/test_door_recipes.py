"""The recipes of docs/architecture.md for the three doors, tried from outside the package:
a module written in tmp_path (``toy_doors``) holds a scaffold, a repo kind and a validate
check, and each is found without editing TermGrade, by ``module:Class`` or by an
entry point of an installed distribution, and used end to end: the scaffold graded by
``grade``'s library call (real containers) and trained by ``train`` (the door says it can
be), the repo kind built by the builder door and validated, the check run by ``validate``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.agent.scaffolds import SCAFFOLDS, registered, scaffold_for, trainable_scaffolds
from termgrade.builders.kinds import KINDS, build_repo, repo_kind
from termgrade.core.errors import OptionError
from termgrade.validate import rows_check
from termgrade.validate.checks import CHECKS
from termgrade.validate.repo import validate_repo
from termgrade.validate.schemas import write_schemas

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"
MODULE = "toy_doors"

TOY_SOURCE = '''\
"""A scaffold, a repo kind and a validate check of someone else's, outside TermGrade."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from termgrade.agent.episode import AgentRun, StopReason, Transcript
from termgrade.agent.scaffolds import ScaffoldBase, TrainingLoop, config_of
from termgrade.builders.card import card_configs, front_matter
from termgrade.builders.kinds import RepoKind, RowKind
from termgrade.builders.layout import RepoPaths
from termgrade.builders.parquet_writer import ParquetSplitWriter
from termgrade.builders.rows import RowModel, schema_for
from termgrade.validate.findings import ValidationFinding

TRAINABLE = True


class ToyScaffold(ScaffoldBase):
    """Types the task's reference solution into the agent's container in one go."""

    name = "toy-replay"
    version = "7"
    training = TrainingLoop("toy_loop", "toy_doors:ToyLoop") if TRAINABLE else None

    def identity(self, agent: Any) -> dict[str, Any]:
        return {"scaffold": self.name, "config": config_of(agent)}

    def run(self, agent: Any, sandbox: Any, task: Any) -> AgentRun:
        result = sandbox.exec(["bash", "-c", task.paths.solve_script.read_text()],
                              timeout_s=300, workdir=task.config.environment.workdir,
                              env=dict(task.config.environment.env) or None)
        transcript = Transcript(stop_reason=StopReason.FINISHED,
                                duration_s=result.duration_s)
        return AgentRun(result=None, transcript=transcript,
                        error=None if result.exit_code == 0 else result.output[-300:])


class ToyDoorRow(RowModel):
    row_schema: ClassVar[str | None] = "toy_door_row"
    name: str
    size: int


def build_toy_doors(out: Path, *, repo_id: str, overwrite: bool = False,
                    rows: str = "2") -> str:
    paths = RepoPaths(out)
    writer = ParquetSplitWriter(paths.config_dir("toys"), "train", schema_for(ToyDoorRow))
    for i in range(int(rows)):
        writer.add(ToyDoorRow(name=f"toy-{i}", size=i).model_dump(), where=f"toy {i}")
    writer.close()
    meta = {"configs": card_configs([("toys", [("train", paths.split_glob("toys", "train"))],
                                      True)]), "license": "mit"}
    paths.readme.write_text(front_matter(meta) + f"\\n# {repo_id}\\n", encoding="utf-8")
    return repo_id


TOY_KIND = RepoKind(
    name="toy-doors", about="Someone else's kind.", builder="toy_doors:build_toy_doors",
    summary="toy_doors:ToyDoorRow", default_repo_id="tests/toy-doors",
    rows=(RowKind("toys", "toy_doors:ToyDoorRow", ("name",)),))

SEEN: list[str] = []


def check_toy(repo: Any, report: Any) -> None:
    """Runs on every staged repo, after the built-in checks, with what they found."""
    SEEN.append(str(repo.root))
    rows = sum(info.rows for info in repo.found.infos)
    report.add(ValidationFinding("toy", "README.md", f"the toy check saw {rows} rows"))
'''

ENTRY_POINTS = f"""\
[termgrade.scaffolds]
toy-replay = {MODULE}:ToyScaffold

[termgrade.repo_kinds]
toy-doors = {MODULE}:TOY_KIND

[termgrade.validate_checks]
toy-check = {MODULE}:check_toy
"""


def _forget() -> None:
    SCAFFOLDS.unregister("toy-replay")
    KINDS.unregister("toy-doors")
    CHECKS.unregister("toy-check")
    sys.modules.pop(MODULE, None)


@pytest.fixture
def toy_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``toy_doors`` importable, installed nowhere."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(TOY_SOURCE)
    monkeypatch.syspath_prepend(str(folder))
    _forget()
    yield folder
    _forget()


@pytest.fixture
def toy_installed(toy_module: Path) -> Path:
    """``toy_doors`` installed as a distribution declaring the doors' entry points."""
    info = toy_module / "toy_doors-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-doors\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return toy_module


def test_a_scaffold_named_module_colon_class_registers_under_its_name(
        toy_module: Path) -> None:
    assert "toy-replay" not in registered()
    scaffold = scaffold_for(f"{MODULE}:ToyScaffold")
    assert (scaffold.name, scaffold.version) == ("toy-replay", "7")
    assert scaffold_for("toy-replay") is scaffold  # and by its name from then on
    assert scaffold_for(f"{MODULE}:ToyScaffold") is scaffold  # the same class: no duplicate


def test_an_installed_scaffold_is_found_by_its_entry_point_and_trains(
        toy_installed: Path) -> None:
    from termgrade.training.models import choose_model
    from termgrade.training.prepare import agent_loop_config
    from termgrade.training.recipe import GrpoRecipe, recipe_overrides, training_loop

    assert scaffold_for("toy-replay").version == "7"
    assert set(trainable_scaffolds()) == {"bash-tool", "toy-replay"}
    # training asks the door: tasks selected in the toy scaffold train in it, by its loop
    choice = choose_model("google/gemma-4-31B-it", "toy-replay",
                          default="google/gemma-4-31B-it")
    assert (choice.train_scaffold, choice.warnings) == ("toy-replay", ())
    assert training_loop("toy-replay").name == "toy_loop"
    assert agent_loop_config(GrpoRecipe(), scaffold="toy-replay")[0]["_target_"] == \
        "toy_doors.ToyLoop"
    overrides = recipe_overrides(GrpoRecipe(), "toy-replay")
    assert overrides["actor_rollout_ref.rollout.agent.default_agent_loop"] == "toy_loop"
    # the default run is unchanged
    assert agent_loop_config(GrpoRecipe())[0]["_target_"] == \
        "termgrade.training.agent_loop.BashAgentLoop"


def test_a_scaffold_the_door_says_cannot_be_trained_is_refused(toy_module: Path) -> None:
    from termgrade.training.models import choose_model

    source = toy_module / f"{MODULE}.py"
    source.write_text(source.read_text().replace("TRAINABLE = True", "TRAINABLE = False"))
    assert not scaffold_for(f"{MODULE}:ToyScaffold").trainable
    with pytest.raises(OptionError, match=r"toy-replay scaffold.*trainable scaffolds: bash-tool"):
        choose_model("google/gemma-4-31B-it", "toy-replay", default="google/gemma-4-31B-it")


def test_an_installed_repo_kind_is_built_by_the_builder_door_and_validated_by_its_check(
        toy_installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "repo"
    assert build_repo("toy-doors", out, repo_id="tests/toy-doors", rows="3") == \
        "tests/toy-doors"
    assert repo_kind("toy-doors").default_repo_id == "tests/toy-doors"
    schemas = tmp_path / "schemas"
    assert "toy_door_row.schema.json" in {p.name for p in write_schemas(schemas)}
    monkeypatch.setattr(rows_check, "SCHEMA_DIR", schemas)
    report = validate_repo(out, load=False, secrets=False, cache=False)
    toy = sys.modules[MODULE]
    assert [str(out.resolve())] == toy.SEEN
    # the rows were checked against the kind's schema first; the toy check ran after
    assert [f.message for f in report.findings] == ["the toy check saw 3 rows"], \
        [str(f) for f in report.findings]
    assert list(CHECKS.items())[-1] == "toy-check"


def test_without_installing_nothing_of_the_toys_is_known(toy_module: Path,
                                                        tmp_path: Path) -> None:
    """The honest twin of the entry-point tests: the same module, not installed."""
    assert "toy-replay" not in registered() and "toy-check" not in CHECKS.refresh()
    with pytest.raises(KeyError, match="no repo kind 'toy-doors'"):
        build_repo("toy-doors", tmp_path / "x")
    with pytest.raises(OptionError, match="no scaffold 'toy-replay'"):
        scaffold_for("toy-replay")


@pytest.mark.docker
@pytest.mark.slow
def test_a_scaffold_named_module_colon_class_grades_a_task(toy_module: Path,
                                                          tmp_path: Path) -> None:
    from termgrade.grade import TRIALS_FILE, grade_model
    from termgrade.records.trial import TrialRecord
    from tests.support.scripted_tools import ScriptedToolEndpoint, give_up

    with ScriptedToolEndpoint(give_up()) as endpoint:  # answers the probe; unused after
        agent = ModelAgent(Endpoint(endpoint.url, endpoint.model, api_key_env=None),
                           ScaffoldConfig(), f"{MODULE}:ToyScaffold")
        grade_model([TASK], agent, tmp_path / "graded", k=1, workers=1, progress=False)
    lines = (tmp_path / "graded" / TRIALS_FILE).read_text().splitlines()
    [trial] = [TrialRecord.model_validate_json(line) for line in lines]
    assert (trial.scaffold, trial.scaffold_version) == ("toy-replay", "7")
    assert (trial.counted, trial.reward) == (True, 1.0), trial.failure
