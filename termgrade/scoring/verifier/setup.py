"""What the scoring container runs the verifier with (:class:`Scoring`): the closure, the
grader's processes, the plugin's name, the task's attestability and reference record, the
transfer set, where kept work goes, the disk limit."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from termgrade.sandbox.base import Limits
from termgrade.scoring.kept import WorkStore
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.review.closure import PYTHON_NAME, VERIFIER_PATH, Closure
from termgrade.scoring.review.toolenv import ToolEnv
from termgrade.scoring.review.transfer import TransferSet
from termgrade.scoring.verifier.attestable import Attestability
from termgrade.scoring.verifier.grader_procs import GraderProcs


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
    pythonpath: str = ""
    """The image's own ``PYTHONPATH``, after the grader's directory in test.sh's."""
    storage_bytes: int = Limits().storage_mb << 20
    """The agent's disk limit (task.toml's ``[environment] storage_mb``): what it writes
    in A and what B's processes write during the tests count against it."""

    @property
    def python(self) -> str | None:
        """The closure's interpreter that runs the broker (any of the image's)."""
        if self.procs is not None:
            return self.procs.python
        found = [f for f in self.closure.files if PYTHON_NAME.match(posixpath.basename(f))]
        return found[0] if found else None
