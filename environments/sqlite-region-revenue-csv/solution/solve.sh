#!/usr/bin/env bash
set -euo pipefail
cat > /app/region_report.sh <<'SCRIPT'
#!/usr/bin/env bash
set -euo pipefail
if [ "$#" -ne 2 ]; then
  echo "usage: region_report.sh DB_PATH OUT_CSV" >&2
  exit 2
fi
db=$1 out=$2
if [ ! -f "$db" ]; then
  echo "region_report.sh: no such database: $db" >&2
  exit 1
fi
mkdir -p "$(dirname -- "$out")"
tmp=$(mktemp "$(dirname -- "$out")/.region_report.XXXXXX")
trap 'rm -f "$tmp"' EXIT
sqlite3 -readonly -csv -header "file:$db?mode=ro" > "$tmp" <<'SQL'
WITH paid AS (
  SELECT o.id,
         CASE WHEN c.region IS NULL OR trim(c.region, ' ') = '' THEN 'UNKNOWN'
              ELSE trim(c.region, ' ') END AS region,
         substr(o.ordered_at, 1, 7) AS month
  FROM orders o JOIN customers c ON c.id = o.customer_id
  WHERE o.status = 'paid'
), per_order AS (
  SELECT p.region, p.month, p.id,
         COALESCE((SELECT SUM(i.qty * i.unit_price_cents) FROM order_items i
                   WHERE i.order_id = p.id), 0) AS cents
  FROM paid p
)
SELECT region, month, COUNT(*) AS orders,
       printf('%d.%02d', SUM(cents) / 100, SUM(cents) % 100) AS revenue
FROM per_order
GROUP BY region, month
ORDER BY region COLLATE BINARY, month;
SQL
if [ ! -s "$tmp" ]; then
  echo "region,month,orders,revenue" > "$tmp"
fi
sed -i 's/\r$//' "$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
SCRIPT
chmod +x /app/region_report.sh
/app/region_report.sh /app/data/shop.db /app/out/region_revenue.csv
