"""One tenant cannot starve another (issue 9.4): sandbox postbacks pointed at
hundreds of destinations that never answer must not delay production
postbacks, nor another sandbox account's, by more than a bounded amount; a
destination that keeps timing out gets paused (circuit breaker)."""
import json
import socket
import time
import unittest

from harness import Processes, acct_key, auth, connect_bank, new_ulid, wait_for
from sink import Reply

CREATE = "/v1/charge/pix/create"


class BlackHoles:
    """n ports that take connections (the kernel's backlog) and never answer."""

    def __init__(self, n):
        self.socks = []
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen(64)
            self.socks.append(s)

    def urls(self):
        return ["http://127.0.0.1:%d/hole" % s.getsockname()[1] for s in self.socks]

    def close(self):
        for s in self.socks:
            s.close()


class Isolation(Processes):
    def charge(self, px, key, url):
        r = px.request("POST", CREATE, body={"amount": 1000, "postbackUrl": url}, headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["id"]

    def pay_sandbox(self, px, key, url):
        cid = self.charge(px, key, url)
        r = px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid, headers=auth(key))
        self.assertEqual(r.status, 200, r)

    def test_hundreds_of_dead_destinations_do_not_delay_other_tenants(self):
        holes = BlackHoles(300)
        self.addCleanup(holes.close)
        # default delivery settings; loopback allowed in production for the test
        px = self.start(["--destination-allow", "127.0.0.1"])
        px.cli("init")
        connect_bank(px)
        attacker = px.create_key("sandbox")["key"]
        live = px.create_key("production")["key"]
        # another sandbox tenant (stored as test_charges.py does)
        other = new_ulid()
        self.redis.cmd("HSET", acct_key("sandbox", other), "id", other, "env", "sandbox",
                       "kind", "business", "status", "ACTIVE", "created_at", "0", "owner", "",
                       "pix_key", "d1f7c2a4-3d5e-4f60-8a9b-0c1d2e3f4a5b")
        other_key = px.create_key("sandbox", account=other)["key"]
        # more events than the process's 512 delivery slots (two per dead host)
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda url: self.pay_sandbox(px, attacker, url), holes.urls() * 2))
        # the dead destinations now hold what they may of the process
        time.sleep(1.0)
        secrets = json.loads(px.cli("secrets", "--env", "production", "--json").stdout)
        cid = self.charge(px, live, self.sink.url("/live"))
        t0 = time.time()
        r = px.request("POST", "/v1/webhooks/ingest/" + secrets["account"],
                       body={"id": "up-live", "event": "EVENT:CHARGE_PAID", "data": {"id": cid}},
                       headers={"signature": secrets["ingestSecret"]})
        self.assertEqual(r.status, 200, r)
        self.sink.wait_count(1, path="/live", timeout=10)
        live_delay = time.time() - t0
        t0 = time.time()
        self.pay_sandbox(px, other_key, self.sink.url("/other"))
        self.sink.wait_count(1, path="/other", timeout=10)
        other_delay = time.time() - t0
        print("production postback after %.3f s, another sandbox tenant's after %.3f s, "
              "with 600 postbacks to 300 dead destinations in the sandbox"
              % (live_delay, other_delay))
        # before the isolation, 30 to 50 s (every slot held by a dead host)
        self.assertLess(live_delay, 2.0)
        self.assertLess(other_delay, 2.0)

    def test_a_destination_that_keeps_timing_out_is_paused(self):
        px = self.start(["--delivery-timeout-ms", "400", "--delivery-connect-timeout-ms", "400",
                         "--retry-base-ms", "200", "--retry-factor-pct", "100"])
        px.cli("init")
        key = px.create_key("sandbox")["key"]
        self.sink.script("/slow", [Reply(200, delay=3.0)] * 100)
        for _ in range(6):
            self.pay_sandbox(px, key, self.sink.url("/slow"))
        wait_for(lambda: "did not answer 5 times in a row: pausing deliveries to it for 5000 ms"
                 in px.log(), timeout=10, what="the circuit to open")
        opened = time.time()
        before = self.sink.count("/slow")
        time.sleep(3.0)
        # paused: no attempt at all for the cool-down (the events wait, their
        # attempts are not spent)
        self.assertEqual(self.sink.count("/slow"), before)
        # then one probe at a time (half-open)
        self.sink.wait_count(before + 1, path="/slow", timeout=6)
        self.assertGreaterEqual(time.time() - opened, 4.5)
        time.sleep(0.3)
        self.assertEqual(self.sink.count("/slow"), before + 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
