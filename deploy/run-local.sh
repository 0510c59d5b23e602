#!/usr/bin/env bash
# The one command that sets up and runs pixrelay on a laptop (README):
#   bash deploy/run-local.sh
# Installs what is missing (Debian), builds, and serves
# http://127.0.0.1:8080/v1 with an embedded Redis in ~/.local/share/pixrelay.
# On the first start it prints a sandbox API key. Extra arguments go to
# `pixrelay serve` (see `build/pixrelay serve --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
[ -f build/build.ninja ] || meson setup build
ninja -C build pixrelay
exec ./build/pixrelay serve "$@"
