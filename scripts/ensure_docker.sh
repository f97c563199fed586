#!/usr/bin/env bash
# Make a Docker engine answer on this machine, idempotently.
#
# 1. If `docker info` works, there is nothing to do.
# 2. Else, when root on Debian: install docker.io (and debootstrap, used by
#    ensure_base_image.sh), start dockerd in the background, wait until it answers.
# 3. Else: print exactly what to install, exit 1.
set -euo pipefail

log() { printf '[ensure_docker] %s\n' "$*" >&2; }

if docker info >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ]; then
  cat >&2 <<'TXT'
[ensure_docker] No Docker engine answers `docker info`, and this script can only install
one when run as root on Debian. Install and start one yourself, then re-run:
  * Debian/Ubuntu:  sudo apt-get install docker.io debootstrap && sudo systemctl start docker
  * other systems:  https://docs.docker.com/engine/install/
Make sure your user can reach the engine (`docker info` must succeed).
TXT
  exit 1
fi

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! pgrep -x dockerd >/dev/null 2>&1; then
  log "starting dockerd in the background (log: /var/log/termgrade-dockerd.log)"
  # --ip-forward/iptables stay off: task containers run with no network at all.
  nohup setsid dockerd --iptables=false --ip-forward=false \
    >/var/log/termgrade-dockerd.log 2>&1 </dev/null &
fi

for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    log "engine is up: $(docker info --format '{{.ServerVersion}} / {{.Driver}}')"
    exit 0
  fi
  sleep 0.5
done
log "dockerd did not answer within 60 s; see /var/log/termgrade-dockerd.log:"
tail -n 20 /var/log/termgrade-dockerd.log >&2 || true
exit 1
