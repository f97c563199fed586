#!/usr/bin/env bash
set -euo pipefail
cat > /app/permaudit <<'SCRIPT'
#!/usr/bin/env bash
export LC_ALL=C
if [ $# -ne 1 ]; then echo "usage: permaudit ROOT" >&2; exit 2; fi
root=$1
if [ ! -d "$root" ]; then
  echo "permaudit: not a directory: $root" >&2; exit 2
fi
known_users=$(getent passwd | cut -d: -f3 | tr '\n' ' ')
known_groups=$(getent group | cut -d: -f3 | tr '\n' ' ')
report=$(
  find "$root/" \( -type f -o -type d \) -printf '%y\t%m\t%U\t%G\t%P\n' \
  | awk -F '\t' -v users="$known_users" -v groups="$known_groups" '
    BEGIN {
      n = split(users, u, " "); for (i = 1; i <= n; i++) U[u[i]] = 1
      n = split(groups, g, " "); for (i = 1; i <= n; i++) G[g[i]] = 1
    }
    function bit(m, b) { return int(m / b) % 2 }
    {
      path = $5; for (i = 6; i <= NF; i++) path = path "\t" $i
      if (path == "") path = "."
      mode = 0; s = $2
      for (i = 1; i <= length(s); i++) mode = mode * 8 + substr(s, i, 1)
      m = sprintf("%04o", mode)
      if (bit(mode, 2) && !($1 == "d" && bit(mode, 512))) print path "\t1\tworld-writable " m " " path
      if ($1 == "f" && bit(mode, 2048)) print path "\t2\tsetuid " m " " path
      if ($1 == "f" && bit(mode, 1024)) print path "\t3\tsetgid " m " " path
      if (!($3 in U)) print path "\t4\tno-owner " m " " path
      if (!($4 in G)) print path "\t5\tno-group " m " " path
    }' \
  | sort -t $'\t' -k1,1 -k2,2n | cut -f3-
)
if [ -z "$report" ]; then exit 0; fi
printf '%s\n' "$report"
exit 1
SCRIPT
chmod +x /app/permaudit
/app/permaudit /srv/legacy > /app/legacy-audit.txt || true
