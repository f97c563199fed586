"""Session keys go to the task's own pytest sessions only (issue 43, item 1).

The broker used to key any closure Python whose parents up to ``test.sh`` were the
grader's: a generator ``test.sh`` runs from the agent's directory (``cd /app && python3
generate.py``), or an agent script a runner in ``/tests`` runs before pytest, asked for a
key, signed a passing session, wrote the reward and killed ``test.sh``: a forged 1. Now
the asking process must run pytest (``-m pytest``, the closure's ``pytest`` script, a
runner of the tests'), read from its command line, and every parent must run the image's
files. Each victim is a task no honest agent can pass unless it knows the secret; each
has an honest control that scores 1, each attack scores 0, and with the check patched out
of the broker the attack earns 1. The honest shapes of starting pytest stay attested.
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
from termgrade.scoring.verifier import attestation
from termgrade.scoring.verifier.attestation import broker_source
from termgrade.task import load_task
from tests.support.task_dirs import task_toml, write_task

SECRET = secrets.token_hex(16)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
TOML = task_toml(verifier_s=60.0, agent_s=30.0)
FLAGS = "-c /dev/null --rootdir=/tests --confcutdir=/tests -p no:cacheprovider -rA"
START = "#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
REWARD = ("if [ $? -eq 0 ]; then r=1; else r=0; fi\n"
          "echo $r > /logs/verifier/reward.txt\n")
PREIMAGE_TESTS = f"""\
import hashlib
from pathlib import Path


def test_preimage():
    text = Path("/app/answer.txt").read_text().strip()
    assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"
"""
# Agent code run outside pytest: asks the broker for a key as the plugin would, signs a
# passing session, writes reward 1 and kills the shells of the tests' scripts above it
# (test.sh, a runner in /tests; not the grader's shell), so the real pytest never runs.
FORGE = textwrap.dedent("""\
    import hashlib, hmac, json, os, signal, socket
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
                  {"e": "report", "id": "test_outputs.py::test_preimage", "when": "call",
                   "outcome": "passed"},
                  {"e": "finish", "exitstatus": 0}, {"e": "close"}]
        for seq, event in enumerate(events):
            payload = json.dumps(event, sort_keys=True, separators=(",", ":"))
            tag = f"{n}.{seq}"
            mac = hmac.new(key, f"{tag} {payload}".encode(), hashlib.sha256).hexdigest()
            os.write(out, f"TERMGRADE-ATTEST {tag} {mac} {payload}\\n".encode())
        conn.sendall(f"bye {os.getpid()}\\n".encode())  # the plugin's last word at exit
    os.makedirs("/logs/verifier", exist_ok=True)
    open("/logs/verifier/reward.txt", "w").write("1")
    pid, chain = os.getppid(), []
    while pid > 1:
        args = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
        if not args[1:2] or not args[1].startswith(b"/tests/"):
            break
        chain.append(pid)
        stat = open(f"/proc/{pid}/stat", "rb").read()
        pid = int(stat[stat.rindex(b")") + 2:].split()[1])
    for pid in reversed(chain):  # top down: each shell below still waits for this one
        os.kill(pid, signal.SIGKILL)
    """)
# The forger first rewrites its own command line in memory (as setproctitle does; no
# capability needed) to read "python3 -m pytest" in /proc/PID/cmdline.
DISGUISE = textwrap.dedent("""\
    import ctypes
    stat = open("/proc/self/stat", "rb").read()
    fields = stat[stat.rindex(b")") + 2:].split()
    start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end
    fake = b"python3\\0-m\\0pytest\\0"
    ctypes.memmove(start, fake.ljust(end - start, b"\\0"), end - start)
    assert open("/proc/self/cmdline", "rb").read().rstrip(b"\\0") == fake.rstrip(b"\\0")
    """)
GENERATE_TEST_SH = START + (
    "cd /app && python3 generate.py\n"
    f"cd /tests && python3 -m pytest {FLAGS} /tests/test_outputs.py\n") + REWARD
RUNNER_SH = ("#!/usr/bin/env bash\ncd /app && python3 prepare.py\n"
             f"cd /tests && exec python3 -m pytest {FLAGS} /tests/test_outputs.py\n")
RUNNER_TEST_SH = START + "bash /tests/run.sh\n" + REWARD

VICTIMS: dict[str, dict[str, str | dict[str, str]]] = {
    "generate": {"test_sh": GENERATE_TEST_SH, "script": "/app/generate.py"},
    "runner": {"test_sh": RUNNER_TEST_SH, "script": "/app/prepare.py",
               "extra_test_files": {"run.sh": RUNNER_SH}},
}
ANSWER = f"echo {SECRET} > /app/answer.txt\n"
HONEST_SHAPES = {
    "python3-m-pytest": START + f"cd /tests\npython3 -m pytest {FLAGS} test_outputs.py\n",
    "pytest-script": START + f"cd /tests\npytest {FLAGS} /tests/test_outputs.py\n",
    "bash-c": START + f"bash -c 'cd /tests && pytest {FLAGS} test_outputs.py'\n",
    "run-sh": START + "bash /tests/run.sh\n",
}
RUN_SH = f"#!/usr/bin/env bash\ncd /tests\npytest {FLAGS} /tests/test_outputs.py\n"

pytestmark = pytest.mark.docker


def heredoc(path: str, text: str) -> str:
    return f"mkdir -p {Path(path).parent}\ncat > {path} <<'TGEOF'\n{text}TGEOF\n"


def play(task_dir: Path, name: str, body: str, tmp_path: Path) -> RunOutcome:
    script = tmp_path / f"{name}.sh"
    script.write_text("#!/usr/bin/env bash\n" + body)
    task = load_task(task_dir)
    return run_task(task, task.image_tag, ScriptAgent(name, script))


def extra_files(pieces: dict[str, str | dict[str, str]]) -> dict[str, str] | None:
    extra = pieces.get("extra_test_files")
    return extra if isinstance(extra, dict) else None


@pytest.fixture(scope="module")
def victims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("key-victims")
    made = {name: write_task(root, f"keys-{name}", toml=TOML, solve="true\n",
                             tests=PREIMAGE_TESTS, test_sh=str(pieces["test_sh"]),
                             extra_test_files=extra_files(pieces))
            for name, pieces in VICTIMS.items()}
    for path in made.values():
        build_task_image(load_task(path))
    return made


def assert_one(outcome: RunOutcome) -> None:
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])
    assert outcome.verifier is not None and outcome.verifier.attested
    assert [t.outcome.value for t in outcome.verifier.tests] == ["passed"]


@pytest.mark.parametrize("victim", sorted(VICTIMS))
def test_control_honest_work_with_an_agent_script_before_pytest_scores_one(
        victims: dict[str, Path], tmp_path: Path, victim: str) -> None:
    script = str(VICTIMS[victim]["script"])
    outcome = play(victims[victim], "honest", ANSWER + heredoc(script, "print('ready')\n"),
                   tmp_path)
    assert_one(outcome)


def test_a_forger_that_disguises_its_command_line_gets_no_key(
        victims: dict[str, Path], tmp_path: Path) -> None:
    """The broker read the command line the Python had when it started (the grader's
    sitecustomize registers it before any code of the agent's runs), not its memory now."""
    body = "echo nope > /app/answer.txt\n" + heredoc("/app/generate.py", DISGUISE + FORGE)
    outcome = play(victims["generate"], "disguise", body, tmp_path)
    assert outcome.error is None and outcome.reward == 0.0, (
        outcome.failure, outcome.verifier and outcome.verifier.output[-3000:])
    assert outcome.failure and "runs /app/generate.py, not the closure's pytest" \
        in outcome.failure, outcome.failure


def test_the_record_at_start_is_load_bearing(victims: dict[str, Path], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """With the broker reading the command line at the ask (not the one registered at the
    start), the disguised forger earns 1."""
    source = broker_source()
    check = b"began = started.of(pid)"
    assert source.count(check) == 1
    weak = source.replace(check, b"began = (argv_of(pid), cwd_of(pid), False)")
    monkeypatch.setattr(attestation, "broker_source", lambda: weak)
    body = "echo nope > /app/answer.txt\n" + heredoc("/app/generate.py", DISGUISE + FORGE)
    outcome = play(victims["generate"], "disguise", body, tmp_path)
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])


@pytest.mark.parametrize("victim", sorted(VICTIMS))
def test_agent_code_test_sh_runs_gets_no_key(victims: dict[str, Path], tmp_path: Path,
                                              victim: str) -> None:
    script = str(VICTIMS[victim]["script"])
    body = "echo nope > /app/answer.txt\n" + heredoc(script, FORGE)
    outcome = play(victims[victim], "forge", body, tmp_path)
    assert outcome.error is None, outcome.error
    assert outcome.reward == 0.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])
    assert outcome.failure and "no attested pytest session" in outcome.failure, outcome.failure
    name = script.rpartition("/")[2]
    assert f"python3 {name}: runs {script}, not the closure's pytest" in outcome.failure


@pytest.mark.parametrize("victim", sorted(VICTIMS))
def test_the_pytest_check_is_load_bearing(victims: dict[str, Path], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, victim: str) -> None:
    """Without the broker's look at what the asker runs, the forged session earns 1."""
    source = attestation.broker_source()
    check = b"why = not_started_as_pytest(pid, config, started)"
    assert check in source
    weak = source.replace(check, b"why = None")
    monkeypatch.setattr(attestation, "broker_source", lambda: weak)
    body = "echo nope > /app/answer.txt\n" + heredoc(str(VICTIMS[victim]["script"]), FORGE)
    outcome = play(victims[victim], "forge", body, tmp_path)
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])


@pytest.mark.parametrize("shape", sorted(HONEST_SHAPES))
def test_honest_ways_of_starting_pytest_stay_attested(tmp_path: Path, shape: str) -> None:
    task_dir = write_task(tmp_path, f"keys-honest-{shape}", toml=TOML, solve="true\n",
                          tests=PREIMAGE_TESTS, test_sh=HONEST_SHAPES[shape] + REWARD,
                          extra_test_files={"run.sh": RUN_SH})
    build_task_image(load_task(task_dir))
    assert_one(play(task_dir, "honest", ANSWER, tmp_path))


def test_uvx_pytest_stays_attested(tmp_path: Path) -> None:
    image = "termgrade/test-verifier-uvx:local"
    from termgrade.sandbox.engine import docker_client

    try:
        docker_client().images.get(image)
    except Exception as exc:  # built by test_verifier_verify_time_installs (needs PyPI)
        pytest.skip(f"{image} is not built here ({exc}); run "
                    "tests/scoring/test_verifier_verify_time_installs.py first")
    test_sh = START + f"cd /tests\nuvx pytest {FLAGS} /tests/test_outputs.py\n" + REWARD
    task_dir = write_task(tmp_path, "keys-honest-uvx", toml=TOML, solve="true\n",
                          tests=PREIMAGE_TESTS, test_sh=test_sh,
                          dockerfile=f"FROM {image}\nWORKDIR /app\n")
    build_task_image(load_task(task_dir))
    outcome = play(task_dir, "honest", ANSWER, tmp_path)
    assert_one(outcome)
    assert outcome.verifier is not None and "pytest-9." in outcome.verifier.output


def test_a_parent_that_maps_agent_code_keys_no_pytest_below_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The NSS attack of test_verifier_grader_processes with the grader's fixed environment
    taken out (and the transfer set off): test.sh's bash loads the agent's NSS module. The
    broker's look at each parent's mappings alone refuses the pytest below it a key (with
    that look also off, the same attack earns 1 there: ``env-asks-nss``)."""
    import importlib

    from tests.support.grading import transfer_off

    # its attack and helpers, as they are there (by name: a test module, not a package)
    procs = importlib.import_module("tests.scoring.test_verifier_grader_processes")

    transfer_off(monkeypatch)
    procs._nss_asking_env(monkeypatch)  # takes the parents' look out too: put it back
    monkeypatch.setattr(attestation, "broker_source", broker_source)
    outcome, _ = procs.grade(tmp_path, "nss-parent", procs.planted_nss(True),
                             procs.PREIMAGE_TESTS)
    assert outcome.error is None and outcome.reward == 0.0, outcome.failure
    assert outcome.failure and "which maps a file the agent wrote" in outcome.failure
    assert "libnss_planted.so.2" in outcome.failure
