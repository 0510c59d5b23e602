"""Resharding drill: slots move between primaries while pixrelay serves.

A Redis Cluster of 3 primaries (and their replicas); two pixrelay processes;
clients make charges, read them back and transfer money between accounts of
different shards, all the time. Meanwhile:
  1. the slots of the accounts' shards, of {sandbox} (the environment's
     indexes) and of {keys} (API keys) are migrated to another primary with
     CLUSTER SETSLOT IMPORTING/MIGRATING and MIGRATE, a few keys at a time
     with pauses, so that requests arrive while a slot is half moved (ASK,
     TRYAGAIN);
  2. redis-cli --cluster reshard moves 300 or more slots of one primary, two
     of them holding data, to another;
  3. redis-cli --cluster rebalance --cluster-use-empty-masters spreads them
     again.
No error may surface to a client (every answer 200), every acknowledged
charge is there afterwards, every transfer moved its money once, the sum of
the balances is unchanged, and the nodes' error statistics show that
pixrelay did meet MOVED, ASK and TRYAGAIN on the way.
"""
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import REDIS_CLI, Cluster, Pixrelay, Workdir, acct_key, auth, key_slot, shard_of  # noqa: E402
from test_accounts import account_body  # noqa: E402
from test_money import MEMBER, cnpj, shard_key  # noqa: E402

ACCOUNTS = 8


class Reshard(unittest.TestCase):
    def setUp(self):
        self.wd = Workdir()
        self.cluster = Cluster(self.wd.path).start()
        self.procs = [Pixrelay(self.wd.path, self.cluster, name=n).start() for n in ("a", "b")]
        for p in self.procs:
            p.wait_ready()
        a = self.procs[0]
        init = json.loads(a.cli("init", "--json").stdout)
        self.platform = init["sandbox"]["account"]
        self.master = a.create_key("sandbox", master=True)["key"]
        self.rng = random.Random()

    def tearDown(self):
        for p in self.procs:
            p.stop(signal.SIGKILL)
        self.cluster.stop()
        self.wd.cleanup()

    # ---- moving slots ----

    def node_ids(self):
        ids = {}
        for n in self.cluster.nodes:
            if n.running():
                ids[n.port] = n.cmd("CLUSTER", "MYID")
        return ids

    def owner(self, slot):
        for port, ranges in self.cluster.primaries().items():
            if any(a <= slot <= b for a, b in ranges):
                return port
        raise AssertionError("no owner for slot %d" % slot)

    def migrate(self, slot, dst):
        """Move one slot by hand, five keys at a time with pauses."""
        src = self.owner(slot)
        if src == dst:
            return 0
        ids = self.node_ids()
        s, d = self.cluster.node(src), self.cluster.node(dst)
        d.cmd("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src])
        s.cmd("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst])
        moved = 0
        while True:
            keys = s.cmd("CLUSTER", "GETKEYSINSLOT", slot, 5)
            if not keys:
                break
            s.cmd("MIGRATE", "127.0.0.1", dst, "", 0, 5000, "KEYS", *keys)
            moved += len(keys)
            time.sleep(0.01)
        for port in (dst, src):
            self.cluster.node(port).cmd("CLUSTER", "SETSLOT", slot, "NODE", ids[dst])
        for port in self.cluster.primaries():
            if port not in (src, dst):
                self.cluster.node(port).cmd("CLUSTER", "SETSLOT", slot, "NODE", ids[dst])
        return moved

    def redis_cli(self, *args):
        self.cluster.wait_ok()  # redis-cli refuses a cluster whose nodes disagree
        p = subprocess.run([REDIS_CLI, "--cluster"] + list(args), capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        return p.stdout

    def errorstats(self):
        total = {}
        for n in self.cluster.nodes:
            if n.running():
                for k, v in n.info("errorstats").items():
                    total[k] = total.get(k, 0) + int(v.split("=")[1])
        return total

    # ---- the drill ----

    def test_slots_move_while_the_service_runs(self):
        a, b = self.procs
        accts, seen = [], set()
        while len(accts) < ACCOUNTS:
            tax = cnpj(self.rng)
            if tax in seen:
                continue
            seen.add(tax)
            r = a.request("POST", "/v1/baas/account/create", body=account_body(tax, [MEMBER]),
                          headers=auth(self.master, self.platform))
            self.assertEqual(r.status, 200, r)
            accts.append(r.json["data"])
        for acct in accts:
            r = a.request("POST", "/v1/charge/pix/create", body={"amount": 1000000},
                          headers=auth(self.master, acct["id"]))
            r = a.request("POST", "/v1/charge/pix/%s/simulate-payment" % r.json["data"]["id"],
                          headers=auth(self.master, acct["id"]))
            self.assertEqual(r.status, 200, r)
        balance = lambda x: int(self.cluster.cmd("HGET", acct_key("sandbox", x["id"]), "balance"))
        total = sum(balance(x) for x in accts)
        pairs = [(x, y) for x in accts for y in accts if shard_of(x["id"]) != shard_of(y["id"])]
        before = self.errorstats()

        stop = threading.Event()
        lock = threading.Lock()
        answers, charges, transfers = [], [], []

        def client(i):
            n = 0
            while not stop.is_set():
                n += 1
                px = self.procs[n % 2]
                acct = accts[(i + n) % len(accts)]
                try:
                    if n % 3 == 0:
                        src, dst = self.rng.choice(pairs)
                        key = "rs-%d-%d" % (i, n)
                        h = auth(self.master, src["id"])
                        h["Idempotency-Key"] = key
                        r = px.request("POST", "/v1/baas/internal-transfer", headers=h, timeout=30,
                                       body={"amount": self.rng.randrange(1, 100),
                                             "from_key": src["taxID"], "to_key": dst["taxID"]})
                        if r.status == 200:
                            with lock:
                                transfers.append((src, dst, key, r.json["amount"]))
                    elif n % 3 == 1:
                        r = px.request("POST", "/v1/charge/pix/create", timeout=30,
                                       body={"amount": 500 + n, "externalID": "rs-%d-%d" % (i, n)},
                                       headers=auth(self.master, acct["id"]))
                        if r.status == 200:
                            with lock:
                                charges.append((acct["id"], r.json["data"]["id"]))
                    else:
                        with lock:
                            known = charges[-1] if charges else None
                        if not known:
                            continue
                        r = px.request("GET", "/v1/charge/pix/" + known[1], timeout=30,
                                       headers=auth(self.master, known[0]))
                    status = r.status
                    err = None if status == 200 else r.body[:200]
                except Exception as e:
                    status, err = None, repr(e)
                with lock:
                    answers.append((status, err))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        try:
            time.sleep(1)
            t0 = time.time()
            # 1. by hand, a few keys at a time: the busy slots
            primaries = sorted(self.cluster.primaries())
            slots = sorted({key_slot("{s%d}" % shard_of(x["id"])) for x in accts}
                           | {key_slot("{sandbox}"), key_slot("{keys}")})
            moved = 0
            for k, slot in enumerate(slots):
                others = [p for p in primaries if p != self.owner(slot)]
                moved += self.migrate(slot, others[k % len(others)])
            self.cluster.slots = {}
            t1 = time.time()
            # 2. redis-cli reshard: a primary's lowest slots (redis-cli takes
            # them in order), at least up to its second slot that holds data
            ids = self.node_ids()
            ranges = self.cluster.primaries()
            busy = {key_slot("{s%d}" % k) for k in range(16)} | set(slots)
            best = None
            for port, rg in ranges.items():
                owned = sorted(x for lo, hi in rg for x in range(lo, hi + 1))
                held = [i for i, x in enumerate(owned) if x in busy]
                if len(held) >= 2 and (best is None or held[1] < best[1]):
                    best = (port, held[1])
            src, count = best[0], max(best[1] + 1, 300)
            dst = next(p for p in primaries if p != src)
            self.redis_cli("reshard", "127.0.0.1:%d" % dst, "--cluster-from", ids[src],
                           "--cluster-to", ids[dst], "--cluster-slots", str(count), "--cluster-yes")
            t2 = time.time()
            # 3. and spread again
            self.redis_cli("rebalance", "127.0.0.1:%d" % dst, "--cluster-threshold", "1",
                           "--cluster-use-empty-masters")
            t3 = time.time()
            time.sleep(1)
        finally:
            stop.set()
            for t in threads:
                t.join()

        bad = [x for x in answers if x[0] != 200]
        problems = [line for p in self.procs for line in p.log().splitlines()
                    if " warn " in line or " error " in line]
        self.assertEqual(bad, [], "%d of %d answers were not 200; the log says:\n%s"
                         % (len(bad), len(answers), "\n".join(problems[-40:])))
        self.assertGreater(len(transfers), 20)
        self.assertGreater(len(charges), 20)
        self.cluster.slots = {}
        for acct, cid in charges:
            r = b.request("GET", "/v1/charge/pix/" + cid, headers=auth(self.master, acct))
            self.assertEqual(r.status, 200, (acct, cid, r))
        self.assertEqual(sum(balance(x) for x in accts), total)
        # every acknowledged transfer was debited (its Idempotency-Key names
        # it) and credited (its once-only marker in the destination's shard)
        for src, dst, key, amount in transfers:
            ik = shard_key(shard_of(src["id"]), "idem:%s:%s" % (src["id"], hashlib.sha256(key.encode()).hexdigest()))
            tid = self.cluster.cmd("GET", ik).split(" ", 1)[1]
            self.assertEqual(self.cluster.cmd("EXISTS", shard_key(shard_of(dst["id"]), "xin:" + tid)), 1,
                             (key, tid))
        self.assertEqual(sum(int(self.cluster.cmd("ZCARD", shard_key(k, "xout"))) for k in range(16)), 0)
        after = self.errorstats()
        met = {k: after.get(k, 0) - before.get(k, 0) for k in after
               if after.get(k, 0) != before.get(k, 0)}
        for kind in ("errorstat_MOVED", "errorstat_ASK", "errorstat_TRYAGAIN"):
            self.assertGreater(met.get(kind, 0), 0, met)
        sys.stderr.write("reshard: %d answers, all 200 (%d charges, %d transfers); %d keys moved "
                         "by hand over %d slots in %.1f s, then redis-cli reshard (%d slots, %.1f s) "
                         "and rebalance (%.1f s); redirections met: %s\n"
                         % (len(answers), len(charges), len(transfers), moved, len(slots),
                            t1 - t0, count, t2 - t1, t3 - t2, met))


if __name__ == "__main__":
    unittest.main(verbosity=2)
