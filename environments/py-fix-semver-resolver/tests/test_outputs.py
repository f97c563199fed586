"""depsolve's tests. The package runs in a child process (app_bridge), never in pytest's."""

import json
import random
import re
import subprocess
import sys

import pytest
from app_bridge import app_call, app_calls, app_calls_shared, raised


def cli(*args):
    return subprocess.run([sys.executable, "-m", "depsolve", *args], capture_output=True, text=True,
                          cwd="/app", timeout=60)


# ---- an independent reference of the spec, used for randomized checks ----
def rkey(text):
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?", text)
    pre = (1,) if not m[4] else (0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in m[4].split(".")))
    return (int(m[1]), int(m[2]), int(m[3])), pre


def rallows(text, v):
    rel, pre = rkey(v)
    for alt in text.split("||"):
        prims = []
        for tok in alt.split():
            if tok == "*":
                continue
            op, ver = re.fullmatch(r"(\^|~|>=|<=|>|<|=)?(.+)", tok).groups()
            op = op or "="
            b = rkey(ver)
            if op == "^":
                M, m_, p = b[0]
                up = (M + 1, 0, 0) if M else ((0, m_ + 1, 0) if m_ else (0, 0, p + 1))
                prims += [(">=", b), ("<", (up, (1,)))]
            elif op == "~":
                prims += [(">=", b), ("<", ((b[0][0], b[0][1] + 1, 0), (1,)))]
            else:
                prims.append((op, b))
        k = (rel, pre)
        ok = all({">=": k >= b, "<=": k <= b, ">": k > b, "<": k < b, "=": k == b}[op] for op, b in prims)
        if ok and pre != (1,):
            ok = any(b[1] != (1,) and b[0] == rel for _, b in prims)
        if ok:
            return True
    return False


def rresolve(index, reqs):
    def search(decided, cons):
        pending = sorted(n for n in cons if n not in decided)
        if not pending:
            return decided
        name = pending[0]
        for cand in sorted(index.get(name, {}), key=rkey, reverse=True):
            if not all(rallows(c, cand) for c in cons[name]):
                continue
            nc = {n: list(cs) for n, cs in cons.items()}
            for dep, c in index[name][cand].items():
                nc.setdefault(dep, []).append(c)
            nd = {**decided, name: cand}
            if any(not all(rallows(c, v) for c in nc.get(n, [])) for n, v in nd.items()):
                continue
            found = search(nd, nc)
            if found is not None:
                return found
        return None
    cons = {}
    for n, c in reqs:
        cons.setdefault(n, []).append(c)
    return search({}, cons)


# ---- versions ----
def test_package_imports_from_app():
    assert app_call("package_file").startswith("/app/depsolve/")


def test_parse_valid_and_str_roundtrip():
    texts = ["0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x-y-z.--",
             "1.0.0+build.7", "1.0.0-rc.1+exp.sha.5114f85"]
    for text, shown in zip(texts, app_calls(*[("version_str", text) for text in texts]), strict=True):
        assert shown == text


# The cases of a parametrized test share one child process (app_calls_shared).
BAD_VERSIONS = ["1", "1.2", "01.2.3", "1.02.3", "1.2.3-01", "1.2.3-", "1.2.3+", "v1.2.3", "1.2.3.4",
                "1.2.3-a..b", " 1.2.3", "1.2.3-beta!"]


@pytest.mark.parametrize("bad", BAD_VERSIONS)
def test_parse_invalid(bad):
    [result] = app_calls_shared(BAD_VERSIONS, bad, lambda bad: [("version_parse", bad)])
    assert raised(result, ValueError), result


def test_precedence_order():
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
               "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.9.0", "1.10.0", "2.0.0-0", "2.0.0"]
    shuffled = ordered[:]
    random.Random(4).shuffle(shuffled)
    in_order, *ascending = app_calls(("sorted", shuffled),
                                     *[("less_than", a, b) for a, b in zip(ordered, ordered[1:])])
    assert in_order == ordered
    assert all(ascending)


def test_build_metadata_ignored():
    a, b, c = "1.0.0+b7", "1.0.0", "1.0.0+zz"
    ab, bc, ca, distinct, rc_first = app_calls(("relations", a, b), ("relations", b, c),
                                               ("relations", c, a), ("distinct", [a, b, c]),
                                               ("less_than", "1.0.0-rc.1+b", "1.0.0"))
    assert ab.eq and bc.eq and ab.same_hash and not ab.lt and not ca.gt
    assert distinct == 1
    assert rc_first


# ---- constraints ----
RANGES = [
    ("^1.2.3", ["1.2.3", "1.9.9", "1.10.0"], ["1.2.2", "2.0.0", "2.0.0-alpha"]),
    ("^0.2.3", ["0.2.3", "0.2.10"], ["0.3.0", "1.0.0", "0.2.2"]),
    ("^0.0.3", ["0.0.3"], ["0.0.4", "0.1.0"]),
    ("~1.2.3", ["1.2.3", "1.2.99"], ["1.3.0", "2.0.0", "1.2.2"]),
    ("~0.3.1", ["0.3.1", "0.3.9"], ["0.4.0", "0.3.0"]),
    ("=1.2.3", ["1.2.3", "1.2.3+build.9"], ["1.2.4", "1.2.3-rc.1"]),
    ("1.2.3", ["1.2.3"], ["1.2.30"]),
    (">1.2.3 <=1.4.0", ["1.2.4", "1.4.0"], ["1.2.3", "1.4.1"]),
    ("*", ["0.0.1", "99.0.0"], ["1.0.0-rc.1"]),
    ("<1.0.0 || >=2.0.0", ["0.9.0", "2.0.0", "3.1.0"], ["1.5.0"]),
]


@pytest.mark.parametrize("constraint, yes, no", RANGES)
def test_constraint_ranges(constraint, yes, no):
    allowed, refused = app_calls_shared(RANGES, (constraint, yes, no), lambda case: [
        ("allows", case[0], case[1]), ("allows", case[0], case[2])])
    for v, ok in zip(yes, allowed, strict=True):
        assert ok, (constraint, v)
    for v, ok in zip(no, refused, strict=True):
        assert not ok, (constraint, v)


def test_whitespace_in_constraints():
    low, high, between = app_call("allows", "  >=1.0.0    <1.5.0  ||   ^3.0.0\t", ["1.4.0", "3.2.0", "2.0.0"])
    assert low and high
    assert not between


BAD_CONSTRAINTS = ["", "   ", "^1.0.0 ||", "|| 1.0.0", ">=1.0", "^1", "~x.y.z"]


@pytest.mark.parametrize("bad", BAD_CONSTRAINTS)
def test_invalid_constraints(bad):
    [result] = app_calls_shared(BAD_CONSTRAINTS, bad, lambda bad: [("constraint", bad)])
    assert raised(result, ValueError), result


def test_prerelease_rule():
    ranged, [caret], [caret_pre], [alternative] = app_calls(
        ("allows", ">=1.2.3-alpha.1 <2.0.0", ["1.2.3-alpha.7", "1.2.3", "1.3.0-beta", "1.2.3-alpha.0"]),
        ("allows", "^2.0.0", ["2.1.0-beta.1"]), ("allows", "^2.1.0-beta.1", ["2.1.0-beta.2"]),
        ("allows", "<1.0.0 || ~2.0.0-rc.1", ["2.0.0-rc.2"]))
    same_pre, release, other_pre, lower_pre = ranged
    assert same_pre
    assert release
    assert not other_pre
    assert not lower_pre
    assert not caret
    assert caret_pre
    assert alternative


# ---- resolution ----
def test_resolve_sample_index_needs_backtracking():
    index = json.load(open("/app/index.json"))
    got = app_call("resolve", index, [("web", "^2.0.0")])
    assert got == {"web": "2.3.0", "http": "1.10.2", "log": "0.3.9"}


def test_resolve_prefers_highest_by_precedence():
    index = {"a": {"1.9.0": {}, "1.10.0": {}, "1.10.0-rc.1": {}, "1.2.0": {}}}
    assert app_call("resolve", index, [("a", "^1.0.0")])["a"] == "1.10.0"


def test_resolve_explicit_prerelease():
    index = json.load(open("/app/index.json"))
    got, got2 = app_calls(("resolve", index, [("cli", ">=1.0.0-alpha.1 <1.0.0")]),
                          ("resolve", index, [("cli", "~1.0.0-alpha.2 <1.0.0-beta")]))
    assert got == {"cli": "1.0.0-beta", "web": "2.3.0", "http": "1.10.2", "log": "0.3.9"}
    assert got2["cli"] == "1.0.0-alpha.10"


def test_resolve_build_metadata_version():
    index = json.load(open("/app/index.json"))
    got = app_call("resolve", index, [("tls", "=1.2.1")])
    assert got == {"tls": "1.2.1+build.7", "log": "0.4.0"}


def test_resolve_no_solution():
    index = json.load(open("/app/index.json"))
    conflict, missing, resolution_error = app_calls(
        ("resolve", index, [("web", "^2.10.0"), ("tls", "^1.2.0")]),
        ("resolve", {"a": {"1.0.0": {"ghost": "*"}}}, [("a", "*")]), ("ResolutionError",))
    assert raised(conflict, resolution_error), conflict
    assert raised(missing, resolution_error), missing


def test_resolve_cycle_and_shared_dependency():
    index = {"a": {"1.0.0": {"b": "^1.0.0"}, "1.1.0": {"b": "^2.0.0"}},
             "b": {"1.0.0": {"a": "*"}, "2.0.0": {"a": "<1.1.0"}}}
    got = app_call("resolve", index, [("a", "*")])
    assert got == {"a": "1.0.0", "b": "1.0.0"}


def test_random_resolutions_match_reference():
    rnd = random.Random(1234)
    names = ["a", "b", "c", "d", "e"]
    pool = ["0.1.0", "0.1.5", "0.2.0", "1.0.0", "1.2.0", "1.10.0", "1.9.3", "2.0.0-rc.1", "2.0.0", "2.0.0+b1", "3.1.4"]
    cons = ["*", "^1.0.0", "^0.1.0", "~1.2.0", ">=1.0.0 <2.0.0", "<1.0.0 || >=3.0.0", "^2.0.0-rc.1", "=1.9.3",
            ">0.1.0", "^0.2.0"]
    cases = []
    for _ in range(220):
        index = {}
        for n in names:
            vs = rnd.sample([p for p in pool if p != "2.0.0+b1"] + (["2.0.0+b1"] if rnd.random() < 0.3 else []),
                            rnd.randint(1, 5))
            vs = list(dict((rkey(v), v) for v in vs).values())
            index[n] = {v: {d: rnd.choice(cons) for d in rnd.sample(names, rnd.randint(0, 2)) if d != n}
                        for v in vs}
        reqs = [(rnd.choice(names), rnd.choice(cons)) for _ in range(rnd.randint(1, 2))]
        cases.append((index, reqs, rresolve(index, reqs)))
    resolution_error, *results = app_calls(("ResolutionError",),
                                           *[("resolve", index, reqs) for index, reqs, _ in cases])
    checked = 0
    for (index, reqs, want), got in zip(cases, results, strict=True):
        if want is None:
            assert raised(got, resolution_error), (index, reqs, got)
        else:
            assert got == want, (index, reqs)
            checked += 1
    assert checked > 50


# ---- command line ----
def test_cli_output_and_exit_codes(tmp_path):
    res = cli("/app/index.json", "web@^2.0.0")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "http 1.10.2\nlog 0.3.9\nweb 2.3.0\n"
    res = cli("/app/index.json", "web@^2.10.0", "tls@^1.2.0")
    assert res.returncode == 1 and res.stderr.strip() and res.stdout == ""
    assert cli("/app/index.json").returncode == 2
    assert cli("/app/index.json", "web").returncode == 2
    assert cli("/app/index.json", "web@^2").returncode == 2
    assert cli(str(tmp_path / "none.json"), "web@*").returncode == 2
