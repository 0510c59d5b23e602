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
import unittest
import urllib.parse

import certs
from bankcase import BankCase
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
