"""Static checks of one task: each returns None when the task passes, else the reason.

Like a datatrove filter, a check has one contract (a task in, ok or a reason out) and
the audit counts failures by check name. The checks, in :data:`CHECKS` order:

``task_loads``        the Harbor loader accepts the task (files present, task.toml valid),
                       and every entry can be packed (no symlink, UTF-8 names)
``dockerfile_offline`` the image recipe fetches nothing (no apt/pip/npm install, curl,
                       wget, remote git clone, ``ADD <url>``): builds run without network
``verifier_offline``  ``tests/test.sh`` installs or downloads nothing at test time
``tests_parse``       every pytest file parses
``tests_not_skipped`` not every test is statically skipped
``enough_tests``      at least ``min_tests`` test cases (parametrize cases counted)
``solution_no_tests`` the reference solution does not read ``/tests`` (the verifier's
                       files are absent in the agent phase; a solution using them cheats)
``metadata_complete`` ``[metadata]`` has domain, difficulty (easy|medium|hard), author
                       and source
``agent_code_isolated`` the tests load nothing from agent-writable paths (/app, /tmp, ...)
                       into pytest's own process: no ``sys.path`` / ``PYTHONPATH`` entry,
                       import, ``exec`` or ``ctypes`` load from one (:mod:`.agent_code`)
``solution_present``  ``solution/solve.sh`` exists: without it the task loads and can be
                       graded, but ``verify`` can only say ``no_solution``
``runs_offline``      ``[environment] allow_internet`` is not true: TermGrade never gives a
                       task the network, and runs such a task offline only when told to
``verifier_attested`` ``tests/test.sh`` runs pytest, and no agent program outside it (what
                       the grader cannot attest: :mod:`.verifier_steps`)
``hidden_tests_exposed`` (informational: :data:`INFORMATIONAL`) the tests run an agent
                       program while ``tests/`` ships data that program could read
                       (:mod:`.hidden_tests`)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from termgrade.audit.agent_code import agent_code_reason
from termgrade.audit.documents import AuditDoc, SourceFile
from termgrade.audit.hidden_tests import hidden_tests_reason
from termgrade.audit.shellscan import dockerfile_findings, network_findings
from termgrade.audit.testcode import TestInventory, inventory
from termgrade.audit.verifier_steps import verifier_steps_reason
from termgrade.task import load_task
from termgrade.task.digest import check_task_files
from termgrade.task.errors import TaskLoadError

DEFAULT_MIN_TESTS = 10
DIFFICULTIES = ("easy", "medium", "hard")
_TESTS_PATH = re.compile(r"(?<![\w./~-])/tests(?![\w.-])")


@dataclass(frozen=True)
class CheckOptions:
    min_tests: int = DEFAULT_MIN_TESTS


Check = Callable[[AuditDoc, CheckOptions], str | None]


@functools.lru_cache(maxsize=4)
def _inventory(sources: tuple[SourceFile, ...]) -> TestInventory:
    """One parse of a task's tests for the three checks that read them."""
    return inventory(sources)


def task_loads(doc: AuditDoc, options: CheckOptions) -> str | None:
    try:
        load_task(doc.root)
        check_task_files(doc.root)  # what a dataset row and an archive can hold
    except TaskLoadError as exc:
        return str(exc).splitlines()[0]
    return "; ".join(doc.problems) or None


def dockerfile_offline(doc: AuditDoc, options: CheckOptions) -> str | None:
    if doc.dockerfile is None:
        return None  # task_loads reports the missing file
    return "; ".join(dockerfile_findings(doc.dockerfile)) or None


def verifier_offline(doc: AuditDoc, options: CheckOptions) -> str | None:
    if doc.test_script is None:
        return None
    return "; ".join(f"test.sh: {r}" for r in network_findings(doc.test_script)) or None


def tests_parse(doc: AuditDoc, options: CheckOptions) -> str | None:
    return "; ".join(_inventory(doc.test_sources).errors) or None


def tests_not_skipped(doc: AuditDoc, options: CheckOptions) -> str | None:
    found = _inventory(doc.test_sources)
    if found.all_skipped:
        return f"all {found.n_functions} test function(s) are skipped statically"
    return None


def enough_tests(doc: AuditDoc, options: CheckOptions) -> str | None:
    found = _inventory(doc.test_sources)
    if found.n_cases < options.min_tests:
        return (f"{found.n_cases} test case(s) in {found.n_functions} function(s); "
                f"at least {options.min_tests} wanted")
    return None


def _code_lines(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def solution_no_tests(doc: AuditDoc, options: CheckOptions) -> str | None:
    readers = [s.path for s in doc.solution if _TESTS_PATH.search(_code_lines(s.text))]
    if readers:
        return f"{', '.join(readers)} refers to /tests (the verifier's files)"
    return None


def metadata_complete(doc: AuditDoc, options: CheckOptions) -> str | None:
    meta = doc.metadata
    problems = []
    for field, aliases in (("domain", ("domain", "category")),
                           ("author", ("author", "author_name", "author_email")),
                           ("source", ("source",))):
        if not any(isinstance(meta.get(a), str) and meta[a].strip() for a in aliases):
            problems.append(f"no {field}")
    difficulty = meta.get("difficulty")
    if difficulty is None:
        problems.append("no difficulty")
    elif difficulty not in DIFFICULTIES:
        problems.append(f"difficulty {difficulty!r} is not one of {'|'.join(DIFFICULTIES)}")
    return f"[metadata]: {', '.join(problems)}" if problems else None


def agent_code_isolated(doc: AuditDoc, options: CheckOptions) -> str | None:
    return agent_code_reason(doc.test_sources)


def solution_present(doc: AuditDoc, options: CheckOptions) -> str | None:
    if doc.solution:
        return None
    return ("no solution/solve.sh: the reference solution is private or absent, so verify "
            "can only say no_solution (the oracle cannot run)")


def runs_offline(doc: AuditDoc, options: CheckOptions) -> str | None:
    if doc.environment.get("allow_internet") is True:
        return ("[environment] allow_internet = true: the task asks for the network; "
                "TermGrade runs it offline only with --internet-tasks offline")
    return None


def verifier_attested(doc: AuditDoc, options: CheckOptions) -> str | None:
    if doc.test_script is None:
        return None  # task_loads reports the missing file
    tests = {source.path.removeprefix("tests/"): source.text
             for source in (*doc.test_sources, *doc.test_scripts)}
    return verifier_steps_reason(doc.test_script, tests)


def hidden_tests_exposed(doc: AuditDoc, options: CheckOptions) -> str | None:
    return hidden_tests_reason(doc)


CHECKS: dict[str, Check] = {
    "task_loads": task_loads,
    "dockerfile_offline": dockerfile_offline,
    "verifier_offline": verifier_offline,
    "tests_parse": tests_parse,
    "tests_not_skipped": tests_not_skipped,
    "enough_tests": enough_tests,
    "solution_no_tests": solution_no_tests,
    "metadata_complete": metadata_complete,
    "agent_code_isolated": agent_code_isolated,
    "solution_present": solution_present,
    "runs_offline": runs_offline,
    "verifier_attested": verifier_attested,
    "hidden_tests_exposed": hidden_tests_exposed,
}
INFORMATIONAL = frozenset({"hidden_tests_exposed"})
"""Checks that say something about a task without failing the audit or its attestability."""


def run_checks(doc: AuditDoc, options: CheckOptions | None = None) -> dict[str, str | None]:
    """Every check's verdict on ``doc``: None (ok) or the reason, keyed by check name."""
    chosen = options or CheckOptions()
    return {name: check(doc, chosen) for name, check in CHECKS.items()}
