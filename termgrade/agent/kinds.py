"""Built-in agents for execution filtering and hardening.

``oracle`` runs the task's reference solution, ``nop`` does nothing (the untouched
container), a :class:`ScriptAgent` runs any bash script as the agent (the attack
battery plays its attacks this way), and a :class:`ModelAgent` is a model behind an
OpenAI-compatible endpoint driving a registered scaffold (:mod:`termgrade.agent.scaffolds`;
it and :class:`AgentRun` are defined with the episode types, :mod:`termgrade.agent.episode`).
Everything an agent does happens in the agent's own container, which no grader code
trusts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from termgrade.agent.episode import DEFAULT_AGENT_TIMEOUT_S as DEFAULT_AGENT_TIMEOUT_S
from termgrade.agent.episode import AgentRun as AgentRun
from termgrade.agent.episode import ModelAgent as ModelAgent
from termgrade.agent.episode import agent_time_limit_s as agent_time_limit_s
from termgrade.agent.episode import endpoint_failure as endpoint_failure
from termgrade.agent.scaffolds import scaffold_for
from termgrade.sandbox.base import Sandbox
from termgrade.task import CONTAINER, Task
from termgrade.task.errors import TaskLoadError


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


@dataclass(frozen=True)
class PolicyAgent:
    """A policy the caller drives itself, in process: ``act`` gets the agent's container
    and the task and returns the agent phase. verl's agent loop (training) is one: it
    samples tokens from the policy being trained and runs its bash calls here."""

    name: str
    act: Callable[[Sandbox, Task], AgentRun]


Agent = AgentName | ScriptAgent | ModelAgent | PolicyAgent


def agent_label(agent: Agent) -> str:
    return agent.value if isinstance(agent, AgentName) else agent.name


def grader_paths(agent: Agent) -> tuple[str, ...]:
    """What the grader put into the agent's container for this agent."""
    if agent is AgentName.NOP or isinstance(agent, ModelAgent | PolicyAgent):
        return ()
    return (str(CONTAINER.solution_dir),)


def require_runnable(agent: Agent, task: Task) -> None:
    """Refuse, before any container starts, an agent the task cannot run: the oracle of
    a task that ships no reference solution."""
    if agent is AgentName.ORACLE and not task.has_solution:
        raise TaskLoadError(task.paths.solve_script,
                            "missing: the task ships no reference solution, so the oracle "
                            "cannot run", fix="add solution/solve.sh, or run another agent")


def run_agent(agent: Agent, sandbox: Sandbox, task: Task) -> AgentRun:
    """Run the agent phase. No ``/tests`` exists in the container while it runs."""
    if agent is AgentName.NOP:
        return AgentRun(result=None)
    if isinstance(agent, ModelAgent):
        return scaffold_for(agent.scaffold).run(agent, sandbox, task)
    if isinstance(agent, PolicyAgent):
        return agent.act(sandbox, task)
    timeout = task.config.agent.timeout_sec or DEFAULT_AGENT_TIMEOUT_S
    if isinstance(agent, ScriptAgent):
        timeout = min(timeout, agent.timeout_s or timeout)
        # The script's whole folder: a script may use the files beside it (a shared lib).
        sandbox.copy_in(agent.script.parent, CONTAINER.solution_dir)
        entry = CONTAINER.solution_dir / agent.script.name
        shown = str(agent.script)
    else:
        require_runnable(agent, task)
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
