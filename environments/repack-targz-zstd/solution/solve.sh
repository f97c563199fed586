#!/usr/bin/env bash
set -euo pipefail
export LC_ALL=C
out=/app/repacked
mkdir -p "$out"
: > "$out/FAILED.tmp"
cd /app/archives
for f in *.tar.gz *.tgz; do
  [ -f "$f" ] || continue
  case $f in *.tar.gz) base=${f%.tar.gz} ;; *) base=${f%.tgz} ;; esac
  if gzip -t -- "$f" 2>/dev/null && tar -tzf "$f" >/dev/null 2>&1; then
    gzip -dc -- "$f" | zstd -q -19 -c > "$out/$base.tar.zst.tmp"
    mv -- "$out/$base.tar.zst.tmp" "$out/$base.tar.zst"
  else
    printf '%s\n' "$f" >> "$out/FAILED.tmp"
  fi
done
sort "$out/FAILED.tmp" > "$out/FAILED" && rm "$out/FAILED.tmp"
cd "$out"
sha256sum -- *.tar.zst > SHA256SUMS
sha256sum -c --quiet SHA256SUMS
