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
