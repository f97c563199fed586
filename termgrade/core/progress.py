"""The one progress wrapper: a rich bar on stderr, off with TERMGRADE_PROGRESS=0."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from termgrade.core.settings import SETTINGS

STDERR = Console(stderr=True)


class Tracker:
    def __init__(self, progress: Progress | None, task_id: TaskID | None) -> None:
        self._progress = progress
        self._task_id = task_id

    def advance(self, description: str | None = None) -> None:
        if self._progress is not None and self._task_id is not None:
            self._progress.update(self._task_id, advance=1, description=description)


@contextmanager
def track(description: str, total: int, *, enabled: bool | None = None) -> Iterator[Tracker]:
    on = SETTINGS.progress if enabled is None else enabled
    if not on:
        yield Tracker(None, None)
        return
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=STDERR, transient=False) as progress:
        yield Tracker(progress, progress.add_task(description, total=total))
