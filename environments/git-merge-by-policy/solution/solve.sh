#!/usr/bin/env bash
set -euo pipefail
cd /app/inventory
git config user.name >/dev/null || git config user.name "Merger"
git config user.email >/dev/null || git config user.email "merger@example.com"
git checkout -q main
git merge --no-ff --no-commit feature/bulk-import >/dev/null 2>&1 || true

echo 1.5.0 > VERSION

cat > CHANGELOG.md <<'T'
# Changelog

## Unreleased

- Fix negative stock display.
- Log slow database queries.
- Add bulk CSV import.
- Import progress bar.

## 1.4.1 - 2024-03-02

- Fix rounding of stock values.
T

cat > requirements.txt <<'T'
click==8.1.7
requests==2.32.3
SQLAlchemy==2.0.25
structlog==24.1.0
tqdm==4.66.4
urllib3==1.26.18
T

cat > config/settings.ini <<'T'
[server]
host = 0.0.0.0
port = 8080
workers = 8

[database]
url = postgresql://inventory@db/inventory
pool_size = 10
timeout = 60
slow_query_ms = 500
echo = false

[import]
batch_size = 500
workers = 4

[bulk]
max_rows = 100000
T

git checkout -q --theirs -- inventory/importer.py
git rm -q -f --ignore-unmatch legacy/export_csv.py
rm -rf legacy
git add -A
python3 -m unittest discover -s tests -t . >/dev/null 2>&1
git commit -q -m "Merge branch 'feature/bulk-import'"
git status --short
