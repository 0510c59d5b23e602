"""The bank's API (docs/bank-api.md, "The bank's API: charges created at the
bank, refunds"), end to end as a merchant sees it: a bank connection given
the bank's OAuth2 client credentials and the merchant's client certificate
with `pixrelay bank connect`; then the account's charges are cobs at the
bank (PUT /cob/{txid}) and refunds of charges a bank Pix paid are the
bank's (PUT /pix/{e2e}/devolucao/D{id}).

The bank is tests/e2e/testbank.py: HTTPS with mutual TLS, tokens that expire
and can be revoked, every call checked against the Central Bank's OpenAPI
(bank.violations). Its webhook is delivered by the test itself, over plain
HTTP to the connection's URL (the notification checked by the official
schema first), as test_banks.py does.
"""
import datetime
import json
import os
import random
import re
import string
import time
import unittest
import urllib.parse

import bcb
import certs
from bankcase import CREATE, BankCase, unique
from harness import (ModuleStack, Pixrelay, acct_key, auth, check_exit, connect_bank, free_port,
                     init_platforms, new_ulid, rkey, start_stack, store_account, wait_for)
from testbank import SCOPES, TestBank

CONNECTIONS = "/v1/bank/connections"
TIMEOUT_MS = 1500          # --bank-timeout-ms
UNAVAILABLE = "the bank did not answer: retry with the same externalID"
NOT_HERE = "the account's bank connection cannot be used now (see pixrelay bank show)"
PUT_COB = "PUT /cob/{txid}"
PUT_DEV = "PUT /pix/{e2eid}/devolucao/{id}"
TOKEN = "POST /oauth/token"
CPF = "529.982.247-25"     # a valid CPF, written as people write it
ALNUM = string.ascii_letters + string.digits


class RecordingBank(TestBank):
    """The test bank, keeping every access token it hands out (so that the
    test can look for them where they must never be)."""
    __test__ = False

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.issued = []

    def _send(self, h, status, body, headers=None, problem=False):
        if isinstance(body, dict) and "access_token" in body:
            with self._lock:
                self.issued.append(body["access_token"])
        return super()._send(h, status, body, headers, problem)


def last_line(text):
    """The last line of a command's stderr (the CLI logs its Redis connection first)."""
    return text.rstrip("\n").rsplit("\n", 1)[-1]


def error_of(r):
    return r.status, r.json["error"]


# ---- one stack for the module ----

class Env(ModuleStack):
    shared = ("wd", "redis", "px", "sink", "account", "key", "signing", "bank", "conn", "hook",
              "client", "secret_file", "certs")

    @classmethod
    def setup(cls):
        # a fixed port: the webhookUrl of a connection names the running serve
        start_stack(cls, args=["--bank-timeout-ms", str(TIMEOUT_MS)], sink=True, port=free_port())
        cls.account = init_platforms(cls.px)["sandbox"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.px.cli("account", "set", "--env", "sandbox", "--postback-url", cls.sink.url("/account"))
        cls.signing = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)["signingSecret"]
        d = cls.certs = os.path.join(cls.wd.path, "certs")
        cls.merchant_ca = certs.make_ca(d, "merchant-ca", "Loja Merchant CA")
        cls.client = certs.make_client(d, cls.merchant_ca, "merchant", "loja.example")
        cls.bank = RecordingBank(client_ca=cls.merchant_ca.cert).start()
        cls.secret_file = os.path.join(d, "client-secret.txt")
        with open(cls.secret_file, "w") as f:
            f.write(cls.bank.client_secret + "\n")
        os.chmod(cls.secret_file, 0o600)
        # a charge of before the connection keeps pixrelay's own BR Code
        r = cls.px.request("POST", CREATE, body={"amount": 1234}, headers=auth(cls.key))
        assert r.status == 200, r
        cls.before = r.json["data"]
        p = cls.px.cli("bank", "connect", "--env", "sandbox", "--chave", cls.bank.key, "--url-token",
                       *cls.api_args(), "--default", "--json")
        cls.connect_stderr = p.stderr
        # serve started without the credentials key: the first charge, at once,
        # finds it (it is looked for when a connection needs it)
        cls.first = cls.px.request("POST", CREATE, body={"amount": 4321}, headers=auth(cls.key))
        cls.conn = json.loads(p.stdout)
        cls.hook = cls.hook_path(cls.conn)

    @classmethod
    def api_args(cls, **over):
        """The bank's API options of `bank connect|credentials`; over: an option
        (underscores for dashes) replaced, or left out when None."""
        opts = {"api_url": cls.bank.url, "token_url": cls.bank.token_url, "client_id": cls.bank.client_id,
                "client_secret_file": cls.secret_file, "cert": cls.client.cert, "key": cls.client.key,
                "bank_ca": cls.bank.server_ca}
        opts.update(over)
        out = []
        for k, v in opts.items():
            if v is not None:
                out += ["--" + k.replace("_", "-"), v]
        return out

    @classmethod
    def hook_path(cls, conn):
        """The path and query a bank POSTs to: webhookUrl + "/pix"."""
        u = urllib.parse.urlsplit(conn["webhookUrl"] + "/pix")
        assert (u.scheme, u.netloc) == ("http", "127.0.0.1:%d" % cls.px.port), conn["webhookUrl"]
        return u.path + ("?" + u.query if u.query else "")

    @classmethod
    def teardown(cls):
        cls.bank.close()


def tearDownModule():
    Env.stop()


class Base(BankCase):
    env = Env

    def tearDown(self):
        # whatever a test did to the bank, the next one finds it well
        self.bank.up()
        self.bank.slow(0)
        self.bank.forge_cob = None
        self.bank.require_scope = False
        self.bank.app_key = None
        self.bank.token_ttl = 3600
        self.assertEqual(self.bank.take_violations(), [])

    # ---- charges ----

    def create(self, key=None, **body):
        return self.px.request("POST", CREATE, body=body, headers=auth(key or self.key))

    def charge(self, amount, key=None, **more):
        r = self.create(key, amount=amount, **more)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def charge_ids(self, key=None):
        r = self.px.request("GET", "/v1/charges?limit=100", headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return [c["id"] for c in r.json["data"]["charges"]]

    def refund(self, cid, key=None, px=None):
        return (px or self.px).request("POST", "/v1/charge/%s/refund" % cid, headers=auth(key or self.key))

    # ---- the bank ----

    def calls_since(self, mark, background=False):
        """(endpoint, status) of the bank's calls after bank.log[:mark]; those
        of the background reconciliation (GET /pix, GET /pix/{e2eid}), which
        may run at any moment, only with `background`."""
        return [(c.endpoint, c.status) for c in self.bank.log[mark:]
                if background or not c.endpoint.startswith("GET /pix")]

    def cob_txids(self, mark=0):
        """The txids of the PUT /cob calls after bank.log[:mark], in order."""
        return [c.path.rsplit("/", 1)[1] for c in self.bank.log[mark:] if c.endpoint == PUT_COB]

    def deliver(self, *e2e, path=None):
        """The bank's webhook: POST {"pix": [the Pix as the bank has them]}
        to the connection's URL + /pix; answered 200; its data."""
        body = {"pix": [self.bank.pix(e) for e in e2e]}
        bcb.validate_webhook_body(body)
        r = self.px.request("POST", path or self.hook, raw=json.dumps(body).encode(),
                            headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def pay(self, charge, path=None):
        """The charge paid at the bank and the bank's webhook delivered: the Pix."""
        p = self.bank.pay(charge["id"])
        d = self.deliver(p["endToEndId"], path=path)
        self.assertEqual([(x["endToEndId"], x["outcome"], x["charge"]) for x in d["pix"]],
                         [(p["endToEndId"], "paid", charge["id"])])
        return p



# ---------------------------------------------------------------------------

class Connect(Base):
    def test_the_first_charge_right_after_the_credentials(self):
        r = self.env.first
        self.assertEqual(r.status, 200, r)
        cob = self.bank.cob(r.json["data"]["id"])
        self.assertIsNotNone(cob, "the first charge was not created at the bank")
        self.assertEqual(r.json["data"]["brCode"], cob["pixCopiaECola"])

    def test_connect_prints_the_connection_and_makes_the_credentials_key(self):
        key_file = os.path.join(self.px.data_dir, "credentials.key")
        self.assertIn("pixrelay bank connect: made the credentials key %s (mode 0600); every host of this "
                      "deployment needs the same file (setting credentials-key-file)" % key_file,
                      self.env.connect_stderr)
        self.assertEqual(os.stat(key_file).st_mode & 0o777, 0o600)
        with open(key_file) as f:
            self.assertRegex(f.read(), r"^[0-9a-f]{64}\n$")
        # the running serve took the key it did not have at start, when a
        # charge needed it
        self.charge(200)
        self.assertIn("no credentials key at %s: bank connections' API calls are off" % key_file, self.px.log())
        wait_for(lambda: "credentials key %s loaded: bank connections' API calls are on" % key_file
                 in self.px.log(), what="the key taken, in the log")
        c = self.conn
        self.assertEqual((c["account"], c["environment"], c["pixKey"], c["auth"]),
                         (self.account, "sandbox", self.bank.key, "url-token"))
        shown = json.loads(self.px.cli("bank", "show", c["id"], "--env", "sandbox", "--json").stdout)
        api = shown["api"]
        self.assertEqual((api["apiUrl"], api["tokenUrl"], api["clientId"]),
                         (self.bank.url, self.bank.token_url, self.bank.client_id))
        self.assertEqual(api["certificate"]["subject"], "CN=loja.example")
        self.assertRegex(api["certificate"]["sha256"], r"^[0-9a-f]{64}$")
        self.assertEqual(api["bankCa"]["subject"], "CN=Test Bank Server CA")
        # the webhook URL carries the token only in what connect printed
        self.assertNotIn("hmac=", shown["webhookUrl"])
        human = self.px.cli("bank", "show", c["id"], "--env", "sandbox").stdout
        self.assertIn("  bank API     %s (client %s, token %s)\n" % (self.bank.url, self.bank.client_id,
                                                                     self.bank.token_url), human)
        self.assertIn("  certificate  CN=loja.example, until ", human)


class Charges(Base):
    def test_a_charge_is_a_cob_at_the_bank(self):
        mark = len(self.bank.log)
        c = self.charge(2590, expiration=3600, comment="Pedido 42", name="Maria da Silva", document=CPF,
                        externalID="order-42-%d" % random.randrange(10 ** 9))
        cob = self.bank.cob(c["id"])
        self.assertIsNotNone(cob, "no cob %s at the bank" % c["id"])
        self.assertEqual(cob["txid"], c["id"])
        self.assertEqual(cob["valor"], {"original": "25.90"})
        self.assertEqual(cob["chave"], self.bank.key)
        self.assertEqual(cob["calendario"]["expiracao"], 3600)
        self.assertEqual(cob["solicitacaoPagador"], "Pedido 42")
        self.assertEqual(cob["devedor"], {"cpf": "52998224725", "nome": "Maria da Silva"})
        self.assertEqual(cob["status"], "ATIVA")
        # the charge's BR Code is the bank's (its QR image too)
        self.assertEqual(c["brCode"], cob["pixCopiaECola"])
        self.assertIn(cob["location"], c["brCode"])
        self.assertEqual(self.get_charge(c["id"])["brCode"], cob["pixCopiaECola"])
        self.assertEqual((c["status"], c["amount"], c["expiration"]), ("PENDING", 2590, 3600))
        r = self.px.request("GET", "/v1/qrcode/" + c["id"])
        self.assertEqual((r.status, r.header("Content-Type")), (200, "image/png"))
        # one cob, created: the calls the bank saw (a token the background
        # reconciliation asks for may come after it)
        self.assertEqual([x for x in self.calls_since(mark) if x[0] == PUT_COB], [(PUT_COB, 201)])
        self.assertEqual(self.bank.violations, [])

    def test_a_charge_without_payer_or_comment(self):
        c = self.charge(200)
        cob = self.bank.cob(c["id"])
        self.assertEqual(sorted(k for k in ("devedor", "solicitacaoPagador") if k in cob), [])
        self.assertEqual((cob["valor"]["original"], cob["chave"]), ("2.00", self.bank.key))
        self.assertEqual(c["brCode"], cob["pixCopiaECola"])
        # a CNPJ names a company payer; a name alone names nobody
        c = self.charge(200, name="Loja X", document="11.222.333/0001-81")
        self.assertEqual(self.bank.cob(c["id"])["devedor"], {"cnpj": "11222333000181", "nome": "Loja X"})
        c = self.charge(200, name="Loja X")
        self.assertNotIn("devedor", self.bank.cob(c["id"]))
        self.assertEqual(self.bank.violations, [])

    def test_the_same_externalID_again_is_the_same_charge(self):
        ext = "again-%d" % random.randrange(10 ** 9)
        first = self.charge(700, externalID=ext)
        puts = self.bank.count(PUT_COB)
        again = self.charge(700, externalID=ext)
        self.assertEqual(again["id"], first["id"])
        self.assertEqual(self.bank.count(PUT_COB), puts)
        r = self.create(amount=701, externalID=ext)
        self.assertEqual(r.status, 400, r)
        self.assertIn("externalID: already used by charge %s" % first["id"], r.json["error"])
        self.assertEqual(self.bank.count(PUT_COB), puts)

    def test_a_charge_of_before_the_connection_keeps_its_own_code(self):
        before = self.env.before
        self.assertIsNone(self.bank.cob(before["id"]))
        self.assertNotIn("qr.testbank.example", before["brCode"])
        self.assertEqual(self.get_charge(before["id"])["brCode"], before["brCode"])

    def test_paid_at_the_bank(self):
        path = unique("paid")
        c = self.charge(4500, postbackUrl=self.sink.url(path))
        p = self.pay(c)
        got = self.get_charge(c["id"])
        self.assertEqual(got["status"], "PAID")
        self.assertEqual((got["pix"]["endToEndId"], got["pix"]["connection"], got["pix"]["valor"]),
                         (p["endToEndId"], self.conn["id"], "45.00"))
        [ev] = self.events(path, 1)
        self.assertEqual((ev["event"], ev["data"]["id"], ev["data"]["status"]),
                         ("EVENT:CHARGE_PAID", c["id"], "PAID"))
        self.assertEqual(ev["data"]["pix"]["endToEndId"], p["endToEndId"])
        # the bank sends it again: nothing new
        d = self.deliver(p["endToEndId"])
        self.assertEqual(d["pix"][0]["outcome"], "duplicate")
        self.quiet_after(path, 1)
        self.assertEqual(self.bank.cob(c["id"])["status"], "CONCLUIDA")



class Failures(Base):
    def warm(self):
        """A charge made while the bank is well: a fresh token is at hand."""
        self.charge(200)

    def test_a_slow_bank_then_the_retry(self):
        self.warm()
        ext = "slow-%d" % random.randrange(10 ** 9)
        before = self.charge_ids()
        mark = len(self.bank.log)
        self.bank.slow(TIMEOUT_MS / 1000 + 1.5)
        t0 = time.monotonic()
        r = self.create(amount=990, externalID=ext, comment="devagar")
        took = time.monotonic() - t0
        self.assertEqual(error_of(r), (503, UNAVAILABLE))
        self.assertEqual(r.header("Retry-After"), "5")
        # the client's timeout, not the bank's pace
        self.assertGreaterEqual(took, TIMEOUT_MS / 1000 - 0.1)
        self.assertLess(took, TIMEOUT_MS / 1000 + 1.0)
        # the bank made the cob all the same, without pixrelay hearing of it
        [txid] = wait_for(lambda: self.cob_txids(mark), timeout=10, what="the slow PUT /cob")
        self.assertEqual(self.bank.cob(txid)["valor"]["original"], "9.90")
        wait_for(lambda: re.search(r"charge %s at the bank of %s: bank: Timeout was reached" % (txid, self.conn["id"]),
                                   self.px.log()), what="the timeout in the log")
        # nothing stored
        self.assertEqual(self.charge_ids(), before)
        r = self.px.request("GET", "/v1/charge/pix/" + txid, headers=auth(self.key))
        self.assertEqual(r.status, 404, r)
        # it answers again: the retry puts the same txid, and gets that cob
        self.bank.slow(0)
        r = self.create(amount=990, externalID=ext, comment="devagar")
        self.assertEqual(r.status, 200, r)
        c = r.json["data"]
        self.assertEqual(c["id"], txid)
        cob = self.bank.cob(txid)
        self.assertEqual((cob["revisao"], cob["status"]), (0, "ATIVA"))
        self.assertEqual(c["brCode"], cob["pixCopiaECola"])
        self.assertEqual(self.cob_txids(mark), [txid, txid])
        self.assertEqual(self.charge_ids(), [txid] + before)
        # and again: the charge, without the bank
        self.assertEqual(self.charge(990, externalID=ext, comment="devagar")["id"], txid)
        self.assertEqual(self.cob_txids(mark), [txid, txid])
        self.assertEqual(self.bank.violations, [])

    def test_the_bank_down(self):
        self.warm()
        for mode in ("refuse", "503", "close"):
            ext = "down-%s-%d" % (mode, random.randrange(10 ** 9))
            before = self.charge_ids()
            mark = len(self.bank.log)
            self.bank.down(mode=mode)
            r = self.create(amount=1500, externalID=ext)
            self.assertEqual(error_of(r), (503, UNAVAILABLE), mode)
            self.assertEqual(r.header("Retry-After"), "5")
            self.assertEqual(self.charge_ids(), before, mode)
            tried = self.cob_txids(mark)
            calls = self.calls_since(mark)
            if mode == "close":
                # curl sends a request again, once, when a connection it
                # reused is closed unanswered (PUT /cob is idempotent)
                self.assertIn(calls, ([(PUT_COB, None)], [(PUT_COB, None)] * 2))
                self.assertEqual(len(set(tried)), 1, tried)
                tried = tried[:1]
            else:
                self.assertEqual(calls, {"refuse": [], "503": [(PUT_COB, 503)]}[mode])
            self.assertTrue(all(self.bank.cob(t) is None for t in tried))
            self.bank.up()
            c = self.charge(1500, externalID=ext)
            self.assertEqual(self.bank.cob(c["id"])["txid"], c["id"])
            # the same txid once the bank answers, where it was tried
            self.assertEqual(self.cob_txids(mark)[-1:], [c["id"]], mode)
            self.assertEqual(set(self.cob_txids(mark)), set(tried + [c["id"]]), mode)
            self.assertEqual(self.charge_ids(), [c["id"]] + before)
        self.assertEqual(self.bank.violations, [])

    def test_the_bank_refuses(self):
        # another account, connected with a Pix key the bank's client does not hold
        account, key = store_account(self.redis, self.px, "Outra")
        p = self.px.cli("bank", "connect", "--env", "sandbox", "--account", account, "--chave", "outra@loja.example",
                        "--url-token", *self.env.api_args(), "--json")
        self.assertEqual(json.loads(p.stdout)["account"], account)
        detail = "O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor."
        mark = len(self.bank.log)
        for _ in range(2):
            r = self.create(key, amount=800, externalID="refused-1")
            status, message = error_of(r)
            # the bank's detail, and its violation's field (its reason repeats the detail)
            self.assertEqual((status, message), (400, "the bank refused the charge: HTTP 400 %s (%s)"
                                                 % (detail, message.rsplit(" (", 1)[-1][:-1])))
            self.assertRegex(message, r"\((\$\.)?[a-z.]*chave\)$")
        self.assertEqual(self.charge_ids(key), [])
        # nothing reserved: the retry started afresh, with a new txid
        tried = self.cob_txids(mark)
        self.assertEqual(len(set(tried)), 2, tried)
        # (the connection's own token, once: tokens are kept per connection;
        # its first reconciliation may run meanwhile, and fetch it)
        calls = self.calls_since(mark)
        self.assertEqual([c for c in calls if c[0] != TOKEN], [(PUT_COB, 400), (PUT_COB, 400)])
        self.assertLessEqual(calls.count((TOKEN, 200)), 1)
        got = self.bank.take_violations()
        self.assertEqual([(v.kind, v.endpoint, v.status) for v in got], [("rule", PUT_COB, 400)] * 2)


class Answers(Base):
    """The bank's answer to PUT /cob is the charge, or no charge is made."""

    def mismatches(self):
        r = self.px.request("GET", "/metrics")
        m = re.search(r'^pixrelay_bank_charges_total\{result="mismatch"\} (\d+)', r.body.decode(), re.M)
        return int(m.group(1)) if m else 0

    def test_an_answer_that_is_not_the_charge_is_refused(self):
        for kind in ("key", "amount", "location", "txid", "chave", "valor", "expiracao"):
            ext = "forged-%s-%d" % (kind, random.randrange(10 ** 9))
            before = self.charge_ids()
            seen = self.mismatches()
            mark = len(self.bank.log)
            self.bank.forge_cob = kind
            r = self.create(amount=1500, expiration=3600, externalID=ext)
            [txid] = self.cob_txids(mark)
            cob = self.bank.cob(txid)
            why = {
                "key": "pixCopiaECola: it carries a Pix key (26.01); a charge's code carries only its location",
                "amount": "pixCopiaECola: its amount (54) is 0.01, the charge's 15.00",
                "location": "pixCopiaECola: its location (26.25) qr.fraude.example/qr/v2/%s is not the cob's "
                            "loc.location %s" % (cob["location"].rsplit("/", 1)[1], cob["location"]),
                "txid": "txid: %s, not the charge's %s" % (txid[:-1] + ("A" if txid[-1] != "A" else "B"), txid),
                "chave": "chave: not the connection's Pix key",
                "valor": "valor.original: 0.01, not the charge's 15.00",
                "expiracao": "calendario.expiracao: 60, not the charge's 3600",
            }[kind]
            message = "the bank's answer does not match the charge: %s" % why
            self.assertEqual(error_of(r), (503, message + "; nothing was stored"), kind)
            self.assertEqual(r.header("Retry-After"), "5")
            # nothing stored; said in the log; counted
            self.assertEqual(self.charge_ids(), before, kind)
            r = self.px.request("GET", "/v1/charge/pix/" + txid, headers=auth(self.key))
            self.assertEqual(r.status, 404, kind)
            wait_for(lambda: "charge %s at the bank of %s: %s" % (txid, self.conn["id"], message) in self.px.log(),
                     what="the refusal in the log")
            self.assertEqual(self.mismatches(), seen + 1, kind)
            # the id stays reserved: a bank that answers right then gives that charge
            self.bank.forge_cob = None
            c = self.charge(1500, expiration=3600, externalID=ext)
            self.assertEqual(c["id"], txid, kind)
            self.assertEqual(c["brCode"], self.bank.cob(txid)["pixCopiaECola"], kind)
        self.assertEqual(self.bank.violations, [])


class Tokens(Base):
    def test_a_revoked_token_is_fetched_again_once(self):
        self.charge(200)
        issued = self.bank.tokens_issued
        self.bank.revoke_tokens()
        mark = len(self.bank.log)
        self.charge(300)
        # refused once, fetched once, sent again; or the background
        # reconciliation (GET /pix...) met the revoked token first and fetched
        # the new one, which the charge then used: one new token either way
        calls = self.calls_since(mark)
        self.assertIn(calls, ([(PUT_COB, 401), (TOKEN, 200), (PUT_COB, 201)],
                              [(TOKEN, 200), (PUT_COB, 201)]), self.calls_since(mark, True))
        self.assertEqual(self.bank.tokens_issued, issued + 1)
        # the new one serves the next call
        mark = len(self.bank.log)
        self.charge(300)
        self.assertEqual(self.calls_since(mark), [(PUT_COB, 201)])

    def test_an_expired_token_is_replaced_before_it_is_used(self):
        self.bank.token_ttl = 1
        self.bank.revoke_tokens()
        self.charge(200)               # a token of one second
        issued = self.bank.tokens_issued
        time.sleep(1.2)
        mark = len(self.bank.log)
        self.charge(300)
        # fetched anew before the call (by it, or by a reconciliation that ran
        # meanwhile): the bank never saw the old one again
        calls = self.calls_since(mark)
        self.assertIn(calls, ([(TOKEN, 200), (PUT_COB, 201)], [(PUT_COB, 201)]))
        self.assertGreater(self.bank.tokens_issued, issued)
        self.assertNotIn(401, [c[1] for c in self.calls_since(mark)])

    def test_a_bank_that_refuses_every_token(self):
        self.bank.revoke_tokens()
        self.bank.add_client(self.bank.client_id, "another secret")
        try:
            before = self.charge_ids()
            mark = len(self.bank.log)
            r = self.create(amount=400)
            self.assertEqual(error_of(r), (503, UNAVAILABLE))
            # the token it had, refused; a new one, refused: no call goes out.
            # The background reconciliation may call GET /pix meanwhile, and
            # fetch (or spoil) the token first, so only what matters is
            # asserted, in any order: at most the one PUT /cob with the old
            # token, refused; a token asked for after it, refused; nothing else
            calls = self.calls_since(mark)
            cobs = [c for c in calls if c[0] == PUT_COB]
            tokens = [c for c in calls if c[0] == TOKEN]
            self.assertIn(cobs, ([], [(PUT_COB, 401)]), calls)
            self.assertTrue(tokens and set(tokens) == {(TOKEN, 401)}, calls)
            self.assertTrue(not cobs or calls.index((PUT_COB, 401)) <
                            len(calls) - 1 - calls[::-1].index((TOKEN, 401)), calls)
            self.assertEqual([c for c in calls if c[0] not in (PUT_COB, TOKEN)
                              and not c[0].startswith("GET /pix")], [], calls)
            self.assertEqual(self.charge_ids(), before)
            wait_for(lambda: re.search(r"charge \w{26} at the bank of %s: bank token: HTTP 401 " % self.conn["id"],
                                       self.px.log()), what="the token's refusal in the log")
        finally:
            self.bank.add_client(self.bank.client_id, self.bank.client_secret)
        self.charge(400)

    def test_a_token_without_the_scope_to_create_charges(self):
        # credentials whose scopes leave out cob.write (the bank grants what
        # is asked): its 403 is the connection's fault, not the request's;
        # the new credentials get a token of their own at the next call
        scoped = " ".join(s for s in SCOPES if s != "cob.write")
        self.px.cli("bank", "credentials", self.conn["id"], "--env", "sandbox", *self.env.api_args(),
                    "--scope", scoped)
        try:
            before = self.charge_ids()
            mark = len(self.bank.log)
            for _ in range(2):
                r = self.create(amount=450, externalID="no-scope-1")
                status, message = error_of(r)
                self.assertEqual((status, r.header("Retry-After")), (503, "5"), message)
                self.assertTrue(message.startswith("the bank refused the charge: HTTP 403 "), message)
                self.assertIn("the bank does not accept pixrelay's credentials for bank connection "
                              "%s" % self.conn["id"], message)
                self.assertTrue(message.endswith("retry with the same externalID"), message)
            self.assertEqual(self.charge_ids(), before)
            # the id stays reserved: both tries asked for the same txid (the new
            # credentials' token may have been asked for by the background
            # reconciliation before the mark: it is not counted here)
            self.assertEqual([x for x in self.calls_since(mark) if x[0] != TOKEN],
                             [(PUT_COB, 403), (PUT_COB, 403)])
            self.assertEqual(self.bank.token_requests[-1]["scope"], scoped)
            tried = self.cob_txids(mark)
            self.assertEqual(len(set(tried)), 1, tried)
            wait_for(lambda: re.search(r"charge %s at the bank of %s: the bank refused the charge: "
                                       r"HTTP 403 " % (tried[0], self.conn["id"]), self.px.log()),
                     what="the refusal in the log")
        finally:
            self.px.cli("bank", "credentials", self.conn["id"], "--env", "sandbox", *self.env.api_args())
        # fixed: the retry makes that very charge
        c = self.charge(450, externalID="no-scope-1")
        self.assertEqual(c["id"], tried[0])


class Refunds(Base):
    def test_a_refund_goes_to_the_bank(self):
        path = unique("refund")
        c = self.charge(3300, postbackUrl=self.sink.url(path))
        p = self.pay(c)
        e2e = p["endToEndId"]
        self.assertEqual(self.events(path, 1)[0]["event"], "EVENT:CHARGE_PAID")
        rid = "D" + c["id"]
        mark = len(self.bank.log)
        r = self.refund(c["id"])
        self.assertEqual(r.status, 202, r)
        d = r.json["data"]
        self.assertEqual((d["charge"]["id"], d["charge"]["status"]), (c["id"], "PAID"))
        self.assertEqual(d["refund"], {"id": rid, "status": "EM_PROCESSAMENTO", "valor": "33.00"})
        self.assertEqual(self.calls_since(mark), [(PUT_DEV, 201)])
        self.assertEqual(self.bank.log[-1].path, "/api/v2/pix/%s/devolucao/%s" % (e2e, rid))
        [dev] = self.bank.pix(e2e)["devolucoes"]
        self.assertEqual((dev["id"], dev["valor"], dev["status"]), (rid, "33.00", "EM_PROCESSAMENTO"))
        self.assertEqual(self.get_charge(c["id"])["status"], "PAID")
        # asked again: the same refund id, the bank refunds once
        r = self.refund(c["id"])
        self.assertEqual((r.status, r.json["data"]["refund"]), (202, d["refund"]))
        self.assertEqual(len(self.bank.pix(e2e)["devolucoes"]), 1)
        self.assertEqual(self.calls_since(mark), [(PUT_DEV, 201), (PUT_DEV, 201)])
        # the bank reports it under way: news, the charge unchanged
        self.deliver(e2e)
        self.assertEqual(self.events(path, 2)[1]["event"], "EVENT:PIX_REFUND")
        self.assertEqual(self.get_charge(c["id"])["status"], "PAID")
        # then done: the charge REFUNDED, with its one event
        self.bank.settle_refund(e2e, rid)
        self.deliver(e2e)
        ev = self.events(path, 3)[2]
        self.assertEqual((ev["event"], ev["data"]["id"], ev["data"]["status"]),
                         ("EVENT:CHARGE_REFUND", c["id"], "REFUNDED"))
        self.assertEqual(self.get_charge(c["id"])["status"], "REFUNDED")
        self.deliver(e2e)
        self.quiet_after(path, 3)
        # a REFUNDED charge is not asked of the bank again
        mark = len(self.bank.log)
        r = self.refund(c["id"])
        self.assertEqual(error_of(r), (400, "charge is REFUNDED; only a PAID charge can be refunded"))
        self.assertEqual(self.calls_since(mark), [])
        self.assertEqual(len(self.bank.pix(e2e)["devolucoes"]), 1)
        self.assertEqual(self.bank.violations, [])

    def test_a_refund_while_the_bank_is_down(self):
        c = self.charge(2100)
        p = self.pay(c)
        self.bank.down(mode="503")
        r = self.refund(c["id"])
        self.assertEqual(error_of(r), (503, "the bank did not answer: ask for the refund again (the same refund "
                                            "id is sent)"))
        self.assertEqual(r.header("Retry-After"), "5")
        self.assertNotIn("devolucoes", self.bank.pix(p["endToEndId"]))
        self.assertEqual(self.get_charge(c["id"])["status"], "PAID")
        self.bank.up()
        r = self.refund(c["id"])
        self.assertEqual((r.status, r.json["data"]["refund"]["id"]), (202, "D" + c["id"]))

    def test_paid_through_a_connection_without_api_credentials(self):
        r = self.px.request("POST", CONNECTIONS, body={"pixKey": "sem-api@loja.example", "auth": "url-token"},
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        other = r.json["data"]
        self.addCleanup(self.px.request, "POST", "%s/%s/disconnect" % (CONNECTIONS, other["id"]),
                        headers=auth(self.key))
        self.assertIsNone(other["api"])
        c = self.charge(1700)
        pix = {"endToEndId": "E12345678" + time.strftime("%Y%m%d%H%M", time.gmtime())
               + "".join(random.choice(ALNUM) for _ in range(11)),
               "txid": c["id"], "valor": "17.00",
               "horario": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")}
        body = {"pix": [pix]}
        bcb.validate_webhook_body(body)
        r = self.px.request("POST", self.env.hook_path(other), body=body)
        self.assertEqual((r.status, r.json["data"]["pix"][0]["outcome"]), (200, "paid"), r)
        mark = len(self.bank.log)
        r = self.refund(c["id"])
        self.assertEqual(error_of(r), (409, "the charge was paid through bank connection %s, which has no API "
                                            "credentials: refund it at the bank; its report makes the charge "
                                            "REFUNDED" % other["id"]))
        self.assertEqual(self.calls_since(mark), [])
        self.assertEqual(self.get_charge(c["id"])["status"], "PAID")



class AsBanksAre(Base):
    """Banks that bend the standard: OAuth2 scopes, an application key on
    every call, credentials tried before they are kept."""

    SCOPES = "cob.write cobv.write pix.read pix.write webhook.read webhook.write"

    def gateway_account(self, *extras):
        """A new account connected to the bank with the API options and
        `extras`: (its key, the connection)."""
        account, key = store_account(self.redis, self.px, "Gateway")
        p = self.px.cli("bank", "connect", "--env", "sandbox", "--account", account, "--chave", self.bank.key,
                        "--url-token", *self.env.api_args(), *extras, "--json")
        conn = json.loads(p.stdout)
        self.addCleanup(self.px.cli, "bank", "disconnect", conn["id"], "--env", "sandbox")
        return key, conn

    def test_the_scopes_asked_for(self):
        # a bank that wants them: pixrelay asks for those of its calls
        self.bank.require_scope = True
        self.bank.revoke_tokens()
        mark = len(self.bank.token_requests)
        c = self.charge(300)
        self.assertIsNotNone(self.bank.cob(c["id"]))
        asked = [t["scope"] for t in self.bank.token_requests[mark:]]
        self.assertTrue(asked)
        self.assertEqual(set(asked), {self.SCOPES})
        shown = json.loads(self.px.cli("bank", "show", self.conn["id"], "--env", "sandbox", "--json").stdout)
        self.assertEqual(shown["api"]["scope"], self.SCOPES)
        # --scope: those, and a charge without cob.write is the connection's fault
        key, conn = self.gateway_account("--scope", "pix.read   pix.write")
        self.assertEqual(conn["api"]["scope"], "pix.read pix.write")
        self.assertEqual(self.bank.token_requests[-1]["scope"], "pix.read pix.write")
        r = self.create(key, amount=300)
        self.assertEqual(r.status, 503, r)
        self.assertIn("the token lacks the scope cob.write", r.json["error"])
        # --scope "": none asked, the bank's default (refused by this bank)
        self.bank.require_scope = False
        key, conn = self.gateway_account("--scope", "")
        self.assertIsNone(conn["api"]["scope"])
        self.assertIsNone(self.bank.token_requests[-1]["scope"])
        self.assertIsNotNone(self.bank.cob(self.charge(300, key=key)["id"]))

    def test_an_application_key_on_every_call(self):
        secret = "appkey%d" % random.randrange(10 ** 12)
        self.bank.app_key = ("query", "gw-dev-app-key", secret)
        key, conn = self.gateway_account("--api-query", "gw-dev-app-key=" + secret)
        self.assertEqual((conn["api"]["extraQuery"], conn["api"]["extraHeaders"]), (["gw-dev-app-key"], []))
        mark = len(self.bank.log)
        c = self.charge(500, key=key)
        self.assertIsNotNone(self.bank.cob(c["id"]))
        [put] = [x for x in self.bank.log[mark:] if x.endpoint == PUT_COB]
        self.assertEqual(put.path, "/api/v2/cob/%s?gw-dev-app-key=%s" % (c["id"], secret))
        # the reconciliation's GET /pix keeps its own query, the key after it
        p = self.px.cli("bank", "reconcile", conn["id"], "--env", "sandbox", "--json")
        self.assertEqual(json.loads(p.stdout)["connection"], conn["id"])
        get = [x for x in self.bank.log if x.endpoint == "GET /pix"][-1]
        self.assertTrue(get.path.startswith("/api/v2/pix?inicio="), get.path)
        self.assertTrue(get.path.endswith("&gw-dev-app-key=" + secret), get.path)
        # a refund too
        self.pay(c, path=self.env.hook_path(conn))
        r = self.refund(c["id"], key=key)
        self.assertEqual(r.status, 202, r)
        dev = [x for x in self.bank.log if x.endpoint == PUT_DEV][-1]
        self.assertEqual(dev.path, "/api/v2/pix/%s/devolucao/D%s?gw-dev-app-key=%s"
                         % (dev.path.split("/")[4], c["id"], secret))
        # never on the token's call
        for t in self.bank.token_requests:
            self.assertNotIn(secret, t["target"] + json.dumps(t["headers"]))
        # a connection without it is refused by the bank's gateway
        r = self.create(amount=600)
        self.assertEqual(r.status, 503, r)
        self.assertTrue(r.json["error"].startswith("the bank refused the charge: HTTP 403 the application key "
                                                   "(query gw-dev-app-key) is missing or wrong; the bank does not "
                                                   "accept pixrelay's credentials for bank connection %s"
                                                   % self.conn["id"]), r.json["error"])
        # as a header instead: given with the credentials, which replace the query
        self.bank.app_key = ("header", "X-Developer-Application-Key", secret)
        p = self.px.cli("bank", "credentials", conn["id"], "--env", "sandbox", *self.env.api_args(),
                        "--api-header", "X-Developer-Application-Key: " + secret, "--json")
        api = json.loads(p.stdout)["api"]
        self.assertEqual((api["extraHeaders"], api["extraQuery"]), (["X-Developer-Application-Key"], []))
        c = self.charge(700, key=key)
        self.assertIsNotNone(self.bank.cob(c["id"]))
        put = [x for x in self.bank.log if x.endpoint == PUT_COB][-1]
        self.assertEqual(put.path, "/api/v2/cob/" + c["id"])
        for t in self.bank.token_requests:
            self.assertNotIn(secret, t["target"] + json.dumps(t["headers"]))
        # shown by name, never by value
        human = self.px.cli("bank", "show", conn["id"], "--env", "sandbox").stdout
        self.assertIn("  API headers  X-Developer-Application-Key (values sealed)\n", human)
        self.assertIn("  scope        %s\n" % self.SCOPES, human)
        shown = self.px.cli("bank", "show", conn["id"], "--env", "sandbox", "--json").stdout
        self.assertNotIn(secret, shown + human + self.px.log())
        dump = self.redis.cmd("HGETALL", rkey("bank:", conn["id"]))
        self.assertIn("X-Developer-Application-Key", " ".join(dump))
        self.assertNotIn(secret, " ".join(dump))

    def test_update_changes_the_scopes_and_extras_kept(self):
        # a bank that starts wanting an application key: bank update gives it
        # to the credentials kept, without giving them whole again
        secret = "appkey%d" % random.randrange(10 ** 12)
        key, conn = self.gateway_account()
        self.bank.app_key = ("query", "gw-dev-app-key", secret)
        self.addCleanup(setattr, self.bank, "app_key", None)
        self.assertEqual(self.create(key, amount=300).status, 503)
        p = self.px.cli("bank", "update", conn["id"], "--api-query", "gw-dev-app-key=" + secret,
                        "--scope", "cob.write pix.read", "--json")
        api = json.loads(p.stdout)["api"]
        self.assertEqual((api["extraQuery"], api["extraHeaders"], api["scope"]),
                         (["gw-dev-app-key"], [], "cob.write pix.read"))
        self.assertEqual(p.stderr, "")
        self.assertIsNotNone(self.bank.cob(self.charge(400, key=key)["id"]))
        self.assertEqual(self.bank.token_requests[-1]["scope"], "cob.write pix.read")
        # an empty one alone removes them; with others it is refused
        r = self.px.cli("bank", "update", conn["id"], "--api-query", "", "--api-query", "a=b",
                        check=False)
        self.assertEqual((r.returncode, r.stderr),
                         (2, "pixrelay bank update: an empty --api-query removes them: give it alone\n"))
        # (the bank stops wanting the key once the key is gone: the background
        # reconciliation may call between the two, and the key then is a
        # parameter the standard's GET /pix does not have)
        p = self.px.cli("bank", "update", conn["id"], "--api-query", "", "--json")
        self.assertEqual(json.loads(p.stdout)["api"]["extraQuery"], [])
        self.bank.app_key = None
        # new credentials are given whole, with bank credentials
        r = self.px.cli("bank", "update", conn["id"], "--api-url", self.bank.url, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("new credentials are given whole: pixrelay bank credentials ID", r.stderr)

    def test_an_account_of_the_previous_version_keeps_charging_at_its_bank(self):
        # as the previous version left it: two connections, none marked, the
        # record naming the one with API credentials (bank_api), no charge_via
        key, api_conn = self.gateway_account()
        account = api_conn["account"]
        other = connect_bank(self.px, "sandbox", account, chave="outra-%d@loja.example" % random.randrange(10 ** 9))
        self.addCleanup(self.px.cli, "bank", "disconnect", other["id"], "--env", "sandbox")
        for c in (api_conn, other):
            self.redis.cmd("HDEL", rkey("bank:", c["id"]), "default")
        self.redis.cmd("HDEL", acct_key("sandbox", account), "charge_via", "charge_key")
        self.redis.cmd("HSET", acct_key("sandbox", account), "bank_api", api_conn["id"])
        # its charges keep going where they went: that one is now its default
        c = self.charge(300, key=key)
        self.assertIsNotNone(self.bank.cob(c["id"]))
        shown = json.loads(self.px.cli("bank", "show", api_conn["id"], "--env", "sandbox", "--json").stdout)
        self.assertTrue(shown["default"])

    def test_credentials_the_bank_refuses_are_not_kept(self):
        cmd = "pixrelay bank credentials: "
        refused = ("the bank gave no token for these credentials: bank token: HTTP 401 invalid_client: unknown "
                   "client or wrong secret")
        r = self.px.cli("bank", "credentials", self.conn["id"], "--env", "sandbox",
                        *self.env.api_args(client_id="someone-else"), check=False)
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertEqual(r.stderr, cmd + refused + "; nothing was kept (--no-check keeps them untried)\n")
        shown = json.loads(self.px.cli("bank", "show", self.conn["id"], "--env", "sandbox", "--json").stdout)
        self.assertEqual(shown["api"]["clientId"], self.bank.client_id)
        # a scope the bank does not grant
        r = self.px.cli("bank", "credentials", self.conn["id"], "--env", "sandbox", *self.env.api_args(),
                        "--scope", "cob.write pix.admin", check=False)
        self.assertEqual((r.returncode, r.stderr),
                         (1, cmd + "the bank gave no token for these credentials: bank token: HTTP 400 "
                             "invalid_scope: not granted to this client: pix.admin; nothing was kept (--no-check "
                             "keeps them untried)\n"))
        self.assertEqual([v.endpoint for v in self.bank.take_violations()], [TOKEN])
        # connect: nothing is connected
        r = self.px.cli("bank", "connect", "--env", "sandbox", "--chave", "untried@loja.example", "--url-token",
                        *self.env.api_args(client_id="someone-else"), check=False)
        self.assertEqual((r.returncode, r.stderr),
                         (1, "pixrelay bank connect: " + refused + "; nothing was connected (--no-check keeps "
                             "them untried)\n"))
        listed = json.loads(self.px.cli("bank", "list", "--env", "sandbox", "--json").stdout)["connections"]
        self.assertNotIn("untried@loja.example", [c["pixKey"] for c in listed])
        # --no-check keeps them untried (the bank is not called)
        mark = len(self.bank.log)
        account, _ = store_account(self.redis, self.px, "Untried")
        p = self.px.cli("bank", "connect", "--env", "sandbox", "--account", account, "--chave",
                        "untried@loja.example", "--url-token", *self.env.api_args(client_id="someone-else"),
                        "--no-check", "--json")
        self.assertEqual(json.loads(p.stdout)["api"]["clientId"], "someone-else")
        self.assertEqual(self.calls_since(mark), [])


class OtherHosts(Base):
    """Processes of the same deployment (one Redis), each with its own data
    dir: the credentials key is a file of each host."""

    def start_host(self, name, key_hex=None, mode=0o600):
        """A pixrelay on the shared Redis with a data dir of its own, holding
        a credentials key of key_hex (None: none)."""
        data = os.path.join(self.wd.path, name + "-data")
        os.makedirs(data, mode=0o700, exist_ok=True)
        if key_hex is not None:
            path = os.path.join(data, "credentials.key")
            with open(path, "w") as f:
                f.write(key_hex + "\n")
            os.chmod(path, mode)
        px = Pixrelay(self.wd.path, self.redis, args=["--bank-timeout-ms", str(TIMEOUT_MS)], name=name)
        return px, data

    def assert_unusable(self, px, why):
        """Charges and refunds that need the bank answer 503 on px, store and
        send nothing, and say why in its log and in `bank show`."""
        paid = self.charge(2600)
        self.pay(paid)
        before = self.charge_ids()
        mark = len(self.bank.log)
        r = px.request("POST", CREATE, body={"amount": 2700, "externalID": "elsewhere-%d" % random.randrange(10 ** 9)},
                       headers=auth(self.key))
        self.assertEqual(error_of(r), (503, NOT_HERE))
        self.assertEqual(r.header("Retry-After"), "5")
        r = px.request("POST", "/v1/charge/%s/refund" % paid["id"], headers=auth(self.key))
        self.assertEqual(error_of(r), (503, "the charge's bank connection cannot be used now (see pixrelay bank "
                                            "show)"))
        self.assertEqual(r.header("Retry-After"), "5")
        self.assertEqual(self.calls_since(mark), [])
        self.assertEqual(self.charge_ids(), before)
        self.assertEqual(self.get_charge(paid["id"])["status"], "PAID")
        wait_for(lambda: "charges of account %s: bank connection: %s" % (self.account, why) in px.log(),
                 what="why, in the log")
        wait_for(lambda: "refund of charge %s: bank connection %s: %s" % (paid["id"], self.conn["id"], why)
                 in px.log(), what="why, in the log")
        # everything else is served
        self.assertEqual(px.request("GET", "/v1/charge/pix/" + paid["id"], headers=auth(self.key)).status, 200)

    def show_here(self, px):
        return px.cli("bank", "show", self.conn["id"], "--env", "sandbox", "--json")

    def test_a_host_without_the_credentials_key(self):
        px, data = self.start_host("nokey")
        px.start()
        try:
            px.wait_ready()
            self.assert_unusable(px, "no credentials key: set credentials-key-file (docs/banks.md)")
            shown = self.show_here(px)
            self.assertEqual(json.loads(shown.stdout)["id"], self.conn["id"])
            self.assertEqual(last_line(shown.stderr), "pixrelay bank show: %s: its API credentials cannot be used "
                             "on this host: no credentials key at %s/credentials.key (credentials-key-file)"
                             % (self.conn["id"], data))
            # the operator copies the key file: the running process takes it
            with open(os.path.join(self.px.data_dir, "credentials.key")) as f:
                key_hex = f.read().strip()
            path = os.path.join(data, "credentials.key")
            with open(path, "w") as f:
                f.write(key_hex + "\n")
            os.chmod(path, 0o600)
            # taken when a charge needs it (looked for at most once a second)
            r = wait_for(lambda: (lambda r: r if r.status == 200 else None)(
                px.request("POST", CREATE, body={"amount": 2800}, headers=auth(self.key))),
                interval=0.2, what="a charge once the key is there")
            wait_for(lambda: "credentials key %s loaded" % path in px.log(), what="the key taken, in the log")
            self.assertEqual(self.bank.cob(r.json["data"]["id"])["valor"]["original"], "28.00")
            self.assertNotIn("cannot be used", self.show_here(px).stderr)
            check_exit(px.stop(), px.log())
        finally:
            px.stop()

    def test_a_host_with_another_key(self):
        px, data = self.start_host("otherkey", "%064x" % random.getrandbits(256))
        px.start()
        try:
            px.wait_ready()
            why = "the credentials key does not open this connection's secrets (another key, or altered)"
            self.assert_unusable(px, why)
            shown = self.show_here(px)
            self.assertEqual(last_line(shown.stderr), "pixrelay bank show: %s: its API credentials cannot be used "
                             "on this host: %s" % (self.conn["id"], why))
            check_exit(px.stop(), px.log())
        finally:
            px.stop()
        # the host that made the key opens them
        self.assertNotIn("cannot be used", self.show_here(self.px).stderr)

    def test_a_key_file_others_may_read_stops_the_start(self):
        px, data = self.start_host("readable", "%064x" % random.getrandbits(256), mode=0o644)
        with self.assertRaises(AssertionError):
            px.start()
        self.assertIn("credentials key %s/credentials.key: mode 644 lets others read it; chmod 600 it" % data,
                      px.log())
        px.stop()
        shown = self.show_here(px)
        self.assertEqual(last_line(shown.stderr), "pixrelay bank show: %s: its API credentials cannot be used on "
                         "this host: credentials key %s/credentials.key: mode 644 lets others read it; chmod 600 it"
                         % (self.conn["id"], data))


class Secrets(Base):
    def secrets(self):
        """What must never be shown: the client secret, each line of the
        private key's PEM, every access token the bank issued."""
        with open(self.client.key) as f:
            key_lines = [line for line in f.read().splitlines() if len(line) >= 16 and "PRIVATE KEY" not in line]
        self.assertTrue(key_lines)
        self.assertTrue(self.bank.issued)
        return [self.bank.client_secret] + key_lines + list(self.bank.issued)

    def assert_clean(self, where, text):
        for s in self.secrets():
            self.assertNotIn(s, text, "a secret in " + where)
            self.assertNotIn(json.dumps(s)[1:-1], text, "a secret in " + where)

    def api_text(self, path):
        r = self.px.request("GET", path, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.body.decode()

    def test_secrets_are_never_shown(self):
        self.charge(200)            # a token was used
        cid = self.conn["id"]
        outputs = {
            "bank show --json": self.px.cli("bank", "show", cid, "--env", "sandbox", "--json").stdout,
            "bank show": self.px.cli("bank", "show", cid, "--env", "sandbox").stdout,
            "bank list --json": self.px.cli("bank", "list", "--env", "sandbox", "--json").stdout,
            "bank list": self.px.cli("bank", "list", "--env", "sandbox").stdout,
            "bank credentials --json": self.px.cli("bank", "credentials", cid, "--env", "sandbox",
                                                   *self.env.api_args(), "--json").stdout,
            "GET connection": self.api_text("%s/%s" % (CONNECTIONS, cid)),
            "GET connections": self.api_text(CONNECTIONS),
            "GET notifications": self.api_text("%s/%s/notifications" % (CONNECTIONS, cid)),
        }
        listed = json.loads(outputs["bank list --json"])["connections"]
        self.assertIn(cid, [c["id"] for c in listed])
        self.assertEqual(json.loads(outputs["GET connection"])["data"]["api"]["clientId"], self.bank.client_id)
        # `bank credentials` again: the same connection, the calls go on
        self.assertEqual(json.loads(outputs["bank credentials --json"])["api"]["apiUrl"], self.bank.url)
        self.charge(200)
        for where, text in outputs.items():
            self.assert_clean(where, text)
        self.assert_clean("pixrelay's log", self.px.log())
        self.assert_clean("connect's output", json.dumps(self.conn) + self.env.connect_stderr)
        # Redis's AOF holds them sealed only
        aof = ""
        for root, _, files in os.walk(self.redis.dir):
            for name in files:
                if os.path.isfile(os.path.join(root, name)) and not name.endswith(".sock"):
                    with open(os.path.join(root, name), "rb") as f:
                        aof += f.read().decode("latin-1")
        self.assertIn(self.bank.url, aof)
        self.assertIn(cid, aof)
        for s in [self.bank.client_secret] + self.secrets()[1:]:
            self.assertNotIn(s, aof)


class CliInput(Base):
    def credentials(self, *args, **over):
        return self.px.cli("bank", "credentials", self.conn["id"], "--env", "sandbox", *self.env.api_args(**over),
                           *args, check=False)

    def test_bad_credentials_are_refused_with_the_reason(self):
        d = self.certs
        stranger = certs.make_client(d, certs.make_ca(d, "stranger-ca"), "stranger")
        encrypted = os.path.join(d, "encrypted.key")
        certs._run("pkey", "-in", self.client.key, "-aes256", "-passout", "pass:secret", "-out", encrypted)
        empty = os.path.join(d, "empty-secret.txt")
        open(empty, "w").close()
        missing = os.path.join(d, "no-such-file")
        cmd = "pixrelay bank credentials: "
        for over, msg in [
                ({"key": stranger.key}, "key: not the private key of the certificate"),
                ({"key": encrypted}, "key: not a PEM private key without a passphrase"),
                ({"cert": self.client.key}, "cert: not a PEM certificate"),
                ({"api_url": "http://127.0.0.1:%d/api/v2" % self.bank.port},
                 "api-url: must be an https:// URL of at most 512 bytes"),
                ({"token_url": "ftp://bank.example/token"}, "token-url: must be an https:// URL of at most 512 bytes"),
                ({"api_url": "https://bank.example/a b"},
                 "api-url: must be an URL without spaces, fragments or non-ASCII characters"),
                ({"client_secret_file": missing}, "--client-secret-file %s: No such file or directory" % missing),
                ({"client_secret_file": empty}, "client-secret: must be 1 to 256 characters"),
                ({"bank_ca": self.client.key}, "bank-ca: "),
                ({"key": None}, "the bank's API needs --api-url, --token-url, --client-id, --client-secret-file, "
                                "--cert and --key (--bank-ca, --scope, --api-header, --api-query and --no-check "
                                "optional)")]:
            r = self.credentials(**over)
            self.assertEqual(r.returncode, 2, (over, r.stderr))
            self.assertTrue(r.stderr.startswith(cmd + msg), (over, r.stderr))
            self.assertEqual(r.stdout, "")
        for args, msg in [
                (("--api-header", "Authorization: Bearer x"),
                 "api-header: Authorization is pixrelay's to send, not an extra"),
                (("--api-header", "X-Key: a\rb"), "api-header: X-Key: its value must be 1 to 1024 printable ASCII "
                                                   "characters"),
                (("--api-query", "fim=1"), "api-query: fim is a parameter of the standard's calls, not an extra"),
                (("--api-query", "k=1", "--api-query", "k=2"), "api-query: k is given twice"),
                (("--scope", 'cob.write "x"'), "scope: OAuth2 scopes are printable ASCII without quotes or "
                                               "backslashes, separated by spaces")]:
            r = self.credentials(*args)
            self.assertEqual((r.returncode, r.stdout), (2, ""), (args, r.stderr))
            self.assertEqual(r.stderr, cmd + msg + "\n", args)
        r = self.px.cli("bank", "list", "--env", "sandbox", "--scope", "cob.write", check=False)
        self.assertEqual((r.returncode, r.stderr),
                         (2, "pixrelay bank list: the bank's API options are for connect and credentials\n"))
        r = self.px.cli("bank", "list", "--env", "sandbox", "--api-url", self.bank.url, check=False)
        self.assertEqual((r.returncode, r.stderr),
                         (2, "pixrelay bank list: the bank's API options are for connect and credentials\n"))
        # an unknown connection: checked, then not found
        r = self.px.cli("bank", "credentials", "bnk_" + new_ulid(), "--env", "sandbox", *self.env.api_args(),
                        check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("pixrelay bank credentials: no connection bnk_", r.stderr)
        # the connection kept what it had: its charges still go to the bank
        shown = json.loads(self.px.cli("bank", "show", self.conn["id"], "--env", "sandbox", "--json").stdout)
        self.assertEqual(shown["api"]["apiUrl"], self.bank.url)
        c = self.charge(200)
        self.assertIsNotNone(self.bank.cob(c["id"]))
        # bad input on connect connects nothing
        r = self.px.cli("bank", "connect", "--env", "sandbox", "--chave", "nada@loja.example", "--url-token",
                        *self.env.api_args(api_url="http://bank.example"), check=False)
        self.assertEqual((r.returncode, r.stderr),
                         (2, "pixrelay bank connect: api-url: must be an https:// URL of at most 512 bytes\n"))
        listed = json.loads(self.px.cli("bank", "list", "--env", "sandbox", "--json").stdout)["connections"]
        self.assertNotIn("nada@loja.example", [c["pixKey"] for c in listed])


if __name__ == "__main__":
    unittest.main(verbosity=2)
