"""Honest verifiers written the Harbor way score exactly 1 (issue 31, item 5).

The idioms of the verifier's environment: ``test.sh`` in the image's ``WORKDIR`` with
the image's ``PATH`` and ``ENV``; pytest started by ``make``, by a runner script in
``/tests`` and by ``uv run`` (uv and pytest baked into the image); plugins the tests
name (``--ctrf``, ``--json-report``) installed in the image; a daemon a test started,
alive until the test ends. Each goes through :func:`run_task` with the oracle and must be
attested. The tools image (uv, pytest-json-report) is built once from PyPI through this
machine's CA bundle; without PyPI those idioms are skipped, naming why.
"""

from __future__ import annotations

import shutil
import tarfile
import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import AgentName
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import load_task
from tests.support.docker_engine import image_from_pypi
from tests.support.task_dirs import CHECKS_HELLO, MakeTask

pytestmark = pytest.mark.docker

TOOLS_IMAGE = "termgrade/test-verifier-tools:local"
TOML = textwrap.dedent("""\
    schema_version = "1.4"
    [verifier]
    timeout_sec = 90.0
    [agent]
    timeout_sec = 60.0
    """)
FLAGS = "-c /dev/null --rootdir=/tests --confcutdir=/tests -p no:cacheprovider"
REWARD = ("if [ $? -eq 0 ]; then r=1; else r=0; fi\n"
          "echo $r > /logs/verifier/reward.txt\n")
START = "#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"

# (a) No `cd`: test.sh runs in the image's WORKDIR (/app), finds a tool the Dockerfile put
#     on PATH, reads a relative path, and its tests see the image's ENV.
WORKDIR_IMAGE = textwrap.dedent("""\
    FROM termgrade/base:local
    RUN mkdir -p /opt/tools/bin && printf '#!/bin/sh\\necho tool-ok\\n' > /opt/tools/bin/mytool \\
        && chmod +x /opt/tools/bin/mytool
    ENV PATH=/opt/tools/bin:$PATH GREETING=hello-from-image
    WORKDIR /app
    """)
WORKDIR_TEST_SH = START + textwrap.dedent(f"""\
    [ "$(pwd)" = /app ] || {{ echo "cwd is $(pwd)"; echo 0 > /logs/verifier/reward.txt; exit 1; }}
    [ "$(mytool)" = tool-ok ] || {{ echo 0 > /logs/verifier/reward.txt; exit 1; }}
    grep -q hello out.txt || {{ echo 0 > /logs/verifier/reward.txt; exit 1; }}
    python -m pytest {FLAGS} -rA /tests/test_outputs.py
    """) + REWARD
WORKDIR_TESTS = CHECKS_HELLO + textwrap.dedent("""\


    def test_the_image_env_is_seen():
        import os
        assert os.environ["GREETING"] == "hello-from-image"
    """)

# (b) pytest by make, by runner scripts in /tests, by uv run.
MAKEFILE = f"test:\n\tpython -m pytest {FLAGS} -rA /tests/test_outputs.py\n"
MAKE_TEST_SH = START + "make -C /tests test\n" + REWARD
RUNNER_PY = textwrap.dedent(f"""\
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pytest", *"{FLAGS}".split(), "-rA",
                           "/tests/test_outputs.py"])
    sys.exit(done.returncode)
    """)
RUNNER_SH = "#!/usr/bin/env bash\nexec python /tests/run_tests.py\n"
RUNNER_TEST_SH = START + "chmod +x /tests/run.sh 2>/dev/null; bash /tests/run.sh\n" + REWARD
UV_TEST_SH = START + "cd /tests\n" + (
    f"uv run --no-project --offline pytest {FLAGS} -rA /tests/test_outputs.py\n") + REWARD

# (c) Plugins the tests name, installed in the image.
PLUGINS_TEST_SH = START + "cd /tests\n" + (
    f"python -m pytest {FLAGS} -rA --ctrf /logs/verifier/ctrf.json "
    "--json-report --json-report-file=/logs/verifier/report.json /tests/test_outputs.py\n"
    "status=$?; [ -s /logs/verifier/ctrf.json ] && [ -s /logs/verifier/report.json ] "
    "&& [ $status -eq 0 ]\n") + REWARD

# (d) A daemon a test starts through the agent's launcher (it double-forks), used by
#     several subprocess calls of the same test.
DAEMON_SOLVE = textwrap.dedent("""\
    echo hello > /app/out.txt
    cat > /app/serve.py <<'PY'
    import http.server, os, sys
    if os.fork():
        sys.exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b"up")
        def log_message(self, *args):
            pass
    http.server.HTTPServer(("127.0.0.1", 8771), H).serve_forever()
    PY
    """)
DAEMON_TESTS = textwrap.dedent("""\
    import subprocess
    import time
    import urllib.request


    def fetch():
        return urllib.request.urlopen("http://127.0.0.1:8771/", timeout=5).read()


    def test_a_daemon_lives_until_its_test_ends():
        subprocess.run(["/usr/bin/python3", "/app/serve.py"], check=True)
        for _ in range(100):
            try:
                fetch()
                break
            except OSError:
                time.sleep(0.05)
        for _ in range(3):
            subprocess.run(["/usr/bin/true"], check=True)
            assert fetch() == b"up"
    """)


@pytest.fixture(scope="module")
def tools_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The base image plus uv and pytest-json-report from PyPI (this machine's CA)."""
    return image_from_pypi(TOOLS_IMAGE, tmp_path_factory.mktemp("tools"),
                           "/opt/venv/bin/pip install --no-cache-dir uv pytest-json-report",
                           "uv and pytest-json-report")


IDIOMS: dict[str, dict[str, object]] = {
    "env-workdir-path": {"test_sh": WORKDIR_TEST_SH, "tests": WORKDIR_TESTS,
                         "dockerfile": WORKDIR_IMAGE},
    "env-make": {"test_sh": MAKE_TEST_SH, "extra_test_files": {"Makefile": MAKEFILE}},
    "env-runner-scripts": {"test_sh": RUNNER_TEST_SH,
                           "extra_test_files": {"run.sh": RUNNER_SH,
                                                "run_tests.py": RUNNER_PY}},
    "env-daemon": {"solve": DAEMON_SOLVE, "tests": DAEMON_TESTS,
                   "test_sh": START + "cd /tests\n" + f"python -m pytest {FLAGS} -rA "
                   "/tests/test_outputs.py\n" + REWARD},
}
WITH_TOOLS: dict[str, dict[str, object]] = {
    "env-uv-run": {"test_sh": UV_TEST_SH},
    "env-plugins": {"test_sh": PLUGINS_TEST_SH},
}


def grade(make_task: MakeTask, task_id: str, pieces: dict[str, object]) -> RunOutcome:
    task = load_task(make_task(task_id, **{"toml": TOML, **pieces}))
    return run_task(task, build_task_image(task).tag, AgentName.ORACLE)


def assert_one(outcome: RunOutcome) -> None:
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])
    assert outcome.verifier is not None and outcome.verifier.attested


@pytest.mark.parametrize("task_id", list(IDIOMS))
def test_an_honest_verifier_idiom_scores_exactly_one(make_task: MakeTask, task_id: str) -> None:
    assert_one(grade(make_task, task_id, IDIOMS[task_id]))


@pytest.mark.parametrize("task_id", list(WITH_TOOLS))
def test_an_idiom_with_tools_baked_into_the_image_scores_exactly_one(
        make_task: MakeTask, tools_image: str, task_id: str) -> None:
    pieces = {**WITH_TOOLS[task_id],
              "dockerfile": f"FROM {tools_image}\nWORKDIR /app\n"}
    assert_one(grade(make_task, task_id, pieces))


def test_control_the_workdir_task_fails_without_the_deliverable(make_task: MakeTask) -> None:
    task = load_task(make_task("env-workdir-nop", toml=TOML, test_sh=WORKDIR_TEST_SH,
                               tests=WORKDIR_TESTS, dockerfile=WORKDIR_IMAGE))
    outcome = run_task(task, build_task_image(task).tag, AgentName.NOP)
    assert outcome.error is None and outcome.reward == 0.0


def test_control_a_pytest_started_by_agent_code_gets_no_key(make_task: MakeTask) -> None:
    """The widened ancestry still refuses a pytest whose runner is the agent's: a
    Makefile in /app (not /tests) run by make."""
    pieces: dict[str, object] = {
        "solve": ("echo hello > /app/out.txt\nprintf 'test:\\n\\tpython -m pytest "
                  f"{FLAGS} /tests/test_outputs.py\\n' > /app/Makefile\n"),
        "test_sh": START + "make -C /app test\n" + REWARD,
    }
    outcome = grade(make_task, "env-agent-make", pieces)
    assert outcome.error is None and outcome.reward == 0.0


# (e) Private tests shipped as an archive in tests/ and unpacked into /tests by test.sh.
PRIVATE_TESTS = CHECKS_HELLO.replace("def test_output_exists", "def test_private_exists")
UNPACK_TEST_SH = START + "cd /tests\ntar xzf /tests/private.tar.gz -C /tests || exit 1\n" + (
    f"python -m pytest {FLAGS} -rA /tests/test_outputs.py /tests/private/test_private.py\n"
    ) + REWARD


def _with_archive(task_dir: Path) -> Path:
    source = task_dir / "private-src" / "private"
    source.mkdir(parents=True)
    (source / "test_private.py").write_text(PRIVATE_TESTS)
    with tarfile.open(task_dir / "tests" / "private.tar.gz", "w:gz") as archive:
        archive.add(source, arcname="private")
    shutil.rmtree(task_dir / "private-src")
    return task_dir


def test_private_tests_unpacked_at_verify_time_score_exactly_one(make_task: MakeTask) -> None:
    task = load_task(_with_archive(make_task("env-unpack", toml=TOML, test_sh=UNPACK_TEST_SH)))
    outcome = run_task(task, build_task_image(task).tag, AgentName.ORACLE)
    assert_one(outcome)
    assert outcome.verifier is not None and len(outcome.verifier.tests) == 4
