#!/usr/bin/env bash
set -euo pipefail
cd /app/notes-service
git config user.name >/dev/null || git config user.name "Rescuer"
git config user.email >/dev/null || git config user.email "rescuer@example.com"

# main's own reflog: @{0} is after the reset, @{1} is where it was before.
before_reset=$(git rev-parse 'main@{1}')

# The deleted branch's tip: HEAD's reflog remembers leaving it.
# The entry right after (older than) "moving from feature/search" is the commit HEAD was
# on while on that branch: its tip. awk reads all input so git never gets SIGPIPE.
feature_tip=$(git reflog --format='%H %gs' HEAD | awk '
  found == 1 { tip = $1; found = 2 }
  found == 0 && $0 ~ /checkout: moving from feature\/search to / { found = 1 }
  END { print tip }')
git branch feature/search "$feature_tip"

# The dropped stash is an unreachable commit whose message is "On main: WIP rate limiting".
stash=""
for c in $(git fsck --unreachable --no-reflogs 2>/dev/null | awk '$2 == "commit" {print $3}'); do
  if [ "$(git log -1 --format=%s "$c")" = "On main: WIP rate limiting" ]; then stash=$c; fi
done
[ -n "$stash" ]

git checkout -q main
git reset -q --hard "$before_reset"
git checkout -q -b wip/rate-limit
git stash apply -q "$stash"
git commit -q -am "WIP rate limiting"
git checkout -q main
git status --short
