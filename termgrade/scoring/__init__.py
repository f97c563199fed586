"""Everything that decides a reward, in one place (see ``docs/grading.md``), as the rooms of
a reward's path:

- :mod:`~termgrade.scoring.trial`: one trial, agent container to reward (the boundary);
  :mod:`~termgrade.scoring.replay`: a regrade of kept work on the same path;
  :mod:`~termgrade.scoring.score`: the agent's stopped work to reward, one call per room;
  :mod:`~termgrade.scoring.outcome`: what a trial comes to.
- :mod:`~termgrade.scoring.pair`: the two containers, made (or made ahead) before the
  agent acts.
- :mod:`~termgrade.scoring.review`: the transfer set, the stand-ins, the review of the
  agent's writes and the carry of its work into the scoring container.
- :mod:`~termgrade.scoring.kept`: a trial's carried work kept and rebuilt.
- :mod:`~termgrade.scoring.verifier`: test.sh's run in the scoring container, the signed
  record, what its processes changed, the decision.
- :mod:`~termgrade.scoring.incontainer`: the code that runs inside the scoring container
  (the plugin, the broker, the watch), staged as files.
"""

from termgrade.scoring.pair.containers import task_limits
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.scoring.verifier.result import VerifierResult, parse_reward

__all__ = ["RunOutcome", "VerifierResult", "parse_reward", "run_task", "task_limits"]
