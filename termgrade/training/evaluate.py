"""``termgrade train eval``: the Terminal-Bench 2.1 evaluation through Harbor (SPEC section 9).

The paper: 89 tasks, the Terminus-2 agent, pass@1 over 3 repeats, a 2 h per-task timeout,
Daytona sandboxes through Harbor (E2B's stand-in). The trained adapter is served with vLLM
(an OpenAI-compatible endpoint); Harbor drives Terminus-2 against it.

Harbor 0.26's ``harbor run`` options set timeouts only as multipliers of each task's own
(``--timeout-multiplier``), and Terminal-Bench's tasks carry different agent timeouts, so
no multiplier makes them all 2 h. Its job config does: the agent's
``override_timeout_sec`` (``harbor/models/trial/config.py``, ``AgentConfig``) replaces the
task's agent timeout. The plan writes that job config (the agent, its model, its
endpoint, 7,200 s) beside the jobs and passes it with ``-c``; ``harbor run`` replaces a
config's agents when ``-a`` / ``-m`` are given, so the command names them only there.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termgrade.core.atomic import atomic_write_text
from termgrade.core.errors import OptionError

DATASET = "terminal-bench@2.1"
TASKS = 89
AGENT = "terminus-2"
REPEATS = 3
TIMEOUT_S = 7200
HARBOR_VERSION = "0.26.0"
HARBOR_INSTALL = (f"pip install 'harbor=={HARBOR_VERSION}' (Python >= 3.12, its own "
                  "virtualenv), then put its bin/ on PATH (https://pypi.org/project/harbor/)")


@dataclass(frozen=True)
class EvalPlan:
    model: str
    """Harbor's model name, e.g. ``openai/termgrade-gemma4-31b-grpo``."""
    api_base: str
    """The vLLM endpoint serving the adapter, e.g. ``http://127.0.0.1:8000/v1``."""
    jobs_dir: Path
    job_name: str
    repeats: int = REPEATS
    concurrent: int = 8
    environment: str = "docker"
    """Harbor's environment: ``docker`` here, ``daytona`` as in the paper."""
    timeout_s: float | None = TIMEOUT_S
    """The agent's timeout per task (the paper's 2 h); None: each task's own."""
    timeout_multiplier: float | None = None
    """Harbor's multiplier of every timeout (applied on top of ``timeout_s``)."""
    dataset: str = DATASET

    @property
    def job_config(self) -> Path:
        """The Harbor job config the command passes with ``-c``."""
        return self.jobs_dir / f"{self.job_name}.harbor-job.json"

    @property
    def job_dir(self) -> Path:
        return self.jobs_dir / self.job_name


def job_config(plan: EvalPlan) -> dict[str, Any]:
    """Harbor's JobConfig fields for the agent: Terminus-2, the served model, its endpoint,
    the per-task agent timeout."""
    agent: dict[str, Any] = {"name": AGENT, "model_name": plan.model,
                             "kwargs": {"api_base": plan.api_base}}
    if plan.timeout_s is not None:
        agent["override_timeout_sec"] = plan.timeout_s
    return {"agents": [agent]}


def write_job_config(plan: EvalPlan) -> Path:
    plan.jobs_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(plan.job_config, json.dumps(job_config(plan), indent=2) + "\n")
    return plan.job_config


def harbor_command(plan: EvalPlan, harbor: str = "harbor") -> list[str]:
    command = [harbor, "run", "-y", "-c", str(plan.job_config), "-d", plan.dataset,
               "-k", str(plan.repeats), "-n", str(plan.concurrent), "-e", plan.environment,
               "-o", str(plan.jobs_dir), "--job-name", plan.job_name]
    if plan.timeout_multiplier is not None:
        command += ["--timeout-multiplier", f"{plan.timeout_multiplier:g}"]
    return command


def follow_up(plan: EvalPlan) -> list[list[str]]:
    """The commands that read the result: ingest, labels, report (each as it runs)."""
    job = plan.job_dir
    trials, labels = f"{job}.jsonl", f"{job}-labels.jsonl"
    return [["termgrade", "ingest", "harbor", str(job), "-o", trials],
            ["termgrade", "labels", trials, "-o", labels],
            ["termgrade", "report", labels, trials, "-o", f"{job}-report"]]


def describe(plan: EvalPlan) -> str:
    """What the evaluation is and how its result is read, for ``--dry-run``."""
    timeout = ("each task's own agent timeout" if plan.timeout_s is None
               else f"{plan.timeout_s / 3600:g} h per task (agent override_timeout_sec in "
                    f"{plan.job_config})")
    if plan.timeout_multiplier is not None:
        timeout += f", x{plan.timeout_multiplier:g} (--timeout-multiplier)"
    return "\n".join([
        f"Terminal-Bench 2.1 ({TASKS} tasks), {AGENT}, pass@1 over {plan.repeats} repeats, "
        f"{timeout}; environment {plan.environment} (the paper: 2 h per task, daytona).",
        "  " + shlex.join(harbor_command(plan)),
        "then:",
        *("  " + shlex.join(c) for c in follow_up(plan)),
    ])


def run_eval(plan: EvalPlan, harbor: str | None = None) -> int:
    found = harbor or shutil.which("harbor")
    if found is None:
        raise OptionError("harbor is not on PATH", fix=HARBOR_INSTALL)
    write_job_config(plan)
    return subprocess.run(harbor_command(plan, found), check=False).returncode
