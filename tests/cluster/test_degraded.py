"""A Redis Cluster that is not whole: what pixrelay serves and what it says.

One primary stopped, no replica to take over, `cluster-require-full-coverage
no` (the other primaries keep serving their slots): the accounts whose shards
live on the other primaries are served as usual, the ones on the stopped
primary get 503 at once (not after redis-timeout-ms), and /readyz stays 503
naming the node, with how much of the keyspace is served.

`redis-wait-replicas 1` with one replica per primary, after a failover: the
promoted primary has no replica, so its writes are refused (503). /readyz
stays 200 and lists it under belowWaitReplicas, the metric
pixrelay_redis_below_wait_replicas names it, the log says so once (not per
write), and all of it clears when the old primary is back as its replica.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Cluster, Pixrelay, Workdir, auth, key_slot, shard_of, wait_for  # noqa: E402
from test_accounts import account_body  # noqa: E402
from test_metrics import value  # noqa: E402

from test_money import MEMBER, cnpj  # noqa: E402

UNAVAILABLE = {"error": "service unavailable: storage is unreachable; retry later",
               "status": 503, "data": []}
TIMEOUT_MS = 8000  # redis-timeout-ms: a 503 well under it was not a timeout


def owner(primaries, key):
    """The port of the primary that holds `key`'s slot."""
    slot = key_slot(key)
    return next(p for p, ranges in primaries.items() if any(a <= slot <= b for a, b in ranges))


class Drill(unittest.TestCase):
    """A cluster (Cluster(**cluster_args)) and pixrelay on it (with args),
    stopped cleanly after the test."""
    cluster_args, args = {}, []

    def setUp(self):
        self.wd = Workdir()
        self.cluster = Cluster(self.wd.path, **self.cluster_args).start()
        self.px = Pixrelay(self.wd.path, self.cluster, args=self.args).start()

    def tearDown(self):
        try:
            # a clean stop: under ASan, a leak or an error makes it fail
            self.assertEqual(self.px.stop(), 0, self.px.log()[-3000:])
        finally:
            self.px.stop(signal.SIGKILL)
            self.cluster.stop()
            self.wd.cleanup()


class OnePrimaryDown(Drill):
    cluster_args = {"replicas": 0, "conf": "cluster-require-full-coverage no\n"}
    args = ["--redis-timeout-ms", str(TIMEOUT_MS)]

    def charge(self, master, account):
        return self.px.request("POST", "/v1/charge/pix/create", body={"amount": 1234},
                               headers=auth(master, account), timeout=30)

    def test_the_other_primaries_are_served(self):
        px = self.px
        px.wait_ready()
        platform = json.loads(px.cli("init", "--json").stdout)["sandbox"]["account"]
        master = px.create_key("sandbox", master=True)["key"]
        primaries = self.cluster.primaries()
        # the victim holds none of what every request needs: API keys, the
        # environment's indexes, the cache's invalidation channel
        shared = {owner(primaries, k) for k in ("{keys}", "{sandbox}", "pixrelay:invalidate")}
        victim = next(p for p in sorted(primaries) if p not in shared)
        lost = sum(b - a + 1 for a, b in primaries[victim])
        # one account on the victim, one elsewhere (shards are drawn at random)
        rng, accounts, taxid = random.Random(7), {}, {}
        for _ in range(100):
            if len(accounts) == 2:
                break
            body = account_body(cnpj(rng), [MEMBER])
            r = px.request("POST", "/v1/baas/account/create", body=body,
                           headers=auth(master, platform))
            self.assertEqual(r.status, 200, r)
            acct = r.json["data"]["id"]
            taxid[acct] = body["taxID"]
            accounts.setdefault(owner(primaries, "{s%d}" % shard_of(acct)) == victim, acct)
        self.assertEqual(len(accounts), 2, "no account on one side after 100")
        live, dead = accounts[False], accounts[True]
        fund = self.charge(master, live).json["data"]["id"]
        r = px.request("POST", "/v1/charge/pix/%s/simulate-payment" % fund,
                       headers=auth(master, live))
        self.assertEqual(r.status, 200, r)
        before = {}
        for a in (live, dead):
            r = self.charge(master, a)
            self.assertEqual(r.status, 200, r)
            before[a] = r.json["data"]["id"]

        self.cluster.node(victim).stop(signal.SIGKILL)
        t_kill = time.time()
        ready = wait_for(lambda: (lambda r: r if r.status == 503 and r.json["slotsServed"]
                                  == 16384 - lost else None)(px.request("GET", "/readyz")),
                         timeout=15, what="readyz to say what is missing")
        self.assertEqual(ready.json["ready"], False)
        self.assertEqual(ready.json["slotsTotal"], 16384)
        self.assertIn("127.0.0.1:%d" % victim, ready.json["redis"])
        # the cluster has marked it failed (with cluster-require-full-coverage
        # yes, the default, the others would now refuse every slot)
        other = self.cluster.node(next(p for p in primaries if p != victim))

        def marked():
            info = dict(line.split(":", 1)
                        for line in other.cmd("CLUSTER", "INFO").splitlines() if ":" in line)
            return info["cluster_state"] == "ok" and int(info["cluster_slots_fail"]) == lost
        wait_for(marked, timeout=15, interval=0.1, what="the cluster to mark the primary failed")

        # the live account: as usual, reads and writes
        for _ in range(5):
            r = self.charge(master, live)
            self.assertEqual(r.status, 200, r)
        r = px.request("GET", "/v1/charge/pix/" + before[live], headers=auth(master, live))
        self.assertEqual(r.status, 200, r)
        # the account on the victim: 503 at once, every time
        slowest = 0
        for path, method in (("/v1/charge/pix/create", "POST"),
                             ("/v1/charge/pix/" + before[dead], "GET")):
            for _ in range(3):
                t0 = time.time()
                r = px.request(method, path, body={"amount": 999} if method == "POST" else None,
                               headers=auth(master, dead), timeout=30)
                slowest = max(slowest, time.time() - t0)
                self.assertEqual(r.status, 503, r)
                self.assertEqual(r.json, UNAVAILABLE)
                self.assertEqual(r.header("Retry-After"), "1")
        self.assertLess(slowest, TIMEOUT_MS / 2000.0)
        # a transfer from the live account to the one on the victim: debited,
        # its credit left to the recovery; 503, and the same request with the
        # same Idempotency-Key gets it DONE once the primary is back
        h = auth(master, live)
        h["Idempotency-Key"] = "degraded-transfer-1"
        move = {"amount": 321, "from_key": taxid[live], "to_key": taxid[dead]}
        r = px.request("POST", "/v1/baas/internal-transfer", body=move, headers=h, timeout=30)
        self.assertEqual((r.status, r.header("Retry-After")), (503, "5"), r)
        self.assertEqual(r.json["error"], "the transfer was debited and pixrelay will credit it "
                         "once Redis answers again: send the same request with the same "
                         "Idempotency-Key to get it DONE")
        # /metrics: the shards that answered, what is served
        text = px.request("GET", "/metrics").body.decode()
        self.assertEqual(value(text, "pixrelay_redis_slots_served"), 16384 - lost)
        self.assertEqual(value(text, "pixrelay_redis_up"), 0)
        self.assertIsNotNone(value(text, "pixrelay_delivery_lag_seconds", shard=str(shard_of(live))))
        self.assertIsNone(value(text, "pixrelay_delivery_lag_seconds", shard=str(shard_of(dead))))
        p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        sys.stderr.write("one of 3 primaries down: %d of 16384 slots served; the dead shard's "
                         "503 took at most %.3f s (redis-timeout-ms %d), checked %.1f s after the kill\n"
                         % (16384 - lost, slowest, TIMEOUT_MS, time.time() - t_kill))

        # back: everything is served again, by the same process
        self.cluster.node(victim).start()
        px.wait_ready(timeout=20)
        self.assertEqual(px.request("GET", "/readyz").json["slotsServed"], 16384)
        r = self.charge(master, dead)
        self.assertEqual(r.status, 200, r)
        r = px.request("POST", "/v1/baas/internal-transfer", body=move, headers=h, timeout=30)
        self.assertEqual((r.status, r.body), (200, b'{"amount":321,"status":"DONE"}'), r)


BELOW = re.compile(r"redis (\S+) has 0 replicas, fewer than redis-wait-replicas \(1\): its writes "
                   r"are refused until enough replicas are back")


class WaitAfterFailover(Drill):
    args = ["--redis-wait-replicas", "1", "--redis-timeout-ms", "2000"]

    def readyz_below(self):
        r = self.px.request("GET", "/readyz")
        return r.status, r.json["belowWaitReplicas"]

    def test_a_promoted_primary_without_replica_is_named(self):
        px = self.px
        px.wait_ready()
        px.cli("init")
        key = px.create_key("sandbox")
        port = self.cluster._route("{s%d}" % shard_of(key["account"]))
        victim = self.cluster.node(port)
        replica = next(n for n in self.cluster.nodes
                       if n.running() and n.info("replication").get("master_port") == str(port))
        promoted = "127.0.0.1:%d" % replica.port
        self.assertEqual(self.readyz_below(), (200, []))
        text = wait_for(lambda: (lambda t: t if value(t, "pixrelay_redis_replicas",
                                                      primary="127.0.0.1:%d" % port) == 1 else None)(
            px.request("GET", "/metrics").body.decode()), what="the replicas counted")
        self.assertEqual(value(text, "pixrelay_redis_below_wait_replicas",
                               primary="127.0.0.1:%d" % port), 0)
        r = px.request("POST", "/v1/charge/pix/create", body={"amount": 500},
                       headers=auth(key["key"]))
        self.assertEqual(r.status, 200, r)

        victim.stop(signal.SIGKILL)
        t_kill = time.time()
        wait_for(lambda: self.readyz_below() == (200, [{"primary": promoted, "replicas": 0}]),
                 timeout=30, interval=0.1, what="readyz to name the promoted primary")
        t_named = time.time()
        # its writes are refused, each after WAIT's half of redis-timeout-ms
        for i in range(3):
            r = px.request("POST", "/v1/charge/pix/create", body={"amount": 600 + i},
                           headers=auth(key["key"]), timeout=30)
            self.assertEqual(r.status, 503, r)
            self.assertEqual(r.json, UNAVAILABLE)
        self.assertIn("the change reached 0 of 1 replicas", px.log())
        text = px.request("GET", "/metrics").body.decode()
        self.assertEqual(value(text, "pixrelay_redis_below_wait_replicas", primary=promoted), 1)
        self.assertEqual(value(text, "pixrelay_redis_replicas", primary=promoted), 0)
        others = [p for p in self.cluster.primaries() if p != replica.port]
        self.assertEqual(len(others), 2)
        for p in others:
            self.assertEqual(value(text, "pixrelay_redis_below_wait_replicas",
                                   primary="127.0.0.1:%d" % p), 0)
        p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

        # the old primary back, as the replica of the promoted one: once the
        # watch has seen it online, the log says so and /readyz clears
        again = "redis %s has 1 replica again, as redis-wait-replicas (1) asks" % promoted
        t_back = time.time()
        victim.start()
        wait_for(lambda: again in px.log() and self.readyz_below() == (200, []), timeout=30,
                 interval=0.1, what="the replica to be seen back")
        t_clear = time.time()
        self.cluster.wait_ok()
        r = px.request("POST", "/v1/charge/pix/create", body={"amount": 700},
                       headers=auth(key["key"]), timeout=30)
        self.assertEqual(r.status, 200, r)
        log = px.log()
        self.assertEqual(BELOW.findall(log), [promoted], log[-3000:])
        self.assertEqual(log.count(again), 1, log[-3000:])
        sys.stderr.write("wait 1 after a failover: named %.1f s after the kill, cleared %.1f s "
                         "after the old primary was started again\n"
                         % (t_named - t_kill, t_clear - t_back))


if __name__ == "__main__":
    unittest.main(verbosity=2)
