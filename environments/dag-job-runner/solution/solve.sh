#!/usr/bin/env bash
set -euo pipefail
cat > /app/runjobs <<'SCRIPT'
#!/usr/bin/env bash
# runjobs: run a job file with dependencies, N at a time.
usage() { echo "usage: runjobs [-j N] [-t SECONDS] [-l LOGDIR] JOBFILE" >&2; exit 2; }
die() { echo "runjobs: $*" >&2; exit 2; }
is_pos() { [[ $1 =~ ^[0-9]+$ ]] && (( 10#$1 > 0 )); }

slots=1 limit="" logdir=""
while getopts ":j:t:l:" opt; do
  case $opt in
    j) is_pos "$OPTARG" || die "-j needs a positive integer"; slots=$((10#$OPTARG)) ;;
    t) is_pos "$OPTARG" || die "-t needs a positive integer"; limit=$((10#$OPTARG)) ;;
    l) logdir=$OPTARG ;;
    :) die "option -$OPTARG needs a value" ;;
    *) die "unknown option -$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
jobfile=$1
[ -f "$jobfile" ] || die "no such job file: $jobfile"
jobdir=$(cd "$(dirname -- "$jobfile")" && pwd)
if [ -z "$logdir" ]; then logdir=$jobdir/logs; fi
case $logdir in /*) ;; *) logdir=$PWD/$logdir ;; esac

names=()
declare -A cmd=() deps=() lineof=() state=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  [[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
  [[ $line == *:* ]] || die "line $lineno: missing ':'"
  head=${line%%:*}
  command=${line#*:}
  command=${command#"${command%%[![:space:]]*}"}
  [[ -n ${command//[[:space:]]/} ]] || die "line $lineno: empty command"
  read -r -a words <<<"$head"
  [ ${#words[@]} -ge 1 ] || die "line $lineno: missing job name"
  for w in "${words[@]}"; do
    [[ $w =~ ^[A-Za-z0-9_.-]+$ ]] || die "line $lineno: invalid name '$w'"
  done
  name=${words[0]}
  [ -z "${cmd[$name]+x}" ] || die "line $lineno: duplicate job '$name' (first on line ${lineof[$name]})"
  names+=("$name")
  cmd[$name]=$command
  deps[$name]="${words[*]:1}"
  lineof[$name]=$lineno
done < "$jobfile"

for name in "${names[@]}"; do
  for d in ${deps[$name]}; do
    [ -n "${cmd[$d]+x}" ] || die "line ${lineof[$name]}: job '$name' depends on unknown job '$d'"
  done
done

# Cycle check (Kahn): repeatedly remove jobs whose dependencies are all removed.
declare -A done_=()
removed=0 progress=1
while [ "$progress" -eq 1 ]; do
  progress=0
  for name in "${names[@]}"; do
    [ -n "${done_[$name]+x}" ] && continue
    ok=1
    for d in ${deps[$name]}; do [ -n "${done_[$d]+x}" ] || { ok=0; break; }; done
    if [ "$ok" -eq 1 ]; then done_[$name]=1; removed=$((removed + 1)); progress=1; fi
  done
done
if [ "$removed" -ne "${#names[@]}" ]; then
  left=()
  for name in "${names[@]}"; do [ -n "${done_[$name]+x}" ] || left+=("$name"); done
  die "dependency cycle among: ${left[*]}"
fi

mkdir -p -- "$logdir" || die "cannot create log directory $logdir"
for name in "${names[@]}"; do state[$name]=pending; done
declare -A result=()
running=0
fifo_dir=$(mktemp -d)
trap 'rm -rf -- "$fifo_dir"' EXIT
mkfifo "$fifo_dir/done"
exec 3<>"$fifo_dir/done"

start_job() {
  local name=$1
  state[$name]=running
  running=$((running + 1))
  (
    cd "$jobdir" || { echo "$name 127" >&3; exit; }
    export JOB_NAME=$name
    if [ -n "$limit" ]; then
      timeout -k 2 "$limit" bash -c "${cmd[$name]}" </dev/null >"$logdir/$name.log" 2>&1 3>&-
    else
      bash -c "${cmd[$name]}" </dev/null >"$logdir/$name.log" 2>&1 3>&-
    fi
    echo "$name $?" >&3
  ) &
}

while :; do
  changed=1
  while [ "$changed" -eq 1 ]; do
    changed=0
    for name in "${names[@]}"; do
      [ "${state[$name]}" = pending ] || continue
      for d in ${deps[$name]}; do
        case ${state[$d]} in failed|timeout|skipped)
          state[$name]=skipped; changed=1; break ;;
        esac
      done
    done
  done
  for name in "${names[@]}"; do
    [ "$running" -lt "$slots" ] || break
    [ "${state[$name]}" = pending ] || continue
    ready=1
    for d in ${deps[$name]}; do [ "${state[$d]}" = ok ] || { ready=0; break; }; done
    [ "$ready" -eq 1 ] && start_job "$name"
  done
  [ "$running" -gt 0 ] || break
  read -r name rc <&3
  running=$((running - 1))
  if [ "$rc" -eq 0 ]; then
    state[$name]=ok
  elif [ -n "$limit" ] && { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; }; then
    state[$name]=timeout
  else
    state[$name]=failed; result[$name]=$rc
  fi
done
wait

status=0
for name in "${names[@]}"; do
  case ${state[$name]} in
    ok) echo "$name ok" ;;
    failed) echo "$name failed (exit ${result[$name]})"; status=1 ;;
    *) echo "$name ${state[$name]}"; status=1 ;;
  esac
done
exit "$status"
SCRIPT
chmod +x /app/runjobs
