"""`termgrade validate`: each kind of damage is found and named by file, row and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from termgrade.builders.layout import RepoPaths
from termgrade.validate import rows_check, validate_repo
from termgrade.validate.secrets_check import write_baseline
from tests.support.staged_repo import TASKS, only, pristine, repo, rewrite

__all__ = ["pristine", "repo"]  # fixtures, used by name


def test_pristine_repo_is_valid(pristine: Path) -> None:
    report = validate_repo(pristine, load=False)
    assert report.findings == []


def test_schema_violation_names_row_and_field(repo: Path) -> None:
    def corrupt(rows: list[dict[str, Any]]) -> None:
        rows[0]["files"][2]["mode"] = -1
    rewrite(repo / TASKS, corrupt)
    findings = only(validate_repo(repo, load=False, secrets=False).findings, "rows")
    assert len(findings) == 1
    assert (findings[0].file, findings[0].row, findings[0].field) == (TASKS, 0, "files.2.mode")
    assert "-1 is less than the minimum of 0" in findings[0].message


def test_a_violation_past_the_first_row_is_worded_by_the_json_schema(repo: Path) -> None:
    """Rows after the first go through the row model's fast validator; one it refuses is
    checked against the JSON Schema, so the finding reads the same as on row 0."""
    def corrupt(rows: list[dict[str, Any]]) -> None:
        rows[1]["files"][0]["size"] = -5
    rewrite(repo / TASKS, corrupt)
    findings = only(validate_repo(repo, load=False, secrets=False).findings, "rows")
    assert [(f.row, f.field) for f in findings] == [(1, "files.0.size")]
    assert "-5 is less than the minimum of 0" in findings[0].message


def test_duplicate_key(repo: Path) -> None:
    def corrupt(rows: list[dict[str, Any]]) -> None:
        rows[1]["task_id"] = rows[0]["task_id"]
    rewrite(repo / TASKS, corrupt)
    findings = only(validate_repo(repo, load=False, secrets=False).findings, "rows")
    assert [(f.row, f.field) for f in findings] == [(1, "task_id")]


@pytest.fixture(params=["whole", "by-key"])
def in_memory(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways the load check loads a split in memory: whole (small splits) and by its
    key column (splits over IN_MEMORY_BYTES; 0 here makes every split one)."""
    from termgrade.validate import load_check

    if request.param == "by-key":
        monkeypatch.setattr(load_check, "IN_MEMORY_BYTES", 0)
    return str(request.param)


def test_pristine_repo_loads(pristine: Path, in_memory: str) -> None:
    report = validate_repo(pristine, secrets=False, cache=False)
    assert report.ok, report.findings


def test_config_that_does_not_load_is_found(repo: Path, in_memory: str) -> None:
    (repo / TASKS).write_bytes(b"PAR1 this is not a parquet file PAR1")
    findings = only(validate_repo(repo, secrets=False, cache=False).findings, "load")
    assert findings and all("configs[tasks]/unseen" in f.file for f in findings)
    assert "load_dataset failed" in findings[0].message


def test_changed_column_type_fails_rows_and_load(repo: Path, in_memory: str) -> None:
    table = pq.read_table(repo / TASKS)
    index = table.schema.get_field_index("n_assertions")
    schema = table.schema.set(index, pa.field("n_assertions", pa.int64()))
    rewrite(repo / TASKS, lambda rows: None, schema=schema)
    report = validate_repo(repo, secrets=False)
    assert any(f.check == "rows" and "differs from the env_task_row schema" in f.message
               for f in report.findings)
    assert any(f.check == "load" and "features differ" in f.message for f in report.findings)
    if in_memory == "by-key":  # found from the files, whatever datasets' streaming reports
        assert any(f.check == "load" and ".parquet: features differ" in f.message
                   for f in report.findings)


def test_card_and_files_must_match(repo: Path) -> None:
    readme = repo / "README.md"
    readme.write_text(readme.read_text().replace("data/tasks/unseen-*.parquet",
                                                 "data/tasks/typo-*.parquet"))
    (repo / "data" / "tasks" / "notes.csv").write_text("a,b\n")
    messages = [str(f) for f in validate_repo(repo, load=False, secrets=False).findings]
    assert ("card: README.md [configs.0.data_files.0.path]: pattern "
            "data/tasks/typo-*.parquet matches no file") in messages
    assert f"files: {TASKS}: parquet file in no config" in messages
    assert "files: data/tasks/notes.csv: not parquet: one data format per repo" in messages


def test_row_group_over_budget(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows_check, "ROW_GROUP_LIMIT", 100)
    findings = only(validate_repo(repo, load=False, secrets=False).findings, "budget")
    assert len(findings) == 1 and findings[0].file == TASKS
    assert "row group 0 is" in findings[0].message


def test_registry_must_list_the_tree(repo: Path) -> None:
    registry = json.loads((repo / "registry.json").read_text())
    registry[0]["tasks"][0]["path"] = "tasks/zulu"
    (repo / "registry.json").write_text(json.dumps(registry))
    findings = only(validate_repo(repo, load=False, secrets=False).findings, "registry")
    assert findings[0].field == "tasks.0.path"
    assert "tasks/zulu is no task dir" in findings[0].message


def test_secrets_found_false_positives_filtered_and_baseline(repo: Path) -> None:
    (repo / "notes.txt").write_text("aws = AKIAIOSFODNN7EXAMPLE\n")
    with (repo / "README.md").open("a") as handle:
        handle.write('\n    def test_login(password="s3cr3tP4ssw0rdXYZ"):\n')
    report = validate_repo(repo, load=False)
    assert [str(f) for f in only(report.findings, "secrets")] == [
        "secrets: notes.txt [line 1]: AWS Access Key on line 1 (not reviewed; review it: "
        f"termgrade secrets review {repo.resolve()})"]
    assert any("1 known false positive(s) filtered" in n for n in report.notes)

    baseline = RepoPaths(repo).secrets_baseline  # beside the repo: found by default
    assert baseline.parent == repo.parent
    assert write_baseline(RepoPaths(repo), baseline) == 1
    # Listed is not reviewed: the entry has no is_secret yet, so it still fails.
    [unreviewed] = validate_repo(repo, load=False).findings
    assert "listed in repo.secrets.baseline but not reviewed" in unreviewed.message
    data = json.loads(baseline.read_text())
    data["results"]["notes.txt"][0]["is_secret"] = False  # a person said: not a secret
    baseline.write_text(json.dumps(data))
    assert validate_repo(repo, load=False).findings == []
    data["results"]["notes.txt"][0]["is_secret"] = True  # a person said: real
    baseline.write_text(json.dumps(data))
    [real] = validate_repo(repo, load=False).findings
    assert "marked a secret; remove it from the repo (and rotate it)" in real.message


def test_unchanged_files_are_not_checked_again_and_changed_ones_are(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.validate import load_check
    from termgrade.validate.cache import cache_path

    loads: list[str] = []
    real_load = load_check._check_split
    monkeypatch.setattr(load_check, "_check_split",
                        lambda root, info, cache, report: (loads.append(info.config),
                                                           real_load(root, info, cache, report)))
    checked: list[object] = []  # rows run through the JSON Schema
    real_ready = rows_check.json_ready
    monkeypatch.setattr(rows_check, "json_ready",
                        lambda row: (checked.append(row), real_ready(row))[1])
    first = validate_repo(repo, secrets=False)
    assert first.ok and loads and checked and cache_path(RepoPaths(repo)).is_file()
    loads.clear()
    checked.clear()
    second = validate_repo(repo, secrets=False)
    assert second.ok and loads == [] and checked == []  # unchanged: neither check reruns
    assert any("skipped" in note for note in second.notes)
    # A changed file is checked again, and its finding is reported even after a pass.

    def corrupt(rows: list[dict[str, Any]]) -> None:
        rows[0]["files"][2]["mode"] = -1
    rewrite(repo / TASKS, corrupt)
    third = only(validate_repo(repo, load=False, secrets=False).findings, "rows")
    assert [(f.row, f.field) for f in third] == [(0, "files.2.mode")] and checked
    # ...and a failing file never enters the cache: it fails again.
    again = only(validate_repo(repo, load=False, secrets=False).findings, "rows")
    assert [(f.row, f.field) for f in again] == [(0, "files.2.mode")]


def test_a_file_with_findings_is_not_scanned_again_but_judged_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its findings are stored (never the secret itself) and judged against each run's
    baseline; a changed file is scanned again."""
    from termgrade.validate import secrets_check
    from termgrade.validate.cache import cache_path

    secret = "AKIAIOSFODNN7EXAMPLE"
    (repo / "notes.txt").write_text(f"aws = {secret}\n")
    scanned: list[str] = []
    real_scan = secrets_check._scan_all
    monkeypatch.setattr(secrets_check, "_scan_all", lambda files, workers: (
        scanned.extend(p.name for p in files), real_scan(files, workers))[1])
    first = [str(f) for f in validate_repo(repo, load=False).findings]
    assert first[0].startswith("secrets: notes.txt [line 1]: AWS Access Key on line 1 (")
    assert "notes.txt" in scanned
    assert secret not in cache_path(RepoPaths(repo)).read_text()
    scanned.clear()
    assert [str(f) for f in validate_repo(repo, load=False).findings] == first
    assert scanned == []  # recalled, not rescanned
    baseline = RepoPaths(repo).secrets_baseline
    write_baseline(RepoPaths(repo), baseline)  # scans, uncached
    data = json.loads(baseline.read_text())
    data["results"]["notes.txt"][0]["is_secret"] = False  # reviewed: not a secret
    baseline.write_text(json.dumps(data))
    scanned.clear()
    assert validate_repo(repo, load=False).findings == [] and scanned == []
    (repo / "notes.txt").write_text(f"aws = {secret}\nmore = 1\n")
    assert validate_repo(repo, load=False).findings == []  # same finding, baselined
    assert scanned == ["notes.txt"]


def test_an_unchanged_task_row_and_tree_are_not_packed_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.validate import archive_check

    packed: list[int] = []
    real_pack = archive_check.tar_tree
    monkeypatch.setattr(archive_check, "tar_tree",
                        lambda tree: (packed.append(1), real_pack(tree))[1])
    assert validate_repo(repo, load=False, secrets=False).ok and len(packed) == 2
    packed.clear()
    assert validate_repo(repo, load=False, secrets=False).ok and packed == []
    # A changed mode in the tree, or a changed row, is checked again.
    (repo / "tasks" / "bravo" / "tests" / "test.sh").chmod(0o700)
    findings = validate_repo(repo, load=False, secrets=False).findings
    assert [str(f) for f in findings] == [
        f"archive: tasks/bravo: differs from the manifest of row 1 of {TASKS}"]
    (repo / "tasks" / "bravo" / "tests" / "test.sh").chmod(0o644)
    packed.clear()

    def corrupt(rows: list[dict[str, Any]]) -> None:
        rows[0]["archive_sha256"] = "0" * 64
    rewrite(repo / TASKS, corrupt)
    findings = only(validate_repo(repo, load=False, secrets=False).findings, "archive")
    assert [(f.row, f.field) for f in findings] == [(0, "archive_sha256")]


@pytest.mark.slow
def test_the_archive_cache_works_through_worker_processes(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.validate import archive_check

    monkeypatch.setattr(archive_check, "PARALLEL_FROM", 1)
    monkeypatch.setattr(archive_check, "_RANGE", 1)
    monkeypatch.setenv("TERMGRADE_WORKERS", "2")
    assert validate_repo(repo, load=False, secrets=False).ok
    second = validate_repo(repo, load=False, secrets=False)
    assert second.ok and any(note.startswith("3 check(s) skipped") for note in second.notes)
    (repo / "tasks" / "alpha" / "instruction.md").write_text("Edited.\n")
    assert [str(f) for f in validate_repo(repo, load=False, secrets=False).findings] == [
        f"archive: tasks/alpha: differs from the manifest of row 0 of {TASKS}"]


def test_no_cache_checks_everything_and_writes_nothing(pristine: Path, tmp_path: Path) -> None:
    from termgrade.validate.cache import cache_path

    copy = tmp_path / "repo"
    shutil.copytree(pristine, copy)
    assert validate_repo(copy, load=False, secrets=False, cache=False).ok
    assert not cache_path(RepoPaths(copy)).exists()


@pytest.mark.slow
def test_archives_and_secrets_checked_in_worker_processes_find_the_same(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.validate import archive_check, secrets_check

    (repo / "tasks" / "alpha" / "instruction.md").write_text("Edited.\n")
    (repo / "notes.txt").write_text("aws = AKIAIOSFODNN7EXAMPLE\n")
    here = sorted(map(str, validate_repo(repo, load=False, cache=False).findings))
    monkeypatch.setattr(archive_check, "PARALLEL_FROM", 1)  # every file by workers,
    monkeypatch.setattr(archive_check, "_RANGE", 1)  # a row each
    monkeypatch.setattr(secrets_check, "PARALLEL_FROM_BYTES", 0)
    monkeypatch.setenv("TERMGRADE_WORKERS", "2")
    workers = sorted(map(str, validate_repo(repo, load=False, cache=False).findings))
    assert workers == here
    assert any("tasks/alpha: differs" in f for f in here) and any("AWS" in f for f in here)


def test_a_clean_text_file_is_not_scanned_again_until_it_changes(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.validate import secrets_check

    scanned: list[str] = []
    real = secrets_check.scan_files
    monkeypatch.setattr(secrets_check, "scan_files",
                        lambda files: (scanned.extend(files), real(files))[1])
    monkeypatch.setenv("TERMGRADE_WORKERS", "1")  # scan_files runs in this process
    assert validate_repo(repo, load=False).ok and scanned
    scanned.clear()
    assert validate_repo(repo, load=False).ok and scanned == []
    (repo / "tasks" / "bravo" / "instruction.md").write_text("aws = AKIAIOSFODNN7EXAMPLE\n")
    report = validate_repo(repo, load=False)
    assert [Path(f).name for f in scanned] == ["instruction.md"]
    assert any(f.check == "secrets" for f in report.findings)


@pytest.mark.slow
def test_validate_command_does_not_import_torch(pristine: Path) -> None:
    """datasets' streaming load imports torch whenever it is installed (the training
    tests install it): the validate command turns that off, about 190 MiB it never uses."""
    import subprocess
    import sys

    script = ("import sys\nfrom termgrade.cli import main\n"
              f"sys.argv = ['termgrade', 'validate', {str(pristine)!r}, '--no-secrets', "
              "'--no-cache']\n"
              "try:\n    main()\nexcept SystemExit as done:\n    code = done.code\n"
              "print('exit', code, 'torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False)
    assert done.stdout.strip().splitlines()[-1] == "exit 0 False", done.stdout + done.stderr


def test_the_archive_check_and_the_secret_scan_run_together_and_report_apart(
        repo: Path) -> None:
    """They run side by side: each one's findings, proofs and notes, in check order, and
    every cached entry counted once when both recall theirs."""
    from termgrade.validate.cache import cache_path

    first = validate_repo(repo, load=False)
    assert first.ok and {"archive", "secrets"} <= set(first.passed)
    entries = json.loads(cache_path(RepoPaths(repo)).read_text())
    second = validate_repo(repo, load=False)
    count = len(entries["passed"]) + len(entries["stored"])
    assert f"{count} check(s) skipped" in " ".join(second.notes)

    (repo / "tasks" / "alpha" / "instruction.md").write_text("Edited.\n")
    (repo / "notes.txt").write_text("aws = AKIAIOSFODNN7EXAMPLE\n")
    third = validate_repo(repo, load=False, cache=False)
    assert [f.check for f in third.findings] == ["archive", "secrets"]
    assert "archive" not in third.passed and "secrets" not in third.passed
    assert "rows" in third.passed


def test_termgrade_digests_are_no_finding_but_a_key_beside_them_is(repo: Path) -> None:
    """labels.jsonl rows (keys sorted) and ATIF files carry task_digest / scaffold_digest
    (sha256 hex, which detect-secrets' entropy plugin flags); those are TermGrade's own
    and never a finding. The same hex under another key is still one."""
    import hashlib

    from termgrade.validate.secrets_check import scan

    task = hashlib.sha256(b"task").hexdigest()
    scaffold = hashlib.sha256(b"scaffold").hexdigest()
    row = {"task_id": "alpha", "model": "m", "task_digest": task, "scaffold_digest": scaffold}
    (repo / "labels.jsonl").write_text(json.dumps(row, sort_keys=True) + "\n")
    (repo / "atif").mkdir()
    (repo / "atif" / "t.json").write_text(json.dumps({"extra": row}, indent=1) + "\n")
    hits = [h for h in scan(RepoPaths(repo))[0] if h.file in ("labels.jsonl", "atif/t.json")]
    assert len(hits) == 4 and all(h.known_false_positive for h in hits)  # flagged, filtered
    report = validate_repo(repo, load=False)
    assert only(report.findings, "secrets") == []
    assert any("4 known false positive(s) filtered" in n for n in report.notes)
    leaked = {"deploy_key": hashlib.sha256(b"key").hexdigest(), "task_id": "alpha"}
    (repo / "notes.jsonl").write_text(json.dumps(leaked, sort_keys=True) + "\n")
    found = only(validate_repo(repo, load=False).findings, "secrets")
    assert [(f.file, f.message.split(" (")[0]) for f in found] == [
        ("notes.jsonl", "Hex High Entropy String on line 1")]


def test_secrets_review_records_each_decision_and_validate_follows_it(repo: Path) -> None:
    """`termgrade secrets review` from another working directory: a file finding shown with
    its lines, answered "yes, a secret" (validate keeps failing, saying remove it), then
    reviewed again with --all as not secret (validate passes); --list asks nothing."""
    from typer.testing import CliRunner

    from termgrade.cli.app import app

    runner = CliRunner()
    (repo / "notes.txt").write_text("first\naws = AKIAIOSFODNN7EXAMPLE\nlast\n")
    listed = runner.invoke(app, ["secrets", "review", str(repo), "--list"])
    assert listed.exit_code == 0, listed.output
    assert "notes.txt line 2: AWS Access Key (undecided)" in listed.output
    assert ">     2 | aws = AKIAIOSFODNN7EXAMPLE" in listed.output and "1 | first" in listed.output
    assert not RepoPaths(repo).secrets_baseline.exists()  # --list records nothing
    said_yes = runner.invoke(app, ["secrets", "review", str(repo)], input="y\n")
    assert said_yes.exit_code == 0 and "1 decision(s) recorded" in said_yes.output
    [real] = validate_repo(repo, load=False).findings
    assert "marked a secret" in real.message
    skipped = runner.invoke(app, ["secrets", "review", str(repo)], input="")
    assert "finding(s); 0 decision(s)" in skipped.output  # nothing undecided: no question
    said_no = runner.invoke(app, ["secrets", "review", str(repo), "--all"], input="n\n")
    assert said_no.exit_code == 0 and "0 undecided" in said_no.output
    assert validate_repo(repo, load=False).findings == []
    # Writing the baseline again keeps what a person decided.
    write_baseline(RepoPaths(repo), RepoPaths(repo).secrets_baseline)
    assert validate_repo(repo, load=False).findings == []
    missing = runner.invoke(app, ["secrets", "review", str(repo / "nope")])
    assert missing.exit_code == 1 and "no such directory" in missing.output
