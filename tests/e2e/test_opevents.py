"""Operational events of webhook endpoints and deliveries (docs/postbacks.md,
"Operational events"), through the real binary, with real sinks: an endpoint
disabled (by pixrelay at a 410, by request) or enabled again, a delivery dead
after its last attempt (at an endpoint or at a postbackUrl), and the
deliveries a disabled endpoint kept dead at the retention, each told once to
the endpoints that name operational types and to no other destination; an
endpoint held that takes them keeps its own for when it is enabled again; no
operational event is ever about the delivery of another (no loop). Those of
the reconciliation are tests/e2e/test_bankrecon.py's.

The settings are the tests': retries every second (retry-base-ms 1000,
retry-factor-pct 100), two attempts a delivery in all, an endpoint disabled
after failing every attempt for 4 s and at least 3 in a row.
"""
import os
import sys
import time
import unittest

from harness import ModuleStack, auth, rkey, start_stack, store_account, wait_for

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(TOP, "tools"))
from embed_scripts import expand  # noqa: E402

EP = "/v1/webhook-endpoints"
OPS = ["EVENT:OPERATIONAL_*"]


class Stack(ModuleStack):
    shared = ("px", "redis", "sink")

    @classmethod
    def setup(cls):
        start_stack(cls, sink=True, args=[
            "--retry-base-ms", "1000", "--retry-factor-pct", "100", "--retry-max-attempts", "2",
            "--endpoint-disable-after", "4", "--endpoint-disable-min-failures", "3"])
        cls.px.cli("init")


def tearDownModule():
    Stack.stop()


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Stack.share(cls)

    def account(self, name, postback=None):
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

    def patch(self, key, ep, enabled):
        r = self.px.request("PATCH", EP + "/" + ep, body={"enabled": enabled}, headers=auth(key))
        self.assertEqual((r.status, r.json["data"]["enabled"]), (200, enabled), r)

    def paid(self, key):
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 700},
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % r.json["data"]["id"],
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.header("X-Event-Id")

    def get(self, key, path):
        r = self.px.request("GET", path, headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def ops(self, path):
        """The operational events that reached `path`, as sent, in order."""
        return [q.json for q in self.sink.requests(path)
                if q.json["event"].startswith("EVENT:OPERATIONAL_")]

    def wait_ops(self, path, n, what):
        self.sink.wait_until(lambda reqs: len(self.ops(path)) >= n, timeout=20, what=what)
        return self.ops(path)

    def listed(self, key, etype):
        """The account's events of an operational type, as listed."""
        return [e for e in self.get(key, "/v1/events?limit=100")["events"] if e["type"] == etype]

    def no_ops_at(self, *paths):
        for p in paths:
            self.assertEqual(self.ops(p), [], p)


class Types(Base):
    def test_the_scripts_know_the_types_the_api_takes(self):
        """lib/operational.lua's TYPES are pix/event.c's operational types, and
        the API takes exactly those in a filter."""
        import re
        import tempfile
        with open(os.path.join(TOP, "src", "pix", "event.c")) as f:
            text = f.read()
        c = re.findall(r'"(EVENT:OPERATIONAL_[A-Z_]+)"', text)
        self.assertEqual(len(c), 8)
        d = tempfile.mkdtemp(prefix="pixrelay-optypes-")
        os.symlink(os.path.join(TOP, "src", "store", "lua", "lib"), os.path.join(d, "lib"))
        path = os.path.join(d, "types.lua")
        with open(path, "w") as f:
            f.write("--@include operational\nreturn op_lib().TYPES\n")
        self.assertEqual(self.redis.cmd("EVAL", expand(path).decode(), 0), c)
        account, key = self.account("OpTypes")
        for t in c:
            self.endpoint(key, "/ot/" + t, eventTypes=[t])
        r = self.px.request("POST", EP, body={"url": self.sink.url("/ot/x"),
                                              "eventTypes": ["EVENT:OPERATIONAL_ENDPOINT_GONE"]},
                            headers=auth(key))
        self.assertEqual(r.status, 400, r)
        self.assertRegex(r.json["error"], r"^eventTypes\[0\]: EVENT:OPERATIONAL_ENDPOINT_GONE is "
                         r"not an event type \(")


class Endpoints(Base):
    def test_disabled_by_a_410_and_by_request_and_enabled_again(self):
        account, key = self.account("OpEndpoints", "/oe/pb")
        ops = self.endpoint(key, "/oe/ops", eventTypes=OPS)
        exact = self.endpoint(key, "/oe/exact", eventTypes=["EVENT:OPERATIONAL_ENDPOINT_ENABLED"])
        every = self.endpoint(key, "/oe/every", eventTypes=["EVENT:*"])
        gone = self.endpoint(key, "/oe/gone")
        self.sink.script("/oe/gone", [410])
        e = self.paid(key)
        [dis] = self.wait_ops("/oe/ops", 1, "the endpoint disabled, told")
        data = dis["data"]
        self.assertEqual(dis["event"], "EVENT:OPERATIONAL_ENDPOINT_DISABLED")
        self.assertRegex(dis["id"], r"^evt_[0-9A-HJKMNP-TV-Z]{26}$")
        self.assertEqual({k: data[k] for k in ("endpoint", "url", "by", "reason", "failuresInARow",
                                               "lastStatus", "lastError")},
                         {"endpoint": gone["id"], "url": self.sink.url("/oe/gone"),
                          "by": "pixrelay", "reason": "the endpoint answered 410 Gone",
                          "failuresInARow": 1, "lastStatus": 410,
                          "lastError": "410 Gone: the endpoint asked to stop; it is disabled"})
        self.assertRegex(data["disabledAt"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        self.assertEqual(data["failingSince"], data["disabledAt"])
        self.assertEqual(self.get(key, EP + "/" + gone["id"])["disabledAt"], data["disabledAt"])
        # enabled again: told, with what it kept (the paid event, now sent)
        self.patch(key, gone["id"], True)
        self.sink.wait_count(2, path="/oe/gone")
        got = self.wait_ops("/oe/ops", 2, "the endpoint enabled, told")
        en = got[1]
        self.assertEqual(en["event"], "EVENT:OPERATIONAL_ENDPOINT_ENABLED")
        self.assertEqual({k: en["data"][k] for k in ("endpoint", "by", "disabledAt", "disabledBy",
                                                     "lanesWaiting")},
                         {"endpoint": gone["id"], "by": "request",
                          "disabledAt": data["disabledAt"], "disabledBy": "pixrelay",
                          "lanesWaiting": 1})
        # disabled by request: told so
        self.patch(key, gone["id"], False)
        got = self.wait_ops("/oe/ops", 3, "the endpoint disabled by request, told")
        self.assertEqual((got[2]["event"], got[2]["data"]["by"], got[2]["data"]["reason"]),
                         ("EVENT:OPERATIONAL_ENDPOINT_DISABLED", "request",
                          "disabled by request"))
        time.sleep(0.5)
        # each once, and only where operational types are named
        self.assertEqual(len(self.ops("/oe/ops")), 3)
        self.assertEqual([x["id"] for x in self.ops("/oe/exact")], [en["id"]])
        self.no_ops_at("/oe/pb", "/oe/every", "/oe/gone")
        self.assertEqual([q.webhook_id for q in self.sink.requests("/oe/every")], [e])
        # listed with the account's events, delivered to those endpoints
        [ev] = [x for x in self.listed(key, "EVENT:OPERATIONAL_ENDPOINT_ENABLED")]
        self.assertEqual(ev["id"], en["id"])
        one = self.get(key, "/v1/events/" + en["id"])
        self.assertEqual((one["destination"], sorted(x["endpoint"] for x in one["endpoints"])),
                         (None, sorted([ops["id"], exact["id"]])))

    def test_an_endpoint_held_keeps_its_own_event_for_when_it_is_enabled(self):
        account, key = self.account("OpSelf")
        me = self.endpoint(key, "/os/me", eventTypes=["EVENT:*"] + OPS)
        self.sink.script("/os/me", [410])
        e = self.paid(key)
        wait_for(lambda: not self.get(key, EP + "/" + me["id"])["enabled"], what="disabled")
        [dis] = wait_for(lambda: self.listed(key, "EVENT:OPERATIONAL_ENDPOINT_DISABLED"),
                         what="its event")
        [dl] = self.get(key, "/v1/events/" + dis["id"])["endpoints"]
        self.assertEqual((dl["endpoint"], dl["state"]), (me["id"], "pending"))
        time.sleep(1.5)
        self.assertEqual(self.sink.count("/os/me"), 1)
        self.patch(key, me["id"], True)
        self.sink.wait_until(lambda reqs: len(self.ops("/os/me")) >= 2, what="its backlog")
        time.sleep(1)
        got = [(q.json["event"], q.webhook_id) for q in self.sink.requests("/os/me")]
        en = self.listed(key, "EVENT:OPERATIONAL_ENDPOINT_ENABLED")[0]["id"]
        self.assertEqual(sorted(got[1:]), sorted([
            ("EVENT:CHARGE_PAID", e), ("EVENT:OPERATIONAL_ENDPOINT_DISABLED", dis["id"]),
            ("EVENT:OPERATIONAL_ENDPOINT_ENABLED", en)]))
        # (the disabled event before the enabled one: one lane)
        ids = [w for _, w in got]
        self.assertLess(ids.index(dis["id"]), ids.index(en))


class Deliveries(Base):
    def test_a_delivery_dead_after_its_last_attempt_is_told_once(self):
        account, key = self.account("OpDead", "/od/pb")
        ops = self.endpoint(key, "/od/ops", eventTypes=OPS)
        down = self.endpoint(key, "/od/down", eventTypes=["EVENT:CHARGE_PAID"])
        # the one that hears of dead deliveries fails too: its own deliveries die, untold
        deaf = self.endpoint(key, "/od/deaf", eventTypes=["EVENT:OPERATIONAL_DELIVERY_DEAD"])
        self.sink.script("/od/pb", [410])
        self.sink.script("/od/down", [503, 500])
        self.sink.script("/od/deaf", [503] * 100)
        e = self.paid(key)
        self.wait_ops("/od/ops", 2, "two deliveries dead, told")
        # the deaf endpoint's deliveries die meanwhile (two attempts each)
        self.sink.wait_count(4, path="/od/deaf", timeout=20)
        time.sleep(1)
        got = self.ops("/od/ops")
        self.assertEqual(len(got), 2, got)
        by = {x["data"]["endpoint"]: x for x in got}
        self.assertEqual(set(by), {None, down["id"]})
        pb = by[None]
        self.assertEqual(pb["event"], "EVENT:OPERATIONAL_DELIVERY_DEAD")
        self.assertEqual({k: pb["data"][k] for k in ("event", "type", "url", "attempts",
                                                     "lastStatus", "lastError")},
                         {"event": e, "type": "EVENT:CHARGE_PAID", "url": self.sink.url("/od/pb"),
                          "attempts": 1, "lastStatus": 410,
                          "lastError": "410 Gone: the destination asked to stop"})
        d = by[down["id"]]["data"]
        self.assertEqual((d["event"], d["type"], d["url"], d["attempts"], d["lastStatus"]),
                         (e, "EVENT:CHARGE_PAID", self.sink.url("/od/down"), 2, 500))
        self.assertRegex(d["deadAt"], r"^\d{4}-\d\d-\d\dT")
        # the deaf endpoint was tried for both, twice each, and is not told of its own deaths
        self.assertEqual(self.sink.count("/od/deaf"), 4)
        self.assertEqual(len(self.listed(key, "EVENT:OPERATIONAL_DELIVERY_DEAD")), 2)
        # the listing's type filter takes an operational type
        only = self.get(key, "/v1/events?type=EVENT:OPERATIONAL_DELIVERY_DEAD")["events"]
        self.assertEqual(sorted(x["id"] for x in only), sorted(x["id"] for x in got))
        for x in got:
            [dl] = [y for y in self.get(key, "/v1/events/" + x["id"])["endpoints"]
                    if y["endpoint"] == deaf["id"]]
            self.assertEqual(dl["state"], "dead")
        # the endpoint that failed twice was not disabled (3 in a row are needed)
        self.assertTrue(self.get(key, EP + "/" + down["id"])["enabled"])

    def test_what_a_disabled_endpoint_kept_dies_at_the_retention_with_one_event(self):
        account, key = self.account("OpRetention")
        ops = self.endpoint(key, "/or/ops", eventTypes=OPS)
        held = self.endpoint(key, "/or/held", eventTypes=["EVENT:*"] + OPS)
        self.sink.script("/or/held", [410])
        e = self.paid(key)
        wait_for(lambda: not self.get(key, EP + "/" + held["id"])["enabled"], what="disabled")
        e2 = self.paid(key)
        self.wait_ops("/or/ops", 1, "the endpoint disabled, told")
        # the janitor's script, as if the retention had passed (one day later)
        sha = self.redis.cmd("SCRIPT", "LOAD", expand(os.path.join(
            TOP, "src", "store", "lua", "endpoint_expire.lua")))
        sp = rkey("", account)[:-len(account)]
        now = int(time.time() * 1000)
        # held: e, e2 and its own disabled event; the last dies untold
        self.assertEqual(self.redis.cmd("EVALSHA", sha, 1, sp + "held", sp, now, now + 86400000,
                                        86400), 3)
        got = self.wait_ops("/or/ops", 2, "the deliveries dead at the retention, told")
        x = got[1]
        self.assertEqual(x["event"], "EVENT:OPERATIONAL_DELIVERIES_EXPIRED")
        self.assertEqual({k: x["data"][k] for k in ("endpoint", "url", "reason", "count", "events",
                                                    "truncated")},
                         {"endpoint": held["id"], "url": self.sink.url("/or/held"),
                          "reason": "kept event-retention-days while its webhook endpoint was "
                                    "disabled",
                          "count": 2, "events": [e, e2], "truncated": False})
        # the next call: the delivery of that event to the endpoint held dies, untold (no
        # loop), and then none is left
        self.assertEqual(self.redis.cmd("EVALSHA", sha, 1, sp + "held", sp, now, now + 86400000,
                                        86400), 1)
        self.assertEqual(self.redis.cmd("EVALSHA", sha, 1, sp + "held", sp, now, now + 86400000,
                                        86400), 0)
        time.sleep(0.5)
        self.assertEqual(len(self.ops("/or/ops")), 2)
        self.assertEqual(len(self.listed(key, "EVENT:OPERATIONAL_DELIVERIES_EXPIRED")), 1)


if __name__ == "__main__":
    unittest.main()
