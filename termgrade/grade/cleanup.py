"""A grading run leaves no container behind, interrupted or not.

Every trial's containers carry the run's id (:func:`run_label`: its journal and model).
A run that starts reaps what a killed run of the same output left (:func:`reap_run`: the
containers of that run whose owner process is gone). Any exit by an exception (Ctrl-C,
an endpoint that died mid-run, a bug: :func:`leave_nothing`) refuses new containers for
the run, hangs up on its image builds (the engine cancels
them) and removes its containers at once, then once more at exit, after the trials in
flight have returned.
"""

from __future__ import annotations

import atexit
import hashlib
from pathlib import Path


def run_label(journal: Path, model: str) -> str:
    """The run id of grading ``model`` into ``journal``: the same for a resumed run."""
    from termgrade.sandbox.ownership import describe_run

    digest = hashlib.sha256(f"{journal.resolve()}\0{model}".encode()).hexdigest()[:16]
    describe_run(f"grade-{digest}", journal.parent, model)  # its containers name both
    return f"grade-{digest}"


def reap_run(run_id: str) -> int:
    """Remove the containers of ``run_id`` whose owner process is gone; how many."""
    from termgrade.sandbox.leftovers import find_leftovers, reap

    return len(reap(find_leftovers(run_id)))


def leave_nothing(run_id: str) -> None:
    """The run ends by an exception: stop its builds and remove its containers now and at exit."""
    from termgrade.sandbox.engine import abort_builds
    from termgrade.sandbox.leftovers import remove_own
    from termgrade.sandbox.ownership import stop_run

    stop_run(run_id)
    abort_builds()
    remove_own(run_id)
    atexit.register(remove_own, run_id)
