"""Honest tasks score exactly 1: the grader's defences leave ordinary idioms alone.

The attack tests (``tests/scoring/test_trial_attacks.py``) show that every cheat scores 0. This
module is the other half of that claim: the idioms honest task authors and agents use
every day (probing pytest before the run, several sessions, a cwd in the agent's
directory, reward.json, unittest classes, skip/xfail markers, agent CLIs run by the
tests, git, ``~`` paths, helpers the tests write, services, deliverables outside /app,
in-place fixes, syntax checks, pickles and dataclasses made at test time) must each
earn the full reward through :func:`run_task` with the oracle. A control shows that the
CLI task is not passable by doing nothing.
"""

from __future__ import annotations

import textwrap

import pytest

from termgrade.agent.kinds import AgentName
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import load_task
from tests.support.task_dirs import CHECKS_HELLO, STANDARD_TEST_SH, MakeTask

pytestmark = pytest.mark.docker

Pieces = dict[str, object]
"""Keyword arguments of ``make_task`` (see :func:`tests.conftest.write_task`)."""

PY = "/opt/venv/bin/python"
FLAGS = "-c /dev/null --rootdir=/tests --confcutdir=/tests -p no:cacheprovider"
PYTEST = f"{PY} -m pytest {FLAGS}"
HEAD = "#!/usr/bin/env bash\nmkdir -p /logs/verifier\ncd /tests || exit 1\n"
REWARD_FROM_STATUS = ("if [ $? -eq 0 ]; then r=1; else r=0; fi\n"
                      "echo $r > /logs/verifier/reward.txt\n")
GIVE_UP = "{ echo 0 > /logs/verifier/reward.txt; exit 1; }"
TOML = textwrap.dedent("""\
    schema_version = "1.4"
    [verifier]
    timeout_sec = 90.0
    [agent]
    timeout_sec = 60.0
    """)


def dockerfile(*runs: str) -> str:
    return "FROM termgrade/base:local\nWORKDIR /app\n" + "".join(f"RUN {r}\n" for r in runs)


# 1. Probing pytest (version, help, collection) before the real run. pytest 8.4's --help
#    spells the option `--junit-xml=path` (it accepts `--junitxml` but never prints it).
PROBES_TEST_SH = HEAD + textwrap.dedent(f"""\
    {PY} -m pytest --version || {GIVE_UP}
    {PY} -m pytest --help | grep -q -- --junit-xml || {GIVE_UP}
    {PYTEST} --collect-only -q /tests/test_outputs.py || {GIVE_UP}
    {PYTEST} --junitxml /logs/verifier/junit.xml -rA /tests/test_outputs.py
    """) + REWARD_FROM_STATUS

# 2. Two pytest sessions, both of which must pass.
SECOND_TESTS = textwrap.dedent("""\
    from pathlib import Path


    def test_output_has_one_line():
        assert len(Path("/app/out.txt").read_text().splitlines()) == 1
    """)
TWO_SESSIONS_TEST_SH = HEAD + textwrap.dedent(f"""\
    {PYTEST} --junitxml /logs/verifier/junit.xml -rA /tests/test_outputs.py
    first=$?
    {PYTEST} -rA /tests/test_second.py
    second=$?
    if [ $first -eq 0 ] && [ $second -eq 0 ]; then r=1; else r=0; fi
    echo $r > /logs/verifier/reward.txt
    """)

# 3. pytest run from the agent's directory, as many task authors write it.
CWD_TEST_SH = textwrap.dedent("""\
    #!/usr/bin/env bash
    mkdir -p /logs/verifier
    cd /app && python -m pytest /tests/test_outputs.py -rA --junitxml=/logs/verifier/junit.xml
    """) + REWARD_FROM_STATUS
CWD_TESTS = CHECKS_HELLO + textwrap.dedent("""\


    def test_relative_to_the_working_directory():
        assert Path("out.txt").read_text().strip() == "hello"
    """)

# 4. reward.json instead of reward.txt.
REWARD_JSON_TEST_SH = HEAD + textwrap.dedent(f"""\
    {PYTEST} --junitxml /logs/verifier/junit.xml -rA /tests/test_outputs.py
    if [ $? -eq 0 ]; then r=1; else r=0; fi
    echo "{{\\"reward\\": $r}}" > /logs/verifier/reward.json
    """)

# 5. unittest-style tests.
UNITTEST_TESTS = textwrap.dedent("""\
    import unittest
    from pathlib import Path


    class TestOutput(unittest.TestCase):
        def setUp(self):
            self.path = Path("/app/out.txt")

        def test_exists(self):
            self.assertTrue(self.path.is_file())

        def test_content(self):
            self.assertEqual(self.path.read_text().strip(), "hello")
    """)

# 6. Markers: a platform skipif (one that runs here, one that skips), a non-strict xfail
#    that fails, and a parametrize over a literal list.
MARKER_TESTS = textwrap.dedent("""\
    import sys
    from pathlib import Path

    import pytest


    @pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
    def test_output_is_readable():
        assert Path("/app/out.txt").stat().st_mode & 0o444


    @pytest.mark.skipif(sys.platform != "win32", reason="Windows line endings only")
    def test_windows_line_endings():
        assert Path("/app/out.txt").read_bytes().endswith(b"\\r\\n")


    def test_output():
        assert Path("/app/out.txt").read_text().strip() == "hello"


    @pytest.mark.xfail(reason="upper-casing is a planned feature")
    def test_upper_case_output():
        assert Path("/app/out.txt").read_text().strip() == "HELLO"


    @pytest.mark.parametrize(("name", "expected"), [("out.txt", "hello"), ("second.txt", "world")])
    def test_files(name, expected):
        assert (Path("/app") / name).read_text().strip() == expected
    """)

# 7. The tests run the agent's command-line tool.
TOOL_SOLVE = textwrap.dedent("""\
    cat > /app/tool.sh <<'SH'
    #!/usr/bin/env bash
    case "$1" in
      upper) echo "$2" | tr '[:lower:]' '[:upper:]' ;;
      count) wc -l < "$2" ;;
      *) echo "usage: tool.sh upper WORD | count FILE" >&2; exit 2 ;;
    esac
    SH
    chmod +x /app/tool.sh
    """)
TOOL_TESTS = textwrap.dedent("""\
    import subprocess


    def tool(*args):
        return subprocess.run(["/app/tool.sh", *args], capture_output=True, text=True,
                              timeout=30)


    def test_upper():
        done = tool("upper", "abc")
        assert done.returncode == 0 and done.stdout.strip() == "ABC"


    def test_count(tmp_path):
        data = tmp_path / "lines.txt"
        data.write_text("a\\nb\\nc\\n")
        assert tool("count", str(data)).stdout.strip() == "3"


    def test_usage_error():
        done = tool("frobnicate")
        assert done.returncode == 2 and "usage" in done.stderr


    def test_run_through_bash():
        done = subprocess.run(["bash", "/app/tool.sh", "upper", "x"], capture_output=True,
                              text=True, timeout=30)
        assert done.stdout.strip() == "X"
    """)

# 8. Git with an identity the image set.
GIT_SOLVE = textwrap.dedent("""\
    mkdir -p /app/repo && cd /app/repo
    git init -q
    echo one > a.txt
    git add a.txt
    git commit -qm first
    """)
GIT_TESTS = textwrap.dedent("""\
    import subprocess
    from pathlib import Path


    def git(*args):
        done = subprocess.run(["git", "-C", "/app/repo", *args], capture_output=True,
                              text=True, timeout=30, check=True)
        return done.stdout


    def test_log_shows_the_commit():
        assert "first" in git("log", "--oneline")
        assert git("log", "-1", "--format=%an <%ae>").strip() == "x <x@y>"


    def test_worktree_is_clean():
        assert git("status", "--porcelain") == ""


    def test_commit_again():
        Path("/app/repo/b.txt").write_text("two\\n")
        git("add", "b.txt")
        git("commit", "-qm", "second")
        assert git("rev-list", "--count", "HEAD").strip() == "2"
    """)

# 9. Paths under the home directory.
HOME_SOLVE = textwrap.dedent("""\
    echo "remember the milk" > ~/notes.txt
    echo "alias ll='ls -l'" >> ~/.bashrc
    """)
HOME_TESTS = textwrap.dedent("""\
    import subprocess
    from pathlib import Path


    def test_notes():
        assert (Path.home() / "notes.txt").read_text().strip() == "remember the milk"


    def test_alias_in_bashrc():
        done = subprocess.run(["bash", "-c", "grep -q \\"alias ll=\\" ~/.bashrc"], timeout=30)
        assert done.returncode == 0
    """)

# 10. A helper module the tests write into their own tmp_path and import.
HELPER_TESTS = textwrap.dedent('''\
    import importlib
    import sys
    import textwrap
    from pathlib import Path

    HELPER = textwrap.dedent("""\\
        def normalize(text):
            return text.strip().lower()


        class Checker:
            def __init__(self, expected):
                self.expected = expected

            def matches(self, text):
                return normalize(text) == self.expected
        """)


    def test_helper_module(tmp_path):
        (tmp_path / "text_helpers.py").write_text(HELPER)
        sys.path.insert(0, str(tmp_path))
        try:
            helpers = importlib.import_module("text_helpers")
        finally:
            sys.path.remove(str(tmp_path))
        assert helpers.Checker("hello").matches(Path("/app/out.txt").read_text())
    ''')

# 11. A declared service (task.toml [[verifier.services]]).
SERVER = textwrap.dedent("""\
    import http.server


    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"up")


    http.server.HTTPServer(("127.0.0.1", 8765), H).serve_forever()
    """)
SERVICE_SOLVE = (f"cat > /app/server.py <<'PY'\n{SERVER}PY\n"
                 "nohup python3 /app/server.py >/dev/null 2>&1 &\nsleep 0.5\n")
SERVICE_TESTS = textwrap.dedent("""\
    import urllib.request


    def test_service_answers():
        assert urllib.request.urlopen("http://127.0.0.1:8765/", timeout=10).read() == b"up"
    """)
SERVICE_TOML = TOML + textwrap.dedent("""\
    [[verifier.services]]
    command = "python3 /app/server.py"
    ready = "python3 -c 'import urllib.request; urllib.request.urlopen(\\"http://127.0.0.1:8765/\\")'"
    """)

# 12. Deliverables outside /app: /opt, /etc, a bare repository's hook in /var, /solution.
OUTSIDE_SOLVE = textwrap.dedent("""\
    mkdir -p /opt/tools /etc/myapp
    cat > /opt/tools/report.sh <<'SH'
    #!/usr/bin/env bash
    echo "report: $(ls /etc/myapp | wc -l) config file(s)"
    SH
    chmod +x /opt/tools/report.sh
    printf '[server]\\nport = 8080\\nname = demo\\n' > /etc/myapp/config.ini
    cat > /var/git/proj.git/hooks/post-receive <<'SH'
    #!/usr/bin/env bash
    while read -r old new ref; do echo "$ref $new" >> /var/git/pushes.log; done
    SH
    chmod +x /var/git/proj.git/hooks/post-receive
    echo 42 > /solution/out.txt
    """)
OUTSIDE_TESTS = textwrap.dedent("""\
    import configparser
    import subprocess
    from pathlib import Path


    def run(*args):
        return subprocess.run(list(args), capture_output=True, text=True, timeout=30,
                              check=True).stdout


    def test_report_script():
        assert run("/opt/tools/report.sh").strip() == "report: 1 config file(s)"


    def test_config_file():
        parser = configparser.ConfigParser()
        assert parser.read("/etc/myapp/config.ini") == ["/etc/myapp/config.ini"]
        assert parser.getint("server", "port") == 8080


    def test_push_runs_the_post_receive_hook(tmp_path):
        clone = str(tmp_path / "clone")
        run("git", "clone", "-q", "/var/git/proj.git", clone)
        (tmp_path / "clone" / "f.txt").write_text("x\\n")
        run("git", "-C", clone, "add", "f.txt")
        run("git", "-C", clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
        run("git", "-C", clone, "push", "-q", "origin", "HEAD:refs/heads/main")
        assert Path("/var/git/pushes.log").read_text().startswith("refs/heads/main ")


    def test_results_under_solution():
        assert Path("/solution/out.txt").read_text().strip() == "42"
    """)

# 13. An in-place fix of a script the image ships.
FIX_IMAGE = dockerfile(
    "mkdir -p /opt/scripts && printf '#!/bin/sh\\necho $(($1 - $2))\\n' > /opt/scripts/add.sh "
    "&& chmod +x /opt/scripts/add.sh")
FIX_SOLVE = "sed -i 's/\\$1 - \\$2/$1 + $2/' /opt/scripts/add.sh\n"
FIX_TESTS = textwrap.dedent("""\
    import subprocess


    def add(a, b):
        done = subprocess.run(["/opt/scripts/add.sh", str(a), str(b)], capture_output=True,
                              text=True, timeout=30, check=True)
        return int(done.stdout)


    def test_adds():
        assert add(2, 3) == 5
        assert add(-4, 4) == 0
    """)

# 14. A syntax check of the agent's script that never runs it.
COMPILE_SOLVE = textwrap.dedent("""\
    cat > /app/fib.py <<'PY'
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)


    if __name__ == "__main__":
        print(fib(10))
    PY
    """)
COMPILE_TESTS = textwrap.dedent("""\
    import ast
    from pathlib import Path

    SCRIPT = Path("/app/fib.py")


    def test_script_compiles():
        code = compile(SCRIPT.read_text(), str(SCRIPT), "exec")
        assert code.co_filename == str(SCRIPT)


    def test_script_defines_fib():
        tree = ast.parse(SCRIPT.read_text())
        assert any(isinstance(n, ast.FunctionDef) and n.name == "fib" for n in tree.body)
    """)

# 15. A pickle the tests wrote themselves and a dataclass defined in a test function.
GENERATED_TESTS = textwrap.dedent("""\
    import dataclasses
    import datetime
    import pickle
    from pathlib import Path


    def test_pickle_round_trip(tmp_path):
        state = {"when": datetime.datetime(2024, 1, 2, 3, 4, 5), "sizes": [1, 2, 3],
                 "day": datetime.date(2024, 1, 2), "name": "out"}
        path = tmp_path / "state.pkl"
        path.write_bytes(pickle.dumps(state))
        assert pickle.loads(path.read_bytes()) == state


    def test_dataclass_in_a_test():
        @dataclasses.dataclass(frozen=True)
        class Row:
            name: str
            size: int = 0

        text = Path("/app/out.txt").read_text()
        assert Row("out.txt", len(text)) == Row("out.txt", 6)
    """)


# 17. The shapes a layer records: a deleted image file, an image directory made anew (only
#     the new contents show), hard links, a symlink, an owner, a mode and an mtime.
SHAPES_IMAGE = dockerfile("mkdir -p /srv/data /etc/old.d && touch /srv/data/gone.txt "
                          "/srv/data/kept.txt /etc/old.d/a.conf /etc/old.d/b.conf")
SHAPES_SOLVE = textwrap.dedent("""\
    rm /srv/data/gone.txt
    rm -rf /etc/old.d && mkdir /etc/old.d && echo new > /etc/old.d/only.conf
    mkdir -p /opt/shapes && echo payload > /opt/shapes/one
    ln /opt/shapes/one /opt/shapes/two
    ln -s /opt/shapes/one /opt/shapes/link
    chown 1000:1000 /opt/shapes/one && chmod 0640 /opt/shapes/one
    touch -d '2001-02-03 04:05:06 UTC' /opt/shapes/one
    """)
SHAPES_TESTS = textwrap.dedent("""\
    import os
    import stat


    def test_deleted_file_is_gone_and_the_rest_stays():
        assert not os.path.exists("/srv/data/gone.txt")
        assert os.path.exists("/srv/data/kept.txt")


    def test_directory_made_anew_shows_only_its_new_contents():
        assert sorted(os.listdir("/etc/old.d")) == ["only.conf"]


    def test_links_owner_mode_and_time():
        one, two = os.stat("/opt/shapes/one"), os.stat("/opt/shapes/two")
        assert one.st_ino == two.st_ino and one.st_nlink == 2
        assert os.readlink("/opt/shapes/link") == "/opt/shapes/one"
        assert (one.st_uid, one.st_gid, stat.S_IMODE(one.st_mode)) == (1000, 1000, 0o640)
        assert int(one.st_mtime) == 981173106
        assert open("/opt/shapes/link").read() == "payload\\n"
    """)

IDIOMS: dict[str, Pieces] = {
    "idiom-probes": {"test_sh": PROBES_TEST_SH},
    "idiom-two-sessions": {"test_sh": TWO_SESSIONS_TEST_SH,
                           "extra_test_files": {"test_second.py": SECOND_TESTS}},
    "idiom-cwd-app": {"test_sh": CWD_TEST_SH, "tests": CWD_TESTS},
    "idiom-reward-json": {"test_sh": REWARD_JSON_TEST_SH},
    "idiom-unittest": {"tests": UNITTEST_TESTS},
    "idiom-markers": {"tests": MARKER_TESTS,
                      "solve": "echo hello > /app/out.txt\necho world > /app/second.txt\n"},
    "idiom-cli": {"solve": TOOL_SOLVE, "tests": TOOL_TESTS},
    "idiom-git": {"solve": GIT_SOLVE, "tests": GIT_TESTS, "dockerfile": dockerfile(
        "git config --global user.name x && git config --global user.email x@y")},
    "idiom-home": {"solve": HOME_SOLVE, "tests": HOME_TESTS, "instruction": (
        "Write hello to /app/out.txt, keep a note in ~/notes.txt and add an alias `ll` to "
        "~/.bashrc.\n")},
    "idiom-tmp-helper": {"tests": HELPER_TESTS},
    "idiom-service": {"solve": SERVICE_SOLVE, "tests": SERVICE_TESTS, "toml": SERVICE_TOML},
    "idiom-outside-app": {"solve": OUTSIDE_SOLVE, "tests": OUTSIDE_TESTS,
                          "dockerfile": dockerfile("git init -q --bare /var/git/proj.git")},
    # an edit of an image file reaches B where the task asks for it: the instruction names
    # the file (without it, or a reference record, the edit is left out and said)
    "idiom-in-place-fix": {"solve": FIX_SOLVE, "tests": FIX_TESTS, "dockerfile": FIX_IMAGE,
                           "instruction": "Fix /opt/scripts/add.sh: it must add its two "
                                          "arguments.\n"},
    "idiom-compile-check": {"solve": COMPILE_SOLVE, "tests": COMPILE_TESTS},
    "idiom-generated-code": {"tests": GENERATED_TESTS},
    "idiom-layer-shapes": {"solve": SHAPES_SOLVE, "tests": SHAPES_TESTS,
                           "dockerfile": SHAPES_IMAGE,
                           "instruction": "Delete /srv/data/gone.txt, make /etc/old.d/ hold "
                                          "only only.conf, and set up /opt/shapes.\n"},
}


def grade(make_task: MakeTask, task_id: str, agent: AgentName) -> RunOutcome:
    pieces: Pieces = {"toml": TOML, "test_sh": STANDARD_TEST_SH, **IDIOMS[task_id]}
    task = load_task(make_task(task_id, **pieces))
    return run_task(task, build_task_image(task).tag, agent)


@pytest.mark.parametrize("task_id", list(IDIOMS))
def test_an_honest_idiom_scores_exactly_one(make_task: MakeTask, task_id: str) -> None:
    outcome = grade(make_task, task_id, AgentName.ORACLE)
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])
    assert outcome.verifier is not None and outcome.verifier.attested


def test_control_the_cli_task_is_not_passed_by_doing_nothing(make_task: MakeTask) -> None:
    outcome = grade(make_task, "idiom-cli", AgentName.NOP)
    assert outcome.error is None and outcome.reward == 0.0, (
        outcome.failure, outcome.verifier and outcome.verifier.output[-3000:])


# A runner script shipped with the tests, run by its path (Harbor runs it so): /tests is
# mounted exec (the engine's tmpfs default is noexec: "Permission denied" scored it 0), and
# the runner's pytest is the task's, keyed and attested.
RUNNER_TEST_SH = HEAD + "/tests/run_tests.sh\n" + REWARD_FROM_STATUS
RUNNER = f"#!/bin/bash\nexec {PYTEST} -rA /tests/test_outputs.py\n"


def test_a_runner_in_the_tests_run_by_its_path_scores_exactly_one(make_task: MakeTask) -> None:
    root = make_task("idiom-runner-by-path", toml=TOML, test_sh=RUNNER_TEST_SH,
                     extra_test_files={"run_tests.sh": RUNNER})
    (root / "tests" / "run_tests.sh").chmod(0o755)
    task = load_task(root)
    outcome = run_task(task, build_task_image(task).tag, AgentName.ORACLE)
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])
    assert outcome.verifier is not None and outcome.verifier.attested
    assert outcome.verifier.tests, "per-test evidence from the runner's attested session"
