"""The generation spec, the prompt templates and the funnel, without Docker."""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.core.errors import OptionError
from termgrade.generate.prompting import Prompts, versions
from termgrade.generate.spec import CandidateSpec, expand, load_spec


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_spec_expands_domains_by_difficulties_with_counts_and_topics(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, """
domains: [text, sqlite]
difficulties: [easy, hard]
count: 2
counts: {sqlite/hard: 3}
seed_topics: {text: [word counts, csv join, log scan]}
"""))
    items = expand(spec)
    assert len(items) == 2 + 2 + 2 + 3
    assert items[0] == CandidateSpec(candidate_id="gen-text-easy-000", domain="text",
                                     difficulty="easy", topic="word counts")
    assert [i.topic for i in items[:4]] == ["word counts", "csv join", "word counts",
                                           "csv join"]
    assert items[-1].candidate_id == "gen-sqlite-hard-002" and items[-1].topic is None
    assert len({i.candidate_id for i in items}) == len(items)


@pytest.mark.parametrize("text, where", [
    ("domains: [text]\ndifficulties: [extreme]\n", r"\[difficulties.0\]"),
    ("domains: []\ndifficulties: [easy]\n", r"\[domains\]"),
    ("domains: [Text Processing]\ndifficulties: [easy]\n", r"\[domains\]"),
    ("domains: [text]\ndifficulties: [easy]\ncount: -1\n", r"\[count\]"),
    ("domains: [text]\ndifficulties: [easy]\ncounts: {sql/easy: 1}\n", r"\[counts.sql/easy\]"),
    ("domains: [text]\ndifficulties: [easy]\nseed_topics: {sql: [x]}\n", r"seed_topics.sql"),
    ("domains: [text]\ndifficulties: [easy]\ncolour: red\n", r"\[colour\]"),
    ("- just a list\n", "not a mapping"),
    ("domains: [text\n", "not valid YAML"),
])
def test_bad_specs_name_the_file_and_field(tmp_path: Path, text: str, where: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(OptionError, match=where) as caught:
        load_spec(path)
    assert str(path) in str(caught.value)


def test_prompts_are_versioned_files_rendered_with_the_spec() -> None:
    assert "v1" in versions()
    prompts = Prompts.load("v1")
    spec = CandidateSpec(candidate_id="gen-text-easy-000", domain="text", difficulty="easy",
                         topic="word counts")
    system, user = prompts.first(spec, base_image="termgrade/base:local", min_tests=10)
    assert 'domain = "text"' in system["content"] and "FROM termgrade/base:local" \
        in system["content"]
    assert "reward.txt" in system["content"]  # the verifier boilerplate is quoted
    assert "Topic: word counts" in user["content"]
    repair = prompts.repair(round=1, max_rounds=2, stage="verify", feedback="verdict: flaky")
    assert "verdict: flaky" in repair and "round 1 of at most 2" in repair
    with pytest.raises(OptionError, match="no prompt version"):
        Prompts.load("v999")


def test_feedback_and_table_lines_drop_colour_codes_and_keep_the_end() -> None:
    from termgrade.core.text import brief, strip_ansi

    log = "building failed:\n\x1b[91mTraceback\x1b[0m\n  step 1\n\nURLError: no name\n  fix: x"
    assert "\x1b" not in strip_ansi(log)
    assert brief(log) == "building failed: ... URLError: no name fix: x"
    assert brief("one line") == "one line"
