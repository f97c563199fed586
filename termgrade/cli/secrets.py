"""``termgrade secrets review DIR``: decide, finding by finding, what is a secret."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from termgrade.cli.app import guarded

ANSWERS = {"y": True, "yes": True, "n": False, "no": False}


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Review the secret scan's findings of a staged repo.",
                        no_args_is_help=True)
    app.add_typer(group, name="secrets")

    @group.command()
    @guarded
    def review(
        directory: Path = typer.Argument(..., help="A repo staged by `termgrade build`."),
        baseline: Path | None = typer.Option(
            None, "--secrets-baseline",
            help="Where decisions are recorded (default: DIR.secrets.baseline beside DIR)."),
        list_only: bool = typer.Option(False, "--list",
                                       help="List the findings and their decisions; ask "
                                            "nothing."),
        again: bool = typer.Option(False, "--all",
                                   help="Ask about decided findings too, not only "
                                        "undecided ones (with --accept: decide them "
                                        "again)."),
        accept_all: bool = typer.Option(
            False, "--accept-all", help="Mark every finding not secret at once (narrow it "
            "with --detector), with --reason; asks nothing."),
        accept: list[str] = typer.Option(
            [], "--accept", metavar="GLOB", help="Mark the findings of the files matching "
            "GLOB (relative to DIR, '*' crosses folders: 'tasks/*/tests/*') not secret at "
            "once, with --reason; repeatable; asks nothing."),
        detector: list[str] = typer.Option(
            [], "--detector", metavar="TYPE", help="With --accept or --accept-all: only "
            "findings of this detect-secrets type ('Hex High Entropy String'); "
            "repeatable."),
        reason: str | None = typer.Option(
            None, "--reason", help="Why the findings --accept or --accept-all picks are not "
            "secrets; recorded in each baseline entry."),
    ) -> None:
        """List each finding of the secret scan (text files and parquet cells) with the
        lines around it, ask whether it is a real secret, and record the answer in the
        baseline: `validate` passes only findings marked not secret. With --accept-all
        or --accept GLOB (and --detector TYPE), mark many not secret at once with a
        recorded --reason."""
        from rich.console import Console
        from rich.markup import escape

        from termgrade.builders.layout import RepoPaths
        from termgrade.validate.secrets_review import record_decisions, review_items

        out = Console(highlight=False)
        target = baseline or RepoPaths(directory.resolve()).secrets_baseline
        bulk = accept_all or bool(accept)
        _check_bulk(bulk=bulk, accept_all=accept_all, accept=accept, detector=detector,
                    reason=reason, list_only=list_only)
        items = review_items(directory, target, context=not bulk)
        if not items:
            out.print(f"{directory}: the secret scan finds nothing to review")
            return
        if bulk:
            _decide_many(out, directory, target, items, accept, detector, reason or "",
                         again)
            return
        label = {None: "undecided", True: "SECRET", False: "not secret"}
        todo = [i for i in items if again or i.decision is None]
        recorded = 0
        for n, item in enumerate(items if list_only else todo, 1):
            hit = item.hit
            more = f", {item.places} places in the file" if item.places > 1 else ""
            out.print(f"\n[bold][{n}/{len(items if list_only else todo)}][/] "
                         f"{escape(item.where)}: {escape(hit.type)} "
                         f"({label[item.decision]}{more})", highlight=False)
            for number, text in item.context:
                mark = ">" if number == hit.line else " "
                out.print(f"  {mark} {number:>5} | {escape(text)}", highlight=False,
                             soft_wrap=True)
            if list_only:
                continue
            answer = ""
            while answer not in (*ANSWERS, "s", "skip", "q", "quit"):
                answer = typer.prompt("Real secret? [y]es / [n]o / [s]kip / [q]uit",
                                      default="s").strip().lower()
            if answer in ("q", "quit"):
                break
            if answer in ANSWERS:
                recorded += record_decisions(target, [(hit, ANSWERS[answer])])
        left = sum(1 for i in review_items(directory, target, context=False)
                   if i.decision is None) if not list_only else \
            sum(1 for i in items if i.decision is None)
        out.print(f"\n{len(items)} finding(s); {recorded} decision(s) recorded in "
                     f"{target}; {left} undecided (validate fails on those)", highlight=False)


def _check_bulk(*, bulk: bool, accept_all: bool, accept: list[str], detector: list[str],
                reason: str | None, list_only: bool) -> None:
    """Refuse option sets that say two things, or a bulk decision without its reason."""
    if accept_all and accept:
        raise typer.BadParameter("--accept-all takes every file; --accept GLOB narrows "
                                 "it: give one of them", param_hint="--accept")
    if bulk and list_only:
        raise typer.BadParameter("--list asks and records nothing; leave it out to record "
                                 "the decision, or run --list first", param_hint="--list")
    if detector and not bulk:
        raise typer.BadParameter("--detector narrows --accept or --accept-all; add one of "
                                 "them (or leave --detector out to be asked one by one)",
                                 param_hint="--detector")
    if reason is not None and not bulk:
        raise typer.BadParameter("--reason goes with --accept or --accept-all",
                                 param_hint="--reason")
    if bulk and reason is None:
        raise typer.BadParameter("a decision on many findings at once is recorded with "
                                 "why: add --reason TEXT (e.g. --reason 'fixture hashes "
                                 "of the corpus tasks, not credentials')",
                                 param_hint="--reason")


def _decide_many(out: Any, directory: Path, target: Path, items: list[Any],
                 accept: list[str], detector: list[str], reason: str, again: bool) -> None:
    from termgrade.validate.secrets_review import Selection, decide_many, review_items

    selection = Selection(tuple(accept), tuple(detector))
    picked, changed = decide_many(items, target, selection, is_secret=False, reason=reason,
                                  again=again)
    left = sum(1 for i in review_items(directory, target, context=False)
               if i.decision is None)
    scope = "undecided " if not again else ""
    out.print(f"{len(items)} finding(s); {picked} {scope}finding(s) picked marked not "
              f"secret ({changed} entries changed) in {target}, reason recorded; {left} "
              "undecided (validate fails on those)", highlight=False, soft_wrap=True)
