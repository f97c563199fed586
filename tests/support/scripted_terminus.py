"""Test stand-in: scripted policies that play the Terminus-2 turn protocol.

They answer through :class:`tests.support.scripted_tools.ScriptedToolEndpoint` (a real
OpenAI-compatible HTTP server on 127.0.0.1) with text replies: one JSON object per turn
(``analysis``, ``plan``, ``commands`` of keystrokes and durations, ``task_complete``), or
on purpose something that is not one. They are stand-ins, never a model: a policy follows
a fixed script, at most looking for a marker its own commands print in the frames the
scaffold sends back. Stateless: each reply depends only on the request's messages.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

from termgrade.agent.terminus_prompt import CONFIRM
from tests.support.scripted_tools import Messages, Policy, Reply, assistant_turns, text_of

SOLVED = re.compile(r"^TG-SOLVED rc=(\d+)\s*$", re.MULTILINE)
"""The line the replayed solution prints when it is done (the typed command shows
``rc=$?``, which this does not match)."""
SOLUTION_PATH = "/tmp/termgrade-solve.sh"


def turn(analysis: str, plan: str, commands: Sequence[tuple[str, float]] = (),
         *, task_complete: bool = False) -> str:
    """One well-formed Terminus-2 reply."""
    return json.dumps({"analysis": analysis, "plan": plan,
                       "commands": [{"keystrokes": k, "duration": d} for k, d in commands],
                       "task_complete": task_complete}, indent=2)


MALFORMED_JSON = ('{"analysis": "I will list the files.", "plan": "ls", '
                  '"commands": [{"keystrokes": "ls\\n", "duration": 0.1}')
"""Cut off mid-object, a bracket unclosed: closing braces cannot repair it."""
MISSING_PLAN = json.dumps({"analysis": "Nearly there.", "commands": []})
NOT_JSON = "Let me think about this task before I type anything."
DONE = turn("The work is done.", "Mark the task complete.", task_complete=True)
CONFIRMED = turn("Confirmed: the task is done.", "Finish.", task_complete=True)


def _user_texts(messages: Messages) -> list[str]:
    return [text_of(m.get("content")) for m in messages if m.get("role") == "user"]


def solution_keystrokes(script_text: str) -> list[tuple[str, float]]:
    """Two commands: write ``solve.sh`` (base64, one line: no tab reaches the shell's
    completion) and run it, printing the :data:`SOLVED` marker after."""
    encoded = base64.b64encode(script_text.encode()).decode()
    return [(f"echo {encoded} | base64 -d > {SOLUTION_PATH}\n", 0.1),
            (f"bash {SOLUTION_PATH}; echo \"TG-SOLVED rc=$?\"\n", 1.0)]


def replay_solution(script_text: str) -> Policy:
    """Stand-in policy: look around; send a malformed JSON turn, one that is not JSON and
    one missing ``plan``; replay the reference solution as keystrokes; wait with no command
    until the solution's marker shows; then ``task_complete`` and its confirmation."""
    fixed = [
        turn("A fresh shell.", "Look at the working directory first.", [("ls -la\n", 0.1)]),
        MALFORMED_JSON,
        NOT_JSON,
        MISSING_PLAN,
        turn("I know what to do.", "Write the solution script and run it.",
             solution_keystrokes(script_text)),
        turn("The script may still be running.", "Wait and look again.", []),
    ]

    def policy(messages: Messages) -> Reply:
        n = assistant_turns(messages)
        if n < len(fixed):
            return Reply(fixed[n])
        users = _user_texts(messages)
        if CONFIRM in users[-1]:
            return Reply(CONFIRMED)
        if any(SOLVED.search(text) for text in users[1:]):
            return Reply(DONE)
        return Reply(turn("Still running.", "Wait two more seconds.", [("", 2.0)]))

    return policy


def give_up() -> Policy:
    """Stand-in policy: declare the task complete at once, and confirm it."""

    def policy(messages: Messages) -> Reply:
        return Reply(CONFIRMED if assistant_turns(messages) else
                     turn("Nothing to do.", "Mark the task complete.", task_complete=True))

    return policy


def keys(*batches: tuple[str, float], then: str = DONE) -> Policy:
    """Stand-in policy: one turn per keystroke batch, then ``then`` (task_complete, and its
    confirmation) for every later turn."""

    def policy(messages: Messages) -> Reply:
        n = assistant_turns(messages)
        if n < len(batches):
            return Reply(turn(f"Step {n}.", "Type the next keys.", [batches[n]]))
        return Reply(CONFIRMED if CONFIRM in _user_texts(messages)[-1] else then)

    return policy


def frames(requests: Sequence[dict[str, Any]]) -> list[str]:
    """The user messages of the last request: the prompt, then each frame or error."""
    return _user_texts(list(requests[-1]["messages"]))


def replay_by_instruction(solutions: dict[str, str]) -> Policy:
    """Stand-in policy for a run over several tasks: :func:`replay_solution` of the
    ``solve.sh`` whose task's instruction (the key) the first user message holds."""
    by_task = {instruction.strip(): replay_solution(script)
               for instruction, script in solutions.items()}

    def policy(messages: Messages) -> Reply:
        prompt = _user_texts(messages)[0]
        for instruction, replay in by_task.items():
            if instruction in prompt:
                return replay(messages)
        raise AssertionError("a prompt holding none of the tasks' instructions")

    return policy
