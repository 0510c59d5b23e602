#!/usr/bin/env python3
"""Redis-side checks for tests/bench/run.sh (stdlib only, RESP over the unix socket).

  rcheck.py SOCK count PREFIX
      upstream_sandbox=<HLEN upstream> outbox_sandbox=<LLEN outbox> ...
  rcheck.py SOCK drain PREFIX TIMEOUT_S
      waits until the sandbox outbox is empty; prints outbox_left=<LLEN>.
  rcheck.py SOCK verify PREFIX ACKED_FILE BASE_UPSTREAM TIMEOUT_S [STATE]
      waits until the sandbox outbox is empty (the pump moved everything),
      then checks that every acknowledged event id (one per line in
      ACKED_FILE) is in the upstream map and has its event hash (or is still
      in the outbox, when the pump did not empty it in time); with STATE,
      also counts acknowledged events whose state is STATE.
  rcheck.py SOCK states PREFIX ACKED_FILE
      state histogram of the acknowledged events.
  rcheck.py SOCK cmdstats OUT_JSON
      INFO commandstats (calls per command) and the AOF counters, as JSON.
  rcheck.py cmddiff BEFORE_JSON AFTER_JSON EVENTS
      Redis commands executed between two snapshots, per event.

Prints key=value lines; exits 1 when a check fails, 2 on a usage error.
"""
import json
import os
import socket
import sys
import time

# the RESP reader of the end-to-end harness (errors raise RuntimeError)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import _read_resp  # noqa: E402


class R:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(30)
        self.s.connect(path)
        self.f = self.s.makefile("rb")

    @staticmethod
    def enc(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def read(self):
        return _read_resp(self.f)

    def cmd(self, *args):
        self.s.sendall(self.enc(args))
        return self.read()

    def pipe(self, cmds, chunk=2000):
        out = []
        for i in range(0, len(cmds), chunk):
            part = cmds[i:i + chunk]
            self.s.sendall(b"".join(self.enc(c) for c in part))
            out.extend(self.read() for _ in part)
        return out


def shard_of(evt):
    crock = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    return crock.index(evt[-1])


def ekey(prefix, evt):
    return "%s{q%d}:e:%s" % (prefix, shard_of(evt), evt)


def read_acked(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip()]


def upstream_values(r, p, env):
    """The event ids of the remembered upstream notifications: one key each,
    <prefix>{<env>}:upstream:<upstream id>, found with SCAN."""
    keys, cursor = [], "0"
    while True:
        cursor, batch = r.cmd("SCAN", cursor, "MATCH", "%s{%s}:upstream:*" % (p, env), "COUNT", 5000)
        keys.extend(batch)
        if cursor == "0":
            break
    vals = []
    for i in range(0, len(keys), 5000):
        vals.extend(v for v in r.cmd("MGET", *keys[i:i + 5000]) if v)
    return vals


def main(argv):
    if len(argv) >= 5 and argv[1] == "cmddiff":
        a = json.load(open(argv[2]))
        b = json.load(open(argv[3]))
        n = max(1, int(argv[4]))
        for k in sorted(b):
            d = b[k] - a.get(k, 0)
            if d > 0 and k not in ("info", "(aof_rewrites)"):
                print("%s=%d per_event=%.2f" % (k, d, d / n))
        return 0
    if len(argv) >= 3 and argv[2] == "upcount":
        print(len(upstream_values(R(argv[1]), argv[3], "sandbox")))
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    r = R(argv[1])
    what = argv[2]
    if what == "count":
        p = argv[3]
        for env in ("sandbox", "production"):
            print("upstream_%s=%d" % (env, len(upstream_values(r, p, env))))
            print("outbox_%s=%d" % (env, r.cmd("LLEN", "%s{%s}:outbox" % (p, env))))
        return 0
    if what == "drain":
        ob = "%s{sandbox}:outbox" % argv[3]
        deadline = time.time() + float(argv[4])
        while r.cmd("LLEN", ob) and time.time() < deadline:
            time.sleep(0.1)
        print("outbox_left=%d" % r.cmd("LLEN", ob))
        return 0
    if what == "cmdstats":
        info = r.cmd("INFO", "commandstats") + "\n" + r.cmd("INFO", "persistence")
        stats = {}
        for line in info.splitlines():
            if line.startswith("cmdstat_"):
                name, rest = line.split(":", 1)
                fields = dict(kv.split("=") for kv in rest.split(","))
                stats[name[8:]] = int(fields["calls"])
            elif line.startswith("aof_rewrites:"):
                stats["(aof_rewrites)"] = int(line.split(":")[1])
        with open(argv[3], "w") as f:
            json.dump(stats, f)
        return 0
    if what == "states":
        p, acked = argv[3], read_acked(argv[4])
        states = r.pipe([("HGET", ekey(p, e), "state") for e in acked])
        hist = {}
        for s in states:
            hist[s or "(missing)"] = hist.get(s or "(missing)", 0) + 1
        for k in sorted(hist):
            print("state_%s=%d" % (k.replace("(", "").replace(")", ""), hist[k]))
        return 0
    if what == "verify":
        p, acked = argv[3], read_acked(argv[4])
        base, timeout = int(argv[5]), float(argv[6])
        want_state = argv[7] if len(argv) > 7 else None
        ob = "%s{sandbox}:outbox" % p
        deadline = time.time() + timeout
        while r.cmd("LLEN", ob) and time.time() < deadline:
            time.sleep(0.1)
        left = r.cmd("LLEN", ob)
        vals = set(upstream_values(r, p, "sandbox"))
        stored = len(vals) - base
        not_mapped = [e for e in acked if e not in vals]
        exists = r.pipe([("EXISTS", ekey(p, e)) for e in acked])
        # an event the pump has not moved yet is still safe in the outbox
        queued = set()
        for item in r.cmd("LRANGE", ob, 0, -1) or []:
            try:
                queued.add(json.loads(item)["id"])
            except (ValueError, KeyError, TypeError):
                pass
        in_outbox = [e for e, x in zip(acked, exists) if not x and e in queued]
        no_event = [e for e, x in zip(acked, exists) if not x and e not in queued]
        print("acked=%d" % len(acked))
        print("acked_distinct=%d" % len(set(acked)))
        print("stored=%d" % stored)
        print("outbox_left=%d" % left)
        print("acked_not_in_upstream_map=%d" % len(not_mapped))
        print("acked_still_in_outbox=%d" % len(in_outbox))
        print("acked_without_event=%d" % len(no_event))
        if want_state:
            states = r.pipe([("HGET", ekey(p, e), "state") for e in acked])
            print("acked_in_state_%s=%d" % (want_state, sum(1 for s in states if s == want_state)))
        for e in (not_mapped + no_event)[:5]:
            print("missing_example=%s" % e, file=sys.stderr)
        ok = not not_mapped and not no_event and len(set(acked)) == len(acked)
        print("loss_check=%s" % ("ok" if ok else "FAILED"))
        return 0 if ok else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
