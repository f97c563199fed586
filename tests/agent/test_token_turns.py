"""Token-level turns (``grade --logprobs``): asked of a real HTTP endpoint on the loopback
interface (the scripted stand-in, answering OpenAI-shaped ``logprobs`` and vLLM's token-id
extras only when asked), recorded per reply, carried through the trial record, the
trajectories repo and ``load_dataset`` unchanged; nothing of it required."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.client import ChatClient
from termgrade.agent.loop import Episode
from termgrade.agent.tokens import token_request, token_turn
from termgrade.records.trial import TokenTurn
from termgrade.sandbox.base import Sandbox
from tests.support.scripted_tools import (
    STAND_IN_MODEL,
    ScriptedToolEndpoint,
    commands,
    give_up,
)

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"
REVISIONS = {"model_revision": "a1b2c3", "tokenizer_revision": "d4e5f6",
             "chat_template_digest": "sha256:0f0f"}


def _choice(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": "hi"},
                                       **fields}]}


def _content(*pairs: tuple[str, float]) -> dict[str, Any]:
    return {"content": [{"token": t, "logprob": lp, "top_logprobs": []} for t, lp in pairs]}


def test_openai_logprobs_are_read_as_given() -> None:
    turn = token_turn(_choice(logprobs=_content(("h", -0.125), ("i", -1e-9))), 3, 5)
    assert (turn.turn, turn.message_index, turn.finish_reason) == (3, 5, "stop")
    assert (turn.tokens, turn.logprobs, turn.token_ids) == (["h", "i"], [-0.125, -1e-9], None)
    assert turn.model == "m" and turn.tokenizer_revision is None


def test_token_ids_from_vllm_either_way() -> None:
    given = token_turn(_choice(logprobs=_content(("h", -0.5), ("i", -0.25)), token_ids=[7, 9]),
                       0, 2)
    assert given.token_ids == [7, 9]
    written = token_turn(_choice(logprobs=_content(("token_id:11", -0.5))), 0, 2)
    assert (written.tokens, written.token_ids) == (["token_id:11"], [11])


@pytest.mark.parametrize(("fields", "tokens", "logprobs"), [
    ({}, None, None),  # an endpoint without logprobs
    ({"logprobs": None}, None, None),
    ({"logprobs": {"content": None}}, None, None),
    ({"logprobs": {"content": [{"token": "h"}]}}, ["h"], None),  # no logprob: the token
    ({"logprobs": {"content": [{"token": 3, "logprob": -1.0}]}}, None, [-1.0]),  # no text
    ({"logprobs": {"content": [{"token": "h", "logprob": "low"}]}}, ["h"], None),
    ({"logprobs": "yes"}, None, None),
    ({"logprobs": _content(("h", -0.5)), "token_ids": [1, 2]}, ["h"], [-0.5]),  # ids: 2 of 1
])
def test_what_an_endpoint_does_not_give_is_null_never_an_error(
        fields: dict[str, Any], tokens: list[str] | None,
        logprobs: list[float] | None) -> None:
    turn = token_turn(_choice(**fields), 0, 1)
    assert turn.finish_reason == "stop" and turn.token_ids is None
    assert (turn.tokens, turn.logprobs) == (tokens, logprobs)
    assert token_turn({}, 0, None) == TokenTurn(turn=0)  # not even a choice


def test_what_is_asked() -> None:
    assert token_request(None) == {}
    assert token_request("logprobs") == {"logprobs": True, "top_logprobs": 0}
    assert token_request("token-ids") == {"logprobs": True, "top_logprobs": 0,
                                          "return_token_ids": True}
    with pytest.raises(ValueError, match="token detail"):
        token_request("all")


def _episode(url: str, detail: str | None) -> Any:
    """One episode of a policy that calls finish at once (the container is never used)."""
    client = ChatClient(Endpoint(url, STAND_IN_MODEL, api_key_env=None, token_detail=detail))
    try:
        return Episode(client, cast(Sandbox, None), "Do nothing.", "/app", ScaffoldConfig(),
                       60.0).run()
    finally:
        client.close()


def test_an_episode_records_each_replys_tokens_when_asked() -> None:
    with ScriptedToolEndpoint(give_up(), logprobs=True, revisions=REVISIONS) as llm:
        script = _episode(llm.url, "token-ids")
        [served] = llm.completions
        [request] = llm.requests
    assert (request["logprobs"], request["top_logprobs"], request["return_token_ids"]) == (
        True, 0, True)
    [turn] = script.token_turns
    choice = served["choices"][0]
    assert turn.tokens == [c["token"] for c in choice["logprobs"]["content"]]
    assert turn.logprobs == [c["logprob"] for c in choice["logprobs"]["content"]]
    assert turn.token_ids == choice["token_ids"] and len(turn.token_ids) == len(turn.tokens)
    assert script.messages[turn.message_index or 0]["role"] == "assistant"
    assert turn.message_index == len(script.messages) - 2  # the reply, then its tool answer
    assert (turn.finish_reason, turn.model, turn.system_fingerprint) == (
        "tool_calls", STAND_IN_MODEL, "scripted-stand-in")
    assert (turn.model_revision, turn.tokenizer_revision, turn.chat_template_digest) == tuple(
        REVISIONS.values())


def test_an_endpoint_without_logprobs_and_a_run_that_did_not_ask() -> None:
    with ScriptedToolEndpoint(give_up()) as bare:  # asked, but it gives none
        script = _episode(bare.url, "logprobs")
    [turn] = script.token_turns
    assert (turn.finish_reason, turn.tokens, turn.logprobs, turn.token_ids) == (
        "tool_calls", None, None, None)
    with ScriptedToolEndpoint(give_up(), logprobs=True) as llm:  # not asked
        script = _episode(llm.url, None)
        [request] = llm.requests
    assert script.token_turns == []
    assert not {"logprobs", "top_logprobs", "return_token_ids"} & set(request)


def test_the_endpoint_probe_asks_the_same_so_a_refusal_stops_the_run_up_front() -> None:
    from termgrade.agent.probe import probe_endpoint

    with ScriptedToolEndpoint(give_up(), logprobs=True) as llm:
        probe_endpoint(Endpoint(llm.url, STAND_IN_MODEL, api_key_env=None,
                                token_detail="token-ids"))
        probe_endpoint(Endpoint(llm.url, STAND_IN_MODEL, api_key_env=None))
        asked, plain = llm.requests
    assert asked["return_token_ids"] is True and asked["logprobs"] is True
    assert "logprobs" not in plain


def _trials(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.docker
@pytest.mark.slow
def test_a_graded_trials_tokens_reach_load_dataset_unchanged(tmp_path: Path) -> None:
    from datasets import load_dataset

    from termgrade.agent.kinds import ModelAgent
    from termgrade.builders.trajectories import build_trajectories
    from termgrade.grade import TRIALS_FILE, grade_model
    from termgrade.validate import validate_repo

    policy = commands("ls /app", "head -3 /app/data/sample.txt")
    with ScriptedToolEndpoint(policy, logprobs=True, revisions=REVISIONS) as llm:
        agent = ModelAgent(Endpoint(llm.url, STAND_IN_MODEL, api_key_env=None,
                                    token_detail="token-ids"), ScaffoldConfig())
        grade_model([TASK], agent, tmp_path / "asked", k=1, workers=1, progress=False)
        served = llm.completions
    with ScriptedToolEndpoint(policy, logprobs=True) as plain:  # the same run, not asked
        agent = ModelAgent(Endpoint(plain.url, STAND_IN_MODEL, api_key_env=None),
                           ScaffoldConfig())
        grade_model([TASK], agent, tmp_path / "plain", k=1, workers=1, progress=False)
        assert not any("logprobs" in r for r in plain.requests)
    [asked] = _trials(tmp_path / "asked" / TRIALS_FILE)
    [unasked] = _trials(tmp_path / "plain" / TRIALS_FILE)
    assert unasked["token_turns"] is None

    # The record holds what the endpoint served, value for value.
    turns = asked["token_turns"]
    probe, *served = served  # grade's endpoint probe first (asking the same, once)
    assert probe["choices"][0]["logprobs"] is not None
    assert len(turns) == len(served) == 3  # two commands, then finish
    for turn, answer in zip(turns, served, strict=True):
        choice = answer["choices"][0]
        assert turn["tokens"] == [c["token"] for c in choice["logprobs"]["content"]]
        assert turn["logprobs"] == [c["logprob"] for c in choice["logprobs"]["content"]]
        assert turn["token_ids"] == choice["token_ids"]
        assert turn["finish_reason"] == choice["finish_reason"]
        assert asked["messages"][turn["message_index"]]["role"] == "assistant"

    both = tmp_path / "trials.jsonl"
    both.write_text(json.dumps(asked) + "\n" + json.dumps(unasked) + "\n")
    repo = tmp_path / "traj"
    build_trajectories(repo, trials=both, task_roots=[ROOT / "environments"])
    cache = str(tmp_path / "hf-cache")  # datasets 5.2 keys a local folder's cache by name
    episodes = {r["trial_id"]: r for r in load_dataset(str(repo), "episodes", split="train",
                                                       cache_dir=cache)}
    sft = {r["trial_id"]: r for r in load_dataset(str(repo), "sft", split="train",
                                                  cache_dir=cache)}
    assert episodes[asked["trial_id"]]["token_turns"] == turns  # lossless, floats exact
    assert episodes[unasked["trial_id"]]["token_turns"] is None
    for turn in turns:  # the join the card describes: trial_id, then message_index
        message = sft[asked["trial_id"]]["messages"][turn["message_index"]]
        assert message["role"] == "assistant"
    report = validate_repo(repo, secrets=False, cache=False)
    assert report.ok, [str(f) for f in report.findings]


def _repo_with_turns(tmp_path: Path, tasks: Path, turns: list[TokenTurn]) -> Path:
    from termgrade.builders.trajectories import build_trajectories
    from tests.builders.test_sft_tools import bash_tool_trial
    from tests.support.records import write_trials

    record = bash_tool_trial(1)
    record.token_turns = turns
    tmp_path.mkdir()
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", [record]),
                       task_roots=[tasks])
    return out


GOOD = [TokenTurn(turn=0, message_index=2, finish_reason="tool_calls", tokens=["a", "b"],
                  token_ids=[1, 2], logprobs=[-0.1, -2.5e-7]),
        TokenTurn(turn=1, message_index=4, finish_reason="tool_calls")]


@pytest.mark.parametrize(("turns", "said"), [
    ([GOOD[0].model_copy(update={"token_ids": [1]}), GOOD[1]], "token_ids has 1"),
    ([GOOD[0].model_copy(update={"message_index": 3}), GOOD[1]], "not an assistant message"),
    ([GOOD[0].model_copy(update={"message_index": 9}), GOOD[1]], "not an assistant message"),
    ([GOOD[1], GOOD[0]], "out of order"),
    ([GOOD[0].model_copy(update={"logprobs": [-0.1, 0.5]})], "above 0"),
])
def test_validate_checks_token_turns(tmp_path: Path, make_task: Any,
                                     turns: list[TokenTurn], said: str) -> None:
    from termgrade.validate import validate_repo

    tasks = make_task("alpha").parent
    good = validate_repo(_repo_with_turns(tmp_path / "good", tasks, GOOD), load=False,
                         secrets=False, cache=False)
    assert good.ok, [str(f) for f in good.findings]
    report = validate_repo(_repo_with_turns(tmp_path / "bad", tasks, turns), load=False,
                           secrets=False, cache=False)
    found = [f.message for f in report.findings if f.check == "trajectories"]
    assert found and said in found[0], found


def test_a_tokenizer_that_reads_the_sampled_ids_otherwise_is_named() -> None:
    from termgrade.agent.tokens import tokenizer_disagreements
    from tests.support.tiny_tokenizer import tiny_tokenizer, tiny_tokenizer_with

    served = tiny_tokenizer()
    text = '{"name": "bash", "arguments": {"command": "ls -la /app"}}'
    ids = served.encode(text, add_special_tokens=False)
    turn = TokenTurn(turn=0, token_ids=ids, tokens=[served.decode([i]) for i in ids],
                     logprobs=[-0.5] * len(ids))
    assert "".join(turn.tokens or []) == text
    assert tokenizer_disagreements(served, [turn]) == []
    other = tiny_tokenizer_with("<extra_0>", "<extra_1>")  # ids shift: another vocabulary
    found = tokenizer_disagreements(other, [turn])
    assert found and "where it was sampled" in found[0]
    assert tokenizer_disagreements(other, [TokenTurn(turn=0, tokens=["a"])]) == []
