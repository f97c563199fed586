"""The pair: a trial's two containers before the agent acts (docs/grading.md, step 1): A
started, B created and never started, B's grader staged
(:func:`.containers.stage_grader`), made ahead by the warm pool (:mod:`.warm`) when a trial
is known to be coming. Entry: :func:`make_pair`."""

from termgrade.scoring.pair.containers import Pair, PairSpec, make_pair

__all__ = ["Pair", "PairSpec", "make_pair"]
