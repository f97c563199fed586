"""``termgrade run``: the dataset card's quick start in one command."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from termgrade.agent.kinds import AgentName
from termgrade.audit.attestable import attestability
from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR
from termgrade.sandbox.engine import BuiltImage
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.phases import profile, render
from termgrade.scoring.reference import reference_for
from termgrade.scoring.trial import make_ahead, run_task
from termgrade.task import Task, load_task
from termgrade.task.digest import task_digest
from termgrade.verify.ensure import ensure_reference, without_solution_note
from termgrade.verify.runner import record_reference


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def run(
        task_dir: Path = typer.Argument(..., help="A task directory."),
        agent: AgentName = typer.Option(AgentName.ORACLE, "--agent", "-a"),
        keep: bool = typer.Option(
            False, "--keep", help="Leave both containers: the scoring one running with the "
            "agent's carried work, the agent's stopped with what was not carried."),
        timings: bool = typer.Option(
            False, "--timings", help="Print each phase's share of the trial's time, median "
            "and p90 (create/start A+B, agent, freeze, review, transfer, start B, broker, "
            "test.sh, decision, teardown)."),
        trials: int = typer.Option(
            1, "--trials", "-n", min=1, help="Run the trial this many times (each next "
            "one's containers made ahead by the warm pool); the last one is shown, "
            "--timings profiles them all."),
    ) -> None:
        """Build the task, run an agent phase, copy the tests in, verify, print the reward."""
        task = load_task(task_dir)
        image = build_task_image(task)
        STDERR.print(f"built {image.tag} in {image.duration_s:.1f} s")
        _reference_first(task, image, agent)
        attestable = attestability(task)
        if not attestable.attested:
            STDERR.print(f"[yellow]unattested task[/] (graded by test.sh's own reward): "
                         f"{escape(attestable.reason or '')}")
        outcomes = []
        for i in range(trials):
            if i + 1 < trials:
                make_ahead(task, image.tag)
            outcomes.append(run_task(task, image.tag, agent, keep=keep and i + 1 == trials,
                                     attestable=attestable))
        outcome = outcomes[-1]
        if agent is AgentName.ORACLE and record_reference(task_digest(task.paths.root),
                                                          outcomes) is not None:
            STDERR.print("reference recorded (the grader judges this task's trials with "
                         "it, from any folder)")
        if timings:
            _print_timings([o.durations for o in outcomes], wait=not keep)
        if outcome.agent_error:
            STDERR.print(f"[yellow]agent:[/] {escape(outcome.agent_error)}")
        if outcome.transfer is not None:
            if outcome.transfer.declared:
                STDERR.print("transfer set (declared; only these paths of the agent's work "
                             "reach the verifier):")
            else:
                STDERR.print("transfer set (derived; the agent's changes to the image's files "
                             "reach the verifier only under these roots, what it created "
                             "anywhere):")
            for line in outcome.transfer.describe():
                STDERR.print(f"  {escape(line)}")
        if outcome.left_out:
            STDERR.print(f"[yellow]left out:[/] {escape(outcome.left_out)}")
        table = Table(title=f"{task.task_id} ({agent.value})")
        table.add_column("test")
        table.add_column("outcome")
        for test in outcome.verifier.tests if outcome.verifier else []:
            color = "green" if test.outcome.value == "passed" else "red"
            table.add_row(escape(test.name), f"[{color}]{test.outcome.value}[/]")
        STDERR.print(table)
        if outcome.verifier and outcome.verifier.tampered:
            STDERR.print("[red]tampering:[/] " + escape("; ".join(outcome.verifier.tampered)))
        if outcome.failure:
            STDERR.print(f"[red]scored 0:[/] {escape(outcome.failure)}")
        if outcome.error:
            STDERR.print(f"[red]error:[/] {escape(outcome.error)}")
        typer.echo(f"reward: {'unscored' if outcome.reward is None else f'{outcome.reward:g}'}"
                   f"{'' if outcome.attested else ' (unattested)'}")
        if keep:
            STDERR.print("containers left (label termgrade=sandbox): the scoring one running, "
                         "with the agent's carried work; the agent's stopped")
        raise typer.Exit(0 if outcome.reward is not None and outcome.reward >= 1.0 else 1)


def _reference_first(task: Task, image: BuiltImage, agent: AgentName) -> None:
    """Any agent but the oracle is judged against the task's reference record: made here
    first when the task has a solution and no record (or the run refuses with the fix);
    a task without a solution is said to be graded without one."""
    if agent is AgentName.ORACLE:
        return  # the reference run itself: it records the reference when it passes clean
    if task.has_solution and reference_for(task) is None:
        STDERR.print("no reference record for this task's content: running its reference "
                     "solution once first (verify's path; recorded by task digest)",
                     soft_wrap=True)
    if ensure_reference(task, image) is None:
        STDERR.print(f"[yellow]warning:[/] {escape(without_solution_note([task.task_id]) or '')}",
                     soft_wrap=True)


def _print_timings(durations: list[dict[str, float]], *, wait: bool) -> None:
    """The phase profile; waits (up to 10 s) for the background removals to be timed."""
    deadline = time.monotonic() + (10.0 if wait else 0.0)
    while any("teardown" not in d for d in durations) and time.monotonic() < deadline:
        time.sleep(0.05)
    totals = [d.get("total", 0.0) for d in durations]
    STDERR.print(f"phases of {len(durations)} trial(s), {sum(totals):.2f} s in all:")
    STDERR.print(escape(render(profile(durations))), highlight=False)
