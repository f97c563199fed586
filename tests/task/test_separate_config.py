"""Harbor's separate verifier in task.toml: ``artifacts``, ``[verifier] environment_mode``
and ``[verifier.environment]`` load typed; the verifier image's source follows Harbor's
precedence; forms TermGrade cannot grade are refused naming the field and the fix."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from termgrade.scoring.trial import scoring_image
from termgrade.task import load_task
from termgrade.task.config import TaskConfig
from termgrade.task.errors import TaskLoadError
from tests.support.task_dirs import MakeTask

SEPARATE = """\
schema_version = "1.4"
artifacts = ["/app/out.txt", {source = "/srv/deliver/", exclude = ["*.log"], destination = "d"}]

[verifier]
timeout_sec = 60.0
environment_mode = "separate"

[verifier.environment]
cpus = 2
memory = "1G"
future_key = "kept"
"""


def config(text: str) -> TaskConfig:
    return TaskConfig.model_validate(tomllib.loads(text))


def test_artifacts_are_absolute_paths_and_full_entries_are_kept() -> None:
    parsed = config(SEPARATE)
    assert parsed.artifacts == ["/app/out.txt", "/srv/deliver"]
    assert [e.source for e in parsed.artifact_entries] == parsed.artifacts
    assert parsed.artifact_entries[1].exclude == ["*.log"]
    assert parsed.artifact_entries[1].destination == "d"
    assert parsed.separate_verifier
    declared = parsed.verifier.environment
    assert declared is not None and declared.cpus == 2 and declared.memory_mb == 1024
    assert declared.model_dump()["future_key"] == "kept"
    assert TaskConfig.model_validate(parsed.model_dump()) == parsed  # round trip


def test_default_is_shared_with_no_artifacts() -> None:
    parsed = config('schema_version = "1.4"\n')
    assert parsed.artifacts == [] and parsed.artifact_entries == []
    assert not parsed.separate_verifier


@pytest.mark.parametrize(("text", "separate"), [
    ('[verifier]\nenvironment_mode = "separate"\n', True),
    ('[verifier]\nenvironment_mode = "shared"\n', False),
    ("[verifier.environment]\ncpus = 1\n", True),  # implied, as Harbor resolves it
    ('[verifier]\ntimeout_sec = 5.0\n', False),
])
def test_mode_resolution_follows_harbor(text: str, separate: bool) -> None:
    assert config(text).separate_verifier is separate


@pytest.mark.parametrize(("text", "says"), [
    ('artifacts = ["app/out.txt"]\n', "must be an absolute path"),
    ('artifacts = ["/app/../etc/passwd"]\n', "must be an absolute path"),
    ('artifacts = ["/"]\n', "must be an absolute path"),
    ('artifacts = ["/logs/artifacts"]\n', "overlaps /logs, which the grader owns"),
    ('artifacts = ["/tests/x"]\n', "overlaps /tests"),
    ('artifacts = [{destination = "x"}]\n', "has no `source`"),
    ('artifacts = [{source = "/a", service = "db"}]\n', "runs no compose sidecars"),
    ('[verifier]\nenvironment_mode = "shared"\n[verifier.environment]\ncpus = 1\n',
     "cannot have a [verifier.environment]"),
    ('[verifier]\nenvironment_mode = "elsewhere"\n', "'shared' or 'separate'"),
])
def test_bad_declarations_say_what_to_fix(text: str, says: str) -> None:
    with pytest.raises(ValidationError) as caught:
        config(text)
    assert says in str(caught.value)


def test_load_error_names_the_field(make_task: MakeTask) -> None:
    root = make_task(toml='schema_version = "1.4"\nartifacts = ["relative/out.txt"]\n')
    with pytest.raises(TaskLoadError) as caught:
        load_task(root)
    assert caught.value.field == "artifacts"
    assert str(root / "task.toml") in str(caught.value)


def _separate(make_task: MakeTask, extra: str = "") -> Path:
    return make_task(toml='schema_version = "1.4"\nartifacts = ["/app/out.txt"]\n'
                          '[verifier]\nenvironment_mode = "separate"\n' + extra)


def test_verifier_image_source_follows_harbor_precedence(make_task: MakeTask) -> None:
    root = _separate(make_task)
    # No tests/Dockerfile, no docker_image: a fresh container of the task's own image.
    source = load_task(root).verifier_image_source
    assert source is not None and not source.own_image
    assert scoring_image(load_task(root), "termgrade/task-x:local") == "termgrade/task-x:local"
    # tests/Dockerfile: built from tests/.
    (root / "tests" / "Dockerfile").write_text("FROM termgrade/base:local\nCOPY . /tests/\n")
    source = load_task(root).verifier_image_source
    assert source is not None and source.context == root / "tests" and source.own_image
    # [verifier.environment] docker_image wins over tests/Dockerfile.
    root2 = _separate(make_task, '[verifier.environment]\ndocker_image = "some/image:1"\n')
    (root2 / "tests" / "Dockerfile").write_text("FROM termgrade/base:local\n")
    source = load_task(root2).verifier_image_source
    assert source is not None and source.docker_image == "some/image:1"
    assert source.context is None


def test_shared_mode_ignores_a_tests_dockerfile(make_task: MakeTask) -> None:
    root = make_task()
    (root / "tests" / "Dockerfile").write_text("FROM termgrade/base:local\n")
    task = load_task(root)
    assert task.verifier_image_source is None
    assert scoring_image(task, "termgrade/task-x:local") == "termgrade/task-x:local"


def test_compose_verifier_is_refused_with_the_fix(make_task: MakeTask) -> None:
    root = _separate(make_task)
    (root / "tests" / "docker-compose.yaml").write_text("services: {}\n")
    with pytest.raises(TaskLoadError) as caught:
        load_task(root)
    assert caught.value.field == "verifier.environment"
    assert "tests/Dockerfile" in str(caught.value)
