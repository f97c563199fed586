"""The trial page: what one attempt did, turn by turn, and how it was scored.

Read from the trial's one line of its file (:meth:`RunIndex.trial`). Shows the outcome
and why (the failure reason, the grader's message, integrity findings), timings and
tokens, per-test verdicts, the verifier's output, then every message: each assistant turn
with its tool calls (a ``bash`` call's command as a block) and per-turn tokens, each tool
output as the model saw it (the scaffold's truncation notices highlighted). A trial with
only an episode (ingested Terminus runs) shows its steps: message, keystrokes, frame.
"""

from __future__ import annotations

import json

from termgrade.records import ChatMessage, EpisodeStep, TrialRecord, TurnMetrics
from termgrade.records.evidence import TestEvidence
from termgrade.view.filters import Filters
from termgrade.view.html import clipped, compact, esc, num, page, rate, table
from termgrade.view.index import RunIndex
from termgrade.view.links import Links
from termgrade.view.reasons import LABELS, tamper_findings


def _facts(record: TrialRecord, reason: str, near: bool, cell_link: str | None) -> str:
    task = (f'<a href="{esc(cell_link)}">{esc(record.task_id)}</a>' if cell_link
            else esc(record.task_id))
    rows = [
        ("task", task), ("model", esc(record.model)), ("scaffold", esc(record.scaffold)),
        ("attempt", f"{record.attempt} (retry {record.retry_index}"
                    + (f", retries {esc(record.retry_of)})" if record.retry_of else ")")),
        ("reward", rate(record.reward)), ("passed", esc(record.passed)),
        ("counted", esc(record.counted)),
        ("reason", f'<span class="reason reason-{esc(reason)}">{esc(LABELS.get(reason, reason))}'
                   f'{" · near-miss" if near else ""}</span>'),
        ("agent timed out", esc(record.agent_timed_out)),
        ("episode ended", esc(record.stop_reason or "-")),
        ("exception", esc(record.exception_type or "-")),
        ("started", esc(record.started_at or "-")), ("finished", esc(record.finished_at or "-")),
        ("duration (s)", num(record.duration_s, 1)), ("turns", num(record.turns)),
        ("tokens in / out / cached", f"{num(record.input_tokens)} / "
                                     f"{num(record.output_tokens)} / {num(record.cached_tokens)}"),
        ("HTTP retries", num(record.http_retries)), ("source", esc(record.source)),
        ("messages from", esc(record.messages_source or "-")),
        *([("regraded from", esc(record.regraded_from))] if record.regraded_from else []),
    ]
    per_row = 4
    lines = ["<tr>" + "".join(f"<th>{esc(k)}</th><td>{v}</td>" for k, v in rows[i:i + per_row])
             + "</tr>" for i in range(0, len(rows), per_row)]
    lines.append(f'<tr><th>failure</th><td colspan="{2 * per_row - 1}"><span class="failure">'
                 f'{esc(record.exception_message or "-")}</span></td></tr>')
    return '<table class="facts">' + "".join(lines) + "</table>"


def _findings(record: TrialRecord) -> str:
    found = tamper_findings(record.exception_message)
    if not found:
        return ""
    items = "".join(f'<li class="finding">{esc(f)}</li>' for f in found)
    return f'<h2>Integrity findings</h2><ul class="findings">{items}</ul>'


def _why(record: TrialRecord) -> dict[str, TestEvidence]:
    """Each test's evidence by its short name (as ``record.tests`` names it)."""
    out: dict[str, TestEvidence] = {}
    for evidence in record.test_evidence:
        out.setdefault(evidence.name.split("::")[-1], evidence)
    return out


def _said(evidence: TestEvidence | None) -> str:
    if evidence is None or not (evidence.message or evidence.repr or evidence.output):
        return "<td></td>"
    rest = "\n".join((evidence.message or "").splitlines()[1:]).strip("\n")
    more = "".join(f'<span class="meta">{label}</span>' + clipped(text)
                   for label, text in (("message", rest), ("assertion", evidence.repr),
                                       ("printed", evidence.output)) if text)
    message = esc((evidence.message or "").splitlines()[0] if evidence.message else "")
    return (f'<td class="why"><details><summary>{message or "details"}</summary>'
            f"{more}</details></td>")


def _tests(record: TrialRecord) -> str:
    if not record.tests:
        return "<h2>Tests</h2><p>No per-test verdicts.</p>"
    why = _why(record)
    rows = [f'<tr class="test outcome-{esc(t.outcome.value)}"><td>{esc(t.name)}</td>'
            f"<td>{esc(t.outcome.value)}</td>"
            f"<td>{_duration(why.get(t.name))}</td>{_said(why.get(t.name))}</tr>"
            for t in record.tests]
    return (f"<h2>Tests ({num(record.n_tests_passed)} passed, "
            f"{num(record.n_tests_failed)} failed)</h2>"
            + table(["test", "outcome", "time", "what the failure said"], rows, "tests"))


def _duration(evidence: TestEvidence | None) -> str:
    return "" if evidence is None else f"{evidence.duration_s:.2f} s"


def _arguments(name: str, arguments: str) -> str:
    """A bash call's command as a block; any other arguments as the JSON they are."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return '<span class="meta">arguments (not valid JSON):</span>' + clipped(arguments)
    if isinstance(parsed, dict) and set(parsed) == {"command"} and isinstance(
            parsed["command"], str):
        return clipped(parsed["command"])
    return clipped(json.dumps(parsed, indent=2, ensure_ascii=False))


def _metrics(metrics: TurnMetrics | None) -> str:
    if metrics is None:
        return ""
    seconds = "" if metrics.duration_s is None else f" · {metrics.duration_s:.1f} s"
    return (f'<span class="meta"> · {compact(metrics.input_tokens)} in / '
            f"{compact(metrics.output_tokens)} out{seconds}</span>")


def _message(message: ChatMessage, turn: int | None, metrics: TurnMetrics | None) -> str:
    head = esc(message.role) + (f" · turn {turn + 1}" if turn is not None else "")
    if message.role == "tool":
        head += f" · {esc(message.name or 'tool')} output"
    parts = [f'<div class="msg role-{esc(message.role)}"><b>{head}</b>{_metrics(metrics)}']
    if message.reasoning_content:
        parts.append('<details><summary>reasoning</summary>'
                     + clipped(message.reasoning_content) + "</details>")
    if message.content and message.role in ("system", "user") and turn is None:
        first = message.content.strip().splitlines()[0][:120] if message.content.strip() else ""
        parts.append(f'<details class="prompt"><summary>{esc(first)} '
                     f"({len(message.content):,} characters)</summary>"
                     + clipped(message.content) + "</details>")
    elif message.content:
        parts.append(clipped(message.content))
    for call in message.tool_calls or []:
        parts.append(f'<div class="tool-call"><span class="meta">tool call</span> '
                     f'<code class="tool-name">{esc(call.function.name)}</code>'
                     + _arguments(call.function.name, call.function.arguments) + "</div>")
    parts.append("</div>")
    return "".join(parts)


def _messages(record: TrialRecord) -> str:
    metrics = {m.turn: m for m in record.per_turn}
    out, turn = [], 0
    for message in record.messages or []:
        if message.role == "assistant":
            out.append(_message(message, turn, metrics.get(turn)))
            turn += 1
        else:
            out.append(_message(message, None, None))
    return f"<h2>Messages ({len(record.messages or [])})</h2>" + "".join(out)


def _step(step: EpisodeStep) -> str:
    keys = "".join(clipped(k) for k in step.keystrokes)
    return (f'<div class="msg role-{"assistant" if step.source == "agent" else "user"}">'
            f"<b>step {step.index} · {esc(step.source)}</b>"
            + clipped(step.message)
            + (f'<span class="meta">keystrokes</span>{keys}' if keys else "")
            + (f'<span class="meta">terminal</span>{clipped(step.observation)}'
               if step.observation else "") + "</div>")


def _episode(record: TrialRecord) -> str:
    steps = record.episode or []
    return f"<h2>Episode ({len(steps)} steps)</h2>" + "".join(_step(s) for s in steps)


def trial_page(index: RunIndex, row: int, links: Links) -> str:
    t = index.trials.iloc[row]
    record = index.trial(row)
    cell = index.cells[(index.cells["task_id"] == record.task_id)
                       & (index.cells["model"] == record.model)
                       & (index.cells["scaffold"] == record.scaffold)]
    cell_link = links.cell(int(cell.index[0])) if len(cell) else None
    transcript = (_messages(record) if record.messages else
                  _episode(record) if record.episode else "<h2>Messages</h2><p>No transcript "
                  "(the trial was lost before the agent acted, or ingested without "
                  "transcripts).</p>")
    verifier = ("<h2>Verifier output</h2>" + clipped(record.verifier_output)
                if record.verifier_output else "")
    reason = str(t["reason"])
    more = links.trials(Filters(reason=reason))
    body = (f"<h1>{esc(record.trial_id)}</h1>"
            + _facts(record, reason, bool(t["near_miss"]), cell_link)
            + f'<p><a href="{esc(links.trial_json(row))}">the whole record (JSON)</a> · '
            f'<a href="{esc(more)}">other trials: {esc(LABELS.get(reason, reason))}</a></p>'
            + '<div class="trial"><section class="side">' + _findings(record) + _tests(record)
            + verifier + '</section><section class="turns">' + transcript
            + "</section></div>")
    return page(record.trial_id, body, home=links.home())


def trial_json(index: RunIndex, row: int) -> str:
    return index.trial(row).model_dump_json(indent=1)
