"""The reconciliation of a bank connection (docs/bank-api.md, "Reconciliation"),
as a merchant sees it. A bank's webhook promises no delivery: here the test
bank (testbank.py, every call checked against the Central Bank's API Pix)
settles Pix and refunds and tells nobody, and pixrelay, asking the bank's
GET /pix every second, pays the charges, reports the Pix that named none,
settles the refunds it asked for, and sends each event once, whether the
webhook also came, came first, or never came; while the bank is down it
says so and catches up after. The day's report says a day complete only
when the spans of the bank's list it read cover it (docs/bank-api.md, "The
day's report"): never for a connection without API credentials, nor for a
day before the connection, partly for its first day, wholly after a
backfill (`bank reconcile --since`), which reads back as far as the bank
answers.
"""
import datetime
import json
import os
import re
import time
import types
import unittest
import urllib.parse

import bcb
import certs
from harness import (Pixrelay, auth, check_exit, free_port, init_platforms, shard_of, start_stack,
                     stop_stack, store_account, wait_for)
from sse import verify
from sink import Reply
from testbank import SCOPES, TestBank

CREATE = "/v1/charge/pix/create"
CONNECTIONS = "/v1/bank/connections"
QUIET = 1.0  # after a reconciliation: nothing more comes


def brasilia_day(days_ago):
    """YYYY-MM-DD, Brasilia time (UTC-3), `days_ago` days before today."""
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=3, days=days_ago)
    return now.strftime("%Y-%m-%d")


def brasilia_day_of(moment):
    return (parse_utc(moment) - datetime.timedelta(hours=3)).strftime("%Y-%m-%d")


def last_line(text):
    """The last line of a command's stderr, with its newline (the lines
    before are its log)."""
    return text.splitlines(True)[-1] if text else ""


def parse_utc(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(
        datetime.timezone.utc)


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
                            keys=["pagamentos@loja.example", "outra@loja.example",
                                  "primeiro@loja.example", "antigo@loja.example",
                                  "limite@loja.example", "operacional@loja.example",
                                  "recorrente@loja.example"]).start()
        init = init_platforms(cls.px)
        cls.account = init["sandbox"]
        cls.key = cls.px.create_key("sandbox")["key"]
        # the connections of the day's report tests are another account's,
        # so that the platform account's charges stay created at its bank
        cls.other, cls.other_key = store_account(cls.redis, cls.px, "Dias")
        cls.px.cli("account", "set", "--env", "sandbox", "--postback-url",
                   cls.sink.url("/account"))
        cls.signing = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)[
            "signingSecret"]
        cls.secret = secret = os.path.join(cls.certdir, "secret.txt")
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

    def test_stopping_while_recurrences_are_asked_about(self):
        """The process stops (SIGTERM) while its reconciliation asks the bank
        about recurrences (GET /rec/{idRec}, docs/recurrences.md), and a
        delivery in flight keeps it draining: as for refunds, nothing more
        is asked nor written after the stop, it exits cleanly, and the next
        run asks about them all."""
        h = types.SimpleNamespace()
        start_stack(h, name="recstop", args=["--bank-timeout-ms", "5000", "--shutdown-grace", "4"])
        try:
            account = init_platforms(h.px)["sandbox"]
            key = h.px.create_key("sandbox")["key"]
            conn = json.loads(h.px.cli(
                "bank", "connect", "--env", "sandbox", "--account", account, "--chave", "recorrente@loja.example",
                "--url-token", "--api-url", self.bank.url, "--token-url", self.bank.token_url,
                "--client-id", self.bank.client_id, "--client-secret-file", self.secret,
                "--cert", self.merchant.cert, "--key", self.merchant.key, "--bank-ca", self.bank.server_ca,
                "--scope", " ".join(SCOPES), "--default", "--json").stdout)
            wait_for(lambda: "loaded: bank connections' API calls are on" in h.px.log(),
                     what="the credentials key taken by the server")
            start = (datetime.date.today() + datetime.timedelta(days=7)).isoformat()
            recs = []
            for n in range(3):
                r = h.px.request("POST", "/v1/recurrences", headers=auth(key), body={
                    "payer": {"name": "Fulano de Tal", "document": "52998224725"},
                    "contract": "CT-%d" % n, "object": "Plano", "periodicity": "MONTHLY",
                    "startDate": start, "amount": 1000, "retryPolicy": "NONE"})
                self.assertEqual(r.status, 200, r)
                recs.append(r.json["data"])
                self.bank.rec_status(recs[-1]["idRec"], "APROVADA", notify=False)  # no callback
            # a delivery held 10 s at its destination: the stop drains 4 s
            path = "/recstop-%d" % time.time_ns()
            self.sink.script(path, [Reply(200, delay=10)])
            c = h.px.request("POST", CREATE, headers=auth(key),
                             body={"amount": 500, "postbackUrl": self.sink.url(path)}).json["data"]
            self.assertEqual(h.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"],
                                          headers=auth(key)).status, 200)
            self.sink.wait_count(1, path=path)
            # each answer of the bank takes a second; stopped while the first GET /rec waits
            asked = self.bank.calls["GET /rec/{idRec}"]
            self.bank.slow(1.0, duration=15)
            r = h.px.request("POST", "%s/%s/reconcile" % (CONNECTIONS, conn["id"]), headers=auth(key))
            self.assertEqual(r.status, 202, r)
            wait_for(lambda: self.bank.calls["GET /rec/{idRec}"] > asked, interval=0.02, timeout=15,
                     what="the first GET /rec/{idRec}")
            t0 = time.time()
            code = h.px.stop()
            self.assertGreater(time.time() - t0, 3.5, "the delivery in flight kept it draining")
            check_exit(code, h.px.log())
            self.assertEqual(self.bank.calls["GET /rec/{idRec}"], asked + 1, "asked after the stop")
            self.bank.slow(0)
            # nothing was written: the next run (here the operator's) takes all three
            h.px.start()
            h.px.wait_ready()
            out = h.px.cli("bank", "reconcile", conn["id"], "--env", "sandbox").stdout
            self.assertRegex(out, r"; 3 recurrence\(s\) asked about, 3 recovered\n")
            for rec in recs:
                got = h.px.request("GET", "/v1/recurrences/" + rec["id"], headers=auth(key)).json["data"]
                self.assertEqual(got["status"], "APPROVED")
        finally:
            self.bank.slow(0)
            running = h.px.proc is not None
            code = h.px.stop()
            log = h.px.log()
            stop_stack(h)
        if running:
            check_exit(code, log)

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
        # yesterday was before the connection: never read, so not complete
        yesterday = brasilia_day(1)
        r = self.px.request("GET", "/v1/bank/reconciliation?connection=%s&date=%s"
                            % (self.conn["id"], yesterday), headers=auth(self.key))
        self.assertEqual((r.status, r.json["data"]["complete"], r.json["data"]["pix"]["received"]),
                         (200, False, 0), r)
        self.assertTrue(r.json["data"]["whyNotComplete"][0].startswith("the connection was made on "),
                        r.json["data"])
        # (to 00:10 the next day, or to where the first run began, made just after midnight)
        self.assertRegex(r.json["data"]["whyNotComplete"][1], r"^not read from 00:00 to ")
        for query, status in [("connection=%s&date=2026-02-30" % self.conn["id"], 400),
                              ("date=2026-11-26", 400),
                              ("connection=bnk_01JZZZZZZZZZZZZZZZZZZZZZZZ", 404)]:
            r = self.px.request("GET", "/v1/bank/reconciliation?" + query, headers=auth(self.key))
            self.assertEqual(r.status, status, (query, r))
        r = self.px.cli("bank", "reconcile", self.conn["id"], "--env", "sandbox", "--since",
                        "31d", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "pixrelay bank reconcile: --since must be a duration (90s, 15m, "
                         "2h, 30d) or a time, at most 30 days ago (event-retention-days)\n")

    # ---- the day's report: what "complete" proves ----

    def connect(self, chave, api=True, account=None):
        """A connection of the account (or `account`) to `chave` at the test
        bank, with its API credentials unless api is False; returns it."""
        args = ["bank", "connect", "--env", "sandbox", "--account", account or self.other,
                "--chave", chave, "--url-token", "--json"]
        if api:
            args += ["--api-url", self.bank.url, "--token-url", self.bank.token_url,
                     "--client-id", self.bank.client_id, "--client-secret-file", self.secret,
                     "--cert", self.merchant.cert, "--key", self.merchant.key,
                     "--bank-ca", self.bank.server_ca]
        conn = json.loads(self.px.cli(*args).stdout)
        self.addCleanup(self.px.cli, "bank", "disconnect", conn["id"], "--env", "sandbox")
        return conn

    def report(self, conn, day):
        r = self.px.request("GET", "/v1/bank/reconciliation?connection=%s&date=%s" % (conn, day),
                            headers=auth(self.other_key))
        self.assertEqual(r.status, 200, r)
        rep = r.json["data"]
        cli = json.loads(self.px.cli("bank", "report", conn, "--env", "sandbox", "--date", day,
                                     "--json").stdout)
        # the CLI says the same (of today, a run may have read more meanwhile)
        if day == brasilia_day(0):
            for k in ("whyNotComplete", "read"):
                cli.pop(k)
            self.assertEqual(cli, {k: v for k, v in rep.items() if k not in ("whyNotComplete", "read")})
        else:
            self.assertEqual(cli, rep)
        return rep

    def reconcile_since(self, conn, since):
        r = self.px.cli("bank", "reconcile", conn, "--env", "sandbox", "--since", since, "--json",
                        check=False)
        return r, json.loads(r.stdout) if r.stdout else None

    def test_a_connection_without_credentials_is_never_complete(self):
        conn = self.connect("semapi@loja.example", api=False)["id"]
        for day in (brasilia_day(0), brasilia_day(1), brasilia_day(40)):
            rep = self.report(conn, day)
            self.assertFalse(rep["complete"], rep)
            self.assertEqual(rep["whyNotComplete"],
                             ["the connection has no API credentials: only its webhook is heard"])
            self.assertEqual(rep["read"], [])
        text = self.px.cli("bank", "report", conn, "--env", "sandbox").stdout
        self.assertIn("not complete:\n  - the connection has no API credentials: only its webhook "
                      "is heard\nread          nothing of this day\n", text)

    def test_reconciling_a_connection_without_credentials_says_so(self):
        # said as such, not as "no connection"
        conn = self.connect("semapi2@loja.example", api=False)["id"]
        r = self.px.cli("bank", "reconcile", conn, "--env", "sandbox", check=False)
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertEqual(last_line(r.stderr), "pixrelay bank reconcile: connection %s has no API credentials "
                         "(pixrelay bank credentials gives them)\n" % conn)
        r = self.px.cli("bank", "reconcile", "bnk_01JZZZZZZZZZZZZZZZZZZZZZZZ", "--env", "sandbox",
                        check=False)
        self.assertEqual((r.returncode, last_line(r.stderr)), (1, "pixrelay bank reconcile: no connection "
                         "bnk_01JZZZZZZZZZZZZZZZZZZZZZZZ in sandbox\n"))

    def test_the_first_day_is_partial_and_a_day_before_is_not_complete(self):
        c = self.connect("primeiro@loja.example")
        made = parse_utc(c["createdAt"])
        # the server's first run reads from 10 minutes before the credentials
        rep = wait_for(lambda: (lambda r: r["read"] and r)(self.report(c["id"], brasilia_day(0))),
                       timeout=15, what="the first reconciliation")
        self.assertFalse(rep["complete"])
        first = rep["read"][0]["from"]
        self.assertRegex(first, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-03:00$")
        began = parse_utc(first)
        if first.endswith("T00:00:00.000-03:00"):
            # the first run began before this day (the connection was made in
            # its first 10 minutes, or the day turned while the test ran): the
            # span is clipped to the day's start
            self.assertLessEqual(made - datetime.timedelta(minutes=10), began)
        else:
            self.assertLess(abs((began - (made - datetime.timedelta(minutes=10))).total_seconds()), 5)
            at = first[11:16] if first[16:19] == ":00" else first[11:19]
            self.assertEqual(rep["whyNotComplete"][0], "not read from 00:00 to %s" % at)
            self.assertIn("the reconciliation began on %s at %s, 10 minutes before the API "
                          "credentials were given (bank reconcile --since reads back before it)"
                          % (first[:10], at), rep["whyNotComplete"])
        # read up to the last run: only "since" then is missing, and the day's end
        self.assertEqual([w for w in rep["whyNotComplete"] if w.startswith("not read")
                          and not w.startswith("not read from 00:00 to ")
                          and not re.match(r"^not read since \d\d:\d\d(:\d\d)?$", w)], [])
        self.assertEqual(rep["whyNotComplete"][-1], "the day is not over")
        text = self.px.cli("bank", "report", c["id"], "--env", "sandbox").stdout
        self.assertIn("  - the day is not over\n", text)
        self.assertIn("\n  %s .. " % first, text)
        # a day before the connection existed: nothing read, and why
        day = brasilia_day(3)
        rep = self.report(c["id"], day)
        made_b = made - datetime.timedelta(hours=3)
        self.assertEqual((rep["complete"], rep["read"]), (False, []))
        self.assertEqual(rep["whyNotComplete"], [
            "the connection was made on %s at %s, after this day (bank reconcile --since reads "
            "back before it)" % (made_b.strftime("%Y-%m-%d"),
                                 made_b.strftime("%H:%M" if made_b.second == 0 else "%H:%M:%S")),
            "not read from 00:00 to 00:10 the next day"])
        self.assertEqual(rep["pix"]["received"], 0)

    def test_a_backfill_beyond_seven_days_makes_the_days_complete(self):
        c = self.connect("antigo@loja.example")
        now = datetime.datetime.now(datetime.timezone.utc)
        old = self.bank.pay_key("12.34", chave="antigo@loja.example",
                                when=now - datetime.timedelta(days=20))
        recent = self.bank.pay_key("5.00", chave="antigo@loja.example",
                                   when=now - datetime.timedelta(days=2))
        r, run = self.reconcile_since(c["id"], "30d")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((run["stopped"], run["readFrom"], run["new"]), (None, run["from"], 2))
        self.assertIn(run["windows"], (30, 31))
        self.assertEqual(run["reconciledUntil"], run["to"])
        # each day read whole is complete, with the span that proves it
        for pix in (old, recent):
            day = brasilia_day_of(pix["horario"])
            rep = self.report(c["id"], day)
            nxt = (datetime.date.fromisoformat(day) + datetime.timedelta(days=1)).isoformat()
            self.assertEqual((rep["complete"], rep["whyNotComplete"]), (True, []), rep)
            self.assertEqual(rep["read"], [{"from": day + "T00:00:00.000-03:00",
                                            "to": nxt + "T00:10:00.000-03:00"}])
            self.assertEqual((rep["pix"]["recovered"], rep["recoveredEndToEndIds"]),
                             (1, [pix["endToEndId"]]))
        day = brasilia_day(10)
        rep = self.report(c["id"], day)
        self.assertEqual((rep["complete"], rep["whyNotComplete"], rep["pix"]["received"]),
                         (True, [], 0))
        # today is read from its start: only its end is missing
        rep = self.report(c["id"], brasilia_day(0))
        self.assertFalse(rep["complete"])
        self.assertEqual(rep["read"][0]["from"], brasilia_day(0) + "T00:00:00.000-03:00")
        self.assertEqual(rep["whyNotComplete"][-1], "the day is not over")
        self.assertNotIn("not read from 00:00", " ".join(rep["whyNotComplete"]))
        # further back than the retention: not read, not complete
        rep = self.report(c["id"], brasilia_day(31))
        self.assertFalse(rep["complete"])
        text = self.px.cli("bank", "report", c["id"], "--env", "sandbox", "--date",
                           brasilia_day_of(old["horario"])).stdout
        self.assertIn("complete: the bank's list was read for all of the day and 10 minutes "
                      "past it\n", text)
        # the text of a run
        text = self.px.cli("bank", "reconcile", c["id"], "--env", "sandbox", "--since", "3d").stdout
        self.assertRegex(text, r"\nread back to \S+Z in [34] window\(s\) of at most a day\n")

    def test_a_key_connected_in_other_letters_is_the_banks_key(self):
        # the bank lists the key as the DICT keeps it (in lower case); the
        # merchant wrote it otherwise: the same key, so a complete day holds
        # its Pix (not "complete" over none of them)
        c = self.connect("Caixa@Loja.Example")
        now = datetime.datetime.now(datetime.timezone.utc)
        paid = self.bank.pay_key("6.50", chave="caixa@loja.example", when=now - datetime.timedelta(days=2))
        r, run = self.reconcile_since(c["id"], "3d")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((run["listed"], run["new"]), (1, 1))
        rep = self.report(c["id"], brasilia_day_of(paid["horario"]))
        self.assertEqual((rep["complete"], rep["pix"]["recovered"], rep["recoveredEndToEndIds"]),
                         (True, 1, [paid["endToEndId"]]))

    def test_a_bank_that_refuses_an_old_range_stops_the_backfill(self):
        c = self.connect("limite@loja.example")
        now = datetime.datetime.now(datetime.timezone.utc)
        kept = self.bank.pay_key("3.00", chave="limite@loja.example",
                                 when=now - datetime.timedelta(days=3))
        lost = self.bank.pay_key("4.00", chave="limite@loja.example",
                                 when=now - datetime.timedelta(days=9))
        self.bank.history_days = 7
        try:
            r, run = self.reconcile_since(c["id"], "30d")
        finally:
            self.bank.history_days = None
        self.assertEqual(r.returncode, 1, r.stderr)
        # six days read, the newest first; the seventh back is refused
        to = parse_utc(run["to"])
        self.assertEqual(run["windows"], 6)
        self.assertEqual(parse_utc(run["readFrom"]), to - datetime.timedelta(days=6))
        self.assertEqual(run["new"], 1)
        self.assertEqual(run["reconciledUntil"], run["to"])
        self.assertEqual(run["stopped"], "the bank refused the list of Pix: HTTP 400 o parâmetro "
                         "inicio é anterior ao período de consulta disponível (7 dias). (inicio)")
        self.assertEqual(last_line(r.stderr), "pixrelay bank reconcile: stopped reading back at %s, short of "
                         "%s: %s\n" % (run["readFrom"], run["from"], run["stopped"]))
        log = self.px.request("GET", "%s/%s/notifications?limit=1000" % (CONNECTIONS, c["id"]),
                              headers=auth(self.other_key)).json["data"]["notifications"]
        self.assertEqual(sorted(n.get("endToEndId") for n in log), [kept["endToEndId"]])
        # what it read is kept: the day of the Pix it reached is complete
        self.assertTrue(self.report(c["id"], brasilia_day_of(kept["horario"]))["complete"])
        rep = self.report(c["id"], brasilia_day_of(lost["horario"]))
        self.assertEqual((rep["complete"], rep["read"], rep["pix"]["received"]), (False, [], 0))

    # ---- operational events (docs/postbacks.md, "Operational events") ----

    def test_the_reconciliation_tells_the_endpoints_that_name_operational_events(self):
        """A day's Pix the webhook never brought, recovered by a backfill: one
        EVENT:OPERATIONAL_PIX_RECOVERED for the day; the bank down: one
        _RECONCILIATION_FAILING however many runs fail, one _LATE once no run
        has succeeded for a day, one _RECOVERED when one does; each only at
        the endpoint that names operational types."""
        account, key = store_account(self.redis, self.px, "Operacoes")

        def endpoint(path, types):
            r = self.px.request("POST", "/v1/webhook-endpoints", headers=auth(key),
                                body={"url": self.sink.url(path), "eventTypes": types})
            self.assertEqual(r.status, 200, r)
        endpoint("/rop/ops", ["EVENT:OPERATIONAL_*"])
        endpoint("/rop/every", ["EVENT:*"])

        def ops(path="/rop/ops"):
            return [q.json for q in self.sink.requests(path)
                    if q.json["event"].startswith("EVENT:OPERATIONAL_")]

        def wait_ops(n, what):
            self.sink.wait_until(lambda reqs: len(ops()) >= n, timeout=20, what=what)
            return ops()
        chave = "operacional@loja.example"
        c = self.connect(chave, account=account)
        now = datetime.datetime.now(datetime.timezone.utc)
        pix = self.bank.pay_key("12.34", chave=chave, when=now - datetime.timedelta(days=2))
        r, run = self.reconcile_since(c["id"], "3d")
        self.assertEqual((r.returncode, run["new"]), (0, 1), r.stderr)
        [rec] = wait_ops(1, "the day's recovered Pix")
        day = brasilia_day_of(pix["horario"])
        [unmatched] = [q.json for q in self.sink.requests("/rop/every")
                       if q.json["data"].get("pix", {}).get("endToEndId") == pix["endToEndId"]]
        self.assertEqual((rec["event"], rec["data"]),
                         ("EVENT:OPERATIONAL_PIX_RECOVERED",
                          {"connection": c["id"], "pixKey": chave, "date": day, "count": 1,
                           "cents": 1234, "truncated": False,
                           "pix": [{"endToEndId": pix["endToEndId"], "txid": None,
                                    "charge": None, "event": unmatched["id"], "amount": 1234}]}))
        # told once: a run again finds the day told
        r, run = self.reconcile_since(c["id"], "3d")
        self.assertEqual(r.returncode, 0, r.stderr)

        def reconcile():
            r = self.px.request("POST", "%s/%s/reconcile" % (CONNECTIONS, c["id"]),
                                headers=auth(key))
            self.assertEqual(r.status, 202, r)
        self.bank.down(mode="503")
        try:
            reconcile()
            failing = wait_ops(2, "the reconciliation failing")[1]
            self.assertEqual(failing["event"], "EVENT:OPERATIONAL_RECONCILIATION_FAILING")
            self.assertEqual((failing["data"]["connection"], failing["data"]["pixKey"]),
                             (c["id"], chave))
            self.assertRegex(failing["data"]["error"], r"^GET /pix: .*HTTP 503")
            self.assertRegex(failing["data"]["failingSince"], r"^\d{4}-\d\d-\d\dT")
            self.assertIsNotNone(failing["data"]["reconciledUntil"])
            # another failure: not told again
            reconcile()
            wait_for(lambda: self.get_connection(c["id"], key)["failures"] >= 2, timeout=20,
                     what="a second failure")
            self.assertEqual(len(ops()), 2)
            # no success for a day (its success clock, moved back): late, once
            self.redis.cmd("ZADD", "pixrelay:{s%d}:bankok:sandbox" % shard_of(c["id"]),
                           int(time.time() * 1000) - 2 * 86400000, c["id"])
            reconcile()
            late = wait_ops(3, "the reconciliation late")[2]
            self.assertEqual(late["event"], "EVENT:OPERATIONAL_RECONCILIATION_LATE")
            self.assertEqual((late["data"]["connection"], late["data"]["failingSince"]),
                             (c["id"], failing["data"]["failingSince"]))
            self.assertGreaterEqual(late["data"]["failedRuns"], 3)
            n = self.get_connection(c["id"], key)["failures"]
            reconcile()
            wait_for(lambda: self.get_connection(c["id"], key)["failures"] > n, timeout=20,
                     what="another failure")
            self.assertEqual(len(ops()), 3)
        finally:
            self.bank.up()
        reconcile()
        back = wait_ops(4, "the reconciliation recovered")[3]
        self.assertEqual(back["event"], "EVENT:OPERATIONAL_RECONCILIATION_RECOVERED")
        self.assertEqual({k: back["data"][k] for k in ("connection", "failingSince", "wasLate")},
                         {"connection": c["id"], "failingSince": failing["data"]["failingSince"],
                          "wasLate": True})
        self.assertGreaterEqual(back["data"]["failedRuns"], 4)
        self.assertRegex(back["data"]["lastError"], r"^GET /pix")
        time.sleep(QUIET)
        self.assertEqual([x["event"] for x in ops()], [
            "EVENT:OPERATIONAL_PIX_RECOVERED", "EVENT:OPERATIONAL_RECONCILIATION_FAILING",
            "EVENT:OPERATIONAL_RECONCILIATION_LATE", "EVENT:OPERATIONAL_RECONCILIATION_RECOVERED"])
        self.assertEqual(ops("/rop/every"), [])

    def get_connection(self, conn, key):
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, conn), headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["api"]["reconciliation"]


if __name__ == "__main__":
    unittest.main()
