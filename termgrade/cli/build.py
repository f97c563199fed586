"""``termgrade build``: stage a dataset (or model) repo on disk, ready to validate and publish."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import typer

from termgrade.builders.kinds import RepoKind, repo_kind, repo_kinds
from termgrade.cli.app import guarded
from termgrade.core.errors import OptionError
from termgrade.core.progress import STDERR

build_app = typer.Typer(name="build", no_args_is_help=True,
                        help="Stage a complete repo on disk (temp dir + rename).")

TASKS_HELP = "Task dirs or folders of them (default: environments/)."
FORCE_HELP = "Replace the output dir if it exists."
PROSE_HELP = ("Rewrite the card's prose sections: a markdown file of <!-- prose:NAME --> ... "
              "<!-- /prose --> blocks, or a folder of NAME.md files (counts and tables stay "
              "generated).")


def _done(out: Path, files: list[str]) -> None:
    STDERR.print(f"staged {out} ({len(files)} parquet file(s)); next: "
                 f"`termgrade validate {out}`")


@build_app.command("environments")
@guarded
def environments(
    out: Path = typer.Option(..., "--out", "-o",
                             help="Output dir, e.g. dist/termgrade-environments."),
    tasks: list[Path] = typer.Option(None, "--tasks", "-t", help=TASKS_HELP),
    labels: Path | None = typer.Option(None, "--labels", help="LabelRow JSONL."),
    model: list[str] = typer.Option(
        None, "--model", help="Keep only this model's labels (repeatable; default: all, and "
        "each must cover every task)."),
    splits: Path | None = typer.Option(None, "--splits", help="SplitRow JSONL (others: unseen)."),
    verify: Path | None = typer.Option(None, "--verify", help="`termgrade verify -o` JSONL."),
    repo_id: str = typer.Option(repo_kind("environments").default_repo_id, "--repo-id"),
    card_prose: Path | None = typer.Option(None, "--card-prose", help=PROSE_HELP),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    secrets_baseline: Path | None = typer.Option(
        None, "--secrets-baseline",
        help="Reviewed detect-secrets findings of the task files (default: secrets.baseline "
             "in the first task folder, if present), placed beside the staged repo where "
             "`validate` and `publish` read it."),
    license_id: str | None = typer.Option(
        None, "--license",
        help="The tasks' license (SPDX id, e.g. mit) when their task.toml files state none; "
             "without it the card claims no license and says how to set one."),
) -> None:
    """Tasks (parquet + tasks/ tree + registry.json), labels, split flags, base image, card."""
    from termgrade.builders.environments import build_environments

    summary = build_environments(out, task_roots=tasks or [Path("environments")], labels=labels,
                                 splits=splits, verify=verify, models=model or None,
                                 repo_id=repo_id, overwrite=force,
                                 secrets_baseline=secrets_baseline, card_prose=card_prose,
                                 license=license_id)
    if summary.secrets_baseline is not None:
        STDERR.print(f"reviewed secret findings placed at {summary.secrets_baseline}")
    counts = ", ".join(f"{s} {n}" for s, n in summary.split_counts.items())
    STDERR.print(f"{len(summary.tasks)} task(s) ({counts}); {summary.n_labels} label(s)")
    if summary.license is None:
        STDERR.print("license: unknown (no task states one): the card claims none; set it "
                     "with --license SPDX-ID")
    _done(out, summary.files)


@build_app.command("trajectories")
@guarded
def trajectories(
    out: Path = typer.Option(..., "--out", "-o", help="Output dir."),
    trials: Path = typer.Option(..., "--trials", help="TrialRecord JSONL (streamed)."),
    tasks: list[Path] = typer.Option(None, "--tasks", "-t", help=TASKS_HELP),
    labels: Path | None = typer.Option(
        None, "--labels", help="LabelRow JSONL: pass_rate and band on every row."),
    splits: Path | None = typer.Option(
        None, "--splits", help="`termgrade select` output: the task's split on every row."),
    repo_id: str = typer.Option(repo_kind("trajectories").default_repo_id, "--repo-id"),
    environments_repo: str = typer.Option(
        repo_kind("environments").default_repo_id, "--environments-repo",
        help="Repo id of the tasks and labels, linked from the card."),
    card_prose: Path | None = typer.Option(None, "--card-prose", help=PROSE_HELP),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    atif: bool = typer.Option(False, "--atif", help="Also write each trial as a Harbor "
                              "ATIF-v1.8 trajectory (atif/<task_id>/<trial_id>.json)."),
    license_id: str | None = typer.Option(
        None, "--license", help="The tasks' license (SPDX id) when their task.toml files "
        "state none; without it the card claims no license."),
) -> None:
    """Every trial as SFT messages (config sft), full episodes (config episodes) and a Hub
    agent trace (config traces)."""
    from termgrade.builders.trajectories import build_trajectories

    # Without --tasks: environments/ when it is here; else no task dirs, and each task's
    # instruction comes from its trials' transcripts (`termgrade synth --transcripts`).
    default = [Path("environments")] if Path("environments").is_dir() else []
    summary = build_trajectories(out, trials=trials, task_roots=tasks or default,
                                 labels=labels, splits=splits, repo_id=repo_id,
                                 environments_repo=environments_repo, overwrite=force,
                                 card_prose=card_prose, atif=atif,
                                 license=license_id)
    s = summary.stats
    STDERR.print(f"{s.trials:,} trial(s): {s.counted:,} counted, {s.passed:,} passed")
    _done(out, summary.files)


@build_app.command("bandcentral")
@guarded
def bandcentral(
    out: Path = typer.Option(..., "--out", "-o", help="Output dir."),
    splits: Path = typer.Option(..., "--splits", help="SplitRow JSONL with train/val flags."),
    tasks: list[Path] = typer.Option(None, "--tasks", "-t", help=TASKS_HELP),
    labels: Path | None = typer.Option(None, "--labels", help="LabelRow JSONL (base model)."),
    verify: Path | None = typer.Option(None, "--verify", help="`termgrade verify -o` JSONL."),
    model: str | None = typer.Option(None, "--model", help="Base model among the labels."),
    scaffold: str | None = typer.Option(None, "--scaffold", help="Its scaffold."),
    secrets_baseline: Path | None = typer.Option(
        None, "--secrets-baseline",
        help="Reviewed detect-secrets findings of the task files (default: secrets.baseline "
        "in the first task folder, if present); placed beside the repo for validate."),
    selection_report: Path | None = typer.Option(
        None, "--selection-report",
        help="The <splits>.selection.json of the `termgrade select` run that chose the tasks "
        "(default: the one beside --splits); shipped with its markdown and plot."),
    repo_id: str = typer.Option(repo_kind("bandcentral").default_repo_id, "--repo-id"),
    card_prose: Path | None = typer.Option(None, "--card-prose", help=PROSE_HELP),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    license_id: str | None = typer.Option(
        None, "--license", help="The tasks' license (SPDX id) when their task.toml files "
        "state none; without it the card claims no license."),
    include_unattested: bool = typer.Option(
        False, "--include-unattested", help="Ship selected unattested tasks too (graded by "
        "test.sh's own reward, which the grader cannot attest); left out by default."),
) -> None:
    """Selected train + validation tasks with base pass rates, and verl's prompt table."""
    from termgrade.audit.attestable import exclusion_note
    from termgrade.builders.bandcentral import build_bandcentral

    summary = build_bandcentral(out, splits=splits, task_roots=tasks or [Path("environments")],
                                labels=labels, verify=verify, model=model, scaffold=scaffold,
                                secrets_baseline=secrets_baseline,
                                selection_report=selection_report, repo_id=repo_id,
                                overwrite=force, card_prose=card_prose, license=license_id,
                                include_unattested=include_unattested)
    if summary.unattested:
        STDERR.print("[yellow]warning:[/] " + exclusion_note(
            list(summary.unattested), included=include_unattested, what="the bandcentral repo"))
    STDERR.print(", ".join(f"{s} {len(r)}" for s, r in summary.rates.items()))
    if summary.secrets_baseline is not None:
        STDERR.print(f"reviewed secret findings placed at {summary.secrets_baseline}")
    _done(out, summary.files)


@build_app.command("checkpoint-card")
@guarded
def checkpoint_card(
    out: Path = typer.Option(..., "--out", "-o", help="Output dir of the model repo."),
    config: Path | None = typer.Option(None, "--config", help="Training config YAML "
                                       "(default: the paper's recipe)."),
    results: Path | None = typer.Option(None, "--results", help="Results JSON."),
    adapter: Path | None = typer.Option(
        None, "--adapter", help="The trained adapter folder (PEFT save_pretrained); without "
        "it the card says the repo holds no adapter yet."),
    repo_id: str | None = typer.Option(
        None, "--repo-id", help="The model repo (default: the checkpoint card's own)."),
    run: Path | None = typer.Option(None, "--run", help="A `termgrade train prepare` run "
                                    "directory: the card's config and metrics are the run's."),
    card_prose: Path | None = typer.Option(None, "--card-prose", help=PROSE_HELP),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """The model card (README.md + training_config.yaml) of a LoRA adapter repo."""
    from termgrade.training.checkpoint_card import DEFAULT_REPO_ID, build_checkpoint_card

    build_checkpoint_card(out, config=config, results=results, adapter=adapter,
                          repo_id=repo_id or DEFAULT_REPO_ID, overwrite=force,
                          card_prose=card_prose, run=run)
    STDERR.print(f"staged {out}")


def kind_command(kind: RepoKind) -> Callable[..., None]:
    """``termgrade build KIND`` for a registered kind with no command of its own: the
    builder's options as ``--set NAME=VALUE`` (strings; paths are the builder's to read)."""

    def command(
        out: Path = typer.Option(..., "--out", "-o", help="Output dir."),
        option: list[str] = typer.Option(
            None, "--set", help="NAME=VALUE passed to the builder (repeatable)."),
        repo_id: str = typer.Option(kind.default_repo_id, "--repo-id"),
        force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    ) -> None:
        options: dict[str, str] = {}
        for item in option or []:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise OptionError(f"--set {item!r}: not NAME=VALUE",
                                  fix="e.g. --set splits=labels/splits.jsonl")
            options[name.replace("-", "_")] = value
        kind.build(out, repo_id=repo_id, overwrite=force, **options)
        STDERR.print(f"staged {out}; next: `termgrade validate {out}`")

    command.__doc__ = kind.about
    return guarded(command)


def register(app: typer.Typer) -> None:
    """``termgrade build``: the commands above, and one for every other registered repo kind
    (:mod:`termgrade.builders.kinds`)."""
    group = typer.Typer(name="build", no_args_is_help=True, help=build_app.info.help)
    group.registered_commands = list(build_app.registered_commands)
    written = {c.name for c in build_app.registered_commands}
    for kind in repo_kinds():
        if kind.name not in written:
            group.command(kind.name)(kind_command(kind))
    app.add_typer(group, name="build")
