"""``termgrade doctor`` traces a leftover container to the run that left it: its output
folder and model, not only the run's hash id.

A process starts a real TermGrade container in the scope of a grading run's id, made the
way ``grade`` makes it (:func:`run_label` of the output's journal and the model), and is
SIGKILLed: the container is what a killed ``grade`` leaves.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.cli.app import app
from termgrade.core.settings import SETTINGS
from termgrade.grade import TRIALS_FILE
from termgrade.grade.cleanup import run_label
from termgrade.sandbox.doctor import check_leftovers
from termgrade.sandbox.engine import docker_client
from termgrade.sandbox.leftovers import find_leftovers
from termgrade.sandbox.ownership import RUN_FOLDER_LABEL, RUN_LABEL, RUN_MODEL_LABEL

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "TERMGRADE_PROGRESS": "0", "PYTHONPATH": str(ROOT)}
MODEL = "org/leftover-model"
MAKER = """
import sys, time
from pathlib import Path
from termgrade.grade.cleanup import run_label
from termgrade.sandbox.docker_sandbox import DockerSandbox
from termgrade.sandbox.ownership import run_scope
image, journal, model = sys.argv[1:]
with run_scope(run_label(Path(journal), model)):
    box = DockerSandbox.start(image, label="leftover-test")
print(box.id, flush=True)
time.sleep(3600)
"""

pytestmark = [pytest.mark.docker]


@pytest.fixture
def leftover(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    out = tmp_path / "my-run"
    out.mkdir()
    maker = subprocess.Popen([sys.executable, "-c", MAKER, SETTINGS.base_image,
                              str(out / TRIALS_FILE), MODEL], cwd=ROOT, env=ENV,
                             stdout=subprocess.PIPE, text=True)
    assert maker.stdout is not None
    container_id = maker.stdout.readline().strip()
    maker.kill()
    maker.wait(30)
    assert container_id
    yield container_id, out
    docker_client().api.remove_container(container_id, force=True)


def test_a_leftover_names_its_runs_folder_and_model(leftover: tuple[str, Path]) -> None:
    container_id, out = leftover
    container = docker_client().containers.get(container_id)
    assert container.labels[RUN_LABEL] == run_label(out / TRIALS_FILE, MODEL)
    assert container.labels[RUN_FOLDER_LABEL] == str(out.resolve())
    assert container.labels[RUN_MODEL_LABEL] == MODEL
    mine = next(c for c in find_leftovers() if c.id == container_id)
    assert (mine.folder, mine.model) == (str(out.resolve()), MODEL)
    # doctor's words for it (as listed, or as removed by --reap: the same text)
    said = check_leftovers(reaped=[mine]).detail
    assert f"{container.name} ({mine.status}, run of {out.resolve()}, model {MODEL})" in said
    done = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "400"})
    assert done.exit_code == 1 and "leftover containers" in done.output, done.output
