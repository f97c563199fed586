"""One fixture task per verdict, run through real containers."""

from __future__ import annotations

import pytest

from termgrade.verify import Verdict, verify_task
from tests.support.task_dirs import MakeTask

pytestmark = pytest.mark.docker


def test_verified(make_task: MakeTask) -> None:
    record = verify_task(make_task("ok-task"), repeat=2)
    assert record.verdict is Verdict.VERIFIED, record.error
    assert record.oracle_rewards == [1.0, 1.0]
    assert record.nop_reward == 0.0
    assert record.n_assertions == 2
    assert {t.name for t in record.tests} == {"test_output_exists", "test_output_content"}
    assert all(t.outcome == "passed" for t in record.tests)
    assert record.tampered == []
    assert record.durations["oracle_verify"] > 0


def test_unsatisfiable(make_task: MakeTask) -> None:
    record = verify_task(make_task("never", solve="echo goodbye > /app/out.txt\n"), repeat=2)
    assert record.verdict is Verdict.UNSATISFIABLE
    assert record.oracle_rewards == [0.0, 0.0]
    outcomes = {t.name: t.outcome for t in record.tests}
    assert outcomes == {"test_output_exists": "passed", "test_output_content": "failed"}
    # the reason names the failing reference test and what its assertion said
    assert record.reason is not None and "fails 1 test(s): test_output_content: " in record.reason
    assert "goodbye" in record.reason, record.reason
    failing = [e for e in record.test_evidence if e.outcome == "failed"]
    assert len(failing) == 1 and failing[0].repr and "assert" in failing[0].repr


def test_flaky(make_task: MakeTask) -> None:
    # Each container has a random hostname (12 hex digits): the solution passes when its
    # first digit is below 8, so each run passes with probability 1/2. Twelve runs all
    # agreeing has probability 2/4096.
    solve = 'case "$(hostname)" in [0-7]*) echo hello;; *) echo nope;; esac > /app/out.txt\n'
    record = verify_task(make_task("coin", solve=solve), repeat=12)
    assert record.verdict is Verdict.FLAKY, record.oracle_rewards
    assert 0 < sum(r == 1.0 for r in record.oracle_rewards) < 12


def test_vacuous_when_untouched_container_passes(make_task: MakeTask) -> None:
    tests = "def test_always():\n    assert 1 + 1 == 2\n"
    record = verify_task(make_task("always", tests=tests), repeat=1)
    assert record.verdict is Verdict.VACUOUS
    assert record.nop_reward == 1.0
    assert "untouched container passes" in (record.error or "")
    assert record.reason == "the untouched container passes 1 test(s): test_always"


def test_vacuous_when_every_test_is_skipped(make_task: MakeTask) -> None:
    tests = "import pytest\n\n@pytest.mark.skip\ndef test_a():\n    pass\n\n" \
            "@pytest.mark.skip\ndef test_b():\n    pass\n"
    # This verifier rewards only when the output exists, so the nop run fails: the
    # verdict must come from the all-skipped report.
    test_sh = ("#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
               "/opt/venv/bin/python -m pytest -c /dev/null --rootdir=/tests -p no:cacheprovider "
               "--junitxml /logs/verifier/junit.xml /tests/test_outputs.py\n"
               "if [ $? -eq 0 ] && [ -f /app/out.txt ]; then echo 1; else echo 0; fi "
               "> /logs/verifier/reward.txt\n")
    record = verify_task(make_task("skips", tests=tests, test_sh=test_sh), repeat=1)
    assert record.nop_reward == 0.0
    assert record.verdict is Verdict.VACUOUS
    assert record.n_assertions == 2
    assert "skipped" in (record.error or "")


def test_build_failed_offline(make_task: MakeTask) -> None:
    dockerfile = "FROM termgrade/base:local\nRUN curl -sSf http://deb.debian.org/ >/dev/null\n"
    record = verify_task(make_task("needs-net", dockerfile=dockerfile), repeat=1)
    assert record.verdict is Verdict.BUILD_FAILED
    assert "Dockerfile" in (record.error or "")
    assert "no network" in (record.error or "")
    assert record.reason is not None and "`RUN curl -sSf http://deb.debian.org/" in record.reason
    assert "the build has no network" in record.reason


def test_build_failed_typo_is_not_blamed_on_the_network(make_task: MakeTask) -> None:
    dockerfile = "FROM termgrade/base:local\nRUN chmdo +x /etc/hostname\n"
    record = verify_task(make_task("typo", dockerfile=dockerfile), repeat=1)
    assert record.verdict is Verdict.BUILD_FAILED
    reason = record.reason or ""
    assert "`RUN chmdo +x /etc/hostname` exited 127" in reason, reason
    assert "chmdo: not found" in reason and "network" not in reason
    assert "\x1b[" not in reason and "\x1b[" not in (record.error or "")


@pytest.mark.parametrize(
    ("name", "test_sh", "needle"),
    [
        ("crash", "#!/usr/bin/env bash\nexit 3\n", "wrote no reward"),
        ("garbage", "#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
                    "echo banana > /logs/verifier/reward.txt\n", "not a number"),
        ("bad-json", "#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
                     "echo '{\"reward\": NaN}' > /logs/verifier/reward.json\n", "non-finite"),
    ],
)
def test_error_when_verifier_writes_no_usable_reward(
    make_task: MakeTask, name: str, test_sh: str, needle: str
) -> None:
    record = verify_task(make_task(name, test_sh=test_sh), repeat=1)
    # Scored, not unscored: a verifier failure after the agent phase is a 0 with its
    # reason; verify names it an error because the task's own oracle hit it.
    assert record.verdict is Verdict.ERROR
    assert record.oracle_rewards == [0.0]
    assert needle in (record.error or "")
    assert "test.sh" in (record.error or "")


def test_error_when_verifier_times_out(make_task: MakeTask) -> None:
    toml = '[verifier]\ntimeout_sec = 3.0\n[metadata]\ndifficulty = "easy"\n'
    test_sh = "#!/usr/bin/env bash\nsleep 120\n"
    record = verify_task(make_task("slow-verifier", test_sh=test_sh, toml=toml), repeat=1)
    assert record.verdict is Verdict.ERROR
    assert "timed out after 3 s" in (record.error or "")
    assert record.durations["oracle_total"] < 60


def test_hanging_solution_is_cut_and_named(make_task: MakeTask) -> None:
    toml = '[agent]\ntimeout_sec = 2.0\n[verifier]\ntimeout_sec = 60.0\n'
    record = verify_task(make_task("hang", solve="sleep 300\n", toml=toml), repeat=1)
    assert record.verdict is Verdict.UNSATISFIABLE
    assert "solve.sh: timed out after 2 s" in (record.error or "")


def test_non_utf8_output_is_survived(make_task: MakeTask) -> None:
    solve = "printf '\\xff\\xfe\\x80 binary noise\\n'; echo hello > /app/out.txt\n"
    record = verify_task(make_task("bytes", solve=solve), repeat=1)
    assert record.verdict is Verdict.VERIFIED


def test_broken_task_toml_is_a_recorded_error(make_task: MakeTask) -> None:
    root = make_task("bad-toml", toml="[verifier\ntimeout_sec = 1\n")
    record = verify_task(root, repeat=1)
    assert record.verdict is Verdict.ERROR
    assert "task.toml" in (record.error or "") and "TOML" in (record.error or "")


def test_missing_solution_gets_its_own_verdict_after_the_nop_check(make_task: MakeTask) -> None:
    root = make_task("no-solution")
    (root / "solution" / "solve.sh").unlink()
    record = verify_task(root, repeat=2)
    assert record.verdict is Verdict.NO_SOLUTION, record.error
    assert record.oracle_rewards == []  # the oracle cannot run
    assert record.nop_reward == 0.0  # the nop check did
    assert record.n_assertions == 2  # the nop run's tests
    assert "solve.sh" in (record.error or "") and "missing" in (record.error or "")


def test_missing_solution_with_tests_the_untouched_container_passes_is_vacuous(
        make_task: MakeTask) -> None:
    root = make_task("no-solution-vacuous", tests="def test_always():\n    assert True\n")
    (root / "solution" / "solve.sh").unlink()
    record = verify_task(root, repeat=1)
    assert record.verdict is Verdict.VACUOUS
    assert record.nop_reward == 1.0


def test_tests_that_rename_an_image_tool_aside_are_blamed_not_an_agent(
        make_task: MakeTask) -> None:
    # The task's own tests move /usr/bin/tac aside to test a fallback and put it back:
    # the grader refuses that whoever does it, and in the untouched container's run no
    # agent code exists, so the verdict must say the tests do it (not "agent code").
    tests = ("import os\nfrom pathlib import Path\n\n\ndef test_output_exists():\n"
             "    assert Path('/app/out.txt').is_file()\n\n\ndef test_without_tac():\n"
             "    os.rename('/usr/bin/tac', '/usr/bin/tac.hidden')\n    try:\n"
             "        assert Path('/app/out.txt').read_text().strip() == 'hello'\n"
             "    finally:\n        os.rename('/usr/bin/tac.hidden', '/usr/bin/tac')\n")
    record = verify_task(make_task("hides-tac", tests=tests), repeat=1)
    assert record.verdict is Verdict.ERROR, record
    assert record.error is not None
    assert record.error.startswith("the task's own tests change what the grader protects")
    assert "/usr/bin/tac" in record.error and "agent code ran" not in record.error.split("(")[0]
