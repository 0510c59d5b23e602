#!/usr/bin/env bash
# Run the libFuzzer targets of tests/fuzz (docs/security.md, Fuzzing):
#
#   bash tests/fuzz/run.sh [-t SECONDS | -n RUNS] [-k] [TARGET...]
#
#   -t SECONDS  fuzz each target for this long (default 60)
#   -n RUNS     fuzz each target for this many executions instead
#   -k          keep the corpora as they are: do not merge what was found
#   TARGET      json, charge, ... (default: every target in tests/fuzz/meson.build)
#
# Builds build-fuzz/ with clang, -Dfuzz=true and -fsanitize=fuzzer,address,
# undefined (installing clang and libFuzzer from Debian when missing), then
# runs the targets one at a time under `nice`, each on a scratch corpus seeded
# from tests/fuzz/corpus/<target>, with tests/fuzz/dict/<target>.dict. After
# each run the corpus in the tree is rebuilt with -set_cover_merge=1
# -use_counters=0 from itself and what the run found: a small set of inputs
# that reaches every edge the run reached, plus every hand-named seed
# (regression inputs keep their names; found inputs are named by their SHA-1,
# as libFuzzer names them).
#
# Prints one line per target: executions, exec/s, coverage (cov: edges, ft:
# features) at the end, corpus files and bytes before and after, and the
# result. A crash, leak, sanitizer report or timeout (over 10 s for one input)
# stops that target; its input is kept in build-fuzz/artifacts/ and the
# script exits 1 after the other targets ran. The CI replays the corpora in
# the normal suite (suite 'fuzz' of meson test); this is the long form.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/fuzz
BUILD=$ROOT/build-fuzz
SECS=60
RUNS=""
MERGE=1

usage() {
	sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
while getopts "t:n:kh" o; do
	case $o in
	t) SECS=$OPTARG ;;
	n) RUNS=$OPTARG ;;
	k) MERGE=0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[[ $SECS =~ ^[0-9]+$ ]] || usage
[[ -z $RUNS || $RUNS =~ ^[0-9]+$ ]] || usage

all=$(sed -n "/^fuzz_targets/,/]/p" "$HERE/meson.build" | grep -o "'[a-z_]*'" | tr -d "'")
targets=("$@")
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<<"$(echo $all)"
for t in "${targets[@]}"; do
	grep -qw "$t" <<<"$all" || { echo "unknown target '$t'; targets: $(echo $all)" >&2; exit 2; }
done

# clang and libFuzzer from Debian
rt=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null | head -n1 || true)
if ! command -v clang >/dev/null || [ -z "$rt" ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	ver=$(apt-cache search --names-only '^libclang-rt-[0-9]+-dev$' | sed -n 's/^libclang-rt-\([0-9]*\)-dev.*/\1/p' | sort -n | tail -n1)
	echo "installing clang and libclang-rt-${ver}-dev"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		clang "libclang-rt-${ver}-dev"
fi

if [ ! -f "$BUILD/build.ninja" ]; then
	CC=clang nice -n 10 meson setup "$BUILD" --werror -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false --buildtype=debugoptimized >/dev/null
fi
nice -n 10 ninja -C "$BUILD" $(printf 'tests/fuzz/fuzz-%s ' "${targets[@]}") >/dev/null

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
mkdir -p "$BUILD/artifacts" "$BUILD/logs"

corpus_size() { # files and bytes of a directory
	local n b
	n=$(find "$1" -type f | wc -l)
	b=$(find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	echo "$n/$b"
}

is_sha1() { [[ $1 =~ ^[0-9a-f]{40}$ ]]; }

status=0
summary=()
for t in "${targets[@]}"; do
	bin=$BUILD/tests/fuzz/fuzz-$t
	corpus=$HERE/corpus/$t
	scratch=$(mktemp -d)
	log=$BUILD/logs/$t.log
	mkdir -p "$corpus"
	before=$(corpus_size "$corpus")
	cp "$corpus"/* "$scratch"/ 2>/dev/null || true
	flags=(-print_final_stats=1 -timeout=10 -rss_limit_mb=4096 "-artifact_prefix=$BUILD/artifacts/$t-")
	[ -f "$HERE/dict/$t.dict" ] && flags+=("-dict=$HERE/dict/$t.dict")
	[ "$t" = config ] && flags+=(-close_fd_mask=2) # config_load explains refusals on stderr
	if [ -n "$RUNS" ]; then
		flags+=("-runs=$RUNS")
		what="$RUNS runs"
	else
		flags+=("-max_total_time=$SECS")
		what="${SECS} s"
	fi
	echo "[fuzz] $t: $what ($(date +%T))" >&2
	rc=0
	nice -n 10 "$bin" "${flags[@]}" "$scratch" >"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n1 | sed 's/cov: \([0-9]*\) ft: \([0-9]*\)/\1 \2/')
	if [ "$rc" -ne 0 ]; then
		result="FAILED (exit $rc): see $log and $BUILD/artifacts/$t-*"
		status=1
	else
		result=ok
		if [ "$MERGE" = 1 ]; then
			# smallest covering set of the old corpus and the new finds
			merged=$(mktemp -d)
			nice -n 10 "$bin" -set_cover_merge=1 -use_counters=0 -close_fd_mask=2 \
				"$merged" "$corpus" \
				"$scratch" >>"$log" 2>&1
			declare -A keep=()
			for f in "$corpus"/*; do
				[ -e "$f" ] || continue
				n=$(basename "$f")
				if is_sha1 "$n"; then
					rm -f "$f"
				else
					keep[$(sha1sum <"$f" | cut -c1-40)]=1
				fi
			done
			for f in "$merged"/*; do
				[ -e "$f" ] || continue
				[ -n "${keep[$(basename "$f")]:-}" ] || cp "$f" "$corpus"/
			done
			unset keep
			rm -rf "$merged"
		fi
	fi
	rm -rf "$scratch"
	after=$(corpus_size "$corpus")
	line=$(printf '%-12s %12s execs %8s exec/s  cov %6s ft %6s  corpus %s -> %s files/bytes  %s' \
		"$t" "${execs:-?}" "${rate:-?}" "$(cut -d' ' -f1 <<<"${cov:-? ?}")" \
		"$(cut -d' ' -f2 <<<"${cov:-? ?}")" "$before" "$after" "$result")
	echo "$line"
	summary+=("$line")
done
echo
echo "== $(date -u +%FT%TZ) clang $(clang -dumpversion) -fsanitize=fuzzer,address,undefined, $([ -n "$RUNS" ] && echo "$RUNS runs" || echo "${SECS} s") per target"
printf '%s\n' "${summary[@]}"
exit $status
