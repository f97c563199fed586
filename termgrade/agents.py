"""Built-in agents for execution filtering: ``oracle`` runs the reference solution,
``nop`` does nothing (the untouched-container run)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from termgrade.sandbox.base import ExecResult, Sandbox
from termgrade.task import CONTAINER, Task

DEFAULT_AGENT_TIMEOUT_S = 600.0


class AgentName(StrEnum):
    ORACLE = "oracle"
    NOP = "nop"


@dataclass(frozen=True)
class AgentRun:
    result: ExecResult | None
    """None for the nop agent, which runs nothing."""
    error: str | None = None


def run_agent(agent: AgentName, sandbox: Sandbox, task: Task) -> AgentRun:
    """Run the agent phase. No ``/tests`` exists in the container while it runs."""
    if agent is AgentName.NOP:
        return AgentRun(result=None)
    timeout = task.config.agent.timeout_sec or DEFAULT_AGENT_TIMEOUT_S
    sandbox.copy_in(task.paths.solution_dir, CONTAINER.solution_dir)
    env = {**task.config.environment.env, **task.config.solution.env}
    result = sandbox.exec(
        ["bash", f"{CONTAINER.solution_dir}/solve.sh"],
        timeout_s=timeout,
        env=env or None,
        workdir=task.config.environment.workdir,
    )
    error = None
    if result.timed_out:
        error = (f"{task.paths.solve_script}: timed out after {timeout:.0f} s "
                 "(raise [agent] timeout_sec or fix the hang)")
    elif result.exit_code != 0:
        error = f"{task.paths.solve_script}: exited {result.exit_code}: {result.output[-300:]!r}"
    return AgentRun(result=result, error=error)
