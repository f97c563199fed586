"""``/etc/hosts``, ``/etc/hostname`` and ``/etc/resolv.conf`` for a container made with
networking disabled, as the engine writes them for ``--network none``.

A container made with ``--network none`` costs the engine a network sandbox: libnetwork
runs a prestart hook (the daemon's own binary, executed again) for a namespace that holds
nothing but loopback. One made with networking disabled gets the same namespace from the
runtime alone (new, loopback up, no other interface), for half the CPU and half the start
time (``docs/performance.md``), but the engine then mounts none of these three files: the
image's own (empty in most images) would show, and ``localhost`` would not resolve.

So each container gets the files the engine would have written, in its own directory
(``ROOT/OWNER/NAME/``): writable, as the engine's are, and seen by that container only.
:func:`forget` removes them with the container; :func:`sweep` removes what an owner that
is gone left (``termgrade doctor --reap``, a resumed ``grade``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from termgrade.sandbox.ownership import owner_alive, owner_id

ROOT = (Path("/var/lib/termgrade/container-etc") if os.geteuid() == 0
        else Path.home() / ".cache" / "termgrade" / "container-etc")
"""On disk, as the engine's own copies are (an agent's writes to ``/etc/hosts`` land here)."""
HOSTS = ("127.0.0.1\tlocalhost\n"
         "::1\tlocalhost ip6-localhost ip6-loopback\n"
         "fe00::0\tip6-localnet\n"
         "ff00::0\tip6-mcastprefix\n"
         "ff02::1\tip6-allnodes\n"
         "ff02::2\tip6-allrouters\n")
"""The engine's ``/etc/hosts`` of a container without a network."""
IPV6_OFF = {"net.ipv6.conf.all.disable_ipv6": "1"}
"""What the engine sets in a ``--network none`` container: ``::1`` is not on loopback."""


ENGINE_FILES = ("/etc/hosts", "/etc/hostname", "/etc/resolv.conf")
"""The files each container gets as the engine writes them (writable bind mounts)."""
MAX_ENGINE_FILE = 1 << 20
"""Bytes of one such file read back (an agent's larger ``/etc/hosts`` is not carried)."""


def _defaults(hostname: str) -> dict[str, str]:
    return {"hosts": HOSTS, "hostname": f"{hostname}\n", "resolv.conf": ""}


def _home(owner: str) -> Path:
    return ROOT / owner.replace("/", "_")


def home_of(name: str) -> Path:
    """The directory of the files of the container ``name``, made by this process."""
    return _home(owner_id()) / name


def etc_mounts(name: str, hostname: str) -> dict[str, str]:
    """Write the three files for the container ``name`` (whose host name is ``hostname``);
    container path to host file, for writable bind mounts."""
    home = home_of(name)
    for _ in range(3):
        try:
            home.mkdir(parents=True, mode=0o700)
            break
        except FileNotFoundError:  # :func:`forget` of another thread removed the parent
            continue
    files = _defaults(hostname)
    for file, text in files.items():
        (home / file).write_text(text, encoding="ascii")
    return {f"/etc/{file}": str(home / file) for file in files}


def changed_files(name: str, hostname: str) -> dict[str, bytes | None]:
    """The files of the container ``name`` that differ from what :func:`etc_mounts` wrote:
    container path to content (None past :data:`MAX_ENGINE_FILE`). A file that cannot be
    read is skipped (its container is gone)."""
    changed: dict[str, bytes | None] = {}
    for file, text in _defaults(hostname).items():
        try:
            fd = os.open(home_of(name) / file, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_ENGINE_FILE + 1)
        if data != text.encode("ascii"):
            changed[f"/etc/{file}"] = data if len(data) <= MAX_ENGINE_FILE else None
    return changed


def write_file(name: str, path: str, data: bytes) -> None:
    """Write ``data`` into the container ``name``'s own ``path`` (one of
    :data:`ENGINE_FILES`), in place: the bind mount keeps its inode. OSError, ValueError."""
    if path not in ENGINE_FILES:
        raise ValueError(f"{path} is not one of the engine's per-container files")
    fd = os.open(home_of(name) / path.rpartition("/")[2], os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def ipv6_sysctls() -> dict[str, str]:
    """:data:`IPV6_OFF` where this kernel has IPv6 (the runtime refuses an unknown sysctl)."""
    return IPV6_OFF if Path("/proc/sys/net/ipv6/conf/all/disable_ipv6").exists() else {}


def forget(name: str) -> None:
    """Remove the files of the container ``name`` (made by this process); never raises."""
    home = _home(owner_id())
    shutil.rmtree(home / name, ignore_errors=True)
    with contextlib.suppress(OSError):
        home.rmdir()  # the last one: nothing of this process is left


def sweep(existing: set[str]) -> int:
    """Remove what owners that are gone left, but for the containers still ``existing``
    (by name); how many containers' files were removed."""
    removed = 0
    try:
        owners = list(ROOT.iterdir())
    except OSError:
        return 0
    for owner in owners:
        if owner_alive(owner.name) is not False:
            continue
        for home in list(owner.iterdir()):
            if home.name not in existing:
                shutil.rmtree(home, ignore_errors=True)
                removed += 1
        with contextlib.suppress(OSError):  # not when a container of it still exists
            owner.rmdir()
    return removed
