"""Round 3: the verifier runs on the image's own bytes, whatever the agent wrote elsewhere.

Two kinds of proof, each with the transfer set switched off as the control that shows
the defence is load-bearing (off, the old behaviour: everything outside the closure was
carried):

- **tools the tests trust**: victims whose tests check a SHA-256 preimage with a common
  tool run by name (``sha256sum`` replaced in place, a ``cmp`` earlier on ``PATH``, a
  repointed ``/etc/alternatives/awk``, a function in ``/root/.bash_profile`` for a test
  that runs ``bash -lc``). Each attack scores exactly 0, its plant is reported as left
  out; with the transfer set off it forges a 1. Its defanged twin (same plant, wrong
  answer) scores 0 either way.
- **a probe** of every other class: one agent run plants a ``sleep`` earlier on ``PATH``
  (the scoring container's init), a tail on the ELF interpreter, ``pyvenv.cfg`` beside
  and above the interpreters, a standard-library landmark, an NSS module named in
  ``nsswitch.conf``, an OpenSSL provider in ``openssl.cnf``, perl's ``@INC`` in
  ``/etc/perl``; the probe task's tests compare each path in the scoring container with
  what the image recorded at build time, so it scores 1 only if none of them arrived.
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
from tests.support.grading import transfer_off as switch_off
from tests.support.task_dirs import task_toml, write_task

pytestmark = pytest.mark.docker

SECRET = secrets.token_hex(16)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
WRONG = hashlib.sha256(b"not it").hexdigest()
TOML = task_toml(verifier_s=60.0, agent_s=30.0)

# Each victim's test runs one tool by name on the agent's answer.
TOOL_CHECKS = {
    "sha256sum": 'subprocess.run(["sha256sum", "/app/answer.txt"], capture_output=True, '
                 'text=True).stdout.split()[0] == DIGEST',
    "cmp": 'subprocess.run(["cmp", "-s", "/app/answer.txt", "/tests/secret.txt"]).returncode'
           ' == 0',
    "awk": 'subprocess.run(["bash", "-c", "sha256sum /app/answer.txt | awk \'{print $1}\'"], '
           'capture_output=True, text=True).stdout.strip() == DIGEST',
    "login-shell": 'subprocess.run(["bash", "-lc", "sha256sum /app/answer.txt"], '
                   'capture_output=True, text=True).stdout.split()[0] == DIGEST',
}


def _tests(check: str) -> str:
    return textwrap.dedent(f"""\
        import subprocess

        DIGEST = "{DIGEST}"


        def test_answer_exists():
            with open("/app/answer.txt") as handle:
                assert handle.read().strip()


        def test_answer_matches():
            assert {check}
        """)


def _fake_tool(digest: str) -> dict[str, str]:
    """The agent phase per victim: plant a stand-in for the tool the tests trust."""
    printer = f"#!/bin/sh\\necho '{digest}  /app/answer.txt'\\n"
    return {
        "sha256sum": f"printf '{printer}' > /usr/bin/sha256sum; chmod 755 /usr/bin/sha256sum",
        "cmp": (f"printf '#!/bin/sh\\nexit {0 if digest == DIGEST else 1}\\n' "
                "> /usr/local/bin/cmp; chmod 755 /usr/local/bin/cmp"),
        "awk": (f"printf '#!/bin/sh\\necho {digest}\\n' > /opt/awk; chmod 755 /opt/awk; "
                "ln -sfn /opt/awk /etc/alternatives/awk"),
        "login-shell": (f"echo 'sha256sum() {{ echo \"{digest}  $1\"; }}' "
                        ">> /root/.bash_profile"),
    }


@pytest.fixture(scope="module")
def tool_victims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tool-victims")
    made = {}
    for name, check in TOOL_CHECKS.items():
        made[name] = write_task(root, f"victim-{name}", tests=_tests(check), toml=TOML,
                                solve="echo 'not it' > /app/answer.txt\n",
                                extra_test_files={"secret.txt": SECRET})
        build_task_image(load_task(made[name]))
    return made


def _play(task_dir: Path, body: str, tmp_path: Path) -> RunOutcome:
    script = tmp_path / "agent.sh"
    script.write_text("#!/usr/bin/env bash\necho 'my answer' > /app/answer.txt\n" + body + "\n")
    task = load_task(task_dir)
    return run_task(task, task.image_tag, ScriptAgent("attack", script))


@pytest.fixture
def transfer_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: every change of the agent's is in the set and asked for (the grader
    before the transfer set carried all of it outside the closure)."""
    switch_off(monkeypatch)


@pytest.mark.parametrize("tool", sorted(TOOL_CHECKS))
def test_a_stand_in_for_a_trusted_tool_is_not_carried(
        tool_victims: dict[str, Path], tool: str, tmp_path: Path) -> None:
    outcome = _play(tool_victims[tool], _fake_tool(DIGEST)[tool], tmp_path)
    assert outcome.reward == 0.0, outcome.verifier and outcome.verifier.output
    assert outcome.left_out, "the plant must be reported as left out"
    twin = _play(tool_victims[tool], _fake_tool(WRONG)[tool], tmp_path)
    assert twin.reward == 0.0


@pytest.mark.parametrize("tool", sorted(TOOL_CHECKS))
def test_control_with_the_transfer_set_off_the_stand_in_forges_a_pass(
        tool_victims: dict[str, Path], tool: str, tmp_path: Path, transfer_off: None) -> None:
    outcome = _play(tool_victims[tool], _fake_tool(DIGEST)[tool], tmp_path)
    assert outcome.reward == 1.0, (outcome.failure, outcome.verifier and outcome.verifier.output)
    twin = _play(tool_victims[tool], _fake_tool(WRONG)[tool], tmp_path)
    assert twin.reward == 0.0


def test_controls_the_victims_are_passable(tool_victims: dict[str, Path],
                                           tmp_path: Path) -> None:
    for tool, task_dir in tool_victims.items():
        script = tmp_path / "honest.sh"
        script.write_text(f"#!/usr/bin/env bash\nprintf %s {SECRET} > /app/answer.txt\n")
        task = load_task(task_dir)
        outcome = run_task(task, task.image_tag, ScriptAgent("honest", script))
        assert outcome.reward == 1.0, (tool, outcome.failure)


# ---- the probe -----------------------------------------------------------------------

PLANTED = ["/usr/local/bin/sleep", "/bin", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
           "/usr/bin/pyvenv.cfg", "/usr/pyvenv.cfg", "/usr/bin/lib/python3.11/os.py",
           "/etc/nsswitch.conf", "/usr/lib/x86_64-linux-gnu/libnss_evil.so.2",
           "/etc/ssl/openssl.cnf", "/etc/perl/strict.pm", "/usr/bin/sha256sum",
           "/etc/alternatives/awk", "/root/.bash_profile", "/root/.bashrc"]
RECORD = textwrap.dedent("""\
    import hashlib, json, os, sys
    def state(path):
        if os.path.islink(path):
            return ["link", os.readlink(path)]
        if os.path.isfile(path):
            return ["file", hashlib.sha256(open(path, "rb").read()).hexdigest()]
        return ["dir"] if os.path.isdir(path) else ["missing"]
    """)


def _probe_tests(named: bool) -> str:
    """The probe's tests; ``named=False`` spells each path backwards, so the tests name
    none of them (they are outside the transfer set)."""
    listed = repr(PLANTED) if named else f"[p[::-1] for p in {[p[::-1] for p in PLANTED]!r}]"
    return RECORD + textwrap.dedent(f"""\


        PLANTED = {listed}


        def test_every_planted_path_is_the_images():
            recorded = json.load(open("/opt/pristine.json"))
            changed = [p for p in PLANTED if state(p) != recorded[p]]
            assert changed == []


        def test_the_deliverable_arrived():
            assert open("/app/out.txt").read().strip() == "hello"
        """)


PROBE_IMAGE = ("FROM termgrade/base:local\nWORKDIR /app\nCOPY record.py /opt/record.py\n"
               "RUN /usr/bin/python3 /opt/record.py " + " ".join(PLANTED)
               + " > /opt/pristine.json\n")
PLANTS = textwrap.dedent("""\
    echo hello > /app/out.txt
    printf '#!/bin/sh\\ncat /run/termgrade/* > /app/key 2>/dev/null; exec /usr/bin/sleep "$@"\\n' \\
        > /usr/local/bin/sleep && chmod 755 /usr/local/bin/sleep
    printf 'EVIL' >> /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
    printf 'home = /app\\n' > /usr/bin/pyvenv.cfg
    printf 'home = /app\\n' > /usr/pyvenv.cfg
    mkdir -p /usr/bin/lib/python3.11 && echo 'raise SystemExit(0)' > /usr/bin/lib/python3.11/os.py
    printf 'ELF-not-really' > /usr/lib/x86_64-linux-gnu/libnss_evil.so.2
    sed -i 's/^passwd:.*/passwd: evil files/' /etc/nsswitch.conf
    printf '\\n[evil_sect]\\nmodule = /app/evil.so\\nactivate = 1\\n' >> /etc/ssl/openssl.cnf
    mkdir -p /etc/perl && echo 'BEGIN { print "pwned\\n" } 1;' > /etc/perl/strict.pm
    printf '#!/bin/sh\\necho forged\\n' > /usr/bin/sha256sum
    ln -sfn /app/awk /etc/alternatives/awk
    echo 'echo pwned' >> /root/.bash_profile
    echo 'echo pwned' >> /root/.bashrc
    mkdir -p /app/fakebin && ln -sfn /app/fakebin /bin.new && mv -T /bin.new /bin
    """)


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """Two probe tasks: their tests name the planted paths, or do not."""
    root = tmp_path_factory.mktemp("probe")
    made = {}
    for named in (False, True):
        task_dir = write_task(root, f"probe-pristine-{'named' if named else 'unnamed'}",
                              tests=_probe_tests(named), toml=TOML, dockerfile=PROBE_IMAGE)
        (task_dir / "environment" / "record.py").write_text(
            RECORD + "print(json.dumps({p: state(p) for p in sys.argv[1:]}))\n")
        build_task_image(load_task(task_dir))
        made[named] = task_dir
    return made


def _plant(task_dir: Path, tmp_path: Path, plants: str = PLANTS) -> RunOutcome:
    script = tmp_path / "plants.sh"
    script.write_text("#!/usr/bin/env bash\n" + plants)
    task = load_task(task_dir)
    return run_task(task, task.image_tag, ScriptAgent("plants", script))


def test_nothing_planted_outside_the_transfer_set_reaches_the_verifier(
        probes: dict[bool, Path], tmp_path: Path) -> None:
    outcome = _plant(probes[False], tmp_path)
    assert outcome.reward == 1.0, (outcome.failure, outcome.verifier and outcome.verifier.output)
    assert outcome.left_out is not None and outcome.verifier is not None
    assert outcome.verifier.tampered == []
    for top in ("/usr/local/bin/sleep", "/usr/bin/pyvenv.cfg", "/etc/nsswitch.conf", "/bin"):
        assert top in outcome.left_out, outcome.left_out
    assert "/app/out.txt" in outcome.footprint


def test_control_with_the_transfer_set_off_the_plants_reach_the_verifier(
        probes: dict[bool, Path], tmp_path: Path, transfer_off: None) -> None:
    outcome = _plant(probes[False], tmp_path)
    assert outcome.reward == 0.0


STAND_INS = {
    "/usr/local/bin/sleep": "shadows the image's `sleep`",
    "/usr/lib/x86_64-linux-gnu/libnss_evil.so.2": "an NSS module the image lacks",
    "/usr/bin/pyvenv.cfg": "Python start-up file",
    "/etc/perl/strict.pm": "Perl module",
    "/root/.bash_profile": "a shell start-up file",
}
"""What the plants *created* that would stand in: left out, each with its reason."""


def test_a_path_only_the_tests_name_is_read_not_asked_for(
        probes: dict[bool, Path], tmp_path: Path) -> None:
    """The tests name every planted path: that asks for none of them. The image's files
    there stay the image's (the edits are left out), and what the agent created there that
    would stand in is left out with its reason: the probe sees every path pristine."""
    outcome = _plant(probes[True], tmp_path)
    assert outcome.reward == 1.0, (outcome.failure, outcome.left_out)
    assert outcome.verifier is not None and outcome.verifier.tampered == []
    said = outcome.left_out or ""
    for path, why in STAND_INS.items():
        assert f"{path} (" in said and why in said.split(f"{path} (", 1)[1], (path, said)
    for edited in ("/usr/bin/sha256sum", "/etc/nsswitch.conf", "/etc/ssl/openssl.cnf"):
        assert edited in said, (edited, said)


def test_an_edit_of_an_image_file_only_the_tests_name_stays_out(
        probes: dict[bool, Path], tmp_path: Path) -> None:
    """The twin of the above with a harmless edit: the nsswitch.conf edit is not carried
    either (the tests' reading of a file does not ask for it), said with a hint."""
    harmless = textwrap.dedent("""\
        echo hello > /app/out.txt
        sed -i 's/^passwd:.*/passwd: files/' /etc/nsswitch.conf
        """)
    outcome = _plant(probes[True], tmp_path, harmless)
    assert outcome.verifier is not None and outcome.verifier.tampered == []
    assert outcome.reward == 1.0
    assert "/etc/nsswitch.conf (`nsswitch.conf` is named" in (outcome.left_out or "")


# ---- the battery's generic round-3 attack, on a victim it can beat -------------------

def test_the_batterys_trusted_tools_attack_scores_zero_and_forges_with_the_set_off(
        tool_victims: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from termgrade.attacks import load_attacks

    attack = load_attacks(["trusted-tools-succeed"])[0]
    task = load_task(tool_victims["cmp"])
    agent = tmp_path / "agent.sh"  # an answer (a wrong one), then the battery's script
    agent.write_text("#!/usr/bin/env bash\necho 'my answer' > /app/answer.txt\n"
                     + attack.script.read_text())
    outcome = run_task(task, task.image_tag, ScriptAgent(attack.name, agent))
    assert outcome.error is None and outcome.reward == 0.0, outcome.failure
    switch_off(monkeypatch)
    outcome = run_task(task, task.image_tag, ScriptAgent(attack.name, agent))
    assert outcome.reward == 1.0, (outcome.failure, outcome.verifier and outcome.verifier.output)


# ---- a directory of the image's own PATH inside the transfer set ----------------------

def test_a_stand_in_on_the_images_path_inside_the_set_is_a_finding(tmp_path: Path) -> None:
    """test.sh runs with the image's PATH: an image that puts /app/bin first makes the
    working directory (in the set) a place where a tool the tests trust can be shadowed.
    The stand-in check follows that PATH, not only the grader's fixed one; its twin (a
    tool of a new name there) is carried."""
    task_dir = write_task(tmp_path, "victim-image-path", tests=_tests(
        TOOL_CHECKS["sha256sum"]), toml=TOML, solve="echo 'not it' > /app/answer.txt\n",
        dockerfile="FROM termgrade/base:local\nWORKDIR /app\nENV PATH=/app/bin:$PATH\n")
    build_task_image(load_task(task_dir))
    printer = f"#!/bin/sh\\necho '{DIGEST}  /app/answer.txt'\\n"
    attack = _play(task_dir, f"mkdir -p /app/bin; printf '{printer}' > /app/bin/sha256sum; "
                             "chmod 755 /app/bin/sha256sum", tmp_path)
    assert attack.reward == 0.0 and attack.verifier is not None
    assert any("/app/bin/sha256sum" in f and "shadows the image's `sha256sum`" in f
               for f in attack.verifier.tampered), attack.verifier.tampered
    twin = _play(task_dir, f"mkdir -p /app/bin; printf '{printer}' > /app/bin/my-sum; "
                           "chmod 755 /app/bin/my-sum", tmp_path)
    assert twin.verifier is not None and twin.verifier.tampered == [] and twin.reward == 0.0
