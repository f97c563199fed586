"""A read-only view of an image's filesystem on the host, and lookups inside it.

The scoring container's verifier closure is bind-mounted read-only from here, so what
the verifier runs is the image's own bytes whatever the agent's code writes while the
tests run. The view is the image's overlay2 layers merged by one read-only overlay mount
(no upper directory: the kernel refuses every write), made once per image and kept for
the host's lifetime at a fixed place (a second process reuses it). A one-layer image
needs no mount: its layer directory is the view.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
import threading
from pathlib import Path

from termgrade.sandbox.errors import SandboxError

VIEW_ROOT = Path("/run/termgrade-pristine")
"""Where the per-image views are mounted (a tmpfs on most hosts: gone at reboot)."""
MAX_LINKS = 40
"""Symlinks followed while resolving one path inside a view (as the kernel's limit)."""
_LOCK = threading.Lock()


def _layer_dirs(image_id: str) -> list[str]:
    from docker.errors import DockerException

    from termgrade.sandbox.engine import docker_client

    try:
        attrs = docker_client().api.inspect_image(image_id)
    except DockerException as exc:
        raise SandboxError(f"inspecting image {image_id[:19]} failed: {exc}") from exc
    driver = attrs.get("GraphDriver") or {}
    data = driver.get("Data") or {}
    if driver.get("Name") != "overlay2" or not data.get("UpperDir"):
        raise SandboxError("the engine's image layers are not overlay2 directories readable "
                           "on this host")
    lower = str(data.get("LowerDir") or "")
    return [str(data["UpperDir"]), *(p for p in lower.split(":") if p)]


def _mounted(path: Path) -> bool:
    return os.path.ismount(path)


def image_view(image_id: str) -> str:
    """The host directory holding ``image_id``'s merged, read-only filesystem.

    Raises SandboxError when the layers are not local overlay2 or the mount fails.
    """
    layers = _layer_dirs(image_id)
    diffs = [layer for layer in layers if Path(layer).is_dir()]
    if len(diffs) != len(layers):
        raise SandboxError(f"a layer of image {image_id[:19]} is missing on this host")
    if len(diffs) == 1:
        return diffs[0]
    target = VIEW_ROOT / image_id.replace("sha256:", "")[:32]
    with _LOCK:
        if _mounted(target):
            return str(target)
        target.mkdir(parents=True, exist_ok=True)
        # Short names (each layer's `link` file) keep the option string under a page.
        base = Path(diffs[0]).parent.parent
        short = []
        for layer in diffs:
            link = Path(layer).parent / "link"
            short.append(f"l/{link.read_text().strip()}" if link.is_file()
                         else os.path.relpath(layer, base))
        done = subprocess.run(
            ["mount", "-t", "overlay", "overlay", "-o", "ro,lowerdir=" + ":".join(short),
             str(target)], cwd=base, capture_output=True, text=True, check=False)
        if done.returncode != 0 and not _mounted(target):
            raise SandboxError(f"mounting a read-only view of image {image_id[:19]} failed: "
                               f"{done.stderr.strip()[-300:]}")
    return str(target)


def resolve(root: str, path: str) -> str | None:
    """``path`` with every symlink resolved as the container would, inside ``root``.

    Returns the container path, or None when a component is missing or links loop.
    """
    parts = [p for p in path.split("/") if p]
    done = "/"
    hops = 0
    while parts:
        name = parts.pop(0)
        if name == ".":
            continue
        if name == "..":
            done = posixpath.dirname(done.rstrip("/")) or "/"
            continue
        candidate = posixpath.join(done, name)
        host = root + candidate
        if os.path.islink(host):
            hops += 1
            if hops > MAX_LINKS:
                return None
            target = os.readlink(host)
            parts = [p for p in target.split("/") if p] + parts
            if target.startswith("/"):
                done = "/"
            continue
        if not os.path.lexists(host):
            return None
        done = candidate
    return done
