"""Parse a verifier's results file into per-test verdicts: CTRF json, JUnit xml, pytest -rA.

A verdict is the one :class:`~termgrade.records.verdict.TestVerdict` (re-exported here with
:class:`~termgrade.records.verdict.Outcome`, the names the grader uses).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from termgrade.records.verdict import Outcome, TestVerdict

__all__ = ["parse_ctrf", "parse_junit", "parse_pytest_summary"]

_CTRF = {"passed": Outcome.PASSED, "failed": Outcome.FAILED, "skipped": Outcome.SKIPPED,
         "pending": Outcome.SKIPPED, "other": Outcome.ERROR}
_RA_LINE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+)", re.MULTILINE)
_RA = {"PASSED": Outcome.PASSED, "FAILED": Outcome.FAILED, "ERROR": Outcome.ERROR,
       "SKIPPED": Outcome.SKIPPED, "XFAIL": Outcome.SKIPPED, "XPASS": Outcome.PASSED}


def parse_ctrf(data: bytes) -> list[TestVerdict]:
    """CTRF (https://ctrf.io): ``results.tests[].{name,status}``. ValueError if malformed."""
    doc: Any = json.loads(data.decode("utf-8", "replace"))
    tests = doc["results"]["tests"]
    return [TestVerdict(str(t["name"]), _CTRF.get(str(t["status"]), Outcome.ERROR))
            for t in tests]


def parse_junit(data: bytes) -> list[TestVerdict]:
    """JUnit XML as pytest --junitxml writes it. ValueError if malformed."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"junit xml: {exc}") from exc
    verdicts = []
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        if case.find("failure") is not None:
            outcome = Outcome.FAILED
        elif case.find("error") is not None:
            outcome = Outcome.ERROR
        elif case.find("skipped") is not None:
            outcome = Outcome.SKIPPED
        else:
            outcome = Outcome.PASSED
        verdicts.append(TestVerdict(name, outcome))
    return verdicts


def parse_pytest_summary(text: str) -> list[TestVerdict]:
    """pytest ``-rA`` short summary lines, ``PASSED path::test_name``."""
    found: dict[str, Outcome] = {}
    for status, node in _RA_LINE.findall(text):
        found[node.split("::")[-1]] = _RA[status]
    return [TestVerdict(name, outcome) for name, outcome in found.items()]
