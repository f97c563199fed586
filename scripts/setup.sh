#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: .venv with TermGrade and its dev tools, a Docker
# engine, and the base image termgrade/base:local. Safe to run again and again.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[setup] %s\n' "$*" >&2; }

py=${PYTHON:-python3}
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  log "TermGrade needs Python >= 3.11 (set PYTHON=/path/to/python3.11)"; exit 1
fi
[ -x .venv/bin/python ] || { log "creating .venv"; "$py" -m venv .venv; }
stamp=.venv/.termgrade-install
want=$(sha256sum < pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing termgrade[dev] into .venv"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  # the dev extra's trl/accelerate need torch: the CPU wheel first (scripts/ensure_train_cpu.sh
  # pins the same), or the resolver takes PyPI's default torch with 3 GB of CUDA wheels
  .venv/bin/python -m pip install -q "${TERMGRADE_TORCH_CPU:-torch==2.13.0}"
  .venv/bin/python -m pip install -q -e '.[dev]'
  echo "$want" > "$stamp"
fi

bash scripts/ensure_docker.sh

# Headless Chromium and its driver: the browser tests of `termgrade view` (tests/view)
# drive Debian's chromium through selenium (a dev extra).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
    log "installing chromium and chromium-driver with apt-get (the viewer's browser tests)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
  else
    log "chromium / chromedriver missing: the viewer's browser tests will skip" \
        "(Debian/Ubuntu: sudo apt-get install chromium chromium-driver)"
  fi
fi
.venv/bin/termgrade base-image build
