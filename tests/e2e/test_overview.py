"""GET /v1/overview (docs/dashboard.md, "Overview"), through the real binary,
with real sinks: what it counts is what the test caused. An account's events
delivered (N), dead after their last attempt (M events, 2 attempts each, at a
host answering 500), held for an endpoint disabled by its 410 (K), waiting
behind a slow host, each in its account's view and
added up in the environment's (a master key without X-Account-ID), nothing
of the sandbox in production's; the per-minute series as long as asked and
summing to the last hour; the failing host and the disabled endpoint named;
bad query parameters refused, naming them. The counters are the settle
script's, per call (src/store/lua/lib/overview.lua): the test reads their
hashes too, and checks their expiry.

(An endpoint disabled by request takes no events; one disabled by pixrelay keeps them.)

Settings: retries every second, 2 attempts at most, one request in flight
per host (so that a slow host keeps its events waiting).
"""
import time
import unittest

from harness import (ModuleStack, auth, shard_of, start_stack, store_account, wait_for)
from sink import Reply, Sink


class Stack(ModuleStack):
    shared = ("px", "redis", "sink", "slow", "master", "live_master")

    @classmethod
    def setup(cls):
        start_stack(cls, sink=True, args=[
            "--retry-base-ms", "1000", "--retry-factor-pct", "100", "--retry-max-attempts", "2",
            "--delivery-per-host", "1", "--delivery-per-host-max", "1"])
        cls.px.cli("init")
        cls.master = cls.px.create_key("sandbox", master=True)["key"]
        cls.live_master = cls.px.create_key("production", master=True)["key"]
        cls.slow = Sink().start()

    @classmethod
    def teardown(cls):
        cls.slow.close()


def tearDownModule():
    Stack.stop()


class Overview(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Stack.share(cls)

    def account(self, name, url):
        account, key = store_account(self.redis, self.px, name)
        self.px.cli("account", "set", "--env", "sandbox", "--account", account,
                    "--postback-url", url)
        return account, key

    def paid(self, key, n):
        """n charges paid; their events' ids."""
        ids = []
        for _ in range(n):
            r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 700},
                                headers=auth(key))
            self.assertEqual(r.status, 200, r)
            r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % r.json["data"]["id"],
                                headers=auth(key))
            self.assertEqual(r.status, 200, r)
            ids.append(r.header("X-Event-Id"))
        return ids

    def overview(self, key, query=""):
        r = self.px.request("GET", "/v1/overview" + query, headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def state(self, key, eid):
        r = self.px.request("GET", "/v1/events/" + eid, headers=auth(key))
        return r.json["data"]["state"] if r.status == 200 else None

    def test_the_overview_counts_what_happened(self):
        N, M, K = 5, 3, 2
        begun = int(time.time() * 1000)
        shop, shop_key = self.account("Loja", self.sink.url("/ok"))
        down, down_key = self.account("Fora", self.sink.url("/down"))
        self.sink.script("/down", [500] * (2 * M))
        delivered = self.paid(shop_key, N)
        dead = self.paid(down_key, M)
        for eid in delivered:
            wait_for(lambda: self.state(shop_key, eid) == "delivered", timeout=20,
                     what="%s delivered" % eid)
        for eid in dead:
            wait_for(lambda: self.state(down_key, eid) == "dead", timeout=30,
                     what="%s dead" % eid)
        # an endpoint that answered 410 is disabled and keeps what it takes: the first
        # delivery (one failed attempt) and the K - 1 events after it
        r = self.px.request("POST", "/v1/webhook-endpoints", headers=auth(shop_key),
                            body={"url": self.sink.url("/gone")})
        self.assertEqual(r.status, 200, r)
        ep = r.json["data"]["id"]
        self.sink.script("/gone", [410])
        kept = self.paid(shop_key, 1)
        wait_for(lambda: not self.px.request("GET", "/v1/webhook-endpoints/" + ep,
                                             headers=auth(shop_key)).json["data"]["enabled"],
                 timeout=20, what="the endpoint disabled")
        kept += self.paid(shop_key, K - 1)
        for eid in kept:
            wait_for(lambda: self.state(shop_key, eid) == "delivered", timeout=20,
                     what="%s delivered" % eid)

        got = self.overview(shop_key)
        self.assertEqual((got["environment"], got["account"]), ("sandbox", shop))
        self.assertEqual(got["lastHour"], {"delivered": N + K, "failedAttempts": 1, "dead": 0})
        self.assertEqual(got["lastDay"], got["lastHour"])
        self.assertEqual((got["waiting"], got["held"]), (0, K))
        self.assertEqual(got["failing"], [{"account": shop, "endpoint": ep, "failedAttempts": 1,
                                           "dead": 0, "waiting": K}])
        self.assertEqual(len(got["disabledEndpoints"]), 1)
        d = got["disabledEndpoints"][0]
        self.assertEqual((d["endpoint"], d["account"], d["kept"]), (ep, shop, K))
        per = got["perMinute"]
        self.assertEqual((per["minutes"], len(per["delivered"]), len(per["failedAttempts"]),
                          len(per["dead"])), (180, 180, 180, 180))
        self.assertEqual(sum(per["delivered"]), N + K)
        self.assertEqual(per["delivered"][:120], [0] * 120, "nothing before the test")
        # the series starts 179 minutes before the current one
        at = time.strptime(got["at"][:16], "%Y-%m-%dT%H:%M")
        start = time.strptime(per["from"][:16], "%Y-%m-%dT%H:%M")
        self.assertEqual(time.mktime(at) - time.mktime(start), 179 * 60)

        got = self.overview(down_key, "?minutes=5")
        self.assertEqual(got["lastHour"], {"delivered": 0, "failedAttempts": 2 * M, "dead": M})
        self.assertEqual(len(got["perMinute"]["delivered"]), 5)
        self.assertEqual(sum(got["perMinute"]["dead"]), M)
        host = self.sink.url("").split("//")[1].rstrip("/")
        self.assertEqual(got["failing"], [{"account": down, "host": host,
                                           "failedAttempts": 2 * M, "dead": M, "waiting": 0}])
        self.assertEqual((got["held"], got["disabledEndpoints"]), (0, []))

        # the environment's: both accounts, added up (a master key, no X-Account-ID)
        env = self.overview(self.master)
        self.assertIsNone(env["account"])
        self.assertEqual(env["lastHour"], {"delivered": N + K, "failedAttempts": 2 * M + 1,
                                           "dead": M})
        self.assertEqual(env["held"], K)
        # a master key acting as an account sees that account's
        r = self.px.request("GET", "/v1/overview", headers=auth(self.master, down))
        self.assertEqual(r.json["data"]["lastHour"], got["lastHour"])
        # production saw nothing of it
        live = self.overview(self.live_master)
        self.assertEqual((live["environment"], live["lastDay"], live["held"], live["failing"]),
                         ("production", {"delivered": 0, "failedAttempts": 0, "dead": 0}, 0, []))

        # the counters: one field per environment and per account in the minute's and
        # the hour's hash, expiring
        p = "pixrelay:{s%d}:" % shard_of(shop)
        now = int(time.time() * 1000)
        minutes = [k for k in ("%sovm:%d" % (p, m) for m in range(begun // 60000, now // 60000 + 1))
                   if self.redis.cmd("EXISTS", k)]
        self.assertTrue(minutes)
        total = sum(int(self.redis.cmd("HGET", k, "d:sandbox:" + shop) or 0) for k in minutes)
        self.assertEqual(total, N + K)
        for k in minutes:
            self.assertGreater(self.redis.cmd("TTL", k), 3 * 3600 - 120)
        hours = [k for k in ("%sovh:%d" % (p, h) for h in range(begun // 3600000, now // 3600000 + 1))
                 if self.redis.cmd("EXISTS", k)]
        self.assertTrue(hours)
        for k in hours:
            self.assertGreater(self.redis.cmd("TTL", k), 24 * 3600)

    def test_waiting_and_how_late(self):
        shop, key = self.account("Lenta", self.slow.url("/slow"))
        self.slow.script("/slow", [Reply(200, delay=8)] * 5)
        self.paid(key, 5)
        # two leased (one request in flight per host, and one more ready), the others wait
        seen = []
        try:
            wait_for(lambda: seen.append(self.overview(key)) or seen[-1]["waiting"] >= 2,
                     timeout=10, what="two events waiting")
        except AssertionError:
            self.fail("never two waiting: %s" % seen[-1])
        time.sleep(2)
        got = self.overview(key)
        self.assertIn(got["waiting"], (2, 3))
        self.assertGreaterEqual(got["oldestWaitingSeconds"], 2)
        self.assertIsNotNone(got["oldestWaitingDueAt"])
        env = self.overview(self.master)
        self.assertGreaterEqual(env["waiting"], 2)
        self.assertGreaterEqual(env["oldestWaitingSeconds"], 2)

    def test_the_cost_is_of_the_scope_not_of_the_shard(self):
        # 30,000 other accounts of the shard had outcomes in this hour and the one before
        # (their counters, as the settle writes them): an account's overview, and the
        # environment's, read buckets and what failed, never every account's counters
        shop, key = self.account("Vizinha", self.sink.url("/ok"))
        p = "pixrelay:{s%d}:" % shard_of(shop)
        hour = int(time.time() * 1000) // 3600000
        for h in (hour - 1, hour):
            k = "%sovh:%d" % (p, h)
            for first in range(0, 30000, 2000):
                args = []
                for i in range(first, first + 2000):
                    args += ["d:sandbox:%026d" % i, 1, "f:sandbox:%026d" % i, 1,
                             "x:sandbox:%026d" % i, 1]
                self.redis.cmd("HSET", k, *args)
        try:
            for who in (key, self.master):
                took = []
                for _ in range(3):
                    begun = time.monotonic()
                    got = self.overview(who)
                    took.append(time.monotonic() - begun)
                self.assertLess(min(took), 0.05, "GET /v1/overview took %s" % took)
            self.assertEqual(self.overview(key)["failing"], [])
        finally:
            self.redis.cmd("DEL", "%sovh:%d" % (p, hour - 1), "%sovh:%d" % (p, hour))

    def test_bad_queries_are_refused(self):
        for query, message in (
                ("?minutes=0", "minutes: must be an integer from 1 to 180"),
                ("?minutes=181", "minutes: must be an integer from 1 to 180"),
                ("?minutes=x", "minutes: must be an integer from 1 to 180"),
                ("?limit=5", "unknown query parameter 'limit'; allowed: minutes")):
            r = self.px.request("GET", "/v1/overview" + query, headers=auth(self.master))
            self.assertEqual((r.status, r.json["error"]), (400, message), query)
        r = self.px.request("GET", "/v1/overview")
        self.assertEqual(r.status, 401)


if __name__ == "__main__":
    unittest.main()
