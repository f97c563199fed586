#!/usr/bin/env bash
set -euo pipefail
cat > /app/prune-backups <<'SCRIPT'
#!/usr/bin/env bash
export LC_ALL=C
usage() { echo "usage: prune-backups [-n] [-d DAYS] [-w WEEKS] [-m MONTHS] DIR" >&2; exit 2; }
is_count() { [[ $1 =~ ^[0-9]+$ ]]; }
days=7 weeks=4 months=6 dry=0
while getopts ":nd:w:m:" opt; do
  case $opt in
    n) dry=1 ;;
    d) days=$OPTARG ;;
    w) weeks=$OPTARG ;;
    m) months=$OPTARG ;;
    :) echo "prune-backups: option -$OPTARG needs a value" >&2; usage ;;
    *) echo "prune-backups: unknown option -$OPTARG" >&2; usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
dir=$1
for v in "$days" "$weeks" "$months"; do
  is_count "$v" || { echo "prune-backups: not a non-negative integer: $v" >&2; exit 2; }
done
days=$((10#$days)) weeks=$((10#$weeks)) months=$((10#$months))
if [ "$days" -eq 0 ] && [ "$weeks" -eq 0 ] && [ "$months" -eq 0 ]; then
  echo "prune-backups: refusing a policy that keeps nothing" >&2
  exit 2
fi
[ -d "$dir" ] || { echo "prune-backups: not a directory: $dir" >&2; exit 2; }

re='^([A-Za-z0-9._-]+)-([0-9]{8})-([0-9]{2})([0-9]{2})([0-9]{2})\.tar\.gz$'
plan=$(
  find "$dir" -mindepth 1 -maxdepth 1 -type f -printf '%f\n' | while IFS= read -r f; do
    [[ $f =~ $re ]] || continue
    series=${BASH_REMATCH[1]} d=${BASH_REMATCH[2]}
    hh=${BASH_REMATCH[3]} mi=${BASH_REMATCH[4]} ss=${BASH_REMATCH[5]}
    ((10#$hh < 24 && 10#$mi < 60 && 10#$ss < 60)) || continue
    info=$(date -u -d "${d:0:4}-${d:4:2}-${d:6:2}" '+%Y%m%d %G-%V %Y-%m' 2>/dev/null) || continue
    read -r day week month <<<"$info"
    [ "$day" = "$d" ] || continue
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$series" "$d$hh$mi$ss" "$day" "$week" "$month" "$f"
  done | sort -t $'\t' -k1,1 -k2,2r | awk -F '\t' -v D="$days" -v W="$weeks" -v M="$months" '
    function flush(   i) { for (i = n; i >= 1; i--) print out[i]; n = 0 }
    $1 != cur { flush(); cur = $1; split("", sd); split("", sw); split("", sm); nd = nw = nm = 0 }
    {
      r = ""
      if (!($3 in sd)) { sd[$3] = 1; if (nd++ < D) r = r ",daily" }
      if (!($4 in sw)) { sw[$4] = 1; if (nw++ < W) r = r ",weekly" }
      if (!($5 in sm)) { sm[$5] = 1; if (nm++ < M) r = r ",monthly" }
      out[++n] = (r == "") ? "delete " $6 : "keep " $6 " (" substr(r, 2) ")"
    }
    END { flush() }'
)
[ -z "$plan" ] && exit 0
printf '%s\n' "$plan"
if [ "$dry" -eq 0 ]; then
  while IFS= read -r line; do
    case $line in delete\ *) rm -f -- "$dir/${line#delete }" ;; esac
  done <<<"$plan"
fi
exit 0
SCRIPT
chmod +x /app/prune-backups
/app/prune-backups /app/backups > /dev/null
