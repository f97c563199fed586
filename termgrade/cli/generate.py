"""``termgrade generate``: an LLM writes tasks from a spec; the execution filter and the
audit keep the trustworthy ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR
from termgrade.core.text import brief

if TYPE_CHECKING:
    from termgrade.generate import GenerationReport

MAX_DROP_ROWS = 40


def render(report: GenerationReport) -> None:
    table = Table(title="termgrade generate: funnel")
    for column in ("stage", "candidates", "share"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for stage in report.funnel.stages:
        table.add_row(stage.stage.replace("_", " "), str(stage.count), f"{stage.share:.1%}")
    STDERR.print(table)
    STDERR.print(f"kept {report.funnel.counts['kept']} of {len(report.records)} "
                 f"({report.funnel.share_kept:.1%}; the paper kept "
                 f"{report.funnel.paper_share_kept:.1%})", highlight=False)
    dropped = [r for r in report.records if not r.kept]
    if dropped:
        drops = Table(title="dropped", show_lines=False)
        for column in ("candidate", "rounds", "reason"):
            drops.add_column(column, overflow="fold")
        for record in dropped[:MAX_DROP_ROWS]:
            drops.add_row(escape(record.candidate_id), str(len(record.rounds)),
                          escape(brief(record.drop_reason or "")[:300]))
        STDERR.print(drops)
    s = report.funnel.seconds
    STDERR.print(f"seconds: model {s['model']:.1f}, build {s['build']:.1f}, verify "
                 f"{s['verify']:.1f}, waiting for a container {s['container_wait']:.1f}; "
                 f"wall {report.wall_s:.1f}", highlight=False)
    for line in report.unreadable:
        STDERR.print(f"[yellow]warning:[/] {line}", highlight=False, soft_wrap=True)
    if report.resumed:
        STDERR.print(f"{report.resumed} candidate(s) resumed from the journal")
    STDERR.print(f"wrote {report.paths.funnel_json}, {report.paths.funnel_png}, "
                 f"{report.paths.candidates} and kept tasks under {report.paths.kept_dir}",
                 highlight=False)


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def generate(
        spec: Path = typer.Option(..., "--spec", help="YAML: domains, difficulties, count, "
                                  "counts, seed_topics (docs/generation.md)."),
        model: str = typer.Option(..., "--model", "-m", help="Model name the endpoint serves."),
        base_url: str = typer.Option(..., "--base-url", help="OpenAI-compatible API root, "
                                     "e.g. http://127.0.0.1:8000/v1."),
        out_dir: Path = typer.Option(..., "--output", "-o", help="Output folder (journal, "
                                     "histories, funnel, kept/)."),
        max_repairs: int = typer.Option(2, "--max-repairs", min=0,
                                        help="Rounds of feeding a failure back."),
        repeat: int = typer.Option(2, "--repeat", "-n", min=1,
                                   help="Reference-solution runs per verify (flakiness)."),
        corpus: list[Path] = typer.Option(
            [], "--corpus", help="Existing tasks a candidate may not nearly duplicate "
            "(repeatable), e.g. environments."),
        against: list[Path] = typer.Option(
            [], "--against", help="Benchmark folder checked for contamination (repeatable)."),
        max_requests: int = typer.Option(4, "--max-requests", min=1,
                                         help="Model requests in flight at once."),
        max_containers: int = typer.Option(2, "--max-containers", min=1,
                                           help="Candidates built and verified at once."),
        resume: bool = typer.Option(False, "--resume", help="Keep candidates finished in the "
                                    "journal of -o."),
        prompts: str = typer.Option("v1", "--prompts", help="Prompt templates' version."),
        min_tests: int = typer.Option(10, "--min-tests", min=0,
                                      help="Fewest test cases a kept task may have."),
        temperature: float | None = typer.Option(None, "--temperature", min=0.0),
        max_tokens: int | None = typer.Option(None, "--max-tokens", min=1,
                                              help="Completion tokens per answer."),
        api_key_env: str | None = typer.Option(
            None, "--api-key-env", help="Environment variable holding the API key (default "
            "OPENAI_API_KEY, may be unset; a variable named here must be set; '' for none)."),
        keep_images: bool = typer.Option(False, "--keep-images", help="Keep each candidate's "
                                         "image after verify (default: removed)."),
        as_json: bool = typer.Option(False, "--json", help="Print funnel.json on stdout."),
    ) -> None:
        """Generate tasks with a model, repair them against the execution filter, audit.

        Exit 0 when at least one task was kept."""
        from termgrade.agent import Endpoint
        from termgrade.agent.client import key_variable
        from termgrade.generate import expand, generate_tasks, load_spec

        params: dict[str, object] = {}
        if temperature is not None:
            params["temperature"] = temperature
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        endpoint = Endpoint(base_url=base_url, model=model, api_key_env=key_variable(api_key_env))
        report = generate_tasks(
            expand(load_spec(spec)), endpoint=endpoint, out_dir=out_dir,
            max_repairs=max_repairs, repeat=repeat, corpus=corpus, against=against,
            max_requests=max_requests, max_containers=max_containers, resume=resume,
            prompts_version=prompts, min_tests=min_tests, params=params,
            keep_images=keep_images)
        if as_json:
            typer.echo(json.dumps(report.funnel.model_dump(mode="json"), sort_keys=True))
        render(report)
        raise typer.Exit(0 if report.kept else 1)
