"""Task images built once per process: :func:`image_for` is what every stage that runs a
task's container asks (a grading trial, a training rollout), so one process never builds a
task version twice, and two threads asking for one task wait for one build.

Docker's layer cache makes a later build of the same files cheap on the machine; this
cache saves even that (a build context is still hashed) within a process.
"""

from __future__ import annotations

import threading

from termgrade.sandbox.images import build_task_image
from termgrade.task import Task
from termgrade.task.digest import task_digest

_IMAGES: dict[tuple[str, str], str] = {}
_IMAGES_LOCK = threading.Lock()
_BUILD_LOCKS: dict[str, threading.Lock] = {}


def image_for(task: Task) -> str:
    """The task's image on this machine, built once per process and task version."""
    key = (str(task.paths.root), task_digest(task.paths.root))
    with _IMAGES_LOCK:
        if key in _IMAGES:
            return _IMAGES[key]
        lock = _BUILD_LOCKS.setdefault(key[0], threading.Lock())
    with lock:
        with _IMAGES_LOCK:
            if key in _IMAGES:
                return _IMAGES[key]
        built = build_task_image(task)
        with _IMAGES_LOCK:
            _IMAGES[key] = built.tag
        return built.tag
