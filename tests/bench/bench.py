#!/usr/bin/env python3
"""Throughput benchmark of pixrelay against the raw Redis of the same run.

    python3 tests/bench/bench.py BIN SINK WORKDIR [seconds]

run.sh builds pixrelay and the sink and calls this; see docs/performance.md.
For 1 and then 2 pixrelay processes on one Redis (unix socket, AOF
`appendfsync always`), all on 127.0.0.1, 1 KB notifications, 64 connections:

  raw      redis-benchmark -t rpush -d 1024 -c 64 (rate, p99, Redis CPU per
           RPUSH), and a bare libcurl program posting to the sink (rate, CPU
           per request of the client and of the sink);
  alone    redis-benchmark sending scripts of 12 notifications a call with no
           pixrelay: pixrelay's ingest script, ceiling_writes.lua (the three
           writes every event needs) and ceiling_rpush.lua (one RPUSH each);
           and the next layout, a stream per shard (BENCH_NEXT=0 skips it):
           ceiling_stream.lua and ceiling_stream_order.lua (ingest), then
           ceiling_drain.lua delivering a backlog of that stream, 64 entries a
           call, 2 calls at a time (BENCH_DRAIN_CALLS), three ways (rate, Redis
           CPU, AOF bytes, memory per event);
  ingest   wrk POSTs upstream notifications to API-only processes for
           `seconds`; every 200 is counted, then checked in Redis;
  drain    the backlog this left (every event pending, one destination) is
           delivered by dispatching processes started afterwards, with default
           settings; rate from their start to the last delivery;
  e2e      ingest for `seconds` while the same processes deliver; rate from
           the first ingest to the last delivery;
  latency  latgen (latgen.c, open loop) offers a quarter and then half of the
           end-to-end rate to the same processes, and the time from each
           acknowledgement to the sink's receipt of its postback is taken
           (latency.py);
  endpoints  with BENCH_ENDPOINTS (3) webhook endpoints per account, each
           taking every event (sink paths /ep1, /ep2, ...): the ingest and the
           drain again, each event now 1 + BENCH_ENDPOINTS deliveries; rates,
           Redis commands and CPU per delivery, and their ratios to the
           phases without endpoints above (0 skips them);
and, once, the resident memory of one process holding 10,000 deliveries in
flight (100 destinations that answer after 4 s); then the same phases for a
relay written on BullMQ (peer.py; BENCH_PEER=0 skips it), printed beside
pixrelay's with the ratios pixrelay / BullMQ; then BENCH_ROUNDS (3) rounds
in which a raw RPUSH, pixrelay's ingest and the peer's are measured back to
back, for the ratios of Redis CPU per ingested event with no drift of the
machine's load between them (alternate.py; with the peer only).

With BENCH_REDIS=cluster the Redis is a Redis Cluster on loopback TCP
(tests/e2e/harness.py's Cluster, AOF `appendfsync always`): BENCH_PRIMARIES
primaries (3) with BENCH_REPLICAS replicas each (0); redis-benchmark runs
with --cluster, and every Redis figure is summed over the primaries.
BENCH_WAIT=N starts pixrelay with --redis-wait-replicas N (replicas needed).

Redis work is read from INFO commandstats (commands and EVALSHA calls per
event), AOF size and used_memory. Every acknowledged event must be delivered,
with exactly the body stored (the sink hashes what it got). It prints the
figures as ratios to the raw Redis of the same run. It is a measurement, not
a test: exit 0 however slow; 1 when something could not be run; 3 when an
acknowledged event was lost or delivered with another body.
"""
import http.client
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from harness import Cluster, _read_resp, acct_key, key_slot, new_ulid, shard_of  # noqa: E402
import alternate  # noqa: E402
import latency  # noqa: E402
import peer  # noqa: E402

CONNS = int(os.environ.get("BENCH_CONNECTIONS", "64"))
THREADS = int(os.environ.get("BENCH_THREADS", "2"))
PROCS = [int(x) for x in os.environ.get("BENCH_PROCESSES", "1,2").split(",")]
INFLIGHT = int(os.environ.get("BENCH_INFLIGHT", "10000"))
MODE = os.environ.get("BENCH_REDIS", "single")
PRIMARIES = int(os.environ.get("BENCH_PRIMARIES", "3"))
REPLICAS = int(os.environ.get("BENCH_REPLICAS", "0"))
WAIT = int(os.environ.get("BENCH_WAIT", "0"))
ACCOUNTS = int(os.environ.get("BENCH_ACCOUNTS", "1"))
# extra redis.conf lines for the benchmark's single Redis (BENCH_REDIS_CONF="a b;c d")
REDIS_CONF = "".join(l.strip() + "\n" for l in os.environ.get("BENCH_REDIS_CONF", "").split(";") if l.strip())
STREAM = os.environ.get("BENCH_STREAM", "0") == "1"  # a live stream open during ingest
PEER = os.environ.get("BENCH_PEER", "1") != "0"  # the BullMQ relay's phases (peer.py)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))  # alternating rounds (alternate.py), with the peer
# webhook endpoints per account, each taking every event, in the phases after the main
# ones (run_endpoints); 0 skips them
ENDPOINTS = int(os.environ.get("BENCH_ENDPOINTS", "3"))
PREFIX = "pixrelay:"
LIVE = []


def log(msg):
    sys.stderr.write("[bench %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def fnv(data):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h or 1


class R:
    """RESP over a unix socket or loopback TCP (stdlib only)."""

    def __init__(self, path=None, port=None):
        if path:
            self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.s.settimeout(60)
            self.s.connect(path)
        else:
            self.s = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.f = self.s.makefile("rb")

    @staticmethod
    def enc(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def cmd(self, *args):
        self.s.sendall(self.enc(args))
        return _read_resp(self.f)

    def pipe(self, cmds, chunk=2000):
        out = []
        for i in range(0, len(cmds), chunk):
            part = cmds[i:i + chunk]
            self.s.sendall(b"".join(self.enc(c) for c in part))
            out.extend(_read_resp(self.f) for _ in part)
        return out

    def info(self, section):
        text = self.cmd("INFO", section)
        text = text.decode() if isinstance(text, bytes) else text
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def cmdstats(self, field="calls"):
        calls = {}
        for k, v in self.info("commandstats").items():
            m = re.search(field + r"=(\d+)", v)
            if k.startswith("cmdstat_") and m:
                calls[k[8:]] = int(m.group(1))
        return calls


def evalsha_failed(r):
    """EVALSHA calls of one node that failed or were rejected so far."""
    stats = r.info("commandstats").get("cmdstat_evalsha", "")
    return sum(int(v) for v in re.findall(r"(?:failed|rejected)_calls=(\d+)", stats))


def evalsha_usec(redis):
    """Total microseconds Redis spent in EVALSHA so far."""
    m = re.search(r"usec=(\d+)", redis.info("commandstats").get("cmdstat_evalsha", ""))
    return int(m.group(1)) if m else 0


def cmddiff(before, after):
    return {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)}


def spawn(args, **kw):
    p = subprocess.Popen(args, **kw)
    LIVE.append(p)
    return p


def stop(p, sig=signal.SIGTERM, timeout=20):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)
    if p in LIVE:
        LIVE.remove(p)


def rss_kb(pid, field="VmRSS"):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_s(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


class Redis:
    """One redis-server on a unix socket."""

    def __init__(self, work):
        self.dir = os.path.join(work, "redis")
        os.makedirs(self.dir, exist_ok=True)
        self.sock = os.path.join(self.dir, "redis.sock")
        self.url = "unix://" + self.sock
        with open(os.path.join(self.dir, "redis.conf"), "w") as f:
            # no automatic AOF rewrite: a background fork at a random moment
            # would move the rates and make the AOF bytes per event unreadable
            f.write("port 0\nunixsocket %s\nunixsocketperm 700\ndir %s\nappendonly yes\n"
                    "appendfsync always\nauto-aof-rewrite-percentage 0\nsave \"\"\n"
                    "hash-max-listpack-value 2048\n"
                    "logfile %s/redis.log\n%s"
                    % (self.sock, self.dir, self.dir, REDIS_CONF))
        self.proc = spawn(["redis-server", os.path.join(self.dir, "redis.conf")],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(500):
            try:
                self.r = R(self.sock)
                self.r.cmd("PING")
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def benchmark_args(self):
        return ["-s", self.sock]

    def pids(self):
        return [self.proc.pid]

    def primaries(self):
        return [self.r]

    def cmd(self, *args):
        return self.r.cmd(*args)

    def pipe(self, cmds):
        return self.r.pipe(cmds)

    def stop(self):
        stop(self.proc)


class ClusterRedis:
    """A Redis Cluster on loopback (the harness's), seen as one Redis: Redis
    figures summed over the primaries, commands routed by their key."""

    def __init__(self, work):
        d = os.path.join(work, "redis")
        os.makedirs(d, exist_ok=True)
        self.c = Cluster(d, primaries=PRIMARIES, replicas=REPLICAS)
        self.c.start()
        for n in self.c.nodes:
            LIVE.append(n.proc)
        self.url = self.c.url
        self.conns = {}
        self.refresh()

    def refresh(self):
        self.slots = {}
        for port, ranges in self.c.primaries().items():
            for a, b in ranges:
                for x in range(a, b + 1):
                    self.slots[x] = port
            if port not in self.conns:
                self.conns[port] = R(port=port)

    def benchmark_args(self):
        # redis-benchmark --cluster wants more than one node; with one
        # primary its keys are all in that node's slots anyway
        return (["--cluster"] if PRIMARIES > 1 else []) + ["-h", "127.0.0.1", "-p",
                                                             str(self.c.nodes[0].port)]

    def pids(self):
        return [n.proc.pid for n in self.c.nodes if n.proc]

    def primaries(self):
        return [self.conns[p] for p in sorted(set(self.slots.values()))]

    def node(self, key):
        return self.conns[self.slots[key_slot(key)]]

    def cmd(self, *args):
        if str(args[0]).upper() in ("FLUSHALL", "CONFIG"):
            return [r.cmd(*args) for r in self.primaries()][0]
        return self.node(args[1]).cmd(*args)

    def pipe(self, cmds):
        by = {}
        for i, c in enumerate(cmds):
            by.setdefault(self.slots[key_slot(c[1])], []).append(i)
        out = [None] * len(cmds)
        for port, idx in by.items():
            for i, v in zip(idx, self.conns[port].pipe([cmds[i] for i in idx])):
                out[i] = v
        return out

    def stop(self):
        self.c.stop()


def new_redis(work):
    return ClusterRedis(work) if MODE == "cluster" else Redis(work)


def cmdstats(redis, field="calls"):
    total = {}
    for r in redis.primaries():
        for k, v in r.cmdstats(field).items():
            total[k] = total.get(k, 0) + v
    return total


def info_sum(redis, section, field):
    return sum(int(r.info(section)[field]) for r in redis.primaries())


class Sink:
    def __init__(self, binary, ports=1, delay_ms=0):
        self.proc = spawn([binary, "--ports", str(ports), "--delay-ms", str(delay_ms), "--lat", "1"],
                          stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        self.ports = [int(p) for p in line[1:]]

    def get(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.ports[0], timeout=30)
        c.request("GET", path)
        body = c.getresponse().read()
        c.close()
        return body

    def stats(self):
        return json.loads(self.get("/stats"))

    def dump(self):
        out = {}
        for line in self.get("/dump").decode().splitlines():
            i, h = line.split()
            out[i] = int(h, 16)
        return out

    def stop(self):
        stop(self.proc)


class Pix:
    def __init__(self, binary, work, redis, name, args=()):
        self.log_path = os.path.join(work, name + ".log")
        self.err = open(self.log_path, "ab")
        extra = ["--redis-wait-replicas", str(WAIT)] if WAIT else []
        self.proc = spawn([binary, "serve", "--listen", "127.0.0.1:0", "--redis",
                           redis.url, "--log-level",
                           os.environ.get("BENCH_LOG_LEVEL", "warn")] + extra + list(args),
                          stdout=subprocess.DEVNULL, stderr=self.err)
        self.port = None
        for _ in range(500):
            if self.proc.poll() is not None:
                raise RuntimeError("pixrelay exited: " + open(self.log_path).read()[-2000:])
            out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True).stdout
            m = re.search(r"127\.0\.0\.1:(\d+)\s.*pid=%d," % self.proc.pid, out)
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.02)
        if not self.port:
            raise RuntimeError("pixrelay did not listen")
        for _ in range(500):
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("pixrelay not ready")

    def stop(self):
        stop(self.proc)
        self.err.close()


def cli(binary, redis, *args):
    p = subprocess.run([binary, "--redis", redis.url] + list(args),
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("pixrelay %s: %s" % (" ".join(args), p.stderr))
    return p.stdout


def raw_rpush(redis, secs):
    n = 60000 * secs
    cpu0 = sum(cpu_s(pid) for pid in redis.pids())
    out = subprocess.run(["redis-benchmark"] + redis.benchmark_args() +
                         ["-t", "rpush", "-d", "1024", "-c", str(CONNS), "-n", str(n), "--csv"],
                         capture_output=True, text=True, timeout=600).stdout
    # --cluster prints the nodes first
    lines = out.strip().splitlines()
    lines = lines[next(i for i, line in enumerate(lines) if line.startswith('"test"')):]
    rows = [line.replace('"', "").split(",") for line in lines]
    head, vals = rows[0], rows[-1]
    row = dict(zip(head, vals))
    cpu = sum(cpu_s(pid) for pid in redis.pids()) - cpu0
    for r in redis.primaries():
        r.cmd("FLUSHALL")
    return float(row["rps"]), float(row["p99_latency_ms"]), cpu / n


# Notifications per script call in the ceiling phase: what pixrelay's calls carry at
# saturation (about 0.08-0.1 EVALSHA per ingested event), and the calls in flight that
# 64 waiting connections make of them.
CEILING_BATCH = 12


def ingest_args(p, env, account, notes):
    """One run of arguments to src/store/lua/ingest.lua (its header says what each is)
    in shard prefix `p`, as ingest.c sends them: notifications of one account without a
    charge, each (upstream id, event id, event type, body, order key)."""
    ea = env + "\n" + account
    args = [ea, str(len(notes))]
    for upstream_id, event_id, event_type, body, order in notes:
        args += ["%sup:%s:%s" % (p, account, upstream_id), event_id, order,
                 "%s\n%s\n%s" % (event_id, ea, event_type), body]
    return args


def ingest_ceiling(redis, secs, sink_port, script):
    """What Redis alone does for pixrelay's ingest: redis-benchmark sends `script` (a
    path; src/store/lua/ingest.lua is expanded as pixrelay loads it) with CEILING_BATCH new
    notifications per call in ingest.lua's arguments, CONNS / CEILING_BATCH calls at a
    time; no pixrelay, no HTTP. Returns (events/s, Redis CPU seconds per event), or None
    on a cluster."""
    if MODE == "cluster":
        return None
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
    from embed_scripts import expand
    phase = "alone " + os.path.basename(script)
    script = expand(script).decode()
    r = redis.primaries()[0]
    sha = r.cmd("SCRIPT", "LOAD", script)
    sha = sha.decode() if isinstance(sha, bytes) else sha
    p = "ceiling:{s1}:"
    r.cmd("HSET", p + "acct:sandbox:acct", "postback_url", "http://127.0.0.1:%d/hook" % sink_port)
    body = json.dumps({"x": "a" * 1000})
    # a new upstream id, event id and order key per notification (redis-benchmark puts a
    # random number below -r in each __rand_int__: a few repeats in a million, answered
    # as duplicates)
    args = ingest_args(p, "sandbox", "acct", [("up__rand_int__", "ev__rand_int__", "charge.paid",
                                                body, "ord__rand_int__")] * CEILING_BATCH)
    now = int(time.time() * 1000)
    head = [p + "ingest", p, str(now), "2026-01-01T00:00:00Z", "86400"]
    # one call first: the script must take these arguments (redis-benchmark does not
    # look at its answers)
    first = [a.replace("__rand_int__", "-first%d" % i) for i, a in enumerate(args)]
    one = r.cmd("EVALSHA", sha, "1", *head, *first)
    answers = [x if isinstance(x, bytes) else str(x).encode() for x in one] if isinstance(one, list) else []
    if answers.count(b"relayed") != CEILING_BATCH:
        raise RuntimeError("%s answered %r" % (script[:40], one))
    failed0 = evalsha_failed(r)
    aof0, mem0 = int(r.info("persistence")["aof_current_size"]), int(r.info("memory")["used_memory"])
    rewrites0 = r.info("persistence")["aof_rewrites"]
    prof0 = (cmdstats(redis, "usec"), cmdstats(redis))
    cpu0 = sum(cpu_s(pid) for pid in redis.pids())
    t0 = time.time()
    calls = 1500 * secs
    subprocess.run(["redis-benchmark"] + redis.benchmark_args() +
                   ["-c", str(max(1, CONNS // CEILING_BATCH)), "-n", str(calls),
                    "-r", "2147483647", "-q", "EVALSHA", sha, "1"] + head + args,
                   capture_output=True, text=True, timeout=600, check=True)
    dt = time.time() - t0
    cpu = sum(cpu_s(pid) for pid in redis.pids()) - cpu0
    events = calls * CEILING_BATCH
    # redis-benchmark counts error answers as answers: none may have come
    if evalsha_failed(r) != failed0:
        raise RuntimeError("%s: %d calls failed" % (script[:40], evalsha_failed(r) - failed0))
    aof = (None if r.info("persistence")["aof_rewrites"] != rewrites0 else
           (int(r.info("persistence")["aof_current_size"]) - aof0) / events)
    mem = (int(r.info("memory")["used_memory"]) - mem0) / events
    redis_profile(redis, prof0, events, phase)
    for r in redis.primaries():
        r.cmd("FLUSHALL")
    return events / dt, cpu / events, aof, mem


CEILINGS = [
    ("ceiling", "pixrelay's ingest script", os.path.join(HERE, "..", "..", "src", "store", "lua", "ingest.lua")),
    ("ceiling_writes", "only the three writes every event needs (ceiling_writes.lua)",
     os.path.join(HERE, "ceiling_writes.lua")),
    ("ceiling_rpush", "one RPUSH per notification (ceiling_rpush.lua)",
     os.path.join(HERE, "ceiling_rpush.lua")),
]

# The next layout measured alone (docs/event-layout.md, "Next: a stream per shard, measured
# alone"): what ingest and delivery would cost Redis with a stream per shard. BENCH_NEXT=0
# skips them (the short form in CI does: they take about 10 s).
NEXT = os.environ.get("BENCH_NEXT", "1") != "0"
NEXT_CEILINGS = [
    ("ceiling_stream", "a stream per shard, SET NX GET EX + one XADD (ceiling_stream.lua)",
     os.path.join(HERE, "ceiling_stream.lua")),
    ("ceiling_stream_order", "the same + HSETNX of the charge's order (ceiling_stream_order.lua)",
     os.path.join(HERE, "ceiling_stream_order.lua")),
]
# Entries a drain call leases and settles: what pixrelay's dispatcher leases in one call.
DRAIN_BATCH = 64
DRAIN_CALLS = int(os.environ.get("BENCH_DRAIN_CALLS", "2"))
DRAINS = [
    ("drain_group", "consumer group: XREADGROUP, XACK, HSET done", "group", "0"),
    ("drain_group_order", "the same + HDEL of the charges' orders", "group", "1"),
    ("drain_range", "XRANGE from a cursor, a lease zset: ZADD, ZREM, HSET done", "range", "0"),
]

# A backlog in the stream layout, written fast (not measured): the entries
# ceiling_stream.lua writes, and with ARGV[6] = 1 their charges marked busy.
FILL = """
for i = 1, tonumber(ARGV[1]) do
  local id, order = 'ev' .. ARGV[2] .. '-' .. i, 'ord' .. ARGV[2] .. '-' .. i
  redis.call('XADD', KEYS[1], '*', 'id', id, 'env', 'sandbox', 'account', 'acct',
    'type', 'charge.paid', 'url', ARGV[3], 'order', order, 'created', ARGV[4], 'body', ARGV[5])
  if ARGV[6] == '1' then redis.call('HSET', KEYS[2], order, id) end
end
return redis.call('XLEN', KEYS[1])
"""


def drain_ceiling(redis, secs, sink_port, mode, order):
    """What Redis alone does to deliver a backlog in the stream layout: a backlog of 1 KB
    events in one shard's stream (FILL), then redis-benchmark sends ceiling_drain.lua, each
    call leasing and settling DRAIN_BATCH entries, 2 calls at a time (a dispatcher's
    round trips); no pixrelay, no HTTP. Returns (events/s, Redis CPU seconds, AOF bytes,
    change of Redis memory in bytes, per delivered event), or None on a cluster."""
    if MODE == "cluster":
        return None
    r = redis.primaries()[0]
    p = "ceiling:{s1}:"
    keys = [p + "s", p + "done", p + "busy", p + "lease", p + "cursor"]
    body = json.dumps({"x": "a" * 1000})
    now = str(int(time.time() * 1000))
    calls = 300 * secs
    backlog = calls * DRAIN_BATCH
    for k in range(0, backlog, 1000):
        r.cmd("EVAL", FILL, "2", keys[0], keys[2], str(min(1000, backlog - k)), str(k),
              "http://127.0.0.1:%d/hook" % sink_port, now, body, order)
    if mode == "group":
        r.cmd("XGROUP", "CREATE", keys[0], "g", "0")
    with open(os.path.join(HERE, "ceiling_drain.lua")) as f:
        sha = r.cmd("SCRIPT", "LOAD", f.read())
    sha = sha.decode() if isinstance(sha, bytes) else sha
    args = ["g", "c", str(DRAIN_BATCH), "30000", mode, order]
    failed0 = evalsha_failed(r)
    aof0, mem0 = int(r.info("persistence")["aof_current_size"]), int(r.info("memory")["used_memory"])
    rewrites0 = r.info("persistence")["aof_rewrites"]
    prof0 = (cmdstats(redis, "usec"), cmdstats(redis))
    cpu0 = sum(cpu_s(pid) for pid in redis.pids())
    t0 = time.time()
    subprocess.run(["redis-benchmark"] + redis.benchmark_args() +
                   ["-c", str(DRAIN_CALLS), "-n", str(calls), "-q", "EVALSHA", sha, str(len(keys))] + keys + args,
                   capture_output=True, text=True, timeout=600, check=True)
    dt = time.time() - t0
    cpu = sum(cpu_s(pid) for pid in redis.pids()) - cpu0
    if evalsha_failed(r) != failed0:
        raise RuntimeError("ceiling_drain.lua: %d calls failed" % (evalsha_failed(r) - failed0))
    # every entry settled once, none left leased, none behind
    done = int(r.cmd("HLEN", keys[1]))
    leased = (int(r.cmd("XPENDING", keys[0], "g")[0]) if mode == "group" else int(r.cmd("ZCARD", keys[3])))
    busy = int(r.cmd("HLEN", keys[2]))
    if done != backlog or leased or busy:
        raise RuntimeError("ceiling_drain.lua %s: %d of %d settled, %d leased, %d busy left"
                           % (mode, done, backlog, leased, busy))
    aof = (None if r.info("persistence")["aof_rewrites"] != rewrites0 else
           (int(r.info("persistence")["aof_current_size"]) - aof0) / backlog)
    mem = (int(r.info("memory")["used_memory"]) - mem0) / backlog
    redis_profile(redis, prof0, backlog, "alone drain %s%s" % (mode, " order" if order == "1" else ""))
    r.cmd("FLUSHALL")
    return backlog / dt, cpu / backlog, aof, mem


def wrk(pixes, account, secret, secs, tag, work):
    """Ingest for `secs` over CONNS connections split across the processes."""
    procs, outs = [], []
    per = max(1, CONNS // len(pixes))
    for i, px in enumerate(pixes):
        out = os.path.join(work, "wrk-%s-%d" % (tag, i))
        env = dict(os.environ, BENCH_ACCOUNT=account, BENCH_SECRET=secret,
                   BENCH_TAG="%s%d" % (tag, i), BENCH_OUT=out)
        procs.append(spawn(["wrk", "-t", str(max(1, THREADS // len(pixes))), "-c", str(per),
                            "-d", "%ds" % secs, "--timeout", "10s", "-s",
                            os.path.join(HERE, "ingest.lua"),
                            "http://127.0.0.1:%d" % px.port],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        outs.append(out)
    for p in procs:
        p.wait(secs + 60)
        LIVE.remove(p)
    res = {"ok": 0, "other": 0, "errors": 0, "p99": 0.0, "p50": 0.0, "secs": 0.0, "acked": []}
    for out in outs:
        kv = dict(line.split("=", 1) for line in open(out).read().split())
        res["ok"] += int(kv["ok"])
        res["other"] += int(kv["other"])
        res["errors"] += sum(int(kv[k]) for k in kv if k.startswith("errors_"))
        res["p99"] = max(res["p99"], float(kv["lat_p99_ms"]))
        res["p50"] = max(res["p50"], float(kv["lat_p50_ms"]))
        res["secs"] = max(res["secs"], float(kv["duration_s"]))
        res["acked"] += open(out + ".acked").read().split()
    res["rate"] = res["ok"] / res["secs"]
    return res


def wait_delivered(sink, n, stall_s=15, limit_s=600):
    last, last_change, start = -1, time.time(), time.time()
    while True:
        st = sink.stats()
        if st["unique"] >= n:
            return st, True
        if st["unique"] != last:
            last, last_change = st["unique"], time.time()
        if time.time() - last_change > stall_s or time.time() - start > limit_s:
            return st, False
        time.sleep(0.05)


def _text(v):
    return v.decode(errors="replace") if isinstance(v, bytes) else v


def stored(redis, acked):
    """{id: (state, body)} of each acknowledged event as Redis holds it: its
    own hash, or (layout 3, docs/event-layout.md) its entry in its shard's
    stream, read whole: 'pending' unless leased or settled since."""
    out, shards = {}, set()
    hashes = redis.pipe([("HMGET", "%s{s%d}:e:%s" % (PREFIX, shard_of(e), e), "state", "body")
                         for e in acked])
    for e, h in zip(acked, hashes):
        if h and h[0] is not None:
            out[e] = (_text(h[0]), h[1])
        else:
            shards.add(shard_of(e))
    for k in sorted(shards):
        start = "-"
        while True:
            page = redis.pipe([("XRANGE", "%s{s%d}:s" % (PREFIX, k), start, "+", "COUNT", 5000)])[0]
            if not page:
                break
            for sid, f in page:
                # fields m (order, queue, id, ...: lib/event.lua) and b (the body)
                out.setdefault(_text(f[1]).split("\n")[2], ("pending", f[3]))
            start = "(" + _text(page[-1][0])
    return out


def check_exact(redis, sink, acked):
    """Every acknowledged event delivered, with the body stored. The sink may
    have counted enough events before the last acknowledged ones came (those
    answered after wrk stopped are delivered too): wait while it makes
    progress."""
    got, last, until = sink.dump(), -1, time.time() + 15
    while time.time() < until and any(e not in got for e in acked):
        if len(got) != last:
            last, until = len(got), time.time() + 15
        time.sleep(0.2)
        got = sink.dump()
    held = stored(redis, acked)
    bodies = [held.get(e, (None, None))[1] for e in acked]
    missing = sum(1 for e in acked if e not in got)
    differ = sum(1 for e, b in zip(acked, bodies)
                 if e in got and (b is None or fnv(b if isinstance(b, bytes) else b.encode()) != got[e]))
    return missing, differ


def redis_profile(redis, before, events, phase):
    """BENCH_PROFILE=1: Redis' time per command (INFO commandstats `usec`,
    commands run inside a script counted in the script's time too) since
    `before` = (cmdstats(redis, "usec"), cmdstats(redis)), per event and per call."""
    if not os.environ.get("BENCH_PROFILE"):
        return
    usec = cmddiff(before[0], cmdstats(redis, "usec"))
    calls = cmddiff(before[1], cmdstats(redis))
    for k in sorted(usec, key=usec.get, reverse=True):
        log("profile %s redis %s: %.2f us/event, %.3f calls/event, %.2f us/call"
            % (phase, k, usec[k] / max(1, events), calls.get(k, 0) / max(1, events),
               usec[k] / max(1, calls.get(k, 1))))


def profile(procs, phase):
    """BENCH_PROFILE=1: the processes' Redis round trips and delivery times
    (their /metrics histograms, cumulative since start) as mean and count."""
    if not os.environ.get("BENCH_PROFILE"):
        return
    for p in procs:
        c = http.client.HTTPConnection("127.0.0.1", p.port, timeout=5)
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        sums = {}
        for line in text.splitlines():
            m = re.match(r'(pixrelay_(?:redis_command|delivery)_duration_seconds)_(sum|count)\{?([^}]*)\}? (\S+)', line)
            if m:
                sums.setdefault((m.group(1), m.group(3)), {})[m.group(2)] = float(m.group(4))
        for (name, labels), v in sorted(sums.items()):
            if v.get("count"):
                log("profile %s pid %d: %s{%s} n=%d mean %.2f ms" % (phase, p.proc.pid, name.split("_")[1],
                    labels, v["count"], 1000 * v["sum"] / v["count"]))


def run_config(binary, sink_bin, work, nproc, secs, results):
    log("--- %d process(es) ---" % nproc)
    d = os.path.join(work, "p%d" % nproc)
    os.makedirs(d)
    redis = new_redis(d)
    sink = Sink(sink_bin)
    res = {"procs": nproc}
    try:
        res["raw_rps"], res["raw_p99"], res["raw_cpu"] = raw_rpush(redis, max(3, secs // 2))
        for name, _, script in CEILINGS + (NEXT_CEILINGS if NEXT else []):
            res[name] = ingest_ceiling(redis, max(3, secs // 2), sink.ports[0], script)
        for name, _, mode, order in (DRAINS if NEXT else []):
            res[name] = drain_ceiling(redis, max(3, secs // 2), sink.ports[0], mode, order)
        # raw HTTP: libcurl multi on libevent, 64 at a time, to the same sink
        # (its CPU and the sink's per request: what a postback costs with no Redis)
        ru0, sink0 = resource.getrusage(resource.RUSAGE_CHILDREN), cpu_s(sink.proc.pid)
        out = subprocess.run([os.path.join(os.path.dirname(sink_bin), "rawpost"),
                              "http://127.0.0.1:%d/raw" % sink.ports[0], str(CONNS), "40000"],
                             capture_output=True, text=True, timeout=300).stdout
        ru1, sink1 = resource.getrusage(resource.RUSAGE_CHILDREN), cpu_s(sink.proc.pid)
        res["raw_http"] = float(re.search(r"rate=([0-9.]+)", out).group(1))
        res["raw_http_cpu"] = ((ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime) / 40000,
                               (sink1 - sink0) / 40000)
        log("raw HTTP POST (libcurl multi, %d at a time): %.0f/s, CPU per request %.1f us client + %.1f us sink"
            % (CONNS, res["raw_http"], 1e6 * res["raw_http_cpu"][0], 1e6 * res["raw_http_cpu"][1]))
        log("raw RPUSH -d 1024 -c %d: %.0f/s, p99 %.2f ms, Redis CPU %.1f us each"
            % (CONNS, res["raw_rps"], res["raw_p99"], 1e6 * res["raw_cpu"]))
        for name, what, _ in CEILINGS + (NEXT_CEILINGS if NEXT else []):
            if res[name]:
                log("Redis alone running %s (%d per call): %.0f/s, Redis CPU %.1f us, %s AOF bytes, "
                    "%.0f B of memory per event" % (what, CEILING_BATCH, res[name][0], 1e6 * res[name][1],
                                                   "%.0f" % res[name][2] if res[name][2] is not None
                                                   else "–", res[name][3]))
        for name, what, _, _ in (DRAINS if NEXT else []):
            if res[name]:
                log("Redis alone draining a stream, %d per call, %s: %.0f/s, Redis CPU %.1f us, %s AOF bytes, "
                    "%+.0f B of memory per delivered event" % (DRAIN_BATCH, what, res[name][0], 1e6 * res[name][1],
                                                               "%.0f" % res[name][2] if res[name][2] is not None
                                                               else "–", res[name][3]))
        init = json.loads(cli(binary, redis, "init", "--json"))
        account = init["sandbox"]["account"]
        secret = json.loads(cli(binary, redis, "secrets", "--env", "sandbox", "--json"))["ingestSecret"]
        cli(binary, redis, "account", "set", "--env", "sandbox", "--postback-url",
            "http://127.0.0.1:%d/hook" % sink.ports[0])
        accounts = [account]
        for k in range(1, ACCOUNTS):
            # more accounts, one shard each after the platform's, with its secret
            acct = new_ulid((shard_of(account) + k) % 16)
            redis.cmd("HSET", acct_key("sandbox", acct), "id", acct, "env", "sandbox",
                      "kind", "business", "status", "ACTIVE", "ingest_secret", secret,
                      "signing_secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                      "postback_url", "http://127.0.0.1:%d/hook" % sink.ports[0], "balance", "0")
            accounts.append(acct)
        account = ",".join(accounts)

        # ingest: API-only processes, the events stay pending
        api = [Pix(binary, d, redis, "api%d" % i, ["--dispatch", "0"]) for i in range(nproc)]
        stream = None
        if STREAM:
            # GET /v1/events/stream of the account, read by curl, for the whole phase
            key = json.loads(cli(binary, redis, "keys", "create", "--env", "sandbox",
                                 "--account", accounts[0], "--json"))["key"]
            stream_out = os.path.join(d, "stream.txt")
            stream = spawn(["curl", "-sN", "-o", stream_out, "-H", "Authorization: Bearer " + key,
                            "http://127.0.0.1:%d/v1/events/stream" % api[0].port])
            time.sleep(1)
        usec0 = sum(evalsha_usec(r) for r in redis.primaries())
        before, mem0 = cmdstats(redis), info_sum(redis, "memory", "used_memory")
        prof0 = (cmdstats(redis, "usec"), before)
        aof0 = info_sum(redis, "persistence", "aof_current_size")
        rewrites0 = info_sum(redis, "persistence", "aof_rewrites")
        rcpu = lambda: sum(cpu_s(pid) for pid in redis.pids())
        cpu0 = [cpu_s(p.proc.pid) for p in api] + [rcpu()]
        ing = wrk(api, account, secret, secs, "i", d)
        cpu1 = [cpu_s(p.proc.pid) for p in api] + [rcpu()]
        time.sleep(0.5)  # answers in flight when wrk stopped
        diff = cmddiff(before, cmdstats(redis))
        n_events = sum(int(redis.cmd("ZCARD", "%s{s%d}:a:%s" % (PREFIX, shard_of(a), a)))
                       for a in accounts)
        redis_profile(redis, prof0, n_events, "ingest")
        res["ingest_script_us"] = ((sum(evalsha_usec(r) for r in redis.primaries()) - usec0)
                                   / max(1, diff.get("evalsha", 0)))
        if stream:
            time.sleep(1)
            stop(stream)
            with open(stream_out, errors="replace") as f:
                res["stream_events"] = len({line for line in f if line.startswith("id: ")})
        res.update(ingest_rps=ing["rate"], ingest_p50=ing["p50"], ingest_p99=ing["p99"],
                   ingest_ok=ing["ok"], ingest_bad=ing["other"] + ing["errors"],
                   ingest_redis_us=1e6 * (cpu1[-1] - cpu0[-1]) / max(1, ing["ok"]),
                   ingest_cmds=sum(diff.values()) / max(1, n_events),
                   ingest_evalsha=diff.get("evalsha", 0) / max(1, n_events),
                   # an AOF rewrite during the phase replaces the file: no figure then
                   ingest_aof=(None if info_sum(redis, "persistence", "aof_rewrites") != rewrites0 else
                               (info_sum(redis, "persistence", "aof_current_size") - aof0) / max(1, n_events)),
                   mem_per_event=(info_sum(redis, "memory", "used_memory") - mem0) / max(1, n_events),
                   ingest_cpu=[(b - a) / ing["secs"] for a, b in zip(cpu0, cpu1)])
        acked = ing["acked"]
        held = stored(redis, acked)
        res["ingest_stored"] = sum(1 for e in acked if held.get(e, ("",))[0] == "pending")
        log("ingest: %d acked in %.1f s (%.0f/s, p99 %.2f ms), %d stored pending, %d events in Redis"
            % (ing["ok"], ing["secs"], ing["rate"], ing["p99"], res["ingest_stored"], n_events))
        for p in api:
            p.stop()

        # drain: the backlog, by dispatching processes started now
        before = cmdstats(redis)
        prof0 = (cmdstats(redis, "usec"), before)
        aof0 = info_sum(redis, "persistence", "aof_current_size")
        rewrites0 = info_sum(redis, "persistence", "aof_rewrites")
        mem0 = info_sum(redis, "memory", "used_memory")
        t0 = time.time()
        disp = [Pix(binary, d, redis, "disp%d" % i) for i in range(nproc)]
        cpu0 = [cpu_s(p.proc.pid) for p in disp] + [rcpu(), cpu_s(sink.proc.pid)]
        st, complete = wait_delivered(sink, n_events)
        cpu1 = [cpu_s(p.proc.pid) for p in disp] + [rcpu(), cpu_s(sink.proc.pid)]
        t1 = st["last_ms"] / 1000.0
        diff = cmddiff(before, cmdstats(redis))
        delivered = st["unique"]
        res.update(backlog=n_events, drain_delivered=delivered, drain_complete=complete,
                   drain_s=t1 - t0, drain_rps=delivered / max(1e-9, t1 - t0),
                   drain_cmds=sum(diff.values()) / max(1, delivered),
                   drain_evalsha=diff.get("evalsha", 0) / max(1, delivered),
                   drain_aof=(None if info_sum(redis, "persistence", "aof_rewrites") != rewrites0 else
                              (info_sum(redis, "persistence", "aof_current_size") - aof0) / max(1, delivered)),
                   drain_mem=(info_sum(redis, "memory", "used_memory") - mem0) / max(1, delivered),
                   drain_redis_us=1e6 * (cpu1[-2] - cpu0[-2]) / max(1, delivered),
                   drain_px_us=1e6 * sum(b - a for a, b in zip(cpu0[:-2], cpu1[:-2])) / max(1, delivered),
                   drain_rss_mb=max(rss_kb(p.proc.pid, "VmHWM") for p in disp) / 1024.0,
                   drain_cpu=[(b - a) / max(1e-9, time.time() - t0) for a, b in zip(cpu0, cpu1)])
        log("drain: %d of %d delivered in %.1f s (%.0f/s)" % (delivered, n_events, t1 - t0, res["drain_rps"]))
        profile(disp, "drain")
        redis_profile(redis, prof0, delivered, "drain")
        missing, differ = check_exact(redis, sink, acked)
        res.update(lost=missing, differ=differ)

        # end to end: ingest while the same processes deliver
        base = sink.stats()["unique"]
        prof0 = (cmdstats(redis, "usec"), cmdstats(redis))
        t0 = time.time()
        cpu0 = [cpu_s(p.proc.pid) for p in disp] + [rcpu(), cpu_s(sink.proc.pid)]
        e2e = wrk(disp, account, secret, secs, "e", d)
        st, complete = wait_delivered(sink, base + e2e["ok"])
        cpu1 = [cpu_s(p.proc.pid) for p in disp] + [rcpu(), cpu_s(sink.proc.pid)]
        t1 = st["last_ms"] / 1000.0
        res.update(e2e_ingest_rps=e2e["rate"], e2e_events=st["unique"] - base,
                   e2e_complete=complete, e2e_rps=(st["unique"] - base) / max(1e-9, t1 - t0),
                   e2e_rss_mb=max(rss_kb(p.proc.pid, "VmHWM") for p in disp) / 1024.0,
                   e2e_cpu=[(b - a) / max(1e-9, time.time() - t0) for a, b in zip(cpu0, cpu1)],
                   e2e_redis_us=1e6 * (cpu1[-2] - cpu0[-2]) / max(1, st["unique"] - base),
                   e2e_cmds=sum(cmddiff(prof0[1], cmdstats(redis)).values()) / max(1, st["unique"] - base))
        missing, differ = check_exact(redis, sink, e2e["acked"])
        res["lost"] += missing
        res["differ"] += differ
        log("e2e: %d ingested (%.0f/s), delivered at %.0f/s" % (e2e["ok"], e2e["rate"], res["e2e_rps"]))
        profile(disp, "e2e")
        redis_profile(redis, prof0, st["unique"] - base, "e2e")

        # latency: an open-loop load of a quarter and half of that end-to-end rate
        res["latency"] = latency.run(sys.modules[__name__], os.path.join(os.path.dirname(sink_bin), "latgen"),
                                     disp[0].port, "/v1/webhooks/ingest/" + accounts[0], secret,
                                     res["e2e_rps"], secs, sink, "l%d" % nproc, d)
        res["lost"] += sum(r["acked"] - r["delivered"] for r in res["latency"])
        res["mismatch"] = sink.stats()["mismatch"]
        for p in disp:
            p.stop()
        if ENDPOINTS:
            run_endpoints(binary, d, redis, sink, accounts, account, secret, nproc, secs, res)
        # the raw RPUSH again, at the end: this machine's CPU time per command moves by a
        # fifth within minutes, so the ratios use the mean of both, and both are printed
        first = (res["raw_rps"], res["raw_p99"], res["raw_cpu"])
        last = raw_rpush(redis, max(3, secs // 2))
        res["raw_samples"] = (first, last)
        res["raw_rps"], res["raw_p99"], res["raw_cpu"] = [(a + b) / 2 for a, b in zip(first, last)]
        log("raw RPUSH again: %.0f/s, p99 %.2f ms, Redis CPU %.1f us each" % (
            last[0], last[1], 1e6 * last[2]))
    finally:
        sink.stop()
        redis.stop()
    results.append(res)


def run_endpoints(binary, d, redis, sink, accounts, account, secret, nproc, secs, res):
    """The phases with ENDPOINTS webhook endpoints per account, each taking every event
    (no filter) at its own path of the sink: ingest for `secs` by API-only processes,
    then the backlog delivered by dispatching processes started afterwards, every
    delivery checked (each event at its postbackUrl and at each endpoint, with the body
    stored). Adds to `res` the figures with the prefix ep_."""
    for a in accounts:
        for k in range(1, ENDPOINTS + 1):
            cli(binary, redis, "endpoints", "create", "--account", a, "--url",
                "http://127.0.0.1:%d/ep%d" % (sink.ports[0], k), "--json")
    per = 1 + ENDPOINTS  # deliveries per event
    listed = lambda: sum(int(redis.cmd("ZCARD", "%s{s%d}:a:%s" % (PREFIX, shard_of(a), a)))
                         for a in accounts)
    events0 = listed()
    api = [Pix(binary, d, redis, "ep-api%d" % i, ["--dispatch", "0"]) for i in range(nproc)]
    before, rcpu0 = cmdstats(redis), sum(cpu_s(pid) for pid in redis.pids())
    prof0 = (cmdstats(redis, "usec"), before)
    ing = wrk(api, account, secret, secs, "n", d)
    time.sleep(0.5)  # answers in flight when wrk stopped
    rcpu1 = sum(cpu_s(pid) for pid in redis.pids())
    diff = cmddiff(before, cmdstats(redis))
    redis_profile(redis, prof0, ing["ok"], "endpoints ingest")
    for p in api:
        p.stop()
    res.update(ep_ingest_rps=ing["rate"], ep_ingest_p99=ing["p99"],
               ep_ingest_redis_us=1e6 * (rcpu1 - rcpu0) / max(1, ing["ok"]),
               ep_ingest_cmds=sum(diff.values()) / max(1, ing["ok"]))
    log("endpoints ingest: %d acked (%.0f/s, p99 %.2f ms), %d endpoints per account"
        % (ing["ok"], ing["rate"], ing["p99"], ENDPOINTS))
    base = sink.stats()["unique"]
    # the events written: those acknowledged, and those answered after wrk stopped
    n_events = listed() - events0
    want = base + n_events * per
    before = cmdstats(redis)
    prof0 = (cmdstats(redis, "usec"), before)
    t0 = time.time()
    disp = [Pix(binary, d, redis, "ep-disp%d" % i) for i in range(nproc)]
    cpu0 = [cpu_s(p.proc.pid) for p in disp] + [sum(cpu_s(pid) for pid in redis.pids())]
    st, complete = wait_delivered(sink, want)
    cpu1 = [cpu_s(p.proc.pid) for p in disp] + [sum(cpu_s(pid) for pid in redis.pids())]
    t1 = st["last_ms"] / 1000.0
    delivered = st["unique"] - base
    diff = cmddiff(before, cmdstats(redis))
    res.update(ep_backlog=n_events * per, ep_delivered=delivered, ep_complete=complete,
               ep_drain_s=t1 - t0, ep_drain_rps=delivered / max(1e-9, t1 - t0),
               ep_drain_cmds=sum(diff.values()) / max(1, delivered),
               ep_drain_evalsha=diff.get("evalsha", 0) / max(1, delivered),
               ep_drain_redis_us=1e6 * (cpu1[-1] - cpu0[-1]) / max(1, delivered),
               ep_drain_px_us=1e6 * sum(b - a for a, b in zip(cpu0[:-1], cpu1[:-1])) / max(1, delivered),
               ep_drain_rss_mb=max(rss_kb(p.proc.pid, "VmHWM") for p in disp) / 1024.0)
    log("endpoints drain: %d of %d deliveries in %.1f s (%.0f/s)"
        % (delivered, n_events * per, t1 - t0, res["ep_drain_rps"]))
    profile(disp, "endpoints drain")
    redis_profile(redis, prof0, delivered, "endpoints drain")
    for p in disp:
        p.stop()
    # every delivery made once, with the body stored: at the postbackUrl and each endpoint
    got, held = sink.dump(), stored(redis, ing["acked"])
    missing = differ = 0
    for e in ing["acked"]:
        body = held.get(e, (None, None))[1]
        h = fnv(body if isinstance(body, bytes) else body.encode()) if body is not None else None
        for k in [e] + ["%s@/ep%d" % (e, i) for i in range(1, ENDPOINTS + 1)]:
            if k not in got:
                missing += 1
            elif got[k] != h:
                differ += 1
    res["lost"] += missing
    res["differ"] += differ
    res["ep_lost"], res["ep_differ"] = missing, differ


def run_inflight(binary, sink_bin, work):
    """Resident memory of one process holding INFLIGHT deliveries."""
    log("--- %d deliveries in flight ---" % INFLIGHT)
    d = os.path.join(work, "inflight")
    os.makedirs(d)
    redis = new_redis(d)
    hosts = 100
    sink = Sink(sink_bin, ports=hosts, delay_ms=4000)
    try:
        cli(binary, redis, "init")
        per = (INFLIGHT + hosts - 1) // hosts
        # the events first (an API-only process), then one process delivers them all at once
        api = Pix(binary, d, redis, "inflight-api", ["--dispatch", "0"])
        pad = "x" * 800
        conns = {}
        for h, port in enumerate(sink.ports):
            acct = new_ulid(h % 16)
            redis.cmd("HSET", acct_key("sandbox", acct), "id", acct, "env", "sandbox",
                        "kind", "business", "status", "ACTIVE", "ingest_secret", "s3cret",
                        "signing_secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                        "postback_url", "http://127.0.0.1:%d/hook" % port, "balance", "0")
            conns[acct] = http.client.HTTPConnection("127.0.0.1", api.port, timeout=30)
        for i in range(per):
            for acct, c in conns.items():
                body = json.dumps({"id": "up-%s-%d" % (acct, i), "event": "EVENT:CHARGE_PAID",
                                   "data": {"id": "ch-%s-%d" % (acct, i), "note": pad}})
                c.request("POST", "/v1/webhooks/ingest/" + acct, body=body,
                          headers={"signature": "s3cret", "Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                if r.status != 200:
                    raise RuntimeError("ingest: %d" % r.status)
        api.stop()
        px = Pix(binary, d, redis, "inflight",
                 ["--delivery-concurrency", str(INFLIGHT), "--delivery-per-host", str(per),
                  "--delivery-per-host-max", str(per), "--delivery-per-account", str(per),
                  "--delivery-sandbox-share", "100", "--delivery-timeout-ms", "30000"])
        rss0 = rss_kb(px.proc.pid)
        peak, held = 0, 0
        deadline = time.time() + 30
        while time.time() < deadline:
            held = max(held, sink.stats()["inflight"])
            peak = max(peak, rss_kb(px.proc.pid))
            if held >= INFLIGHT * 0.98:
                time.sleep(0.5)
                peak = max(peak, rss_kb(px.proc.pid))
                break
            time.sleep(0.1)
        px.stop()
        return {"inflight": held, "rss0_mb": rss0 / 1024.0, "rss_mb": peak / 1024.0}
    finally:
        sink.stop()
        redis.stop()


def machine():
    out = {}
    out["cpus"] = os.cpu_count()
    with open("/proc/cpuinfo") as f:
        m = re.search(r"model name\s*:\s*(.*)", f.read())
        out["cpu"] = m.group(1) if m else "?"
    out["load"] = open("/proc/loadavg").read().split()[:3]
    return out


def main():
    binary, sink_bin, work = sys.argv[1:4]
    secs = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[1:] * 2)
    results = []
    m = machine()
    log("machine: %d cpus (%s), load %s" % (m["cpus"], m["cpu"], " ".join(m["load"])))
    bull, bull_err, mem = None, None, None
    rounds, rounds_err = None, None
    try:
        for k, n in enumerate(PROCS):
            run_config(binary, sink_bin, work, n, secs, results)
            # the peer right after the first configuration, the one it is compared
            # with: the machine's load moves within minutes, so the closer the better
            if k == 0 and PEER:
                try:
                    bull = peer.run(sys.modules[__name__], sink_bin,
                                    os.path.join(os.path.dirname(sink_bin), "latgen"), work, secs)
                except (OSError, RuntimeError, ValueError, KeyError, subprocess.SubprocessError) as e:
                    bull_err = "%s: %s" % (type(e).__name__, e)
                    log("BullMQ peer failed: " + bull_err)
                if bull and ROUNDS > 0 and MODE != "cluster":
                    try:
                        rounds = alternate.run(sys.modules[__name__], binary, sink_bin, work, ROUNDS,
                                               max(3, secs // 2))
                    except (OSError, RuntimeError, ValueError, KeyError, subprocess.SubprocessError) as e:
                        rounds_err = "%s: %s" % (type(e).__name__, e)
                        log("alternating rounds failed: " + rounds_err)
        mem = run_inflight(binary, sink_bin, work) if INFLIGHT else None
    finally:
        for p in list(LIVE):
            stop(p, signal.SIGKILL, 5)

    print()
    print("pixrelay benchmark: %d s phases, %d connections, 1 KB events, AOF appendfsync always"
          % (secs, CONNS))
    print("redis: %s; %d account(s)%s" % (
        "one redis-server, unix socket" if MODE != "cluster" else
        "a Redis Cluster of %d primaries with %d replica(s) each, loopback TCP" % (PRIMARIES, REPLICAS),
        ACCOUNTS, "; pixrelay --redis-wait-replicas %d" % WAIT if WAIT else ""))
    print("machine: %d cpus (%s), load average before: %s" % (m["cpus"], m["cpu"], " ".join(m["load"])))
    print()
    print("| figure | " + " | ".join("%d process%s" % (r["procs"], "es" if r["procs"] > 1 else "")
                                       for r in results) + " | target |")
    print("|---|" + "---|" * len(results) + "---|")

    def row(name, fmt, target=""):
        print("| %s | %s | %s |" % (name, " | ".join(fmt(r) for r in results), target))

    def vs_bull(fmt):
        # a ratio to the BullMQ relay of this run, or a dash when it did not run
        return (lambda r: fmt(r, bull)) if bull else (lambda r: "–")

    def bull_row(name, fmt, target=""):
        # a row of ratios to the BullMQ relay, printed when it ran
        if bull:
            row(name, vs_bull(fmt), target)
    raw_us = lambda r: 1e6 * r["raw_cpu"]
    row("raw Redis RPUSH (redis-benchmark -d 1024 -c %d)" % CONNS,
        lambda r: "%.0f/s, p99 %.2f ms, Redis CPU %.1f µs each (the mean of %s)" % (
            r["raw_rps"], r["raw_p99"], 1e6 * r["raw_cpu"], " and ".join(
                "%.0f/s, %.1f µs" % (x[0], 1e6 * x[2]) for x in r["raw_samples"])))
    row("ingest, acknowledged", lambda r: "%.0f/s, p50 %.2f ms, p99 %.2f ms" % (r["ingest_rps"], r["ingest_p50"], r["ingest_p99"]))
    row("**ingest / raw**", lambda r: "**%.2f×**" % (r["ingest_rps"] / r["raw_rps"]), "≥ 0.5×")
    bull_row("**ingest / BullMQ**", lambda r, b: "**%.2f×**" % (r["ingest_rps"] / b["ingest_rps"]), "≥ 2×")
    alone = lambda r, n: "%.0f/s = %.2f× raw, Redis CPU %.1f µs each" % (
        r[n][0], r[n][0] / r["raw_rps"], 1e6 * r[n][1]) if r[n] else "–"
    for name, what, _ in CEILINGS + (NEXT_CEILINGS if NEXT else []):
        row("Redis alone, %d notifications a call (no pixrelay, no HTTP): %s" % (CEILING_BATCH, what),
            lambda r, n=name: alone(r, n))
    # the next layout's figures, as ratios: a, b are names of ceilings or DRAINS, or a figure
    ratios = lambda r, names, to: ", ".join(
        "%.2f×" % (r[n][1] / to(r)) if r[n] else "–" for n in names)
    nexts = [n for n, _, _ in NEXT_CEILINGS]
    drains = [n for n, _, _, _ in DRAINS]
    cell = lambda v, fmt: fmt % v if v is not None else "–"
    if NEXT:
        row("a stream per shard alone, Redis CPU per ingested event / raw RPUSH's: SET + XADD, + HSETNX",
            lambda r: ratios(r, nexts, lambda r: r["raw_cpu"]), "≤ 3×")
        row("a stream per shard alone / pixrelay's ingest script alone: rate; Redis CPU per event",
            lambda r: "; ".join((", ".join("%.2f×" % (r[n][0] / r["ceiling"][0]) for n in nexts),
                                 ratios(r, nexts, lambda r: r["ceiling"][1]))) if r["ceiling"] else "–")
        row("AOF bytes / Redis memory per event, alone: pixrelay's script; SET + XADD; + HSETNX",
            lambda r: "; ".join("%s / %s" % (cell(r[n][2], "%.0f"), cell(r[n][3], "%.0f B")) if r[n] else "–"
                                for n in ["ceiling"] + nexts))
    row("ingest / Redis alone running pixrelay's script",
        lambda r: "%.2f×" % (r["ingest_rps"] / r["ceiling"][0]) if r["ceiling"] else "–")
    row("Redis CPU per event: raw RPUSH / ingest",
        lambda r: "%.1f / %.1f µs" % (1e6 * r["raw_cpu"], 1e6 * r["ingest_cpu"][-1] / max(1, r["ingest_rps"])))
    row("Redis CPU per ingested event / raw RPUSH's, / BullMQ's",
        lambda r: "%.1f×, %s" % (r["ingest_redis_us"] / raw_us(r), vs_bull(
            lambda r, b: "%.2f×" % (r["ingest_redis_us"] / b["ingest_redis_us"]))(r)), "≤ 3×, ≤ 0.5×")
    row("ingest p99 / raw p99", lambda r: "%.1f×" % (r["ingest_p99"] / r["raw_p99"]), "≤ 3×")
    row("ingest: non-200 answers, acknowledged and stored", lambda r: "%d, %d of %d" % (r["ingest_bad"], r["ingest_stored"], r["ingest_ok"]))
    row("ingest: Redis commands / EVALSHA per event", lambda r: "%.2f / %.2f" % (r["ingest_cmds"], r["ingest_evalsha"]))
    row("ingest: Redis time per EVALSHA (INFO commandstats)", lambda r: "%.1f µs" % r["ingest_script_us"])
    if STREAM:
        row("ingest: events received by a live stream open meanwhile",
            lambda r: "%d of %d" % (r.get("stream_events", 0), r["ingest_ok"]))
    row("ingest: AOF bytes per event", lambda r: "%.0f" % r["ingest_aof"] if r["ingest_aof"] is not None
        else "– (an AOF rewrite ran during the phase)")
    row("Redis memory per retained event", lambda r: "%.0f B" % r["mem_per_event"])
    row("ingest CPU, pixrelay(s) / redis (all nodes; 1.0 = a core)", lambda r: " + ".join("%.2f" % c for c in r["ingest_cpu"][:-1]) + " / %.2f" % r["ingest_cpu"][-1])
    row("backlog drained to one host", lambda r: "%d of %d in %.1f s: %.0f/s" % (r["drain_delivered"], r["backlog"], r["drain_s"], r["drain_rps"]))
    row("**drain / raw**", lambda r: "**%.2f×**" % (r["drain_rps"] / r["raw_rps"]), "≥ 0.4×")
    bull_row("**drain / BullMQ**", lambda r, b: "**%.2f×**" % (r["drain_rps"] / b["drain_rps"]), "≥ 4×")
    row("Redis CPU per delivered event (drain); / raw RPUSH's, / BullMQ's",
        lambda r: "%.1f µs; %.1f×, %s" % (r["drain_redis_us"], r["drain_redis_us"] / raw_us(r), vs_bull(
            lambda r, b: "%.2f×" % (r["drain_redis_us"] / b["drain_redis_us"]))(r)), "≤ 2.5×, ≤ 0.25×")
    if NEXT:
        for name, what, _, _ in DRAINS:
            row("Redis alone, draining a stream backlog %d a call (no pixrelay, no HTTP): %s"
                % (DRAIN_BATCH, what), lambda r, n=name: alone(r, n))
        row("a stream per shard alone, Redis CPU per delivered event / raw RPUSH's: group, + HDEL, range",
            lambda r: ratios(r, drains, lambda r: r["raw_cpu"]), "≤ 2.5×")
        row("a stream per shard drained alone / pixrelay's drain: rate; Redis CPU per event",
            lambda r: "; ".join((", ".join("%.2f×" % (r[n][0] / r["drain_rps"]) if r[n] else "–"
                                           for n in drains),
                                 ratios(r, drains, lambda r: r["drain_redis_us"] / 1e6))))
        row("AOF bytes / Redis memory change per delivered event, stream drained alone: group, + HDEL, range",
            lambda r: "; ".join("%s / %s" % (cell(r[n][2], "%.0f"), cell(r[n][3], "%+.0f B")) if r[n] else "–"
                                for n in drains))
    row("raw HTTP POST to the sink (libcurl multi on libevent, %d at a time)" % CONNS,
        lambda r: "%.0f/s" % r["raw_http"])
    row("raw HTTP: CPU per request, client / sink",
        lambda r: "%.1f / %.1f µs" % tuple(1e6 * c for c in r["raw_http_cpu"]))
    row("drain / raw HTTP", lambda r: "%.2f×" % (r["drain_rps"] / r["raw_http"]))
    row("drain: Redis commands / EVALSHA (round trips) per delivered event", lambda r: "%.2f / %.3f" % (r["drain_cmds"], r["drain_evalsha"]), "< 1 round trip")
    row("drain: AOF bytes per delivered event; Redis memory per event, change while delivered",
        lambda r: "%s; %+.0f B" % ("%.0f" % r["drain_aof"] if r["drain_aof"] is not None
                                   else "– (an AOF rewrite ran during the phase)", r["drain_mem"]))
    row("drain CPU, pixrelay(s) / redis / sink", lambda r: " + ".join("%.2f" % c for c in r["drain_cpu"][:-2]) + " / %.2f / %.2f" % tuple(r["drain_cpu"][-2:]))
    row("end to end (ingest and delivery at once)", lambda r: "%.0f/s (ingest %.0f/s)" % (r["e2e_rps"], r["e2e_ingest_rps"]))
    row("end to end / raw HTTP", lambda r: "%.2f×" % (r["e2e_rps"] / r["raw_http"]))
    row("**end to end / raw**", lambda r: "**%.2f×**" % (r["e2e_rps"] / r["raw_rps"]), "≥ 0.25×")
    bull_row("end to end / BullMQ", lambda r, b: "%.2f×" % (r["e2e_rps"] / b["e2e_rps"]))
    row("end to end CPU, pixrelay(s) / redis / sink", lambda r: " + ".join("%.2f" % c for c in r["e2e_cpu"][:-2]) + " / %.2f / %.2f" % tuple(r["e2e_cpu"][-2:]))
    row("peak RSS per process (drain, e2e)", lambda r: "%.1f MiB, %.1f MiB" % (r["drain_rss_mb"], r["e2e_rss_mb"]))
    for i, (_, what) in enumerate(latency.FRACTIONS):
        row("latency, acknowledged to received by the sink, at %s of end to end (open loop)" % what,
            lambda r, i=i: latency.cell(r["latency"][i]), "p99 ≤ 20 ms" if i == 0 else "")
        bull_row("latency p99 at %s / BullMQ's at %s of its own" % (what, what),
                 lambda r, b, i=i: "%.2g×" % (r["latency"][i]["p99"] / b["latency"][i]["p99"])
                 if r["latency"][i]["p99"] and b["latency"][i]["p99"] else "–")
    if ENDPOINTS:
        n = ENDPOINTS
        row("**with %d endpoints per account**, each taking every event: ingest; / without" % n,
            lambda r: "%.0f/s, p99 %.2f ms; %.2f×" % (r["ep_ingest_rps"], r["ep_ingest_p99"],
                                                    r["ep_ingest_rps"] / r["ingest_rps"]))
        row("with %d endpoints: Redis CPU per ingested event; / without; Redis commands per event" % n,
            lambda r: "%.1f µs; %.2f×; %.2f" % (r["ep_ingest_redis_us"], r["ep_ingest_redis_us"]
                                               / r["ingest_redis_us"], r["ep_ingest_cmds"]))
        row("**with %d endpoints: deliveries drained** (%d per event); / without" % (n, n + 1),
            lambda r: "**%d of %d in %.1f s: %.0f/s; %.2f×**" % (
                r["ep_delivered"], r["ep_backlog"], r["ep_drain_s"], r["ep_drain_rps"],
                r["ep_drain_rps"] / r["drain_rps"]))
        row("with %d endpoints: events delivered everywhere per second; / without" % n,
            lambda r: "%.0f/s; %.2f×" % (r["ep_drain_rps"] / (n + 1),
                                          r["ep_drain_rps"] / (n + 1) / r["drain_rps"]))
        row("with %d endpoints: Redis CPU per delivery; / without; / raw RPUSH's" % n,
            lambda r: "%.1f µs; %.2f×; %.1f×" % (r["ep_drain_redis_us"], r["ep_drain_redis_us"]
                                                / r["drain_redis_us"], r["ep_drain_redis_us"] / raw_us(r)))
        row("with %d endpoints: Redis commands / EVALSHA per delivery; without" % n,
            lambda r: "%.2f / %.3f; %.2f / %.3f" % (r["ep_drain_cmds"], r["ep_drain_evalsha"],
                                                    r["drain_cmds"], r["drain_evalsha"]))
        row("with %d endpoints: pixrelay CPU per delivery; / without; peak RSS" % n,
            lambda r: "%.1f µs; %.2f×; %.1f MiB" % (r["ep_drain_px_us"], r["ep_drain_px_us"]
                                                   / r["drain_px_us"], r["ep_drain_rss_mb"]))
        row("with %d endpoints: deliveries lost / with another body" % n,
            lambda r: "%d / %d" % (r["ep_lost"], r["ep_differ"]), "0 / 0")
    row("acknowledged events lost / delivered with another body", lambda r: "%d / %d" % (r["lost"], r["differ"] + r["mismatch"]), "0 / 0")
    if mem:
        print()
        print("RSS of one process with up to %d deliveries in flight at once (100 hosts answering after 4 s): "
              "%.1f MiB (%.1f MiB before); target ≤ 64 MiB" % (mem["inflight"], mem["rss_mb"], mem["rss0_mb"]))
    if bull:
        peer.report(results[0], bull, secs)
    elif PEER:
        print()
        print("BullMQ peer: not run (%s)" % bull_err)
    if rounds:
        alternate.report(rounds)
    elif rounds_err:
        print()
        print("Alternating rounds: not run (%s)" % rounds_err)
    bad = any(r["lost"] or r["differ"] or r["mismatch"] for r in results)
    return 3 if bad else (1 if bull_err or rounds_err else 0)


if __name__ == "__main__":
    sys.exit(main())
