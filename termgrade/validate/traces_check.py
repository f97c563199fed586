"""Agent traces: every ``traces/**/*.jsonl`` is a Session Trace Simple Format file the
Hub's trace viewer renders, a row of the ``traces`` config (its parquet form, which
``datasets`` loads) names it, and the card carries the ``agent-traces`` tag; every
``atif/**/*.json`` is an ATIF v1.x trajectory in shape. A config over the JSONL files
themselves is refused: ``datasets`` cannot load it beside parquet configs.

The STS rules checked are the Hub's documented ones (see
:mod:`termgrade.builders.traces`): a ``session`` header line with string ``harness`` and
``id``; then ``message`` envelopes whose message has a ``role`` of user / assistant /
system / tool and a string ``content``; optional ``reasoningContent`` (string),
``toolCalls`` (``[{"id", "function": {"name", "arguments"}}]`` with ``arguments`` a JSON
string), ``toolCallId`` (string; the viewer stitches it to an earlier call's ``id``),
``timestamp`` (epoch milliseconds) and ``model`` (string). Trace files are text, so the
secret scan reads them like every other text file (:mod:`.secrets_check`).
"""

from __future__ import annotations

import json
from typing import Any

from termgrade.builders.card import split_front_matter
from termgrade.builders.layout import RepoPaths
from termgrade.builders.traces import ATIF_DIR, STS_ROLES, TRACES_DIR, TRACES_TAG
from termgrade.validate.card_check import ConfigFiles
from termgrade.validate.findings import ValidationFinding, ValidationReport

MAX_FINDINGS_PER_FILE = 5


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _message_problems(message: Any, calls: set[str]) -> list[tuple[str, str]]:
    """(field, problem) of one message object; ``calls``: tool call ids seen so far
    (this message's own calls are added)."""
    if not isinstance(message, dict):
        return [("message", "not an object")]
    out: list[tuple[str, str]] = []
    if message.get("role") not in STS_ROLES:
        out.append(("message.role", f"{message.get('role')!r} is not one of "
                                    f"{', '.join(sorted(STS_ROLES))}"))
    if not _is_str(message.get("content")):
        out.append(("message.content", "required, a string (may be empty)"))
    for name in ("reasoningContent", "toolCallId", "model"):
        if name in message and not _is_str(message[name]):
            out.append((f"message.{name}", "must be a string"))
    if "timestamp" in message and (not isinstance(message["timestamp"], int)
                                   or isinstance(message["timestamp"], bool)):
        out.append(("message.timestamp", "must be epoch milliseconds (an integer)"))
    tool_calls = message.get("toolCalls")
    if tool_calls is not None:
        if not isinstance(tool_calls, list):
            out.append(("message.toolCalls", "must be a list"))
            tool_calls = []
        for i, call in enumerate(tool_calls):
            function = call.get("function") if isinstance(call, dict) else None
            if (not isinstance(call, dict) or not _is_str(call.get("id"))
                    or not isinstance(function, dict) or not _is_str(function.get("name"))
                    or not _is_str(function.get("arguments"))):
                out.append((f"message.toolCalls.{i}", 'must be {"id", "function": {"name", '
                            '"arguments"}} with arguments a JSON string'))
                continue
            calls.add(call["id"])
    if message.get("role") == "tool" and _is_str(message.get("toolCallId")) \
            and message["toolCallId"] not in calls:
        out.append(("message.toolCallId", f"{message['toolCallId']!r} answers no earlier "
                                          "toolCalls id"))
    return out


def sts_problems(lines: list[str]) -> list[tuple[int, str | None, str]]:
    """``(line index, field, problem)`` of one STS file's lines, per the Hub's format."""
    out: list[tuple[int, str | None, str]] = []
    if not lines:
        return [(0, None, "empty: a trace starts with a session line")]
    calls: set[str] = set()
    for i, line in enumerate(lines):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            out.append((i, None, f"not JSON: {exc}"))
            continue
        if not isinstance(row, dict):
            out.append((i, None, "not a JSON object"))
            continue
        if i == 0:
            if row.get("type") != "session":
                out.append((i, "type", 'the first line must be {"type": "session", ...}'))
            for name in ("harness", "id"):
                if not _is_str(row.get(name)) or not row.get(name):
                    out.append((i, name, "required, a non-empty string"))
            if "name" in row and not _is_str(row["name"]):
                out.append((i, "name", "must be a string"))
            continue
        if row.get("type") != "message":
            out.append((i, "type", f"{row.get('type')!r}: every line after the session "
                                   "line is a message"))
            continue
        out += [(i, name, problem) for name, problem in _message_problems(row.get("message"),
                                                                           calls)]
    return out


def atif_problems(data: Any) -> list[str]:
    """The shape of an ATIF v1.x trajectory (Harbor's own models check the rest)."""
    if not isinstance(data, dict):
        return ["not a JSON object"]
    out = []
    version = data.get("schema_version")
    if not (isinstance(version, str) and version.startswith("ATIF-v1.")):
        out.append(f"schema_version {version!r} is not ATIF-v1.x")
    agent = data.get("agent")
    if not (isinstance(agent, dict) and _is_str(agent.get("name"))
            and _is_str(agent.get("version"))):
        out.append("agent needs a name and a version")
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        return [*out, "steps: a non-empty list"]
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or step.get("step_id") != i + 1:
            out.append(f"steps.{i}.step_id: expected {i + 1}")
        elif step.get("source") not in ("system", "user", "agent"):
            out.append(f"steps.{i}.source: {step.get('source')!r}")
    return out


def _card_tags(paths: RepoPaths) -> list[str]:
    try:
        meta, _ = split_front_matter(paths.readme.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # the card check reports it
    tags = meta.get("tags")
    return [str(t) for t in tags] if isinstance(tags, list) else []


def check_traces(paths: RepoPaths, configs: list[ConfigFiles],
                 report: ValidationReport) -> int:
    """Check the repo's trace and ATIF files; returns how many files were checked."""
    before = len(report.findings)
    traces_dir = paths.root / TRACES_DIR
    files = sorted(traces_dir.rglob("*.jsonl")) if traces_dir.is_dir() else []
    atif_dir = paths.root / ATIF_DIR
    atif_files = sorted(atif_dir.rglob("*.json")) if atif_dir.is_dir() else []
    if not files and not atif_files:
        return 0
    covered = _trace_rows(paths, report)
    readme = paths.rel(paths.readme)
    for config in configs:
        report.add(ValidationFinding(
            "traces", readme, f"config {config.name!r} names JSONL trace files: "
            "`load_dataset(repo, name)` cannot read them (datasets takes one builder for "
            "every config of a repo, parquet here); rebuild the repo with `termgrade build "
            "trajectories`, whose `traces` config is their parquet form (data/traces/)",
            field="configs"))
    if files and TRACES_TAG not in _card_tags(paths):
        report.add(ValidationFinding(
            "traces", readme, f"the repo holds agent traces but the card's tags lack "
            f"{TRACES_TAG!r}", field="tags"))
    ids: dict[str, str] = {}
    for path in files:
        rel = paths.rel(path)
        if rel not in covered:
            report.add(ValidationFinding(
                "traces", rel, "trace file in no row of the `traces` config (data/traces/, "
                "its `path` column): `load_dataset(repo, \"traces\")` would miss it; "
                "rebuild with `termgrade build trajectories`"))
        lines = path.read_text(encoding="utf-8").splitlines()
        for row, name, problem in sts_problems(lines)[:MAX_FINDINGS_PER_FILE]:
            report.add(ValidationFinding("traces", rel, problem, row=row, field=name))
        header = _header(lines)
        if header is not None:
            if header in ids:
                report.add(ValidationFinding("traces", rel, f"session id {header!r} also in "
                                   f"{ids[header]}", row=0, field="id"))
            ids.setdefault(header, rel)
    for path in atif_files:
        rel = paths.rel(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            report.add(ValidationFinding("traces", rel, f"not JSON: {exc}"))
            continue
        for problem in atif_problems(data)[:MAX_FINDINGS_PER_FILE]:
            report.add(ValidationFinding("traces", rel, problem))
    report.record("traces", f"{len(files):,} agent trace(s) in the Session Trace Simple Format, "
                            f"each a row of the `traces` config; {len(atif_files):,} ATIF "
                            "file(s)",
                  before)
    return len(files) + len(atif_files)


def _trace_rows(paths: RepoPaths, report: ValidationReport) -> set[str]:
    """The trace files the ``traces`` config's rows name (their ``path``)."""
    import pyarrow.parquet as pq

    folder = paths.config_dir("traces")
    named: set[str] = set()
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        try:
            named.update(pq.read_table(path, columns=["path"]).column("path").to_pylist())
        except (OSError, KeyError, ValueError) as exc:
            report.add(ValidationFinding("traces", paths.rel(path), f"no `path` column: {exc}"))
    return named


def _header(lines: list[str]) -> str | None:
    try:
        row = json.loads(lines[0]) if lines else None
    except json.JSONDecodeError:
        return None
    value = row.get("id") if isinstance(row, dict) else None
    return value if isinstance(value, str) else None

