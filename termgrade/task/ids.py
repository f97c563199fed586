"""Task ids: as permissive as Harbor's directory names, with a derived safe name.

A task's id is its directory's name. Harbor takes any directory name (it lowercases and
replaces characters itself wherever Docker needs a stricter one), so third-party corpora
have ids like ``Rscript_segfault_debugging_hard``. :func:`check_task_id` refuses only
what no directory name can be, or what Harbor cannot address as a task: empty, ``.`` /
``..``, a path separator, a control character, leading or trailing white space, over 255
bytes.

:func:`safe_name` derives the strict name that image tags, container names and similar
keys need (lowercase ``[a-z0-9._-]``, starting with a letter or digit). When the id is
already safe it is returned unchanged, so TermGrade's own corpus keeps its names; when
anything had to change, a short hash of the original id is appended, so that
``Foo`` and ``foo`` never share an image.
"""

from __future__ import annotations

import hashlib
import re

MAX_ID_BYTES = 255
"""The longest directory name Linux file systems take."""
SAFE_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")
"""A name Docker accepts as an image-name component and as a container name."""
_UNSAFE_CHAR = re.compile(r"[^a-z0-9._-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_HASH_CHARS = 8
_SAFE_STEM_MAX = 128 - 1 - _HASH_CHARS


def task_id_problem(task_id: str) -> str | None:
    """Why ``task_id`` cannot be a task id (None when it can)."""
    if not task_id:
        return "the task id is empty"
    if task_id in (".", ".."):
        return f"{task_id!r} is not a directory name"
    if "/" in task_id or "\\" in task_id:
        return f"task id {task_id!r} contains a path separator"
    if _CONTROL.search(task_id):
        return f"task id {task_id!r} contains a control character"
    if task_id != task_id.strip():
        return f"task id {task_id!r} starts or ends with white space"
    if len(task_id.encode("utf-8", errors="surrogateescape")) > MAX_ID_BYTES:
        return f"task id {task_id[:40]!r}... is over {MAX_ID_BYTES} bytes"
    return None


def safe_name(task_id: str) -> str:
    """The id itself when Docker takes it as a name, else a lowercase ``[a-z0-9._-]``
    stem plus ``-`` and 8 hex digits of the id's sha256 (stable, collision-safe)."""
    if SAFE_NAME.match(task_id):
        return task_id
    stem = _UNSAFE_CHAR.sub("-", task_id.lower()).strip("-._")[:_SAFE_STEM_MAX] or "task"
    digest = hashlib.sha256(task_id.encode("utf-8", errors="surrogateescape")).hexdigest()
    return f"{stem}-{digest[:_HASH_CHARS]}"
