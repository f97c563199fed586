"""The ``hidden_tests_exposed`` check (issue 43, 7): tests that run an agent program while
``tests/`` ships data that program could read. Informational: the audit still passes and
the task stays attestable."""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.audit import audit_corpus, read_harbor, run_checks
from termgrade.audit.attestable import attestability
from termgrade.audit.documents import SourceFile
from termgrade.audit.hidden_tests import agent_program, expected_data, python_programs
from termgrade.task import load_task
from tests.support.task_dirs import MakeTask

EXPECTED = {"expected_report.json": '{"total": 42}\n'}

RUNS_AGENT: dict[str, str] = {
    "a list": "import subprocess\nsubprocess.run(['/app/report', '--json'])\n",
    "sys.executable and a script": (
        "import subprocess\nimport sys\nsubprocess.run([sys.executable, '/app/main.py'])\n"),
    "a shell string after cd": (
        "import subprocess\nsubprocess.run('cd /app && ./build/report', shell=True)\n"),
    "os.system": "import os\nos.system('bash /app/run.sh > /tmp/out')\n",
    "a relative tool with cwd": (
        "import subprocess\nsubprocess.run(['./report'], cwd='/app')\n"),
    "python -m of the agent's package": (
        "import subprocess\nimport sys\n"
        "subprocess.run([sys.executable, '-m', 'report'], cwd='/app')\n"),
    "a constant bound to a path": (
        "import subprocess\nfrom pathlib import Path\nTOOL = Path('/usr/local/bin/report')\n"
        "subprocess.run([str(TOOL)])\n"),
    "a helper with *args": (
        "import subprocess\n\n\ndef run(*args):\n"
        "    return subprocess.run(list(args), capture_output=True)\n\n\n"
        "def test_x():\n    run('/tmp/a.out', '--check')\n"),
    "a helper's parameter": (
        "import subprocess\n\n\ndef run(cmd):\n    return subprocess.run(cmd)\n\n\n"
        "def test_x():\n    run(['node', '/app/index.js'])\n"),
    "a program computed at run time": (
        "import subprocess\n\n\ndef test_x(tmp_path):\n"
        "    subprocess.run([str(tmp_path / 'bin' / 'tool')])\n"),
}

IMAGE_ONLY: dict[str, str] = {
    "image tools": ("import subprocess\nsubprocess.run(['jq', '.', '/app/out.json'])\n"
                    "subprocess.run('sqlite3 /app/db.sqlite .tables', shell=True)\n"),
    "the tests' own helper": (
        "import subprocess\nimport sys\nsubprocess.run([sys.executable, '/tests/gen.py'])\n"
        "subprocess.run(['bash', '/tests/check.sh'])\n"),
    "a module of the image": (
        "import subprocess\nimport sys\n"
        "subprocess.run([sys.executable, '-m', 'json.tool', '/app/out.json'])\n"),
    "a helper called with image tools only": (
        "import subprocess\n\n\ndef sh(*args):\n    return subprocess.run(list(args))\n\n\n"
        "def test_x():\n    sh('git', 'status')\n    sh('ls', '-la')\n"),
    "reading the agent's output only": (
        "import json\nfrom pathlib import Path\n"
        "data = json.loads(Path('/app/report.json').read_text())\n"),
}


@pytest.mark.parametrize("shape", list(RUNS_AGENT))
def test_an_agent_program_a_test_runs_is_found(shape: str) -> None:
    assert python_programs(SourceFile("tests/test_outputs.py", RUNS_AGENT[shape])), shape


@pytest.mark.parametrize("shape", list(IMAGE_ONLY))
def test_the_image_tools_and_the_tests_own_are_not(shape: str) -> None:
    assert python_programs(SourceFile("tests/test_outputs.py", IMAGE_ONLY[shape])) == []


@pytest.mark.parametrize(("words", "cwd", "agent"), [
    (["python3", "-W", "ignore", "/app/x.py"], None, True),
    (["python3", "-c", "import sys; sys.path.insert(0, '/tmp'); import fixed"], None, True),
    (["python3", "-c", "print(1)"], None, False),
    (["python3", "-m", "pytest", "/tests"], "/app", False),
    (["make", "-C", "/app"], None, True),
    (["make", "-C", "/tests/fixture"], None, False),
    (["/usr/bin/env"], None, False),
    (["/opt/venv/bin/python", "/tests/gen.py"], None, False),
    (["java", "-jar", "/app/target/app.jar"], None, True),
])
def test_command_lines(words: list[str | None], cwd: str | None, agent: bool) -> None:
    assert (agent_program(words, cwd) is not None) is agent


def test_a_task_running_its_agent_program_beside_expected_data_is_flagged(
        make_task: MakeTask) -> None:
    root = make_task(tests=RUNS_AGENT["a list"] + "\n\ndef test_a():\n    pass\n",
                     extra_test_files=EXPECTED)
    reason = run_checks(read_harbor(root))["hidden_tests_exposed"]
    assert reason is not None
    assert "tests/test_outputs.py:2: /app/report --json" in reason
    assert "tests/expected_report.json" in reason


def test_it_is_informational(make_task: MakeTask, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit passes and the task stays attestable: only the count says it."""
    monkeypatch.setenv("TERMGRADE_REFERENCE_DIR", str(tmp_path / "references"))
    root = make_task(tests=RUNS_AGENT["a list"] + "\n\ndef test_a():\n    pass\n",
                     extra_test_files=EXPECTED)
    report = audit_corpus([root.parent], progress=False, workers=1)
    task = report.tasks[0]
    assert "hidden_tests_exposed" in task.failed_checks
    only_this = {name: (reason if name == "hidden_tests_exposed" else None)
                 for name, reason in task.checks.items()}
    assert task.model_copy(update={"checks": only_this}).passed
    another = {**only_this, "tests_parse": "tests/test_outputs.py: invalid syntax"}
    assert not task.model_copy(update={"checks": another}).passed
    assert attestability(load_task(root)).attested


def test_test_sh_steps_count(make_task: MakeTask) -> None:
    script = ("#!/bin/bash\ncd /app && ./gen > /tmp/out.txt\n"
              "/opt/venv/bin/python -m pytest /tests/test_outputs.py\n")
    root = make_task(test_sh=script, extra_test_files=EXPECTED)
    reason = run_checks(read_harbor(root))["hidden_tests_exposed"]
    assert reason is not None and "tests/test.sh: ./gen" in reason


@pytest.mark.parametrize(("tests", "files"), [
    (RUNS_AGENT["a list"], {}),                         # no data beside the tests
    (IMAGE_ONLY["reading the agent's output only"], EXPECTED),  # no agent program runs
    (RUNS_AGENT["a list"], {"helpers.py": "X = 1\n"}),  # Python helpers are not data
])
def test_honest_twins_are_not_flagged(make_task: MakeTask, tests: str,
                                      files: dict[str, str]) -> None:
    root = make_task(tests=tests + "\n\ndef test_a():\n    pass\n", extra_test_files=files)
    assert run_checks(read_harbor(root))["hidden_tests_exposed"] is None


def test_expected_data_lists_non_python_files(tmp_path: Path) -> None:
    (tmp_path / "tests" / "data" / "__pycache__").mkdir(parents=True)
    for name in ("test.sh", "test_outputs.py", "conftest.py", "helpers.py", "data/want.csv",
                 "data/__pycache__/x.pyc", "expected.txt"):
        (tmp_path / "tests" / name).write_text("x")
    assert expected_data(tmp_path) == ["tests/data/want.csv", "tests/expected.txt"]
