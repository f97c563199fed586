"""Third-party Harbor corpora (TermiGen-like): permissive ids, no reference solution,
FROM a registry image, ``allow_internet = true``: they load, audit, verify with an
explicit verdict, grade only when the user says so, and package into a repo that
validates and loads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from termgrade.audit import audit_corpus
from termgrade.audit import pipeline as audit_pipeline
from termgrade.core.errors import OptionError
from termgrade.task import load_task
from termgrade.task.dockerfile import base_images
from termgrade.task.errors import TaskLoadError
from termgrade.task.ids import SAFE_NAME, safe_name, task_id_problem
from termgrade.task.network import apply_internet_policy, wanting_internet
from termgrade.verify import Verdict, verify_task
from tests.support.task_dirs import write_task

TERMIGEN_TOML = """\
version = "1.0"

[metadata]
author_name = "Terminal Bench"
difficulty = "medium"
category = "software-engineering"
tags = ["coding"]

[verifier]
timeout_sec = 60.0

[agent]
timeout_sec = 60.0

[environment]
build_timeout_sec = 600.0
cpus = 1
memory_mb = 2048
storage_mb = 10240
gpus = 0
allow_internet = true
mcp_servers = []

[verifier.env]

[solution.env]
"""
REGISTRY_FROM = "FROM ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624\nWORKDIR /app\n"


def termigen_task(parent: Path, task_id: str, *, dockerfile: str = REGISTRY_FROM,
                  toml: str = TERMIGEN_TOML) -> Path:
    """A task shaped like TermiGen's: no solution/, FROM a registry image, online."""
    root = write_task(parent, task_id, dockerfile=dockerfile, toml=toml)
    shutil.rmtree(root / "solution")
    return root


# --- ids -------------------------------------------------------------------------------


def test_harbor_style_ids_and_tasks_without_a_solution_load(tmp_path: Path) -> None:
    task = load_task(termigen_task(tmp_path, "Rscript_segfault_debugging_hard"))
    assert task.task_id == "Rscript_segfault_debugging_hard"
    assert not task.has_solution
    assert task.wants_internet
    assert task.config.environment.storage_mb == 10240
    assert SAFE_NAME.match(task.safe_name) and task.safe_name != task.task_id
    assert task.image_tag == f"termgrade/task-{task.safe_name}:local"
    assert task.image_tag == task.image_tag.lower()


def test_safe_name_keeps_safe_ids_and_never_merges_two_ids() -> None:
    assert safe_name("fixcalc-overflow") == "fixcalc-overflow"  # our corpus keeps its names
    variants = ["Foo", "foo", "FOO", "f o o", "Foo!", "_foo", "-x", "ünïcode", "a" * 300]
    names = [safe_name(v) for v in variants]
    assert all(SAFE_NAME.match(n) for n in names), names
    assert len(set(names)) == len(variants)
    assert safe_name("Foo") == safe_name("Foo")  # stable


@pytest.mark.parametrize(("task_id", "needle"), [
    ("", "empty"), ("..", "not a directory name"), ("a/b", "path separator"),
    ("tab\there", "control character"), (" padded", "white space"),
    ("x" * 256, "over 255 bytes"),
])
def test_only_names_harbor_cannot_address_are_refused(task_id: str, needle: str) -> None:
    problem = task_id_problem(task_id)
    assert problem is not None and needle in problem


def test_a_refused_directory_name_is_a_clear_error(tmp_path: Path) -> None:
    root = write_task(tmp_path, "trailing ")
    with pytest.raises(TaskLoadError) as caught:
        load_task(root)
    assert "white space" in str(caught.value) and "rename the directory" in str(caught.value)


# --- FROM --------------------------------------------------------------------------------


@pytest.mark.parametrize(("dockerfile", "expected"), [
    (REGISTRY_FROM, ["ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624"]),
    ("# syntax=docker/dockerfile:1\nFROM --platform=linux/amd64 python:3.12 AS build\n"
     "RUN make\nFROM build\nFROM scratch\nCOPY --from=build /x /x\n", ["python:3.12"]),
    ("ARG BASE=debian\nARG TAG=bookworm\nFROM ${BASE}:$TAG\n", ["debian:bookworm"]),
    ("ARG REG\nFROM ${REG:-docker.io}/library/alpine:3 \\\n  AS a\nFROM a\n",
     ["docker.io/library/alpine:3"]),
    ("from termgrade/base:local\nFROM termgrade/base:local\n", ["termgrade/base:local"]),
])
def test_base_images_reads_what_every_stage_starts_from(dockerfile: str,
                                                         expected: list[str]) -> None:
    assert base_images(dockerfile) == expected


# --- the network -------------------------------------------------------------------------


def test_internet_tasks_are_graded_offline_only_when_the_user_says_so(tmp_path: Path) -> None:
    online = termigen_task(tmp_path, "Online_Task")
    offline = write_task(tmp_path, "offline-task")
    dirs = {"Online_Task": online, "offline-task": offline}
    assert wanting_internet(dirs) == ["Online_Task"]
    with pytest.raises(OptionError) as caught:
        apply_internet_policy(dirs, "refuse")
    message = str(caught.value)
    assert "Online_Task" in message and "--internet-tasks offline" in message
    assert apply_internet_policy(dirs, "skip") == {"offline-task": offline}
    assert apply_internet_policy(dirs, "offline") == dirs


def test_grade_refuses_internet_tasks_before_any_request(tmp_path: Path) -> None:
    from termgrade.agent import Endpoint, ScaffoldConfig
    from termgrade.agent.kinds import ModelAgent
    from termgrade.grade import grade_model

    termigen_task(tmp_path / "tasks", "Online_Task")
    agent = ModelAgent(Endpoint(base_url="http://127.0.0.1:9/v1", model="scripted-none"),
                       ScaffoldConfig())
    with pytest.raises(OptionError, match="allow_internet"):
        grade_model([tmp_path / "tasks"], agent, tmp_path / "out", k=1, progress=False)
    assert not (tmp_path / "out" / "trials.jsonl").exists()


# --- audit -------------------------------------------------------------------------------


def test_audit_reads_a_third_party_corpus_and_names_what_it_lacks(tmp_path: Path) -> None:
    termigen_task(tmp_path / "corpus", "R_package_dependency_missing_medium")
    write_task(tmp_path / "corpus", "ours")
    report = audit_corpus([tmp_path / "corpus"], progress=False)
    theirs = next(t for t in report.tasks if t.task_id == "R_package_dependency_missing_medium")
    ours = next(t for t in report.tasks if t.task_id == "ours")
    assert theirs.checks["task_loads"] is None  # loads: capitals, no solution, registry FROM
    assert "solution/solve.sh" in (theirs.checks["solution_present"] or "")
    assert "allow_internet" in (theirs.checks["runs_offline"] or "")
    assert ours.checks["solution_present"] is None and ours.checks["runs_offline"] is None


@pytest.mark.slow
def test_parallel_static_checks_agree_with_the_serial_ones(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        termigen_task(tmp_path / "corpus", f"Task_{i}")
        write_task(tmp_path / "corpus", f"ours-{i}",
                   tests="import sys\nsys.path.insert(0, '/app')\n\ndef test_a():\n    pass\n")
    serial = audit_corpus([tmp_path / "corpus"], progress=False, workers=1)
    monkeypatch.setattr(audit_pipeline, "PARALLEL_FROM", 2)
    parallel = audit_corpus([tmp_path / "corpus"], progress=False, workers=2)
    assert [t.checks for t in parallel.tasks] == [t.checks for t in serial.tasks]
    assert any(t.checks["agent_code_isolated"] for t in parallel.tasks)


# --- verify, with Docker -----------------------------------------------------------------


@pytest.fixture
def no_pull(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never ask a registry (no traffic leaves this machine in the tests)."""
    monkeypatch.setenv("TERMGRADE_PULL", "0")


@pytest.mark.docker
@pytest.mark.usefixtures("no_pull")
def test_verify_names_an_unreachable_base_image_and_how_to_provide_it(tmp_path: Path) -> None:
    record = verify_task(termigen_task(tmp_path, "Unreachable_Base"), repeat=1)
    assert record.verdict is Verdict.BUILD_FAILED
    error = record.error or ""
    assert "FROM ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624" in error
    assert "docker load" in error and "docker pull" in error
    assert record.wants_internet


@pytest.fixture
def third_party_image() -> object:
    """A local image under a registry name, as `docker load` of a pulled image leaves it."""
    from termgrade.core.settings import SETTINGS
    from termgrade.sandbox.engine import docker_client

    name = "registry.example.test/thirdparty/base:1"
    client = docker_client()
    client.images.get(SETTINGS.base_image).tag(name)
    yield name
    client.images.remove(name, noprune=True)


@pytest.mark.docker
@pytest.mark.usefixtures("no_pull")
def test_a_task_from_a_local_third_party_image_builds_and_verifies(
        tmp_path: Path, third_party_image: str) -> None:
    dockerfile = f"FROM {third_party_image}\nWORKDIR /app\n"
    toml = TERMIGEN_TOML.replace("allow_internet = true", "allow_internet = false")
    no_solution = termigen_task(tmp_path, "Local_Base_No_Solution", dockerfile=dockerfile,
                                toml=toml)
    record = verify_task(no_solution, repeat=1)
    assert record.verdict is Verdict.NO_SOLUTION, record.error
    assert record.nop_reward == 0.0 and not record.wants_internet
    solved = write_task(tmp_path, "Local_Base_Solved", dockerfile=dockerfile, toml=toml)
    record = verify_task(solved, repeat=1)
    assert record.verdict is Verdict.VERIFIED, record.error


@pytest.mark.docker
@pytest.mark.usefixtures("no_pull")
def test_grade_refuses_tasks_whose_base_image_is_missing_before_any_request(
        tmp_path: Path) -> None:
    from termgrade.agent import Endpoint, ScaffoldConfig
    from termgrade.agent.kinds import ModelAgent
    from termgrade.grade import grade_model
    from termgrade.grade.preflight import apply_image_policy, unavailable_images

    tasks = tmp_path / "tasks"
    dirs = {"Unreachable_A": termigen_task(tasks, "Unreachable_A"),
            "Unreachable_B": termigen_task(tasks, "Unreachable_B"),
            "ours": write_task(tasks, "ours")}
    registry = "ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624"
    assert unavailable_images(dirs) == {registry: ["Unreachable_A", "Unreachable_B"]}
    assert apply_image_policy(dirs, "skip") == {"ours": dirs["ours"]}
    agent = ModelAgent(Endpoint(base_url="http://127.0.0.1:9/v1", model="scripted-none"),
                       ScaffoldConfig())
    with pytest.raises(OptionError) as caught:
        grade_model([tasks], agent, tmp_path / "out", k=1, progress=False,
                    internet_tasks="offline")
    message = str(caught.value)
    assert f"{registry} (2 task(s): Unreachable_A, Unreachable_B)" in message
    assert "docker load" in message and "--missing-images skip" in message
    assert not (tmp_path / "out" / "trials.jsonl").exists()


@pytest.mark.docker
@pytest.mark.usefixtures("no_pull")
def test_grade_that_skips_every_task_says_so_and_why(tmp_path: Path) -> None:
    """--missing-images skip (and --internet-tasks skip) leaving nothing to grade: one
    message naming the skipped tasks and why, never a pointer to a trials file that was
    never written."""
    from typer.testing import CliRunner

    from termgrade.cli import app

    tasks = tmp_path / "tasks"
    termigen_task(tasks, "Unreachable_A")  # asks for the network and lacks its image
    termigen_task(tasks, "Unreachable_B")
    out = tmp_path / "out"
    args = ["grade", str(tasks), "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
            "-o", str(out), "--api-key-env", "", "--missing-images", "skip"]
    for internet, why in (("offline", "FROM ghcr.io/laude-institute/t-bench/ubuntu-24-04:"
                                      "20250624: not here and cannot be pulled"),
                          ("skip", "asks for the network (allow_internet = true)")):
        result = CliRunner().invoke(app, [*args, "--internet-tasks", internet])
        said = " ".join(result.output.split())
        assert result.exit_code == 1, said
        assert (f"nothing to grade: all 2 task(s) were skipped: 2 task(s): {why} "
                "(Unreachable_A, Unreachable_B)") in said, said
        assert "docker load" in said
        assert "exception_message" not in said and "Traceback" not in said
        assert not (out / "trials.jsonl").exists()


def test_the_oracle_of_a_task_without_a_solution_is_refused_before_any_container(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.agent.kinds import AgentName
    from termgrade.scoring import trial
    from termgrade.scoring.pair import containers as pair

    def no_container(*args: object) -> None:
        raise AssertionError("a container was started")
    monkeypatch.setattr(pair, "_start", no_container)
    task = load_task(termigen_task(tmp_path, "No_Solution"))
    with pytest.raises(TaskLoadError, match="no reference solution"):
        trial.run_task(task, "termgrade/base:local", AgentName.ORACLE)


@pytest.mark.slow
def test_a_failing_worker_is_a_clear_error() -> None:
    from termgrade.core.errors import TermGradeError
    from termgrade.pools.processes import map_in_workers

    with pytest.raises(TermGradeError) as caught:
        map_in_workers("termgrade.audit.pipeline:check_task_dirs",
                       [["/nonexistent/a", 10], ["/nonexistent/b", 10], [1, 2]], workers=2)
    assert "check_task_dirs" in str(caught.value) and "TERMGRADE_WORKERS=1" in str(caught.value)


def test_a_third_party_corpus_packages_validates_and_loads(tmp_path: Path) -> None:
    from datasets import load_dataset

    from termgrade.builders.environments import build_environments
    from termgrade.validate import validate_repo

    termigen_task(tmp_path / "corpus", "Rscript_segfault_debugging_hard")
    termigen_task(tmp_path / "corpus", "a_star_pathfinding_medium")
    repo = tmp_path / "repo"
    build_environments(repo, task_roots=[tmp_path / "corpus"],
                       repo_id="someone/termigen-environments")
    report = validate_repo(repo)
    assert report.ok, report.findings
    rows = load_dataset(str(repo), split="unseen")
    assert sorted(rows["task_id"]) == ["Rscript_segfault_debugging_hard",
                                       "a_star_pathfinding_medium"]
    assert rows["has_solution"] == [False, False]
    assert rows["allow_internet"] == [True, True]
    assert rows["base_images"] == [["ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624"]] * 2
    assert rows["oracle_verified"] == [False, False]


# --- deliverables outside /app -----------------------------------------------------------

REBASED_TOML = TERMIGEN_TOML.replace("allow_internet = true", "allow_internet = false")
HARBOR_TEST_SH = """\
#!/bin/bash
# As Harbor tasks write it: pytest from the agent's directory, a reward from its status.
cd /app
python3 -m pytest /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""
OUTSIDE_APP = {
    "Backup_Script_In_Opt": (
        "RUN mkdir -p /opt/scripts && printf '#!/bin/sh\\nexit 1\\n' > /opt/scripts/backup.sh "
        "&& chmod +x /opt/scripts/backup.sh\n",
        "printf '#!/bin/sh\\necho backed-up > /var/backups/done\\n' > /opt/scripts/backup.sh\n"
        "mkdir -p /var/backups /etc/backup && echo 'keep=7' > /etc/backup/backup.conf\n",
        "import subprocess\nfrom pathlib import Path\n\n\ndef test_backup_runs():\n"
        "    subprocess.run(['/opt/scripts/backup.sh'], check=True)\n"
        "    assert Path('/var/backups/done').read_text().strip() == 'backed-up'\n\n\n"
        "def test_config():\n    assert 'keep=7' in Path('/etc/backup/backup.conf').read_text()\n"),
    "Results_Under_Solution": (
        "",
        "mkdir -p /solution && echo 42 > /solution/answer.txt\n"
        "mkdir -p /usr/local/bin && printf '#!/bin/sh\\necho 42\\n' > /usr/local/bin/answer "
        "&& chmod +x /usr/local/bin/answer\n",
        "import subprocess\nfrom pathlib import Path\n\n\ndef test_answer_file():\n"
        "    assert Path('/solution/answer.txt').read_text().strip() == '42'\n\n\n"
        "def test_installed_tool():\n"
        "    assert subprocess.run(['answer'], capture_output=True, text=True).stdout.strip()"
        " == '42'\n"),
}


@pytest.mark.docker
@pytest.mark.parametrize("task_id", sorted(OUTSIDE_APP))
def test_third_party_deliverables_outside_app_are_verified(tmp_path: Path,
                                                           task_id: str) -> None:
    """TermiGen-shaped tasks rebased on our image, graded as their authors meant: the
    deliverable in /opt, /etc, /var, /usr/local or /solution reaches the verifier."""
    image_lines, solve, tests = OUTSIDE_APP[task_id]
    root = write_task(tmp_path, task_id, toml=REBASED_TOML, tests=tests, solve=solve,
                      test_sh=HARBOR_TEST_SH,
                      dockerfile="FROM termgrade/base:local\nWORKDIR /app\n" + image_lines)
    record = verify_task(root, repeat=1)
    assert record.verdict is Verdict.VERIFIED, record
