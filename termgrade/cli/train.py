"""``termgrade train prepare | launch | monitor | eval``: the GRPO++ run with verl."""

from __future__ import annotations

from pathlib import Path

import typer

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Reproduce the GRPO++ run with verl on the bandcentral repo.",
                        no_args_is_help=True)
    app.add_typer(group, name="train")

    @group.command("prepare")
    @guarded
    def prepare(
        repo: str = typer.Option(..., "--repo", help="The bandcentral repo: a directory or a "
                                 "Hub dataset id."),
        out: Path = typer.Option(..., "-o", "--out", help="The run directory to write."),
        revision: str | None = typer.Option(None, help="Hub revision of --repo."),
        base_model: str | None = typer.Option(None, help="The model to train (a Hub id or a "
                                              "local path on the node). Default: the model "
                                              "the repo's tasks were selected for; another "
                                              "model needs --train-other-model."),
        tool_parser: str | None = typer.Option(None, help="verl's tool-call parser (default: "
                                               "by the model's family, e.g. gemma4, hermes)."),
        train_other_model: bool = typer.Option(False, "--train-other-model", help="Train a "
                                               "model other than the one the tasks were "
                                               "selected for (their difficulty is unmeasured "
                                               "for it)."),
        smoke: bool = typer.Option(False, "--smoke", help="A one-step run on one GPU with a "
                                   "small model of the same family (checks the loop)."),
        steps: int | None = typer.Option(None, help="Override total_training_steps (5)."),
        batch_size: int | None = typer.Option(None, help="Prompts per step, also the "
                                              "mini-batch (fully on-policy; paper: 16)."),
        include_unattested: bool = typer.Option(
            False, "--include-unattested", help="Train on unattested tasks too (graded by "
            "test.sh's own reward, which the grader cannot attest); left out by default."),
    ) -> None:
        """Write the parquet, agent-loop config, launch script and run.json for verl."""
        from termgrade.training.prepare import ModelRequest, prepare_run
        from termgrade.training.prepare_readme import launch_line, readme_path
        from termgrade.training.recipe import GrpoRecipe

        changes: dict[str, object] = {}
        if steps is not None:
            changes["total_training_steps"] = steps
        if batch_size is not None:
            changes["train_batch_size"] = changes["ppo_mini_batch_size"] = batch_size
        recipe = GrpoRecipe.model_validate(changes)
        request = ModelRequest(base_model=base_model, tool_parser=tool_parser,
                               train_other_model=train_other_model, smoke=smoke)
        done = prepare_run(repo, out, recipe=recipe, revision=revision, model=request,
                           include_unattested=include_unattested)
        for warning in done.record.warnings:
            STDERR.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
        splits = ", ".join(f"{n} {s.tasks}" for n, s in done.record.splits.items())
        STDERR.print(f"wrote {out}: {done.choice.model} with verl's {done.choice.tool_parser} "
                     f"tool parser ({done.choice.parser_source}), {splits} tasks; on the GPU "
                     "node (Docker and the tasks' images there: "
                     f"{readme_path(done.paths)} says what it needs), start it with "
                     f"`{launch_line(out)}`", highlight=False, soft_wrap=True)

    @group.command("launch")
    @guarded
    def launch_cmd(
        run: Path = typer.Argument(..., help="A run directory from `train prepare`."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the command only."),
    ) -> None:
        """Start the run on this GPU node (8 x H200 in the paper): runs its launch.sh."""
        import shlex

        from termgrade.training.launch import launch, launch_command

        if dry_run:
            typer.echo(shlex.join(launch_command(run)))
            return
        raise typer.Exit(launch(run))

    @group.command("monitor")
    @guarded
    def monitor(
        run: Path = typer.Argument(..., help="A run directory (reads its metrics.jsonl)."),
        warn_at: float = typer.Option(8.0, help="Warn at this many generation batches per "
                                      "step (the paper capped at 10)."),
    ) -> None:
        """Table and plot of reward, groups kept, the re-band signal and turns; warnings."""
        from rich.table import Table

        from termgrade.training.monitor import monitor_run

        report = monitor_run(run, warn_at=warn_at)
        table = Table("step", "reward", "validation", "turns", "dropped", "gen batches")
        for row in report.rows:
            table.add_row(str(row.step), *(("-" if v is None else f"{v:.3f}") for v in (
                row.reward, row.val_score, row.turns)), f"{row.dropped_groups:g}",
                "-" if row.gen_batches is None else f"{row.gen_batches:.2f}")
        from rich.console import Console

        Console().print(table)
        for warning in report.warnings:
            STDERR.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
        STDERR.print(f"wrote {report.table} and {report.plot}")

    @group.command("eval")
    @guarded
    def eval_cmd(
        model: str = typer.Option(..., "--model", help="Harbor model name of the served "
                                  "adapter (e.g. openai/<served-name>)."),
        api_base: str = typer.Option("http://127.0.0.1:8000/v1", help="The vLLM endpoint."),
        jobs: Path = typer.Option(Path("jobs"), "-o", help="Harbor jobs directory."),
        job_name: str = typer.Option("tb21-eval", help="Harbor job name."),
        repeats: int = typer.Option(3, "-k", help="Repeats per task (pass@1 over them)."),
        concurrent: int = typer.Option(8, "-n", help="Trials at once."),
        env: str = typer.Option("docker", "-e", help="Harbor environment (paper: daytona)."),
        timeout_s: float = typer.Option(7200, "--task-timeout", help="Seconds the agent gets "
                                        "per task (the paper: 2 h); 0: each task's own."),
        timeout_multiplier: float | None = typer.Option(None, help="Harbor's multiplier of "
                                                        "every timeout, on top."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Write the job config and print "
                                     "the plan; run nothing."),
    ) -> None:
        """Terminal-Bench 2.1 through Harbor: 89 tasks, Terminus-2, 3 repeats, 2 h per task."""
        from termgrade.training.evaluate import EvalPlan, describe, run_eval, write_job_config

        plan = EvalPlan(model=model, api_base=api_base, jobs_dir=jobs, job_name=job_name,
                        repeats=repeats, concurrent=concurrent, environment=env,
                        timeout_s=timeout_s or None, timeout_multiplier=timeout_multiplier)
        typer.echo(describe(plan))
        if dry_run:
            STDERR.print(f"wrote {write_job_config(plan)}")
        else:
            raise typer.Exit(run_eval(plan))
