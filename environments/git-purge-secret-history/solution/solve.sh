#!/usr/bin/env bash
set -euo pipefail
cd /app/payments-api
export FILTER_BRANCH_SQUELCH_WARNING=1
git checkout -q main

redact='s/sk_live_[0-9A-Za-z]+/REDACTED/g; s/AKIA[0-9A-Z]{16}/REDACTED/g'
git filter-branch -f --prune-empty \
  --tree-filter "rm -f deploy/prod.env
    grep -rlE 'sk_live_|AKIA' --exclude-dir=.git . | while IFS= read -r f; do sed -i -E '$redact' \"\$f\"; done" \
  --msg-filter "sed -E '$redact'" \
  --tag-name-filter cat \
  -- --all >/dev/null

# Drop every trace of the old history: backup refs, reflogs, unreachable objects.
git for-each-ref --format='%(refname)' refs/original | while read -r ref; do git update-ref -d "$ref"; done
git reflog expire --expire=now --all
git gc -q --prune=now
git checkout -q main
git status --short
