"""``termgrade secrets review DIR``: decide, finding by finding, what is a secret."""

from __future__ import annotations

from pathlib import Path

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
                                        "undecided ones."),
    ) -> None:
        """List each finding of the secret scan (text files and parquet cells) with the
        lines around it, ask whether it is a real secret, and record the answer in the
        baseline: `validate` passes only findings marked not secret."""
        from rich.console import Console
        from rich.markup import escape

        from termgrade.builders.layout import RepoPaths
        from termgrade.validate.secrets_review import record_decisions, review_items

        out = Console(highlight=False)
        target = baseline or RepoPaths(directory.resolve()).secrets_baseline
        items = review_items(directory, target)
        if not items:
            out.print(f"{directory}: the secret scan finds nothing to review")
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
