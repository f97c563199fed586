"""The reference record a trial is judged against, made first where it is missing.

``grade`` and ``run`` never grade a task that has a reference solution without its record
(:mod:`termgrade.scoring.reference`): :func:`ensure_reference` finds it, or runs the
reference once through ``verify``'s own path (:func:`~termgrade.verify.runner.verify_task`
with the image already built, one reference run and the nop run; the record is saved by
task digest, so it is made once per task version), or refuses with the fix. A task without
a solution (third-party corpora) is graded as it always was, and said:
:func:`without_solution_note`. The RL agent loop never runs a reference inside a step: it
uses the record when there is one and warns once per task folder when there is none
(:func:`reference_or_warn`).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from termgrade.core.errors import TermGradeError
from termgrade.sandbox.engine import BuiltImage
from termgrade.sandbox.image_cache import image_for
from termgrade.scoring.reference import ReferenceRecord, reference_for
from termgrade.task import Task, load_task
from termgrade.verify.errors import ReferenceUnavailableError, ReferenceWarning
from termgrade.verify.runner import verify_task


def refusal(task: Task, why: str) -> ReferenceUnavailableError:
    """The error that names the task, why its record is missing, and the fix."""
    return ReferenceUnavailableError(
        f"{task.task_id}: no reference record for its current content ({why}); grading "
        "without it would judge honest work by the task's text alone",
        fix=f"termgrade verify {task.paths.root} (then grade again: the record is found "
            "by task digest from any folder)")


def ensure_reference(task: Task, image: BuiltImage | str) -> ReferenceRecord | None:
    """``task``'s reference record: the recorded one, else one made now by running its
    reference solution once in ``image`` on ``verify``'s path (saved by digest).

    None for a task without ``solution/solve.sh`` (nothing to run: graded as before).
    Raises :class:`ReferenceUnavailableError` when the reference run does not pass clean
    (the task is not verified: its verdict and reason are named)."""
    found = reference_for(task)
    if found is not None or not task.has_solution:
        return found
    built = image if isinstance(image, BuiltImage) else BuiltImage(image, "", 0.0)
    record = verify_task(task.paths.root, repeat=1, build_image=lambda _task: built)
    if record.reference is not None:
        return record.reference
    why = record.reason or record.error or "its reference run did not pass clean"
    raise refusal(task, f"its reference solution, run now, was {record.verdict.value}: "
                        f"{why.splitlines()[0] if why.strip() else why}")


def without_solution_note(task_ids: Sequence[str]) -> str | None:
    """The one warning line for the tasks graded with no reference record because they
    ship no solution; None when there are none."""
    if not task_ids:
        return None
    shown = ", ".join(sorted(task_ids)[:10]) + (
        f" and {len(task_ids) - 10} more" if len(task_ids) > 10 else "")
    return (f"{len(task_ids)} task(s) have no solution/solve.sh, so no reference record: "
            f"graded by their text alone (the transfer set from the instruction, tests and "
            f"declared artifacts): {shown}")


def references_first(task_dirs: Mapping[str, Path], *, here: bool = True,
                     say: Callable[[str], None] | None = None
                     ) -> dict[str, ReferenceRecord | None]:
    """Before a grading run: each task's reference record (task id -> record or None),
    made first on this machine where missing (:func:`ensure_reference`). Raises
    :class:`ReferenceUnavailableError` for the first task that has a solution and gets no
    record. A task that cannot be loaded, or whose image cannot be built, is left to its
    trials when they run ``here`` (they fail the same way and say why); trials that run
    elsewhere (a Ray cluster) would be graded without the record, so that refuses.
    ``say`` hears of each reference run and gets the one line naming the tasks without a
    solution (without ``say``, that line is a :class:`ReferenceWarning`)."""
    found: dict[str, ReferenceRecord | None] = {}
    bare = []
    for task_id, path in sorted(task_dirs.items()):
        try:
            task = load_task(path)
        except TermGradeError:
            continue
        found[task_id] = reference_for(task)
        if not task.has_solution:
            bare.append(task_id)
        if found[task_id] is not None or not task.has_solution:
            continue
        if say is not None:
            say(f"{task_id}: no reference record for its content: running its reference "
                "solution once first (verify's path; recorded by task digest)")
        try:
            image = image_for(task)
        except (TermGradeError, OSError) as exc:
            if here:
                continue
            raise refusal(task, f"its image cannot be built here to run the reference: "
                                f"{str(exc).splitlines()[0] if str(exc) else exc!r}") from exc
        found[task_id] = ensure_reference(task, image)
    note = without_solution_note(bare)
    if note is not None and say is not None:
        say(note)
    elif note is not None:
        warnings.warn(note, ReferenceWarning, stacklevel=2)
    return found


_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


def reference_or_warn(task: Task) -> ReferenceRecord | None:
    """The recorded reference of ``task`` (never made here: the RL loop does not run a
    reference inside a step); a :class:`ReferenceWarning` once per task folder when
    there is none."""
    found = reference_for(task)
    if found is None:
        key = f"{task.paths.root}"
        with _WARNED_LOCK:
            first = key not in _WARNED
            _WARNED.add(key)
        if first:
            fix = (f"run `termgrade verify {task.paths.root}` before training"
                   if task.has_solution else "it ships no solution/solve.sh")
            warnings.warn(f"{task.task_id}: graded with no reference record (the transfer "
                          f"set from the task's text alone); {fix}", ReferenceWarning,
                          stacklevel=2)
    return found
