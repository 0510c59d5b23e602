"""Alternating rounds: Redis' CPU per ingested and per delivered event of
pixrelay, of the BullMQ peer and of a raw RPUSH, measured one right after the
other (tests/bench/bench.py, docs/performance.md).

The issue's targets are ratios of Redis CPU per event: pixrelay's to a raw
RPUSH's and to BullMQ's. Measured minutes apart, as the main
phases are, the machine's load between them enters the ratio (a raw RPUSH
has cost 6.8 µs at the start of one configuration and 10.0 µs at its end).
Here the three are measured in rounds of short phases, back to back, each
round in another order (so that none is always first after a pause), each
on a redis-server of its own with the same configuration (unix socket, AOF
appendfsync always):

  raw      redis-benchmark RPUSH of 1 KB, BENCH_CONNECTIONS clients;
  pixrelay wrk against one `pixrelay serve --dispatch 0`, 1 KB notifications;
           then what they left, delivered by a `pixrelay serve` started now
           (its dispatcher), stopped once all arrived;
  bullmq   wrk against the peer's endpoint (no Worker), the same bodies; then
           their jobs, delivered by a process with the Worker, started now.

Each round gives its ratios; the report prints each round's and their
median. Redis' CPU is redis-server's user and system time from /proc over
the phase, divided by the acknowledged events (the RPUSHes sent), or by the
events the sink received (a drain, from the process's start to the last).
"""
import json
import os
import time

import peer

ORDERS = (("raw", "pixrelay", "bullmq"), ("pixrelay", "bullmq", "raw"), ("bullmq", "raw", "pixrelay"))


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def run(b, binary, sink_bin, work, rounds, secs):
    """`rounds` rounds of `secs`-second ingest phases; b is the bench module.
    Returns one dict per round: Redis CPU per ingested event (raw_us, pix_us,
    bull_us) and per delivered one (pix_drain_us, bull_drain_us), and the
    rates."""
    b.log("--- alternating rounds: raw RPUSH, pixrelay and BullMQ, ingest and drain ---")
    d = os.path.join(work, "alternate")
    os.makedirs(d)
    node_dir = os.environ.get("BENCH_NODE_DIR") or os.path.join(work, "bullmq")
    peer.install(b, node_dir)
    servers = {k: b.Redis(os.path.join(d, k)) for k in ("raw", "pixrelay", "bullmq")}
    sinks = {k: b.Sink(sink_bin) for k in ("pixrelay", "bullmq")}
    url = {k: "http://127.0.0.1:%d/hook" % sinks[k].ports[0] for k in sinks}
    procs = []
    out = []
    try:
        pr = servers["pixrelay"]
        init = json.loads(b.cli(binary, pr, "init", "--json"))
        account = init["sandbox"]["account"]
        secret = json.loads(b.cli(binary, pr, "secrets", "--env", "sandbox", "--json"))["ingestSecret"]
        b.cli(binary, pr, "account", "set", "--env", "sandbox", "--postback-url", url["pixrelay"])
        api = b.Pix(binary, d, pr, "alt-pixrelay", ["--dispatch", "0"])
        procs.append(api)
        bull = peer.Relay(b, node_dir, d, servers["bullmq"], "alt-bullmq", True, False, url["bullmq"])
        procs.append(bull)

        def redis_cpu(k):
            return sum(b.cpu_s(pid) for pid in servers[k].pids())

        def ingest(k, tag):
            target, acct, sec = (api, account, secret) if k == "pixrelay" else (bull, peer.ACCOUNT, peer.SECRET)
            c0 = redis_cpu(k)
            r = b.wrk([target], acct, sec, secs, tag, d)
            return r["ok"], r["rate"], 1e6 * (redis_cpu(k) - c0) / max(1, r["ok"])

        def drain(k, acked, tag):
            """What the ingest left, delivered by a process started now (a
            dispatcher; the peer's Worker), stopped once it is delivered."""
            sink = sinks[k]
            base = sink.stats()["unique"]
            c0, t0 = redis_cpu(k), time.time()
            if k == "pixrelay":
                p = b.Pix(binary, d, pr, "alt-dispatch-" + tag)
            else:
                p = peer.Relay(b, node_dir, d, servers["bullmq"], "alt-worker-" + tag, False, True, url[k])
            try:
                st, _ = b.wait_delivered(sink, base + acked)
                c1 = redis_cpu(k)
            finally:
                p.stop()
            n = st["unique"] - base
            return n / max(1e-9, st["last_ms"] / 1000.0 - t0), 1e6 * (c1 - c0) / max(1, n)

        for i in range(rounds):
            got = {}
            for k in ORDERS[i % len(ORDERS)]:
                if k == "raw":
                    rps, _, cpu = b.raw_rpush(servers["raw"], secs)
                    got["raw"] = (rps, 1e6 * cpu)
                else:
                    acked, rate, us = ingest(k, "alt%d%s" % (i, k[0]))
                    got[k] = (rate, us) + drain(k, acked, "%d" % i)
            row = {"raw_rps": got["raw"][0], "raw_us": got["raw"][1],
                   "pix_rps": got["pixrelay"][0], "pix_us": got["pixrelay"][1],
                   "pix_drain_rps": got["pixrelay"][2], "pix_drain_us": got["pixrelay"][3],
                   "bull_rps": got["bullmq"][0], "bull_us": got["bullmq"][1],
                   "bull_drain_rps": got["bullmq"][2], "bull_drain_us": got["bullmq"][3],
                   "order": ORDERS[i % len(ORDERS)]}
            out.append(row)
            b.log("round %d (%s): Redis CPU per event raw %.1f; ingested pixrelay %.1f (%.0f/s), "
                  "BullMQ %.1f µs (%.0f/s); delivered pixrelay %.1f (%.0f/s), BullMQ %.1f µs (%.0f/s)"
                  % (i + 1, ", ".join(row["order"]), row["raw_us"], row["pix_us"], row["pix_rps"],
                     row["bull_us"], row["bull_rps"], row["pix_drain_us"], row["pix_drain_rps"],
                     row["bull_drain_us"], row["bull_drain_rps"]))
    finally:
        for p in procs:
            p.stop()
        for k in sinks:
            sinks[k].stop()
        for r in servers.values():
            r.stop()
    return out


def table(rounds, what, us, bull_us, rps, bull_rps, targets):
    """One phase's rounds (keys of its figures in each round) and the
    medians of their ratios to the raw RPUSH and to BullMQ."""
    med = lambda f: median([f(r) for r in rounds])
    print()
    print("| round (order) | raw RPUSH | %s: pixrelay | BullMQ | pixrelay / raw | pixrelay / BullMQ | "
          "rate / BullMQ's |" % what)
    print("|---|---|---|---|---|---|---|")
    for i, r in enumerate(rounds):
        print("| %d (%s) | %.1f µs | %.1f µs, %.0f/s | %.1f µs, %.0f/s | %.2f× | %.2f× | %.2f× |" % (
            i + 1, ", ".join(r["order"]), r["raw_us"], r[us], r[rps], r[bull_us], r[bull_rps],
            r[us] / r["raw_us"], r[us] / r[bull_us], r[rps] / r[bull_rps]))
    print("| **median** | %.1f µs | %.1f µs | %.1f µs | **%.2f×** (%s) | **%.2f×** (%s) | %.2f× (%s) |" % (
        med(lambda r: r["raw_us"]), med(lambda r: r[us]), med(lambda r: r[bull_us]),
        med(lambda r: r[us] / r["raw_us"]), targets[0], med(lambda r: r[us] / r[bull_us]), targets[1],
        med(lambda r: r[rps] / r[bull_rps]), targets[2]))


def report(rounds):
    """The rounds as tables, ingest's and the drain's."""
    print()
    print("Alternating rounds (each round's phases back to back, each relay on a redis-server of its own; "
          "a drain delivers what the ingest before it left):")
    table(rounds, "ingest", "pix_us", "bull_us", "pix_rps", "bull_rps", ("≤ 3×", "≤ 0.5×", "≥ 2×"))
    table(rounds, "drain", "pix_drain_us", "bull_drain_us", "pix_drain_rps", "bull_drain_rps",
          ("≤ 2.5×", "≤ 0.25×", "≥ 4×"))
