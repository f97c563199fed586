"""``termgrade train monitor``: verl's logged metrics -> a table, a plot and warnings.

verl's file logger (``trainer.logger`` includes ``file``; launch.sh points
``VERL_FILE_LOGGER_PATH`` at ``run/metrics.jsonl``) writes one JSON line per step:
``{"step": N, "data": {metric: value}}``. Per training step the monitor reads the
reward (``critic/score/mean``), the validation score (``val-core/<source>/<var>/mean@n``),
turns (``num_turns/mean``), the groups dynamic sampling dropped
(``training/filter_groups/evicted_samples``) and generated past the batch
(``.../discarded_surplus_samples``), and computes the re-band signal of SPEC section 8:
:func:`termgrade.training.grpo.gen_batches`. A step at or past ``warn_at`` generation
batches (default 8, near the paper's cap of 10) means the tasks have drifted out of band
for the model being trained: regrade them and reselect.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termgrade.core.atomic import atomic_write_text
from termgrade.core.errors import OptionError
from termgrade.training.grpo import gen_batches

REWARD = "critic/score/mean"
TURNS = ("num_turns/mean", "training/num_turns/mean")
EVICTED = "training/filter_groups/evicted_samples"
SURPLUS = "training/filter_groups/discarded_surplus_samples"
VAL_PREFIX = "val-core/"
DEFAULT_CAP = 10
DEFAULT_WARN_AT = 8.0


@dataclass
class MetricsStep:
    step: int
    reward: float | None = None
    val_score: float | None = None
    turns: float | None = None
    dropped_groups: float = 0.0
    surplus_groups: float = 0.0
    gen_batches: float | None = None
    """None for a validation-only line (before the first update)."""


@dataclass
class MonitorReport:
    rows: list[MetricsStep]
    train_batch_size: int
    warn_at: float
    warnings: list[str] = field(default_factory=list)
    table: Path | None = None
    plot: Path | None = None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def read_metrics(path: Path) -> dict[int, dict[str, Any]]:
    """Step -> merged metrics (verl logs validation and training of a step separately)."""
    if not path.is_file():
        raise OptionError(f"{path}: no metrics yet",
                          fix="start the run with its launch.sh (verl's file logger writes it)")
    steps: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            step, data = int(entry["step"]), dict(entry["data"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise OptionError(f"{path}:{number}: not a verl file-logger line ({exc})",
                              fix="point at the metrics.jsonl verl's file logger wrote") from exc
        steps.setdefault(step, {}).update(data)
    return steps


def _val_score(data: dict[str, Any]) -> float | None:
    keys = sorted(k for k in data if k.startswith(VAL_PREFIX) and "/mean@" in k)
    return _number(data[keys[0]]) if keys else None


def step_rows(steps: dict[int, dict[str, Any]], train_batch_size: int) -> list[MetricsStep]:
    rows = []
    for step in sorted(steps):
        data = steps[step]
        row = MetricsStep(step=step, reward=_number(data.get(REWARD)), val_score=_val_score(data),
                      turns=next((_number(data[k]) for k in TURNS if k in data), None),
                      dropped_groups=_number(data.get(EVICTED)) or 0.0,
                      surplus_groups=_number(data.get(SURPLUS)) or 0.0)
        if row.reward is not None:
            row.gen_batches = gen_batches(train_batch_size=train_batch_size,
                                          evicted=row.dropped_groups,
                                          discarded_surplus=row.surplus_groups)
        rows.append(row)
    return rows


def warnings_for(rows: list[MetricsStep], warn_at: float, cap: int) -> list[str]:
    out = []
    for row in rows:
        if row.gen_batches is not None and row.gen_batches >= warn_at:
            out.append(f"step {row.step}: {row.gen_batches:.1f} generation batches for one "
                       f"update (the paper capped at {cap}; it needed 2): most groups were "
                       "all-pass or all-fail, the tasks have drifted out of band for this "
                       "model. Regrade them (termgrade grade) and reselect (termgrade select).")
    return out


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def markdown_table(rows: list[MetricsStep], train_batch_size: int) -> str:
    lines = ["| step | reward | validation | turns | groups kept | dropped | gen batches |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        kept = str(train_batch_size) if r.gen_batches is not None else "-"
        lines.append(f"| {r.step} | {_fmt(r.reward)} | {_fmt(r.val_score)} | "
                     f"{_fmt(r.turns, 1)} | {kept} | {r.dropped_groups:g} | "
                     f"{_fmt(r.gen_batches, 2)} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[MetricsStep], path: Path, warn_at: float, cap: int) -> None:
    """Four panels: reward (and validation), groups, the re-band signal, turns."""
    from termgrade.core.figures import pyplot, save_figure

    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(9, 6))
    train = [r for r in rows if r.gen_batches is not None]
    steps = [r.step for r in train]
    ax = axes[0][0]
    ax.plot(steps, [r.reward for r in train], marker="o", label="train reward")
    val = [r for r in rows if r.val_score is not None]
    ax.plot([r.step for r in val], [r.val_score for r in val], marker="s", label="validation")
    ax.set(title="reward", xlabel="step", ylim=(-0.02, 1.02))
    ax.legend()
    ax = axes[0][1]
    ax.bar(steps, [r.dropped_groups for r in train], label="dropped (all-equal)")
    ax.set(title="groups dropped per step", xlabel="step")
    ax = axes[1][0]
    ax.plot(steps, [r.gen_batches for r in train], marker="o")
    ax.axhline(warn_at, color="tab:orange", linestyle="--", label=f"warn ({warn_at:g})")
    ax.axhline(cap, color="tab:red", linestyle=":", label=f"paper cap ({cap})")
    ax.set(title="generation batches per step (re-band signal)", xlabel="step", ylim=(0, cap + 1))
    ax.legend()
    ax = axes[1][1]
    ax.plot([r.step for r in rows if r.turns is not None],
            [r.turns for r in rows if r.turns is not None], marker="o")
    ax.set(title="turns per trajectory (mean)", xlabel="step")
    save_figure(fig, path)


def monitor_run(run: Path, *, warn_at: float = DEFAULT_WARN_AT, cap: int = DEFAULT_CAP,
                write: bool = True) -> MonitorReport:
    """Read the run's metrics; write ``monitor/metrics.{md,png}`` when ``write``."""
    from termgrade.training.paths import RunPaths
    from termgrade.training.prepare import read_record

    paths = RunPaths(run)
    record = read_record(paths.record)
    batch = int(record.recipe["train_batch_size"])
    rows = step_rows(read_metrics(paths.metrics), batch)
    report = MonitorReport(rows, batch, warn_at, warnings_for(rows, warn_at, cap))
    if write:
        report.table = paths.monitor_dir / "metrics.md"
        report.plot = paths.monitor_dir / "metrics.png"
        atomic_write_text(report.table, markdown_table(rows, batch))
        plot(rows, report.plot, warn_at, cap)
    return report
