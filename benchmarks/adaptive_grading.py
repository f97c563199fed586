"""Benchmark: adaptive grading vs fixed k, judged by the band-central selection it leads to.

For each synthetic corpus shaped like the release's models (termgrade.trialsets.synthetic_config
PAPER_LIKE, the k=8 ones: a task's true p ~ Beta with the model's mean and concentration) and
each seed: draw k Bernoulli outcomes per task, grade them

* fixed: all k outcomes of every task;
* adaptive: an AdaptiveScheduler (empirical-Bayes prior refitted as results arrive) drives a
  simulated runner with ``--slots`` attempts in flight that come back in random order; a
  task's j-th counted result is its j-th drawn outcome, so adaptive sees a prefix of what
  fixed sees;
* fixed': a second, independent fixed-k run (the noise floor of fixed-k grading itself);

then runs select_band_central on each labels frame (n and val_n scaled from 151 and 60 per
1,004 tasks) and compares roles per task (train / validation / none).

Columns: ``saving`` = fixed trials / adaptive trials; ``agree`` = share of tasks with the same
role under adaptive and fixed (same outcomes); ``floor`` = the same share for fixed vs fixed';
``a~f'`` = adaptive vs fixed'; ``w fix`` / ``w ada`` = mean true 4p(1-p) of the train tasks
(GRPO signal; 1 at p = 0.5). Mean and worst over seeds.

    .venv/bin/python benchmarks/adaptive_grading.py [--tasks 1004] [--seeds 20] [--k 8]
        [--confidence 0.9 0.95] [--k-min 2] [--slots 64]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from termgrade.core.errors import DataWarning
from termgrade.grade.adaptive import AdaptiveRule, AdaptiveScheduler
from termgrade.selection.bandcentral import SelectionConfig, select_band_central
from termgrade.stats.bands import DEFAULT_SCHEME
from termgrade.trialsets.synthetic_config import PAPER_LIKE, SyntheticModel

SCAFFOLD = "synthetic-scaffold"


@dataclass
class Run:
    saving: float
    agree: float
    floor: float
    agree_other: float
    lost: float
    w_fixed: float
    w_adaptive: float


def true_rates(model: SyntheticModel, n_tasks: int, rng: np.random.Generator
               ) -> NDArray[np.float64]:
    """As termgrade.trialsets.synthetic draws a model's marginal: Beta(mean*c, (1-mean)*c)."""
    a = model.mean * model.concentration
    b = (1 - model.mean) * model.concentration
    return np.asarray(rng.beta(a, b, n_tasks), dtype="float64")


def grade_adaptive(outcomes: NDArray[np.bool_], ids: list[str], rule: AdaptiveRule, slots: int,
                   loss: float, rng: np.random.Generator) -> tuple[NDArray[np.int64], ...]:
    """Drive the scheduler like a runner: up to ``slots`` in flight, random completion order."""
    scheduler = AdaptiveScheduler(ids, rule)
    index = {t: i for i, t in enumerate(ids)}
    used = np.zeros(len(ids), dtype="int64")
    in_flight: list[int] = []
    while True:
        in_flight += [index[t] for t in scheduler.next_attempts(slots - len(in_flight))]
        if not in_flight:
            break
        order = rng.permutation(len(in_flight))
        n_back = max(1, len(in_flight) // 2)
        back = [in_flight[j] for j in order[:n_back]]
        in_flight = [in_flight[j] for j in order[n_back:]]
        for i in back:
            if rng.random() < loss:
                scheduler.release(ids[i])
                continue
            scheduler.record(ids[i], bool(outcomes[i, used[i]]))
            used[i] += 1
    assert scheduler.finished()
    n_passed = np.array([outcomes[i, :used[i]].sum() for i in range(len(ids))], dtype="int64")
    return n_passed, used


def labels_frame(ids: list[str], model: str, n_passed: NDArray[np.int64],
                 n_counted: NDArray[np.int64], k: int) -> pd.DataFrame:
    rate = n_passed / n_counted
    return pd.DataFrame({"task_id": ids, "model": model, "scaffold": SCAFFOLD,
                         "pass_rate": rate, "band": DEFAULT_SCHEME.assign(rate),
                         "n_counted": n_counted, "k": k, "n_passed": n_passed})


def roles(frame: pd.DataFrame, config: SelectionConfig) -> NDArray[np.object_]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        pool = select_band_central(frame, config).pool
    role = pool.set_index("task_id")["role"].fillna("none")
    return np.asarray(role.loc[frame["task_id"]].to_numpy(), dtype=object)


def one_run(model: SyntheticModel, n_tasks: int, k: int, rule: AdaptiveRule, slots: int,
            loss: float, seed: int) -> Run:
    rng = np.random.default_rng(seed)
    p = true_rates(model, n_tasks, rng)
    outcomes = rng.random((n_tasks, k)) < p[:, None]
    other = rng.random((n_tasks, k)) < p[:, None]
    ids = [f"synthetic-task-{i + 1:04d}" for i in range(n_tasks)]
    config = SelectionConfig(model=model.name, n=round(151 / 1004 * n_tasks),
                             val_n=round(60 / 1004 * n_tasks))
    full = np.full(n_tasks, k, dtype="int64")
    fixed = roles(labels_frame(ids, model.name, outcomes.sum(1), full, k), config)
    again = roles(labels_frame(ids, model.name, other.sum(1), full, k), config)
    n_passed, n_counted = grade_adaptive(outcomes, ids, rule, slots, loss, rng)
    adaptive = roles(labels_frame(ids, model.name, n_passed, n_counted, k), config)
    weight = 4 * p * (1 - p)
    pool = np.array(DEFAULT_SCHEME.assign(outcomes.sum(1) / k)) == "central"
    return Run(saving=k * n_tasks / n_counted.sum(), agree=float(np.mean(adaptive == fixed)),
               floor=float(np.mean(fixed == again)),
               agree_other=float(np.mean(adaptive == again)),
               lost=float(np.mean(n_counted[pool] < k)),
               w_fixed=float(weight[fixed == "train"].mean()),
               w_adaptive=float(weight[adaptive == "train"].mean()))


def bayes_bound(model: SyntheticModel, k: int, k_min: int, saving: float) -> float:
    """The least share of the role pool any per-task stopping rule must lose to use
    ``saving``x fewer trials than fixed k, even knowing the true prior.

    The role pool is the tasks whose fixed-k rate lands in the central band (s/k in
    [0.25, 0.75]); a task stopped early whose k outcomes would have put it there is lost.
    For each price ``lam`` of a loss, backward induction over (passes, attempts) with the
    posterior predictive gives the rule minimising trials + lam * P(loss); these rules span
    the lower convex hull of (trials, loss) over all rules, randomised ones included, which
    is interpolated at ``k / saving`` trials.
    """
    a = model.mean * model.concentration
    b = (1 - model.mean) * model.concentration
    central = np.array(DEFAULT_SCHEME.assign(np.arange(k + 1) / k)) == "central"
    pool = float(stats.betabinom(k, a, b).pmf(np.arange(k + 1))[central].sum())
    lose = [np.array([stats.betabinom(k - n, a + j, b + n - j).pmf(np.arange(k - n + 1))
                      [central[j:j + k - n + 1]].sum() for j in range(n + 1)])
            for n in range(k)]  # P(fixed-k rate central | j passes in n attempts)
    points = []
    for lam in np.geomspace(0.1, 1e4, 300):
        cost = np.zeros(k + 1)      # by passes s, at the current number of attempts n
        trials = np.zeros(k + 1)
        lost = np.zeros(k + 1)
        for n in range(k - 1, -1, -1):
            q = (a + np.arange(n + 1)) / (a + b + n)  # predictive chance the next one passes
            go_cost = 1 + q * cost[1:n + 2] + (1 - q) * cost[:n + 1]
            go_trials = 1 + q * trials[1:n + 2] + (1 - q) * trials[:n + 1]
            go_lost = q * lost[1:n + 2] + (1 - q) * lost[:n + 1]
            stop = (n >= k_min) & (lam * lose[n] <= go_cost)
            cost = np.where(stop, lam * lose[n], go_cost)
            trials = np.where(stop, 0.0, go_trials)
            lost = np.where(stop, lose[n], go_lost)
        points.append((float(trials[0]), float(lost[0] / pool)))
    points.sort()
    return float(np.interp(k / saving, [t for t, _ in points], [x for _, x in points]))


def _job(job: tuple[SyntheticModel, int, int, AdaptiveRule, int, float, int]) -> Run:
    return one_run(*job)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1004)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--k", type=int, default=8, help="k of fixed grading, k_max of adaptive")
    parser.add_argument("--k-min", type=int, default=2)
    parser.add_argument("--confidence", type=float, nargs="+", default=[0.8, 0.9, 0.95])
    parser.add_argument("--concentration", type=float, default=None,
                        help="override the models' Beta concentration (lower: more polarised)")
    parser.add_argument("--slots", type=int, default=64, help="attempts in flight")
    parser.add_argument("--loss", type=float, default=0.0,
                        help="chance an attempt is lost to infrastructure (then rerun)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    models = [m for m in PAPER_LIKE if m.k == 8]
    if args.concentration is not None:
        models = [replace(m, concentration=args.concentration) for m in models]
    began = time.perf_counter()
    rows = [(model, AdaptiveRule(k_max=args.k, k_min=args.k_min, confidence=confidence))
            for model in models for confidence in args.confidence]
    jobs = [(model, args.tasks, args.k, rule, args.slots, args.loss, seed)
            for model, rule in rows for seed in range(args.seeds)]
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        runs = list(pool.map(_job, jobs))
    print(f"{args.tasks} tasks, {args.seeds} seeds, fixed k={args.k} vs adaptive "
          f"(k_min={args.k_min}, k_max={args.k}), {args.slots} attempts in flight\n")
    head = (f"{'corpus':<21}{'conf':>5}{'trials':>7}  {'saving mean/worst':>17}  "
            f"{'agree mean/worst':>16}  {'floor mean/worst':>16}{'a~fp':>6}  "
            f"{'lost':>5}{'bound':>6}  {'w fix':>5}{'w ada':>6}")
    print(head)
    print("-" * len(head))
    met = 0
    for r, (model, rule) in enumerate(rows):
        mine = runs[r * args.seeds:(r + 1) * args.seeds]
        saving = np.array([x.saving for x in mine])
        agree = np.array([x.agree for x in mine])
        floor = np.array([x.floor for x in mine])
        met += bool(saving.min() >= 2 and agree.min() >= 0.9)
        name = f"{model.name.removeprefix('synthetic-')} m={model.mean:g} c={model.concentration:g}"
        print(f"{name:<21}{rule.confidence:>5g}{args.k * args.tasks / saving.mean():>7,.0f}  "
              f"{saving.mean():>8.2f}x/{saving.min():.2f}x  "
              f"{agree.mean():>9.3f}/{agree.min():.3f}  {floor.mean():>9.3f}/{floor.min():.3f}"
              f"{np.mean([x.agree_other for x in mine]):>6.3f}  "
              f"{np.mean([x.lost for x in mine]):>5.3f}"
              f"{bayes_bound(model, args.k, args.k_min, float(saving.mean())):>6.3f}  "
              f"{np.mean([x.w_fixed for x in mine]):>5.3f}"
              f"{np.mean([x.w_adaptive for x in mine]):>6.3f}")
    print(f"\nfixed k={args.k} uses {args.k * args.tasks:,} trials. Target (>= 2x fewer trials "
          f"and >= 90% role agreement, worst seed) met in {met} of {len(rows)} rows.")
    print("Least share of the role pool any per-task stopping rule must lose for 2x, "
          "knowing the true prior:")
    print("  " + ", ".join(f"{m.name.removeprefix('synthetic-')} "
                           f"{bayes_bound(m, args.k, args.k_min, 2.0):.3f}" for m in models))
    print(f"{time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
