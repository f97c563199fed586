"""Reading Terminus-2 turns (termgrade/agent/terminus_turns.py) and the scaffold's identity
(termgrade/agent/terminus_scaffold.py): no container needed."""

from __future__ import annotations

import json

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.agent.scaffolds import registered, scaffold_for
from termgrade.agent.terminus_prompt import confirmation, first_prompt, parse_error
from termgrade.agent.terminus_turns import DEFAULT_DURATION_S, Keystrokes, parse_turn
from termgrade.grade.reuse import scaffold_digest
from tests.support.scripted_llm import WORD_FREQUENCY_REPLIES
from tests.support.scripted_terminus import MALFORMED_JSON, MISSING_PLAN, NOT_JSON, turn


def test_a_valid_turn_gives_its_commands_in_order() -> None:
    parsed = parse_turn(turn("A", "P", [("ls -la\n", 0.1), ("C-c", 2)]))
    assert parsed.valid and parsed.warnings == ()
    assert (parsed.analysis, parsed.plan, parsed.task_complete) == ("A", "P", False)
    assert parsed.commands == (Keystrokes("ls -la\n", 0.1), Keystrokes("C-c", 2.0))
    assert parsed.step_message("raw") == "Analysis: A\nPlan: P"


def test_harbor_fixture_replies_parse_as_harbor_read_them() -> None:
    """The replies Harbor's own Terminus-2 ran in tests/fixtures/harbor: the one it
    refused (not JSON) is the only one refused here."""
    parsed = [parse_turn(reply) for reply in WORD_FREQUENCY_REPLIES]
    assert [p.valid for p in parsed] == [True, False, True, True, True]
    assert [len(p.commands) for p in parsed] == [2, 0, 3, 0, 0]
    assert [p.task_complete for p in parsed] == [False, False, False, True, True]


@pytest.mark.parametrize(("reply", "error"), [
    (NOT_JSON, "no JSON object"),
    (MALFORMED_JSON, "does not parse"),
    (MISSING_PLAN, "missing required fields: plan"),
    ('{"analysis": "a"}', "missing required fields: plan, commands"),
    ("[1, 2]", "no JSON object"),
    ('{"analysis": "a", "plan": "p", "commands": "ls"}', "'commands' must be a list"),
    ('{"analysis": "a", "plan": "p", "commands": ["ls"]}', "command 1 is not an object"),
    ('{"analysis": "a", "plan": "p", "commands": [{"duration": 1}]}', "no 'keystrokes'"),
    ('{"analysis": "a", "plan": "p", "commands": [{"keystrokes": 5}]}', "must be a string"),
])
def test_an_unusable_reply_is_an_error_and_runs_nothing(reply: str, error: str) -> None:
    parsed = parse_turn(reply)
    assert not parsed.valid and error in str(parsed.error)
    assert parsed.commands == () and not parsed.task_complete
    assert parsed.step_message(reply) == reply  # recorded verbatim, as Harbor records it
    assert error in parse_error(str(parsed.error), parsed.warnings)


def test_no_commands_is_a_valid_turn_that_waits() -> None:
    parsed = parse_turn(turn("Waiting.", "Look again.", []))
    assert parsed.valid and parsed.commands == () and not parsed.task_complete


def test_warnings_do_not_stop_the_commands() -> None:
    reply = ("Here is my answer:\n"
             '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls"}, '
             '{"keystrokes": "pwd\\n", "duration": "soon", "why": 1}]}\nThanks')
    parsed = parse_turn(reply)
    assert parsed.valid
    assert parsed.commands == (Keystrokes("ls", DEFAULT_DURATION_S),
                               Keystrokes("pwd\n", DEFAULT_DURATION_S))
    text = " | ".join(parsed.warnings)
    for expected in ("text before", "text after", "'duration' is missing",
                     "'duration' is not a number", "unknown fields why",
                     "does not end with a newline"):
        assert expected in text


def test_an_unclosed_object_is_repaired_with_a_warning() -> None:
    parsed = parse_turn('{"analysis": "a", "plan": "p", "commands": []')
    assert parsed.valid and "not closed" in parsed.warnings[0]


def test_braces_inside_strings_do_not_end_the_object() -> None:
    keys = "awk '{print $1}' f\n"
    parsed = parse_turn("x " + turn("a}", "p{", [(keys, 0.1)]))
    assert parsed.valid and parsed.commands[0].keys == keys


@pytest.mark.parametrize(("flag", "complete"), [
    (True, True), (False, False), ("true", True), ("False", False), (None, False)])
def test_task_complete_reads_booleans_and_their_words(flag: object, complete: bool) -> None:
    body = {"analysis": "a", "plan": "p", "commands": [], "task_complete": flag}
    assert parse_turn(json.dumps(body)).task_complete is complete


def test_task_complete_with_broken_commands_still_asks_to_finish() -> None:
    body = {"analysis": "a", "plan": "p", "commands": [{"duration": 1}], "task_complete": True}
    parsed = parse_turn(json.dumps(body))
    assert parsed.valid and parsed.task_complete and parsed.commands == ()
    assert any("no 'keystrokes'" in w for w in parsed.warnings)


def test_the_prompt_and_the_confirmation_carry_what_the_model_needs() -> None:
    text = first_prompt("Count the words.", "root@box:/app# \n", workdir="/app",
                        max_turns=9, max_wait_s=60)
    for part in ('"analysis"', '"plan"', '"commands"', '"keystrokes"', '"duration"',
                 '"task_complete"', "Count the words.", "root@box:/app#", "9 replies"):
        assert part in text
    assert confirmation("frame\n").startswith("The terminal now:\nframe")
    assert '"task_complete": true' in confirmation("")


def test_terminus_2_is_registered_with_no_tools_and_its_own_digest() -> None:
    assert set(registered()) >= {"bash-tool", "terminus-2"}
    terminus = scaffold_for("terminus-2")
    assert (terminus.name, terminus.version, terminus.tools) == ("terminus-2", "1", ())
    endpoint = Endpoint("http://127.0.0.1:9/v1", "m", api_key_env=None)
    agent = ModelAgent(endpoint, ScaffoldConfig(), "terminus-2")
    assert scaffold_digest(agent) != scaffold_digest(ModelAgent(endpoint, ScaffoldConfig()))
    other = ModelAgent(endpoint, ScaffoldConfig(max_turns=3), "terminus-2")
    assert scaffold_digest(other) != scaffold_digest(agent)
    identity = terminus.identity(agent)
    assert identity["format"]["required"] == ["analysis", "plan", "commands"]
    assert "{instruction}" in identity["prompt"]


def test_grade_help_names_the_scaffold() -> None:
    from typer.testing import CliRunner

    from termgrade.cli.app import app

    done = CliRunner().invoke(app, ["grade", "--help"], env={"COLUMNS": "200"})
    assert done.exit_code == 0 and "terminus-2" in done.output
