"""An endpoint no trial could use is refused in seconds, before any container starts.

``termgrade grade`` against a closed port, a ``--base-url`` without ``http://``, a model the
server does not serve, or a server without tool calling: each one error naming the URL
and the fix, exit 1, no trial written. A request that finds nothing listening mid-run is
given up after a few seconds, not retried for minutes.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.agent import ChatClient, Endpoint
from termgrade.agent.errors import EndpointError, EndpointUnusableError
from termgrade.agent.probe import probe_endpoint
from termgrade.cli.app import app
from tests.support.scripted_tools import Fault, FaultPlan, ScriptedToolEndpoint, give_up

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"
runner = CliRunner()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_tool_calling_endpoint_passes_with_one_short_request() -> None:
    with ScriptedToolEndpoint(give_up()) as llm:
        probe_endpoint(Endpoint(llm.url, llm.model, api_key_env=None))
    [request] = llm.requests
    assert request["max_tokens"] == 1
    assert [t["function"]["name"] for t in request["tools"]] == ["bash", "finish"]


def test_a_closed_port_is_refused_in_seconds_naming_the_url() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    began = time.monotonic()
    with pytest.raises(EndpointUnusableError) as caught:
        probe_endpoint(Endpoint(url, "any-model", api_key_env=None))
    assert time.monotonic() - began < 10
    assert url in str(caught.value) and "Connection refused" in str(caught.value)
    assert "start the model server" in str(caught.value)


@pytest.mark.parametrize("base_url", ["127.0.0.1:8000/v1", "localhost:8000/v1"])
def test_a_base_url_without_a_scheme_is_refused_with_the_fixed_url(base_url: str) -> None:
    with pytest.raises(EndpointUnusableError, match="no http:// or https:// scheme") as caught:
        probe_endpoint(Endpoint(base_url, "any-model", api_key_env=None))
    assert f"--base-url http://{base_url}" in str(caught.value)


def test_a_model_the_server_does_not_serve_is_named_with_what_it_serves() -> None:
    with ScriptedToolEndpoint(give_up(), model="served-model") as llm, \
            pytest.raises(EndpointUnusableError) as caught:
        probe_endpoint(Endpoint(llm.url, "gemma-typo", api_key_env=None))
    message = str(caught.value)
    assert "does not serve model 'gemma-typo'" in message and "served-model" in message
    assert "--model served-model" in message
    assert llm.requests == []  # decided by GET /models, no completion paid for


def test_a_server_without_tool_calling_is_refused_naming_the_server_flag() -> None:
    no_tools = FaultPlan(when=[(lambda _n, body: "tools" in body, Fault.no_tools())])
    with ScriptedToolEndpoint(give_up(), faults=no_tools) as llm, \
            pytest.raises(EndpointUnusableError) as caught:
        probe_endpoint(Endpoint(llm.url, llm.model, api_key_env=None))
    assert "does not accept tool calls" in str(caught.value)
    assert "--enable-auto-tool-choice" in str(caught.value)


def test_a_scaffold_without_tools_probes_without_them() -> None:
    """terminus-2's turns are text: a server without tool calling serves it."""
    from termgrade.agent.scaffolds import scaffold_for

    no_tools = FaultPlan(when=[(lambda _n, body: "tools" in body, Fault.no_tools())])
    with ScriptedToolEndpoint(give_up(), faults=no_tools) as llm:
        probe_endpoint(Endpoint(llm.url, llm.model, api_key_env=None),
                       scaffold_for("terminus-2").tools)
    [request] = llm.requests
    assert "tools" not in request and "tool_choice" not in request


def test_a_closed_port_mid_run_gives_up_in_seconds_as_fatal() -> None:
    client = ChatClient(Endpoint(f"http://127.0.0.1:{closed_port()}/v1", "m", api_key_env=None))
    began = time.monotonic()
    with pytest.raises(EndpointError, match="nothing answers after 3 tries") as caught:
        client.complete([{"role": "user", "content": "hi"}], [])
    assert caught.value.fatal and time.monotonic() - began < 15


def test_a_malformed_url_mid_run_is_fatal_at_once() -> None:
    client = ChatClient(Endpoint("127.0.0.1:9/v1", "m", api_key_env=None))
    began = time.monotonic()
    with pytest.raises(EndpointError, match="not a usable URL") as caught:
        client.complete([{"role": "user", "content": "hi"}], [])
    assert caught.value.fatal and time.monotonic() - began < 2


# --- through the CLI (the image check before the probe asks the Docker engine; a URL
# without a scheme is refused before anything) -------------------------------------------


@pytest.mark.docker
def test_grade_against_a_closed_port_fails_in_seconds_naming_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    began = time.monotonic()
    done = runner.invoke(app, ["grade", str(TASK), "--model", "m", "--base-url", url,
                               "-k", "1", "-o", str(tmp_path / "out")])
    assert done.exit_code == 1, done.output
    assert time.monotonic() - began < 60
    assert url in done.output and "Connection refused" in done.output
    assert not (tmp_path / "out" / "trials.jsonl").exists()


def test_grade_with_a_base_url_without_http_fails_naming_the_fix(tmp_path: Path) -> None:
    done = runner.invoke(app, ["grade", str(TASK), "--model", "m", "--base-url",
                               "127.0.0.1:8000/v1", "-k", "1", "-o", str(tmp_path / "out")])
    assert done.exit_code == 1, done.output
    assert "--base-url http://127.0.0.1:8000/v1" in done.output
    assert not (tmp_path / "out" / "trials.jsonl").exists()


@pytest.mark.docker
def test_grade_with_a_wrong_model_name_fails_naming_the_served_models(tmp_path: Path) -> None:
    with ScriptedToolEndpoint(give_up(), model="served-model") as llm:
        done = runner.invoke(app, ["grade", str(TASK), "--model", "typo", "--base-url",
                                   llm.url, "-k", "1", "-o", str(tmp_path / "out")],
                             env={"NO_PROXY": "127.0.0.1", "TERMGRADE_PROGRESS": "0"})
    assert done.exit_code == 1, done.output
    assert "does not serve model 'typo'" in done.output and "served-model" in done.output
