"""POST /v1/webhooks/ingest/{accountId}: notifications from an upstream provider."""
import base64
import hashlib
import hmac
import json
import os
import signal
import threading
import time
import unittest

from harness import (Pixrelay, Redis, Workdir, auth, shard_of, start_stack, stop_stack,
                     stored_event, wait_for)


def wh_headers(secret, body, msg_id="msg_1", ts=None):
    ts = int(time.time()) if ts is None else ts
    key = base64.b64decode(secret[len("whsec_"):])
    sig = base64.b64encode(hmac.new(key, ("%s.%d." % (msg_id, ts)).encode() + body,
                                    hashlib.sha256).digest()).decode()
    return {"webhook-id": msg_id, "webhook-timestamp": str(ts), "webhook-signature": "v1," + sig,
            "Content-Type": "application/json"}


class Ingest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls, sink=True)
        cls.px.cli("init")
        s = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)
        cls.account, cls.secret, cls.signing = s["account"], s["ingestSecret"], s["signingSecret"]
        cls.key = cls.px.create_key("sandbox")["key"]
        # the account's postbackUrl receives relayed notifications
        out = cls.px.cli("account", "set", "--env", "sandbox", "--postback-url",
                         cls.sink.url("/account")).stdout
        assert "postbackUrl http://127.0.0.1" in out, out
        cls.path = "/v1/webhooks/ingest/" + cls.account

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def post(self, body, headers=None, raw=None, path=None):
        data = raw if raw is not None else json.dumps(body).encode()
        h = {"Content-Type": "application/json"}
        h.update(headers if headers is not None else {"signature": self.secret})
        return self.px.request("POST", path or self.path, raw=data, headers=h)

    def test_authentication(self):
        body = {"id": "up-auth", "event": "EVENT:CHARGE_PAID", "data": {"id": "x1"}}
        raw = json.dumps(body).encode()
        r = self.post(body, headers={})
        self.assertEqual(r.status, 401)
        self.assertEqual(r.json["error"], "missing signature: send Standard Webhooks headers "
                         "(webhook-id, webhook-timestamp, webhook-signature) or the header signature")
        r = self.post(body, headers={"signature": self.secret + "x"})
        self.assertEqual((r.status, r.json["error"]), (401, "invalid signature"))
        r = self.post(body, headers={"signature": self.signing})  # another secret of the account
        self.assertEqual(r.status, 401)
        h = wh_headers(self.secret, raw)
        h["webhook-signature"] = "v1," + base64.b64encode(b"x" * 32).decode()
        r = self.post(None, headers=h, raw=raw)
        self.assertEqual((r.status, r.json["error"]), (401, "invalid webhook-signature"))
        r = self.post(None, headers=wh_headers(self.secret, raw, ts=int(time.time()) - 600), raw=raw)
        self.assertEqual((r.status, r.json["error"]),
                         (401, "webhook-timestamp is more than 5 minutes off"))
        # a signature over other bytes does not pass
        r = self.post(None, headers=wh_headers(self.secret, raw + b" "), raw=raw)
        self.assertEqual(r.status, 401)
        r = self.post(body, path="/v1/webhooks/ingest/01ARZ3NDEKTSV4RRFFQ69G5FAV")
        self.assertEqual((r.status, r.json["error"]), (404, "account not found: 01ARZ3NDEKTSV4RRFFQ69G5FAV"))
        r = self.post(None, headers=wh_headers(self.secret, raw, msg_id="up-auth"), raw=raw)
        self.assertEqual(r.status, 200, r)

    def test_validation(self):
        for body, msg in [({"event": "EVENT:CHARGE_PAID", "data": {"id": "a"}},
                           "id: must be the notification's id, 1 to 128 printable characters"),
                          ({"id": "v1", "event": "EVENT:CHARGE_LOST", "data": {"id": "a"}},
                           "event: must be EVENT:CHARGE_PAID, EVENT:CHARGE_EXPIRED or EVENT:CHARGE_REFUND"),
                          ({"id": "v1", "event": "EVENT:CHARGE_PAID", "data": []},
                           "data: must be the charge, an object"),
                          ({"id": "v1", "event": "EVENT:CHARGE_PAID", "data": {"id": 5}},
                           "data.id: must be the charge id, 1 to 128 printable characters")]:
            r = self.post(body)
            self.assertEqual((r.status, r.json["error"]), (400, msg), body)
        # the charge's fields a notification is checked against are the spec's, when given
        amount = "data.amount: must be an integer number of cents"
        status = "data.status: must be PENDING, PAID, EXPIRED, REFUNDED or FAILED"
        for raw, msg in [(b'"amount":"1000"', amount), (b'"amount":10.5', amount),
                         (b'"amount":1e3', amount), (b'"amount":1000.0', amount),
                         (b'"amount":true', amount), (b'"amount":{}', amount),
                         (b'"amount":99999999999999999999', amount),
                         (b'"status":"paid"', status), (b'"status":"CANCELLED"', status),
                         (b'"status":1', status), (b'"status":""', status)]:
            r = self.post(None, raw=b'{"id":"v2","event":"EVENT:CHARGE_PAID","data":{"id":"a",'
                          + raw + b'}}')
            self.assertEqual((r.status, r.json["error"]), (400, msg), raw)
        # null is absent
        r = self.post({"id": "v-null", "event": "EVENT:CHARGE_PAID",
                       "data": {"id": "upc-null", "amount": None, "status": None}})
        self.assertEqual(r.status, 200, r)
        r = self.post(None, raw=b"{not json")
        self.assertEqual(r.status, 400)

    def test_unknown_charge_is_relayed_once(self):
        data = {"id": "upstream-charge-9", "status": "PAID", "value": 1.5, "nested": {"a": [1, "x"]}}
        body = {"id": "up-relay-1", "event": "EVENT:CHARGE_PAID", "data": data}
        r = self.post(body)
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual((d["received"], d["duplicate"]), (True, False))
        evt = d["event"]
        self.assertRegex(evt, r"^evt_")
        # (other tests relay to the same account: look at this event's requests)
        got = self.sink.wait_count(1, path="/account", webhook_id=evt)[0]
        self.assertEqual(got.json, {"id": evt, "event": "EVENT:CHARGE_PAID", "data": data})
        self.assertEqual(got.header("webhook-id"), evt)
        # the same notification again: one event
        r = self.post(body)
        self.assertEqual(r.status, 200)
        self.assertEqual((r.json["data"]["duplicate"], r.json["data"]["event"]), (True, evt))
        time.sleep(0.5)
        self.assertEqual(self.sink.count("/account", webhook_id=evt), 1)

    def test_data_is_relayed_byte_for_byte(self):
        # the provider's data as it wrote it: spacing, key order, escapes and
        # number forms reach the merchant unchanged (docs/postbacks.md)
        data = (b'{ "id" : "upstream-verbatim-1",\n  "z": 1, "a": [1.50, -0, 1E+2, {}],'
                b' "name": "Jo\\u00e3o \\/ \xc3\xa9", "note": "}{\\""}')
        raw = b'{"id":"up-verbatim-1",  "event":"EVENT:CHARGE_PAID", "data":' + data + b' }'
        r = self.post(None, raw=raw)
        self.assertEqual(r.status, 200, r)
        evt = r.json["data"]["event"]
        got = self.sink.wait_count(1, path="/account", webhook_id=evt)[0]
        self.assertEqual(got.body, b'{"id":"' + evt.encode() +
                         b'","event":"EVENT:CHARGE_PAID","data":' + data + b'}')
        # and what is refused still is: the data is parsed and checked first
        bad = raw.replace(b'"z": 1,', b'"z": 1, "z": 2,')
        r = self.post(None, raw=bad)
        self.assertEqual((r.status, r.json["error"]), (400, "invalid JSON: duplicate field 'z'"))

    def test_known_charge_moves_through_the_state_machine(self):
        r = self.px.request("POST", "/v1/charge/pix/create",
                            body={"amount": 900, "postbackUrl": self.sink.url("/known")},
                            headers=auth(self.key))
        cid = r.json["data"]["id"]
        body = {"id": "up-known-1", "event": "EVENT:CHARGE_PAID", "data": {"id": cid}}
        r = self.post(body)
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["chargeStatus"], r.json["data"]["duplicate"]), ("PAID", False))
        evt = r.json["data"]["event"]
        got = self.sink.wait_count(1, path="/known")[0]
        self.assertEqual(got.json["id"], evt)
        self.assertEqual(got.json["data"]["status"], "PAID")
        # duplicate, then a second payment notification with another id: ignored
        r = self.post(body)
        self.assertEqual((r.json["data"]["duplicate"], r.json["data"]["event"]), (True, evt))
        r = self.post(dict(body, id="up-known-2"))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json["data"]["ignored"], "the charge is PAID")
        # the refund notification refunds it
        r = self.post({"id": "up-known-3", "event": "EVENT:CHARGE_REFUND", "data": {"id": cid}})
        self.assertEqual(r.json["data"]["chargeStatus"], "REFUNDED")
        reqs = self.sink.wait_count(2, path="/known")
        self.assertEqual([q.json["event"] for q in reqs], ["EVENT:CHARGE_PAID", "EVENT:CHARGE_REFUND"])
        r = self.px.request("GET", "/v1/charge/pix/" + cid, headers=auth(self.key))
        self.assertEqual(r.json["data"]["status"], "REFUNDED")

    def charge(self, amount, path, key=None, account=None):
        r = self.px.request("POST", "/v1/charge/pix/create",
                            body={"amount": amount, "postbackUrl": self.sink.url(path)},
                            headers=auth(key or self.key, account))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def charge_status(self, cid, key=None, account=None):
        r = self.px.request("GET", "/v1/charge/pix/" + cid, headers=auth(key or self.key, account))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["status"]

    def balance(self, key=None, account=None):
        r = self.px.request("GET", "/v1/baas/balance", headers=auth(key or self.key, account))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["balance"]

    def ignored(self, body, status, why):
        """Post `body`; it must be answered 200, ignored for `why`, the charge `status`."""
        r = self.post(body)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"], {"received": True, "duplicate": False, "event": None,
                                          "chargeStatus": status, "ignored": why}, body)

    def test_one_call_answers_each_notification_its_own(self):
        # notifications of one turn go to Redis in one script call whose answers differ
        # in length (relayed, duplicate, paid, refused): each request gets its own
        charges = [self.charge(300 + i, "/mixed") for i in range(5)]  # the last one: not paid
        first = self.post({"id": "up-mixed-dup", "event": "EVENT:CHARGE_PAID",
                           "data": {"id": "ext-mixed-dup"}}).json["data"]["event"]
        notes = []
        for i in range(24):
            k = i % 6
            if k == 0:
                notes.append(("relayed", {"id": "up-mixed-%d" % i, "event": "EVENT:CHARGE_PAID",
                                          "data": {"id": "ext-mixed-%d" % i}}))
            elif k == 1:
                notes.append(("duplicate", {"id": "up-mixed-dup", "event": "EVENT:CHARGE_PAID",
                                            "data": {"id": "ext-mixed-dup"}}))
            elif k == 2:
                c = charges[i // 6]
                notes.append(("paid", {"id": "up-mixed-%d" % i, "event": "EVENT:CHARGE_PAID",
                                       "data": {"id": c["id"], "amount": c["amount"]}}))
            elif k == 3:
                c = charges[4]
                notes.append(("mismatch", {"id": "up-mixed-%d" % i, "event": "EVENT:CHARGE_PAID",
                                           "data": {"id": c["id"], "amount": 1}}))
            else:
                notes.append(("relayed", {"id": "up-mixed-%d" % i, "event": "EVENT:CHARGE_REFUND",
                                          "data": {"id": "ext-mixed-%d" % i}}))
        answers = [None] * len(notes)

        def send(j):
            answers[j] = self.post(notes[j][1])
        # Redis held for a moment: the requests gather behind the call under way
        os.kill(self.redis.proc.pid, signal.SIGSTOP)
        try:
            threads = [threading.Thread(target=send, args=(j,)) for j in range(len(notes))]
            for t in threads:
                t.start()
            time.sleep(0.5)
        finally:
            os.kill(self.redis.proc.pid, signal.SIGCONT)
        for t in threads:
            t.join(15)
        events = set()
        for (kind, body), r in zip(notes, answers):
            self.assertEqual(r.status, 200, (body, r))
            d = r.json["data"]
            if kind == "relayed":
                self.assertEqual((d["duplicate"], d.get("chargeStatus"), d.get("ignored")),
                                 (False, None, None), body)
                self.assertEqual(json.loads(stored_event(self.redis, self.account, d["event"])["body"])["data"],
                                 body["data"])
                events.add(d["event"])
            elif kind == "duplicate":
                self.assertEqual((d["duplicate"], d["event"]), (True, first))
            elif kind == "paid":
                self.assertEqual((d["duplicate"], d["chargeStatus"], d["ignored"]),
                                 (False, "PAID", None), body)
                self.assertEqual(self.charge_status(body["data"]["id"]), "PAID")
                events.add(d["event"])
            else:
                self.assertEqual(d["event"], None, body)
                self.assertRegex(d["ignored"], r"^data.amount is 1; the charge's amount is", body)
        self.assertEqual(len(events), sum(1 for k, _ in notes if k in ("relayed", "paid")))

    def test_a_notification_that_contradicts_the_charge_moves_nothing(self):
        # a correctly signed EVENT:CHARGE_PAID for 200 cents made a 1,000-cent charge PAID
        # and credited its own amount: data.amount and data.status are compared now
        c = self.charge(1000, "/contra")
        cid, before = c["id"], self.balance()
        paid = {"id": "up-contra-1", "event": "EVENT:CHARGE_PAID",
                "data": {"id": cid, "amount": 1000, "status": "PAID"}}
        for amount in (200, 99999999999, 1001, 0, -1000):
            self.ignored(dict(paid, data=dict(paid["data"], amount=amount)), "PENDING",
                         "data.amount is %d; the charge's amount is 1000" % amount)
        for status in ("PENDING", "EXPIRED", "REFUNDED", "FAILED"):
            self.ignored(dict(paid, data=dict(paid["data"], status=status)), "PENDING",
                         "data.status is %s; EVENT:CHARGE_PAID needs PAID" % status)
        self.assertEqual(self.charge_status(cid), "PENDING")
        self.assertEqual(self.balance(), before)
        # a refused notification is not remembered: the same id, corrected, is taken once
        r = self.post(paid)
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual((d["chargeStatus"], d["duplicate"], d["ignored"]), ("PAID", False, None))
        evt = d["event"]
        self.assertRegex(evt, r"^evt_")
        self.assertEqual(self.balance(), before + 1000 - c["fee"])
        r = self.post(paid)
        self.assertEqual((r.json["data"]["duplicate"], r.json["data"]["event"]), (True, evt))
        # a refund and an expiry are checked the same way
        refund = {"id": "up-contra-2", "event": "EVENT:CHARGE_REFUND", "data": {"id": cid}}
        self.ignored(dict(refund, data={"id": cid, "amount": 999}), "PAID",
                     "data.amount is 999; the charge's amount is 1000")
        self.ignored(dict(refund, data={"id": cid, "status": "PAID"}), "PAID",
                     "data.status is PAID; EVENT:CHARGE_REFUND needs REFUNDED")
        self.assertEqual(self.balance(), before + 1000 - c["fee"])
        r = self.post(dict(refund, data={"id": cid, "amount": 1000, "status": "REFUNDED"}))
        self.assertEqual(r.json["data"]["chargeStatus"], "REFUNDED", r)
        self.assertEqual(self.balance(), before)
        c2 = self.charge(1000, "/contra")
        expiry = {"id": "up-contra-3", "event": "EVENT:CHARGE_EXPIRED", "data": {"id": c2["id"]}}
        self.ignored(dict(expiry, data={"id": c2["id"], "amount": 2000}), "PENDING",
                     "data.amount is 2000; the charge's amount is 1000")
        self.ignored(dict(expiry, data={"id": c2["id"], "status": "PAID"}), "PENDING",
                     "data.status is PAID; EVENT:CHARGE_EXPIRED needs EXPIRED")
        r = self.post(dict(expiry, data={"id": c2["id"], "amount": 1000, "status": "EXPIRED"}))
        self.assertEqual(r.json["data"]["chargeStatus"], "EXPIRED", r)
        # one event per move, none for the refusals; nothing was relayed either
        reqs = self.sink.wait_count(3, path="/contra")
        time.sleep(0.5)
        got = [(q.json["data"]["id"], q.json["event"]) for q in self.sink.requests("/contra")]
        self.assertEqual([e for i, e in got if i == cid], ["EVENT:CHARGE_PAID", "EVENT:CHARGE_REFUND"])
        self.assertEqual([e for i, e in got if i == c2["id"]], ["EVENT:CHARGE_EXPIRED"])
        self.assertEqual(len(got), 3)
        self.assertIn(evt, [q.json["id"] for q in reqs])
        self.assertEqual([q for q in self.sink.requests("/account")
                          if isinstance(q.json, dict) and isinstance(q.json.get("data"), dict)
                          and q.json["data"].get("id") in (cid, c2["id"])], [])

    def test_another_accounts_charge_is_relayed_not_moved(self):
        # the charge of another account, in this account's shard or in another, is not
        # this account's: the notification is relayed like any unknown one
        from accountdata import account_body, cpf
        master = self.px.create_key("sandbox", master=True)["key"]
        same = other = None
        for _ in range(300):
            r = self.px.request("POST", "/v1/baas/account/create", body=account_body([cpf()]),
                                headers=auth(master, self.account))
            self.assertEqual(r.status, 200, r)
            a = r.json["data"]["id"]
            if shard_of(a) == shard_of(self.account):
                same = same or a
            else:
                other = other or a
            if same and other:
                break
        self.assertTrue(same and other)
        for acct in (same, other):
            c = self.charge(1000, "/other", key=master, account=acct)
            r = self.post({"id": "up-other-" + acct, "event": "EVENT:CHARGE_PAID",
                           "data": {"id": c["id"], "amount": 1000, "status": "PAID"}})
            self.assertEqual(r.status, 200, r)
            d = r.json["data"]
            self.assertEqual((d["duplicate"], d["chargeStatus"], d["ignored"]), (False, None, None))
            self.assertRegex(d["event"], r"^evt_")
            self.assertEqual(self.sink.wait_count(1, path="/account", webhook_id=d["event"])[0]
                             .json["data"]["id"], c["id"])
            self.assertEqual(self.charge_status(c["id"], master, acct), "PENDING")
            self.assertEqual(self.balance(master, acct), 0)
        self.assertEqual(self.sink.count("/other"), 0)

    def test_notification_ids_are_per_account(self):
        # another account (created through the API) may use the same upstream id
        import base64 as b64
        pdf = b64.b64encode(b"%PDF-1.4 x").decode()
        png = b64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001")).decode()
        body = {"officialName": "Outra Ltda", "tradeName": "Outra", "taxID": "11222333000181",
                "documents": [pdf],
                "address": {"zipcode": "01310100", "street": "R", "number": "1",
                            "neighborhood": "B", "city": "C", "state": "SP"},
                "representatives": [{"name": "N", "birthDate": "1990-01-01", "email": "n@x.co",
                                     "taxID": "39053344705", "phone": "11943214321",
                                     "documents": {"picture_face": png, "picture_identity_front": png,
                                                   "picture_identity_type": "CNH"}}]}
        r = self.px.request("POST", "/v1/baas/account/create", body=body, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        other, other_secret = r.json["data"]["id"], r.json["data"]["secrets"]["ingestSecret"]
        note = {"id": "up-shared-1", "event": "EVENT:CHARGE_EXPIRED", "data": {"id": "shared-c"}}
        r1 = self.post(note)
        r2 = self.post(note, headers={"signature": other_secret},
                       path="/v1/webhooks/ingest/" + other)
        self.assertEqual((r1.status, r2.status), (200, 200))
        self.assertFalse(r1.json["data"]["duplicate"])
        self.assertFalse(r2.json["data"]["duplicate"])
        self.assertNotEqual(r1.json["data"]["event"], r2.json["data"]["event"])
        # each account's secret only opens its own endpoint
        r = self.post(note, headers={"signature": other_secret})
        self.assertEqual(r.status, 401)

    def test_acknowledged_means_stored(self):
        # every 200 has its event in Redis at once, in the account's shard
        for i in range(20):
            r = self.post({"id": "up-dur-%d" % i, "event": "EVENT:CHARGE_EXPIRED",
                           "data": {"id": "upc-dur-%d" % i}})
            self.assertEqual(r.status, 200)
            evt = r.json["data"]["event"]
            self.assertEqual(self.redis.cmd("GET", "pixrelay:{s%d}:up:%s:up-dur-%d" % (shard_of(self.account), self.account, i)),
                             evt)
            self.assertEqual(stored_event(self.redis, self.account, evt)["type"], "EVENT:CHARGE_EXPIRED")

    def test_redis_down_answers_503_so_the_provider_retries(self):
        wd = Workdir()
        redis = Redis(wd.path).start()
        px = Pixrelay(wd.path, redis, args=["--redis-timeout-ms", "500"]).start()
        try:
            px.wait_ready()
            px.cli("init")
            s = json.loads(px.cli("secrets", "--env", "sandbox", "--json").stdout)
            redis.stop()
            wait_for(lambda: px.request("GET", "/readyz").status == 503 or None)
            r = px.request("POST", "/v1/webhooks/ingest/" + s["account"],
                           raw=b'{"id":"a","event":"EVENT:CHARGE_PAID","data":{"id":"b"}}',
                           headers={"Content-Type": "application/json", "signature": s["ingestSecret"]})
            self.assertEqual(r.status, 503)
        finally:
            px.stop()
            redis.stop()
            wd.cleanup()


if __name__ == "__main__":
    unittest.main(verbosity=2)
