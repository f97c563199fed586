"""A trial's two containers before the agent acts: A started, B created, B's grader staged.

Nothing in a :class:`Pair` depends on the agent, the trial's key or anything the trial
decides later: the same pair is made whether the trial makes it itself (the ``create``
phase) or the warm pool (:mod:`termgrade.scoring.pair.warm`) made it ahead, while another trial
ran. A's container runs ``sleep infinity`` and nothing else until the agent phase starts;
B is created, never started, with an empty writable layer; the staged grader holds the
task's tests copied when the pair was made and a plugin module name no one else knows.

What B is made of, before it is created, is here too: its image (a separate verifier's
own, or the task's), its environment and limits, and the host directory its grader's
read-only files are staged in (the plugin, the broker, the tests' copy)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from termgrade.sandbox.base import Limits, Sandbox
from termgrade.sandbox.errors import SandboxError
from termgrade.sandbox.ownership import current_run
from termgrade.sandbox.seccomp import scoring_profile
from termgrade.scoring.review.closure import Closure
from termgrade.scoring.review.policy import GRADER_DIR, TESTS_SOURCE
from termgrade.scoring.verifier import attestation as attest
from termgrade.scoring.verifier.command import OPENSSL_FILE, install_roots
from termgrade.scoring.verifier.grader_procs import GraderProcs, image_openssl_config
from termgrade.task import CONTAINER, Task
from termgrade.task.config import EnvironmentConfig
from termgrade.task.digest import IGNORED_NAMES

TESTS_TMPFS_BYTES = 1 << 30
"""B's /tests: a private in-memory copy test.sh may unpack into (the broker watches it)."""
STARTUP_DIR = "startup"
"""Beside the grader directory on the host: the directory mounted at each closure Python's
standard-library zip path (:func:`startup_mounts`)."""
STDLIB_ZIP = re.compile(r"/lib/python\d+\.zip$")
"""The path every CPython (3.x, POSIX) puts on ``sys.path`` right after ``PYTHONPATH``'s
entries, ``<base prefix>/lib/python3XY.zip``, whether it exists or not, and whatever it is:
a zip is read by ``zipimport``, a directory by the same finder as any other (a zip there
made every import of every Python in B take ``zipimport``'s pure-Python lookup first:
about 0.2 s more per trial's tests, measured)."""
STUB = ('"""TermGrade: {real}, run as this module (termgrade.scoring.pair.containers)."""\n'
        "__file__ = {real!r}\n"
        'with open(__file__, "rb") as _source:\n'
        '    exec(compile(_source.read(), __file__, "exec"))\n')
"""A module of the startup directory: the grader directory's file of the same name, run in
this module's namespace with ``__file__`` naming it there (the plugin and the sitecustomize
find the broker's socket name and the closure's list beside their ``__file__``). Builtins
only: nothing is imported."""


def stage_startup(where: Path, module: str) -> Path:
    """The startup directory under ``where``: ``sitecustomize`` and the plugin
    (``module``), each a :data:`STUB` of the grader directory's own file, read-only."""
    startup = where / STARTUP_DIR
    startup.mkdir()
    for name in ("sitecustomize", module):
        stub = startup / f"{name}.py"
        stub.write_text(STUB.format(real=f"{GRADER_DIR}/{name}.py"))
        stub.chmod(0o444)
    startup.chmod(0o755)
    return startup


def startup_mounts(closure: Closure, staged: Path) -> dict[str, str]:
    """Container path -> the staged startup directory, for each closure Python's standard-library
    zip path (:data:`STDLIB_ZIP`) that the image lacks: the grader's ``sitecustomize`` and
    plugin load in every closure Python of B whatever ``test.sh`` does to ``PYTHONPATH``
    (``export PYTHONPATH=/app`` drops the grader's directory from it, and pytest then
    failed to import the plugin ``PYTEST_PLUGINS`` names: every trial 0, the oracle's
    too). ``PYTHONPATH`` still starts with the grader's directory, found first as before.

    Why the agent gains nothing: the path is one of the closure's own (the probe's
    ``sys.path``), which B already bind-mounts read-only (from an empty directory, since
    the image has no such file): only what a mount there holds is read, never the
    agent's file at that path, and this mount replaces that one. Its place on ``sys.path``
    is fixed by the interpreter, after ``PYTHONPATH``'s entries and before the standard
    library, so it comes before nothing it did not come before; whatever ``test.sh``'s
    own ``PYTHONPATH`` puts ahead of it stays ahead, exactly as it already was ahead of
    the grader's directory for ``PYTHONPATH=/app:$PYTHONPATH``. The plugin's name is
    still the per-trial secret, and a key is still only the broker's to give, to a
    process the grader's own ``sitecustomize`` registered at start. A path the image
    holds a real archive at (its standard library) is left as it is, and so is one the
    closure does not list as a directory of its own (never inside another read-only
    mount)."""
    source = str(staged / STARTUP_DIR)
    return {d: source for d in closure.dirs
            if STDLIB_ZIP.search(d) and not os.path.lexists(closure.view + d)}


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
    image's own OpenSSL configuration), both mounted read-only in B; and beside them the
    startup directory (:func:`stage_startup`, mounted by :func:`startup_mounts`)."""
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
    stage_startup(where, module)
    for path in (where, grader / TESTS_SOURCE, grader):
        path.chmod(0o755)
    return where, module


@dataclass(frozen=True)
class PairSpec:
    """What a pair is made of: a warm pair serves only a trial with the same spec."""

    task_root: str
    image: str
    """A's image."""
    score_image: str
    """B's image (a separate verifier's own, or A's)."""
    path: str
    """test.sh's PATH (B's closure and its grader's tools follow it)."""
    tests: str
    """The tests' files as staged (:func:`tests_stamp`): an edit after a warm pair was
    made leaves that pair unused."""


def tests_stamp(task: Task) -> str:
    """Every file under the task's tests: relative path, size, modification time (ns)."""
    root = task.paths.tests_dir
    entries = []
    for path in sorted(root.rglob("*")):
        if IGNORED_NAMES.intersection(path.relative_to(root).parts):
            continue
        info = path.lstat()
        entries.append(f"{path.relative_to(root).as_posix()}:{info.st_size}:"
                       f"{info.st_mtime_ns}:{info.st_mode:o}")
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()


@dataclass
class Pair:
    spec: PairSpec
    agent_box: Sandbox
    score_box: Sandbox
    staged: Path
    """The host directory of B's read-only grader mount (removed with the pair)."""
    module: str
    """The attestation plugin's module name in this pair's grader."""
    closure: Closure
    """B's closure, as mounted."""
    procs: GraderProcs | None
    """What the grader runs in B: its broker's socket name is this pair's own."""
    warm: bool = False
    """Made ahead by the warm pool (its create phase was off this trial's path)."""

    def discard(self) -> None:
        """Remove both containers and the staged grader now (an unused warm pair)."""
        for box in (self.agent_box, self.score_box):
            box.close()
        shutil.rmtree(self.staged, ignore_errors=True)


def _start(image: str, task: Task, label: str, read_only: dict[str, str] | None,
           run: str | None = None, command: list[str] | None = None,
           env: dict[str, str] | None = None) -> Sandbox:
    """The agent's container A, started; or (``read_only`` given) the scoring container B,
    created but not started: its writable layer is filled on the host after the review.
    ``run``: the run id the container carries (the caller's thread's: this one is a
    pool's)."""
    from termgrade.sandbox.docker_sandbox import DockerSandbox
    from termgrade.sandbox.ownership import run_scope

    with run_scope(run):
        if read_only is None:
            return DockerSandbox.start(
                image, limits=task_limits(task), env=task.config.environment.env,
                workdir=task.config.environment.workdir, label=label)
        scoring = scoring_environment(task)
        return DockerSandbox.create(
            image, limits=task_limits(task, scoring), env={**scoring.env, **(env or {})},
            workdir=scoring.workdir, label=label, read_only=read_only,
            seccomp=scoring_profile(), command=command,
            tmpfs={str(CONTAINER.tests_dir): TESTS_TMPFS_BYTES})


def make_pair(task: Task, spec: PairSpec, closure: Closure, procs: GraderProcs | None,
              label: str) -> Pair:
    """A started and B created at once (two engine calls in flight); SandboxError naming
    what failed, with whatever was made removed."""
    staged, module = stage_grader(task, closure, procs)
    mounts = {**closure.mounts(install_roots(task, closure)),
              **(procs.mounts(closure.view) if procs else {}),
              GRADER_DIR: str(staged / "grader"),
              **startup_mounts(closure, staged)}
    boxes: list[Sandbox | None] = [None, None]
    errors: list[str] = []
    run = current_run()
    with ThreadPoolExecutor(max_workers=2) as pool:
        wanted = [pool.submit(_start, spec.image, task, label, None, run),
                  pool.submit(_start, spec.score_image, task, f"{label}-score", mounts, run,
                              procs.init_command() if procs else None,
                              procs.container_env() if procs else None)]
        for i, future in enumerate(wanted):
            try:
                boxes[i] = future.result()
            except SandboxError as exc:
                errors.append(str(exc))
    agent_box, score_box = boxes
    if errors or agent_box is None or score_box is None:
        for box in boxes:
            if box is not None:
                box.close_later()
        shutil.rmtree(staged, ignore_errors=True)
        raise SandboxError("; ".join(errors) or "no container")
    return Pair(spec, agent_box, score_box, staged, module, closure, procs)
