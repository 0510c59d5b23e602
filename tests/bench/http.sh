#!/usr/bin/env bash
# HTTP server benchmark of pixrelay (docs/performance.md, "HTTP server"):
#
#   bash tests/bench/http.sh [seconds]      # seconds per phase, default 10
#
# Starts its own redis-server (temporary directory, unix socket) and
# `pixrelay serve --dispatch 0`, creates a sandbox key, and measures with wrk
# on 127.0.0.1, one phase after the other:
#   healthz        GET /healthz, keep-alive (no Redis: the HTTP server alone)
#   me             GET /v1/me with a Bearer key, keep-alive (one key lookup in
#                  Redis per request)
#   healthz-close  GET /healthz with "Connection: close" (a new connection per
#                  request: accept, parse, answer, close)
# and prints requests/s, latency percentiles, non-2xx answers, socket errors
# and pixrelay's CPU (100 % = one core). It is a measurement, not a pass/fail
# test: it exits 0 however slow pixrelay is, 1 when something could not be set
# up or run.
#
# Environment: BENCH_CONNECTIONS (64), BENCH_THREADS (wrk threads, 2),
# BENCH_LOG_LEVEL (pixrelay's log-level, default warn: no line per request;
# `info` writes one line per request to stderr), BENCH_SERVE_ARGS (more flags),
# PIXRELAY_BIN (use this binary instead of building build/pixrelay),
# BENCH_KEEP=1 (keep the temporary directory).
set -euo pipefail

SECS=${1:-10}
if ! [[ $SECS =~ ^[0-9]+$ ]] || ((SECS < 1 || SECS > 120)); then
	echo "usage: bash tests/bench/http.sh [seconds per phase, 1..120; default 10]" >&2
	exit 1
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CONNS=${BENCH_CONNECTIONS:-64}
THREADS=${BENCH_THREADS:-2}
LOG_LEVEL=${BENCH_LOG_LEVEL:-warn}

log() { printf '[bench-http %s] %s\n' "$(date +%T)" "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
bash "$ROOT/deploy/install-deps.sh" || die "cannot install pixrelay's dependencies"
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v redis-cli >/dev/null || missing+=(redis-tools)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
		die "cannot install ${missing[*]}"
fi

if [ -n "${PIXRELAY_BIN:-}" ]; then
	BIN=$PIXRELAY_BIN
else
	cd "$ROOT"
	if [ -f build/build.ninja ]; then
		ninja -C build pixrelay >&2 || die "build failed (PIXRELAY_BIN=<binary> skips the build)"
	else
		{ meson setup build && ninja -C build pixrelay; } >&2 || die "build failed"
	fi
	BIN=$ROOT/build/pixrelay
fi
[ -x "$BIN" ] || die "no pixrelay binary at $BIN"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pixrelay-bench-http.XXXXXX")
PIX_PID="" REDIS_PID=""

stop_pid() { # stop_pid PID SECONDS: TERM, wait, then KILL
	local pid=$1 t=$2 i
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < t * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	stop_pid "$PIX_PID" 10
	stop_pid "$REDIS_PID" 10
	if [ "${BENCH_KEEP:-0}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SOCK=$WORK/redis/redis.sock
mkdir -p "$WORK/redis"
cat >"$WORK/redis/redis.conf" <<EOF
port 0
unixsocket $SOCK
unixsocketperm 700
dir $WORK/redis
save ""
logfile $WORK/redis/redis.log
EOF
redis-server "$WORK/redis/redis.conf" >/dev/null 2>&1 &
REDIS_PID=$!
for _ in $(seq 100); do
	[ "$(redis-cli -s "$SOCK" PING 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
[ "$(redis-cli -s "$SOCK" PING 2>/dev/null)" = PONG ] || die "redis-server did not start"

R=(--redis "unix://$SOCK")
"$BIN" "${R[@]}" init >"$WORK/init.out" 2>&1 || die "pixrelay init failed: $(cat "$WORK/init.out")"
KEY=$("$BIN" "${R[@]}" keys create --env sandbox --description bench --json |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])') || die "cannot create a key"

# a free port (pixrelay's "listening on" line is not written at log-level warn)
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# shellcheck disable=SC2086
"$BIN" serve --listen "127.0.0.1:$PORT" "${R[@]}" --data-dir "$WORK/data" --dispatch 0 \
	--log-level "$LOG_LEVEL" --max-connections 4096 ${BENCH_SERVE_ARGS:-} \
	>"$WORK/pixrelay.out" 2>"$WORK/pixrelay.log" &
PIX_PID=$!
URL="http://127.0.0.1:$PORT"
for _ in $(seq 100); do
	curl -fs "$URL/readyz" >/dev/null && break
	kill -0 "$PIX_PID" 2>/dev/null || break
	sleep 0.1
done
curl -fs "$URL/readyz" >/dev/null || die "pixrelay did not start: $(tail -n 20 "$WORK/pixrelay.log")"
curl -fs -H "Authorization: Bearer $KEY" "$URL/v1/me" >/dev/null || die "GET /v1/me with the key failed"

CLK_TCK=$(getconf CLK_TCK)
proc_cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# phase NAME PATH [wrk args...]: prints one result line
phase() {
	local name=$1 path=$2
	shift 2
	local c0 c1 t0 t1
	c0=$(proc_cpu "$PIX_PID")
	t0=$(date +%s%N)
	wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --latency "$@" "$URL$path" >"$WORK/wrk-$name.txt" 2>&1 ||
		die "wrk failed: $(cat "$WORK/wrk-$name.txt")"
	t1=$(date +%s%N)
	c1=$(proc_cpu "$PIX_PID")
	python3 - "$WORK/wrk-$name.txt" "$name" "$c0" "$c1" "$t0" "$t1" "$CLK_TCK" <<'EOF'
import re, sys
path, name, c0, c1, t0, t1, hz = sys.argv[1:]
t = open(path).read()
def g(p, d="0"):
    m = re.search(p, t)
    return m.group(1) if m else d
rps = float(g(r"Requests/sec:\s+([\d.]+)"))
non2xx = g(r"Non-2xx or 3xx responses: (\d+)")
errs = g(r"Socket errors: (.*)", "none")
lat = {p: g(r"\s%s%%\s+([\d.]+\w+)" % p, "?") for p in ("50", "90", "99")}
cpu = (int(c1) - int(c0)) / int(hz) / ((int(t1) - int(t0)) / 1e9) * 100
print("%-14s %10.0f req/s   p50 %-8s p90 %-8s p99 %-8s non-2xx %-4s pixrelay CPU %3.0f %%   socket errors: %s"
      % (name, rps, lat["50"], lat["90"], lat["99"], non2xx, cpu, errs))
EOF
}

log "pixrelay $("$BIN" --version 2>/dev/null | head -n1 || true) on port $PORT; wrk -t$THREADS -c$CONNS, ${SECS} s per phase; log-level $LOG_LEVEL"
log "machine: $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1); load average $(cut -d' ' -f1-3 /proc/loadavg)"
phase healthz /healthz
phase me /v1/me -H "Authorization: Bearer $KEY"
phase healthz-close /healthz -H "Connection: close"
