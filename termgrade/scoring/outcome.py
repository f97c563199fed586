"""What a trial comes to (:class:`RunOutcome`); what it is scored with is
:class:`termgrade.scoring.verifier.setup.Scoring`."""

from __future__ import annotations

from dataclasses import dataclass, field

from termgrade.agent.kinds import AgentRun
from termgrade.scoring.kept import KeptLayer
from termgrade.scoring.review.transfer import TransferSet
from termgrade.scoring.verifier.result import VerifierResult


@dataclass
class RunOutcome:
    agent: str
    verifier: VerifierResult | None
    """None when unscored (an engine failure)."""
    agent_error: str | None = None
    error: str | None = None
    """Engine failure: the run is unscored and retried, never counted as 0."""
    durations: dict[str, float] = field(default_factory=dict)
    """Seconds per phase (:mod:`termgrade.scoring.phases`: ``prepare``, ``create``,
    ``agent``, ``freeze``, ``review``, ``transfer``, ``start_b``, ``broker``, ``verify``
    (test.sh), ``decision``), ``total`` (until the reward is known) and, once the
    background removal ends, ``teardown``."""
    agent_run: AgentRun | None = None
    """What the agent phase left: a model agent's transcript is here."""
    transfer: TransferSet | None = None
    """The task's transfer set: the only part of the agent's work the verifier sees."""
    footprint: list[str] = field(default_factory=list)
    """The top-most paths the agent changed (``verify`` records the reference's)."""
    left_out: str | None = None
    """What the agent changed outside the transfer set (not carried), in one line."""
    attested: bool = True
    """The task is attestable: the reward came from the signed record (0 on any alarm).
    False: an unattestable task, graded by ``test.sh``'s own reward."""
    kept: KeptLayer | None = None
    """The carried work as kept (``keep_work``); None when not asked or never carried."""
    standins: list[str] = field(default_factory=list)
    """Created entries left out as stand-ins (``path: why``): no finding for an agent,
    but a reference solution that makes one is tampering (``verify``: unsatisfiable)."""

    @property
    def reward(self) -> float | None:
        return self.verifier.reward if self.verifier else None

    @property
    def failure(self) -> str | None:
        return self.verifier.failure if self.verifier else None
