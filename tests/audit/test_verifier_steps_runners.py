"""``verifier_attested`` follows the runner scripts of the tests directory test.sh runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from termgrade.audit.documents import read_harbor
from termgrade.audit.static_checks import CheckOptions, verifier_attested
from termgrade.audit.verifier_steps import python_runs_pytest, verifier_steps_reason

FIXTURE = Path(__file__).parents[1] / "fixtures" / "audit" / "corpus" / "csv-column-sum"
OPTIONS = CheckOptions()

SH_RUNNER = "#!/bin/bash\nset -e\npytest /tests/test_outputs.py -rA\n"
PY_MAIN = "import sys\n\nimport pytest\n\nsys.exit(pytest.main(['/tests/test_outputs.py']))\n"
NO_PYTEST = "#!/bin/bash\npython3 /tests/check.py && echo ok\n"

RUNNER_SHAPES = [
    ("bash /tests/run_tests.sh", "run_tests.sh", SH_RUNNER),
    ("sh -e /tests/run_tests.sh", "run_tests.sh", SH_RUNNER),
    ("source /tests/run.sh", "run.sh", SH_RUNNER),
    (". /tests/run.sh", "run.sh", SH_RUNNER),
    ("exec /tests/run.sh", "run.sh", SH_RUNNER),
    ("/tests/run_tests.sh", "run_tests.sh", SH_RUNNER),
    ("cd /tests && bash run.sh", "run.sh", SH_RUNNER),
    ("cd /tests\n./run.sh", "run.sh", SH_RUNNER),
    ("cd /tests/sub && bash ../run.sh", "run.sh", SH_RUNNER),
    ("bash /tests/ci/run.sh", "ci/run.sh", SH_RUNNER),
    ("python3 /tests/runner.py", "runner.py", PY_MAIN),
    ("python3 /tests/runner.py", "runner.py",
     "import pytest\npytest.main(['-rA', '/tests'])\n"),
    ("cd /tests && python3 -u runner.py", "runner.py",
     "from pytest import main\nraise SystemExit(main(['/tests']))\n"),
    ("python3 /tests/runner.py", "runner.py",
     "from pytest import main as run\nrun(['/tests'])\n"),
    ("python3 /tests/runner.py", "runner.py",
     "import subprocess, sys\n"
     "subprocess.run([sys.executable, '-m', 'pytest', '/tests'], check=True)\n"),
    ("python3 /tests/runner.py", "runner.py",
     "import subprocess\nsubprocess.check_call(['pytest', '-q', '/tests'])\n"),
    ("/tests/runner", "runner", "#!/usr/bin/env python3\n" + PY_MAIN),
]


@pytest.mark.parametrize(("line", "name", "runner"), RUNNER_SHAPES)
def test_runner_in_tests_is_followed(line: str, name: str, runner: str) -> None:
    assert verifier_steps_reason(f"#!/bin/bash\n{line}\n", {name: runner}) is None


@pytest.mark.parametrize(("line", "name", "runner"), RUNNER_SHAPES)
def test_absent_runner_runs_no_pytest(line: str, name: str, runner: str) -> None:
    reason = verifier_steps_reason(f"#!/bin/bash\n{line}\n", {})
    assert reason is not None and "runs no pytest" in reason, reason
    assert verifier_steps_reason(f"#!/bin/bash\n{line}\n") == reason


@pytest.mark.parametrize(("line", "name", "runner"), RUNNER_SHAPES)
def test_runner_without_pytest_runs_no_pytest(line: str, name: str, runner: str) -> None:
    silent = (NO_PYTEST if runner.startswith("#!/bin/bash")
              else "#!/usr/bin/env python3\nprint('no tests here')\n")
    reason = verifier_steps_reason(f"#!/bin/bash\n{line}\n", {name: silent})
    assert reason is not None and "runs no pytest" in reason, reason


@pytest.mark.parametrize("line", [
    "bash run.sh",                        # before any cd: the agent's WORKDIR, not /tests
    "cd /app && bash run.sh",
    "bash /app/run.sh",
    "bash /tests/other.sh",               # not a file of the tests directory
])
def test_script_outside_the_tests_dir_is_not_followed(line: str) -> None:
    assert verifier_steps_reason(f"#!/bin/bash\n{line}\n", {"run.sh": SH_RUNNER}) is not None


def test_uncalled_runner_does_not_count() -> None:
    script = "#!/bin/bash\nrun() { bash /tests/run.sh; }\necho skipped\n"
    reason = verifier_steps_reason(script, {"run.sh": SH_RUNNER})
    assert reason is not None and "runs no pytest" in reason


@pytest.mark.parametrize("runner", [
    "#!/bin/bash\npython3 /app/gen.py\npytest /tests/test_outputs.py\n",
    "#!/bin/bash\ncd /app\n./build.sh\npytest /tests/test_outputs.py\n",
    "#!/bin/bash\nbash /tests/inner.sh\n",           # two runners deep
])
def test_runner_running_an_agent_program_is_unattested(runner: str) -> None:
    tests = {"run_tests.sh": runner,
             "inner.sh": "python3 /app/gen.py\npytest /tests/test_outputs.py\n"}
    reason = verifier_steps_reason("#!/bin/bash\nbash /tests/run_tests.sh\n", tests)
    assert reason is not None and "outside pytest" in reason, reason
    assert "/tests/run_tests.sh" in reason


def test_runner_starts_in_the_callers_directory() -> None:
    # gen.py is read against the cd test.sh made: /tests/gen.py is the task's own helper
    runner = "python3 gen.py\npytest test_outputs.py\n"
    tests = {"run.sh": runner, "gen.py": "print(1)\n"}
    assert verifier_steps_reason("#!/bin/bash\ncd /tests\nbash run.sh\n", tests) is None
    reason = verifier_steps_reason("#!/bin/bash\ncd /app\nbash /tests/run.sh\n", tests)
    assert reason is not None and "python3 gen.py (in /app)" in reason, reason


@pytest.mark.parametrize("code", [
    "# pytest.main(['/tests'])\nprint('done')\n",
    "print('run pytest.main([\"/tests\"]) yourself')\n",
    "import pytest\nDOC = 'pytest.main()'\n",
    "ARGS = ['python3', '-m', 'pytest', '/tests']\nprint(ARGS)\n",  # never run
    "import os\nmain = print\nmain('pytest')\n",                    # not pytest's main
    "import other as pytest_like\npytest_like.main()\n",
    "def broken(:\n",
])
def test_python_runner_only_mentioning_pytest_does_not_count(code: str) -> None:
    assert not python_runs_pytest(code)
    reason = verifier_steps_reason("#!/bin/bash\npython3 /tests/runner.py\n",
                                   {"runner.py": code})
    assert reason is not None and "runs no pytest" in reason


def test_python_runner_shell_string() -> None:
    assert python_runs_pytest("import os\nos.system('cd /tests && pytest -q')\n")
    assert python_runs_pytest(
        "import subprocess\nsubprocess.run('python3 -m pytest /tests', shell=True)\n")


@pytest.mark.parametrize(("a", "b"), [
    ("source /tests/b.sh\n", "source /tests/a.sh\n"),
    (". /tests/b.sh\n", "bash /tests/a.sh\n"),
    ("bash /tests/a.sh\n", "true\n"),                               # a runs itself
])
def test_cycle_terminates(a: str, b: str) -> None:
    reason = verifier_steps_reason("#!/bin/bash\nsource /tests/a.sh\n",
                                   {"a.sh": a, "b.sh": b})
    assert reason is not None and "runs no pytest" in reason
    tests = {"a.sh": a + "pytest /tests\n", "b.sh": b}
    assert verifier_steps_reason("#!/bin/bash\nsource /tests/a.sh\n", tests) is None


def test_fan_out_is_bounded() -> None:
    # each runner runs the next one twice: 2**20 paths unless the reading is bounded
    tests = {f"r{i}.sh": f"bash /tests/r{i + 1}.sh\nbash /tests/r{i + 1}.sh\n"
             for i in range(20)}
    reason = verifier_steps_reason("#!/bin/bash\nbash /tests/r0.sh\n", tests)
    assert reason is not None and "runs no pytest" in reason


def test_check_reads_the_runner_from_the_task(tmp_path: Path) -> None:
    task = tmp_path / "task"
    shutil.copytree(FIXTURE, task)
    (task / "tests" / "test.sh").write_text("#!/bin/bash\nbash /tests/run_tests.sh\n")
    (task / "tests" / "run_tests.sh").write_text(SH_RUNNER)
    (task / "tests" / "runner.py").write_text(PY_MAIN)
    doc = read_harbor(task)
    assert "tests/run_tests.sh" in {s.path for s in doc.test_scripts}
    assert verifier_attested(doc, OPTIONS) is None
    (task / "tests" / "test.sh").write_text("#!/bin/bash\npython3 /tests/runner.py\n")
    assert verifier_attested(read_harbor(task), OPTIONS) is None
    (task / "tests" / "run_tests.sh").write_text(NO_PYTEST)
    (task / "tests" / "test.sh").write_text("#!/bin/bash\nbash /tests/run_tests.sh\n")
    reason = verifier_attested(read_harbor(task), OPTIONS)
    assert reason is not None and "runs no pytest" in reason
