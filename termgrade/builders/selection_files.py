"""The report of the ``termgrade select`` run that chose a bandcentral repo's tasks,
shipped in the repo (``selection/selection.{json,md,png}``) and linked from its card.

``termgrade select -o splits.jsonl`` writes ``splits.selection.json`` / ``.md`` / ``.png``
beside the splits file; that is where the report is looked for unless named. The JSON must
be a :class:`~termgrade.selection.chosen.SelectionReport` whose chosen train and validation
tasks are the repo's: a report of another run is refused.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from pydantic import ValidationError

from termgrade.builders.errors import BuildError
from termgrade.builders.inputs import RecordSource, source_path
from termgrade.builders.layout import RepoPaths
from termgrade.core.atomic import atomic_write_bytes
from termgrade.core.errors import DataWarning, RecordError

KINDS = ("json", "md", "png")


def report_files(json_path: Path) -> dict[str, Path]:
    """The report's files that exist: its JSON and the markdown and plot beside it."""
    name = json_path.name.removesuffix(".json")
    found = {kind: json_path.with_name(f"{name}.{kind}") for kind in KINDS}
    return {kind: path for kind, path in found.items() if path.is_file()}


def find_selection_report(splits: RecordSource, explicit: Path | None) -> Path | None:
    """The report JSON to ship: ``explicit`` (which must exist), else the one ``select``
    wrote beside a ``splits`` file (a warning when there is none), else None."""
    from termgrade.selection.chosen import selection_report_paths

    if explicit is not None:
        if not Path(explicit).is_file():
            raise BuildError(f"{explicit}: no such selection report",
                             fix="pass the <splits>.selection.json `termgrade select` wrote")
        return Path(explicit)
    splits_file = source_path(splits)
    if splits_file is None:
        return None
    beside = selection_report_paths(splits_file)["json"]
    if beside.is_file():
        return beside
    warnings.warn(DataWarning(
        f"no selection report beside {splits} ({beside.name}): the card cannot link the "
        "selection that chose these tasks. Fix: pass --selection-report, or keep the "
        "report `termgrade select` wrote beside its splits file"), stacklevel=3)
    return None


def ship_selection_report(paths: RepoPaths, json_path: Path,
                          chosen: dict[str, list[str]]) -> dict[str, str]:
    """Check the report against the repo's ``chosen`` task ids per role, copy its files
    into the repo, and return their paths relative to the repo root by kind."""
    from termgrade.selection.chosen import SelectionReport

    try:
        report = SelectionReport.model_validate_json(json_path.read_bytes())
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "(root)"
        raise RecordError(str(json_path), f"not a selection report: {field}: {error['msg']}",
                          fix="pass the <splits>.selection.json `termgrade select` wrote"
                          ) from None
    for role, task_ids in chosen.items():
        reported = sorted(t.task_id for t in report.chosen if t.role == role)
        if reported != sorted(task_ids):
            differ = sorted(set(reported) ^ set(task_ids))
            raise BuildError(f"{json_path}: the report's {role} tasks are not the repo's "
                             f"({len(differ)} differ, first {differ[0]!r})",
                             fix="pass the report of the `termgrade select` run that wrote "
                             "these splits")
    shipped = {}
    for kind, source in report_files(json_path).items():
        target = paths.selection_report(kind)
        atomic_write_bytes(target, source.read_bytes())
        shipped[kind] = paths.rel(target)
    return shipped
