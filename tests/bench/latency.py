"""The latency phase of the benchmark (tests/bench/bench.py, peer.py).

From the moment a notification is acknowledged (its 200 read by the load
generator) to the moment the sink reads its postback, at a steady offered
load: latgen (latgen.c) sends a fixed number of notifications a second
whatever the answers do (open loop, not wrk's closed loop) and writes each
one's ack time; the sink (sink.c --lat 1) keeps the time it first read each
one's postback. Both take CLOCK_MONOTONIC on this machine. A postback can
reach the sink a little before its 200 reaches latgen (both leave the relay
at about the same moment): such a latency is negative and counted as it is.
"""
import math
import os
import subprocess
import time

# the offered loads, as fractions of the end-to-end rate measured in the same run
FRACTIONS = ((0.25, "a quarter"), (0.5, "half"))


def seconds(secs):
    """Seconds per offered load for phases of `secs` (BENCH_LATENCY_SECS)."""
    return int(os.environ.get("BENCH_LATENCY_SECS", max(1, secs // 2)))


def pct(xs, p):
    """Nearest-rank percentile of sorted xs."""
    return xs[min(len(xs) - 1, max(0, math.ceil(p / 100.0 * len(xs)) - 1))]


def marks(sink, tag):
    out = {}
    for line in sink.get("/lat").decode().splitlines():
        mark, ns = line.split()
        if mark.startswith(tag + "-"):
            out[mark] = int(ns)
    return out


def measure(b, latgen, port, path, secret, rate, secs, sink, tag, work):
    """Offer `rate` notifications a second for `secs` to 127.0.0.1:port `path`;
    b is the bench module (spawn, CONNS, log). Returns the offered rate, how
    many were sent, acknowledged and delivered, the latencies' p50, p99 and
    max in ms, and how far latgen's sends ran behind their schedule."""
    out = os.path.join(work, "lat-%s.txt" % tag)
    p = b.spawn([latgen, str(port), path, secret, "%.1f" % rate, str(secs), str(b.CONNS), tag, out],
                stdout=subprocess.PIPE, text=True)
    text, _ = p.communicate(timeout=secs + 90)
    b.LIVE.remove(p)
    summary = dict(kv.split("=", 1) for kv in text.split())
    acks = {}
    with open(out) as f:
        for line in f:
            mark, ns, status = line.split()
            if status == "200":
                acks[mark] = int(ns)
    # every acknowledged one delivered, or no progress for 15 s
    got, last, until = marks(sink, tag), -1, time.time() + 15
    while time.time() < until and any(m not in got for m in acks):
        if len(got) != last:
            last, until = len(got), time.time() + 15
        time.sleep(0.1)
        got = marks(sink, tag)
    lat = sorted((got[m] - ns) / 1e6 for m, ns in acks.items() if m in got)
    res = {"rate": rate, "secs": secs, "sent": int(summary["sent"]), "acked": len(acks),
           "delivered": len(lat), "lag_ms": float(summary["lag_ms"]),
           "p50": pct(lat, 50) if lat else None, "p99": pct(lat, 99) if lat else None,
           "max": lat[-1] if lat else None}
    b.log("latency %s: %.0f/s offered for %d s, %d acked, %d delivered, p50 %s p99 %s max %s ms, "
          "sends late by up to %.1f ms" % (tag, rate, secs, res["acked"], res["delivered"],
                                            *("%.2f" % res[k] if lat else "-" for k in ("p50", "p99", "max")),
                                            res["lag_ms"]))
    return res


def run(b, latgen, port, path, secret, capacity, secs, sink, tag, work):
    """measure() at each of FRACTIONS of `capacity` (events a second): a list
    of results in FRACTIONS' order."""
    return [measure(b, latgen, port, path, secret, max(1.0, f * capacity), seconds(secs), sink,
                    "%s%d" % (tag, i), work) for i, (f, _) in enumerate(FRACTIONS)]


def cell(r):
    """One result as a report cell."""
    if not r or r["p50"] is None:
        return "–"
    return "%.0f/s: p50 %.1f, p99 %.1f, max %.1f ms (%d of %d delivered)" % (
        r["rate"], r["p50"], r["p99"], r["max"], r["delivered"], r["acked"])
