#!/usr/bin/env bash
# The main job on the embedded corpus, after set-up:
#   1. termgrade verify   - execution filtering of every task in environments/ (Docker, no network)
#   2. termgrade audit    - static checks and near-duplicates over the corpus
#   3. termgrade build    - stage the environments dataset repo with the verify verdicts
#   4. termgrade validate - prove the staged repo (schemas, load_dataset, archives, secrets)
# Outputs: runs/verify.jsonl, runs/audit.md, dist/termgrade-environments/.
# Resumes: a rerun skips tasks already verified unchanged (runs/verify-journal.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p runs
tg=.venv/bin/termgrade
$tg verify environments/ --repeat "${TERMGRADE_REPEAT:-3}" --workers "${TERMGRADE_WORKERS:-2}" \
  --output runs/verify.jsonl --journal runs/verify-journal.jsonl --resume
$tg audit environments/ --markdown runs/audit.md
$tg build environments --out dist/termgrade-environments --verify runs/verify.jsonl --force
$tg validate dist/termgrade-environments
echo "main job done: runs/verify.jsonl, runs/audit.md, dist/termgrade-environments/" >&2
