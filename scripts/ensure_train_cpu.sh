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
  # verl 0.9.1 caps transformers below 5.11, whose releases need huggingface_hub < 2, while
  # TermGrade needs huggingface_hub >= 2.4: no resolver can satisfy both. verl goes in
  # without its dependencies, then its verl-core dependencies except transformers (the
  # one TermGrade's huggingface_hub needs stays); the torch constraint keeps the CPU wheel.
  .venv/bin/python -m pip install -q --no-deps "${VERL_CORE/\[verl-core\]/}"
  deps=$(mktemp); cons=$(mktemp); trap 'rm -f "$deps" "$cons"' EXIT
  .venv/bin/python - "$deps" "$cons" <<'PY'
import importlib.metadata as md
import sys

from packaging.requirements import Requirement

wanted = []
for text in md.requires("verl") or []:
    req = Requirement(text)
    extra_ok = req.marker is None or req.marker.evaluate({"extra": "verl-core"})
    if extra_ok and req.name.lower() != "transformers":
        req.marker = None
        wanted.append(str(req))
open(sys.argv[1], "w").write("\n".join(sorted(set(wanted))) + "\n")
open(sys.argv[2], "w").write(f"torch=={md.version('torch')}\n")
PY
  .venv/bin/python -m pip install -q -c "$cons" -r "$deps" "$PEFT"
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
