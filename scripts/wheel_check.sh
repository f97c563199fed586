#!/usr/bin/env bash
# A user's install: build the wheel, install it alone in a fresh venv, and from an
# unrelated directory stage and validate the environments repo of this checkout's corpus.
# Proves the installed package carries everything it reads (schemas, card, base image).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/termgrade-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT
log() { printf '[wheel_check] %s\n' "$*" >&2; }
py=${PYTHON:-python3}

log "building the wheel"
"$repo/.venv/bin/python" -m pip wheel -q --no-deps -w "$work/dist" "$repo" >/dev/null
wheel=$(ls "$work"/dist/termgrade-*.whl)
log "installing $(basename "$wheel") into a fresh venv"
"$py" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip >/dev/null
"$work/venv/bin/python" -m pip install -q "$wheel"
mkdir "$work/elsewhere"
cd "$work/elsewhere"
if "$work/venv/bin/python" -c 'import termgrade.testing' 2>/dev/null; then
  log "test doubles are installed with the package"; exit 1
fi
log "the generation prompt templates ship in the wheel"
"$work/venv/bin/python" -c 'from termgrade.generate.prompting import Prompts, versions
assert "v1" in versions(), versions()
assert "=== file: PATH ===" in Prompts.load("v1").texts["system.md"]'
log "termgrade build environments + validate from $(pwd)"
"$work/venv/bin/termgrade" build environments -t "$repo/environments" -o out/env
"$work/venv/bin/termgrade" validate out/env
log "the installed wheel builds and validates from an unrelated directory"
