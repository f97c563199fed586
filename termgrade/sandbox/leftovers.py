"""Containers no live run owns: what an interrupted run (Ctrl-C, SIGKILL, a crash) left.

:func:`find_leftovers` lists every TermGrade container (label ``termgrade=sandbox``) whose
owner process is gone (:mod:`termgrade.sandbox.ownership`), optionally of one run;
:func:`reap` removes them (and the files :mod:`termgrade.sandbox.etc_files` wrote for
them). A container whose owner ran on another host, or that carries
no owner label (made by an older TermGrade), is never reaped: no one here can tell
whether its run is alive. ``termgrade doctor`` reports both kinds; ``--reap`` removes the
first; a resumed ``grade`` reaps its own run's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass

from termgrade.sandbox.engine import docker_client
from termgrade.sandbox.etc_files import forget, sweep
from termgrade.sandbox.ownership import (
    OWNER_LABEL,
    RUN_FOLDER_LABEL,
    RUN_LABEL,
    RUN_MODEL_LABEL,
    SANDBOX_LABEL,
    owner_alive,
)


@dataclass(frozen=True)
class Leftover:
    id: str
    name: str
    status: str
    """The engine's state: running, paused, exited, created."""
    owner: str | None
    run: str | None
    reapable: bool
    """The owner process is known to be gone (same host, no such process)."""
    folder: str | None = None
    """The run's output folder, when its containers name it (``termgrade.run.folder``)."""
    model: str | None = None
    """The run's model, when its containers name it (``termgrade.run.model``)."""

    @property
    def why(self) -> str:
        if self.reapable:
            return f"its owner {self.owner} is gone"
        if self.owner is None:
            return "no owner label (an older TermGrade made it)"
        return f"its owner {self.owner} ran on another host"


def find_leftovers(run: str | None = None) -> list[Leftover]:
    """TermGrade containers that no live process on this host owns (of ``run`` only, when
    given), sorted by name. Containers of a live owner are not listed."""
    filters = {"label": [f"{SANDBOX_LABEL}=sandbox"] + ([f"{RUN_LABEL}={run}"] if run else [])}
    found = []
    for container in docker_client().containers.list(all=True, filters=filters,
                                                     ignore_removed=True):
        labels = container.labels or {}
        owner = labels.get(OWNER_LABEL)
        alive = owner_alive(owner) if owner else None
        if alive:
            continue
        found.append(Leftover(str(container.id), str(container.name), str(container.status),
                              owner, labels.get(RUN_LABEL), alive is False,
                              labels.get(RUN_FOLDER_LABEL), labels.get(RUN_MODEL_LABEL)))
    return sorted(found, key=lambda c: c.name)


def reap(leftovers: Iterable[Leftover]) -> list[Leftover]:
    """Remove (force: paused and running ones too) the reapable ones; returns those
    removed. One already gone counts as removed."""
    from docker.errors import DockerException, NotFound

    removed = []
    client = docker_client()
    for leftover in leftovers:
        if not leftover.reapable:
            continue
        try:
            client.api.remove_container(leftover.id, force=True)
        except NotFound:
            pass
        except DockerException:
            continue
        removed.append(leftover)
    with contextlib.suppress(DockerException):  # the files of the containers now gone
        sweep({str(c.name) for c in client.containers.list(
            all=True, filters={"label": f"{SANDBOX_LABEL}=sandbox"}, ignore_removed=True)})
    return removed


def remove_own(run: str | None = None) -> int:
    """Remove the containers this process started (of ``run``, when given), at once: what
    an interrupted run must not leave behind. Returns how many were removed."""
    from docker.errors import DockerException

    from termgrade.sandbox.ownership import owner_id

    labels = [f"{OWNER_LABEL}={owner_id()}"] + ([f"{RUN_LABEL}={run}"] if run else [])
    removed = 0
    client = docker_client()
    with contextlib.suppress(DockerException):
        for container in client.containers.list(all=True, filters={"label": labels},
                                                ignore_removed=True):
            with contextlib.suppress(DockerException):
                client.api.remove_container(container.id, force=True)
                forget(str(container.name))
                removed += 1
    return removed
