#!/usr/bin/env python3
"""Redis' own instructions per event, counted exactly (valgrind's callgrind
on a redis-server of its own, not timed): a raw RPUSH of 1 KB, pixrelay's
ingest script (12 relayed notifications a call) and its delivery script
(event_settle: first attempts leased from a shard's stream, 64 a call, and
their outcomes settled; then the same with the entries read outside the
script and given to it, as dispatch.c does), and what an ingest call costs
before it does anything (its arguments). CPU time on a shared machine moves by a third
between runs; instruction counts do not, so a change to a script is
measured here first (docs/performance.md, "Reproducing the figures").

    python3 tests/bench/redis_instructions.py [events] [ingest.lua of another version]

The second argument measures another ingest script taking the same arguments
beside this one's (e.g. `git show REV:src/store/lua/...` into a directory with
its lib/).

Needs valgrind and redis-server. REDIS_SERVER names another redis-server
(e.g. one built from Debian's source with its symbols: Debian's binary has
none), and KEEP=<dir> keeps each measure's callgrind file there, numbered in
the order printed, for `callgrind_annotate` (docs/performance.md). No Redis persistence: the AOF's write and
fsync (the same for every layout) are left out; they are in run.sh's CPU
figures. Prints one line per figure."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "tools"))
from bench import R, ingest_args  # noqa: E402
from embed_scripts import expand  # noqa: E402

LUA = os.path.join(TOP, "src", "store", "lua")
P = "px:{s0}:"
QUEUE = "sandbox:acc_01:127.0.0.1:9000"
URL = "http://127.0.0.1:9000/hook"


class Counted:
    """A redis-server under callgrind; count(fn) = instructions fn makes it run."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="pxinsn")
        sock = os.path.join(self.dir, "s")
        self.out = os.path.join(self.dir, "cg")
        self.proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + self.out + ".%p",
             os.environ.get("REDIS_SERVER", "redis-server"), "--port", "0", "--unixsocket", sock, "--dir", self.dir,
             "--appendonly", "no", "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        time.sleep(0.3)
        self.r = R(path=sock)

    def count(self, fn):
        subprocess.run(["callgrind_control", "-z", str(self.proc.pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        for f in os.listdir(self.dir):
            if f.startswith("cg."):
                os.unlink(os.path.join(self.dir, f))
        fn()
        subprocess.run(["callgrind_control", "-d", str(self.proc.pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        for _ in range(50):
            for f in os.listdir(self.dir):
                if f.startswith("cg.") and f.count(".") == 2:
                    for line in open(os.path.join(self.dir, f), errors="replace"):
                        if line.startswith("summary:"):
                            if os.environ.get("KEEP"):
                                self.kept = getattr(self, "kept", 0) + 1
                                shutil.copy(os.path.join(self.dir, f), os.path.join(
                                    os.environ["KEEP"], "measure%d.cg" % self.kept))
                            return int(line.split()[1])
            time.sleep(0.1)
        raise RuntimeError("no callgrind dump")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def body(i):
    return ('{"id":"evt_%026d","event":"EVENT:CHARGE_PAID","data":' % i) + "x" * 960 + "}"


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3072
    c = Counted()
    r = c.r
    try:
        r.cmd("FLUSHALL")
        rp = c.count(lambda: r.pipe([("RPUSH", "q", "x" * 1024) for _ in range(n)], chunk=64))
        print("raw RPUSH of 1 KB (64 pipelined): %.0f instructions each" % (rp / n))

        def fresh():
            # an empty Redis with the account the events are for
            r.cmd("FLUSHALL")
            r.cmd("HSET", P + "acct:sandbox:acc_01", "postback_url", URL, "signing_secret",
                  "whsec_" + "a" * 43)

        ingest = r.cmd("SCRIPT", "LOAD", expand(os.path.join(LUA, "ingest.lua")))
        fresh()
        now = int(time.time() * 1000)

        def calls(sha, up):
            # 12 relayed notifications a call, as pixrelay's ingest.c sends them
            i = 0
            while i < n:
                argv = [P, now, "2026-11-26T20:00:00Z", 86400]
                notes = []
                for _ in range(12):
                    notes.append((up + str(i), "evt_%026d" % i, "EVENT:CHARGE_PAID", body(i),
                                  "upstream:acc_01:ch_%d" % i))
                    i += 1
                argv += ingest_args(P, "sandbox", "acc_01", notes)
                r.cmd("EVALSHA", sha, 1, P + "ingest", *argv)

        def ingest_all():
            calls(ingest, "up_")
        ing = c.count(ingest_all)
        print("ingest.lua, 12 relayed notifications a call: %.0f instructions per event (%.1fx RPUSH)"
              % (ing / n, ing / rp))
        if len(sys.argv) > 2:
            ingest = r.cmd("SCRIPT", "LOAD", expand(sys.argv[2]))
            fresh()
            other = c.count(ingest_all)
            print("  %s, the same: %.0f instructions per event (%.1fx RPUSH)"
                  % (sys.argv[2], other / n, other / rp))
            ingest = r.cmd("SCRIPT", "LOAD", expand(os.path.join(LUA, "ingest.lua")))
            fresh()
            ingest_all()
        empty = r.cmd("SCRIPT", "LOAD", "return {}")

        base = c.count(lambda: calls(empty, "up_x"))
        print("  of which a script that only takes the same arguments: %.0f" % (base / n))

        settle = r.cmd("SCRIPT", "LOAD", expand(os.path.join(LUA, "event_settle.lua")))
        entry = ('{"at":"2026-11-26T20:00:00.000Z","attempt":1,"durationMs":3,"status":200,'
                 '"error":null,"response":"ok","outcome":"delivered"}')

        def drain(settle_too, read=False):
            # read: the entries read outside the script and given to it, as dispatch.c
            # does (their bodies never cross into Lua)
            outs, done, t, cur = [], 0, now, None
            while True:
                t += 1
                argv = [P, t, 40000, 64, t + 40000, 50, 86400, 64, 0, 0, 128, 0, 256, 512,
                        len(outs) if settle_too else 0]
                if settle_too:
                    for o in outs:
                        argv += o
                given = {}
                if read:
                    if cur is None:
                        argv += ["", 0]
                    else:
                        frm = "(" + cur if cur else "-"
                        ents = r.cmd("XRANGE", P + "s", frm, "+", "COUNT", 64)
                        argv += [cur, len(ents)]
                        for sid, f in ents:
                            sid = sid.decode() if isinstance(sid, bytes) else sid
                            m = f[1].decode() if isinstance(f[1], bytes) else f[1]
                            given[sid] = m
                            argv += [sid] + m.split("\n")[:3]
                res = r.cmd("EVALSHA", settle, 3, P + "hosts", P + "lease", P + "dead", *argv)
                if read:
                    cur = res.pop()
                    cur = cur.decode() if isinstance(cur, bytes) else cur
                outs = []
                sids = [x.decode() if isinstance(x, bytes) else x for x in res[2::5]]
                # the token of a stream event's lease: its call's batch (lease_batch)
                batch = "@%s/%s" % (sids[0], sids[-1]) if sids else ""
                for k in range(2, len(res), 5):
                    meta = res[k + 1]
                    meta = (meta.decode() if isinstance(meta, bytes) else meta) or given[sids[(k - 2) // 5]]
                    meta = meta.split("\n")
                    outs.append([sids[(k - 2) // 5], batch, meta[2], meta[0],
                                 "%d\t1\t200\t%s\t" % (t, entry), meta[1]])
                done += len(outs)
                if not outs and (not settle_too or res[0] == 0):
                    return done
        # the events ingested above are the backlog (their stream entries)
        lease = c.count(lambda: drain(False))
        print("event_settle, leasing 64 first attempts a call from the stream: %.0f instructions "
              "per event (%.1fx RPUSH)" % (lease / n, lease / rp))
        fresh()
        ingest_all()
        full = c.count(lambda: drain(True))
        print("event_settle, leasing and settling (delivered) 64 a call: %.0f instructions per "
              "event (%.1fx RPUSH)" % (full / n, full / rp))
        fresh()
        ingest_all()
        given = c.count(lambda: drain(True, read=True))
        print("  the same with the entries read outside the script (XRANGE, as dispatch.c does): "
              "%.0f instructions per event (%.1fx RPUSH)" % (given / n, given / rp))
    finally:
        c.stop()


if __name__ == "__main__":
    main()
