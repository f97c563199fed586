"""The tests' own helpers (issue 31, item 5): a module a test writes into ``tmp_path`` and
imports is the tests' code however its text was written (``\\n`` escapes, joined pieces,
an f-string), judged by who wrote the file: the plugin sees the tests' own frames open it
for writing while no other process runs in the container, and takes its identity (inode,
size, change time) before anything else can run. A file the agent's code rewrote after
that, or one the tests wrote while agent code ran beside them or after reading a file of
the agent's (its bytes may be in what they write), is judged by its text again: an
alarm. Each attack has a defanged twin (0) and a load-bearing control (the defence
patched out of the plugin: an attested 1).
"""
from __future__ import annotations

import textwrap

import pytest

from termgrade.agent.kinds import AgentName
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.scoring.verifier import attestation
from termgrade.task import load_task
from tests.support.task_dirs import MakeTask

pytestmark = pytest.mark.docker

# Honest: helpers whose text appears nowhere in the tests' source as lines.
ESCAPED = textwrap.dedent('''\
    import importlib
    import subprocess
    import sys
    from pathlib import Path

    WORD = "hello"


    def _load(tmp_path, name, text):
        (tmp_path / f"{name}.py").write_text(text)
        sys.path.insert(0, str(tmp_path))
        try:
            return importlib.import_module(name)
        finally:
            sys.path.remove(str(tmp_path))


    def test_a_helper_written_with_escapes(tmp_path):
        helper = _load(tmp_path, "esc_helper", "def norm(t):\\n    return t.strip()\\n")
        assert helper.norm(Path("/app/out.txt").read_text()) == WORD


    def test_a_helper_written_from_pieces_and_an_fstring(tmp_path):
        body = "EXPECTED = " + repr(WORD) + "\\n" + f"LENGTH = {len(WORD)}\\n"
        helper = _load(tmp_path, "piece_helper", body)
        assert helper.LENGTH == 5 and Path("/app/out.txt").read_text().strip() == helper.EXPECTED


    def test_a_helper_written_before_the_agents_program_ran(tmp_path):
        (tmp_path / "after_helper.py").write_text("def twice(x):\\n    return x * 2\\n")
        subprocess.run(["/usr/bin/cat", "/app/out.txt"], check=True, capture_output=True)
        sys.path.insert(0, str(tmp_path))
        try:
            assert importlib.import_module("after_helper").twice(2) == 4
        finally:
            sys.path.remove(str(tmp_path))
    ''')

# Attacks: the tests' helper says no honest work passes; the agent's program, which the
# test runs on tmp_path, rewrites it to say yes: after the test wrote it ("now"), or from
# a daemon it left behind, while the test writes and waits ("daemon").
IMPOSSIBLE = textwrap.dedent('''\
    import importlib
    import subprocess
    import sys
    import time


    def test_the_helper_decides(tmp_path):
        subprocess.run(["/app/tool", str(tmp_path), "{mode}"], check=False)
        (tmp_path / "verdict_helper.py").write_text("def passed():\\n    return False\\n")
        if "{mode}" == "now":
            subprocess.run(["/app/tool", str(tmp_path), "now-after"], check=False)
        time.sleep(0.6)
        sys.path.insert(0, str(tmp_path))
        try:
            assert importlib.import_module("verdict_helper").passed()
        finally:
            sys.path.remove(str(tmp_path))
    ''')
TOOL = textwrap.dedent(r'''
    cat > /app/tool <<'SH'
    #!/bin/bash
    # $1: the test's tmp_path; $2: when to act
    forge='def passed():\n    return True\n'
    case "$2" in
      now-after) printf "$forge" > "$1/{target}" ;;
      daemon) ( sleep 0.3; printf "$forge" > "$1/{target}" ) >/dev/null 2>&1 & ;;
    esac
    true
    SH
    chmod +x /app/tool
    ''').lstrip("\n")


def grade(make_task: MakeTask, task_id: str, tests: str, solve: str = "") -> RunOutcome:
    pieces: dict[str, str] = {"tests": tests}
    if solve:
        pieces["solve"] = solve
    task = load_task(make_task(task_id, **pieces))  # type: ignore[arg-type]
    return run_task(task, build_task_image(task).tag, AgentName.ORACLE)


def attack(make_task: MakeTask, task_id: str, mode: str, target: str) -> RunOutcome:
    return grade(make_task, task_id, IMPOSSIBLE.replace("{mode}", mode),
                 "echo hello > /app/out.txt\n" + TOOL.replace("{target}", target))


def test_helpers_the_tests_write_however_written_score_exactly_one(make_task: MakeTask) -> None:
    outcome = grade(make_task, "own-helpers", ESCAPED)
    assert outcome.reward == 1.0, (outcome.failure, outcome.verifier
                                   and outcome.verifier.output[-3000:])
    assert outcome.verifier is not None and outcome.verifier.attested
    assert len(outcome.verifier.tests) == 3


@pytest.mark.parametrize("mode", ["now", "daemon"])
def test_a_helper_the_agents_program_rewrote_scores_zero(make_task: MakeTask,
                                                          mode: str) -> None:
    outcome = attack(make_task, f"helper-{mode}", mode, "verdict_helper.py")
    assert outcome.reward == 0.0
    assert "verdict_helper.py" in (outcome.failure or ""), outcome.failure


@pytest.mark.parametrize("mode", ["now", "daemon"])
def test_twin_the_agents_program_rewrites_another_file_scores_zero(make_task: MakeTask,
                                                                    mode: str) -> None:
    outcome = attack(make_task, f"helper-twin-{mode}", mode, "unused.py")
    assert outcome.reward == 0.0
    assert "unused.py" not in (outcome.failure or "")
    if mode == "now":  # the helper was written while only the tests ran: theirs
        assert outcome.verifier is not None and not outcome.verifier.tampered
    # (with agent code running beside the test, the helper is judged by its text again)


WEAKENED = {
    # the identity is not compared: a file the tests once wrote stays theirs
    "now": (b"return known is not None and _identity(real) == known",
            b"return known is not None"),
    # other processes are not looked for: a write while agent code runs counts
    "daemon": (b"return bool(_GRADER_PIDS) and _pids() <= _GRADER_PIDS", b"return True"),
}


@pytest.mark.parametrize("mode", list(WEAKENED))
def test_load_bearing_without_the_check_the_rewrite_forges_an_attested_one(
        make_task: MakeTask, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    source = attestation.plugin_source()
    old, new = WEAKENED[mode]
    assert old in source
    monkeypatch.setattr(attestation, "plugin_source", lambda: source.replace(old, new))
    outcome = attack(make_task, f"helper-open-{mode}", mode, "verdict_helper.py")
    assert outcome.reward == 1.0 and outcome.verifier is not None \
        and outcome.verifier.attested, (outcome.failure, outcome.verifier
                                        and outcome.verifier.output[-2000:])


# The tests write the agent's bytes themselves: a copy of the agent's module, imported.
COPIES = textwrap.dedent('''\
    import importlib
    import sys
    from pathlib import Path


    def test_the_copied_answer_decides(tmp_path):
        text = Path("/app/answer.py").read_text()
        (tmp_path / "copied_answer.py").write_text(text)
        sys.path.insert(0, str(tmp_path))
        try:
            assert importlib.import_module("copied_answer").passed()
        finally:
            sys.path.remove(str(tmp_path))
    ''')
ANSWER = "cat > /app/answer.py <<'PY'\ndef passed():\n    return {value}\nPY\n"


@pytest.mark.parametrize("value", ["True", "False"], ids=["attack", "twin"])
def test_a_helper_the_tests_copy_from_the_agents_file_is_judged_by_its_text(
        make_task: MakeTask, value: str) -> None:
    outcome = grade(make_task, f"helper-copy-{value}", COPIES, ANSWER.format(value=value))
    assert outcome.reward == 0.0
    assert "copied_answer" in (outcome.failure or ""), outcome.failure


def test_load_bearing_without_the_read_check_the_copy_forges_an_attested_one(
        make_task: MakeTask, monkeypatch: pytest.MonkeyPatch) -> None:
    source = attestation.plugin_source()
    old = b"_READ_AGENTS[1 if _IN_TEST else 0] = True"
    assert old in source
    monkeypatch.setattr(attestation, "plugin_source", lambda: source.replace(old, b"pass"))
    outcome = grade(make_task, "helper-copy-open", COPIES, ANSWER.format(value="True"))
    assert outcome.reward == 1.0 and outcome.verifier is not None \
        and outcome.verifier.attested, (outcome.failure, outcome.verifier
                                        and outcome.verifier.output[-2000:])
