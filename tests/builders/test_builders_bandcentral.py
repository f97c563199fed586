"""`termgrade build bandcentral`: selected tasks with base pass rates, and verl prompts."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from termgrade.builders.bandcentral import build_bandcentral
from termgrade.builders.card import split_front_matter
from termgrade.builders.environments import build_environments
from termgrade.builders.errors import BuildError
from termgrade.builders.verl_prompts import BASH_SYSTEM_PROMPT
from termgrade.records import SplitRow
from termgrade.validate import validate_repo
from tests.support.labels import cli_app
from tests.support.records import label, write_jsonl
from tests.support.task_dirs import MakeTask


@pytest.fixture
def inputs(make_task: MakeTask, tmp_path: Path) -> dict[str, Path]:
    for name in ("alpha", "bravo", "charlie", "delta"):
        make_task(name)
    rates = {"alpha": 0.5, "bravo": 0.375, "charlie": 0.75, "delta": 1.0}
    return {
        "tasks": tmp_path / "tasks",
        "splits": write_jsonl(tmp_path / "splits.jsonl", [
            SplitRow(task_id="alpha", split="train151", pass_rate=0.5),
            SplitRow(task_id="bravo", split="train151", pass_rate=0.375),
            SplitRow(task_id="charlie", split="heldout120", pass_rate=0.75),
            SplitRow(task_id="delta", split="unseen", pass_rate=None)]),
        "labels": write_jsonl(tmp_path / "labels.jsonl",
                              [label(t, "gemma", r) for t, r in rates.items()]
                              + [label(t, "other", 0.0) for t in rates]),
    }


@pytest.mark.slow
def test_selected_tasks_and_verl_rows(inputs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "bc"
    summary = build_bandcentral(out, splits=inputs["splits"], task_roots=[inputs["tasks"]],
                                labels=inputs["labels"], model="gemma")
    assert summary.rates == {"train": [0.5, 0.375], "validation": [0.75]}
    train = pq.read_table(out / "data" / "tasks" / "train-00000-of-00001.parquet").to_pylist()
    assert [(r["task_id"], r["split"], r["base_model"], r["base_pass_rate"], r["k"])
            for r in train] == [("alpha", "train151", "gemma", 0.5, 8),
                                ("bravo", "train151", "gemma", 0.375, 8)]
    verl = pq.read_table(out / "data" / "verl" / "train-00000-of-00001.parquet").to_pylist()
    first = verl[0]
    assert first["data_source"] == "termgrade" and first["ability"] == "terminal"
    # the instruction as the grading scaffold sends it (stripped), as the trainer's rows
    assert first["prompt"] == [{"role": "system", "content": BASH_SYSTEM_PROMPT},
                               {"role": "user", "content": "Write hello to /app/out.txt."}]
    assert first["reward_model"] == {"style": "rule", "ground_truth": "alpha"}
    info = first["extra_info"]
    assert (info["split"], info["index"], info["task_id"], info["base_pass_rate"]) == (
        "train", 0, "alpha", 0.5)
    assert info["archive_sha256"] == train[0]["archive_sha256"]
    assert first["agent_name"] == "termgrade_bash" and "tools_kwargs" not in info
    assert (info["task_dir"], info["tests_dir"]) == ("tasks/alpha", "tasks/alpha/tests")
    assert (out / info["tests_dir"]).is_dir()
    assert verl[1]["extra_info"]["index"] == 1
    assert sorted(p.name for p in (out / "tasks").iterdir()) == ["alpha", "bravo", "charlie"]
    meta, body = split_front_matter((out / "README.md").read_text())
    assert [c["config_name"] for c in meta["configs"]] == ["tasks", "verl"]
    assert "| train | 2 | 0.4375 | 0.3750 | 0.5000 |" in body
    assert validate_repo(out).findings == []


def test_several_models_need_a_choice(inputs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(BuildError, match=r"(?s)2 model configurations.*--model"):
        build_bandcentral(tmp_path / "bc", splits=inputs["splits"],
                          task_roots=[inputs["tasks"]], labels=inputs["labels"])
    assert not (tmp_path / "bc").exists()


def test_split_pass_rates_without_labels(inputs: dict[str, Path], tmp_path: Path) -> None:
    summary = build_bandcentral(tmp_path / "bc", splits=inputs["splits"],
                                task_roots=[inputs["tasks"]])
    assert summary.rates["validation"] == [0.75]
    assert summary.base_model is None


def test_split_names_flow_from_select_to_both_builders(make_task: MakeTask,
                                                       tmp_path: Path) -> None:
    """`termgrade select --n 2 --val-n 1` names its splits train2 / heldout2; the builders
    take them as they are, by role, and the cards name them."""
    rates = {"alpha": 0.5, "bravo": 0.375, "charlie": 0.25, "delta": 0.75, "echo": 1.0}
    for name in rates:
        make_task(name)
    labels = write_jsonl(tmp_path / "labels.jsonl",
                         [label(t, "gemma", r) for t, r in rates.items()])
    splits = tmp_path / "splits.jsonl"
    runner = CliRunner()
    done = runner.invoke(cli_app(), ["select", str(labels), "--model", "gemma", "--n", "2",
                                     "--val-n", "1", "-o", str(splits), "--no-plot"])
    assert done.exit_code == 0, done.output
    flags = {r.task_id: (r.split, r.role) for r in
             (SplitRow.model_validate_json(line) for line in splits.read_text().splitlines())}
    assert flags == {"alpha": ("train2", "train"), "bravo": ("train2", "train"),
                     "charlie": ("heldout2", "validation"),
                     "delta": ("heldout2", "validation"), "echo": ("unseen", None)}
    summary = build_bandcentral(tmp_path / "bc", splits=splits, task_roots=[tmp_path / "tasks"],
                                labels=labels)
    assert summary.rates == {"train": [0.5, 0.375], "validation": [0.25, 0.75]}
    env = build_environments(tmp_path / "env", task_roots=[tmp_path / "tasks"], splits=splits,
                             labels=labels)
    assert env.split_counts == {"unseen": 1, "heldout2": 2, "train2": 2}
    card = (tmp_path / "env" / "README.md").read_text()
    assert "`train2` tasks were selected for RL training." in card
    assert "`heldout2` tasks were selected for validation." in card
    assert "train151" not in card and "heldout120" not in card
    # A split file from before rows had a role still means what its names say.
    legacy = write_jsonl(tmp_path / "legacy.jsonl", [
        SplitRow(task_id="alpha", split="train151", pass_rate=0.5),
        SplitRow(task_id="charlie", split="heldout120", pass_rate=0.25)])
    summary = build_bandcentral(tmp_path / "bc-legacy", splits=legacy,
                                task_roots=[tmp_path / "tasks"])
    assert summary.rates == {"train": [0.5], "validation": [0.25]}


def test_the_corpus_bandcentral_repo_validates_with_its_baseline_and_base_image(
        tmp_path: Path) -> None:
    """From the real corpus, with a task whose files hold a planted secret: the reviewed
    baseline goes beside the repo and the base image recipe inside it, so it validates."""
    root = Path(__file__).resolve().parents[2] / "environments"
    splits = write_jsonl(tmp_path / "splits.jsonl", [
        SplitRow(task_id="git-purge-secret-history", split="train3", role="train",
                 pass_rate=0.5),
        SplitRow(task_id="word-frequency", split="train3", role="train", pass_rate=0.5),
        SplitRow(task_id="csv-keyed-join", split="heldout1", role="validation",
                 pass_rate=0.25)])
    out = tmp_path / "bc"
    summary = build_bandcentral(out, splits=splits, task_roots=[root])
    assert summary.secrets_baseline == out.parent / f"{out.name}.secrets.baseline"
    assert (out / "base_image" / "Dockerfile").is_file()
    report = validate_repo(out)
    assert report.ok, report.findings
    # Without the baseline the same repo does not validate: the check is live.
    summary.secrets_baseline.unlink()
    assert any(f.check == "secrets" for f in validate_repo(out).findings)


def test_the_selection_report_ships_and_the_card_links_it(make_task: MakeTask,
                                                          tmp_path: Path) -> None:
    import re

    from termgrade.cli.app import app
    from termgrade.core.errors import DataWarning
    from termgrade.selection.chosen import selection_report_paths

    rates = {"alpha": 0.5, "bravo": 0.375, "charlie": 0.25, "delta": 0.75, "echo": 1.0}
    for name in rates:
        make_task(name)
    labels = write_jsonl(tmp_path / "labels.jsonl",
                         [label(t, "gemma", r) for t, r in rates.items()])
    splits = tmp_path / "splits.jsonl"
    done = CliRunner().invoke(cli_app(), ["select", str(labels), "--model", "gemma", "--n",
                                          "2", "--val-n", "1", "-o", str(splits)])
    assert done.exit_code == 0, done.output
    written = selection_report_paths(splits)
    done = CliRunner().invoke(app, ["build", "bandcentral", "-o", str(tmp_path / "bc"),
                                          "--splits", str(splits), "-t", str(tmp_path / "tasks"),
                                          "--labels", str(labels)])
    assert done.exit_code == 0, done.output
    repo = tmp_path / "bc"
    for kind in ("json", "md", "png"):
        assert (repo / "selection" / f"selection.{kind}").read_bytes() == \
            written[kind].read_bytes()
    card = (repo / "README.md").read_text()
    links = re.findall(r"\]\((selection/[^)]+)\)", card)
    assert sorted(links) == ["selection/selection.json", "selection/selection.md",
                             "selection/selection.png"]
    assert all((repo / link).is_file() for link in links)
    # A report of another selection is refused, naming it; no report at all is a warning.
    other = write_jsonl(tmp_path / "other.jsonl", [
        SplitRow(task_id="echo", split="train1", role="train", pass_rate=1.0),
        SplitRow(task_id="alpha", split="heldout1", role="validation", pass_rate=0.5)])
    with pytest.raises(BuildError, match=r"splits.selection.json: the report's train tasks"):
        build_bandcentral(tmp_path / "bc-other", splits=other, task_roots=[tmp_path / "tasks"],
                          selection_report=written["json"])
    with pytest.warns(DataWarning, match=r"no selection report beside .*other.jsonl"):
        build_bandcentral(tmp_path / "bc-none", splits=other, task_roots=[tmp_path / "tasks"])
    assert "No report of the `termgrade select` run" in (tmp_path / "bc-none" /
                                                         "README.md").read_text()
    assert not (tmp_path / "bc-none" / "selection").exists()
    with pytest.raises(BuildError, match=r"missing.json: no such selection report"):
        build_bandcentral(tmp_path / "bc-missing", splits=splits,
                          task_roots=[tmp_path / "tasks"],
                          selection_report=tmp_path / "missing.json")


def test_a_selection_without_validation_tasks_is_refused_naming_the_fix(
        make_task: MakeTask, tmp_path: Path) -> None:
    """`train prepare` needs train and validation tasks; a repo without validation ones
    would be refused there as "not a bandcentral repo". The build refuses it first."""
    make_task("alpha")
    make_task("bravo")
    only_train = write_jsonl(tmp_path / "splits.jsonl", [
        SplitRow(task_id="alpha", split="train2", role="train", pass_rate=0.5),
        SplitRow(task_id="bravo", split="train2", role="train", pass_rate=0.5)])
    with pytest.raises(BuildError, match="no task in --splits was selected for validation") \
            as caught:
        build_bandcentral(tmp_path / "bc", splits=only_train, task_roots=[tmp_path / "tasks"])
    assert "--val-n N" in str(caught.value)
    assert not (tmp_path / "bc").exists()


def test_the_card_claims_no_license_it_does_not_know(inputs: dict[str, Path],
                                                      tmp_path: Path) -> None:
    """The fixture tasks state no license and are not TermGrade's: no license field, a
    License section that says how to set one; --license fills both. The Hub's
    rl-environment tag is there."""
    out = tmp_path / "bc"
    build_bandcentral(out, splits=inputs["splits"], task_roots=[inputs["tasks"]],
                      repo_id="me/bc-tasks")
    meta, body = split_front_matter((out / "README.md").read_text())
    assert "license" not in meta and "rl-environment" in meta["tags"]
    assert meta["pretty_name"] == "bc-tasks"
    assert "Not known to this build" in body.split("## License")[1]
    assert "termgrade build bandcentral --license SPDX-ID" in body
    build_bandcentral(out, splits=inputs["splits"], task_roots=[inputs["tasks"]],
                      overwrite=True, license="MIT")
    meta, body = split_front_matter((out / "README.md").read_text())
    assert meta["license"] == "mit" and "`mit`, as stated" in body


BASH_ONLY_TEST_SH = ("#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
                     "grep -qx hello /app/out.txt && echo 1 > /logs/verifier/reward.txt "
                     "|| echo 0 > /logs/verifier/reward.txt\n")


def test_unattested_tasks_are_left_out_unless_included(make_task: MakeTask,
                                                       tmp_path: Path) -> None:
    make_task("plain")
    make_task("held")
    make_task("bash-only", test_sh=BASH_ONLY_TEST_SH)
    make_task("bash-only-held", test_sh=BASH_ONLY_TEST_SH)
    make_task("labelled-off")
    held = SplitRow(task_id="held", split="heldout1", pass_rate=0.25, role="validation")
    splits = write_jsonl(tmp_path / "splits.jsonl", [
        *(SplitRow(task_id=t, split="train3", pass_rate=0.5, role="train")
          for t in ("plain", "bash-only", "labelled-off")), held])
    labels = write_jsonl(tmp_path / "labels.jsonl", [
        label("plain", "gemma", 0.5), label("bash-only", "gemma", 0.5),
        label("labelled-off", "gemma", 0.5).model_copy(update={"attested": False}),
        label("held", "gemma", 0.25), label("bash-only-held", "gemma", 0.5)])
    summary = build_bandcentral(tmp_path / "bc", splits=splits, labels=labels,
                                task_roots=[tmp_path / "tasks"])
    assert sorted(summary.unattested) == ["bash-only", "labelled-off"]
    assert "runs no pytest" in summary.unattested["bash-only"]
    assert sorted(p.name for p in (tmp_path / "bc" / "tasks").iterdir()) == ["held", "plain"]
    assert summary.rates == {"train": [0.5], "validation": [0.25]}
    summary = build_bandcentral(tmp_path / "bc-all", splits=splits, labels=labels,
                                task_roots=[tmp_path / "tasks"], include_unattested=True)
    assert summary.included_unattested and len(summary.rates["train"]) == 3
    only = write_jsonl(tmp_path / "only.jsonl", [
        SplitRow(task_id="bash-only", split="train1", pass_rate=0.5, role="train"),
        SplitRow(task_id="bash-only-held", split="heldout1", pass_rate=0.5,
                 role="validation")])
    with pytest.raises(BuildError, match="every selected task is unattested: bash-only"):
        build_bandcentral(tmp_path / "bc-none", splits=only, task_roots=[tmp_path / "tasks"])


def test_build_bandcentral_cli_says_what_it_left_out(make_task: MakeTask,
                                                     tmp_path: Path) -> None:
    from termgrade.cli.app import app

    make_task("plain")
    make_task("held")
    make_task("bash-only", test_sh=BASH_ONLY_TEST_SH)
    splits = write_jsonl(tmp_path / "splits.jsonl", [
        *(SplitRow(task_id=t, split="train2", pass_rate=0.5, role="train")
          for t in ("plain", "bash-only")),
        SplitRow(task_id="held", split="heldout1", pass_rate=0.25, role="validation")])
    args = ["build", "bandcentral", "-o", str(tmp_path / "bc"), "--splits", str(splits),
            "-t", str(tmp_path / "tasks")]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    assert "left out 1 unattested task(s)" in text and "bash-only" in text
    done = CliRunner().invoke(app, [*args[:3], str(tmp_path / "bc2"), *args[4:],
                                    "--include-unattested"])
    assert done.exit_code == 0, done.output
    assert "including 1 unattested task(s)" in " ".join(done.output.split())
