"""A task whose Dockerfile fails a step, graded (issue 44, item 4): before, its image was
built again for every try of every attempt, each recorded as an infrastructure loss, and
the error stopped at "failed:" with a fix that blamed the engine, endpoint or disk. Now
the task is one ``build_failed`` line with ``verify``'s reason (the step, its exit status
and first error line), its image is built by no trial more than once, nothing is
journaled as a loss, and the run exits 1 with the fix.

Real parts: the Docker engine builds the task; the model is a scripted stand-in behind a
real loopback server (it is probed, never reached by a trial). The build count is read by
wrapping the one builder every stage calls (it still builds)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import termgrade.sandbox.image_cache as image_cache
from termgrade.cli.app import app
from termgrade.grade import TRIALS_FILE
from termgrade.grade.runner import DEFAULT_MAX_LOSSES
from termgrade.sandbox.engine import BuiltImage
from termgrade.task import Task
from tests.support.scripted_tools import ScriptedToolEndpoint, replay_solution
from tests.support.task_dirs import MakeTask

pytestmark = [pytest.mark.docker]

BROKEN = "FROM termgrade/base:local\nWORKDIR /app\nRUN chmdo +x /app/data\n"
runner = CliRunner()


def test_a_broken_dockerfile_is_one_build_failed_per_task_not_an_outage(
        make_task: MakeTask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_task("broken-build", dockerfile=BROKEN)
    make_task("broken-too", dockerfile=BROKEN.replace("/app/data", "/app/other"))
    builds: list[str] = []
    real = image_cache.build_task_image

    def counted(task: Task) -> BuiltImage:
        builds.append(task.task_id)
        return real(task)

    monkeypatch.setattr(image_cache, "build_task_image", counted)
    out = tmp_path / "out"
    with ScriptedToolEndpoint(replay_solution("echo hello > /app/out.txt\n")) as llm:
        done = runner.invoke(app, ["grade", str(root.parent), "--model", llm.model,
                                   "--base-url", llm.url, "-k", "3", "-w", "2",
                                   "-o", str(out)])
    said = " ".join(done.output.split())
    assert done.exit_code == 1, done.output
    for task, path in (("broken-build", "/app/data"), ("broken-too", "/app/other")):
        line = f"build_failed {task}: "
        assert said.count(line) == 1, said
        assert f"`RUN chmdo +x {path}` exited 127" in said, said
    assert "chmdo: not found" in said and "2 task(s) did not build" in said, said
    assert "termgrade verify" in said and "infrastructure" not in said, said
    # at most one build per task by the trials (the run's reference pre-run may try once)
    assert builds.count("broken-build") <= 2 and builds.count("broken-too") <= 2, builds
    journal = out / TRIALS_FILE
    assert not journal.exists() or journal.read_text().strip() == ""


def test_the_docs_give_the_losses_per_attempt_the_code_allows() -> None:
    """`up to 3 losses` said 3 where the runner gives an attempt 1 + 3 tries (4 losses)."""
    docs = (Path(__file__).parents[2] / "docs" / "grading-a-model.md").read_text()
    text = " ".join(docs.split())
    assert (f"retried up to {DEFAULT_MAX_LOSSES} times ({DEFAULT_MAX_LOSSES + 1} losses of "
            "one attempt)") in text
