"""Webhook endpoints (docs/postbacks.md, "Webhook endpoints";
docs/event-layout.md, "Endpoints"), through the real binary, with real sinks:
three endpoints with different filters each get exactly their events, each
signed with its own secret and its static headers, events of one charge in
order at each; a rotation's grace signs with both secrets; an endpoint down
past endpoint-disable-after is disabled, loses nothing, and gets its backlog
in order once enabled again; a 410 disables it at once; a replay goes where
it is asked; the held deliveries die at the retention; the API refuses what
it must, naming the field; and the command line does the same.

The settings are the tests': retries every second (retry-base-ms 1000,
retry-factor-pct 100), an endpoint disabled after failing every attempt for
4 s and at least 3 in a row.
"""
import json
import os
import ssl
import sys
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import certs
from harness import (ModuleStack, acct_key, auth, check_exit, connect_bank, new_ulid, rkey,
                     shard_of, start_stack, stop_stack, store_account, wait_for)
from sink import Reply
import sse

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(TOP, "tools"))
from embed_scripts import expand  # noqa: E402

EP = "/v1/webhook-endpoints"


class Stack(ModuleStack):
    shared = ("px", "redis", "sink")

    @classmethod
    def setup(cls):
        start_stack(cls, sink=True, args=[
            "--retry-base-ms", "1000", "--retry-factor-pct", "100",
            "--endpoint-disable-after", "4", "--endpoint-disable-min-failures", "3"])
        cls.px.cli("init")


def tearDownModule():
    Stack.stop()


def headers_of(req):
    return {k.lower(): v for k, v in req.header_list}


def signed_by(secret, req):
    return sse.verify(secret, headers_of(req), req.body)


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Stack.share(cls)

    def account(self, name, postback=None):
        """A new sandbox account with a key, and its postbackUrl (sink path)."""
        account, key = store_account(self.redis, self.px, name)
        if postback:
            self.px.cli("account", "set", "--env", "sandbox", "--account", account,
                        "--postback-url", self.sink.url(postback))
        return account, key

    def endpoint(self, key, path, **fields):
        r = self.px.request("POST", EP, body=dict(url=self.sink.url(path), **fields),
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def charge(self, key, amount=700):
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": amount},
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["id"]

    def act(self, key, cid, what):
        path = ("/v1/charge/%s/refund" % cid if what == "refund"
                else "/v1/charge/pix/%s/%s" % (cid, what))
        r = self.px.request("POST", path, headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.header("X-Event-Id")

    def ids(self, path):
        return [q.webhook_id for q in self.sink.requests(path)]

    def get(self, key, path):
        r = self.px.request("GET", path, headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]


class Filters(Base):
    def test_three_endpoints_each_get_exactly_their_events(self):
        account, key = self.account("Filtros", "/f/pb")
        conn = connect_bank(self.px, "sandbox", account)
        paid = self.endpoint(key, "/f/paid", eventTypes=["EVENT:CHARGE_PAID"],
                             headers={"X-Team": "shop"})
        charges = self.endpoint(key, "/f/charges", eventTypes=["EVENT:CHARGE_*"],
                                description="ERP")
        money = self.endpoint(key, "/f/money", eventTypes=["EVENT:PIX_*", "EVENT:CHARGE_REFUND"],
                              headers={"X-Team": "fraud", "X-Env": "test"})
        self.assertEqual((paid["eventTypes"], charges["eventTypes"], money["eventTypes"]),
                         (["EVENT:CHARGE_PAID"], ["EVENT:CHARGE_*"],
                          ["EVENT:PIX_*", "EVENT:CHARGE_REFUND"]))
        self.assertTrue(paid["secret"].startswith("whsec_"))
        # the secret is answered once: never by a read or the listing
        self.assertNotIn("secret", self.get(key, EP + "/" + paid["id"]))
        listed = self.px.request("GET", EP, headers=auth(key))
        self.assertEqual(listed.status, 200, listed)
        self.assertNotIn(paid["secret"].encode(), listed.body)

        c1, c2 = self.charge(key), self.charge(key)
        p1 = self.act(key, c1, "simulate-payment")
        x2 = self.act(key, c2, "simulate-expiry")
        r1 = self.act(key, c1, "refund")
        # money a bank reported that paid no charge
        e2e = "E12345678" + time.strftime("%Y%m%d%H%M", time.gmtime()) + "endpoint001"
        r = self.px.request("POST", "/v1/bank/connections/%s/simulate-pix" % conn["id"],
                            body={"pix": [{"endToEndId": e2e, "valor": "12.34",
                                           "horario": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                    time.gmtime())}]},
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)
        u = r.json["data"]["pix"][0]["event"]

        want = {"/f/pb": {p1, x2, r1, u}, "/f/paid": {p1}, "/f/charges": {p1, x2, r1},
                "/f/money": {r1, u}}
        self.sink.wait_until(lambda reqs: all(set(self.ids(p)) >= w for p, w in want.items()),
                             timeout=15, what="every endpoint's events")
        time.sleep(0.5)
        for path, w in want.items():
            self.assertEqual(sorted(self.ids(path)), sorted(w), path)
        # in order per charge, at each destination
        self.assertEqual([i for i in self.ids("/f/charges") if i in (p1, r1)], [p1, r1])
        # each signed with its own secret, and only with it; webhook-id the event's
        for path, ep in (("/f/paid", paid), ("/f/charges", charges), ("/f/money", money)):
            for q in self.sink.requests(path):
                self.assertTrue(signed_by(ep["secret"], q), path)
                self.assertEqual(q.json["id"], q.webhook_id)
                self.assertIsNone(q.header("signature"), "no compatibility secret")
                others = [e for e in (paid, charges, money) if e is not ep]
                self.assertFalse(any(signed_by(o["secret"], q) for o in others), path)
        # the same bytes as the postbackUrl's, its static headers
        pb = {q.webhook_id: q.body for q in self.sink.requests("/f/pb")}
        for q in self.sink.requests("/f/money"):
            self.assertEqual(q.body, pb[q.webhook_id])
            self.assertEqual((q.header("X-Team"), q.header("X-Env")), ("fraud", "test"))
        self.assertEqual([q.header("X-Team") for q in self.sink.requests("/f/paid")], ["shop"])

        # the listing and one event's page say where each went
        def listed():
            evs = {e["id"]: e for e in self.get(key, "/v1/events?limit=10")["events"]}
            ok = all(d["state"] == "delivered" for e in evs.values()
                     for d in e.get("endpoints", []))
            return evs if ok else None
        evs = wait_for(listed, what="every delivery listed as delivered")
        self.assertEqual(sorted(d["endpoint"] for d in evs[r1]["endpoints"]),
                         sorted([charges["id"], money["id"]]))
        self.assertEqual(sorted(d["endpoint"] for d in evs[p1]["endpoints"]),
                         sorted([paid["id"], charges["id"]]))
        one = self.get(key, "/v1/events/" + u)
        self.assertEqual(one["state"], "delivered")
        [d] = one["endpoints"]
        self.assertEqual((d["endpoint"], d["url"], d["state"], d["attempts"], d["lastStatus"]),
                         (money["id"], self.sink.url("/f/money"), "delivered", 1, 200))
        self.assertEqual([a["outcome"] for a in d["attemptLog"]], ["delivered"])
        # the body is stored once: the event's stream entry names its endpoints,
        # each delivery's hash refers to it and holds no body
        entry = self.redis.cmd("XRANGE", rkey("s", account)[:-len(account) - 1] + "s", "-", "+")
        fields = {dict(zip(f[::2], f[1::2]))["m"].split("\n")[2]: dict(zip(f[::2], f[1::2]))
                  for _, f in entry}
        self.assertEqual(sorted(fields[r1]["d"].split()), sorted([charges["id"], money["id"]]))
        dk = rkey("e:", u) + "/" + money["id"]
        self.assertIsNone(self.redis.cmd("HGET", dk, "body"))
        self.assertEqual(self.redis.cmd("HGET", dk, "state"), "delivered")
        # the endpoint's counters
        self.assertEqual(self.get(key, EP + "/" + money["id"])["stats"]["delivered"], 2)

    def test_an_account_without_endpoints_writes_what_it_wrote(self):
        account, key = self.account("Sem", "/none/pb")
        e = self.act(key, self.charge(key), "simulate-payment")
        self.sink.wait_count(1, path="/none/pb")
        self.assertEqual(self.redis.cmd("HEXISTS", acct_key("sandbox", account), "fanout"), 0)
        sp = rkey("", account)[:-len(account)]
        [f] = [f for _, f in self.redis.cmd("XRANGE", sp + "s", "-", "+")
               if e in f[1]]
        self.assertEqual(f[::2], ["m", "b"])
        [ev] = wait_for(lambda: [x for x in self.get(key, "/v1/events")["events"]
                                 if x["id"] == e and x["state"] == "delivered"])
        self.assertNotIn("endpoints", ev)
        r = self.px.request("POST", "/v1/events/%s/replay" % e, headers=auth(key))
        self.assertEqual(r.json["data"], {"id": e, "requeued": True})

    def test_every_type_and_no_postback_needed(self):
        account, key = self.account("Transfer")
        every = self.endpoint(key, "/op/every", eventTypes=["EVENT:*"])
        self.assertEqual(every["eventTypes"], ["EVENT:*"])
        # an account without a postbackUrl: its events go to its endpoints all the same
        e = self.act(key, self.charge(key), "simulate-payment")
        self.sink.wait_count(1, path="/op/every")
        self.assertEqual(self.ids("/op/every"), [e])
        ev = wait_for(lambda: (lambda v: v if v["endpoints"][0]["state"] == "delivered" else None)(
            self.get(key, "/v1/events/" + e)), what="its delivery settled")
        self.assertEqual((ev["state"], ev["destination"], ev["lastError"]),
                         ("delivered", None, "no postbackUrl on the charge or the account"))


# The rule of a filter, as tests/unit/test-endpoint.c checks pix/endpoint.c's:
# (types, type, taken)
RULE = [
    ("", "EVENT:CHARGE_PAID", 1),
    ("", "EVENT:OPERATIONAL_ENDPOINT_DISABLED", 0),
    ("EVENT:*", "EVENT:PIX_REFUSED", 1),
    ("EVENT:*", "EVENT:OPERATIONAL_ENDPOINT_DISABLED", 0),
    ("EVENT:CHARGE_*", "EVENT:CHARGE_REFUND", 1),
    ("EVENT:CHARGE_*", "EVENT:PIX_REFUND", 0),
    ("EVENT:CHARGE_PAID", "EVENT:CHARGE_PAID", 1),
    ("EVENT:CHARGE_PAID", "EVENT:CHARGE_PAIDX", 0),
    ("EVENT:CHARGE_PAID EVENT:PIX_*", "EVENT:PIX_MED_REFUND", 1),
    ("EVENT:OPERATIONAL_*", "EVENT:OPERATIONAL_ENDPOINT_DISABLED", 1),
    ("EVENT:OPERATIONAL_*", "EVENT:CHARGE_PAID", 0),
    ("EVENT:OPERATIONAL_ENDPOINT_DISABLED", "EVENT:OPERATIONAL_ENDPOINT_DISABLED", 1),
    ("EVENT:* EVENT:OPERATIONAL_*", "EVENT:OPERATIONAL_X", 1),
    ("EVENT:OPER*", "EVENT:OPERATIONAL_X", 0),
]


class Rule(Base):
    def test_the_scripts_filter_as_the_api_checks(self):
        """lib/endpoint.lua's takes, the rule event_write fans out by, run in
        Redis on the cases pix/endpoint.c is checked on: operational types
        only when named."""
        import tempfile
        d = tempfile.mkdtemp(prefix="pixrelay-rule-")
        os.symlink(os.path.join(TOP, "src", "store", "lua", "lib"), os.path.join(d, "lib"))
        path = os.path.join(d, "rule.lua")
        with open(path, "w") as f:
            f.write("--@include endpoint\nlocal out = {}\nfor i = 1, #ARGV, 2 do\n"
                    "  out[#out + 1] = ep_lib().takes(ARGV[i], ARGV[i + 1]) and 1 or 0\nend\n"
                    "return out\n")
        args = [x for types, t, _ in RULE for x in (types, t)]
        got = self.redis.cmd("EVAL", expand(path).decode(), 0, *args)
        self.assertEqual(got, [taken for _, _, taken in RULE])


    def test_an_operational_event_goes_only_where_it_is_named(self):
        """lib/event.lua's event_write_operational (the way an operational
        event is written): to the endpoints that name operational types, never
        to those of EVENT:* nor to a postbackUrl."""
        account, key = self.account("Operacional", "/ops/pb")
        every = self.endpoint(key, "/ops/every", eventTypes=["EVENT:*"])
        ops = self.endpoint(key, "/ops/ops", eventTypes=["EVENT:OPERATIONAL_*"])
        exact = self.endpoint(key, "/ops/exact",
                              eventTypes=["EVENT:OPERATIONAL_ENDPOINT_DISABLED"])
        self.endpoint(key, "/ops/other", eventTypes=["EVENT:OPERATIONAL_PIX_RECOVERED"])
        import tempfile
        d = tempfile.mkdtemp(prefix="pixrelay-op-")
        os.symlink(os.path.join(TOP, "src", "store", "lua", "lib"), os.path.join(d, "lib"))
        path = os.path.join(d, "op.lua")
        with open(path, "w") as f:
            f.write("--@include event\nevent_write_operational(ARGV[1], ARGV[2], ARGV[3], "
                    "ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])\nreturn 1\n")
        sp = rkey("", account)[:-len(account)]
        eid = "evt_" + new_ulid(shard_of(account))
        self.redis.cmd("EVAL", expand(path).decode(), 1, sp + "ingest", sp, eid, "sandbox",
                       account, "EVENT:OPERATIONAL_ENDPOINT_DISABLED",
                       '{"endpoint":"%s"}' % every["id"], int(time.time() * 1000), 86400)
        self.sink.wait_until(lambda reqs: self.ids("/ops/ops") and self.ids("/ops/exact"),
                             what="the operational event at its endpoints")
        time.sleep(0.5)
        self.assertEqual((self.ids("/ops/ops"), self.ids("/ops/exact")), ([eid], [eid]))
        self.assertEqual(self.sink.count("/ops/every") + self.sink.count("/ops/other") +
                         self.sink.count("/ops/pb"), 0)
        q = self.sink.requests("/ops/ops")[0]
        self.assertEqual(q.json, {"id": eid, "event": "EVENT:OPERATIONAL_ENDPOINT_DISABLED",
                                  "data": {"endpoint": every["id"]}})
        self.assertTrue(signed_by(ops["secret"], q))
        ev = self.get(key, "/v1/events/" + eid)
        self.assertEqual((ev["type"], ev["destination"], sorted(x["endpoint"] for x in ev["endpoints"])),
                         ("EVENT:OPERATIONAL_ENDPOINT_DISABLED", None,
                          sorted([ops["id"], exact["id"]])))


class Rotation(Base):
    def test_both_secrets_sign_during_the_grace(self):
        account, key = self.account("Rotacao")
        ep = self.endpoint(key, "/rot")
        r = self.px.request("POST", EP + "/%s/rotate-secret" % ep["id"],
                            body={"graceSeconds": 60}, headers=auth(key))
        self.assertEqual(r.status, 200, r)
        new = r.json["data"]
        self.assertNotEqual(new["secret"], ep["secret"])
        self.assertIsNotNone(new["previousSecretUntil"])
        self.assertEqual(self.get(key, EP + "/" + ep["id"])["previousSecretUntil"],
                         new["previousSecretUntil"])
        e = self.act(key, self.charge(key), "simulate-payment")
        [q] = self.sink.wait_count(1, path="/rot")
        self.assertEqual(q.webhook_id, e)
        sigs = q.header("webhook-signature").split()
        self.assertEqual(len(sigs), 2)
        self.assertTrue(signed_by(new["secret"], q))
        self.assertTrue(signed_by(ep["secret"], q))
        # the test ping too
        r = self.px.request("POST", EP + "/%s/test" % ep["id"], headers=auth(key))
        self.assertEqual((r.status, r.json["data"]["delivered"], r.json["data"]["status"]),
                         (200, True, 200))
        ping = self.sink.wait_count(2, path="/rot")[1]
        self.assertEqual(ping.json["event"], "EVENT:ENDPOINT_TEST")
        self.assertEqual(ping.webhook_id, r.json["data"]["id"])
        self.assertEqual(len(ping.header("webhook-signature").split()), 2)
        self.assertTrue(signed_by(new["secret"], ping) and signed_by(ep["secret"], ping))
        # without a grace: the new secret alone
        r = self.px.request("POST", EP + "/%s/rotate-secret" % ep["id"],
                            body={"graceSeconds": 0}, headers=auth(key))
        last = r.json["data"]
        self.assertIsNone(last["previousSecretUntil"])
        self.act(key, self.charge(key), "simulate-payment")
        q = self.sink.wait_count(3, path="/rot")[2]
        self.assertEqual(len(q.header("webhook-signature").split()), 1)
        self.assertTrue(signed_by(last["secret"], q))
        self.assertFalse(signed_by(new["secret"], q))


class AutoDisable(Base):
    def wait_endpoint(self, key, ep, pred, what):
        return wait_for(lambda: (lambda d: d if pred(d) else None)(self.get(key, EP + "/" + ep)),
                        timeout=30, interval=0.2, what=what)

    def test_an_endpoint_down_is_disabled_loses_nothing_and_catches_up_in_order(self):
        account, key = self.account("Caida", "/down/pb")
        up = self.endpoint(key, "/down/up")
        down = self.endpoint(key, "/down/down")
        self.sink.script("/down/down", [503] * 1000)
        cs = [self.charge(key) for _ in range(3)]
        first = [self.act(key, c, "simulate-payment") for c in cs]
        # the others are not held back: the postbackUrl and the healthy endpoint
        self.sink.wait_until(lambda reqs: set(self.ids("/down/up")) >= set(first) and
                             set(self.ids("/down/pb")) >= set(first), timeout=5,
                             what="the healthy destinations")
        d = self.wait_endpoint(key, down["id"], lambda d: not d["enabled"],
                               "the endpoint down disabled")
        self.assertRegex(d["disabledReason"],
                         r"^every attempt failed for [4-9] s \(\d+ in a row, the last: HTTP 503\)$")
        self.assertGreaterEqual(d["failuresInARow"], 3)
        self.assertIsNotNone(d["disabledAt"])
        tried = self.sink.count("/down/down")
        # while it is disabled, events are kept for it, not attempted, not dead
        later = [self.act(key, c, "refund") for c in cs]
        time.sleep(2.5)
        self.assertEqual(self.sink.count("/down/down"), tried)
        for e in first + later:
            [dl] = [x for x in self.get(key, "/v1/events/" + e)["endpoints"]
                    if x["endpoint"] == down["id"]]
            self.assertEqual(dl["state"], "pending", e)
        self.assertEqual(sorted(self.ids("/down/up")), sorted(first + later))
        # enabled again (and up): everything, each charge's events in order
        self.sink.script("/down/down", [])
        r = self.px.request("PATCH", EP + "/" + down["id"], body={"enabled": True},
                            headers=auth(key))
        self.assertEqual((r.status, r.json["data"]["enabled"], r.json["data"]["disabledReason"],
                          r.json["data"]["failuresInARow"]), (200, True, None, 0))
        self.sink.wait_until(lambda reqs: {q.webhook_id for q in self.sink.requests("/down/down")
                                           if q.reply.status == 200} >= set(first + later),
                             timeout=15, what="the backlog")
        time.sleep(0.5)
        ok = [q.webhook_id for q in self.sink.requests("/down/down") if q.reply.status == 200]
        self.assertEqual(sorted(ok), sorted(first + later))
        for p, rf in zip(first, later):
            self.assertLess(ok.index(p), ok.index(rf))
        d = self.get(key, EP + "/" + down["id"])
        self.assertEqual((d["enabled"], d["failingSince"], d["stats"]["dead"]), (True, None, 0))

    def test_410_disables_at_once_and_keeps_the_delivery(self):
        account, key = self.account("Gone")
        gone = self.endpoint(key, "/gone")
        self.sink.script("/gone", [410])
        e = self.act(key, self.charge(key), "simulate-payment")
        d = self.wait_endpoint(key, gone["id"], lambda d: not d["enabled"], "disabled by 410")
        self.assertEqual(d["disabledReason"], "the endpoint answered 410 Gone")
        self.assertEqual(self.sink.count("/gone"), 1)
        [dl] = self.get(key, "/v1/events/" + e)["endpoints"]
        self.assertEqual((dl["state"], dl["lastStatus"], dl["lastError"]),
                         ("pending", 410, "410 Gone: the endpoint asked to stop; it is disabled"))
        r = self.px.request("PATCH", EP + "/" + gone["id"], body={"enabled": True},
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)
        self.sink.wait_count(2, path="/gone")
        self.assertEqual(self.ids("/gone"), [e, e])

    def test_a_postback_url_is_never_disabled(self):
        account, key = self.account("Postback", "/pbdown")
        self.sink.script("/pbdown", [410])
        e = self.act(key, self.charge(key), "simulate-payment")
        wait_for(lambda: self.get(key, "/v1/events/" + e)["state"] == "dead",
                 what="the postback dead at once")
        self.assertEqual(self.get(key, EP)["endpoints"], [])
        e2 = self.act(key, self.charge(key), "simulate-payment")
        self.sink.wait_count(2, path="/pbdown")
        self.assertEqual(self.ids("/pbdown"), [e, e2])

    def test_disabled_by_request_keeps_what_it_holds_and_takes_nothing_new(self):
        account, key = self.account("Pausa")
        ep = self.endpoint(key, "/pause", enabled=False)
        self.assertEqual((ep["enabled"], ep["disabledReason"]), (False, "disabled by request"))
        e = self.act(key, self.charge(key), "simulate-payment")
        time.sleep(1)
        self.assertEqual(self.sink.count("/pause"), 0)
        self.assertNotIn("endpoints", self.get(key, "/v1/events/" + e))
        self.px.request("PATCH", EP + "/" + ep["id"], body={"enabled": True}, headers=auth(key))
        e2 = self.act(key, self.charge(key), "simulate-payment")
        self.sink.wait_count(1, path="/pause")
        self.assertEqual(self.ids("/pause"), [e2])

    def test_what_a_disabled_endpoint_keeps_dies_at_the_retention(self):
        account, key = self.account("Retencao")
        ep = self.endpoint(key, "/ret")
        self.sink.script("/ret", [410])
        e = self.act(key, self.charge(key), "simulate-payment")
        self.wait_endpoint(key, ep["id"], lambda d: not d["enabled"], "disabled by 410")
        e2 = self.act(key, self.charge(key), "simulate-payment")
        # the janitor's script, as if the retention had passed (one day later)
        sha = self.redis.cmd("SCRIPT", "LOAD",
                             expand(os.path.join(TOP, "src", "store", "lua",
                                                 "endpoint_expire.lua")))
        sp = rkey("", account)[:-len(account)]
        now = int(time.time() * 1000)
        n = self.redis.cmd("EVALSHA", sha, 1, sp + "held", sp, now, now + 86400000, 86400)
        self.assertEqual(n, 2)
        for i in (e, e2):
            [dl] = self.get(key, "/v1/events/" + i)["endpoints"]
            self.assertEqual((dl["state"], dl["lastError"]),
                             ("dead", "kept event-retention-days while its webhook endpoint "
                                      "was disabled"), i)
        self.assertEqual(self.redis.cmd("EVALSHA", sha, 1, sp + "held", sp, now,
                                        now + 86400000, 86400), 0)

    def test_the_retention_reaches_every_disabled_endpoint(self):
        # 1,000 endpoints of the shard disabled before this one (by request: they stay
        # disabled, holding nothing): what this one keeps still dies at the retention, in
        # a few of the janitor's calls
        account, key = self.account("Muitas")
        ep = self.endpoint(key, "/many-held")
        sp = rkey("", account)[:-len(account)]
        older = int(time.time() * 1000) - 3600000
        for first in range(0, 1000, 250):
            args = []
            for i in range(first, first + 250):
                args += [older + i, "sandbox:%026d:wep_%026d" % (i, i)]
            self.redis.cmd("ZADD", sp + "held", *args)
        try:
            self.sink.script("/many-held", [410])
            e = self.act(key, self.charge(key), "simulate-payment")
            self.wait_endpoint(key, ep["id"], lambda d: not d["enabled"], "disabled by 410")
            sha = self.redis.cmd("SCRIPT", "LOAD",
                                 expand(os.path.join(TOP, "src", "store", "lua",
                                                     "endpoint_expire.lua")))
            now = int(time.time() * 1000)
            died = sum(self.redis.cmd("EVALSHA", sha, 1, sp + "held", sp, now, now + 86400000,
                                      86400) for _ in range(3))
            self.assertEqual(died, 1)
            [dl] = self.get(key, "/v1/events/" + e)["endpoints"]
            self.assertEqual(dl["state"], "dead")
        finally:
            self.redis.cmd("ZREMRANGEBYSCORE", sp + "held", older, older + 999)


class Replay(Base):
    def test_replay_goes_where_it_is_dead_or_where_it_is_asked(self):
        account, key = self.account("Replay", "/rep/pb")
        a = self.endpoint(key, "/rep/a")
        b = self.endpoint(key, "/rep/b")
        e = self.act(key, self.charge(key), "simulate-payment")

        def settled():
            ev = self.get(key, "/v1/events/" + e)
            return ev if ev["state"] == "delivered" and all(
                d["state"] == "delivered" for d in ev["endpoints"]) else None
        wait_for(settled, what="delivered everywhere")
        replay = lambda body=None: self.px.request("POST", "/v1/events/%s/replay" % e, body=body,
                                                   headers=auth(key))
        # dead nowhere: to its postbackUrl, answered as before
        r = replay()
        self.assertEqual(r.json["data"], {"id": e, "requeued": True})
        self.sink.wait_count(2, path="/rep/pb")
        wait_for(settled, what="delivered again")
        # where it is asked
        r = replay({"destination": b["id"]})
        self.assertEqual(r.json["data"], {"id": e, "requeued": True, "destinations": [b["id"]]})
        self.sink.wait_count(2, path="/rep/b")
        wait_for(settled, what="delivered again")
        r = replay({"destination": "postback"})
        self.assertEqual(r.json["data"], {"id": e, "requeued": True, "destinations": ["postback"]})
        self.sink.wait_count(3, path="/rep/pb")
        wait_for(settled, what="delivered again")
        # dead at an endpoint (as the settle leaves a delivery whose attempts ran out):
        # by default, there and only there
        dk = rkey("e:", e) + "/" + a["id"]
        self.redis.cmd("HSET", dk, "state", "dead", "dead_ms", int(time.time() * 1000))
        r = replay()
        self.assertEqual(r.json["data"], {"id": e, "requeued": True, "destinations": [a["id"]]})
        self.sink.wait_count(2, path="/rep/a")
        wait_for(settled, what="delivered again")
        self.assertEqual((self.sink.count("/rep/pb"), self.sink.count("/rep/b")), (3, 2))
        [d] = [d for d in self.get(key, "/v1/events/" + e)["endpoints"] if d["endpoint"] == a["id"]]
        self.assertEqual((d["attempts"], [x["status"] for x in d["attemptLog"]]), (2, [200, 200]))
        # an endpoint it never went to; a destination that is none
        c = self.endpoint(key, "/rep/c")
        r = replay({"destination": c["id"]})
        self.assertEqual((r.status, r.json["error"]),
                         (404, "event %s has no delivery to webhook endpoint %s" % (e, c["id"])))
        r = replay({"destination": "nowhere"})
        self.assertEqual((r.status, r.json["error"]), (400, 'destination: must be "postback" (the '
                         "charge's or the account's postbackUrl) or a webhook endpoint's id "
                         "(wep_...)"))
        r = replay({"to": 1})
        self.assertEqual((r.status, r.json["error"]),
                         (400, "unknown field 'to'; allowed: destination"))
        # a deleted endpoint's delivery is none any more
        self.px.request("DELETE", EP + "/" + b["id"], headers=auth(key))
        r = replay({"destination": b["id"]})
        self.assertEqual(r.status, 404, r)


class Validation(Base):
    def test_the_api_refuses_naming_the_field(self):
        account, key = self.account("Regras")
        H = auth(key)
        url = self.sink.url("/v")
        bad = [
            ({}, "url: is required (where the endpoint's events are POSTed)"),
            ({"url": 5}, "url: must be a string"),
            ({"url": "ftp://x.example/"}, "url: must be an absolute http or https URL (at most "
                                          "2048 bytes, no user info)"),
            ({"url": "https://user:pw@x.example/"}, "url: must be an absolute http or https URL "
                                                    "(at most 2048 bytes, no user info)"),
            ({"url": url, "secret": "x"}, "unknown field 'secret'; allowed: url, description, "
                                          "eventTypes, enabled, headers"),
            ({"url": url, "description": "a" * 201}, "description: must be at most 200 "
                                                     "characters (got 201)"),
            ({"url": url, "description": "a\nb"}, "description: must not contain control "
                                                  "characters"),
            ({"url": url, "enabled": "yes"}, "enabled: must be true or false"),
            ({"url": url, "eventTypes": "EVENT:CHARGE_PAID"},
             'eventTypes: must be an array of event types (e.g. ["EVENT:CHARGE_PAID", '
             '"EVENT:PIX_*"])'),
            ({"url": url, "eventTypes": ["EVENT:CHARGE_PAYED"]},
             "eventTypes[0]: EVENT:CHARGE_PAYED is not an event type (EVENT:CHARGE_PAID, "
             "EVENT:CHARGE_EXPIRED, EVENT:CHARGE_REFUND, EVENT:PIX_UNMATCHED, EVENT:PIX_REFUND, "
             "EVENT:PIX_MED_REFUND, EVENT:PIX_REFUSED, EVENT:TRANSFER_DONE, EVENT:CHARGE_FAILED, EVENT:CHARGE_RETRY_SCHEDULED or EVENT:RECURRENCE_ "
             "followed by APPROVED, REJECTED, EXPIRED or CANCELLED, or an operational "
             "one: EVENT:OPERATIONAL_ followed by ENDPOINT_DISABLED, ENDPOINT_ENABLED, "
             "DELIVERY_DEAD, DELIVERIES_EXPIRED, RECONCILIATION_FAILING, RECONCILIATION_LATE, "
             "RECONCILIATION_RECOVERED or PIX_RECOVERED)"),
            ({"url": url, "eventTypes": ["EVENT:OPERATIONAL_OTHER"]},
             "eventTypes[0]: EVENT:OPERATIONAL_OTHER is not an event type (EVENT:CHARGE_PAID, "
             "EVENT:CHARGE_EXPIRED, EVENT:CHARGE_REFUND, EVENT:PIX_UNMATCHED, EVENT:PIX_REFUND, "
             "EVENT:PIX_MED_REFUND, EVENT:PIX_REFUSED, EVENT:TRANSFER_DONE, EVENT:CHARGE_FAILED, EVENT:CHARGE_RETRY_SCHEDULED or EVENT:RECURRENCE_ "
             "followed by APPROVED, REJECTED, EXPIRED or CANCELLED, or an operational "
             "one: EVENT:OPERATIONAL_ followed by ENDPOINT_DISABLED, ENDPOINT_ENABLED, "
             "DELIVERY_DEAD, DELIVERIES_EXPIRED, RECONCILIATION_FAILING, RECONCILIATION_LATE, "
             "RECONCILIATION_RECOVERED or PIX_RECOVERED)"),
            ({"url": url, "eventTypes": ["EVENT:CHARGE_PAID", "EVENT:CHRGE_*"]},
             "eventTypes[1]: EVENT:CHRGE_* matches no event type"),
            ({"url": url, "eventTypes": ["EVENT:CHARGE_PAID", "EVENT:CHARGE_PAID"]},
             "eventTypes[1]: EVENT:CHARGE_PAID is given twice"),
            ({"url": url, "eventTypes": ["charge.paid"]},
             "eventTypes[0]: must be an event type (EVENT:NAME, at most 64 characters) or a "
             "prefix of some ending in '*' (EVENT:CHARGE_*)"),
            ({"url": url, "eventTypes": ["EVENT:charge"]},
             "eventTypes[0]: 'EVENT:charge' holds a character other than A-Z, 0-9 and _ after "
             "EVENT: (and a final '*')"),
            ({"url": url, "eventTypes": ["EVENT:CHARGE_PAID"] * 33}, "eventTypes: at most 32 items"),
            ({"url": url, "headers": ["X-A: 1"]},
             'headers: must be an object of header names to values (e.g. {"X-Team": "erp"})'),
            ({"url": url, "headers": {"Host": "x"}},
             "headers.Host: is pixrelay's to send (or frames the request), not a static header"),
            ({"url": url, "headers": {"Webhook-Signature": "x"}},
             "headers.Webhook-Signature: is pixrelay's to send (or frames the request), not a "
             "static header"),
            ({"url": url, "headers": {"X A": "x"}},
             "headers: 'X A' is not a header name (1 to 64 letters, digits or "
             "!#$%&'*+-.^_`|~)"),
            ({"url": url, "headers": {"X-A": "a\u00e7"}},
             "headers.X-A: must be a string of 1 to 512 printable ASCII characters, without "
             "spaces around it"),
            ({"url": url, "headers": {"X-A": 1}},
             "headers.X-A: must be a string of 1 to 512 printable ASCII characters, without "
             "spaces around it"),
            ({"url": url, "headers": {"X-A": "1", "x-a": "2"}}, "headers.x-a: is given twice"),
            ({"url": url, "headers": {"X-%d" % i: "1" for i in range(11)}}, "headers: at most 10"),
        ]
        for body, msg in bad:
            r = self.px.request("POST", EP, body=body, headers=H)
            self.assertEqual((r.status, r.json["error"]), (400, msg), body)
        r = self.px.request("POST", EP, raw=b"[1]", headers=dict(H, **{"Content-Type": "application/json"}))
        self.assertEqual(r.status, 400, r)
        ep = self.endpoint(key, "/v")
        for body, msg in [({}, "nothing to change; give any of url, description, eventTypes, "
                               "enabled, headers"),
                          ({"url": None}, "url: must be an absolute http or https URL, not null")]:
            r = self.px.request("PATCH", EP + "/" + ep["id"], body=body, headers=H)
            self.assertEqual((r.status, r.json["error"]), (400, msg), body)
        for body, msg in [({"graceSeconds": -1}, "graceSeconds: must be an integer from 0 to "
                           "604800 (seconds the previous secret keeps signing)"),
                          ({"graceSeconds": 604801}, "graceSeconds: must be an integer from 0 "
                           "to 604800 (seconds the previous secret keeps signing)"),
                          ({"grace": 1}, "unknown field 'grace'; allowed: graceSeconds")]:
            r = self.px.request("POST", EP + "/%s/rotate-secret" % ep["id"], body=body, headers=H)
            self.assertEqual((r.status, r.json["error"]), (400, msg), body)
        r = self.px.request("GET", EP + "?limit=5", headers=H)
        self.assertEqual((r.status, r.json["error"]),
                         (400, "unknown query parameter 'limit'; allowed: none"))
        # not found: not an id, another account's, deleted
        other, other_key = self.account("Outra")
        theirs = self.endpoint(other_key, "/v2")
        for ep_id in ("wep_nope", theirs["id"]):
            for method, path in (("GET", ""), ("PATCH", ""), ("DELETE", ""),
                                 ("POST", "/test"), ("POST", "/rotate-secret")):
                r = self.px.request(method, EP + "/" + ep_id + path,
                                    body={"enabled": True} if method == "PATCH" else None,
                                    headers=H)
                self.assertEqual((r.status, r.json["error"]),
                                 (404, "webhook endpoint not found: " + ep_id), (method, path))
        r = self.px.request("GET", EP + "/" + theirs["id"], headers=H)
        self.assertEqual(r.json["error"], "webhook endpoint not found: " + theirs["id"])
        r = self.px.request("DELETE", EP + "/" + ep["id"], headers=H)
        self.assertEqual(r.json["data"], {"id": ep["id"], "deleted": True})
        self.assertEqual(self.px.request("GET", EP + "/" + ep["id"], headers=H).status, 404)
        self.assertEqual(self.px.request("DELETE", EP + "/" + ep["id"], headers=H).status, 404)
        # at most 20 per account and environment
        for i in range(20):
            self.endpoint(key, "/many%d" % i)
        r = self.px.request("POST", EP, body={"url": url}, headers=H)
        self.assertEqual((r.status, r.json["error"]),
                         (409, "the account has 20 webhook endpoints in sandbox, the most it may "
                               "have; delete one first"))
        self.assertEqual(len(self.get(key, EP)["endpoints"]), 20)

    def test_production_destinations_and_master_keys(self):
        px = self.px
        live = px.create_key("production", master=True)["key"]
        # a production URL naming a private address is refused at once
        r = px.request("POST", EP, body={"url": "http://10.0.0.5:8080/hook"}, headers=auth(live))
        self.assertEqual((r.status, r.json["error"]),
                         (400, "url: 10.0.0.5 is not a public address; production endpoints may "
                               "only reach public addresses (see destination-allow)"))
        r = px.request("POST", EP, body={"url": "http://[::1]/hook"}, headers=auth(live))
        self.assertEqual(r.json["error"], "url: ::1 is not a public address; production "
                         "endpoints may only reach public addresses (see destination-allow)")
        r = px.request("POST", EP, body={"url": "https://203.0.113.9/hook"}, headers=auth(live))
        self.assertEqual(r.status, 400, r)
        r = px.request("POST", EP, body={"url": "https://hooks.loja.example/pix"},
                       headers=auth(live))
        self.assertEqual(r.status, 200, r)
        # a master key acts for the account X-Account-ID names
        acc, key = self.account("Mestre")
        master = px.create_key("sandbox", master=True)["key"]
        r = px.request("POST", EP, body={"url": self.sink.url("/m")}, headers=auth(master, acc))
        self.assertEqual((r.status, r.json["data"]["account"]), (200, acc))
        self.assertEqual([e["id"] for e in self.get(key, EP)["endpoints"]], [r.json["data"]["id"]])
        # an account key never another account's
        other, other_key = self.account("Alheia")
        r = px.request("GET", EP, headers=auth(other_key, acc))
        self.assertEqual(r.status, 403, r)
        self.assertEqual(self.get(other_key, EP)["endpoints"], [])


class Cli(Base):
    def test_the_command_line(self):
        account, key = self.account("Linha")
        px = self.px
        base = ["--env", "sandbox", "--account", account]
        p = px.cli("endpoints", "create", *base, "--url", self.sink.url("/cli"), "--event-type",
                   "EVENT:CHARGE_*", "--header", "X-Team: cli", "--description", "from the CLI",
                   "--json")
        ep = json.loads(p.stdout)
        self.assertEqual((ep["eventTypes"], ep["headers"], ep["description"]),
                         (["EVENT:CHARGE_*"], {"X-Team": "cli"}, "from the CLI"))
        self.assertTrue(ep["secret"].startswith("whsec_"))
        p = px.cli("endpoints", "list", *base)
        self.assertIn("endpoint %s  %s  enabled" % (ep["id"], self.sink.url("/cli")), p.stdout)
        self.assertIn("  event types   EVENT:CHARGE_*\n", p.stdout)
        self.assertIn("  header        X-Team: cli\n", p.stdout)
        p = px.cli("endpoints", "show", ep["id"], *base, "--json")
        self.assertEqual(json.loads(p.stdout)["id"], ep["id"])
        p = px.cli("endpoints", "update", ep["id"], *base, "--disable", "--no-headers", "--json")
        d = json.loads(p.stdout)
        self.assertEqual((d["enabled"], d["headers"], d["disabledReason"]),
                         (False, {}, "disabled by request"))
        p = px.cli("endpoints", "update", ep["id"], *base, "--enable", "--all-event-types",
                   "--json")
        self.assertEqual((json.loads(p.stdout)["enabled"], json.loads(p.stdout)["eventTypes"]),
                         (True, []))
        p = px.cli("endpoints", "rotate-secret", ep["id"], *base, "--grace", "0")
        self.assertRegex(p.stdout, r"^endpoint %s: new signing secret \(shown this once\)\n"
                                   r"whsec_\S+\n$" % ep["id"])
        secret = p.stdout.split("\n")[1]
        p = px.cli("endpoints", "test", ep["id"], *base)
        self.assertRegex(p.stdout, r"^test evt_\w+ delivered: HTTP 200 in \d+ ms\n$")
        [q] = self.sink.requests("/cli")
        self.assertTrue(signed_by(secret, q))
        self.sink.script("/cli", [502])
        p = px.cli("endpoints", "test", ep["id"], *base, "--json", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual((json.loads(p.stdout)["delivered"], json.loads(p.stdout)["status"],
                          json.loads(p.stdout)["error"]), (False, 502, "HTTP 502"))
        # what the API refuses, in its words
        p = px.cli("endpoints", "create", *base, "--url", "nope", check=False)
        self.assertEqual((p.returncode, p.stderr),
                         (2, "pixrelay endpoints create: url: must be an absolute http or https "
                             "URL (at most 2048 bytes, no user info)\n"))
        p = px.cli("endpoints", "create", *base, "--url", self.sink.url("/x"), "--header", "Host: x",
                   check=False)
        self.assertEqual((p.returncode, p.stderr),
                         (2, "pixrelay endpoints create: headers.Host: is pixrelay's to send (or "
                             "frames the request), not a static header\n"))
        p = px.cli("endpoints", "show", *base, check=False)
        self.assertEqual((p.returncode, p.stderr),
                         (2, "pixrelay endpoints show: ENDPOINT_ID is required\n"))
        p = px.cli("endpoints", "show", "wep_01M8TCVNAKX9FC0W107D54H501", *base, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, "pixrelay endpoints show: no webhook endpoint "
                         "wep_01M8TCVNAKX9FC0W107D54H501 of account %s (sandbox)\n" % account)
        # events: where each delivery stands, and a replay to a destination
        e = self.act(key, self.charge(key), "simulate-payment")
        self.sink.wait_count(3, path="/cli")
        wait_for(lambda: "delivered" in px.cli("events", "show", e, *base).stdout.split(
            "endpoint %s" % ep["id"])[-1], what="listed as delivered")
        p = px.cli("events", "list", *base)
        self.assertRegex(p.stdout, r"\n  -> %s\s+delivered\s+1\s" % ep["id"])
        p = px.cli("events", "replay", e, *base, "--destination", ep["id"], "--json")
        self.assertEqual(json.loads(p.stdout), {"id": e, "requeued": True,
                                                "destinations": [ep["id"]]})
        p = px.cli("events", "replay", e, *base, "--destination", "somewhere", check=False)
        self.assertEqual((p.returncode, p.stderr),
                         (2, "pixrelay events: --destination must be postback or a webhook "
                             "endpoint's id (wep_...)\n"))
        p = px.cli("endpoints", "delete", ep["id"], *base)
        self.assertEqual(p.stdout, "endpoint %s deleted\n" % ep["id"])
        self.assertEqual(px.cli("endpoints", "list", *base).stdout, "no webhook endpoints\n")


class Answers200(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


class Tests(Base):
    def test_testing_an_https_endpoint_again_costs_little(self):
        # an https endpoint (its certificate the test's, which pixrelay does not trust: each
        # test answers why) tested again and again: the CA store is loaded once, not at
        # each test (about 30 ms of the event loop each, for every tenant)
        d = tempfile.mkdtemp(prefix="pixrelay-tls-")
        server = certs.make_server(d, certs.make_ca(d))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(server.cert, server.key)
        srv = ThreadingHTTPServer(("127.0.0.1", 0), Answers200)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            account, key = self.account("Teste TLS")
            r = self.px.request("POST", EP, body={"url": "https://127.0.0.1:%d/hook" %
                                                  srv.server_address[1]}, headers=auth(key))
            ep = r.json["data"]["id"]
            took = []
            for _ in range(6):
                r = self.px.request("POST", EP + "/%s/test" % ep, headers=auth(key))
                self.assertEqual((r.status, r.json["data"]["delivered"]), (200, False), r)
                self.assertIn("certificate", r.json["data"]["error"])
                took.append(r.json["data"]["durationMs"])
            self.assertLess(sorted(took[1:])[2], 15, "durationMs of the tests: %s" % took)
        finally:
            srv.shutdown()
            srv.server_close()


class TestWhileStopping(unittest.TestCase):
    def test_a_test_in_flight_is_answered_when_pixrelay_stops(self):
        # a destination that never answers, pixrelay stopped meanwhile: the test is answered
        # (not delivered, and why), and pixrelay exits cleanly
        start_stack(self, sink=True, args=["--delivery-timeout-ms", "20000",
                                           "--shutdown-grace", "1"])
        try:
            account, key = store_account(self.redis, self.px, "Parada")
            self.sink.script("/hang", [Reply(delay=30)])
            r = self.px.request("POST", EP, body={"url": self.sink.url("/hang")},
                                headers=auth(key))
            ep = r.json["data"]["id"]
            got = []
            t = threading.Thread(target=lambda: got.append(self.px.request(
                "POST", EP + "/%s/test" % ep, headers=auth(key), timeout=30)))
            t.start()
            self.sink.wait_count(1, path="/hang")
            code = self.px.stop()
            t.join(30)
            self.assertEqual(got[0].status, 200, got[0])
            self.assertEqual((got[0].json["data"]["delivered"], got[0].json["data"]["error"]),
                             (False, "pixrelay stopped before the endpoint answered"))
            check_exit(code, self.px.log())
        finally:
            stop_stack(self)


if __name__ == "__main__":
    unittest.main(verbosity=2)
