"""task.toml: real Harbor configs of every schema version load; bad ones name the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.task import discover_tasks, load_task, parse_size_mb
from termgrade.task.config import TaskConfig
from termgrade.task.errors import TaskLoadError
from tests.support.task_dirs import MakeTask

HARBOR_1_0 = """\
version = "1.0"

[metadata]
author_name = "Jane Doe"
author_email = "jane@example.com"
difficulty = "medium"
category = "file-operations"
tags = ["bash"]

[verifier]
timeout_sec = 180.0

[agent]
timeout_sec = 900.0

[environment]
build_timeout_sec = 600.0
cpus = 2
memory = "4G"
storage = "10G"
allow_internet = false
"""

HARBOR_1_4 = """\
schema_version = "1.4"
source = "terminal-bench"

[task]
name = "org/some-task"
description = "x"

[metadata]
difficulty = "hard"

[environment]
cpus = 1
memory_mb = 2048
storage_mb = 10240
gpus = 0
future_key = "kept"

[[steps]]
name = "one"
"""


def test_legacy_harbor_config_is_migrated() -> None:
    import tomllib

    config = TaskConfig.model_validate(tomllib.loads(HARBOR_1_0))
    assert config.schema_version == "1.0"
    assert config.environment.memory_mb == 4096
    assert config.environment.storage_mb == 10240
    assert config.environment.allow_internet is False
    assert config.verifier.timeout_sec == 180.0
    assert config.difficulty == "medium"
    assert config.domain == "file-operations"


def test_current_harbor_config_keeps_unknown_keys() -> None:
    import tomllib

    config = TaskConfig.model_validate(tomllib.loads(HARBOR_1_4))
    assert config.schema_version == "1.4"
    assert config.environment.memory_mb == 2048
    dumped = config.model_dump()
    assert dumped["environment"]["future_key"] == "kept"
    assert dumped["steps"] == [{"name": "one"}]
    assert dumped["task"]["name"] == "org/some-task"


@pytest.mark.parametrize(("text", "mb"), [("2G", 2048), ("512M", 512), ("1.5GiB", 1536),
                                          ("4g", 4096), ("1T", 1048576)])
def test_parse_size(text: str, mb: int) -> None:
    assert parse_size_mb(text) == mb


def test_parse_size_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="cannot read size"):
        parse_size_mb("lots")


def test_unsupported_schema_version_names_field(make_task: MakeTask) -> None:
    root = make_task("future", toml='schema_version = "2.0"\n')
    with pytest.raises(TaskLoadError) as info:
        load_task(root)
    assert info.value.field == "schema_version"
    assert "task.toml" in str(info.value) and "supported" in str(info.value)


def test_wrong_type_names_field_and_fix(make_task: MakeTask) -> None:
    root = make_task("typo", toml='[verifier]\ntimeout_sec = "soon"\n')
    with pytest.raises(TaskLoadError) as info:
        load_task(root)
    assert info.value.field == "verifier.timeout_sec"
    assert "fix:" in str(info.value)


@pytest.mark.parametrize("missing", ["instruction.md", "environment/Dockerfile",
                                     "tests/test.sh", "task.toml"])
def test_missing_file_is_named(make_task: MakeTask, missing: str) -> None:
    root = make_task("holes")
    (root / missing).unlink()
    with pytest.raises(TaskLoadError, match="missing") as info:
        load_task(root)
    assert missing.split("/")[-1] in str(info.value)


def test_task_ids_are_as_permissive_as_harbor_directory_names(make_task: MakeTask) -> None:
    assert load_task(make_task("Mixed Case name")).task_id == "Mixed Case name"
    with pytest.raises(TaskLoadError, match="task id"):
        load_task(make_task(" leading-space"))


def test_non_utf8_instruction(make_task: MakeTask) -> None:
    root = make_task("latin1")
    (root / "instruction.md").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(TaskLoadError, match="UTF-8"):
        load_task(root)


def test_discover_sorts_and_accepts_single_task(make_task: MakeTask) -> None:
    b = make_task("bbb")
    a = make_task("aaa")
    assert [p.name for p in discover_tasks(a.parent)] == ["aaa", "bbb"]
    assert discover_tasks(b) == [b]


def test_discover_rejects_duplicate_ids(make_task: MakeTask, tmp_path: Path) -> None:
    one = make_task("same")
    other = tmp_path / "elsewhere" / "same"
    other.mkdir(parents=True)
    (other / "task.toml").write_text("")
    with pytest.raises(TaskLoadError, match="duplicate task id"):
        discover_tasks(one.parent, other.parent)


def test_discover_missing_root(tmp_path: Path) -> None:
    with pytest.raises(TaskLoadError, match="no such directory"):
        discover_tasks(tmp_path / "nope")


def test_every_corpus_task_loads() -> None:
    roots = discover_tasks(Path(__file__).resolve().parents[2] / "environments")
    assert roots, "environments/ holds no task"
    for root in roots:
        task = load_task(root)
        assert task.config.difficulty in {"easy", "medium", "hard"}, root
