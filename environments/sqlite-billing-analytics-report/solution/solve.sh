#!/usr/bin/env bash
set -euo pipefail
cat > /app/analytics.sh <<'SCRIPT'
#!/usr/bin/env bash
set -euo pipefail
if [ "$#" -ne 2 ]; then
  echo "usage: analytics.sh DB_PATH OUT_DIR" >&2
  exit 2
fi
db=$1 out=$2
if [ ! -f "$db" ]; then
  echo "analytics.sh: no such database: $db" >&2
  exit 1
fi
mkdir -p "$out"

query() {  # query HEADER FILE  (SQL on stdin)
  local header=$1 file=$2 tmp
  tmp=$(mktemp "$out/.tmp.XXXXXX")
  { echo "$header"; sqlite3 -readonly -batch -noheader -list -separator , "file:$db?mode=ro"; } > "$tmp"
  mv "$tmp" "$out/$file"
}

MONEY="CASE WHEN %s < 0 THEN '-' ELSE '' END || (abs(%s) / 100) || '.' || printf('%%02d', abs(%s) %% 100)"
money() { printf "$MONEY" "$1" "$1" "$1"; }

query "month,gross,refunds,net,running_net,mom_pct" monthly_revenue.csv <<SQL
WITH paid AS (SELECT id, issued_on, amount_cents FROM invoices WHERE status = 'paid'),
ref AS (SELECT r.refunded_on, r.amount_cents FROM refunds r JOIN paid p ON p.id = r.invoice_id),
g AS (SELECT substr(issued_on, 1, 7) AS month, SUM(amount_cents) AS cents FROM paid GROUP BY 1),
rf AS (SELECT substr(refunded_on, 1, 7) AS month, SUM(amount_cents) AS cents FROM ref GROUP BY 1),
bounds AS (SELECT MIN(month) AS lo, MAX(month) AS hi FROM (SELECT month FROM g UNION SELECT month FROM rf)),
months(month) AS (
  SELECT lo FROM bounds WHERE lo IS NOT NULL
  UNION ALL
  SELECT strftime('%Y-%m', month || '-01', '+1 month') FROM months, bounds WHERE month < hi
),
base AS (
  SELECT m.month, COALESCE(g.cents, 0) AS gross, COALESCE(rf.cents, 0) AS refunds,
         COALESCE(g.cents, 0) - COALESCE(rf.cents, 0) AS net
  FROM months m LEFT JOIN g ON g.month = m.month LEFT JOIN rf ON rf.month = m.month
),
win AS (
  SELECT *, SUM(net) OVER (ORDER BY month ROWS UNBOUNDED PRECEDING) AS running,
         LAG(net) OVER (ORDER BY month) AS prev
  FROM base
),
pct AS (
  SELECT *, CASE WHEN prev IS NULL OR prev = 0 THEN NULL ELSE
    (CASE WHEN net - prev < 0 THEN -1 ELSE 1 END) *
    ((2 * abs(1000 * (net - prev)) + abs(prev)) / (2 * abs(prev))) END AS tenths
  FROM win
)
SELECT month, $(money gross), $(money refunds), $(money net), $(money running),
       CASE WHEN tenths IS NULL THEN ''
            ELSE CASE WHEN tenths < 0 THEN '-' ELSE '' END || (abs(tenths) / 10) || '.' || (abs(tenths) % 10) END
FROM pct ORDER BY month;
SQL

query "country,rank,account_id,account_name,lifetime_net" top_accounts.csv <<SQL
WITH paid AS (SELECT id, account_id, amount_cents FROM invoices WHERE status = 'paid'),
inv AS (SELECT account_id, SUM(amount_cents) AS cents FROM paid GROUP BY account_id),
ref AS (SELECT p.account_id, SUM(r.amount_cents) AS cents FROM refunds r JOIN paid p ON p.id = r.invoice_id
        GROUP BY p.account_id),
life AS (
  SELECT a.id, a.name, a.country, inv.cents - COALESCE(ref.cents, 0) AS net
  FROM accounts a JOIN inv ON inv.account_id = a.id LEFT JOIN ref ON ref.account_id = a.id
),
ranked AS (
  SELECT *, RANK() OVER (PARTITION BY country ORDER BY net DESC) AS rnk FROM life WHERE net > 0
)
SELECT country, rnk, id, name, $(money net) FROM ranked WHERE rnk <= 3
ORDER BY country, rnk, id;
SQL

query "cohort,size,m0,m1,m2,m3" cohort_retention.csv <<SQL
WITH acc AS (SELECT id, substr(signup_date, 1, 7) AS cohort FROM accounts),
act AS (
  SELECT DISTINCT a.id, a.cohort,
    (CAST(substr(i.issued_on, 1, 4) AS INTEGER) * 12 + CAST(substr(i.issued_on, 6, 2) AS INTEGER))
    - (CAST(substr(a.cohort, 1, 4) AS INTEGER) * 12 + CAST(substr(a.cohort, 6, 2) AS INTEGER)) AS k
  FROM acc a JOIN invoices i ON i.account_id = a.id AND i.status = 'paid'
)
SELECT c.cohort, c.size,
  (SELECT COUNT(*) FROM act WHERE act.cohort = c.cohort AND k = 0),
  (SELECT COUNT(*) FROM act WHERE act.cohort = c.cohort AND k = 1),
  (SELECT COUNT(*) FROM act WHERE act.cohort = c.cohort AND k = 2),
  (SELECT COUNT(*) FROM act WHERE act.cohort = c.cohort AND k = 3)
FROM (SELECT cohort, COUNT(*) AS size FROM acc GROUP BY cohort) c
ORDER BY c.cohort;
SQL
SCRIPT
chmod +x /app/analytics.sh
/app/analytics.sh /app/data/billing.db /app/reports
