"""One run of one task: start a container, run an agent phase, score it, remove it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from termgrade.agents import AgentName, AgentRun, run_agent
from termgrade.errors import SandboxError
from termgrade.grading import VerifierResult, score
from termgrade.sandbox.base import Limits
from termgrade.task import Task


def task_limits(task: Task) -> Limits:
    """Limits from task.toml's ``[environment]``, defaults where it is silent."""
    env = task.config.environment
    defaults = Limits()
    return Limits(
        cpus=env.cpus or defaults.cpus,
        memory_mb=env.memory_mb or defaults.memory_mb,
        pids=env.pids or defaults.pids,
    )


@dataclass
class RunOutcome:
    agent: AgentName
    verifier: VerifierResult | None
    agent_error: str | None = None
    error: str | None = None
    """Infrastructure or verifier failure: the run is unscored, never counted as 0."""
    durations: dict[str, float] = field(default_factory=dict)
    """Seconds: ``start``, ``agent`` (solve.sh inside), ``verify`` (test.sh inside),
    ``total`` (container create until the result is read; removal runs in the background)."""

    @property
    def reward(self) -> float | None:
        return self.verifier.reward if self.verifier else None


def run_task(task: Task, image: str, agent: AgentName, *, keep: bool = False) -> RunOutcome:
    """Run ``agent`` on ``task`` in a fresh container of ``image`` and score it."""
    from termgrade.sandbox.docker_sandbox import DockerSandbox

    started = time.monotonic()
    durations: dict[str, float] = {}
    try:
        sandbox = DockerSandbox.start(
            image,
            limits=task_limits(task),
            env=task.config.environment.env,
            workdir=task.config.environment.workdir,
            label=f"{task.task_id}-{agent.value}",
        )
    except SandboxError as exc:
        total = time.monotonic() - started
        return RunOutcome(agent, None, error=str(exc), durations={"total": total})
    durations["start"] = time.monotonic() - started
    try:
        agent_run: AgentRun = run_agent(agent, sandbox, task)
        durations["agent"] = agent_run.result.duration_s if agent_run.result else 0.0
        verifier = score(sandbox, task)
        durations["verify"] = verifier.duration_s
        return RunOutcome(agent, verifier, agent_error=agent_run.error, error=verifier.error,
                          durations=durations)
    except SandboxError as exc:
        return RunOutcome(agent, None, error=f"{task.task_id}: {exc}", durations=durations)
    finally:
        if not keep:
            sandbox.close_later()
        durations["total"] = time.monotonic() - started
