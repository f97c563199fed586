"""Everything that decides a reward, in one place (see ``docs/grading.md``).

- :mod:`~termgrade.scoring.trial`: one trial, agent container to reward (the boundary).
- :mod:`~termgrade.scoring.policy`: what the agent may write; what the verifier searches.
- :mod:`~termgrade.scoring.integrity`: the allowlist review of the agent's writes.
- :mod:`~termgrade.scoring.carry`: the agent's work, copied into the scoring container.
- :mod:`~termgrade.scoring.attestation`: signed per-test results from inside pytest.
- :mod:`~termgrade.scoring.verifier`: test.sh, the reward file, the final decision.
"""

from termgrade.scoring.trial import RunOutcome, run_task, task_limits
from termgrade.scoring.verifier import VerifierResult, parse_reward

__all__ = ["RunOutcome", "VerifierResult", "parse_reward", "run_task", "task_limits"]
