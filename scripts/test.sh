#!/usr/bin/env bash
# Set up, then run the whole test suite (Docker tests included) and the static checks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
