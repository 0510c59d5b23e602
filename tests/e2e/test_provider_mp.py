"""A Mercado Pago connection (docs/providers.md), as a merchant sees it,
through the real binary against the tests' Mercado Pago (testmp.py: every
request checked against the SDK's published types, vendored in
tests/vendor/mercadopago; notifications POSTed to the webhook URL with
?data.id=&type=payment and signed in x-signature as the SDK's validator
rebuilds it: HMAC-SHA256 of "id:<data.id>;request-id:<x-request-id>;ts:<ts>;"
with the secret key, src/utils/webhook/index.ts).

A charge is created at Mercado Pago once however often it is asked for
(X-Idempotency-Key); a notification moves nothing until pixrelay has read
the payment back with the access token, so a valid one pays once, and an
unsigned or wrongly signed one (with a secret configured), or a validly
signed one of another account's payment, moves nothing; without a secret
(QR-code integrations: unsigned) the read-back is the guard; a
notification never delivered is recovered by the reconciliation (GET
/v1/payments/search); a refund reaches Mercado Pago once; the day's report
equals its list.
"""
import datetime
import http.client
import json
import ssl
import time
import unittest
import urllib.parse

from harness import auth
from provcase import CREATE, QUIET, ProviderCase
from testmp import TestMP


class MercadoPagoConnection(ProviderCase):
    @classmethod
    def setUpClass(cls):
        cls.start()
        cls.server = cls.mp = TestMP(retry_factor=0.0001).start()
        cls.token = cls.secret_file("mp-token.txt", cls.mp.access_token)
        cls.secret = cls.secret_file("mp-secret.txt", cls.mp.secret)
        cls.connect("mercadopago", "--api-token-file", cls.token, "--webhook-secret-file",
                    cls.secret, "--api-url", cls.mp.url, "--api-ca", cls.mp.server_ca)
        cls.mp.webhook_url = cls.hook_url()

    def setUp(self):
        super().setUp()
        self.mp.sign = "good"
        self.mp.auto_notify = True

    def charge(self, amount, path, external=None):
        return super().charge(amount, path, external, email="maria@pagadora.example")

    def payment_of(self, charge_id):
        return [p for p in self.mp.payments if p.get("external_reference") == charge_id]

    def foreign_payment(self):
        """The id of a payment another Mercado Pago account made (through
        the tests' Mercado Pago's own API, with that account's token)."""
        token = self.mp.add_account()
        u = urllib.parse.urlsplit(self.mp.url)
        conn = http.client.HTTPSConnection(
            u.hostname, u.port, context=ssl.create_default_context(cafile=self.mp.server_ca))
        conn.request("POST", "/v1/payments", body=json.dumps({
            "transaction_amount": 31, "description": "outra loja", "payment_method_id": "pix",
            "payer": {"email": "x@outra.example"}, "external_reference": "outra-1"}),
            headers={"Authorization": "Bearer " + token, "X-Idempotency-Key": "outra-1",
                     "Content-Type": "application/json"})
        r = conn.getresponse()
        pay = json.loads(r.read())
        conn.close()
        self.assertEqual(r.status, 201, pay)
        self.mp.pay(pay["id"])
        return str(pay["id"])

    # ---- tests ----

    def test_connect_keeps_the_provider_and_never_shows_a_secret(self):
        self.assertEqual(self.conn["provider"], "mercadopago")
        self.assertEqual(self.conn["auth"], "mp-signature")
        self.assertEqual(self.conn["api"]["apiUrl"], self.mp.url)
        for secret in (self.mp.access_token, self.mp.secret):
            self.assertNotIn(secret, self.connect_out)
            self.assertNotIn(secret, self.px.log())
        r = self.px.cli("bank", "connect", "--provider", "mercadopago", "--env", "sandbox",
                        "--account", self.account, check=False)
        self.assertEqual((r.returncode, r.stderr), (
            2, "pixrelay bank connect: --api-token-file FILE is required: Mercado Pago's "
               "notification is only a pointer, read back with the access token\n"))
        r = self.px.cli("bank", "register-webhook", self.conn["id"],
                        "--bank-webhook-base-url", "https://hooks.loja.example/v1", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("Mercado Pago has no API for webhooks: paste", r.stderr)

    def test_a_charge_is_created_at_mercado_pago_once(self):
        ext = "pedido-%d" % time.time_ns()
        ch = self.charge(1990, "/once", external=ext)
        again = self.charge(1990, "/once", external=ext)
        self.assertEqual(again["id"], ch["id"])
        pays = self.payment_of(ch["id"])
        self.assertEqual(len(pays), 1)
        self.assertEqual(pays[0]["payment_method_id"], "pix")
        self.assertEqual(
            ch["brCode"], pays[0]["point_of_interaction"]["transaction_data"]["qr_code"])
        r = self.px.request("POST", CREATE, headers=auth(self.key), body={"amount": 500})
        self.assertEqual((r.status, r.json["error"]), (
            400, "email: required for a charge made at Mercado Pago (its payer's e-mail)"))

    def test_a_signed_notification_pays_once(self):
        path = "/paid-%d" % time.time_ns()
        ch = self.charge(2500, path)
        pay = self.payment_of(ch["id"])[0]
        self.mp.pay(pay["id"])
        ev = self.events(path, 1)[0]
        self.assertEqual(ev["event"], "EVENT:CHARGE_PAID")
        got = self.get_charge(ch["id"])
        self.assertEqual((got["status"], got["pix"]["source"]), ("PAID", "webhook"))
        self.assertEqual(str(got["pix"]["provider"]["paymentId"]), str(pay["id"]))
        self.mp.notify(pay["id"])
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 1)

    def test_unsigned_forged_and_other_accounts_notifications_move_nothing(self):
        path = "/forged-%d" % time.time_ns()
        # no notification of its own (payment.created would be read back
        # after the payment, and pay it: the read-back is the truth)
        self.mp.auto_notify = False
        ch = self.charge(3100, path)
        pay = self.payment_of(ch["id"])[0]
        self.mp.pay(pay["id"])
        # no retry within the test: Mercado Pago's next try is 15 minutes on
        self.mp.retry_factor = 1.0
        self.addCleanup(setattr, self.mp, "retry_factor", 0.0001)
        for sign in ("none", "bad", "qr"):
            self.mp.sign = sign
            notes = self.mp.notify(pay["id"])
            self.assertEqual(notes[0].status, 401, (sign, notes))
        # validly signed (the secret is this application's), of a payment
        # another account holds: read back with this token, it is not there
        self.mp.sign = "good"
        foreign = self.foreign_payment()
        body = json.dumps({"id": 1, "live_mode": False, "type": "payment",
                           "action": "payment.updated", "data": {"id": foreign}}).encode()
        notes = self.mp.send_raw(body, foreign)
        self.assertEqual(notes[0].status, 401)
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 0)

    def test_hostile_bodies_are_400_and_store_nothing(self):
        # signed (the signature covers data.id, not the body): the body
        # judged, the field named
        for raw, msg in ((b"not json", None), (b"[]", None),
                         (b'{"type":"payment","data":{}}', "data.id: required (the payment's id)")):
            notes = self.mp.send_raw(raw, "" if msg else "1")
            self.assertEqual(notes[0].status, 400, (raw, notes[0].answer))
            if msg:
                self.assertEqual(json.loads(notes[0].answer)["error"], msg)

    def test_a_notification_never_delivered_is_recovered(self):
        path = "/missed-%d" % time.time_ns()
        self.mp.auto_notify = False
        ch = self.charge(5150, path)
        pay = self.payment_of(ch["id"])[0]
        self.mp.pay(pay["id"])
        self.reconcile_now()
        ev = self.events(path, 1)[0]
        self.assertEqual(ev["event"], "EVENT:CHARGE_PAID")
        got = self.get_charge(ch["id"])
        self.assertEqual((got["status"], got["pix"]["source"]), ("PAID", "reconciliation"))
        self.reconcile_now()
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 1)

    def test_a_refund_reaches_mercado_pago_once_and_comes_back_once(self):
        path = "/refund-%d" % time.time_ns()
        ch = self.charge(2750, path)
        pay = self.payment_of(ch["id"])[0]
        self.mp.pay(pay["id"])
        self.events(path, 1)
        self.mp.auto_notify = False
        for _ in range(2):
            r = self.px.request("POST", "/v1/charge/%s/refund" % ch["id"],
                                headers=auth(self.key))
            self.assertEqual(r.status, 202, r)
        # the same X-Idempotency-Key: one refund at Mercado Pago
        self.assertEqual(len(self.mp.payment(pay["id"])["refunds"]), 1)
        self.assertEqual(self.mp.payment(pay["id"])["status"], "refunded")
        self.mp.auto_notify = True
        self.mp.notify(pay["id"])
        evs = self.events(path, 2)
        self.assertEqual(evs[1]["event"], "EVENT:CHARGE_REFUND")
        self.assertEqual(self.get_charge(ch["id"])["status"], "REFUNDED")

    def test_a_chargeback_is_the_pix_dispute_med_refund(self):
        path = "/chargeback-%d" % time.time_ns()
        ch = self.charge(3300, path)
        pay = self.payment_of(ch["id"])[0]
        self.mp.pay(pay["id"])
        self.events(path, 1)
        # in mediation: the dispute opened, in process; the charge stays PAID
        self.mp.mediation(pay["id"])
        ev = self.events(path, 2)[1]
        self.assertEqual((ev["event"], ev["data"]["status"], ev["data"]["nature"]),
                         ("EVENT:PIX_MED_REFUND", "EM_PROCESSAMENTO", "MED_CONTESTACAO"))
        self.assertEqual(self.get_charge(ch["id"])["status"], "PAID")
        # charged back (settled): the money taken back, the charge REFUNDED
        self.mp.chargeback(pay["id"])
        evs = self.events(path, 4)
        self.assertEqual([(e["event"], e["data"].get("status")) for e in evs[2:]],
                         [("EVENT:PIX_MED_REFUND", "DEVOLVIDO"), ("EVENT:CHARGE_REFUND", "REFUNDED")])
        self.assertEqual(self.get_charge(ch["id"])["status"], "REFUNDED")
        # Mercado Pago says it again: nothing more
        self.mp.notify(pay["id"])
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 4)

    def test_the_days_report_equals_mercado_pagos_list(self):
        path = "/report-%d" % time.time_ns()
        self.mp.auto_notify = False
        a = self.charge(1111, path)
        b = self.charge(2222, path)
        self.mp.pay(self.payment_of(a["id"])[0]["id"])
        self.mp.auto_notify = True
        self.mp.pay(self.payment_of(b["id"])[0]["id"])
        self.events(path, 1)
        self.reconcile_now()
        self.events(path, 2)
        day = (datetime.datetime.now(datetime.timezone.utc)
               - datetime.timedelta(hours=3)).strftime("%Y-%m-%d")
        rep = self.report(day)
        # this account's Pix that were received (a chargeback or a mediation
        # came after the money did)
        received = [p for p in self.mp.payments if p["collector_id"] == self.mp.collector_id
                    and p["status"] in ("approved", "refunded", "charged_back", "in_mediation")]
        self.assertEqual(rep["pix"]["received"], len(received), rep)
        self.assertEqual(rep["pix"]["received"], rep["pix"]["byWebhook"] + rep["pix"]["recovered"])
        self.assertGreaterEqual(rep["pix"]["recovered"], 1)


class MercadoPagoWithoutSecret(ProviderCase):
    """A QR-code integration: no secret key, unsigned notifications; the
    payment read back with the access token is the only guard."""

    @classmethod
    def setUpClass(cls):
        cls.start(args=())
        cls.server = cls.mp = TestMP(retry_factor=0.0001).start()
        cls.token = cls.secret_file("mp-token.txt", cls.mp.access_token)
        cls.connect("mercadopago", "--api-token-file", cls.token, "--api-url", cls.mp.url,
                    "--api-ca", cls.mp.server_ca)
        cls.mp.webhook_url = cls.hook_url()

    def test_unsigned_notifications_pay_once_read_back(self):
        self.assertEqual(self.conn["auth"], "mp-fetch")
        self.mp.sign = "qr"
        path = "/qr-%d" % time.time_ns()
        cid = self.charge(990, path, email="joao@pagador.example")["id"]
        pay = [p for p in self.mp.payments if p.get("external_reference") == cid][0]
        self.mp.pay(pay["id"])
        self.sink.wait_count(1, path=path, timeout=15)
        # a made-up pointer: nothing to read back, nothing moves
        body = json.dumps({"id": 2, "live_mode": False, "type": "payment",
                           "action": "payment.updated", "data": {"id": "123456789"}}).encode()
        self.assertEqual(self.mp.send_raw(body, "123456789")[0].status, 401)
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 1)


if __name__ == "__main__":
    unittest.main()
