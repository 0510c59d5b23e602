"""Pix Automático's recurring charges (docs/recurrences.md, "Recurring
charges"), end to end as a merchant sees them: the receiving account of a
bank connection (`recebedor`, bank connect / update and the API), a
charge of an approved recurrence made at the bank with PUT /cobr/{txid}.

The bank is tests/e2e/testbank.py with testbank_rec.py: every request and
answer checked against the Central Bank's OpenAPI (bank.violations).
"""
import datetime
import json
import os
import subprocess
import unittest
import urllib.parse

import certs
from bankcase import BankCase, unique
from harness import ModuleStack, auth, free_port, init_platforms, start_stack
from testbank import SCOPES, TestBank

RECS = "/v1/recurrences"
CONNS = "/v1/bank/connections"
CPF = "529.982.247-25"
RCV = ["--conta", "012682", "--tipo-conta", "CORRENTE", "--agencia", "9708"]


def in_days(n):
    return (datetime.date.today() + datetime.timedelta(days=n)).isoformat()


class Env(ModuleStack):
    shared = ("wd", "redis", "px", "sink", "account", "key", "signing", "bank", "conn", "rec_hook",
              "cobr_hook")

    @classmethod
    def setup(cls):
        start_stack(cls, args=["--bank-timeout-ms", "1500"], sink=True, port=free_port())
        cls.account = init_platforms(cls.px)["sandbox"]
        cls.key = cls.px.create_key("sandbox")["key"]
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
                       "--scope", " ".join(SCOPES), "--default", *RCV, "--json")
        cls.conn = json.loads(p.stdout)
        hooks = []
        for tail in ("/rec", "/cobr"):
            u = urllib.parse.urlsplit(cls.conn["webhookUrl"] + tail)
            hooks.append(u.path + ("?" + u.query if u.query else ""))
        cls.rec_hook, cls.cobr_hook = hooks

    @classmethod
    def teardown(cls):
        cls.bank.close()


def tearDownModule():
    Env.stop()


class Base(BankCase):
    env = Env

    def tearDown(self):
        self.bank.up()
        self.assertEqual(self.bank.take_violations(), [])


class Charges(Base):
    """Helpers: a recurrence approved by its payer, its recurring charges."""

    def approved(self, **over):
        body = {"payer": {"name": "Fulano de Tal", "document": CPF}, "contract": "CT-2026-0001",
                "object": "Academia: plano mensal", "periodicity": "MONTHLY", "startDate": in_days(2),
                "amount": 9990, "retryPolicy": "THREE_IN_SEVEN_DAYS"}
        body.update(over)
        body = {k: v for k, v in body.items() if v is not None}
        r = self.px.request("POST", RECS, body=body, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.bank.rec_status(d["idRec"], "APROVADA", notify=False)
        item = {k: v for k, v in self.bank.rec(d["idRec"]).items()
                if k in ("idRec", "status", "atualizacao", "encerramento", "ativacao")}
        r = self.px.request("POST", self.rec_hook, raw=json.dumps({"recs": [item]}).encode(),
                            headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r)
        return d

    def charge(self, rec, **body):
        return self.px.request("POST", RECS + "/" + rec["id"] + "/charges", body=body,
                               headers=auth(self.key))

    def cobr_callback(self, *txids):
        r = self.px.request("POST", self.cobr_hook, raw=self.bank.cobr_notification(txids),
                            headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def new_charge(self, path, **over):
        rec = self.approved(postbackUrl=self.sink.url(path), **over)
        r = self.charge(rec, amount=9990, dueDate=in_days(3))
        self.assertEqual(r.status, 200, r)
        # the recurrence's own event goes there first
        self.assertEqual(self.events(path, 1)[0]["event"], "EVENT:RECURRENCE_APPROVED")
        return rec, r.json["data"]

    def charge_events(self, path, n):
        """The first n events of the charge at path (after the approval)."""
        return self.events(path, n + 1)[1:]


class Create(Charges):
    def test_each_field_reaches_the_bank_as_the_standard_says(self):
        rec = self.approved()
        r = self.charge(rec, amount=9990, dueDate=in_days(5))
        self.assertEqual(r.status, 200, r)
        c = r.json["data"]
        self.assertEqual(self.bank.cobr_bodies[-1], {
            "idRec": rec["idRec"], "calendario": {"dataDeVencimento": in_days(5)},
            "valor": {"original": "99.90"}, "ajusteDiaUtil": True,
            "recebedor": {"agencia": "9708", "conta": "012682", "tipoConta": "CORRENTE"}})
        at_bank = self.bank.cobr(c["id"])
        self.assertEqual((at_bank["txid"], at_bank["status"]), (c["id"], "CRIADA"))
        self.assertEqual((c["status"], c["recurrence"], c["amount"], c["dueDate"], c["daysAfterDue"],
                          c["brCode"], c["brCodeImageUrl"], c["customer"]["document"]),
                         ("PENDING", rec["id"], 9990, in_days(5), 7, None, None, "52998224725"))
        self.assertEqual(self.get_charge(c["id"]), c)
        # no QR code: the payer's bank pays it (its recurrence has the QR)
        q = self.px.request("GET", "/v1/qrcode/" + c["id"])
        self.assertEqual((q.status, q.json["error"]),
                         (404, "QR code not found: %s has no BR Code (a recurring charge is paid by "
                               "the payer's bank on its due date; its recurrence has the QR)" % c["id"]))
        # a recurrence without retries: the charge ends with its due date
        rec = self.approved(retryPolicy="NONE", amount=None, minimumAmount=5000)
        r = self.charge(rec, amount=12345, dueDate=in_days(10))
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["daysAfterDue"], r.json["data"]["amount"]), (0, 12345))
        self.assertEqual(self.bank.cobr_bodies[-1]["valor"], {"original": "123.45"})

    def test_refused_field_by_field(self):
        rec = self.approved(endDate=in_days(6))
        before = len(self.bank.cobr_bodies)
        for body, message in (
                ({"dueDate": in_days(5)}, "amount: required (cents)"),
                ({"amount": "99.90", "dueDate": in_days(5)}, "amount: must be an integer number of cents"),
                ({"amount": 9990}, "dueDate: required (YYYY-MM-DD)"),
                ({"amount": 9990, "dueDate": "05/12/2026"}, "dueDate: must be a date written YYYY-MM-DD"),
                ({"amount": 9990, "dueDate": in_days(5), "txid": "x"},
                 "txid: unknown field; allowed: amount, dueDate"),
                ({"amount": 9991, "dueDate": in_days(5)},
                 "amount: must be the recurrence's fixed amount, 9990 (99.90)"),
                ({"amount": 9990, "dueDate": in_days(1)},
                 "dueDate: a recurring charge is sent 2 to 10 days before its due date: from today "
                 "that is a date from 2 to 10 days ahead"),
                ({"amount": 9990, "dueDate": in_days(11)},
                 "dueDate: a recurring charge is sent 2 to 10 days before its due date: from today "
                 "that is a date from 2 to 10 days ahead"),
                ({"amount": 9990, "dueDate": in_days(7)},
                 "dueDate: after the recurrence's endDate, " + in_days(6))):
            r = self.charge(rec, **body)
            self.assertEqual((r.status, r.json["error"]), (400, message), body)
        rec2 = self.approved(startDate=in_days(6), amount=None, minimumAmount=5000)
        for body, message in (
                ({"amount": 9990, "dueDate": in_days(5)},
                 "dueDate: before the recurrence's startDate, " + in_days(6)),
                ({"amount": 4999, "dueDate": in_days(6)},
                 "amount: must be at least the recurrence's minimum amount, 5000 (50.00)")):
            r = self.charge(rec2, **body)
            self.assertEqual((r.status, r.json["error"]), (400, message), body)
        self.assertEqual(len(self.bank.cobr_bodies), before)
        r = self.px.request("POST", RECS + "/rec_01M8C0C5SXF1HDHDYQV5PETZ0C/charges",
                            body={"amount": 9990, "dueDate": in_days(5)}, headers=auth(self.key))
        self.assertEqual((r.status, r.json["error"]),
                         (404, "recurrence not found: rec_01M8C0C5SXF1HDHDYQV5PETZ0C"))

    def test_only_an_approved_recurrence_and_one_charge_a_cycle(self):
        r = self.px.request("POST", RECS, headers=auth(self.key), body={
            "payer": {"name": "Fulano de Tal", "document": CPF}, "contract": "CT-1",
            "object": "Plano", "periodicity": "MONTHLY", "startDate": in_days(2), "amount": 9990,
            "retryPolicy": "NONE"})
        created = r.json["data"]
        r = self.charge(created, amount=9990, dueDate=in_days(5))
        self.assertEqual((r.status, r.json["error"]),
                         (409, "the recurrence is CREATED: a recurring charge needs it APPROVED by "
                          "the payer; nothing was done"))
        rec = self.approved(periodicity="ANNUAL")
        self.assertEqual(self.charge(rec, amount=9990, dueDate=in_days(5)).status, 200)
        # the bank refuses a second charge of the cycle, and says why
        r = self.charge(rec, amount=9990, dueDate=in_days(6))
        self.assertEqual(r.status, 400, r)
        self.assertIn("mesmo ciclo", r.json["error"])
        self.assertEqual(len(self.bank.take_violations()), 1)

    def test_a_recurrences_charges_listed_newest_first(self):
        rec = self.approved(periodicity="WEEKLY", amount=None, minimumAmount=5000)
        other = self.approved(periodicity="WEEKLY")
        made = [self.charge(rec, amount=9990, dueDate=in_days(3)),
                self.charge(rec, amount=8800, dueDate=in_days(10)),
                self.charge(other, amount=9990, dueDate=in_days(3))]
        self.assertEqual([r.status for r in made], [200, 200, 200], made)
        first, second, elsewhere = (r.json["data"] for r in made)
        plain = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 500},
                                headers=auth(self.key))
        self.assertEqual(plain.status, 200, plain)

        def listed(query):
            r = self.px.request("GET", "/v1/charges?" + query, headers=auth(self.key))
            self.assertEqual(r.status, 200, r)
            return r.json["data"]

        d = listed("recurrence=" + rec["id"])
        self.assertEqual([(c["id"], c["recurrence"], c["amount"], c["dueDate"]) for c in d["charges"]],
                         [(second["id"], rec["id"], 8800, in_days(10)),
                          (first["id"], rec["id"], 9990, in_days(3))])
        self.assertIsNone(d["nextCursor"])
        self.assertEqual(d["charges"][0], self.px.request(
            "GET", "/v1/charge/pix/" + second["id"], headers=auth(self.key)).json["data"])
        # paged, and with the status filter
        d = listed("limit=1&recurrence=" + rec["id"])
        self.assertEqual([c["id"] for c in d["charges"]], [second["id"]])
        d = listed("limit=1&recurrence=" + rec["id"] + "&cursor=" + d["nextCursor"])
        self.assertEqual([c["id"] for c in d["charges"]], [first["id"]])
        self.assertEqual([c["id"] for c in listed("recurrence=" + other["id"])["charges"]],
                         [elsewhere["id"]])
        self.assertEqual(listed("status=PAID&recurrence=" + rec["id"])["charges"], [])
        # a recurrence with no charge, one no account has: none
        self.assertEqual(listed("recurrence=" + self.approved()["id"])["charges"], [])
        self.assertEqual(listed("recurrence=rec_01M8C0C5SXF1HDHDYQV5PETZ0C")["charges"], [])
        r = self.px.request("GET", "/v1/charges?recurrence=" + first["id"], headers=auth(self.key))
        self.assertEqual((r.status, r.json["error"]),
                         (400, "recurrence: must be a recurrence's id (rec_ + ULID)"))

    def test_an_answer_that_is_not_the_charge_stores_nothing(self):
        rec = self.approved(periodicity="WEEKLY")
        before = self.px.request("GET", "/v1/charges?limit=100", headers=auth(self.key)).json["data"]
        for forge, why in (("valor", "valor.original: 1.00, not the amount asked"),
                           ("idrec", "idRec: ")):
            self.bank.forge_cobr = forge
            try:
                r = self.charge(rec, amount=9990, dueDate=in_days(3 if forge == "valor" else 10))
            finally:
                self.bank.forge_cobr = None
            self.assertEqual(r.status, 503, r)
            self.assertTrue(r.json["error"].startswith(
                "the bank's answer does not match the recurring charge (PUT /cobr): " + why), r.json)
            self.assertTrue(r.json["error"].endswith("; nothing was stored"), r.json)
        after = self.px.request("GET", "/v1/charges?limit=100", headers=auth(self.key)).json["data"]
        self.assertEqual(after["charges"][:1], before["charges"][:1])

    def test_a_connection_without_recebedor_409(self):
        rec = self.approved()
        self.px.cli("bank", "update", self.conn["id"], "--conta", "")
        try:
            r = self.charge(rec, amount=9990, dueDate=in_days(5))
            self.assertEqual((r.status, r.json["error"]), (409, (
                "a recurring charge names the receiving account at the bank (recebedor), and bank "
                "connection {0} has none: give it (pixrelay bank update {0} --conta DIGITS "
                "--tipo-conta CORRENTE|POUPANCA|PAGAMENTO [--agencia DIGITS]; "
                "docs/recurrences.md)").format(self.conn["id"])))
        finally:
            self.px.cli("bank", "update", self.conn["id"], *RCV)


class Callback(Charges):
    """The bank's /cobr callback: each attempt, retry and status once."""

    def test_a_rejected_attempt_a_retry_then_paid_each_event_once_in_order(self):
        path = unique("cobr")
        rec, c = self.new_charge(path)
        self.bank.cobr_move(c["id"], "ATIVA", {"dataLiquidacao": in_days(3), "tipo": "AGND",
                                               "status": "AGENDADA"})
        d = self.cobr_callback(c["id"])
        self.assertEqual(d["cobsr"], [{"txid": c["id"], "outcome": "taken"}])
        self.quiet_after(path, 1)
        # the payer's bank rejects the first attempt and schedules a retry
        self.bank.cobr_move(c["id"], attempt={"dataLiquidacao": in_days(3), "tipo": "AGND",
                                              "status": "REJEITADA",
                                              "rejeicao": {"codigo": "AM02", "descricao": "Saldo"}})
        self.bank.cobr_move(c["id"], attempt={"dataLiquidacao": in_days(5), "tipo": "NTAG",
                                              "status": "AGENDADA"})
        d = self.cobr_callback(c["id"])
        self.assertEqual(d["cobsr"], [{"txid": c["id"], "outcome": "taken"}])
        failed, retry = self.charge_events(path, 2)
        self.assertEqual((failed["event"], failed["data"]["status"], failed["data"]["attempt"],
                          failed["data"]["source"], failed["data"]["recurrence"]),
                         ("EVENT:CHARGE_FAILED", "PENDING",
                          {"date": in_days(3), "type": "AGND", "status": "REJEITADA", "code": "AM02"},
                          "webhook", rec["id"]))
        self.assertEqual((retry["event"], retry["data"]["status"], retry["data"]["attempt"]["date"]),
                         ("EVENT:CHARGE_RETRY_SCHEDULED", "PENDING", in_days(5)))
        # the same callback again: nothing new
        d = self.cobr_callback(c["id"])
        self.assertEqual(d["cobsr"], [{"txid": c["id"], "outcome": "duplicate"}])
        self.quiet_after(path, 3)
        self.assertEqual(self.get_charge(c["id"])["status"], "PENDING")
        # the retry pays: CONCLUIDA with its Pix
        self.bank.cobr_move(c["id"], attempt={"dataLiquidacao": in_days(5), "tipo": "NTAG",
                                              "status": "PAGA"}, paid=True)
        d = self.cobr_callback(c["id"])
        self.assertEqual(d["cobsr"], [{"txid": c["id"], "outcome": "taken"}])
        self.assertEqual(d["pix"]["accepted"], 1, d)
        paid = self.charge_events(path, 3)[2]
        self.assertEqual((paid["event"], paid["data"]["id"], paid["data"]["status"]),
                         ("EVENT:CHARGE_PAID", c["id"], "PAID"))
        d = self.cobr_callback(c["id"])
        self.assertEqual(d["cobsr"], [{"txid": c["id"], "outcome": "duplicate"}])
        self.quiet_after(path, 4)

    def test_a_refund_in_its_pix_as_a_pix_refund(self):
        path = unique("cobr")
        _, c = self.new_charge(path, retryPolicy="NONE")
        self.bank.cobr_move(c["id"], attempt={"dataLiquidacao": in_days(3), "tipo": "AGND",
                                              "status": "PAGA"}, paid=True)
        self.cobr_callback(c["id"])
        self.bank.cobr_refund(c["id"])
        d = self.cobr_callback(c["id"])
        self.assertEqual(d["cobsr"][0]["outcome"], "duplicate")
        paid, refund = self.charge_events(path, 2)
        self.assertEqual((paid["event"], refund["event"], refund["data"]["status"]),
                         ("EVENT:CHARGE_PAID", "EVENT:CHARGE_REFUND", "REFUNDED"))
        self.assertEqual(self.get_charge(c["id"])["status"], "REFUNDED")
        self.cobr_callback(c["id"])
        self.quiet_after(path, 3)

    def test_rejected_cancelled_expired(self):
        for status, closing, want, event in (
                ("REJEITADA", {"rejeicao": {"codigo": "AC05", "descricao": "x"}}, "FAILED",
                 "EVENT:CHARGE_FAILED"),
                ("CANCELADA", {"cancelamento": {"solicitante": "USUARIO_PAGADOR", "codigo": "ACCT",
                                                "descricao": "Cancelada pelo pagador"}}, "FAILED",
                 "EVENT:CHARGE_FAILED"),
                ("EXPIRADA", None, "EXPIRED", "EVENT:CHARGE_EXPIRED")):
            path = unique("cobr")
            _, c = self.new_charge(path, retryPolicy="NONE")
            self.bank.cobr_move(c["id"], status, closing=closing)
            self.cobr_callback(c["id"])
            (e,) = self.charge_events(path, 1)
            self.assertEqual((e["event"], e["data"]["status"], e["data"]["closing"]["status"]),
                             (event, want, status), status)
            self.assertEqual(self.get_charge(c["id"])["status"], want)
            self.assertEqual(self.cobr_callback(c["id"])["cobsr"][0]["outcome"], "duplicate")
            self.quiet_after(path, 2)

    def test_unknown_and_refused_items(self):
        _, c = self.new_charge(unique("cobr"))
        body = json.loads(self.bank.cobr_notification([c["id"]]))
        item = body["cobsr"][0]
        other = dict(item, txid="0" * 26)
        bad = {k: v for k, v in item.items() if k != "status"}
        r = self.px.request("POST", self.cobr_hook, raw=json.dumps({"cobsr": [other, bad]}).encode(),
                            headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["cobsr"], [{"txid": "0" * 26, "outcome": "unknown"}])
        self.assertEqual(r.json["data"]["refused"],
                         ["cobsr[1]: status: missing or not the standard's"])
        # a body that is no /cobr callback at all, one too large
        for raw, status, message in (
                (b'{"cobsr": 5}', 400, 'cobsr: missing or not an array (the body is {"cobsr": [...]})'),
                (json.dumps({"cobsr": [bad] * 1001}).encode(), 413, "cobsr: more than 1000 items")):
            r = self.px.request("POST", self.cobr_hook, raw=raw, headers={"Content-Type": "application/json"})
            self.assertEqual((r.status, r.json["error"]), (status, message))


class RetryAndCancel(Charges):
    def post(self, cid, verb, body=None):
        return self.px.request("POST", "/v1/charge/pix/%s/%s" % (cid, verb), body=body,
                               headers=auth(self.key))

    def test_a_retry_within_the_policy(self):
        path = unique("cobr")
        _, c = self.new_charge(path)
        self.bank.cobr_move(c["id"], "ATIVA", {"dataLiquidacao": in_days(3), "tipo": "AGND",
                                               "status": "REJEITADA",
                                               "rejeicao": {"codigo": "AM02", "descricao": "Saldo"}})
        for body, status, message in (
                ({}, 400, "date: required (YYYY-MM-DD, the retry's day)"),
                ({"date": "amanha"}, 400, "date: must be a date written YYYY-MM-DD"),
                ({"date": in_days(4), "x": 1}, 400, "x: unknown field; allowed: date"),
                ({"date": in_days(0)}, 400,
                 "date: must be after today and at most 7 days after the charge's due date, " + in_days(3)),
                ({"date": in_days(11)}, 400,
                 "date: must be after today and at most 7 days after the charge's due date, " + in_days(3))):
            r = self.post(c["id"], "retry", body)
            self.assertEqual((r.status, r.json["error"]), (status, message), body)
        self.assertEqual(self.bank.retry_requests, [])
        r = self.post(c["id"], "retry", {"date": in_days(4)})
        self.assertEqual((r.status, r.json["data"]["status"]), (200, "PENDING"), r)
        self.assertEqual(self.bank.retry_requests, [(c["id"], in_days(4))])
        failed, retry = self.charge_events(path, 2)
        self.assertEqual((failed["event"], failed["data"]["attempt"]["code"]), ("EVENT:CHARGE_FAILED", "AM02"))
        self.assertEqual((retry["event"], retry["data"]["attempt"]["date"], retry["data"]["source"]),
                         ("EVENT:CHARGE_RETRY_SCHEDULED", in_days(4), "request"))
        # the bank's callback after it says nothing new of them
        self.assertEqual(self.cobr_callback(c["id"])["cobsr"][0]["outcome"], "duplicate")
        self.quiet_after(path, 3)
        # a second while one is scheduled: the bank refuses, and says why
        r = self.post(c["id"], "retry", {"date": in_days(5)})
        self.assertEqual(r.status, 400, r)
        self.assertIn("SOLICITADA ou AGENDADA", r.json["error"])
        self.assertEqual(len(self.bank.take_violations()), 1)

    def test_no_retry_without_the_policy_nor_of_another_charge(self):
        _, c = self.new_charge(unique("cobr"), retryPolicy="NONE")
        r = self.post(c["id"], "retry", {"date": in_days(4)})
        self.assertEqual((r.status, r.json["error"]), (409, "the recurrence's retryPolicy is NONE: its "
                                                       "charges are not retried; nothing was done"))
        for verb, body in (("retry", {"date": in_days(4)}), ("cancel", None)):
            r = self.post(self.plain_id(), verb, body)
            self.assertEqual((r.status, r.json["error"]),
                             (409, "the charge is not a recurring charge of Pix Automatico: nothing "
                              "was done"), verb)
        r = self.post("01M8C0C5SXF1HDHDYQV5PETZ0C", "cancel")
        self.assertEqual((r.status, r.json["error"]), (404, "charge not found: 01M8C0C5SXF1HDHDYQV5PETZ0C"))

    def plain_id(self):
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 1000},
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["id"]

    def test_cancel_before_the_due_date(self):
        path = unique("cobr")
        _, c = self.new_charge(path)
        r = self.post(c["id"], "cancel")
        self.assertEqual((r.status, r.json["data"]["status"]), (200, "FAILED"), r)
        self.assertEqual(self.bank.cobr(c["id"])["status"], "CANCELADA")
        (e,) = self.charge_events(path, 1)
        self.assertEqual((e["event"], e["data"]["status"], e["data"]["closing"], e["data"]["source"]),
                         ("EVENT:CHARGE_FAILED", "FAILED", {"status": "CANCELADA", "code": "SLCR"},
                          "request"))
        self.assertEqual(self.cobr_callback(c["id"])["cobsr"][0]["outcome"], "duplicate")
        r = self.post(c["id"], "cancel")
        self.assertEqual((r.status, r.json["error"]), (409, "the charge is FAILED: nothing was done"))
        self.quiet_after(path, 2)


class Reconciliation(Charges):
    def report(self):
        r = self.px.request("GET", "/v1/bank/reconciliation?connection=" + self.conn["id"],
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["recurringCharges"]

    def reconcile(self):
        r = self.px.cli("bank", "reconcile", self.conn["id"], "--json")
        return json.loads(r.stdout)

    def test_a_missed_callback_is_recovered_and_marked(self):
        path = unique("cobr")
        _, c = self.new_charge(path)
        before = self.report()
        # the payer's bank rejects the first attempt, then pays a retry; no callback comes
        self.bank.cobr_move(c["id"], "ATIVA", {"dataLiquidacao": in_days(3), "tipo": "AGND",
                                               "status": "REJEITADA",
                                               "rejeicao": {"codigo": "AM02", "descricao": "Saldo"}})
        mark = len(self.bank.log)
        run = self.reconcile()
        self.assertGreaterEqual(run["recurringChargesAsked"], 1)
        self.assertEqual(run["recurringChargesRecovered"], 1, run)
        self.assertIn("GET /cobr/{txid}", [x.endpoint for x in self.bank.log[mark:]])
        (failed,) = self.charge_events(path, 1)
        self.assertEqual((failed["event"], failed["data"]["attempt"]["code"], failed["data"]["source"]),
                         ("EVENT:CHARGE_FAILED", "AM02", "reconciliation"))
        self.bank.cobr_move(c["id"], attempt={"dataLiquidacao": in_days(5), "tipo": "NTAG",
                                              "status": "PAGA"}, paid=True)
        run = self.reconcile()
        self.assertEqual(run["recurringChargesRecovered"], 1, run)
        paid = self.charge_events(path, 2)[1]
        self.assertEqual((paid["event"], paid["data"]["status"]), ("EVENT:CHARGE_PAID", "PAID"))
        self.assertEqual(self.get_charge(c["id"])["status"], "PAID")
        # the callbacks that come late bring nothing new, nor does the next run
        self.assertEqual(self.cobr_callback(c["id"])["cobsr"][0]["outcome"], "duplicate")
        self.assertEqual(self.reconcile()["recurringChargesRecovered"], 0)
        self.quiet_after(path, 3)
        # the day's report counts them, with cents
        after = self.report()
        diff = {k: (after[k]["count"] - before[k]["count"], after[k]["cents"] - before[k]["cents"])
                for k in after if k != "recovered"}
        self.assertEqual(diff["ATIVA"], (1, 9990))
        self.assertEqual(diff["CONCLUIDA"], (1, 9990))
        self.assertEqual(after["recovered"] - before["recovered"], 2)


class Trigger(Charges):
    def run_cli(self, *args):
        e = dict(os.environ, PIXRELAY_API_KEY=self.key)
        return subprocess.run([os.environ["PIXRELAY_BIN"], "--base-url",
                               "http://127.0.0.1:%d/v1" % self.px.port] + list(args),
                              capture_output=True, text=True, env=e, timeout=60)

    def test_trigger_cobr_through_the_callbacks_path(self):
        path = unique("cobr")
        rec, c = self.new_charge(path)
        r = self.run_cli("trigger", "cobr.failed", "--charge", c["id"], "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), {"charge": c["id"], "idRec": rec["idRec"],
                                                "connection": self.conn["id"], "outcome": "taken",
                                                "event": "EVENT:CHARGE_FAILED"})
        # the account's newest recurring charge, without --charge
        r = self.run_cli("trigger", "cobr.retry", "--date", in_days(6))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "recurring charge %s (%s) through %s: retry\nevent "
                                   "EVENT:CHARGE_RETRY_SCHEDULED\n" % (c["id"], rec["idRec"], self.conn["id"]))
        r = self.run_cli("trigger", "cobr.failed")
        self.assertIn(": duplicate, no event", r.stdout)
        r = self.run_cli("trigger", "cobr.paid", "--json")
        self.assertEqual((r.returncode, json.loads(r.stdout)["event"]), (0, "EVENT:CHARGE_PAID"), r.stderr)
        evs = self.charge_events(path, 3)
        self.assertEqual([(e["event"], e["data"]["status"]) for e in evs],
                         [("EVENT:CHARGE_FAILED", "PENDING"), ("EVENT:CHARGE_RETRY_SCHEDULED", "PENDING"),
                          ("EVENT:CHARGE_PAID", "PAID")])
        self.assertEqual(evs[1]["data"]["attempt"]["date"], in_days(6))
        self.quiet_after(path, 4)
        r = self.run_cli("trigger", "cobr.refunded")
        self.assertEqual((r.returncode, r.stderr.strip().splitlines()[-1]),
                         (2, "pixrelay trigger: unknown event 'cobr.refunded': cobr.paid, cobr.failed "
                             "or cobr.retry"))


class Recebedor(Base):
    def test_connect_update_show_and_the_api(self):
        self.assertEqual(self.conn["recebedor"],
                         {"agencia": "9708", "conta": "012682", "tipoConta": "CORRENTE"})
        out = self.px.cli("bank", "show", self.conn["id"]).stdout
        self.assertIn("recebedor    conta 012682 (CORRENTE), agencia 9708", out)
        p = self.px.cli("bank", "connect", "--env", "sandbox", "--chave", "outra@loja.example",
                        "--url-token", "--json")
        other = json.loads(p.stdout)
        self.assertIsNone(other["recebedor"])
        p = self.px.cli("bank", "update", other["id"], "--conta", "5550001", "--tipo-conta",
                        "PAGAMENTO", "--json")
        self.assertEqual(json.loads(p.stdout)["recebedor"],
                         {"agencia": None, "conta": "5550001", "tipoConta": "PAGAMENTO"})
        for args, err in (
                (["--conta", "12-3", "--tipo-conta", "CORRENTE"],
                 "--conta: must be 1 to 20 digits (the account with its check digit, as the "
                 "bank writes it)"),
                (["--conta", "123", "--tipo-conta", "POUPANÇA"],
                 "--tipo-conta: must be CORRENTE, POUPANCA or PAGAMENTO"),
                (["--conta", "123"], "--tipo-conta: must be CORRENTE, POUPANCA or PAGAMENTO"),
                (["--conta", "123", "--tipo-conta", "CORRENTE", "--agencia", "12345"],
                 "--agencia: must be 1 to 4 digits"),
                (["--agencia", "1234"], "--agencia and --tipo-conta go with --conta")):
            p = self.px.cli("bank", "update", other["id"], *args, check=False)
            self.assertEqual(p.returncode, 2, p)
            self.assertIn("pixrelay bank update: " + err, p.stderr)
        # the API: a master key of the account changes it; null removes it
        master = self.px.create_key("sandbox", master=True)["key"]
        h = auth(master, self.account)
        path = CONNS + "/" + other["id"]
        r = self.px.request("PATCH", path, body={"recebedor": {"conta": "77", "tipoConta": "POUPANCA",
                                                               "agencia": "1"}}, headers=h)
        self.assertEqual((r.status, r.json["data"]["recebedor"]),
                         (200, {"agencia": "1", "conta": "77", "tipoConta": "POUPANCA"}))
        for body, err in (({"recebedor": {"tipoConta": "POUPANCA"}},
                           "recebedor.conta: is required (1 to 20 digits)"),
                          ({"recebedor": {"conta": "77", "tipoConta": "X"}},
                           "recebedor.tipoConta: must be CORRENTE, POUPANCA or PAGAMENTO"),
                          ({"recebedor": {"conta": "77", "tipoConta": "CORRENTE", "nome": "x"}},
                           "recebedor.nome: unknown field"),
                          ({"recebedor": "77"},
                           "recebedor: must be an object {agencia, conta, tipoConta} or null")):
            r = self.px.request("PATCH", path, body=body, headers=h)
            self.assertEqual((r.status, r.json["error"]), (400, err))
        r = self.px.request("PATCH", path, body={"recebedor": None}, headers=h)
        self.assertEqual((r.status, r.json["data"]["recebedor"]), (200, None))
        self.px.cli("bank", "disconnect", other["id"])


if __name__ == "__main__":
    unittest.main()
