"""The reconciliation of a bank connection (docs/banks.md, "Reconciliation"),
as a merchant sees it. A bank's webhook promises no delivery: here the test
bank (testbank.py, every call checked against the Central Bank's API Pix)
settles Pix and refunds and tells nobody, and pixrelay, asking the bank's
GET /pix every second, pays the charges, reports the Pix that named none,
settles the refunds it asked for, and sends each event once, whether the
webhook also came, came first, or never came; while the bank is down it
says so and catches up after.
"""
import json
import os
import re
import time
import unittest
import urllib.parse

import bcb
import certs
from harness import Pixrelay, auth, free_port, init_platforms, start_stack, stop_stack, wait_for
from sse import verify
from testbank import TestBank

CREATE = "/v1/charge/pix/create"
CONNECTIONS = "/v1/bank/connections"
QUIET = 1.0  # after a reconciliation: nothing more comes


def metric(text, name, **labels):
    want = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
    for line in text.splitlines():
        m = re.match(r"^%s(?:\{(.*)\})? (\S+)$" % re.escape(name), line)
        if m and ",".join(sorted((m.group(1) or "").split(","))) == want:
            return float(m.group(2))
    return None


class Reconciliation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = None
        start_stack(cls, sink=True, port=free_port(),
                    args=["--bank-reconcile-interval", "5", "--bank-timeout-ms", "2000"])
        cls.certdir = os.path.join(cls.wd.path, "certs")
        os.makedirs(cls.certdir)
        merchant_ca = certs.make_ca(cls.certdir, "merchant-ca", "Loja Client CA")
        cls.merchant = certs.make_client(cls.certdir, merchant_ca, "loja", "loja.example")
        cls.bank = TestBank(client_ca=merchant_ca.cert,
                            keys=["pagamentos@loja.example", "outra@loja.example"]).start()
        init = init_platforms(cls.px)
        cls.account = init["sandbox"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.px.cli("account", "set", "--env", "sandbox", "--postback-url",
                   cls.sink.url("/account"))
        cls.signing = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)[
            "signingSecret"]
        secret = os.path.join(cls.certdir, "secret.txt")
        with open(secret, "w") as f:
            f.write(cls.bank.client_secret)
        os.chmod(secret, 0o600)
        r = cls.px.cli("bank", "connect", "--env", "sandbox", "--chave", cls.bank.key,
                       "--url-token", "--api-url", cls.bank.url, "--token-url",
                       cls.bank.token_url, "--client-id", cls.bank.client_id,
                       "--client-secret-file", secret, "--cert", cls.merchant.cert,
                       "--key", cls.merchant.key, "--bank-ca", cls.bank.server_ca, "--json")
        cls.conn = json.loads(r.stdout)
        # what connect prints holds the credentials it kept (never a secret)
        assert cls.conn["api"]["apiUrl"] == cls.bank.url, cls.conn
        assert cls.bank.client_secret not in r.stdout
        # the running server finds the credentials key the CLI just made
        wait_for(lambda: "loaded: bank connections' API calls are on" in cls.px.log(),
                 what="the credentials key taken by the server")
        u = urllib.parse.urlsplit(cls.conn["webhookUrl"] + "/pix")
        cls.hook = u.path + "?" + u.query

    @classmethod
    def tearDownClass(cls):
        code = cls.px.stop()
        log = cls.px.log()
        cls.bank.close()
        stop_stack(cls)
        if code != 0 or "Sanitizer" in log:
            raise AssertionError("pixrelay exited %s:\n%s" % (code, log[-3000:]))

    def setUp(self):
        self.bank.take_violations()

    def tearDown(self):
        self.assertEqual(self.bank.take_violations(), [])

    # ---- helpers ----

    def charge(self, amount, path):
        r = self.px.request("POST", CREATE, headers=auth(self.key),
                            body={"amount": amount, "postbackUrl": self.sink.url(path)})
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def get_charge(self, cid):
        r = self.px.request("GET", "/v1/charge/pix/" + cid, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def connection(self):
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, self.conn["id"]), headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def events(self, path, n):
        reqs = self.sink.wait_count(n, path=path, timeout=15)
        for q in reqs:
            self.assertTrue(verify(self.signing, {k.lower(): v for k, v in q.header_list}, q.body))
        return [q.json for q in reqs]

    def reconcile_now(self):
        """Make the next reconciliation due now; return once it asked the bank
        and recorded its success."""
        before = self.connection()["api"]["reconciliation"]["lastSuccessAt"]
        calls = self.bank.calls["GET /pix"]
        r = self.px.request("POST", "%s/%s/reconcile" % (CONNECTIONS, self.conn["id"]),
                            headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        wait_for(lambda: self.bank.calls["GET /pix"] > calls
                 and self.connection()["api"]["reconciliation"]["lastSuccessAt"] != before,
                 timeout=15, what="a reconciliation")

    def quiet(self, path, n):
        """Exactly n events reached path, and a reconciliation more adds none."""
        self.reconcile_now()
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), n, self.sink.requests(path))

    def webhook(self, *e2es):
        body = {"pix": [self.bank.pix(e) for e in e2es]}
        bcb.validate_webhook_body(body)
        r = self.px.request("POST", self.hook, body=body)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def log_entry(self, e2e):
        r = self.px.request("GET", "%s/%s/notifications?limit=1000" % (CONNECTIONS, self.conn["id"]),
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return [n for n in r.json["data"]["notifications"] if n.get("endToEndId") == e2e]

    # ---- tests ----

    def test_a_pix_the_webhook_never_brought_pays_its_charge(self):
        path = "/missed-%d" % time.time_ns()
        ch = self.charge(1234, path)
        pix = self.bank.pay(ch["id"])  # settled at the bank; no webhook
        self.reconcile_now()
        ev = self.events(path, 1)[0]
        self.assertEqual(ev["event"], "EVENT:CHARGE_PAID")
        self.assertEqual(ev["data"]["id"], ch["id"])
        got = self.get_charge(ch["id"])
        self.assertEqual(got["status"], "PAID")
        self.assertEqual(got["pix"]["endToEndId"], pix["endToEndId"])
        self.assertEqual(got["pix"]["source"], "reconciliation")
        entries = self.log_entry(pix["endToEndId"])
        self.assertEqual([(e["source"], e["outcome"]) for e in entries],
                         [("reconciliation", "paid")])
        api = self.connection()["api"]
        rec = api["reconciliation"]
        self.assertGreaterEqual(rec["newTotal"], 1)
        # what the processes saw of the bank's API, kept with the connection
        self.assertIsNotNone(api["health"]["lastTokenAt"])
        self.assertIsNotNone(api["health"]["lastCallAt"])
        shown = self.px.cli("bank", "show", self.conn["id"], "--env", "sandbox").stdout
        self.assertRegex(shown, r"API health   last token 20\d\d-[^,]+, last call 20\d\d-")
        self.assertRegex(shown, r"reconciled   until 20\d\d-.* Pix recovered in all")
        self.assertEqual(rec["failures"], 0)
        self.assertIsNotNone(rec["lastSuccessAt"])
        # a webhook that comes after all is a duplicate: no second event
        data = self.webhook(pix["endToEndId"])
        self.assertEqual(data["pix"][0]["outcome"], "duplicate")
        self.quiet(path, 1)

    def test_a_pix_the_webhook_brought_is_not_taken_twice(self):
        path = "/heard-%d" % time.time_ns()
        ch = self.charge(990, path)
        pix = self.bank.pay(ch["id"])
        data = self.webhook(pix["endToEndId"])
        self.assertIn(data["pix"][0]["outcome"], ("paid", "duplicate"))
        self.events(path, 1)
        self.reconcile_now()
        self.quiet(path, 1)
        self.assertEqual(self.get_charge(ch["id"])["pix"]["source"], "webhook")

    def test_a_pix_without_txid_is_reported_and_another_keys_pix_is_left(self):
        mine = self.bank.pay_key("7.50")
        other = self.bank.pay_key("8.25", chave="outra@loja.example")
        self.reconcile_now()

        def reported():
            return [q.json for q in self.sink.requests("/account")
                    if q.json["data"].get("pix", {}).get("endToEndId") == mine["endToEndId"]]
        evs = wait_for(reported, timeout=15, what="the Pix without txid reported")
        self.assertEqual(len(evs), 1)
        self.assertEqual(self.log_entry(mine["endToEndId"])[0]["reason"], "no_txid")
        self.reconcile_now()
        self.assertEqual(self.log_entry(other["endToEndId"]), [])
        self.assertEqual(len(reported()), 1)

    def test_the_bank_down_is_said_and_caught_up_after(self):
        path = "/down-%d" % time.time_ns()
        ch = self.charge(4321, path)
        pix = self.bank.pay(ch["id"])
        self.bank.down(mode="503")
        try:
            r = self.px.request("POST", "%s/%s/reconcile" % (CONNECTIONS, self.conn["id"]),
                                headers=auth(self.key))
            self.assertEqual(r.status, 202, r)
            rec = wait_for(lambda: self.connection()["api"]["reconciliation"]["failures"] >= 1
                           and self.connection()["api"]["reconciliation"], timeout=15,
                           what="a failed reconciliation")
            self.assertIn("GET /pix", rec["lastError"])
            health = wait_for(lambda: self.connection()["api"]["health"]["lastError"]
                              and self.connection()["api"]["health"], timeout=5,
                              what="the API's error kept")
            self.assertRegex(health["lastError"], r"^bank: GET /pix\?inicio=.*: HTTP 503")
            self.assertIsNotNone(rec["lastErrorAt"])
            self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")
            r = self.px.request("GET", "/metrics")
            self.assertGreaterEqual(metric(r.body.decode(), "pixrelay_bank_reconciliations_total",
                                           result="failed") or 0, 1)
        finally:
            self.bank.up()
        self.reconcile_now()
        ev = self.events(path, 1)[0]
        self.assertEqual(ev["data"]["id"], ch["id"])
        self.assertEqual(self.get_charge(ch["id"])["pix"]["endToEndId"], pix["endToEndId"])
        rec = self.connection()["api"]["reconciliation"]
        self.assertEqual((rec["failures"], rec["lastError"]), (0, None))

    def test_a_refund_settled_at_the_bank_without_a_webhook(self):
        path = "/refund-%d" % time.time_ns()
        ch = self.charge(2500, path)
        pix = self.bank.pay(ch["id"])
        self.webhook(pix["endToEndId"])
        self.events(path, 1)
        r = self.px.request("POST", "/v1/charge/%s/refund" % ch["id"], headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        refund = r.json["data"]["refund"]
        self.assertEqual(refund["status"], "EM_PROCESSAMENTO")
        self.reconcile_now()
        # the reconciliation lists the Pix with its refund in process: news,
        # once, and the charge stays PAID
        ev = self.events(path, 2)[1]
        self.assertEqual((ev["event"], ev["data"]["status"], ev["data"]["source"]),
                         ("EVENT:PIX_REFUND", "EM_PROCESSAMENTO", "reconciliation"))
        self.quiet(path, 2)
        self.assertEqual(self.get_charge(ch["id"])["status"], "PAID")
        self.bank.settle_refund(pix["endToEndId"], refund["id"])  # no webhook
        self.reconcile_now()
        ev = self.events(path, 3)[2]
        self.assertEqual(ev["event"], "EVENT:CHARGE_REFUND")
        self.assertEqual(self.get_charge(ch["id"])["status"], "REFUNDED")
        self.quiet(path, 3)

    def test_reconcile_now_and_its_refusals(self):
        r = self.px.request("POST", "%s/%s/reconcile" % (CONNECTIONS, self.conn["id"]),
                            headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        self.assertEqual(r.json["data"], {"id": self.conn["id"], "reconciliation": "scheduled"})
        r = self.px.request("POST", CONNECTIONS, headers=auth(self.key),
                            body={"pixKey": "semapi@loja.example", "auth": "url-token"})
        self.assertEqual(r.status, 200, r)
        plain = r.json["data"]["id"]
        try:
            r = self.px.request("POST", "%s/%s/reconcile" % (CONNECTIONS, plain),
                                headers=auth(self.key))
            self.assertEqual(r.status, 409, r)
            self.assertIn("has no API credentials", r.json["error"])
        finally:
            self.px.request("POST", "%s/%s/disconnect" % (CONNECTIONS, plain),
                            headers=auth(self.key))
        r = self.px.request("POST", "%s/bnk_01JZZZZZZZZZZZZZZZZZZZZZZZ/reconcile" % CONNECTIONS,
                            headers=auth(self.key))
        self.assertEqual(r.status, 404, r)


    def test_a_pix_the_bank_lists_that_the_schema_refuses(self):
        # nothing the bank reports is dropped: a Pix it lists that the
        # standard's schema refuses is one event, counted once in the report
        pix = self.bank.pay_key("3.10")
        self.bank.garble(pix["endToEndId"], valor="3,10")
        r = self.px.cli("bank", "reconcile", self.conn["id"], "--env", "sandbox", "--json")
        run = json.loads(r.stdout)
        self.assertGreaterEqual(run["listed"], 1)
        self.assertGreaterEqual(run["refused"], 1)

        def refused():
            return [q.json for q in self.sink.requests("/account")
                    if q.json["event"] == "EVENT:PIX_REFUSED"
                    and q.json["data"]["endToEndId"] == pix["endToEndId"]]
        [ev] = wait_for(refused, timeout=15, what="the refused Pix's event")
        self.assertEqual(ev["data"], {"connection": self.conn["id"], "source": "reconciliation",
                                      "endToEndId": pix["endToEndId"],
                                      "reasons": ['pix[0].valor: must be 1 to 10 digits, a dot and 2 '
                                                  'digits, like "110.00"'],
                                      "item": dict(self.bank.pix(pix["endToEndId"]), valor="3,10")})
        text = self.px.cli("bank", "reconcile", self.conn["id"], "--env", "sandbox").stdout
        self.assertRegex(text, r"Pix listed in \d+ page\(s\): 0 new \(missed by the webhook\), [1-9]\d* "
                               r"refused by the standard's schema")
        time.sleep(QUIET)
        self.assertEqual(len(refused()), 1)
        day = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 3 * 3600))
        rep = self.px.request("GET", "/v1/bank/reconciliation?connection=%s&date=%s" % (self.conn["id"], day),
                              headers=auth(self.key)).json["data"]
        self.assertGreaterEqual(rep["pix"]["refused"], 1)
        before = rep["pix"]["refused"]
        self.reconcile_now()
        rep = self.px.request("GET", "/v1/bank/reconciliation?connection=%s&date=%s" % (self.conn["id"], day),
                              headers=auth(self.key)).json["data"]
        self.assertEqual(rep["pix"]["refused"], before)

    def test_the_days_report_and_the_cli(self):
        path = "/report-%d" % time.time_ns()
        ch = self.charge(777, path)
        pix = self.bank.pay(ch["id"])  # no webhook
        # the operator reconciles from the command line: the same run, here
        r = self.px.cli("bank", "reconcile", self.conn["id"], "--env", "sandbox", "--json")
        run = json.loads(r.stdout)
        self.assertEqual(run["connection"], self.conn["id"])
        self.assertGreaterEqual(run["listed"], 1)
        self.assertEqual(run["new"], 1)
        self.assertEqual(run["reconciledUntil"], run["to"])
        self.events(path, 1)
        # again: nothing new; a window apart from the reconciled one keeps it
        run = json.loads(self.px.cli("bank", "reconcile", self.conn["id"], "--env", "sandbox",
                                     "--since", "2h", "--json").stdout)
        self.assertEqual(run["new"], 0)
        text = self.px.cli("bank", "reconcile", self.conn["id"], "--env", "sandbox").stdout
        self.assertRegex(text, r"0 new \(missed by the webhook\)")
        # the day's report: what came by webhook, what was recovered, which
        r = self.px.request("GET", "/v1/bank/reconciliation?connection=" + self.conn["id"],
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        rep = r.json["data"]
        self.assertEqual(rep["timeZone"], "America/Sao_Paulo")
        self.assertIn(pix["endToEndId"], rep["recoveredEndToEndIds"])
        self.assertEqual(rep["pix"]["received"], rep["pix"]["byWebhook"] + rep["pix"]["recovered"])
        self.assertGreaterEqual(rep["pix"]["recovered"], 1)
        self.assertGreaterEqual(rep["cents"]["recovered"], 777)
        self.assertFalse(rep["complete"])  # the day is not over
        cli = json.loads(self.px.cli("bank", "report", self.conn["id"], "--env", "sandbox",
                                     "--json").stdout)
        self.assertEqual(cli, rep)
        text = self.px.cli("bank", "report", self.conn["id"], "--env", "sandbox").stdout
        self.assertIn("not complete", text)
        self.assertIn("  " + pix["endToEndId"] + "\n", text)
        # yesterday is reconciled past its end: complete, and nothing heard
        yesterday = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 3 * 3600 - 86400))
        r = self.px.request("GET", "/v1/bank/reconciliation?connection=%s&date=%s"
                            % (self.conn["id"], yesterday), headers=auth(self.key))
        self.assertEqual((r.status, r.json["data"]["complete"], r.json["data"]["pix"]["received"]),
                         (200, True, 0), r)
        for query, status in [("connection=%s&date=2026-02-30" % self.conn["id"], 400),
                              ("date=2026-11-26", 400),
                              ("connection=bnk_01JZZZZZZZZZZZZZZZZZZZZZZZ", 404)]:
            r = self.px.request("GET", "/v1/bank/reconciliation?" + query, headers=auth(self.key))
            self.assertEqual(r.status, status, (query, r))
        r = self.px.cli("bank", "reconcile", self.conn["id"], "--env", "sandbox", "--since",
                        "30d", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("at most 7 days ago", r.stderr)


if __name__ == "__main__":
    unittest.main()
