"""Why a trial failed, on a real ``grade`` trial: a near-miss policy (a scripted stand-in
behind a real loopback server) replays word-frequency's reference solution with one slip
(a missing file exits 1, not 2). The real grader scores it in a real container; the record,
the trajectories row and the viewer's trial page all show the failing test's message."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from termgrade.builders.trajectory_rows import trajectory_row
from termgrade.records.near_miss import is_near_miss
from termgrade.records.trial import TrialRecord
from termgrade.trialsets.io import write_trials
from termgrade.view import find_sources, load_run
from termgrade.view.server import ViewServer
from tests.support.near_miss import SLIP, near_miss_record

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def record() -> TrialRecord:
    return near_miss_record()


def test_the_record_says_which_assertion_failed_and_what_it_said(record: TrialRecord) -> None:
    assert (record.counted, record.passed, record.attested) == (True, False, True)
    assert record.n_tests_failed == 1 and record.n_tests_passed == 16
    assert is_near_miss(record.model_dump())
    failed = [e for e in record.test_evidence if e.outcome == "failed"]
    assert [e.name.split("::")[-1] for e in failed] == [SLIP]
    assert failed[0].message is not None and "assert 1 == 2" in failed[0].message
    assert failed[0].repr is not None and "out.returncode == 2" in failed[0].repr
    assert all(e.message is None for e in record.test_evidence if e.outcome == "passed")
    assert len(record.test_evidence) == 17 and all(e.duration_s >= 0 for e in
                                                   record.test_evidence)
    assert record.failure_messages == [f"{SLIP}: {failed[0].message.splitlines()[0]}"]
    assert record.verifier_output and SLIP in record.verifier_output


def test_the_trajectories_row_carries_it(record: TrialRecord) -> None:
    row = trajectory_row(record.model_dump(mode="json"), [], "instruction")
    assert row["failed_tests"] == [SLIP]
    assert row["failure_messages"][0].startswith(f"{SLIP}: ") and \
        "assert 1 == 2" in row["failure_messages"][0]
    assert any(e["message"] and "assert 1 == 2" in e["message"] for e in row["test_evidence"])


def test_the_viewer_shows_it(record: TrialRecord, tmp_path: Path) -> None:
    write_trials(tmp_path / "run" / "trials.jsonl", [record])
    with ViewServer(load_run(find_sources(tmp_path / "run"))) as server, \
            urllib.request.urlopen(server.url + "trial/0") as answer:
        page = answer.read().decode()
    assert SLIP in page and "assert 1 == 2" in page


def test_the_report_shows_it(record: TrialRecord, tmp_path: Path) -> None:
    import warnings

    from termgrade.core.errors import DataWarning
    from termgrade.passrates import PassRateOptions, build_report, load_inputs
    from termgrade.passrates.markdown import render_markdown

    write_trials(tmp_path / "trials.jsonl", [record])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        report = build_report(load_inputs([tmp_path / "trials.jsonl"]),
                              PassRateOptions(n_boot=0))
    near = report.near_misses
    assert near is not None and near.total == 1
    assert near.top_failed_messages[0][0] == SLIP and "assert 1 == 2" in \
        near.top_failed_messages[0][1]
    assert near.failing_counts == [(1, 1)]
    text = render_markdown(report)
    assert f"- `{SLIP}`: " in text and "assert 1 == 2" in text


def test_the_viewers_trial_list_has_the_message_one_click_away(record: TrialRecord,
                                                               tmp_path: Path) -> None:
    write_trials(tmp_path / "run" / "trials.jsonl", [record])
    with ViewServer(load_run(find_sources(tmp_path / "run"))) as server, \
            urllib.request.urlopen(server.url + "trials") as answer:
        page = answer.read().decode()
    assert f'<details class="said"><summary>{SLIP}</summary>' in page
    assert "assert 1 == 2" in page and "near-miss" in page


def test_the_trajectories_card_gives_the_releases_figure(record: TrialRecord,
                                                         tmp_path: Path) -> None:
    """The share of counted trials failing exactly one assertion while passing eight or
    more, overall and per model, on the card a real near-miss trial is published with."""
    from termgrade.builders.trajectories import build_trajectories

    write_trials(tmp_path / "trials.jsonl", [record])
    out = tmp_path / "traj"
    build_trajectories(out, trials=tmp_path / "trials.jsonl",
                       task_roots=[Path(__file__).resolve().parents[2] / "environments"])
    card = (out / "README.md").read_text()
    assert "1 of 1 counted trials (100.0%) failed exactly one assertion while passing " \
        "eight or more" in card
    row = next(line for line in card.splitlines() if line.startswith(f"| {record.model} "))
    assert row.rstrip(" |").endswith("| 1 | 1.0000")  # one near-miss, all its counted
