"""The grader's own processes owe nothing to the agent's files (issue 31, item 2).

Each attack is an agent phase on a task no honest agent can pass (the tests check a
SHA-256 preimage of a random digest; ``answer.py`` prints ``/app/secret.txt``). The
attack holds the answer but can deliver it only through code that one of the grader's
own processes runs in the scoring container: so it scores 1 exactly when that process
runs the agent's code unchecked. Each has a defanged twin (the same files, the effect
off) that also scores 0, and each checks the mechanism itself (the init's absolute
path, no key on B's filesystem, a random socket name, the fixed environment), so the
test stays load-bearing on this defence whatever else the grader adds.

Classes closed here:

- **a PATH-found init**: a ``/usr/local/bin/sleep`` that, as B's first process, reads
  the run's key from the broker's standard input before the broker does and signs a
  passing record itself;
- **a standard library of the agent's for the broker**: a ``/usr/bin/pyvenv.cfg`` whose
  ``home`` leads Python (even ``-I -S``) to a stdlib the agent wrote;
- **a squatted socket**: a process that binds the broker's name before the broker;
- **NSS lookups**: an NSS module named in ``/etc/nsswitch.conf``, loaded into the grader's
  bash when ``SHELL`` is unset (and into pytest by ``tmp_path`` when ``USER`` is);
- **a mapping of an agent file in a keyed process**: a module a test loads into pytest
  (``pwd.getpwuid`` through the same NSS module) raises an alarm at the session's end.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import textwrap
from pathlib import Path, PurePosixPath

import pytest

from termgrade.agent.kinds import ScriptAgent
from termgrade.sandbox.docker_sandbox import DockerSandbox
from termgrade.sandbox.engine import docker_client
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.review.closure import find_closure
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.scoring.verifier.attestation import broker_source, watch_source
from termgrade.scoring.verifier.command import verifier_env
from termgrade.scoring.verifier.grader_procs import PAUSE, grader_procs
from termgrade.task import load_task
from tests.support.grading import transfer_off
from tests.support.task_dirs import task_toml, write_task

pytestmark = pytest.mark.docker

SECRET = secrets.token_hex(16)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
ANSWER = "print(open('/app/secret.txt').read().strip())\n"
ANSWER_STEP = f"cat > /app/answer.py <<'PY'\n{ANSWER}PY\n"
B_ONLY = "/opt/termgrade-grader"
"""Present only in the scoring container: the attacks act there, never in A."""

PREIMAGE_TESTS = textwrap.dedent(f"""\
    import hashlib
    import subprocess


    def answer():
        done = subprocess.run(["/usr/bin/python3", "/app/answer.py"], capture_output=True,
                              text=True, timeout=60)
        return done.stdout.strip()


    def test_preimage():
        assert hashlib.sha256(answer().encode()).hexdigest() == "{DIGEST}"
    """)
# The same check, after a look-up of the file owner's name (an honest test does that).
PWD_TESTS = PREIMAGE_TESTS.replace(
    "def test_preimage():\n", "def test_preimage():\n    import pwd\n    assert pwd.getpwuid(0)\n")
# The same check in a test that uses ``tmp_path`` (pytest asks who runs it, unless USER).
TMP_PATH_TESTS = PREIMAGE_TESTS.replace("def test_preimage():", "def test_preimage(tmp_path):")
TOML = task_toml(verifier_s=60.0, agent_s=120.0)

# 1. A PATH-found init. As B's first process it would run before the grader's exec: it
#    reads the broker's configuration (the key) from the exec's stdin before the broker,
#    then signs a complete passing session, the end marker and a reward of 1.
STEAL_AND_FORGE = textwrap.dedent(f"""\
    #!/usr/bin/python3
    import hashlib, hmac, json, os, sys, time
    ARMED = True
    if not os.path.isdir("{B_ONLY}") or not ARMED:
        os.execv("/usr/bin/sleep", ["sleep", *sys.argv[1:]])
    def derive(master, label):
        return hmac.new(master, label.encode(), hashlib.sha256).digest()
    config = None
    deadline = time.time() + 60
    while config is None and time.time() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if b"test.sh" not in open(f"/proc/{{pid}}/cmdline", "rb").read():
                    continue
                fd = os.open(f"/proc/{{pid}}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
                line = os.read(fd, 1 << 20)
                if line.startswith(b"{{"):
                    config = json.loads(line.split(b"\\n")[0])
                    break
            except (OSError, ValueError):
                continue
        time.sleep(0.0005)
    if config is None:
        os.execv("/usr/bin/sleep", ["sleep", "infinity"])
    master = bytes.fromhex(config["key"])
    out = os.open("/proc/1/fd/1", os.O_WRONLY)
    def sign(stream, events):
        key = derive(master, f"session {{stream}}")
        for seq, event in enumerate(events):
            payload = json.dumps(event, sort_keys=True, separators=(",", ":"))
            tag = f"{{stream}}.{{seq}}"
            mac = hmac.new(key, f"{{tag}} {{payload}}".encode(), hashlib.sha256).hexdigest()
            os.write(out, f"TERMGRADE-ATTEST {{tag}} {{mac}} {{payload}}\\n".encode())
    test = "test_outputs.py::test_preimage"
    sign(0, [{{"e": "broker", "pid": 7}}, {{"e": "session", "n": 1, "pid": 8, "argv": "x"}}])
    sign(1, [{{"e": "open"}}, {{"e": "start", "collect_only": False}},
             {{"e": "collected", "n": 1}},
             *({{"e": "report", "id": test, "when": w, "outcome": "passed"}}
               for w in ("setup", "call", "teardown")),
             {{"e": "finish", "exitstatus": 0}}, {{"e": "close"}}])
    os.makedirs("/logs/verifier", exist_ok=True)
    with open("/logs/verifier/reward.txt", "w") as handle:
        handle.write("1\\n")
    sign(0, [])
    end = derive(master, "end").hex()[:32]
    key0 = derive(master, "session 0")
    payload = json.dumps({{"e": "end", "sessions": 1}}, sort_keys=True, separators=(",", ":"))
    mac = hmac.new(key0, f"0.2 {{payload}}".encode(), hashlib.sha256).hexdigest()
    os.write(out, f"TERMGRADE-ATTEST 0.2 {{mac}} {{payload}}\\n".encode())
    os.write(out, f"TERMGRADE-END {{end}}\\n".encode())
    os.execv("/usr/bin/sleep", ["sleep", "infinity"])
    """)


def planted_init(armed: bool) -> str:
    text = STEAL_AND_FORGE.replace("ARMED = True", f"ARMED = {armed}")
    return (f"cat > /usr/local/bin/sleep <<'PY'\n{text}PY\n"
            "chmod +x /usr/local/bin/sleep\n" + ANSWER_STEP)


# 3. An NSS module the agent compiled and named in nsswitch.conf. Its constructor writes
#    the answer, in the scoring container only, into whatever process loads it.
NSS_SOURCE = textwrap.dedent(f"""\
    #include <stdio.h>
    #include <unistd.h>
    __attribute__((constructor)) static void planted(void) {{
        if (ARMED && access("{B_ONLY}", F_OK) == 0) {{
            FILE *out = fopen("/app/secret.txt", "w");
            if (out) {{ fputs("{SECRET}\\n", out); fclose(out); }}
        }}
    }}
    """)


def planted_nss(armed: bool) -> str:
    source = NSS_SOURCE.replace("ARMED", "1" if armed else "0")
    return textwrap.dedent(f"""\
        cat > /tmp/nss.c <<'C'
        {textwrap.indent(source, '        ').strip()}
        C
        gcc -shared -fPIC -o /usr/lib/x86_64-linux-gnu/libnss_planted.so.2 /tmp/nss.c
        rm /tmp/nss.c
        sed -i 's/^passwd:.*/passwd: planted files/; s/^group:.*/group: planted files/' \\
            /etc/nsswitch.conf
        """) + ANSWER_STEP


def grade(tmp_path: Path, name: str, solve: str, tests: str = PREIMAGE_TESTS,
          *, keep: bool = False) -> tuple[RunOutcome, str]:
    task = load_task(write_task(tmp_path, f"grader-{name}", tests=tests, toml=TOML,
                                solve="echo nothing > /app/answer.py\n"))
    image = build_task_image(task).tag
    agent_script = tmp_path / f"{name}.sh"
    agent_script.write_text("#!/usr/bin/env bash\nset -e\n" + solve)
    return run_task(task, image, ScriptAgent(name, agent_script), keep=keep), image


def scoring_container(name: str) -> object:
    found = [c for c in docker_client().containers.list(
        all=True, filters={"name": f"termgrade-grader-{name}-"}) if "-score-" in c.name]
    assert len(found) == 1, [c.name for c in found]
    return found[0]


def remove_kept(name: str) -> None:
    for container in docker_client().containers.list(
            all=True, filters={"name": f"termgrade-grader-{name}-"}):
        container.remove(force=True)


def test_control_the_answer_passes(tmp_path: Path) -> None:
    outcome, _ = grade(tmp_path, "control", f"echo {SECRET} > /app/secret.txt\n" + ANSWER_STEP)
    assert outcome.reward == 1.0, (outcome.failure, outcome.verifier and outcome.verifier.output)
    assert outcome.verifier is not None and outcome.verifier.attested


@pytest.mark.parametrize("armed", [True, False], ids=["attack", "defanged"])
def test_a_planted_sleep_never_runs_as_the_scoring_containers_init(tmp_path: Path,
                                                                   armed: bool) -> None:
    name = f"init-{armed}".lower()
    remove_kept(name)
    try:
        outcome, _ = grade(tmp_path, name, planted_init(armed), keep=True)
        assert outcome.error is None and outcome.reward == 0.0, outcome.failure
        assert outcome.verifier is not None and outcome.verifier.tampered == []
        box = scoring_container(name)
        box.reload()
        command = box.attrs["Config"]["Cmd"]
        assert command[0].startswith("/") and command[1:] == ["-c", PAUSE], command
        assert box.attrs["HostConfig"]["Init"] is True
    finally:
        remove_kept(name)


def test_the_key_is_on_no_file_of_the_scoring_container(tmp_path: Path) -> None:
    """After a run, nothing in B's writable layer or its grader directory holds a key or
    the broker's configuration: it arrived on the broker's stdin only."""
    name = "nokey"
    remove_kept(name)
    try:
        outcome, _ = grade(tmp_path, name, f"echo {SECRET} > /app/secret.txt\n" + ANSWER_STEP,
                           keep=True)
        assert outcome.reward == 1.0, outcome.failure
        box = scoring_container(name)
        upper = box.attrs["GraphDriver"]["Data"]["UpperDir"]
        grader = next(m["Source"] for m in box.attrs["Mounts"]
                      if m["Destination"] == B_ONLY)
        for root in (upper, grader):
            for path in Path(root).rglob("*"):
                if path.is_file() and not path.is_symlink():
                    data = path.read_bytes()
                    assert not re.search(rb'"key": *"[0-9a-f]{64}"', data), path
    finally:
        remove_kept(name)


@pytest.mark.parametrize("tests", [PREIMAGE_TESTS, TMP_PATH_TESTS], ids=["bash", "tmp-path"])
@pytest.mark.parametrize("armed", [True, False], ids=["attack", "defanged"])
def test_an_nss_module_is_never_loaded_by_the_grader_shell_or_pytest(
        tmp_path: Path, armed: bool, tests: str) -> None:
    outcome, _ = grade(tmp_path, f"nss-{armed}".lower(), planted_nss(armed), tests)
    assert outcome.error is None and outcome.reward == 0.0, outcome.failure
    # Nothing loaded it: the tests failed as tests, with no alarm.
    assert outcome.verifier is not None and not outcome.verifier.tampered
    assert outcome.failure is None or "mapping" not in outcome.failure


@pytest.mark.parametrize("armed", [True, False], ids=["attack", "defanged"])
def test_a_keyed_pytest_that_maps_an_agent_file_raises_an_alarm(
        tmp_path: Path, armed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests themselves look a user up: the agent's NSS module is loaded into pytest
    (and writes the answer, armed): the end-of-session mapping check makes it 0. The
    transfer set would leave the module out; it is off here, so the check is shown to
    stand on its own."""
    transfer_off(monkeypatch)
    outcome, _ = grade(tmp_path, f"maps-{armed}".lower(), planted_nss(armed), PWD_TESTS)
    assert outcome.error is None and outcome.reward == 0.0, outcome.failure
    assert outcome.failure and "mapping" in outcome.failure
    assert "libnss_planted.so.2" in outcome.failure


def test_the_verifier_env_asks_nss_nothing(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path, "env-task"))
    env = verifier_env(task, "plugin_x", shell="/usr/bin/bash")
    assert env["USER"] == env["LOGNAME"] == "root" and env["HOME"] == "/root"
    assert env["SHELL"] == "/usr/bin/bash"
    assert env["OPENSSL_CONF"].startswith(B_ONLY + "/")
    assert env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1" and env["PYTEST_PLUGINS"] == "plugin_x"


# 2. Squatting the broker's name: only a name known in advance can be squatted, and the
#    name is random per trial. A squatter on the name (told it, as the defanged twin is)
#    keeps the broker from starting at all, which is a 0, never a forged grant.
SQUAT = ("import os, socket, sys, time\n"
         "s = socket.socket(socket.AF_UNIX)\ns.bind('\\0' + sys.argv[1])\ns.listen(1)\n"
         "print('bound', flush=True)\ntime.sleep(60)\n")


def _broker_run(box: DockerSandbox, python: str, socket_name: str) -> tuple[int, str]:
    config = {"key": secrets.token_hex(32), "socket": socket_name, "trusted": [],
              "services": [], "tools": [], "pythons": [], "transfer_roots": []}
    run = box.exec([python, "-I", "-S", "/tmp/broker.py"], timeout_s=20,
                   stdin=json.dumps(config).encode() + b"\n")
    return run.exit_code, run.output


@pytest.mark.parametrize("knows_name", [False, True], ids=["guess", "told"])
def test_a_squatter_cannot_take_the_brokers_name(tmp_path: Path, knows_name: bool) -> None:
    closure = find_closure("termgrade/base:local")
    procs = grader_procs(closure, "/usr/bin")
    other = grader_procs(closure, "/usr/bin")
    assert procs is not None and other is not None
    assert procs.socket != other.socket and "attest" not in procs.socket
    (tmp_path / "broker.py").write_bytes(broker_source())
    (tmp_path / "termgrade_watch.py").write_bytes(watch_source())
    (tmp_path / "squat.py").write_text(SQUAT)
    box = DockerSandbox.start("termgrade/base:local", label="squat",
                              command=procs.init_command())
    try:
        box.copy_in(tmp_path / "broker.py", PurePosixPath("/tmp"))
        box.copy_in(tmp_path / "termgrade_watch.py", PurePosixPath("/tmp"))
        box.copy_in(tmp_path / "squat.py", PurePosixPath("/tmp"))
        guessed = procs.socket if knows_name else "termgrade-attest"
        box.exec(["/usr/bin/bash", "-c", f"{procs.python} /tmp/squat.py {guessed} "
                  "> /tmp/squat.log 2>&1 & for i in $(seq 100); do grep -q bound "
                  "/tmp/squat.log && exit 0; sleep 0.05; done; exit 1"], timeout_s=20)
        code, output = _broker_run(box, procs.python, procs.socket)
        if knows_name:
            assert code != 0 and "Address already in use" in output, output
        else:
            assert code == 0 and output.strip().isdigit(), output
    finally:
        box.close()


# 6. A pyvenv.cfg beside the image's Python: `python -I -S` takes its stdlib from `home`.
#    The agent's copy of the stdlib answers, when the broker imports hmac.
PLANTED_HMAC = textwrap.dedent(f"""\

    import os as _os, sys as _sys
    if ARMED and _os.path.isdir("{B_ONLY}") and _sys.argv[0].endswith("termgrade_broker.py"):
        with open("/app/secret.txt", "w") as _out:
            _out.write("{SECRET}\\n")
    """)


def planted_stdlib(armed: bool) -> str:
    return (ANSWER_STEP + "mkdir -p /app/evil/bin /app/evil/lib\n"
            "cp -r /usr/lib/python3.11 /app/evil/lib/\n"
            # the image's own extension modules: no mapping of a file the agent wrote
            "rm -r /app/evil/lib/python3.11/lib-dynload\n"
            "ln -s /usr/lib/python3.11/lib-dynload /app/evil/lib/python3.11/lib-dynload\n"
            f"cat >> /app/evil/lib/python3.11/hmac.py <<'PY'\n"
            f"{PLANTED_HMAC.replace('ARMED', str(armed))}PY\n"
            "echo 'home = /app/evil/bin' > /usr/bin/pyvenv.cfg\n")


@pytest.mark.parametrize("armed", [True, False], ids=["attack", "defanged"])
def test_a_pyvenv_cfg_gives_the_broker_no_stdlib_of_the_agents(tmp_path: Path,
                                                               armed: bool) -> None:
    outcome, _ = grade(tmp_path, f"pyvenv-{armed}".lower(), planted_stdlib(armed))
    assert outcome.error is None and outcome.reward == 0.0, outcome.failure
    assert outcome.verifier is not None and "1 failed" in outcome.verifier.output


def _isolated_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    import termgrade.scoring.verifier.run as score

    home_set = score.verifier_command

    def isolated(task: object, python: str, bash: str, home: str) -> list[str]:
        command = home_set(task, python, bash, home)  # type: ignore[arg-type]
        command[-1] = command[-1].replace(f"PYTHONHOME={home} PYTHONPATH= {python} -s -S",
                                          f"{python} -I -S")
        return command

    monkeypatch.setattr(score, "verifier_command", isolated)


def _init_by_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.scoring.verifier.grader_procs import GraderProcs

    monkeypatch.setattr(GraderProcs, "init_command", lambda self: ["sleep", "infinity"])


def _nss_asking_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import termgrade.scoring.verifier.run as score
    from termgrade.scoring.verifier.grader_procs import GraderProcs

    fixed = score.verifier_env

    def asking(*args: object, **kwargs: object) -> dict[str, str]:
        env = fixed(*args, **kwargs)  # type: ignore[arg-type]
        return {k: v for k, v in env.items() if k not in ("USER", "LOGNAME", "SHELL")}

    monkeypatch.setattr(score, "verifier_env", asking)
    monkeypatch.setattr(GraderProcs, "container_env", lambda self: {})
    # and the broker's look at test.sh's own mappings, which refuses a key below a shell
    # that loaded the module (test_verifier_session_keys.py shows it standing alone)
    ancestor_maps_off(monkeypatch)


def ancestor_maps_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.scoring.verifier import attestation

    source = attestation.broker_source()
    check = b"mapped = foreign_mappings(str(parent), config)"
    assert check in source
    weak = source.replace(check, b"mapped = []")
    monkeypatch.setattr(attestation, "broker_source", lambda: weak)


def _no_mapping_check(monkeypatch: pytest.MonkeyPatch) -> None:
    import termgrade.scoring.score as score

    monkeypatch.setattr(score, "transfer_roots", lambda review, transfer: [])


@pytest.mark.parametrize(("defence_off", "solve", "tests"), [
    (_init_by_path, planted_init(True), PREIMAGE_TESTS),
    (_isolated_broker, planted_stdlib(True), PREIMAGE_TESTS),
    (_nss_asking_env, planted_nss(True), PREIMAGE_TESTS),
    (_no_mapping_check, planted_nss(True), PWD_TESTS),
], ids=["init-by-path", "broker-python-I", "env-asks-nss", "no-mapping-check"])
def test_each_defence_is_load_bearing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      defence_off: object, solve: str, tests: str) -> None:
    """With one defence taken out of the grader (and the transfer set, which stands before
    all of them, off), its attack above forges an attested 1."""
    transfer_off(monkeypatch)
    defence_off(monkeypatch)  # type: ignore[operator]
    outcome, _ = grade(tmp_path, "off", solve, tests)
    assert outcome.reward == 1.0, (outcome.failure, outcome.verifier and outcome.verifier.output)
    assert outcome.verifier is not None and outcome.verifier.attested


# 4. The writable /tests: agent code test.sh runs before pytest rewrites the tests, or agent
#    code the tests run drops a file there. test.sh here runs the agent's prepare step.
PREPARE_TEST_SH = """\
#!/usr/bin/env bash
mkdir -p /logs/verifier
bash /app/prepare.sh
cd /tests
/opt/venv/bin/python -m pytest -c /dev/null --rootdir=/tests --confcutdir=/tests \\
  -p no:cacheprovider -rA /tests/test_outputs.py
if [ $? -eq 0 ]; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""
REWRITE = ("cat > /app/prepare.sh <<'SH'\nprintf 'def test_preimage():\\n    pass\\n' "
           "> {target}\nSH\n")
DROP_FROM_TESTS = ("cat > /app/answer.py <<'PY'\nopen('/tests/{name}', 'w').write('x')\n"
                   "print('nothing')\nPY\n")


@pytest.mark.parametrize(("name", "solve", "alarm"), [
    ("rewrite", REWRITE.format(target="/tests/test_outputs.py"), "a file of the tests changed"),
    ("rewrite-defanged", REWRITE.format(target="/app/test_outputs.py"), None),
    ("drop", "echo true > /app/prepare.sh\n" + DROP_FROM_TESTS.format(name="zz.py"),
     "written while the tests ran"),
    ("drop-defanged", "echo true > /app/prepare.sh\n"
     + DROP_FROM_TESTS.format(name="").replace("/tests/", "/tmp/zz"), None),
])
def test_agent_code_cannot_rewrite_the_writable_tests(tmp_path: Path, name: str, solve: str,
                                                      alarm: str | None) -> None:
    task = load_task(write_task(tmp_path, f"grader-tests-{name}", tests=PREIMAGE_TESTS,
                                toml=TOML, test_sh=PREPARE_TEST_SH,
                                solve="echo nothing > /app/answer.py\n"))
    agent_script = tmp_path / "agent.sh"
    agent_script.write_text("#!/usr/bin/env bash\nset -e\n" + solve)
    outcome = run_task(task, build_task_image(task).tag, ScriptAgent(name, agent_script))
    assert outcome.error is None and outcome.reward == 0.0, outcome.failure
    if alarm is None:
        assert outcome.failure is None or "verifier-changed" not in outcome.failure
    else:
        assert outcome.failure and alarm in outcome.failure, outcome.failure


# 5. `/lib64` repointed at a directory of the agent's, holding a bogus loader: every dynamic
#    program the kernel starts in B would run it. The image's loader is mounted read-only
#    where the link leads, so the grader's processes still start on the image's bytes; the
#    keyed pytest then maps a path the agent made, and the alarm makes it 0.
REPOINT_LIB64 = (f"echo {SECRET} > /app/secret.txt\n" + ANSWER_STEP
                 + "mkdir -p /app/l && echo junk > /app/l/ld-linux-x86-64.so.2\n"
                 "ln -sfn /app/l /lib64\n")


def test_a_repointed_lib64_runs_the_images_loader_and_raises_the_alarm(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The transfer set leaves a repointed /lib64 out: the image's loader runs and the
    reward is the (right) answer's own; the bogus loader in /app is carried, harmless (the
    loader never finds it by name there). With the set off, the loader mount and the
    mapping alarm still hold."""
    on, _ = grade(tmp_path, "lib64-set", REPOINT_LIB64)
    assert on.left_out is not None and "/lib64" in on.left_out
    assert on.verifier is not None and on.verifier.tampered == [] and on.reward == 1.0
    transfer_off(monkeypatch)
    outcome, _ = grade(tmp_path, "lib64", REPOINT_LIB64)
    assert outcome.error is None and outcome.reward == 0.0, outcome.failure
    assert outcome.verifier is not None and "1 passed" in outcome.verifier.output
    assert outcome.failure and "mapping: /app/l/ld-linux-x86-64.so.2" in outcome.failure


def test_without_the_loader_mount_the_scoring_container_cannot_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.scoring.verifier.grader_procs import GraderProcs

    transfer_off(monkeypatch)
    monkeypatch.setattr(GraderProcs, "mounts", lambda self, view: {})
    outcome, _ = grade(tmp_path, "lib64-off", REPOINT_LIB64)
    assert outcome.reward == 0.0 and outcome.failure and "not running" in outcome.failure
