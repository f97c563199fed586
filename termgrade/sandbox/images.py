"""Task images and the shared base image."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from termgrade.core.errors import ImageBuildError, MissingImageError, TermGradeError
from termgrade.core.package_data import data_path
from termgrade.core.settings import SETTINGS
from termgrade.sandbox.engine import BuiltImage, build_image, docker_client, image_exists
from termgrade.task import Task
from termgrade.task.dockerfile import base_images

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


def ensure_from_images(task: Task) -> None:
    """Make every image the task's Dockerfile starts FROM present: the shared base image
    must have been built; any other is pulled when the registry is reachable. Raises
    :class:`ImageBuildError` naming the missing image and how to provide it."""
    try:
        text = task.paths.dockerfile.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ImageBuildError(task.image_tag, f"{task.paths.dockerfile}: {exc}",
                              fix="restore the Dockerfile") from exc
    for ref in base_images(text):
        if image_exists(ref):
            continue
        if ref == SETTINGS.base_image:
            raise MissingImageError(task.image_tag, ref, "it is TermGrade's base image",
                                    fix="run `termgrade base-image build`")
        reason = _pull(ref) if SETTINGS.pull else "pulling is off (TERMGRADE_PULL=0)"
        if reason is not None:
            raise MissingImageError(
                task.image_tag, ref, reason,
                fix=(f"{task.paths.dockerfile} needs it: on a machine that reaches its "
                     f"registry run `docker pull {ref} && "
                     f"docker save {ref} -o base.tar`, then here `docker load -i base.tar` "
                     "(or tag a local image with that name), and verify again"))


def build_task_image(task: Task) -> BuiltImage:
    """Build the task's ``environment/`` offline as ``termgrade/task-<name>:local``.

    Its FROM images must be here or pullable (:func:`ensure_from_images`); the build
    itself runs with no network."""
    ensure_from_images(task)
    return build_image(
        task.paths.environment_dir,
        task.image_tag,
        network=False,
        timeout_s=task.config.environment.build_timeout_sec,
        fix=(f"{task.paths.dockerfile} must build with no network; vendor any data into "
             "environment/ instead of downloading it"),
    )


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
