"""Card prose overrides: a maintainer's text replaces a named prose section of each card,
the generated facts stay, and a section the card lacks is a clear error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.builders.bandcentral import build_bandcentral
from termgrade.builders.card_prose import load_card_prose
from termgrade.builders.environments import build_environments
from termgrade.builders.errors import BuildError
from termgrade.builders.trajectories import build_trajectories
from termgrade.cli.app import app
from termgrade.records import SplitRow
from termgrade.training.checkpoint_card import build_checkpoint_card
from tests.support.records import trial, write_jsonl, write_trials
from tests.support.task_dirs import MakeTask

Build = Callable[[Path, Path | None], None]
OURS = "Our own words about these {{ repo_id }} rows."


@pytest.fixture
def builders(make_task: MakeTask, tmp_path: Path) -> dict[str, tuple[Build, str]]:
    """card -> (build it to OUT with card prose PROSE, a generated fact in its card)."""
    make_task("alpha")
    tasks = make_task("bravo").parent
    trials = write_trials(tmp_path / "t.jsonl", [trial(i) for i in range(3)])
    splits = write_jsonl(tmp_path / "splits.jsonl", [
        SplitRow(task_id="alpha", split="train1", role="train", pass_rate=0.5),
        SplitRow(task_id="bravo", split="heldout1", role="validation", pass_rate=0.25)])
    return {
        "environments": (lambda out, prose: build_environments(
            out, task_roots=[tasks], card_prose=prose) and None, "| `task_id` |"),
        "trajectories": (lambda out, prose: build_trajectories(
            out, trials=trials, task_roots=[tasks], card_prose=prose) and None, "| `trial_id` |"),
        "bandcentral": (lambda out, prose: build_bandcentral(
            out, splits=splits, task_roots=[tasks], card_prose=prose) and None,
            "| train | 1 | 0.5000 |"),
        "checkpoint": (lambda out, prose: build_checkpoint_card(
            out, card_prose=prose) and None, "| `adapter.rank` |"),
    }


@pytest.mark.parametrize("card", ["environments", "trajectories", "bandcentral", "checkpoint"])
def test_an_intro_override_lands_and_the_facts_stay(
        builders: dict[str, tuple[Build, str]], card: str, tmp_path: Path) -> None:
    build, fact = builders[card]
    build(tmp_path / "default", None)
    default = (tmp_path / "default" / "README.md").read_text()
    prose = tmp_path / "prose.md"
    prose.write_text(f"<!-- prose:intro -->\n{OURS}\n<!-- /prose -->\n")
    build(tmp_path / "ours", prose)
    ours = (tmp_path / "ours" / "README.md").read_text()
    assert "Our own words about these ai-and/" in ours and "{{" not in ours
    assert fact in ours and fact in default
    assert "<!-- prose" not in ours and "<!-- prose" not in default
    # Only the intro changed: the rest of the card is the default card's.
    assert ours.count("\n") < default.count("\n") and "Our own words" not in default
    tail = default.split("\n## ", 1)[1]
    assert tail in ours


def test_a_folder_of_sections_overrides_several(builders: dict[str, tuple[Build, str]],
                                                 tmp_path: Path) -> None:
    folder = tmp_path / "card_prose"
    folder.mkdir()
    (folder / "intro.md").write_text("Tasks, in brief.\n")
    (folder / "license.md").write_text("MIT, for this sketch.\n")
    builders["bandcentral"][0](tmp_path / "bc", folder)
    card = (tmp_path / "bc" / "README.md").read_text()
    assert "Tasks, in brief.\n" in card and card.rstrip().endswith("MIT, for this sketch.")
    assert "band-central rule" not in card.split("## Configs")[0]


def test_an_unknown_section_is_an_error_naming_file_and_sections(
        builders: dict[str, tuple[Build, str]], tmp_path: Path) -> None:
    prose = tmp_path / "prose.md"
    prose.write_text("<!-- prose:intro -->\nok\n<!-- /prose -->\n"
                     "<!-- prose:results -->\nno such section\n<!-- /prose -->\n")
    with pytest.raises(BuildError, match=r"(?s)prose.md: the checkpoint card has no prose "
                                         r"section 'results'.*fix: use one of: intro, use_notes"):
        builders["checkpoint"][0](tmp_path / "ckpt", prose)
    assert not (tmp_path / "ckpt").exists()  # nothing staged
    done = CliRunner().invoke(app, ["build", "checkpoint-card", "-o", str(tmp_path / "c2"),
                                    "--card-prose", str(prose)])
    assert done.exit_code == 1
    assert "has no prose section 'results'" in " ".join(done.output.split())


def test_malformed_prose_files_are_refused(tmp_path: Path) -> None:
    stray = tmp_path / "stray.md"
    stray.write_text("<!-- prose:intro -->\nok\n<!-- /prose -->\nloose words\n")
    with pytest.raises(BuildError, match=r"stray.md: line 4: text outside"):
        load_card_prose(stray)
    twice = tmp_path / "twice.md"
    twice.write_text("<!-- prose:intro -->\na\n<!-- /prose -->\n" * 2)
    with pytest.raises(BuildError, match=r"'intro' is given twice"):
        load_card_prose(twice)
    with pytest.raises(BuildError, match=r"no such card prose file"):
        load_card_prose(tmp_path / "absent.md")
