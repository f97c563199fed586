"""The engine's per-container files through real containers (issue 42): each container
gets its own ``/etc/hosts`` (a bind mount, outside its writable layer), so an agent's
edit never reached the scoring container, and the task that asked for it scored 0 with
nothing said. Now the edit is carried where the task asks for the file, and said where it
does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.agent.kinds import ScriptAgent
from termgrade.sandbox.images import build_task_image
from termgrade.scoring import score
from termgrade.scoring.review.engine_files import NOT_ASKED
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import load_task
from tests.support.grading import transfer_off
from tests.support.task_dirs import task_toml, write_task

pytestmark = pytest.mark.docker

TESTS = """\
import socket


def test_resolves():
    assert socket.gethostbyname("db.internal") == "127.0.0.1"
"""
ASKED = ("The app reaches its database as `db.internal`. Add an entry to `/etc/hosts` so "
         "that `db.internal` resolves to `127.0.0.1` on this machine.\n")
UNASKED = "Write hello to /app/out.txt.\n"  # nothing about names or hosts
APPEND = "echo '127.0.0.1 db.internal' >> /etc/hosts\ngetent hosts db.internal\n"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("engine-files")
    made = {
        "asked": write_task(root, "hosts-asked", instruction=ASKED, tests=TESTS,
                            solve=APPEND, toml=task_toml(verifier_s=60.0, agent_s=30.0)),
        # its reference leaves /etc/hosts alone: nothing asks for the file
        "unasked": write_task(root, "hosts-unasked", instruction=UNASKED, tests=TESTS,
                              solve="echo hello > /app/out.txt\n",
                              toml=task_toml(verifier_s=60.0, agent_s=30.0)),
    }
    for task_dir in made.values():
        build_task_image(load_task(task_dir))
    return made


def _play(task_dir: Path, tmp_path: Path) -> RunOutcome:
    script = tmp_path / "agent.sh"
    script.write_text("#!/usr/bin/env bash\nset -e\n" + APPEND)
    task = load_task(task_dir)
    return run_task(task, task.image_tag, ScriptAgent("hosts", script))


def test_a_hosts_entry_the_task_asks_for_is_carried(tasks: dict[str, Path], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    outcome = _play(tasks["asked"], tmp_path)
    assert outcome.reward == 1.0, (outcome.failure, outcome.left_out)
    assert "/etc/hosts" in outcome.footprint
    # the control: with the engine files' carry patched out, the same work scores 0
    monkeypatch.setattr(score, "sort_engine_files", lambda *args, **kwargs: {})
    assert _play(tasks["asked"], tmp_path).reward == 0.0


def test_a_hosts_edit_nothing_asks_for_is_said_not_carried(
        tasks: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome = _play(tasks["unasked"], tmp_path)
    assert outcome.reward == 0.0
    assert f"/etc/hosts ({NOT_ASKED})" in (outcome.left_out or ""), outcome.left_out
    # the control: with the transfer set off, the edit reaches B and passes
    transfer_off(monkeypatch)
    assert _play(tasks["unasked"], tmp_path).reward == 1.0
