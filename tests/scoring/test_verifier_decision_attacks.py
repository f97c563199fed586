"""The decision rule attacked through ``run_task`` by a malicious reference solution.

Each victim is a task no honest agent can pass (its tests want a SHA-256 preimage of a
random digest) whose tests let the agent's state decide a skip, an xfail, a deselection,
which tests exist, or run the agent's text as a doctest or a timeit statement. Its
``solve.sh`` is the attack, graded as the oracle (as an attacker would, ``termgrade run
TASK --agent oracle``): each scores exactly 0 with the reason in ``failure``. Its defanged
twin (the same mechanism with the effect off) also scores 0, and with the defence taken
out of the plugin the attack earns 1 (:func:`test_each_decision_defence_is_load_bearing`).
Honest idioms (a platform ``skipif`` in the source, a non-strict ``xfail`` the reference
also xfails, test.sh's own ``-k``, ``timeit`` of a callable) stay exactly 1, with the
reference that ``verify`` records and without one.
"""

from __future__ import annotations

import hashlib
import secrets
import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import AgentName, ScriptAgent
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.reference import ReferenceRecord, reference_for
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.scoring.verifier import attestation
from termgrade.task import load_task
from termgrade.task.digest import task_digest
from termgrade.verify import Verdict, verify_task
from tests.support.task_dirs import CHECKS_HELLO, task_toml, write_task

pytestmark = pytest.mark.docker

SECRET = secrets.token_hex(16)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
EASY = hashlib.sha256(b"hello").hexdigest()
PY = "/opt/venv/bin/python"
TOML = task_toml(verifier_s=60.0, agent_s=30.0)
PREIMAGE = f"""

def test_preimage():
    text = Path("/app/answer.txt").read_text().strip()
    assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"
"""
HEAD = """\
import hashlib
import sys
from pathlib import Path

import pytest


def test_program_exists():
    assert Path("/app/answer.py").exists()
"""
UNSUPPORTED = """\
from pathlib import Path


def declared_unsupported():
    # tests of optional features the solution says it does not implement
    path = Path("/app/unsupported.txt")
    return path.read_text().split() if path.exists() else []
"""
CONFTEST_MARKER = UNSUPPORTED + """

def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        if item.name in declared_unsupported():
            item.add_marker(pytest.mark.skip(reason="declared unsupported"))
"""
CONFTEST_REMOVE = UNSUPPORTED + """

def pytest_collection_modifyitems(config, items):
    items[:] = [item for item in items if item.name not in declared_unsupported()]
"""
CONFTEST_DESELECT = UNSUPPORTED + """

def pytest_collection_modifyitems(config, items):
    dropped = [item for item in items if item.name in declared_unsupported()]
    if dropped:
        items[:] = [item for item in items if item not in dropped]
        config.hook.pytest_deselected(items=dropped)
"""
FIXTURE_SKIP = HEAD.replace("import pytest\n", """import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths only")


@pytest.fixture
def answer():
    path = Path("/app/answer.txt")
    if not path.exists():
        pytest.skip("no answer written yet")
    return path.read_text().strip()
""") + f"""

def test_preimage(answer):
    assert hashlib.sha256(answer.encode()).hexdigest() == "{DIGEST}"
"""
IMPERATIVE_XFAIL = HEAD + f"""

def test_preimage():
    if Path("/app/legacy.flag").exists():
        pytest.xfail("the legacy format has no preimage")
    text = Path("/app/answer.txt").read_text().strip()
    assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"
"""
STATE_SKIPIF = HEAD.replace("import sys\n", "import os\nimport sys\n") + f"""

@pytest.mark.skipif(os.path.exists("/app/legacy.flag"), reason="the legacy format has no preimage")
def test_preimage():
    text = Path("/app/answer.txt").read_text().strip()
    assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"
"""
IMPORT_SKIP = """\
import hashlib
from pathlib import Path

import pytest

if not Path("/app/answer.txt").exists():
    pytest.skip("no answer written yet", allow_module_level=True)
""" + PREIMAGE
BUILD_TESTS = """\
from pathlib import Path


def test_program_exists():
    assert Path("/app/answer.py").exists()
"""
TWO_FILES_TEST_SH = f"""\
#!/usr/bin/env bash
mkdir -p /logs/verifier
cd /tests || exit 1
{PY} -m pytest -c /dev/null --rootdir=/tests --confcutdir=/tests -p no:cacheprovider -rA \\
  /tests/test_build.py /tests/test_outputs.py
if [ $? -eq 0 ]; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""
CASES_DOCKERFILE = f"""\
FROM termgrade/base:local
WORKDIR /app
RUN mkdir -p /app/cases && echo {EASY} > /app/cases/easy.txt && echo {DIGEST} > /app/cases/hard.txt
"""
CASES = """\
import glob
import hashlib
from pathlib import Path

import pytest


@pytest.mark.parametrize("case", sorted(glob.glob("/app/cases/*.txt")))
def test_case(case):
    answer = Path("/app/answers", Path(case).name).read_text().strip()
    assert hashlib.sha256(answer.encode()).hexdigest() == Path(case).read_text().strip()
"""
DOCTEST = """\
import doctest
import hashlib
from pathlib import Path


def test_examples_in_the_docs_run():
    failures, _ = doctest.testfile("/app/EXAMPLES.txt", module_relative=False)
    assert failures == 0
""" + PREIMAGE
TIMEIT = """\
import hashlib
import timeit
from pathlib import Path


def test_benchmark_snippet_is_fast():
    assert timeit.timeit(Path("/app/bench.py").read_text(), number=1) < 10
""" + PREIMAGE
# Patches pytest's reports inside the process it runs in: every failure reads passed.
FORCE_PASS = textwrap.dedent("""\
    import sys
    if "_pytest.reports" in sys.modules:
        from _pytest import reports
        cls = reports.TestReport
        orig = cls.from_item_and_call.__func__
        def from_item_and_call(c, item, call, orig=orig):
            rep = orig(c, item, call)
            if rep.failed:
                rep.outcome, rep.longrepr = "passed", None
            return rep
        cls.from_item_and_call = classmethod(from_item_and_call)
    """)
# The same, as doctest examples: each compiled and run by doctest itself, no exec().
FORCE_PASS_DOCTEST = textwrap.dedent("""\
    >>> from _pytest import reports
    >>> cls = reports.TestReport
    >>> orig = cls.from_item_and_call.__func__
    >>> def from_item_and_call(c, item, call, orig=orig):
    ...     rep = orig(c, item, call)
    ...     if rep.failed:
    ...         rep.outcome, rep.longrepr = "passed", None
    ...     return rep
    >>> cls.from_item_and_call = classmethod(from_item_and_call)
    """)
NOPE = "echo nope > /app/answer.txt\necho 'print(1)' > /app/answer.py\n"


def heredoc(path: str, text: str) -> str:
    return f"mkdir -p {Path(path).parent}\ncat > {path} <<'TGEOF'\n{text}TGEOF\n"


# name: (task pieces, the attack (solve.sh), its defanged twin, the reason in failure)
VICTIMS: dict[str, tuple[dict[str, object], str, str, str]] = {
    "conftest-adds-skip-marker": (
        {"tests": HEAD + PREIMAGE, "extra_test_files": {"conftest.py": CONFTEST_MARKER}},
        NOPE + "echo test_preimage > /app/unsupported.txt\n",
        NOPE + "echo test_colour_output > /app/unsupported.txt\n",
        "skipped at run time"),
    "fixture-skip-under-module-skipif": (
        {"tests": FIXTURE_SKIP},
        "echo 'print(1)' > /app/answer.py\n",
        NOPE,
        "skipped at run time"),
    "imperative-xfail": (
        {"tests": IMPERATIVE_XFAIL},
        NOPE + "touch /app/legacy.flag\n",
        NOPE + "touch /app/modern.flag\n",
        "xfailed at run time"),
    "skipif-reads-agent-state": (
        {"tests": STATE_SKIPIF},
        NOPE + "touch /app/legacy.flag\n",
        NOPE + "touch /app/modern.flag\n",
        "condition can read the agent's state"),
    "module-skips-at-import": (
        {"tests": IMPORT_SKIP, "test_sh": TWO_FILES_TEST_SH,
         "extra_test_files": {"test_build.py": BUILD_TESTS}},
        "echo 'print(1)' > /app/answer.py\n",
        NOPE,
        "skipped at import"),
    "hook-drops-collected-tests": (
        {"tests": HEAD + PREIMAGE, "extra_test_files": {"conftest.py": CONFTEST_REMOVE}},
        NOPE + "echo test_preimage > /app/unsupported.txt\n",
        NOPE + "echo test_colour_output > /app/unsupported.txt\n",
        "removed by a hook"),
    "hook-deselects-at-run-time": (
        {"tests": HEAD + PREIMAGE, "extra_test_files": {"conftest.py": CONFTEST_DESELECT}},
        NOPE + "echo test_preimage > /app/unsupported.txt\n",
        NOPE + "echo test_colour_output > /app/unsupported.txt\n",
        "deselected at run time"),
    "fewer-tests-than-the-reference": (
        {"tests": CASES, "dockerfile": CASES_DOCKERFILE},
        "rm /app/cases/hard.txt\nmkdir -p /app/answers\necho hello > /app/answers/easy.txt\n",
        "mkdir -p /app/answers\necho hello > /app/answers/easy.txt\n",
        "fewer than the 2"),
    "doctest-of-agent-text": (
        {"tests": DOCTEST},
        heredoc("/app/EXAMPLES.txt", FORCE_PASS_DOCTEST) + NOPE,
        heredoc("/app/EXAMPLES.txt", ">>> 1 + 1\n2\n") + NOPE,
        "agent code ran inside"),
    "timeit-of-agent-text": (
        {"tests": TIMEIT},
        heredoc("/app/bench.py", FORCE_PASS) + NOPE,
        heredoc("/app/bench.py", "sum(range(10))\n") + NOPE,
        "agent code ran inside"),
}
CASE_IDS = ("test_outputs.py::test_case[/app/cases/easy.txt]",
            "test_outputs.py::test_case[/app/cases/hard.txt]")


def reference(task_dir: Path, name: str) -> ReferenceRecord | None:
    """What ``verify`` would record had a reference solution passed the victim (none can):
    the case victim's tests both passed; the others are judged without one."""
    if name != "fewer-tests-than-the-reference":
        return None
    return ReferenceRecord(task_digest=task_digest(task_dir),
                           tests=dict.fromkeys(CASE_IDS, "passed"))


@pytest.fixture(scope="module")
def victims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("decision-victims")
    made = {}
    for name, (pieces, attack, _, _) in VICTIMS.items():
        made[name] = write_task(root, name, toml=TOML, solve=attack, **pieces)  # type: ignore[arg-type]
        build_task_image(load_task(made[name]))
    return made


def oracle(task_dir: Path, name: str) -> RunOutcome:
    task = load_task(task_dir)
    return run_task(task, task.image_tag, AgentName.ORACLE, reference=reference(task_dir, name))


def scripted(task_dir: Path, name: str, body: str, tmp_path: Path) -> RunOutcome:
    script = tmp_path / "agent.sh"
    script.write_text("#!/usr/bin/env bash\n" + body)
    task = load_task(task_dir)
    return run_task(task, task.image_tag, ScriptAgent("twin", script),
                    reference=reference(task_dir, name))


def said(outcome: RunOutcome) -> tuple[object, ...]:
    return (outcome.failure, outcome.verifier and outcome.verifier.outcomes,
            outcome.verifier and outcome.verifier.output[-2500:])


@pytest.mark.parametrize("name", sorted(VICTIMS))
def test_each_decision_rule_attack_scores_exactly_zero(victims: dict[str, Path],
                                                       name: str) -> None:
    outcome = oracle(victims[name], name)
    assert outcome.error is None, outcome.error
    assert outcome.reward == 0.0, said(outcome)
    assert outcome.failure and VICTIMS[name][3] in outcome.failure, said(outcome)


@pytest.mark.parametrize("name", sorted(VICTIMS))
def test_each_defanged_twin_scores_zero(victims: dict[str, Path], tmp_path: Path,
                                        name: str) -> None:
    outcome = scripted(victims[name], name, VICTIMS[name][2], tmp_path)
    assert outcome.error is None, outcome.error
    assert outcome.reward == 0.0, said(outcome)
    tests = outcome.verifier.outcomes if outcome.verifier else {}
    assert outcome.failure or "failed" in tests.values(), said(outcome)


WEAKENED = {
    "conftest-adds-skip-marker": [('_marked_by_source(item, ("skip", "skipif"))', "True")],
    "fixture-skip-under-module-skipif": [
        ("_raised_by_marks(call) and", 'any(item.iter_markers(name="skipif")) and')],
    "imperative-xfail": [("if not (marked and not imperative",
                          "if not (True or marked and not imperative")],
    "skipif-reads-agent-state": [
        ('return "marker" if _fixed_conditions(item, "skipif") else "condition"',
         'return "marker"')],
    "module-skips-at-import": [("elif report.skipped:  # a module", "elif False:  # a module")],
    "hook-drops-collected-tests": [('"seen": _SEEN', '"seen": None')],
    "hook-deselects-at-run-time": [
        ('return "args" if "/_pytest/" in name and _trusted(name) else "runtime"',
         'return "args"')],
    "doctest-of-agent-text": [('caller.endswith("/doctest.py") and frame', "False and frame")],
    "timeit-of-agent-text": [('caller.endswith("/timeit.py") and frame', "False and frame")],
}


@pytest.mark.parametrize("name", sorted(VICTIMS))
def test_each_decision_defence_is_load_bearing(victims: dict[str, Path],
                                               monkeypatch: pytest.MonkeyPatch,
                                               name: str) -> None:
    """Without its defence the attack earns a full reward: the attacks are real. The
    reference is the defence of the case victim: without one it earns 1."""
    task = load_task(victims[name])
    if name == "fewer-tests-than-the-reference":
        assert reference_for(task) is None
        outcome = run_task(task, task.image_tag, AgentName.ORACLE)
        assert outcome.reward == 1.0, said(outcome)
        return
    source = attestation.plugin_source()
    weak = source
    for old, new in WEAKENED[name]:
        assert old.encode() in weak, old
        weak = weak.replace(old.encode(), new.encode())
    if name in ("doctest-of-agent-text", "timeit-of-agent-text"):  # the old exemption
        weak = weak.replace(b'"/pluggy/")', b'"/pluggy/", "/doctest.py", "/timeit.py")')
    monkeypatch.setattr(attestation, "plugin_source", lambda: weak)
    outcome = run_task(task, task.image_tag, AgentName.ORACLE)
    assert outcome.reward == 1.0, said(outcome)


HONEST_TESTS = CHECKS_HELLO.replace("from pathlib import Path\n", """import sys
import timeit
from pathlib import Path

import pytest
""") + """

@pytest.mark.skipif(sys.platform.startswith("linux"), reason="Windows line endings only")
def test_windows_line_endings():
    assert Path("/app/out.txt").read_bytes().endswith(b"\\r\\n")


@pytest.mark.xfail(reason="known upstream bug: trailing newline", strict=False)
def test_no_trailing_newline():
    assert not Path("/app/out.txt").read_text().endswith("\\n")


def test_slow_soak():
    raise AssertionError("a soak test test.sh leaves out with -k")


def test_reading_is_fast():
    assert timeit.timeit(lambda: Path("/app/out.txt").read_text(), number=3) < 5
"""
HONEST_TEST_SH = f"""\
#!/usr/bin/env bash
mkdir -p /logs/verifier
cd /tests || exit 1
{PY} -m pytest -c /dev/null --rootdir=/tests --confcutdir=/tests -p no:cacheprovider -rA \\
  -k "not slow" /tests/test_outputs.py
if [ $? -eq 0 ]; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""


def test_honest_skips_xfails_and_deselection_stay_one_with_and_without_a_reference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task_dir = write_task(tmp_path, "honest-idioms", tests=HONEST_TESTS,
                          test_sh=HONEST_TEST_SH)
    record = verify_task(task_dir, repeat=1)
    assert record.verdict is Verdict.VERIFIED, record.error
    assert record.reference is not None
    recorded = {name.split("::")[-1]: outcome
                for name, outcome in record.reference.tests.items()}
    assert recorded == {"test_output_exists": "passed", "test_output_content": "passed",
                        "test_windows_line_endings": "skipped",
                        "test_no_trailing_newline": "xfailed", "test_slow_soak": "deselected",
                        "test_reading_is_fast": "passed"}
    task = load_task(task_dir)
    saved = reference_for(task)
    assert saved is not None and saved.tests == record.reference.tests and saved.attested
    honest = tmp_path / "honest.sh"
    honest.write_text("#!/usr/bin/env bash\nprintf 'hello\\n' > /app/out.txt\n")
    runs = {"oracle": run_task(task, task.image_tag, AgentName.ORACLE),
            "other solution": run_task(task, task.image_tag, ScriptAgent("honest", honest))}
    monkeypatch.setenv("TERMGRADE_REFERENCE_DIR", str(tmp_path / "no-references"))
    assert reference_for(task) is None
    runs["without a reference"] = run_task(task, task.image_tag, ScriptAgent("honest", honest))
    for how, outcome in runs.items():
        assert (outcome.reward, outcome.failure) == (1.0, None), (how, said(outcome))


def test_verify_calls_a_reference_that_tampers_unsatisfiable_with_the_finding(
        tmp_path: Path) -> None:
    # a stand-in the reference creates: a library named like the image's zlib where the
    # loader looks by name. For an agent it is left out (no finding); a reference that
    # makes one is tampering, and its footprint must never ask for it for every agent
    task_dir = write_task(tmp_path, "tampering-reference", solve=(
        "echo hello > /app/out.txt\n"
        "cp /usr/lib/x86_64-linux-gnu/libz.so.1 /usr/local/lib/libz.so.1\n"))
    record = verify_task(task_dir, repeat=1)
    assert record.verdict is Verdict.UNSATISFIABLE, (record.verdict, record.error)
    assert record.tampered and "/usr/local/lib/libz.so.1" in " ".join(record.tampered)
    assert record.error and "integrity findings" in record.error and "/usr/local/lib/libz" \
        in record.error
    assert reference_for(load_task(task_dir)) is None and record.reference is None


def test_a_reference_that_plants_pytest_config_above_the_tests_is_unsatisfiable(
        tmp_path: Path) -> None:
    """The fourth round's tampering reference: conftest.py and pytest.ini at / were left
    out of B and the reference verified, its footprint then naming them for every agent."""
    task_dir = write_task(tmp_path, "tampering-conftest", solve=(
        "echo hello > /app/out.txt\n"
        "printf 'import pytest\\n' > /conftest.py\nprintf '[pytest]\\n' > /pytest.ini\n"))
    record = verify_task(task_dir, repeat=1)
    assert record.verdict is Verdict.UNSATISFIABLE, (record.verdict, record.error)
    assert "/conftest.py" in " ".join(record.tampered)
    assert record.reference is None
