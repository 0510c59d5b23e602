"""Pix Automático's recurrences (docs/recurrences.md), end to end as a
merchant sees them: POST /v1/recurrences made at the account's bank (POST
/locrec, POST /rec, GET /rec/{idRec} for the QR), read, listed and cancelled
(PATCH /rec/{idRec}); the bank's /rec callback taken once per status, each
status one event to the recurrence's postbackUrl, in order.

The bank is tests/e2e/testbank.py with testbank_rec.py: every request and
answer checked against the Central Bank's OpenAPI (bank.violations), its
callback's body too. As test_bankapi.py does, the test delivers the
callback itself over plain HTTP to the connection's URL-token URL + /rec.
"""
import datetime
import json
import os
import re
import subprocess
import time
import unittest
import urllib.parse

import certs
from bankcase import BankCase, unique
from harness import ModuleStack, auth, free_port, init_platforms, start_stack, wait_for
from testbank import SCOPES, TestBank
from testbank_rec import br_code_rec

RECS = "/v1/recurrences"
CPF = "529.982.247-25"


def accepted_calls(px):
    """pixrelay_bank_calls_total{result="accepted"} of /metrics."""
    text = px.request("GET", "/metrics").body.decode()
    m = re.search(r'^pixrelay_bank_calls_total\{result="accepted"\} (\S+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


def in_days(n):
    return (datetime.date.today() + datetime.timedelta(days=n)).isoformat()


class Env(ModuleStack):
    shared = ("wd", "redis", "px", "sink", "account", "key", "signing", "bank", "conn", "rec_hook",
              "prod_key")

    @classmethod
    def setup(cls):
        start_stack(cls, args=["--bank-timeout-ms", "1500"], sink=True, port=free_port())
        cls.account = init_platforms(cls.px)["sandbox"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.prod_key = cls.px.create_key("production")["key"]
        cls.px.cli("account", "set", "--env", "sandbox", "--postback-url", cls.sink.url("/account"))
        cls.signing = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)["signingSecret"]
        d = os.path.join(cls.wd.path, "certs")
        ca = certs.make_ca(d, "merchant-ca", "Loja Merchant CA")
        client = certs.make_client(d, ca, "merchant", "loja.example")
        cls.bank = TestBank(client_ca=ca.cert).start()
        secret = os.path.join(d, "client-secret.txt")
        with open(secret, "w") as f:
            f.write(cls.bank.client_secret + "\n")
        os.chmod(secret, 0o600)
        p = cls.px.cli("bank", "connect", "--env", "sandbox", "--chave", cls.bank.key, "--url-token",
                       "--api-url", cls.bank.url, "--token-url", cls.bank.token_url,
                       "--client-id", cls.bank.client_id, "--client-secret-file", secret,
                       "--cert", client.cert, "--key", client.key, "--bank-ca", cls.bank.server_ca,
                       "--scope", " ".join(SCOPES), "--default", "--json")
        cls.conn = json.loads(p.stdout)
        # the URL the bank POSTs its /rec callback to: webhookUrl + "/rec"
        u = urllib.parse.urlsplit(cls.conn["webhookUrl"] + "/rec")
        cls.rec_hook = u.path + ("?" + u.query if u.query else "")

    @classmethod
    def teardown(cls):
        cls.bank.close()


def tearDownModule():
    Env.stop()


class Base(BankCase):
    env = Env

    def tearDown(self):
        self.bank.forge_rec = None
        self.bank.up()
        self.assertEqual(self.bank.take_violations(), [])

    def body(self, **over):
        b = {"payer": {"name": "Fulano de Tal", "document": CPF}, "contract": "CT-2026-0001",
             "object": "Academia: plano mensal", "periodicity": "MONTHLY", "startDate": in_days(7),
             "amount": 9990, "retryPolicy": "NONE"}
        b.update(over)
        return {k: v for k, v in b.items() if v is not None}

    def create(self, key=None, **over):
        return self.px.request("POST", RECS, body=self.body(**over), headers=auth(key or self.key))

    def rec(self, **over):
        r = self.create(**over)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def callback(self, *idrecs, items=None):
        """The bank's /rec callback with the recurrences as the bank has
        them (or `items` as given): its answer's data."""
        recs = items if items is not None else [
            {k: v for k, v in self.bank.rec(i).items()
             if k in ("idRec", "status", "atualizacao", "encerramento", "ativacao")} for i in idrecs]
        r = self.px.request("POST", self.rec_hook, raw=json.dumps({"recs": recs}).encode(),
                            headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r)
        return r.json["data"]


class Create(Base):
    def test_each_field_reaches_the_bank_as_the_standard_says(self):
        end = in_days(400)
        d = self.rec(endDate=end, postbackUrl=self.sink.url(unique("rec")))
        sent = self.bank.rec_bodies[-1]
        loc = sent.pop("loc")
        self.assertEqual(sent, {
            "vinculo": {"objeto": "Academia: plano mensal", "contrato": "CT-2026-0001",
                        "devedor": {"cpf": "52998224725", "nome": "Fulano de Tal"}},
            "calendario": {"dataInicial": in_days(7), "dataFinal": end, "periodicidade": "MENSAL"},
            "valor": {"valorRec": "99.90"}, "politicaRetentativa": "NAO_PERMITE"})
        at_bank = self.bank.rec(d["idRec"])
        self.assertEqual(at_bank["loc"]["id"], loc)
        self.assertEqual(d["status"], "CREATED")
        self.assertTrue(d["id"].startswith("rec_"), d)
        self.assertTrue(d["idRec"].startswith("RN"), d)
        # the QR is the bank's, of the recurrence's location, asking no payment
        self.assertEqual(d["brCode"], at_bank["dadosQR"]["pixCopiaECola"])
        self.assertEqual(d["brCode"], br_code_rec(at_bank["loc"]["location"], self.bank.merchant_name,
                                                  self.bank.merchant_city))
        self.assertTrue(d["brCodeImageUrl"].endswith("/qrcode/" + d["id"]), d)
        png = self.px.request("GET", urllib.parse.urlsplit(d["brCodeImageUrl"]).path)
        self.assertEqual((png.status, png.body[:8]), (200, b"\x89PNG\r\n\x1a\n"))
        self.assertEqual((d["payer"], d["contract"], d["object"], d["periodicity"], d["startDate"],
                          d["endDate"], d["amount"], d["minimumAmount"], d["retryPolicy"],
                          d["connection"]),
                         ({"name": "Fulano de Tal", "document": "52998224725"}, "CT-2026-0001",
                          "Academia: plano mensal", "MONTHLY", in_days(7), end, 9990, None, "NONE",
                          self.conn["id"]))
        r = self.px.request("GET", RECS + "/" + d["id"], headers=auth(self.key))
        self.assertEqual((r.status, r.json["data"]), (200, d))
        r = self.px.request("GET", RECS + "?limit=100", headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        self.assertIn(d, r.json["data"]["recurrences"])

    def test_minimum_amount_retry_policy_and_periods(self):
        for ours, theirs in (("WEEKLY", "SEMANAL"), ("QUARTERLY", "TRIMESTRAL"),
                             ("SEMIANNUAL", "SEMESTRAL"), ("ANNUAL", "ANUAL")):
            d = self.rec(periodicity=ours, amount=None, minimumAmount=500,
                         retryPolicy="THREE_IN_SEVEN_DAYS",
                         payer={"name": "Empresa X", "document": "11.222.333/0001-81"})
            sent = self.bank.rec_bodies[-1]
            self.assertEqual((sent["calendario"]["periodicidade"], sent["valor"],
                              sent["politicaRetentativa"], sent["vinculo"]["devedor"]),
                             (theirs, {"valorMinimoRecebedor": "5.00"}, "PERMITE_3R_7D",
                              {"cnpj": "11222333000181", "nome": "Empresa X"}))
            self.assertTrue(d["idRec"].startswith("RR"), d)
            self.assertEqual((d["amount"], d["minimumAmount"]), (None, 500))
        d = self.rec(amount=None)
        self.assertNotIn("valor", self.bank.rec_bodies[-1])

    def test_refused_field_by_field(self):
        cases = [
            ({"payer": None}, 'payer: required ({"name", "document"})'),
            ({"payer": {"name": "A", "document": "123"}}, "payer.document: not a valid CPF or CNPJ"),
            ({"contract": "x" * 36}, "contract: must be at most 35 characters (got 36)"),
            ({"object": None}, "object: required"),
            ({"periodicity": "DAILY"},
             "periodicity: must be WEEKLY, MONTHLY, QUARTERLY, SEMIANNUAL or ANNUAL"),
            ({"startDate": "2026-02-30"}, "startDate: must be a date YYYY-MM-DD"),
            ({"endDate": "2020-01-01"}, "endDate: must not be before startDate"),
            ({"minimumAmount": 100},
             "minimumAmount: not with amount (a fixed amount has no minimum; give one or the other)"),
            ({"amount": 0}, "amount: must be from 1 to 999999999999 (cents)"),
            ({"retryPolicy": None}, "retryPolicy: required (NONE or THREE_IN_SEVEN_DAYS)"),
            ({"postbackUrl": "ftp://x"}, "postbackUrl: must be an absolute http or https URL"),
            ({"solicrec": True}, "solicrec: unknown field (a recurrence has payer, contract, object, "
                                 "periodicity, startDate, endDate, amount, minimumAmount, retryPolicy, "
                                 "postbackUrl)"),
        ]
        before = self.bank.count("POST /locrec")
        for over, message in cases:
            r = self.create(**over)
            self.assertEqual((r.status, r.json["error"]), (400, message), over)
        self.assertEqual(self.bank.count("POST /locrec"), before)

    def test_without_a_bank_with_api_credentials_409(self):
        r = self.create(key=self.prod_key)
        self.assertEqual(r.status, 409, r)
        self.assertIn("a recurrence is made at the account's bank, and the account has no bank "
                      "connection in production: connect its bank (pixrelay bank connect --env "
                      "production", r.json["error"])

    def test_an_answer_that_is_not_the_recurrence_stores_nothing(self):
        for forge, why in (("qr-location", "dadosQR.pixCopiaECola: its location (80.25) "),
                           ("qr-key", "dadosQR.pixCopiaECola: field 26 carries a Pix key (26.01)"),
                           ("idrec", "idRec: ")):
            self.bank.forge_rec = forge
            r = self.create()
            self.assertEqual(r.status, 503, r)
            self.assertIn(why, r.json["error"])
            self.assertTrue(r.json["error"].endswith("; nothing was stored"), r.json["error"])
        self.bank.forge_rec = None
        r = self.px.request("GET", RECS + "?limit=100", headers=auth(self.key))
        listed = {x["idRec"] for x in r.json["data"]["recurrences"]}
        forged = {b for b in self.bank._recs} - listed
        self.assertEqual(len(forged), 3)

    def test_the_bank_refusing(self):
        r = self.create(startDate=(datetime.date.today() - datetime.timedelta(days=1)).isoformat())
        self.assertEqual(r.status, 400, r)
        self.assertIn("the bank refused the recurrence: HTTP 400", r.json["error"])
        self.assertEqual(len(self.bank.take_violations()), 1)


class Callbacks(Base):
    def test_each_status_makes_its_event_once_in_order(self):
        path = unique("rec")
        d = self.rec(postbackUrl=self.sink.url(path))
        self.bank.rec_status(d["idRec"], "APROVADA", notify=False)
        got = self.callback(d["idRec"])
        self.assertEqual(got, {"recs": [{"idRec": d["idRec"], "outcome": "taken"}], "refused": []})
        # the bank sends it again: nothing more
        self.assertEqual(self.callback(d["idRec"])["recs"][0]["outcome"], "duplicate")
        r = self.px.request("POST", "%s/%s/cancel" % (RECS, d["id"]), headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["status"], "CANCELLED")
        self.assertEqual(r.json["data"]["closing"], {"code": "SLCR", "reason": None,
                                                    "by": "USUARIO_RECEBEDOR"})
        self.assertEqual(self.bank.rec(d["idRec"])["status"], "CANCELADA")
        # the bank's callback of the cancel brings nothing new
        self.assertEqual(self.callback(d["idRec"])["recs"][0]["outcome"], "duplicate")
        evs = self.events(path, 2)
        self.assertEqual([(e["event"], e["data"]["status"], e["data"]["source"]) for e in evs],
                         [("EVENT:RECURRENCE_APPROVED", "APPROVED", "webhook"),
                          ("EVENT:RECURRENCE_CANCELLED", "CANCELLED", "request")])
        self.assertEqual(evs[0]["data"]["id"], d["id"])
        self.quiet_after(path, 2)
        r = self.px.request("POST", "%s/%s/cancel" % (RECS, d["id"]), headers=auth(self.key))
        self.assertEqual((r.status, r.json["error"]),
                         (409, "the recurrence is final already: nothing was done"))

    def test_rejected_expired_cancelled_by_the_payer(self):
        path = unique("rec")
        want = []
        for status, ours, code in (("REJEITADA", "REJECTED", "AP13"), ("EXPIRADA", "EXPIRED", None),
                                   ("CANCELADA", "CANCELLED", "ACCL")):
            d = self.rec(postbackUrl=self.sink.url(path))
            if status == "CANCELADA":
                self.bank.rec_status(d["idRec"], "APROVADA", notify=False)
            self.bank.rec_status(d["idRec"], status, notify=False)
            self.assertEqual(self.callback(d["idRec"])["recs"][0]["outcome"], "taken")
            want.append(("EVENT:RECURRENCE_" + ours, d["id"], code))
        evs = self.events(path, 3)
        self.assertEqual(sorted((e["event"], e["data"]["id"], (e["data"].get("closing") or {}).get("code"))
                                for e in evs), sorted(want))
        self.quiet_after(path, 3)

    def test_events_go_to_the_account_without_a_postback_url(self):
        d = self.rec()
        self.bank.rec_status(d["idRec"], "APROVADA", notify=False)
        self.callback(d["idRec"])
        evs = [e for e in self.events("/account", 1) if e["data"].get("id") == d["id"]]
        self.assertEqual([e["event"] for e in evs], ["EVENT:RECURRENCE_APPROVED"])

    def test_unknown_and_refused_items(self):
        d = self.rec()
        self.bank.rec_status(d["idRec"], "APROVADA", notify=False)
        good = {k: v for k, v in self.bank.rec(d["idRec"]).items()
                if k in ("idRec", "status", "atualizacao")}
        other = dict(good, idRec="RN9999999920260101zzzzzzzzzzz")
        bad = {"idRec": "short", "status": "APROVADA", "atualizacao": []}
        got = self.callback(items=[bad, other, good])
        self.assertEqual(got["recs"], [{"idRec": other["idRec"], "outcome": "unknown"},
                                       {"idRec": d["idRec"], "outcome": "taken"}])
        self.assertEqual(got["refused"], ["recs[0]: idRec: missing or not 29 letters and digits"])

    def test_the_path_of_a_bank_that_appends_rec_to_the_path(self):
        d = self.rec()
        self.bank.rec_status(d["idRec"], "APROVADA", notify=False)
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(self.conn["webhookUrl"]).query)["hmac"][0]
        item = {k: v for k, v in self.bank.rec(d["idRec"]).items() if k in ("idRec", "status", "atualizacao")}
        path = "/v1/webhooks/bank/%s/rec" % self.conn["id"]
        r = self.px.request("POST", path + "?hmac=" + "x" * len(token), raw=json.dumps({"recs": [item]}).encode(),
                            headers={"Content-Type": "application/json"})
        self.assertEqual((r.status, r.json["error"]),
                         (401, "not authenticated as the bank of this connection"))
        r = self.px.request("POST", path + "?hmac=" + token, raw=json.dumps({"recs": [item]}).encode(),
                            headers={"Content-Type": "application/json"})
        self.assertEqual((r.status, r.json["data"]["recs"]), (200, [{"idRec": d["idRec"], "outcome": "taken"}]))

    def test_a_rec_call_is_the_banks_last_call_and_counted_unless_simulated(self):
        # a connection its bank never called: a /rec call answered 200 is its
        # last call, as a /pix call is, and one bank call in the metric
        r = self.px.request("POST", "/v1/bank/connections", headers=auth(self.key),
                            body={"pixKey": "rec-%d@loja.example" % time.time_ns(), "auth": "url-token"})
        self.assertEqual(r.status, 200, r)
        conn = r.json["data"]
        self.assertIsNone(conn["lastCallAt"])
        d = self.rec()  # (a recurrence's item, of an idRec no recurrence has)
        item = {k: v for k, v in self.bank.rec(d["idRec"]).items() if k in ("idRec", "status", "atualizacao")}
        item["idRec"] = "RN9999999920260101yyyyyyyyyyy"
        u = urllib.parse.urlsplit(conn["webhookUrl"] + "/rec")
        before = accepted_calls(self.px)
        r = self.px.request("POST", u.path + "?" + u.query, raw=json.dumps({"recs": [item]}).encode(),
                            headers={"Content-Type": "application/json"})
        self.assertEqual((r.status, r.json["data"]["recs"]), (200, [{"idRec": item["idRec"], "outcome": "unknown"}]))
        self.assertEqual(accepted_calls(self.px), before + 1)

        def last_call():
            r = self.px.request("GET", "/v1/bank/connections/" + conn["id"], headers=auth(self.key))
            return r.json["data"]["lastCallAt"]
        at = wait_for(last_call, timeout=10, what="the /rec call as the connection's last call")
        shown = self.px.cli("bank", "show", conn["id"], "--env", "sandbox").stdout
        self.assertIn("  last call    %s (the bank's last webhook call answered 200)\n" % at, shown)
        # the sandbox's simulate-pix (what trigger rec.* uses) is no bank call
        r = self.px.request("POST", "/v1/bank/connections/%s/simulate-pix" % conn["id"], headers=auth(self.key),
                            body={"recs": [item]})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(accepted_calls(self.px), before + 1)


class Reconciliation(Base):
    def report(self):
        r = self.px.request("GET", "/v1/bank/reconciliation?connection=" + self.conn["id"],
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["recurrences"]

    def test_a_missed_callback_is_recovered_and_marked(self):
        path = unique("rec")
        before = self.report()
        d = self.rec(postbackUrl=self.sink.url(path))
        # the payer approves; the bank's callback never comes
        self.bank.rec_status(d["idRec"], "APROVADA", notify=False)
        mark = len(self.bank.log)
        r = self.px.request("POST", "/v1/bank/connections/%s/reconcile" % self.conn["id"],
                            headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        evs = self.events(path, 1)
        self.assertEqual([(e["event"], e["data"]["id"], e["data"]["status"], e["data"]["source"])
                          for e in evs],
                         [("EVENT:RECURRENCE_APPROVED", d["id"], "APPROVED", "reconciliation")])
        self.assertIn("GET /rec/{idRec}", [c.endpoint for c in self.bank.log[mark:]])
        got = self.px.request("GET", RECS + "/" + d["id"], headers=auth(self.key)).json["data"]
        self.assertEqual(got["status"], "APPROVED")
        # the callback that comes late brings nothing new
        self.assertEqual(self.callback(d["idRec"])["recs"][0]["outcome"], "duplicate")
        self.quiet_after(path, 1)
        # the day's report counts it (today, Brasilia time; the other tests' too)
        after = self.report()
        self.assertEqual({k: after[k] - before[k] for k in after},
                         {"CREATED": 1, "APPROVED": 1, "REJECTED": 0, "EXPIRED": 0, "CANCELLED": 0,
                          "recovered": 1})


    def test_bank_reconcile_says_the_recurrences_asked_and_recovered(self):
        d = self.rec()
        self.bank.rec_status(d["idRec"], "APROVADA", notify=False)  # no callback
        said = []
        for _ in range(10):  # at most 16 a run, those asked longest ago first
            r = self.px.cli("bank", "reconcile", self.conn["id"], "--env", "sandbox")
            said.append(r.stdout.splitlines()[0])
            got = self.px.request("GET", RECS + "/" + d["id"], headers=auth(self.key)).json["data"]
            if got["status"] == "APPROVED":
                break
        self.assertEqual(got["status"], "APPROVED", said)
        self.assertRegex(said[-1], r" 0 refund\(s\) asked about; [1-9]\d* recurrence\(s\) asked about, "
                                   r"[1-9]\d* recovered$")


class Trigger(Base):
    def run_cli(self, *args):
        e = dict(os.environ, PIXRELAY_API_KEY=self.key)
        return subprocess.run([os.environ["PIXRELAY_BIN"], "--base-url",
                               "http://127.0.0.1:%d/v1" % self.px.port] + list(args),
                              capture_output=True, text=True, env=e, timeout=60)

    def test_trigger_rec_through_the_callbacks_path(self):
        path = unique("rec")
        d = self.rec(postbackUrl=self.sink.url(path))
        r = self.run_cli("trigger", "rec.approved", "--recurrence", d["id"], "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), {"recurrence": d["id"], "idRec": d["idRec"],
                                                "connection": self.conn["id"], "outcome": "taken",
                                                "event": "EVENT:RECURRENCE_APPROVED"})
        # the newest recurrence of the account, without --recurrence
        r = self.run_cli("trigger", "rec.cancelled")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "recurrence %s (%s) through %s: CANCELADA\nevent "
                                   "EVENT:RECURRENCE_CANCELLED\n" % (d["id"], d["idRec"], self.conn["id"]))
        r = self.run_cli("trigger", "rec.rejected", "--recurrence", d["id"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(": duplicate, no event", r.stdout)
        evs = self.events(path, 2)
        self.assertEqual([(e["event"], e["data"]["source"]) for e in evs],
                         [("EVENT:RECURRENCE_APPROVED", "webhook"), ("EVENT:RECURRENCE_CANCELLED", "webhook")])
        self.quiet_after(path, 2)
        r = self.run_cli("trigger", "rec.paid")
        self.assertEqual((r.returncode, r.stderr.strip().splitlines()[-1]),
                         (2, "pixrelay trigger: unknown event 'rec.paid': rec.approved, rec.rejected "
                             "or rec.cancelled"))


if __name__ == "__main__":
    unittest.main()
