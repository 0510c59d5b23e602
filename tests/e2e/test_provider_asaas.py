"""An Asaas connection (docs/providers.md), as a merchant sees it, through the
real binary against the tests' Asaas (testasaas.py: every call checked
against Asaas's documented shapes, asaasapi.py; notifications in the shape
of docs.asaas.com's examples, with the webhook's authToken in
asaas-access-token).

A charge is created at Asaas once however often it is asked for (Asaas has
no idempotency key: the payment is looked for by its externalReference
first); a notification with the right token pays it once, after pixrelay
has read the payment back with the API key; a notification without the
token or with another one, and one with the right token about a payment
this account does not hold, move nothing (401); a notification Asaas never
delivered is recovered by the reconciliation (GET /v3/payments by whole
dates) and marked so; a refund reaches Asaas once and comes back as the
charge's one refund event; the day's report equals Asaas's list.
"""
import datetime
import json
import os
import time
import unittest

import accountdata
from harness import auth
from provcase import CREATE, QUIET, ProviderCase
from testasaas import TestAsaas

SECRET = "asaas-webhook-token-" + "x7" * 10  # 40 characters (Asaas: 32 to 255)


class AsaasConnection(ProviderCase):
    @classmethod
    def setUpClass(cls):
        cls.start()
        cls.server = cls.asa = TestAsaas(retry_seconds=0.2).start()
        cls.token = cls.secret_file("asaas-key.txt", cls.asa.api_key)
        cls.secret = cls.secret_file("asaas-webhook-token.txt", SECRET)
        cls.connect("asaas", "--api-token-file", cls.token, "--webhook-secret-file", cls.secret,
                    "--api-url", cls.asa.url, "--api-ca", cls.asa.server_ca)
        cls.asa.webhook_url = cls.hook_url()
        cls.asa.auth_token = SECRET
        cls.payer = accountdata.cpf()

    def setUp(self):
        super().setUp()
        self.asa.token = "good"
        self.asa.auto_notify = True

    def charge(self, amount, path, external=None, document=True):
        fields = {"name": "Maria Pagadora"}
        if document:
            fields["document"] = self.payer
        return super().charge(amount, path, external, **fields)

    def payment_of(self, charge_id):
        return [p for p in self.asa.payments if p.get("externalReference") == charge_id]

    def post_hook(self, body, token):
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["asaas-access-token"] = token
        return self.px.request("POST", self.hook, raw=json.dumps(body).encode(), headers=headers)

    # ---- tests ----

    def test_connect_keeps_the_provider_and_never_shows_a_secret(self):
        self.assertEqual(self.conn["provider"], "asaas")
        self.assertEqual(self.conn["auth"], "asaas-token")
        self.assertEqual(self.conn["api"]["apiUrl"], self.asa.url)
        self.assertIsNone(self.conn["signatureKeys"])
        for secret in (self.asa.api_key, SECRET):
            self.assertNotIn(secret, self.connect_out)
            self.assertNotIn(secret, self.px.log())
        shown = self.px.cli("bank", "show", self.conn["id"]).stdout
        self.assertIn("Asaas (webhook token)", shown)

    def test_connect_refuses_what_it_cannot_use(self):
        short = os.path.join(self.wd.path, "short-token.txt")
        with open(short, "w") as f:
            f.write("too-short")
        bad = os.path.join(self.wd.path, "bad-key.txt")
        with open(bad, "w") as f:
            f.write("$aact_hmlg_not-the-key")
        base = ["bank", "connect", "--provider", "asaas", "--api-url", self.asa.url,
                "--api-ca", self.asa.server_ca]
        for args, code, msg in [
                (["--env", "production", "--api-token-file", self.token], 2,
                 "pixrelay bank connect: --webhook-secret-file FILE is required in production "
                 "(the token Asaas sends in asaas-access-token)\n"),
                (["--env", "sandbox", "--api-token-file", self.token, "--webhook-secret-file",
                  short], 2,
                 "pixrelay bank connect: --webhook-secret-file %s: must be 32 to 255 printable "
                 "characters without spaces (Asaas's authToken)\n" % short),
                (["--env", "sandbox", "--api-token-file", bad, "--webhook-secret-file",
                  self.secret], 1,
                 "pixrelay bank connect: Asaas refused the API token (HTTP 401); nothing was "
                 "connected (--no-check keeps it untried)\n")]:
            r = self.px.cli(*(base + args), check=False)
            self.assertEqual((r.returncode, r.stderr), (code, msg), args)
        listed = json.loads(self.px.cli("bank", "list", "--env", "sandbox", "--account",
                                        self.account, "--json").stdout)
        self.assertEqual(len(listed["connections"]), 1)

    def test_register_webhook_registers_once_with_the_token(self):
        base = "https://hooks.loja.example/v1"
        url = "%s/webhooks/bank/%s" % (base, self.conn["id"])
        args = ["bank", "register-webhook", self.conn["id"], "--bank-webhook-base-url", base]
        r = self.px.cli(*args, check=False)
        self.assertEqual((r.returncode, r.stderr),
                         (2, "pixrelay bank register-webhook: Asaas asks for the e-mail it warns "
                             "when it pauses the queue: --email ADDRESS\n"))
        r = self.px.cli(*(args + ["--email", "ti@loja.example", "--json"]))
        self.assertEqual(json.loads(r.stdout), {"webhookUrl": url, "registered": 1, "already": 0})
        made = [w for w in self.asa._hooks.records() if w["url"] == url]
        self.assertEqual(len(made), 1)
        self.assertEqual(made[0]["authToken"], SECRET)
        self.assertEqual(made[0]["sendType"], "SEQUENTIALLY")
        self.assertIn("PAYMENT_RECEIVED", made[0]["events"])
        r = self.px.cli(*(args + ["--email", "ti@loja.example"]))
        self.assertEqual(r.stdout, "Registered %s at Asaas: 0 webhook(s) made, 1 there "
                                   "already\n" % url)
        for w in [w for w in self.asa._hooks.records() if w["url"] == url]:
            self.asa._hooks.remove(w)

    def test_a_sandbox_connection_without_a_key_and_trigger(self):
        # a sandbox connection without an API key: pixrelay makes the
        # webhook token (shown once), charges are made here with the key, and
        # trigger sends Asaas's PAYMENT_RECEIVED with that token
        from harness import store_account
        acct, key = store_account(self.redis, self.px, "Loja Sem Chave")
        r = self.px.cli("bank", "connect", "--provider", "asaas", "--env", "sandbox",
                        "--account", acct, "--chave", "pix@semchave.example", "--json")
        conn = json.loads(r.stdout)
        self.assertEqual(len(conn["webhookToken"]), 43)
        self.assertIsNone(conn["api"])
        shown = self.px.cli("bank", "show", conn["id"], "--json").stdout
        self.assertNotIn(conn["webhookToken"], shown)
        r = self.px.cli("trigger", "asaas.paid", "--api-key", key, "--amount", "4321", "--json")
        out = json.loads(r.stdout)
        self.assertEqual((out["connection"], out["outcome"]), (conn["id"], "paid"), out)
        r = self.px.request("GET", "/v1/charge/pix/" + out["charge"], headers=auth(key))
        self.assertEqual((r.json["data"]["status"], r.json["data"]["pix"]["source"]),
                         ("PAID", "webhook"))
        # the same with this (Asaas-keyed) connection: refused, it would be
        # read back at Asaas
        r = self.px.cli("trigger", "asaas.paid", "--api-key", self.key, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("has an API key: its notifications are read back at Asaas", r.stderr)

    def test_a_charge_is_created_at_asaas_once(self):
        ext = "pedido-%d" % time.time_ns()
        ch = self.charge(1990, "/once", external=ext)
        again = self.charge(1990, "/once", external=ext)
        self.assertEqual(again["id"], ch["id"])
        pays = self.payment_of(ch["id"])
        self.assertEqual(len(pays), 1)
        self.assertEqual(pays[0]["billingType"], "PIX")
        self.assertEqual(str(pays[0]["value"]), "19.9")
        # the code the payer scans is Asaas's (its GET .../pixQrCode)
        qr = self.asa._op_pix_qr_code({"id": pays[0]["id"]}, {}, None)[1]
        self.assertEqual(ch["brCode"], qr["payload"])

    def test_a_charge_without_the_payers_document_is_refused(self):
        r = self.px.request("POST", CREATE, headers=auth(self.key), body={"amount": 500})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json["error"],
                         "document: required for a charge made at Asaas (the payer's CPF or "
                         "CNPJ: Asaas makes each charge for a customer)")

    def test_a_notification_with_the_token_pays_once(self):
        path = "/paid-%d" % time.time_ns()
        ch = self.charge(2500, path)
        pay = self.asa.pay(ch["id"])
        ev = self.events(path, 1)[0]
        self.assertEqual(ev["event"], "EVENT:CHARGE_PAID")
        got = self.get_charge(ch["id"])
        self.assertEqual((got["status"], got["pix"]["source"]), ("PAID", "webhook"))
        self.assertEqual(got["pix"]["provider"]["paymentId"], pay["id"])
        self.asa.notify("PAYMENT_RECEIVED", pay["id"])
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 1)

    def test_a_notification_without_the_token_moves_nothing(self):
        path = "/forged-%d" % time.time_ns()
        ch = self.charge(3100, path)
        self.asa.auto_notify = False
        pay = self.asa.pay(ch["id"])
        body = {"id": "evt_forged", "event": "PAYMENT_RECEIVED",
                "dateCreated": "2026-12-02 10:00:00", "payment": {"object": "payment",
                                                                  "id": pay["id"]}}
        for token in (None, "", "another-token-" + "9" * 30):
            r = self.post_hook(body, token)
            self.assertEqual((r.status, r.json["error"]),
                             (401, "not authenticated as Asaas for this connection"), token)
        # the right token, a payment this account does not hold
        body["payment"]["id"] = "pay_notthisaccounts1"
        r = self.post_hook(body, SECRET)
        self.assertEqual((r.status, r.json["error"]),
                         (401, "not authenticated as Asaas for this connection"))
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 0)

    def test_hostile_bodies_are_400_and_store_nothing(self):
        headers = {"Content-Type": "application/json", "asaas-access-token": SECRET}
        for raw, msg in ((b'{"event":["PAYMENT_RECEIVED"]}', "event: must be a string"),
                         (b'{"event":"PAYMENT_RECEIVED","payment":{}}', "payment.id: required"),
                         (b"[]", None), (b"not json", None)):
            r = self.px.request("POST", self.hook, raw=raw, headers=headers)
            self.assertEqual(r.status, 400, (raw, r))
            if msg:
                self.assertEqual(r.json["error"], msg)
        # without the token a worst-case body is refused before it is read
        r = self.px.request("POST", self.hook, raw=b"[" * 100000,
                            headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 401)

    def test_events_that_move_no_money_are_taken(self):
        ch = self.charge(1500, "/overdue-%d" % time.time_ns())
        pay = self.payment_of(ch["id"])[0]
        notes = self.asa.notify("PAYMENT_OVERDUE", pay["id"])
        self.assertEqual([d.status for d in notes], [200])
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")

    def test_a_notification_asaas_never_delivered_is_recovered(self):
        path = "/missed-%d" % time.time_ns()
        ch = self.charge(5150, path)
        self.asa.auto_notify = False
        self.asa.pay(ch["id"])
        self.reconcile_now()
        ev = self.events(path, 1)[0]
        self.assertEqual(ev["event"], "EVENT:CHARGE_PAID")
        got = self.get_charge(ch["id"])
        self.assertEqual((got["status"], got["pix"]["source"]), ("PAID", "reconciliation"))
        self.reconcile_now()
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 1)

    def test_a_refund_reaches_asaas_once_and_comes_back_once(self):
        path = "/refund-%d" % time.time_ns()
        ch = self.charge(2750, path)
        pay = self.asa.pay(ch["id"])
        self.events(path, 1)
        calls = self.asa.calls["POST /v3/payments/{id}/refund"]
        self.asa.auto_notify = False
        r = self.px.request("POST", "/v1/charge/%s/refund" % ch["id"], headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        self.assertEqual(r.json["data"]["refund"]["status"], "EM_PROCESSAMENTO")
        # asked again before Asaas said it: Asaas has no idempotency key,
        # pixrelay reads the payment first and asks nothing twice
        r = self.px.request("POST", "/v1/charge/%s/refund" % ch["id"], headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        self.assertEqual(self.asa.calls["POST /v3/payments/{id}/refund"] - calls, 1)
        self.assertEqual(self.get_charge(ch["id"])["status"], "PAID")
        self.asa.notify("PAYMENT_REFUNDED", pay["id"])
        evs = self.events(path, 2)
        self.assertEqual(evs[1]["event"], "EVENT:CHARGE_REFUND")
        self.assertEqual(self.get_charge(ch["id"])["status"], "REFUNDED")
        self.assertEqual(self.asa.payment(pay["id"])["status"], "REFUNDED")

    def test_the_days_report_equals_asaas_list(self):
        path = "/report-%d" % time.time_ns()
        self.asa.auto_notify = False
        a = self.charge(1111, path)
        b = self.charge(2222, path)
        self.asa.pay(a["id"])
        self.asa.auto_notify = True
        self.asa.pay(b["id"])
        self.events(path, 1)
        self.reconcile_now()
        self.events(path, 2)
        day = (datetime.datetime.now(datetime.timezone.utc)
               - datetime.timedelta(hours=3)).strftime("%Y-%m-%d")
        rep = self.report(day)
        received = [p for p in self.asa.payments
                    if p["status"] in ("RECEIVED", "REFUNDED", "REFUND_IN_PROGRESS")
                    and p.get("paymentDate") == day]
        self.assertEqual(rep["pix"]["received"], len(received), rep)
        self.assertEqual(rep["pix"]["received"], rep["pix"]["byWebhook"] + rep["pix"]["recovered"])
        self.assertGreaterEqual(rep["pix"]["recovered"], 1)


if __name__ == "__main__":
    unittest.main()
