#!/usr/bin/env bash
# Produce the Debian OS image that base_image/Dockerfile starts FROM, idempotently.
#
# Usage: bootstrap_os.sh [TAG]   (default: termgrade/debian:bookworm)
# Tries `docker pull debian:bookworm-slim` first; where no registry is reachable, it
# bootstraps a minimal Debian with debootstrap and `docker import`s it. Needs root for
# debootstrap.
set -euo pipefail
tag=${1:-termgrade/debian:bookworm}
suite=${TERMGRADE_DEBIAN_SUITE:-bookworm}
mirror=${TERMGRADE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
log() { printf '[bootstrap_os] %s\n' "$*" >&2; }

if docker image inspect "$tag" >/dev/null 2>&1; then
  exit 0
fi
if timeout 60 docker pull -q "debian:${suite}-slim" >/dev/null 2>&1; then
  docker tag "debian:${suite}-slim" "$tag"
  log "tagged debian:${suite}-slim as $tag"
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  log "no registry answered and debootstrap is missing: apt-get install debootstrap (as root), then re-run"
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  log "no registry answered; debootstrap needs root: re-run this script with sudo"
  exit 1
fi
root=$(mktemp -d /tmp/termgrade-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
log "debootstrap --variant=minbase $suite from $mirror (a few minutes)"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >/tmp/termgrade-debootstrap.log 2>&1 || {
  log "debootstrap failed; last lines of /tmp/termgrade-debootstrap.log:"; tail -n 20 /tmp/termgrade-debootstrap.log >&2; exit 1; }
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
log "imported $tag"
