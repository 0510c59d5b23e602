#!/usr/bin/env bash
# The one command that sets up and passes every test (README):
#   bash tests/run.sh
# Installs what is missing (Debian), builds twice (normal with -Werror, and
# ASan+UBSan), and runs every suite (unit, fuzz corpus replay, end-to-end
# against the real binary and a real redis-server) on both builds.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh --test

jobs=$(nproc 2>/dev/null || echo 2)
status=0
total_ok=0
total_fail=0

run_suite() {
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" --werror "$@"
	fi
	ninja -C "$dir"
	local rc=0
	meson test -C "$dir" --print-errorlogs --num-processes "$jobs" || rc=$?
	local log="$dir/meson-logs/testlog.json"
	if [ -f "$log" ]; then
		local ok fail
		ok=$(grep -c '"result": "OK"' "$log" || true)
		fail=$(grep -vc '"result": "OK"' "$log" || true)
		total_ok=$((total_ok + ok))
		total_fail=$((total_fail + fail))
	fi
	[ "$rc" -eq 0 ] || status=1
}

run_suite build
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false

echo
echo "$total_ok passed, $total_fail failed"
exit $status
