"""The verifier's closure: what the verifier runs, kept as the image made it.

The closure of an image is every path whose bytes decide what the verifier's programs
do, other than the task's tests:

- the Python path of each interpreter on the verifier's ``PATH`` (its stdlib, zip and
  ``lib-dynload``, every site directory it would read, existing or not, the user site,
  a virtual environment's whole prefix), limited to the interpreter's own prefixes and
  ``/usr`` (a task's editable install in ``/app/src`` is the agent's work, not the
  verifier's);
- the files those trees link to elsewhere (Debian's ``sitecustomize.py`` lives in
  ``/etc/python3.X``);
- every tool environment ``uv tool install`` baked into the image (``uv tool dir``:
  ``uvx pytest`` runs pytest from there), each a virtual environment, whole;
- the executables the verifier runs by name (``bash``, ``timeout``, ``python3``...);
- the dynamic loader's configuration (``/etc/ld.so.preload``, ``/etc/ld.so.conf``).

It is found once per image (one short container run that asks each interpreter for its
paths; cached beside the image's read-only view) and bind-mounted read-only, from that
view, into the scoring container: no process there can change it while the tests run.
Everything else the agent changed is carried.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

from termgrade.sandbox import pristine
from termgrade.sandbox.errors import SandboxError
from termgrade.scoring.review.pathset import PathSet

VERIFIER_PATH = "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
VERIFIER_TOOLS = ("bash", "sh", "dash", "env", "timeout", "tee", "head", "cat", "pytest",
                  "py.test", "pip", "pip3", "uv", "uvx")
"""Executables the verifier (test.sh and the grader) runs by name, besides Python."""
PYTHON_NAME = re.compile(r"python(3(\.\d+)?)?$")
LOADER_FILES = ("/etc/ld.so.preload", "/etc/ld.so.conf")
LOADER_DIRS: tuple[str, ...] = ()
"""``/etc/ld.so.conf.d`` and the cache are not the closure: an entry the task asks for
(``make install`` + ``ldconfig``) is carried, and the grader rebuilds the cache in the
scoring container with the image's ``ldconfig`` (see :mod:`termgrade.scoring.verifier.loader`)."""
SYSTEM_PREFIXES = ("/usr",)
PROBE = (
    "import importlib.util, json, site, sys\n"
    "try:\n    user = site.getusersitepackages()\nexcept Exception:\n    user = None\n"
    "print('TERMGRADE-PROBE ' + json.dumps({'exe': sys.argv[1], 'path': sys.path, "
    "'site': list(getattr(site, 'getsitepackages', lambda: [])()), 'user': user, "
    "'prefix': sys.prefix, 'base': sys.base_prefix, "
    "'pytest': importlib.util.find_spec('pytest') is not None}))\n"
)
PROBE_VERSION = 3
UV_TOOLS = ('for u in "$@"; do [ -x "$u" ] && '
            'echo "TERMGRADE-UVTOOLS $("$u" tool dir 2>/dev/null)"; done; true')
"""Where ``uv`` keeps the tools ``uv tool install`` made (the image's ``UV_TOOL_DIR``,
``XDG_DATA_HOME`` and ``HOME`` decide it: uv itself is asked)."""


@dataclass(frozen=True)
class Closure:
    view: str
    """The host directory holding the image's read-only filesystem."""
    dirs: tuple[str, ...]
    """Directories mounted read-only (outermost only); missing ones from an empty dir."""
    files: tuple[str, ...]
    """Single files mounted read-only (missing ones from an empty file)."""
    pytest_pythons: tuple[str, ...]
    """Interpreters that can run pytest (the verifier's Python)."""
    sites: tuple[str, ...] = ()
    """Where ``pip install`` puts what it installs, for each interpreter that runs pytest:
    a virtual environment's prefix, else its site directories (outermost ones only)."""

    @property
    def paths(self) -> PathSet:
        return PathSet(self.dirs + self.files)

    def mounts(self, writable: tuple[str, ...] = ()) -> dict[str, str]:
        """Container path -> host source, for read-only bind mounts (none for the
        ``writable`` directories: the broker watches those instead)."""
        out: dict[str, str] = {}
        for path in (d for d in self.dirs if d not in writable):
            source = self.view + path
            out[path] = source if os.path.isdir(source) and not os.path.islink(source) \
                else _empty("dir")
        for path in self.files:
            source = self.view + path
            out[path] = source if os.path.isfile(source) and not os.path.islink(source) \
                else _empty("file")
        return out

    def to_json(self) -> dict[str, object]:
        return {"version": PROBE_VERSION, "dirs": list(self.dirs), "files": list(self.files),
                "pytest_pythons": list(self.pytest_pythons), "sites": list(self.sites)}


def _empty(kind: str) -> str:
    where = pristine.VIEW_ROOT / f"empty-{kind}"
    if not where.exists():
        where.parent.mkdir(parents=True, exist_ok=True)
        if kind == "dir":
            where.mkdir(exist_ok=True)
        else:
            where.touch()
        where.chmod(0o555 if kind == "dir" else 0o444)
    return str(where)


def _outermost(paths: set[str]) -> tuple[str, ...]:
    kept: list[str] = []
    for path in sorted(paths):
        if not any(path == k or path.startswith(k + "/") for k in kept):
            kept.append(path)
    return tuple(kept)


def _interpreters(view: str, path_dirs: tuple[str, ...]) -> list[str]:
    found = []
    for directory in path_dirs:
        try:
            names = sorted(os.listdir(view + directory))
        except OSError:
            continue
        found += [posixpath.join(directory, n) for n in names if PYTHON_NAME.match(n)]
    return found


def _probe(image: str, interpreters: list[str],
           uvs: list[str]) -> tuple[list[dict[str, object]], list[str]]:
    """Each interpreter's report, and the directories ``uv tool dir`` names."""
    from docker.errors import DockerException

    from termgrade.sandbox.engine import docker_client

    script = ('for p in "$@"; do "$p" -I -c "$TERMGRADE_PROBE" "$p" 2>/dev/null; done; '
              'set -- $TERMGRADE_UVS; ' + UV_TOOLS)
    try:
        raw = docker_client().containers.run(
            image, ["-c", script, "sh", *interpreters], entrypoint="/bin/sh", remove=True,
            network_mode="none", environment={"TERMGRADE_PROBE": PROBE,
                                              "TERMGRADE_UVS": " ".join(uvs)},
            user="0:0", working_dir="/", stdout=True, stderr=False)
    except DockerException as exc:
        raise SandboxError(f"asking the image's Python for its paths failed: {exc}") from exc
    out, tools = [], []
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith("TERMGRADE-PROBE "):
            out.append(json.loads(line.split(" ", 1)[1]))
        elif line.startswith("TERMGRADE-UVTOOLS /"):
            tools.append(posixpath.normpath(line.split(" ", 1)[1].strip()))
    return out, tools


def _tool_envs(view: str, tool_dirs: list[str]) -> set[str]:
    """Each environment in uv's tool directories (the directory itself stays writable:
    ``uvx`` takes a lock there)."""
    found: set[str] = set()
    for directory in tool_dirs:
        real = pristine.resolve(view, directory)
        if real is None or not os.path.isdir(view + real):
            continue
        for name in sorted(os.listdir(view + real)):
            if os.path.isfile(os.path.join(view + real, name, "pyvenv.cfg")):
                found.add(posixpath.join(real, name))
    return found


def _sites(report: dict[str, object]) -> set[str]:
    """Where pip installs for this interpreter: a venv's prefix, else its site dirs."""
    if report["prefix"] != report["base"]:
        return {str(report["prefix"])}
    return {posixpath.normpath(str(p)) for p in list(report.get("site") or [])  # type: ignore[call-overload]
            if str(p).startswith("/")}


def _python_dirs(report: dict[str, object]) -> set[str]:
    prefixes = {str(report["prefix"]), str(report["base"]), *SYSTEM_PREFIXES}
    listed = [*list(report.get("path") or []), *list(report.get("site") or [])]  # type: ignore[call-overload]
    dirs = {posixpath.normpath(str(p)) for p in listed if str(p).startswith("/")}
    kept = {d for d in dirs if any(d == p or d.startswith(p.rstrip("/") + "/") for p in prefixes)}
    if report.get("user"):
        kept.add(posixpath.normpath(str(report["user"])))
    if report["prefix"] != report["base"]:
        kept.add(str(report["prefix"]))  # a virtual environment: all of it
    return kept


def _escapes(view: str, dirs: tuple[str, ...]) -> set[str]:
    """Files the closure's trees link to outside themselves."""
    inside = PathSet(dirs)
    out: set[str] = set()
    for top in dirs:
        for here, subdirs, names in os.walk(view + top):
            for name in [*subdirs, *names]:
                host = os.path.join(here, name)
                if not os.path.islink(host):
                    continue
                target = pristine.resolve(view, host[len(view):])
                if target is not None and target not in inside:
                    out.add(target)
    return out


def find_closure(image: str, *, path: str = VERIFIER_PATH,
                 image_id: str | None = None) -> Closure:
    """The closure of ``image`` (a tag or id) for a verifier whose PATH is ``path``;
    ``image_id``: its id, when the caller has inspected it already."""
    from termgrade.sandbox.engine import docker_client

    if image_id is None:
        image_id = str(docker_client().api.inspect_image(image)["Id"])
    return _closure(image_id, tuple(p for p in path.split(":") if p.startswith("/")))


@lru_cache(maxsize=64)
def _closure(image_id: str, path_dirs: tuple[str, ...]) -> Closure:
    view = pristine.image_view(image_id)
    cache = pristine.VIEW_ROOT / f"{image_id.replace('sha256:', '')[:32]}-closure.json"
    key = ":".join(path_dirs)
    try:
        cached = json.loads(cache.read_text())
        if cached.get("version") == PROBE_VERSION and cached.get("path") == key:
            return Closure(view, tuple(cached["dirs"]), tuple(cached["files"]),
                           tuple(cached["pytest_pythons"]), tuple(cached.get("sites", ())))
    except (OSError, ValueError):
        pass
    interpreters = _interpreters(view, path_dirs)
    uvs = [u for u in dict.fromkeys(pristine.resolve(view, posixpath.join(d, "uv"))
                                    for d in path_dirs)
           if u is not None and os.path.isfile(view + u)]
    reports, tool_dirs = _probe(image_id, interpreters, uvs) if interpreters else ([], [])
    dirs: set[str] = set()
    sites: set[str] = set()
    for report in reports:
        dirs |= _python_dirs(report)
        if report.get("pytest"):  # pip of the verifier's own Python
            sites |= _sites(report)
    dirs |= _tool_envs(view, tool_dirs)
    dirs |= set(LOADER_DIRS)
    outer = _outermost(dirs)
    files: set[str] = set(LOADER_FILES)
    for directory in path_dirs:
        for name in (*VERIFIER_TOOLS, *(posixpath.basename(i) for i in interpreters)):
            real = pristine.resolve(view, posixpath.join(directory, name))
            if real is not None and os.path.isfile(view + real):
                files.add(real)
    files |= {f for f in _escapes(view, outer) if os.path.isfile(view + f)}
    inside = PathSet(outer)
    closure = Closure(view, outer, tuple(sorted(f for f in files if f not in inside)),
                      tuple(str(r["exe"]) for r in reports if r.get("pytest")),
                      tuple(sorted(s for s in sites if s in outer)))
    try:
        tmp = cache.with_suffix(".tmp")
        tmp.write_text(json.dumps({**closure.to_json(), "path": key}))
        tmp.replace(cache)
    except OSError:
        pass
    return closure


