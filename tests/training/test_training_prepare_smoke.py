"""Issue 44, item 8: `train prepare --smoke` on a repo of one training task said "ask a
smaller batch" and `--batch-size 1` gave the same refusal (the smoke values overrode it);
the run folder never said the GPU node needs Docker and the tasks' base image; the card
and prepare's last line disagreed on how launch.sh is run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from termgrade.cli import app
from termgrade.core.settings import BASE_IMAGE
from termgrade.training.prepare import read_record
from termgrade.training.prepare_readme import launch_line
from tests.support.bandcentral import labelled_bandcentral
from tests.support.task_dirs import MakeTask

pytestmark = pytest.mark.filterwarnings("ignore:no selection report beside")


def said(result: Any) -> str:
    return " ".join(str(result.output).split())


def test_a_smoke_run_of_one_task_names_the_batch_that_works_and_that_batch_works(
        verl: Any, make_task: MakeTask, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = labelled_bandcentral(make_task, tmp_path, 1)
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(app, ["train", "prepare", "--repo", str(repo), "--smoke",
                                       "-o", "smoke"])
    assert refused.exit_code == 1
    assert "1 training task(s) for train_batch_size 2" in said(refused)
    assert "`--batch-size 1`" in said(refused) and not (tmp_path / "smoke").exists()
    done = CliRunner().invoke(app, ["train", "prepare", "--repo", str(repo), "--smoke",
                                    "--batch-size", "1", "-o", "smoke"])
    assert done.exit_code == 0, said(done)
    record = read_record(tmp_path / "smoke" / "run.json")
    assert record.smoke and record.recipe["train_batch_size"] == 1
    assert record.recipe["n_gpus_per_node"] == 1 and record.recipe["total_training_steps"] == 1
    # The run folder says what the node needs, and prepare's last line and the card say
    # the same launch command.
    readme = (tmp_path / "smoke" / "README.md").read_text()
    assert "Docker engine" in readme and f"`{BASE_IMAGE}`" in readme
    assert "termgrade base-image build" in readme and "1 NVIDIA GPU(s)" in readme
    assert launch_line("smoke") in readme
    assert f"start it with `{launch_line('smoke')}`" in said(done)
    card = (repo / "README.md").read_text()
    block = re.findall(r"```bash\n(.*?)```", card, re.S)[0]
    assert launch_line("run") in block.splitlines()
    assert "--smoke --batch-size 1" in block  # the card's smoke line for a repo of one


def test_the_readme_names_the_install_lines_the_cards_give() -> None:
    """Issue 44, item 11: the cards said `pip install 'termgrade[train]'`, the README named
    no user install at all."""
    from termgrade.training.prepare_readme import INSTALL_EXTRA

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    card = (root / "termgrade" / "builders" / "templates" / "bandcentral.md").read_text()
    assert INSTALL_EXTRA == "pip install 'termgrade[train]'"
    assert INSTALL_EXTRA in card and INSTALL_EXTRA in readme
    assert "`pip install termgrade`" in readme
