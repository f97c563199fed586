#!/usr/bin/env bash
set -euo pipefail
cat > /app/wordfreq <<'SCRIPT'
#!/usr/bin/env bash
file=${1:-}
n=${2:-10}
if [ -z "$file" ] || [ ! -f "$file" ]; then
  echo "wordfreq: no such file: $file" >&2
  exit 2
fi
if ! [[ "$n" =~ ^[0-9]+$ ]] || [ "$n" -eq 0 ]; then
  echo "wordfreq: N must be a positive integer, got: $n" >&2
  exit 2
fi
LC_ALL=C tr -cs 'A-Za-z' '\n' < "$file" | LC_ALL=C tr 'A-Z' 'a-z' | grep -v '^$' \
  | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1,1nr -k2,2 | head -n "$n" \
  | awk '{print $1" "$2}'
exit 0
SCRIPT
chmod +x /app/wordfreq
