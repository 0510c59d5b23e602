"""Postbacks end to end: a charge changes state through the API, pixrelay
delivers the event to the charge's postbackUrl, and a real HTTP sink (sink.py)
records what arrived and answers per a script.

Everything asserted is what a merchant sees: the requests at its endpoint
(body, headers, signatures checked independently with the openssl command line
and Python's hmac), their timing, and GET /v1/events/{id}.

Retries are made short (first retry after 300 ms +/- 20 % jitter, x3 each time,
4 attempts in all) so that the whole file runs in well under 90 s; the longest
test waits for a delivery lease to run out after pixrelay is killed (~22 s,
because the lease margin is a fixed 20 s).
"""
import base64
import hashlib
import hmac
import json
import os
import random
import re
import signal
import subprocess
import threading
import time
import unittest
from email.utils import formatdate

from harness import (BIN, Pixrelay, Redis, Workdir, acct_key, auth, connect_bank, init_platforms, new_ulid,
                     rkey, shard_of, wait_for)
from sink import Reply, Sink

CREATE = "/v1/charge/pix/create"
EVT_RE = re.compile(r"^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$")
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BASE_MS, FACTOR_PCT, MAX_ATTEMPTS = 300, 300, 4
TIMEOUT_MS, CONNECT_MS = 1000, 500
DISPATCH_ARGS = ["--retry-base-ms", str(BASE_MS), "--retry-factor-pct", str(FACTOR_PCT),
                 "--retry-max-attempts", str(MAX_ATTEMPTS),
                 "--delivery-timeout-ms", str(TIMEOUT_MS),
                 "--delivery-connect-timeout-ms", str(CONNECT_MS),
                 "--shutdown-grace", "2"]
UNAVAILABLE = "service unavailable: storage is unreachable; retry later"


def version():
    out = subprocess.run([BIN, "version"], capture_output=True, text=True, timeout=10).stdout
    return out.split()[-1]


# ---- independent signature checks ----

def hmac_key(secret):
    assert secret.startswith("whsec_"), secret
    return base64.b64decode(secret[len("whsec_"):])


def sign_with_openssl(secret, msg_id, timestamp, body):
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    p = subprocess.run(["openssl", "dgst", "-sha256", "-mac", "HMAC", "-macopt",
                        "hexkey:" + hmac_key(secret).hex(), "-binary"],
                       input=signed, capture_output=True, timeout=10, check=True)
    return "v1," + base64.b64encode(p.stdout).decode()


def sign_with_python(secret, msg_id, timestamp, body):
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    mac = hmac.new(hmac_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


# ---- a Redis with pixrelay's platform accounts and keys ----

class Stack:
    """A redis-server, the platform accounts, a sandbox and a production key."""

    def __init__(self, wd, name):
        d = os.path.join(wd.path, name)
        os.makedirs(d, exist_ok=True)
        self.dir = d
        self.redis = Redis(d).start()
        self.procs = []
        tool = Pixrelay(d, self.redis, name="cli")
        init = init_platforms(tool)
        connect_bank(tool)
        self.sandbox_platform = init["sandbox"]
        self.production_platform = init["production"]
        self.key = tool.create_key("sandbox")["key"]
        self.live = tool.create_key("production")["key"]
        self.secrets = json.loads(tool.cli("secrets", "--env", "sandbox", "--json").stdout)
        self.tool = tool

    def start(self, name, args=(), dispatch=True):
        args = list(DISPATCH_ARGS) + list(args)
        if not dispatch:
            args += ["--dispatch", "0"]
        p = Pixrelay(self.dir, self.redis, args=args, name=name).start()
        p.wait_ready()
        self.procs.append(p)
        return p

    def stop(self):
        for p in self.procs:
            try:
                p.stop()
            except Exception:
                p.stop(signal.SIGKILL)
        self.redis.stop()


class Env:
    ready = False

    @classmethod
    def start(cls):
        if cls.ready:
            return cls
        cls.wd = Workdir()
        cls.sink = Sink().start()
        cls.stacks = []
        cls.ready = True
        try:
            cls.main = cls.stack("main")
            cls.px = cls.main.start("pixrelay")
        except BaseException:
            cls.stop()
            raise
        return cls

    @classmethod
    def stack(cls, name):
        s = Stack(cls.wd, name)
        cls.stacks.append(s)
        return s

    @classmethod
    def stop(cls):
        if not cls.ready:
            return
        for s in cls.stacks:
            try:
                s.stop()
            except Exception:
                pass
        cls.sink.close()
        cls.wd.cleanup()
        cls.ready = False


def tearDownModule():
    Env.stop()


class PostbackBase(unittest.TestCase):
    _paths = 0

    @classmethod
    def setUpClass(cls):
        env = Env.start()
        cls.env = env
        cls.sink = env.sink
        cls.main = env.main
        cls.px = env.px
        cls.key = env.main.key
        cls.live = env.main.live
        cls.secrets = env.main.secrets

    def path(self, tag=""):
        PostbackBase._paths += 1
        return "/pb/%s/%d%s" % (self._testMethodName, PostbackBase._paths, tag)

    # ---- API helpers ----

    def create(self, url, amount=1000, key=None, px=None, **extra):
        body = {"amount": amount, "postbackUrl": url}
        body.update(extra)
        r = (px or self.px).request("POST", CREATE, body=body, headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def pay(self, cid, key=None, px=None):
        return (px or self.px).request("POST", "/v1/charge/pix/%s/simulate-payment" % cid,
                                       headers=auth(key or self.key))

    def paid(self, cid, key=None, px=None):
        r = self.pay(cid, key, px)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["status"], "PAID")
        return r.json["data"]

    def refund(self, cid, body=None, key=None, px=None):
        return (px or self.px).request("POST", "/v1/charge/%s/refund" % cid, body=body,
                                       headers=auth(key or self.key))

    def charge(self, cid, key=None, px=None):
        r = (px or self.px).request("GET", "/v1/charge/pix/%s" % cid,
                                    headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def event(self, eid, key=None, px=None):
        r = (px or self.px).request("GET", "/v1/events/%s" % eid, headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def wait_event(self, eid, state, key=None, px=None, timeout=10):
        return wait_for(lambda: (lambda e: e if e["state"] == state else None)(
            self.event(eid, key, px)), timeout, what="event %s to be %s" % (eid, state))

    def assertError(self, r, status, message):
        self.assertEqual(r.status, status, r)
        self.assertEqual(r.json, {"error": message, "status": status, "data": []})

    def gaps(self, reqs):
        return [b.time - a.time for a, b in zip(reqs, reqs[1:])]


class Delivery(PostbackBase):
    def test_success_first_try(self):
        path = self.path()
        ch = self.create(self.sink.url(path), amount=4321, externalID="wc_order_17",
                         comment="Pedido nº 17 — café \"especial\"", name="José Ñuñez",
                         email="jose@example.com", document="52998224725")
        self.paid(ch["id"])
        req = self.sink.wait_count(1, path=path)[0]
        now = time.time()
        body = req.json
        self.assertEqual(req.method, "POST")
        self.assertEqual(set(body), {"id", "event", "data"})
        self.assertRegex(body["id"], EVT_RE)
        self.assertEqual(body["event"], "EVENT:CHARGE_PAID")
        after = self.charge(ch["id"])
        self.assertEqual(after["status"], "PAID")
        self.assertEqual(body["data"], after)
        # byte for byte: the data member is the charge's JSON text as GET answers it
        r = self.px.request("GET", "/v1/charge/pix/%s" % ch["id"], headers=auth(self.key))
        prefix = b'{"error":null,"status":200,"data":'
        self.assertTrue(r.body.startswith(prefix) and r.body.endswith(b"}"), r)
        self.assertEqual(req.body, b'{"id":"%s","event":"EVENT:CHARGE_PAID","data":%s}'
                         % (body["id"].encode(), r.body[len(prefix):-1]))
        self.assertEqual(body["data"]["externalID"], "wc_order_17")
        self.assertEqual(body["data"]["comment"], 'Pedido nº 17 — café "especial"')
        self.assertEqual(body["data"]["customer"]["name"], "José Ñuñez")
        self.assertEqual(body["data"]["customer"]["document"], "52998224725")

        # headers
        self.assertEqual(req.header("webhook-id"), body["id"])
        ts = req.header("webhook-timestamp")
        self.assertRegex(ts, r"^\d+$")
        self.assertLessEqual(abs(int(ts) - now), 5)
        sig = req.header("webhook-signature")
        self.assertEqual(sig, sign_with_openssl(self.secrets["signingSecret"], body["id"], ts,
                                                req.body))
        self.assertEqual(sig, sign_with_python(self.secrets["signingSecret"], body["id"], ts,
                                               req.body))
        # a different body or timestamp does not verify
        self.assertNotEqual(sig, sign_with_python(self.secrets["signingSecret"], body["id"],
                                                  str(int(ts) + 1), req.body))
        self.assertEqual(req.header("signature"), self.secrets["signature"])
        self.assertEqual(req.header("User-Agent"), "pixrelay/" + version())
        self.assertEqual(req.headers_named("Content-Type"), ["application/json"])
        self.assertEqual(len(req.headers_named("webhook-id")), 1)
        self.assertEqual(len(req.headers_named("signature")), 1)

        ev = self.wait_event(body["id"], "delivered")
        self.assertEqual(ev["attempts"], 1)
        self.assertEqual(ev["type"], "EVENT:CHARGE_PAID")
        self.assertEqual(ev["destination"], self.sink.url(path))
        self.assertEqual(ev["payload"], body)
        self.assertEqual(ev["lastStatus"], 200)
        self.assertIsNone(ev["lastError"])
        self.assertIsNone(ev["nextAttemptAt"])
        self.assertIsNotNone(ev["deliveredAt"])
        self.assertEqual(len(ev["attemptLog"]), 1)
        log = ev["attemptLog"][0]
        self.assertEqual(log["status"], 200)
        self.assertEqual(log["attempt"], 1)
        self.assertEqual(log["outcome"], "delivered")
        self.assertEqual(log["response"], '{"received":true}')
        self.assertIsNone(log["error"])
        # exactly one request
        self.assertEqual(self.sink.count(path), 1)

    def test_connections_are_kept_across_quiet_moments(self):
        # two bursts of slow answers with a quiet second between: the second
        # burst reuses the first one's connections instead of opening new
        # ones (every connection ever opened was needed at the busiest moment)
        sink = Sink().start()
        try:
            path = self.path()
            sink.script(path, [Reply(delay=0.3)] * 32)
            for burst in (1, 2):
                ids = [self.create(sink.url(path))["id"] for _ in range(16)]
                for cid in ids:
                    self.paid(cid)
                sink.wait_count(16 * burst, path=path, timeout=20)
                time.sleep(1.0)
            self.assertGreater(sink.max_open, 1)
            self.assertEqual(sink.accepted, sink.max_open)
        finally:
            sink.close()

    def test_retries_after_500_with_growing_gaps(self):
        path = self.path()
        self.sink.script(path, [500, 500, 200])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        reqs = self.sink.wait_count(3, path=path)
        ids = {r.webhook_id for r in reqs}
        self.assertEqual(len(ids), 1)
        self.assertEqual({r.body for r in reqs}, {reqs[0].body})
        g = self.gaps(reqs)
        # 300 ms +/- 20 % then 900 ms +/- 20 % (plus up to one 200 ms tick)
        self.assertGreaterEqual(g[0], 0.22, g)
        self.assertGreater(g[1], g[0], g)
        self.assertGreaterEqual(g[1], 0.7, g)
        ev = self.wait_event(ids.pop(), "delivered")
        self.assertEqual(ev["attempts"], 3)
        self.assertEqual([a["status"] for a in ev["attemptLog"]], [500, 500, 200])
        self.assertEqual([a["outcome"] for a in ev["attemptLog"]], ["retry", "retry", "delivered"])
        self.assertEqual([a["attempt"] for a in ev["attemptLog"]], [1, 2, 3])
        self.assertEqual(ev["attemptLog"][0]["error"], "HTTP 500")
        # each attempt is signed again with its own timestamp
        for r in reqs:
            self.assertEqual(r.header("webhook-signature"),
                             sign_with_python(self.secrets["signingSecret"], r.webhook_id,
                                              r.header("webhook-timestamp"), r.body))

    def test_retry_after_is_honoured(self):
        path = self.path()
        self.sink.script(path, [Reply(503, {"Retry-After": "1"}),
                                Reply(429, {"Retry-After": "2"}),
                                Reply(503, {"Retry-After": lambda: formatdate(
                                    time.time() + 3, usegmt=True)}),
                                200])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        reqs = self.sink.wait_count(4, path=path, timeout=15)
        g = self.gaps(reqs)
        # without Retry-After the first retry would come after ~300 ms; a due
        # retry is picked up within one 200 ms tick
        self.assertGreaterEqual(g[0], 0.95, g)
        self.assertLess(g[0], 1.6, g)
        self.assertGreaterEqual(g[1], 1.95, g)
        self.assertLess(g[1], 2.6, g)
        # an HTTP-date ~3 s ahead (whole seconds: 2 to 3 s from the answer)
        self.assertGreaterEqual(g[2], 1.5, g)
        self.assertLess(g[2], 3.6, g)
        ev = self.wait_event(reqs[0].webhook_id, "delivered")
        self.assertEqual([a["status"] for a in ev["attemptLog"]], [503, 429, 503, 200])

    def test_retry_after_only_counts_on_429_and_503(self):
        path = self.path()
        self.sink.script(path, [Reply(500, {"Retry-After": "5"}), 200])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        reqs = self.sink.wait_count(2, path=path)
        self.assertLess(reqs[1].time - reqs[0].time, 1.0)

    def test_max_age_ends_retries(self):
        stack = Env.stack("maxage")
        px = stack.start("pixrelay", ["--retry-max-age-s", "1"])
        path = self.path()
        self.sink.script(path, [500] * 10)
        ch = self.create(self.sink.url(path), key=stack.key, px=px)
        self.paid(ch["id"], key=stack.key, px=px)
        eid = self.sink.wait_count(1, path=path)[0].webhook_id
        ev = self.wait_event(eid, "dead", key=stack.key, px=px, timeout=5)
        # 300 ms then 900 ms (+/- 20 %): the third attempt would come after the
        # 1 s max age (or just inside it), so 2 or 3 attempts instead of 4
        self.assertIn(ev["attempts"], (2, 3))
        self.assertEqual(self.sink.count(path), ev["attempts"])
        reqs = self.sink.requests(path)
        self.assertLess(reqs[-1].time - reqs[0].time, 1.1)
        self.assertEqual(ev["lastError"], "HTTP 500")

    def test_retry_after_is_capped(self):
        stack = Env.stack("capped")
        px = stack.start("pixrelay", ["--retry-cap-ms", "1500"])
        path = self.path()
        self.sink.script(path, [Reply(503, {"Retry-After": "3600"}), 200])
        ch = self.create(self.sink.url(path), key=stack.key, px=px)
        self.paid(ch["id"], key=stack.key, px=px)
        reqs = self.sink.wait_count(2, path=path, timeout=5)
        gap = reqs[1].time - reqs[0].time
        self.assertGreaterEqual(gap, 1.45)
        self.assertLess(gap, 2.2)

    # a retry put back because its host is busy (--delivery-per-host; no
    # attempt is made) keeps the event's lastStatus/lastError of the real last
    # attempt
    def test_busy_host_keeps_the_last_attempt_result(self):
        # one delivery at a time per host: while one postback is held by the
        # sink, a due retry to the same host waits for the slot (no attempt
        # is spent meanwhile) and the event keeps its last result
        stack = Env.stack("perhost")
        px = stack.start("pixrelay", ["--delivery-per-host", "1"])
        failing, holding = self.path("-failing"), self.path("-holding")
        self.sink.script(failing, [500])
        # held for less than the delivery timeout (1 s), longer than A's retry delay
        self.sink.script(holding, [Reply(200, delay=0.9)])
        a = self.create(self.sink.url(failing), key=stack.key, px=px)
        b = self.create(self.sink.url(holding), key=stack.key, px=px)
        self.paid(a["id"], key=stack.key, px=px)
        eid = self.sink.wait_count(1, path=failing)[0].webhook_id
        ev = self.wait_event(eid, "pending", key=stack.key, px=px)
        self.assertEqual((ev["lastStatus"], ev["lastError"]), (500, "HTTP 500"))
        self.paid(b["id"], key=stack.key, px=px)
        held = self.sink.wait_count(1, path=holding)[0]
        time.sleep(0.5)  # A's retry (due ~0.3 s after its failure) is waiting now
        ev = self.event(eid, key=stack.key, px=px)
        self.assertEqual((ev["lastStatus"], ev["lastError"]), (500, "HTTP 500"))
        self.assertEqual(len(ev["attemptLog"]), 1)
        self.assertEqual(self.sink.count(failing), 1)
        # the slot frees when B's answer comes: then A's retry goes, and succeeds
        retry = self.sink.wait_count(2, path=failing, timeout=10)[1]
        self.assertGreaterEqual(retry.time, held.time + 0.85)
        ev = self.wait_event(eid, "delivered", key=stack.key, px=px)
        self.assertEqual(ev["attempts"], 2)
        self.assertEqual([x["status"] for x in ev["attemptLog"]], [500, 200])

    def test_410_gone_stops_delivery(self):
        path = self.path()
        self.sink.script(path, [410])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        req = self.sink.wait_count(1, path=path)[0]
        ev = self.wait_event(req.webhook_id, "dead")
        self.assertEqual(ev["attempts"], 1)
        self.assertEqual(ev["lastStatus"], 410)
        self.assertIn("410", ev["lastError"])
        self.assertIsNone(ev["nextAttemptAt"])
        self.assertIsNotNone(ev["deadAt"])
        self.assertEqual([a["outcome"] for a in ev["attemptLog"]], ["dead"])
        # a retry would have come within ~0.6 s; nothing comes (negative check: a window)
        time.sleep(1.0)
        self.assertEqual(self.sink.count(path), 1)

    def test_timeout_counts_as_a_failed_attempt(self):
        path = self.path()
        self.sink.script(path, [Reply(200, delay=TIMEOUT_MS / 1000.0 + 1.5), 200])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        reqs = self.sink.wait_count(2, path=path)
        self.assertEqual(reqs[0].webhook_id, reqs[1].webhook_id)
        ev = self.wait_event(reqs[0].webhook_id, "delivered")
        self.assertEqual(ev["attempts"], 2)
        first, second = ev["attemptLog"]
        self.assertIsNone(first["status"])
        self.assertEqual(first["outcome"], "retry")
        self.assertIn("timed out", first["error"].lower())
        self.assertGreaterEqual(first["durationMs"], TIMEOUT_MS - 50)
        self.assertLess(first["durationMs"], TIMEOUT_MS + 1000)
        self.assertEqual(second["status"], 200)

    def test_dropped_connection_is_retried(self):
        # a sink of its own, so that the dropped request is on a fresh connection
        # (curl itself resends a request once when a reused keep-alive
        # connection turns out to be closed; that is not an attempt)
        sink = Sink().start()
        self.addCleanup(sink.close)
        path = self.path()
        sink.script(path, ["close", 200])
        ch = self.create(sink.url(path))
        self.paid(ch["id"])
        reqs = sink.wait_count(2, path=path)
        self.assertEqual(reqs[0].webhook_id, reqs[1].webhook_id)
        ev = self.wait_event(reqs[0].webhook_id, "delivered")
        self.assertEqual(ev["attempts"], 2)
        self.assertIsNone(ev["attemptLog"][0]["status"])
        self.assertTrue(ev["attemptLog"][0]["error"])
        self.assertEqual(ev["attemptLog"][1]["status"], 200)

    def test_redirect_is_a_failure_not_followed(self):
        path, elsewhere = self.path(), self.path("-elsewhere")
        self.sink.script(path, [Reply(302, {"Location": self.sink.url(elsewhere)}), 200])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        reqs = self.sink.wait_count(2, path=path)
        ev = self.wait_event(reqs[0].webhook_id, "delivered")
        self.assertEqual([a["status"] for a in ev["attemptLog"]], [302, 200])
        self.assertEqual(self.sink.count(elsewhere), 0)

    def test_dead_after_last_attempt_then_replay(self):
        path = self.path()
        # 4 failures use the whole budget; after the replay one more failure is
        # retried (a fresh budget), then 200
        self.sink.script(path, [500] * MAX_ATTEMPTS + [500, 200])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        reqs = self.sink.wait_count(MAX_ATTEMPTS, path=path, timeout=15)
        eid = reqs[0].webhook_id
        ev = self.wait_event(eid, "dead")
        self.assertEqual(ev["attempts"], MAX_ATTEMPTS)
        self.assertEqual(ev["lastStatus"], 500)
        self.assertEqual(ev["lastError"], "HTTP 500")
        self.assertEqual([a["outcome"] for a in ev["attemptLog"]],
                         ["retry"] * (MAX_ATTEMPTS - 1) + ["dead"])
        self.assertEqual(self.sink.count(path), MAX_ATTEMPTS)

        r = self.px.request("POST", "/v1/events/%s/replay" % eid, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"], {"id": eid, "requeued": True})
        more = self.sink.wait_count(MAX_ATTEMPTS + 2, path=path)
        self.assertEqual({q.webhook_id for q in more}, {eid})
        self.assertEqual({q.body for q in more}, {reqs[0].body})
        ev = self.wait_event(eid, "delivered")
        self.assertEqual(ev["attempts"], MAX_ATTEMPTS + 2)
        self.assertEqual([a["status"] for a in ev["attemptLog"]],
                         [500] * (MAX_ATTEMPTS + 1) + [200])
        self.assertIsNone(ev["lastError"])

    def test_replay_of_an_event_in_flight_is_not_requeued(self):
        path = self.path()
        self.sink.script(path, [500, 500, 200])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        eid = self.sink.wait_count(1, path=path)[0].webhook_id
        self.wait_event(eid, "pending")
        r = self.px.request("POST", "/v1/events/%s/replay" % eid, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"], {"id": eid, "requeued": False})
        self.wait_event(eid, "delivered")
        self.assertEqual(self.sink.count(path), 3)

    def test_events_of_one_charge_are_delivered_in_order(self):
        path = self.path()
        self.sink.script(path, [500])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        r = self.refund(ch["id"], {"amount": ch["amount"], "reason": "x"})
        self.assertEqual(r.status, 200, r)
        reqs = self.sink.wait_count(3, path=path)
        self.assertEqual([q.json["event"] for q in reqs],
                         ["EVENT:CHARGE_PAID", "EVENT:CHARGE_PAID", "EVENT:CHARGE_REFUND"])
        self.assertEqual(reqs[0].webhook_id, reqs[1].webhook_id)
        self.assertNotEqual(reqs[1].webhook_id, reqs[2].webhook_id)
        self.assertEqual([q.reply.status for q in reqs], [500, 200, 200])
        self.assertEqual(reqs[0].json["data"]["status"], "PAID")
        self.assertEqual(reqs[2].json["data"]["status"], "REFUNDED")
        self.wait_event(reqs[2].webhook_id, "delivered")

    def test_a_dead_event_does_not_block_the_next_one(self):
        path = self.path()
        self.sink.script(path, [410])
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        self.assertEqual(self.refund(ch["id"]).status, 200)
        reqs = self.sink.wait_count(2, path=path)
        self.assertEqual([q.json["event"] for q in reqs],
                         ["EVENT:CHARGE_PAID", "EVENT:CHARGE_REFUND"])
        self.wait_event(reqs[0].webhook_id, "dead")
        self.wait_event(reqs[1].webhook_id, "delivered")

    def test_replay_of_a_delivered_event(self):
        path = self.path()
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        first = self.sink.wait_count(1, path=path)[0]
        self.wait_event(first.webhook_id, "delivered")
        r = self.px.request("POST", "/v1/events/%s/replay" % first.webhook_id,
                            headers=auth(self.key))
        self.assertEqual(r.json["data"], {"id": first.webhook_id, "requeued": True})
        again = self.sink.wait_count(2, path=path)[1]
        self.assertEqual(again.webhook_id, first.webhook_id)
        self.assertEqual(again.body, first.body)
        self.assertEqual(again.header("webhook-signature"),
                         sign_with_python(self.secrets["signingSecret"], again.webhook_id,
                                          again.header("webhook-timestamp"), again.body))
        ev = self.wait_event(first.webhook_id, "delivered")
        self.assertEqual(ev["attempts"], 2)
        self.assertEqual([a["status"] for a in ev["attemptLog"]], [200, 200])

    def test_sandbox_may_deliver_to_loopback(self):
        # Sandbox postbacks may reach any address, 127.0.0.1 included. The
        # production SSRF check (only public addresses, or --destination-allow)
        # cannot be reached here: production charges are not paid through
        # simulate-payment; it is covered with the ingest endpoint later.
        path = "/x" + self.path()
        ch = self.create("http://127.0.0.1:%d%s" % (self.sink.port, path))
        self.paid(ch["id"])
        req = self.sink.wait_count(1, path=path)[0]
        ev = self.wait_event(req.webhook_id, "delivered")
        self.assertEqual(ev["attemptLog"][0]["status"], 200)


class Lifecycle(PostbackBase):
    def test_refund(self):
        path = self.path()
        ch = self.create(self.sink.url(path), amount=2500, externalID="wc_order_99")
        self.paid(ch["id"])
        r = self.refund(ch["id"], {"amount": 2499, "reason": "x"})
        self.assertError(r, 400, "amount: partial refunds are not supported; omit amount or "
                                 "send the charge's amount (2500)")
        self.assertEqual(self.charge(ch["id"])["status"], "PAID")
        r = self.refund(ch["id"], {"amount": 2500, "reason": "x"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["status"], "REFUNDED")
        now = self.charge(ch["id"])
        self.assertEqual(r.json["data"], now)
        reqs = self.sink.wait_until(
            lambda rs: (lambda got: got if len(got) >= 2 else None)(
                [q for q in rs if q.path == path]), what="PAID and REFUND postbacks")
        self.assertEqual([q.json["event"] for q in reqs], ["EVENT:CHARGE_PAID",
                                                          "EVENT:CHARGE_REFUND"])
        refund = reqs[1].json
        self.assertEqual(refund["data"], now)
        self.assertEqual(refund["data"]["externalID"], "wc_order_99")
        self.assertEqual(refund["id"], reqs[1].webhook_id)
        ev = self.wait_event(refund["id"], "delivered")
        self.assertEqual(ev["type"], "EVENT:CHARGE_REFUND")
        # once refunded, never again
        r = self.refund(ch["id"], {"amount": 2500, "reason": "x"})
        self.assertError(r, 400, "charge is REFUNDED; only a PAID charge can be refunded")

    def test_refund_without_body_is_full(self):
        path = self.path()
        ch = self.create(self.sink.url(path), amount=700)
        self.paid(ch["id"])
        r = self.refund(ch["id"])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["status"], "REFUNDED")
        reqs = self.sink.wait_count(2, path=path)
        self.assertEqual(reqs[1].json["event"], "EVENT:CHARGE_REFUND")

    def test_refund_body_rules(self):
        ch = self.create(self.sink.url(self.path()))
        self.paid(ch["id"])
        self.assertError(self.refund(ch["id"], {"amount": 0}), 400,
                         "amount: must be a positive integer number of cents")
        self.assertError(self.refund(ch["id"], {"amount": ch["amount"], "why": "x"}), 400,
                         "unknown field 'why'; allowed: amount, reason")
        self.assertError(self.refund(ch["id"], {"reason": "x" * 501}), 400,
                         "reason: must be a string of at most 500 characters")
        self.assertEqual(self.charge(ch["id"])["status"], "PAID")
        self.assertError(self.refund("01ARZ3NDEKTSV4RRFFQ69G5FAV"), 404,
                         "charge not found: 01ARZ3NDEKTSV4RRFFQ69G5FAV")

    def test_refund_of_a_pending_charge(self):
        path = self.path()
        ch = self.create(self.sink.url(path))
        r = self.refund(ch["id"], {"amount": ch["amount"], "reason": "x"})
        self.assertError(r, 400, "charge is PENDING; only a PAID charge can be refunded")
        self.assertEqual(self.charge(ch["id"])["status"], "PENDING")

    def test_pay_twice_is_refused(self):
        ch = self.create(self.sink.url(self.path()))
        self.paid(ch["id"])
        self.assertError(self.pay(ch["id"]), 400,
                         "charge is PAID; only a PENDING charge can be paid")

    def _expire_in_redis(self, stack, cid):
        past = int(time.time() * 1000) - 1000
        stack.redis.cmd("HSET", rkey("ch:", cid), "expires_ms", past)
        stack.redis.cmd("ZADD", "pixrelay:{s%d}:expiry" % shard_of(cid), past, cid)

    def test_expiry_by_the_scheduler(self):
        path = self.path()
        ch = self.create(self.sink.url(path), expiration=300, externalID="wc_order_5")
        self.assertEqual(ch["expiration"], 300)
        self._expire_in_redis(self.main, ch["id"])
        got = wait_for(lambda: (lambda c: c if c["status"] == "EXPIRED" else None)(
            self.charge(ch["id"])), timeout=5, what="the charge to expire")
        req = self.sink.wait_count(1, path=path)[0]
        self.assertEqual(req.json["event"], "EVENT:CHARGE_EXPIRED")
        self.assertEqual(req.json["data"], got)
        self.assertEqual(req.json["data"]["externalID"], "wc_order_5")
        self.wait_event(req.webhook_id, "delivered")
        self.assertError(self.pay(ch["id"]), 400,
                         "charge is EXPIRED; only a PENDING charge can be paid")
        self.assertEqual(self.sink.count(path), 1)

    def test_payment_after_expiry_before_the_scheduler(self):
        # a process without dispatcher has no expiry scheduler
        stack = Env.stack("noexpiry")
        api = stack.start("api", dispatch=False)
        path = self.path()
        ch = self.create(self.sink.url(path), expiration=300, key=stack.key, px=api)
        self._expire_in_redis(stack, ch["id"])
        self.assertError(self.pay(ch["id"], key=stack.key, px=api), 400,
                         "charge expired before the payment; it is EXPIRED now")
        after = self.charge(ch["id"], key=stack.key, px=api)
        self.assertEqual(after["status"], "EXPIRED")
        self.assertEqual(self.sink.count(path), 0)
        # the EXPIRED event was recorded: a dispatcher delivers it
        stack.start("dispatcher")
        req = self.sink.wait_count(1, path=path)[0]
        self.assertEqual(req.json["event"], "EVENT:CHARGE_EXPIRED")
        self.assertEqual(req.json["data"], after)

    def test_production_cannot_simulate(self):
        ch = self.create(self.sink.url(self.path()), key=self.live)
        self.assertError(self.pay(ch["id"], key=self.live), 403,
                         "simulate-payment works with sandbox keys only; production charges "
                         "are paid by the payment provider's notification")
        self.assertEqual(self.charge(ch["id"], key=self.live)["status"], "PENDING")

    def test_events_of_another_account_or_environment_are_404(self):
        path = self.path()
        ch = self.create(self.sink.url(path))
        self.paid(ch["id"])
        eid = self.sink.wait_count(1, path=path)[0].webhook_id
        self.wait_event(eid, "delivered")
        # another sandbox account (no API creates accounts yet: stored as
        # test_charges.py does it)
        other = new_ulid()
        self.main.redis.cmd("HSET", acct_key("sandbox", other), "id", other,
                            "env", "sandbox", "kind", "business", "officialName", "Other",
                            "tradeName", "Other", "status", "ACTIVE", "created_at", "0",
                            "owner", "", "pix_key", "c1f7c2a4-3d5e-4f60-8a9b-0c1d2e3f4a5b")
        other_key = self.main.tool.create_key("sandbox", account=other)["key"]
        for k in (self.live, other_key):
            r = self.px.request("GET", "/v1/events/" + eid, headers=auth(k))
            self.assertError(r, 404, "event not found: " + eid)
            r = self.px.request("POST", "/v1/events/%s/replay" % eid, headers=auth(k))
            self.assertError(r, 404, "event not found: " + eid)
        r = self.px.request("GET", "/v1/events/evt_nothing", headers=auth(self.key))
        self.assertError(r, 404, "event not found: evt_nothing")
        r = self.px.request("GET", "/v1/events/" + eid)
        self.assertEqual(r.status, 401)
        self.assertEqual(self.sink.count(path), 1)


class Resilience(PostbackBase):
    def test_sigkill_mid_delivery_then_restart(self):
        stack = Env.stack("killed")
        victim = stack.start("victim")
        path = self.path()
        self.sink.script(path, [Reply(200, delay=3.0)])
        ch = self.create(self.sink.url(path), key=stack.key, px=victim)
        self.paid(ch["id"], key=stack.key, px=victim)
        first = self.sink.wait_count(1, path=path)[0]
        self.assertEqual(victim.stop(signal.SIGKILL), -signal.SIGKILL)
        heir = stack.start("heir")
        # the dead process's lease (timeout + connect timeout + 20 s) runs out first
        reqs = self.sink.wait_count(2, path=path, timeout=30)
        self.assertEqual(reqs[1].webhook_id, first.webhook_id)
        self.assertEqual(reqs[1].body, first.body)
        self.assertGreaterEqual(reqs[1].time - first.time, (TIMEOUT_MS + CONNECT_MS) / 1000.0)
        ev = self.wait_event(first.webhook_id, "delivered", key=stack.key, px=heir)
        self.assertEqual(ev["attemptLog"][-1]["status"], 200)
        self.assertEqual(self.sink.count(path), 2)
        # delivered by the new process
        line = r"delivery event=%s .*status=200 outcome=delivered" % first.webhook_id
        wait_for(lambda: re.search(line, heir.log()), timeout=2, what="the delivery's log line")

    def test_sigkill_of_redis_after_acks(self):
        stack = Env.stack("redis-killed")
        # a longer delivery timeout: answers held by the sink outlive the outage
        px = stack.start("pixrelay", ["--delivery-timeout-ms", "6000"])
        waiting = [self.path("-waiting%d" % i) for i in range(5)]
        inflight = [self.path("-inflight%d" % i) for i in range(4)]
        # two destinations: one that asks to come back later, one that
        # holds its answers (a host that answers 503 gets fewer requests at
        # once, which would queue the held ones one after another)
        slow = Sink().start()
        self.addCleanup(slow.close)
        sinks = {p: self.sink for p in waiting}
        sinks.update({p: slow for p in inflight})
        for p in waiting:
            # first attempt answered "come back in 2 s": pending when Redis dies
            self.sink.script(p, [Reply(503, {"Retry-After": "2"})])
        for p in inflight:
            # first attempt held 3 s by the sink: in flight when Redis dies
            slow.script(p, [Reply(200, delay=3.0)])
        charges = [self.create(sinks[p].url(p), key=stack.key, px=px)
                   for p in waiting + inflight]
        late_path = self.path("-late")
        late = self.create(self.sink.url(late_path), key=stack.key, px=px)
        for ch in charges:
            self.paid(ch["id"], key=stack.key, px=px)  # acknowledged
        ids = {p: sinks[p].wait_count(1, path=p)[0].webhook_id for p in waiting + inflight}
        for p in waiting:
            self.wait_event(ids[p], "pending", key=stack.key, px=px)

        stack.redis.stop(signal.SIGKILL)
        wait_for(lambda: px.request("GET", "/readyz").status == 503, what="readyz to fail")
        r = self.pay(late["id"], key=stack.key, px=px)
        self.assertError(r, 503, UNAVAILABLE)
        self.assertEqual(r.header("Retry-After"), "1")

        stack.redis.start()
        wait_for(lambda: px.request("GET", "/readyz").status == 200, timeout=15,
                 what="pixrelay to reconnect")
        for p in waiting:
            reqs = self.sink.wait_count(2, path=p, timeout=15)
            self.assertEqual({q.webhook_id for q in reqs}, {ids[p]})
            self.assertEqual(reqs[1].reply.status, 200)
            ev = self.wait_event(ids[p], "delivered", key=stack.key, px=px)
            self.assertEqual([a["status"] for a in ev["attemptLog"]], [503, 200])
        for p in inflight:
            ev = self.wait_event(ids[p], "delivered", key=stack.key, px=px, timeout=15)
            self.assertEqual([a["status"] for a in ev["attemptLog"]], [200])
            self.assertEqual(slow.count(p), 1)
        # the charge whose payment was refused during the outage can be paid now
        self.assertEqual(self.charge(late["id"], key=stack.key, px=px)["status"], "PENDING")
        self.paid(late["id"], key=stack.key, px=px)
        self.assertEqual(self.sink.wait_count(1, path=late_path)[0].json["event"],
                         "EVENT:CHARGE_PAID")

    def test_every_shard_is_polled_each_tick(self):
        # 8 events in 8 different shards (of 8 accounts), all due at once, are
        # all attempted within about one tick (regression: the claim loop
        # once reserved capacity so that only 2 of 8 shards were polled per
        # tick)
        stack = Env.stack("shards")
        api = stack.start("api", dispatch=False)
        path = self.path()
        charges = []
        for shard in range(8):
            acct = new_ulid(shard)
            stack.redis.cmd("HSET", acct_key("sandbox", acct), "id", acct, "env", "sandbox",
                            "kind", "business", "status", "ACTIVE", "created_at", "0",
                            "owner", "", "pix_key", "c1f7c2a4-3d5e-4f60-8a9b-0c1d2e3f4a5%d" % shard)
            key = stack.tool.create_key("sandbox", account=acct)["key"]
            ch = self.create(self.sink.url(path), key=key, px=api)
            self.assertEqual(shard_of(ch["id"]), shard)
            self.paid(ch["id"], key=key, px=api)
            charges.append(ch)
        self.assertEqual(self.sink.count(path), 0)
        stack.start("dispatcher")
        reqs = self.sink.wait_count(8, path=path)
        times = [q.time for q in reqs]
        self.assertLess(max(times) - min(times), 0.5, sorted(t - min(times) for t in times))
        self.assertEqual({q.json["data"]["id"] for q in reqs}, {ch["id"] for ch in charges})

    def test_two_processes_deliver_each_event_once(self):
        second = self.main.start("second")
        path = self.path()
        charges = [self.create(self.sink.url(path)) for _ in range(30)]
        errors = []

        def pay(chs, px):
            for ch in chs:
                r = self.pay(ch["id"], px=px)
                if r.status != 200:
                    errors.append(r)

        threads = [threading.Thread(target=pay, args=(charges[0::2], self.px)),
                   threading.Thread(target=pay, args=(charges[1::2], second))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertEqual(errors, [])
        reqs = self.sink.wait_until(
            lambda rs: (lambda ids: ids if len(ids) >= 30 else None)(
                {q.webhook_id for q in rs if q.path == path}),
            timeout=20, what="30 distinct events")
        for eid in reqs:
            ev = self.wait_event(eid, "delivered")
            self.assertEqual(ev["attempts"], 1)
        # every event is in a final state: count what arrived
        counts = {}
        for q in self.sink.requests(path):
            counts[q.webhook_id] = counts.get(q.webhook_id, 0) + 1
        self.assertEqual(len(counts), 30)
        self.assertEqual({k: v for k, v in counts.items() if v != 1}, {})
        self.assertEqual(sorted(q.json["data"]["id"] for q in self.sink.requests(path)),
                         sorted(ch["id"] for ch in charges))
        self.assertEqual(second.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
