"""The answer format: strict parsing, confinement to the candidate directory, size caps."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from termgrade.generate.answer import (
    MAX_FILE_BYTES,
    OPEN,
    parse_answer,
    split_blocks,
)
from termgrade.generate.errors import AnswerError
from termgrade.generate.paths import write_task

BASE = "termgrade/base:local"
TOML = ('schema_version = "1.4"\n[metadata]\ndomain = "text"\ndifficulty = "easy"\n'
        'author = "a"\nsource = "generated"\n')


def block(path: str, text: str) -> str:
    return f"=== file: {path} ===\n{text}=== end ===\n"


def answer(**overrides: str | None) -> str:
    files = {"task.toml": TOML, "instruction.md": "Do it.\n",
             "environment/Dockerfile": f"FROM {BASE}\nWORKDIR /app\n",
             "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
             "tests/test_outputs.py": "def test_x():\n    assert True\n",
             "solution/solve.sh": "#!/bin/bash\ntrue\n"}
    for key, value in overrides.items():
        path = key.replace("__", "/").replace("_DOT_", ".")
        if value is None:
            files.pop(path, None)
        else:
            files[path] = value
    return "\n".join(block(p, t) for p, t in files.items())


def parse(text: str) -> dict[str, str]:
    return parse_answer(text, base_image=BASE, domain="text", difficulty="easy").files


def test_a_well_formed_answer_parses_verbatim() -> None:
    files = parse(answer())
    assert files["environment/Dockerfile"] == f"FROM {BASE}\nWORKDIR /app\n"
    assert set(files) == {"task.toml", "instruction.md", "environment/Dockerfile",
                          "tests/test.sh", "tests/test_outputs.py", "solution/solve.sh"}


@pytest.mark.parametrize("text, reason", [
    ("Sure! Here is your task.\n" + "=== file: a ===\nx\n=== end ===\n", "outside a file block"),
    ("```\n=== file: task.toml ===\nx\n=== end ===\n```\n", "outside a file block"),
    ("=== file: task.toml ===\nx\n", "never ends"),
    ("=== file: task.toml ===\nx\n=== file: instruction.md ===\n", "before task.toml ended"),
    ("=== file: task.toml ===\n=== end ===\n=== file: task.toml ===\n=== end ===\n", "twice"),
    ("", "no file block"),
    ("I cannot help with that.", "outside a file block"),
])
def test_malformed_answers_are_answer_errors(text: str, reason: str) -> None:
    with pytest.raises(AnswerError, match=reason):
        parse(text)


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd", "tests/../../x",
                                  "environment/.hidden", "notes.txt", "home/x.py",
                                  "tests\\x.py", "tests/a b.py", "solution/~/x"])
def test_paths_outside_the_task_are_refused(path: str) -> None:
    with pytest.raises(AnswerError, match=r"only|absolute|part|top-level|files go"):
        parse(answer() + block(path, "x\n"))


def test_sizes_are_capped() -> None:
    with pytest.raises(AnswerError, match=f"at most {MAX_FILE_BYTES}"):
        parse(answer(instruction_DOT_md="x" * (MAX_FILE_BYTES + 1) + "\n"))
    many = answer() + "".join(block(f"environment/d{i}.txt", "x\n") for i in range(40))
    with pytest.raises(AnswerError, match="at most 32"):
        parse(many)
    big = answer() + "".join(block(f"environment/d{i}.txt", "x" * 60_000 + "\n") for i in range(5))
    with pytest.raises(AnswerError, match="the task is"):
        parse(big)


def test_required_files_base_image_and_metadata() -> None:
    with pytest.raises(AnswerError, match=r"solution/solve\.sh"):
        parse(answer(solution__solve_DOT_sh=None))
    with pytest.raises(AnswerError, match=r"FROM ubuntu:22\.04"):
        parse(answer(environment__Dockerfile="FROM ubuntu:22.04\n"))
    with pytest.raises(AnswerError, match="difficulty is 'hard'"):
        parse(answer(task_DOT_toml=TOML.replace('"easy"', '"hard"')))
    with pytest.raises(AnswerError, match="not valid TOML"):
        parse(answer(task_DOT_toml="[metadata\n"))
    with pytest.raises(AnswerError, match="allow_internet"):
        parse(answer(task_DOT_toml=TOML + "[environment]\nallow_internet = true\n"))


@pytest.mark.parametrize("table, line", [
    ("environment", "build_timeout_sec = 99999.0"), ("verifier", "timeout_sec = 1e9"),
    ("environment", "memory_mb = 65536"), ("environment", "cpus = 0"),
    ("agent", 'timeout_sec = "forever"'),
])
def test_resource_asks_are_capped(table: str, line: str) -> None:
    with pytest.raises(AnswerError, match=rf"\[{table}\] {line.split()[0]}"):
        parse(answer(task_DOT_toml=TOML + f"[{table}]\n{line}\n"))
    assert parse(answer(task_DOT_toml=TOML + "[verifier]\ntimeout_sec = 120.0\n"))


def test_text_that_is_not_unicode_is_an_answer_error() -> None:
    with pytest.raises(AnswerError, match="not valid Unicode"):
        parse(answer(instruction_DOT_md="bad \ud800 surrogate\n"))


@pytest.mark.parametrize("line", [
    "ADD https://example.com/data.csv /app/data.csv",
    "ADD http://127.0.0.1:8000/secret /app/s",
    "ADD git@github.com:org/repo.git /src",
    "COPY --from=alpine:3.19 /bin/busybox /app/busybox",
    "RUN --mount=type=bind,from=busybox:latest,target=/b cp /b/bin/sh /app/sh",
])
def test_what_the_daemon_itself_would_fetch_is_refused(line: str) -> None:
    dockerfile = f"FROM {BASE}\nWORKDIR /app\n{line}\n"
    with pytest.raises(AnswerError, match="reaches the network"):
        parse(answer(environment__Dockerfile=dockerfile))


def test_earlier_stages_may_be_copied_from() -> None:
    dockerfile = (f"FROM {BASE} AS build\nRUN echo hi > /hi\nFROM {BASE}\n"
                  "COPY --from=build /hi /app/hi\nCOPY --from=0 /hi /app/hi0\n"
                  "ADD data.tar /app/\n")
    assert parse(answer(environment__Dockerfile=dockerfile))


def test_blocks_keep_text_verbatim() -> None:
    text = "=== file: instruction.md ===\n  indented\n\nlast line\n=== end ===\n\n"
    assert split_blocks(text) == {"instruction.md": "  indented\n\nlast line\n"}


def test_write_task_replaces_the_directory_and_stays_inside(tmp_path: Path) -> None:
    target = tmp_path / "work" / "gen-x"
    write_task(parse_answer(answer(), base_image=BASE, domain="text", difficulty="easy"),
               target)
    (target / "stale.txt").write_text("from an earlier round")
    write_task(parse_answer(answer(), base_image=BASE, domain="text", difficulty="easy"),
               target)
    assert not (target / "stale.txt").exists()
    assert (target / "tests" / "test.sh").stat().st_mode & 0o111
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["gen-x"]
    assert not list(tmp_path.glob("escape*"))


_SAFE_PATHS = st.sampled_from(["instruction.md", "task.toml", "environment/Dockerfile",
                               "environment/data/in.txt", "tests/test.sh",
                               "tests/test_outputs.py", "solution/solve.sh",
                               "solution/lib/helper.py"])
_TEXT = st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]),
                         max_size=40), max_size=6).map(lambda lines: "".join(
                             f"{line}\n" for line in lines))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_SAFE_PATHS, _TEXT, min_size=1))
def test_blocks_round_trip_any_text_that_is_not_a_delimiter(files: dict[str, str]) -> None:
    lines = [line for text in files.values() for line in text.splitlines()]
    assume(not any(line == "=== end ===" or OPEN.match(line) for line in lines))
    assert split_blocks(block_all(files)) == files


def block_all(files: dict[str, str]) -> str:
    return "\n".join(block(path, text) for path, text in files.items())
