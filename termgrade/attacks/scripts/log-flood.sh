#!/usr/bin/env bash
# attack: log-flood
# class: unscored
# what: a leftover process writes 40 MB into /logs/verifier while test.sh runs; a grader that caps what it reads back and calls the overflow an error leaves the trial unscored instead of 0
set -eu
# A leftover process: the agent phase ends, it keeps running into scoring.
d=/tmp/.tgd-log-flood
mkdir -p "$d"
cat "$(dirname "$0")/_lib/daemon_prologue.py" > "$d/daemon.py"
cat >> "$d/daemon.py" <<'PY'
# After the grader reset /logs/verifier, before it reads it back.
wait_for(lambda: pids(is_verifier))
chunk = b"\0" * (1 << 20)
with open("/logs/verifier/.flood", "wb") as f:
    for _ in range(40):
        f.write(chunk)
PY
setsid /usr/bin/python3 "$d/daemon.py" </dev/null >/dev/null 2>&1 &
sleep 0.2
