"""One default per limit (issue 35, item 4): a container's limits where task.toml is
silent are :class:`~termgrade.sandbox.base.Limits`' own; the agent phase's budget is one
rule for grading and training; a grading run's k, k_min, confidence and workers are
:mod:`termgrade.grade.defaults`' own, in the library and the CLI alike."""

from __future__ import annotations

import inspect
from typing import Any

from termgrade.agent.kinds import DEFAULT_AGENT_TIMEOUT_S, agent_time_limit_s
from termgrade.agent.scaffold import ScaffoldConfig
from termgrade.cli.app import load_group
from termgrade.grade import defaults
from termgrade.grade.adaptive import AdaptiveRule
from termgrade.grade.runner import grade_model
from termgrade.sandbox.base import Limits
from termgrade.scoring.pair.containers import task_limits
from termgrade.task import load_task
from termgrade.training.agent_loop import time_limit_s
from tests.support.task_dirs import MakeTask


def test_a_silent_task_gets_the_sandboxs_default_limits(make_task: MakeTask) -> None:
    task = load_task(make_task("quiet"))
    assert task.config.environment.storage_mb is None
    assert task_limits(task) == Limits()


def test_the_agent_budget_is_one_rule_for_grading_and_training(make_task: MakeTask) -> None:
    task = load_task(make_task("quiet"))
    for config in (ScaffoldConfig(), ScaffoldConfig(wall_clock_s=42.0)):
        assert time_limit_s(task, config) == agent_time_limit_s(task, config)
    expected = task.config.agent.timeout_sec or DEFAULT_AGENT_TIMEOUT_S
    assert agent_time_limit_s(task, ScaffoldConfig()) == expected


def _option(command: Any, flag: str) -> object:
    for param in command.params:
        if flag in getattr(param, "opts", ()):
            return param.default
    raise AssertionError(f"{command.name} has no {flag}")


def test_grading_defaults_are_defined_once() -> None:
    rule = AdaptiveRule()
    assert (rule.k_max, rule.k_min, rule.confidence) == (
        defaults.DEFAULT_K, defaults.DEFAULT_K_MIN, defaults.DEFAULT_CONFIDENCE)
    signature = inspect.signature(grade_model).parameters
    assert signature["k"].default == defaults.DEFAULT_K
    assert signature["workers"].default == defaults.DEFAULT_WORKERS
    command = load_group("grade").commands["grade"]
    assert _option(command, "-k") == defaults.DEFAULT_K
    assert _option(command, "--confidence") == defaults.DEFAULT_CONFIDENCE
    assert _option(command, "--workers") == defaults.DEFAULT_WORKERS


def test_the_scaffolds_limits_and_the_near_miss_threshold_are_defined_once() -> None:
    from termgrade.agent.scaffold import ScaffoldConfig
    from termgrade.passrates.build import PassRateOptions
    from termgrade.records.near_miss import NEAR_MISS_MIN_PASSED

    scaffold = ScaffoldConfig()
    command = load_group("grade").commands["grade"]
    assert _option(command, "--max-turns") == scaffold.max_turns
    assert _option(command, "--command-timeout") == scaffold.command_timeout_s
    assert _option(command, "--temperature") == scaffold.temperature
    report = load_group("report").commands["report"]
    assert _option(report, "--near-miss-min-passed") == NEAR_MISS_MIN_PASSED
    assert PassRateOptions().near_miss_min_passed == NEAR_MISS_MIN_PASSED
