"""Overlay-shaped layers on disk, and the grader's review of them.

A test builds an image layer (``lower``) and a writable layer (``upper``) the way the
kernel's overlayfs leaves them: :func:`put` writes a file or directory, :func:`whiteout`
a deletion (a 0/0 character device, which needs ``mknod``); :func:`review` runs
:func:`termgrade.scoring.review.integrity.review_layer` on them under :data:`POLICY`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.review.integrity import review_layer
from termgrade.scoring.review.policy import GradingPolicy

CLOSURE = ("/opt/venv", "/usr/lib/python3.11", "/usr/lib/python3/dist-packages",
           "/usr/bin/bash", "/usr/bin/timeout", "/usr/bin/python3.11", "/etc/ld.so.cache",
           "/etc/ld.so.preload", "/etc/python3.11/sitecustomize.py")
"""As :func:`termgrade.scoring.review.closure.find_closure` finds it for the base image."""
POLICY = GradingPolicy(closure=CLOSURE)


def put(root: Path, path: str, data: str | None = "x", mode: int | None = None) -> Path:
    target = root / path.lstrip("/")
    if data is None:
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(data)
    if mode is not None:
        target.chmod(mode)
    return target


def whiteout(root: Path, path: str) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.mknod(target, stat.S_IFCHR | 0o000, os.makedev(0, 0))


def review(lower: Path, upper: Path, policy: GradingPolicy = POLICY,
           grader: tuple[str, ...] = ()) -> tuple[list[str], list[str], list[str]]:
    result = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), policy,
                          grader_paths=grader)
    return result.all_findings(), [e.path for e in result.carried], result.deleted
