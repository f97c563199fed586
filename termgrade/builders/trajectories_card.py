"""The trajectories card (templates/trajectories.md) with real counts, and the
:class:`TrajectoriesSummary` of a build it renders (``build_trajectories`` returns it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termgrade.builders.card import (
    card_configs,
    field_table,
    front_matter,
    load_template,
    render_template,
)
from termgrade.builders.card_prose import CardProse, with_prose
from termgrade.builders.environments_card import size_category
from termgrade.builders.figures import bar_chart
from termgrade.builders.layout import RepoPaths
from termgrade.builders.licensing import Origin, license_section
from termgrade.builders.rows import EpisodeRow, SftRow
from termgrade.builders.traces import TRACES_TAG
from termgrade.builders.trajectory_stats import TrajectoryStats


@dataclass
class TrajectoriesSummary:
    """What ``build_trajectories`` staged: the counts and facts its card is rendered from."""

    out: Path
    stats: TrajectoryStats
    files: list[str] = field(default_factory=list)
    sft_bytes: int = 0
    episode_bytes: int = 0
    train_splits: list[str] = field(default_factory=list)
    """Names of the splits selection chose training tasks for (from --splits)."""
    trace_files: list[str] = field(default_factory=list)
    """The STS trace files (and ATIF files), relative to the root."""
    origins: list[Origin] = field(default_factory=list)
    """License and source of each task dir given (task.toml [metadata])."""
    license: str | None = None
    """The tasks' license as this build knows it; None: unknown, the card claims none."""


def _yaml(paths: RepoPaths, n_trials: int, traces: bool = False,
          license_id: str | None = None) -> dict[str, Any]:
    """``traces``: the repo holds STS trace files: the ``agent-traces`` tag, and a
    ``traces`` config over their parquet form (``datasets`` loads one builder per repo,
    parquet here, so the config cannot name the JSONL files; the Hub finds those itself)."""
    extra: list[tuple[str, list[tuple[str, str]], bool]] = (
        [("traces", [("train", paths.split_glob("traces", "train"))], False)]
        if traces else [])
    meta: dict[str, Any] = {"pretty_name": "TermGrade trajectories"}
    if license_id:  # unknown: no claim (the License section says how to set it)
        meta["license"] = license_id
    return meta | {
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["termgrade", "terminal", "agents", "trajectories", "sft", "harbor",
                 *([TRACES_TAG] if traces else [])],
        "size_categories": [size_category(n_trials)],
        "configs": card_configs([
            ("sft", [("train", paths.split_glob("sft", "train"))], True),
            ("episodes", [("train", paths.split_glob("episodes", "train"))], False),
            *extra,
        ]),
    }


def _split_filter(summary: TrajectoriesSummary, repo_id: str) -> str:
    """How to take SFT data from training tasks only, with this build's split names."""
    if not summary.train_splits:
        return ("Every row carries `split`, `pass_rate` and `band` when the repo is built "
                "with `--splits` and `--labels`; this build had no split flags, so `split` is "
                "null: join on `task_id` with the environments repo's splits before training "
                "on these rows, or benchmark tasks leak into training data.")
    names = ", ".join(repr(s) for s in summary.train_splits)
    return ("Every row carries its task's `split` (from `termgrade select`) and the task x "
            "model x scaffold `pass_rate` and `band`. Passing trials of training tasks only, "
            "for SFT, without leaking benchmark (`unseen`) or validation tasks:\n\n"
            "```python\n"
            "from datasets import load_dataset\n\n"
            f'train_wins = load_dataset("{repo_id}", split="train").filter(\n'
            f'    lambda r: r["passed"] and r["split"] in ({names},))\n'
            "```")


def render_trajectories_card(paths: RepoPaths, summary: TrajectoriesSummary, *,
                             repo_id: str, environments_repo: str,
                             prose: CardProse | None = None) -> str:
    stats = summary.stats
    figures = ""
    if stats.models:
        rates = {f"{m} ({s})": v.passed / v.counted
                 for (m, s), v in stats.models.items() if v.counted}
        bar_chart(rates, paths.figure("pass_rate_by_model"), title="Pass rate of counted trials",
                  xlabel="passed / counted")
        figures = f"![Pass rate per model]({paths.rel(paths.figure('pass_rate_by_model'))})"
    traces = any(f.endswith(".jsonl") for f in summary.trace_files)
    values = {
        "repo_id": repo_id,
        "environments_repo": environments_repo,
        "n_trials": f"{stats.trials:,}",
        "n_counted": f"{stats.counted:,}",
        "n_passed": f"{stats.passed:,}",
        "example_model": min(stats.models)[0] if stats.models else "MODEL",
        "model_table": stats.table(),
        "figures": figures,
        "split_filter": _split_filter(summary, repo_id),
        "traces_line": ("\n" + f'traces = load_dataset("{repo_id}", "traces", split="train")'
                        "  # the agent traces" if traces else ""),
        "sft_fields": field_table(SftRow),
        "episode_fields": field_table(EpisodeRow),
        "license_text": license_section(summary.license, summary.origins,
                                        "termgrade build trajectories"),
    }
    text = with_prose(load_template("trajectories.md"), prose, card="trajectories")
    body = render_template(text, values, name="trajectories.md")
    return front_matter(_yaml(paths, stats.trials, traces, summary.license)) + body
