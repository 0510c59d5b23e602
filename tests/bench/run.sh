#!/usr/bin/env bash
# Throughput benchmark of pixrelay against the raw Redis of the same run
# (docs/performance.md):
#
#   bash tests/bench/run.sh [seconds]      # seconds per load phase, default 10
#
# Installs what is missing (Debian), builds pixrelay (optimised, without
# sanitizers: build-bench/) and the postback sink, then runs
# tests/bench/bench.py, which prints the figures. Not a pass/fail test: exit
# 0 however slow, 1 when something could not be run, 3 when an acknowledged
# event was lost or delivered with another body.
#
# Environment: BENCH_CONNECTIONS (64), BENCH_THREADS (wrk threads, 2),
# BENCH_PROCESSES ("1,2": the configurations measured), BENCH_INFLIGHT
# (10000; 0 skips the memory phase), BENCH_STREAM=1 (a live event stream,
# GET /v1/events/stream, open during ingest), BENCH_KEEP=1 (keep the work directory
# and its logs), PIXRELAY_BIN (use this binary instead of building),
# BENCH_PEER=0 (skip the BullMQ relay's phases; they need node and npm, and
# `npm ci` installs the lock file of tests/bench/bullmq/ into build-bench/bullmq
# once), BENCH_LATENCY_SECS (seconds per offered load of the latency phase;
# half a phase), BENCH_NEXT=0 (skip the ceilings of a stream per shard, Redis
# alone: about 10 s per configuration), BENCH_ROUNDS (3: alternating rounds
# of raw RPUSH, pixrelay and BullMQ ingest, half a phase each; 0 skips them).
set -euo pipefail

SECS=${1:-10}
if ! [[ $SECS =~ ^[0-9]+$ ]] || ((SECS < 2 || SECS > 120)); then
	echo "usage: bash tests/bench/run.sh [seconds per phase, 2..120; default 10]" >&2
	exit 1
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
bash "$ROOT/deploy/install-deps.sh"
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v redis-benchmark >/dev/null || missing+=(redis-tools)
command -v ss >/dev/null || missing+=(iproute2)
if [ "${BENCH_PEER:-1}" != 0 ]; then
	command -v node >/dev/null || missing+=(nodejs)
	command -v npm >/dev/null || missing+=(npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cd "$ROOT"
if [ -n "${PIXRELAY_BIN:-}" ]; then
	BIN=$PIXRELAY_BIN
else
	[ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >&2
	ninja -C build-bench pixrelay >&2
	BIN=$ROOT/build-bench/pixrelay
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pixrelay-bench.XXXXXX")
trap '[ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $WORK" >&2 || rm -rf "$WORK"' EXIT
read -r -a LIBEVENT <<<"$(pkg-config --cflags --libs libevent)"
cc -O2 -o "$WORK/sink" tests/bench/sink.c "${LIBEVENT[@]}"
read -r -a CURL <<<"$(pkg-config --cflags --libs libcurl)"
cc -O2 -o "$WORK/rawpost" tests/bench/rawpost.c "${LIBEVENT[@]}" "${CURL[@]}"
cc -O2 -o "$WORK/latgen" tests/bench/latgen.c "${LIBEVENT[@]}"
export BENCH_NODE_DIR=${BENCH_NODE_DIR:-$ROOT/build-bench/bullmq}
python3 tests/bench/bench.py "$BIN" "$WORK/sink" "$WORK" "$SECS"
