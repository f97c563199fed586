"""Which files a run folder holds: its trial files and, where present, its labels.

``termgrade view DIR`` takes the folder ``termgrade grade -o DIR`` wrote
(``DIR/trials.jsonl``, which may hold several runs), a folder holding the ``trials.jsonl``
of ``termgrade ingest`` (or several trial files), a folder of run folders (their runs
combined: ``DIR/*/trials.jsonl``), one trial file, or a staged trajectories repo (``termgrade build
trajectories -o DIR``: its trials are rebuilt, see :mod:`termgrade.view.trajectories`).
Labels are computed from the trials unless ``--labels`` names a file (then checked against
the trials: :func:`termgrade.view.index.load_run`); a labels file lying in ``DIR`` is never
picked up unasked (it may count other trials than the ones on the page), only named on the
page (``unused_labels``). Every file is sniffed
(:func:`termgrade.labels.sniff_kind`), so a labels file is never read as trials.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from termgrade.core.errors import RecordError
from termgrade.labels import sniff_kind
from termgrade.view.trajectories import is_trajectories_repo, trials_from_repo

TRIALS_NAME = "trials.jsonl"
LABELS_NAME = "labels.jsonl"


@dataclass(frozen=True)
class RunSources:
    trials: list[Path]
    labels: Path | None
    splits: Path | None = None
    """JSONL of ``{"task_id", "split"}`` rows (a trajectories repo's splits), if any."""
    origin: Path | None = None
    """The trajectories repo the trial file was rebuilt from, if it was."""
    unused_labels: tuple[Path, ...] = ()
    """Labels files found beside the trials and not used (``--labels`` uses one)."""

    def labels_said(self) -> str:
        """Which labels a page shows, in words: the ``--labels`` file (checked against
        the trials) or computed from the trials (a labels file beside them named, unused)."""
        if self.labels is not None:
            return f"from {self.labels} (checked against these trials)"
        unused = ", ".join(map(str, self.unused_labels))
        return "computed from these trials" + (
            f" ({unused} not used: --labels FILE shows it when it counts these trials)"
            if unused else "")


def _fix() -> str:
    return ("pass the folder `termgrade grade -o DIR` wrote, or the trials.jsonl of "
            "`termgrade ingest` (or a folder of them)")


def _kind(path: Path) -> str:
    """trials, labels, or what else it is (a folder may hold split flags, journals...)."""
    if not path.stat().st_size:
        return "empty"
    try:
        return sniff_kind(path)
    except RecordError:
        return "not trials or labels"


def find_sources(target: Path, labels: Path | None = None, *,
                 workdir: Path | None = None) -> RunSources:
    """The trial files and labels of ``target`` (a folder or a trial file). A staged
    trajectories repo is rebuilt into trial records under ``workdir`` first
    (:mod:`termgrade.view.trajectories`)."""
    target = Path(target)
    if not target.exists():
        raise RecordError(str(target), "does not exist", fix=_fix())
    if is_trajectories_repo(target):
        if workdir is None:
            raise RecordError(str(target), "is a trajectories repo: its trials are rebuilt "
                              "into a working folder first", fix="pass workdir=")
        rebuilt, splits = trials_from_repo(target, Path(workdir))
        return RunSources(trials=[rebuilt], labels=_checked_labels(labels), splits=splits,
                          origin=target)
    if target.is_file():
        candidates = [target]
    else:
        candidates = sorted(p for p in target.glob("*.jsonl") if p.is_file())
        # a folder of run folders (`grade -o runs/a`, `-o runs/b`): their runs, combined
        candidates += sorted(p for p in target.glob(f"*/{TRIALS_NAME}") if p.is_file())
        if not candidates:
            raise RecordError(str(target), "holds no .jsonl file (no trials.jsonl)", fix=_fix())
    kinds = {path: _kind(path) for path in candidates}
    trials = [p for p, kind in kinds.items() if kind == "trials"]
    if not trials:
        raise RecordError(str(target), "holds no trial records (found: "
                          + ", ".join(f"{p.name} ({kinds[p]})" for p in candidates) + ")",
                          fix=_fix())
    found = tuple(p for p, kind in kinds.items() if kind == "labels")
    chosen = _checked_labels(labels)
    return RunSources(trials=trials, labels=chosen,
                      unused_labels=tuple(p for p in found if p != chosen))


def _checked_labels(labels: Path | None) -> Path | None:
    if labels is None:
        return None
    if not Path(labels).is_file():
        raise RecordError(str(labels), "--labels: no such file",
                          fix="pass the labels.jsonl `termgrade labels` wrote, or leave "
                              "--labels out to compute labels from the trials")
    elif sniff_kind(Path(labels)) != "labels":
        raise RecordError(str(labels), "--labels: not a labels file",
                          fix="pass the labels.jsonl `termgrade labels` wrote")
    return Path(labels)
