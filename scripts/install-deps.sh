#!/bin/sh
# Install the Debian packages kitsune needs; does nothing when all are present.
# `install-deps.sh test` adds what only the tests need: python3-torch (Debian's PyTorch, for the
# exporter's tests, tests/export/run-export.sh).
set -eu
PKGS="build-essential pkg-config libglpk-dev libcjson-dev check gnuplot-nox"
[ "${1:-}" = test ] && PKGS="$PKGS python3-torch"
missing=""
for p in $PKGS; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "install-deps: need root (or sudo) to install:$missing" >&2; exit 1
    fi
fi
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
