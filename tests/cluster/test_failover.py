"""Failover drills: SIGKILL of a Redis primary while pixrelay is under load.

A Redis Cluster of 3 primaries with a replica each (cluster-node-timeout 1 s):
the primary that holds the platform account's shard is killed while four
clients create charges. pixrelay must answer 200 or 503 (never another
status, never drop a connection), 503 only between the kill and shortly after
the cluster has promoted the replica, then carry on with the promoted replica
by itself (same process), and /readyz must say which primary is missing
while it is.

With redis-wait-replicas 1, every acknowledged charge must still be there
after the failover (replication is asynchronous: without WAIT, a change
acknowledged in the last moment before the kill may be lost, and this drill
reports how many were). The killed node then rejoins as a replica, and with
WAIT the promoted primary's writes are refused (503) until it has.
"""
import os
import signal
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Cluster, Pixrelay, Workdir, auth, shard_of  # noqa: E402

CLIENTS = 4
GRACE_S = 3.0  # after the cluster is whole again, until pixrelay must answer 200


class Load:
    """Clients creating charges in a loop; every answer is kept with its time."""

    def __init__(self, px, key):
        self.px, self.key = px, key
        self.answers = []  # (start, end, status, charge id or error)
        self.lock = threading.Lock()
        self.stop = False
        self.threads = [threading.Thread(target=self.run, args=(i,)) for i in range(CLIENTS)]

    def run(self, i):
        n = 0
        while not self.stop:
            n += 1
            t0 = time.time()
            try:
                r = self.px.request("POST", "/v1/charge/pix/create",
                                    body={"amount": 1000 + n, "externalID": "fo-%d-%d" % (i, n)},
                                    headers=auth(self.key), timeout=30)
                status = r.status
                what = r.json["data"]["id"] if status == 200 else r.json.get("error")
            except Exception as e:  # a dropped connection is a failure of the drill
                status, what = None, repr(e)
            with self.lock:
                self.answers.append((t0, time.time(), status, what))
            if status != 200:
                time.sleep(0.05)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        for t in self.threads:
            t.join()


class ClusterFailover(unittest.TestCase):
    def setUp(self):
        self.wd = Workdir()
        self.cluster = Cluster(self.wd.path).start()
        self.px = None

    def tearDown(self):
        if self.px:
            self.px.stop(signal.SIGKILL)
        self.cluster.stop()
        self.wd.cleanup()

    def drill(self, args, rejoin):
        px = self.px = Pixrelay(self.wd.path, self.cluster, args=args).start()
        px.wait_ready()
        pid = px.proc.pid
        px.cli("init")
        key = px.create_key("sandbox")
        account = key["account"]
        port = self.cluster._route("{s%d}" % shard_of(account))
        victim = self.cluster.node(port)
        replica = next(n for n in self.cluster.nodes
                       if n.running() and n.info("replication").get("master_port") == str(port))
        readyz = []

        with Load(px, key["key"]) as load:
            time.sleep(2)
            t_kill = time.time()
            victim.stop(signal.SIGKILL)
            # /readyz names the primary that is missing, while it is
            deadline = time.time() + 30
            while time.time() < deadline:
                r = px.request("GET", "/readyz")
                readyz.append((r.status, r.json.get("redis")))
                if r.status == 200:
                    break
                time.sleep(0.05)
            self.cluster.wait_ok()
            t_ok = time.time()
            self.assertEqual(replica.info("replication")["role"], "master")
            t_back = t_ok
            if rejoin:
                victim.start()
                self.cluster.wait_ok()
                t_back = time.time()
            time.sleep(4)
            t_end = time.time()

        self.assertEqual(px.proc.poll(), None, "pixrelay must not exit")
        self.assertEqual(px.proc.pid, pid)
        self.assertEqual(px.request("GET", "/readyz").status, 200)
        statuses = {a[2] for a in load.answers}
        self.assertTrue(statuses <= {200, 503}, [a for a in load.answers if a[2] not in (200, 503)][:5])
        for a in load.answers:
            if a[2] == 503:
                self.assertEqual(a[3], "service unavailable: storage is unreachable; retry later")
                self.assertGreaterEqual(a[1], t_kill, a)
                self.assertLessEqual(a[0], t_back + GRACE_S, a)
        after = [a for a in load.answers if a[0] > t_back + GRACE_S]
        self.assertGreater(len(after), 10)
        self.assertEqual({a[2] for a in after}, {200})
        self.assertIn(503, statuses)
        self.assertTrue(any(s == 503 and ":%d" % port in (e or "") for s, e in readyz), readyz)
        # what was acknowledged is there after the failover
        acked = [a[3] for a in load.answers if a[2] == 200]
        lost = [cid for cid in acked
                if px.request("GET", "/v1/charge/pix/" + cid, headers=auth(key["key"])).status != 200]
        window = max((a[1] for a in load.answers if a[2] == 503), default=t_kill) - t_kill
        sys.stderr.write("failover %s: %d answers (%d x 503 within %.1f s of the kill; failover "
                         "took %.1f s), %d acknowledged, %d lost\n"
                         % (" ".join(args) or "(default)", len(load.answers),
                            sum(1 for a in load.answers if a[2] == 503), window, t_ok - t_kill,
                            len(acked), len(lost)))
        return lost

    def test_sigkill_of_a_primary_during_load(self):
        self.drill([], rejoin=False)

    def test_with_wait_nothing_acknowledged_is_lost(self):
        lost = self.drill(["--redis-wait-replicas", "1"], rejoin=True)
        self.assertEqual(lost, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
