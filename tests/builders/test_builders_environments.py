"""`termgrade build environments`: a complete, loadable, Harbor-runnable task repo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from termgrade.builders.card import split_front_matter
from termgrade.builders.environments import build_environments
from termgrade.core.errors import RecordError
from termgrade.records import LabelRow, SplitRow
from termgrade.task.archive import pack_task
from termgrade.validate import validate_repo
from tests.support.harbor import Harbor
from tests.support.records import label, verified, write_jsonl
from tests.support.task_dirs import DEFAULT_TOML, MakeTask

HARBOR_RESOLVES = """\
import asyncio, json, sys
from pathlib import Path
from harbor.models.job.config import DatasetConfig
from harbor.models.registry import Registry
from harbor.models.task.task import Task

source = Path(sys.argv[1])
if source.suffix == ".json":
    datasets = {spec.name: DatasetConfig(name=spec.name, registry_path=source)
                for spec in Registry.from_path(source).datasets}
else:
    datasets = {"path": DatasetConfig(path=source)}
out = {}
for name, dataset in datasets.items():
    configs = asyncio.run(dataset.get_task_configs())
    rows = []
    for config in configs:
        local = config.get_local_path()
        try:
            loaded = Task(local).name
        except Exception as exc:
            loaded = f"{type(exc).__name__}: {exc}"
        rows.append({"path": str(config.path), "local": str(local), "loaded": loaded})
    out[name] = rows
print(json.dumps(out))
"""
"""Harbor's own code from registry.json to task directories, as ``harbor run --registry-path
REGISTRY -d DATASET`` does it: ``Registry.from_path``, the dataset's ``DatasetConfig``, each
task's local path, and ``harbor.models.task.task.Task`` loading the directory. Given a
folder instead of a ``.json``, what ``harbor run -p FOLDER`` does with a folder of tasks."""


@pytest.fixture
def corpus(make_task: MakeTask, tmp_path: Path) -> dict[str, Path]:
    roots = [make_task(t) for t in ("alpha", "bravo", "charlie")]
    (roots[0] / "solution" / "solve.sh").chmod(0o755)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    return {
        "tasks": roots[0].parent,
        "labels": write_jsonl(inputs / "labels.jsonl", [
            label(t, m, r) for t, m, r in [
                ("alpha", "model-a", 0.5), ("bravo", "model-a", 0.125),
                ("charlie", "model-a", None), ("alpha", "model-b", 1.0),
                ("bravo", "model-b", 0.75), ("charlie", "model-b", 0.0)]]),
        "splits": write_jsonl(inputs / "splits.jsonl", [
            SplitRow(task_id="alpha", split="train151", pass_rate=0.5),
            SplitRow(task_id="bravo", split="heldout120", pass_rate=0.125)]),
        "verify": write_jsonl(inputs / "verify.jsonl", [verified(roots[0], 2),
                                                        verified(roots[1], 2)]),
    }


@pytest.fixture
def built(corpus: dict[str, Path], tmp_path: Path) -> Path:
    out = tmp_path / "dist" / "termgrade-environments"
    build_environments(out, task_roots=[corpus["tasks"]], labels=corpus["labels"],
                       splits=corpus["splits"], verify=corpus["verify"])
    return out


def test_tasks_config_rows_by_split(built: Path, corpus: dict[str, Path]) -> None:
    rows = {}
    for split in ("unseen", "train151", "heldout120"):
        table = pq.read_table(built / "data" / "tasks" / f"{split}-00000-of-00001.parquet")
        for row in table.to_pylist():
            assert row["split"] == split
            rows[row["task_id"]] = row
    assert set(rows) == {"alpha", "bravo", "charlie"}
    alpha = rows["alpha"]
    assert alpha["oracle_verified"] is True and alpha["verdict"] == "verified"
    assert alpha["n_assertions"] == 2
    assert rows["charlie"]["oracle_verified"] is False and rows["charlie"]["verdict"] is None
    assert alpha["archive"] == pack_task(corpus["tasks"] / "alpha")
    modes = {f["path"]: f["mode"] for f in alpha["files"]}
    assert modes["solution/solve.sh"] == 0o755
    assert json.loads(alpha["metadata_json"])["domain"] == "fixtures"
    assert alpha["instruction"] == "Write hello to /app/out.txt.\n"


def test_labels_config_jsonl_tree_registry_and_base_image(built: Path) -> None:
    labels = pq.read_table(built / "data" / "labels" / "train-00000-of-00001.parquet")
    assert labels.num_rows == 6
    lines = (built / "labels.jsonl").read_text().splitlines()
    assert [json.loads(x)["task_id"] for x in lines] == sorted(json.loads(x)["task_id"]
                                                               for x in lines)
    # Labels carry the task's split: "labels of training tasks" needs no join.
    splits = {(r["task_id"], r["split"]) for r in labels.to_pylist()}
    assert splits == {("alpha", "train151"), ("bravo", "heldout120"), ("charlie", "unseen")}
    assert {(json.loads(x)["task_id"], json.loads(x)["split"]) for x in lines} == splits
    assert (built / "tasks" / "alpha" / "solution" / "solve.sh").stat().st_mode & 0o777 == 0o755
    registry = json.loads((built / "registry.json").read_text())
    names = {d["name"]: [t["path"] for t in d["tasks"]] for d in registry}
    assert names["termgrade-environments"] == ["tasks/alpha", "tasks/bravo", "tasks/charlie"]
    assert names["termgrade-train151"] == ["tasks/alpha"]
    assert (built / "base_image" / "Dockerfile").is_file()
    assert not list((built / "base_image").rglob("*.crt")), "a host CA bundle must not ship"
    assert not [p for p in built.parent.iterdir() if p.name.startswith(".")], "staging left over"


def test_card_has_real_counts_tables_figures_and_field_docs(built: Path) -> None:
    meta, body = split_front_matter((built / "README.md").read_text())
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert configs["tasks"]["default"] is True
    assert [f["split"] for f in configs["tasks"]["data_files"]] == ["unseen", "train151",
                                                                    "heldout120"]
    assert configs["labels"]["data_files"] == [{"split": "train",
                                                "path": "data/labels/train-*.parquet"}]
    assert "3 Linux tasks" in body and "executable" not in body.split("## Quick start")[0]
    assert "2 of the 3 tasks are `oracle_verified`" in body and "the other 1 are not" in body
    # model-a: mean of 0.5 and 0.125 over measured tasks; one unmeasured
    assert "| model-a | terminus-2 | 8 | 3 | 16 | 5 | 0.3125 | 1 |" in body
    assert "| fixtures | 3 | 3 |" in body
    assert "pytest function names" in body and "`test_`" in body
    assert "/logs/verifier/reward.txt" in body
    assert "The model's message" not in body  # trajectory fields stay in their card
    assert "| `files[].sha256` | string | sha256 of the content, hex. |" in body
    for figure in ("figures/domain_difficulty.png", "figures/pass_rate_hist.png"):
        assert f"]({figure})" in body
        assert (built / figure).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "{{" not in body
    yaml.safe_load((built / "README.md").read_text().split("---")[1])
    # Provenance from the tasks' own metadata and this build's inputs, nothing claimed.
    assert "| unknown | unknown | not recorded (no `generator`) | 3 |" in body
    assert "2 of 3 tasks were run by `termgrade verify` for this build" in body
    assert "Labels come from grading `model-a` (terminus-2), `model-b` (terminus-2)" in body
    assert "An LLM wrote" not in body and "overlap with Terminal-Bench" not in body
    assert "@misc{ai_and_termgrade_environments," in body


def test_card_provenance_names_a_generator_and_says_when_nothing_was_verified(
        make_task: MakeTask, tmp_path: Path) -> None:
    toml = DEFAULT_TOML.replace('domain = "fixtures"\n', 'domain = "fixtures"\n'
                                'author = "lab"\nsource = "generated"\n'
                                'generator = "org/writer-model"\n')
    root = make_task("made", toml=toml)
    out = tmp_path / "env"
    build_environments(out, task_roots=[root.parent], repo_id="lab/envs")
    body = (out / "README.md").read_text()
    assert "| lab | generated | the model `org/writer-model` | 1 |" in body
    assert "No `termgrade verify` records were given to this build" in body
    assert "Labels come from" not in body
    assert "huggingface.co/datasets/lab/envs" in body


def test_rebuild_is_byte_identical(corpus: dict[str, Path], built: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_environments(again, task_roots=[corpus["tasks"]], labels=corpus["labels"],
                       splits=corpus["splits"], verify=corpus["verify"])
    for path in sorted(p for p in built.rglob("*") if p.is_file()):
        assert (again / path.relative_to(built)).read_bytes() == path.read_bytes(), path


def test_validate_passes_with_loading(built: Path) -> None:
    report = validate_repo(built)
    assert report.findings == []
    assert set(report.passed) >= {"card", "rows", "load", "archive", "registry", "secrets"}


def _harbor_resolves(harbor: Harbor, registry: Path, cwd: Path) -> dict[str, list[dict[str, str]]]:
    done = harbor.python_run(HARBOR_RESOLVES, str(registry), cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, list[dict[str, str]]] = json.loads(done.stdout)
    return result


@pytest.mark.harbor
def test_registry_loads_with_harbors_own_registry_from_the_repo_root(harbor: Harbor,
                                                                     built: Path) -> None:
    resolved = _harbor_resolves(harbor, Path("registry.json"), cwd=built)
    assert {name: [row["path"] for row in rows] for name, rows in resolved.items()} == {
        "termgrade-environments": ["tasks/alpha", "tasks/bravo", "tasks/charlie"],
        "termgrade-train151": ["tasks/alpha"], "termgrade-heldout120": ["tasks/bravo"],
        "termgrade-unseen": ["tasks/charlie"]}
    for rows in resolved.values():
        for row in rows:
            assert row["local"] == str(built / row["path"])
            assert row["loaded"] == Path(row["path"]).name, row


@pytest.mark.harbor
def test_registry_task_paths_resolve_from_the_working_directory(harbor: Harbor, built: Path,
                                                               tmp_path: Path) -> None:
    """registry.json's task paths are relative (``tasks/<id>``, no ``git_url``) and Harbor
    resolves them against the working directory, not the registry's folder: from anywhere
    but the repo root (the folder holding registry.json and tasks/), no task is found.
    The card must say to run Harbor from there; if this starts failing, Harbor or the
    builder changed and the card can drop that instruction."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resolved = _harbor_resolves(harbor, built / "registry.json", cwd=elsewhere)
    rows = [row for rows in resolved.values() for row in rows]
    assert rows and all(row["local"] == str(elsewhere / row["path"]) for row in rows)
    assert all(row["loaded"].startswith("FileNotFoundError") for row in rows), rows
    # What works from anywhere: the tasks/ folder itself (`harbor run -p REPO/tasks`).
    by_folder = _harbor_resolves(harbor, built / "tasks", cwd=elsewhere)
    assert [row["loaded"] for row in by_folder["path"]] == ["alpha", "bravo", "charlie"]


def test_no_split_file_means_unseen(make_task: MakeTask, tmp_path: Path) -> None:
    root = make_task("solo")
    out = tmp_path / "solo-repo"
    summary = build_environments(out, task_roots=[root])
    assert summary.split_counts == {"unseen": 1}
    meta, _ = split_front_matter((out / "README.md").read_text())
    assert [c["config_name"] for c in meta["configs"]] == ["tasks"]
    shutil.rmtree(out)


def test_empty_dirs_and_dir_modes_survive_into_the_tree(make_task: MakeTask,
                                                        tmp_path: Path) -> None:
    root = make_task("gamma")
    (root / "environment" / "empty").mkdir()
    (root / "tests").chmod(0o750)
    out = tmp_path / "gamma-repo"
    build_environments(out, task_roots=[root])
    assert (out / "tasks" / "gamma" / "environment" / "empty").is_dir()
    assert (out / "tasks" / "gamma" / "tests").stat().st_mode & 0o777 == 0o750
    assert pack_task(out / "tasks" / "gamma") == pack_task(root)
    assert validate_repo(out, load=False, secrets=False).findings == []


def test_labels_for_some_models_only_build_with_a_choice(corpus: dict[str, Path],
                                                         tmp_path: Path) -> None:
    partial = write_jsonl(tmp_path / "partial.jsonl", [
        *(LabelRow.model_validate_json(line)
          for line in corpus["labels"].read_text().splitlines()),
        label("alpha", "model-c", 0.5)])  # graded on one task of three
    with pytest.raises(RecordError, match="--model") as refused:
        build_environments(tmp_path / "all", task_roots=[corpus["tasks"]], labels=partial)
    assert "'model-c'" in str(refused.value)
    summary = build_environments(tmp_path / "a", task_roots=[corpus["tasks"]], labels=partial,
                                 models=["model-a"])
    assert summary.n_labels == 3
    with pytest.raises(RecordError, match="no labels for model"):
        build_environments(tmp_path / "z", task_roots=[corpus["tasks"]], labels=partial,
                           models=["model-z"])


def test_a_third_party_card_claims_no_license_no_termgrade_name_no_verification(
        make_task: MakeTask, tmp_path: Path) -> None:
    """Tasks of another corpus (source not TermGrade's), none verified, no license stated:
    the card names the repo, claims no license (and says how to set one), says nothing
    was verified, and carries the Hub's rl-environment tag."""
    toml = DEFAULT_TOML.replace('domain = "fixtures"\n', 'domain = "fixtures"\n'
                                'author = "them"\nsource = "termigen"\n')
    roots = [make_task(t, toml=toml) for t in ("one", "two")]
    out = tmp_path / "env"
    summary = build_environments(out, task_roots=[roots[0].parent], repo_id="me/termigen-envs")
    meta, body = split_front_matter((out / "README.md").read_text())
    assert summary.license is None and "license" not in meta
    assert meta["pretty_name"] == "termigen-envs" and body.startswith("# termigen-envs")
    assert "TermGrade environments" not in body and "Apache" not in body
    assert "rl-environment" in meta["tags"]
    assert "None of the 2 tasks was run by `termgrade verify` for this build" in body
    assert "`oracle_verified`: their reference solution" not in body
    license_section = body.split("## License")[1]
    assert "Not known to this build" in license_section and "`termigen`" in license_section
    assert "--license SPDX-ID" in license_section
    # Given by the maintainer, or stated by every task: then it is claimed.
    build_environments(out, task_roots=[roots[0].parent], overwrite=True, license="MIT")
    meta, body = split_front_matter((out / "README.md").read_text())
    assert meta["license"] == "mit" and "`mit`, as stated" in body.split("## License")[1]
    stated = DEFAULT_TOML.replace('domain = "fixtures"\n', 'domain = "fixtures"\n'
                                  'source = "termigen"\nlicense = "cc-by-4.0"\n')
    other = make_task("three", toml=stated)
    build_environments(out, task_roots=[other], overwrite=True)
    assert split_front_matter((out / "README.md").read_text())[0]["license"] == "cc-by-4.0"


def test_termgrades_own_tasks_are_apache_and_named_termgrade(make_task: MakeTask,
                                                              tmp_path: Path) -> None:
    toml = DEFAULT_TOML.replace('domain = "fixtures"\n', 'domain = "fixtures"\n'
                                'author = "termgrade"\nsource = "termgrade-original"\n')
    root = make_task("own", toml=toml)
    out = tmp_path / "env"
    build_environments(out, task_roots=[root])
    meta, body = split_front_matter((out / "README.md").read_text())
    assert meta["license"] == "apache-2.0" and meta["pretty_name"] == "TermGrade environments"
    assert "rl-environment" in meta["tags"]
    assert "Apache-2.0 (TermGrade's own tasks" in body.split("## License")[1]
