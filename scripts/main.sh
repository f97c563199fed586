#!/usr/bin/env bash
# The main job on the embedded corpus: set up, then verify every task in environments/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p runs
.venv/bin/termgrade verify environments/ --repeat "${TERMGRADE_REPEAT:-2}" \
  --workers "${TERMGRADE_WORKERS:-2}" --output runs/verify.jsonl "$@"
