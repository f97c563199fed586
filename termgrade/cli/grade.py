"""``termgrade grade``: grade a model behind an OpenAI-compatible endpoint on the tasks."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer
from rich.markup import escape
from rich.table import Table

from termgrade.agent.scaffold import ScaffoldConfig
from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR
from termgrade.grade.defaults import DEFAULT_CONFIDENCE, DEFAULT_K, DEFAULT_WORKERS
from termgrade.scoring.kept import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console

    from termgrade.grade import GradeReport
    from termgrade.grade.summary import TaskTally

SCAFFOLD = ScaffoldConfig()
"""The scaffold's own defaults, shown and used as the options' defaults."""


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def grade(
        paths: list[Path] = typer.Argument(None, help="Task dirs or folders of them "
                                           "(default: environments)."),
        model: str = typer.Option(..., "--model", "-m", help="Model name the endpoint serves."),
        base_url: str = typer.Option(..., "--base-url", help="OpenAI-compatible API root, "
                                     "e.g. http://127.0.0.1:8000/v1."),
        out_dir: Path = typer.Option(..., "--output", "-o", help="Output folder: "
                                     "DIR/trials.jsonl (also the journal; a rerun resumes)."),
        k: int = typer.Option(DEFAULT_K, "-k", min=1,
                              help="Attempts per task (the most, --adaptive)."),
        adaptive: bool = typer.Option(False, "--adaptive", help="Stop a task's attempts once "
                                      "its band is decided (see --confidence)."),
        confidence: float = typer.Option(DEFAULT_CONFIDENCE, "--confidence", min=0.5, max=0.999,
                                         help="Posterior probability that decides a band."),
        workers: int = typer.Option(DEFAULT_WORKERS, "--workers", "-w", min=1,
                                    help="Trials at once (two containers each)."),
        in_flight: int = typer.Option(16, "--max-requests", min=1,
                                      help="Model requests in flight at once (per process)."),
        api_key_env: str | None = typer.Option(
            None, "--api-key-env", help="Environment variable holding the API key (default "
            "OPENAI_API_KEY, may be unset; a variable named here must be set; '' for none)."),
        max_turns: int = typer.Option(SCAFFOLD.max_turns, "--max-turns", min=1,
                                      help="Model turns per trial."),
        command_timeout: float = typer.Option(SCAFFOLD.command_timeout_s, "--command-timeout",
                                              min=1, help="Seconds one bash command may run."),
        time_limit: float | None = typer.Option(
            None, "--time-limit", min=1, help="Seconds per trial (default: the task's "
            "[agent] timeout_sec); waits of retried requests do not count."),
        temperature: float = typer.Option(SCAFFOLD.temperature, "--temperature", min=0.0),
        max_tokens: int | None = typer.Option(None, "--max-tokens", min=1,
                                              help="Completion tokens per turn."),
        ray: str | None = typer.Option(None, "--ray", help="Run trials on the Ray cluster "
                                       "at ADDRESS (e.g. 127.0.0.1:6379); see docs/ray.md."),
        internet_tasks: str = typer.Option(
            "refuse", "--internet-tasks", help="Tasks whose task.toml sets allow_internet = "
            "true (TermGrade never gives the network): refuse (stop and list them), skip, or "
            "offline (grade them offline all the same)."),
        missing_images: str = typer.Option(
            "refuse", "--missing-images", help="Tasks whose Dockerfile starts FROM an image "
            "that is neither here nor pullable: refuse (stop and name the image and how to "
            "provide it) or skip them. Checked up front on a local pool."),
        reuse: Path | None = typer.Option(
            None, "--reuse", help="An earlier run's output folder: its counted trials of "
            "tasks, model and scaffold unchanged since (by content digest) are copied into "
            "this run, and only the rest are graded. Not resume: that is rerunning the same "
            "-o."),
        run_name: str | None = typer.Option(
            None, "--run-name", help="Name this run (letters, digits, . _ -): a folder may "
            "hold several runs of a model, each with its own trial ids; rerunning with the "
            "same name resumes it. Without it, the last run of the model in -o resumes, or a "
            "new one starts. `termgrade runs DIR` lists them."),
        scaffold: str = typer.Option(
            "bash-tool", "--scaffold", help="The scaffold the model works in, by registered "
            "name: bash-tool (default; tool calls, one bash command each) or terminus-2 "
            "(JSON turns of keystrokes typed into a tmux session, Harbor's Terminus-2 "
            "protocol); an unknown name lists the registered ones. Labels keep scaffolds "
            "apart."),
        keep_work: bool = typer.Option(
            False, "--keep-work", help="Keep each trial's carried work (what reached the "
            "verifier) in DIR/work, content-addressed, so `termgrade regrade` can score it "
            "again after a test changes."),
        logprobs: bool = typer.Option(
            False, "--logprobs", help="Ask the endpoint for each sampled token's log "
            "probability (OpenAI's logprobs, top_logprobs 0) and record them per turn with "
            "the finish reason (the trial's token_turns; the trajectories' episodes "
            "column). An endpoint that gives none records nulls, never an error."),
        token_ids: bool = typer.Option(
            False, "--token-ids", help="--logprobs, and the sampled token ids too, with "
            "vLLM's return_token_ids (a server that does not know the field may refuse "
            "the request: a vLLM server only)."),
        keep_work_max_mb: int = typer.Option(
            DEFAULT_MAX_BYTES >> 20, "--keep-work-max-mb", min=1, help="The most carried "
            "work kept per trial (MiB); a trial over it keeps none and must be rerun to be "
            "regraded."),
    ) -> None:
        """Grade a model on the tasks, k attempts each, in a registered scaffold.

        The scaffold is the bash tool-calling one unless ``--scaffold`` names another.

        Every trial runs in fresh containers and is scored by the grader; trials lost to
        infrastructure are recorded uncounted and run again. DIR/trials.jsonl feeds
        `termgrade labels`."""
        from termgrade.agent import Endpoint, ScaffoldConfig
        from termgrade.agent.client import key_variable
        from termgrade.agent.kinds import ModelAgent
        from termgrade.agent.probe import check_base_url
        from termgrade.agent.scaffolds import scaffold_for
        from termgrade.grade import AdaptiveRule, grade_model, make_pool

        check_base_url(base_url)  # before anything else: the rest of the probe needs tasks
        scaffold_for(scaffold)  # an unknown name stops here, naming the known ones

        endpoint = Endpoint(base_url=base_url, model=model,
                            api_key_env=key_variable(api_key_env), max_in_flight=in_flight,
                            token_detail="token-ids" if token_ids else
                            "logprobs" if logprobs else None)
        config = ScaffoldConfig(max_turns=max_turns, command_timeout_s=command_timeout,
                                wall_clock_s=time_limit, temperature=temperature,
                                max_tokens=max_tokens)
        from termgrade.task.network import INTERNET_POLICIES, InternetPolicy

        if internet_tasks not in INTERNET_POLICIES:
            raise typer.BadParameter(f"{internet_tasks!r}: choose one of "
                                     f"{', '.join(INTERNET_POLICIES)}",
                                     param_hint="--internet-tasks")
        from termgrade.grade.preflight import IMAGE_POLICIES, ImagePolicy

        if missing_images not in IMAGE_POLICIES:
            raise typer.BadParameter(f"{missing_images!r}: choose one of "
                                     f"{', '.join(IMAGE_POLICIES)}",
                                     param_hint="--missing-images")
        rule = AdaptiveRule(k_max=k, confidence=confidence) if adaptive else None
        if rule is not None and (why := rule.why_no_saving()):
            STDERR.print(f"[yellow]warning:[/] {why}", highlight=False, soft_wrap=True)
        pool = make_pool(workers, ray)
        where = "this machine" if pool.where == "local" else f"the Ray cluster at {pool.where}"
        with terminate_like_ctrl_c():
            report = grade_model(
                paths or [Path("environments")], ModelAgent(endpoint, config, scaffold), out_dir,
                k=k,
                adaptive=rule, pool=pool, internet_tasks=cast(InternetPolicy, internet_tasks),
                missing_images=cast(ImagePolicy, missing_images),
                on_start=lambda n: STDERR.print(start_said(n, where), highlight=False),
                reuse=reuse, run_name=run_name, keep_work=keep_work,
                keep_work_max_bytes=keep_work_max_mb << 20,
                on_note=lambda line: STDERR.print(f"[yellow]reference:[/] {escape(line)}",
                                                  highlight=False, soft_wrap=True))
        _print_summary(report, model, adaptive=adaptive)
        STDERR.print(f"trials: {report.trials_path}")
        if keep_work:
            _print_kept(report, out_dir)
        if report.run is not None and report.run.job_id is not None:
            STDERR.print(f"run: {report.run.job_id}"
                         + (f" ({report.run.name})" if report.run.name else ""), highlight=False)
        report.check()
        STDERR.print(f"next: termgrade labels {report.trials_path} -o labels.jsonl")


def start_said(n: int, where: str) -> str:
    """The line said before the first trial runs (none to run: everything is done)."""
    if n == 0:
        return ("nothing to run: every trial of this run is already done (resumed from the "
                "journal or reused); the summary below counts them")
    return f"running {n} trial(s) at once on {where}"


def _print_kept(report: GradeReport, out_dir: Path) -> None:
    """How many counted trials kept their work for ``termgrade regrade``."""
    from termgrade.scoring.kept import WorkStore

    store = WorkStore.of_run(out_dir)
    kept = [store.read(r.trial_id) for r in report.counted]
    whole = sum(1 for work in kept if work is not None and work.regradable)
    STDERR.print(f"kept work: {whole} of {len(kept)} counted trial(s) in {store.root}"
                 + (f"; {len(kept) - whole} not kept (over --keep-work-max-mb, or scored "
                    "before their work was carried): rerun them to regrade them"
                    if whole < len(kept) else ""), highlight=False)


@contextlib.contextmanager
def terminate_like_ctrl_c() -> Iterator[None]:
    """Inside the block, SIGTERM (``kill``, ``timeout``, a scheduler) ends the run as
    Ctrl-C does: the runner removes its containers, finished trials stay, and the exit
    status is 143. The previous handler is restored after the block."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _print_summary(report: GradeReport, model: str, *, adaptive: bool) -> None:
    """The run in one row, then one row per task (resumed trials included)."""
    table = Table(title=f"termgrade grade {model}")
    columns = ["trials", "counted", "passed", "pass rate", "lost", "HTTP retries",
               *(["saved vs fixed k"] if adaptive else []), "wall"]
    for column in columns:
        table.add_column(column)
    counted = report.counted
    rate = report.pass_rate
    tasks = report.tasks
    table.add_row(str(len(report.records)), str(len(counted)),
                  str(sum(r.passed for r in counted)),
                  "-" if rate is None else f"{rate:.3f}", str(report.lost),
                  str(sum(t.http_retries for t in tasks)),
                  *([f"{report.summary.saved_fraction:.0%}" if counted else "-"]
                    if adaptive else []), f"{report.wall_s:.0f} s")
    STDERR.print(table)
    print_per_task(tasks, STDERR)
    if report.reaped:
        STDERR.print(f"removed {report.reaped} container(s) an interrupted run of this "
                     "output had left")
    if report.reused or report.rerun:
        STDERR.print(f"reused {report.reused} trial(s) of {report.reused_tasks} task(s), "
                     f"graded {report.graded}")
        for task_id, why in sorted(report.rerun.items())[:10]:
            STDERR.print(f"  regraded {task_id}: {why}", highlight=False)
    if report.skipped:
        from termgrade.grade.preflight import skipped_lines

        STDERR.print(f"[yellow]skipped {len(report.skipped)} task(s), not graded:[/]")
        for line in skipped_lines(report.skipped):
            STDERR.print(f"  {escape(line)}", highlight=False)
    for task_id, why in sorted(report.build_failed.items()):  # one line per task, no retry
        STDERR.print(f"[red]{escape(why.split(':', 1)[0])}[/] {escape(task_id)}: "
                     f"{escape(why.split(': ', 1)[-1])}", highlight=False, soft_wrap=True)
    for unreadable in report.unreadable:
        STDERR.print(f"[yellow]warning:[/] {unreadable}", highlight=False, soft_wrap=True)
    if report.resumed:
        STDERR.print(f"{report.resumed} trial(s) resumed from {report.trials_path} (in the "
                     "tables, not in the live rate)")
    if report.abandoned:
        STDERR.print(f"[yellow]gave up on {len(report.abandoned)} task(s) after repeated "
                     f"infrastructure losses: {', '.join(report.abandoned[:10])}")


PER_TASK_COLUMNS = ("counted", "passed", "rate", "band", "lost", "HTTP retries")
_PER_TASK_WIDTH = 60
"""What the other columns of the per-task table take beside the task name."""


def print_per_task(tasks: Sequence[TaskTally], console: Console) -> None:
    """One row per task; a task's name is never cut or folded (a name longer than the
    terminal leaves room for makes the table wider, not the name shorter)."""
    per_task = Table(title="per task")
    longest = max((len(task.task_id) for task in tasks), default=4)
    per_task.add_column("task", no_wrap=True, min_width=longest)
    for column in PER_TASK_COLUMNS:
        per_task.add_column(column, overflow="fold")
    for task in tasks:
        per_task.add_row(escape(task.task_id), str(task.counted), str(task.passed),
                         "-" if task.pass_rate is None else f"{task.pass_rate:.2f}",
                         task.band or "-", str(task.lost), str(task.http_retries))
    from rich.segment import Segments

    wide = console.options.update_width(max(console.width, longest + _PER_TASK_WIDTH))
    console.print(Segments(console.render(per_task, wide)), crop=False, soft_wrap=True)
