"""The model's answer format, parsed strictly, and the files it names, checked as untrusted.

A generated task comes back as file blocks and nothing else::

    === file: task.toml ===
    schema_version = "1.4"
    ...
    === end ===
    === file: tests/test_outputs.py ===
    ...
    === end ===

Between blocks only blank lines are allowed; a block's text is kept verbatim (its last
newline included), and may hold any line but the two delimiters themselves. Anything
else (prose, a code fence, an unterminated block, a path that leaves the task, an
oversized file) makes the whole answer unparsable: an :class:`AnswerError` whose message
is fed back to the model, never a crash.

Paths are relative POSIX paths into the task directory: ``task.toml``,
``instruction.md``, or a file under ``environment/``, ``tests/`` or ``solution/``; no
``..``, no absolute path, no hidden part, only ``[A-Za-z0-9._-]`` in each part.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import PurePosixPath

from termgrade.generate.errors import AnswerError
from termgrade.task.dockerfile import base_images, instructions

OPEN = re.compile(r"^=== file: (?P<path>\S+) ===$")
CLOSE = "=== end ==="
MAX_FILE_BYTES = 64 * 1024
"""Largest file a generated task may hold."""
MAX_TOTAL_BYTES = 256 * 1024
"""Largest generated task, all files together."""
MAX_FILES = 32
LIMITS: dict[tuple[str, str], float] = {
    ("environment", "build_timeout_sec"): 600.0,
    ("environment", "cpus"): 2.0,
    ("environment", "memory_mb"): 4096.0,
    ("environment", "storage_mb"): 10240.0,
    ("verifier", "timeout_sec"): 600.0,
    ("agent", "timeout_sec"): 3600.0,
}
"""The most a generated task.toml may ask for (its build and verify run on our machines)."""
TOP_FILES = ("task.toml", "instruction.md")
TOP_DIRS = ("environment", "tests", "solution")
REQUIRED = ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh",
            "solution/solve.sh")
_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_REMOTE = re.compile(r"^([a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
_FROM_FLAG = re.compile(r"^--from=(\S+)$", re.IGNORECASE)
_MOUNT_FROM = re.compile(r"^--mount=\S*\bfrom=([^,\s]+)", re.IGNORECASE)


@dataclass(frozen=True)
class GeneratedTask:
    """The files of one parsed answer: relative path -> text."""

    files: dict[str, str]

    @property
    def size(self) -> int:
        return sum(len(text.encode("utf-8")) for text in self.files.values())


def path_problem(path: str) -> str | None:
    """Why ``path`` may not be written into a task directory; None when it may."""
    pure = PurePosixPath(path)
    if path.startswith("/") or "\\" in path or pure.is_absolute():
        return f"{path!r} is absolute or uses backslashes; use a relative path like tests/x.py"
    parts = path.split("/")
    if any(not _PART.match(part) for part in parts):
        return (f"{path!r}: each part may hold only letters, digits, '.', '_', '-' and may "
                "not start with '.' (no '..', no hidden files)")
    if len(parts) == 1 and path not in TOP_FILES:
        return f"{path!r}: top-level files are only {', '.join(TOP_FILES)}"
    if len(parts) > 1 and parts[0] not in TOP_DIRS:
        return f"{path!r}: files go under {', '.join(d + '/' for d in TOP_DIRS)}"
    if len(parts) > 5:
        return f"{path!r} is nested too deep (at most 4 folders)"
    return None


def daemon_fetches(dockerfile: str) -> list[str]:
    """What the Docker daemon itself would fetch while building, whatever the build's
    network mode: ``ADD`` of a URL (any host, loopback included) and ``COPY``/``ADD``
    ``--from`` or ``RUN --mount=...,from=`` an image that is not an earlier stage (a pull)."""
    stages: set[str] = set()
    found: list[str] = []
    for keyword, rest in instructions(dockerfile):
        words = rest.split()
        if keyword == "FROM":
            plain = [w for w in words if not w.startswith("--")]
            stages.add(str(len(stages)))
            if len(plain) >= 3 and plain[1].lower() == "as":
                stages.add(plain[2].lower())
        if keyword == "ADD":
            found += [f"ADD {w}: the daemon downloads it" for w in words if _REMOTE.match(w)]
        for word in words:
            source = _FROM_FLAG.match(word) or _MOUNT_FROM.match(word)
            if source and source.group(1).lower() not in stages:
                found.append(f"{keyword} {word}: the daemon pulls the image "
                             f"{source.group(1)}")
    return found


def split_blocks(text: str) -> dict[str, str]:
    """The file blocks of ``text``, strictly (see the module docstring)."""
    files: dict[str, str] = {}
    current: str | None = None
    body: list[str] = []
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        bare = line.rstrip("\r\n")
        if current is None:
            opened = OPEN.match(bare.strip())
            if opened:
                current, body = opened["path"], []
            elif bare.strip():
                raise AnswerError(f"line {number}: text outside a file block: {bare[:80]!r}",
                                  fix="answer with file blocks only ('=== file: PATH ===' ... "
                                      "'=== end ==='), no prose or code fences")
            continue
        if bare == CLOSE:
            if current in files:
                raise AnswerError(f"{current} is given twice", fix="give each file once")
            files[current] = "".join(body)
            current = None
        elif OPEN.match(bare):
            raise AnswerError(f"line {number}: a new file block starts before {current} ended",
                              fix=f"close each block with a line '{CLOSE}'")
        else:
            body.append(line)
    if current is not None:
        raise AnswerError(f"the block of {current} never ends",
                          fix=f"close each block with a line '{CLOSE}'")
    return files


def check_files(files: dict[str, str], *, base_image: str, domain: str,
                difficulty: str) -> None:
    """Confinement, sizes, required files, the Dockerfile's base, task.toml's metadata and
    limits (:data:`LIMITS`)."""
    if not files:
        raise AnswerError("the answer holds no file block",
                          fix="answer with file blocks ('=== file: PATH ===' ... '=== end ===')")
    if len(files) > MAX_FILES:
        raise AnswerError(f"{len(files)} files; at most {MAX_FILES}", fix="write fewer files")
    for path, text in files.items():
        problem = path_problem(path)
        if problem is not None:
            raise AnswerError(problem, fix="write only inside the task directory")
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise AnswerError(f"{path} is not valid Unicode text ({exc.reason})",
                              fix="write UTF-8 text only") from exc
        if size > MAX_FILE_BYTES:
            raise AnswerError(f"{path} is {size} bytes; at most {MAX_FILE_BYTES}",
                              fix="keep files small; generate big data in solve.sh or tests")
    folders = {p.rsplit("/", 1)[0] for p in files if "/" in p}
    clashes = sorted(p for p in files if p in folders)
    if clashes:
        raise AnswerError(f"{clashes[0]} is both a file and a folder", fix="rename one")
    total = sum(len(t.encode("utf-8")) for t in files.values())
    if total > MAX_TOTAL_BYTES:
        raise AnswerError(f"the task is {total} bytes; at most {MAX_TOTAL_BYTES}",
                          fix="write less")
    missing = [p for p in REQUIRED if p not in files]
    if not any(p.startswith("tests/test_") and p.endswith(".py") for p in files):
        missing.append("tests/test_*.py")
    if missing:
        raise AnswerError(f"missing file(s): {', '.join(missing)}", fix="write every file")
    froms = base_images(files["environment/Dockerfile"])
    if not froms or any(ref != base_image for ref in froms):
        raise AnswerError(f"environment/Dockerfile starts FROM {', '.join(froms) or 'nothing'}",
                          fix=f"start FROM {base_image} (the shared base image) only")
    fetches = daemon_fetches(files["environment/Dockerfile"])
    if fetches:
        raise AnswerError(f"environment/Dockerfile reaches the network: {'; '.join(fetches)}",
                          fix="the build runs offline: COPY files written under environment/")
    _check_toml(files["task.toml"], domain=domain, difficulty=difficulty)


def _check_toml(text: str, *, domain: str, difficulty: str) -> None:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnswerError(f"task.toml is not valid TOML: {exc}", fix="fix its syntax") from exc
    meta = raw.get("metadata")
    if not isinstance(meta, dict):
        raise AnswerError("task.toml has no [metadata] table", fix="add one")
    for key, want in (("domain", domain), ("difficulty", difficulty)):
        if meta.get(key) != want:
            raise AnswerError(f"task.toml [metadata] {key} is {meta.get(key)!r}, not {want!r}",
                              fix=f'write {key} = "{want}" as asked')
    env = raw.get("environment")
    if isinstance(env, dict) and env.get("allow_internet") is True:
        raise AnswerError("task.toml [environment] allow_internet = true",
                          fix="tasks run without network: remove it")
    for (table, key), cap in LIMITS.items():
        section = raw.get(table)
        value = section.get(key) if isinstance(section, dict) else None
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= cap:
            raise AnswerError(f"task.toml [{table}] {key} = {value!r}: a generated task may ask "
                              f"for at most {cap:g}", fix=f"set {key} between 0 and {cap:g}")


def parse_answer(text: str, *, base_image: str, domain: str, difficulty: str) -> GeneratedTask:
    """The task in the model's answer; :class:`AnswerError` with the reason otherwise."""
    files = split_blocks(text)
    check_files(files, base_image=base_image, domain=domain, difficulty=difficulty)
    return GeneratedTask(files=files)
