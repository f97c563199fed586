import os
import subprocess
from pathlib import Path

TOOL = "/app/mdtable"
SAMPLE = "/app/docs/release-notes.md"
HERE = Path(__file__).parent


def run(*args, stdin=None):
    return subprocess.run(
        [TOOL, *args], input=stdin, capture_output=True, text=True, timeout=30
    )


def fmt(tmp_path, text):
    path = tmp_path / "doc.md"
    path.write_text(text, encoding="utf-8")
    out = run(str(path))
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_document_exact():
    out = run(SAMPLE)
    assert out.returncode == 0
    assert out.stdout == (HERE / "expected_release_notes.md").read_text(encoding="utf-8")


def test_column_widths_and_padding(tmp_path):
    text = "a|bb\n-|-\nlonger cell|x\n"
    assert fmt(tmp_path, text) == (
        "| a           | bb  |\n"
        "| ----------- | --- |\n"
        "| longer cell | x   |\n"
    )


def test_minimum_width_three(tmp_path):
    text = "|x|y|\n|-|-|\n|1|2|\n"
    assert fmt(tmp_path, text) == "| x   | y   |\n| --- | --- |\n| 1   | 2   |\n"


def test_right_alignment(tmp_path):
    text = "| n | amount |\n|--:|---:|\n| 1 | 5 |\n| 22 | 1234.5 |\n"
    assert fmt(tmp_path, text) == (
        "|   n | amount |\n"
        "| --: | -----: |\n"
        "|   1 |      5 |\n"
        "|  22 | 1234.5 |\n"
    )


def test_centre_alignment_rounds_left_padding_down(tmp_path):
    text = "| state |\n| :-: |\n| ok |\n| failed |\n"
    assert fmt(tmp_path, text) == (
        "| state  |\n"
        "| :----: |\n"
        "|   ok   |\n"
        "| failed |\n"
    )
    out = fmt(tmp_path, "| h |\n|:-:|\n| ab |\n| abcdef |\n")
    assert out.splitlines()[2] == "|   ab   |"


def test_left_alignment_delimiter(tmp_path):
    text = "| name | v |\n| :- | - |\n| alpha | 1 |\n"
    assert fmt(tmp_path, text) == (
        "| name  | v   |\n"
        "| :---- | --- |\n"
        "| alpha | 1   |\n"
    )


def test_rows_without_outer_pipes(tmp_path):
    text = "key | value\n--- | ---\nk1 | v1\n"
    assert fmt(tmp_path, text) == (
        "| key | value |\n"
        "| --- | ----- |\n"
        "| k1  | v1    |\n"
    )


def test_short_rows_padded_and_long_rows_truncated(tmp_path):
    text = "| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 | 5 |\n"
    assert fmt(tmp_path, text) == (
        "| a   | b   | c   |\n"
        "| --- | --- | --- |\n"
        "| 1   |     |     |\n"
        "| 1   | 2   | 3   |\n"
    )


def test_escaped_pipes_are_cell_content(tmp_path):
    text = "| expr | meaning |\n|---|---|\n| a \\| b | a or b |\n"
    assert fmt(tmp_path, text) == (
        "| expr   | meaning |\n"
        "| ------ | ------- |\n"
        "| a \\| b | a or b  |\n"
    )


def test_unicode_width_counts_code_points(tmp_path):
    text = "| city | note |\n|---|---|\n| Zürich | ☂ |\n| Łódź | naïve café |\n"
    assert fmt(tmp_path, text) == (
        "| city   | note       |\n"
        "| ------ | ---------- |\n"
        "| Zürich | ☂          |\n"
        "| Łódź   | naïve café |\n"
    )


def test_lines_with_pipes_but_no_delimiter_untouched(tmp_path):
    text = "run `a | b` now\nplain | text\n\nx|y\n--|--|--\n1|2\n"
    assert fmt(tmp_path, text) == text


def test_fenced_code_blocks_untouched(tmp_path):
    text = "```text\n|a|b|\n|-|-|\n|1|2|\n```\n|a|b|\n|-|-|\n"
    assert fmt(tmp_path, text) == (
        "```text\n|a|b|\n|-|-|\n|1|2|\n```\n| a   | b   |\n| --- | --- |\n"
    )


def test_table_ends_at_line_without_pipe(tmp_path):
    text = "intro\n|a|\n|-|\n|1|\nafter\n|2|\n"
    assert fmt(tmp_path, text) == "intro\n| a   |\n| --- |\n| 1   |\nafter\n|2|\n"


def test_multiple_tables_formatted_independently(tmp_path):
    text = "|a|\n|-|\n|wide value|\n\n|b|\n|-|\n|c|\n"
    assert fmt(tmp_path, text) == (
        "| a          |\n| ---------- |\n| wide value |\n\n| b   |\n| --- |\n| c   |\n"
    )


def test_reads_standard_input():
    doc = "|q|\n|-|\n|r|\n"
    expected = "| q   |\n| --- |\n| r   |\n"
    assert run(stdin=doc).stdout == expected
    assert run("-", stdin=doc).stdout == expected


def test_missing_final_newline_preserved(tmp_path):
    assert fmt(tmp_path, "|a|b|\n|-|-|\n|1|2|") == "| a   | b   |\n| --- | --- |\n| 1   | 2   |"
    assert fmt(tmp_path, "no table") == "no table"


def test_empty_input(tmp_path):
    assert fmt(tmp_path, "") == ""


def test_output_is_idempotent():
    first = run(SAMPLE).stdout
    second = run(stdin=first).stdout
    assert first != "" and second == first


def test_missing_file_exits_2():
    out = run("/nonexistent/doc.md")
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip() != ""


def test_input_file_not_modified():
    before = Path(SAMPLE).read_bytes()
    run(SAMPLE)
    assert Path(SAMPLE).read_bytes() == before


def test_large_table(tmp_path):
    rows = "".join(f"|{i}|{'x' * (i % 50)}|\n" for i in range(3000))
    out = fmt(tmp_path, "|id|payload|\n|--:|:--|\n" + rows).splitlines()
    assert len(out) == 3002
    assert out[1] == "| ---: | :" + "-" * 48 + " |"
    assert out[2] == "|    0 | " + " " * 49 + " |"
    assert out[-1] == "| 2999 | " + "x" * 49 + " |"
