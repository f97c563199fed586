"""What the Terminus-2-style scaffold tells the model, in its words (TermGrade's own).

The first user message is :data:`PROMPT` (the JSON turn format, then the task and the
terminal's first frame); there is no system message, as in Terminus-2. Each later user
message is one of: the terminal frame after the turn's keystrokes (warnings first, when
the reply had some); the parse error of a reply nothing of which ran; or, the first time
a reply sets ``task_complete``, the frame and :data:`CONFIRM` (a second reply that sets it
ends the episode). The format these messages follow is Harbor's Terminus-2 protocol; the
prose is written here.
"""

from __future__ import annotations

from termgrade.core.text import head_and_tail

PROMPT = """\
You are working in a Linux terminal to solve a task. Each of your replies sends keystrokes \
to an interactive bash shell (a tmux session, as root, in {workdir}); after each reply you \
see what the terminal shows. There is no network access.

Reply with exactly one JSON object and nothing else:

{{
  "analysis": "What the terminal shows now, what is done and what is left.",
  "plan": "What you will do next and why.",
  "commands": [
    {{"keystrokes": "cat notes.txt\\n", "duration": 0.1}},
    {{"keystrokes": "make test\\n", "duration": 5.0}}
  ],
  "task_complete": false
}}

Fields:
- "analysis" (string, required), "plan" (string, required).
- "commands" (list, required; may be empty to just wait and look again). Each command has
  "keystrokes" (string, required), typed exactly as written, and "duration" (number of
  seconds to wait before the next command, default 1.0; at most {max_wait:g}).
- "task_complete" (boolean, optional, default false): set it to true once the task is
  done. You will be asked to confirm; setting it again ends your turns and the task is
  graded.

Keystrokes are literal: end a command with "\\n" to run it. A string that is exactly a
tmux key name is sent as that key, e.g. "C-c" (Ctrl+C) or "C-d" (Ctrl+D). Pick short
durations for quick commands (0.1 s for ls or cat) and longer ones for builds; you can
always wait more by sending an empty "commands" list. Invalid JSON runs nothing.

You have at most {max_turns} replies.

The task:
{instruction}

The terminal now:
{frame}"""

CONFIRM = ("You set \"task_complete\": true. Once confirmed, the task is graded and you "
           "cannot change anything any more. To confirm, reply again with "
           "\"task_complete\": true; to keep working, send more commands.")
"""Asked the first time a reply sets ``task_complete`` (after the terminal's frame)."""

CONFIRM_HEADER = "The terminal now:"

PARSE_ERROR = ("Your last reply could not be used, so nothing was typed:\n{problems}\n\n"
               "Reply with one valid JSON object in the format given at the start.")
"""The next user message after a reply with an error (:mod:`terminus_turns`)."""

SESSION_GONE = "The terminal's shell has exited: the session is over."
"""The last observation when the keys ended the shell (``exit``, Ctrl+D); never sent."""

WARNINGS = "Your last reply had warnings:\n{problems}\n\n{frame}"

NEW_OUTPUT = "New terminal output:\n"
SCREEN = "Current terminal screen:\n"
"""The two kinds of frame: what appeared since the last one, or (when that cannot be
told: a cleared screen, a full-screen program) the visible screen."""


def bullets(lines: tuple[str, ...] | list[str]) -> str:
    return "\n".join(f"- {line}" for line in lines)


def parse_error(error: str, warnings: tuple[str, ...]) -> str:
    return PARSE_ERROR.format(problems=bullets([f"error: {error}", *warnings]))


def with_warnings(frame: str, warnings: tuple[str, ...]) -> str:
    return WARNINGS.format(problems=bullets(warnings), frame=frame) if warnings else frame


def confirmation(frame: str) -> str:
    return f"{CONFIRM_HEADER}\n{frame}\n\n{CONFIRM}"


def limit_frame(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters; else its head and tail, the cut said."""
    return head_and_tail(text, limit, "; run a narrower command (head, tail, grep) to see it")


def first_prompt(instruction: str, frame: str, *, workdir: str, max_turns: int,
                 max_wait_s: float) -> str:
    return PROMPT.format(instruction=instruction.strip(), frame=frame, workdir=workdir,
                         max_turns=max_turns, max_wait=max_wait_s)
