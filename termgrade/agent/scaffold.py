"""The bash tool-calling scaffold: one system prompt, two tools, one set of limits.

This is the single definition both grading (:mod:`termgrade.agent.loop`) and training
(:mod:`termgrade.training`) use, so a model is graded in the scaffold it is trained in.
The model gets the task's instruction and two tools:

* ``bash``: run one command in the task's container (a fresh ``bash -c`` each time, in
  the task's working directory, as root); the reply is its exit status and output,
  truncated with a notice when long.
* ``finish``: declare the task done. The trial is then scored; nothing after it runs.
"""

from __future__ import annotations

from typing import Any

from termgrade.agent.episode import ScaffoldConfig as ScaffoldConfig  # its old home
from termgrade.core.text import head_and_tail

SCAFFOLD_NAME = "bash-tool"
"""The ``scaffold`` of every trial this scaffold produces."""

VERL_AGENT_LOOP = "termgrade_bash"
"""The name verl's agent-loop registry knows this scaffold's training loop by
(``termgrade.training.agent_loop.BashAgentLoop``); the verl prompt rows name it."""

BASH_TOOL = "bash"
FINISH_TOOL = "finish"

TOOLS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": BASH_TOOL,
            "description": (
                "Run one bash command in the task's Linux container and return its exit "
                "status and output (stdout and stderr together). Each call starts a fresh "
                "shell in the working directory: chain steps with && or ; and use absolute "
                "paths. Commands that run too long are killed. There is no network."),
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The bash command to run."},
                },
                "required": ["command"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": FINISH_TOOL,
            "description": ("Declare the task complete. Call it once the work is done and "
                            "checked; the task is graded right after."),
            "parameters": {
                "type": "object",
                "properties": {
                    "summary": {"type": "string",
                                "description": "Optional: what was done."},
                },
                "additionalProperties": False,
            },
        },
    },
)

SYSTEM_PROMPT = """\
You are an expert Linux engineer working in a terminal. You solve the task you are given \
by running commands with the `bash` tool in a Linux container where you are root. There \
is no network access. Each `bash` call runs in a fresh shell in the working directory \
{workdir}; state such as `cd` or exported variables does not carry over between calls. \
Inspect before you change things, and check your work. When the task is done, call \
`finish`. You have at most {max_turns} turns."""


def system_prompt(workdir: str, config: ScaffoldConfig) -> str:
    return SYSTEM_PROMPT.format(workdir=workdir, max_turns=config.max_turns)


def first_messages(instruction: str, workdir: str, config: ScaffoldConfig) -> list[dict[str, Any]]:
    """The conversation an episode starts from: the system prompt and the task."""
    return [{"role": "system", "content": system_prompt(workdir, config)},
            {"role": "user", "content": instruction.strip()}]


def truncate_output(text: str, limit: int) -> str:
    """``text`` if it fits; otherwise its head and tail with a notice of what was cut."""
    return head_and_tail(text, limit, "; narrow the command (head, tail, grep) to see them")
