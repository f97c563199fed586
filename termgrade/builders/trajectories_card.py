"""The trajectories card (templates/trajectories.md) with real counts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from termgrade.builders.card import (
    card_configs,
    field_table,
    front_matter,
    load_template,
    render_template,
)
from termgrade.builders.environments_card import size_category
from termgrade.builders.figures import bar_chart
from termgrade.builders.layout import RepoPaths
from termgrade.builders.rows import EpisodeRow, SftRow

if TYPE_CHECKING:
    from termgrade.builders.trajectories import TrajectoriesSummary

ENVIRONMENTS_REPO = "ai-and/termgrade-environments"


def _yaml(paths: RepoPaths, n_trials: int) -> dict[str, Any]:
    return {
        "pretty_name": "TermGrade trajectories",
        "license": "apache-2.0",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["termgrade", "terminal", "agents", "trajectories", "sft", "harbor"],
        "size_categories": [size_category(n_trials)],
        "configs": card_configs([
            ("sft", [("train", paths.split_glob("sft", "train"))], True),
            ("episodes", [("train", paths.split_glob("episodes", "train"))], False),
        ]),
    }


def render_trajectories_card(paths: RepoPaths, summary: TrajectoriesSummary, *,
                             repo_id: str) -> str:
    stats = summary.stats
    figures = ""
    if stats.models:
        rates = {f"{m} ({s})": v.passed / v.counted
                 for (m, s), v in stats.models.items() if v.counted}
        bar_chart(rates, paths.figure("pass_rate_by_model"), title="Pass rate of counted trials",
                  xlabel="passed / counted")
        figures = f"![Pass rate per model]({paths.rel(paths.figure('pass_rate_by_model'))})"
    values = {
        "repo_id": repo_id,
        "environments_repo": ENVIRONMENTS_REPO,
        "n_trials": f"{stats.trials:,}",
        "n_counted": f"{stats.counted:,}",
        "n_passed": f"{stats.passed:,}",
        "example_model": min(stats.models)[0] if stats.models else "MODEL",
        "model_table": stats.table(),
        "figures": figures,
        "sft_fields": field_table(SftRow),
        "episode_fields": field_table(EpisodeRow),
    }
    body = render_template(load_template("trajectories.md"), values, name="trajectories.md")
    return front_matter(_yaml(paths, stats.trials)) + body
