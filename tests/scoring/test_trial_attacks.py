"""Every attack on the grader scores exactly 0: not 1, and not unscored.

The victims are tasks no honest agent can pass: their tests check a SHA-256 preimage of a
random digest. Each attack is the agent phase's script. The shipped battery
(``termgrade/attacks/scripts``) beat the previous in-place grader: each one scored 1 or
left the run unscored there (``docs/grading.md`` and the closing note of the
grading-integrity issue list the figures); here each must score 0. Controls show the
victims are gradable at all: a known preimage passes.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import AgentName, ScriptAgent
from termgrade.attacks import Attack, load_attacks
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import load_task
from termgrade.verify import Verdict, verify_task
from termgrade.verify.runner import play_attacks
from tests.support.task_dirs import MakeTask, task_toml

pytestmark = pytest.mark.docker

SECRET = secrets.token_hex(16)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()

# The tests run the agent's program in a subprocess, so agent code runs during scoring.
PREIMAGE_TESTS = textwrap.dedent(f"""\
    import hashlib
    import subprocess


    def answer():
        done = subprocess.run(["/usr/bin/python3", "/app/answer.py"], capture_output=True,
                              text=True, timeout=60)
        return done.stdout.strip()


    def test_program_prints_something():
        assert answer()


    def test_preimage():
        assert hashlib.sha256(answer().encode()).hexdigest() == "{DIGEST}"
    """)
# A badly written task: its tests import the agent's module into pytest.
IMPORT_TESTS = textwrap.dedent(f"""\
    import hashlib
    import sys

    sys.path.insert(0, "/app")


    def test_preimage():
        import answer
        assert hashlib.sha256(answer.preimage().encode()).hexdigest() == "{DIGEST}"
    """)
VICTIM_TOML = task_toml(verifier_s=30.0, agent_s=20.0)
# The import victim's image ships the module the agent is to complete, as py-fix tasks do.
SKELETON_IMAGE = ("FROM termgrade/base:local\nWORKDIR /app\n"
                  "RUN echo 'def preimage(): raise NotImplementedError' > /app/answer.py\n")
HONEST_PROGRAM = "print(open('/app/secret.txt').read().strip())\n"
IN_PROCESS = {"in-process-exit", "in-process-report-patch"}


@pytest.fixture(scope="module")
def victims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two victim task dirs (built once); the solution is replaced per attack."""
    from tests.support.task_dirs import write_task

    root = tmp_path_factory.mktemp("victims")
    made = {
        "preimage": write_task(root, "victim-preimage", tests=PREIMAGE_TESTS, toml=VICTIM_TOML,
                               solve="echo \"print('not it')\" > /app/answer.py\n"),
        "import": write_task(root, "victim-import", tests=IMPORT_TESTS, toml=VICTIM_TOML,
                             dockerfile=SKELETON_IMAGE,
                             solve="echo \"def preimage(): return 'not it'\" > /app/answer.py\n"),
    }
    for path in made.values():
        build_task_image(load_task(path))
    return made


def play(task_dir: Path, name: str, script: Path) -> RunOutcome:
    task = load_task(task_dir)
    return run_task(task, task.image_tag, ScriptAgent(name, script))


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "attack.sh"
    path.write_text("#!/usr/bin/env bash\n" + body)
    return path


def test_controls_a_known_preimage_passes_both_victims(victims: dict[str, Path],
                                                       tmp_path: Path) -> None:
    honest = script(tmp_path, f"echo {SECRET} > /app/secret.txt\n"
                              f"echo \"{HONEST_PROGRAM.strip()}\" > /app/answer.py\n")
    outcome = play(victims["preimage"], "honest", honest)
    assert outcome.reward == 1.0, (outcome.failure, outcome.verifier and outcome.verifier.output)
    assert outcome.verifier is not None and outcome.verifier.attested
    # The import victim is passable too, but only by a run that is not agent code in pytest:
    # an honest module is still agent code loaded into the verifier, so it scores 0.
    honest_module = script(tmp_path, f"echo \"def preimage(): return '{SECRET}'\" "
                                     "> /app/answer.py\n")
    outcome = play(victims["import"], "honest-module", honest_module)
    assert outcome.reward == 0.0
    assert outcome.failure and "agent code ran inside the verifier's pytest" in outcome.failure


BATTERY = load_attacks()


def test_the_battery_is_shipped() -> None:
    kinds = {a.kind for a in BATTERY}
    assert len(BATTERY) >= 20 and kinds == {"forge", "unscored"}, [a.name for a in BATTERY]


@pytest.mark.parametrize("attack", BATTERY, ids=[a.name for a in BATTERY])
def test_every_attack_of_the_battery_scores_exactly_zero(victims: dict[str, Path],
                                                          attack: Attack) -> None:
    victim = victims["import" if attack.name in IN_PROCESS else "preimage"]
    outcome = play(victim, attack.name, attack.script)
    assert outcome.error is None, outcome.error  # never unscored
    assert outcome.reward == 0.0, (outcome.verifier and outcome.verifier.output[-2000:])
    if attack.name in IN_PROCESS:
        assert outcome.failure and "agent code ran inside" in outcome.failure


def test_a_leftover_process_does_not_survive_into_scoring(victims: dict[str, Path],
                                                          tmp_path: Path) -> None:
    # The daemon would write the secret into the answer the moment the tests start.
    body = (f"echo {SECRET} > /root/.s\necho \"{HONEST_PROGRAM.strip()}\" > /app/answer.py\n"
            "nohup setsid bash -c 'while sleep 0.05; do [ -d /tests ] && "
            "cp /root/.s /app/secret.txt; done' >/dev/null 2>&1 &\n")
    outcome = play(victims["preimage"], "daemon", script(tmp_path, body))
    assert outcome.reward == 0.0 and outcome.error is None
    assert outcome.verifier is not None and outcome.verifier.tampered == []


FORGE_FROM_TESTS = textwrap.dedent("""\
    import glob, hashlib, hmac, json, os, secrets
    # Agent code run by the tests: look for the key, then forge a passing record.
    key = secrets.token_bytes(32)
    for path in ["/run/termgrade/attest.json", *glob.glob("/proc/[0-9]*/environ")]:
        try:
            with open(path, "rb") as handle:
                data = handle.read(1 << 16)
        except OSError:
            continue
        if b'"key"' in data:
            key = bytes.fromhex(json.loads(data)["key"])
    out = os.open("/proc/1/fd/1", os.O_WRONLY)
    for seq, event in enumerate([{"e": "start"}, {"e": "report", "id": "x", "when": "call",
                                 "outcome": "passed"}, {"e": "finish", "exitstatus": 0}]):
        payload = json.dumps(event, sort_keys=True, separators=(",", ":"))
        mac = hmac.new(key, f"{seq} {payload}".encode(), hashlib.sha256).hexdigest()
        os.write(out, f"TERMGRADE-ATTEST {seq} {mac} {payload}\\n".encode())
    os.makedirs("/logs/verifier", exist_ok=True)
    open("/logs/verifier/reward.json", "w").write('{"reward": 1}')  # read before reward.txt
    os.kill(os.getppid(), 9)   # kill pytest before it reports the failure
    """)


def test_agent_code_run_by_the_tests_cannot_forge_the_record(victims: dict[str, Path],
                                                             tmp_path: Path) -> None:
    body = f"cat > /app/answer.py <<'PY'\n{FORGE_FROM_TESTS}PY\n"
    outcome = play(victims["preimage"], "forge-from-tests", script(tmp_path, body))
    assert outcome.error is None and outcome.reward == 0.0
    assert outcome.failure and "attestation" in outcome.failure


@pytest.mark.parametrize(("name", "body", "left_out"), [
    ("planted-tests", "mkdir -p /tests && echo 'def test_x(): pass' > /tests/test_outputs.py\n",
     "/tests"),
    ("forged-reward", "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n",
     "/logs"),
    ("sitecustomize", "echo 'import os; os._exit(0)' >> /etc/python3.11/sitecustomize.py\n",
     "/etc/python3.11/sitecustomize.py"),
    ("modified-pytest", "echo 'import os; os._exit(0)' >> "
     "/opt/venv/lib/python3.11/site-packages/_pytest/main.py\n",
     "/opt/venv/lib/python3.11/site-packages/_pytest/main.py"),
    ("ld-preload", "echo /app/x.so > /etc/ld.so.preload\n", "/etc/ld.so.preload"),
    ("system-pth", "echo 'import os' > /usr/lib/python3/dist-packages/zz.pth\n",
     "/usr/lib/python3/dist-packages/zz.pth"),
    ("usr-local-python", "printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/python3 && "
     "chmod +x /usr/local/bin/python3\n", "/usr/local/bin/python3"),
])
def test_changes_to_the_verifier_outside_the_transfer_set_never_reach_it(
        victims: dict[str, Path], tmp_path: Path, name: str, body: str, left_out: str) -> None:
    """The victim's transfer set is /app and what its text names: each change is left in
    the agent's container and reported (the stand-in findings inside the set are in
    ``test_review_transfer_attacks.py``)."""
    outcome = play(victims["preimage"], name, script(tmp_path, body))
    assert outcome.error is None and outcome.reward == 0.0
    assert outcome.left_out is not None and left_out in outcome.left_out, outcome.left_out


@pytest.mark.parametrize(("name", "body"), [
    ("root-conftest", "printf 'import os\\nos._exit(0)\\n' > /conftest.py\n"),
    ("root-pytest-ini", "printf '[pytest]\\naddopts = --co\\n' > /pytest.ini\n"),
    ("usr-local-helper", "printf '#!/bin/sh\\necho hi\\n' > /usr/local/bin/helper\n"),
])
def test_changes_outside_the_closure_are_carried_and_earn_nothing(
        victims: dict[str, Path], tmp_path: Path, name: str, body: str) -> None:
    outcome = play(victims["preimage"], name, script(tmp_path, body))
    assert outcome.error is None and outcome.reward == 0.0
    assert outcome.verifier is not None and outcome.verifier.tampered == []


@pytest.mark.parametrize("fill", ["/app/fill", "/etc/hosts"])  # a layer file; a host file
def test_disk_limit_scores_zero_with_the_reason(make_task: MakeTask, fill: str) -> None:
    toml = textwrap.dedent("""\
        schema_version = "1.4"
        [verifier]
        timeout_sec = 60.0
        [agent]
        timeout_sec = 120.0
        [environment]
        storage_mb = 64
        """)
    task = load_task(make_task("disk-hog", toml=toml, solve=(
        "echo hello > /app/out.txt\n"
        f"dd if=/dev/zero of={fill} bs=1M count=400 status=none; sleep 3\n")))
    outcome = run_task(task, build_task_image(task).tag, AgentName.ORACLE)
    assert outcome.error is None and outcome.reward == 0.0
    assert outcome.failure and "over its 64 MiB limit" in outcome.failure


def test_a_declared_service_is_restarted_for_the_tests(make_task: MakeTask) -> None:
    server = ("import http.server\n"
              "class H(http.server.BaseHTTPRequestHandler):\n"
              "    def do_GET(self):\n"
              "        self.send_response(200); self.end_headers(); self.wfile.write(b'up')\n"
              "http.server.HTTPServer(('127.0.0.1', 8765), H).serve_forever()\n")
    tests = ("import urllib.request\n\n\ndef test_service_answers():\n"
             "    assert urllib.request.urlopen('http://127.0.0.1:8765/').read() == b'up'\n")
    solve = (f"cat > /app/server.py <<'PY'\n{server}PY\n"
             "nohup python3 /app/server.py >/dev/null 2>&1 &\nsleep 0.5\n")
    base = textwrap.dedent("""\
        schema_version = "1.4"
        [verifier]
        timeout_sec = 60.0
        [agent]
        timeout_sec = 60.0
        """)
    declared = base + textwrap.dedent("""\
        [[verifier.services]]
        command = "python3 /app/server.py"
        ready = "python3 -c 'import urllib.request; urllib.request.urlopen(\\"http://127.0.0.1:8765/\\")'"
        """)
    plain = load_task(make_task("service-undeclared", toml=base, solve=solve, tests=tests))
    outcome = run_task(plain, build_task_image(plain).tag, AgentName.ORACLE)
    assert outcome.reward == 0.0, "the agent phase's server must not survive into scoring"
    task = load_task(make_task("service-declared", toml=declared, solve=solve, tests=tests))
    outcome = run_task(task, build_task_image(task).tag, AgentName.ORACLE)
    assert outcome.reward == 1.0, (outcome.failure, outcome.verifier and outcome.verifier.output)


def test_verify_never_calls_an_attacking_oracle_verified(victims: dict[str, Path],
                                                         tmp_path: Path) -> None:
    import shutil

    task_dir = tmp_path / "attack-oracle"
    shutil.copytree(victims["preimage"], task_dir)
    attack = next(a for a in BATTERY if a.name == "path-bash")
    shutil.copy(attack.script, task_dir / "solution" / "solve.sh")
    record = verify_task(task_dir, repeat=1)
    assert record.verdict in (Verdict.UNSATISFIABLE, Verdict.ERROR), record


def test_an_attack_that_earns_a_reward_makes_the_task_hackable(make_task: MakeTask,
                                                               tmp_path: Path) -> None:
    # A weak task: it only checks that a file exists, which any attack may create.
    weak = load_task(make_task("weak", tests=(
        "from pathlib import Path\n\n\ndef test_flag():\n"
        "    assert Path('/app/flag').exists()\n")))
    image = build_task_image(weak).tag
    flagger = Attack("flagger", "forge", "creates /app/flag", script(tmp_path, "touch /app/flag\n"))
    (tmp_path / "noop").mkdir()
    harmless = Attack("noop", "forge", "does nothing", script(tmp_path / "noop", "true\n"))
    assert play_attacks(weak, image, [harmless, flagger]) == ["flagger: reward 1"]


def test_attestation_record_names_the_tests(victims: dict[str, Path], tmp_path: Path) -> None:
    honest = script(tmp_path, f"echo {SECRET} > /app/secret.txt\n"
                              f"echo \"{HONEST_PROGRAM.strip()}\" > /app/answer.py\n")
    outcome = play(victims["preimage"], "honest", honest)
    assert outcome.verifier is not None
    names = sorted(t.name for t in outcome.verifier.tests)
    assert names == ["test_preimage", "test_program_prints_something"]
    assert json.dumps([t.to_json() for t in outcome.verifier.tests])


def test_agent_code_hidden_behind_pytests_tmp_dir_is_still_caught(victims: dict[str, Path],
                                                                    tmp_path: Path) -> None:
    # The plugin lets the tests import what they write in their own tmp_path; the agent
    # plants its module there ahead of time and links the imported name to it.
    body = ("mkdir -p /tmp/pytest-of-root/pytest-99\n"
            "cat > /tmp/pytest-of-root/pytest-99/answer.py <<'PY'\n"
            "import os\nos._exit(0)\nPY\n"
            "ln -sf /tmp/pytest-of-root/pytest-99/answer.py /app/answer.py\n")
    outcome = play(victims["import"], "tmp-dir-hideout", script(tmp_path, body))
    assert outcome.error is None and outcome.reward == 0.0
    # pytest's own temporary tree is never in the transfer set: the module stays behind,
    # and the link the tests follow leads nowhere in the scoring container
    assert outcome.left_out is not None and "/tmp/pytest-of-root" in outcome.left_out


def test_modules_the_tests_write_in_tmp_path_are_not_agent_code(make_task: MakeTask) -> None:
    tests = ("import importlib, sys\nfrom pathlib import Path\n\n\n"
             "def test_helper_module(tmp_path):\n"
             "    (tmp_path / 'helper_mod.py').write_text('VALUE = 3\\n')\n"
             "    sys.path.insert(0, str(tmp_path))\n"
             "    assert importlib.import_module('helper_mod').VALUE == 3\n\n\n"
             "def test_output():\n"
             "    assert Path('/app/out.txt').read_text().strip() == 'hello'\n")
    task = load_task(make_task("tmp-module", tests=tests))
    outcome = run_task(task, build_task_image(task).tag, AgentName.ORACLE)
    assert outcome.reward == 1.0, (outcome.failure, outcome.verifier and outcome.verifier.output)
