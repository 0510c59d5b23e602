"""The BullMQ peer of the benchmark (tests/bench/bench.py, docs/performance.md).

A relay written on BullMQ (tests/bench/bullmq/relay.js: an HTTP ingest
endpoint that adds a job with attempts and exponential backoff and answers
200 once the add resolved; a Worker, 64 jobs at once, that POSTs each job's
body to the sink over kept-alive connections), measured as bench.py measures
pixrelay, in the same run, on a fresh redis-server of the same configuration
(unix socket, AOF appendfsync always), with the same wrk script, 1 KB bodies,
BENCH_CONNECTIONS connections and C sink:

  ingest   wrk against a relay process with no Worker, for `seconds`;
  drain    the backlog this left, by a process with the Worker (and the
           endpoint), started now; rate from its start to the last delivery;
  e2e      wrk against that process for `seconds` while it delivers;
  latency  latency.py at a quarter and half of its own end-to-end rate.

Redis figures as for pixrelay: redis-server's CPU from /proc, INFO
commandstats (which counts the commands a script runs as commands too, and
the script call itself), AOF size and used_memory. BullMQ and ioredis are the
versions of bullmq/package-lock.json, installed by `npm ci` into
BENCH_NODE_DIR (run.sh: build-bench/bullmq) or the work directory, again only
when the lock file changed.
"""
import json
import os
import shutil
import subprocess
import time

import latency

HERE = os.path.dirname(os.path.abspath(__file__))
ACCOUNT, SECRET = "bench", "s3cret"
PATH = "/v1/webhooks/ingest/" + ACCOUNT
WAIT_LIST = "bull:postbacks:wait"


def install(b, d):
    """relay.js and its lock file into d, and node_modules by `npm ci` unless
    the same lock file was installed there before."""
    os.makedirs(d, exist_ok=True)
    for name in ("package.json", "package-lock.json", "relay.js"):
        shutil.copy(os.path.join(HERE, "bullmq", name), os.path.join(d, name))
    with open(os.path.join(d, "package-lock.json")) as f:
        lock = f.read()
    stamp = os.path.join(d, "node_modules", ".bench-installed-lock")
    if os.path.exists(stamp) and open(stamp).read() == lock:
        return
    b.log("npm ci (bullmq, ioredis) in %s" % d)
    subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                   cwd=d, check=True, timeout=600, stdout=subprocess.DEVNULL)
    with open(stamp, "w") as f:
        f.write(lock)


class Relay:
    """One `node relay.js` process: the endpoint (listen), the Worker, or both."""

    def __init__(self, b, node_dir, work, redis, name, listen, worker, sink_url):
        self.b = b
        # its output to a file, not a pipe: a pipe nobody reads would stop it
        # once full, if BullMQ or Node ever wrote there
        out = os.path.join(work, name + ".out")
        self.err = open(os.path.join(work, name + ".log"), "ab")
        with open(out, "wb") as f:
            self.proc = b.spawn(["node", os.path.join(node_dir, "relay.js"), "--redis", redis.sock,
                                 "--listen", "1" if listen else "0", "--worker", "1" if worker else "0",
                                 "--sink", sink_url, "--secret", SECRET, "--concurrency", "64"],
                                stdout=f, stderr=self.err, cwd=node_dir)
        ready = []
        for _ in range(1500):
            with open(out) as f:
                ready = [line.split() for line in f if line.startswith(("port ", "worker ready\n"))
                         and line.endswith("\n")]
            if ready or self.proc.poll() is not None:
                break
            time.sleep(0.02)
        if not ready:
            raise RuntimeError("relay.js did not start: " + open(self.err.name).read()[-2000:])
        self.port = int(ready[0][1]) if ready[0][0] == "port" else None

    def stop(self):
        self.b.stop(self.proc)
        self.err.close()


def redis_state(b, redis):
    return {"calls": b.cmdstats(redis), "mem": b.info_sum(redis, "memory", "used_memory"),
            "aof": b.info_sum(redis, "persistence", "aof_current_size"),
            "rewrites": b.info_sum(redis, "persistence", "aof_rewrites")}


def redis_per_event(b, redis, before, events):
    """Commands, script calls, AOF bytes and memory per event since `before`."""
    after = redis_state(b, redis)
    diff = b.cmddiff(before["calls"], after["calls"])
    n = max(1, events)
    return {"cmds": sum(diff.values()) / n,
            "scripts": sum(diff.get(k, 0) for k in ("evalsha", "eval", "fcall")) / n,
            "aof": None if after["rewrites"] != before["rewrites"] else (after["aof"] - before["aof"]) / n,
            "mem": (after["mem"] - before["mem"]) / n}


def run(b, sink_bin, latgen, work, secs):
    """The peer's phases; b is the bench module. Returns its figures."""
    b.log("--- BullMQ peer ---")
    d = os.path.join(work, "bullmq-run")
    os.makedirs(d)
    node_dir = os.environ.get("BENCH_NODE_DIR") or os.path.join(work, "bullmq")
    install(b, node_dir)
    redis = b.Redis(d)
    sink = b.Sink(sink_bin)
    url = "http://127.0.0.1:%d/hook" % sink.ports[0]
    rcpu = lambda: sum(b.cpu_s(pid) for pid in redis.pids())
    res = {}
    procs = []
    try:
        # ingest: the endpoint alone, the jobs stay waiting
        api = Relay(b, node_dir, d, redis, "ingest", True, False, url)
        procs.append(api)
        before = redis_state(b, redis)
        cpu0 = [b.cpu_s(api.proc.pid), rcpu()]
        ing = b.wrk([api], ACCOUNT, SECRET, secs, "i", d)
        cpu1 = [b.cpu_s(api.proc.pid), rcpu()]
        time.sleep(0.5)  # answers in flight when wrk stopped
        n = int(redis.cmd("LLEN", WAIT_LIST))
        per = redis_per_event(b, redis, before, n)
        res.update(ingest_rps=ing["rate"], ingest_p50=ing["p50"], ingest_p99=ing["p99"],
                   ingest_ok=ing["ok"], ingest_bad=ing["other"] + ing["errors"], backlog=n,
                   ingest_cmds=per["cmds"], ingest_scripts=per["scripts"], ingest_aof=per["aof"],
                   mem_per_event=per["mem"],
                   ingest_redis_us=1e6 * (cpu1[1] - cpu0[1]) / max(1, ing["ok"]),
                   ingest_cpu=[(y - x) / ing["secs"] for x, y in zip(cpu0, cpu1)],
                   ingest_rss_mb=b.rss_kb(api.proc.pid, "VmHWM") / 1024.0)
        b.log("bullmq ingest: %d acked (%.0f/s, p99 %.2f ms), %d jobs waiting"
              % (ing["ok"], ing["rate"], ing["p99"], n))
        api.stop()
        procs.remove(api)

        # drain: a process with the Worker, started now
        before = redis_state(b, redis)
        cpu_r0, cpu_s0, t0 = rcpu(), b.cpu_s(sink.proc.pid), time.time()
        relay = Relay(b, node_dir, d, redis, "relay", True, True, url)
        procs.append(relay)
        st, complete = b.wait_delivered(sink, n)
        t1 = st["last_ms"] / 1000.0
        cpu = [b.cpu_s(relay.proc.pid), rcpu() - cpu_r0, b.cpu_s(sink.proc.pid) - cpu_s0]
        delivered = st["unique"]
        per = redis_per_event(b, redis, before, delivered)
        res.update(drain_delivered=delivered, drain_complete=complete, drain_s=t1 - t0,
                   drain_rps=delivered / max(1e-9, t1 - t0), drain_cmds=per["cmds"],
                   drain_scripts=per["scripts"], drain_aof=per["aof"], drain_mem=per["mem"],
                   drain_redis_us=1e6 * cpu[1] / max(1, delivered),
                   drain_cpu=[c / max(1e-9, time.time() - t0) for c in cpu],
                   drain_rss_mb=b.rss_kb(relay.proc.pid, "VmHWM") / 1024.0)
        b.log("bullmq drain: %d of %d delivered in %.1f s (%.0f/s)" % (delivered, n, t1 - t0, res["drain_rps"]))
        lost = max(0, ing["ok"] - delivered)

        # end to end: ingest while the same process delivers
        base = sink.stats()["unique"]
        before = redis_state(b, redis)
        t0 = time.time()
        cpu0 = [b.cpu_s(relay.proc.pid), rcpu(), b.cpu_s(sink.proc.pid)]
        e2e = b.wrk([relay], ACCOUNT, SECRET, secs, "e", d)
        st, complete = b.wait_delivered(sink, base + e2e["ok"])
        cpu1 = [b.cpu_s(relay.proc.pid), rcpu(), b.cpu_s(sink.proc.pid)]
        t1 = st["last_ms"] / 1000.0
        events = st["unique"] - base
        per = redis_per_event(b, redis, before, events)
        res.update(e2e_ingest_rps=e2e["rate"], e2e_events=events, e2e_complete=complete,
                   e2e_rps=events / max(1e-9, t1 - t0), e2e_cmds=per["cmds"],
                   e2e_redis_us=1e6 * (cpu1[1] - cpu0[1]) / max(1, events),
                   e2e_cpu=[(y - x) / max(1e-9, time.time() - t0) for x, y in zip(cpu0, cpu1)],
                   e2e_rss_mb=b.rss_kb(relay.proc.pid, "VmHWM") / 1024.0)
        b.log("bullmq e2e: %d ingested (%.0f/s), delivered at %.0f/s" % (e2e["ok"], e2e["rate"], res["e2e_rps"]))
        lost += max(0, e2e["ok"] - events)

        res["latency"] = latency.run(b, latgen, relay.port, PATH, SECRET, res["e2e_rps"], secs, sink, "b", d)
        lost += sum(r["acked"] - r["delivered"] for r in res["latency"])
        res["rss_mb"] = b.rss_kb(relay.proc.pid, "VmHWM") / 1024.0
        res.update(lost=lost, mismatch=sink.stats()["mismatch"])
    finally:
        for p in procs:
            p.stop()
        sink.stop()
        redis.stop()
    return res


def report(pix, bull, secs):
    """The side-by-side table: pixrelay's first configuration (`pix`, a result
    of bench.run_config) and the BullMQ relay (`bull`, from run())."""
    print()
    print("pixrelay (%d process) and the BullMQ relay (1 Node process, BullMQ %s), same run, same Redis "
          "configuration, wrk script, sink and %d s phases" % (pix["procs"], bullmq_version(), secs))
    print()
    print("| figure | pixrelay | BullMQ | pixrelay / BullMQ |")
    print("|---|---|---|---|")

    def row(name, fmt, key=None, better=""):
        ratio = "%.2f×" % (pix[key] / bull[key]) if key and pix.get(key) and bull.get(key) else "–"
        print("| %s | %s | %s | %s |" % (name, fmt(pix), fmt(bull), ratio + better))

    def num(key, f="%.1f"):
        return lambda r: f % r[key] if r.get(key) is not None else "–"
    lat = latency.FRACTIONS
    row("ingest, acknowledged", lambda r: "%.0f/s, p99 %.2f ms" % (r["ingest_rps"], r["ingest_p99"]), "ingest_rps")
    row("ingest: answers other than 200 (or none)", lambda r: "%d" % r["ingest_bad"])
    row("Redis CPU per ingested event, µs", num("ingest_redis_us"), "ingest_redis_us")
    row("ingest: Redis commands / script calls per event",
        lambda r: "%.2f / %.3f" % (r["ingest_cmds"], r.get("ingest_scripts", r.get("ingest_evalsha"))), "ingest_cmds")
    row("ingest: AOF bytes per event", num("ingest_aof", "%.0f"), "ingest_aof")
    row("Redis memory per retained event, B", num("mem_per_event", "%.0f"), "mem_per_event")
    row("backlog drained", lambda r: "%d in %.1f s: %.0f/s" % (r["drain_delivered"], r["drain_s"], r["drain_rps"]),
        "drain_rps")
    row("Redis CPU per delivered event (drain), µs", num("drain_redis_us"), "drain_redis_us")
    row("drain: Redis commands / script calls per delivered event",
        lambda r: "%.2f / %.3f" % (r["drain_cmds"], r.get("drain_scripts", r.get("drain_evalsha"))), "drain_cmds")
    row("drain: AOF bytes per delivered event", num("drain_aof", "%.0f"), "drain_aof")
    row("end to end (ingest and delivery at once)", lambda r: "%.0f/s (ingest %.0f/s)" % (r["e2e_rps"], r["e2e_ingest_rps"]),
        "e2e_rps")
    row("end to end: Redis CPU per event, µs", num("e2e_redis_us"), "e2e_redis_us")
    row("end to end: Redis commands per event", num("e2e_cmds", "%.2f"), "e2e_cmds")
    row("end to end CPU, relay / redis / sink (1.0 = a core)",
        lambda r: "%s / %.2f / %.2f" % (" + ".join("%.2f" % c for c in r["e2e_cpu"][:-2]), r["e2e_cpu"][-2], r["e2e_cpu"][-1]))
    for i, (_, what) in enumerate(lat):
        print("| latency at %s of its own end to end: offered, p50, p99, max | %s | %s | %s |" % (
            what, latency.cell(pix["latency"][i]), latency.cell(bull["latency"][i]),
            "p99 %.2g×" % (pix["latency"][i]["p99"] / bull["latency"][i]["p99"])
            if pix["latency"][i]["p99"] and bull["latency"][i]["p99"] else "–"))
    row("peak RSS of the relay process (drain, end to end), MiB",
        lambda r: "%.1f, %.1f" % (r["drain_rss_mb"], r["e2e_rss_mb"]), "e2e_rss_mb")
    row("acknowledged events lost / delivered twice with another body",
        lambda r: "%d / %d" % (r["lost"], r.get("differ", 0) + r["mismatch"]))


def bullmq_version():
    try:
        with open(os.path.join(HERE, "bullmq", "package.json")) as f:
            return json.load(f)["dependencies"]["bullmq"]
    except (OSError, ValueError, KeyError):
        return "?"
