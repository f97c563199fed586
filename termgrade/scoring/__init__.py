"""Everything that decides a reward, in one place (see ``docs/grading.md``).

- :mod:`~termgrade.scoring.trial`: one trial, agent container to reward (the boundary);
  :mod:`~termgrade.scoring.score`: the agent's stopped work to reward (review, carry,
  verifier, decision); :mod:`~termgrade.scoring.outcome`: what a trial comes to.
- :mod:`~termgrade.scoring.kept`: a trial's carried work kept; :mod:`~termgrade.scoring.
  replay`: a regrade of kept work on the same path.
- :mod:`~termgrade.scoring.scoring_box`: the scoring container's image, limits, staging.
- :mod:`~termgrade.scoring.transfer`: the transfer set, the only work the verifier sees.
- :mod:`~termgrade.scoring.policy`: the verifier's closure and the grader's paths.
- :mod:`~termgrade.scoring.integrity`: the review of the agent's writes (left out, carried,
  findings); :mod:`~termgrade.scoring.standins`: what would stand in for the verifier.
- :mod:`~termgrade.scoring.carry`: the agent's work, moved into the scoring container.
- :mod:`~termgrade.scoring.attestation`: signed per-test results from inside pytest.
- :mod:`~termgrade.scoring.verifier`: test.sh, the reward file, the final decision.
"""

from termgrade.scoring.scoring_box import task_limits
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.scoring.verifier import VerifierResult, parse_reward

__all__ = ["RunOutcome", "VerifierResult", "parse_reward", "run_task", "task_limits"]
