"""``termgrade view``: a local web viewer of a grading run (or static HTML with --out)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from termgrade.cli.app import guarded
from termgrade.cli.labels import parse_floats, parse_names, print_issues
from termgrade.core.progress import STDERR

if TYPE_CHECKING:
    from termgrade.view import RunIndex


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def view(
        run_dir: Path = typer.Argument(..., metavar="DIR", help="The folder `termgrade grade "
                                       "-o` wrote (DIR/trials.jsonl), a folder of `ingest` "
                                       "trial files, one trial file, or a staged "
                                       "trajectories repo (`build trajectories -o`)."),
        port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 "
                                 "(0: a free one; the URL is printed)."),
        out: Path | None = typer.Option(None, "--out", help="Write static HTML into this "
                                        "folder instead of serving."),
        labels: Path | None = typer.Option(None, "--labels", help="labels.jsonl to show; "
                                           "it must count the trials shown (refused "
                                           "otherwise). Default: computed from the trials "
                                           "(a labels file in DIR is not used unasked)."),
        cuts: str = typer.Option("0.25,0.75", "--cuts", help="Band cut points (for labels "
                                 "computed from the trials)."),
        band_names: str | None = typer.Option(None, "--band-names", help="Band names, "
                                              "comma-separated, as `termgrade labels` takes "
                                              "them."),
        include_unattested: bool = typer.Option(
            False, "--include-unattested", help="Label unattested tasks too (scored by "
            "test.sh's own reward), as `termgrade labels --include-unattested` does; their "
            "pass@1 is shown apart from the attested tasks'."),
    ) -> None:
        """A local web viewer of a grading run: a task x model grid, filters, trial pages.

        The grid shows each task x model's pass rate and band, counted and lost trials,
        median turns and tokens and a sparkline of rewards; a trial page shows every turn,
        tool call and output, the per-test verdicts and why it scored what it did. Served
        on 127.0.0.1 until Ctrl-C, or written as static HTML with --out."""
        from termgrade.labels import BandScheme
        from termgrade.view import find_sources, load_run

        scheme = BandScheme.from_cuts(parse_floats(cuts, "--cuts"), parse_names(band_names))
        with tempfile.TemporaryDirectory(prefix="termgrade-view-") as workdir:
            sources = find_sources(run_dir, labels, workdir=Path(workdir))
            index = load_run(sources, scheme=scheme, include_unattested=include_unattested)
            _show(index, out, port)


def _show(index: RunIndex, out: Path | None, port: int) -> None:
    """Write the static pages, or serve until Ctrl-C."""
    origin = index.sources.origin or ", ".join(map(str, index.sources.trials))
    print_issues(index.issues)
    STDERR.print(f"indexed {len(index.trials):,} trial(s), {len(index.cells):,} task x model "
                 f"cell(s) from {escape(str(origin))}; labels "
                 f"{escape(index.sources.labels_said())}",
                 highlight=False, soft_wrap=True)
    if out is not None:
        from termgrade.view.export import export_static

        summary = export_static(index, out)
        STDERR.print(f"wrote {summary.pages:,} file(s); open {out / 'index.html'}")
        return
    from termgrade.view.server import ViewServer

    server = ViewServer(index, port)
    typer.echo(server.url)
    STDERR.print(f"serving {server.url} (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        STDERR.print("stopped")
    finally:
        server.httpd.server_close()
