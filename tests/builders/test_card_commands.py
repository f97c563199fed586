"""Every command a generated card shows works, run the way a user would run it.

Four small repos are built (environments, trajectories, bandcentral, checkpoint) and each
card's fenced blocks are taken apart:

* ``python``: run, a card's blocks in order in one interpreter (a later block may use an
  earlier one's imports), with the local repo dir in place of the Hub id, offline. The
  checkpoint card's block loads a 31B base model from the Hub and needs ``peft`` and a GPU:
  it is compiled and its ids checked, not run.
* ``bash``: each command, continuation lines joined. ``hf download`` is checked against
  ``hf download --help`` and stands in by copying the local repo to ``--local-dir`` (no
  Hub here); ``cd`` moves; ``termgrade`` commands run for real (those that need Docker are
  parsed by the real CLI: ``--help`` after the arguments, so an unknown option fails);
  ``docker`` builds images and needs a daemon, so each option is checked against
  ``docker <command> --help`` and each repo path it names must exist; the verl trainer
  needs a GPU cluster, so the data files it is pointed at must exist.
* ``yaml``: the checkpoint card's copy of ``training_config.yaml`` must equal that file;
  ``bibtex`` (a citation) must be one balanced entry.
* inline ``termgrade ...`` spans in the prose: the subcommand and its options must parse;
  ``termgrade materialize`` is run.

A block in another language, or a command no handler knows, fails the test, so a new
command cannot slip into a card untested.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from termgrade.builders.bandcentral import build_bandcentral
from termgrade.builders.environments import build_environments
from termgrade.builders.trajectories import build_trajectories
from termgrade.cli.app import app
from termgrade.training.checkpoint_card import build_checkpoint_card
from tests.support.labels import cli_app
from tests.support.records import label, trial, write_jsonl, write_trials
from tests.support.task_dirs import write_task

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`(termgrade [^`]+)`")
IDS = {"environments": "lab/envs", "trajectories": "lab/traj", "bandcentral": "lab/bc",
       "checkpoint": "lab/ckpt"}
TASKS = ("alpha", "bravo", "charlie", "delta", "echo")
MODEL = "google/gemma-4-31B-it"
"""The graded model: the bandcentral card's `termgrade train` lines train it."""
DOCKER_REASON = "builds images and runs containers: needs a Docker daemon"
runner = CliRunner()


@dataclass
class Card:
    name: str
    repo: Path
    text: str
    work: Path
    ran: list[str] = field(default_factory=list)
    """What was executed or checked, for the assertions."""


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cards")
    rates = dict(zip(TASKS, (0.5, 0.375, 0.25, 0.75, 1.0), strict=True))
    for task_id in TASKS:
        write_task(root / "tasks", task_id)
    labels = write_jsonl(root / "labels.jsonl", [
        label(t, MODEL, r).model_copy(update={"scaffold": "bash-tool"}) for t, r in rates.items()])
    splits = root / "splits.jsonl"
    done = runner.invoke(cli_app(), ["select", str(labels), "--model", MODEL, "--n", "2",
                                     "--val-n", "1", "-o", str(splits)])
    assert done.exit_code == 0, done.output
    tasks = [root / "tasks"]
    build_environments(root / "environments", task_roots=tasks, labels=labels, splits=splits,
                       repo_id=IDS["environments"])
    trials = write_trials(root / "trials.jsonl",
                          [trial(i, task_id=TASKS[i % 3]) for i in range(6)])
    build_trajectories(root / "trajectories", trials=trials, task_roots=tasks, splits=splits,
                       labels=labels, repo_id=IDS["trajectories"],
                       environments_repo=IDS["environments"])
    build_bandcentral(root / "bandcentral", splits=splits, task_roots=tasks, labels=labels,
                      repo_id=IDS["bandcentral"])
    build_checkpoint_card(root / "checkpoint", repo_id=IDS["checkpoint"])
    return {name: root / name for name in IDS}


def _env(card: Card) -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "HF_HOME": str(card.work / "hf_home"), "PYTHONPATH": str(ROOT),
            "TERMGRADE_PROGRESS": "0"}


# -- python ---------------------------------------------------------------------------------

_DRIVER = """
import sys
namespace = {}
for i, path in enumerate(sys.argv[1:]):
    code = open(path, encoding="utf-8").read()
    exec(compile(code, f"<card python block {i}>", "exec"), namespace)
"""


def _run_python(card: Card, blocks: list[str]) -> None:
    if card.name == "checkpoint":
        # PeftModel.from_pretrained of a 31B Hub model: needs peft, the network and a GPU.
        for block in blocks:
            tree = ast.parse(block)
            strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
            config = yaml.safe_load((card.repo / "training_config.yaml").read_text())
            assert IDS["checkpoint"] in strings and config["base_model"] in strings
            card.ran.append("python (compiled: needs peft, the Hub and a GPU)")
        return
    files = []
    for i, block in enumerate(blocks):
        code = block.replace(f'"{IDS[card.name]}"', repr(str(card.repo)))
        path = card.work / f"block{i}.py"
        path.write_text(code)
        files.append(str(path))
    done = subprocess.run([sys.executable, "-c", _DRIVER, *files], cwd=card.repo,
                          env=_env(card), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{card.name} card python failed:\n{done.stderr[-3000:]}"
    card.ran += [f"python block {i}" for i in range(len(blocks))]


# -- bash -----------------------------------------------------------------------------------

def _commands(block: str) -> list[list[str]]:
    lines = block.replace("\\\n", " ").splitlines()
    out = []
    for line in lines:
        assignment = re.match(r"^\s*\w+=\$\((.*)\)\s*$", line)
        words = shlex.split(assignment.group(1) if assignment else line, comments=True)
        if words:
            out.append(words)
    return out


def _has_option(help_text: str, option: str) -> bool:
    return re.search(rf"(^|[\s,\[]){re.escape(option)}([\s,=\]]|$)", help_text, re.M) is not None


def _options(words: list[str]) -> list[str]:
    return [w.split("=", 1)[0] for w in words if w.startswith("-") and w != "-"]


def _repo_paths(words: list[str]) -> list[str]:
    """Arguments that name a path relative to the working directory (not in a container,
    not an image reference, not a shell variable)."""
    return [w for w in words if "/" in w and not w.startswith(("/", "-", "$"))
            and ":" not in w and "=" not in w]


def _hf(card: Card, words: list[str], cwd: Path) -> None:
    assert words[1] == "download", words
    hf = Path(sys.executable).parent / "hf"  # huggingface_hub's CLI, beside this Python
    done = subprocess.run([str(hf), "download", "--help"], capture_output=True, text=True,
                          env=_env(card), timeout=120)
    assert done.returncode == 0, done.stderr
    for option in _options(words):
        assert _has_option(done.stdout, option), f"hf download has no option {option}"
    assert words[2] == IDS[card.name], f"downloads {words[2]}, not this repo"
    local = words[words.index("--local-dir") + 1]
    shutil.copytree(card.repo, cwd / local)  # what the download gives, without a Hub


def _docker(card: Card, words: list[str], cwd: Path) -> None:
    for path in _repo_paths(words):
        assert (cwd / path).exists(), f"`{shlex.join(words)}`: no {path} in the repo"
    if shutil.which("docker") is None:
        card.ran.append(f"docker {words[1]} (paths only: docker is not installed)")
        return
    done = subprocess.run(["docker", words[1], "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, f"docker has no command {words[1]}"
    for option in _options(words):
        assert _has_option(done.stdout, option), f"docker {words[1]} has no option {option}"
    card.ran.append(f"docker {words[1]} (options and paths checked: {DOCKER_REASON})")


def _verl(card: Card, words: list[str], cwd: Path) -> None:
    # GRPO training on a GPU cluster: the data files it is pointed at must be in the repo.
    files = [w.split("=", 1)[1] for w in words if w.startswith("data.")]
    assert files and all((cwd / f).is_file() for f in files), files
    card.ran.append("verl (data files checked: needs a GPU cluster)")


def _termgrade(card: Card, words: list[str], cwd: Path) -> None:
    args = [w.replace(IDS[card.name], str(card.repo)) for w in words[1:]]
    if args[0] in ("verify", "run", "base-image"):
        # Docker: parsed by the real CLI, which refuses an unknown option.
        done = runner.invoke(app, [*args, "--help"])
        assert done.exit_code == 0, f"`{shlex.join(words)}`: {done.output}"
        card.ran.append(f"termgrade {args[0]} (parsed: {DOCKER_REASON})")
        return
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        done = runner.invoke(app, args)
    finally:
        os.chdir(previous)
    assert done.exit_code == 0, f"`{shlex.join(words)}` failed: {done.output}"
    card.ran.append(f"termgrade {args[0]} (run)")


def _pip(card: Card, words: list[str]) -> None:
    """`pip install 'termgrade[EXTRA]'`: the extra is one pyproject.toml declares."""
    import tomllib

    assert words[:2] == ["pip", "install"], words
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for spec in words[2:]:
        match = re.fullmatch(r"termgrade\[(\w+)\]", spec)
        assert match and match.group(1) in extras, f"pip install {spec}: no such extra"
    card.ran.append("pip (extra checked)")


def _launch(card: Card, words: list[str], cwd: Path) -> None:
    """`bash RUN/launch.sh` needs the GPU node: the script the card's prepare line wrote
    must exist, and refuses this machine (tests/training/test_training_prepare.py runs it)."""
    script = next(w for w in words if w.endswith("launch.sh"))
    assert (cwd / script).is_file(), f"{script}: not written by the card's prepare line"
    card.ran.append("launch (the script exists: needs the GPU node)")


def _run_bash(card: Card, block: str) -> None:
    cwd = card.work
    for words in _commands(block):
        while words and re.fullmatch(r"\w+=\S*", words[0]):  # VAR=value command
            words = words[1:]
        program = words[0]
        if program == "cd":
            cwd = cwd / words[1]
            assert cwd.is_dir(), f"cd {words[1]}: no such directory"
        elif program == "hf":
            _hf(card, words, cwd)
        elif program == "docker":
            _docker(card, words, cwd)
        elif program == "python" and words[1:3] == ["-m", "verl.trainer.main_ppo"]:
            _verl(card, words, cwd)
        elif program == "termgrade":
            _termgrade(card, words, cwd)
        elif program == "pip":
            _pip(card, words)
        elif program == "bash" and words[-1].endswith("launch.sh"):
            _launch(card, words, cwd)
        else:
            pytest.fail(f"{card.name} card: no handler for `{shlex.join(words)}`: add one")
        card.ran.append(program)


# -- the cards ------------------------------------------------------------------------------

def _inline(card: Card) -> None:
    example = TASKS[0]
    for span in INLINE.findall(card.text):
        words = shlex.split(span.replace("<task_id>", example).replace("{{ example_task }}",
                                                                       example))
        if words[1] == "materialize":
            to = words.index("--to") + 1
            words[to] = str(card.work / "materialized")
            _termgrade(card, words, card.work)
            # --to is a location: the task keeps its id, its directory's name (issue 22).
            assert (card.work / "materialized" / example / "instruction.md").is_file()
        elif len(words) > 2 or words[1] in ("validate", "select"):
            args = [w.replace(IDS[card.name], str(card.repo)) for w in words[1:]]
            done = runner.invoke(app, [*args, "--help"])
            assert done.exit_code == 0, f"`{span}` does not parse: {done.output}"
            card.ran.append(f"inline {span} (parsed)")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(IDS))
def test_every_command_in_the_card_runs(repos: dict[str, Path], name: str,
                                        tmp_path: Path) -> None:
    card = Card(name, repos[name], (repos[name] / "README.md").read_text(), tmp_path)
    blocks = FENCE.findall(card.text)
    assert blocks, f"the {name} card shows no command"
    python = [code for lang, code in blocks if lang == "python"]
    if python:
        _run_python(card, python)
    for lang, code in blocks:
        if lang == "bash":
            _run_bash(card, code)
        elif lang == "yaml":
            assert yaml.safe_load(code) == yaml.safe_load(
                (card.repo / "training_config.yaml").read_text())
        elif lang == "json":  # the agent loop's tool definitions
            import json

            from termgrade.agent.scaffold import TOOLS

            assert json.loads(code) == list(TOOLS)
            card.ran.append("json (the scaffold's tools)")
        elif lang == "bibtex":  # the citation: not a command, but it must be one entry
            assert code.lstrip().startswith("@") and code.count("{") == code.count("}")
        elif lang != "python":
            pytest.fail(f"{name} card: a ```{lang} block, which no handler knows")
    _inline(card)
    expected = {"environments": ["python block 0", "hf", "docker", "termgrade materialize"],
                "trajectories": ["python block 3"],
                "bandcentral": ["python block 0", "pip", "termgrade train", "launch"],
                "checkpoint": ["python (compiled"]}[name]
    for what in expected:
        assert any(r.startswith(what) for r in card.ran), (what, card.ran)
