"""``termgrade publish``: a staged repo to the Hugging Face Hub (validate, plan, commit, tag)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR
from termgrade.core.settings import SETTINGS
from termgrade.publish import CommitLimits, Plan, PublishOptions, PublishResult, publish


def render_plan(plan: Plan, *, show: int) -> None:
    STDERR.print(f"plan: {plan.summary()}", highlight=False)
    lines = plan.lines()
    for line in lines[:show]:
        STDERR.print(f"  {line}", highlight=False, markup=False)
    if len(lines) > show:
        STDERR.print(f"  ... and {len(lines) - show} more (--show N to list more)")


def result_json(result: PublishResult) -> dict[str, object]:
    plan = result.plan
    return {
        "repo_id": result.repo_id, "revision": result.revision, "dry_run": result.dry_run,
        "plan": {"add": [f.path for f in plan.adds], "change": [f.path for f in plan.changes],
                 "delete": plan.deletes, "unchanged": plan.unchanged,
                 "upload_bytes": plan.upload_bytes, "base_commit": plan.base_commit},
        "created_repo": result.created_repo, "commits": result.commits,
        "pr_num": result.pr_num, "merged": result.merged, "final_commit": result.final_commit,
        "tagged": result.tagged, "replans": result.replans,
        "resumed_chunks": result.resumed_chunks, "retries": len(result.retries),
        "notes": result.notes,
    }


def register(app: typer.Typer) -> None:
    @app.command("publish")
    @guarded
    def publish_command(
        directory: Path = typer.Argument(..., help="The staged repo dir (termgrade build)."),
        repo_id: str = typer.Option(..., "--repo-id", help="namespace/name on the Hub."),
        repo_type: str = typer.Option("dataset", "--repo-type", help="dataset or model."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Validate and plan; write nothing."),
        revision: str = typer.Option("main", "--revision", help="Target branch."),
        create_pr: bool = typer.Option(False, "--create-pr",
                                       help="Leave the changes in an open pull request."),
        private: bool = typer.Option(False, "--private", help="Create the repo private."),
        tag: str | None = typer.Option(None, "--tag", help="Tag the published commit."),
        message: str = typer.Option("Publish with termgrade", "--message", "-m"),
        max_ops: int = typer.Option(CommitLimits.max_ops, "--max-ops", min=1,
                                    help="Operations per commit before chunking."),
        max_bytes: int = typer.Option(CommitLimits.max_bytes, "--max-bytes", min=1,
                                      help="Upload bytes per commit before chunking."),
        state_dir: Path = typer.Option(SETTINGS.state_dir, "--state-dir",
                                       help="Where the resume journal is kept."),
        show: int = typer.Option(50, "--show", min=0, help="Plan lines to print."),
        as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ) -> None:
        """Publish a staged repo to the Hub: validated, then one atomic commit.

        Validate DIR, plan its diff against the Hub repo (adds, changes, stale deletes),
        and commit it: one atomic commit when it fits, else a pull request of several
        commits merged at the end. Reruns resume; a no-op republish makes no commit."""
        options = PublishOptions(
            repo_id=repo_id, repo_type=repo_type, revision=revision, create_pr=create_pr,
            private=private, tag=tag, dry_run=dry_run, message=message,
            limits=CommitLimits(max_ops=max_ops, max_bytes=max_bytes), state_dir=state_dir)
        result = publish(directory, options,
                         log=lambda line: STDERR.print(line, highlight=False, markup=False))
        render_plan(result.plan, show=show)
        for note in result.notes:
            STDERR.print(f"[yellow]note:[/] {note}", highlight=False)
        if as_json:
            typer.echo(json.dumps(result_json(result), sort_keys=True))
        elif dry_run:
            typer.echo("dry run: nothing was written")
        elif result.pr_num is not None and not result.merged:
            typer.echo(f"pull request #{result.pr_num} is open for review")
        else:
            done = "no changes" if not result.commits else f"{len(result.commits)} commit(s)"
            tagged = f", tagged {result.tagged}" if result.tagged else ""
            typer.echo(f"published {repo_id}@{revision}: {done}, head "
                       f"{(result.final_commit or '')[:12]}{tagged}")
