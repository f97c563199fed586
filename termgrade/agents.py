"""Built-in agents for execution filtering and hardening.

``oracle`` runs the task's reference solution, ``nop`` does nothing (the untouched
container), and a :class:`ScriptAgent` runs any bash script as the agent (the attack
battery plays its attacks this way). Everything an agent does happens in the agent's
own container, which no grader code trusts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from termgrade.sandbox.base import ExecResult, Sandbox
from termgrade.task import CONTAINER, Task

DEFAULT_AGENT_TIMEOUT_S = 600.0


class AgentName(StrEnum):
    ORACLE = "oracle"
    NOP = "nop"


@dataclass(frozen=True)
class ScriptAgent:
    """Runs ``script`` (a host file) as the agent, in place of the reference solution; the
    files beside it are copied along."""

    name: str
    script: Path
    timeout_s: float | None = None
    """A cap on the agent phase below the task's own ``[agent] timeout_sec``."""


Agent = AgentName | ScriptAgent


def agent_label(agent: Agent) -> str:
    return agent.value if isinstance(agent, AgentName) else agent.name


def grader_paths(agent: Agent) -> tuple[str, ...]:
    """What the grader put into the agent's container for this agent."""
    return () if agent is AgentName.NOP else (str(CONTAINER.solution_dir),)


@dataclass(frozen=True)
class AgentRun:
    result: ExecResult | None
    """None for the nop agent, which runs nothing."""
    error: str | None = None


def run_agent(agent: Agent, sandbox: Sandbox, task: Task) -> AgentRun:
    """Run the agent phase. No ``/tests`` exists in the container while it runs."""
    if agent is AgentName.NOP:
        return AgentRun(result=None)
    timeout = task.config.agent.timeout_sec or DEFAULT_AGENT_TIMEOUT_S
    if isinstance(agent, ScriptAgent):
        timeout = min(timeout, agent.timeout_s or timeout)
        # The script's whole folder: a script may use the files beside it (a shared lib).
        sandbox.copy_in(agent.script.parent, CONTAINER.solution_dir)
        entry = CONTAINER.solution_dir / agent.script.name
        shown = str(agent.script)
    else:
        sandbox.copy_in(task.paths.solution_dir, CONTAINER.solution_dir)
        entry = PurePosixPath(f"{CONTAINER.solution_dir}/solve.sh")
        shown = str(task.paths.solve_script)
    env = {**task.config.environment.env, **task.config.solution.env}
    result = sandbox.exec(
        ["bash", str(entry)],
        timeout_s=timeout,
        env=env or None,
        workdir=task.config.environment.workdir,
    )
    error = None
    if result.timed_out:
        error = (f"{shown}: timed out after {timeout:.0f} s "
                 "(raise [agent] timeout_sec or fix the hang)")
    elif result.exit_code != 0:
        error = f"{shown}: exited {result.exit_code}: {result.output[-300:]!r}"
    return AgentRun(result=result, error=error)
