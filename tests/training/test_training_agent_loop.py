"""The bash agent loop through verl's agent-loop interface, against real containers.

verl's worker instantiates our loop from the agent-loop config ``train prepare`` writes
(``hydra.utils.instantiate`` on the entry, as ``AgentLoopWorker`` does) and awaits
``run(sampling_params, raw_prompt=..., extra_info=...)``. The stand-ins, named: a
scripted token policy (:mod:`tests.support.scripted_policy`) for vLLM, and a tiny
tokenizer built here (:mod:`tests.support.tiny_tokenizer`) for the model's. Everything
else is real: the task image, the agent's and the scoring container, the grader.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from termgrade.training.recipe import as_hydra, recipe_overrides
from termgrade.training.verl_config import compose_verl_config
from tests.support.scripted_policy import FINISH, ScriptedPolicy, bash_call
from tests.support.task_dirs import MakeTask
from tests.support.tiny_tokenizer import tiny_tokenizer
from tests.support.verl_loop import RECIPE, run_loop


@pytest.fixture(scope="module")
def config(verl: Any) -> Any:
    return compose_verl_config(as_hydra(recipe_overrides(RECIPE)))


def _containers(task_id: str) -> list[Any]:
    """The trial's agent and scoring containers still on the engine (one listing call, no
    per-container inspect that a removal in between could fail)."""
    from termgrade.sandbox.engine import docker_client

    api = docker_client().api
    return [c for label in (f"{task_id}-policy", f"{task_id}-policy-score")
            for c in api.containers(all=True, filters={"label": f"termgrade.label={label}"})]


def _assert_removed(task_id: str) -> None:
    deadline = time.monotonic() + 60
    while _containers(task_id) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _containers(task_id) == []


def _split(out: Any, tokenizer: Any) -> tuple[str, str]:
    """The response's model text (mask 1) and tool text (mask 0)."""
    ids, mask = out.response_ids, out.response_mask
    assert len(ids) == len(mask)
    model = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 1])
    tools = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 0])
    return model, tools


@pytest.mark.docker
def test_a_trajectory_that_solves_the_task_gets_1(config: Any, make_task: MakeTask) -> None:
    task = make_task("tg13-loop-solves")
    seen: list[int] = []
    policy = ScriptedPolicy(tiny_tokenizer(), [bash_call("echo hello > /app/out.txt"), FINISH],
                            on_request=lambda: seen.append(len(_containers(task.name))))
    out = run_loop(config, policy, task)
    assert seen == [2, 2]  # the agent's and the scoring container exist while it acts
    assert out.reward_score == 1.0
    assert out.extra_fields["termgrade_failure"] == ""
    assert out.extra_fields["reward_extra_info"] == {"acc": 1.0, "unscored": 0.0,
                                                     "assistant_turns": 2.0}
    model, tools = _split(out, policy.tokenizer)
    assert '"command": "echo hello > /app/out.txt"' in model and '"finish"' in model
    assert "<tool_response>" in tools and "[exit status 0]" in tools
    assert "<tool_response>" not in model and "echo hello" not in tools
    assert sum(out.response_mask) == sum(len(g) for g in policy.generated)  # model tokens: 1
    assert out.response_logprobs is not None and len(out.response_logprobs) == len(out.response_ids)
    assert [r["max_tokens"] for r in policy.requests] == [256, 256]  # the per-turn cap
    assert policy.requests[1]["prompt_ids"][: len(out.prompt_ids)] == out.prompt_ids
    _assert_removed("tg13-loop-solves")


@pytest.mark.docker
def test_a_trajectory_that_does_not_solve_it_gets_0(config: Any, make_task: MakeTask) -> None:
    task = make_task("tg13-loop-fails")
    policy = ScriptedPolicy(tiny_tokenizer(), [bash_call("echo bye > /app/out.txt"), FINISH])
    out = run_loop(config, policy, task)
    assert out.reward_score == 0.0
    assert out.extra_fields["reward_extra_info"]["unscored"] == 0.0
    assert out.extra_fields["termgrade_failure"] == "tests failed: test_output_content"
    assert 0 in out.response_mask and 1 in out.response_mask
    _assert_removed("tg13-loop-fails")


@pytest.mark.docker
def test_the_per_turn_cap_cuts_a_long_turn(config: Any, make_task: MakeTask) -> None:
    """A turn cut at 6 tokens has no valid tool call: nudged, and after the scaffold's
    limit of invalid turns the episode ends and is scored 0."""
    task = make_task("tg13-loop-capped")
    capped = RECIPE.model_copy(update={"max_tokens_per_turn": 6})
    policy = ScriptedPolicy(tiny_tokenizer(), [bash_call("echo hello > /app/out.txt")])
    out = run_loop(config, policy, task, recipe=capped)
    assert all(len(g) <= 6 for g in policy.generated)
    assert {r["max_tokens"] for r in policy.requests} == {6}
    assert len(policy.requests) == 5  # ScaffoldConfig.max_invalid_turns
    assert out.reward_score == 0.0
    _, tools = _split(out, policy.tokenizer)
    assert "no tool call" in tools
    _assert_removed("tg13-loop-capped")


def test_a_task_that_cannot_load_is_unscored_with_no_gradient(config: Any,
                                                              tmp_path: Path) -> None:
    policy = ScriptedPolicy(tiny_tokenizer(), [FINISH])
    out = run_loop(config, policy, tmp_path / "no-such-task")
    assert policy.requests == []  # the agent never acted
    assert out.extra_fields["reward_extra_info"]["unscored"] == 1.0
    assert out.reward_score == 0.0 and set(out.response_mask) <= {0}
    assert "before the agent started" in out.extra_fields["termgrade_failure"]


BASH_ONLY = ("#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
             "grep -qx hello /app/out.txt && echo 1 > /logs/verifier/reward.txt "
             "|| echo 0 > /logs/verifier/reward.txt\n")


def test_an_unattested_task_is_refused_unless_the_run_includes_it(config: Any,
                                                                  make_task: MakeTask) -> None:
    task = make_task("tg31-loop-bash-only", test_sh=BASH_ONLY)
    policy = ScriptedPolicy(tiny_tokenizer(), [FINISH])
    out = run_loop(config, policy, task)
    assert policy.requests == []  # refused before any episode
    assert out.extra_fields["reward_extra_info"]["unscored"] == 1.0
    assert out.reward_score == 0.0 and set(out.response_mask) <= {0}
    failure = out.extra_fields["termgrade_failure"]
    assert "unattested task tg31-loop-bash-only left out" in failure
    assert "--include-unattested" in failure


@pytest.mark.docker
def test_an_included_unattested_task_is_graded_by_its_own_reward(config: Any,
                                                                 make_task: MakeTask) -> None:
    task = make_task("tg31-loop-bash-included", test_sh=BASH_ONLY)
    policy = ScriptedPolicy(tiny_tokenizer(), [bash_call("echo hello > /app/out.txt"), FINISH])
    out = run_loop(config, policy, task, include_unattested=True)
    assert out.reward_score == 1.0, out.extra_fields["termgrade_failure"]
    assert out.extra_fields["reward_extra_info"]["unscored"] == 0.0
    _assert_removed("tg31-loop-bash-included")


@pytest.mark.docker
def test_the_tasks_agent_timeout_bounds_the_commands(config: Any, make_task: MakeTask) -> None:
    """[agent] timeout_sec = 3: a `sleep 30` is killed at the budget, and the episode ends
    there (the policy would go on asking)."""
    toml = ('schema_version = "1.4"\n[metadata]\ndifficulty = "easy"\n[verifier]\n'
            'timeout_sec = 60.0\n[agent]\ntimeout_sec = 3.0\n')
    task = make_task("tg13-loop-timeout", toml=toml)
    policy = ScriptedPolicy(tiny_tokenizer(), [bash_call("sleep 30")])
    began = time.monotonic()
    out = run_loop(config, policy, task)
    assert time.monotonic() - began < 25
    assert len(policy.requests) == 1 and out.reward_score == 0.0
    _, tools = _split(out, policy.tokenizer)
    assert tools == ""  # the episode ended at the budget: no reply follows
    _assert_removed("tg13-loop-timeout")


@pytest.mark.docker
def test_a_smoke_run_s_own_files_drive_the_loop(verl: Any, make_task: MakeTask, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`train prepare --smoke` for a repo selected for a Qwen3 model: the run's composed
    config, its agent-loop entry (the Hermes parser the tiny tokenizer speaks) and its first
    prompt row, read by verl's RLHFDataset, run one trajectory against real containers
    with the task unpacked into the run. What is left for the GPU: vLLM, the real
    tokenizer, FSDP and the update (docs/training.md)."""
    import hydra
    import pyarrow.parquet as pq
    import yaml
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from termgrade.core.settings import RUN_DIR_VAR
    from termgrade.training.prepare import ModelRequest, prepare_run
    from tests.support.bandcentral import labelled_bandcentral

    repo = labelled_bandcentral(make_task, tmp_path, 2, model="Qwen/Qwen3-8B")
    run = tmp_path / "smoke"
    done = prepare_run(str(repo), run, model=ModelRequest(smoke=True))
    assert done.record.recipe["base_model"] == "Qwen/Qwen3-1.7B"
    config = compose_verl_config([o.replace("$RUN_DIR", str(run))
                                  for o in done.record.overrides])
    [entry] = yaml.safe_load((run / "agent_loop.yaml").read_text())
    assert entry["tool_format"] == "hermes"
    tokenizer = tiny_tokenizer()
    dataset = RLHFDataset(data_files=[str(run / "data" / "train.parquet")],
                          tokenizer=tokenizer, config=config.data)
    item = dataset[0]
    task_id = item["extra_info"]["task_id"]
    assert pq.read_table(run / "data" / "train.parquet").num_rows == 2
    monkeypatch.setenv(RUN_DIR_VAR, str(run))
    policy = ScriptedPolicy(tokenizer, [bash_call("echo hello > /app/out.txt"), FINISH])

    async def go() -> Any:
        loop = hydra.utils.instantiate(
            config=OmegaConf.create(entry), trainer_config=DictConfigWrap(config),
            server_manager=policy, tokenizer=tokenizer, processor=None, hf_model_type=None,
            dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data),
            tools=ToolListWrap([]))
        return await loop.run({"temperature": 0.6, "top_p": 1.0},
                              raw_prompt=item["raw_prompt"], extra_info=item["extra_info"])

    out = asyncio.run(go())
    assert out.reward_score == 1.0, out.extra_fields["termgrade_failure"]
    assert {r["max_tokens"] for r in policy.requests} == {4096}  # the smoke per-turn cap
    _assert_removed(task_id)
