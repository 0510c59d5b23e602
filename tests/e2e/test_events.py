"""GET /v1/events (filters, paging) and POST /v1/events/replay (bulk)."""
import json
import time
import unittest

from harness import (Pixrelay, Redis, Workdir, auth, rkey, start_stack, stop_stack, stored_event,
                     wait_for)


class Events(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls, args=["--retry-max-attempts", "1"], sink=True)
        cls.px.cli("init")
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.live = cls.px.create_key("production")["key"]
        cls.t0 = time.time()
        cls.ids = {"dead": [], "delivered": []}
        # three postbacks that cannot be delivered (one attempt: dead), two that are
        for i, url in enumerate(["http://127.0.0.1:1/x"] * 3 + [cls.sink.url("/ok")] * 2):
            r = cls.px.request("POST", "/v1/charge/pix/create", body={"amount": 500 + i, "postbackUrl": url},
                               headers=auth(cls.key))
            cid = r.json["data"]["id"]
            cls.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid, headers=auth(cls.key))
            time.sleep(0.01)  # distinct creation times
        cls.all = wait_for(lambda: cls.settled(), what="five settled events")

    @classmethod
    def settled(cls):
        r = cls.px.request("GET", "/v1/events?limit=100", headers=auth(cls.key))
        ev = r.json["data"]["events"]
        return ev if len(ev) == 5 and all(e["state"] in ("dead", "delivered") for e in ev) else None

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def get(self, query, key=None):
        return self.px.request("GET", "/v1/events" + query, headers=auth(key or self.key))

    def test_list_newest_first_with_every_field(self):
        ev = self.all
        self.assertEqual([e["createdAt"] for e in ev], sorted((e["createdAt"] for e in ev), reverse=True))
        self.assertEqual(sorted(e["state"] for e in ev), ["dead"] * 3 + ["delivered"] * 2)
        for e in ev:
            self.assertEqual(set(e), {"id", "type", "state", "destination", "attempts", "createdAt",
                                      "updatedAt", "nextAttemptAt", "lastStatus", "lastError"})
            self.assertEqual(e["type"], "EVENT:CHARGE_PAID")
            self.assertEqual(e["attempts"], 1)
        dead = [e for e in ev if e["state"] == "dead"][0]
        self.assertIn("Couldn't connect", dead["lastError"])
        ok = [e for e in ev if e["state"] == "delivered"][0]
        self.assertEqual(ok["lastStatus"], 200)

    def test_paging_with_the_cursor_covers_everything_once(self):
        seen, cursor = [], None
        for _ in range(10):
            r = self.get("?limit=2" + ("&cursor=" + cursor if cursor else ""))
            self.assertEqual(r.status, 200, r)
            d = r.json["data"]
            self.assertLessEqual(len(d["events"]), 2)
            seen += [e["id"] for e in d["events"]]
            cursor = d["nextCursor"]
            if not cursor:
                break
        self.assertEqual(seen, [e["id"] for e in self.all])

    def test_filters(self):
        r = self.get("?state=dead")
        self.assertEqual(len(r.json["data"]["events"]), 3)
        self.assertTrue(all(e["state"] == "dead" for e in r.json["data"]["events"]))
        r = self.get("?type=EVENT:CHARGE_REFUND")
        self.assertEqual(r.json["data"]["events"], [])
        r = self.get("?since=%d" % (int(time.time()) + 3600))
        self.assertEqual(r.json["data"]["events"], [])
        r = self.get("?until=2020-01-01%2000:00:00")
        self.assertEqual(r.json["data"]["events"], [])
        r = self.get("?since=%d&until=%d" % (int(self.t0) - 5, int(time.time()) + 5))
        self.assertEqual(len(r.json["data"]["events"]), 5)
        # the other environment sees none of them
        r = self.get("", key=self.live)
        self.assertEqual(r.json["data"]["events"], [])

    def test_malformed_filters_are_400(self):
        for query, msg in [
                ("?state=lost", "state: must be pending, delivering, delivered or dead"),
                ("?type=PAID", "type: must be EVENT:CHARGE_PAID, EVENT:CHARGE_EXPIRED, EVENT:CHARGE_REFUND, "
                 "EVENT:PIX_UNMATCHED, EVENT:PIX_REFUND, EVENT:PIX_MED_REFUND, "
                 "EVENT:PIX_REFUSED, EVENT:TRANSFER_DONE, EVENT:CHARGE_FAILED, EVENT:CHARGE_RETRY_SCHEDULED or EVENT:RECURRENCE_ followed by "
                 "APPROVED, REJECTED, EXPIRED or CANCELLED, or an operational one: "
                 "EVENT:OPERATIONAL_ followed by ENDPOINT_DISABLED, ENDPOINT_ENABLED, "
                 "DELIVERY_DEAD, DELIVERIES_EXPIRED, RECONCILIATION_FAILING, "
                 "RECONCILIATION_LATE, RECONCILIATION_RECOVERED or PIX_RECOVERED"),
                ("?limit=0", "limit: must be an integer from 1 to 100"),
                ("?limit=101", "limit: must be an integer from 1 to 100"),
                ("?limit=x", "limit: must be an integer from 1 to 100"),
                ("?since=yesterday", "since: must be Unix seconds, 'YYYY-MM-DD HH:MM:SS' (UTC) or RFC 3339"),
                ("?until=2026-13-01T00:00:00Z", "until: must be Unix seconds, 'YYYY-MM-DD HH:MM:SS' (UTC) or RFC 3339"),
                ("?cursor=abc", "cursor: not a cursor this endpoint returned"),
                ("?status=dead", "unknown query parameter 'status'; allowed: state, type, since, "
                 "until, limit, cursor"),
                ("?limit=5&limit=6", "limit: given more than once")]:
            r = self.get(query)
            self.assertEqual(r.status, 400, query)
            self.assertEqual(r.json, {"error": msg, "status": 400, "data": []}, query)

    def test_bulk_replay(self):
        bad = [({"foo": 1}, "unknown field 'foo'; allowed: state, type, since, until, limit"),
               ({"state": 5}, "state: must be a string"),
               ({"limit": 1001}, "limit: must be an integer from 1 to 1000"),
               ({"state": "gone"}, "state: must be pending, delivering, delivered or dead")]
        for body, msg in bad:
            r = self.px.request("POST", "/v1/events/replay", body=body, headers=auth(self.key))
            self.assertEqual((r.status, r.json["error"]), (400, msg), body)
        r = self.px.request("POST", "/v1/events/replay", raw=b"[1]",
                            headers=dict(auth(self.key), **{"Content-Type": "application/json"}))
        self.assertEqual((r.status, r.json["error"]), (400, "request body must be a JSON object"))
        # nothing in production
        r = self.px.request("POST", "/v1/events/replay", body={}, headers=auth(self.live))
        self.assertEqual(r.json["data"], {"matched": 0, "requeued": 0})
        # the delivered ones, replayed: the sink sees them again with the same ids
        before = self.sink.count("/ok")
        r = self.px.request("POST", "/v1/events/replay", body={"state": "delivered", "limit": 10},
                            headers=auth(self.key))
        self.assertEqual((r.status, r.json["data"]), (200, {"matched": 2, "requeued": 2}))
        self.sink.wait_count(before + 2, path="/ok")
        # the dead ones (default state), with no body at all
        r = self.px.request("POST", "/v1/events/replay", headers=auth(self.key))
        self.assertEqual(r.json["data"], {"matched": 3, "requeued": 3})
        wait_for(lambda: len([e for e in self.get("?state=dead").json["data"]["events"]
                              if e["attempts"] == 2]) == 3 or None, what="the dead ones tried again")


class WithoutDispatcher(unittest.TestCase):
    def test_an_event_is_visible_at_once_on_a_process_that_does_not_deliver(self):
        # the event is written with the state change that makes it: an
        # API-only process (--dispatch 0) shows it before anything delivers
        wd = Workdir()
        redis = Redis(wd.path).start()
        px = Pixrelay(wd.path, redis, args=["--dispatch", "0"]).start()
        try:
            px.wait_ready()
            account = json.loads(px.cli("init", "--json").stdout)["sandbox"]["account"]
            key = px.create_key("sandbox")["key"]
            r = px.request("POST", "/v1/charge/pix/create",
                           body={"amount": 700, "postbackUrl": "http://127.0.0.1:9/none"},
                           headers=auth(key))
            cid = r.json["data"]["id"]
            r = px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid, headers=auth(key))
            self.assertEqual(r.status, 200, r)
            events = px.request("GET", "/v1/events", headers=auth(key)).json["data"]["events"]
            self.assertEqual([(e["type"], e["state"], e["attempts"]) for e in events],
                             [("EVENT:CHARGE_PAID", "pending", 0)])
            # never attempted: no attempt, updated when created, due since then
            e = events[0]
            self.assertRegex(e["id"], r"^evt_")
            self.assertEqual((e["updatedAt"], e["nextAttemptAt"]), (e["createdAt"], e["createdAt"]))
            self.assertIsNone(e["lastStatus"])
            r = px.request("GET", "/v1/events/" + e["id"], headers=auth(key))
            self.assertEqual(r.status, 200, r)
            d = r.json["data"]
            self.assertEqual(d["payload"]["data"]["id"], cid)
            self.assertEqual(d["attemptLog"], [])
            self.assertEqual((d["id"], d["state"], d["attempts"]), (e["id"], "pending", 0))
            self.assertEqual((d["createdAt"], d["updatedAt"], d["nextAttemptAt"]),
                             (e["createdAt"], e["createdAt"], e["createdAt"]))
            self.assertIsNone(d["deliveredAt"])
            # an event with a destination is one entry of its shard's stream, without
            # a hash of its own, created when the entry was (docs/event-layout.md);
            # the same event as a hash of the version before, every field written,
            # reads the same
            e_key = rkey("e:", e["id"])
            self.assertEqual(redis.cmd("EXISTS", e_key), 0)
            st = stored_event(redis, account, e["id"])
            self.assertEqual((st["type"], st["url"], st["order"]),
                             ("EVENT:CHARGE_PAID", "http://127.0.0.1:9/none", cid))
            self.assertEqual(json.loads(st["body"]), d["payload"])
            ms = st["created_ms"]
            self.assertEqual(redis.cmd("HSET", e_key, "id", e["id"], "env", "sandbox",
                                       "account", account, "type", st["type"], "url", st["url"],
                                       "queue", "sandbox:%s:127.0.0.1:9" % account,
                                       "body", st["body"], "order", cid, "created_ms", ms,
                                       "updated_ms", ms, "next_ms", ms, "state", "pending",
                                       "attempts", "0"), 13)
            listed = px.request("GET", "/v1/events", headers=auth(key)).json["data"]["events"]
            self.assertEqual(listed, events)
            r = px.request("GET", "/v1/events/" + e["id"], headers=auth(key))
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json["data"], d)
        finally:
            px.stop()
            redis.stop()
            wd.cleanup()


if __name__ == "__main__":
    unittest.main(verbosity=2)
