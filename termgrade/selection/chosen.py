"""The selection report: what was chosen, its GRPO weights, and the chance of empty groups."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from termgrade.core.atomic import atomic_write_bytes, atomic_write_text
from termgrade.selection.bandcentral import Selection
from termgrade.stats import all_equal_probability, expected_all_equal_share, grpo_weight


class ChosenTask(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task_id: str
    source: str
    role: str
    pass_rate: float
    weight: float = Field(description="4p(1-p), relative GRPO weight.")
    all_equal: float = Field(description="p^G + (1-p)^G: chance its G rollouts are all equal.")


class SelectionReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    scaffold: str | None
    range: tuple[float, float]
    rollouts: int
    split_names: tuple[str, str, str]
    pool_by_source: dict[str, int]
    measured: int
    in_range: int
    train_by_source: dict[str, int]
    validation_by_target: dict[str, int]
    train_mean_pass_rate: float | None
    train_mean_weight: float | None
    train_min_weight: float | None
    expected_all_equal_share: float | None = Field(
        description="Mean over training tasks of p^G + (1-p)^G, at their measured p.")
    expected_all_equal_groups: float | None = Field(
        description="Expected training tasks whose G rollouts are all equal, at measured p.")
    issues: list[str]
    chosen: list[ChosenTask]


def _chosen(frame: pd.DataFrame, g: int) -> list[ChosenTask]:
    return [ChosenTask(task_id=str(r.task_id), source=str(r.source), role=str(r.role),
                       pass_rate=float(r.pass_rate), weight=float(grpo_weight(r.pass_rate)),
                       all_equal=float(all_equal_probability(r.pass_rate, g)))
            for r in frame.itertuples()]


def build_selection_report(selection: Selection) -> SelectionReport:
    c = selection.config
    pool = selection.pool
    train = selection.chosen("train")
    val = selection.chosen("validation")
    p = train["pass_rate"].to_numpy(dtype=float)
    share = expected_all_equal_share(p, c.rollouts) if p.size else None
    return SelectionReport(
        model=c.model, scaffold=c.scaffold, range=(c.lo, c.hi), rollouts=c.rollouts,
        split_names=c.names,
        pool_by_source={str(k): int(v) for k, v in pool["source"].value_counts().items()},
        measured=int(pool["pass_rate"].notna().sum()), in_range=selection.n_in_range,
        train_by_source={str(k): int(v) for k, v in train["source"].value_counts().items()},
        validation_by_target={f"{t:g}": int(n) for t, n in
                              val["val_target"].value_counts().sort_index().items()},
        train_mean_pass_rate=float(p.mean()) if p.size else None,
        train_mean_weight=float(grpo_weight(p).mean()) if p.size else None,
        train_min_weight=float(grpo_weight(p).min()) if p.size else None,
        expected_all_equal_share=share,
        expected_all_equal_groups=None if share is None else share * p.size,
        issues=[str(i) for i in selection.issues],
        chosen=_chosen(pd.concat([train, val]), c.rollouts))


def render_selection_markdown(report: SelectionReport) -> str:
    r = report
    lines = [f"# Band-central selection: {r.model}" + (f" ({r.scaffold})" if r.scaffold else ""),
             "", f"Pool: {sum(r.pool_by_source.values())} tasks "
             f"({', '.join(f'{k} {v}' for k, v in r.pool_by_source.items())}); {r.measured} "
             f"measured; {r.in_range} in [{r.range[0]:g}, {r.range[1]:g}].", "",
             f"Training ({r.split_names[1]}): "
             f"{sum(r.train_by_source.values())} tasks nearest 0.5 "
             f"({', '.join(f'{k} {v}' for k, v in r.train_by_source.items()) or 'none'}); mean "
             f"pass rate {_f(r.train_mean_pass_rate)}, mean 4p(1-p) {_f(r.train_mean_weight)}, "
             f"lowest {_f(r.train_min_weight)}. Expected share of all-equal groups of "
             f"G={r.rollouts} rollouts: {_f(r.expected_all_equal_share, 6)} "
             f"({_f(r.expected_all_equal_groups, 2)} tasks).", "",
             f"Validation ({r.split_names[2]}): " + (", ".join(
                 f"{v} near {k}" for k, v in r.validation_by_target.items()) or "none") + ".",
             ""]
    if r.issues:
        lines += ["Issues:", "", *(f"- {i}" for i in r.issues), ""]
    lines += ["| task | source | role | p | 4p(1-p) | all-equal |", "|---|---|---|---|---|---|"]
    lines += [f"| {t.task_id} | {t.source} | {t.role} | {t.pass_rate:.3f} | {t.weight:.3f} | "
              f"{t.all_equal:.2e} |" for t in r.chosen]
    return "\n".join(lines) + "\n"


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def selection_report_paths(splits_path: Path) -> dict[str, Path]:
    stem = splits_path.with_suffix("")
    return {"json": stem.with_name(stem.name + ".selection.json"),
            "md": stem.with_name(stem.name + ".selection.md"),
            "png": stem.with_name(stem.name + ".selection.png")}


def write_selection_report(selection: Selection, splits_path: Path,
                           *, plot: bool = True) -> list[Path]:
    """Write ``<splits>.selection.{json,md,png}`` beside the splits file."""
    from termgrade.passrates.plots import grpo_curve

    report = build_selection_report(selection)
    paths = selection_report_paths(splits_path)
    atomic_write_text(paths["json"], report.model_dump_json(indent=2) + "\n")
    atomic_write_text(paths["md"], render_selection_markdown(report))
    written = [paths["json"], paths["md"]]
    if plot:
        c = selection.config
        marks = {"train": selection.chosen("train")["pass_rate"].tolist(),
                 "validation": selection.chosen("validation")["pass_rate"].tolist()}
        atomic_write_bytes(paths["png"], grpo_curve(marks, (c.lo, c.hi)))
        written.append(paths["png"])
    return written
