"""The verifier run and its decision (docs/grading.md, steps 6 to 8, "The decision"): how
test.sh runs in B (:mod:`.command`, the grader's own processes :mod:`.grader_procs`, the
loader cache :mod:`.loader`), the signed record (:mod:`.attestation`), what the verifier
wrote (:mod:`.result`), what its processes changed (:mod:`.during`) and the reward
(:mod:`.decision`). Entry: :func:`run_verifier`, one call once B has started."""

from termgrade.scoring.verifier.result import VerifierResult, parse_reward
from termgrade.scoring.verifier.run import run_verifier

__all__ = ["VerifierResult", "parse_reward", "run_verifier"]
