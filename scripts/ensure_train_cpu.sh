#!/usr/bin/env bash
# The training extra's CPU half, for tests on a machine without a GPU: a CPU torch, then
# verl's core (no vLLM, no CUDA kernels), peft, and shellcheck (the launch script's lint).
# Idempotent: a stamp names what is installed. The GPU versions are the `train` extra
# (verl[vllm]==0.9.1: vLLM 0.24, torch 2.11), installed by the launch script on the node.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[train-cpu] %s\n' "$*" >&2; }

# torch 2.13.0 resolves to a CPU wheel here; plain `torch` would pull 3 GB of CUDA wheels.
TORCH_CPU=${TERMGRADE_TORCH_CPU:-torch==2.13.0}
VERL_CORE="verl[verl-core]==0.9.1"
PEFT="peft>=0.15"
stamp=.venv/.termgrade-train-cpu
want="$TORCH_CPU $VERL_CORE $PEFT"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing $want into .venv"
  .venv/bin/python -m pip install -q "$TORCH_CPU"
  # the constraint keeps the CPU torch: verl-core's own dependencies must not replace it
  cons=$(mktemp); trap 'rm -f "$cons"' EXIT
  .venv/bin/python -c 'import torch; print(f"torch=={torch.__version__}")' > "$cons"
  .venv/bin/python -m pip install -q -c "$cons" "$VERL_CORE" "$PEFT"
  echo "$want" > "$stamp"
fi

# verl 0.9.1 and TransferQueue ship their own test suites as a top-level `tests` package
# into site-packages, which would shadow this repository's tests/ (a namespace package):
# remove it when (and only when) those distributions own it.
.venv/bin/python - <<'PY'
import importlib.metadata as md
import shutil
import sys
import sysconfig
from pathlib import Path

site = Path(sysconfig.get_paths()["purelib"])
stray = site / "tests"
owners = []
for dist in ("verl", "TransferQueue"):
    try:
        files = md.distribution(dist).files or []
    except md.PackageNotFoundError:
        continue
    if any(str(f) == "tests/__init__.py" for f in files):
        owners.append(dist)
if owners and stray.is_dir():
    shutil.rmtree(stray)
    print(f"[train-cpu] removed {stray} (installed by {', '.join(owners)})", file=sys.stderr)
PY

if ! command -v shellcheck >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
    log "installing shellcheck with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends shellcheck >/dev/null
  else
    log "shellcheck is missing: install it (Debian: sudo apt-get install shellcheck)"; exit 1
  fi
fi
