"""Task images, separate verifiers' images and the shared base image."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from termgrade.core.errors import TermGradeError
from termgrade.core.package_data import data_path
from termgrade.core.settings import SETTINGS
from termgrade.sandbox.engine import BuiltImage, build_image, docker_client, image_exists
from termgrade.sandbox.errors import ImageBuildError, MissingImageError
from termgrade.task import Task
from termgrade.task.digest import read_tree
from termgrade.task.dockerfile import base_images
from termgrade.task.ids import safe_name

BASE_IMAGE_DIR = data_path("base_image")
"""The base image's recipe as the package ships it (copied from the repo's base_image/)."""


_pull_failures: dict[str, str] = {}
"""Images this process could not pull, with why: a corpus of 3,566 tasks FROM one
unreachable image asks the registry once."""
_pull_lock = threading.Lock()


def _pull(ref: str) -> str | None:
    """Pull ``ref``; None when it worked, else the registry's reason (remembered)."""
    from docker.errors import DockerException

    with _pull_lock:
        if ref in _pull_failures:
            return _pull_failures[ref]
        try:
            docker_client().images.pull(ref)
        except DockerException as exc:
            reason = getattr(exc, "explanation", None) or str(exc)
            _pull_failures[ref] = " ".join(str(reason).split())[:300]
            return _pull_failures[ref]
        return None


def image_available(ref: str) -> bool:
    """Whether ``ref`` is here, or pulled now (when pulling is on; TermGrade's own base
    image is never pulled: it is built)."""
    if image_exists(ref):
        return True
    if ref == SETTINGS.base_image or not SETTINGS.pull:
        return False
    return _pull(ref) is None


def ensure_from_images(task: Task, dockerfile: Path | None = None,
                       tag: str | None = None) -> list[str]:
    """Make every image ``dockerfile`` (default: the task's) starts FROM present: the
    shared base image must have been built; any other is pulled when the registry is
    reachable. Returns those images. Raises :class:`ImageBuildError` naming the missing
    image and how to provide it (``tag``: the image being built, for the message)."""
    dockerfile = dockerfile or task.paths.dockerfile
    tag = tag or task.image_tag
    try:
        text = dockerfile.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ImageBuildError(tag, f"{dockerfile}: {exc}", fix="restore the Dockerfile") from exc
    refs = base_images(text)
    for ref in refs:
        if image_exists(ref):
            continue
        if ref == SETTINGS.base_image:
            raise MissingImageError(tag, ref, "it is TermGrade's base image",
                                    fix="run `termgrade base-image build`")
        reason = _pull(ref) if SETTINGS.pull else "pulling is off (TERMGRADE_PULL=0)"
        if reason is not None:
            raise MissingImageError(
                tag, ref, reason,
                fix=(f"{dockerfile} needs it: on a machine that reaches its "
                     f"registry run `docker pull {ref} && "
                     f"docker save {ref} -o base.tar`, then here `docker load -i base.tar` "
                     "(or tag a local image with that name), and verify again"))
    return refs


def build_task_image(task: Task) -> BuiltImage:
    """Build the task's ``environment/`` offline as ``termgrade/task-<name>:local``, and a
    separate-mode task's verifier image too (:func:`build_verifier_image`), so a verifier
    that does not build fails here, as the task's build, not in a trial.

    Their FROM images must be here or pullable (:func:`ensure_from_images`); the builds
    themselves run with no network."""
    ensure_from_images(task)
    built = build_image(
        task.paths.environment_dir,
        task.image_tag,
        network=False,
        timeout_s=task.config.environment.build_timeout_sec,
        fix=(f"{task.paths.dockerfile} must build with no network; vendor any data into "
             "environment/ instead of downloading it"),
    )
    verifier = build_verifier_image(task)
    if verifier is None:
        return built
    return BuiltImage(tag=built.tag, image_id=built.image_id,
                      duration_s=built.duration_s + verifier.duration_s)


VERIFIER_REPOSITORY = "termgrade/verifier-"
"""Separate verifiers' images are tagged ``termgrade/verifier-<task>:<content digest>``."""
_verifier_locks: dict[str, threading.Lock] = {}
_verifier_locks_lock = threading.Lock()


def _image_id(ref: str) -> str:
    return str(docker_client().images.get(ref).id)


def verifier_image_tag(task: Task, from_ids: list[str]) -> str:
    """The tag of the task's separate verifier image: its build context (``tests/``:
    paths, modes, contents) and the ids of the images it starts FROM decide it, so an
    unchanged verifier is never rebuilt and a changed one (or a rebuilt base) always is."""
    source = task.verifier_image_source
    if source is None or source.context is None:
        raise ValueError(f"{task.task_id} has no verifier image to build")
    digest = hashlib.sha256(read_tree(source.context).fingerprint().encode())
    for image_id in from_ids:
        digest.update(f"\0{image_id}".encode())
    return f"{VERIFIER_REPOSITORY}{safe_name(task.task_id)}:{digest.hexdigest()[:20]}"


def build_verifier_image(task: Task) -> BuiltImage | None:
    """The image a separate-mode task's verifier runs in, when it is not the task's own:
    ``[verifier.environment] docker_image`` (here or pulled; never built), or
    ``tests/Dockerfile`` built offline from ``tests/`` and cached by content digest
    (:func:`verifier_image_tag`: a second call finds it and builds nothing). None for a
    shared-mode task, or a separate one that grades in a fresh container of its own image.
    Raises :class:`ImageBuildError` naming the file and the fix."""
    source = task.verifier_image_source
    if source is None or not source.own_image:
        return None
    if source.docker_image is not None:
        ref = source.docker_image
        if not image_available(ref):
            raise MissingImageError(
                ref, ref, "it is not on this machine and was not pulled",
                fix=(f"{task.paths.config} [verifier.environment] docker_image names it: "
                     f"`docker pull {ref}` (or `docker load` a saved copy), then run again"))
        return BuiltImage(tag=ref, image_id=_image_id(ref), duration_s=0.0)
    dockerfile = task.paths.verifier_dockerfile
    repository = f"{VERIFIER_REPOSITORY}{safe_name(task.task_id)}"
    refs = ensure_from_images(task, dockerfile, repository)
    tag = verifier_image_tag(task, [_image_id(ref) for ref in refs])
    with _verifier_locks_lock:
        lock = _verifier_locks.setdefault(tag, threading.Lock())
    with lock:  # two trials of one task build it once
        if image_exists(tag):
            return BuiltImage(tag=tag, image_id=_image_id(tag), duration_s=0.0)
        declared = task.config.verifier.environment
        timeout = (declared.build_timeout_sec if declared is not None
                   else task.config.environment.build_timeout_sec)
        return build_image(
            task.paths.tests_dir, tag, network=False, timeout_s=timeout,
            fix=(f"{dockerfile} must build with no network (its context is "
                 f"{task.paths.tests_dir}); vendor any tool the verifier needs instead of "
                 "downloading it"))


def ensure_os_image(context: Path = BASE_IMAGE_DIR) -> None:
    """Pull or debootstrap the Debian image the base image starts FROM."""
    if image_exists(SETTINGS.os_image):
        return
    script = context / "bootstrap_os.sh"
    done = subprocess.run(["bash", str(script), SETTINGS.os_image], check=False)
    if done.returncode != 0:
        raise TermGradeError(f"could not make the OS image {SETTINGS.os_image}",
                             fix=f"see the messages of {script} above")


def build_base_image(context: Path = BASE_IMAGE_DIR, *, rebuild: bool = False) -> BuiltImage | None:
    """Build ``termgrade/base:local`` (None when it exists and ``rebuild`` is False)."""
    if image_exists(SETTINGS.base_image) and not rebuild:
        return None
    if not (context / "Dockerfile").is_file():
        raise TermGradeError(f"{context}/Dockerfile not found",
                             fix="pass the base_image/ folder of a TermGrade checkout")
    ensure_os_image(context)
    # Build from a private copy: the context may be an installed package, and the host's
    # CA bundle (handed to the image's one pip install) never lands beside the recipe.
    with tempfile.TemporaryDirectory(prefix="termgrade-base-") as staging:
        staged = Path(staging) / "base_image"
        shutil.copytree(context, staged, ignore=shutil.ignore_patterns("certs", "__pycache__"))
        (staged / "certs").mkdir()
        bundle = SETTINGS.ca_bundle
        if bundle is not None:
            shutil.copyfile(bundle, staged / "certs" / "ca.crt")
        return build_image(staged, SETTINGS.base_image, network=True, timeout_s=1800,
                           buildargs={"BASE_OS": SETTINGS.os_image},
                           fix="the base image needs Debian's package mirror and PyPI")
