#!/usr/bin/env bash
# Build /app/notes-service with a fixed, reproducible history, then "lose" work.
set -euo pipefail
export GIT_AUTHOR_NAME="Dana Reyes" GIT_AUTHOR_EMAIL="dana@notes.example"
export GIT_COMMITTER_NAME="Dana Reyes" GIT_COMMITTER_EMAIL="dana@notes.example"
t=1714550400
tick() { t=$((t + 3600)); export GIT_AUTHOR_DATE="@$t +0200" GIT_COMMITTER_DATE="@$t +0200"; }
commit() { tick; git add -A; git commit -q -m "$1"; }

mkdir -p /app/notes-service && cd /app/notes-service
git init -q -b main
git config user.name "Dana Reyes"; git config user.email "dana@notes.example"

cat > README.md <<'T'
# notes-service

A tiny HTTP service that stores notes.
T
cat > service.py <<'T'
NOTES = {}


def create(note_id, text):
    NOTES[note_id] = text
T
echo 0.1.0 > VERSION
commit "Initial commit: notes service skeleton"
cat >> service.py <<'T'


def get(note_id):
    return NOTES.get(note_id)
T
commit "Add note lookup"
cat >> service.py <<'T'


def list_notes():
    return sorted(NOTES)
T
commit "Add list endpoint"
tick; git tag -a v0.1 -m "Release 0.1"
git branch release/0.1
cat >> service.py <<'T'


def delete(note_id):
    NOTES.pop(note_id, None)
T
echo 0.2.0 > VERSION
commit "Add delete endpoint"

git checkout -q -b feature/search
cat > search.py <<'T'
from service import NOTES


def build_index():
    return {word: key for key, text in NOTES.items() for word in text.split()}
T
commit "Add search index"
cat >> search.py <<'T'


def search(word):
    return build_index().get(word)
T
commit "Add search endpoint"
cat > test_search.py <<'T'
import search
import service


def test_search_finds_note():
    service.create(1, "hello world")
    assert search.search("world") == 1
T
commit "Add search tests"

git checkout -q main
cat >> service.py <<'T'


def page(offset, limit=20):
    return list_notes()[offset:offset + limit]
T
commit "Add pagination"
python3 - <<'T'
p = "service.py"
s = open(p).read()
s = s.replace("def create(note_id, text):\n", "def create(note_id, text):\n    if len(text) > 10_000:\n        raise ValueError('note too long')\n")
open(p, "w").write(s)
T
commit "Validate note length"

# Work in progress, stashed and then dropped by mistake.
cat >> service.py <<'T'


RATE = {}


def allow(client, limit=100):
    RATE[client] = RATE.get(client, 0) + 1
    return RATE[client] <= limit
T
printf '\nRate limiting: 100 requests per client (WIP).\n' >> README.md
tick; git stash push -q -m "WIP rate limiting"
tick; git stash drop -q

# The accidents.
tick; git checkout -q release/0.1; git checkout -q main
tick; git branch -q -D feature/search
tick; git reset -q --hard HEAD~2
