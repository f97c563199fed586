#!/usr/bin/env bash
set -euo pipefail
cat > /app/permctl <<'PERMCTL'
#!/usr/bin/python3
"""permctl: check or apply an ownership/mode spec to a directory tree."""
import fnmatch
import grp
import os
import pwd
import stat
import sys


class SpecError(Exception):
    pass


def die(msg, code=2):
    print(f"permctl: {msg}", file=sys.stderr)
    sys.exit(code)


def parse_mode(text):
    if text == "-":
        return None
    if len(text) not in (3, 4) or any(c not in "01234567" for c in text):
        raise SpecError(f"bad mode '{text}'")
    return int(text, 8)


def parse_id(text, kind):
    if text == "-":
        return None
    if text.isdigit():
        return int(text)
    try:
        return pwd.getpwnam(text).pw_uid if kind == "user" else grp.getgrnam(text).gr_gid
    except KeyError:
        raise SpecError(f"unknown {kind} '{text}'") from None


def parse_spec(path):
    rules = []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as exc:
        die(f"cannot read spec {path}: {exc.strerror}")
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = stripped.split()
        try:
            if len(fields) != 5:
                raise SpecError(f"expected 5 fields, got {len(fields)}")
            pattern, owner, group, fmode, dmode = fields
            comps = [c for c in pattern.split("/") if c]
            if not pattern.startswith("/"):
                comps = ["**"] + comps
            rules.append((comps, parse_id(owner, "user"), parse_id(group, "group"),
                          parse_mode(fmode), parse_mode(dmode)))
        except SpecError as exc:
            die(f"{path}:{number}: {exc}")
    return rules


def match(pat, parts):
    if not pat:
        return not parts
    if pat[0] == "**":
        return any(match(pat[1:], parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], pat[0]) and match(pat[1:], parts[1:])


def entries(root):
    yield "/", root
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            yield "/" + os.path.relpath(full, root), full


def user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def group_name(gid):
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def plan(rules, root):
    out = []
    for spath, full in sorted(entries(root), key=lambda e: e[0].encode("utf-8", "surrogateescape")):
        st = os.lstat(full)
        if stat.S_ISDIR(st.st_mode):
            is_dir = True
        elif stat.S_ISREG(st.st_mode):
            is_dir = False
        else:
            continue
        parts = [p for p in spath.split("/") if p]
        want_uid = want_gid = want_mode = None
        for comps, uid, gid, fmode, dmode in rules:
            if match(comps, parts):
                want_uid = uid if uid is not None else want_uid
                want_gid = gid if gid is not None else want_gid
                mode = dmode if is_dir else fmode
                want_mode = mode if mode is not None else want_mode
        cur_mode = stat.S_IMODE(st.st_mode)
        changes = []
        if want_uid is not None and want_uid != st.st_uid:
            changes.append(("owner", user_name(st.st_uid), user_name(want_uid)))
        if want_gid is not None and want_gid != st.st_gid:
            changes.append(("group", group_name(st.st_gid), group_name(want_gid)))
        if want_mode is not None and want_mode != cur_mode:
            changes.append(("mode", f"{cur_mode:04o}", f"{want_mode:04o}"))
        if changes:
            out.append((spath, full, want_uid, want_gid, want_mode, changes))
    return out


def main(argv):
    if len(argv) != 3 or argv[0] not in ("check", "apply"):
        die("usage: permctl check|apply SPEC ROOT")
    action, spec, root = argv
    if not os.path.isdir(root):
        die(f"not a directory: {root}")
    rules = parse_spec(spec)
    todo = plan(rules, root)
    for spath, full, uid, gid, mode, changes in todo:
        for attr, cur, want in changes:
            print(f"{spath} {attr} {cur} -> {want}")
        if action == "apply":
            st = os.lstat(full)
            if uid is not None or gid is not None:
                os.chown(full, uid if uid is not None else -1, gid if gid is not None else -1)
            if mode is not None and stat.S_IMODE(os.lstat(full).st_mode) != mode:
                os.chmod(full, mode)
            elif mode is None and stat.S_IMODE(os.lstat(full).st_mode) != stat.S_IMODE(st.st_mode):
                os.chmod(full, stat.S_IMODE(st.st_mode))
    if action == "check" and todo:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
PERMCTL
chmod +x /app/permctl
/app/permctl apply /app/deploy.spec /srv/deploy
/app/permctl check /app/deploy.spec /srv/deploy
