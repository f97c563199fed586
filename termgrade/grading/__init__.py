"""Everything that decides a reward, in one place (see ``docs/grading.md``).

- :mod:`~termgrade.grading.trial`: one trial, agent container to reward (the boundary).
- :mod:`~termgrade.grading.policy`: what the agent may write; what the verifier searches.
- :mod:`~termgrade.grading.integrity`: the allowlist review of the agent's writes.
- :mod:`~termgrade.grading.carry`: the agent's work, copied into the scoring container.
- :mod:`~termgrade.grading.attestation`: signed per-test results from inside pytest.
- :mod:`~termgrade.grading.verifier`: test.sh, the reward file, the final decision.
"""

from termgrade.grading.reports import Outcome, TestVerdict
from termgrade.grading.trial import RunOutcome, run_task, task_limits
from termgrade.grading.verifier import VerifierResult, parse_reward

__all__ = ["Outcome", "RunOutcome", "TestVerdict", "VerifierResult", "parse_reward", "run_task",
           "task_limits"]
