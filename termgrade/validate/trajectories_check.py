"""The trajectories repo's columns a JSON Schema cannot check: the ``sft`` rows' ``tools``
and the ``episodes`` rows' ``token_turns``.

* ``tools`` is null or the JSON text of a non-empty list of OpenAI function tools (each
  ``{"type": "function", "function": {"name": ..., "parameters": {...}}}``, names unique),
  the text a chat template and TRL's ``SFTTrainer`` read; and it is the same text as the
  ``episodes`` row's ``tool_definitions`` of its trial.
* ``token_turns``: turns in order without repeats; each turn's ``tokens``, ``token_ids``
  and ``logprobs`` as long as each other where present, log probabilities at most 0; a
  ``message_index`` names an assistant message of the trial's ``sft`` messages.

Only the columns checked are read (the messages' roles, not their text).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from termgrade.builders.layout import RepoPaths
from termgrade.validate.findings import ValidationFinding, ValidationReport

CHECK = "trajectories"
MAX_FINDINGS = 50
FIX_TOOLS = "rebuild the repo with `termgrade build trajectories` (it writes the scaffold's tools)"


def _batches(path: Path, columns: list[str]) -> Iterator[dict[str, Any]]:
    parquet = pq.ParquetFile(path)
    present = set(parquet.schema_arrow.names)
    wanted = [c for c in columns if c.split(".")[0] in present]
    for batch in parquet.iter_batches(batch_size=256, columns=wanted):
        yield from batch.to_pylist()


def tools_problem(text: Any) -> str | None:
    """Why ``text`` is not a usable ``tools`` value; None when it is (or is null)."""
    if text is None:
        return None
    try:
        tools = json.loads(text)
    except (TypeError, json.JSONDecodeError) as exc:
        return f"not JSON ({exc})"
    if not isinstance(tools, list) or not tools:
        return "not a non-empty JSON list of tools (null when the scaffold offers none)"
    names: list[str] = []
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" \
                or not isinstance(function, dict):
            return f'tool {i}: not {{"type": "function", "function": {{...}}}}'
        if not isinstance(function.get("name"), str) or not function["name"]:
            return f"tool {i}: function.name missing"
        if not isinstance(function.get("parameters", {}), dict):
            return f"tool {function['name']!r}: parameters is not a JSON object"
        names.append(function["name"])
    if len(set(names)) != len(names):
        return f"tool names repeat: {names}"
    return None


def _turn_problems(turns: list[dict[str, Any]], roles: list[str] | None) -> list[str]:
    out: list[str] = []
    previous = -1
    for turn in turns:
        at = f"turn {turn['turn']}"
        if turn["turn"] <= previous:
            out.append(f"{at}: turns out of order or repeated")
        previous = turn["turn"]
        lists = {name: turn[name] for name in ("tokens", "token_ids", "logprobs")
                 if turn.get(name) is not None}
        if len({len(v) for v in lists.values()}) > 1:
            out.append(f"{at}: " + ", ".join(f"{k} has {len(v)}" for k, v in lists.items())
                       + " (one entry per sampled token in each)")
        bad = [v for v in turn.get("logprobs") or [] if math.isnan(v) or v > 0]
        if bad:
            out.append(f"{at}: logprobs above 0 or NaN ({bad[:3]})")
        index = turn.get("message_index")
        if index is not None and roles is not None and (
                index >= len(roles) or roles[index] != "assistant"):
            out.append(f"{at}: message_index {index} is not an assistant message of the "
                       f"sft row ({len(roles)} messages)")
    return out


def check_trajectories(paths: RepoPaths, report: ValidationReport) -> None:
    before = len(report.findings)
    tools: dict[str, str | None] = {}
    roles: dict[str, list[str]] = {}
    need_roles = _with_token_turns(paths)
    found = 0

    def add(rel: str, row: int, field: str, message: str, fix: str) -> None:
        nonlocal found
        found += 1
        if found <= MAX_FINDINGS:
            report.add(ValidationFinding(CHECK, rel, f"{message}; fix: {fix}", row=row,
                                         field=field))

    for path in sorted(paths.config_dir("sft").glob("*.parquet")):
        rel = paths.rel(path)
        columns = ["trial_id", "tools"] + (["messages.list.element.role"] if need_roles
                                           else [])
        for index, row in enumerate(_batches(path, columns)):
            if "tools" not in row:
                add(rel, index, "tools", "the sft rows have no tools column", FIX_TOOLS)
                break
            problem = tools_problem(row["tools"])
            if problem is not None:
                add(rel, index, "tools", problem, FIX_TOOLS)
            tools[row["trial_id"]] = row["tools"]
            if row["trial_id"] in need_roles:
                roles[row["trial_id"]] = [m["role"] for m in row.get("messages") or []]
    for path in sorted(paths.config_dir("episodes").glob("*.parquet")):
        rel = paths.rel(path)
        for index, row in enumerate(_batches(
                path, ["trial_id", "tool_definitions", "token_turns"])):
            trial = row["trial_id"]
            if trial in tools and row.get("tool_definitions") != tools[trial]:
                add(rel, index, "tool_definitions", f"trial {trial}: differs from its sft "
                    "row's tools (the same scaffold's tools, the same text)", FIX_TOOLS)
            for problem in _turn_problems(row.get("token_turns") or [], roles.get(trial)):
                add(rel, index, "token_turns", f"trial {trial}: {problem}",
                    "record token_turns as `termgrade grade --logprobs` does (one entry per "
                    "reply, the endpoint's lists as given)")
    if found > MAX_FINDINGS:
        report.notes.append(f"{CHECK}: {found - MAX_FINDINGS} more findings")
    report.record(CHECK, "sft tools are the scaffold's tool schemas (JSON, as episodes' "
                  "tool_definitions); token_turns consistent", before)


def _with_token_turns(paths: RepoPaths) -> set[str]:
    """The trials whose episodes row holds token_turns (only their turns' indices read)."""
    trials: set[str] = set()
    for path in sorted(paths.config_dir("episodes").glob("*.parquet")):
        for row in _batches(path, ["trial_id", "token_turns.list.element.turn"]):
            if row.get("token_turns"):
                trials.add(row["trial_id"])
    return trials
