#!/usr/bin/env bash
set -euo pipefail
cat > /app/tidy-names <<'SCRIPT'
#!/usr/bin/env bash
export LC_ALL=C
usage() { echo "usage: tidy-names [-n] DIR" >&2; exit 2; }
dry=0
while getopts ":n" opt; do
  case $opt in
    n) dry=1 ;;
    *) echo "tidy-names: unknown option: -$OPTARG" >&2; usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
dir=$1
if [ ! -d "$dir" ]; then
  echo "tidy-names: not a directory: $dir" >&2
  exit 2
fi

clean_name() {
  local name=$1 stem ext=""
  local base=${name%.*}
  if [[ $name == *.* && -n $base && ${name: -1} != "." ]]; then
    stem=$base
    ext=${name##*.}
  else
    stem=$name
  fi
  stem=$(printf '%s' "$stem" | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9._-]+/_/g; s/^_+//; s/_+$//')
  [ -n "$stem" ] || stem=unnamed
  ext=$(printf '%s' "$ext" | tr 'A-Z' 'a-z' | tr -cd 'a-z0-9')
  if [ -n "$ext" ]; then printf '%s.%s' "$stem" "$ext"; else printf '%s' "$stem"; fi
}

declare -A taken=()
mapfile -d '' names < <(find "$dir" -mindepth 1 -maxdepth 1 -printf '%f\0' | sort -z)
for n in "${names[@]}"; do taken[$n]=1; done
status=0
for old in "${names[@]}"; do
  [[ $old == .* ]] && continue
  path=$dir/$old
  [ -f "$path" ] && [ ! -L "$path" ] || continue
  new=$(clean_name "$old")
  [ "$new" = "$old" ] && continue
  if [ -n "${taken[$new]:-}" ]; then
    printf 'skip: %s -> %s (exists)\n' "$old" "$new" >&2
    status=1
    continue
  fi
  if [ "$dry" -eq 0 ]; then
    mv -n -- "$path" "$dir/$new"
  fi
  unset 'taken[$old]'
  taken[$new]=1
  printf '%s -> %s\n' "$old" "$new"
done
exit "$status"
SCRIPT
chmod +x /app/tidy-names
/app/tidy-names /app/inbox || true
