"""``termgrade train eval``: the Terminal-Bench 2.1 evaluation through Harbor (SPEC section 9).

The paper: 89 tasks, the Terminus-2 agent, pass@1 over 3 repeats, a 2 h per-task timeout,
Daytona sandboxes through Harbor (E2B's stand-in). The trained adapter is served with vLLM
(an OpenAI-compatible endpoint); Harbor drives Terminus-2 against it. Harbor 0.26 sets
timeouts as multipliers of each task's own, so the 2 h budget is a multiplier against
the dataset's per-task agent timeout (``--timeout-multiplier``), stated in the plan.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from termgrade.errors import OptionError

DATASET = "terminal-bench@2.1"
TASKS = 89
AGENT = "terminus-2"
REPEATS = 3
TIMEOUT_S = 7200


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
    timeout_multiplier: float | None = None
    dataset: str = DATASET


def harbor_command(plan: EvalPlan, harbor: str = "harbor") -> list[str]:
    command = [harbor, "run", "-y", "-d", plan.dataset, "-a", AGENT, "-m", plan.model,
               "--ak", f"api_base={plan.api_base}", "-k", str(plan.repeats),
               "-n", str(plan.concurrent), "-e", plan.environment,
               "-o", str(plan.jobs_dir), "--job-name", plan.job_name]
    if plan.timeout_multiplier is not None:
        command += ["--timeout-multiplier", f"{plan.timeout_multiplier:g}"]
    return command


def describe(plan: EvalPlan) -> str:
    """What the evaluation is and how its result is read, for ``--dry-run``."""
    job = plan.jobs_dir / plan.job_name
    return "\n".join([
        f"Terminal-Bench 2.1 ({TASKS} tasks), {AGENT}, pass@1 over {plan.repeats} repeats, "
        f"{TIMEOUT_S // 3600} h per task (paper); environment {plan.environment}.",
        "  " + shlex.join(harbor_command(plan)),
        f"then: termgrade ingest harbor {job} -o {job}.jsonl && "
        f"termgrade labels {job}.jsonl -o {job}-labels.jsonl && "
        f"termgrade report {job}-labels.jsonl",
    ])


def run_eval(plan: EvalPlan, harbor: str | None = None) -> int:
    found = harbor or shutil.which("harbor")
    if found is None:
        raise OptionError("harbor is not on PATH",
                          fix="bash scripts/ensure_harbor.sh, then add .venv-harbor/bin to PATH")
    return subprocess.run(harbor_command(plan, found), check=False,
                          env=None).returncode
