"""Charge lifecycle races, expiry across restarts, and production postback rules."""
import base64
import hashlib
import hmac
import json
import threading
import time
import unittest

from harness import Processes, auth, connect_bank, init_platforms, rkey, shard_of, wait_for

CREATE = "/v1/charge/pix/create"


class Base(Processes):
    def setUp(self):
        super().setUp()
        self.px = self.start()
        init = init_platforms(self.px)
        self.live_platform = init["production"]
        connect_bank(self.px)
        self.key = self.px.create_key("sandbox")["key"]
        self.live = self.px.create_key("production")["key"]

    def start(self, args=(), name="pixrelay"):
        return super().start(args, name)

    def charge(self, px=None, key=None, **body):
        body.setdefault("amount", 1000)
        r = (px or self.px).request("POST", CREATE, body=body, headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def events(self, px=None, key=None):
        r = (px or self.px).request("GET", "/v1/events?limit=100", headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["events"]


class Lifecycle(Base):
    def test_concurrent_double_payment_pays_once_with_one_event(self):
        c = self.charge(postbackUrl=self.sink.url("/race"))
        second = self.start(name="second")  # two processes race too
        statuses = []

        def pay(p):
            r = p.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"], headers=auth(self.key))
            statuses.append((r.status, r.json["error"]))

        threads = [threading.Thread(target=pay, args=((self.px, second)[i % 2],)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(sorted(s for s, _ in statuses), [200] + [400] * 19)
        self.assertTrue(all(e == "charge is PAID; only a PENDING charge can be paid"
                            for s, e in statuses if s == 400))
        self.sink.wait_count(1, path="/race")
        time.sleep(0.5)
        paid = [e for e in self.events() if e["type"] == "EVENT:CHARGE_PAID"]
        self.assertEqual(len(paid), 1)
        self.assertEqual(len(self.sink.requests("/race")), 1)
        r = self.px.request("GET", "/v1/baas/balance", headers=auth(self.key))
        self.assertEqual(r.json["data"]["balance"], c["amount"] - c["fee"])

    def test_sigterm_during_a_slow_delivery_exits_cleanly(self):
        # the destination takes longer than the grace period: pixrelay stops
        # anyway (exit 0, nothing leaked under the sanitizers) and the event
        # is delivered later by whoever holds the queue
        from sink import Reply
        self.sink.script("/slow", [Reply(200, delay=4)])
        self.px.stop()  # only the process under test may take the delivery
        self.procs.remove(self.px)
        px = self.start(["--shutdown-grace", "1"], name="graceful")
        c = self.charge(px=px, postbackUrl=self.sink.url("/slow"))
        r = px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"], headers=auth(self.key))
        self.assertEqual(r.status, 200)
        self.sink.wait_count(1, path="/slow")
        self.procs.remove(px)
        t0 = time.time()
        self.assertEqual(px.stop(), 0)
        self.assertLess(time.time() - t0, 3.5)
        self.assertIn("stopping anyway", px.log())

    def test_events_from_the_command_line(self):
        c = self.charge(postbackUrl=self.sink.url("/cli"))
        self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"], headers=auth(self.key))
        first = self.sink.wait_count(1, path="/cli")[0]
        evt = first.header("webhook-id")
        wait_for(lambda: json.loads(self.px.cli("events", "list", "--json").stdout)[0]["state"]
                 == "delivered" or None, what="delivered in the list")
        listed = json.loads(self.px.cli("events", "list", "--json").stdout)
        self.assertEqual([e["id"] for e in listed], [evt])
        self.assertEqual(listed[0]["destination"], self.sink.url("/cli"))
        shown = json.loads(self.px.cli("events", "show", evt, "--json").stdout)
        self.assertEqual(shown["attemptLog"][0]["status"], 200)
        self.assertEqual(shown["payload"]["data"]["id"], c["id"])
        out = self.px.cli("events", "replay", evt).stdout
        self.assertIn("queued for delivery again", out)
        again = self.sink.wait_count(2, path="/cli")[1]
        self.assertEqual(again.header("webhook-id"), evt)
        self.assertEqual(again.body, first.body)
        p = self.px.cli("events", "show", "evt_01ARZ3NDEKTSV4RRFFQ69G5FAV", check=False)
        self.assertEqual(p.returncode, 1)

    def test_replay_gets_a_fresh_age_budget(self):
        from sink import Reply
        self.px.stop()
        self.procs.remove(self.px)
        px = self.start(["--retry-max-age-s", "2", "--retry-max-attempts", "100",
                         "--retry-base-ms", "300", "--retry-factor-pct", "100"], name="aged")
        self.sink.script("/aged", [500] * 40)
        c = self.charge(px=px, postbackUrl=self.sink.url("/aged"))
        px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"], headers=auth(self.key))
        evt = self.sink.wait_count(1, path="/aged")[0].header("webhook-id")
        wait_for(lambda: px.request("GET", "/v1/events/" + evt, headers=auth(self.key))
                 .json["data"]["state"] == "dead" or None, timeout=10, what="dead by age")
        time.sleep(1.0)  # the event is now older than the maximum age
        before = self.sink.count("/aged")
        r = px.request("POST", "/v1/events/%s/replay" % evt, headers=auth(self.key))
        self.assertEqual(r.json["data"]["requeued"], True)
        # still failing: the replayed event is retried, not killed by its old age
        self.sink.wait_count(before + 3, path="/aged", timeout=10)

    def test_a_slow_destination_does_not_hold_up_the_others(self):
        from sink import Reply
        self.px.stop()
        self.procs.remove(self.px)
        px = self.start(["--delivery-concurrency", "4", "--delivery-per-host", "1",
                         "--delivery-sandbox-share", "100", "--delivery-timeout-ms", "5000"],
                        name="fair")
        self.sink.script("/slow-host", [Reply(200, delay=1.5)] * 12)
        for _ in range(12):
            c = self.charge(px=px, postbackUrl=self.sink.url("/slow-host"))
            px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"], headers=auth(self.key))
        self.sink.wait_count(1, path="/slow-host")
        fast = "http://localhost:%d/fast" % self.sink.port
        c = self.charge(px=px, postbackUrl=fast)
        t0 = time.time()
        px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"], headers=auth(self.key))
        self.sink.wait_count(1, path="/fast", timeout=10)
        self.assertLess(time.time() - t0, 3.5)

    def test_failure_is_a_final_state_without_event(self):
        c = self.charge(postbackUrl=self.sink.url("/fail"))
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-failure" % c["id"], headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["status"], "FAILED")
        for action, msg in (("simulate-payment", "charge is FAILED; only a PENDING charge can be paid"),
                            ("simulate-failure", "charge is FAILED; only a PENDING charge can be failed")):
            r = self.px.request("POST", "/v1/charge/pix/%s/%s" % (c["id"], action), headers=auth(self.key))
            self.assertEqual((r.status, r.json["error"]), (400, msg))
        r = self.px.request("POST", "/v1/charge/%s/refund" % c["id"], headers=auth(self.key))
        self.assertEqual((r.status, r.json["error"]),
                         (400, "charge is FAILED; only a PAID charge can be refunded"))
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-failure" % c["id"], headers=auth(self.live))
        self.assertEqual(r.status, 403)
        time.sleep(0.6)
        self.assertEqual(self.events(), [])
        self.assertEqual(self.sink.requests("/fail"), [])

    def test_expiry_fires_after_a_restart(self):
        c = self.charge(postbackUrl=self.sink.url("/exp"))
        self.px.stop()
        self.procs.remove(self.px)
        # the charge's time comes while no pixrelay runs
        past = int(time.time() * 1000) - 1000
        self.redis.cmd("HSET", rkey("ch:", c["id"]), "expires_ms", past)
        self.redis.cmd("ZADD", "pixrelay:{s%d}:expiry" % shard_of(c["id"]), past, c["id"])
        px = self.start(name="restarted")
        body = self.sink.wait_count(1, path="/exp", timeout=10)[0].json
        self.assertEqual(body["event"], "EVENT:CHARGE_EXPIRED")
        self.assertEqual(body["data"]["status"], "EXPIRED")
        r = px.request("GET", "/v1/charge/pix/" + c["id"], headers=auth(self.key))
        self.assertEqual(r.json["data"]["status"], "EXPIRED")
        r = px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"], headers=auth(self.key))
        self.assertEqual((r.status, r.json["error"]),
                         (400, "charge is EXPIRED; only a PENDING charge can be paid"))

    def ingest_paid(self, px, charge_id, upstream_id):
        secrets = json.loads(px.cli("secrets", "--env", "production", "--json").stdout)
        body = {"id": upstream_id, "event": "EVENT:CHARGE_PAID", "data": {"id": charge_id}}
        r = px.request("POST", "/v1/webhooks/ingest/" + secrets["account"], body=body,
                       headers={"signature": secrets["ingestSecret"]})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["chargeStatus"], "PAID")
        return r.json["data"]["event"]

    def test_production_postbacks_refuse_private_addresses(self):
        c = self.charge(key=self.live, postbackUrl=self.sink.url("/ssrf"))
        evt = self.ingest_paid(self.px, c["id"], "up-ssrf-1")

        def attempted():
            r = self.px.request("GET", "/v1/events/" + evt, headers=auth(self.live))
            return r.json["data"] if r.json["data"]["attempts"] >= 1 and r.json["data"]["state"] != "delivering" else None

        e = wait_for(attempted, what="a refused attempt")
        self.assertIn("destination address 127.0.0.1 is not public", e["lastError"])
        self.assertEqual(self.sink.requests("/ssrf"), [])

    def test_production_allow_list_lets_a_private_destination_through(self):
        self.px.stop()
        self.procs.remove(self.px)
        px = self.start(["--destination-allow", "127.0.0.0/8"], name="allow")
        c = self.charge(px=px, key=self.live, postbackUrl=self.sink.url("/allowed"))
        self.ingest_paid(px, c["id"], "up-allow-1")
        got = self.sink.wait_count(1, path="/allowed")[0]
        self.assertEqual(got.json["data"]["status"], "PAID")


def _sign(secret, req):
    key = base64.b64decode(secret[len("whsec_"):])
    msg = ("%s.%s." % (req.header("webhook-id"), req.header("webhook-timestamp"))).encode() + req.body
    return "v1," + base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode()


class Rotation(Base):
    def pay(self, path):
        c = self.charge(postbackUrl=self.sink.url(path))
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"], headers=auth(self.key))
        self.assertEqual(r.status, 200)
        return self.sink.wait_count(1, path=path)[0]

    def test_signing_secret_rotation_sends_both_signatures(self):
        old = json.loads(self.px.cli("secrets", "--env", "sandbox", "--json").stdout)["signingSecret"]
        req = self.pay("/before")
        self.assertEqual(req.header("webhook-signature"), _sign(old, req))
        out = json.loads(self.px.cli("secrets", "rotate", "--env", "sandbox", "--json").stdout)
        new = out["signingSecret"]
        self.assertNotEqual(new, old)
        req = self.pay("/during")
        self.assertEqual(req.header("webhook-signature").split(), [_sign(new, req), _sign(old, req)])
        self.px.cli("secrets", "end-rotation", "--env", "sandbox")
        req = self.pay("/after")
        self.assertEqual(req.header("webhook-signature"), _sign(new, req))
        p = self.px.cli("secrets", "spin", "--env", "sandbox", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown action 'spin'", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
