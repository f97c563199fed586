"""The reference record is found from anywhere: kept by task digest in the user's cache
directory (``$XDG_CACHE_HOME/termgrade/references``), read by ``run``, ``grade`` and the
trials of both from any working directory; ``run --agent oracle`` records it; ``grade``
and ``run`` of a task that has a solution and no record run the reference once first,
or refuse naming ``termgrade verify``; a recorded footprint never lists the grader's or
the oracle's own paths or loader caches.

Every test here runs with ``TERMGRADE_REFERENCE_DIR`` unset (the conftest sets it for the
rest of the suite) and ``XDG_CACHE_HOME`` in a temporary folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.core.settings import SETTINGS
from termgrade.scoring.outcome import RunOutcome
from termgrade.scoring.reference import (
    GRADER_RULES,
    ReferenceRecord,
    reference_for,
    save_reference,
)
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.task import load_task
from termgrade.task.digest import task_digest
from termgrade.verify.runner import record_reference
from tests.support.task_dirs import write_task


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache in a temporary folder, and no override of the reference dir."""
    monkeypatch.delenv("TERMGRADE_REFERENCE_DIR", raising=False)
    monkeypatch.delenv("TERMGRADE_STATE_DIR", raising=False)
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home / "termgrade" / "references"


def _folder(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.mkdir(parents=True, exist_ok=True)
    return path


# -- where the record lives ---------------------------------------------------------------


def test_reference_dir_is_the_users_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          cache: Path) -> None:
    assert SETTINGS.reference_dir == cache
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert SETTINGS.reference_dir == tmp_path / "home" / ".cache" / "termgrade" / "references"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not absolute: ignored (XDG)
    assert SETTINGS.reference_dir == tmp_path / "home" / ".cache" / "termgrade" / "references"
    monkeypatch.setenv("TERMGRADE_REFERENCE_DIR", str(tmp_path / "mine"))
    assert SETTINGS.reference_dir == tmp_path / "mine"
    assert SETTINGS.legacy_reference_dirs == ()


def test_a_record_saved_in_one_folder_is_found_from_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    task_dir = write_task(tmp_path / "tasks", "anywhere")
    monkeypatch.chdir(_folder(tmp_path, "where-verify-ran"))
    saved = save_reference(ReferenceRecord(task_digest=task_digest(task_dir),
                                           footprint=["/app/out.txt"]))
    assert saved.parent == cache
    monkeypatch.chdir(_folder(tmp_path, "elsewhere"))
    assert reference_for(load_task(task_dir)) == ReferenceRecord(
        task_digest=task_digest(task_dir), footprint=["/app/out.txt"])
    # a record of other content is never used
    (task_dir / "instruction.md").write_text("Write hello to /app/out.txt, now.\n")
    assert reference_for(load_task(task_dir)) is None


def test_a_record_of_older_grader_rules_is_made_anew_not_used(
        tmp_path: Path, cache: Path) -> None:
    """A record an older grader made may call a task unattested (a runner script in /tests
    it did not follow) or miss a footprint: one of an older rules generation, or from
    before the field, is not used (``grade`` and ``run`` then run the reference again)."""
    task_dir = write_task(tmp_path / "tasks", "older-rules")
    digest = task_digest(task_dir)
    old = ReferenceRecord(task_digest=digest, attested=False,
                          attest_reason="verifier_attested: test.sh runs no pytest")
    raw = json.loads(old.model_dump_json())
    del raw["grader_rules"]  # as a record written before the field
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"{digest}.json").write_text(json.dumps(raw))
    assert reference_for(load_task(task_dir)) is None
    (cache / f"{digest}.json").write_text(old.model_copy(
        update={"grader_rules": GRADER_RULES - 1}).model_dump_json())
    assert reference_for(load_task(task_dir)) is None
    save_reference(old.model_copy(update={"attested": True, "attest_reason": None}))
    found = reference_for(load_task(task_dir))
    assert found is not None and found.attested and found.grader_rules == GRADER_RULES


def test_a_record_in_the_old_state_dir_is_still_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    task_dir = write_task(tmp_path / "tasks", "old-place")
    digest = task_digest(task_dir)
    old = _folder(tmp_path, "project")
    (old / ".termgrade" / "references").mkdir(parents=True)
    record = ReferenceRecord(task_digest=digest, footprint=["/srv/data"])
    (old / ".termgrade" / "references" / f"{digest}.json").write_text(
        record.model_dump_json())
    monkeypatch.chdir(old)
    assert reference_for(load_task(task_dir)) == record
    assert not cache.exists()  # read, never moved or written


# -- what a footprint keeps ---------------------------------------------------------------


def _passing(footprint: list[str]) -> RunOutcome:
    verifier = VerifierResult(reward=1.0, attested=True, outcomes={"test_a": "passed"})
    return RunOutcome("oracle", verifier, footprint=footprint)


def test_the_footprint_leaves_out_the_graders_and_oracles_paths_and_loader_caches(
        cache: Path) -> None:
    record = record_reference("d" * 64, [_passing([
        "/solution", "/tests", "/logs/agent", "/opt/termgrade-grader", "/run/termgrade",
        "/etc/ld.so.cache", "/usr/lib/python3/dist-packages/shop/__pycache__",
        "/app/out.txt", "/usr/local/bin/greet", "/etc/ld.so.conf.d/shop.conf",
        "/solutions/mine"])])
    assert record is not None
    assert record.footprint == ["/app/out.txt", "/usr/local/bin/greet",
                                "/etc/ld.so.conf.d/shop.conf", "/solutions/mine"]
    saved = json.loads((cache / f"{'d' * 64}.json").read_text())
    assert saved["footprint"] == record.footprint


# -- real containers ----------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.slow
def test_verify_records_no_solution_dir_and_run_finds_it_from_another_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    from termgrade.cli.app import app
    from termgrade.verify import Verdict, verify_task

    task_dir = write_task(tmp_path / "tasks", "verified-here")
    monkeypatch.chdir(_folder(tmp_path, "verify-here"))
    record = verify_task(task_dir, repeat=1)
    assert record.verdict is Verdict.VERIFIED, record.error
    assert record.reference is not None
    # the oracle uploads solution/ to /solution: never part of what the reference made
    assert record.reference.footprint, record.reference
    assert not [p for p in record.reference.footprint
                if p == "/solution" or p.startswith(("/solution/", "/logs", "/tests"))
                or "__pycache__" in p or p == "/etc/ld.so.cache"], record.reference.footprint
    assert "/app/out.txt" in record.reference.footprint, record.reference.footprint
    assert (cache / f"{record.task_digest}.json").is_file()

    monkeypatch.chdir(_folder(tmp_path, "run-here"))
    result = CliRunner().invoke(app, ["run", str(task_dir), "--agent", "nop"])
    assert "reward: 0" in result.stdout, result.output
    assert "running its reference" not in " ".join(result.output.split())


@pytest.mark.docker
@pytest.mark.slow
def test_run_oracle_records_the_reference_and_run_of_another_agent_makes_it_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    from termgrade.cli.app import app

    runner = CliRunner()
    oracle_task = write_task(tmp_path / "tasks", "oracle-records")
    monkeypatch.chdir(_folder(tmp_path, "a"))
    ok = runner.invoke(app, ["run", str(oracle_task), "--agent", "oracle"])
    assert ok.exit_code == 0, ok.output
    assert "reference recorded" in ok.output
    monkeypatch.chdir(_folder(tmp_path, "b"))
    found = reference_for(load_task(oracle_task))
    assert found is not None and found.tests and "/app/out.txt" in found.footprint
    assert "/solution" not in found.footprint

    # a solved task with no record: `run --agent nop` plays the reference once first
    other = write_task(tmp_path / "tasks", "made-first",  # other content: another digest
                       instruction="Write hello to /app/out.txt, please.\n")
    nop = runner.invoke(app, ["run", str(other), "--agent", "nop"])
    assert "running its reference solution once first" in " ".join(nop.output.split()), \
        nop.output
    assert "reward: 0" in nop.stdout
    assert reference_for(load_task(other)) is not None


@pytest.mark.docker
@pytest.mark.slow
def test_a_reference_that_fails_refuses_with_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    from termgrade.sandbox.images import build_task_image
    from termgrade.verify.ensure import ensure_reference
    from termgrade.verify.errors import ReferenceUnavailableError

    task_dir = write_task(tmp_path / "tasks", "broken-reference",
                          solve="echo goodbye > /app/out.txt\n")
    task = load_task(task_dir)
    with pytest.raises(ReferenceUnavailableError) as raised:
        ensure_reference(task, build_task_image(task))
    assert f"termgrade verify {task_dir}" in str(raised.value)
    assert "unsatisfiable" in str(raised.value)
    assert reference_for(task) is None


@pytest.mark.docker
@pytest.mark.slow
def test_grade_of_a_solved_task_runs_the_reference_first_and_names_tasks_without_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    from termgrade.agent import Endpoint, ScaffoldConfig
    from termgrade.agent.kinds import ModelAgent
    from termgrade.grade import TRIALS_FILE, grade_model
    from tests.support.scripted_tools import ScriptedToolEndpoint, replay_solution

    tasks = tmp_path / "tasks"
    solved = write_task(tasks, "solved")
    bare = write_task(tasks, "bare")
    shutil.rmtree(bare / "solution")
    monkeypatch.chdir(_folder(tmp_path, "somewhere"))
    notes: list[str] = []
    with ScriptedToolEndpoint(replay_solution("echo hello > /app/out.txt\n")) as endpoint:
        agent = ModelAgent(Endpoint(endpoint.url, endpoint.model, api_key_env=None),
                           ScaffoldConfig())
        grade_model([tasks], agent, tmp_path / "graded", k=1, workers=1, progress=False,
                    on_note=notes.append)
    assert any(n.startswith("solved: no reference record") for n in notes), notes
    assert [n for n in notes if "no solution/solve.sh" in n and "bare" in n], notes
    assert not any(n.startswith("bare:") for n in notes), notes
    made = reference_for(load_task(solved))
    assert made is not None and "/app/out.txt" in made.footprint
    assert (cache / f"{made.task_digest}.json").is_file()
    trials = [json.loads(line) for line in
              (tmp_path / "graded" / TRIALS_FILE).read_text().splitlines() if line.strip()]
    assert sorted((t["task_id"], t["reward"]) for t in trials) == [("bare", 1.0),
                                                                   ("solved", 1.0)]

    # from another folder the record is found: no reference run this time
    monkeypatch.chdir(_folder(tmp_path, "elsewhere"))
    notes.clear()
    with ScriptedToolEndpoint(replay_solution("echo hello > /app/out.txt\n")) as endpoint:
        agent = ModelAgent(Endpoint(endpoint.url, endpoint.model, api_key_env=None),
                           ScaffoldConfig())
        grade_model([solved], agent, tmp_path / "graded-again", k=1, workers=1,
                    progress=False, on_note=notes.append)
    assert notes == []
