"""The gated secret scan finds exactly what detect-secrets' own ``scan_file`` finds."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from termgrade.validate import regex_literals, secrets_scan

_RNG = random.Random(7)


def _token(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _hex(n: int) -> str:
    return _token(n, "0123456789abcdef")


JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
SECRET_LINES = [
    f"aws_key = 'AKIA{_token(16, string.ascii_uppercase + string.digits)}'",
    f"conn = 'DefaultEndpointsProtocol=https;AccountKey={_token(86)}=='",
    "url = 'https://admin:s3cr3tPassw0rd@db.example.com/x'",
    f'cloudant_api_key = "{_token(24, string.ascii_lowercase)}"',
    f"discord = 'M{_token(23)}.{_token(6)}.{_token(27)}'",
    f"gh = 'ghp_{_token(36)}'",
    f"gl = 'glpat-{_token(20)}'",
    f"blob = '{_token(40)}'",
    f"digest = '{_hex(40)}'",
    f'ibm_cloud_iam_api_key = "{_token(44)}"',
    f'ibm_cos_secret_access_key = "{_hex(48)}"',
    "server = '203.0.113.50'",
    f"jwt = '{JWT}'",
    'password = "hunter2-correct-horse"',
    f"mc = '{_token(32, string.ascii_lowercase + string.digits)}-us12'",
    f"//registry.npmjs.org/:_authToken=npm_{_token(36)}",
    f"openai = 'sk-{_token(20)}T3BlbkFJ{_token(20)}'",
    "-----BEGIN RSA PRIVATE KEY-----",
    f"pypi = 'pypi-AgEIcHlwaS5vcmc{_token(70)}'",
    f"sg = 'SG.{_token(22)}.{_token(43)}'",
    f"slack = 'xoxb-1234-5678-{_token(12, string.ascii_lowercase)}'",
    f'softlayer_api_key = "{_token(64, string.ascii_lowercase + string.digits)}"',
    f"sq = 'sq0csp-{_token(43)}'",
    f"stripe = 'sk_live_{_token(24)}'",
    f"tg = '123456789:{_token(35)}'",
    f"tw = 'AC{_token(32, string.ascii_lowercase + string.digits)}'",
    f"art = AKC{_token(14)}",
    # quotes the entropy plugins pair up their own way: a long low-entropy run opened by
    # one quote, then a secret opened by the other (and the same quote closing both).
    f"""mixed = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"{_token(40)}" """,
    f"""both = '{_token(40)}'"{_token(40)}" """,
]
PLAIN = ["import os", "def test_output_exists():", "    assert Path('/app/out').is_file()",
         "x = {'key': value}", "for i in range(10):", "# a comment with a url http://x.y/z"]


def _write_corpus(root: Path) -> list[str]:
    files = []
    for ext in (".py", ".txt", ".sh", ".json", ".md"):
        path = root / f"mixed{ext}"
        lines = []
        for secret in SECRET_LINES:
            lines += [_RNG.choice(PLAIN), secret]
        path.write_text("\n".join(lines) + "\n")
        files.append(str(path))
    yaml = root / "config.yaml"
    yaml.write_text(f"db:\n  password: hunter2-correct-horse\n  token: {_token(40)}\n"
                    f"  folded: >-\n    {_token(30)}\n")
    ini = root / "settings.ini"
    ini.write_text(f"[auth]\napi_key = {_token(40)}\nname = plain\n")
    env = root / "service.env"
    env.write_text(f"SECRET_TOKEN={_token(40)}\nHOME=/root\n")
    allow = root / "allowed.py"
    allow.write_text(f"a = '{_token(40)}'  # pragma: allowlist secret\n"
                     "# pragma: allowlist nextline secret\n"
                     f"b = '{_token(40)}'\n"
                     f"c = '{_token(40)}'\n")
    clean = root / "clean.py"
    clean.write_text("\n".join(PLAIN) + "\n")
    return files + [str(p) for p in (yaml, ini, env, allow, clean)]


def _findings(scan: object, files: list[str]) -> set[tuple[str, int, str, str]]:
    return {(s.filename, s.line_number, s.type, s.secret_hash)
            for name in files for s in scan(name)}  # type: ignore[operator]


def test_the_gated_scan_finds_exactly_what_detect_secrets_finds(tmp_path: Path) -> None:
    from detect_secrets.core import scan as detect_secrets_scan
    from detect_secrets.settings import default_settings

    files = _write_corpus(tmp_path)
    with default_settings():
        assert secrets_scan._sieves() is not None  # every plugin is of a known kind
        theirs = _findings(detect_secrets_scan.scan_file, files)
        ours = _findings(secrets_scan.scan_file, files)
    assert ours == theirs
    kinds = {kind for _, _, kind, _ in theirs}
    assert len(kinds) >= 20, kinds  # the corpus exercises (almost) every plugin
    assert not any(name.endswith("clean.py") for name, *_ in theirs)


def test_with_the_gate_off_every_line_goes_to_every_plugin(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin of a kind not known here turns the sieves off: still the same findings."""
    from detect_secrets.core import scan as detect_secrets_scan
    from detect_secrets.settings import default_settings

    files = _write_corpus(tmp_path)
    monkeypatch.setattr(secrets_scan, "_sieves", lambda: None)
    with default_settings():
        assert len(secrets_scan.flagging_plugins(PLAIN)) == len(PLAIN)
        assert (_findings(secrets_scan.scan_file, files)
                == _findings(detect_secrets_scan.scan_file, files))


@pytest.mark.parametrize("line", SECRET_LINES)
def test_every_line_a_plugin_flags_is_a_candidate(line: str) -> None:
    from detect_secrets.settings import default_settings

    with default_settings():
        assert secrets_scan.candidate_lines(["import os", line, "pass"], "x.py") == {1}


def test_lines_no_plugin_can_flag_are_not_candidates() -> None:
    from detect_secrets.settings import default_settings

    with default_settings():
        assert secrets_scan.candidate_lines(PLAIN, "x.py") == set()


_INI_LINES = ["[section]", "[global]", "key = value", "key: value", "  indented more",
              "\tkey = v", "# comment", "; comment", "", "   ", "plain words", "]", "[",
              "[unclosed", "a=b=c", "=lead", ":lead", "  # indented comment", "password = hunter2"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_INI_LINES), max_size=8))
def test_a_config_file_predicted_to_fail_fails_in_detect_secrets(lines: list[str]) -> None:
    """The fast path skips detect-secrets' INI transformers only on text where they must
    raise ParsingError: checked against the transformers themselves."""
    import io

    from detect_secrets.transformers.config import (
        ConfigFileTransformer,
        EagerConfigFileTransformer,
    )
    from detect_secrets.transformers.exceptions import ParsingError

    text = "\n".join(lines) + "\n"
    for transformer in (ConfigFileTransformer(), EagerConfigFileTransformer()):
        if not secrets_scan._fails(transformer, text):
            continue
        handle = io.StringIO(text)
        handle.name = "x.cfg"  # type: ignore[misc]
        with pytest.raises(ParsingError):
            transformer.parse_file(handle)  # type: ignore[arg-type]


def test_the_predictions_are_not_vacuous() -> None:
    from detect_secrets.transformers.config import ConfigFileTransformer

    assert secrets_scan._fails(ConfigFileTransformer(), "plain text\n")
    assert secrets_scan._fails(ConfigFileTransformer(), "[s]\na = 1\nnot an option\n")
    assert not secrets_scan._fails(ConfigFileTransformer(), "[s]\npassword = hunter2\n")


def _needled_patterns() -> list[tuple[re.Pattern[str], bool, tuple[str, ...]]]:
    from detect_secrets.settings import default_settings

    with default_settings():
        sieves = secrets_scan._sieves()
    assert sieves is not None
    found = []
    for sieve in sieves:
        for pattern in sieve.patterns:
            needles = regex_literals.required_literals(pattern)
            if needles is not None:
                found.append((pattern, sieve.lowered, needles))
    return found


def test_most_plugin_patterns_have_required_strings() -> None:
    found = _needled_patterns()
    assert len(found) >= 25, [p.pattern for p, _, _ in found]
    github = [n for p, _, n in found if p.pattern.startswith("(ghp|")]
    assert github == [("gho", "ghp", "ghr", "ghs", "ghu")]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(40))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_match_of_a_plugin_pattern_holds_one_of_its_required_strings(
        index: int, data: st.DataObject) -> None:
    """The needle test skips a pattern on a text only where the pattern cannot match:
    texts that hold a match, generated from the pattern itself, always hold a needle."""
    found = _needled_patterns()
    if index >= len(found):
        return
    pattern, lowered, needles = found[index]
    text = data.draw(st.from_regex(pattern, fullmatch=False))
    assert pattern.search(text)
    folded = lowered or pattern.flags & re.IGNORECASE
    hay = text.translate(secrets_scan._ASCII_LOWER) if folded and not lowered else text
    assert any(needle in hay for needle in needles), (pattern.pattern, text)


@pytest.mark.parametrize(("pattern", "flags", "needles"), [
    (r"abc|abd", 0, ("abc", "abd")),
    (r"x(?:foo|bar)+y", 0, ("bar", "foo")),
    (r"[ab]cd", 0, ("acd", "bcd")),
    (r"FOO\d", re.IGNORECASE, ("foo",)),
    (r"ab?c", 0, None),  # nothing of 3 characters is required
    (r"(?:abc)?x", 0, None),
    (r"abc|\d+", 0, None),
])
def test_required_literals_of_small_patterns(pattern: str, flags: int,
                                             needles: tuple[str, ...] | None) -> None:
    assert regex_literals.required_literals(re.compile(pattern, flags)) == needles


def _probes() -> list[Any]:
    from detect_secrets.settings import default_settings

    with default_settings():
        sieves = secrets_scan._sieves()
        assert sieves is not None
        return list(secrets_scan._plan(sieves)[0])


@pytest.mark.slow
@pytest.mark.parametrize("index", range(48))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_line_a_sieve_pattern_matches_its_re2_superset_matches(
        index: int, data: st.DataObject) -> None:
    """Arrow drops, in bulk, the lines the RE2 superset does not match (parquet cells):
    lines generated from each sieve pattern itself always match it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from termgrade.validate.re2_superset import re2_superset

    probes = _probes()
    if index >= len(probes):
        return
    probe = probes[index]
    text = data.draw(st.from_regex(probe.pattern, fullmatch=False)).split("\n")
    hay = [line.translate(secrets_scan._ASCII_LOWER) if probe.on_lowered else line
           for line in text]
    matching = [line for line, seen in zip(text, hay, strict=True) if probe.pattern.search(seen)]
    if not matching:
        return
    superset = re2_superset(probe.pattern, lowered=probe.on_lowered)
    assert all(pc.match_substring_regex(pa.array(matching), superset).to_pylist()), (
        probe.pattern.pattern, matching)


def test_the_re2_prefilter_exists_and_keeps_every_secret_line_and_drops_plain_ones() -> None:
    import pyarrow as pa
    import pyarrow.compute as pc
    from detect_secrets.settings import default_settings

    with default_settings():
        pattern = secrets_scan.re2_prefilter()
    assert pattern is not None
    assert all(pc.match_substring_regex(pa.array(SECRET_LINES), pattern).to_pylist())
    assert not any(pc.match_substring_regex(pa.array(PLAIN[:2]), pattern).to_pylist())
