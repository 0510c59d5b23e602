"""Charges with a due date (docs/due-dates.md) end to end, as a merchant
sees them: POST /v1/charge/pix/create with dueDate and its terms becomes a
cobv at the bank (PUT /cobv/{txid}, each field as the standard says, the
request and the answer checked by the tests' bank against the official
schema); the bank's Pix pays it late with fine and interest, or early with
the discount, and the PAID event carries the parts; a wrong amount is
EVENT:PIX_UNMATCHED, and so are parts that take off more than the terms; it
expires at the end of its last payable day, and is still paid after (heard
late); a Pix the webhook never brought is recovered by the reconciliation with
its parts; a refund gives back what was paid; the day's report counts them;
production without API credentials answers 409.

The bank is tests/e2e/testbank.py, which computes the amount due itself
(tests/e2e/testbank.py: cobv_due, in Decimal), so the cents asserted here
come from the standard's modalidades, not from pixrelay's own computation.
"""
import datetime
import json
import os
import subprocess
import time
import unittest

import bcb
import certs
from bankcase import CREATE, BankCase, unique
from harness import (BIN, ModuleStack, auth, free_port, init_platforms, rkey, shard_of, start_stack,
                     wait_for)
from testbank import BRASILIA, TestBank

CPF = "529.982.247-25"
CONNECTIONS = "/v1/bank/connections"


def today():
    return datetime.datetime.now(BRASILIA).date()


def noon(day):
    """12:00 in Brasilia of `day`, as a datetime."""
    return datetime.datetime.combine(day, datetime.time(12), tzinfo=BRASILIA)


class Env(ModuleStack):
    shared = ("wd", "redis", "px", "sink", "account", "key", "signing", "bank", "conn", "hook",
              "prod_key")

    @classmethod
    def setup(cls):
        start_stack(cls, sink=True, port=free_port())
        accounts = init_platforms(cls.px)
        cls.account = accounts["sandbox"]
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
                       "--default", "--json")
        cls.conn = json.loads(p.stdout)
        cls.hook = cls.conn["webhookUrl"].split("127.0.0.1:%d" % cls.px.port, 1)[1] + "/pix"

    @classmethod
    def teardown(cls):
        cls.bank.close()


def tearDownModule():
    Env.stop()


class DueDates(BankCase):
    env = Env

    def tearDown(self):
        self.assertEqual(self.bank.take_violations(), [])

    def due_charge(self, path, amount=10000, **terms):
        body = {"amount": amount, "name": "Maria Souza", "document": CPF,
                "postbackUrl": self.sink.url(path)}
        body.update(terms)
        r = self.px.request("POST", CREATE, body=body, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def balance(self):
        r = self.px.request("GET", "/v1/baas/balance", headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def deliver(self, pix):
        body = {"pix": [pix]}
        bcb.validate_webhook_body(body)
        r = self.px.request("POST", self.hook, raw=json.dumps(body).encode(),
                            headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["pix"][0]

    def test_each_field_reaches_the_bank_as_the_standard_says(self):
        due = today() + datetime.timedelta(days=10)
        until = today() + datetime.timedelta(days=5)
        ch = self.due_charge(unique("fields"), amount=12345, dueDate=due.isoformat(), daysAfterDue=15,
                             fine="2.50", interest="1.00", comment="Fatura 11/2026",
                             discount={"amount": 345, "until": until.isoformat()})
        cobv = self.bank.cobv(ch["id"])
        self.assertEqual(cobv["calendario"]["dataDeVencimento"], due.isoformat())
        self.assertEqual(cobv["calendario"]["validadeAposVencimento"], 15)
        self.assertEqual(cobv["devedor"], {"cpf": "52998224725", "nome": "Maria Souza"})
        self.assertEqual(cobv["valor"], {
            "original": "123.45",
            "multa": {"modalidade": 2, "valorPerc": "2.50"},
            "juros": {"modalidade": 3, "valorPerc": "1.00"},
            "desconto": {"modalidade": 1, "descontoDataFixa": [{"data": until.isoformat(),
                                                                  "valorPerc": "3.45"}]}})
        self.assertEqual(cobv["chave"], self.bank.key)
        self.assertEqual(cobv["solicitacaoPagador"], "Fatura 11/2026")
        self.assertEqual(cobv["loc"]["tipoCob"], "cobv")
        # the bank's code is the charge's; the terms are shown on it
        self.assertEqual(ch["brCode"], cobv["pixCopiaECola"])
        self.assertEqual((ch["status"], ch["dueDate"], ch["daysAfterDue"], ch["fine"], ch["interest"],
                          ch["discount"]),
                         ("PENDING", due.isoformat(), 15, "2.50", "1.00",
                          {"amount": 345, "until": until.isoformat()}))
        # expiresAt: 00:00 in Brasilia after the last payable day
        end = datetime.datetime.combine(due + datetime.timedelta(days=16), datetime.time(0),
                                        tzinfo=BRASILIA).astimezone(datetime.timezone.utc)
        self.assertEqual(ch["expiresAt"], end.strftime("%Y-%m-%d %H:%M:%S"))
        self.assertEqual(self.get_charge(ch["id"]), ch)
        # daysAfterDue is always sent: 30 when not given
        ch = self.due_charge(unique("fields"), dueDate=due.isoformat())
        self.assertEqual(self.bank.cobv(ch["id"])["calendario"]["validadeAposVencimento"], 30)
        self.assertNotIn("multa", self.bank.cobv(ch["id"])["valor"])

    def test_refusals_name_the_field(self):
        due = (today() + datetime.timedelta(days=3)).isoformat()
        for body, msg in [
            ({"dueDate": due, "document": CPF}, "name: is required with dueDate (the payer's name)"),
            ({"dueDate": due, "name": "Maria"},
             "document: is required with dueDate (the payer's CPF or CNPJ)"),
            ({"dueDate": (today() - datetime.timedelta(days=1)).isoformat(), "name": "M", "document": CPF},
             "dueDate: must not be in the past (Brasilia time)"),
            ({"dueDate": due, "name": "M", "document": CPF, "fine": 2},
             'fine: must be a string with two decimals, e.g. "2.00" (percent of the amount)'),
            ({"dueDate": due, "name": "M", "document": CPF,
              "discount": {"amount": 10, "until": (today() + datetime.timedelta(days=4)).isoformat()}},
             "discount.until: must not be after dueDate (%s)" % due),
            ({"fine": "2.00"}, "fine: only with dueDate (a charge with a due date)"),
        ]:
            r = self.px.request("POST", CREATE, body=dict(body, amount=5000), headers=auth(self.key))
            self.assertEqual((r.status, r.json["error"]), (400, msg), body)

    def test_hostile_terms_are_refused_with_their_field(self):
        due = (today() + datetime.timedelta(days=3)).isoformat()
        base = {"amount": 5000, "dueDate": due, "name": "Maria", "document": CPF}
        DATE = "dueDate: must be a date written YYYY-MM-DD"
        DAYS = "daysAfterDue: must be an integer from 0 to 3650 (days)"
        FINE = 'fine: must be a string with two decimals, e.g. "2.00" (percent of the amount)'
        RATE = 'interest: must be a string with two decimals, e.g. "2.00" (percent a month)'
        POS = "discount.amount: must be a positive integer number of cents"
        far = (today() + datetime.timedelta(days=3651)).isoformat()
        for terms, msg in [
            ({"dueDate": 20261210}, DATE), ({"dueDate": "2026-02-29"}, DATE), ({"dueDate": "2026-13-01"}, DATE),
            ({"dueDate": "10/12/2026"}, DATE), ({"dueDate": "2026-12-1"}, DATE), ({"dueDate": ["2026-12-10"]}, DATE),
            ({"dueDate": "2" * 100000}, DATE),
            ({"dueDate": far}, "dueDate: must be at most 3650 days from today"),
            ({"dueDate": "9999-12-31"}, "dueDate: must be at most 3650 days from today"),
            ({"dueDate": "1900-01-01"}, "dueDate: must not be in the past (Brasilia time)"),
            ({"daysAfterDue": -1}, DAYS), ({"daysAfterDue": 3651}, DAYS), ({"daysAfterDue": "30"}, DAYS),
            ({"daysAfterDue": 30.5}, DAYS), ({"daysAfterDue": 1e2}, DAYS), ({"daysAfterDue": True}, DAYS),
            ({"daysAfterDue": 10 ** 30}, DAYS), ({"daysAfterDue": {}}, DAYS),
            ({"fine": "2.5"}, FINE), ({"fine": "-1.00"}, FINE), ({"fine": "1e2"}, FINE), ({"fine": 2.5}, FINE),
            ({"fine": " 2.00"}, FINE), ({"fine": "2,00"}, FINE), ({"fine": "1000.00"}, FINE), ({"fine": ""}, FINE),
            ({"fine": "+2.00"}, FINE), ({"fine": "2.00%"}, FINE),
            ({"fine": "0.00"}, "fine: must be more than 0.00 and at most 100.00 (percent of the amount)"),
            ({"fine": "100.01"}, "fine: must be more than 0.00 and at most 100.00 (percent of the amount)"),
            ({"interest": "1"}, RATE), ({"interest": 1}, RATE),
            ({"discount": 500}, 'discount: must be an object {"amount": cents, "until": "YYYY-MM-DD"}'),
            ({"discount": [500, due]}, 'discount: must be an object {"amount": cents, "until": "YYYY-MM-DD"}'),
            ({"discount": {"amount": 500, "until": due, "percent": "5.00"}},
             "discount: unknown field 'percent'; allowed: amount, until"),
            ({"discount": {"until": due}}, "discount.amount: is required (an integer number of cents)"),
            ({"discount": {"amount": "500", "until": due}}, POS), ({"discount": {"amount": 5e2, "until": due}}, POS),
            ({"discount": {"amount": 0, "until": due}}, POS), ({"discount": {"amount": -1, "until": due}}, POS),
            ({"discount": {"amount": 5000, "until": due}}, "discount.amount: must be less than amount (5000 cents)"),
            ({"discount": {"amount": 10 ** 12, "until": due}},
             "discount.amount: must be less than amount (5000 cents)"),
            ({"discount": {"amount": 500}}, "discount.until: is required (the last day of the discount)"),
            ({"discount": {"amount": 500, "until": "2026-02-29"}},
             "discount.until: must be a date written YYYY-MM-DD"),
            ({"name": "   "}, "name: is required with dueDate (the payer's name)"),
            ({"document": "111.111.111-11"}, "document: not a valid CPF or CNPJ"),
            ({"expiration": 3600}, "expiration: not with dueDate (a charge with a due date is payable until "
                                   "dueDate + daysAfterDue)"),
        ]:
            r = self.px.request("POST", CREATE, body=dict(base, **terms), headers=auth(self.key))
            self.assertEqual((r.status, r.json and r.json.get("error")), (400, msg), terms)
        # the bounds themselves are taken
        for terms in [{"daysAfterDue": 0}, {"daysAfterDue": 3650, "fine": "100.00", "interest": "100.00"},
                      {"dueDate": (today() + datetime.timedelta(days=3650)).isoformat()},
                      {"discount": {"amount": 4999, "until": today().isoformat()}}]:
            r = self.px.request("POST", CREATE, body=dict(base, **terms), headers=auth(self.key))
            self.assertEqual(r.status, 200, (terms, r))

    def test_paid_late_with_fine_and_interest(self):
        path = unique("late")
        due = today()
        ch = self.due_charge(path, amount=10000, dueDate=due.isoformat(), daysAfterDue=30, fine="2.00",
                             interest="1.00")
        # 10 days late: 2 % fine = 2.00; 1 % a month over 10 calendar days = 0.33
        pix = self.bank.pay_cobv(ch["id"], when=noon(due + datetime.timedelta(days=10)))
        self.assertEqual((pix["valor"], pix["componentesValor"]),
                         ("102.33", {"original": {"valor": "100.00"}, "multa": {"valor": "2.00"},
                                     "juros": {"valor": "0.33"}}))
        before = self.balance()
        got = self.deliver(pix)
        self.assertEqual((got["outcome"], got["charge"]), ("paid", ch["id"]))
        # the balance is credited what arrived, less the fee
        after = self.balance()
        self.assertEqual(after["balance"], before["balance"] + 10233 - ch["fee"])
        self.assertEqual((after["entries"][0]["amount"], after["entries"][0]["charge"]),
                         (10233 - ch["fee"], ch["id"]))
        [ev] = self.events(path, 1)
        self.assertEqual((ev["event"], ev["data"]["status"], ev["data"]["amount"]),
                         ("EVENT:CHARGE_PAID", "PAID", 10000))
        # the event carries the Pix with its parts, as the bank sent them
        self.assertEqual((ev["data"]["pix"]["valor"], ev["data"]["pix"]["componentesValor"]),
                         ("102.33", pix["componentesValor"]))
        # the day's report (the day paid) counts it, with its cents
        day = (due + datetime.timedelta(days=10)).isoformat()
        r = self.px.request("GET", "/v1/bank/reconciliation?connection=%s&date=%s" % (self.conn["id"], day),
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["dueDate"], {"paid": 1, "cents": 10233})
        self.assertEqual(r.json["data"]["outcomes"]["paid"], 1)

    def test_paid_early_with_the_discount_without_parts(self):
        path = unique("early")
        until = today() + datetime.timedelta(days=2)
        ch = self.due_charge(path, amount=10000, dueDate=(today() + datetime.timedelta(days=5)).isoformat(),
                             discount={"amount": 750, "until": until.isoformat()})
        # a bank that sends no componentesValor: valor within the bounds pays it
        pix = self.bank.pay_cobv(ch["id"], parts=False)
        self.assertEqual(pix["valor"], "92.50")
        self.assertNotIn("componentesValor", pix)
        self.assertEqual(self.deliver(pix)["outcome"], "paid")
        [ev] = self.events(path, 1)
        self.assertEqual((ev["event"], ev["data"]["pix"]["valor"]), ("EVENT:CHARGE_PAID", "92.50"))

    def test_paid_early_with_the_discount_in_parts(self):
        path = unique("early-parts")
        until = today() + datetime.timedelta(days=1)
        ch = self.due_charge(path, amount=20000, dueDate=until.isoformat(),
                             discount={"amount": 1999, "until": until.isoformat()})
        pix = self.bank.pay_cobv(ch["id"])
        self.assertEqual((pix["valor"], pix["componentesValor"]),
                         ("180.01", {"original": {"valor": "200.00"}, "desconto": {"valor": "19.99"}}))
        self.assertEqual(self.deliver(pix)["outcome"], "paid")
        [ev] = self.events(path, 1)
        self.assertEqual(ev["data"]["pix"]["componentesValor"]["desconto"], {"valor": "19.99"})

    def test_a_last_day_moved_past_a_weekend_is_paid_without_parts(self):
        # the standard (CobVCalendario.validadeAposVencimento): a date that falls on a weekend
        # or a holiday for the payer moves to the next business day, and the interest with it.
        # This charge's last payable day (5 days late) is taken to be a Saturday: the payer
        # pays on the Monday after, 7 days late, through a bank that sends no parts
        path = unique("moved")
        due = today()
        ch = self.due_charge(path, amount=10000, dueDate=due.isoformat(), daysAfterDue=5, fine="2.00",
                             interest="1.00")
        monday = noon(due + datetime.timedelta(days=7))
        # fine 200; interest 10000 x 1 % / 30 x 7 = 23.33
        pix = self.bank._settle(self.bank.key, "102.23", ch["id"], None, monday, None, None, componentes=None)
        got = self.deliver(pix)
        self.assertEqual((got["outcome"], got["reason"]), ("paid", None))
        [ev] = self.events(path, 1)
        self.assertEqual((ev["event"], ev["data"]["pix"]["valor"]), ("EVENT:CHARGE_PAID", "102.23"))

    def test_a_wrong_amount_is_unmatched(self):
        path = unique("wrong")
        due = today() + datetime.timedelta(days=3)
        ch = self.due_charge(path, amount=10000, dueDate=due.isoformat(), daysAfterDue=2, fine="2.00",
                             discount={"amount": 500, "until": due.isoformat()})
        # without parts: below the amount less the discount
        pix = self.bank.pay_cobv(ch["id"], valor="94.99", parts=False)
        self.assertEqual((self.deliver(pix)["outcome"], self.deliver(pix)["outcome"]), ("unmatched", "duplicate"))
        # above the amount plus the fine (no interest): 102.01
        self.bank._cobvs[ch["id"]]["status"] = "ATIVA"
        pix2 = self.bank.pay_cobv(ch["id"], valor="102.01", parts=False,
                                  when=noon(due + datetime.timedelta(days=1)))
        self.assertEqual(self.deliver(pix2)["outcome"], "unmatched")
        # parts that do not add up, or whose original is not the amount
        self.bank._cobvs[ch["id"]]["status"] = "ATIVA"
        pix3 = self.bank.pay_cobv(ch["id"], valor="95.01")
        self.assertEqual(self.deliver(pix3)["outcome"], "unmatched")
        evs = self.events(path, 3)
        self.assertEqual([(e["event"], e["data"]["reason"]) for e in evs],
                         [("EVENT:PIX_UNMATCHED", "amount_mismatch")] * 3)
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")
        # the right amount then pays it
        self.bank._cobvs[ch["id"]]["status"] = "ATIVA"
        self.assertEqual(self.deliver(self.bank.pay_cobv(ch["id"]))["outcome"], "paid")

    def refund_of(self, path, ch, pix, n):
        """Refund the charge a delivered Pix paid; the bank settles it and says so. Returns
        the refund the API answered with."""
        r = self.px.request("POST", "/v1/charge/%s/refund" % ch["id"], headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        self.bank.settle_refund(pix["endToEndId"], "D" + ch["id"])
        self.deliver(self.bank.pix(pix["endToEndId"]))
        ev = self.events(path, n)[-1]
        self.assertEqual((ev["event"], ev["data"]["status"]), ("EVENT:CHARGE_REFUND", "REFUNDED"))
        return r.json["data"]["refund"]

    def test_a_refund_gives_back_what_was_paid_not_the_amount(self):
        # paid late: the fine and the interest go back too
        path = unique("refund-late")
        ch = self.due_charge(path, amount=10000, dueDate=today().isoformat(), fine="2.00", interest="1.00")
        # (11 days late, a day no other test pays on: test_paid_late counts its day)
        pix = self.bank.pay_cobv(ch["id"], when=noon(today() + datetime.timedelta(days=11)))
        self.assertEqual(self.deliver(pix)["outcome"], "paid")
        before = self.balance()
        self.assertEqual(self.refund_of(path, ch, pix, 2)["valor"], "102.37")
        [dev] = self.bank.pix(pix["endToEndId"])["devolucoes"]
        self.assertEqual((dev["valor"], dev["status"]), ("102.37", "DEVOLVIDO"))
        self.assertEqual(self.get_charge(ch["id"])["status"], "REFUNDED")
        # the refund debits what the payment credited
        self.assertEqual(self.balance()["balance"], before["balance"] - (10237 - ch["fee"]))
        # paid early: the bank cannot give back more than it received
        path = unique("refund-early")
        until = today() + datetime.timedelta(days=1)
        ch = self.due_charge(path, amount=10000, dueDate=until.isoformat(),
                             discount={"amount": 750, "until": until.isoformat()})
        pix = self.bank.pay_cobv(ch["id"], parts=False)
        self.assertEqual(self.deliver(pix)["outcome"], "paid")
        self.assertEqual(self.refund_of(path, ch, pix, 2)["valor"], "92.50")
        self.assertEqual(self.get_charge(ch["id"])["status"], "REFUNDED")
        # a second Pix for it pays nothing, as for any charge
        self.bank._cobvs[ch["id"]]["status"] = "ATIVA"
        got = self.deliver(self.bank.pay_cobv(ch["id"], parts=False))
        self.assertEqual((got["outcome"], got["reason"]), ("unmatched", "charge_refunded"))
        self.assertEqual(self.events(path, 3)[2]["event"], "EVENT:PIX_UNMATCHED")

    def test_parts_that_take_off_more_than_the_terms_are_unmatched(self):
        path = unique("underpaid")
        due = today() + datetime.timedelta(days=3)
        ch = self.due_charge(path, amount=10000, dueDate=due.isoformat(),
                             discount={"amount": 500, "until": due.isoformat()})
        # the parts add up and their original is the amount, but the discount is not the
        # charge's (5.00), and the charge has no abatement: 1.00 is not what is owed
        for comp, valor in [({"original": {"valor": "100.00"}, "desconto": {"valor": "99.00"}}, "1.00"),
                            ({"original": {"valor": "100.00"}, "abatimento": {"valor": "50.00"}}, "50.00")]:
            self.bank._cobvs[ch["id"]]["status"] = "ATIVA"
            pix = self.bank.pay_cobv(ch["id"], valor=valor)
            self.bank._pix[pix["endToEndId"]]["componentesValor"] = comp
            pix["componentesValor"] = comp
            got = self.deliver(pix)
            self.assertEqual((got["outcome"], got["reason"]), ("unmatched", "amount_mismatch"))
        evs = self.events(path, 2)
        self.assertEqual([(e["event"], e["data"]["reason"]) for e in evs],
                         [("EVENT:PIX_UNMATCHED", "amount_mismatch")] * 2)
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")

    def test_it_expires_at_the_end_of_its_last_payable_day_and_is_paid_heard_late(self):
        path = unique("ends")
        ch = self.due_charge(path, amount=5000, dueDate=today().isoformat(), daysAfterDue=0, fine="2.00")
        # payable all of today in Brasilia: it ends at 00:00 there tomorrow, and the expiry
        # that moves every charge is told so
        end = datetime.datetime.combine(today() + datetime.timedelta(days=1), datetime.time(0),
                                        tzinfo=BRASILIA)
        end_ms = int(end.timestamp() * 1000)
        self.assertEqual(ch["expiresAt"], end.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"))
        expiry = "pixrelay:{s%d}:expiry" % shard_of(ch["id"])
        self.assertEqual(int(float(self.redis.cmd("ZSCORE", expiry, ch["id"]))), end_ms)
        self.assertEqual(int(self.redis.cmd("HGET", rkey("ch:", ch["id"]), "expires_ms")), end_ms)
        # not before: the expiry runs each second per shard; the charge stays PENDING
        time.sleep(1.5)
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")
        self.quiet_after(path, 0)
        # that moment comes (the clock cannot be moved: the charge's time is)
        past = int(time.time() * 1000) - 1000
        self.redis.cmd("HSET", rkey("ch:", ch["id"]), "expires_ms", past)
        self.redis.cmd("ZADD", expiry, past, ch["id"])
        [ev] = self.events(path, 1)
        self.assertEqual((ev["event"], ev["data"]["status"], ev["data"]["dueDate"]),
                         ("EVENT:CHARGE_EXPIRED", "EXPIRED", today().isoformat()))
        # the bank took a Pix on the last payable day, heard after: PAID, heard late
        pix = self.bank.pay_cobv(ch["id"], when=noon(today()))
        got = self.deliver(pix)
        self.assertEqual((got["outcome"], got["reason"], got["charge"]), ("paid", "heard_late", ch["id"]))
        ev = self.events(path, 2)[1]
        self.assertEqual((ev["event"], ev["data"]["status"], ev["data"]["pix"]["valor"]),
                         ("EVENT:CHARGE_PAID", "PAID", "50.00"))
        self.assertEqual(self.get_charge(ch["id"])["status"], "PAID")

    def test_a_pix_the_webhook_never_brought_is_recovered_with_its_parts(self):
        path = unique("recovered")
        due = today() + datetime.timedelta(days=1)
        ch = self.due_charge(path, amount=10000, dueDate=due.isoformat(),
                             discount={"amount": 500, "until": today().isoformat()})
        pix = self.bank.pay_cobv(ch["id"])  # settled at the bank; its webhook never comes
        self.assertEqual((pix["valor"], pix["componentesValor"]),
                         ("95.00", {"original": {"valor": "100.00"}, "desconto": {"valor": "5.00"}}))
        conn = lambda: self.px.request("GET", "%s/%s" % (CONNECTIONS, self.conn["id"]),  # noqa: E731
                                       headers=auth(self.key)).json["data"]["api"]["reconciliation"]
        before, calls = conn()["lastSuccessAt"], self.bank.calls["GET /pix"]
        r = self.px.request("POST", "%s/%s/reconcile" % (CONNECTIONS, self.conn["id"]), headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        wait_for(lambda: self.bank.calls["GET /pix"] > calls and conn()["lastSuccessAt"] != before,
                 timeout=15, what="a reconciliation")
        [ev] = self.events(path, 1)
        self.assertEqual((ev["event"], ev["data"]["id"], ev["data"]["status"]),
                         ("EVENT:CHARGE_PAID", ch["id"], "PAID"))
        got = self.get_charge(ch["id"])
        self.assertEqual((got["status"], got["pix"]["source"], got["pix"]["endToEndId"], got["pix"]["valor"],
                          got["pix"]["componentesValor"]),
                         ("PAID", "reconciliation", pix["endToEndId"], "95.00", pix["componentesValor"]))
        self.assertEqual(ev["data"]["pix"], got["pix"])
        # the webhook that comes after all is a duplicate: no second event
        self.assertEqual(self.deliver(pix)["outcome"], "duplicate")
        self.quiet_after(path, 1)

    def test_an_expired_charge_is_paid_heard_late(self):
        path = unique("expired")
        ch = self.due_charge(path, amount=5000, dueDate=today().isoformat(), daysAfterDue=0)
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-expiry" % ch["id"], headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.events(path, 1)[0]["event"], "EVENT:CHARGE_EXPIRED")
        got = self.deliver(self.bank.pay_cobv(ch["id"]))
        self.assertEqual((got["outcome"], got["reason"]), ("paid", "heard_late"))
        self.assertEqual(self.events(path, 2)[1]["event"], "EVENT:CHARGE_PAID")
        self.assertEqual(self.get_charge(ch["id"])["status"], "PAID")

    def test_trigger_cobv_paid_on_a_date_and_listen_forwards_it(self):
        path = unique("listen")
        env = dict(os.environ, PIXRELAY_API_KEY=self.key)
        base = ["--base-url", "http://127.0.0.1:%d/v1" % self.px.port]
        out = open(os.path.join(self.wd.path, "listen-cobv.out"), "w+")
        p = subprocess.Popen([BIN] + base + ["listen", "--forward-to", self.sink.url(path)],
                             stdout=out, stderr=subprocess.PIPE, text=True, env=env)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait(), out.close()))
        self.assertIn("connected", p.stderr.readline())
        day = (today() + datetime.timedelta(days=3)).isoformat()
        r = subprocess.run([BIN] + base + ["trigger", "cobv.paid", "--date", day, "--amount", "10000",
                                           "--json"], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual((got["outcome"], got["reason"]), ("paid", None))
        # 3 days late: fine 2 % = 200, interest 1 % a month for 3 days = 10
        c = self.get_charge(got["charge"])
        self.assertEqual((c["status"], c["dueDate"], c["pix"]["valor"], c["pix"]["componentesValor"]),
                         ("PAID", today().isoformat(), "102.10",
                          {"original": {"valor": "100.00"}, "multa": {"valor": "2.00"},
                           "juros": {"valor": "0.10"}}))
        fwd = self.sink.wait_count(1, path=path, webhook_id=got["event"])[0]
        self.assertEqual((fwd.json["event"], fwd.json["data"]["pix"]["componentesValor"]),
                         ("EVENT:CHARGE_PAID", c["pix"]["componentesValor"]))
        # today: the discount (5 %)
        r = subprocess.run([BIN] + base + ["trigger", "cobv.paid", "--amount", "10000"],
                           capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("9500 cents (fine 0, interest 0, discount 500)", r.stdout)
        self.assertIn(": paid", r.stdout)
        r = subprocess.run([BIN] + base + ["trigger", "cobv.paid", "--date", "2020-01-01"],
                           capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--date must be a day from today", r.stderr)

    def test_production_without_api_credentials_is_409(self):
        r = self.px.request("POST", CREATE, headers=auth(self.prod_key),
                            body={"amount": 5000, "dueDate": today().isoformat(), "name": "Maria",
                                  "document": CPF})
        self.assertEqual(r.status, 409, r)
        self.assertTrue(r.json["error"].startswith(
            "a charge with a due date is created at the bank (PUT /cobv), and the account's charging "
            "connection has no API credentials"), r.json)


if __name__ == "__main__":
    unittest.main()
