"""The bandcentral card (templates/bandcentral.md) with real counts, and the
:class:`BandcentralSummary` of a build it renders (``build_bandcentral`` returns it)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termgrade.agent.scaffold import TOOLS
from termgrade.builders.card import (
    card_configs,
    field_table,
    front_matter,
    load_template,
    markdown_row,
    render_template,
)
from termgrade.builders.card_prose import CardProse, with_prose
from termgrade.builders.environments_card import RL_TAG
from termgrade.builders.figures import pass_rate_histogram
from termgrade.builders.layout import RepoPaths
from termgrade.builders.licensing import Origin, is_own, license_section
from termgrade.builders.rows import BandcentralTaskRow
from termgrade.builders.verl_prompts import VerlPromptRow


@dataclass
class BandcentralSummary:
    """What ``build_bandcentral`` staged: the counts and facts its card is rendered from."""

    out: Path
    base_model: str | None = None
    base_scaffold: str | None = None
    rates: dict[str, list[float | None]] = field(default_factory=dict)
    """Output split -> base pass rate of each of its tasks, in row order."""
    files: list[str] = field(default_factory=list)
    secrets_baseline: Path | None = None
    """The reviewed detect-secrets findings placed beside the repo, if any."""
    selection_report: dict[str, str] = field(default_factory=dict)
    """The shipped selection report's files (json, md, png) relative to the repo root."""
    origins: list[Origin] = field(default_factory=list)
    """Each shipped task's license and source, from its task.toml [metadata]."""
    license: str | None = None
    """The tasks' license as this build knows it; None: unknown, the card claims none."""
    unattested: dict[str, str] = field(default_factory=dict)
    """Selected tasks that are unattestable: task id -> why."""
    included_unattested: bool = False
    """They were shipped (``include_unattested``); otherwise they were left out."""


def _split_rows(summary: BandcentralSummary) -> str:
    lines = []
    for split, rates in summary.rates.items():
        known = [r for r in rates if r is not None]
        mean = sum(known) / len(known) if known else None
        row = (split, len(rates), mean, min(known) if known else None,
               max(known) if known else None)
        lines.append(markdown_row(row))
    return "\n".join(lines)


def _selection(summary: BandcentralSummary) -> str:
    shipped = summary.selection_report
    if not shipped:
        return ("No report of the `termgrade select` run that chose these tasks was shipped "
                "with this build.")
    names = {"md": "report", "json": "JSON", "png": "plot"}
    links = ", ".join(f"[{names[k]}]({shipped[k]})" for k in ("md", "json", "png")
                      if k in shipped)
    return ("The `termgrade select` run that chose these tasks wrote a selection report, "
            f"shipped here ({links}): every chosen task with its measured pass rate, its "
            "GRPO weight 4p(1-p) and the chance that all its rollouts agree.")


PAPER_BATCH = 16
SMOKE_BATCH = 2


def _train_commands(repo_id: str, n_train: int) -> str:
    """The card's `termgrade train prepare` lines; a repo with fewer training tasks than
    the paper's batch of 16 gets a batch it can fill (verl drops a partial batch)."""
    batch = f" --batch-size {n_train}" if 0 < n_train < PAPER_BATCH else ""
    lines = [f"termgrade train prepare --repo {repo_id} -o run{batch}"]
    if n_train >= SMOKE_BATCH:
        lines.append(f"termgrade train prepare --repo {repo_id} -o smoke --smoke")
    elif n_train:
        lines.append(f"termgrade train prepare --repo {repo_id} -o smoke --smoke "
                     f"--batch-size {n_train}")
    return "\n".join(lines)


def _title(summary: BandcentralSummary, repo_id: str) -> str:
    return ("TermGrade band-central tasks" if is_own(summary.origins)
            else repo_id.split("/")[-1])


def _yaml(paths: RepoPaths, summary: BandcentralSummary, repo_id: str) -> dict[str, Any]:
    splits = list(summary.rates)
    n = sum(len(r) for r in summary.rates.values())
    meta: dict[str, Any] = {"pretty_name": _title(summary, repo_id)}
    if summary.license:  # unknown: no claim (the License section says how to set it)
        meta["license"] = summary.license
    return meta | {
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["termgrade", "terminal", "agents", "reinforcement-learning", RL_TAG, "grpo",
                 "verl"],
        "size_categories": ["n<1K" if n < 1000 else "1K<n<10K"],
        "configs": card_configs([
            ("tasks", [(s, paths.split_glob("tasks", s)) for s in splits], True),
            ("verl", [(s, paths.split_glob("verl", s)) for s in splits], False),
        ]),
    }


def render_bandcentral_card(paths: RepoPaths, summary: BandcentralSummary, *,
                            repo_id: str, prose: CardProse | None = None) -> str:
    rates = {s: [r for r in v if r is not None] for s, v in summary.rates.items()}
    figures = ""
    if any(rates.values()):
        pass_rate_histogram(rates, paths.figure("base_pass_rate"))
        figures = f"![Base pass rates]({paths.rel(paths.figure('base_pass_rate'))})"
    values = {
        "repo_id": repo_id,
        "base_model": summary.base_model or "the base model",
        "base_scaffold": summary.base_scaffold or "bash tool-calling",
        "n_train": str(len(summary.rates.get("train", []))),
        "n_validation": str(len(summary.rates.get("validation", []))),
        "split_rows": _split_rows(summary),
        "figures": figures,
        "selection": _selection(summary),
        "task_fields": field_table(BandcentralTaskRow),
        "verl_fields": field_table(VerlPromptRow),
        "tool_definitions": json.dumps(list(TOOLS), indent=2),
        "license_text": license_section(summary.license, summary.origins,
                                        "termgrade build bandcentral"),
        "train_commands": _train_commands(repo_id, len(summary.rates.get("train", []))),
    }
    text = with_prose(load_template("bandcentral.md"), prose, card="bandcentral")
    body = render_template(text, values, name="bandcentral.md")
    return front_matter(_yaml(paths, summary, repo_id)) + body
