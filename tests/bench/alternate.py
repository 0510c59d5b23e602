"""Alternating rounds: Redis' CPU per ingested event of pixrelay, of the
BullMQ peer and of a raw RPUSH, measured one right after the other
(tests/bench/bench.py, docs/performance.md).

The issue's targets for ingest are ratios of Redis CPU per event: pixrelay's
to a raw RPUSH's and to BullMQ's. Measured minutes apart, as the main
phases are, the machine's load between them enters the ratio (a raw RPUSH
has cost 6.8 µs at the start of one configuration and 10.0 µs at its end).
Here the three are measured in rounds of short phases, back to back, each
round in another order (so that none is always first after a pause), each
on a redis-server of its own with the same configuration (unix socket, AOF
appendfsync always):

  raw      redis-benchmark RPUSH of 1 KB, BENCH_CONNECTIONS clients;
  pixrelay wrk against one `pixrelay serve --dispatch 0`, 1 KB notifications;
  bullmq   wrk against the peer's endpoint (no Worker), the same bodies.

Each round gives its two ratios; the report prints each round's and their
median. Redis' CPU is redis-server's user and system time from /proc over
the phase, divided by the acknowledged events (the RPUSHes sent).
"""
import json
import os

import peer

ORDERS = (("raw", "pixrelay", "bullmq"), ("pixrelay", "bullmq", "raw"), ("bullmq", "raw", "pixrelay"))


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def run(b, binary, sink_bin, work, rounds, secs):
    """`rounds` rounds of `secs`-second phases; b is the bench module. Returns
    one dict per round: raw_us, pix_us, bull_us (Redis CPU per event) and the
    rates."""
    b.log("--- alternating rounds: raw RPUSH, pixrelay and BullMQ ingest ---")
    d = os.path.join(work, "alternate")
    os.makedirs(d)
    node_dir = os.environ.get("BENCH_NODE_DIR") or os.path.join(work, "bullmq")
    peer.install(b, node_dir)
    servers = {k: b.Redis(os.path.join(d, k)) for k in ("raw", "pixrelay", "bullmq")}
    sink = b.Sink(sink_bin)
    url = "http://127.0.0.1:%d/hook" % sink.ports[0]
    procs = []
    out = []
    try:
        pr = servers["pixrelay"]
        init = json.loads(b.cli(binary, pr, "init", "--json"))
        account = init["sandbox"]["account"]
        secret = json.loads(b.cli(binary, pr, "secrets", "--env", "sandbox", "--json"))["ingestSecret"]
        b.cli(binary, pr, "account", "set", "--env", "sandbox", "--postback-url", url)
        api = b.Pix(binary, d, pr, "alt-pixrelay", ["--dispatch", "0"])
        procs.append(api)
        bull = peer.Relay(b, node_dir, d, servers["bullmq"], "alt-bullmq", True, False, url)
        procs.append(bull)

        def redis_cpu(k):
            return sum(b.cpu_s(pid) for pid in servers[k].pids())

        def ingest(k, tag):
            target, acct, sec = (api, account, secret) if k == "pixrelay" else (bull, peer.ACCOUNT, peer.SECRET)
            c0 = redis_cpu(k)
            r = b.wrk([target], acct, sec, secs, tag, d)
            return r["rate"], 1e6 * (redis_cpu(k) - c0) / max(1, r["ok"])

        for i in range(rounds):
            got = {}
            for k in ORDERS[i % len(ORDERS)]:
                if k == "raw":
                    rps, _, cpu = b.raw_rpush(servers["raw"], secs)
                    got["raw"] = (rps, 1e6 * cpu)
                else:
                    got[k] = ingest(k, "alt%d%s" % (i, k[0]))
            row = {"raw_rps": got["raw"][0], "raw_us": got["raw"][1],
                   "pix_rps": got["pixrelay"][0], "pix_us": got["pixrelay"][1],
                   "bull_rps": got["bullmq"][0], "bull_us": got["bullmq"][1],
                   "order": ORDERS[i % len(ORDERS)]}
            out.append(row)
            b.log("round %d (%s): Redis CPU per event raw %.1f, pixrelay %.1f (%.0f/s), BullMQ %.1f µs (%.0f/s)"
                  % (i + 1, ", ".join(row["order"]), row["raw_us"], row["pix_us"], row["pix_rps"],
                     row["bull_us"], row["bull_rps"]))
    finally:
        for p in procs:
            p.stop()
        sink.stop()
        for r in servers.values():
            r.stop()
    return out


def report(rounds):
    """The rounds as a table, and the medians of their ratios."""
    print()
    print("Alternating rounds (ingest only; each round's phases back to back, "
          "each on a redis-server of its own):")
    print()
    print("| round (order) | raw RPUSH | pixrelay | BullMQ | pixrelay / raw | pixrelay / BullMQ | ingest rate / BullMQ's |")
    print("|---|---|---|---|---|---|---|")
    for i, r in enumerate(rounds):
        print("| %d (%s) | %.1f µs | %.1f µs, %.0f/s | %.1f µs, %.0f/s | %.2f× | %.2f× | %.2f× |" % (
            i + 1, ", ".join(r["order"]), r["raw_us"], r["pix_us"], r["pix_rps"], r["bull_us"],
            r["bull_rps"], r["pix_us"] / r["raw_us"], r["pix_us"] / r["bull_us"],
            r["pix_rps"] / r["bull_rps"]))
    print("| **median** | %.1f µs | %.1f µs | %.1f µs | **%.2f×** (≤ 3×) | **%.2f×** (≤ 0.5×) | %.2f× (≥ 2×) |" % (
        median([r["raw_us"] for r in rounds]), median([r["pix_us"] for r in rounds]),
        median([r["bull_us"] for r in rounds]),
        median([r["pix_us"] / r["raw_us"] for r in rounds]),
        median([r["pix_us"] / r["bull_us"] for r in rounds]),
        median([r["pix_rps"] / r["bull_rps"] for r in rounds])))
