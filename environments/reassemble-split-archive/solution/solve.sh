#!/usr/bin/env bash
set -euo pipefail
cd /app
manifest=/app/transfer/MANIFEST.sha256
out=$(mktemp /tmp/dataset.XXXXXX)
report=$(mktemp /tmp/report.XXXXXX)
while read -r want name; do
  [ "$name" = dataset.tar.xz ] && { whole=$want; continue; }
  if [ -f "transfer/$name" ] && [ "$(sha256sum < "transfer/$name" | cut -d' ' -f1)" = "$want" ]; then
    cat "transfer/$name" >> "$out"; echo "$name ok" >> "$report"
  elif [ -f "mirror/$name" ] && [ "$(sha256sum < "mirror/$name" | cut -d' ' -f1)" = "$want" ]; then
    cat "mirror/$name" >> "$out"; echo "$name replaced" >> "$report"
  else
    echo "no good copy of $name" >&2; exit 1
  fi
done < "$manifest"
[ "$(sha256sum < "$out" | cut -d' ' -f1)" = "$whole" ]
mv "$out" /app/dataset.tar.xz
chmod 0644 /app/dataset.tar.xz
mv "$report" /app/transfer-report.txt
chmod 0644 /app/transfer-report.txt
tar -xJf /app/dataset.tar.xz -C /app
