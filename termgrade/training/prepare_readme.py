"""The run directory's README.md: what the GPU node needs and how the run is started.

run.json records every choice; this says, in words, what a person carrying the folder to
a GPU node must find there: the GPUs, a Docker engine (the agent loop runs each rollout's
task in a sandbox container and its verifier in a fresh one, as grading does), the images
the tasks' Dockerfiles start FROM, TermGrade with its training extra, and verl's pinned
versions. :func:`launch_line` is the one way the run is said to be started: prepare's
last line, this README and the bandcentral card say it alike.
"""

from __future__ import annotations

from pathlib import Path

from termgrade.core.settings import BASE_IMAGE
from termgrade.task.dockerfile import base_images
from termgrade.training.launch import PINS
from termgrade.training.paths import RunPaths
from termgrade.training.recipe import GrpoRecipe

INSTALL_EXTRA = "pip install 'termgrade[train]'"
"""How TermGrade is installed on the node (the cards say the same)."""


def launch_line(run: Path | str) -> str:
    """The command that starts the run on the GPU node (its first time: the pinned
    versions installed first)."""
    return f"TERMGRADE_INSTALL=1 bash {Path(run) / 'launch.sh'}"


def readme_path(paths: RunPaths) -> Path:
    return paths.root / "README.md"


def task_images(paths: RunPaths) -> list[str]:
    """The images the run's tasks start FROM, in order of first use."""
    images: list[str] = []
    for dockerfile in sorted(paths.tasks_dir.glob("*/environment/Dockerfile")):
        for image in base_images(dockerfile.read_text(encoding="utf-8", errors="replace")):
            if image not in images:
                images.append(image)
    return images


def _image_line(image: str) -> str:
    if image == BASE_IMAGE:
        return (f"- `{image}`: TermGrade's base image; `termgrade base-image build` on the "
                "node, or `docker save` it here and `docker load -i` it there")
    return (f"- `{image}`: pulled on first use where a registry is reachable; otherwise "
            "`docker pull` and `docker save` it elsewhere, `docker load -i` on the node")


def render_readme(paths: RunPaths, recipe: GrpoRecipe, *, smoke: bool) -> str:
    """The README of a prepared run directory ``paths``."""
    gpus = recipe.n_gpus_per_node * recipe.nnodes
    images = task_images(paths) or [BASE_IMAGE]
    pins = ", ".join(f"{name}=={version}" for name, version in PINS.items())
    kind = "a one-step smoke run" if smoke else "a GRPO++ run"
    return "\n".join([
        f"# {paths.root.name}: {kind} of `{recipe.base_model}` on verl",
        "",
        "Written by `termgrade train prepare`; `run.json` records every choice.",
        "",
        "## What the GPU node needs",
        "",
        f"- {gpus} NVIDIA GPU(s) ({recipe.n_gpus_per_node} per node x {recipe.nnodes} "
        "node(s)), `nvidia-smi` on PATH.",
        "- A Docker engine the training user can reach (`docker info` answers): the agent "
        "loop runs each rollout's task in a sandbox container, and its verifier in a "
        "fresh one, as `termgrade grade` does. Without it every rollout fails.",
        "- The images the tasks start FROM, on the node before the run:",
        *(_image_line(image) for image in images),
        f"- TermGrade and its training extra: `{INSTALL_EXTRA}` (the agent loop is its "
        "code).",
        f"- verl's tested versions ({pins}): `TERMGRADE_INSTALL=1` installs them the first "
        "time; `launch.sh` refuses others.",
        "",
        "## Start it",
        "",
        "From the folder that holds this run directory:",
        "",
        "```bash",
        f"{launch_line(paths.root.name)}   # the first time: installs verl's pins",
        f"bash {paths.root.name}/launch.sh                       # after that",
        f"termgrade train monitor {paths.root.name}               # the metrics, as it runs",
        "```",
        "",
    ])
