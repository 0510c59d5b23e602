#!/usr/bin/env python3
"""The short form of the throughput benchmark, run in CI (tests/bench/meson.build).

tests/bench/bench.py with 2 s phases, one pixrelay process and 1,000 postbacks in
flight, against its own redis-server, wrk and sink, as `bash tests/bench/run.sh`
runs it. A benchmark cannot fail on a rate (the machine's speed is not pixrelay's),
so this asserts what every long run relies on and a user would see: the benchmark
runs to its end, every notification pixrelay acknowledged was stored and delivered
with exactly the body stored, nothing was answered other than 200, and the report
prints every figure.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    binary, sink = os.environ["PIXRELAY_BIN"], os.environ["BENCH_SINK"]
    env = dict(os.environ, BENCH_PROCESSES="1", BENCH_INFLIGHT="1000")
    with tempfile.TemporaryDirectory(prefix="pixrelay-bench-short.") as work:
        p = subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), binary, sink, work, "2"],
                           env=env, capture_output=True, text=True, timeout=540)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr[-20000:])
    assert p.returncode == 0, "bench.py exited %d (3: an acknowledged event lost or changed)" % p.returncode
    rows = {}
    for line in p.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3:
            rows[cells[0]] = cells[1]
    assert rows.get("acknowledged events lost / delivered with another body") == "0 / 0", rows
    m = re.fullmatch(r"(\d+), (\d+) of (\d+)", rows.get("ingest: non-200 answers, acknowledged and stored", ""))
    assert m, rows
    bad, stored, acked = map(int, m.groups())
    assert bad == 0 and acked > 0 and stored == acked, (bad, stored, acked)
    m = re.fullmatch(r"(\d+) of (\d+) in .*", rows.get("backlog drained to one host", ""))
    assert m and m.group(1) == m.group(2) and int(m.group(2)) >= acked, rows.get("backlog drained to one host")
    for name in rows:
        if name.startswith("Redis alone"):
            assert re.match(r"\d+/s = [0-9.]+× raw", rows[name]), (name, rows[name])
    needed = ["raw Redis RPUSH", "**ingest / raw**", "**drain / raw**", "**end to end / raw**",
              "drain: Redis commands / EVALSHA (round trips) per delivered event",
              "raw HTTP: CPU per request, client / sink", "ingest: AOF bytes per event"]
    missing = [n for n in needed if not any(k.startswith(n) for k in rows)]
    assert not missing, missing
    assert re.search(r"RSS of one process with up to 1000 deliveries in flight at once .*: [0-9.]+ MB",
                     p.stdout), "no memory figure"
    print("bench-short: %d acknowledged, every one delivered with its body" % acked)


if __name__ == "__main__":
    main()
