"""The bash tool-calling scaffold as a verl agent loop (``verl.experimental.agent_loop``).

One trajectory = one trial of the grader (:func:`termgrade.scoring.trial.run_task`): the
agent's container is created when the trajectory starts and removed when it ends (in the
grader's ``finally``), the policy acts in it through the scaffold's ``bash`` tool and
limits (:mod:`termgrade.agent.scaffold`), and the task's tests then run in a fresh scoring
container. ``reward_score`` is the grader's reward, 1.0 or 0.0; the grader's failure
reason rides in ``extra_fields``. A trial the infrastructure lost (an engine failure
before the agent acted) is unscored: it gets reward 0.0, ``unscored`` = 1 and an all-zero
response mask, so none of its tokens carry gradient. So is a trial of an unattested task
the run did not include (``train prepare --include-unattested``): it is refused before any
episode (:mod:`termgrade.training.attested`).

Tokens: the prompt and every later message go through verl's Continuous Token builder
(the same path as verl's own ``ToolAgentLoop``), the model's tokens get mask 1 and tool
replies / nudges mask 0. verl's sampling parameters carry no per-turn cap, so each
generation is sent with ``max_tokens`` = min(``max_tokens_per_turn``, what is left of
``response_length``).

Threads: the grader is synchronous, so a trajectory runs in a worker of a bounded pool
(``max_concurrent_trajectories``, the containers' semaphore); each model turn hops back to
the event loop with :func:`asyncio.run_coroutine_threadsafe`.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import (
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    register,
)
from verl.experimental.agent_loop.tool_parser import ToolParser

from termgrade.agent.episode import AgentRun, ScaffoldConfig, agent_time_limit_s
from termgrade.agent.kinds import PolicyAgent
from termgrade.agent.loop import NO_TOOL_CALL
from termgrade.agent.scaffold import BASH_TOOL, FINISH_TOOL, TOOLS, truncate_output
from termgrade.agent.shell import run_command
from termgrade.builders.verl_prompts import AGENT_NAME
from termgrade.core.settings import RUN_DIR_VAR, SETTINGS
from termgrade.sandbox.base import Sandbox
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import Task, load_task
from termgrade.training.attested import loop_decision
from termgrade.verify.ensure import reference_or_warn

POLICY_LABEL = "policy"
_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(size: int) -> ThreadPoolExecutor:
    """One pool per size per process: at most ``size`` trajectories hold containers."""
    with _POOLS_LOCK:
        if size not in _POOLS:
            _POOLS[size] = ThreadPoolExecutor(max_workers=size,
                                              thread_name_prefix="termgrade-trajectory")
        return _POOLS[size]


@dataclass
class Trajectory:
    """The token state of one trajectory (what verl trains on) and its chat view."""

    messages: list[dict[str, Any]]
    tokens: list[int] = field(default_factory=list)
    """Prompt and response tokens so far, in order."""
    mask: list[int] = field(default_factory=list)
    """One per response token: 1 the model's, 0 a tool reply or nudge."""
    logprobs: list[float] | None = None
    assistant_turns: int = 0
    tool_calls: int = 0
    generate_s: float = 0.0
    tools_s: float = 0.0
    command_s: float = 0.0
    """Seconds the bash commands took (the episode's time budget counts these)."""
    out_of_budget: bool = False

    @property
    def response_tokens(self) -> int:
        return len(self.mask)


def task_from_extra(extra: dict[str, Any]) -> Task:
    """The task a prompt row names: ``extra_info.task_dir``, relative to the run directory
    (``$TERMGRADE_RUN_DIR``, exported by launch.sh) unless absolute."""
    task_dir = extra.get("task_dir")
    if not task_dir:
        raise ValueError("the prompt row's extra_info has no task_dir: write the data with "
                         "`termgrade train prepare`")
    path = Path(str(task_dir))
    if not path.is_absolute():
        run_dir = SETTINGS.run_dir
        if run_dir is None:
            raise ValueError(f"task_dir {path} is relative and ${RUN_DIR_VAR} is not set: "
                             "start the run with its launch.sh")
        path = run_dir / path
    return load_task(path)


def _image_for(task: Task) -> str:
    from termgrade.sandbox.image_cache import image_for

    return image_for(task)


def _bash_reply(box: Sandbox, task: Task, command: str, scaffold: ScaffoldConfig,
                timeout_s: float) -> str:
    workdir = task.config.environment.workdir or "/app"
    result = run_command(box, command, timeout_s=timeout_s, workdir=workdir,
                         env=dict(task.config.environment.env) or None)
    return truncate_output(result.reply(timeout_s), scaffold.max_output_chars)


def time_limit_s(task: Task, scaffold: ScaffoldConfig) -> float:
    """The episode's budget for commands: the scaffold's wall clock, else the task's
    ``[agent] timeout_sec``. Model time does not count: in training it depends on how
    verl batches requests, not on the policy."""
    return agent_time_limit_s(task, scaffold)


def _failure(outcome: RunOutcome) -> str:
    """Why the grader gave 0: its failure, else the tests that did not pass; "" for a 1."""
    if outcome.failure:
        return outcome.failure
    if outcome.reward == 1.0 or outcome.verifier is None:
        return ""
    failed = [t.name for t in outcome.verifier.tests if t.outcome != "passed"]
    return ("tests failed: " + ", ".join(failed)) if failed else "reward 0 from the verifier"


@register(AGENT_NAME)
class BashAgentLoop(AgentLoopBase):
    """verl agent loop: see the module docstring. Extra keyword arguments come from the
    agent-loop config file ``train prepare`` writes."""

    def __init__(self, *args: Any, max_tokens_per_turn: int = 8192,
                 max_concurrent_trajectories: int = 64, tool_format: str = "hermes",
                 command_timeout_s: float | None = None, max_output_chars: int | None = None,
                 include_unattested: bool = False, **kwargs: Any) -> None:
        kwargs.pop("name", None)  # the config file's registry key
        kwargs.pop("tools", None)  # verl's tool list: this loop has its own bash tool
        super().__init__(*args, **kwargs)
        defaults = ScaffoldConfig()
        turns = self.rollout_config.multi_turn.get("max_assistant_turns") or defaults.max_turns
        self.scaffold = ScaffoldConfig(
            max_turns=int(turns),
            command_timeout_s=command_timeout_s or defaults.command_timeout_s,
            max_output_chars=max_output_chars or defaults.max_output_chars)
        self.max_tokens_per_turn = int(max_tokens_per_turn)
        self.response_length = int(self.rollout_config.response_length)
        self.parser = ToolParser.get_tool_parser(tool_format, self.tokenizer)
        self.pool = _pool(int(max_concurrent_trajectories))
        self.include_unattested = bool(include_unattested)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        messages = [dict(m) for m in kwargs["raw_prompt"]]
        extra = dict(kwargs.get("extra_info") or {})
        state = Trajectory(messages=messages)
        state.tokens = await self.ct_build_initial_tokens(messages, tools=list(TOOLS))
        prompt_length = len(state.tokens)
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(
            self.pool, self._trial, extra, state, dict(sampling_params), loop)
        return self._output(state, prompt_length, outcome, extra)

    # -- in the trajectory's worker thread ------------------------------------------------

    def _trial(self, extra: dict[str, Any], state: Trajectory, params: dict[str, Any],
               loop: asyncio.AbstractEventLoop) -> RunOutcome:
        try:
            task = task_from_extra(extra)
            decision = loop_decision(task, include_unattested=self.include_unattested)
            if decision.refusal is not None:  # refused before any image or episode
                return RunOutcome(POLICY_LABEL, None, error=decision.refusal, attested=False)
            image = _image_for(task)
        except Exception as exc:  # before the agent acted: unscored, never a 0 it caused
            return RunOutcome(POLICY_LABEL, None, error=f"before the agent started: {exc}")

        def act(box: Sandbox, task: Task) -> AgentRun:
            began = time.monotonic()
            self._episode(box, task, state, params, loop)
            state.tools_s = time.monotonic() - began - state.generate_s
            return AgentRun(result=None)

        # the task's reference record if present, never made inside an RL step (warned
        # once per task when missing: run `termgrade verify` before training)
        return run_task(task, image, PolicyAgent(POLICY_LABEL, act),
                        attestable=decision.attestable, reference=reference_or_warn(task))

    def _episode(self, box: Sandbox, task: Task, state: Trajectory, params: dict[str, Any],
                 loop: asyncio.AbstractEventLoop) -> None:
        invalid = 0
        budget = time_limit_s(task, self.scaffold)
        for _ in range(self.scaffold.max_turns):
            calls = asyncio.run_coroutine_threadsafe(self._generate(state, params),
                                                     loop).result()
            if calls is None:
                return
            replies: list[dict[str, Any]] = []
            finished = valid = False
            for call_id, name, arguments in calls:
                if name == FINISH_TOOL:
                    finished = valid = True
                    reply = "Task marked as finished; it will now be graded."
                elif finished:
                    reply = "Not run: `finish` was called before this command."
                elif name == BASH_TOOL and isinstance(arguments.get("command"), str):
                    state.tool_calls += 1
                    valid = True
                    left = budget - state.command_s
                    if left <= 1:
                        reply = "Not run: the episode's time limit is reached."
                    else:
                        began = time.monotonic()
                        reply = _bash_reply(box, task, arguments["command"], self.scaffold,
                                            min(self.scaffold.command_timeout_s, left))
                        state.command_s += time.monotonic() - began
                else:
                    reply = (f"Invalid call of `{name}`: the tools are `bash` (with a string "
                             "`command`) and `finish`.")
                replies.append({"role": "tool", "tool_call_id": call_id, "name": name,
                                "content": reply})
            if finished or budget - state.command_s <= 1:
                return
            invalid = 0 if valid else invalid + 1
            if invalid >= self.scaffold.max_invalid_turns:
                return
            added = replies or [{"role": "user", "content": NO_TOOL_CALL}]
            if not asyncio.run_coroutine_threadsafe(self._append(state, added), loop).result():
                return

    # -- on the event loop -------------------------------------------------------------------

    async def _generate(self, state: Trajectory, params: dict[str, Any]
                        ) -> list[tuple[str, str, dict[str, Any]]] | None:
        """One model turn: (call id, tool name, arguments) of each call; None to stop."""
        left = self.response_length - state.response_tokens
        if left <= 0:
            state.out_of_budget = True
            return None
        sampling = {**params, "max_tokens": min(self.max_tokens_per_turn, left)}
        if self.parser.stop_token_ids:
            sampling["stop_token_ids"] = sorted(set(sampling.get("stop_token_ids") or [])
                                                | set(self.parser.stop_token_ids))
        began = time.monotonic()
        output = await self.server_manager.generate(
            request_id=uuid4().hex, prompt_ids=state.tokens, sampling_params=sampling)
        state.generate_s += time.monotonic() - began
        state.assistant_turns += 1
        logprobs = list(output.log_probs) if output.log_probs else None
        merged, mask, merged_logprobs = await self.ct_merge_assistant_token(
            state.tokens, list(output.token_ids), state.mask,
            (state.logprobs or []) if (state.logprobs or logprobs) else None,
            assistant_logprobs=logprobs)
        state.tokens, state.mask = list(merged.token_ids), list(mask)
        if merged_logprobs is not None:
            state.logprobs = list(merged_logprobs)
        content, found = await self.parser.extract_tool_calls(list(output.token_ids))
        calls: list[tuple[str, str, dict[str, Any]]] = []
        tool_calls = []
        for index, call in enumerate(found):
            call_id = call.tool_call_id or f"call_{state.assistant_turns}_{index}"
            try:
                arguments = json.loads(call.arguments) if call.arguments else {}
            except json.JSONDecodeError:
                arguments = {}
            arguments = arguments if isinstance(arguments, dict) else {}
            calls.append((call_id, call.name, arguments))
            tool_calls.append({"id": call_id, "type": "function",
                               "function": {"name": call.name, "arguments": arguments}})
        message: dict[str, Any] = {"role": "assistant", "content": content or ""}
        if tool_calls:
            message["tool_calls"] = tool_calls
        state.messages.append(message)
        if state.response_tokens >= self.response_length:
            state.out_of_budget = True
            return None
        return calls

    async def _append(self, state: Trajectory, added: list[dict[str, Any]]) -> bool:
        """Tool replies (or a nudge) as mask-0 tokens; False when the budget is spent."""
        before = [dict(m) for m in state.messages]
        state.messages.extend(added)
        merged, mask, merged_logprobs = await self.ct_merge_context_msg(
            before, state.messages, state.tokens, state.mask,
            state.logprobs if state.logprobs else None, tools=list(TOOLS))
        if len(mask) >= self.response_length:
            state.out_of_budget = True
            return False
        state.tokens, state.mask = list(merged.token_ids), list(mask)
        if state.logprobs:
            state.logprobs = list(merged_logprobs or [])
        return True

    def _output(self, state: Trajectory, prompt_length: int, outcome: RunOutcome,
                extra: dict[str, Any]) -> AgentLoopOutput:
        n = state.response_tokens
        prompt_ids = state.tokens[: len(state.tokens) - n]
        response_ids = state.tokens[len(state.tokens) - n:][: self.response_length]
        mask = state.mask[: self.response_length]
        unscored = outcome.reward is None
        if unscored:
            mask = [0] * len(mask)
        failure = outcome.error if unscored else _failure(outcome)
        reward = 0.0 if unscored else float(outcome.reward or 0.0)
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids,
            response_mask=mask,
            response_logprobs=(state.logprobs or [])[: self.response_length] or None,
            reward_score=reward,
            num_turns=len(state.messages),
            metrics=AgentLoopMetrics(generate_sequences=state.generate_s,
                                     tool_calls=state.tools_s),
            extra_fields={
                "reward_extra_info": {"acc": reward, "unscored": float(unscored),
                                      "assistant_turns": float(state.assistant_turns)},
                "termgrade_task_id": str(extra.get("task_id", "")),
                "termgrade_failure": failure or "",
                "termgrade_prompt_tokens": prompt_length,
                "termgrade_out_of_budget": state.out_of_budget,
            },
        )
