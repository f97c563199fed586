"""Who made a container: every TermGrade container names its owner process and its run.

A container carries two labels besides ``termgrade=sandbox``:

* ``termgrade.owner``: ``HOST:PID:START``, the process that started it (``START`` is the
  process's start time in clock ticks from ``/proc``, so a reused pid is not mistaken
  for the owner). A container whose owner is gone is a leftover of an interrupted run.
* ``termgrade.run``: the run it belongs to, when one is set (``grade`` sets the id of
  its output directory and model, so a resumed run finds what the killed one left).
* ``termgrade.run.folder`` and ``termgrade.run.model``: the run's output folder (its
  journal's directory, absolute) and model, when the run was described
  (:func:`describe_run`; ``grade`` and ``regrade`` do it): ``termgrade doctor`` names them
  for each leftover, as the run id is a hash.

The run id is per thread (:func:`run_scope`): trials of one process run in worker
threads, each inside the scope of its job.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

SANDBOX_LABEL = "termgrade"
OWNER_LABEL = "termgrade.owner"
RUN_LABEL = "termgrade.run"
RUN_FOLDER_LABEL = "termgrade.run.folder"
RUN_MODEL_LABEL = "termgrade.run.model"

_LOCAL = threading.local()


def _start_ticks(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (the start time); None where /proc cannot say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    return fields[19] if len(fields) > 19 else None


@functools.cache
def owner_id() -> str:
    """``HOST:PID:START`` of this process."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid) or ''}"


def owner_alive(owner: str) -> bool | None:
    """Whether the owner process still runs: None when it ran on another host (unknown)."""
    host, _, rest = owner.partition(":")
    pid_text, _, ticks = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    current = _start_ticks(pid)
    return not (ticks and current is not None and current != ticks)


@contextlib.contextmanager
def run_scope(run_id: str | None) -> Iterator[None]:
    """Containers this thread starts inside the block carry ``run_id``."""
    previous = getattr(_LOCAL, "run", None)
    _LOCAL.run = run_id or None
    try:
        yield
    finally:
        _LOCAL.run = previous


_DESCRIBED: dict[str, tuple[str, str]] = {}
_DESCRIBED_LOCK = threading.Lock()


def describe_run(run_id: str, folder: Path, model: str) -> None:
    """Containers of ``run_id`` started in this process also name its output folder and
    model (labels :data:`RUN_FOLDER_LABEL`, :data:`RUN_MODEL_LABEL`)."""
    with _DESCRIBED_LOCK:
        _DESCRIBED[run_id] = (str(folder.resolve()), model)


def current_run() -> str | None:
    return getattr(_LOCAL, "run", None)


_STOPPED: set[str] = set()


def stop_run(run_id: str) -> None:
    """Refuse new containers for ``run_id`` in this process (the run was interrupted)."""
    _STOPPED.add(run_id)


def run_stopped() -> bool:
    """Whether this thread's run was stopped: it must start no more containers."""
    run = current_run()
    return run is not None and run in _STOPPED


def container_labels(label: str) -> dict[str, str]:
    """The labels of a new container started by this thread (``label``: its role)."""
    labels = {SANDBOX_LABEL: "sandbox", f"{SANDBOX_LABEL}.label": label, OWNER_LABEL: owner_id()}
    run = current_run()
    if run:
        labels[RUN_LABEL] = run
        with _DESCRIBED_LOCK:
            described = _DESCRIBED.get(run)
        if described is not None:
            labels[RUN_FOLDER_LABEL], labels[RUN_MODEL_LABEL] = described
    return labels
