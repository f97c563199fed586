"""``termgrade labels``: trials -> labels.jsonl; ``termgrade synth``: a synthetic corpus."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from termgrade.cli.app import guarded
from termgrade.core.errors import DataWarning, OptionError
from termgrade.core.progress import STDERR
from termgrade.records.issues import Issue, Severity

if TYPE_CHECKING:
    import pandas as pd

    from termgrade.trialsets.synthetic_config import SyntheticModel

T = TypeVar("T")


def quietly(func: Callable[[], T]) -> T:
    """Run ``func`` with DataWarnings silenced: the CLI prints the issues itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return func()


def print_issues(issues: Iterable[Issue]) -> None:
    """Each issue on stderr, as ``warning: ...`` (yellow) or ``error: ...`` (red)."""
    for issue in issues:
        color = "yellow" if issue.severity is Severity.WARNING else "red"
        STDERR.print(f"[{color}]{issue.severity.value}:[/] {escape(str(issue))}",
                     highlight=False, soft_wrap=True)


def parse_floats(text: str, option: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise OptionError(f"{option} {text!r}: not a comma-separated list of numbers",
                          fix=f"e.g. {option} 0.25,0.75") from None


def parse_names(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(x.strip() for x in text.split(",") if x.strip())


def pass_at_1_by_attestation(rows: pd.DataFrame) -> str:
    """Mean pass rate of attested, unattested and unrecorded tasks apart, with their
    task counts: ``attested 0.4500 (12), unattested 1.0000 (2)``. An unattested task's
    rate is test.sh's own reward: never pooled with the grader's unnoticed."""
    attested = rows["attested"]
    parts = []
    for kind, mask in (("attested", attested.eq(True)), ("unattested", attested.eq(False)),
                       ("unrecorded", attested.isna())):
        part = rows.loc[mask, "pass_rate"]
        if len(part):
            parts.append(f"{kind} {part.mean():.4f} ({len(part)})")
    return ", ".join(parts) or "-"


def _print_labels(frame: pd.DataFrame) -> None:
    table = Table(title="labels")
    for column in ("model", "scaffold", "tasks", "k", "counted", "pass@1 (tasks)", "bands"):
        table.add_column(column)
    for (model, scaffold), rows in frame.groupby(["model", "scaffold"], sort=True):
        counts = rows["band"].value_counts()
        bands = ", ".join(f"{b} {n}" for b, n in counts.sort_index().items())
        table.add_row(str(model), str(scaffold), str(len(rows)), str(int(rows["k"].max())),
                      str(int(rows["n_counted"].sum())), pass_at_1_by_attestation(rows),
                      bands)
    STDERR.print(table)


def _synth_models(specs: Sequence[str] | None,
                  infra_rate: float | None) -> tuple[SyntheticModel, ...]:
    from termgrade.trialsets.synthetic_config import PAPER_LIKE, SyntheticModel

    models = tuple(SyntheticModel.parse(s) for s in specs) if specs else PAPER_LIKE
    if infra_rate is not None:
        models = tuple(dataclasses.replace(m, infra_error_rate=infra_rate) for m in models)
    return models


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def labels(
        trials: list[Path] = typer.Argument(..., help="Trial JSONL files (TrialRecord rows)."),
        output: Path = typer.Option(..., "--output", "-o", help="labels.jsonl to write."),
        cuts: str = typer.Option("0.25,0.75", "--cuts", help="Interior band cut points."),
        band_names: str | None = typer.Option(
            None, "--band-names", help="Comma-separated, one per band, 0 and 1 included "
            "(default zero,low,central,high,one)."),
        k: list[str] = typer.Option(None, "--k", help="Planned attempts: 8 for every model, "
                                    "or MODEL=K (repeatable). Default: what the runs planned "
                                    "(runs.jsonl beside the trials), else inferred per "
                                    "model."),
        keep_uncounted: bool = typer.Option(
            False, "--keep-uncounted", help="Write rows (pass_rate null) for task x model "
            "pairs with no counted trial instead of refusing them."),
        mix_digests: bool = typer.Option(
            False, "--mix-digests", help="Label tasks whose trials graded different versions "
            "of their files (task_digest) instead of refusing them."),
        include_unattested: bool = typer.Option(
            False, "--include-unattested", help="Label unattested tasks too (graded by "
            "test.sh's own reward: the grader cannot attest them); left out by default."),
    ) -> None:
        """One label row per task x model x scaffold: pass_rate, band, n_counted, k, n_passed.

        Infrastructure errors (counted=false) never move a pass rate. NaN rewards, tasks
        missing for a model and tasks short of k attempts are reported with counts. A task
        x model with no counted trial at all is refused (unless --keep-uncounted)."""
        from termgrade.labels import (
            BandScheme,
            compute_labels,
            parse_k,
            require_counted,
            write_labels,
        )
        from termgrade.labels.compute import check_digests
        from termgrade.records.run import read_runs
        from termgrade.trialsets import read_trials

        scheme = BandScheme.from_cuts(parse_floats(cuts, "--cuts"), parse_names(band_names))
        spec = parse_k(k)
        trial_set = quietly(lambda: read_trials(trials))
        if not mix_digests:
            check_digests(trial_set.frame, ", ".join(str(t) for t in trials))
        runs = read_runs(trials)
        label_set = quietly(lambda: compute_labels(trial_set, k=spec, scheme=scheme,
                                                   mix_digests=True,
                                                   include_unattested=include_unattested,
                                                   runs=runs))
        print_issues([*trial_set.issues, *label_set.issues])
        if not keep_uncounted:
            require_counted(label_set, ", ".join(str(t) for t in trials))
        n = write_labels(output, label_set)
        _print_labels(label_set.frame)
        STDERR.print(f"wrote {n} label rows to {output}")

    @app.command()
    @guarded
    def synth(
        output: Path = typer.Option(..., "--output", "-o", help="trials.jsonl to write."),
        tasks: int = typer.Option(1004, "--tasks", min=1, help="Number of tasks (synthetic "
                                  "ids; ignored with --from-tasks)."),
        from_tasks: list[Path] = typer.Option(
            None, "--from-tasks", help="Task dirs or folders of them (repeatable): draw the "
            "trials for these real task ids (models and source stay synthetic), so labels "
            "and builds match the tasks."),
        seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same bytes)."),
        model: list[str] = typer.Option(None, "--model", help="NAME:K[:MEAN] (repeatable). "
                                        "Default: six paper-like models, k=8 x4 and k=2 x2."),
        scaffold: str = typer.Option("terminus-2", "--scaffold"),
        task_prefix: str = typer.Option("synthetic-task", "--task-prefix"),
        infra_rate: float | None = typer.Option(None, "--infra-rate", min=0.0, max=0.99,
                                                help="Infrastructure error rate per try."),
        shared: float = typer.Option(0.6, "--shared-difficulty", min=-1.0, max=1.0,
                                     help="Correlation of task difficulty across models."),
        truth: Path | None = typer.Option(None, "--truth", help="Also write the true pass "
                                          "rates (JSONL: task_id, model, scaffold, k, ...)."),
        transcripts: bool = typer.Option(False, "--transcripts", help="Also give each graded "
                                         "trial a synthetic episode (terminal turns, marked "
                                         "synthetic; SFT messages follow from it at build "
                                         "time): a release-sized input for `build "
                                         "trajectories`."),
    ) -> None:
        """Write a synthetic grading corpus (everything named synthetic) with a known truth."""
        from termgrade.core.atomic import atomic_write_jsonl
        from termgrade.trialsets import write_trials
        from termgrade.trialsets.synthetic import generate
        from termgrade.trialsets.synthetic_config import SyntheticConfig

        task_ids: tuple[str, ...] = ()
        if from_tasks:
            from termgrade.task import discover_tasks

            task_ids = tuple(sorted({path.name for path in discover_tasks(*from_tasks)}))
            if not task_ids:
                from termgrade.core.errors import OptionError

                raise OptionError(f"--from-tasks {' '.join(map(str, from_tasks))}: no task "
                                  "dir there", fix="pass task dirs (with task.toml) or "
                                  "folders of them, e.g. --from-tasks environments")
            tasks = len(task_ids)
        config = SyntheticConfig(models=_synth_models(model, infra_rate), n_tasks=tasks,
                                 seed=seed, shared_difficulty=shared, scaffold=scaffold,
                                 task_prefix=task_prefix, task_ids=task_ids)
        corpus = generate(config)
        records: Iterable[dict[str, Any]] = corpus.records
        if transcripts:
            from termgrade.trialsets.synthetic_transcript import TranscriptMaker

            records = TranscriptMaker(seed).add_all(corpus.records)
        n = write_trials(output, records)
        if truth is not None:
            atomic_write_jsonl(truth, corpus.truth.to_dict("records"))
        counted = sum(1 for r in corpus.records if r["counted"])
        STDERR.print(f"wrote {n} synthetic trials ({counted} counted) for "
                     f"{len(config.models)} model(s) x {tasks} task(s) to {output}")
