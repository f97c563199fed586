"""The scaffold door (termgrade/agent/scaffolds.py): lookup by name, the bash scaffold's
identity unchanged by the door, and a registered scaffold driving a model agent."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import AgentRun, ModelAgent, run_agent
from termgrade.agent.scaffold import SCAFFOLD_NAME, SYSTEM_PROMPT, TOOLS
from termgrade.agent.scaffolds import (
    ScaffoldBase,
    register_scaffold,
    registered,
    scaffold_for,
)
from termgrade.core.errors import OptionError
from termgrade.grade.reuse import scaffold_digest

AGENT = ModelAgent(Endpoint("http://127.0.0.1:9/v1", "stand-in-model", api_key_env=None),
                   ScaffoldConfig(max_turns=7))


def _digest_before_the_door(agent: ModelAgent) -> str:
    """grade/reuse.py's formula before scaffolds had a registry, restated."""
    config = {**asdict(agent.config),
              "extra_body": {str(k): v for k, v in agent.endpoint.extra_body}}
    payload = {"scaffold": SCAFFOLD_NAME, "system_prompt": SYSTEM_PROMPT,
               "tools": list(TOOLS), "config": config}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_bash_scaffold_is_the_default_and_keeps_its_digest() -> None:
    assert AGENT.scaffold == SCAFFOLD_NAME == "bash-tool"
    assert scaffold_for("bash-tool").name == "bash-tool"
    assert scaffold_digest(AGENT) == _digest_before_the_door(AGENT)
    # Pinned: trials graded before the door carry this digest for the default config, and
    # `grade --reuse` takes them only while it is unchanged.
    default = ModelAgent(Endpoint("http://127.0.0.1:1/v1", "m"), ScaffoldConfig())
    assert scaffold_digest(default) == \
        "ab075027b1bb6b472be2ec290f510713ab573336fa4f1fc58619effd9e771185"


def test_an_unknown_scaffold_names_the_known_ones() -> None:
    with pytest.raises(OptionError, match="no such scaffold") as caught:
        scaffold_for("bash-tol")
    assert "bash-tool" in str(caught.value) and caught.value.fix is not None


def test_a_registered_scaffold_drives_a_model_agent_and_has_its_own_digest() -> None:
    ran: list[str] = []

    @register_scaffold
    class Echo(ScaffoldBase):
        name = "echo-test"
        version = "3"

        def identity(self, agent: ModelAgent) -> dict[str, Any]:
            return {"scaffold": self.name, "turns": agent.config.max_turns}

        def run(self, agent: ModelAgent, sandbox: Any, task: Any) -> AgentRun:
            ran.append(agent.name)
            return AgentRun(result=None, error="echo")

    try:
        agent = ModelAgent(AGENT.endpoint, AGENT.config, "echo-test")
        assert "echo-test" in registered()
        run = run_agent(agent, sandbox=None, task=None)  # type: ignore[arg-type]
        assert (ran, run.error) == (["stand-in-model"], "echo")
        assert scaffold_digest(agent) != scaffold_digest(AGENT)
        assert scaffold_for("echo-test").version == "3"
    finally:
        from termgrade.agent import scaffolds

        scaffolds._REGISTRY.pop("echo-test", None)
