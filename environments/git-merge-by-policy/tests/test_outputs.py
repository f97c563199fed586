import io
import os
import subprocess
import sys
import tarfile

import pytest

REPO = "/app/inventory"
OLD_MAIN = "b4f5a98c4799010388946c465f94da6561e94a15"
FEATURE = "46dc8fcc6c9b298a2db8c232ab7478942c13ff1f"

CHANGELOG = """# Changelog

## Unreleased

- Fix negative stock display.
- Log slow database queries.
- Add bulk CSV import.
- Import progress bar.

## 1.4.1 - 2024-03-02

- Fix rounding of stock values.
"""

REQUIREMENTS = """click==8.1.7
requests==2.32.3
SQLAlchemy==2.0.25
structlog==24.1.0
tqdm==4.66.4
urllib3==1.26.18
"""

SETTINGS = """[server]
host = 0.0.0.0
port = 8080
workers = 8

[database]
url = postgresql://inventory@db/inventory
pool_size = 10
timeout = 60
slow_query_ms = 500
echo = false

[import]
batch_size = 500
workers = 4

[bulk]
max_rows = 100000
"""

FILES = [
    "CHANGELOG.md", "VERSION", "config/settings.ini", "inventory/__init__.py",
    "inventory/bulk.py", "inventory/importer.py", "inventory/stock.py", "requirements.txt",
    "tests/__init__.py", "tests/test_bulk.py", "tests/test_importer.py", "tests/test_stock.py",
]


def git(*args):
    out = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, f"git {' '.join(args)}: {out.stderr}"
    return out.stdout


def show(path, ref="main"):
    return git("show", f"{ref}:{path}")


def parents():
    return git("log", "-1", "--format=%P", "main").split()


def test_main_is_a_merge_of_both_tips():
    assert parents() == [OLD_MAIN, FEATURE]


def test_feature_branch_unchanged_and_merged():
    assert git("rev-parse", "feature/bulk-import").strip() == FEATURE
    assert git("merge-base", "--is-ancestor", FEATURE, "main") == ""
    assert parents()[-1] == FEATURE


def test_merge_message():
    assert parents() == [OLD_MAIN, FEATURE]
    assert git("log", "-1", "--format=%B", "main").splitlines()[0] == "Merge branch 'feature/bulk-import'"


def test_version_is_higher_release():
    assert show("VERSION") == "1.5.0\n"


def test_changelog_entries_merged_in_order():
    assert show("CHANGELOG.md") == CHANGELOG


def test_requirements_union_with_numeric_versions():
    assert show("requirements.txt") == REQUIREMENTS


def test_settings_merged_key_by_key():
    assert show("config/settings.ini") == SETTINGS


def test_importer_is_feature_version():
    assert git("rev-parse", "main:inventory/importer.py") == git(
        "rev-parse", f"{FEATURE}:inventory/importer.py")


def test_legacy_stays_deleted():
    assert parents() == [OLD_MAIN, FEATURE]
    assert git("ls-tree", "-r", "--name-only", "main", "--", "legacy") == ""
    assert not os.path.exists(os.path.join(REPO, "legacy"))


def test_tree_has_exactly_the_expected_files():
    assert git("ls-tree", "-r", "--name-only", "main").splitlines() == FILES


@pytest.mark.parametrize(
    "path, side",
    [("inventory/stock.py", OLD_MAIN), ("tests/test_stock.py", OLD_MAIN),
     ("inventory/bulk.py", FEATURE), ("tests/test_bulk.py", FEATURE),
     ("tests/test_importer.py", FEATURE)],
)
def test_clean_merges_kept_from_each_side(path, side):
    assert parents() == [OLD_MAIN, FEATURE]
    assert git("rev-parse", f"main:{path}") == git("rev-parse", f"{side}:{path}")


def test_no_conflict_markers_anywhere():
    assert parents() == [OLD_MAIN, FEATURE]
    for path in FILES:
        text = show(path)
        for marker in ("<<<<<<<", "=======", ">>>>>>>", "|||||||"):
            assert marker not in text, (path, marker)


def test_worktree_clean_and_no_merge_in_progress():
    assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git("status", "--porcelain", "--untracked-files=all") == ""
    assert not os.path.exists(os.path.join(REPO, ".git", "MERGE_HEAD"))
    with open(os.path.join(REPO, "VERSION")) as f:
        assert f.read() == "1.5.0\n"


def test_project_tests_pass_on_merge_result(tmp_path):
    data = subprocess.run(["git", "-C", REPO, "archive", "--format=tar", "main"],
                          capture_output=True, timeout=30, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(tmp_path)
    out = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests", "-t", "."],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Ran 6 tests" in out.stderr
