"""The Redis layer against a real cluster, on points the suites do not reach:
scripts flushed on every primary, pub/sub (`pixrelay tail`) across nodes, the
command-line tools given a replica's address, and a clean stop."""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import BIN, Cluster, Pixrelay, Workdir, auth, wait_for  # noqa: E402
from sink import Sink  # noqa: E402


class Layer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wd = Workdir()
        cls.cluster = Cluster(cls.wd.path).start()
        cls.sink = Sink().start()
        cls.px = Pixrelay(cls.wd.path, cls.cluster).start()
        cls.px.wait_ready()
        cls.px.cli("init")
        cls.key = cls.px.create_key("sandbox")

    @classmethod
    def tearDownClass(cls):
        if cls.px.proc:
            cls.px.stop(signal.SIGKILL)
        cls.sink.close()
        cls.cluster.stop()
        cls.wd.cleanup()

    def charge(self, **extra):
        body = {"amount": 1500}
        body.update(extra)
        r = self.px.request("POST", "/v1/charge/pix/create", body=body, headers=auth(self.key["key"]))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def test_scripts_flushed_on_every_primary_are_loaded_again(self):
        self.charge()
        for port in self.cluster.primaries():
            self.assertEqual(self.cluster.node(port).cmd("SCRIPT", "FLUSH"), "OK")
        for i in range(20):  # every shard of the account, auth's {keys}, ...
            c = self.charge(externalID="flushed-%d" % i)
            r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"],
                                headers=auth(self.key["key"]))
            self.assertEqual(r.status, 200, r)

    def test_tail_sees_deliveries_made_through_another_node(self):
        # tail subscribes on the primary of the channel's slot, where the
        # dispatcher asks PUBSUB NUMSUB; the PUBLISH reaches it from any node
        tail = subprocess.Popen([BIN, "--redis", self.cluster.url, "tail", "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: any(int(self.cluster.node(p).cmd("PUBSUB", "NUMSUB",
                                                                "pixrelay:deliveries")[1])
                                 for p in self.cluster.primaries()), what="tail to subscribe")
            owner = self.cluster._route("pixrelay:deliveries")
            self.assertEqual(int(self.cluster.node(owner).cmd("PUBSUB", "NUMSUB",
                                                              "pixrelay:deliveries")[1]), 1)
            time.sleep(1.2)  # the dispatcher asks PUBSUB NUMSUB once a second
            c = self.charge(postbackUrl=self.sink.url("/tail"))
            r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"],
                                headers=auth(self.key["key"]))
            self.assertEqual(r.status, 200, r)
            line = json.loads(tail.stdout.readline())
            self.assertEqual(line["destination"], self.sink.url("/tail"))
            self.assertEqual(line["outcome"], "delivered")
        finally:
            tail.kill()
            tail.wait()

    def test_command_line_tools_given_a_replica(self):
        replica = next(n for n in self.cluster.nodes
                       if n.running() and n.info("replication")["role"] == "slave")
        p = subprocess.run([BIN, "--redis", "redis://127.0.0.1:%d" % replica.port, "keys", "list",
                            "--json"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(self.key["id"], [k["id"] for k in json.loads(p.stdout)])
        self.assertEqual(p.stderr, "")
        p = subprocess.run([BIN, "--redis", "redis://127.0.0.1:%d/2" % replica.port, "keys", "list"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, "pixrelay: redis 127.0.0.1:%d: is a Redis Cluster, which has "
                         "only database 0: remove the /db from the redis setting\n" % replica.port)

    def test_z_clean_stop(self):
        self.assertEqual(self.px.stop(signal.SIGTERM), 0)
        log = self.px.log()
        self.assertNotIn("Sanitizer", log)
        self.px.start()
        self.px.wait_ready()


if __name__ == "__main__":
    unittest.main(verbosity=2)
