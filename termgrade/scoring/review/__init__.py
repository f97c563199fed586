"""The review and the carry (docs/grading.md, "The transfer set", steps 4 and 5): which of
the agent's writes reach the scoring container (:mod:`.transfer`, :mod:`.policy`), what
would stand in for what the verifier trusts (:mod:`.standins`, :mod:`.lookups`,
:mod:`.toolenv`), the review of A's frozen layer (:mod:`.integrity`) and the carry of what
it lets through into B (:mod:`.carry`). Entries: :func:`review_layer`, then
:func:`carry_work`."""

from termgrade.scoring.review.carry import carry_work
from termgrade.scoring.review.integrity import LayerReview, review_layer

__all__ = ["LayerReview", "carry_work", "review_layer"]
