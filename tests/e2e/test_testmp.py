"""The tests' Mercado Pago (testmp.py) checked with a plain client: http.client
over ssl, nothing of pixrelay. The Bearer token, Pix payments and their BR
Codes (read by test_testbank's reader), idempotency keys, search paging and
its date errors, refunds, statuses, the SDK types' refusals, and the
notifications: their body and query, their x-signature verified by a rule
written here from the SDK's validator (python hmac), the qr mode, the retries.
No pixrelay, no Redis."""
import hashlib
import hmac
import http.client
import json
import ssl
import time
import unittest
import uuid

import mpapi
from test_testbank import decode_br_code
from test_testwoovi import Receiver
from testmp import TestMP


def sdk_validate(x_signature, x_request_id, data_id, secret):
    """src/utils/webhook/index.ts's validate, written again: None when the
    signature holds, else the SDK's failure reason."""
    if not x_signature or not x_signature.strip():
        return "MissingSignatureHeader"
    ts, hashes = None, {}
    for part in x_signature.split(","):
        key, eq, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or not key or not value:
            continue
        if key == "ts":
            ts = value
        elif key[0] == "v" and key[1:].isdigit():
            hashes[key] = value
    if not ts:
        return "MalformedSignatureHeader" if not hashes else "MissingTimestamp"
    if not ts.isdigit():
        return "MalformedSignatureHeader"
    if "v1" not in hashes:
        return "MissingHash"
    text = ("id:%s;" % data_id if data_id else "") + ("request-id:%s;" % x_request_id if x_request_id else "") \
        + "ts:%s;" % ts
    mine = hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()
    return None if hmac.compare_digest(mine, hashes["v1"]) else "SignatureMismatch"


PIX = {"transaction_amount": 12.34, "description": "Pedido 1", "payment_method_id": "pix",
       "payer": {"email": "comprador@example.com"}, "external_reference": "ch_1"}


class Base(unittest.TestCase):
    def setUp(self):
        self.mp = TestMP(retry_factor=0.0005).start()
        self.ctx = ssl.create_default_context(cafile=self.mp.server_ca)

    def tearDown(self):
        self.mp.close()

    def call(self, method, path, body=None, token=None, key=None, raw=None, auth=True):
        conn = http.client.HTTPSConnection("127.0.0.1", self.mp.port, context=self.ctx, timeout=10)
        headers = {"Content-Type": "application/json"}
        if auth:
            headers["Authorization"] = "Bearer " + (token or self.mp.access_token)
        if key:
            headers["X-Idempotency-Key"] = key
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        conn.request(method, path, data, headers)
        resp = conn.getresponse()
        out = resp.status, json.loads(resp.read())
        conn.close()
        return out

    def create(self, body=None, key=None, token=None):
        status, p = self.call("POST", "/v1/payments", body or PIX, key=key or str(uuid.uuid4()), token=token)
        self.assertEqual(status, 201, p)
        return p


class TestAPI(Base):
    def test_bearer_token_required(self):
        for kwargs in ({"auth": False}, {"token": "TEST-0-000000-x-1"}):
            status, body = self.call("GET", "/v1/payments/1", **kwargs)
            self.assertEqual((status, body), (401, {"message": "invalid_token", "error": "not_found",
                                                    "status": 401, "cause": []}))
        self.assertTrue(self.mp.access_token.startswith("TEST-"))
        self.assertTrue(self.mp.access_token.endswith("-%d" % self.mp.collector_id))

    def test_pix_payment_and_its_code(self):
        p = self.create()
        self.assertEqual((p["status"], p["status_detail"], p["transaction_amount"]),
                         ("pending", "pending_waiting_transfer", 12.34))
        self.assertEqual(p["external_reference"], "ch_1")
        td = p["point_of_interaction"]["transaction_data"]
        code = decode_br_code(td["qr_code"])
        self.assertEqual(code["54"], "12.34")
        self.assertEqual(code["62"]["05"], "mpqrinter%d" % p["id"])
        self.assertTrue(td["ticket_url"].startswith("https://"))
        self.assertEqual(mpapi.check("PaymentResponse", p), [])
        status, again = self.call("GET", "/v1/payments/%d" % p["id"])
        self.assertEqual((status, again["id"]), (200, p["id"]))

    def test_idempotency_key(self):
        status, body = self.call("POST", "/v1/payments", PIX)
        self.assertEqual(status, 400)
        self.assertEqual(body["message"], "X-Idempotency-Key: header required")
        self.assertEqual(len(self.mp.take_violations()), 1)
        key = str(uuid.uuid4())
        first, second = self.create(key=key), self.create(key=key)
        self.assertEqual(first["id"], second["id"])
        self.assertEqual(len(self.mp.payments), 1)
        other = self.create(dict(PIX, transaction_amount=99), key=key)
        self.assertEqual((other["id"], other["transaction_amount"]), (first["id"], 12.34))
        (v,) = self.mp.take_violations()
        self.assertEqual(v.errors, [("X-Idempotency-Key", "reused with another body")])
        self.assertEqual(len(self.create(key=str(uuid.uuid4()))["refunds"]), 0)
        self.assertEqual(len(self.mp.payments), 2)

    def test_another_accounts_payment_is_not_found(self):
        other = self.mp.add_account()
        p = self.create(token=other)
        status, body = self.call("GET", "/v1/payments/%d" % p["id"])
        self.assertEqual(status, 404)
        self.assertEqual(body, {"message": "Payment not found", "error": "not_found", "status": 404,
                                "cause": [{"code": 2000, "description": "Payment not found", "data": None}]})
        self.assertEqual(self.call("GET", "/v1/payments/%d" % p["id"], token=other)[0], 200)
        self.assertEqual(self.call("GET", "/v1/payments/search")[1]["paging"]["total"], 0)

    def test_published_shapes_and_pix_rules(self):
        for body, message in (
                (dict(PIX, colour="red"), "The name of the following parameters is wrong ['$.colour']"),
                (dict(PIX, transaction_amount="12.34"), "$.transaction_amount: not a number"),
                (dict(PIX, payment_method_id="visa"), 'payment_method_id: "pix" is required (MP-PIX)'),
                (dict(PIX, payer={}), "payer.email: required"),
                (dict(PIX, transaction_amount=1.005), "transaction_amount: reais above 0 with at most 2 decimals"),
                (dict(PIX, date_of_expiration="2026-12-02"),
                 "The following parameters must be valid date and format (yyyy-MM-dd'T'HH:mm:ssz) date_of_expiration")):
            status, answer = self.call("POST", "/v1/payments", body, key=str(uuid.uuid4()))
            self.assertEqual((status, answer["message"], answer["error"]), (400, message, "bad_request"), body)
        self.assertEqual(len(self.mp.take_violations()), 6)
        self.assertEqual(self.mp.payments, [])

    def test_search_paging_and_errors(self):
        ids = [self.create(dict(PIX, external_reference="ch_%d" % i))["id"] for i in range(5)]
        status, page = self.call("GET", "/v1/payments/search?sort=date_created&criteria=asc&limit=2&offset=2")
        self.assertEqual(status, 200)
        self.assertEqual(page["paging"], {"total": 5, "limit": 2, "offset": 2})
        self.assertEqual([r["id"] for r in page["results"]], ids[2:4])
        self.assertEqual(mpapi.check("PaymentSearch", page), [])
        one = self.call("GET", "/v1/payments/search?external_reference=ch_3")[1]
        self.assertEqual([r["id"] for r in one["results"]], [ids[3]])
        self.mp.pay(ids[1])
        begin = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 60))
        end = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 60))
        q = "range=date_approved&begin_date=%s&end_date=%s" % (begin, end)
        self.assertEqual([r["id"] for r in self.call("GET", "/v1/payments/search?" + q)[1]["results"]], [ids[1]])
        for query, code, message in (
                ("begin_date=2026-12-01T00:00:00Z", 1001, "Date format must be yyyy-MM-dd'T'HH:mm:ss.SSSZ."),
                ("end_date=2026-12-01", 1001, "Date format must be yyyy-MM-dd'T'HH:mm:ss.SSSZ."),
                ("sort=amount", 1003, "Invalid sort value."),
                ("criteria=up", 1004, "Invalid criteria value."),
                ("limit=5000", 1000, "Number of rows exceeded the limits."),
                ("status=approved", 1, "Params Error.")):
            status, body = self.call("GET", "/v1/payments/search?" + query)
            self.assertEqual((status, body["cause"][0]["code"], body["message"]), (400, code, message), query)
        self.assertEqual(len(self.mp.take_violations()), 6)

    def test_refunds_partial_then_whole(self):
        p = self.create()
        status, body = self.call("POST", "/v1/payments/%d/refunds" % p["id"], {}, key="r0")
        self.assertEqual((status, body["cause"][0]["code"]), (400, 3005))
        self.mp.take_violations()
        self.mp.pay(p["id"])
        status, r1 = self.call("POST", "/v1/payments/%d/refunds" % p["id"], {"amount": 2.34}, key="r1")
        self.assertEqual((status, r1["amount"], r1["payment_id"], r1["status"]), (201, 2.34, p["id"], "approved"))
        self.assertEqual(self.call("POST", "/v1/payments/%d/refunds" % p["id"], {"amount": 2.34}, key="r1")[1],
                         r1)
        got = self.mp.payment(p["id"])
        self.assertEqual((got["status"], got["status_detail"], got["transaction_amount_refunded"]),
                         ("approved", "partially_refunded", 2.34))
        status, body = self.call("POST", "/v1/payments/%d/refunds" % p["id"], {"amount": 20}, key="r2")
        self.assertEqual(status, 400)
        status, r2 = self.call("POST", "/v1/payments/%d/refunds" % p["id"], None, key="r3")
        self.assertEqual((status, r2["amount"]), (201, 10))
        got = self.call("GET", "/v1/payments/%d" % p["id"])[1]
        self.assertEqual((got["status"], got["status_detail"]), ("refunded", "refunded"))
        self.assertEqual([r["id"] for r in got["refunds"]], [r1["id"], r2["id"]])
        self.assertEqual(len(self.mp.take_violations()), 1)

    def test_statuses(self):
        a, b, c = self.create(), self.create(), self.create()
        self.assertEqual(self.mp.pay("ch_1")["status"], "approved")   # the latest of ch_1: c
        self.assertEqual(self.mp.payment(c["id"])["status_detail"], "accredited")
        self.assertEqual(self.mp.cancel(a["id"])["status_detail"], "expired")
        self.assertRaises(ValueError, self.mp.pay, a["id"])
        self.mp.pay(b["id"])
        self.assertEqual(self.mp.mediation(b["id"])["status"], "in_mediation")
        self.assertEqual(self.mp.chargeback(b["id"])["status"], "charged_back")
        self.assertEqual(self.mp.refund(c["id"], "2.34")["status_detail"], "partially_refunded")

    def test_down_and_slow(self):
        self.mp.down(mode="503")
        self.assertEqual(self.call("GET", "/v1/payments/search")[0], 503)
        self.mp.up()
        self.assertEqual(self.mp.calls["GET /v1/payments/search"], 1)
        self.mp.slow(0.3)
        t = time.monotonic()
        self.call("GET", "/v1/payments/search")
        self.assertGreaterEqual(time.monotonic() - t, 0.3)


class TestNotifications(Base):
    def setUp(self):
        super().setUp()
        self.rx = Receiver()
        self.mp.webhook_url = self.rx.url("/mp/hook")

    def tearDown(self):
        super().tearDown()
        self.rx.close()

    def test_signed_as_the_sdk_checks(self):
        p = self.create()
        self.mp.pay(p["id"])
        self.mp.wait_deliveries(2)
        (p1, h1, b1), (p2, h2, b2) = sorted(self.rx.got, key=lambda g: json.loads(g[2])["action"])
        self.assertEqual(p1, "/mp/hook?data.id=%d&type=payment" % p["id"])
        body = json.loads(b2)
        self.assertEqual((body["type"], body["action"], body["data"], body["live_mode"], body["api_version"]),
                         ("payment", "payment.updated", {"id": str(p["id"])}, False, "v1"))
        self.assertEqual(json.loads(b1)["action"], "payment.created")
        for headers in (h1, h2):
            self.assertIsNone(sdk_validate(headers["x-signature"], headers["x-request-id"], str(p["id"]),
                                           self.mp.secret))
            self.assertEqual(sdk_validate(headers["x-signature"], headers["x-request-id"], str(p["id"]),
                                          "another secret"), "SignatureMismatch")
        self.assertNotEqual(h1["x-request-id"], h2["x-request-id"])

    def test_bad_none_and_qr(self):
        p = self.create()
        self.mp.wait_settled()
        self.rx.got.clear()
        self.mp.sign = "bad"
        self.mp.notify(p["id"])
        (_, h, _), = self.rx.got
        self.assertEqual(sdk_validate(h["x-signature"], h["x-request-id"], str(p["id"]), self.mp.secret),
                         "SignatureMismatch")
        for mode in ("none", "qr"):
            self.rx.got.clear()
            self.mp.sign = mode
            self.mp.notify(p["id"])
            (_, h, _), = self.rx.got
            self.assertNotIn("x-signature", h)
            self.assertIn("x-request-id", h)

    def test_payment_notification_url_first_and_retries(self):
        other = Receiver(answers=(500, 202, 201))
        try:
            p = self.create(dict(PIX, notification_url=other.url("/own")))
            self.mp.wait_settled()
            self.assertEqual([d.status for d in self.mp.deliveries], [500, 202, 201])
            self.assertEqual(self.rx.got, [])
            self.assertEqual(other.got[0][0], "/own?data.id=%d&type=payment" % p["id"])
        finally:
            other.close()

    def test_faults(self):
        self.mp.auto_notify = False
        p = self.create()
        self.mp.webhook_faults(drop=1.0)
        (d,) = self.mp.notify(p["id"])
        self.assertTrue(d.dropped)
        self.mp.webhook_faults(twice=1.0)
        self.mp.notify(p["id"])
        self.mp.wait_settled()
        self.assertEqual(len(self.rx.got), 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
