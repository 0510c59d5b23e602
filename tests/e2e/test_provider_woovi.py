"""A Woovi (OpenPix) connection (docs/providers.md), as a merchant sees it,
through the real binary against the tests' Woovi (testwoovi.py: every call
checked against Woovi's published swagger; notifications in the shapes of
its published examples, signed as Woovi signs them: base64 RSA PKCS#1 v1.5
SHA-256 of the raw body in x-webhook-signature, openpix-developers
docs/webhook/seguranca/weebhook-signature-validation.mdx).

A charge is created at Woovi once however often it is asked for; a signed
notification pays it once, after pixrelay has read the payment back with
the connection's own AppID; a forged, unsigned, or validly signed
notification of a payment this account does not hold is 401 and moves
nothing; a notification Woovi never delivered is recovered by the
reconciliation (GET /api/v1/transaction) and marked so; a refund reaches
Woovi and comes back as the charge's one refund event; the day's report
equals Woovi's list.
"""
import datetime
import json
import os
import time
import unittest

from harness import auth
from provcase import QUIET, ProviderCase
from testwoovi import TestWoovi


class WooviConnection(ProviderCase):
    @classmethod
    def setUpClass(cls):
        cls.start()
        cls.server = cls.wv = TestWoovi().start()
        cls.token = cls.secret_file("woovi-appid.txt", cls.wv.app_id)
        cls.connect("woovi", "--api-token-file", cls.token, "--api-url", cls.wv.url,
                    "--api-ca", cls.wv.server_ca)
        cls.wv.webhook_url = cls.hook_url()

    def setUp(self):
        super().setUp()
        self.wv.sign = "good"
        self.wv.auto_notify = True

    def refunds_at_woovi(self, charge_id):
        """The refunds Woovi holds of the charge (its GET .../refund)."""
        return self.wv._op_list_refunds({"id": charge_id}, {}, None)[1]["refunds"]

    # ---- tests ----

    def test_connect_keeps_the_provider_and_never_shows_the_appid(self):
        self.assertEqual(self.conn["provider"], "woovi")
        self.assertEqual(self.conn["auth"], "woovi-rsa")
        self.assertEqual(self.conn["api"]["apiUrl"], self.wv.url)
        # Woovi's published key, and pixrelay's own sandbox key (trigger)
        self.assertEqual(len(self.conn["signatureKeys"]), 2, self.conn)
        self.assertNotIn(self.wv.app_id, self.connect_out)
        self.assertNotIn(self.wv.app_id, self.px.log())
        listed = json.loads(self.px.cli("bank", "list", "--env", "sandbox", "--account",
                                        self.account, "--json").stdout)
        self.assertEqual([c["provider"] for c in listed["connections"]], ["woovi"])

    def test_an_appid_woovi_refuses_connects_nothing(self):
        bad = os.path.join(self.wd.path, "bad-appid.txt")
        with open(bad, "w") as f:
            f.write("not-the-app-id")
        r = self.px.cli("bank", "connect", "--provider", "woovi", "--env", "sandbox",
                        "--account", self.account, "--api-token-file", bad, "--api-url",
                        self.wv.url, "--api-ca", self.wv.server_ca, check=False)
        self.assertEqual(r.returncode, 1, r)
        self.assertIn("Woovi refused the API token (HTTP 401); nothing was connected", r.stderr)
        self.assertNotIn("not-the-app-id", r.stderr)
        listed = json.loads(self.px.cli("bank", "list", "--env", "sandbox", "--account",
                                        self.account, "--json").stdout)
        self.assertEqual(len(listed["connections"]), 1)

    def test_connect_refuses_what_it_cannot_use(self):
        garbage = os.path.join(self.wd.path, "not-a-key.pem")
        with open(garbage, "w") as f:
            f.write("-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n")
        for args, code, msg in [
                (["--provider", "stripe"], 2,
                 "pixrelay bank connect: --provider must be one of api-pix, woovi, asaas, "
                 "mercadopago\n"),
                (["--provider", "woovi", "--env", "production"], 2,
                 "pixrelay bank connect: --api-token-file FILE is required in production "
                 "(the provider's API token: Woovi's AppID, Asaas's API key)\n"),
                (["--provider", "woovi"], 2,
                 "pixrelay bank connect: without --api-token-file (sandbox only) nothing is "
                 "created at the provider: give --chave KEY, the key of the account's QR "
                 "codes\n"),
                (["--provider", "woovi", "--api-token-file", self.token, "--api-url",
                  "http://127.0.0.1:1"], 2,
                 "pixrelay bank connect: --api-url: must be an https:// URL of at most 512 "
                 "bytes\n"),
                (["--provider", "woovi", "--api-token-file", self.token, "--api-url",
                  self.wv.url, "--api-ca", self.wv.server_ca, "--webhook-public-key", garbage],
                 2, "pixrelay bank connect: --webhook-public-key %s: keys: key 1 is not a PEM "
                 "public key\n" % garbage)]:
            env = [] if "--env" in args else ["--env", "sandbox"]
            r = self.px.cli("bank", "connect", *(args + env), check=False)
            self.assertEqual((r.returncode, r.stderr), (code, msg), args)
        listed = json.loads(self.px.cli("bank", "list", "--env", "sandbox", "--json").stdout)
        self.assertEqual(len(listed["connections"]), 1)
        # a bank's OAuth2 credentials are not a provider's token
        r = self.px.cli("bank", "update", self.conn["id"], "--scope", "pix.read", check=False)
        self.assertEqual((r.returncode, r.stderr), (
            2, "pixrelay bank update: %s is a woovi connection: its API token is given at "
               "connect (disconnect it and connect again with the new one; "
               "docs/providers.md)\n" % self.conn["id"]))

    def test_register_webhook_registers_each_event_once(self):
        base = "https://hooks.loja.example/v1"
        url = "%s/webhooks/bank/%s" % (base, self.conn["id"])
        r = self.px.cli("bank", "register-webhook", self.conn["id"], "--json",
                        "--bank-webhook-base-url", base)
        self.assertEqual(json.loads(r.stdout), {"webhookUrl": url, "registered": 3, "already": 0})
        hooks = sorted(w["event"] for w in self.wv._webhooks.values() if w["url"] == url)
        self.assertEqual(hooks, ["OPENPIX:CHARGE_COMPLETED", "OPENPIX:TRANSACTION_RECEIVED",
                                 "OPENPIX:TRANSACTION_REFUND_RECEIVED"])
        r = self.px.cli("bank", "register-webhook", self.conn["id"], "--bank-webhook-base-url",
                        base)
        self.assertEqual(r.stdout, "Registered %s at Woovi: 0 webhook(s) made, 3 there "
                                   "already\n" % url)
        self.assertEqual(len([w for w in self.wv._webhooks.values() if w["url"] == url]), 3)
        for w in list(self.wv._webhooks):
            del self.wv._webhooks[w]

    def test_trigger_signs_with_pixrelays_own_sandbox_key(self):
        r = self.px.cli("trigger", "woovi.paid", "--api-key", self.key, "--amount", "1234",
                        "--json")
        out = json.loads(r.stdout)
        self.assertEqual((out["connection"], out["outcome"]), (self.conn["id"], "paid"), out)
        # the charge was made at Woovi (the account's charging connection);
        # the notification, signed by pixrelay's own key, was taken from its body
        self.assertEqual(self.wv.charge(out["charge"])["value"], 1234)
        got = self.get_charge(out["charge"])
        self.assertEqual((got["status"], got["pix"]["source"]), ("PAID", "webhook"))

    def test_a_charge_is_created_at_woovi_once(self):
        ext = "pedido-%d" % time.time_ns()
        calls = self.wv.calls["POST /api/v1/charge"]
        ch = self.charge(1990, "/once", external=ext)
        again = self.charge(1990, "/once", external=ext)
        self.assertEqual(again["id"], ch["id"])
        at = self.wv.charge(ch["id"])
        self.assertEqual(at["correlationID"], ch["id"])
        self.assertEqual(at["value"], 1990)
        # the code the payer scans is Woovi's
        self.assertEqual(ch["brCode"], at["brCode"])
        # one charge at Woovi: pixrelay asked once (the second answer was its own)
        self.assertEqual(self.wv.calls["POST /api/v1/charge"] - calls, 1)

    def test_a_signed_notification_pays_once(self):
        path = "/paid-%d" % time.time_ns()
        ch = self.charge(2500, path)
        tx = self.wv.pay(ch["id"])  # CHARGE_COMPLETED and TRANSACTION_RECEIVED, signed
        ev = self.events(path, 1)[0]
        self.assertEqual(ev["event"], "EVENT:CHARGE_PAID")
        got = self.get_charge(ch["id"])
        self.assertEqual(got["status"], "PAID")
        self.assertEqual(got["pix"]["source"], "webhook")
        self.assertEqual(got["pix"]["endToEndId"], tx["endToEndId"])
        self.assertEqual(got["pix"]["provider"]["transactionID"], tx["transactionID"])
        # Woovi sends it again: nothing more
        notes = self.wv.notify("OPENPIX:CHARGE_COMPLETED", charge=ch["id"])
        self.assertEqual([n.status for n in notes], [200])
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 1)

    def test_forged_and_unsigned_notifications_move_nothing(self):
        path = "/forged-%d" % time.time_ns()
        ch = self.charge(3100, path)
        self.wv.auto_notify = False
        self.wv.pay(ch["id"])
        for sign in ("none", "bad", "other-key"):
            self.wv.sign = sign
            notes = self.wv.notify("OPENPIX:CHARGE_COMPLETED", charge=ch["id"])
            self.assertEqual(notes[0].status, 401, (sign, notes))
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 0)

    def test_hostile_bodies_are_400_or_401_and_store_nothing(self):
        # signed as Woovi signs, but not its notification: 400, the field named
        for raw, msg in ((b"not json", None), (b"[1,2]", None),
                         (b'{"event":7}', "event: must be a string"),
                         (b'{"event":"OPENPIX:CHARGE_COMPLETED","pix":{}}',
                          "pix.transactionID: required")):
            notes = self.wv.send_raw(raw, event="custom")
            self.assertEqual(notes[0].status, 400, (raw, notes[0].answer))
            if msg:
                self.assertEqual(json.loads(notes[0].answer)["error"], msg)
        # a body of 1 MiB signed by no key Woovi publishes: 401 before it is read
        self.wv.sign = "other-key"
        notes = self.wv.send_raw(b'{"event":"' + b"x" * (1 << 20) + b'"}', event="custom")
        self.assertIn(notes[0].status, (401, 413), notes[0].answer)

    def test_a_signed_notification_of_another_account_moves_nothing(self):
        # Woovi signs every merchant's notifications with one key: a
        # notification of a payment this AppID does not see is refused
        path = "/other-%d" % time.time_ns()
        ch = self.charge(4200, path)
        self.wv.auto_notify = False
        tx = self.wv.pay(ch["id"])
        body = self.wv.notification_body("OPENPIX:CHARGE_COMPLETED", charge=ch["id"])
        body["pix"]["transactionID"] = "f" * 32
        notes = self.wv.send_raw(json.dumps(body).encode(), event="OPENPIX:CHARGE_COMPLETED")
        self.assertEqual(notes[0].status, 401)
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 0)
        self.assertTrue(tx["transactionID"])

    def test_a_notification_woovi_never_delivered_is_recovered(self):
        path = "/missed-%d" % time.time_ns()
        ch = self.charge(5150, path)
        self.wv.auto_notify = False
        tx = self.wv.pay(ch["id"])
        self.reconcile_now()
        ev = self.events(path, 1)[0]
        self.assertEqual(ev["event"], "EVENT:CHARGE_PAID")
        got = self.get_charge(ch["id"])
        self.assertEqual((got["status"], got["pix"]["source"]), ("PAID", "reconciliation"))
        self.assertEqual(got["pix"]["endToEndId"], tx["endToEndId"])
        # the notification after all: a duplicate
        self.wv.auto_notify = True
        notes = self.wv.notify("OPENPIX:CHARGE_COMPLETED", charge=ch["id"])
        self.assertEqual(notes[0].status, 200)
        self.reconcile_now()
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 1)

    def test_a_refund_reaches_woovi_and_comes_back_once(self):
        path = "/refund-%d" % time.time_ns()
        ch = self.charge(2750, path)
        self.wv.pay(ch["id"])
        self.events(path, 1)
        r = self.px.request("POST", "/v1/charge/%s/refund" % ch["id"], headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        refund = r.json["data"]["refund"]
        self.assertEqual(refund["id"], "D" + ch["id"])
        at = self.refunds_at_woovi(ch["id"])
        self.assertEqual([(f["correlationID"], f["value"]) for f in at],
                         [("D" + ch["id"], 2750)])
        # asked again: Woovi keeps one refund (its correlationID)
        r = self.px.request("POST", "/v1/charge/%s/refund" % ch["id"], headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        self.assertEqual(len(self.refunds_at_woovi(ch["id"])), 1)
        self.assertEqual(self.get_charge(ch["id"])["status"], "PAID")
        self.wv.confirm_refund("D" + ch["id"])  # TRANSACTION_REFUND_RECEIVED, signed
        evs = self.events(path, 2)
        self.assertEqual(evs[1]["event"], "EVENT:CHARGE_REFUND")
        self.assertEqual(self.get_charge(ch["id"])["status"], "REFUNDED")
        self.reconcile_now()
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 2)

    def test_a_dispute_is_the_pix_med_refund(self):
        path = "/dispute-%d" % time.time_ns()
        ch = self.charge(4400, path)
        tx = self.wv.pay(ch["id"])
        self.events(path, 1)

        def dispute(status):
            # docs/webhook/examples/dispute-payload.mdx's shape, signed
            body = {"event": "OPENPIX:DISPUTE_" + ("CREATED" if status == "OPENED" else status),
                    "dispute": {"status": status, "endToEndId": tx["endToEndId"],
                                "name": "Seu jorge", "email": "test@email.com.br",
                                "phoneNumber": "+5519989673846", "value": 4400,
                                "disputeReason": "Golpe"}}
            notes = self.wv.send_raw(json.dumps(body).encode(), event=body["event"])
            self.assertEqual(notes[0].status, 200, notes)

        dispute("OPENED")
        ev = self.events(path, 2)[1]
        self.assertEqual((ev["event"], ev["data"]["status"], ev["data"]["nature"]),
                         ("EVENT:PIX_MED_REFUND", "EM_PROCESSAMENTO", "MED_CONTESTACAO"))
        self.assertEqual(self.get_charge(ch["id"])["status"], "PAID")
        dispute("OPENED")  # again: nothing new
        dispute("ACCEPTED")
        evs = self.events(path, 4)
        self.assertEqual([(e["event"], e["data"].get("status")) for e in evs[2:]],
                         [("EVENT:PIX_MED_REFUND", "DEVOLVIDO"), ("EVENT:CHARGE_REFUND", "REFUNDED")])
        self.assertEqual(self.get_charge(ch["id"])["status"], "REFUNDED")
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), 4)
        # a dispute of a Pix this AppID does not see: refused
        body = {"event": "OPENPIX:DISPUTE_CREATED",
                "dispute": {"status": "OPENED", "endToEndId": "E" + "1" * 31, "value": 100}}
        self.assertEqual(self.wv.send_raw(json.dumps(body).encode(),
                                          event=body["event"])[0].status, 401)

    def test_the_days_report_equals_woovis_list(self):
        path = "/report-%d" % time.time_ns()
        self.wv.auto_notify = False
        a = self.charge(1111, path)
        b = self.charge(2222, path)
        missed = self.wv.pay(a["id"])
        self.wv.auto_notify = True
        self.wv.pay(b["id"])
        self.events(path, 1)
        self.reconcile_now()
        self.events(path, 2)
        day = brasilia_day(time.time())
        rep = self.report(day)
        payments = [t for t in self.wv.transactions if t["type"] == "PAYMENT"
                    and brasilia_day(parse_utc(t["time"])) == day]
        self.assertEqual(rep["pix"]["received"], len(payments), rep)
        self.assertEqual(rep["cents"]["received"], sum(t["value"] for t in payments), rep)
        self.assertEqual(rep["pix"]["received"], rep["pix"]["byWebhook"] + rep["pix"]["recovered"])
        self.assertIn("wv:" + missed["transactionID"], rep["recoveredEndToEndIds"])


def parse_utc(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def brasilia_day(ts):
    return time.strftime("%Y-%m-%d", time.gmtime(ts - 3 * 3600))


if __name__ == "__main__":
    unittest.main()
