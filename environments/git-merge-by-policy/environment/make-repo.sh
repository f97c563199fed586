#!/usr/bin/env bash
# Build /app/inventory: main and feature/bulk-import diverge from a common base.
set -euo pipefail
export GIT_AUTHOR_NAME="Priya Natarajan" GIT_AUTHOR_EMAIL="priya@inventory.example"
export GIT_COMMITTER_NAME="Priya Natarajan" GIT_COMMITTER_EMAIL="priya@inventory.example"
t=1709370000
commit() {
  t=$((t + 5400)); export GIT_AUTHOR_DATE="@$t +0100" GIT_COMMITTER_DATE="@$t +0100"
  git add -A; git commit -q -m "$1"
}
mkdir -p /app/inventory && cd /app/inventory
git init -q -b main
git config user.name "Priya Natarajan"; git config user.email "priya@inventory.example"
mkdir -p inventory tests legacy config

echo 1.4.1 > VERSION
cat > CHANGELOG.md <<'T'
# Changelog

## Unreleased

## 1.4.1 - 2024-03-02

- Fix rounding of stock values.
T
cat > requirements.txt <<'T'
click==8.1.3
requests==2.31.0
SQLAlchemy==2.0.20
urllib3==1.26.5
T
cat > config/settings.ini <<'T'
[server]
host = 0.0.0.0
port = 8000
workers = 2

[database]
url = postgresql://inventory@db/inventory
pool_size = 5
timeout = 30

[import]
batch_size = 100
T
touch inventory/__init__.py tests/__init__.py
cat > inventory/stock.py <<'T'
def total_value(items):
    return round(sum(i["qty"] * i["price"] for i in items), 2)
T
cat > inventory/importer.py <<'T'
import csv


def parse_rows(lines):
    reader = csv.DictReader(lines)
    return [{"sku": r["sku"], "qty": int(r["qty"]), "price": float(r["price"])} for r in reader]
T
cat > tests/test_stock.py <<'T'
import unittest

from inventory.stock import total_value


class StockTest(unittest.TestCase):
    def test_total_value(self):
        items = [{"sku": "a", "qty": 3, "price": 0.1}, {"sku": "b", "qty": 1, "price": 2.5}]
        self.assertEqual(total_value(items), 2.8)
T
cat > tests/test_importer.py <<'T'
import unittest

from inventory.importer import parse_rows


class ImporterTest(unittest.TestCase):
    def test_parse_rows(self):
        rows = parse_rows(["sku,qty,price", "a,2,1.5"])
        self.assertEqual(rows, [{"sku": "a", "qty": 2, "price": 1.5}])
T
cat > legacy/export_csv.py <<'T'
import csv


def export(items, path):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        for i in items:
            writer.writerow([i["sku"], i["qty"], i["price"]])
T
commit "Release 1.4.1"

# --- feature branch -------------------------------------------------------
git checkout -q -b feature/bulk-import
cat > inventory/importer.py <<'T'
import csv

REQUIRED = ("sku", "qty", "price")


def parse_rows(lines, strict=True):
    reader = csv.DictReader(lines)
    rows = []
    for number, r in enumerate(reader, start=2):
        missing = [k for k in REQUIRED if not (r.get(k) or "").strip()]
        if missing:
            if strict:
                raise ValueError(f"line {number}: missing {', '.join(missing)}")
            continue
        rows.append({"sku": r["sku"].strip(), "qty": int(r["qty"]), "price": float(r["price"])})
    return rows
T
cat >> tests/test_importer.py <<'T'

    def test_strict_rejects_missing_fields(self):
        with self.assertRaises(ValueError):
            parse_rows(["sku,qty,price", "a,,1.5"])

    def test_lenient_skips_bad_rows(self):
        rows = parse_rows(["sku,qty,price", " b ,1,2", "c,,1"], strict=False)
        self.assertEqual(rows, [{"sku": "b", "qty": 1, "price": 2.0}])
T
commit "Validate required import fields"
cat > inventory/bulk.py <<'T'
from inventory.importer import parse_rows
from inventory.stock import total_value


def import_file(path, strict=True):
    with open(path, newline="") as f:
        return total_value(parse_rows(f, strict=strict))
T
cat > tests/test_bulk.py <<'T'
import os
import tempfile
import unittest

from inventory.bulk import import_file


class BulkTest(unittest.TestCase):
    def test_import_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "stock.csv")
            with open(path, "w") as f:
                f.write("sku,qty,price\na,2,1.25\nb,1,0.5\n")
            self.assertEqual(import_file(path), 3.0)
T
python3 - <<'T'
p = "CHANGELOG.md"
s = open(p).read().replace("## Unreleased\n", "## Unreleased\n\n- Add bulk CSV import.\n- Log slow database queries.\n- Import progress bar.\n", 1)
open(p, "w").write(s)
T
commit "Add bulk CSV import"
cat > requirements.txt <<'T'
click==8.1.7
requests==2.31.0
SQLAlchemy==2.0.25
tqdm==4.66.4
urllib3==1.26.9
T
cat > config/settings.ini <<'T'
[server]
host = 0.0.0.0
port = 8080
workers = 8

[database]
url = postgresql://inventory@db/inventory
pool_size = 20
timeout = 30
echo = false

[import]
batch_size = 500
workers = 4

[bulk]
max_rows = 100000
T
echo 1.5.0-dev > VERSION
sed -i 's/^import csv$/import csv  # noqa: I001/' legacy/export_csv.py
commit "Tune settings for bulk imports"

# --- main -----------------------------------------------------------------
git checkout -q main
cat >> inventory/stock.py <<'T'


def low_stock(items, threshold=5):
    return [i["sku"] for i in items if i["qty"] < threshold]
T
cat >> tests/test_stock.py <<'T'

    def test_low_stock(self):
        items = [{"sku": "a", "qty": 1, "price": 1.0}, {"sku": "b", "qty": 9, "price": 1.0}]
        self.assertEqual(low_stock(items), ["a"])
T
sed -i 's/^from inventory.stock import total_value$/from inventory.stock import low_stock, total_value/' tests/test_stock.py
commit "Add low-stock report"
sed -i 's/{"sku": r\["sku"\], /{"sku": r["sku"].strip(), /' inventory/importer.py
git rm -q -r legacy
commit "Strip SKUs on import; drop legacy CSV export"
cat > requirements.txt <<'T'
click==8.1.3
requests==2.32.3
SQLAlchemy==2.0.20
structlog==24.1.0
urllib3==1.26.18
T
cat > config/settings.ini <<'T'
[server]
host = 0.0.0.0
port = 8000
workers = 4

[database]
url = postgresql://inventory@db/inventory
pool_size = 10
timeout = 60
slow_query_ms = 500

[import]
batch_size = 100
T
python3 - <<'T'
p = "CHANGELOG.md"
s = open(p).read().replace("## Unreleased\n", "## Unreleased\n\n- Fix negative stock display.\n- Log slow database queries.\n", 1)
open(p, "w").write(s)
T
echo 1.4.2 > VERSION
commit "Prepare 1.4.2"
