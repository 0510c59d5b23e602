"""The tests' Woovi (testwoovi.py) checked with a plain client: http.client
over ssl, nothing of pixrelay. The AppID, charges and their BR Codes (read by
test_testbank's reader), paging, refunds, the swagger's refusals, and the
notifications: their shape against docs/webhook/examples, their signature
verified with `openssl dgst -sha256 -verify` and the key Woovi publishes, the
retries, the fault knobs, the webhook register API, a Unix socket receiver.
No pixrelay, no Redis."""
import base64
import datetime
import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
import unittest

import certs
import openpix
from receiver import Receiver
from test_testbank import decode_br_code
from testwoovi import TestWoovi


class Base(unittest.TestCase):
    def setUp(self):
        self.wv = TestWoovi(retry_factor=0.001).start()
        self.ctx = ssl.create_default_context(cafile=self.wv.server_ca)
        self.tmp = tempfile.mkdtemp(prefix="test-testwoovi-")
        self.receivers = []

    def tearDown(self):
        self.wv.close()
        for r in self.receivers:
            r.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def receiver(self, answers=(200,), unix=None):
        r = Receiver(answers, unix)
        self.receivers.append(r)
        return r

    def call(self, method, path, obj=None, auth=True, raw=None, ctype="application/json"):
        """(status, decoded answer)."""
        conn = http.client.HTTPSConnection("127.0.0.1", self.wv.port, timeout=10, context=self.ctx)
        headers = {}
        if auth is True:
            headers["Authorization"] = self.wv.app_id
        elif auth:
            headers["Authorization"] = auth
        body = raw
        if obj is not None:
            body = json.dumps(obj).encode()
        if body is not None:
            headers["Content-Type"] = ctype
        try:
            conn.request(method, path, body, headers)
            r = conn.getresponse()
            return r.status, json.loads(r.read())
        finally:
            conn.close()

    def charge(self, corr, value=1000, **extra):
        status, out = self.call("POST", "/api/v1/charge", dict({"correlationID": corr, "value": value}, **extra))
        self.assertEqual(status, 200, out)
        return out["charge"]

    def verify(self, body, signature, public_key_pem):
        """`openssl dgst -sha256 -verify` of the body with the key: True when
        it verifies."""
        files = {}
        for name, data in (("key.pem", public_key_pem), ("sig", base64.b64decode(signature)), ("body", body)):
            files[name] = os.path.join(self.tmp, name)
            with open(files[name], "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
        p = subprocess.run([certs.OPENSSL, "dgst", "-sha256", "-verify", files["key.pem"], "-signature",
                            files["sig"], files["body"]], capture_output=True, text=True, timeout=60)
        return p.returncode == 0 and p.stdout.strip() == "Verified OK"

    def published_key(self):
        status, out = self.call("GET", "/api/v1/webhook/public-keys", auth=None)
        self.assertEqual(status, 200, out)
        [key] = out["public_keys"]
        self.assertTrue(key["is_current"])
        return key["key"]


class TestApi(Base):
    def test_the_app_id_exactly(self):
        refused = {"data": None, "errors": [{"message": "appID inválido"}]}
        for auth in (None, "Bearer " + self.wv.app_id, self.wv.app_id + "x", self.wv.app_id.lower(), ""):
            self.assertEqual(self.call("GET", "/api/v1/charge", auth=auth or None), (401, refused), auth)
        self.assertEqual(self.call("GET", "/api/v1/charge")[0], 200)
        self.assertEqual(self.call("GET", "/api/v1/webhook/public-keys", auth=None)[0], 200)
        self.assertEqual(self.wv.calls["GET /api/v1/charge"], 6)
        self.assertEqual(self.wv.violations, [])

    def test_create_is_idempotent_with_return_existing(self):
        first = self.charge("order-1", 1234, comment="pedido 1")
        self.assertEqual(first["status"], "ACTIVE")
        status, again = self.call("POST", "/api/v1/charge?return_existing=true",
                                  {"correlationID": "order-1", "value": 1234})
        self.assertEqual(status, 200)
        self.assertEqual(again["charge"], first)
        self.assertEqual((again["correlationID"], again["brCode"]), ("order-1", first["brCode"]))
        self.assertEqual(self.call("POST", "/api/v1/charge", {"correlationID": "order-1", "value": 1234}),
                         (400, {"error": "correlationID: a charge with this correlationID already exists"}))
        self.assertEqual(self.wv.calls["POST /api/v1/charge"], 3)
        [v] = self.wv.take_violations()
        self.assertEqual((v.kind, v.status), ("rule", 400))
        for ident in ("order-1", first["transactionID"], first["globalID"]):
            self.assertEqual(self.call("GET", "/api/v1/charge/" + ident), (200, {"charge": first}))
        self.assertEqual(self.call("GET", "/api/v1/charge/nope"), (404, {"error": "charge not found"}))
        self.assertEqual(self.wv.violations, [])

    def test_the_br_code(self):
        ch = self.charge("order-br", 123456)
        fields = decode_br_code(ch["brCode"])
        self.assertEqual(fields["54"], "1234.56")
        self.assertEqual(fields["26"], {"00": "br.gov.bcb.pix", "01": self.wv.pix_key})
        self.assertEqual(fields["62"], {"05": ch["transactionID"][:25]})
        self.assertEqual((fields["53"], fields["58"]), ("986", "BR"))
        self.assertEqual(ch["pixKey"], self.wv.pix_key)

    def test_the_swagger_refuses(self):
        cases = [
            ("POST", "/api/v1/charge", {"correlationID": "a", "value": "100"},
             "$.value: '100' is not of type 'number'"),
            ("POST", "/api/v1/charge", {"value": 100}, "$: 'correlationID' is a required property"),
            ("POST", "/api/v1/charge", {"correlationID": "a", "value": 100.5},
             "value: cents, a whole number of at least 1"),
            ("POST", "/api/v1/charge", {"correlationID": "a", "value": 100, "expiresIn": 60},
             "expiresIn: whole seconds, at least 300 (5 minutes)"),
            ("POST", "/api/v1/charge?return_existing=yes", {"correlationID": "a", "value": 100},
             "?return_existing: 'yes' is not of type 'boolean'"),
            ("GET", "/api/v1/transaction?limit=0", None, "?limit: 0 is less than the minimum of 1"),
            ("GET", "/api/v1/transaction?page=2", None,
             "?page: not a query parameter of GET /api/v1/transaction"),
            ("GET", "/api/v1/transaction?type=SALE", None,
             "?type: 'SALE' is not one of ['PAYMENT', 'WITHDRAW', 'REFUND', 'FEE', 'INTERNAL_TRANSFER', "
             "'BALANCE_BLOCK', 'BALANCE_UNBLOCK', 'REVERSAL']"),
            ("GET", "/api/v1/charge?status=PAID", None,
             "?status: 'PAID' is not one of ['ACTIVE', 'COMPLETED', 'EXPIRED']"),
        ]
        for method, path, body, error in cases:
            self.assertEqual(self.call(method, path, body), (400, {"error": error}), (path, body))
        self.assertEqual(self.call("POST", "/api/v1/charge", raw=b"{nope"),
                         (400, {"error": "body: not JSON (Expecting property name enclosed in double quotes: "
                                         "line 1 column 2 (char 1))"}))
        self.assertEqual(self.call("POST", "/api/v1/charge", raw=b"{}", ctype="text/plain"),
                         (400, {"error": "Content-Type: application/json expected"}))
        got = self.wv.take_violations()
        self.assertEqual(len(got), len(cases) + 2)
        self.assertEqual({v.where for v in got}, {"request"})
        self.assertEqual(self.call("GET", "/api/v1/charge")[1]["charges"], [])

    def test_the_errata_apply(self):
        self.assertEqual(len(openpix.ERRATA), 5)
        openpix.fixed_spec()
        # a PAYMENT transaction keeps the swagger once its `type` is fixed
        self.charge("order-t")
        openpix.validate("Transaction", self.wv.pay("order-t"))

    def test_paging_over_250_transactions(self):
        base = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.timezone.utc)
        for i in range(250):
            self.wv.pay_static(100 + i, when=base + datetime.timedelta(seconds=i))
        seen, skip, pages = [], 0, []
        while True:
            status, out = self.call("GET", "/api/v1/transaction?skip=%d" % skip)
            self.assertEqual(status, 200)
            info = out["pageInfo"]
            pages.append((info["skip"], info["limit"], len(out["transactions"]), info["hasPreviousPage"],
                          info["hasNextPage"], info["totalCount"]))
            seen += [t["transactionID"] for t in out["transactions"]]
            if not info["hasNextPage"]:
                break
            skip = info["skip"] + info["limit"]
        self.assertEqual(pages, [(0, 100, 100, False, True, 250), (100, 100, 100, True, True, 250),
                                 (200, 100, 50, True, False, 250)])
        self.assertEqual(len(set(seen)), 250)
        values = [self.wv.transaction(t)["value"] for t in seen]
        self.assertEqual(values, list(range(349, 99, -1)))   # newest first
        status, out = self.call("GET", "/api/v1/transaction?limit=500")
        self.assertEqual((len(out["transactions"]), out["pageInfo"]["limit"]), (100, 100))
        window = "start=2026-03-01T12:01:00.000Z&end=2026-03-01T12:01:09.999Z"
        status, out = self.call("GET", "/api/v1/transaction?" + window)
        self.assertEqual([t["value"] for t in out["transactions"]], list(range(169, 159, -1)))
        self.assertEqual(self.call("GET", "/api/v1/transaction?type=REFUND")[1]["transactions"], [])
        self.assertEqual(self.wv.violations, [])

    def test_a_transaction_by_id_or_end_to_end_id(self):
        self.charge("order-tx", 4321, customer={"name": "Ana", "taxID": "12345678909"})
        tx = self.wv.pay("order-tx", info="obrigado")
        self.assertEqual((tx["type"], tx["value"], len(tx["endToEndId"]), tx["endToEndId"][0]),
                         ("PAYMENT", 4321, 32, "E"))
        self.assertEqual(tx["charge"]["status"], "COMPLETED")
        for ident in (tx["transactionID"], tx["endToEndId"]):
            self.assertEqual(self.call("GET", "/api/v1/transaction/" + ident), (200, {"transaction": tx}))
        self.assertEqual(self.call("GET", "/api/v1/transaction/nope"), (404, {"error": "transaction not found"}))
        status, out = self.call("GET", "/api/v1/transaction?charge=order-tx")
        self.assertEqual(out["transactions"], [tx])
        self.assertEqual(self.call("GET", "/api/v1/charge/order-tx")[1]["charge"]["paidAt"], tx["time"])
        with self.assertRaises(ValueError):
            self.wv.pay("order-tx")
        self.assertEqual(self.wv.violations, [])

    def test_listing_charges(self):
        for i in range(5):
            self.charge("c%d" % i, 100 + i)
        self.wv.pay("c1")
        status, out = self.call("GET", "/api/v1/charge?status=COMPLETED")
        self.assertEqual([c["correlationID"] for c in out["charges"]], ["c1"])
        status, out = self.call("GET", "/api/v1/charge?skip=1&limit=2")
        self.assertEqual([c["correlationID"] for c in out["charges"]], ["c3", "c2"])
        self.assertEqual(out["pageInfo"], {"skip": 1, "limit": 2, "totalCount": 5, "hasPreviousPage": True,
                                           "hasNextPage": True})
        self.assertEqual(self.wv.violations, [])

    def test_refunds(self):
        self.charge("order-r", 1000)
        path = "/api/v1/charge/order-r/refund"
        self.assertEqual(self.call("POST", path, {"correlationID": "r0"}),
                         (400, {"error": "the charge is not paid (status ACTIVE)"}))
        self.wv.take_violations()
        self.wv.pay("order-r")
        status, out = self.call("POST", path, {"correlationID": "r1", "value": 300, "comment": "troca"})
        self.assertEqual(status, 200)
        r1 = out["refund"]
        self.assertEqual((r1["status"], r1["value"], r1["correlationID"], len(r1["endToEndId"]),
                          r1["endToEndId"][0], r1["comment"]), ("IN_PROCESSING", 300, "r1", 32, "D", "troca"))
        self.assertEqual(self.call("POST", path, {"correlationID": "r1", "value": 300}), (200, {"refund": r1}))
        self.assertEqual(self.call("POST", path, {"correlationID": "r2", "value": 800}),
                         (400, {"error": "value: 800 is above what remains to refund (700)"}))
        self.assertEqual(len(self.wv.take_violations()), 1)
        status, out = self.call("POST", path, {"correlationID": "r2"})
        self.assertEqual((status, out["refund"]["value"]), (200, 700))
        self.assertEqual(self.call("POST", path, {"correlationID": "r3", "value": 1}),
                         (400, {"error": "the charge has nothing left to refund"}))
        self.wv.take_violations()
        status, out = self.call("GET", path)
        self.assertEqual([r["correlationID"] for r in out["refunds"]], ["r1", "r2"])
        self.wv.confirm_refund("r1")
        self.wv.confirm_refund("r2", status="REJECTED")
        status, out = self.call("GET", "/api/v1/transaction?type=REFUND")
        [tx] = out["transactions"]
        self.assertEqual((tx["endToEndId"], tx["value"], tx["charge"]["correlationID"]),
                         (r1["endToEndId"], 300, "order-r"))
        self.assertEqual(self.call("GET", "/api/v1/transaction/" + r1["endToEndId"])[1]["transaction"], tx)
        status, out = self.call("POST", path, {"correlationID": "r4", "value": 700})
        self.assertEqual((status, out["refund"]["value"]), (200, 700))
        self.assertEqual(self.wv.violations, [])

    def test_down_and_slow(self):
        self.wv.down()
        with self.assertRaises(OSError):
            self.call("GET", "/api/v1/charge")
        self.wv.up()
        self.assertEqual(self.call("GET", "/api/v1/charge")[0], 200)
        self.wv.down(mode="503")
        self.assertEqual(self.call("GET", "/api/v1/charge"), (503, {"error": "Service Unavailable"}))
        self.wv.up()
        self.wv.slow(0.3)
        t0 = time.monotonic()
        self.assertEqual(self.call("GET", "/api/v1/charge")[0], 200)
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)
        self.assertEqual(self.wv.calls["GET /api/v1/charge"], 3)


class TestNotifications(Base):
    def test_signed_with_the_published_key(self):
        # the procedure first: the docs' own vector verifies, and fails on one byte changed
        key, payload, signature = openpix.signature_vector()
        self.assertTrue(self.verify(payload, signature, key))
        self.assertFalse(self.verify(payload + b" ", signature, key))
        r = self.receiver()
        self.wv.webhook_url = r.url()
        self.charge("order-n", 2500)
        self.wv.pay("order-n")
        self.wv.wait_deliveries(2)
        published = self.published_key()
        self.assertEqual(published, self.wv.public_key_pem)
        self.assertEqual(sorted(json.loads(b)["event"] for _, _, b in r.got),
                         ["OPENPIX:CHARGE_COMPLETED", "OPENPIX:TRANSACTION_RECEIVED"])
        for path, headers, body in r.got:
            self.assertEqual(path, "/hook")
            self.assertTrue(self.verify(body, headers["x-webhook-signature"], published))
        for d in self.wv.deliveries:
            self.assertEqual((d.status, d.attempt), (200, 1))
        got = {}
        for mode in ("none", "bad", "other-key"):
            self.wv.sign = mode
            [d] = self.wv.notify("OPENPIX:CHARGE_COMPLETED", charge="order-n")
            got[mode] = r.got[-1]
            self.assertEqual(d.status, 200)
        self.assertNotIn("x-webhook-signature", got["none"][1])
        for mode in ("bad", "other-key"):
            _, headers, body = got[mode]
            self.assertFalse(self.verify(body, headers["x-webhook-signature"], published), mode)

    def test_a_new_key_is_published_beside_the_old(self):
        r = self.receiver()
        self.wv.webhook_url = r.url()
        old = self.published_key()
        self.wv.rotate_key()
        status, out = self.call("GET", "/api/v1/webhook/public-keys", auth=None)
        self.assertEqual([(k["key"], k["is_current"]) for k in out["public_keys"]],
                         [(old, False), (self.wv.public_key_pem, True)])
        self.assertNotEqual(old, self.wv.public_key_pem)
        self.wv.pay_static(100)
        self.wv.wait_settled()
        [(_, headers, body)] = r.got
        self.assertTrue(self.verify(body, headers["x-webhook-signature"], self.wv.public_key_pem))
        self.assertFalse(self.verify(body, headers["x-webhook-signature"], old))

    def test_the_shapes_of_the_docs(self):
        r = self.receiver()
        self.wv.webhook_url = r.url()
        self.charge("order-s", 1500, customer={"name": "Ana", "taxID": "12345678909", "email": "a@b.example"})
        self.wv.pay("order-s", info="pedido")
        self.wv.refund("order-s", 500, correlation_id="dev-1")
        self.wv.confirm_refund("dev-1")
        self.charge("order-x", 900, customer={"name": "Bia", "email": "bia@example.com"})
        self.wv.expire("order-x")
        self.wv.pay_static(700)
        self.wv.wait_deliveries(5)
        bodies = [json.loads(b) for _, _, b in r.got]
        by_event = {}
        for b in bodies:
            by_event.setdefault(b["event"], []).append(b)
        self.assertEqual(sorted((e, len(v)) for e, v in by_event.items()),
                         [("OPENPIX:CHARGE_COMPLETED", 1), ("OPENPIX:CHARGE_EXPIRED", 1),
                          ("OPENPIX:TRANSACTION_RECEIVED", 2), ("OPENPIX:TRANSACTION_REFUND_RECEIVED", 1)])
        for name, event in (("charge-payload", "OPENPIX:CHARGE_COMPLETED"),
                            ("transaction-received-payload", "OPENPIX:TRANSACTION_RECEIVED"),
                            ("refund-payload", "OPENPIX:TRANSACTION_REFUND_RECEIVED"),
                            ("charge-expired-payload", "OPENPIX:CHARGE_EXPIRED")):
            ex = openpix.webhook_example(name)
            body = by_event[event][0]
            self.assertEqual(set(body), set(ex), name)
            # the account's fees and cashback (giftback) are not modelled
            self.assertLessEqual(set(ex["charge"]) - {"fee", "giftbackAppliedValue"}, set(body["charge"]), name)
            if "pix" in ex:
                self.assertLessEqual(set(ex["pix"]), set(body["pix"]), name)
            openpix.validate("Charge", body["charge"])
        completed = by_event["OPENPIX:CHARGE_COMPLETED"][0]
        self.assertEqual((completed["pix"]["value"], completed["pix"]["infoPagador"],
                          completed["pix"]["transactionID"]), (1500, "pedido", completed["charge"]["transactionID"]))
        refund = by_event["OPENPIX:TRANSACTION_REFUND_RECEIVED"][0]["pix"]
        self.assertEqual((refund["value"], refund["partial"], refund["endToEndId"][0]), (500, True, "D"))
        static = [b for b in by_event["OPENPIX:TRANSACTION_RECEIVED"] if b["charge"] is None]
        self.assertEqual([b["pix"]["value"] for b in static], [700])
        self.assertNotIn("charge", static[0]["pix"])

    def test_retries_as_woovi_does(self):
        r = self.receiver(answers=(503,))
        self.wv.webhook_url = r.url()
        self.wv.pay_static(100)
        calls = self.wv.wait_settled()
        self.assertEqual([(d.attempt, d.status) for d in calls], [(n, 503) for n in range(1, 10)])
        gaps = [b.sent_at - a.sent_at for a, b in zip(calls, calls[1:])]
        for gap, want in zip(gaps, [10 * 2 ** n * 0.001 for n in range(8)]):
            self.assertGreaterEqual(gap, want * 0.9)
        self.assertGreater(gaps[-1], 1.2)
        # a 400 is an answer (not above 400): no retry; a 500 then a 200: two calls
        for answers, want in (((400,), [400]), ((500, 200), [500, 200])):
            self.wv.deliveries.clear()
            r.answers = list(answers)
            self.wv.pay_static(100)
            self.assertEqual([d.status for d in self.wv.wait_settled()], want)

    def test_no_receiver_is_retried(self):
        self.wv.webhook_url = "http://127.0.0.1:9/nobody"
        self.wv.retry_intervals = (0.01, 0.01)
        self.wv.pay_static(100)
        calls = self.wv.wait_settled()
        self.assertEqual([d.attempt for d in calls], [1, 2, 3])
        self.assertTrue(all(d.status is None and "ConnectionRefused" in d.error for d in calls), calls)

    def test_fault_knobs(self):
        r = self.receiver()
        self.wv.webhook_url = r.url()
        self.wv.auto_notify = False
        tx = self.wv.pay_static(200)
        self.assertEqual(self.wv.deliveries, [])
        self.wv.webhook_faults(drop=1.0)
        [d] = self.wv.notify("OPENPIX:TRANSACTION_RECEIVED", transaction=tx["transactionID"])
        self.assertTrue(d.dropped)
        self.assertEqual(r.got, [])
        self.wv.webhook_faults(twice=1.0)
        self.wv.notify("OPENPIX:TRANSACTION_RECEIVED", transaction=tx["transactionID"])
        self.wv.wait_settled()
        self.assertEqual(len(r.got), 2)
        self.assertEqual(r.got[0][2], r.got[1][2])
        self.assertEqual([d.copy for d in self.wv.deliveries[1:]], [1, 2])

    def test_the_webhook_register_api(self):
        r = self.receiver()
        hook = {"name": "pixrelay", "event": "OPENPIX:CHARGE_COMPLETED", "url": r.url("/registered"),
                "authorization": "s3cret", "isActive": True}
        status, out = self.call("POST", "/api/v1/webhook", {"webhook": hook})
        self.assertEqual(status, 200)
        created = out["webhook"]
        self.assertEqual({k: created[k] for k in hook}, hook)
        self.assertEqual(self.call("GET", "/api/v1/webhook?url=" + r.url("/registered"))[1]["webhooks"],
                         [created])
        self.charge("order-w")
        self.wv.pay("order-w")
        self.wv.wait_settled()
        [(path, headers, body)] = r.got
        self.assertEqual((path, headers["Authorization"], json.loads(body)["event"]),
                         ("/registered", "s3cret", "OPENPIX:CHARGE_COMPLETED"))
        self.assertEqual(self.call("DELETE", "/api/v1/webhook/" + created["id"]), (200, {"status": "OK"}))
        self.assertEqual(self.call("DELETE", "/api/v1/webhook/" + created["id"]),
                         (404, {"error": "webhook not found"}))
        self.assertEqual(self.wv.violations, [])

    def test_a_unix_socket_receiver(self):
        sock = os.path.join(self.tmp, "door.sock")
        r = self.receiver(unix=sock)
        self.wv.webhook_url = "unix:%s:/v1/webhooks/woovi/bnk_1" % sock
        self.wv.pay_static(100)
        self.wv.wait_settled()
        self.assertEqual([p for p, _, _ in r.got], ["/v1/webhooks/woovi/bnk_1"])
        self.wv.webhook_url = "http://unix:%s:/other" % sock
        self.wv.pay_static(100)
        self.wv.wait_settled()
        self.assertEqual(r.got[-1][0], "/other")


if __name__ == "__main__":
    unittest.main(verbosity=2)
