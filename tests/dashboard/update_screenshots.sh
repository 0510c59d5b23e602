#!/usr/bin/env bash
# Remake docs/screenshots/*.png (shown in docs/dashboard.md) with the browser
# test: the same pages, data and steps as the 'dashboard' test suite.
#   bash tests/dashboard/update_screenshots.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ninja -C "$build" pixrelay
PIXRELAY_BIN="$PWD/$build/pixrelay" PIXRELAY_SCREENSHOTS="$PWD/docs/screenshots" \
	python3 tests/dashboard/test_dashboard.py
ls -l docs/screenshots
