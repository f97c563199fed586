"""How the scoring container's own processes start without a file the agent wrote.

Every process the grader starts in the scoring container B (its first process, the
``timeout`` wrapper, the broker, the shell that runs ``test.sh``) is named by an absolute
path of the image's own, resolved in the image's read-only view (never through a ``PATH``
or a top-level symlink such as ``/bin`` that the agent can repoint). The ELF interpreter
those programs name (``/lib64/ld-linux-x86-64.so.2``) is bind-mounted read-only from the
view, so whichever way the agent pointed ``/lib64``, the loader that runs is the image's.
The broker's socket has a random per-trial name, and the run's master key reaches the
broker on its standard input only.
"""

from __future__ import annotations

import os
import posixpath
import secrets
import struct
from dataclasses import dataclass
from functools import lru_cache

from termgrade.sandbox import pristine
from termgrade.scoring.review.closure import PYTHON_NAME, Closure

PAUSE = "read -r _ <> <(:)"
"""B's first process under the engine's init: the image's bash, blocked for good reading
a pipe it holds both ends of (builtins only: no file of the agent's is read)."""
FIXED_ENV = ("USER", "LOGNAME", "HOME", "SHELL", "BASH_ENV")
"""Set in B's own environment (and so in every exec there), so that neither its first
process nor any shell asks NSS who runs it or reads a startup file."""
OPENSSL_CONFIGS = ("/usr/lib/ssl/openssl.cnf", "/etc/ssl/openssl.cnf",
                   "/usr/local/ssl/openssl.cnf", "/etc/pki/tls/openssl.cnf")
"""Where images keep OpenSSL's default configuration (Debian's first)."""
LAUNCHERS = ("bash", "sh", "dash", "env", "timeout", "uv", "uvx", "make", "gmake", "xargs",
             "nice", "stdbuf", "nohup", "setsid")
"""Image programs that may stand between test.sh and a pytest session the broker keys."""
PT_INTERP = 3


@dataclass(frozen=True)
class GraderProcs:
    """Absolute paths, in the image, of what the grader runs in B."""

    python: str
    bash: str
    loader: tuple[str, str] | None
    """(the path programs name as their interpreter, the image's file it resolves to)."""
    socket: str
    """The broker's abstract socket name (without the leading NUL), random per trial."""
    launchers: tuple[str, ...]

    def init_command(self) -> list[str]:
        return [self.bash, "-c", PAUSE]

    def container_env(self) -> dict[str, str]:
        return {"USER": "root", "LOGNAME": "root", "HOME": "/root", "SHELL": self.bash,
                "BASH_ENV": ""}

    @property
    def python_home(self) -> str:
        """The interpreter's installation prefix (``/usr`` for ``/usr/bin/python3.11``):
        passed as ``PYTHONHOME`` so that no ``pyvenv.cfg`` or stdlib landmark the agent put
        beside the executable or above it decides where the standard library is."""
        return posixpath.dirname(posixpath.dirname(self.python))

    def mounts(self, view: str) -> dict[str, str]:
        """The image's loader, read-only at the path every dynamic program names."""
        if self.loader is None:
            return {}
        return {self.loader[0]: view + self.loader[1]}


def grader_procs(closure: Closure, path: str) -> GraderProcs | None:
    """None when the closure has no Python or no bash (the verifier cannot run). The
    broker's socket name is new on every call; the rest is the image's, found once."""
    found = _image_procs(closure, path)
    if found is None:
        return None
    python, bash, loader, tools = found
    return GraderProcs(python, bash, loader, f"termgrade-{secrets.token_hex(16)}", tools)


@lru_cache(maxsize=64)
def _image_procs(closure: Closure, path: str
                 ) -> tuple[str, str, tuple[str, str] | None, tuple[str, ...]] | None:
    """The closure's Python and bash, its loader and the launchers on ``path`` (an image's
    view never changes: cached)."""
    pythons = [f for f in closure.files if PYTHON_NAME.match(posixpath.basename(f))]
    shells = [f for f in closure.files if posixpath.basename(f) == "bash"]
    if not pythons or not shells:
        return None
    interp = elf_interpreter(closure.view + pythons[0])
    loader = None
    if interp is not None:
        real = pristine.resolve(closure.view, interp)
        if real is not None and os.path.isfile(closure.view + real):
            loader = (interp, real)
    return pythons[0], shells[0], loader, image_tools(closure.view, path, LAUNCHERS)


def image_tools(view: str, path: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """The image's own files the ``names`` resolve to on ``path``, in the view."""
    found: list[str] = []
    for directory in (d for d in path.split(":") if d.startswith("/")):
        for name in names:
            real = pristine.resolve(view, posixpath.join(directory, name))
            if real is not None and os.path.isfile(view + real) and real not in found:
                found.append(real)
    return tuple(found)


def image_openssl_config(view: str) -> bytes:
    """The image's own OpenSSL configuration (empty when it has none)."""
    for candidate in OPENSSL_CONFIGS:
        real = pristine.resolve(view, candidate)
        if real is not None and os.path.isfile(view + real):
            with open(view + real, "rb") as handle:
                return handle.read(1 << 20)
    return b""


def elf_interpreter(path: str) -> str | None:
    """The ELF interpreter (PT_INTERP) a 64-bit little-endian executable names."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return None
            phoff, = struct.unpack_from("<Q", head, 0x20)
            phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
            for number in range(min(phnum, 128)):
                handle.seek(phoff + number * phentsize)
                kind, _flags, offset, _va, _pa, size = struct.unpack("<IIQQQQ", handle.read(40))
                if kind == PT_INTERP and 0 < size < 4096:
                    handle.seek(offset)
                    return handle.read(size).rstrip(b"\0").decode()
    except (OSError, struct.error, UnicodeDecodeError):
        return None
    return None


@dataclass(frozen=True)
class ImageFacts:
    """What one engine inspect of an image says that grading uses."""

    id: str
    env: list[str]
    """``Config.Env``."""
    workdir: str | None
    """``Config.WorkingDir``."""


def image_facts(image: str) -> ImageFacts:
    """``image``'s id, ``Config.Env`` and ``Config.WorkingDir`` (one engine inspect)."""
    from termgrade.sandbox.engine import docker_client

    attrs = docker_client().api.inspect_image(image)
    config = attrs.get("Config") or {}
    return ImageFacts(str(attrs["Id"]), list(config.get("Env") or []),
                      config.get("WorkingDir") or None)
