"""Render a :class:`PassRateReport` as Markdown."""

from __future__ import annotations

from collections.abc import Sequence

from termgrade.passrates.models import PassAtKOut, PassRateReport


def _f(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _n(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _h(value: float | None) -> str:
    """Hours: whole numbers when large, one decimal when small."""
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def _x(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}x"


def _big(value: float) -> str:
    for size, unit in ((1e9, "B"), (1e6, "M")):
        if value >= size:
            return f"{value / size:.2f} {unit}"
    return f"{value:,.0f}"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _pk(stat: PassAtKOut | None) -> str:
    if stat is None or stat.value is None:
        return "-"
    se = "" if stat.se is None else f" ± {stat.se:.4f}"
    return f"{stat.value:.4f}{se}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    out.append("")
    return out


def _pass_rates(report: PassRateReport) -> list[str]:
    bands = [b.split(":")[0] for b in report.band_scheme]
    rows = [[c.config, str(c.k), f"{c.n_measured}/{c.n_tasks}", _pk(c.pass_at_1),
             _pk(c.pass_at_k), _pk(c.pass_at_8), *(str(c.bands.get(b, 0)) for b in bands)]
            for c in report.configs]
    lines = ["## Pass rates", "",
             "Unbiased pass@k (Chen et al. 2021) averaged over tasks with n_counted >= k; "
             "± is the standard error over tasks.", ""]
    lines += _table(["config", "k", "measured", "pass@1", "pass@k", "pass@8", *bands], rows)
    kinds = [(c.config, kind, stat) for c in report.configs
             for kind, stat in c.pass_at_1_by_attestation.items()]
    if not kinds:
        return lines
    note = ("pass@1 by attestation: attested tasks were scored from the grader's signed "
            "record, unattested ones by test.sh's own reward (an agent that games such a "
            "verifier is not caught), unrecorded ones say neither (ingests, older files).")
    return [*lines, "", note, "", *_table(
        ["config", "attestation", "tasks", "pass@1"],
        [[config, kind, str(stat.n_tasks), _pk(stat)] for config, kind, stat in kinds])]


def _one_config(report: PassRateReport) -> list[str]:
    """What stands for the comparisons when there is nothing to compare."""
    only = ", ".join(f"`{c.config}`" for c in report.configs) or "none"
    return ["## Comparisons", "",
            f"One configuration ({only}): paired comparisons and the overlap of "
            f"'{report.central_band}' task sets need two or more. Grade another model or "
            "setting on the same tasks and pass both runs.", ""]


def _paired(report: PassRateReport) -> list[str]:
    if len(report.configs) < 2:
        return _one_config(report)
    level = round(100 * report.paired[0].ci_level) if report.paired else 95
    rows = [[f"{r.a} vs {r.b}", str(r.n_common), f"{r.diff_pp:+.2f}",
             f"{_f(r.ci_low_pp, 2)} .. {_f(r.ci_high_pp, 2)}", _f(r.t, 2), _p(r.p_value)]
            for r in report.paired]
    lines = ["## Paired comparisons", "",
             "Per-task pass-rate differences over the tasks both measured; paired t-test and "
             f"a {level}% bootstrap interval (tasks resampled).", ""]
    return lines + _table(["pair", "tasks", "diff (pp)", f"{level}% CI (pp)", "t", "p"], rows)


def _jaccard(report: PassRateReport) -> list[str]:
    if len(report.configs) < 2:
        return []  # said once, by _paired
    j = report.jaccard
    rows = [[f"{name} ({size})", *(_f(v, 2) for v in row)]
            for name, size, row in zip(j.names, j.sizes, j.matrix, strict=True)]
    pair = " vs ".join(j.max_pair) if j.max_pair else "-"
    lines = [f"## Difficulty does not transfer: '{j.band}' sets", "",
             f"Off-diagonal Jaccard {_f(j.off_diagonal_min, 2)} .. "
             f"{_f(j.off_diagonal_max, 2)} (highest: {pair}); {len(j.in_all)} task(s) are "
             f"'{j.band}' for every configuration.", ""]
    return lines + _table(["config (set size)", *j.names], rows)


def _cost(report: PassRateReport) -> list[str]:
    if not report.cost:
        return []
    rows = [[r.config, _n(r.n_trials), _n(r.n_wins), _f(r.median_win_minutes, 1),
             _n(r.median_win_output_tokens), _h(r.trial_hours), _h(r.trial_hours_all),
             _share(r.retry_share), _f(r.input_output_ratio, 1)] for r in report.cost]
    lines = ["## Cost", ""]
    lines += _table(["config", "trials", "wins", "median win (min)",
                     "median output tokens / win", "trial-hours", "all trial-hours",
                     "retry share", "input:output"], rows)
    t = report.cost_totals
    if t is not None:
        lines += [f"Totals: {_big(t.input_tokens)} input tokens, "
                  f"{_big(t.output_tokens)} output tokens, {_h(t.trial_hours)} "
                  f"trial-hours ({_h(t.trial_hours_all)} with retries), input:output "
                  f"{_f(t.input_output_ratio, 1)}:1. Spans across configurations: pass@1 "
                  f"{_x(t.pass1_span, 1)}, trial-hours {_x(t.hours_span, 1)}, median "
                  f"tokens per win {_x(t.tokens_per_win_span, 0)}.", ""]
    return lines


def _near(report: PassRateReport) -> list[str]:
    nm = report.near_misses
    if nm is None:
        return []
    rows = [[r.config, _n(r.n_near_miss), _share(r.share),
             "-" if r.example is None else f"{r.example.task_id}: {r.example.n_tests_passed} "
             f"passed, failed `{r.example.failed_test}`"
             + (f" ({r.example.failed_message.partition(': ')[2]})"
                if r.example.failed_message else "")] for r in nm.rows]
    top = ", ".join(f"`{name}` ({count})" for name, count in nm.top_failed_tests) or "-"
    lines = ["## Near-misses", "",
             f"{nm.total:,} counted trials ({_share(nm.share)}) failed exactly one assertion "
             f"while passing {nm.min_passed} or more; reward 0.", ""]
    lines += _table(["config", "near-misses", "share", "example"], rows)
    lines += [f"Most often the one failed assertion: {top}.", ""]
    if nm.top_failed_messages:
        lines += ["What those failures said:", ""]
        lines += [f"- `{name}`: {said.partition(': ')[2] or said}"
                  for name, said in nm.top_failed_messages] + [""]
    if nm.failing_counts:
        lines += ["Failed trials by tests failed: " + ", ".join(
            f"{'10+' if k == 10 else k}: {_n(v)}" for k, v in nm.failing_counts) + ".", ""]
    return lines


def _turns(report: PassRateReport) -> list[str]:
    if not report.turns:
        return []
    rows = [[r.config, _f(r.median_turns_win, 0), _f(r.median_turns_fail, 0),
             _share(r.share_two_or_fewer), str(r.n_tasks_mixed),
             _f(r.mean_diff_within_task, 2), _share(r.share_tasks_wins_fewer),
             _p(r.wilcoxon_p)] for r in report.turns]
    lines = ["## Turns of winning vs failing trials", "",
             "Within a task: mean turns of its wins minus mean turns of its failures, over "
             "tasks with both (negative: wins used fewer turns).", ""]
    return lines + _table(["config", "median turns (win)", "median turns (fail)", "<= 2 turns",
                           "tasks", "mean diff", "tasks wins fewer", "Wilcoxon p"], rows)


def render_markdown(report: PassRateReport) -> str:
    lines = ["# TermGrade grading report", "",
             "Inputs: " + ", ".join(f"`{p}`" for p in report.inputs), "",
             "Bands: " + "; ".join(report.band_scheme), ""]
    for section in (_pass_rates, _paired, _jaccard, _cost, _near, _turns):
        lines += section(report)
    if report.issues:
        lines += ["## Data issues", "", *(f"- {issue}" for issue in report.issues), ""]
    if report.plots:
        lines += ["## Figures", "", *(f"![{p}]({p})" for p in report.plots), ""]
    return "\n".join(lines)
