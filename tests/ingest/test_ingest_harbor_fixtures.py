"""Ingesting real Harbor job folders (tests/fixtures/harbor, made by regenerate.sh).

Each layout folder holds jobs run on TermGrade tasks: ``oracle`` (3 tasks, k=2), ``nop``
(word-frequency), ``errors`` (a task whose image build fails; one whose oracle solves it,
then sleeps past a 5 s agent timeout), ``terminus2-scripted`` (Harbor's Terminus-2 driven
by the scripted stand-in model of tests.support.scripted_llm) and, for Harbor >= 0.9,
``multistep-terminus2-scripted`` (the same on a two-step copy of word-frequency).
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import jsonschema
import pytest

from termgrade.ingest import IngestResult, Layout, ingest_harbor
from termgrade.records import ChatMessage, TrialRecord
from termgrade.validate.schemas import load_schema
from tests.support.scripted_llm import WORD_FREQUENCY_REPLIES

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harbor"
LAYOUTS = [Layout.CURRENT, Layout.LEGACY]
TASKS = {"word-frequency", "markdown-table-align", "tidy-filenames"}


@pytest.fixture(scope="module", params=LAYOUTS, ids=[str(x) for x in LAYOUTS])
def ingested(request: pytest.FixtureRequest) -> tuple[Layout, IngestResult]:
    layout: Layout = request.param
    return layout, ingest_harbor([FIXTURES / str(layout)])


def _job(result: IngestResult, job: str) -> list[TrialRecord]:
    return [r for r in result.records if Path(r.source).name == job]


def test_every_trial_is_read_in_its_layout(ingested: tuple[Layout, IngestResult]) -> None:
    layout, result = ingested
    trial_dirs = [p for p in (FIXTURES / str(layout)).glob("*/*__*") if p.is_dir()]
    assert len(result.records) == len(trial_dirs) >= 10
    assert dict(result.layouts) == {str(layout): len(trial_dirs)}
    assert not result.skipped and not result.notes and result.duplicates == 0
    assert len({r.trial_id for r in result.records}) == len(result.records)


def test_records_match_the_published_schema(ingested: tuple[Layout, IngestResult]) -> None:
    schema = load_schema("trial")
    for record in ingested[1].records:
        jsonschema.validate(json.loads(record.model_dump_json()), schema)


def test_oracle_passes_every_task_twice(ingested: tuple[Layout, IngestResult]) -> None:
    oracle = _job(ingested[1], "oracle")
    assert {r.task_id for r in oracle} == TASKS
    for record in oracle:
        assert (record.model, record.scaffold) == ("oracle", "oracle")
        assert record.reward == 1.0 and record.counted and record.passed
        assert record.n_tests_failed == 0 and record.n_tests_passed == len(record.tests) > 5
        assert record.exception_type is None and not record.agent_timed_out
        assert record.input_tokens is None and record.messages is None and record.turns is None
        assert record.duration_s is not None and record.duration_s > 0
    by_task: dict[str, list[int]] = defaultdict(list)
    for record in oracle:
        by_task[record.task_id].append(record.attempt)
    assert {task: sorted(a) for task, a in by_task.items()} == {t: [0, 1] for t in TASKS}


def test_attempts_follow_start_time(ingested: tuple[Layout, IngestResult]) -> None:
    groups: dict[tuple[str, str, str], list[TrialRecord]] = defaultdict(list)
    for record in ingested[1].records:
        groups[(record.task_id, record.model, record.scaffold)].append(record)
    for rows in groups.values():
        ordered = sorted(rows, key=lambda r: r.attempt)
        assert [r.attempt for r in ordered] == list(range(len(rows)))
        starts = [r.started_at for r in ordered]
        assert all(s is not None for s in starts)
        assert starts == sorted(starts)  # type: ignore[type-var]


def test_parametrized_tests_keep_their_ids(ingested: tuple[Layout, IngestResult]) -> None:
    record = next(r for r in _job(ingested[1], "oracle") if r.task_id == "word-frequency")
    names = [t.name for t in record.tests]
    assert len(names) == 17
    assert {"test_bad_n_exits_2[0]", "test_bad_n_exits_2[abc]", "test_large_input"} <= set(names)
    assert all("::" not in name for name in names)


def test_nop_fails_and_counts(ingested: tuple[Layout, IngestResult]) -> None:
    [record] = _job(ingested[1], "nop")
    assert (record.task_id, record.model, record.scaffold, record.attempt) == (
        "word-frequency", "nop", "nop", 0)
    assert record.reward == 0.0 and record.counted and not record.passed
    assert (record.n_tests_passed, record.n_tests_failed) == (0, 17)
    assert {t.outcome for t in record.tests} == {"failed"}


def test_a_failed_image_build_is_kept_but_not_counted(
        ingested: tuple[Layout, IngestResult]) -> None:
    record = next(r for r in _job(ingested[1], "errors") if r.task_id == "wf-broken-build")
    assert record.reward is None and not record.counted and not record.passed
    assert record.exception_type is not None and record.exception_message
    assert record.tests == [] and record.n_tests_passed is None


def test_an_agent_timeout_that_was_graded_counts(ingested: tuple[Layout, IngestResult]) -> None:
    record = next(r for r in _job(ingested[1], "errors") if r.task_id == "wf-agent-timeout")
    assert record.exception_type == "AgentTimeoutError" and record.agent_timed_out
    assert "timed out" in (record.exception_message or "")
    # the solution finished before the limit, so the graded reward stands: it passes
    assert record.reward == 1.0 and record.counted and record.passed
    assert record.n_tests_failed == 0


def test_terminus2_trials_carry_tokens_turns_and_model(
        ingested: tuple[Layout, IngestResult]) -> None:
    runs = _job(ingested[1], "terminus2-scripted")
    assert runs
    for record in runs:
        assert (record.task_id, record.model, record.scaffold) == (
            "word-frequency", "scripted-stand-in", "terminus-2")
        assert record.reward == 1.0 and record.counted and record.passed
        assert record.turns == len(WORD_FREQUENCY_REPLIES) == len(record.per_turn)
        assert record.input_tokens == sum(t.input_tokens or 0 for t in record.per_turn) > 0
        assert record.output_tokens == sum(t.output_tokens or 0 for t in record.per_turn) > 0
        assert record.cached_tokens is not None and 0 < record.cached_tokens < record.input_tokens
        assert [t.turn for t in record.per_turn] == list(range(len(record.per_turn)))
    assert sorted(r.attempt for r in runs) == list(range(len(runs)))


def test_harbor_provenance_is_kept(ingested: tuple[Layout, IngestResult]) -> None:
    layout, result = ingested
    runs = _job(result, "terminus2-scripted")
    for record in runs:
        assert record.model_provider == "openai"  # model_info.provider, or the name's prefix
        stdout = record.verifier_output or ""
        assert "collected 17 items" in stdout and "passed" in stdout
    if layout == Layout.CURRENT:
        assert {r.job_id for r in runs} == {"1e8cf8e4-0288-44f7-8e9f-5424fb868e6d"}


def test_verifier_output_keeps_head_and_tail(tmp_path: Path) -> None:
    from termgrade.ingest.harbor import VERIFIER_OUTPUT_CHARS

    job = tmp_path / "job"
    shutil.copytree(FIXTURES / str(Layout.CURRENT) / "terminus2-scripted", job)
    trial = next(p for p in job.iterdir() if p.is_dir())
    (trial / "verifier" / "test-stdout.txt").write_text("HEAD\n" + "x" * 100_000 + "\nTAIL\n")
    [record] = [r for r in ingest_harbor([job]).records if Path(r.source) == job
                and r.trial_id == trial.name.split("__")[0] + "__" + trial.name.split("__")[1]]
    out = record.verifier_output or ""
    assert out.startswith("HEAD") and out.rstrip().endswith("TAIL")
    assert len(out) < VERIFIER_OUTPUT_CHARS + 200 and "characters omitted" in out


def test_terminus2_episode_has_keystrokes_frames_and_the_invalid_turn(
        ingested: tuple[Layout, IngestResult]) -> None:
    record = _job(ingested[1], "terminus2-scripted")[0]
    episode = record.episode or []
    assert [s.source for s in episode] == ["user"] + ["agent"] * len(WORD_FREQUENCY_REPLIES)
    assert [s.index for s in episode] == list(range(len(episode)))
    assert "/app/wordfreq" in episode[0].message
    first, invalid, write = episode[1], episode[2], episode[3]
    assert first.keystrokes == ["ls -la /app /app/data\n", "head -3 /app/data/sample.txt\n"]
    assert "sample.txt" in first.observation and first.is_valid_tool_call
    assert invalid.is_valid_tool_call is False and invalid.keystrokes == []
    assert invalid.observation.startswith("Previous response had parsing errors")
    assert write.keystrokes[0].startswith("cat > /app/wordfreq <<'EOF'")
    assert "5 the" in write.observation  # the stand-in's tool ran on the sample
    assert all(s.is_valid_tool_call for s in episode[3:])


def _assert_terminus_chat(messages: list[ChatMessage], *, exact: bool) -> None:
    """The scripted conversation: user, assistant, ...; replies as the stand-in sent them."""
    assert [m.role for m in messages] == ["user", "assistant"] * len(WORD_FREQUENCY_REPLIES)
    assistant = [m.content for m in messages if m.role == "assistant"]
    if exact:
        assert assistant == list(WORD_FREQUENCY_REPLIES)  # byte for byte
    else:
        assert assistant[1] == WORD_FREQUENCY_REPLIES[1]  # unparsable: kept verbatim
        for turn, (got, sent) in enumerate(zip(assistant, WORD_FREQUENCY_REPLIES, strict=True)):
            if turn != 1:
                assert json.loads(got) == json.loads(sent)
    user = [m.content for m in messages if m.role == "user"]
    assert "/app/wordfreq" in user[0] and "Current terminal state" in user[0]
    assert user[2].startswith("Previous response had parsing errors")


def test_terminus2_messages_are_the_chat_the_model_saw(
        ingested: tuple[Layout, IngestResult]) -> None:
    layout, result = ingested
    for record in _job(result, "terminus2-scripted"):
        # 0.1: episode-N prompt/response files; 0.9: run with store_all_messages
        expected = "episodes" if layout is Layout.LEGACY else "chat"
        assert record.messages_source == expected
        _assert_terminus_chat(record.messages or [], exact=True)
        assert (record.messages or [])[0].content == (record.episode or [])[0].message


def test_atif_alone_rebuilds_the_same_conversation(tmp_path: Path) -> None:
    source = FIXTURES / str(Layout.CURRENT) / "terminus2-scripted"
    job = tmp_path / "job"
    shutil.copytree(source, job)
    for result_path in job.glob("*/result.json"):
        data = json.loads(result_path.read_text())
        assert data["agent_result"]["metadata"].pop("all_messages")
        result_path.write_text(json.dumps(data))
    for record in ingest_harbor([job]).records:
        assert record.messages_source == "atif-rebuilt"
        _assert_terminus_chat(record.messages or [], exact=False)


def test_a_multi_step_trial_joins_its_steps() -> None:
    result = ingest_harbor([FIXTURES / str(Layout.CURRENT) / "multistep-terminus2-scripted"])
    [record] = result.records
    steps = json.loads(next((FIXTURES / str(Layout.CURRENT) / "multistep-terminus2-scripted")
                            .glob("*/result.json")).read_text())["step_results"]
    assert [s["step_name"] for s in steps] == ["write", "check"]
    assert (record.task_id, record.reward, record.counted, record.passed) == (
        "wf-two-steps", 1.0, True, True)
    assert record.input_tokens == sum(s["agent_result"]["n_input_tokens"] for s in steps)
    per_step = len(WORD_FREQUENCY_REPLIES)
    assert record.turns == len(record.per_turn) == 2 * per_step
    assert [t.turn for t in record.per_turn] == list(range(2 * per_step))
    episode = record.episode or []
    assert [s.index for s in episode] == list(range(len(episode))) and len(episode) == 12
    assert [s.source for s in episode].count("user") == 2  # one opening prompt per step
    assert "# Check" in episode[per_step + 1].message
    assert record.messages_source == "atif-rebuilt"
    messages = record.messages or []
    _assert_terminus_chat(messages[:2 * per_step], exact=False)
    _assert_terminus_chat(messages[2 * per_step:], exact=False)
    assert "# Check" in messages[2 * per_step].content
    assert record.n_tests_passed == 17  # the last step's verifier



def test_named_task_folders_give_each_trial_its_task_digest() -> None:
    from termgrade.task.digest import task_digest

    roots = Path(__file__).parents[2] / "environments"
    job = FIXTURES / str(Layout.CURRENT) / "oracle"
    bare = ingest_harbor([job], transcripts=False).records
    named = ingest_harbor([job], transcripts=False,
                          task_roots=[roots / name for name in sorted(TASKS)]).records
    assert {r.task_id for r in named} == TASKS
    assert all(r.task_digest is None for r in bare)  # a task on disk is not assumed
    for record in named:
        assert record.task_digest == task_digest(roots / record.task_id)
    assert len({r.task_digest for r in named}) == len(TASKS)
