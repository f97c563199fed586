"""`termgrade train prepare`: a bandcentral repo -> the run directory verl needs, and the
monitor reading what verl's own file logger writes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from termgrade.builders.bandcentral import build_bandcentral
from termgrade.cli import app
from termgrade.core.errors import OptionError
from termgrade.records import SplitRow
from termgrade.training.monitor import monitor_run
from termgrade.training.prepare import prepare_run, read_record
from termgrade.training.recipe import AGENT_NAME, GrpoRecipe
from tests.support.bandcentral import PAPER_MODEL, labelled_bandcentral
from tests.support.records import write_jsonl
from tests.support.task_dirs import MakeTask

pytestmark = pytest.mark.filterwarnings("ignore:no selection report beside")

SMALL = GrpoRecipe(train_batch_size=2, ppo_mini_batch_size=2, total_training_steps=1)
"""The fixture repo's 2 training tasks make one batch of 2 (verl refuses a batch larger
than the tasks: see test_training_checks.py)."""


@pytest.fixture
def bandcentral(make_task: MakeTask, tmp_path: Path) -> Path:
    for name in ("alpha", "bravo", "charlie"):
        make_task(name)
    splits = write_jsonl(tmp_path / "splits.jsonl", [
        SplitRow(task_id="alpha", split="train151", pass_rate=0.5),
        SplitRow(task_id="bravo", split="train151", pass_rate=0.375),
        SplitRow(task_id="charlie", split="heldout120", pass_rate=0.75)])
    out = tmp_path / "bandcentral"
    build_bandcentral(out, splits=splits, task_roots=[tmp_path / "tasks"])
    return out


@pytest.fixture
def paper_sized(make_task: MakeTask, tmp_path: Path) -> Path:
    """16 training tasks (one batch of the paper's 16), selected for gemma-4-31B-it."""
    return labelled_bandcentral(make_task, tmp_path, 16)


def test_prepare_writes_everything_a_verl_run_needs(verl: Any, bandcentral: Path,
                                                    tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = prepare_run(str(bandcentral), run, recipe=SMALL)
    train = pq.read_table(run / "data" / "train.parquet").to_pylist()
    validation = pq.read_table(run / "data" / "validation.parquet").to_pylist()
    assert [r["extra_info"]["task_id"] for r in train] == ["alpha", "bravo"]
    assert [r["extra_info"]["task_id"] for r in validation] == ["charlie"]
    first = train[0]
    assert first["agent_name"] == AGENT_NAME and first["data_source"] == "termgrade"
    assert first["reward_model"] == {"style": "rule", "ground_truth": "alpha"}
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    info = first["extra_info"]
    assert info["task_dir"] == "tasks/alpha" and info["tests_dir"] == "tasks/alpha/tests"
    assert (run / info["tests_dir"] / "test_outputs.py").is_file()
    assert info["image"] == "termgrade/task-alpha:local"
    assert info["base_pass_rate"] == 0.5 and info["split"] == "train"
    assert len(info["archive_sha256"]) == 64

    loops = yaml.safe_load((run / "agent_loop.yaml").read_text())
    assert loops[0]["name"] == AGENT_NAME
    assert loops[0]["_target_"] == "termgrade.training.agent_loop.BashAgentLoop"

    record = read_record(run / "run.json")
    assert record == done.record and record.verl_checked
    assert record.splits["train"].tasks == 2
    assert record.splits["train"].mean_base_pass_rate == pytest.approx(0.4375)
    assert record.recipe["lora_rank"] == 32 and "paper" in record.recipe_sources["lora_rank"]
    assert any("max_num_gen_batches" in d for d in record.deviations)

    script = (run / "launch.sh").read_text()
    for override in record.overrides:  # every override is named in the script
        key, _, value = override.partition("=")
        assert key in script and value in script, override
    lint = subprocess.run(["shellcheck", "--severity=style", str(run / "launch.sh")],
                          capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout
    assert "verl[vllm]==0.9.1" in script and "'vllm': '0.24.0'" in script

    with pytest.raises(OptionError, match="already holds a run"):
        prepare_run(str(bandcentral), run, recipe=SMALL)


def test_verls_dataset_reads_the_prompt_rows(verl: Any, bandcentral: Path,
                                             tmp_path: Path) -> None:
    """verl's own RLHFDataset (what the trainer's dataloader uses) reads the parquet and
    hands the agent loop what it needs (tokenizer: the tiny local one)."""
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from termgrade.training.recipe import GrpoRecipe, as_hydra, recipe_overrides
    from termgrade.training.verl_config import compose_verl_config
    from tests.support.tiny_tokenizer import tiny_tokenizer

    run = tmp_path / "run"
    prepare_run(str(bandcentral), run, recipe=SMALL)
    config = compose_verl_config(as_hydra(recipe_overrides(GrpoRecipe())))
    dataset = RLHFDataset(data_files=[str(run / "data" / "train.parquet")],
                          tokenizer=tiny_tokenizer(), config=config.data)
    assert len(dataset) == 2
    item = dataset[1]
    assert item["agent_name"] == AGENT_NAME and item["data_source"] == "termgrade"
    assert [m["role"] for m in item["raw_prompt"]] == ["system", "user"]
    assert item["extra_info"]["task_dir"] == "tasks/bravo" and item["index"] == 1


def test_the_launch_script_refuses_a_node_with_other_versions(verl: Any, bandcentral: Path,
                                                              tmp_path: Path) -> None:
    """Run for real here: this venv has verl 0.9.1 but no vLLM and a CPU torch 2.13."""
    run = tmp_path / "run"
    prepare_run(str(bandcentral), run, recipe=SMALL)
    done = subprocess.run(["bash", str(run / "launch.sh")], capture_output=True, text=True,
                          check=False, env={"PATH": "/usr/bin:/bin",
                                            "PYTHON": str(Path(sys.executable).absolute())})
    assert done.returncode != 0
    assert "vllm missing (want 0.24.0)" in done.stderr and "TERMGRADE_INSTALL=1" in done.stderr


def test_prepare_cli_and_bad_repo(bandcentral: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["train", "prepare", "--repo", str(bandcentral),
                                       "-o", str(tmp_path / "run"), "--steps", "3",
                                 "--batch-size", "2"])
    assert result.exit_code == 0, result.output
    assert read_record(tmp_path / "run" / "run.json").recipe["total_training_steps"] == 3
    assert "trainer.total_training_steps=3" in (tmp_path / "run" / "launch.sh").read_text()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["train", "prepare", "--repo", str(empty),
                                       "-o", str(tmp_path / "run2")])
    assert result.exit_code == 1
    assert "no train-*.parquet" in result.output and "fix:" in result.output


def _log_steps(path: Path, steps: list[dict[str, float]]) -> None:
    """Metrics written by verl's own FileLogger (what `trainer.logger=file` runs)."""
    import os

    from verl.utils.tracking import FileLogger

    os.environ["VERL_FILE_LOGGER_PATH"] = str(path)
    try:
        logger = FileLogger("termgrade", "grpo-pp")
        for step, data in enumerate(steps, start=1):
            logger.log(data, step)
        logger.finish()
    finally:
        del os.environ["VERL_FILE_LOGGER_PATH"]


def test_monitor_reads_verl_metrics_and_warns_when_tasks_drift(verl: Any, paper_sized: Path,
                                                               tmp_path: Path) -> None:
    run = tmp_path / "run"
    prepare_run(str(paper_sized), run)
    _log_steps(run / "metrics.jsonl", [
        {"critic/score/mean": 0.4, "num_turns/mean": 21.0,
         "training/filter_groups/evicted_samples": 12,
         "training/filter_groups/discarded_surplus_samples": 4,
         "val-core/termgrade/acc/mean@1": 0.45},
        {"critic/score/mean": 0.5, "num_turns/mean": 19.0,
         "training/filter_groups/evicted_samples": 120,
         "training/filter_groups/discarded_surplus_samples": 8},
    ])
    report = monitor_run(run)
    assert [r.gen_batches for r in report.rows] == [2.0, 9.0]
    assert report.rows[0].val_score == 0.45 and report.rows[1].turns == 19.0
    assert len(report.warnings) == 1 and report.warnings[0].startswith("step 2: 9.0")
    assert "regrade" in report.warnings[0].lower()
    assert report.plot is not None and report.plot.read_bytes()[:4] == b"\x89PNG"
    assert report.table is not None and "| 1 | 0.400 | 0.450 | 21.0 | 16 | 12 | 2.00 |" \
        in report.table.read_text()
    result = CliRunner().invoke(app, ["train", "monitor", str(run)])
    assert result.exit_code == 0 and "drifted out of band" in result.output


def test_monitor_names_a_broken_metrics_file(bandcentral: Path, tmp_path: Path,
                                             verl: Any) -> None:
    run = tmp_path / "run"
    prepare_run(str(bandcentral), run, recipe=SMALL)
    with pytest.raises(OptionError, match="no metrics yet"):
        monitor_run(run)
    (run / "metrics.jsonl").write_text(json.dumps({"step": 1}) + "\n")
    with pytest.raises(OptionError, match=r"metrics.jsonl:1: not a verl file-logger line"):
        monitor_run(run)


def test_the_checkpoint_card_comes_from_the_run(verl: Any, paper_sized: Path,
                                                tmp_path: Path) -> None:
    from termgrade.training.checkpoint_card import build_checkpoint_card

    bandcentral = paper_sized
    run = tmp_path / "run"
    prepare_run(str(bandcentral), run)
    not_run = (build_checkpoint_card(tmp_path / "card0", run=run) / "README.md").read_text()
    assert "_This run has produced no training metrics_" in not_run
    assert "This repo holds no adapter yet" in not_run
    _log_steps(run / "metrics.jsonl", [
        {"critic/score/mean": 0.375, "num_turns/mean": 12.0,
         "training/filter_groups/evicted_samples": 16,
         "training/filter_groups/discarded_surplus_samples": 0}])
    card = build_checkpoint_card(tmp_path / "card1", run=run)
    text = (card / "README.md").read_text()
    assert "## Training run" in text and "1 update(s) logged by verl" in text
    assert "| 1 | 0.375 | - | 12.0 | 16 | 16 | 2.00 |" in text
    config = yaml.safe_load((card / "training_config.yaml").read_text())
    assert config["recipe"]["lora_rank"] == 32 and config["dataset"] == str(bandcentral)
    assert config["verl_overrides"] == read_record(run / "run.json").overrides
    assert any("max_num_gen_batches" in d for d in config["deviations_from_the_paper"])
    result = CliRunner().invoke(app, ["build", "checkpoint-card", "-o", str(tmp_path / "c2"),
                                      "--run", str(run), "--config", str(run / "run.json")])
    assert result.exit_code == 1 and "--config and --run both given" in result.output


def test_launch_and_eval_commands(verl: Any, bandcentral: Path, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    prepare_run(str(bandcentral), run, recipe=SMALL)
    runner = CliRunner()
    dry = runner.invoke(app, ["train", "launch", str(run), "--dry-run"])
    assert dry.exit_code == 0 and dry.output.strip() == f"bash {run / 'launch.sh'}"
    if shutil.which("nvidia-smi") is None:  # this CPU machine: refused, naming the fix
        here = runner.invoke(app, ["train", "launch", str(run)])
        assert here.exit_code == 1 and "no GPU here" in here.output
    missing = runner.invoke(app, ["train", "launch", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and "train prepare" in missing.output
    monkeypatch.chdir(tmp_path)
    plan = runner.invoke(app, ["train", "eval", "--model", "openai/adapter", "--dry-run"])
    assert plan.exit_code == 0
    # the agent, model and endpoint are in the job config (with the 2 h timeout):
    # tests/training/test_training_eval.py
    assert "harbor run -y -c jobs/tb21-eval.harbor-job.json -d terminal-bench@2.1 -k 3" \
        in plan.output
    assert "89 tasks" in plan.output and "2 h per task" in plan.output


def test_the_model_the_tasks_were_selected_for_is_trained(verl: Any, make_task: MakeTask,
                                                          tmp_path: Path) -> None:
    """A repo selected for Qwen3-8B renders a run of Qwen3-8B with the Hermes parser, in
    the launch script, verl's own tool-format key and the agent loop's config."""
    repo = labelled_bandcentral(make_task, tmp_path, 2, model="Qwen/Qwen3-8B")
    run = tmp_path / "run"
    done = prepare_run(str(repo), run, recipe=SMALL)
    assert done.record.recipe["base_model"] == "Qwen/Qwen3-8B"
    assert done.record.recipe["tool_format"] == "hermes"
    assert done.record.selected_for_model == "Qwen/Qwen3-8B"
    assert done.record.tool_parser_source == "family qwen"
    script = (run / "launch.sh").read_text()
    assert "actor_rollout_ref.model.path=Qwen/Qwen3-8B" in script
    assert "actor_rollout_ref.rollout.multi_turn.format=hermes" in script
    assert "gemma" not in script
    assert yaml.safe_load((run / "agent_loop.yaml").read_text())[0]["tool_format"] == "hermes"


def test_training_another_model_is_refused_then_warned(verl: Any, make_task: MakeTask,
                                                       tmp_path: Path) -> None:
    repo = labelled_bandcentral(make_task, tmp_path, 2)
    runner = CliRunner()
    args = ["train", "prepare", "--repo", str(repo), "--batch-size", "2", "--steps", "1",
            "--base-model", "Qwen/Qwen3-8B"]
    refused = runner.invoke(app, [*args, "-o", str(tmp_path / "r1")])
    assert refused.exit_code == 1 and not (tmp_path / "r1").exists()
    assert "selected for google/gemma-4-31B-it" in refused.output
    assert "--train-other-model" in refused.output
    done = runner.invoke(app, [*args, "--train-other-model", "-o", str(tmp_path / "r2")])
    assert done.exit_code == 0, done.output
    assert "warning:" in done.output and "task x model x scaffold" in done.output
    record = read_record(tmp_path / "r2" / "run.json")
    assert record.recipe["base_model"] == "Qwen/Qwen3-8B"
    assert record.recipe["tool_format"] == "hermes" and record.warnings
    parser = runner.invoke(app, ["train", "prepare", "--repo", str(repo), "--batch-size", "2",
                                 "--tool-parser", "hermes", "-o", str(tmp_path / "r3")])
    assert parser.exit_code == 0, parser.output
    assert read_record(tmp_path / "r3" / "run.json").recipe["tool_format"] == "hermes"


def test_a_one_task_repo_is_refused_before_anything_is_written(make_task: MakeTask,
                                                               tmp_path: Path) -> None:
    repo = labelled_bandcentral(make_task, tmp_path, 1)
    result = CliRunner().invoke(app, ["train", "prepare", "--repo", str(repo),
                                      "-o", str(tmp_path / "run")])
    assert result.exit_code == 1
    assert "1 training task(s) for train_batch_size 16" in result.output
    assert "termgrade select --n 16" in result.output and "fix:" in result.output
    assert not (tmp_path / "run").exists()


def test_the_paper_run_renders_the_token_budgets(verl: Any, paper_sized: Path,
                                                 tmp_path: Path) -> None:
    done = prepare_run(str(paper_sized), tmp_path / "run")
    overrides = dict(o.split("=", 1) for o in done.record.overrides)
    assert overrides["actor_rollout_ref.actor.ppo_max_token_len_per_gpu"] == "69632"
    assert overrides["actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu"] == "69632"
    assert overrides["actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"] == "69632"
    assert overrides["actor_rollout_ref.rollout.max_model_len"] == "69632"
    assert done.record.verl_checked
    assert any("ends after 1 of the 5 steps" in w for w in done.record.warnings)


def test_smoke_renders_one_step_on_one_gpu(verl: Any, paper_sized: Path,
                                           tmp_path: Path) -> None:
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from termgrade.training.verl_config import compose_verl_config
    from tests.support.tiny_tokenizer import tiny_tokenizer

    run = tmp_path / "smoke"
    result = CliRunner().invoke(app, ["train", "prepare", "--repo", str(paper_sized),
                                      "--smoke", "-o", str(run)])
    assert result.exit_code == 0, result.output
    record = read_record(run / "run.json")
    assert record.smoke and record.recipe["base_model"] == "google/gemma-4-E2B-it"
    assert record.recipe["tool_format"] == "gemma4"
    concrete = [o.replace("$RUN_DIR", str(run)) for o in record.overrides]
    config = compose_verl_config(concrete)
    assert config.trainer.n_gpus_per_node == 1 and config.trainer.total_training_steps == 1
    assert config.actor_rollout_ref.rollout.tensor_model_parallel_size == 1
    assert config.data.train_batch_size == 2 and config.actor_rollout_ref.rollout.n == 4
    dataset = RLHFDataset(data_files=[str(run / "data" / "train.parquet")],
                          tokenizer=tiny_tokenizer(), config=config.data)
    assert len(dataset) == 16 and len(dataset) // config.data.train_batch_size >= 1
    assert "stands in for google/gemma-4-31B-it" in result.output


def test_the_repos_verl_rows_are_the_trainers_rows(verl: Any, paper_sized: Path,
                                                   tmp_path: Path) -> None:
    """The bandcentral `verl` config and `train prepare`'s parquet hold the same rows:
    agent loop name, prompt, task paths (the repo ships tasks/ where the run unpacks them)."""
    from termgrade.training.agent_loop import BashAgentLoop  # noqa: F401  (registers it)

    prepare_run(str(paper_sized), tmp_path / "run")
    for split in ("train", "validation"):
        repo_rows = pq.read_table(paper_sized / "data" / "verl" /
                                  f"{split}-00000-of-00001.parquet").to_pylist()
        run_rows = pq.read_table(tmp_path / "run" / "data" / f"{split}.parquet").to_pylist()
        assert repo_rows == run_rows
    loops = yaml.safe_load((tmp_path / "run" / "agent_loop.yaml").read_text())
    assert {r["agent_name"] for r in repo_rows} == {loops[0]["name"]}
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    assert loops[0]["name"] in _agent_loop_registry


def test_the_cards_quick_start_runs_up_to_the_gpu_step(verl: Any, paper_sized: Path,
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `termgrade` line of the card's bash quick start, as written (the repo id points
    at the staged repo, the working directory is fresh); the launch line needs the node."""
    import re
    import shlex

    from termgrade.agent.scaffold import TOOLS
    from termgrade.builders.bandcentral import DEFAULT_REPO_ID

    card = (paper_sized / "README.md").read_text()
    block = re.findall(r"```bash\n(.*?)```", card, re.S)[0]
    assert "python -m verl.trainer.main_ppo" not in card
    assert f"Train `{PAPER_MODEL}`" in card
    assert json.dumps(list(TOOLS), indent=2) in card
    monkeypatch.chdir(tmp_path)
    ran = 0
    for line in block.splitlines():
        if not line.startswith("termgrade "):
            continue
        args = [str(paper_sized) if a == DEFAULT_REPO_ID else a for a in shlex.split(line)[1:]]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (line, result.output)
        ran += 1
    assert ran == 2
    assert (tmp_path / "run" / "launch.sh").is_file()
    assert (tmp_path / "smoke" / "run.json").is_file()
    assert "bash run/launch.sh" in block


def test_without_verls_files_prepare_says_what_it_did_not_check(
        bandcentral: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel install without verl: the recipe's own limits still hold, and the message
    and run.json say the composition with verl's config did not run."""
    import termgrade.training.verl_config as verl_config
    from termgrade.training.prepare import UNCHECKED_WITHOUT_VERL

    monkeypatch.setattr(verl_config, "find_verl_config_dir", lambda: None)
    result = CliRunner().invoke(app, ["train", "prepare", "--repo", str(bandcentral),
                                      "--batch-size", "2", "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "not composed with its ppo_trainer config" in result.output
    record = read_record(tmp_path / "run" / "run.json")
    assert not record.verl_checked and UNCHECKED_WITHOUT_VERL in record.warnings
    with pytest.raises(OptionError, match="verl is not installed here") as caught:
        verl_config.verl_config_dir()
    assert "pip install --no-deps 'verl==0.9.1'" in caught.value.fix
    refused = CliRunner().invoke(app, ["train", "prepare", "--repo", str(bandcentral),
                                       "-o", str(tmp_path / "run2")])
    assert refused.exit_code == 1 and "(train-dataloader)" in refused.output


def test_a_task_the_agent_loop_would_not_find_is_named(verl: Any, bandcentral: Path,
                                                       tmp_path: Path) -> None:
    from termgrade.training.data import SplitData, read_split
    from termgrade.training.paths import RunPaths
    from termgrade.training.prepare import _check_run_files

    run = tmp_path / "run"
    prepare_run(str(bandcentral), run, recipe=SMALL)
    paths = RunPaths(run)
    splits = {s: SplitData(s, read_split(paths.split_file(s))) for s in ("train", "validation")}
    _check_run_files(paths, splits)
    shutil.rmtree(run / "tasks" / "bravo" / "tests")
    with pytest.raises(OptionError, match=r"would not find train: tasks/bravo/tests"):
        _check_run_files(paths, splits)
