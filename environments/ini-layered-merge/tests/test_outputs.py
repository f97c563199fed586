import os
import subprocess
from pathlib import Path

TOOL = "/app/inimerge"
CONF = "/app/config"

SAMPLE_EXPECTED = """app_name = billing
base_dir = /srv/billing

[server]
host = 0.0.0.0
port = 9090
url = http://0.0.0.0:9090/

[Database]
driver = postgres
host = db.eu-west.internal
port = 5432
dsn = postgres://db.eu-west.internal:5432/billing
password = "p#ss w0rd"

[cache]
backend = redis
ttl =
note = costs $5 per GB, not $HOME

[logging]
level = info
path = /srv/billing/logs
"""


def run(*args, cwd=None):
    return subprocess.run(
        [TOOL, *args], capture_output=True, text=True, timeout=30, cwd=cwd
    )


def layers(tmp_path, *texts):
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"layer{i}.ini"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


def merge(tmp_path, *texts):
    out = run(*layers(tmp_path, *texts))
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_layers_exact():
    out = run("00-defaults.ini", "10-site.ini", "20-host.ini", cwd=CONF)
    assert out.returncode == 0, out.stderr
    assert out.stdout == SAMPLE_EXPECTED


def test_override_keeps_position(tmp_path):
    out = merge(tmp_path, "[s]\na = 1\nb = 2\nc = 3\n", "[s]\nb = two\nd = 4\n")
    assert out == "[s]\na = 1\nb = two\nc = 3\nd = 4\n"


def test_section_names_case_insensitive_first_spelling_wins(tmp_path):
    out = merge(tmp_path, "[Web]\nx = 1\n", "[WEB]\ny = 2\n[web]\nx = 9\n")
    assert out == "[Web]\nx = 9\ny = 2\n"


def test_keys_case_insensitive_printed_lowercase(tmp_path):
    out = merge(tmp_path, "[s]\nMaxConn = 10\n", "[s]\nMAXCONN = 20\nNewKey = v\n")
    assert out == "[s]\nmaxconn = 20\nnewkey = v\n"


def test_comments_blank_lines_and_indentation(tmp_path):
    text = "# top comment\n; another\n\n   [ net ]  \n\t  timeout   =   30  \n  # indented comment\n"
    assert merge(tmp_path, text) == "[net]\ntimeout = 30\n"


def test_values_kept_verbatim(tmp_path):
    text = '[s]\nquoted = "a b"\nhash = x # not a comment\neq = a=b=c\nsemi = ;x\n'
    assert merge(tmp_path, text) == (
        '[s]\nquoted = "a b"\nhash = x # not a comment\neq = a=b=c\nsemi = ;x\n'
    )


def test_empty_value_format(tmp_path):
    out = merge(tmp_path, "[s]\nempty =\nspaces =    \n")
    assert out == "[s]\nempty =\nspaces =\n"


def test_top_level_keys_first_and_block_separation(tmp_path):
    out = merge(tmp_path, "[a]\nk = 1\n", "name = x\n[b]\n")
    assert out == "name = x\n\n[a]\nk = 1\n\n[b]\n"
    only_sections = merge(tmp_path, "[a]\nk = 1\n[b]\nk = 2\n")
    assert only_sections == "[a]\nk = 1\n\n[b]\nk = 2\n"


def test_delete_key_and_readd_moves_to_end(tmp_path):
    out = merge(tmp_path, "[s]\na = 1\nb = 2\nc = 3\n", "[s]\n-a\n- C \n", "[s]\na = new\n")
    assert out == "[s]\nb = 2\na = new\n"


def test_delete_missing_key_is_not_an_error(tmp_path):
    assert merge(tmp_path, "[s]\na = 1\n", "[s]\n-nothere\n[t]\n-x\n") == "[s]\na = 1\n\n[t]\n"


def test_delete_section_and_readd_moves_to_end(tmp_path):
    out = merge(
        tmp_path,
        "[one]\na = 1\n[two]\nb = 2\n[three]\nc = 3\n",
        "[-ONE]\n[-absent]\n",
        "[One]\nz = 26\n",
    )
    assert out == "[two]\nb = 2\n\n[three]\nc = 3\n\n[One]\nz = 26\n"


def test_section_with_all_keys_deleted_still_printed(tmp_path):
    assert merge(tmp_path, "[s]\na = 1\n", "[s]\n-a\n") == "[s]\n"


def test_key_under_deleted_section_header_is_syntax_error(tmp_path):
    paths = layers(tmp_path, "[s]\na = 1\n", "# drop it\n[-s]\nb = 2\n")
    out = run(*paths)
    assert out.returncode == 1
    assert out.stdout == ""
    assert f"inimerge: {paths[1]}:3: syntax error" in out.stderr


def test_syntax_error_message_and_status(tmp_path):
    path = tmp_path / "bad.ini"
    path.write_text("[s]\na = 1\n\nthis line is garbage\n")
    out = run(str(path))
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.strip() == f"inimerge: {path}:4: syntax error"


def test_syntax_error_reports_file_as_given(tmp_path):
    (tmp_path / "good.ini").write_text("[s]\n")
    (tmp_path / "broken.ini").write_text("[s]\nok = 1\n[unclosed\n")
    out = run("good.ini", "./broken.ini", cwd=tmp_path)
    assert out.returncode == 1
    assert out.stderr.strip() == "inimerge: ./broken.ini:3: syntax error"


def test_interpolation_same_section_other_section_and_top_level(tmp_path):
    text = (
        "root = /opt\n"
        "[paths]\nbin = ${:root}/bin\ntool = ${bin}/tool\n"
        "[run]\ncmd = ${PATHS:Tool} --fast\n"
    )
    assert merge(tmp_path, text) == (
        "root = /opt\n\n[paths]\nbin = /opt/bin\ntool = /opt/bin/tool\n\n"
        "[run]\ncmd = /opt/bin/tool --fast\n"
    )


def test_interpolation_uses_merged_values(tmp_path):
    out = merge(tmp_path, "[s]\nhost = a\nurl = http://${host}/\n", "[s]\nhost = b\n")
    assert out == "[s]\nhost = b\nurl = http://b/\n"


def test_dollar_escapes_and_literal_dollars(tmp_path):
    text = "[s]\nprice = $$10\nshell = $HOME and $ alone\nopen = ${not closed\nv = x\nmix = $$${v}\n"
    assert merge(tmp_path, text) == (
        "[s]\nprice = $10\nshell = $HOME and $ alone\nopen = ${not closed\nv = x\nmix = $x\n"
    )


def test_undefined_reference_is_error(tmp_path):
    out = run(*layers(tmp_path, "[s]\na = ${missing}\n"))
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.startswith("inimerge:")


def test_reference_to_deleted_key_is_error(tmp_path):
    out = run(*layers(tmp_path, "[s]\na = 1\nb = ${a}\n", "[s]\n-a\n"))
    assert out.returncode == 1
    assert out.stdout == ""


def test_reference_cycles_are_errors(tmp_path):
    for text in ("[s]\na = ${a}\n", "[s]\na = ${b}\nb = x${t:c}\n[t]\nc = ${s:a}\n"):
        out = run(*layers(tmp_path, text))
        assert out.returncode == 1, text
        assert out.stdout == ""
        assert out.stderr.startswith("inimerge:")


def test_output_file_option(tmp_path):
    paths = layers(tmp_path, "[s]\na = 1\n", "[s]\nb = 2\n")
    target = tmp_path / "merged.ini"
    out = run("-o", str(target), *paths)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""
    assert target.read_text() == "[s]\na = 1\nb = 2\n"


def test_output_file_untouched_on_error(tmp_path):
    target = tmp_path / "existing.ini"
    target.write_text("[keep]\nme = yes\n")
    paths = layers(tmp_path, "[s]\na = ${nope}\n")
    assert run("-o", str(target), *paths).returncode == 1
    assert target.read_text() == "[keep]\nme = yes\n"
    fresh = tmp_path / "fresh.ini"
    assert run("-o", str(fresh), *layers(tmp_path, "garbage\n")).returncode == 1
    assert not fresh.exists()


def test_missing_file_and_no_arguments_exit_2(tmp_path):
    paths = layers(tmp_path, "[s]\na = 1\n")
    out = run(paths[0], str(tmp_path / "nope.ini"))
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip() != ""
    none = run()
    assert none.returncode == 2
    assert none.stdout == ""


def test_comment_only_input_gives_empty_output(tmp_path):
    out = run(*layers(tmp_path, "# nothing\n\n; here\n"))
    assert out.returncode == 0
    assert out.stdout == ""


def test_inputs_not_modified():
    before = {p.name: p.read_bytes() for p in Path(CONF).iterdir()}
    run("00-defaults.ini", "10-site.ini", "20-host.ini", cwd=CONF)
    after = {p.name: p.read_bytes() for p in Path(CONF).iterdir()}
    assert after == before


def test_many_layers(tmp_path):
    texts = [f"[s]\ncounter = {i}\nk{i} = v{i}\n" for i in range(60)]
    out = merge(tmp_path, *texts).splitlines()
    assert out[0] == "[s]"
    assert out[1] == "counter = 59"
    assert out[2:] == [f"k{i} = v{i}" for i in range(60)]
