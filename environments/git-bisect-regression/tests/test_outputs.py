import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = "/app/rpn-calc"
CHECK = "/app/bisect-check.sh"
ANSWER = Path("/app/first-bad-commit.txt")
INITIAL = "f5ff2152ad1cc413b99119c7e725bb24b1147a91"
LAST_GOOD = "ecece343a843a03e8e6d636639c33417b751fd83"
FORMAT_BUG = "08335e710eae971e568ff1038c2a2cb720cefa94"
FIRST_BAD = "869056817dca71cbf9b3070ff6a2d2eb12bac0b1"
UNBUILDABLE = "e68c9609101d1305421b029d5a3100c7f0776846"
LATER_BAD = "37f99d3152e087f7824a04fed2691dcc2356ef1f"
OLD_MAIN = "e46292327dd335f800fbbfc6ece1480d88abd887"


def sh(*args, cwd, check=True, timeout=120):
    out = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check:
        assert out.returncode == 0, f"{args}: {out.stdout}{out.stderr}"
    return out


def clone(tmp_path, commit=None):
    dest = tmp_path / "clone"
    sh("git", "clone", "-q", REPO, str(dest), cwd=tmp_path)
    if commit:
        sh("git", "checkout", "-q", commit, cwd=dest)
    return dest


def check_at(repo, commit):
    sh("git", "checkout", "-q", commit, cwd=repo)
    return subprocess.run([CHECK], cwd=repo, capture_output=True, text=True, timeout=120).returncode


def built_main(tmp_path):
    repo = clone(tmp_path, "main")
    sh("make", "-s", "rpn", cwd=repo)
    return repo


def rpn(repo, expr):
    return subprocess.run([str(repo / "rpn"), expr], capture_output=True, text=True, timeout=30)


def test_answer_file_format():
    assert re.fullmatch(r"[0-9a-f]{40}\n", ANSWER.read_text())


def test_answer_is_the_first_bad_commit():
    assert ANSWER.read_text().strip() == FIRST_BAD


def test_check_script_is_executable():
    assert os.path.isfile(CHECK) and os.access(CHECK, os.X_OK)


def test_check_good_on_initial_commit(tmp_path):
    assert check_at(clone(tmp_path), INITIAL) == 0


def test_check_good_just_before_regression(tmp_path):
    assert check_at(clone(tmp_path), LAST_GOOD) == 0


def test_check_ignores_formatting_bug(tmp_path):
    assert check_at(clone(tmp_path), FORMAT_BUG) == 0


def test_check_bad_on_regression_commit(tmp_path):
    assert check_at(clone(tmp_path), FIRST_BAD) == 1


def test_check_bad_on_later_commit(tmp_path):
    assert check_at(clone(tmp_path), LATER_BAD) == 1


def test_check_skips_unbuildable_commit_despite_stale_binary(tmp_path):
    repo = clone(tmp_path)
    assert check_at(repo, LAST_GOOD) == 0
    assert (repo / "rpn").exists()
    assert check_at(repo, UNBUILDABLE) == 125
    assert sh("git", "status", "--porcelain", cwd=repo).stdout == ""


def test_git_bisect_run_with_the_script(tmp_path):
    repo = clone(tmp_path)
    sh("git", "bisect", "start", OLD_MAIN, INITIAL, cwd=repo)
    out = sh("git", "bisect", "run", CHECK, cwd=repo, timeout=300)
    assert f"{FIRST_BAD} is the first bad commit" in out.stdout


def test_fix_is_one_commit_on_old_main():
    out = sh("git", "log", "-1", "--format=%P", "main", cwd=REPO)
    assert out.stdout.split() == [OLD_MAIN]


def test_fix_touches_only_the_lexer_and_cases():
    changed = set(sh("git", "diff", "--name-only", OLD_MAIN, "main", cwd=REPO).stdout.split())
    assert "lexer.c" in changed
    assert changed <= {"lexer.c", "lexer.h", "tests/cases.txt"}


def test_fixed_main_passes_make_test(tmp_path):
    repo = clone(tmp_path, "main")
    out = sh("make", "-s", "test", cwd=repo, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert sh("git", "rev-parse", "HEAD", cwd=repo).stdout.strip() != OLD_MAIN


@pytest.mark.parametrize(
    "expr, want",
    [("3 -2 *", "-6"), ("-2.5 2 *", "-5"), ("10 -.5 *", "-5"), ("-3 -4 +", "-7"),
     ("-8 abs", "8"), ("2 -1 ^", "0.5"), ("-1 dup *", "1")],
)
def test_negative_literals_work(tmp_path, expr, want):
    out = rpn(built_main(tmp_path), expr)
    assert (out.stdout.strip(), out.returncode) == (want, 0), out.stderr


def test_subtraction_and_errors_unchanged(tmp_path):
    repo = built_main(tmp_path)
    assert rpn(repo, "5 3 -").stdout == "2\n"
    assert rpn(repo, "3 2 - -1 *").stdout == "-1\n"
    assert rpn(repo, "10 4 swap -").stdout == "-6\n"
    assert rpn(repo, "16 sqrt 1 2 drop +").stdout == "5\n"
    under = rpn(repo, "-")
    assert (under.returncode, under.stderr.strip()) == (2, "rpn: stack underflow")
    div = rpn(repo, "1 0 /")
    assert (div.returncode, div.stderr.strip()) == (2, "rpn: division by zero")
    assert rpn(repo, "--version").stdout == "rpn 0.6\n"


def test_repository_left_clean_on_main():
    assert sh("git", "symbolic-ref", "HEAD", cwd=REPO).stdout.strip() == "refs/heads/main"
    assert not Path(REPO, ".git", "BISECT_LOG").exists()
    assert not Path(REPO, ".git", "BISECT_START").exists()
    assert sh("git", "status", "--porcelain", "--untracked-files=no", cwd=REPO).stdout == ""
    assert sh("git", "rev-parse", "main~1", cwd=REPO).stdout.strip() == OLD_MAIN
