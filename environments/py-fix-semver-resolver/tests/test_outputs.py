import importlib
import json
import random
import re
import subprocess
import sys

import pytest

sys.path.insert(0, "/app")


@pytest.fixture(scope="module")
def ds():
    for name in [m for m in sys.modules if m == "depsolve" or m.startswith("depsolve.")]:
        del sys.modules[name]
    return importlib.import_module("depsolve")


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
def test_package_imports_from_app(ds):
    assert ds.__file__.startswith("/app/depsolve/")


def test_parse_valid_and_str_roundtrip(ds):
    for text in ["0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x-y-z.--",
                 "1.0.0+build.7", "1.0.0-rc.1+exp.sha.5114f85"]:
        assert str(ds.Version.parse(text)) == text


@pytest.mark.parametrize("bad", ["1", "1.2", "01.2.3", "1.02.3", "1.2.3-01", "1.2.3-", "1.2.3+", "v1.2.3",
                                 "1.2.3.4", "1.2.3-a..b", " 1.2.3", "1.2.3-beta!"])
def test_parse_invalid(ds, bad):
    with pytest.raises(ValueError):
        ds.Version.parse(bad)


def test_precedence_order(ds):
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
               "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.9.0", "1.10.0", "2.0.0-0", "2.0.0"]
    versions = [ds.Version.parse(v) for v in ordered]
    shuffled = versions[:]
    random.Random(4).shuffle(shuffled)
    assert [str(v) for v in sorted(shuffled)] == ordered
    assert all(a < b for a, b in zip(versions, versions[1:]))


def test_build_metadata_ignored(ds):
    a, b, c = ds.Version.parse("1.0.0+b7"), ds.Version.parse("1.0.0"), ds.Version.parse("1.0.0+zz")
    assert a == b == c and hash(a) == hash(b) and not a < b and not c > a
    assert len({a, b, c}) == 1
    assert ds.Version.parse("1.0.0-rc.1+b") < ds.Version.parse("1.0.0")


# ---- constraints ----
@pytest.mark.parametrize("constraint, yes, no", [
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
])
def test_constraint_ranges(ds, constraint, yes, no):
    c = ds.Constraint(constraint)
    for v in yes:
        assert c.allows(ds.Version.parse(v)), (constraint, v)
    for v in no:
        assert not c.allows(ds.Version.parse(v)), (constraint, v)


def test_whitespace_in_constraints(ds):
    c = ds.Constraint("  >=1.0.0    <1.5.0  ||   ^3.0.0\t")
    assert c.allows(ds.Version.parse("1.4.0")) and c.allows(ds.Version.parse("3.2.0"))
    assert not c.allows(ds.Version.parse("2.0.0"))


@pytest.mark.parametrize("bad", ["", "   ", "^1.0.0 ||", "|| 1.0.0", ">=1.0", "^1", "~x.y.z"])
def test_invalid_constraints(ds, bad):
    with pytest.raises(ValueError):
        ds.Constraint(bad)


def test_prerelease_rule(ds):
    c = ds.Constraint(">=1.2.3-alpha.1 <2.0.0")
    assert c.allows(ds.Version.parse("1.2.3-alpha.7"))
    assert c.allows(ds.Version.parse("1.2.3"))
    assert not c.allows(ds.Version.parse("1.3.0-beta"))
    assert not c.allows(ds.Version.parse("1.2.3-alpha.0"))
    assert not ds.Constraint("^2.0.0").allows(ds.Version.parse("2.1.0-beta.1"))
    assert ds.Constraint("^2.1.0-beta.1").allows(ds.Version.parse("2.1.0-beta.2"))
    assert ds.Constraint("<1.0.0 || ~2.0.0-rc.1").allows(ds.Version.parse("2.0.0-rc.2"))


# ---- resolution ----
def test_resolve_sample_index_needs_backtracking(ds):
    index = json.load(open("/app/index.json"))
    got = ds.resolve(index, [("web", "^2.0.0")])
    assert {k: str(v) for k, v in got.items()} == {"web": "2.3.0", "http": "1.10.2", "log": "0.3.9"}


def test_resolve_prefers_highest_by_precedence(ds):
    index = {"a": {"1.9.0": {}, "1.10.0": {}, "1.10.0-rc.1": {}, "1.2.0": {}}}
    assert str(ds.resolve(index, [("a", "^1.0.0")])["a"]) == "1.10.0"


def test_resolve_explicit_prerelease(ds):
    index = json.load(open("/app/index.json"))
    got = ds.resolve(index, [("cli", ">=1.0.0-alpha.1 <1.0.0")])
    assert {k: str(v) for k, v in got.items()} == {"cli": "1.0.0-beta", "web": "2.3.0", "http": "1.10.2",
                                                   "log": "0.3.9"}
    got = ds.resolve(index, [("cli", "~1.0.0-alpha.2 <1.0.0-beta")])
    assert str(got["cli"]) == "1.0.0-alpha.10"


def test_resolve_build_metadata_version(ds):
    index = json.load(open("/app/index.json"))
    got = ds.resolve(index, [("tls", "=1.2.1")])
    assert {k: str(v) for k, v in got.items()} == {"tls": "1.2.1+build.7", "log": "0.4.0"}


def test_resolve_no_solution(ds):
    index = json.load(open("/app/index.json"))
    with pytest.raises(ds.ResolutionError):
        ds.resolve(index, [("web", "^2.10.0"), ("tls", "^1.2.0")])
    with pytest.raises(ds.ResolutionError):
        ds.resolve({"a": {"1.0.0": {"ghost": "*"}}}, [("a", "*")])


def test_resolve_cycle_and_shared_dependency(ds):
    index = {"a": {"1.0.0": {"b": "^1.0.0"}, "1.1.0": {"b": "^2.0.0"}},
             "b": {"1.0.0": {"a": "*"}, "2.0.0": {"a": "<1.1.0"}}}
    got = ds.resolve(index, [("a", "*")])
    assert {k: str(v) for k, v in got.items()} == {"a": "1.0.0", "b": "1.0.0"}


def test_random_resolutions_match_reference(ds):
    rnd = random.Random(1234)
    names = ["a", "b", "c", "d", "e"]
    pool = ["0.1.0", "0.1.5", "0.2.0", "1.0.0", "1.2.0", "1.10.0", "1.9.3", "2.0.0-rc.1", "2.0.0", "2.0.0+b1", "3.1.4"]
    cons = ["*", "^1.0.0", "^0.1.0", "~1.2.0", ">=1.0.0 <2.0.0", "<1.0.0 || >=3.0.0", "^2.0.0-rc.1", "=1.9.3",
            ">0.1.0", "^0.2.0"]
    checked = 0
    for _ in range(220):
        index = {}
        for n in names:
            vs = rnd.sample([p for p in pool if p != "2.0.0+b1"] + (["2.0.0+b1"] if rnd.random() < 0.3 else []),
                            rnd.randint(1, 5))
            vs = list(dict((rkey(v), v) for v in vs).values())
            index[n] = {v: {d: rnd.choice(cons) for d in rnd.sample(names, rnd.randint(0, 2)) if d != n}
                        for v in vs}
        reqs = [(rnd.choice(names), rnd.choice(cons)) for _ in range(rnd.randint(1, 2))]
        want = rresolve(index, reqs)
        if want is None:
            with pytest.raises(ds.ResolutionError):
                ds.resolve(index, reqs)
        else:
            got = ds.resolve(index, reqs)
            assert {k: str(v) for k, v in got.items()} == want, (index, reqs)
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
