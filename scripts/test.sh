#!/usr/bin/env bash
# Set up, then run the whole test suite (Docker tests included), the static checks, and
# a user's install from the wheel (scripts/wheel_check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# the training tests' CPU stack (CPU torch, verl-core, peft) and shellcheck; mypy reads verl
bash scripts/ensure_train_cpu.sh
.venv/bin/ruff check .
.venv/bin/mypy
PYTHONFAULTHANDLER=1 .venv/bin/python -m pytest "$@"
bash scripts/wheel_check.sh
