"""Regrading recorded work, on a real ``grade --keep-work`` run: a near-miss policy (a
scripted stand-in behind a real loopback server) replays word-frequency's reference solution
with one slip (a missing file exits 1, the tests want 2); the real grader scores it in real
containers and keeps the carried work. Then a test is fixed, or another broken, in a copy
of the task, and ``regrade`` scores the kept work again in fresh containers: exactly that
test's verdict changes, the source folder's bytes do not, and ``labels`` reads the new run.
The kept store is the agent's bytes: a regrade keeps grading's guarantee (only the transfer
set reaches the verifier) and refuses bytes that are not what was kept."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.cli import app
from termgrade.grade import grade_model
from termgrade.grade.errors import RegradeIncompleteError
from termgrade.grade.journal import TRIALS_FILE
from termgrade.grade.regrade import RegradeReport, regrade_run
from termgrade.records.kept_work import KeptEntry
from termgrade.records.run import RUNS_FILE, read_runs
from termgrade.records.trial import TrialRecord
from termgrade.scoring.kept import WorkStore
from termgrade.view import find_sources, load_run
from termgrade.view.server import ViewServer
from tests.support.near_miss import SLIP, TASK, near_miss_solution
from tests.support.scripted_tools import ScriptedToolEndpoint, replay_solution

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TEST_FILE = Path("tests") / "test_outputs.py"
BROKEN = "test_explicit_n"


def _grade(out: Path, **options: object) -> list[TrialRecord]:
    with ScriptedToolEndpoint(replay_solution(near_miss_solution())) as llm:
        agent = ModelAgent(Endpoint(llm.url, llm.model, api_key_env=None), ScaffoldConfig())
        report = grade_model([TASK], agent, out, k=2, workers=1, progress=False, **options)
    return report.records


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[TrialRecord]]:
    out = tmp_path_factory.mktemp("graded") / "run"
    records = _grade(out, keep_work=True)
    assert [(r.counted, r.reward, r.n_tests_failed) for r in records] == [(True, 0.0, 1)] * 2
    return out, records


def _task_copy(root: Path, edit: Callable[[str], str]) -> Path:
    """word-frequency under ``root`` (the same task id) with its test file edited."""
    task = root / "tasks" / TASK.name
    shutil.copytree(TASK, task)
    text = (task / TEST_FILE).read_text()
    edited = edit(text)
    assert edited != text
    (task / TEST_FILE).write_text(edited)
    return root / "tasks"


def _fix(text: str) -> str:
    """The slip's test now accepts exit 1 as well."""
    return text.replace('out = run("/nonexistent/file.txt")\n    assert out.returncode == 2',
                        'out = run("/nonexistent/file.txt")\n    assert out.returncode in (1, 2)')


def _break(text: str) -> str:
    """Another test now asks for what no solution gives."""
    head, tail = text.split(f"def {BROKEN}(", 1)
    return f"{head}def {BROKEN}(" + tail.replace(":\n", ":\n    assert False, 'broken'\n", 1)


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _outcomes(record: TrialRecord) -> dict[str, str]:
    return {t.name: str(t.outcome) for t in record.tests}


def _changed(before: TrialRecord, after: TrialRecord) -> dict[str, tuple[str, str]]:
    was, now = _outcomes(before), _outcomes(after)
    assert was.keys() == now.keys()
    return {name: (was[name], now[name]) for name in was if was[name] != now[name]}


def test_grade_keeps_the_carried_work_once_per_content(
        graded: tuple[Path, list[TrialRecord]]) -> None:
    out, records = graded
    store = WorkStore.of_run(out)
    manifests = [store.read(r.trial_id) for r in records]
    assert all(m is not None and m.regradable for m in manifests)
    tools = [next(e for e in m.entries if e.path == "/app/wordfreq") for m in manifests if m]
    assert tools[0].sha256 == tools[1].sha256 and tools[0].mode & 0o111
    assert b"exit 1" in store.blob(tools[0].sha256 or "").read_bytes()  # the agent's slip
    blobs = [p for p in (store.root / "blobs").rglob("*") if p.is_file()]
    assert len(blobs) == 1  # two trials wrote the same bytes: stored once
    assert not any(e.path.startswith(("/logs", "/tests")) for m in manifests if m
                   for e in m.entries)


def test_a_fixed_test_changes_exactly_its_verdict(
        graded: tuple[Path, list[TrialRecord]], tmp_path: Path) -> None:
    source, records = graded
    before = _tree(source)
    tasks = _task_copy(tmp_path, _fix)
    report = regrade_run(source, [tasks], tmp_path / "regraded", progress=False)
    report.check()
    assert _tree(source) == before  # the source folder is never written
    assert len(report.records) == 2 and not report.must_rerun
    by_source = {r.trial_id: r for r in records}
    for record in report.records:
        old = by_source[record.regraded_from or ""]
        assert _changed(old, record) == {SLIP: ("failed", "passed")}
        assert (record.reward, record.passed, record.failure_messages) == (1.0, True, [])
        assert record.job_id == report.job_id != old.job_id
        assert record.trial_id.startswith(f"{report.job_id}__")
        assert record.messages == old.messages and record.turns == old.turns  # agent side
        assert record.source == "termgrade regrade"
    assert len(report.changed()) == 2
    run = read_runs([tmp_path / "regraded"])[report.job_id]
    planned = read_runs([source])[records[0].job_id or ""]
    assert run.regrade_of == planned.job_id
    assert (run.model, run.scaffold, run.k, run.endpoint) == \
        (planned.model, planned.scaffold, planned.k, planned.endpoint)
    # labels read the regrade run like any run: k from its record, the new verdicts
    target = tmp_path / "labels.jsonl"
    done = CliRunner().invoke(app, ["labels", str(tmp_path / "regraded" / TRIALS_FILE),
                                    "-o", str(target)])
    assert done.exit_code == 0, done.output
    [row] = [json.loads(line) for line in target.read_text().splitlines()]
    assert (row["k"], row["n_counted"], row["n_passed"], row["pass_rate"]) == (2, 2, 2, 1.0)
    # the viewer's trial page says which trial it regraded
    with ViewServer(load_run(find_sources(tmp_path / "regraded"))) as server, \
            urllib.request.urlopen(server.url + "trial/0") as answer:
        page = answer.read().decode()
    assert "regraded from" in page and any(r.trial_id in page for r in records)
    # the regrade kept what reached its verifier: it can be regraded in turn
    again = regrade_run(tmp_path / "regraded", [tasks], tmp_path / "again", progress=False)
    assert sorted(r.regraded_from or "" for r in again.records) == \
        sorted(r.trial_id for r in report.records)
    assert again.changed() == [] and all(r.reward == 1.0 for r in again.records)
    assert read_runs([tmp_path / "again"])[again.job_id].regrade_of == report.job_id


def test_a_broken_test_changes_exactly_its_verdict_and_the_run_resumes(
        graded: tuple[Path, list[TrialRecord]], tmp_path: Path) -> None:
    source, records = graded
    tasks = _task_copy(tmp_path, _break)
    out = tmp_path / "regraded"
    runner = CliRunner()
    done = runner.invoke(app, ["regrade", str(source), "--tasks", str(tasks), "-o", str(out)])
    assert done.exit_code == 0, done.output
    regraded = [TrialRecord.model_validate_json(line)
                for line in (out / TRIALS_FILE).read_text().splitlines()]
    by_source = {r.trial_id: r for r in records}
    assert len(regraded) == 2
    for record in regraded:
        changed = _changed(by_source[record.regraded_from or ""], record)
        assert changed == {BROKEN: ("passed", "failed")}
        assert record.reward == 0.0
    listed = runner.invoke(app, ["runs", str(out), "--json"])
    assert listed.exit_code == 0, listed.output
    [run] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert run["record"]["regrade_of"] == records[0].job_id and run["counted"] == 2
    # a rerun resumes: nothing regraded twice, the same run
    again = runner.invoke(app, ["regrade", str(source), "--tasks", str(tasks), "-o", str(out)])
    assert again.exit_code == 0, again.output
    assert "2 resumed" in again.output
    assert len((out / TRIALS_FILE).read_text().splitlines()) == 2
    assert len((out / RUNS_FILE).read_text().splitlines()) == 1


def test_unchanged_tests_regrade_to_the_same_verdicts(
        graded: tuple[Path, list[TrialRecord]], tmp_path: Path) -> None:
    source, records = graded
    report = regrade_run(source, [TASK], tmp_path / "same", progress=False)
    assert [_changed(old, new) for old, new in zip(records, report.records, strict=True)] \
        == [{}, {}]
    assert report.changed() == []


def _copy_source(source: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "source"
    shutil.copytree(source, copy)
    return copy


def test_trials_without_kept_work_must_be_rerun(
        graded: tuple[Path, list[TrialRecord]], tmp_path: Path) -> None:
    source, records = graded
    copy = _copy_source(source, tmp_path)
    WorkStore.of_run(copy).manifest(records[1].trial_id).unlink()
    report = regrade_run(copy, [_task_copy(tmp_path, _fix)], tmp_path / "out", progress=False)
    assert [r.regraded_from for r in report.records] == [records[0].trial_id]
    assert report.must_rerun == {records[1].trial_id: "its work was not kept (graded "
                                 "without --keep-work)"}
    report.check()  # what could be regraded was
    done = CliRunner().invoke(app, ["regrade", str(copy), "--tasks", str(tmp_path / "tasks"),
                                    "-o", str(tmp_path / "out2")])
    assert done.exit_code == 0, done.output
    assert "1 trial(s) must be rerun" in done.output and records[1].trial_id in done.output


def test_a_changed_instruction_means_rerun_not_regrade(
        graded: tuple[Path, list[TrialRecord]], tmp_path: Path) -> None:
    source, _ = graded
    tasks = _task_copy(tmp_path, _fix)
    instruction = tasks / TASK.name / "instruction.md"
    instruction.write_text(instruction.read_text() + "\nAlso print a header line.\n")
    report = regrade_run(source, [tasks], tmp_path / "out", progress=False)
    assert report.records == [] and len(report.must_rerun) == 2
    assert all("instruction, environment" in why for why in report.must_rerun.values())
    with pytest.raises(RegradeIncompleteError, match="nothing was regraded"):
        report.check()


def test_over_the_bound_the_trial_is_not_kept_and_must_be_rerun(tmp_path: Path) -> None:
    out = tmp_path / "run"
    records = _grade(out, keep_work=True, keep_work_max_bytes=100)
    store = WorkStore.of_run(out)
    for record in records:
        work = store.read(record.trial_id)
        assert work is not None and not work.regradable and work.entries == []
        assert work.reason and "over the keep-work bound" in work.reason
    assert not (store.root / "blobs").exists()
    report = regrade_run(out, [TASK], tmp_path / "out", progress=False)
    assert report.records == []
    assert all("over the keep-work bound" in why for why in report.must_rerun.values())


def test_the_source_folder_is_never_the_output(
        graded: tuple[Path, list[TrialRecord]]) -> None:
    source, _ = graded
    done = CliRunner().invoke(app, ["regrade", str(source), "--tasks", str(TASK),
                                    "-o", str(source / "inside")])
    assert done.exit_code == 1 and "inside the source folder" in done.output
    assert not (source / "inside").exists()


def test_a_changed_blob_is_refused(graded: tuple[Path, list[TrialRecord]],
                                   tmp_path: Path) -> None:
    """The slip fixed in the kept bytes (the honest tool's 'exit 2') would pass every test:
    the regrade refuses it instead of scoring it."""
    source, records = graded
    copy = _copy_source(source, tmp_path)
    store = WorkStore.of_run(copy)
    work = store.read(records[0].trial_id)
    assert work is not None
    tool = next(e for e in work.entries if e.path == "/app/wordfreq")
    blob = store.blob(tool.sha256 or "")
    os.chmod(blob, 0o644)
    blob.write_bytes(blob.read_bytes().replace(b"exit 1", b"exit 2"))
    report = regrade_run(copy, [TASK], tmp_path / "out", progress=False)
    assert report.records == [] and set(report.refused) == {r.trial_id for r in records}
    assert all("not the" in why and "its manifest names" in why
               for why in report.refused.values())
    with pytest.raises(RegradeIncompleteError, match="refused"):
        report.check()
    done = CliRunner().invoke(app, ["regrade", str(copy), "--tasks", str(TASK),
                                    "-o", str(tmp_path / "out2")])
    assert done.exit_code == 1 and "refused" in done.output


def test_a_manifest_that_is_no_manifest_is_refused(
        graded: tuple[Path, list[TrialRecord]], tmp_path: Path) -> None:
    source, records = graded
    copy = _copy_source(source, tmp_path)
    for record in records:
        WorkStore.of_run(copy).manifest(record.trial_id).write_text('{"entries": "all"}\n')
    report = regrade_run(copy, [TASK], tmp_path / "out", progress=False)
    assert report.records == [] and set(report.refused) == {r.trial_id for r in records}
    assert all("not a kept-work manifest" in why for why in report.refused.values())


def _entry(path: str, kind: str, **fields: object) -> KeptEntry:
    return KeptEntry.model_validate({"path": path, "kind": kind, "mode": 0o755, **fields})


FAKE_BASH = b"""#!/bin/bash
for a in "$@"; do [ "$a" = /nonexistent/file.txt ] && { echo "no such file" >&2; exit 2; }; done
exec /bin/bash "$@"
"""
"""A bash earlier on PATH that gives the slip's test the exit status it wants: the tool's
``#!/usr/bin/env bash`` would run it, and every test would pass, if it reached B."""


def test_kept_work_reaches_the_verifier_only_through_the_transfer_set(
        graded: tuple[Path, list[TrialRecord]], tmp_path: Path) -> None:
    """A store edited to carry a bash that makes the slip pass, a forged reward and a
    pytest that passes everything (valid blobs, parents and all): the regrade reviews it as
    grading reviews an agent's layer, so none reaches the verifier and the slip still
    fails."""
    source, records = graded
    copy = _copy_source(source, tmp_path)
    store = WorkStore.of_run(copy)
    forged = b"#!/bin/sh\necho 1 > /logs/verifier/reward.txt\nexit 0\n"
    digests = {}
    for data in (forged, FAKE_BASH):
        digests[data] = hashlib.sha256(data).hexdigest()
        blob = store.blob(digests[data])
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
    planted = [_entry("/logs", "dir"), _entry("/logs/verifier", "dir", mode=0o777),
               _entry("/logs/verifier/reward.txt", "file", mode=0o644, size=len(forged),
                      sha256=digests[forged]),
               _entry("/opt", "dir"), _entry("/opt/venv", "dir"), _entry("/opt/venv/bin", "dir"),
               _entry("/opt/venv/bin/pytest", "file", size=len(forged),
                      sha256=digests[forged]),
               _entry("/usr", "dir"), _entry("/usr/local", "dir"),
               _entry("/usr/local/bin", "dir"),
               _entry("/usr/local/bin/bash", "file", size=len(FAKE_BASH),
                      sha256=digests[FAKE_BASH])]
    for record in records:
        work = store.read(record.trial_id)
        assert work is not None
        store.write(work.model_copy(update={"entries": work.entries + planted}))
    report: RegradeReport = regrade_run(copy, [TASK], tmp_path / "out", progress=False)
    assert len(report.records) == 2
    for old, new in zip(records, report.records, strict=True):
        assert new.reward == 0.0 and _changed(old, new) == {}
        assert new.left_out is not None
        assert all(path in new.left_out for path in ("/opt", "/usr/local/bin/bash", "/logs"))


def test_the_grade_command_keeps_work_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with ScriptedToolEndpoint(replay_solution(near_miss_solution())) as llm:
        done = CliRunner().invoke(app, ["grade", str(TASK), "--model", llm.model, "--base-url",
                                        llm.url, "--api-key-env", "", "-k", "1", "-w", "1",
                                        "-o", str(out), "--keep-work"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())  # the console wraps long lines
    assert f"kept work: 1 of 1 counted trial(s) in {out / 'work'}" in said, done.output
    [record] = [TrialRecord.model_validate_json(line)
                for line in (out / TRIALS_FILE).read_text().splitlines()]
    work = WorkStore.of_run(out).read(record.trial_id)
    assert work is not None and work.regradable


def _slow(text: str) -> str:
    """A test that takes its time: the regrade is still in its containers when stopped."""
    head, tail = text.split(f"def {BROKEN}(", 1)
    return f"{head}def {BROKEN}(" + tail.replace(
        ":\n", ":\n    __import__('time').sleep(300)\n", 1)


def test_sigterm_mid_regrade_leaves_no_container(
        graded: tuple[Path, list[TrialRecord]], tmp_path: Path) -> None:
    from termgrade.grade.cleanup import run_label
    from termgrade.sandbox.engine import docker_client
    from termgrade.sandbox.ownership import RUN_LABEL

    source, records = graded
    tasks = _task_copy(tmp_path, _slow)
    out = tmp_path / "regraded"
    label = run_label(out / TRIALS_FILE, records[0].model)

    def of_run() -> list[str]:
        return [c.name for c in docker_client().containers.list(
            all=True, filters={"label": [f"{RUN_LABEL}={label}"]}, ignore_removed=True)]

    env = {**os.environ, "TERMGRADE_PROGRESS": "0", "PYTHONPATH": str(Path.cwd())}
    regrade = subprocess.Popen(
        [sys.executable, "-m", "termgrade", "regrade", str(source), "--tasks", str(tasks),
         "-o", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while len(of_run()) < 2 and time.monotonic() < deadline and regrade.poll() is None:
        time.sleep(0.2)
    assert len(of_run()) >= 2, "the regrade never started its containers"
    regrade.send_signal(signal.SIGTERM)
    try:  # stopped now, not when the verifier's five minutes are up
        output, _ = regrade.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        regrade.kill()
        raise
    assert regrade.returncode == 143, output
    assert of_run() == [], output
    assert not (out / TRIALS_FILE).exists() or not (out / TRIALS_FILE).read_text()


def test_reused_trials_bring_their_kept_work(graded: tuple[Path, list[TrialRecord]],
                                             tmp_path: Path) -> None:
    """``grade --reuse --keep-work``: the reused trials' kept work joins the new run's store
    (blobs linked, not copied), so the new run regrades whole."""
    source, records = graded
    out = tmp_path / "run"
    reused = _grade(out, keep_work=True, reuse=source)
    assert sorted(r.trial_id for r in reused) == sorted(r.trial_id for r in records)
    theirs, mine = WorkStore.of_run(source), WorkStore.of_run(out)
    work = mine.read(records[0].trial_id)
    assert work is not None and work == theirs.read(records[0].trial_id)
    digest = next(e.sha256 for e in work.entries if e.sha256)
    assert mine.blob(digest).stat().st_ino == theirs.blob(digest).stat().st_ino
    report = regrade_run(out, [_task_copy(tmp_path, _fix)], tmp_path / "regraded",
                         progress=False)
    assert not report.must_rerun and len(report.changed()) == 2
