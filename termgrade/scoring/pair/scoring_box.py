"""What the scoring container is made of, before it is created: its image (a separate
verifier's own, or the task's), its environment and limits, and the host directory its
grader's read-only files are staged in (the plugin, the broker, the tests' copy)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from termgrade.sandbox.base import Limits
from termgrade.scoring.review.closure import Closure
from termgrade.scoring.review.policy import TESTS_SOURCE
from termgrade.scoring.verifier import attestation as attest
from termgrade.scoring.verifier.command import OPENSSL_FILE
from termgrade.scoring.verifier.grader_procs import GraderProcs, image_openssl_config
from termgrade.task import Task
from termgrade.task.config import EnvironmentConfig
from termgrade.task.digest import IGNORED_NAMES

TESTS_TMPFS_BYTES = 1 << 30
"""B's /tests: a private in-memory copy test.sh may unpack into (the broker watches it)."""


def task_limits(task: Task, environment: EnvironmentConfig | None = None) -> Limits:
    """Limits from task.toml's ``[environment]`` (or the ``environment`` given: a separate
    verifier's own), defaults where it is silent."""
    env = environment or task.config.environment
    defaults = Limits()
    return Limits(
        cpus=env.cpus or defaults.cpus,
        memory_mb=env.memory_mb or defaults.memory_mb,
        pids=env.pids or defaults.pids,
        storage_mb=env.storage_mb or defaults.storage_mb,
    )


def scoring_image(task: Task, image: str) -> str:
    """The scoring container's image: a separate-mode task's own verifier image
    (``tests/Dockerfile`` built offline and cached by content digest, or a prebuilt
    ``[verifier.environment] docker_image``), else the task's ``image``. The verifier's
    closure is that image's; A's image only describes what the agent changed.
    ImageBuildError when the verifier image cannot be had."""
    from termgrade.sandbox.images import build_verifier_image

    built = build_verifier_image(task)
    return built.tag if built is not None else image


def scoring_environment(task: Task) -> EnvironmentConfig:
    """The scoring container's environment (env, workdir, limits): a separate verifier's
    ``[verifier.environment]`` when the task declares one (Harbor's rule), else the
    task's ``[environment]``."""
    declared = task.config.verifier.environment
    if task.config.separate_verifier and declared is not None:
        return declared
    return task.config.environment


def stage_grader(task: Task, closure: Closure | None = None,
                 procs: GraderProcs | None = None) -> tuple[Path, str]:
    """A private copy of the task's tests (no host caches) and this trial's grader dir
    (the plugin under a fresh module name, the broker and what it watches with, the
    ``sitecustomize`` that puts
    the closure first, the closure's directories, the broker's random socket name, the
    image's own OpenSSL configuration), both mounted read-only in B."""
    where = Path(tempfile.mkdtemp(prefix="termgrade-score-"))
    module = attest.plugin_module()
    grader = where / "grader"
    grader.mkdir()
    # The broker copies these into B's private, writable /tests before test.sh starts.
    shutil.copytree(task.paths.tests_dir, grader / TESTS_SOURCE,
                    ignore=shutil.ignore_patterns(*IGNORED_NAMES), symlinks=False)
    (grader / f"{module}.py").write_bytes(attest.plugin_source())
    (grader / f"{attest.BROKER_MODULE}.py").write_bytes(attest.broker_source())
    (grader / f"{attest.WATCH_MODULE}.py").write_bytes(attest.watch_source())
    (grader / "sitecustomize.py").write_bytes(attest.sitecustomize_source())
    trusted = [*closure.dirs, *closure.files] if closure else []
    (grader / "closure.paths").write_bytes(b"\0".join(os.fsencode(p) for p in trusted))
    (grader / "broker-socket").write_text(procs.socket if procs else "")
    (grader / OPENSSL_FILE).write_bytes(image_openssl_config(closure.view) if closure else b"")
    for path in (where, grader / TESTS_SOURCE, grader):
        path.chmod(0o755)
    return where, module
