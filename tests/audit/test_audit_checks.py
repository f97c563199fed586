"""Each static check catches its planted problem, and only that one; a clean corpus passes."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from termgrade.audit import CHECKS, CheckOptions, audit_corpus, read_harbor, run_checks

FIXTURES = Path(__file__).parents[1] / "fixtures" / "audit"
CORPUS = FIXTURES / "corpus"
BASE = "csv-column-sum"


def planted(tmp_path: Path, edit: Callable[[Path], None]) -> Path:
    """A copy of the clean fixture corpus with one problem planted in one task."""
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    edit(corpus / BASE)
    return corpus


def append(relative: str, text: str) -> Callable[[Path], None]:
    def edit(task: Path) -> None:
        path = task / relative
        path.write_text(path.read_text() + text)
    return edit


def substitute(relative: str, pattern: str, replacement: str) -> Callable[[Path], None]:
    def edit(task: Path) -> None:
        path = task / relative
        text, count = re.subn(pattern, replacement, path.read_text(), flags=re.MULTILINE)
        if count == 0:
            raise AssertionError(f"{pattern!r} not found in {path}")
        path.write_text(text)
    return edit


def chain(*edits: Callable[[Path], None]) -> Callable[[Path], None]:
    def edit(task: Path) -> None:
        for one in edits:
            one(task)
    return edit


def keep_tests(count: int) -> Callable[[Path], None]:
    def edit(task: Path) -> None:
        path = task / "tests" / "test_outputs.py"
        chunks = path.read_text().split("\n\n\ndef test_")
        path.write_text("\n\n\ndef test_".join(chunks[: count + 1]))
    return edit


PROBLEMS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "apt-get in Dockerfile": ("dockerfile_offline", append(
        "environment/Dockerfile", "RUN apt-get update && apt-get install -y csvkit\n")),
    "pip in Dockerfile": ("dockerfile_offline", append(
        "environment/Dockerfile", "RUN pip install pandas\n")),
    "npm in Dockerfile": ("dockerfile_offline", append(
        "environment/Dockerfile", "RUN npm install -g csv-parse\n")),
    "curl in Dockerfile": ("dockerfile_offline", append(
        "environment/Dockerfile", "RUN curl -o /app/data/big.csv https://example.com/b.csv\n")),
    "wget in Dockerfile": ("dockerfile_offline", append(
        "environment/Dockerfile", "RUN wget -q https://example.com/b.csv\n")),
    "git clone in Dockerfile": ("dockerfile_offline", append(
        "environment/Dockerfile", "RUN git clone https://github.com/example/csv /opt/csv\n")),
    "ADD url in Dockerfile": ("dockerfile_offline", append(
        "environment/Dockerfile", "ADD https://example.com/extra.csv /app/data/\n")),
    "pip in test.sh": ("verifier_offline", substitute(
        "tests/test.sh", r"^cd /tests", "pip install pytest-json-report\ncd /tests")),
    "uv in test.sh": ("verifier_offline", substitute(
        "tests/test.sh", r"^cd /tests", "uv pip install pytest==8.4.1\ncd /tests")),
    "apt in test.sh": ("verifier_offline", substitute(
        "tests/test.sh", r"^cd /tests", "apt-get install -y python3-pytest\ncd /tests")),
    "curl|sh in test.sh": ("verifier_offline", substitute(
        "tests/test.sh", r"^cd /tests", "curl -LsSf https://astral.sh/uv/install.sh | sh\n"
        "cd /tests")),
    "pytestmark skip": ("tests_not_skipped", substitute(
        "tests/test_outputs.py", r"^TOOL = ", "import pytest\n\npytestmark = "
        "pytest.mark.skip(reason='flaky')\n\nTOOL = ")),
    "skipif(True)": ("tests_not_skipped", substitute(
        "tests/test_outputs.py", r"^TOOL = ", "import pytest\n\npytestmark = "
        "pytest.mark.skipif(True, reason='later')\n\nTOOL = ")),
    "module-level pytest.skip": ("tests_not_skipped", substitute(
        "tests/test_outputs.py", r"^TOOL = ", "import pytest\n\npytest.skip('wip', "
        "allow_module_level=True)\n\nTOOL = ")),
    "every test decorated skip": ("tests_not_skipped", chain(
        substitute("tests/test_outputs.py", r"^def test_", "@pytest.mark.skip\ndef test_"),
        substitute("tests/test_outputs.py", r"^import subprocess$",
                   "import subprocess\n\nimport pytest"))),
    "solution cats the tests": ("solution_no_tests", append(
        "solution/solve.sh", "cat /tests/test_outputs.py > /dev/null\n")),
    "solution copies expected output": ("solution_no_tests", append(
        "solution/solve.sh", "cp /tests/expected.txt /app/out.txt\n")),
    "no domain": ("metadata_complete", substitute("task.toml", r'^domain = .*\n', "")),
    "bad difficulty": ("metadata_complete", substitute(
        "task.toml", r'^difficulty = .*$', 'difficulty = "extreme"')),
    "no author": ("metadata_complete", substitute("task.toml", r'^author = .*\n', "")),
    "no source": ("metadata_complete", substitute("task.toml", r'^source = .*\n', "")),
    "too few tests": ("enough_tests", keep_tests(4)),
    "test file does not parse": ("tests_parse", append("tests/test_outputs.py", "def (:\n")),
    "instruction missing": ("task_loads", lambda task: (task / "instruction.md").unlink()),
}


@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_planted_problem_fails_exactly_its_check(tmp_path: Path, problem: str) -> None:
    check, edit = PROBLEMS[problem]
    corpus = planted(tmp_path, edit)
    verdicts = run_checks(read_harbor(corpus / BASE))
    failed = {name for name, reason in verdicts.items() if reason is not None}
    if check == "tests_parse":
        failed.discard("enough_tests")  # a file that does not parse holds no tests
    assert failed == {check}, verdicts
    report = audit_corpus([corpus], progress=False)
    assert not report.passed
    assert dict(report.failures_by_check()).get(check) == 1


def test_clean_fixture_corpus_passes(tmp_path: Path) -> None:
    report = audit_corpus([CORPUS], progress=False)
    assert [t.task_id for t in report.tasks] == ["csv-column-sum", "env-file-validate",
                                                 "log-level-count"]
    assert all(reason is None for t in report.tasks for reason in t.checks.values())
    assert set(report.tasks[0].checks) == set(CHECKS)
    assert report.pairs == []
    assert report.passed


def test_offline_lookalikes_are_not_flagged(tmp_path: Path) -> None:
    def edit(task: Path) -> None:
        append("environment/Dockerfile",
               "RUN git init -q /srv/origin && git clone -q /srv/origin /app/repo\n"
               "RUN cat > /app/NOTES.md <<'EOF'\nRun pip install csvkit at home.\nEOF\n")(task)
        append("solution/solve.sh", "# never read /tests here\nls /app/tests 2>/dev/null "
               "|| true\n")(task)
        substitute("tests/test.sh", r"^cd /tests",
                   "curl -fs http://127.0.0.1:9/health || true\ncd /tests")(task)
        append("tests/test_outputs.py", "\n\nimport sys\n\nimport pytest\n\n\n"
               "@pytest.mark.skipif(sys.platform == 'win32', reason='posix only')\n"
               "def test_posix_only():\n    assert True\n")(task)

    corpus = planted(tmp_path, edit)
    verdicts = run_checks(read_harbor(corpus / BASE))
    assert all(reason is None for reason in verdicts.values()), verdicts


def test_min_tests_is_configurable() -> None:
    doc = read_harbor(CORPUS / BASE)
    assert run_checks(doc, CheckOptions(min_tests=12))["enough_tests"] is None
    reason = run_checks(doc, CheckOptions(min_tests=13))["enough_tests"]
    assert reason == "12 test case(s) in 12 function(s); at least 13 wanted"
