"""The account databases: the users and groups the agent created reach the scoring
container; the image's own entries stay the image's unless the task names the file.

``/etc/passwd``, ``group``, ``shadow`` and ``gshadow`` are single files that every
``useradd`` rewrites whole, so the agent's copy is merged line by line into the image's:
every line of the image's is kept as the image has it (a changed root shell, a removed
user, a new password for an image account do not reach the verifier), and a line whose
name the image lacks is added. A new user whose login shell is not one the image's
``/etc/shells`` lists (or a no-login shell) is left out: ``runuser -l`` or ``su -`` of
that user in the tests would run the agent's program as the shell. So is a new user or
group that takes an id an image entry holds (a second name for the image's group would
give its gid to the users the new line lists).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import stat

from termgrade.sandbox.overlay_diff import LowerView, UpperEntry

__all__ = ["NO_LOGIN", "merge_account_file"]

_DIGITS = re.compile(r"[0-9]+")
NO_LOGIN = frozenset({"/usr/sbin/nologin", "/sbin/nologin", "/bin/false", "/usr/bin/false"})
MAX_ACCOUNT_BYTES = 4 << 20


def _image_text(lower: LowerView, path: str) -> str:
    return lower.text(path, MAX_ACCOUNT_BYTES)


def _read_upper(entry: UpperEntry) -> str | None:
    try:
        fd = os.open(entry.host_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MAX_ACCOUNT_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_ACCOUNT_BYTES:
        return None
    return data.decode("utf-8", "replace")


def _shells(lower: LowerView) -> frozenset[str]:
    listed = {line.strip() for line in _image_text(lower, "/etc/shells").splitlines()
              if line.strip().startswith("/")}
    return frozenset(listed | NO_LOGIN)


def _name(line: str) -> str:
    return line.split(":", 1)[0]


def merge_account_file(entry: UpperEntry, lower: LowerView,
                       new_users: frozenset[str] = frozenset()) -> tuple[bool, list[str], set[str]]:
    """Rewrite the agent's account database ``entry`` (in its layer, on the host) as the
    image's lines plus the agent's new ones. Returns (carry it, notes, the names added):
    False when the entry cannot be merged (not a regular file, unreadable, too large): it
    stays out and the image's file stands. Each note names a left-out change.
    ``new_users``: users the agent created (``/etc/passwd``'s merge): in ``group`` and
    ``gshadow`` they may join the image's own groups (``usermod -aG sudo alice``), the
    image's members and the rest of the line staying the image's."""
    if entry.whiteout or not stat.S_ISREG(entry.mode):
        return False, [f"{entry.path}: not a regular file; the image's is kept"], set()
    text = _read_upper(entry)
    if text is None:
        return False, [f"{entry.path}: unreadable or over {MAX_ACCOUNT_BYTES >> 20} MiB; "
                       "the image's is kept"], set()
    image = _image_text(lower, entry.path)
    image_lines = [line for line in image.splitlines() if line.strip()]
    known = {_name(line) for line in image_lines}
    joined = _joined(entry.path, image_lines, text, new_users)
    image_lines = [joined.get(_name(line), line) for line in image_lines]
    shells = _shells(lower) if posixpath.basename(entry.path) == "passwd" else frozenset()
    taken = _image_ids(entry.path, image_lines)
    added, notes = [], []
    changed_own = 0
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name = _name(line)
        if name in known:
            changed_own += line not in image_lines and name not in joined
            continue
        fields = line.split(":")
        if shells and (len(fields) != 7 or fields[6] not in shells):
            notes.append(f"{entry.path}: new user `{name}` left out: its login shell "
                         f"{fields[-1]!r} is not one the image's /etc/shells lists")
            continue
        if taken and len(fields) > 2 and not _DIGITS.fullmatch(fields[2]):
            notes.append(f"{entry.path}: new entry `{name}` left out: its id {fields[2]!r} "
                         "is not a plain decimal number")
            continue
        if taken and len(fields) > 2 and int(fields[2]) in taken:
            notes.append(f"{entry.path}: new entry `{name}` left out: its id {fields[2]} is "
                         f"the image's `{taken[int(fields[2])]}`'s (a second name for an "
                         "image account or group gives its rights to whoever it lists)")
            continue
        known.add(name)
        added.append(line)
    if changed_own:
        notes.append(f"{entry.path}: {changed_own} change(s) to the image's own entries "
                     "left out (name the file in the instruction to ask for them)")
    merged = "".join(f"{line}\n" for line in image_lines + added)
    temporary = f"{entry.host_path}.termgrade-merge"
    with contextlib.suppress(FileNotFoundError):  # the agent's own, in its frozen layer
        os.unlink(temporary)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                 stat.S_IMODE(entry.mode))
    try:
        os.write(fd, merged.encode())
        os.fchown(fd, entry.uid, entry.gid)
    finally:
        os.close(fd)
    os.replace(temporary, entry.host_path)  # a new inode: a hard link the agent made keeps
    entry.size = len(merged.encode())
    return True, notes, {_name(line) for line in added}


def _image_ids(path: str, image_lines: list[str]) -> dict[int, str]:
    """The user ids (``passwd``) or group ids (``group``) the image's entries hold, as
    numbers (glibc reads ``01600`` as 1600): id -> name. A new line must take an id of its
    own: ``datax:x:1600:svc`` with the image group ``data``'s gid makes ``svc`` a member
    of ``data`` for every ``initgroups``."""
    if posixpath.basename(path) not in ("passwd", "group"):
        return {}
    ids: dict[int, str] = {}
    for line in image_lines:
        fields = line.split(":")
        if len(fields) > 2 and _DIGITS.fullmatch(fields[2]):
            ids.setdefault(int(fields[2]), fields[0])
    return ids


def _joined(path: str, image_lines: list[str], text: str,
            new_users: frozenset[str]) -> dict[str, str]:
    """Image groups the agent's new users joined: group name -> the image's line with
    those users appended to its member list (the last field), nothing else changed."""
    if posixpath.basename(path) not in ("group", "gshadow") or not new_users:
        return {}
    agent = {_name(line): line for line in text.splitlines() if line.strip()}
    joined: dict[str, str] = {}
    for line in image_lines:
        theirs = agent.get(_name(line))
        if theirs is None or theirs == line:
            continue
        mine, other = line.split(":"), theirs.split(":")
        if len(mine) != len(other) or mine[:-1] != other[:-1]:
            continue  # more than the member list changed: the image's line stands
        before = [m for m in mine[-1].split(",") if m]
        added = [m for m in other[-1].split(",") if m and m not in before]
        if added and set(added) <= new_users and set(before) <= set(other[-1].split(",")):
            joined[_name(line)] = ":".join([*mine[:-1], ",".join(before + added)])
    return joined
