import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/wordfreq"


def run(*args, stdin=None):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=30)


def write(tmp_path, text, name="in.txt"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_default_top10():
    out = run("/app/data/sample.txt")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[:3] == ["5 the", "3 dog", "3 fox"]
    assert len(lines) == 10


def test_explicit_n():
    out = run("/app/data/sample.txt", "2")
    assert out.stdout.splitlines() == ["5 the", "3 dog"]


def test_case_insensitive_lowercase_output(tmp_path):
    out = run(write(tmp_path, "Apple APPLE apple Banana"))
    assert out.stdout.splitlines() == ["3 apple", "1 banana"]


def test_ties_are_alphabetical(tmp_path):
    out = run(write(tmp_path, "pear fig apple fig pear apple kiwi"))
    assert out.stdout.splitlines() == ["2 apple", "2 fig", "2 pear", "1 kiwi"]


def test_non_letters_separate_words(tmp_path):
    out = run(write(tmp_path, "don't stop-now x1y 42"))
    assert out.stdout.splitlines() == ["1 don", "1 now", "1 stop", "1 t", "1 x", "1 y"]


def test_fewer_words_than_n(tmp_path):
    out = run(write(tmp_path, "one two"), "10")
    assert out.stdout.splitlines() == ["1 one", "1 two"]


def test_empty_file_prints_nothing(tmp_path):
    out = run(write(tmp_path, ""))
    assert out.returncode == 0
    assert out.stdout == ""


def test_file_without_words_prints_nothing(tmp_path):
    out = run(write(tmp_path, "123 !!! ... \n\n"))
    assert out.returncode == 0
    assert out.stdout == ""


def test_missing_file_exits_2():
    out = run("/nonexistent/file.txt")
    assert out.returncode == 2
    assert out.stderr.strip() != ""
    assert out.stdout == ""


@pytest.mark.parametrize("bad", ["0", "-3", "abc", "2.5"])
def test_bad_n_exits_2(bad):
    out = run("/app/data/sample.txt", bad)
    assert out.returncode == 2
    assert out.stderr.strip() != ""


def test_output_format_single_space(tmp_path):
    out = run(write(tmp_path, "b a b"))
    for line in out.stdout.splitlines():
        count, word = line.split(" ")
        assert count.isdigit() and word.isalpha()


def test_large_input(tmp_path):
    text = ("alpha " * 5000) + ("beta " * 3000) + ("gamma " * 1000)
    out = run(write(tmp_path, text), "3")
    assert out.stdout.splitlines() == ["5000 alpha", "3000 beta", "1000 gamma"]


def test_does_not_modify_input(tmp_path):
    path = write(tmp_path, "keep me as I am")
    before = Path(path).read_text()
    run(path)
    assert Path(path).read_text() == before
