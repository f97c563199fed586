"""Per-test evidence: what the in-container plugin reads off real pytest reports, and the
host's bounds on what it keeps (display data; the decision never reads it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from termgrade.scoring.verifier import attestation
from termgrade.scoring.verifier.attestation import Attestation, Session

PLUGIN_DIR = Path(attestation.__file__).parents[1] / "incontainer"

TESTS = '''
def test_ok():
    assert 1 + 1 == 2

def test_empty_input():
    print("parsed 0 rows")
    assert len([]) == 3, "expected three rows for empty input"
'''

CONFTEST = '''
import json, os
import termgrade_attest as plugin

def pytest_runtest_logreport(report):
    with open(os.environ["EVIDENCE_OUT"], "a") as out:
        out.write(json.dumps({"id": report.nodeid, "when": report.when,
                              **plugin._evidence(report)}) + "\\n")
'''


def test_plugin_reads_message_repr_and_output_of_a_real_failure(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    out = tmp_path / "evidence.jsonl"
    env = {"PYTHONPATH": str(PLUGIN_DIR), "EVIDENCE_OUT": str(out), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, check=False)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    calls = {r["id"].split("::")[-1]: r for r in rows if r["when"] == "call"}
    assert "msg" not in calls["test_ok"] and calls["test_ok"]["dur"] >= 0
    failed = calls["test_empty_input"]
    assert "expected three rows for empty input" in failed["msg"]
    assert "assert len([]) == 3" in failed["repr"]
    assert "parsed 0 rows" in failed["out"]


def _report(nodeid: str, **extra: object) -> dict[str, object]:
    return {"e": "report", "id": nodeid, "when": "call", "outcome": "failed",
            "xfail": False, **extra}


def test_host_bounds_evidence_and_keeps_the_first_failure() -> None:
    att = Attestation()
    session = Session(1, started=True)
    att.sessions[1] = session
    attestation._apply(att, session, _report("t::a", dur=0.25, msg="m" * 5000,
                                             repr="r" * 9000, out="o" * 9000))
    attestation._apply(att, session, {**_report("t::a", dur=1e12, msg="later"),
                                      "when": "teardown"})
    kept = att.evidence()["t::a"]
    assert len(str(kept["message"])) == 300 and set(str(kept["message"])) == {"m"}
    assert len(str(kept["repr"])) == 1200 and len(str(kept["output"])) == 600
    assert kept["duration"] == 0.25 + 86400.0  # a forged duration is capped


def test_evidence_never_changes_the_outcome() -> None:
    att = Attestation()
    session = Session(1, started=True)
    att.sessions[1] = session
    attestation._apply(att, session, {**_report("t::b", msg="fine really"),
                                      "outcome": "passed"})
    assert att.outcomes() == {"t::b": "passed"}
    assert "message" not in att.evidence()["t::b"]  # a passing phase carries no message
