"""Tasks that ask for the network: TermGrade never gives one, so the user decides.

Harbor tasks may declare ``[environment] allow_internet = true`` (TermiGen's 3,566 all
do). Every TermGrade container runs with no network, so such a task is graded offline,
and its reward measures something other than what its author meant, only when the user
says so: ``refuse`` (the default) stops with the list, ``skip`` leaves them out,
``offline`` grades them offline all the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, get_args

from termgrade.core.errors import OptionError
from termgrade.task.errors import TaskLoadError
from termgrade.task.model import load_task

InternetPolicy = Literal["refuse", "skip", "offline"]
INTERNET_POLICIES: tuple[str, ...] = get_args(InternetPolicy)
_SHOWN = 5


def wanting_internet(task_dirs: Mapping[str, Path]) -> list[str]:
    """The ids of the tasks whose task.toml asks for the network (a task that does not
    load is left to the runner, which records why)."""
    wanting = []
    for task_id, path in task_dirs.items():
        try:
            if load_task(path).wants_internet:
                wanting.append(task_id)
        except TaskLoadError:
            continue
    return sorted(wanting)


def apply_internet_policy(task_dirs: Mapping[str, Path],
                          policy: InternetPolicy) -> dict[str, Path]:
    """``task_dirs`` as ``policy`` leaves them; ``refuse`` raises :class:`OptionError`
    naming the tasks when any asks for the network."""
    if policy not in INTERNET_POLICIES:
        raise OptionError(f"internet policy {policy!r} is not one of "
                          f"{', '.join(INTERNET_POLICIES)}", fix="choose one of them")
    if policy == "offline":
        return dict(task_dirs)
    wanting = set(wanting_internet(task_dirs))
    if policy == "skip" or not wanting:
        return {k: v for k, v in task_dirs.items() if k not in wanting}
    names = sorted(wanting)
    shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more"
                                         if len(names) > _SHOWN else "")
    raise OptionError(
        f"{len(names)} task(s) ask for the network ([environment] allow_internet = true), "
        f"which TermGrade never gives: {shown}",
        fix="pass --internet-tasks offline to grade them offline all the same, or "
            "--internet-tasks skip to leave them out")
