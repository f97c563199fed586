"""What a trial is scored with (:class:`Scoring`) and what it comes to (:class:`RunOutcome`)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from termgrade.agent.kinds import AgentRun
from termgrade.scoring.attestable import Attestability
from termgrade.scoring.closure import PYTHON_NAME, VERIFIER_PATH, Closure
from termgrade.scoring.grader_procs import GraderProcs
from termgrade.scoring.kept import KeptLayer, WorkStore
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.toolenv import ToolEnv
from termgrade.scoring.transfer import TransferSet
from termgrade.scoring.verifier import VerifierResult


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


@dataclass(frozen=True)
class Scoring:
    """What the scoring container runs the verifier with."""

    closure: Closure
    plugin: str
    """This trial's module name of the attestation plugin."""
    attestable: Attestability
    """The task's attestability: which decision rule grades the trial."""
    transfer: TransferSet | None = None
    """What of the agent's work is carried (None: everything outside the closure)."""
    reference: ReferenceRecord | None = None
    """The reference solution's recorded run (the decision rule's yardstick), if any."""
    procs: GraderProcs | None = None
    """What the grader runs in B, by the image's absolute paths; None without a Python."""
    path: str = VERIFIER_PATH
    """test.sh's PATH: the image's, then the grader's fixed directories."""
    keep_work: WorkStore | None = None
    """Where the carried work is kept (``grade --keep-work``); None: not kept."""
    tool_env: ToolEnv = field(default=ToolEnv())
    """What test.sh's environment (the image's ``ENV`` under the grader's) adds to the
    image's tools' search paths and start-up reads."""

    @property
    def python(self) -> str | None:
        """The closure's interpreter that runs the broker (any of the image's)."""
        if self.procs is not None:
            return self.procs.python
        found = [f for f in self.closure.files if PYTHON_NAME.match(posixpath.basename(f))]
        return found[0] if found else None
