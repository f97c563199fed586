import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

APP = Path("/app/ini2json")
TOOL = APP / "ini2json"
INT = re.compile(r"-?(0|[1-9][0-9]*)")
WS = " \t"


class IniError(Exception):
    def __init__(self, line, msg):
        super().__init__(f"line {line}: {msg}")
        self.line = line


def parse_string(v, n):
    out, i = [], 1
    while True:
        if i >= len(v):
            raise IniError(n, "unterminated string")
        ch = v[i]
        if ch == '"':
            if i != len(v) - 1:
                raise IniError(n, "text after closing quote")
            return "".join(out)
        if ch == "\\":
            e = v[i + 1] if i + 1 < len(v) else ""
            simple = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}
            if e in simple:
                out.append(simple[e])
                i += 2
                continue
            if e == "u":
                h = v[i + 2:i + 6]
                if len(h) != 4 or not all(c in "0123456789abcdefABCDEF" for c in h):
                    raise IniError(n, "bad \\u escape")
                cp = int(h, 16)
                if cp == 0 or 0xD800 <= cp <= 0xDFFF:
                    raise IniError(n, "bad \\u escape")
                out.append(chr(cp))
                i += 6
                continue
            raise IniError(n, "bad escape")
        out.append(ch)
        i += 1


def typed(v, n):
    if v.startswith('"'):
        return parse_string(v, n)
    if v == "true":
        return True
    if v == "false":
        return False
    if INT.fullmatch(v) and v != "-0" and -2**63 <= int(v) < 2**63:
        return int(v)
    return v


def ini_to_obj(text):
    root, current = {}, None
    current = root
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for n, raw in enumerate(lines, 1):
        if raw.endswith("\r"):
            raw = raw[:-1]
        line = raw.strip(WS)
        if not line or line[0] in ";#":
            continue
        if line[0] == "[":
            if not line.endswith("]") or len(line) < 2:
                raise IniError(n, "bad section header")
            parts = [p.strip(WS) for p in line[1:-1].split(".")]
            if any(not p for p in parts):
                raise IniError(n, "empty section name")
            obj = root
            for p in parts:
                if p in obj:
                    if not isinstance(obj[p], dict):
                        raise IniError(n, "conflict")
                else:
                    obj[p] = {}
                obj = obj[p]
            current = obj
            continue
        if "=" in line:
            key, _, value = line.partition("=")
            key, value = key.strip(WS), value.strip(WS)
            if not key:
                raise IniError(n, "empty key")
            if isinstance(current.get(key), dict):
                raise IniError(n, "conflict")
            current[key] = typed(value, n)
            continue
        raise IniError(n, "expected a section, key = value, or comment")
    return root


def ini2json(data: bytes):
    """(exit code, stdout bytes, error line or None)."""
    try:
        obj = ini_to_obj(data.decode("utf-8"))
    except IniError as exc:
        return 1, b"", exc.line
    return 0, (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode(), None


ASAN_ENV = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0", "UBSAN_OPTIONS": "halt_on_error=1"}


@pytest.fixture(scope="module")
def asan(tmp_path_factory):
    work = tmp_path_factory.mktemp("asan")
    srcs = sorted(str(p) for p in APP.glob("*.c")) + sorted(str(p) for p in APP.glob("src/*.c"))
    assert srcs, "no C sources found"
    incs = [f"-I{APP}", f"-I{APP / 'include'}", f"-I{APP / 'src'}"]
    out = work / "ini2json-asan"
    res = subprocess.run(["gcc", "-std=c11", "-g", "-O1", "-fsanitize=address,undefined",
                          "-fno-sanitize-recover=undefined", *incs, *srcs, "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return out


def run(data=None, args=(), binary=TOOL, env=None):
    return subprocess.run([str(binary), *args], input=data, capture_output=True, timeout=60, env=env)


def check(data, binary=TOOL):
    want_rc, want_out, want_line = ini2json(data)
    res = run(data, binary=binary, env=ASAN_ENV)
    err = res.stderr.decode("utf-8", "replace")
    assert "Sanitizer" not in err and "runtime error" not in err, err[-2000:]
    assert res.returncode == want_rc, (data[:300], err[-300:])
    assert res.stdout == want_out, data[:300]
    if want_rc == 1:
        assert re.match(rf"ini2json: line {want_line}: \S", err), err
    return res


def test_builds_with_make_and_required_flags(tmp_path):
    tree = tmp_path / "src"
    shutil.copytree(APP, tree, ignore=shutil.ignore_patterns("ini2json"))
    dry = subprocess.run(["make", "-n", "-C", str(tree)], capture_output=True, text=True, timeout=120)
    res = subprocess.run(["make", "-C", str(tree)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tree / "ini2json").is_file()
    flags = " ".join(dry.stdout.split())
    for flag in ("-std=c11", "-Wall", "-Wextra", "-Werror"):
        assert f" {flag}" in f" {flags}", flag
    assert "warning:" not in res.stdout + res.stderr
    subprocess.run(["make", "-C", str(tree), "clean"], capture_output=True, timeout=60, check=True)
    assert not (tree / "ini2json").exists()


def test_example_matches_exactly():
    res = run(args=[str(APP / "examples" / "service.ini")])
    assert res.returncode == 0
    assert res.stdout == (APP / "examples" / "service.json").read_bytes()


def test_stdin_and_dash():
    data = b"a = 1\n"
    assert run(data).stdout == b'{"a":1}\n'
    assert run(data, args=["-"]).stdout == b'{"a":1}\n'


def test_empty_inputs():
    for data in (b"", b"\n\n", b"; only a comment\n# another\n", b"   \t  \n"):
        assert run(data).stdout == b"{}\n"


def test_types():
    res = check(b"t = true\nf = false\nT = True\nz = 0\nn = -42\nlz = 007\nnz = -0\nflt = 1.5\n"
                b"big = 9223372036854775807\nbig2 = 9223372036854775808\nsmall = -9223372036854775808\n"
                b"small2 = -9223372036854775809\nempty =\nplus = +5\n")
    obj = json.loads(res.stdout)
    assert obj == {"t": True, "f": False, "T": "True", "z": 0, "n": -42, "lz": "007", "nz": "-0",
                   "flt": "1.5", "big": 9223372036854775807, "big2": "9223372036854775808",
                   "small": -9223372036854775808, "small2": "-9223372036854775809", "empty": "",
                   "plus": "+5"}


def test_quoted_strings_and_escapes():
    res = check(b'a = "x = y ; not a comment"\nb = "tab\\there"\nc = "q\\"uote\\\\"\n'
                b'd = "\\u00e9\\u4E2D\\u0001"\ne = ""\nf = "  padded  "\n')
    obj = json.loads(res.stdout)
    assert obj == {"a": "x = y ; not a comment", "b": "tab\there", "c": 'q"uote\\',
                   "d": "é中\x01", "e": "", "f": "  padded  "}


def test_output_escaping_exact():
    res = check(b'k = "\\u0008\\u000c\\n\\r\\t\\u001f/\\u007f"\nraw = a\x01b\n')
    assert res.stdout == b'{"k":"\\b\\f\\n\\r\\t\\u001f/\x7f","raw":"a\\u0001b"}\n'


def test_unicode_passthrough():
    res = check("név = ünïcödé ✓\n[節]\nキー = 値\n".encode())
    assert res.stdout == '{"név":"ünïcödé ✓","節":{"キー":"値"}}\n'.encode()


def test_sections_nesting_and_reopen():
    res = check(b"top = 1\n[a]\nx = 1\n[a.b.c]\ny = 2\n[ d . e ]\nz = 3\n[a]\nw = 4\n[a.b]\nv = 5\n")
    assert res.stdout == b'{"top":1,"a":{"x":1,"b":{"c":{"y":2},"v":5},"w":4},"d":{"e":{"z":3}}}\n'


def test_duplicate_key_keeps_position():
    res = check(b"a = 1\nb = 2\na = three\n[s]\nk = 1\n[t]\n[s]\nk = true\n")
    assert res.stdout == b'{"a":"three","b":2,"s":{"k":true},"t":{}}\n'


def test_whitespace_and_key_rules():
    res = check(b"\t spaced key \t=\t value with  inner  spaces \t\nk==v\ndots.in.key = 1\nk2 = a=b\n")
    assert json.loads(res.stdout) == {"spaced key": "value with  inner  spaces", "k": "=v",
                                      "dots.in.key": 1, "k2": "a=b"}


def test_crlf_and_missing_final_newline():
    res = check(b"[s]\r\na = 1\r\nb = \"x\"\r\nc = last")
    assert res.stdout == b'{"s":{"a":1,"b":"x","c":"last"}}\n'


@pytest.mark.parametrize("data, line", [
    (b"a = 1\njust words\n", 2),
    (b"[ok]\n[]\n", 2),
    (b"[a..b]\n", 1),
    (b"[a.  .b]\n", 1),
    (b"x = 1\n[open\n", 2),
    (b"\n\n = value\n", 3),
    (b'a = "unterminated\n', 1),
    (b'a = "bad \\q escape"\n', 1),
    (b'a = "x"y"\n', 1),
    (b'a = "x" trailing\n', 1),
    (b'a = "\\u12"\n', 1),
    (b'a = "\\u0000"\n', 1),
    (b'a = "\\uD83D"\n', 1),
    (b"[a.b]\n[a]\nb = 1\n", 3),
    (b"a = 1\n[a.b]\n", 2),
], ids=["no-equals", "empty-header", "empty-part", "blank-part", "unclosed-header", "empty-key",
        "unterminated", "bad-escape", "inner-quote", "after-quote", "short-u", "u0000", "surrogate",
        "key-is-section", "section-through-value"])
def test_errors_report_line(data, line):
    res = check(data)
    assert res.returncode == 1
    assert res.stdout == b""
    assert res.stderr.decode().startswith(f"ini2json: line {line}: ")


def test_missing_file_and_usage(tmp_path):
    res = run(args=[str(tmp_path / "missing.ini")])
    assert res.returncode == 2 and res.stderr and not res.stdout
    res = run(args=["a.ini", "b.ini"])
    assert res.returncode == 2 and res.stderr and not res.stdout


def test_long_lines_and_many_keys():
    value = "v" * 200000
    lines = ["[big]", f"long = {value}"] + [f"k{i} = {i}" for i in range(3000)]
    data = ("\n".join(lines) + "\n").encode()
    res = check(data)
    obj = json.loads(res.stdout)
    assert obj["big"]["long"] == value and obj["big"]["k2999"] == 2999
    assert list(obj["big"])[:3] == ["long", "k0", "k1"]


def test_sanitizer_clean_on_tricky_inputs(asan):
    samples = [b"", b"[a]\n", b'a = "\\u00e9"\n', b'a = "\\', b'a = "\\u', b"[", b"]", b"=", b"[.]\n",
               b"a = " + b"x" * 5000, b"k = -", b"k = -9223372036854775808\n", b'"', b'k="', b"\r", b"\r\n\r\n"]
    for data in samples:
        check(data, binary=asan)


def test_random_documents(asan):
    rnd = random.Random(31337)
    keys = ["a", "b", "c", "x y", "k.v", "ключ"]
    vals = ['"q\\"uo\\\\te"', '"\\u00e9\\u4e2d\\t"', "true", "false", "0", "-0", "12", "007",
            "9223372036854775807", "9223372036854775808", "plain text", "", '"unterminated', '"a"b',
            "café", "\x02ctl", '""', '"\\u00zz"']
    secs = ["a", "b", "a.b", " c . d ", "x", "a.c", "a..b"]
    for _ in range(250):
        lines = []
        for _ in range(rnd.randint(0, 14)):
            r = rnd.random()
            if r < 0.2:
                lines.append(f"[{rnd.choice(secs)}]")
            elif r < 0.85:
                lines.append(f"{rnd.choice([' ', '', chr(9)])}{rnd.choice(keys)}"
                             f"{rnd.choice([' = ', '=', ' =  '])}{rnd.choice(vals)}{rnd.choice(['', ' '])}")
            else:
                lines.append(rnd.choice(["; c", "# c", "", "  ", "garbage"]))
        data = rnd.choice(["\n", "\r\n"]).join(lines).encode() + rnd.choice([b"", b"\n"])
        check(data, binary=asan)
        check(data)
