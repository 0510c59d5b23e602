#!/usr/bin/env bash
# Throughput benchmark of pixrelay (docs/performance.md):
#
#   bash tests/bench/run.sh [seconds]      # seconds per load phase, default 20
#
# Builds pixrelay, starts its own redis-server (temporary directory, unix
# socket, appendonly yes + appendfsync always, as the e2e tests do), starts
# `pixrelay serve --dispatch 1` against it and a local postback sink, and
# measures, all on 127.0.0.1:
#   (c) a raw Redis baseline under the same AOF setting (redis-benchmark);
#   (a) ingest: acknowledged events/s and latency at a fixed concurrency
#       (wrk), then checks that every acknowledged event is in Redis;
#   (b) end to end: N events ingested and delivered to the sink, from the
#       first ingest to the last delivery.
# Prints a table at the end. It is not a pass/fail test: it exits 0 however
# slow pixrelay is; 1 when something could not be set up or run, 3 when an
# acknowledged event is missing from Redis.
#
# Environment: BENCH_CONNECTIONS (32), BENCH_THREADS (wrk threads, 2),
# BENCH_E2E_EVENTS (N of phase b; default: a quarter of what phase a ingested
# in `seconds`), BENCH_KICK=1 (phase b: also POST one duplicate notification
# every 50 ms, whose answer kicks the dispatcher, to see the delivery rate
# when its periodic tick is not stalled; see docs/performance.md),
# BENCH_SERVE_ARGS (more flags for `pixrelay serve`, e.g. "--delivery-per-host 64"),
# BENCH_KEEP=1 (keep the temporary directory and its logs),
# PIXRELAY_BIN (use this binary instead of building build/pixrelay).
set -euo pipefail

SECS=${1:-20}
if ! [[ $SECS =~ ^[0-9]+$ ]] || ((SECS < 2 || SECS > 120)); then
	echo "usage: bash tests/bench/run.sh [seconds per phase, 2..120; default 20]" >&2
	exit 1
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/bench
CONNS=${BENCH_CONNECTIONS:-32}
THREADS=${BENCH_THREADS:-2}
PREFIX="pixrelay:"
STALL_S=10                                 # phase b: no delivery for this long = stalled
DRAIN_MAX_S=$((SECS * 2 > 20 ? SECS * 2 : 20)) # phase b: longest wait after the ingest
BASE_SECS=$((SECS / 4 > 2 ? SECS / 4 : 2)) # length of each redis-benchmark test

log() { printf '[bench %s] %s\n' "$(date +%T)" "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}
now_ms() { date +%s%3N; }
kv() { sed -n "s/^$2=//p" "$1" | head -n1; } # kv FILE KEY: value of KEY=value
fdiv() { awk -v a="$1" -v b="$2" -v f="${3:-%.1f}" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf f "\n", a / b }'; }

# ---- tools -----------------------------------------------------------------

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
# pixrelay's build and run dependencies (meson, gcc, libevent-dev, redis-server, python3, ...)
bash "$ROOT/deploy/install-deps.sh" || die "cannot install pixrelay's dependencies"
missing=()
command -v wrk >/dev/null || missing+=(wrk)
{ command -v redis-benchmark && command -v redis-cli; } >/dev/null || missing+=(redis-tools)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
		die "cannot install ${missing[*]}"
fi
for t in wrk redis-server redis-cli redis-benchmark curl python3 cc pkg-config; do
	command -v "$t" >/dev/null || die "$t is missing"
done

# ---- build -----------------------------------------------------------------

if [ -n "${PIXRELAY_BIN:-}" ]; then
	BIN=$PIXRELAY_BIN
else
	cd "$ROOT"
	if [ -f build/build.ninja ]; then
		ninja -C build pixrelay >&2 || die "build failed (PIXRELAY_BIN=<binary> skips the build)"
	else
		{ meson setup build && ninja -C build pixrelay; } >&2 || die "build failed (PIXRELAY_BIN=<binary> skips the build)"
	fi
	BIN=$ROOT/build/pixrelay
fi
[ -x "$BIN" ] || die "no pixrelay binary at $BIN"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pixrelay-bench.XXXXXX")
read -r -a LIBEVENT <<<"$(pkg-config --cflags --libs libevent)"
cc -O2 -o "$WORK/sink" "$HERE/sink.c" "${LIBEVENT[@]}" || die "cannot build the sink"

# ---- processes and cleanup -------------------------------------------------

PIX_PID="" SINK_PID="" REDIS_PID="" WRK_PID="" KICK_PID=""

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
	stop_pid "$KICK_PID" 2
	stop_pid "$WRK_PID" 2
	stop_pid "$PIX_PID" 10
	stop_pid "$SINK_PID" 5
	stop_pid "$REDIS_PID" 10
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		log "kept $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

CLK_TCK=$(getconf CLK_TCK)
proc_cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; } # ticks used by PID
machine_cpu() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t, $5 + $6 }' /proc/stat; }
cpu_mark() { # cpu_mark NAME: remember CPU counters
	eval "${1}_pix=$(proc_cpu "$PIX_PID") ${1}_redis=$(proc_cpu "$REDIS_PID") ${1}_ms=$(now_ms)"
	read -r t i < <(machine_cpu)
	eval "${1}_tot=$t ${1}_idle=$i"
}
cpu_report() { # cpu_report FROM TO: "pixrelay% redis% machine%" (100% = one core; machine of all cores)
	local a=$1 b=$2 dt
	dt=$(($(eval echo "\$${b}_ms") - $(eval echo "\$${a}_ms")))
	awk -v p0="$(eval echo "\$${a}_pix")" -v p1="$(eval echo "\$${b}_pix")" \
		-v r0="$(eval echo "\$${a}_redis")" -v r1="$(eval echo "\$${b}_redis")" \
		-v t0="$(eval echo "\$${a}_tot")" -v t1="$(eval echo "\$${b}_tot")" \
		-v i0="$(eval echo "\$${a}_idle")" -v i1="$(eval echo "\$${b}_idle")" \
		-v hz="$CLK_TCK" -v dt="$dt" 'BEGIN {
			s = dt / 1000.0
			printf "%.0f %.0f %.0f\n", (p1 - p0) / hz / s * 100, (r1 - r0) / hz / s * 100,
				(t1 - t0) ? (1 - (i1 - i0) / (t1 - t0)) * 100 : 0 }'
}

# ---- redis -----------------------------------------------------------------

SOCK=$WORK/redis/redis.sock
mkdir -p "$WORK/redis"
cat >"$WORK/redis/redis.conf" <<EOF
port 0
bind 127.0.0.1
unixsocket $SOCK
unixsocketperm 700
dir $WORK/redis
appendonly yes
appendfsync always
save ""
logfile $WORK/redis/redis.log
EOF
redis-server "$WORK/redis/redis.conf" >/dev/null 2>&1 &
REDIS_PID=$!
for _ in $(seq 100); do
	[ "$(redis-cli -s "$SOCK" PING 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
[ "$(redis-cli -s "$SOCK" PING 2>/dev/null)" = PONG ] || die "redis-server did not start (see $WORK/redis/redis.log)"
rcli() { redis-cli -s "$SOCK" "$@"; }
REDIS_VERSION=$(rcli INFO server | sed -n 's/^redis_version:\([^\r]*\).*/\1/p')

# ---- machine -----------------------------------------------------------------

NPROC=$(nproc)
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
FS=$(df -PT "$WORK" | awk 'NR == 2 { print $2 }')
FSYNC=$(cd "$WORK" && python3 - <<'EOF'
import os, time
fd = os.open("fsync.probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
ts = []
for i in range(300):
    os.write(fd, b"x" * 512)
    t = time.perf_counter()
    os.fdatasync(fd)
    ts.append(time.perf_counter() - t)
os.close(fd)
os.unlink("fsync.probe")
ts.sort()
print("%.3f %.3f" % (ts[len(ts) // 2] * 1e3, ts[int(len(ts) * 0.99)] * 1e3))
EOF
)
read -r FSYNC_P50 FSYNC_P99 <<<"$FSYNC"
LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
log "machine: $NPROC x $CPU_MODEL; $FS; fdatasync of a 512-byte append: p50 $FSYNC_P50 ms, p99 $FSYNC_P99 ms; load average $LOADAVG"

# ---- (c) raw Redis baseline ------------------------------------------------

# prints the rps of redis-benchmark's last CSV line
rb() {
	redis-benchmark -s "$SOCK" -c "$CONNS" -P 1 --csv "$@" 2>/dev/null |
		python3 -c 'import csv, sys; rows = list(csv.reader(sys.stdin)); print(rows[-1][1] if len(rows) > 1 else 0)'
}
# what ingest_relay.lua does, minus its JSON encoding: two HGETs, an LPUSH of
# a ~500-byte entry and a SET with a TTL, on a fresh upstream id each time
RELAY_LIKE="local s = redis.call('HGET', KEYS[1], ARGV[1]) if s then return {'duplicate', s} end
local u = redis.call('HGET', KEYS[3], 'postback_url') or ''
redis.call('LPUSH', KEYS[2], ARGV[3] .. u)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return {'ok', ARGV[2]}"
PAYLOAD=$(head -c 500 /dev/zero | tr '\0' 'x')
log "(c) Redis baseline: redis-benchmark -c $CONNS -P 1, about ${BASE_SECS}s per test"
cal=$(rb -n 3000 -t set)
BASE_N=$(awk -v r="$cal" -v s="$BASE_SECS" 'BEGIN { n = int(r * s); if (n < 2000) n = 2000; if (n > 1000000) n = 1000000; print n }')
B_SET=$(rb -n "$BASE_N" -r 1000000 -t set)
B_LPUSH=$(rb -n "$BASE_N" -t lpush)
SHA=$(rcli SCRIPT LOAD "$RELAY_LIKE")
B_EVAL=$(rb -n "$BASE_N" -r 1000000000 EVALSHA "$SHA" 3 bench:up bench:outbox bench:acct \
	up-__rand_int__ evt-__rand_int__ "$PAYLOAD")
log "    SET $B_SET/s, LPUSH $B_LPUSH/s, EVALSHA relay-like $B_EVAL/s (n=$BASE_N each)"
rcli FLUSHALL >/dev/null
rcli CONFIG RESETSTAT >/dev/null
MEM0=$(rcli INFO memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p')

# ---- pixrelay and the sink ---------------------------------------------------

R=(--redis "unix://$SOCK")
"$BIN" "${R[@]}" init >"$WORK/init.out" 2>&1 || die "pixrelay init failed: $(cat "$WORK/init.out")"
SECRETS=$("$BIN" "${R[@]}" secrets --env sandbox --json) || die "pixrelay secrets failed"
ACCOUNT=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["account"])' "$SECRETS")
INGEST_SECRET=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["ingestSecret"])' "$SECRETS")

# shellcheck disable=SC2086
"$BIN" serve --listen 127.0.0.1:0 "${R[@]}" --data-dir "$WORK/data" --dispatch 1 --shutdown-grace 2 ${BENCH_SERVE_ARGS:-} \
	>"$WORK/pixrelay.out" 2>"$WORK/pixrelay.log" &
PIX_PID=$!
PORT=""
for _ in $(seq 100); do
	PORT=$(sed -n 's/.*listening on [^ ]* (port \([0-9]*\)).*/\1/p' "$WORK/pixrelay.log" | head -n1)
	[ -n "$PORT" ] && break
	kill -0 "$PIX_PID" 2>/dev/null || break
	sleep 0.1
done
[ -n "$PORT" ] || die "pixrelay did not start: $(tail -n 20 "$WORK/pixrelay.log")"
for _ in $(seq 100); do
	curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null && break
	sleep 0.1
done
curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null || die "pixrelay is not ready"
URL="http://127.0.0.1:$PORT"

"$WORK/sink" >"$WORK/sink.out" 2>"$WORK/sink.log" &
SINK_PID=$!
SINK_PORT=""
for _ in $(seq 50); do
	SINK_PORT=$(sed -n 's/^port //p' "$WORK/sink.out")
	[ -n "$SINK_PORT" ] && break
	sleep 0.1
done
[ -n "$SINK_PORT" ] || die "the sink did not start"
sink_stat() { curl -fs "http://127.0.0.1:$SINK_PORT/stats" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["unique"], d["count"], d["first_ms"], d["last_ms"])'; }
upstream_len() { python3 "$HERE/rcheck.py" "$SOCK" upcount "$PREFIX"; }

run_wrk() { # run_wrk TAG QUOTA SECONDS: wrk in the background, results in $WORK/TAG.*
	BENCH_ACCOUNT=$ACCOUNT BENCH_SECRET=$INGEST_SECRET BENCH_TAG="$1-$$" BENCH_OUT="$WORK/$1.res" \
		BENCH_QUOTA=$2 wrk -t"$THREADS" -c"$CONNS" -d"${3}s" --timeout 10s \
		-s "$HERE/ingest.lua" "$URL" >"$WORK/$1.wrk" 2>&1 &
	WRK_PID=$!
}
wait_wrk() {
	local rc=0
	wait "$WRK_PID" || rc=$?
	WRK_PID=""
	[ "$rc" -eq 0 ] || die "wrk failed: $(cat "$WORK/$1.wrk")"
	[ -s "$WORK/$1.res" ] || die "wrk wrote no results: $(cat "$WORK/$1.wrk")"
}

LOSS=0

# ---- (a) ingest --------------------------------------------------------------

log "(a) ingest: wrk -t$THREADS -c$CONNS -d${SECS}s, POST /v1/webhooks/ingest/$ACCOUNT (no postbackUrl)"
python3 "$HERE/rcheck.py" "$SOCK" cmdstats "$WORK/a.cmd0"
base_a=$(upstream_len)
cpu_mark a0
run_wrk a 0 "$SECS"
wait_wrk a
cpu_mark a1
read -r A_CPU_PIX A_CPU_REDIS A_CPU_ALL <<<"$(cpu_report a0 a1)"
A_OK=$(kv "$WORK/a.res" ok)
A_RATE=$(kv "$WORK/a.res" ok_per_s)
A_OTHER=$(kv "$WORK/a.res" other)
A_ERR=$(($(kv "$WORK/a.res" errors_connect) + $(kv "$WORK/a.res" errors_read) + $(kv "$WORK/a.res" errors_write) + $(kv "$WORK/a.res" errors_timeout)))
log "    $A_OK acknowledged ($A_RATE/s), $A_OTHER other answers, $A_ERR socket errors; checking Redis"
# the pump moves the last events out of the outbox; count Redis calls after
# that and before the checks add their own
python3 "$HERE/rcheck.py" "$SOCK" drain "$PREFIX" 5 >"$WORK/a.drain"
python3 "$HERE/rcheck.py" "$SOCK" cmdstats "$WORK/a.cmd1"
python3 "$HERE/rcheck.py" "$SOCK" verify "$PREFIX" "$WORK/a.res.acked" "$base_a" 1 >"$WORK/a.verify" || LOSS=1
python3 "$HERE/rcheck.py" cmddiff "$WORK/a.cmd0" "$WORK/a.cmd1" "$A_OK" >"$WORK/a.cmds"
A_STORED=$(kv "$WORK/a.verify" stored)
A_OUTBOX_LEFT=$(kv "$WORK/a.drain" outbox_left)
A_MEM=$(rcli INFO memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p')
A_MEM_PER_EVENT=$(fdiv "$((A_MEM - MEM0))" "$A_STORED" %.0f)
A_CHECK=$(kv "$WORK/a.verify" loss_check)
sed 's/^/    /' "$WORK/a.verify" >&2

# ---- (b) end to end ------------------------------------------------------------

if [ -n "${BENCH_E2E_EVENTS:-}" ]; then
	E2E_N=$BENCH_E2E_EVENTS
else
	E2E_N=$(awk -v r="$A_RATE" -v s="$SECS" 'BEGIN { n = int(r * s / 4); if (n < 1000) n = 1000; if (n > 200000) n = 200000; print n }')
fi
QUOTA=$(((E2E_N + THREADS - 1) / THREADS))
E2E_N=$((QUOTA * THREADS))
rcli HSET "${PREFIX}{sandbox}:acct:$ACCOUNT" postback_url "http://127.0.0.1:$SINK_PORT/hook" >/dev/null
log "(b) end to end: $E2E_N events to a sink at 127.0.0.1:$SINK_PORT (stop after ${DRAIN_MAX_S}s, or ${STALL_S}s without a delivery)"
base_b=$(upstream_len)
read -r sink_u0 _ _ _ <<<"$(sink_stat)"
cpu_mark b0
T0=$(now_ms)
# wrk gets up to two phase lengths to send N; it is stopped as soon as they are in
run_wrk b "$QUOTA" $((SECS * 2))
if [ "${BENCH_KICK:-0}" = 1 ]; then
	(
		body='{"id":"kick-'$$'","event":"EVENT:CHARGE_PAID","data":{"id":"kick-'$$'"}}'
		while :; do
			curl -s -o /dev/null -X POST -H "signature: $INGEST_SECRET" -H 'Content-Type: application/json' \
				-d "$body" "$URL/v1/webhooks/ingest/$ACCOUNT" || true
			sleep 0.05
		done
	) &
	KICK_PID=$!
fi
target="" t_ingested="" last_progress=$T0 last_u=0 stalled=0 wrk_done="" next_print=$((T0 + 2000))
: >"$WORK/b.timeline"
while :; do
	sleep 0.2
	now=$(now_ms)
	read -r u _ _ _ <<<"$(sink_stat)"
	delivered=$((u - sink_u0))
	stored=$(($(upstream_len) - base_b))
	if [ "$delivered" -gt "$last_u" ]; then
		last_u=$delivered
		last_progress=$now
	fi
	if [ -z "$wrk_done" ] && ! kill -0 "$WRK_PID" 2>/dev/null; then
		wait_wrk b
		wrk_done=$now
	fi
	if [ -z "$t_ingested" ] && { [ "$stored" -ge "$E2E_N" ] || [ -n "$wrk_done" ]; }; then
		# all N are in (or wrk's time ran out first: then N is what got in)
		t_ingested=$now
		# every wrk thread has stopped at its quota: end wrk's wait (it reports on SIGINT)
		if [ -z "$wrk_done" ]; then kill -INT "$WRK_PID" 2>/dev/null || true; fi
	fi
	printf '%6.1f s  ingested %7d  delivered %7d\n' "$(fdiv $((now - T0)) 1000)" "$stored" "$delivered" >>"$WORK/b.timeline"
	if [ "$now" -ge "$next_print" ]; then
		log "    $(tail -n1 "$WORK/b.timeline")"
		next_print=$((now + 2000))
	fi
	if [ -n "$t_ingested" ] && [ -z "$target" ]; then
		# every acknowledged event, plus the few answered after wrk stopped counting
		sleep 0.3
		target=$(($(upstream_len) - base_b))
	fi
	[ -n "$target" ] && [ "$delivered" -ge "$target" ] && break
	if [ -n "$t_ingested" ] && [ $((now - last_progress)) -ge $((STALL_S * 1000)) ]; then
		stalled=1
		break
	fi
	[ -n "$t_ingested" ] && [ $((now - t_ingested)) -ge $((DRAIN_MAX_S * 1000)) ] && break
done
cpu_mark b1
stop_pid "$KICK_PID" 2
KICK_PID=""
read -r B_CPU_PIX B_CPU_REDIS B_CPU_ALL <<<"$(cpu_report b0 b1)"
[ -z "$wrk_done" ] && wait_wrk b
read -r sink_u1 sink_c1 first_ms last_ms <<<"$(sink_stat)"
B_DELIVERED=$((sink_u1 - sink_u0))
B_TARGET=${target:-$(($(upstream_len) - base_b))}
python3 "$HERE/rcheck.py" "$SOCK" verify "$PREFIX" "$WORK/b.res.acked" "$base_b" 5 delivered >"$WORK/b.verify" || LOSS=1
python3 "$HERE/rcheck.py" "$SOCK" states "$PREFIX" "$WORK/b.res.acked" >"$WORK/b.states"
B_CHECK=$(kv "$WORK/b.verify" loss_check)
B_RELEASES=$(grep -c 'outcome=release' "$WORK/pixrelay.log" || true)
B_ATTEMPTS=$(grep -c 'info delivery event=' "$WORK/pixrelay.log" || true)
if [ "$B_DELIVERED" -gt 0 ] && [ "$last_ms" -gt 0 ]; then
	E2E_MS=$((last_ms - T0))
	E2E_RATE=$(fdiv "$B_DELIVERED" "$(fdiv "$E2E_MS" 1000 %.3f)")
	FIRST_LAT_MS=$((first_ms - T0))
else
	E2E_MS=0 E2E_RATE=0 FIRST_LAT_MS=n/a
fi
INGEST_B_S=$([ -n "$t_ingested" ] && fdiv $((t_ingested - T0)) 1000 %.1f || echo "n/a")
B_INGEST_RATE=$([ -n "$t_ingested" ] && fdiv "$B_TARGET" "$INGEST_B_S" %.0f || echo "n/a")
if [ "$B_DELIVERED" -ge "$B_TARGET" ]; then
	B_STATUS="all delivered"
elif [ "$stalled" = 1 ]; then
	B_STATUS="STALLED: $B_DELIVERED of $B_TARGET delivered, then none for ${STALL_S}s"
else
	B_STATUS="not drained: $B_DELIVERED of $B_TARGET delivered when the wait ended"
fi
log "    $B_STATUS"
sed 's/^/    /' "$WORK/b.verify" "$WORK/b.states" >&2

# ---- table -------------------------------------------------------------------------

RATIO_SET=$(fdiv "$A_RATE" "$B_SET" %.3f)
RATIO_LPUSH=$(fdiv "$A_RATE" "$B_LPUSH" %.3f)
RATIO_EVAL=$(fdiv "$A_RATE" "$B_EVAL" %.3f)
per_event() { sed -n "s/^$1=[0-9]* per_event=//p" "$WORK/a.cmds"; }
{
	echo
	echo "pixrelay benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "machine: $NPROC CPU(s), $CPU_MODEL; work dir on $FS; fdatasync p50 $FSYNC_P50 ms / p99 $FSYNC_P99 ms"
	echo "load average before the run: $LOADAVG (other processes on the machine skew every figure)"
	[ -n "${BENCH_SERVE_ARGS:-}" ] && echo "pixrelay serve flags added: $BENCH_SERVE_ARGS"
	echo "redis $REDIS_VERSION: unix socket, appendonly yes, appendfsync always; wrk -t$THREADS -c$CONNS; ${SECS}s per phase"
	echo
	printf '%-58s %s\n' "measure" "value"
	printf '%-58s %s\n' "----------------------------------------------------------" "--------------------------"
	printf '%-58s %s\n' "(c) redis-benchmark SET, -c $CONNS -P 1" "$B_SET /s"
	printf '%-58s %s\n' "(c) redis-benchmark LPUSH, -c $CONNS -P 1" "$B_LPUSH /s"
	printf '%-58s %s\n' "(c) redis-benchmark EVALSHA relay-like script, -c $CONNS" "$B_EVAL /s"
	printf '%-58s %s\n' "(a) ingest: acknowledged (200) events" "$A_OK in $(kv "$WORK/a.res" duration_s) s"
	printf '%-58s %s\n' "(a) ingest: acknowledged events per second" "$A_RATE /s"
	printf '%-58s %s\n' "(a) ingest latency p50 / p90 / p99 / max" "$(kv "$WORK/a.res" lat_p50_ms) / $(kv "$WORK/a.res" lat_p90_ms) / $(kv "$WORK/a.res" lat_p99_ms) / $(kv "$WORK/a.res" lat_max_ms) ms"
	printf '%-58s %s\n' "(a) non-200 answers / socket errors" "$A_OTHER / $A_ERR"
	printf '%-58s %s\n' "(a) events in Redis (acknowledged + in flight at stop)" "$A_STORED"
	printf '%-58s %s\n' "(a) every acknowledged event stored (no loss)" "$A_CHECK"
	printf '%-58s %s\n' "(a) outbox entries the pump left behind (5 s after)" "$A_OUTBOX_LEFT"
	printf '%-58s %s\n' "(a) Redis memory per stored event" "$A_MEM_PER_EVENT bytes"
	printf '%-58s %s\n' "(a) CPU: pixrelay / redis-server / whole machine" "$A_CPU_PIX% / $A_CPU_REDIS% of a core / $A_CPU_ALL% of $NPROC"
	printf '%-58s %s\n' "(a) Redis calls per event: EVALSHA / all commands" "$(per_event evalsha) / $(awk '{ split($2, a, "="); s += a[2] } END { printf "%.2f", s }' "$WORK/a.cmds")"
	printf '%-58s %s\n' "(a) ratio to Redis SET / LPUSH / relay-like EVALSHA" "$RATIO_SET / $RATIO_LPUSH / $RATIO_EVAL"
	printf '%-58s %s\n' "(b) events ingested (N) / time to ingest them / rate" "$B_TARGET / $INGEST_B_S s / $B_INGEST_RATE /s"
	printf '%-58s %s\n' "(b) delivered to the sink (distinct webhook-id / requests)" "$B_DELIVERED / $((sink_c1))"
	printf '%-58s %s\n' "(b) first ingest -> first / last delivery" "$FIRST_LAT_MS / $E2E_MS ms"
	printf '%-58s %s\n' "(b) end to end: delivered / (last delivery - first ingest)" "$E2E_RATE /s"
	printf '%-58s %s\n' "(b) delivery attempts logged / of which 'release'" "$B_ATTEMPTS / $B_RELEASES"
	printf '%-58s %s\n' "(b) CPU: pixrelay / redis-server / whole machine" "$B_CPU_PIX% / $B_CPU_REDIS% of a core / $B_CPU_ALL% of $NPROC"
	printf '%-58s %s\n' "(b) outcome" "$B_STATUS$([ "${BENCH_KICK:-0}" = 1 ] && echo " (BENCH_KICK=1)")"
	printf '%-58s %s\n' "(b) every acknowledged event stored (no loss)" "$B_CHECK"
	echo
	echo "AOF rewrites during the whole run: $(rcli INFO persistence | sed -n 's/^aof_rewrites:\([0-9]*\).*/\1/p')"
	echo
	echo "Redis commands per acknowledged event in (a) (INFO commandstats, incl. the calls inside scripts):"
	sed 's/^/  /' "$WORK/a.cmds"
	echo
	echo "(b) timeline (seconds after the first ingest):"
	awk 'NR % 5 == 1' "$WORK/b.timeline" | head -n 40 | sed 's/^/  /'
	tail -n1 "$WORK/b.timeline" | sed 's/^/  /'
} | tee "$WORK/report.txt"

if [ "$LOSS" = 1 ]; then
	log "ERROR: acknowledged events are missing from Redis (see above)"
	exit 3
fi
exit 0
