"""Before any request: tasks whose image cannot be built here for want of a FROM image.

A corpus written for a registry image (TermiGen's 3,566 tasks start FROM
``ghcr.io/laude-institute/t-bench/ubuntu-24-04``) cannot be graded on a machine that has
neither the image nor the registry. Found one trial at a time, each task would spend its
retries on the same missing image; :func:`apply_image_policy` finds it once, up front,
and refuses (naming the image, its tasks and how to provide it) or, when asked, leaves
those tasks out. It runs where the trials build their images: a local pool. A Ray pool's
nodes build their own images, so there the runner does not ask.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, get_args

from termgrade.core.errors import OptionError
from termgrade.sandbox.images import image_available
from termgrade.task import load_task
from termgrade.task.dockerfile import base_images
from termgrade.task.errors import TaskLoadError

ImagePolicy = Literal["refuse", "skip"]
IMAGE_POLICIES: tuple[str, ...] = get_args(ImagePolicy)
_SHOWN = 5


def unavailable_images(task_dirs: Mapping[str, Path]) -> dict[str, list[str]]:
    """Each FROM image that is neither here nor pullable, with the ids of the tasks that
    need it (a task that does not load is left to the runner, which records why)."""
    known: dict[str, bool] = {}
    missing: dict[str, list[str]] = {}
    for task_id, path in sorted(task_dirs.items()):
        try:
            task = load_task(path)
            text = task.paths.dockerfile.read_text(encoding="utf-8", errors="replace")
        except (TaskLoadError, OSError):
            continue
        for ref in base_images(text):
            if ref not in known:
                known[ref] = image_available(ref)
            if not known[ref]:
                missing.setdefault(ref, []).append(task_id)
    return missing


def apply_image_policy(task_dirs: Mapping[str, Path], policy: ImagePolicy) -> dict[str, Path]:
    """``task_dirs`` less the tasks whose FROM image is missing (``skip``); ``refuse``
    raises :class:`OptionError` naming the images and their tasks when there are any."""
    return split_by_image(task_dirs, policy)[0]


def split_by_image(task_dirs: Mapping[str, Path], policy: ImagePolicy
                   ) -> tuple[dict[str, Path], dict[str, str]]:
    """The tasks to grade and, with ``skip``, each task left out and why (the image it
    lacks); ``refuse`` raises :class:`OptionError` naming the images and their tasks."""
    if policy not in IMAGE_POLICIES:
        raise OptionError(f"missing-image policy {policy!r} is not one of "
                          f"{', '.join(IMAGE_POLICIES)}", fix="choose one of them")
    missing = unavailable_images(task_dirs)
    if not missing:
        return dict(task_dirs), {}
    lacking = {task_id: f"FROM {ref}: not here and cannot be pulled"
               for ref, ids in sorted(missing.items()) for task_id in ids}
    if policy == "skip":
        return {k: v for k, v in task_dirs.items() if k not in lacking}, lacking
    parts = []
    for ref, ids in sorted(missing.items()):
        shown = ", ".join(ids[:_SHOWN]) + (f" and {len(ids) - _SHOWN} more"
                                           if len(ids) > _SHOWN else "")
        parts.append(f"{ref} ({len(ids)} task(s): {shown})")
    first = sorted(missing)[0]
    raise OptionError(
        f"{len(lacking)} task(s) start FROM an image that is not here and cannot be "
        f"pulled: {'; '.join(parts)}",
        fix=(f"on a machine that reaches the registry run `docker pull {first} && docker "
             f"save {first} -o base.tar`, then here `docker load -i base.tar`; or pass "
             "--missing-images skip to grade the other tasks"))


def skipped_lines(skipped: Mapping[str, str]) -> list[str]:
    """Skipped tasks grouped by why, the largest group first: ``N task(s): why (ids)``."""
    reasons: dict[str, list[str]] = {}
    for task_id, why in sorted(skipped.items()):
        reasons.setdefault(why, []).append(task_id)
    lines = []
    for why, ids in sorted(reasons.items(), key=lambda item: -len(item[1])):
        shown = ", ".join(ids[:_SHOWN]) + (f" and {len(ids) - _SHOWN} more"
                                           if len(ids) > _SHOWN else "")
        lines.append(f"{len(ids)} task(s): {why} ({shown})")
    return lines


def nothing_left(skipped: Mapping[str, str]) -> OptionError:
    """The error of a run whose policies skipped every task: how many, why, and the fix."""
    return OptionError(
        f"nothing to grade: all {len(skipped)} task(s) were skipped: "
        f"{'; '.join(skipped_lines(skipped))}",
        fix="`docker load` the missing image(s) (or pull them where a registry is "
            "reachable), pass --internet-tasks offline to grade network tasks offline, "
            "or pass task dirs that can be graded here")
