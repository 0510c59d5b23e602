#!/usr/bin/env python3
"""The short form of the throughput benchmark, run in CI (tests/bench/meson.build).

tests/bench/bench.py with 2 s phases, one pixrelay process and 1,000 postbacks in
flight, against its own redis-server, wrk and sink, as `bash tests/bench/run.sh`
runs it, with its latency phase (1 s at each offered load) but not the BullMQ
peer (it needs npm's registry and takes half a minute more) nor the ceilings of a
stream per shard (BENCH_NEXT=0: about 10 s more); with its phases of 3 webhook
endpoints per account (BENCH_ENDPOINTS' default). A benchmark cannot
fail on a rate (the machine's speed is not pixrelay's), so this asserts what
every long run relies on and a user would see: the benchmark runs to its end,
every notification pixrelay acknowledged was stored and delivered with exactly
the body stored (and every one of the latency phase delivered; with endpoints,
at the postbackUrl and at each endpoint), nothing was answered other than 200,
and the report prints every figure.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    binary, sink = os.environ["PIXRELAY_BIN"], os.environ["BENCH_SINK"]
    # the benchmark's defaults but for these two, whatever the caller's environment says
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env.update(BENCH_PROCESSES="1", BENCH_INFLIGHT="1000", BENCH_PEER="0", BENCH_NEXT="0")
    with tempfile.TemporaryDirectory(prefix="pixrelay-bench-short.") as work:
        # its own process group: on a timeout every process it started goes too
        # (redis-server, wrk, the sink, pixrelay), not only bench.py
        p = subprocess.Popen([sys.executable, os.path.join(HERE, "bench.py"), binary, sink, work, "2"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=540)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            sys.stderr.write(err[-20000:])
            raise AssertionError("bench.py ran past 540 s")
    sys.stdout.write(out)
    sys.stderr.write(err[-20000:])
    assert p.returncode == 0, "bench.py exited %d (3: an acknowledged event lost or changed)" % p.returncode
    rows = {}
    for line in out.splitlines():
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
    # with 3 endpoints: every event 4 deliveries, each made, with the body stored
    assert rows.get("with 3 endpoints: deliveries lost / with another body") == "0 / 0", rows
    drained = [v for k, v in rows.items() if k.startswith("**with 3 endpoints: deliveries drained** (4 per event)")]
    m = re.fullmatch(r"\*\*(\d+) of (\d+) in [0-9.]+ s: \d+/s; [0-9.]+×\*\*", drained[0] if drained else "")
    assert m and m.group(1) == m.group(2) and int(m.group(2)) % 4 == 0, drained
    alone = [name for name in rows if name.startswith("Redis alone")]
    assert len(alone) == 3, alone
    for name in alone:
        assert re.match(r"\d+/s = [0-9.]+× raw, Redis CPU [0-9.]+ µs each$", rows[name]), (name, rows[name])
    # the latency phase: every notification latgen had acknowledged reached the sink
    lat = [name for name in rows if name.startswith("latency, acknowledged to received by the sink")]
    assert len(lat) == 2, lat
    for name in lat:
        m = re.fullmatch(r"\d+/s: p50 -?[0-9.]+, p99 -?[0-9.]+, max -?[0-9.]+ ms \((\d+) of (\d+) delivered\)",
                         rows[name])
        assert m and int(m.group(2)) > 0 and m.group(1) == m.group(2), (name, rows[name])
    # nor the BullMQ peer (its ratio rows, its table, or a note that it failed)
    assert "**ingest / BullMQ**" not in rows and "BullMQ relay" not in out and "BullMQ peer" not in out, \
        "the peer ran in the short form"
    # every figure of the report is there, and none is left without a value
    needed = ["raw Redis RPUSH", "ingest, acknowledged", "**ingest / raw**", "ingest / Redis alone",
              "Redis CPU per event", "ingest p99 / raw p99", "ingest: Redis commands / EVALSHA",
              "ingest: Redis time per EVALSHA", "ingest: AOF bytes per event",
              "Redis memory per retained event", "ingest CPU", "**drain / raw**",
              "raw HTTP POST to the sink", "raw HTTP: CPU per request, client / sink", "drain / raw HTTP",
              "drain: Redis commands / EVALSHA (round trips) per delivered event",
              "drain: AOF bytes per delivered event", "drain CPU",
              "end to end (ingest and delivery at once)", "end to end / raw HTTP",
              "**end to end / raw**", "end to end CPU", "peak RSS per process",
              "**with 3 endpoints per account**", "with 3 endpoints: Redis CPU per ingested event",
              "with 3 endpoints: events delivered everywhere", "with 3 endpoints: Redis CPU per delivery",
              "with 3 endpoints: Redis commands / EVALSHA per delivery",
              "with 3 endpoints: pixrelay CPU per delivery"]
    missing = [n for n in needed if not any(k.startswith(n) for k in rows)]
    assert not missing, missing
    empty = [k for k, v in rows.items() if k not in ("figure", "---") and not re.search(r"\d", v)]
    assert not empty, empty
    # (the phase measures once 98 % of them are held: the last few may still be on their way)
    m = re.search(r"RSS of one process with up to (\d+) deliveries in flight at once .*: [0-9.]+ MiB", out)
    assert m, "no memory figure"
    assert 980 <= int(m.group(1)) <= 1000, m.group(0)
    print("bench-short: %d acknowledged, every one delivered with its body" % acked)


if __name__ == "__main__":
    main()
