"""The environments card: DATASET_CARD.md filled with real counts, tables and figures,
from the :class:`EnvironmentsSummary` of a build (``build_environments`` returns it)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from termgrade.builders.card import (
    DATASET_CARD_TEMPLATE,
    card_configs,
    field_table,
    front_matter,
    markdown_table,
    render_template,
)
from termgrade.builders.card_prose import CardProse, with_prose
from termgrade.builders.figures import domain_difficulty_bars, pass_rate_histogram
from termgrade.builders.layout import RepoPaths
from termgrade.builders.licensing import Origin, is_own, known_license, license_section
from termgrade.builders.rows import TaskRow
from termgrade.builders.task_rows import DEFAULT_SPLIT
from termgrade.records import LabelRow
from termgrade.task.config import difficulty_key


@dataclass
class ShippedTask:
    """One task as the environments repo ships it: its split, domain, difficulty and origin."""

    task_id: str
    split: str
    domain: str
    difficulty: str
    oracle_verified: bool
    n_assertions: int | None
    origin: tuple[str, str, str | None] = ("unknown", "unknown", None)
    """task.toml [metadata]: (author, source, generator model or None)."""
    license: str | None = None
    """task.toml [metadata] license (an SPDX id), if the task states one."""

    @property
    def origin_record(self) -> Origin:
        return Origin(self.license, None if self.origin[1] == "unknown" else self.origin[1])


@dataclass
class EnvironmentsSummary:
    """What ``build_environments`` staged: the counts and facts its card is rendered from."""

    out: Path
    tasks: list[ShippedTask] = field(default_factory=list)
    split_counts: dict[str, int] = field(default_factory=dict)
    split_roles: dict[str, str] = field(default_factory=dict)
    """Split name -> what selection chose its tasks for (train, validation), from --splits."""
    n_labels: int = 0
    files: list[str] = field(default_factory=list)
    """Parquet files written, relative to the repo root."""
    secrets_baseline: Path | None = None
    """The reviewed detect-secrets findings placed beside the repo, if any."""
    license: str | None = None
    """The tasks' license as this build knows it (:func:`corpus_license`); None: unknown,
    and the card says so."""


def corpus_license(tasks: Sequence[ShippedTask], given: str | None = None) -> str | None:
    """The tasks' license as this build knows it (:func:`.licensing.known_license`)."""
    return known_license((t.origin_record for t in tasks), given)


def is_own_corpus(tasks: Sequence[ShippedTask]) -> bool:
    """Every task is one of TermGrade's originals (``source = "termgrade-original"``)."""
    return is_own(t.origin_record for t in tasks)


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "1M<n<10M"


def _label_table(labels: list[LabelRow]) -> str:
    if not labels:
        return "_No labels were included in this build._"
    groups: dict[tuple[str, str], list[LabelRow]] = defaultdict(list)
    for row in labels:
        groups[(row.model, row.scaffold)].append(row)
    table = []
    for (model, scaffold), rows in sorted(groups.items()):
        rates = [r.pass_rate for r in rows if r.pass_rate is not None]
        ks = sorted({r.k for r in rows})
        table.append((model, scaffold, "/".join(map(str, ks)), len(rows),
                      sum(r.n_counted for r in rows), sum(r.n_passed for r in rows),
                      sum(rates) / len(rates) if rates else None, len(rows) - len(rates)))
    return markdown_table(("model", "scaffold", "k", "tasks", "counted trials", "passed",
                           "pass@1 (mean pass rate)", "unmeasured"), table)


def _domain_table(summary: EnvironmentsSummary) -> str:
    counts = Counter((t.domain, t.difficulty) for t in summary.tasks)
    levels = sorted({t.difficulty for t in summary.tasks}, key=difficulty_key)
    domains = sorted({t.domain for t in summary.tasks})
    rows = [(d, *[counts[(d, lvl)] for lvl in levels], sum(counts[(d, x)] for x in levels))
            for d in domains]
    rows.append(("**total**", *[sum(counts[(d, lvl)] for d in domains) for lvl in levels],
                 len(summary.tasks)))
    return markdown_table(("domain", *levels, "total"), rows)


def _split_table(summary: EnvironmentsSummary) -> str:
    verified = Counter(t.split for t in summary.tasks if t.oracle_verified)
    return markdown_table(("split", "tasks", "oracle_verified"),
                          [(s, n, verified[s]) for s, n in summary.split_counts.items()])


def _figures(paths: RepoPaths, summary: EnvironmentsSummary, labels: list[LabelRow]) -> str:
    lines = []
    domain_difficulty_bars([(t.domain, t.difficulty) for t in summary.tasks],
                           paths.figure("domain_difficulty"))
    figure = paths.rel(paths.figure("domain_difficulty"))
    lines.append(f"![Tasks by domain and difficulty]({figure})")
    if labels:
        rates: dict[str, list[float]] = defaultdict(list)
        for row in labels:
            if row.pass_rate is not None:
                rates[f"{row.model} ({row.scaffold})"].append(row.pass_rate)
        pass_rate_histogram(dict(rates), paths.figure("pass_rate_hist"))
        lines.append(f"![Pass rates per model]({paths.rel(paths.figure('pass_rate_hist'))})")
    return "\n\n".join(lines)


def _yaml(paths: RepoPaths, summary: EnvironmentsSummary, labels: list[LabelRow],
          repo_id: str) -> dict[str, Any]:
    configs = [("tasks", [(s, paths.split_glob("tasks", s)) for s in summary.split_counts], True)]
    if labels:
        configs.append(("labels", [("train", paths.split_glob("labels", "train"))], False))
    meta: dict[str, Any] = {"pretty_name": _title(summary, repo_id)}
    if summary.license:  # unknown: no claim (the License section says how to set it)
        meta["license"] = summary.license
    meta.update({
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["termgrade", "terminal", "agents", "reinforcement-learning", RL_TAG,
                 "harbor"],
        "size_categories": [size_category(len(summary.tasks))],
        "configs": card_configs(configs),
    })
    return meta


RL_TAG = "rl-environment"
"""The Hub's RL Environments filter keys on this tag."""


def _title(summary: EnvironmentsSummary, repo_id: str) -> str:
    """TermGrade's own corpus is "TermGrade environments"; another is named by its repo."""
    return "TermGrade environments" if is_own_corpus(summary.tasks) else repo_id.split("/")[-1]


def _verified_sentence(summary: EnvironmentsSummary) -> str:
    n = len(summary.tasks)
    verified = sum(t.oracle_verified for t in summary.tasks)
    checked = sum(t.n_assertions is not None for t in summary.tasks)
    if not checked:
        return (f"None of the {n:,} tasks was run by `termgrade verify` for this build: "
                "whether each one builds, and whether its reference solution passes its own "
                "tests, is not known (`oracle_verified` is false for all).")
    return (f"{verified:,} of the {n:,} tasks are `oracle_verified`: their reference solution "
            "passed their own verifier in a freshly built, network-less container, and an "
            "untouched container failed it" + ("." if verified == n else
                                               f"; the other {n - verified:,} are not."))


def _license_text(summary: EnvironmentsSummary) -> str:
    return license_section(summary.license, [t.origin_record for t in summary.tasks],
                           "termgrade build environments")


def _quick_start_loads(summary: EnvironmentsSummary, labels: list[LabelRow],
                       repo_id: str) -> str:
    """One ``load_dataset`` line per split and config this repo really has."""
    lines = [f'{split} = load_dataset("{repo_id}", split="{split}")'
             + ('          # config "tasks" (default)' if i == 0 else "")
             for i, split in enumerate(summary.split_counts)]
    if labels:
        lines.append(f'labels = load_dataset("{repo_id}", "labels", split="train")')
    return "\n".join(lines)


def _split_roles(summary: EnvironmentsSummary) -> str:
    """What each split is for, in words, from the split flags this repo was built with."""
    def names(role: str) -> str:
        found = sorted(s for s, r in summary.split_roles.items() if r == role)
        return " and ".join(f"`{s}`" for s in found)

    sentences = [f"`{DEFAULT_SPLIT}` tasks were never used for training or validation: "
                 "benchmark on them."]
    if names("train"):
        sentences.append(f"{names('train')} tasks were selected for RL training.")
    if names("validation"):
        sentences.append(f"{names('validation')} tasks were selected for validation.")
    if not summary.split_roles:
        sentences.append("No selection was passed to this build: every task is unseen.")
    return "\n".join(sentences)


def _provenance(summary: EnvironmentsSummary, labels: list[LabelRow]) -> str:
    """How the tasks were made, from their own metadata and this build's inputs only."""
    origins = Counter(t.origin for t in summary.tasks)
    lines = ["| author | source | written by | tasks |", "| --- | --- | --- | --- |"]
    for (author, source, generator), n in sorted(origins.items(), key=lambda x: -x[1]):
        made = f"the model `{generator}`" if generator else "not recorded (no `generator`)"
        lines.append(f"| {author} | {source} | {made} | {n} |")
    n = len(summary.tasks)
    verified = sum(t.oracle_verified for t in summary.tasks)
    checked = sum(t.n_assertions is not None for t in summary.tasks)
    parts = ["\n".join(lines), ""]
    parts.append(
        f"This comes from each task's `task.toml` `[metadata]` (`author`, `source`, "
        f"`generator`). {checked} of {n} tasks were run by `termgrade verify` for this build "
        f"(offline, in Docker with no network: the reference solution must pass its own "
        f"tests and an untouched container must fail them); {verified} are "
        f"`oracle_verified`." if checked else
        f"No `termgrade verify` records were given to this build: `oracle_verified` is "
        f"false for all {n} tasks until they are verified.")
    if labels:
        configs = sorted({(r.model, r.scaffold) for r in labels})
        parts.append("")
        parts.append("Labels come from grading " + ", ".join(f"`{m}` ({s})" for m, s in configs)
                     + f" k = {max(r.k for r in labels)} times per task.")
    return "\n".join(parts)


def _citation(repo_id: str) -> str:
    key = repo_id.replace("/", "_").replace("-", "_")
    return ("```bibtex\n"
            f"@misc{{{key},\n"
            f"  title        = {{{repo_id.split('/')[-1]}: Linux tasks for "
            "terminal agents},\n"
            f"  author       = {{{repo_id.split('/')[0]}}},\n"
            f"  year         = {{{datetime.now(UTC).year}}},\n"
            f"  howpublished = {{\\url{{https://huggingface.co/datasets/{repo_id}}}}},\n"
            "  note         = {Built with TermGrade}\n"
            "}\n"
            "```")


def render_environments_card(paths: RepoPaths, summary: EnvironmentsSummary,
                             labels: list[LabelRow], *, repo_id: str,
                             template: Path = DATASET_CARD_TEMPLATE,
                             prose: CardProse | None = None) -> str:
    example = summary.tasks[0].task_id if summary.tasks else "TASK_ID"
    values = {
        "repo_id": repo_id,
        "title": _title(summary, repo_id),
        "verified_sentence": _verified_sentence(summary),
        "license_text": _license_text(summary),
        "n_tasks": f"{len(summary.tasks):,}",
        "n_verified": f"{sum(t.oracle_verified for t in summary.tasks):,}",
        "n_labels": f"{len(labels):,}",
        "n_models": str(len({(r.model, r.scaffold) for r in labels})),
        "split_table": _split_table(summary),
        "split_roles": _split_roles(summary),
        "provenance": _provenance(summary, labels),
        "citation": _citation(repo_id),
        "domain_table": _domain_table(summary),
        "label_table": _label_table(labels),
        "figures": _figures(paths, summary, labels),
        "task_fields": field_table(TaskRow),
        "label_fields": field_table(LabelRow),
        "example_task": example,
        "example_split": summary.tasks[0].split if summary.tasks else "unseen",
        "quick_start_loads": _quick_start_loads(summary, labels, repo_id),
    }
    text = with_prose(template.read_text(encoding="utf-8"), prose, card="environments")
    body = render_template(text, values, name=str(template))
    return front_matter(_yaml(paths, summary, labels, repo_id)) + body
