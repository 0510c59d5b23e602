"""Banks (docs/banks.md): a bank's API Pix webhook end to end, as a merchant
sees it. Connections over POST /v1/bank/connections, the bank's calls to
{webhookUrl}/pix authenticated by URL token or by the client certificate the
proxy forwards on the bank door (bank-listen), each Pix matched to its charge (or reported), each
refund taken once, the events at a real sink, signed like every postback.

Every notification a test means to be valid is first checked against the
Central Bank's own schema (bcb.validate_webhook_body, API Pix 2.9.0), so the
tests speak the standard; the deliberately malformed ones are shown to be
refused by that schema too, or, where the schema is looser than pixrelay
(its unanchored valor pattern), shown to pass it.
"""
import base64
import datetime
import hashlib
import http.client
import json
import math
import os
import random
import re
import string
import subprocess
import threading
import time
import unittest
import urllib.parse

import bcb
import certs
from bankcase import CREATE, BankCase, unique, valor_of
from harness import (ModuleStack, Pixrelay, Redis, Workdir, acct_key, auth, check_exit, connect_bank, free_port,
                     init_platforms, new_ulid, rkey, shard_of, start_stack, store_account, wait_for)

UNAUTHENTICATED = "not authenticated as the bank of this connection"
CONNECTIONS = "/v1/bank/connections"
VALOR_MSG = 'must be 1 to 10 digits, a dot and 2 digits, like "110.00"'
PIX_ORDER = list(bcb.raw_spec()["components"]["schemas"]["Pix"]["properties"])
REFUND_ORDER = list(bcb.raw_spec()["components"]["schemas"]["Devolucao"]["properties"])
ALNUM = string.ascii_letters + string.digits


# ---- what a bank sends ----

def e2e_id():
    """A fresh endToEndId: E, an ISPB, yyyyMMddHHmm, 11 characters (32)."""
    return "E12345678" + time.strftime("%Y%m%d%H%M", time.gmtime()) + "".join(
        random.choice(ALNUM) for _ in range(11))


def rtr_id():
    return "D12345678" + time.strftime("%Y%m%d%H%M", time.gmtime()) + "".join(
        random.choice(ALNUM) for _ in range(11))


def rfc3339(dt):
    """A moment as the standard writes it: 2020-09-09T20:15:00.358Z."""
    dt = dt.astimezone(datetime.timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def pix(valor, txid=None, horario=None, e2e=None, **more):
    p = {"endToEndId": e2e or e2e_id()}
    if txid is not None:
        p["txid"] = txid
    p["valor"] = valor
    p["horario"] = horario or rfc3339(now())
    p.update(more)
    return p


def refund(valor, status, rid=None):
    r = {"id": rid or "D" + "".join(random.choice(ALNUM) for _ in range(20)), "rtrId": rtr_id(),
         "valor": valor, "horario": {"solicitacao": rfc3339(now())}, "status": status}
    if status == "DEVOLVIDO":
        r["horario"]["liquidacao"] = rfc3339(now())
    return r


def notification(*items):
    """{"pix": [...]} after the official schema took it."""
    body = {"pix": list(items)}
    bcb.validate_webhook_body(body)
    return body


def expires_at(charge):
    """A charge's expiresAt ("YYYY-MM-DD HH:MM:SS", UTC) as a moment."""
    return datetime.datetime.strptime(charge["expiresAt"], "%Y-%m-%d %H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)


def metric(text, name, **labels):
    """The value of the series `name` with exactly these labels (0 when absent)."""
    want = sorted('%s="%s"' % kv for kv in labels.items())
    for line in text.splitlines():
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        if m and m.group(1) == name and sorted((m.group(2) or "").split(",")) == want:
            return float(m.group(3))
    return 0.0


def own_key(account, e2e, env="sandbox"):
    """The key that holds a Pix taken once per environment, account and
    endToEndId (in the account's shard)."""
    return "pixrelay:{s%d}:bown:%s:%s:%s" % (shard_of(account), env, account, e2e)


def make_intermediate(directory, root, name):
    """A CA signed by `root` (certs.CA), as banks' webhook certificates often
    come from: name.pem, name.key."""
    cert, key = os.path.join(directory, name + ".pem"), os.path.join(directory, name + ".key")
    csr, ext, cnf = (os.path.join(directory, name + x) for x in (".csr", ".ext", ".cnf"))
    with open(cnf, "w") as f:
        f.write("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n")
    with open(ext, "w") as f:
        f.write("basicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign, cRLSign\n"
                "subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n")
    for args in (["req", "-new", "-config", cnf, "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                  "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + name],
                 ["x509", "-req", "-in", csr, "-CA", root.cert, "-CAkey", root.key, "-set_serial",
                  str(random.randrange(1, 2 ** 62)), "-days", "365", "-sha256", "-extfile", ext, "-out", cert]):
        subprocess.run([certs.OPENSSL] + args, capture_output=True, check=True, timeout=60)
    return certs.CA(name, cert, key)


def request_from(source, port, method, path, body=None, headers=None):
    """A request whose socket is bound to the address `source` (e.g. 127.0.0.2)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    try:
        conn.request(method, path, body=json.dumps(body).encode(), headers=h)
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


# ---- one stack for the module ----

class Env(ModuleStack):
    shared = ("wd", "redis", "px", "sink", "account", "live_account", "key", "live", "live_master",
              "signing", "quiet", "quiet_key", "certs")

    @classmethod
    def setup(cls):
        # a fixed port: the default base URL (http://<listen>/v1) is then the
        # webhookUrl's; the bank door (bank-listen) is where nginx's webhook
        # server sends (docs/banks.md, step 3), and the tests, as root, are its
        # proxy; 127.0.0.1 is a trusted proxy on the API port, whose
        # X-Client-Cert is believed all the same never
        start_stack(cls, args=["--trusted-proxies", "127.0.0.1"], sink=True, port=free_port(),
                    door=True)
        init = init_platforms(cls.px)
        cls.account, cls.live_account = init["sandbox"], init["production"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.live = cls.px.create_key("production")["key"]
        cls.live_master = cls.px.create_key("production", master=True)["key"]
        cls.px.cli("account", "set", "--env", "sandbox", "--postback-url", cls.sink.url("/account"))
        cls.signing = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)[
            "signingSecret"]
        # a second sandbox account, stored as test_charges.py does, without a
        # postbackUrl: its events are recorded and delivered nowhere
        cls.quiet, cls.quiet_key = cls.store_account("Quiet")
        # the connection the platform account's charges go to, whatever
        # others the tests make (docs/banks.md, "The key on the QR")
        cls.charging = connect_bank(cls.px, env="sandbox", default=True)
        cls.certs = os.path.join(cls.wd.path, "certs")

    @classmethod
    def store_account(cls, name):
        """A sandbox account written into Redis (what charges and banks read of
        it) and a key of it."""
        return store_account(cls.redis, cls.px, name)



def tearDownModule():
    Env.stop()


class Base(BankCase):
    env = Env

    # ---- connections ----

    @classmethod
    def class_connection(cls, key=None, auth_mode="url-token", pix_key=None, client_ca=None,
                         account=None, **more):
        """A new connection of the account of `key` (the sandbox platform's by
        default; `account` with a master key), `more` fields in its body."""
        body = {"pixKey": pix_key or "pix-%s@loja.com.br" % random.randrange(10 ** 9),
                "auth": auth_mode}
        if client_ca is not None:
            body["clientCa"] = client_ca
        body.update(more)
        r = cls.px.request("POST", CONNECTIONS, body=body, headers=auth(key or cls.key, account))
        if r.status != 200:
            raise AssertionError("POST %s: %r" % (CONNECTIONS, r))
        return r.json["data"]

    def connect(self, key=None, account=None, **kw):
        """class_connection(), disconnected after the test (an account has at
        most 20)."""
        conn = self.class_connection(key, account=account, **kw)
        self.addCleanup(self.px.request, "POST", "%s/%s/disconnect" % (CONNECTIONS, conn["id"]),
                        headers=auth(key or self.key, account))
        return conn

    def update(self, conn, body, key=None, account=None):
        """PATCH the connection; the answer."""
        return self.px.request("PATCH", "%s/%s" % (CONNECTIONS, conn["id"]), body=body,
                               headers=auth(key or self.key, account))

    def hook_path(self, conn, suffix="/pix"):
        """The path and query a bank POSTs to: webhookUrl with `suffix` appended
        to the whole URL, as the standard says."""
        u = urllib.parse.urlsplit(conn["webhookUrl"] + suffix)
        self.assertEqual((u.scheme, u.netloc), ("http", "127.0.0.1:%d" % self.px.port))
        return u.path + ("?" + u.query if u.query else "")

    def post(self, conn, body, path=None, raw=None, headers=None, door=True):
        """A bank's call: `body` (already checked by the caller) to {webhookUrl}/pix,
        through the bank door as the proxy sends it (door=False: to the API
        port)."""
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        data = raw if raw is not None else json.dumps(body).encode()
        send = self.px.door_request if door else self.px.request
        return send("POST", path or self.hook_path(conn), raw=data, headers=h)

    def send(self, conn, *items):
        """A valid notification of `items`, answered 200; its data."""
        r = self.post(conn, notification(*items))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def log_until(self, r, since=0):
        """pixrelay's log from offset `since`, once it holds the line of the
        request that answered `r` (the log is written out on a timer)."""
        rid = r.header("X-Request-Id")
        self.assertTrue(rid)
        return wait_for(lambda: rid in self.px.log()[since:] and self.px.log()[since:],
                        what="request %s in the log" % rid)

    def notifications(self, conn, key=None):
        r = self.px.request("GET", "%s/%s/notifications" % (CONNECTIONS, conn["id"]),
                            headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["notifications"]

    # ---- charges and money ----

    def charge(self, amount, path, key=None, **more):
        """A new charge; its postbackUrl the sink's `path` (None: none)."""
        body = {"amount": amount}
        if path:
            body["postbackUrl"] = self.sink.url(path)
        body.update(more)
        r = self.px.request("POST", CREATE, body=body, headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def balance(self, key=None):
        r = self.px.request("GET", "/v1/baas/balance", headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    # ---- events ----

    def account_events(self, conn, e2e):
        """The postbacks to the account's postbackUrl about Pix e2e of connection conn."""
        return [q.json for q in self.sink.requests("/account")
                if q.json["data"].get("connection") == conn["id"]
                and q.json["data"]["pix"]["endToEndId"] == e2e]

    def canonical(self, p, conn=None):
        """The Pix as the events carry it: the schema's fields only, in its
        order, devolucoes an array (with `connection` and `source` first when
        a charge keeps it)."""
        out = {"connection": conn["id"], "source": "webhook"} if conn else {}
        for k in PIX_ORDER:
            if k in p and p[k] is not None:
                v = p[k]
                if k == "devolucoes":
                    v = [{f: r[f] for f in REFUND_ORDER if f in r}
                         for r in (v if isinstance(v, list) else [v])]
                out[k] = v
        return out

    def assert_order(self, p):
        keys = [k for k in p if k not in ("connection", "source")]
        self.assertEqual(keys, [k for k in PIX_ORDER if k in keys])
        for r in p.get("devolucoes", []):
            self.assertEqual(list(r), [k for k in REFUND_ORDER if k in r])

    def outcome(self, data, i=0):
        d = data["pix"][i]
        return d["outcome"], d["reason"]


# ---------------------------------------------------------------------------

class Standard(Base):
    """The standard's own examples of a webhook's Pix."""

    def test_the_standards_examples(self):
        conn = self.connect()
        # pixWebhook2 as is: valid, a txid that names no charge
        ex2 = bcb.example("pixWebhook2")
        d = self.send(conn, ex2)
        self.assertEqual((d["received"], d["accepted"], d["duplicates"], d["refused"]), (1, 1, 0, []))
        self.assertEqual(d["pix"], [{"endToEndId": ex2["endToEndId"], "outcome": "unmatched",
                                     "reason": "unknown_txid", "event": d["pix"][0]["event"],
                                     "charge": None, "heldBy": None}])
        got = self.events("/account", 1, webhook_id=d["pix"][0]["event"])[0]
        self.assertEqual(got, {"id": d["pix"][0]["event"], "event": "EVENT:PIX_UNMATCHED",
                               "data": {"reason": "unknown_txid", "connection": conn["id"],
                                        "source": "webhook", "pix": ex2, "charge": None}})
        self.assert_order(got["data"]["pix"])

        # pixWebhook1 as published: devolucoes an object, which the schema
        # refuses (erratum 4); pixrelay reads it as an array of one
        ex1 = bcb.example("pixWebhook1")
        self.assertIsInstance(ex1["devolucoes"], dict)
        with self.assertRaises(bcb.SpecViolation) as e:
            bcb.validate_webhook_body({"pix": [ex1]})
        self.assertIn("$.pix[0].devolucoes", str(e.exception))
        bcb.validate_webhook_body({"pix": [bcb.example_fixed("pixWebhook1")]})
        r = self.post(conn, {"pix": [ex1]})
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual((d["received"], d["accepted"], d["refused"]), (1, 1, []))
        self.assertEqual(self.outcome(d), ("unmatched", "unknown_txid"))
        evts = self.sink.wait_until(
            lambda _: len(self.account_events(conn, ex1["endToEndId"])) == 2 and
            self.account_events(conn, ex1["endToEndId"]), what="the two events of pixWebhook1")
        for e in evts:
            self.events("/account", 1, webhook_id=e["id"])  # signed
        by_type = {e["event"]: e for e in evts}
        fixed = bcb.example_fixed("pixWebhook1")
        un = by_type["EVENT:PIX_UNMATCHED"]["data"]
        self.assertIsInstance(un["pix"]["devolucoes"], list)
        self.assertEqual(un["pix"], fixed)
        self.assert_order(un["pix"])
        bcb.validate("Pix", un["pix"])
        rf = by_type["EVENT:PIX_REFUND"]["data"]
        self.assertEqual(rf, {"status": "EM_PROCESSAMENTO", "connection": conn["id"],
                              "source": "webhook", "refund": fixed["devolucoes"][0], "pix": fixed,
                              "charge": None})
        self.assertEqual(by_type["EVENT:PIX_UNMATCHED"]["id"], d["pix"][0]["event"])


class UrlToken(Base):
    """Connections whose bank authenticates with a token in the URL."""

    def test_webhook_url_and_both_ways_a_bank_appends_pix(self):
        conn = self.connect()
        m = re.fullmatch(r"http://127\.0\.0\.1:%d/v1/webhooks/bank/(bnk_[0-9A-Z]{26})"
                         r"\?hmac=([A-Za-z0-9]{43,})&ignorar=" % self.px.port, conn["webhookUrl"])
        self.assertIsNotNone(m, conn["webhookUrl"])
        self.assertEqual(m.group(1), conn["id"])
        token = m.group(2)
        self.assertGreaterEqual(len(token) * math.log2(62), 256)  # base62: 256 bits at least
        self.assertEqual({k: conn[k] for k in ("account", "environment", "auth", "clientCa")},
                         {"account": self.account, "environment": "sandbox", "auth": "url-token",
                          "clientCa": None})
        # appended to the whole URL: the path stays .../bnk_x, ignorar gets "/pix"
        path = self.hook_path(conn)
        self.assertEqual(path, "/v1/webhooks/bank/%s?hmac=%s&ignorar=/pix" % (conn["id"], token))
        c1 = self.charge(1500, unique("tok"))
        d = self.send(conn, pix("15.00", c1["id"]))
        self.assertEqual(self.outcome(d), ("paid", None))
        # appended to the path
        c2 = self.charge(1600, unique("tok"))
        path2 = "/v1/webhooks/bank/%s/pix?hmac=%s" % (conn["id"], token)
        r = self.post(conn, notification(pix("16.00", c2["id"])), path=path2)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.outcome(r.json["data"]), ("paid", None))
        self.assertEqual([self.get_charge(c["id"])["status"] for c in (c1, c2)], ["PAID", "PAID"])

        # the token is shown this once: never again, nor in pixrelay's log
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, conn["id"]), headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        shown = r.json["data"]
        self.assertEqual(shown["webhookUrl"], "http://127.0.0.1:%d/v1/webhooks/bank/%s"
                         % (self.px.port, conn["id"]))
        # the bank's calls answered 200: its last one is recorded
        self.assertIsNone(conn["lastCallAt"])
        self.assertRegex(shown["lastCallAt"] or "", r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        self.assertEqual(shown, dict(conn, webhookUrl=shown["webhookUrl"], lastCallAt=shown["lastCallAt"]))
        r = self.px.request("GET", CONNECTIONS, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        listed = [c for c in r.json["data"]["connections"] if c["id"] == conn["id"]]
        self.assertEqual(listed, [shown])
        self.assertNotIn(token, r.body.decode())
        self.assertNotIn(token, self.log_until(r))
        self.assertNotIn(token, self.px.output())
        # what is kept is its SHA-256
        stored = self.redis.cmd("HGETALL", rkey("bank:", conn["id"]))
        stored = dict(zip(stored[::2], stored[1::2]))
        self.assertEqual(stored["token_sha"], hashlib.sha256(token.encode()).hexdigest())
        self.assertFalse([k for k, v in stored.items() if token in v])

    def test_refused_calls_store_nothing(self):
        conn = self.connect()
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(conn["webhookUrl"]).query)["hmac"][0]
        path = unique("refused")
        c = self.charge(2000, path)
        good = notification(pix("20.00", c["id"]))
        wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
        gone = self.connect()
        gone_token = urllib.parse.parse_qs(urllib.parse.urlsplit(gone["webhookUrl"]).query)["hmac"][0]
        d = self.send(gone, pix("1.00"))  # it heard one Pix before it went
        self.assertEqual(self.outcome(d), ("unmatched", "no_txid"))
        r = self.px.request("POST", "%s/%s/disconnect" % (CONNECTIONS, gone["id"]), headers=auth(self.key))
        self.assertEqual((r.status, r.json["data"]), (200, {"id": gone["id"], "disconnected": True}))
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, gone["id"]), headers=auth(self.key))
        self.assertEqual((r.status, r.json["error"]), (404, "bank connection not found: " + gone["id"]))
        unknown = "bnk_" + new_ulid()
        log_before = len(self.px.log())
        for what, p in [
                ("no token", "/v1/webhooks/bank/%s/pix" % conn["id"]),
                ("an empty token", "/v1/webhooks/bank/%s/pix?hmac=" % conn["id"]),
                ("a wrong token", "/v1/webhooks/bank/%s/pix?hmac=%s" % (conn["id"], wrong)),
                ("a wrong token, ignorar", "/v1/webhooks/bank/%s?hmac=%s&ignorar=/pix" % (conn["id"], wrong)),
                ("another connection's token", "/v1/webhooks/bank/%s/pix?hmac=%s" % (conn["id"], gone_token)),
                ("an unknown connection", "/v1/webhooks/bank/%s/pix?hmac=%s" % (unknown, token)),
                ("not a connection id", "/v1/webhooks/bank/bnk_nope/pix?hmac=%s" % token),
                ("a disconnected connection", "/v1/webhooks/bank/%s/pix?hmac=%s" % (gone["id"], gone_token))]:
            r = self.post(conn, good, path=p)
            self.assertEqual((r.status, r.json), (401, {"error": UNAUTHENTICATED, "status": 401, "data": []}),
                             what)
        log = self.log_until(r, log_before)
        for why in ("no hmac token in the URL", "wrong hmac token", "no such connection"):
            self.assertIn(why, log)
        self.assertNotIn(token, log)
        self.assertNotIn(wrong, log)
        self.assertNotIn(gone_token, self.px.log())
        # nothing stored: no event, the charge as it was, empty logs
        self.quiet_after(path, 0)
        self.assertEqual(self.get_charge(c["id"]), c)
        self.assertEqual(self.notifications(conn), [])
        self.assertIsNone(self.redis.cmd("GET", own_key(self.account, good["pix"][0]["endToEndId"])))
        self.assertEqual(self.redis.cmd("LLEN", rkey("blog:", gone["id"])), 1)
        self.assertEqual(self.redis.cmd("LLEN", rkey("blog:", unknown)), 0)
        # the right token still works
        d = self.send(conn, good["pix"][0])
        self.assertEqual(self.outcome(d), ("paid", None))


class Matching(Base):
    """What each Pix becomes (docs/banks.md, "What each Pix becomes")."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.conn = cls.class_connection(pix_key="matching@loja.com.br")

    def paid(self, txid_of=lambda cid: cid):
        path = unique("paid")
        c = self.charge(12345, path)
        before = self.balance()
        p = pix("123.45", txid_of(c["id"]), infoPagador="pedido 42")
        d = self.send(self.conn, p)
        self.assertEqual((d["received"], d["accepted"], d["duplicates"], d["refused"]), (1, 1, 0, []))
        evt = d["pix"][0]["event"]
        self.assertRegex(evt, r"^evt_[0-9A-Z]{26}$")
        self.assertEqual(d["pix"], [{"endToEndId": p["endToEndId"], "outcome": "paid", "reason": None,
                                     "event": evt, "charge": c["id"], "heldBy": None}])
        got = self.events(path, 1)[0]
        shown = self.get_charge(c["id"])
        self.assertEqual(shown["status"], "PAID")
        kept = self.canonical(p, self.conn)
        self.assertEqual(shown["pix"], kept)
        self.assertEqual((shown["pix"]["endToEndId"], shown["pix"]["infoPagador"],
                          shown["pix"]["horario"]), (p["endToEndId"], "pedido 42", p["horario"]))
        self.assert_order(shown["pix"])
        self.assertEqual(got, {"id": evt, "event": "EVENT:CHARGE_PAID", "data": shown})
        after = self.balance()
        net = c["amount"] - c["fee"]
        self.assertEqual(after["balance"], before["balance"] + net)
        self.assertEqual(after["entries"][0], {"at": after["entries"][0]["at"], "balance": after["balance"],
                                               "amount": net, "kind": "charge_paid", "charge": c["id"]})
        log = self.notifications(self.conn)[0]
        self.assertEqual(log, {"at": log["at"], "source": "webhook", "endToEndId": p["endToEndId"],
                               "txid": p["txid"], "amount": 12345, "outcome": "paid", "reason": None,
                               "heldBy": None, "charge": c["id"], "event": evt})
        # taken once per account, by this connection
        self.assertEqual(self.redis.cmd("GET", own_key(self.account, p["endToEndId"])),
                         "paid  %s %s" % (evt, self.conn["id"]))
        self.quiet_after(path, 1)
        return c, path

    def test_a_pending_charge_paid_with_its_exact_valor(self):
        self.paid()

    def test_the_25_character_txid_of_the_static_br_code(self):
        c, _ = self.paid(lambda cid: cid[1:])
        self.assertEqual(c["id"][0], "0")
        # the very txid of the charge's BR Code (field 62-05)
        self.assertIn("62290525" + c["id"][1:], c["brCode"])

    def test_a_charge_without_postback_url_and_every_field_of_the_pix(self):
        c = self.charge(10000, None)
        p = pix("100.00", c["id"], chave="matching@loja.com.br", infoPagador="ç" * 140,
                componentesValor={"original": {"valor": "90.00"}, "juros": {"valor": "10.00"}},
                devolucoes=[], naoDoPadrao={"x": 1})
        d = self.send(self.conn, p)
        self.assertEqual(self.outcome(d), ("paid", None))
        got = self.events("/account", 1, webhook_id=d["pix"][0]["event"])[0]
        shown = self.get_charge(c["id"])
        # unknown fields are left out, componentesValor kept as sent
        self.assertEqual(shown["pix"], {"connection": self.conn["id"], "source": "webhook",
                                        "endToEndId": p["endToEndId"], "txid": c["id"], "valor": "100.00",
                                        "componentesValor": p["componentesValor"], "chave": p["chave"],
                                        "horario": p["horario"], "infoPagador": p["infoPagador"],
                                        "devolucoes": []})
        self.assertEqual(got, {"id": d["pix"][0]["event"], "event": "EVENT:CHARGE_PAID", "data": shown})

    def test_what_is_kept_per_day_of_brasilia(self):
        # 01:00 UTC on the 10th is the 9th in Brasilia (UTC-3)
        p = pix("1.00", horario="2020-09-10T01:00:00Z")
        r = self.send(self.conn, p)
        self.assertEqual(self.outcome(r), ("unmatched", "no_txid"))
        day = rkey("bday:", self.conn["id"]) + ":2020-09-09"
        counts = self.redis.cmd("HGETALL", day)
        self.assertEqual(dict(zip(counts[::2], counts[1::2])),
                         {"webhook": "1", "no_txid": "1", "webhook_cents": "100"})
        # kept for the event retention (30 days by default)
        for k in (day, own_key(self.account, p["endToEndId"]), rkey("blog:", self.conn["id"])):
            self.assertTrue(29 * 86400 < self.redis.cmd("TTL", k) <= 30 * 86400, k)
        self.assertEqual(self.redis.cmd("EXISTS", rkey("bday:", self.conn["id"]) + ":2020-09-10"), 0)

    def unmatched(self, p, path, reason, charge=None):
        d = self.send(self.conn, p)
        evt = d["pix"][0]["event"]
        self.assertEqual(d["pix"], [{"endToEndId": p["endToEndId"], "outcome": "unmatched",
                                     "reason": reason, "event": evt,
                                     "charge": charge["id"] if charge else None, "heldBy": None}])
        got = self.events(path, 1, webhook_id=evt)[0]
        self.assertEqual(got, {"id": evt, "event": "EVENT:PIX_UNMATCHED",
                               "data": {"reason": reason, "connection": self.conn["id"],
                                        "source": "webhook", "pix": self.canonical(p),
                                        "charge": charge}})
        if charge:
            self.assertEqual(self.get_charge(charge["id"]), charge)
        return got

    def test_amount_mismatch(self):
        path = unique("mismatch")
        c = self.charge(1000, path)
        bal = self.balance()["balance"]
        self.unmatched(pix("10.01", c["id"]), path, "amount_mismatch", c)
        self.unmatched(pix("1000.00", c["id"][1:]), path, "amount_mismatch", c)
        self.assertEqual(self.balance()["balance"], bal)
        self.quiet_after(path, 2)

    def test_a_second_payment_of_a_paid_charge(self):
        c, path = self.paid()
        shown = self.get_charge(c["id"])
        bal = self.balance()["balance"]
        got = self.unmatched(pix("123.45", c["id"]), path, "charge_paid", shown)
        self.assertEqual(got["data"]["charge"]["pix"], shown["pix"])  # the first Pix, kept
        self.assertEqual(self.balance()["balance"], bal)

    def test_failed_charge(self):
        path = unique("failed")
        c = self.charge(700, path)
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-failure" % c["id"], headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        shown = self.get_charge(c["id"])
        self.assertEqual(shown["status"], "FAILED")
        self.unmatched(pix("7.00", c["id"]), path, "charge_failed", shown)

    def test_unknown_txid_and_no_txid_go_to_the_accounts_postback_url(self):
        # a ULID no charge has, another account's charge, and text that names no charge
        other = self.charge(500, unique("other"), key=self.quiet_key)
        for txid in (new_ulid(), other["id"], "c3e0e7a4e7f1469a9f782d3d4999343c", "loja42"):
            self.unmatched(pix("5.00", txid), "/account", "unknown_txid")
        self.assertEqual(self.get_charge(other["id"], self.quiet_key)["status"], "PENDING")
        self.unmatched(pix("5.00"), "/account", "no_txid")
        # optional fields sent as null are read as absent
        p = dict(pix("5.00"), txid=None, infoPagador=None, devolucoes=None)
        q = pix("5.00", devolucoes=[dict(refund("1.00", "NAO_REALIZADO"), natureza=None, motivo=None,
                                         horario={"solicitacao": rfc3339(now()), "liquidacao": None})])
        for x in (p, q):
            with self.assertRaises(bcb.SpecViolation):
                bcb.validate_webhook_body({"pix": [x]})  # the schema makes none nullable
        r = self.post(self.conn, {"pix": [p, q]})
        self.assertEqual(r.status, 200, r)
        self.assertEqual((r.json["data"]["refused"], self.outcome(r.json["data"]), self.outcome(r.json["data"], 1)),
                         ([], ("unmatched", "no_txid"), ("unmatched", "no_txid")))
        got = self.events("/account", 1, webhook_id=r.json["data"]["pix"][0]["event"])[0]
        self.assertEqual(got["data"]["pix"], self.canonical(p))

    def test_an_expired_charge_paid_in_time_by_the_banks_clock(self):
        path = unique("late")
        c = self.charge(2500, path, expiration=3600)
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-expiry" % c["id"], headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.events(path, 1)[0]["event"], "EVENT:CHARGE_EXPIRED")
        self.assertEqual(self.get_charge(c["id"])["status"], "EXPIRED")
        before = self.balance()["balance"]
        # paid a minute before expiresAt, by the bank's clock; heard now
        p = pix("25.00", c["id"], horario=rfc3339(expires_at(c) - datetime.timedelta(minutes=1)))
        d = self.send(self.conn, p)
        evt = d["pix"][0]["event"]
        self.assertEqual(d["pix"], [{"endToEndId": p["endToEndId"], "outcome": "paid",
                                     "reason": "heard_late", "event": evt, "charge": c["id"],
                                     "heldBy": None}])
        got = self.events(path, 2)[1]
        shown = self.get_charge(c["id"])
        self.assertEqual(shown["status"], "PAID")
        self.assertEqual(got, {"id": evt, "event": "EVENT:CHARGE_PAID", "data": shown})
        self.assertEqual(self.balance()["balance"], before + c["amount"] - c["fee"])
        self.assertEqual(self.notifications(self.conn)[0]["reason"], "heard_late")

    def test_not_after_expires_at_to_the_millisecond(self):
        path = unique("edge")
        c = self.charge(2800, path, expiration=3600)
        ms = int(self.redis.cmd("HGET", rkey("ch:", c["id"]), "expires_ms"))

        def at(t):
            return rfc3339(datetime.datetime.fromtimestamp(t / 1000, datetime.timezone.utc))

        self.unmatched(pix("28.00", c["id"], horario=at(ms + 1)), path, "charge_expired", c)
        d = self.send(self.conn, pix("28.00", c["id"], horario=at(ms)))
        self.assertEqual(self.outcome(d), ("paid", None))
        self.assertEqual(self.get_charge(c["id"])["status"], "PAID")

    def test_paid_after_expires_at(self):
        # an EXPIRED charge, paid a second after its expiresAt (written in
        # Brasilia time, -03:00)
        path = unique("after")
        c = self.charge(2600, path, expiration=3600)
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-expiry" % c["id"], headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        self.events(path, 1)
        shown = self.get_charge(c["id"])
        brt = datetime.timezone(datetime.timedelta(hours=-3))
        late = (expires_at(c) + datetime.timedelta(seconds=1)).astimezone(brt)
        horario = late.strftime("%Y-%m-%dT%H:%M:%S.000-03:00")
        self.unmatched(pix("26.00", c["id"], horario=horario), path, "charge_expired", shown)
        self.assertEqual(self.get_charge(c["id"])["status"], "EXPIRED")
        # a PENDING charge that a Pix after its expiresAt does not pay
        path = unique("after")
        c = self.charge(2700, path, expiration=3600)
        p = pix("27.00", c["id"], horario=rfc3339(expires_at(c) + datetime.timedelta(seconds=1)))
        self.unmatched(p, path, "charge_expired", c)
        self.assertEqual(self.get_charge(c["id"])["status"], "PENDING")


class Deduplication(Base):
    def test_the_same_pix_twice_in_one_call_and_again_later(self):
        conn = self.connect()
        path = unique("dup")
        c = self.charge(4200, path)
        before = self.balance()["balance"]
        p = pix("42.00", c["id"])
        d = self.send(conn, p, p)
        self.assertEqual((d["received"], d["accepted"], d["duplicates"], d["refused"]), (2, 1, 1, []))
        evt = d["pix"][0]["event"]
        self.assertEqual(d["pix"], [
            {"endToEndId": p["endToEndId"], "outcome": "paid", "reason": None, "event": evt, "charge": c["id"],
             "heldBy": None},
            {"endToEndId": p["endToEndId"], "outcome": "duplicate", "reason": None, "event": evt,
             "charge": c["id"], "heldBy": None}])
        d = self.send(conn, p)
        self.assertEqual((d["received"], d["accepted"], d["duplicates"]), (1, 0, 1))
        self.assertEqual(d["pix"], [{"endToEndId": p["endToEndId"], "outcome": "duplicate", "reason": None,
                                     "event": evt, "charge": c["id"], "heldBy": None}])
        # an unmatched one again: the first one's reason and event
        q = pix("1.00")
        first = self.send(conn, q)["pix"][0]
        again = self.send(conn, q)["pix"][0]
        self.assertEqual(again, dict(first, outcome="duplicate"))
        self.assertEqual(self.events(path, 1)[0]["id"], evt)
        self.quiet_after(path, 1)
        self.assertEqual(len(self.account_events(conn, q["endToEndId"])), 1)
        self.assertEqual(self.balance()["balance"], before + c["amount"] - c["fee"])
        log = self.notifications(conn)
        self.assertEqual([(e["endToEndId"], e["outcome"]) for e in reversed(log)],
                         [(p["endToEndId"], "paid"), (p["endToEndId"], "duplicate"),
                          (p["endToEndId"], "duplicate"), (q["endToEndId"], "unmatched"),
                          (q["endToEndId"], "duplicate")])

class OneTruth(Base):
    """One Pix, one truth, per account: a Pix is taken once per environment,
    account and endToEndId, whichever connection and source brings it
    first; its refunds move the charge only through that connection."""

    def report(self, conn, day):
        r = self.px.request("GET", "/v1/bank/reconciliation?connection=%s&date=%s" % (conn["id"], day),
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def test_the_same_pix_through_another_connection_moves_nothing(self):
        a, b = self.connect(), self.connect()
        path = unique("onetruth")
        c = self.charge(3000, path)
        p = pix("30.00", c["id"], horario="2020-09-10T15:00:00Z")
        da = self.send(a, p)
        self.assertEqual(self.outcome(da), ("paid", None))
        evt = da["pix"][0]["event"]
        # the same Pix through b: a duplicate that says who holds it, no
        # "paid twice" event, no money
        before = self.balance()["balance"]
        db = self.send(b, p)
        self.assertEqual((db["accepted"], db["duplicates"]), (0, 1))
        self.assertEqual(db["pix"], [{"endToEndId": p["endToEndId"], "outcome": "duplicate", "reason": None,
                                      "event": evt, "charge": c["id"], "heldBy": a["id"]}])
        self.send(b, p)  # and again: a repeat of b's bank now
        self.assertEqual(self.events(path, 1)[0]["id"], evt)
        self.quiet_after(path, 1)
        self.assertEqual(self.account_events(b, p["endToEndId"]), [])
        self.assertEqual(self.balance()["balance"], before)
        log = self.notifications(b)
        self.assertEqual([(e["outcome"], e["heldBy"]) for e in reversed(log)],
                         [("duplicate", a["id"]), ("duplicate", a["id"])])
        # a refund through b moves nothing; through a, the charge is refunded
        back = dict(p, devolucoes=[refund("30.00", "DEVOLVIDO")])
        self.send(b, back)
        self.quiet_after(path, 1)
        self.assertEqual(self.get_charge(c["id"])["status"], "PAID")
        self.send(a, back)
        got = self.events(path, 2)[1]
        self.assertEqual((got["event"], got["data"]["status"]), ("EVENT:CHARGE_REFUND", "REFUNDED"))
        # each connection's report lists what its bank sent, b's saying that
        # a held it (once, however often b's bank repeats it)
        ra, rb = self.report(a, "2020-09-10"), self.report(b, "2020-09-10")
        self.assertEqual((ra["pix"]["received"], ra["pix"]["heldElsewhere"], ra["cents"]["received"]),
                         (1, 0, 3000))
        self.assertEqual((rb["pix"]["received"], rb["pix"]["heldElsewhere"], rb["pix"]["duplicates"],
                          rb["cents"]["received"]), (0, 1, 2, 0))
        self.assertEqual(rb["heldElsewhere"], [{"endToEndId": p["endToEndId"], "connection": a["id"]}])
        self.assertEqual(ra["heldElsewhere"], [])

    def test_an_unmatched_pix_reported_twice_is_one_event(self):
        a, b = self.connect(), self.connect()
        p = pix("3.00")
        da, db = self.send(a, p), self.send(b, p)
        self.assertEqual(self.outcome(da), ("unmatched", "no_txid"))
        self.assertEqual((db["pix"][0]["outcome"], db["pix"][0]["event"], db["pix"][0]["heldBy"]),
                         ("duplicate", da["pix"][0]["event"], a["id"]))
        self.events("/account", 1, webhook_id=da["pix"][0]["event"])
        time.sleep(0.5)
        self.assertEqual(len(self.account_events(a, p["endToEndId"])), 1)
        self.assertEqual(self.account_events(b, p["endToEndId"]), [])

    def test_a_pix_taken_before_an_upgrade_stays_taken(self):
        # the previous layout kept a Pix per connection (bpix:<conn>:<e2e>):
        # what it took stays taken, through that connection or another one
        a, b = self.connect(), self.connect()
        p = pix("4.00")
        self.redis.cmd("SET", rkey("bpix:", a["id"]) + ":" + p["endToEndId"], "unmatched no_txid evt_old",
                       "EX", 3600)
        db = self.send(b, p)
        self.assertEqual((db["pix"][0]["outcome"], db["pix"][0]["reason"], db["pix"][0]["event"],
                          db["pix"][0]["heldBy"]), ("duplicate", "no_txid", "evt_old", a["id"]))
        da = self.send(a, p)
        self.assertEqual((da["pix"][0]["outcome"], da["pix"][0]["heldBy"]), ("duplicate", None))
        time.sleep(0.5)
        self.assertEqual(self.account_events(a, p["endToEndId"]) + self.account_events(b, p["endToEndId"]),
                         [])

    def test_a_pix_the_previous_layout_took_twice_is_held_where_it_paid(self):
        # the previous layout could take a Pix through two connections: where
        # it paid the charge, and where it was then "paid twice". The one it
        # paid through holds it, whichever reports it first, so that its
        # refund moves the charge
        a, b = self.connect(), self.connect()
        path = unique("twice")
        c = self.charge(1500, path)
        p = pix("15.00", c["id"])
        evt = self.send(a, p)["pix"][0]["event"]
        self.events(path, 1)
        # as the previous layout left it: a record per connection, none per account
        self.redis.cmd("DEL", own_key(self.account, p["endToEndId"]))
        for conn, record in ((a, "paid  " + evt), (b, "unmatched charge_paid evt_twice")):
            self.redis.cmd("SET", rkey("bpix:", conn["id"]) + ":" + p["endToEndId"], record, "EX", 3600)
        back = dict(p, devolucoes=[refund("15.00", "DEVOLVIDO")])
        db = self.send(b, back)
        self.assertEqual((db["pix"][0]["outcome"], db["pix"][0]["event"], db["pix"][0]["heldBy"]),
                         ("duplicate", evt, a["id"]))
        self.quiet_after(path, 1)
        self.send(a, back)
        got = self.events(path, 2)[1]
        self.assertEqual((got["event"], got["data"]["status"]), ("EVENT:CHARGE_REFUND", "REFUNDED"))
        self.quiet_after(path, 2)

    def test_the_pix_that_paid_a_charge_heard_after_the_retention(self):
        # a Pix is remembered for event-retention-days (30 by default); a MED
        # refund can come 90 days after it. The charge it paid still names it:
        # heard again, it is that payment, no "paid twice"
        conn = self.connect()
        path = unique("retained")
        c = self.charge(2500, path)
        p = pix("25.00", c["id"])
        self.assertEqual(self.outcome(self.send(conn, p)), ("paid", None))
        self.events(path, 1)
        self.redis.cmd("DEL", own_key(self.account, p["endToEndId"]))  # what the retention does
        med = dict(refund("25.00", "DEVOLVIDO"), natureza="MED_FRAUDE")
        d = self.send(conn, dict(p, devolucoes=[med]))
        self.assertEqual((d["accepted"], d["duplicates"]), (0, 1))
        self.assertEqual((self.outcome(d), d["pix"][0]["heldBy"]), (("duplicate", None), None))
        got = self.events(path, 3)[1:]
        self.assertEqual([e["event"] for e in got], ["EVENT:PIX_MED_REFUND", "EVENT:CHARGE_REFUND"])
        self.quiet_after(path, 3)
        self.assertEqual(self.get_charge(c["id"])["status"], "REFUNDED")

    def test_a_connection_made_again_for_the_key_takes_its_pix_refunds(self):
        # the connection that took a Pix is gone (its key connected again, to
        # change how the bank authenticates, say): the one that reports the Pix
        # now holds it, so that a MED refund is heard and refunds the charge
        key = "again-%d@loja.com.br" % random.randrange(10 ** 9)
        a = self.connect(pix_key=key)
        path = unique("again")
        c = self.charge(4000, path)
        p = pix("40.00", c["id"], horario="2020-09-14T15:00:00Z")
        self.assertEqual(self.outcome(self.send(a, p)), ("paid", None))
        med = dict(refund("40.00", "EM_PROCESSAMENTO"), natureza="MED_OPERACIONAL")
        self.send(a, dict(p, devolucoes=[med]))
        got = self.events(path, 2)[1]
        self.assertEqual((got["event"], got["data"]["status"], got["data"]["connection"]),
                         ("EVENT:PIX_MED_REFUND", "EM_PROCESSAMENTO", a["id"]))
        r = self.px.request("POST", "%s/%s/disconnect" % (CONNECTIONS, a["id"]), headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        b = self.connect(pix_key=key)
        # what a heard is not news through b
        d = self.send(b, dict(p, devolucoes=[med]))
        self.assertEqual((self.outcome(d), d["pix"][0]["heldBy"]), (("duplicate", None), None))
        self.quiet_after(path, 2)
        med = dict(med, status="DEVOLVIDO", horario=dict(med["horario"], liquidacao=rfc3339(now())))
        self.send(b, dict(p, devolucoes=[med]))
        got = self.events(path, 4)[2:]
        self.assertEqual([e["event"] for e in got], ["EVENT:PIX_MED_REFUND", "EVENT:CHARGE_REFUND"])
        self.quiet_after(path, 4)
        self.assertEqual(self.get_charge(c["id"])["status"], "REFUNDED")
        # b's report says that a took the Pix
        rb = self.report(b, "2020-09-14")
        self.assertEqual(rb["heldElsewhere"], [{"endToEndId": p["endToEndId"], "connection": a["id"]}])

    def test_a_refused_item_is_one_event_whatever_brings_it(self):
        a, b = self.connect(), self.connect()
        bad = pix("1", horario="2020-09-11T15:00:00Z")
        self.spec_refuses(bad)
        first = self.post(a, {"pix": [bad]}).json["data"]["refused"][0]
        evt = first["event"]
        self.assertEqual(first["outcome"], "refused")
        for conn in (a, b):
            again = self.post(conn, {"pix": [bad]}).json["data"]["refused"][0]
            self.assertEqual((again["outcome"], again["event"]), ("duplicate", evt))
        # an item without an endToEndId to tell it by: once per its content
        anon = {"valor": "2.00", "horario": "2020-09-11T16:00:00Z"}
        x1 = self.post(a, {"pix": [anon]}).json["data"]["refused"][0]
        x2 = self.post(a, {"pix": [dict(reversed(list(anon.items())))]}).json["data"]["refused"][0]
        self.assertEqual((x1["outcome"], x1["endToEndId"], x1["reasons"]),
                         ("refused", None, ["pix[0].endToEndId: is required"]))
        self.assertEqual((x2["outcome"], x2["event"]), ("duplicate", x1["event"]))
        for e in (evt, x1["event"]):
            self.events("/account", 1, webhook_id=e)
        time.sleep(0.5)
        refusals = [q.json for q in self.sink.requests("/account") if q.json["event"] == "EVENT:PIX_REFUSED"
                    and q.json["data"]["connection"] in (a["id"], b["id"])]
        self.assertEqual(sorted(e["id"] for e in refusals), sorted([evt, x1["event"]]))
        # the day's report: each once, with the cents where readable
        ra, rb = self.report(a, "2020-09-11"), self.report(b, "2020-09-11")
        self.assertEqual((ra["pix"]["refused"], ra["cents"]["refused"], ra["pix"]["duplicates"]), (2, 200, 2))
        self.assertEqual((rb["pix"]["refused"], rb["pix"]["heldElsewhere"]), (0, 1))
        self.assertEqual(rb["heldElsewhere"], [{"endToEndId": bad["endToEndId"], "connection": a["id"]}])

    def spec_refuses(self, item):
        with self.assertRaises(bcb.SpecViolation):
            bcb.validate("Pix", item)


class Med(Base):
    """Refunds of the MED (Mecanismo Especial de Devolução): money clawed back
    under a dispute, an event of its own for each status."""

    def test_med_refunds(self):
        conn = self.connect()
        path = unique("med")
        c = self.charge(10000, path)
        p = pix("100.00", c["id"], horario="2020-09-12T15:00:00Z")
        self.assertEqual(self.outcome(self.send(conn, p)), ("paid", None))
        self.events(path, 1)
        r1 = dict(refund("40.00", "EM_PROCESSAMENTO"), natureza="MED_FRAUDE", motivo="fraude")
        sent = dict(p, devolucoes=[r1])
        self.send(conn, sent)
        got = self.events(path, 2)[1]
        paid = self.get_charge(c["id"])
        self.assertEqual(paid["status"], "PAID")
        self.assertEqual(got, {"id": got["id"], "event": "EVENT:PIX_MED_REFUND",
                               "data": {"nature": "MED_FRAUDE", "status": "EM_PROCESSAMENTO",
                                        "connection": conn["id"], "source": "webhook",
                                        "refund": self.canonical(sent)["devolucoes"][0],
                                        "pix": self.canonical(sent), "charge": paid}})
        # a partial MED refund settled: its event, the charge still PAID
        r1 = dict(r1, status="DEVOLVIDO", horario=dict(r1["horario"], liquidacao=rfc3339(now())))
        self.send(conn, dict(p, devolucoes=[r1]))
        got = self.events(path, 3)[2]
        self.assertEqual((got["event"], got["data"]["status"], got["data"]["nature"]),
                         ("EVENT:PIX_MED_REFUND", "DEVOLVIDO", "MED_FRAUDE"))
        self.assertEqual(self.get_charge(c["id"])["status"], "PAID")
        # the rest clawed back: the Pix is whole again, so the charge is
        # REFUNDED too, with the usual event, which says the nature
        r2 = dict(refund("60.00", "DEVOLVIDO"), natureza="MED_FRAUDE")
        back = dict(p, devolucoes=[r1, r2])
        self.send(conn, back)
        got = self.events(path, 5)[3:]
        shown = self.get_charge(c["id"])
        self.assertEqual(shown["status"], "REFUNDED")
        self.assertEqual(shown["pix"]["refundNature"], "MED_FRAUDE")
        self.assertEqual([(e["event"], e["data"].get("status")) for e in got],
                         [("EVENT:PIX_MED_REFUND", "DEVOLVIDO"), ("EVENT:CHARGE_REFUND", "REFUNDED")])
        self.assertEqual(got[1]["data"], shown)
        self.send(conn, back)
        self.quiet_after(path, 5)
        rep = self.px.request("GET", "/v1/bank/reconciliation?connection=%s&date=2020-09-12" % conn["id"],
                              headers=auth(self.key)).json["data"]
        self.assertEqual(rep["refunds"]["med"], {"DEVOLVIDO": 2, "EM_PROCESSAMENTO": 1, "NAO_REALIZADO": 0,
                                                 "cents": 10000, "natures": {"MED_FRAUDE": 3}})
        self.assertEqual({k: rep["refunds"][k] for k in ("DEVOLVIDO", "EM_PROCESSAMENTO", "NAO_REALIZADO")},
                         {"DEVOLVIDO": 2, "EM_PROCESSAMENTO": 1, "NAO_REALIZADO": 0})

    def test_an_ordinary_refund_is_no_med(self):
        conn = self.connect()
        path = unique("orig")
        c = self.charge(1000, path)
        p = pix("10.00", c["id"])
        self.send(conn, p)
        self.events(path, 1)
        self.send(conn, dict(p, devolucoes=[dict(refund("10.00", "DEVOLVIDO"), natureza="ORIGINAL")]))
        got = self.events(path, 2)[1]
        self.assertEqual(got["event"], "EVENT:CHARGE_REFUND")
        self.assertEqual(got["data"]["pix"]["refundNature"], "ORIGINAL")
        self.quiet_after(path, 2)


class Refunds(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.conn = cls.class_connection(pix_key="refunds@loja.com.br")

    def paid_charge(self, amount=5000):
        path = unique("ref")
        c = self.charge(amount, path)
        p = pix(valor_of(amount), c["id"])
        self.assertEqual(self.outcome(self.send(self.conn, p)), ("paid", None))
        self.events(path, 1)
        return c, p, path

    def refunds_of(self, e2e):
        return [e for e in self.notifications(self.conn) if e["endToEndId"] == e2e and "refund" in e]

    def test_a_whole_refund_refunds_the_charge(self):
        c, p, path = self.paid_charge()
        before = self.balance()["balance"]
        r = refund("50.00", "DEVOLVIDO")
        back = dict(p, devolucoes=[r])
        d = self.send(self.conn, back)
        self.assertEqual(d["pix"][0]["outcome"], "duplicate")  # the payment itself, again
        got = self.events(path, 2)[1]
        shown = self.get_charge(c["id"])
        self.assertEqual(shown["status"], "REFUNDED")
        # the charge keeps the Pix, and the nature of the refund that made it whole
        self.assertEqual(shown["pix"], dict(refundNature="ORIGINAL", **self.canonical(back, self.conn)))
        self.assertEqual(got, {"id": got["id"], "event": "EVENT:CHARGE_REFUND", "data": shown})
        bal = self.balance()
        net = c["amount"] - c["fee"]
        self.assertEqual(bal["balance"], before - net)
        self.assertEqual(bal["entries"][0], {"at": bal["entries"][0]["at"], "balance": bal["balance"],
                                             "amount": -net, "kind": "charge_refunded", "charge": c["id"]})
        [entry] = self.refunds_of(p["endToEndId"])
        self.assertEqual(entry, {"at": entry["at"], "source": "webhook", "endToEndId": p["endToEndId"],
                                 "refund": r["id"], "status": "DEVOLVIDO", "nature": None, "amount": 5000,
                                 "outcome": "refunded", "charge": c["id"], "event": got["id"]})
        # the same refund status again: nothing new
        self.send(self.conn, back)
        self.quiet_after(path, 2)
        self.assertEqual(self.get_charge(c["id"]), shown)
        self.assertEqual(self.balance()["balance"], before - net)
        self.assertEqual([e["outcome"] for e in self.refunds_of(p["endToEndId"])], ["duplicate", "refunded"])
        # a Pix for the refunded charge pays nothing
        d = self.send(self.conn, pix("50.00", c["id"]))
        self.assertEqual((self.outcome(d), d["pix"][0]["charge"]), (("unmatched", "charge_refunded"), c["id"]))
        got = self.events(path, 3)[2]
        self.assertEqual((got["event"], got["data"]["reason"], got["data"]["charge"]),
                         ("EVENT:PIX_UNMATCHED", "charge_refunded", shown))

    def test_the_bank_refunds_with_no_balance_check(self):
        # the money left the account meanwhile (set here in Redis): the bank
        # says the refund happened, so the balance goes below zero
        conn = self.connect(key=self.quiet_key)
        c = self.charge(2000, None, key=self.quiet_key)
        p = pix("20.00", c["id"])
        self.assertEqual(self.outcome(self.send(conn, p)), ("paid", None))
        self.redis.cmd("HSET", acct_key("sandbox", self.quiet), "balance", 0)
        self.send(conn, dict(p, devolucoes=[refund("20.00", "DEVOLVIDO")]))
        self.assertEqual(self.get_charge(c["id"], self.quiet_key)["status"], "REFUNDED")
        self.assertEqual(self.balance(self.quiet_key)["balance"], -(c["amount"] - c["fee"]))

    def test_partial_and_failed_refunds_are_reported_and_change_nothing(self):
        c, p, path = self.paid_charge()
        shown = self.get_charge(c["id"])
        bal = self.balance()["balance"]
        r1 = refund("10.00", "DEVOLVIDO")
        back = dict(p, devolucoes=[r1])
        self.send(self.conn, back)
        got = self.events(path, 2)[1]
        self.assertEqual(got, {"id": got["id"], "event": "EVENT:PIX_REFUND",
                               "data": {"status": "DEVOLVIDO", "connection": self.conn["id"],
                                        "source": "webhook", "refund": self.canonical(back)["devolucoes"][0],
                                        "pix": self.canonical(back), "charge": shown}})
        self.assert_order(got["data"]["pix"])
        # the bank lists every refund of the Pix each time: r1 is not news
        r2 = refund("40.00", "NAO_REALIZADO")
        back = dict(p, devolucoes=[r1, r2])
        self.send(self.conn, back)
        got = self.events(path, 3)[2]
        self.assertEqual(got["event"], "EVENT:PIX_REFUND")
        self.assertEqual((got["data"]["status"], got["data"]["refund"]),
                         ("NAO_REALIZADO", self.canonical(back)["devolucoes"][1]))
        self.send(self.conn, back)
        self.quiet_after(path, 3)
        self.assertEqual(self.get_charge(c["id"]), shown)
        self.assertEqual(self.balance()["balance"], bal)
        # a refund that goes EM_PROCESSAMENTO -> DEVOLVIDO is two news, and the
        # DEVOLVIDO refunds now covering the whole valor refund the charge
        r3 = refund("40.00", "EM_PROCESSAMENTO")
        self.send(self.conn, dict(p, devolucoes=[r1, r2, r3]))
        got = self.events(path, 4)[3]
        self.assertEqual((got["event"], got["data"]["status"]), ("EVENT:PIX_REFUND", "EM_PROCESSAMENTO"))
        r3 = dict(r3, status="DEVOLVIDO", horario=dict(r3["horario"], liquidacao=rfc3339(now())))
        self.send(self.conn, dict(p, devolucoes=[r1, r2, r3]))
        got = self.events(path, 5)[4]
        self.assertEqual(got["event"], "EVENT:CHARGE_REFUND")
        self.assertEqual(self.get_charge(c["id"])["status"], "REFUNDED")
        self.assertEqual(self.balance()["balance"], bal - (c["amount"] - c["fee"]))
        self.quiet_after(path, 5)

    def test_paid_and_refunded_in_the_first_notification(self):
        # heard late: the bank's first word on the Pix already lists its refund
        path = unique("ref")
        c = self.charge(1200, path)
        bal = self.balance()["balance"]
        p = pix("12.00", c["id"], devolucoes=[refund("12.00", "DEVOLVIDO")])
        d = self.send(self.conn, p)
        self.assertEqual(self.outcome(d), ("paid", None))
        got = self.events(path, 2)
        self.assertEqual([g["event"] for g in got], ["EVENT:CHARGE_PAID", "EVENT:CHARGE_REFUND"])
        self.assertEqual(got[0]["id"], d["pix"][0]["event"])
        self.assertEqual(got[1]["data"], self.get_charge(c["id"]))
        self.assertEqual(got[1]["data"]["status"], "REFUNDED")
        self.assertEqual(self.balance()["balance"], bal)
        self.quiet_after(path, 2)

    def test_two_refunds_that_together_cover_it_make_one_event(self):
        c, p, path = self.paid_charge(3000)
        bal = self.balance()["balance"]
        ra, rb = refund("20.00", "DEVOLVIDO"), refund("10.00", "DEVOLVIDO")
        self.send(self.conn, dict(p, devolucoes=[ra, rb]))
        got = self.events(path, 2)[1]
        self.assertEqual(got["event"], "EVENT:CHARGE_REFUND")
        self.quiet_after(path, 2)
        self.assertEqual(self.get_charge(c["id"])["status"], "REFUNDED")
        self.assertEqual(self.balance()["balance"], bal - (c["amount"] - c["fee"]))
        self.assertEqual(sorted(e["outcome"] for e in self.refunds_of(p["endToEndId"])),
                         ["included", "refunded"])

    def test_a_charge_paid_at_a_bank_is_refunded_at_the_bank(self):
        # the money is at the bank, and this connection has no API
        # credentials: the refund API says so and changes nothing; the
        # bank's own refund, reported, makes the charge REFUNDED once
        c, p, path = self.paid_charge(900)
        shown = self.get_charge(c["id"])
        bal = self.balance()["balance"]
        r = self.px.request("POST", "/v1/charge/%s/refund" % c["id"], headers=auth(self.key))
        self.assertEqual((r.status, r.json["error"]),
                         (409, "the charge was paid through bank connection %s, which has no "
                          "API credentials: refund it at the bank; its report makes the charge "
                          "REFUNDED" % self.conn["id"]))
        self.assertEqual(self.get_charge(c["id"]), shown)
        self.assertEqual(self.balance()["balance"], bal)
        self.send(self.conn, dict(p, devolucoes=[refund("9.00", "DEVOLVIDO")]))
        got = self.events(path, 2)[1]
        self.assertEqual((got["event"], got["data"]["status"]), ("EVENT:CHARGE_REFUND", "REFUNDED"))
        self.quiet_after(path, 2)
        self.assertEqual(self.get_charge(c["id"])["status"], "REFUNDED")
        self.assertLess(self.balance()["balance"], bal)

    def test_refunding_a_pix_that_did_not_pay_the_charge(self):
        # a second payment of a paid charge, sent back whole: the charge stays PAID
        c, p, path = self.paid_charge(800)
        shown = self.get_charge(c["id"])
        second = pix("8.00", c["id"])
        self.assertEqual(self.outcome(self.send(self.conn, second)), ("unmatched", "charge_paid"))
        self.send(self.conn, dict(second, devolucoes=[refund("8.00", "DEVOLVIDO")]))
        got = self.events(path, 3)[2]
        self.assertEqual((got["event"], got["data"]["status"], got["data"]["charge"]),
                         ("EVENT:PIX_REFUND", "DEVOLVIDO", shown))
        self.quiet_after(path, 3)
        self.assertEqual(self.get_charge(c["id"]), shown)


class Bodies(Base):
    """What pixrelay accepts, item by item, and what it answers for a whole body."""

    def spec_refuses(self, item):
        with self.assertRaises(bcb.SpecViolation):
            bcb.validate("Pix", item)

    def test_a_batch_with_good_and_bad_items(self):
        conn = self.connect()
        good = [pix("1.00"), pix("2.00")]
        for g in good:
            bcb.validate("Pix", g)
        bad_valor = pix("1")
        no_e2e = pix("3.00")
        del no_e2e["endToEndId"]
        no_tz = pix("4.00", horario="2020-09-09T20:15:00")
        long_chave = pix("5.00", chave="x" * 78)
        for b in (bad_valor, no_e2e, no_tz, long_chave):
            self.spec_refuses(b)
        items = [good[0], bad_valor, no_e2e, good[1], no_tz, long_chave]
        r = self.post(conn, {"pix": items})
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        refused = [
            {"index": 1, "endToEndId": bad_valor["endToEndId"], "error": "pix[1].valor: " + VALOR_MSG},
            {"index": 2, "endToEndId": None, "error": "pix[2].endToEndId: is required"},
            {"index": 4, "endToEndId": no_tz["endToEndId"],
             "error": 'pix[4].horario: must be an RFC 3339 date-time with a time zone, like '
                      '"2020-09-09T20:15:00.358Z"'},
            {"index": 5, "endToEndId": long_chave["endToEndId"],
             "error": "pix[5].chave: must be at most 77 characters"}]
        self.assertEqual((d["received"], d["accepted"], d["duplicates"]), (6, 2, 0))
        self.assertEqual([{k: x[k] for k in ("index", "endToEndId", "error")} for x in d["refused"]], refused)
        self.assertEqual([(x["outcome"], x["reasons"]) for x in d["refused"]],
                         [("refused", [x["error"]]) for x in refused])
        self.assertEqual([x["endToEndId"] for x in d["pix"]], [g["endToEndId"] for g in good])
        log = self.notifications(conn)
        got = sorted((e for e in log if e["outcome"] == "refused"), key=lambda e: e["index"])
        self.assertEqual([{k: e[k] for k in ("index", "endToEndId", "error")} for e in got], refused)
        self.assertEqual({e["source"] for e in got}, {"webhook"})
        # nothing a bank reports is dropped: each refused item is an event to
        # the account, with the item as received and the reasons
        for x in d["refused"]:
            self.assertRegex(x["event"], r"^evt_[0-9A-Z]{26}$")
            [got] = self.events("/account", 1, webhook_id=x["event"])
            self.assertEqual(got, {"id": x["event"], "event": "EVENT:PIX_REFUSED",
                                   "data": {"connection": conn["id"], "source": "webhook",
                                            "endToEndId": x["endToEndId"], "reasons": x["reasons"],
                                            "item": items[x["index"]]}})
        self.assertEqual(sorted(e["endToEndId"] for e in log if e["outcome"] == "unmatched"),
                         sorted(g["endToEndId"] for g in good))

    def test_every_item_refused(self):
        conn = self.connect()
        items = [pix("1,00"), pix("abc1.00xyz")]
        self.spec_refuses(items[0])
        # the schema's pattern is unanchored: as written it takes "abc1.00xyz"
        bcb.validate("Pix", items[1])
        r = self.post(conn, {"pix": items})
        # every item is recorded, each an event: 200, so that the bank does
        # not send again what is taken
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual((d["received"], d["accepted"], d["pix"]), (2, 0, []))
        self.assertEqual([(x["index"], x["outcome"], x["error"]) for x in d["refused"]],
                         [(0, "refused", "pix[0].valor: " + VALOR_MSG),
                          (1, "refused", "pix[1].valor: " + VALOR_MSG)])
        log = self.notifications(conn)
        self.assertEqual(sorted((e["index"], e["outcome"], e["error"]) for e in log),
                         [(0, "refused", "pix[0].valor: " + VALOR_MSG),
                          (1, "refused", "pix[1].valor: " + VALOR_MSG)])
        for x in d["refused"]:
            self.assertEqual(self.events("/account", 1, webhook_id=x["event"])[0]["event"],
                             "EVENT:PIX_REFUSED")

    def test_each_field_of_the_schema(self):
        conn = self.connect()
        ok = pix("1.00", "a" * 35, infoPagador="ç" * 140, devolucoes=[refund("0.01", "NAO_REALIZADO")] * 100)
        bcb.validate("Pix", ok)
        bad_refund = refund("1.00", "DEVOLVIDO")
        # (item, pixrelay's refusal, whether the official schema refuses it too:
        # its patterns are unanchored and the fixed txid has no maximum)
        cases = [
            (pix("1.00", e2e=e2e_id()[:31]), "pix[%d].endToEndId: must be 32 letters or digits", True),
            (pix("1.00", e2e=e2e_id()[:31] + "-"), "pix[%d].endToEndId: must be 32 letters or digits", True),
            (pix("1.00", "a" * 36), "pix[%d].txid: must be 1 to 35 letters or digits", False),
            (pix("1.00", ""), "pix[%d].txid: must be 1 to 35 letters or digits", True),
            (pix("1.00", "a-b"), "pix[%d].txid: must be 1 to 35 letters or digits", False),
            (pix("1.00", infoPagador="ç" * 141), "pix[%d].infoPagador: must be at most 140 characters", True),
            (pix("1.00", componentesValor=[]), "pix[%d].componentesValor: must be an object", True),
            (pix("1.00", devolucoes=[refund("0.01", "DEVOLVIDO")] * 101),
             "pix[%d].devolucoes: more than 100 refunds", False),
            (pix("1.00", devolucoes="x"), "pix[%d].devolucoes: must be an array of refunds", True),
            (pix("1.00", devolucoes=[dict(bad_refund, status="FEITO")]),
             "pix[%d].devolucoes[0].status: must be EM_PROCESSAMENTO, DEVOLVIDO or NAO_REALIZADO", True),
            (pix("1.00", devolucoes=[dict(bad_refund, rtrId="D1")]),
             "pix[%d].devolucoes[0].rtrId: must be 32 letters or digits", True),
            (pix("1.00", devolucoes=[{k: v for k, v in bad_refund.items() if k != "horario"}]),
             "pix[%d].devolucoes[0].horario: is required", True),
            (pix("1.00", horario=5), "pix[%d].horario: must be a string", True),
            (dict(pix("1.00"), valor=None), "pix[%d].valor: must be a string", True),
            (5, "pix[%d]: must be an object", True)]
        for item, msg, spec in cases:
            if spec:
                self.spec_refuses(item)
            else:
                bcb.validate("Pix", item)
        r = self.post(conn, {"pix": [ok] + [item for item, _, _ in cases]})
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual([x["endToEndId"] for x in d["pix"]], [ok["endToEndId"]])
        self.assertEqual([(x["index"], x["error"]) for x in d["refused"]],
                         [(i + 1, msg % (i + 1)) for i, (_, msg, _) in enumerate(cases)])

    def test_huge_valor_strings_are_refused_per_item(self):
        conn = self.connect()
        items = [pix("1" * 100000 + ".00"), pix("12345678901.00"), pix("9999999999.99"), pix("0.01")]
        for i in items:
            bcb.validate("Pix", i)  # unanchored: each holds \d{1,10}\.\d{2}
        t0 = time.time()
        r = self.post(conn, notification(*items))
        self.assertLess(time.time() - t0, 2.0)
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual([{k: x[k] for k in ("index", "endToEndId", "error")} for x in d["refused"]], [
            {"index": 0, "endToEndId": items[0]["endToEndId"], "error": "pix[0].valor: " + VALOR_MSG},
            {"index": 1, "endToEndId": items[1]["endToEndId"], "error": "pix[1].valor: " + VALOR_MSG}])
        amounts = {e["endToEndId"]: e["amount"] for e in self.notifications(conn) if e["outcome"] != "refused"}
        # exact cents, from the text
        self.assertEqual(amounts, {items[2]["endToEndId"]: 999999999999, items[3]["endToEndId"]: 1})

    def test_malformed_bodies(self):
        conn = self.connect()
        for raw, msg in [
                (b"{not json", None),
                (b"7", "request body must be a JSON object or array"),
                (b'{"pixx": []}', 'pix: is required (a Pix notification is {"pix": [...]}, or its list alone)'),
                (b'{"pix": {"endToEndId": "x"}}', "pix: must be an array"),
                (b'{"pix": "E1"}', "pix: must be an array")]:
            r = self.post(conn, None, raw=raw)
            self.assertEqual(r.status, 400, raw)
            if msg:
                self.assertEqual(r.json["error"], msg, raw)
            else:
                self.assertRegex(r.json["error"], r"^invalid JSON: ")
        # over max-body (1 MiB by default)
        r = self.post(conn, None, raw=b'{"pix": [' + b" " * (1 << 20) + b"]}")
        self.assertEqual(r.status, 413)
        # more than 1,000 Pix: 413, nothing stored
        r = self.post(conn, None, raw=json.dumps({"pix": [{}] * 1001}).encode())
        self.assertEqual((r.status, r.json["error"]), (413, "pix: more than 1000 items in one notification"))
        # nesting: refused before a tree is built, at once
        deep = 100000
        raw = ('{"pix": [{"endToEndId": "%s", "valor": "1.00", "horario": "%s", "infoPagador": '
               % (e2e_id(), rfc3339(now())) + "[" * deep + "]" * deep + "}]}").encode()
        t0 = time.time()
        r = self.post(conn, None, raw=raw)
        self.assertLess(time.time() - t0, 1.0)
        self.assertEqual((r.status, r.json["error"]), (400, "invalid JSON: nested deeper than 32 levels"))
        self.assertEqual(self.notifications(conn), [])

    def test_a_thousand_pix_in_bounded_time_while_the_process_answers(self):
        conn = self.connect(key=self.quiet_key)  # an account without postbackUrl
        body = notification(*[pix(valor_of(100 + i)) for i in range(1000)])
        out = {}

        def call():
            t0 = time.time()
            out["r"] = self.post(conn, body)
            out["took"] = time.time() - t0

        t = threading.Thread(target=call)
        t.start()
        slowest, probes = 0.0, 0
        while t.is_alive() or probes == 0:
            t0 = time.time()
            self.assertEqual(self.px.request("GET", "/healthz").status, 200)
            slowest = max(slowest, time.time() - t0)
            probes += 1
            time.sleep(0.02)
        t.join()
        r = out["r"]
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual((d["received"], d["accepted"], d["duplicates"], d["refused"]), (1000, 1000, 0, []))
        self.assertEqual({self.outcome(d, i) for i in range(1000)}, {("unmatched", "no_txid")})
        self.assertEqual(len(set(x["event"] for x in d["pix"])), 1000)
        print("1,000 Pix answered in %.3f s; slowest of %d /healthz meanwhile %.3f s"
              % (out["took"], probes, slowest))
        self.assertLess(out["took"], 10.0)
        self.assertLess(slowest, 1.0)
        self.assertEqual(len(self.notifications(conn, key=self.quiet_key)), 100)  # the default page
        r = self.px.request("GET", "%s/%s/notifications?limit=1000" % (CONNECTIONS, conn["id"]),
                            headers=auth(self.quiet_key))
        self.assertEqual([e["endToEndId"] for e in r.json["data"]["notifications"]],
                         [p["endToEndId"] for p in reversed(body["pix"])])
        # the last 1,000 are kept
        one = pix("1.00")
        self.send(conn, one)
        r = self.px.request("GET", "%s/%s/notifications?limit=1000" % (CONNECTIONS, conn["id"]),
                            headers=auth(self.quiet_key))
        self.assertEqual([e["endToEndId"] for e in r.json["data"]["notifications"]],
                         [one["endToEndId"]] + [p["endToEndId"] for p in reversed(body["pix"][1:])])


class Concurrency(Base):
    def test_the_same_pix_from_two_processes_at_once(self):
        px2 = Pixrelay(self.wd.path, self.redis, args=["--trusted-proxies", "127.0.0.1"], name="px2",
                       door=True).start()
        self.addCleanup(lambda: check_exit(px2.stop(), px2.log()))
        px2.wait_ready()
        conn = self.connect()
        path = unique("race")
        c = self.charge(9900, path)
        before = self.balance()["balance"]
        p = pix("99.00", c["id"])
        raw = json.dumps(notification(p)).encode()
        hook = self.hook_path(conn)
        go = threading.Barrier(20)
        answers = [None] * 20

        def one(i):
            proc = (self.px, px2)[i % 2]
            go.wait()
            answers[i] = proc.request("POST", hook, raw=raw, headers={"Content-Type": "application/json"})

        threads = [threading.Thread(target=one, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual([a.status for a in answers], [200] * 20, answers)
        outcomes = sorted(a.json["data"]["pix"][0]["outcome"] for a in answers)
        self.assertEqual(outcomes, ["duplicate"] * 19 + ["paid"])
        self.assertEqual(len({a.json["data"]["pix"][0]["event"] for a in answers}), 1)
        self.assertEqual(self.events(path, 1)[0]["event"], "EVENT:CHARGE_PAID")
        self.quiet_after(path, 1)
        bal = self.balance()
        self.assertEqual(bal["balance"], before + c["amount"] - c["fee"])
        self.assertEqual([e["kind"] for e in bal["entries"] if e.get("charge") == c["id"]], ["charge_paid"])


class MutualTls(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        d = cls.certs
        cls.ca = certs.make_ca(d, "bank-ca", "Test Bank Webhook CA")
        cls.client = certs.make_client(d, cls.ca, "bank-client", "webhook.bank.example")
        cls.expired = certs.make_expired_client(d, cls.ca)
        cls.foreign = certs.make_foreign_client(d)
        cls.server_only = certs.make_server(d, cls.ca, "bank-server")  # no clientAuth
        with open(cls.ca.cert) as f:
            cls.ca_pem = f.read()
        cls.conn = cls.class_connection(auth_mode="mtls", pix_key="mtls@loja.com.br", client_ca=cls.ca_pem)

    @staticmethod
    def escaped(cert):
        """The PEM as nginx's $ssl_client_escaped_cert has it."""
        with open(cert.cert) as f:
            return urllib.parse.quote(f.read(), safe="")

    def test_the_connection(self):
        c = self.conn
        self.assertEqual(c["webhookUrl"], "http://127.0.0.1:%d/v1/webhooks/bank/%s" % (self.px.port, c["id"]))
        fp = subprocess.run(["openssl", "x509", "-in", self.ca.cert, "-noout", "-fingerprint", "-sha256"],
                            capture_output=True, text=True, check=True).stdout
        fp = fp.strip().split("=", 1)[1].replace(":", "").lower()
        self.assertEqual((c["auth"], c["clientCa"]), ("mtls", {"certificates": 1, "sha256": fp}))
        self.assertNotIn("BEGIN CERTIFICATE", json.dumps(c))

    def test_certificates(self):
        path = unique("mtls")
        ch = self.charge(3300, path)
        body = notification(pix("33.00", ch["id"]))
        hook = self.hook_path(self.conn)
        log_before = len(self.px.log())
        for what, headers, why in [
                ("expired", {"X-Client-Cert": self.escaped(self.expired)}, "certificate has expired"),
                ("another CA's", {"X-Client-Cert": self.escaped(self.foreign)},
                 "unable to get local issuer certificate"),
                ("no clientAuth", {"X-Client-Cert": self.escaped(self.server_only)},
                 "unsuitable certificate purpose"),
                ("no header", {}, "no client certificate"),
                ("not a certificate", {"X-Client-Cert": "hello"}, "not a PEM certificate")]:
            r = self.post(self.conn, body, headers=headers)
            self.assertEqual((r.status, r.json), (401, {"error": UNAUTHENTICATED, "status": 401, "data": []}),
                             what)
            self.assertIn(why, self.log_until(r, log_before), what)
        # the valid header on the API port, from a peer that is not a trusted
        # proxy and from one that is: the API listener never believes it
        api_port = "X-Client-Cert on the API listener: ignored (mTLS banks come through bank-listen)"
        for source in ("127.0.0.2", "127.0.0.1"):
            status, answer = request_from(source, self.px.port, "POST", hook, body,
                                          {"X-Client-Cert": self.escaped(self.client)})
            self.assertEqual((status, answer), (401, {"error": UNAUTHENTICATED, "status": 401, "data": []}))
            r = self.post(self.conn, body, headers={"X-Client-Cert": self.escaped(self.client)}, door=False)
            self.assertEqual(r.status, 401, r)
            self.assertIn("connection %s: %s" % (self.conn["id"], api_port), self.log_until(r, log_before))
        # a URL token does not open an mTLS connection
        r = self.post(self.conn, body, path=hook + "?hmac=anything")
        self.assertEqual(r.status, 401)
        self.quiet_after(path, 0)
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")
        # the bank's certificate, from the proxy on the bank door
        r = self.post(self.conn, body, headers={"X-Client-Cert": self.escaped(self.client)})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.outcome(r.json["data"]), ("paid", None))
        self.assertEqual(self.events(path, 1)[0]["event"], "EVENT:CHARGE_PAID")
        # the same on the API port, from the trusted proxy: still refused after it worked
        status, _ = request_from("127.0.0.1", self.px.port, "POST", hook, notification(pix("1.00")),
                                 {"X-Client-Cert": self.escaped(self.client)})
        self.assertEqual(status, 401)
        # what the connection heard: the one authenticated call
        self.assertEqual([(e["endToEndId"], e["outcome"]) for e in self.notifications(self.conn)],
                         [(body["pix"][0]["endToEndId"], "paid")])

    def test_the_trust_list_may_pin_an_intermediate_ca(self):
        d = self.certs
        root = certs.make_ca(d, "bank-root")
        inter = make_intermediate(d, root, "bank-intermediate")
        leaf = certs.make_client(d, inter, "bank-leaf")
        pems = {}
        for name, ca in (("root", root), ("inter", inter)):
            with open(ca.cert) as f:
                pems[name] = f.read()
        header = {"X-Client-Cert": self.escaped(leaf)}
        # the proxy forwards the leaf alone: the intermediate must be in the list
        for ca_pem, status, count in [(pems["inter"], 200, 1), (pems["root"] + pems["inter"], 200, 2),
                                      (pems["root"], 401, 1)]:
            conn = self.connect(auth_mode="mtls", client_ca=ca_pem)
            self.assertEqual(conn["clientCa"]["certificates"], count)
            r = self.post(conn, notification(pix("1.00")), headers=header)
            self.assertEqual(r.status, status, r)
        # at most 16 certificates
        r = self.px.request("POST", CONNECTIONS, body={"pixKey": "many@b.co", "auth": "mtls",
                                                       "clientCa": pems["inter"] * 17}, headers=auth(self.key))
        self.assertEqual((r.status, r.json["error"]), (400, "clientCa: more than 16 certificates in the PEM"))
        self.connect(auth_mode="mtls", client_ca=pems["inter"] * 16)

    def test_connect_validation(self):
        with open(self.ca.key) as f:
            key_pem = f.read()
        for body, status, msg in [
                ({"pixKey": "a@b.co", "auth": "mtls"}, 400,
                 'clientCa: is required with auth "mtls" (the PEM of the CA that signs the bank\'s client '
                 'certificates)'),
                ({"pixKey": "a@b.co", "auth": "mtls", "clientCa": 5}, 400, "clientCa: must be a string"),
                ({"pixKey": "a@b.co", "auth": "mtls", "clientCa": self.ca_pem + key_pem}, 400,
                 "clientCa: the PEM holds something other than certificates"),
                ({"pixKey": "a@b.co", "auth": "mtls", "clientCa": "garbage"}, 400,
                 "clientCa: no certificate in the PEM"),
                ({"pixKey": "a@b.co", "auth": "mtls", "clientCa": ""}, 400,
                 "clientCa: the trust list must be 1 to 65536 bytes of PEM"),
                ({"pixKey": "a@b.co", "auth": "url-token", "clientCa": self.ca_pem}, 400,
                 'clientCa: only with auth "mtls"'),
                ({"auth": "url-token"}, 400, "pixKey: is required (the Pix key at the bank)"),
                ({"pixKey": 7, "auth": "url-token"}, 400, "pixKey: must be a string"),
                ({"pixKey": "x" * 78, "auth": "url-token"}, 400, "pixKey: must be 1 to 77 characters"),
                ({"pixKey": "", "auth": "url-token"}, 400, "pixKey: must be 1 to 77 characters"),
                ({"pixKey": "a b@c.co", "auth": "url-token"}, 400,
                 "pixKey: must be printable ASCII without spaces (an e-mail, +55 phone, CPF, CNPJ or random key)"),
                ({"pixKey": "a@b.co", "auth": "token"}, 400, 'auth: must be "mtls" or "url-token"'),
                ({"pixKey": "a@b.co"}, 400, 'auth: must be "mtls" or "url-token"'),
                ({"pixKey": "a@b.co", "auth": "url-token", "hmac": "x"}, 400,
                 "unknown field 'hmac'; allowed: pixKey, auth, clientCa, clientCertSubject, "
                 "clientCertPins, default, recebedor, provider"),
                # a provider's connection takes its API token from a file on
                # the host: the CLI makes it (docs/providers.md)
                ({"pixKey": "a@b.co", "auth": "url-token", "provider": "woovi"}, 400,
                 'provider: only "api-pix" here; a payment provider\'s connection is made '
                 "with pixrelay bank connect --provider NAME --api-token-file FILE on a "
                 "host with the credentials key (docs/providers.md)"),
                ({"pixKey": "mtls@loja.com.br", "auth": "url-token"}, 409,
                 "pixKey: connected already by " + self.conn["id"])]:
            r = self.px.request("POST", CONNECTIONS, body=body, headers=auth(self.key))
            self.assertEqual((r.status, r.json["error"]), (status, msg), body)
        # 77 characters is fine, and another account may connect the same key
        self.connect(pix_key="y" * 77)
        self.connect(key=self.quiet_key, pix_key="mtls@loja.com.br")


class Pins(Base):
    """An mTLS connection pinned beyond its CA: the leaf's subject (compared
    as a name) and/or its key (sha256/ pins, several for a rotation). The
    CA issues certificates to others too (a public CA, ICP-Brasil): only
    the bank's own gets in."""

    SUBJECT = "CN=webhook.bank.example,O=Banco Exemplo S.A.,C=BR"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        d = cls.certs
        cls.ca = certs.make_ca(d, "public-ca", "Test Public CA")
        # the bank's certificate, its next one (a new key), and another
        # customer's of the same CA under the same host name
        cls.bank = certs.make_client(d, cls.ca, "pinned-bank",
                                     subject="/C=BR/O=Banco Exemplo S.A./CN=webhook.bank.example")
        cls.bank_next = certs.make_client(d, cls.ca, "pinned-bank-next",
                                          subject="/C=BR/O=Banco Exemplo S.A./CN=webhook.bank.example")
        cls.other = certs.make_client(d, cls.ca, "pinned-other",
                                      subject="/C=BR/O=Loja Qualquer Ltda/CN=webhook.bank.example")
        with open(cls.ca.cert) as f:
            cls.ca_pem = f.read()

    def header(self, cert):
        return {"X-Client-Cert": MutualTls.escaped(cert)}

    def refused(self, conn, cert, why):
        """A Pix of a charge sent with `cert`: 401, `why` in the log, nothing
        stored (the charge stays PENDING, the connection heard nothing)."""
        path = unique("pinned")
        ch = self.charge(1200, path)
        before = len(self.px.log())
        r = self.post(conn, notification(pix("12.00", ch["id"])), headers=self.header(cert))
        self.assertEqual((r.status, r.json), (401, {"error": UNAUTHENTICATED, "status": 401, "data": []}))
        self.assertIn("connection %s: %s" % (conn["id"], why), self.log_until(r, before))
        self.assertEqual(self.get_charge(ch["id"])["status"], "PENDING")
        self.assertNotIn(ch["id"], json.dumps(self.notifications(conn)))
        self.quiet_after(path, 0)

    def taken(self, conn, cert):
        """A Pix sent with `cert` is taken (200, unmatched: no txid)."""
        r = self.post(conn, notification(pix("1.00")), headers=self.header(cert))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.outcome(r.json["data"]), ("unmatched", "no_txid"))

    def test_a_pinned_subject(self):
        # written in any case and spacing: compared as a name, kept as read
        conn = self.connect(auth_mode="mtls", client_ca=self.ca_pem,
                            clientCertSubject="cn = WEBHOOK.bank.example, o=banco exemplo s.a., c=br")
        self.assertEqual(conn["trust"], {"subject": "CN=WEBHOOK.bank.example,O=banco exemplo s.a.,C=br",
                                         "pins": [], "warning": None})
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, conn["id"]), headers=auth(self.key))
        self.assertEqual(r.json["data"]["trust"], conn["trust"])
        self.taken(conn, self.bank)
        self.refused(conn, self.other,
                     "the certificate's subject is not the connection's pinned subject (it is "
                     "CN=webhook.bank.example,O=Loja Qualquer Ltda,C=BR)")
        # the name as X.509 orders it is another name: RFC 4514 writes the
        # most specific RDN first
        conn = self.connect(auth_mode="mtls", client_ca=self.ca_pem,
                            clientCertSubject="C=BR,O=Banco Exemplo S.A.,CN=webhook.bank.example")
        self.refused(conn, self.bank,
                     "the certificate's subject is not the connection's pinned subject (it is "
                     "CN=webhook.bank.example,O=Banco Exemplo S.A.,C=BR)")

    def test_pinned_keys_and_a_rotation(self):
        old, new = certs.key_pin(self.bank.cert), certs.key_pin(self.bank_next.cert)
        # curl's sha256// is taken, kept as sha256/
        conn = self.connect(auth_mode="mtls", client_ca=self.ca_pem,
                            clientCertPins=["sha256/" + old[len("sha256/"):]])
        self.assertEqual(conn["trust"], {"subject": None, "pins": [old], "warning": None})
        self.taken(conn, self.bank)
        why = "the certificate's key matches none of the connection's pins"
        self.refused(conn, self.bank_next, why)
        self.refused(conn, self.other, why)
        # the bank announces its next key: both, for the change
        r = self.update(conn, {"clientCertPins": [old, "sha256//" + new[len("sha256/"):]]})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["trust"]["pins"], [old, new])
        self.taken(conn, self.bank)
        self.taken(conn, self.bank_next)
        self.refused(conn, self.other, why)
        # the old one retired
        r = self.update(conn, {"clientCertPins": [new]})
        self.assertEqual(r.status, 200, r)
        self.refused(conn, self.bank, why)
        self.taken(conn, self.bank_next)
        # subject and key both: each must hold
        r = self.update(conn, {"clientCertSubject": self.SUBJECT})
        self.assertEqual(r.json["data"]["trust"], {"subject": self.SUBJECT, "pins": [new], "warning": None})
        self.taken(conn, self.bank_next)
        self.refused(conn, self.bank, why)
        self.refused(conn, self.other, "the certificate's subject is not the connection's pinned subject")

    def test_an_update_applies_to_the_next_call(self):
        conn = self.connect(auth_mode="mtls", client_ca=self.ca_pem)
        self.assertEqual(conn["trust"], {"subject": None, "pins": [], "warning": None})
        self.taken(conn, self.other)
        r = self.update(conn, {"clientCertSubject": self.SUBJECT})
        self.assertEqual(r.status, 200, r)
        self.assertEqual({k: r.json["data"][k] for k in ("id", "auth", "webhookUrl", "clientCa")},
                         {k: conn[k] for k in ("id", "auth", "webhookUrl", "clientCa")})
        self.refused(conn, self.other, "the certificate's subject is not the connection's pinned subject")
        self.taken(conn, self.bank)
        # null removes the pin
        r = self.update(conn, {"clientCertSubject": None})
        self.assertEqual(r.json["data"]["trust"]["subject"], None)
        self.taken(conn, self.other)
        # another trust list: the old CA's certificates are refused
        other_ca = certs.make_ca(self.certs, "other-public-ca")
        with open(other_ca.cert) as f:
            pem = f.read()
        r = self.update(conn, {"clientCa": pem})
        self.assertEqual(r.status, 200, r)
        self.assertNotEqual(r.json["data"]["clientCa"]["sha256"], conn["clientCa"]["sha256"])
        self.refused(conn, self.bank, "unable to get local issuer certificate")

    def test_connect_and_update_validation(self):
        conn = self.connect(auth_mode="mtls", client_ca=self.ca_pem)
        token = self.connect()
        pin = certs.key_pin(self.bank.cert)
        for body, status, msg in [
                ({}, 400, "nothing to change; fields: clientCa, clientCertSubject, clientCertPins, default, "
                 "recebedor"),
                ({"pixKey": "x@y.co"}, 400,
                 "unknown field 'pixKey'; allowed: clientCa, clientCertSubject, clientCertPins, default, "
                 "recebedor"),
                ({"clientCertSubject": "/C=BR/CN=x"}, 400,
                 "clientCertSubject: an RFC 4514 name is written CN=...,O=...,C=..., the most specific first, "
                 "not /C=.../CN=... (openssl x509 -noout -subject -nameopt RFC2253 writes it) (at character 1)"),
                ({"clientCertSubject": "CN=a;O=b"}, 400,
                 "clientCertSubject: ';' in a value is written \\; (RDNs are separated by ',') (at character 5)"),
                ({"clientCertSubject": "XX=a"}, 400, "clientCertSubject: unknown attribute type 'XX' (at character 1)"),
                ({"clientCertSubject": 7}, 400,
                 "clientCertSubject: must be a string (an RFC 4514 name, like "
                 "CN=webhook.bank.example,O=Bank,C=BR) or null"),
                ({"clientCertPins": pin}, 400, 'clientCertPins: must be an array of pins ("sha256/<base64>")'),
                ({"clientCertPins": [pin, 5]}, 400, "clientCertPins[1]: must be a string"),
                ({"clientCertPins": [pin, pin]}, 400, "clientCertPins[1]: %s is given twice" % pin),
                ({"clientCertPins": ["sha1/abc"]}, 400,
                 "clientCertPins[0]: must be sha256/ and the base64 of the SHA-256 of the certificate's "
                 "public key (its DER SubjectPublicKeyInfo): 44 characters"),
                ({"clientCertPins": ["sha256/" + base64_of(i) for i in range(9)]}, 400,
                 "clientCertPins[8]: at most 8 pins"),
                ({"default": "yes"}, 400, "default: must be true or false"),
                ({"clientCa": "garbage"}, 400, "clientCa: no certificate in the PEM"),
                ({"clientCa": None}, 400, "clientCa: must be a string")]:
            r = self.update(conn, body)
            self.assertEqual((r.status, r.json["error"]), (status, msg), body)
        # nothing of those changed it
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, conn["id"]), headers=auth(self.key))
        self.assertEqual(r.json["data"], conn)
        # a URL-token connection has no certificate to pin
        r = self.update(token, {"clientCertPins": [pin]})
        self.assertEqual((r.status, r.json["error"]),
                         (409, 'bank connection %s authenticates its bank with a URL token: clientCa, '
                               'clientCertSubject and clientCertPins are for auth "mtls"' % token["id"]))
        for field, value in (("clientCertSubject", self.SUBJECT), ("clientCertPins", [pin])):
            r = self.px.request("POST", CONNECTIONS, headers=auth(self.key),
                                body={"pixKey": "t@b.co", "auth": "url-token", field: value})
            self.assertEqual((r.status, r.json["error"]), (400, '%s: only with auth "mtls"' % field))
            r = self.px.request("POST", CONNECTIONS, headers=auth(self.key),
                                body={"pixKey": "t@b.co", "auth": "mtls", "clientCa": self.ca_pem,
                                      field: 5})
            self.assertEqual(r.status, 400, r)
        # another account's, or none: not found
        for key, cid in ((self.quiet_key, conn["id"]), (self.key, "bnk_01JZZZZZZZZZZZZZZZZZZZZZZZ")):
            r = self.px.request("PATCH", "%s/%s" % (CONNECTIONS, cid), body={"default": True},
                                headers=auth(key))
            self.assertEqual((r.status, r.json["error"]), (404, "bank connection not found: " + cid))

    def test_the_default_charging_connection(self):
        account, key = Env.store_account("Two banks")
        a = self.connect(key=key, default=True)
        self.assertIs(a["default"], True)
        b = self.connect(key=key)
        self.assertIs(b["default"], False)
        c = self.connect(key=key, default=True)

        def defaults():
            r = self.px.request("GET", CONNECTIONS, headers=auth(key))
            return {x["id"]: x["default"] for x in r.json["data"]["connections"]}
        # one a account at most: the last one marked
        self.assertEqual(defaults(), {a["id"]: False, b["id"]: False, c["id"]: True})
        r = self.update(b, {"default": True}, key=key)
        self.assertEqual((r.status, r.json["data"]["default"]), (200, True))
        self.assertEqual(defaults(), {a["id"]: False, b["id"]: True, c["id"]: False})
        # the account's charges follow its default (docs/banks.md, "The key on the QR")
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 500}, headers=auth(key))
        self.assertEqual(r.status, 200, r)
        self.assertIn("01%02d%s" % (len(b["pixKey"]), b["pixKey"]), r.json["data"]["brCode"])
        r = self.update(b, {"default": False}, key=key)
        self.assertEqual(defaults(), {a["id"]: False, b["id"]: False, c["id"]: False})
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 500}, headers=auth(key))
        self.assertEqual(r.status, 409, r)
        # another account's default is its own
        mine = self.connect(default=True)
        self.assertIs(mine["default"], True)
        # (the platform account's charges go back to their connection after)
        self.addCleanup(self.update, Env.charging, {"default": True})
        self.assertEqual(defaults(), {a["id"]: False, b["id"]: False, c["id"]: False})


def base64_of(i):
    """The base64 of 32 bytes of value i: a pin's digest."""
    return base64.b64encode(bytes([i]) * 32).decode()


class WhoConnects(Base):
    """In production a connection's Pix credit its account: only a master
    key (or the operator's CLI) makes, changes or disconnects one; the
    account's own key reads it. The sandbox is as it was."""

    def forbidden(self, done, verb):
        return ("in production a bank connection is %s only with a master key (X-Account-ID: the "
                "account) or on the server with pixrelay bank %s: its Pix credit the account; an "
                "account key may read its connections" % (done, verb))

    def test_production_takes_a_master_key(self):
        with open(certs.make_ca(self.certs, "who-ca").cert) as f:
            ca_pem = f.read()
        body = {"pixKey": "prod@loja.com.br", "auth": "mtls", "clientCa": ca_pem}
        r = self.px.request("POST", CONNECTIONS, body=body, headers=auth(self.live))
        self.assertEqual((r.status, r.json["error"]), (403, self.forbidden("made", "connect")))
        r = self.px.request("GET", CONNECTIONS, headers=auth(self.live))
        self.assertEqual((r.status, r.json["data"]["connections"]), (200, []))
        # the master key for the account
        conn = self.connect(key=self.live_master, account=self.live_account, **body)
        self.assertEqual((conn["account"], conn["environment"]), (self.live_account, "production"))
        # unpinned in production: the connection says what that trusts
        warning = ("not pinned: any certificate for TLS clients that a CA of the trust list issued is "
                   "taken as this connection's bank, so anyone who holds one can report Pix for it; "
                   "pin the bank's own certificate with pixrelay bank update %s "
                   "--client-cert-subject DN or --client-cert-pin sha256/..., or PATCH "
                   "/v1/bank/connections/%s with clientCertSubject or clientCertPins" % (conn["id"], conn["id"]))
        self.assertEqual(conn["trust"], {"subject": None, "pins": [], "warning": warning})
        # the account's key reads it, its notifications and its report
        for path in ("", "/notifications"):
            r = self.px.request("GET", "%s/%s%s" % (CONNECTIONS, conn["id"], path), headers=auth(self.live))
            self.assertEqual(r.status, 200, r)
        r = self.px.request("GET", CONNECTIONS, headers=auth(self.live))
        self.assertEqual([c["id"] for c in r.json["data"]["connections"]], [conn["id"]])
        self.assertEqual(r.json["data"]["connections"][0]["trust"]["warning"], warning)
        r = self.px.request("GET", "/v1/bank/reconciliation?connection=" + conn["id"], headers=auth(self.live))
        self.assertEqual(r.status, 200, r)
        # ... and asks for a reconciliation (this one has no API credentials)
        r = self.px.request("POST", "%s/%s/reconcile" % (CONNECTIONS, conn["id"]), headers=auth(self.live))
        self.assertEqual(r.status, 409, r)
        self.assertIn("has no API credentials", r.json["error"])
        # but changes and disconnects nothing
        r = self.update(conn, {"clientCertSubject": "CN=x"}, key=self.live)
        self.assertEqual((r.status, r.json["error"]), (403, self.forbidden("changed", "update")))
        r = self.px.request("POST", "%s/%s/disconnect" % (CONNECTIONS, conn["id"]), headers=auth(self.live))
        self.assertEqual((r.status, r.json["error"]), (403, self.forbidden("disconnected", "disconnect")))
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, conn["id"]), headers=auth(self.live))
        self.assertEqual(r.json["data"], conn)
        # the master key pins it: the warning goes
        r = self.update(conn, {"clientCertSubject": Pins.SUBJECT}, key=self.live_master)
        self.assertEqual((r.status, r.json["data"]["trust"]),
                         (200, {"subject": Pins.SUBJECT, "pins": [], "warning": None}))
        # with X-Account-ID, or for the whole environment
        r = self.update(conn, {"clientCertSubject": None}, key=self.live_master, account=self.live_account)
        self.assertEqual((r.status, r.json["data"]["trust"]["warning"]), (200, warning))
        r = self.px.request("POST", "%s/%s/disconnect" % (CONNECTIONS, conn["id"]),
                            headers=auth(self.live_master))
        self.assertEqual(r.status, 200, r)
        # the sandbox as it was: the account key connects, changes, disconnects
        conn = self.connect(auth_mode="mtls", client_ca=ca_pem)
        self.assertEqual(conn["trust"]["warning"], None)
        r = self.update(conn, {"default": True})
        self.assertEqual(r.status, 200, r)
        r = self.px.request("POST", "%s/%s/disconnect" % (CONNECTIONS, conn["id"]), headers=auth(self.key))
        self.assertEqual(r.status, 200, r)


class BareArray(Base):
    """Inter posts the list of Pix alone, [Pix, ...], not {"pix": [...]}."""

    def test_a_bare_array_of_pix(self):
        conn = self.connect()
        path = unique("bare")
        ch = self.charge(4200, path)
        p, q = pix("42.00", ch["id"]), pix("1.00")
        bcb.validate_webhook_body(notification(p, q))
        r = self.post(conn, None, raw=json.dumps([p, q]).encode())
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual((d["received"], d["accepted"]), (2, 2))
        self.assertEqual([self.outcome(d, i) for i in range(2)], [("paid", None), ("unmatched", "no_txid")])
        self.assertEqual(self.events(path, 1)[0]["event"], "EVENT:CHARGE_PAID")
        # the same again, in the standard's form: duplicates
        d = self.send(conn, p, q)
        self.assertEqual([e["outcome"] for e in d["pix"]], ["duplicate", "duplicate"])
        # a bare scalar is no notification; a bare empty list is one of nothing
        r = self.post(conn, None, raw=b'"pix"')
        self.assertEqual((r.status, r.json["error"]), (400, "request body must be a JSON object or array"))
        r = self.post(conn, None, raw=b"[]")
        self.assertEqual((r.status, r.json["data"]["received"]), (200, 0))


class Limits(Base):
    def test_twenty_connections_per_account(self):
        account, key = Env.store_account("Full")
        ids = [self.connect(key=key, pix_key="k%02d@loja.com.br" % i)["id"] for i in range(20)]
        r = self.px.request("POST", CONNECTIONS, body={"pixKey": "k20@loja.com.br", "auth": "url-token"},
                            headers=auth(key))
        self.assertEqual((r.status, r.json["error"]), (409, "the account has 20 bank connections already"))
        r = self.px.request("GET", CONNECTIONS, headers=auth(key))
        self.assertEqual(sorted(c["id"] for c in r.json["data"]["connections"]), sorted(ids))
        # the listing has no paging, and says so rather than ignore a parameter
        r = self.px.request("GET", CONNECTIONS + "?limit=5", headers=auth(key))
        self.assertEqual((r.status, r.json["error"]),
                         (400, "unknown query parameter 'limit'; allowed: none"))
        # one disconnected makes room
        r = self.px.request("POST", "%s/%s/disconnect" % (CONNECTIONS, ids[0]), headers=auth(key))
        self.assertEqual(r.status, 200, r)
        self.connect(key=key, pix_key="k20@loja.com.br")
        # another account's connections are not found
        for method, path in [("GET", ""), ("GET", "/notifications"), ("POST", "/disconnect")]:
            r = self.px.request(method, "%s/%s%s" % (CONNECTIONS, ids[1], path), headers=auth(self.key))
            self.assertEqual((r.status, r.json["error"]), (404, "bank connection not found: " + ids[1]))


class Scope(Base):
    def test_a_master_key(self):
        master = self.px.create_key("sandbox", master=True)["key"]
        r = self.px.request("POST", CONNECTIONS, body={"pixKey": "m@loja.com.br", "auth": "url-token"},
                            headers=auth(master))
        self.assertEqual((r.status, r.json["error"]),
                         (400, "X-Account-ID header is required with a master key on this operation"))
        r = self.px.request("POST", CONNECTIONS, body={"pixKey": "m@loja.com.br", "auth": "url-token"},
                            headers=auth(master, self.quiet))
        self.assertEqual(r.status, 200, r)
        theirs = r.json["data"]
        self.assertEqual(theirs["account"], self.quiet)
        mine = self.connect()
        # the whole environment without X-Account-ID, one account with it
        r = self.px.request("GET", CONNECTIONS, headers=auth(master))
        ids = {c["id"] for c in r.json["data"]["connections"]}
        self.assertLessEqual({theirs["id"], mine["id"]}, ids)
        r = self.px.request("GET", CONNECTIONS, headers=auth(master, self.quiet))
        ids = {c["id"] for c in r.json["data"]["connections"]}
        self.assertIn(theirs["id"], ids)
        self.assertNotIn(mine["id"], ids)
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, mine["id"]), headers=auth(master))
        self.assertEqual((r.status, r.json["data"]["id"]), (200, mine["id"]))
        # an account key sees its own only; production keys none of the sandbox's
        r = self.px.request("GET", CONNECTIONS, headers=auth(self.quiet_key))
        self.assertNotIn(mine["id"], {c["id"] for c in r.json["data"]["connections"]})
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, mine["id"]), headers=auth(self.live))
        self.assertEqual((r.status, r.json["error"]), (404, "bank connection not found: " + mine["id"]))


class OwnProcess(unittest.TestCase):
    """A pixrelay of its own: another setting, Redis stopped under it."""

    def test_webhook_base_url_and_redis_out_of_reach(self):
        wd = Workdir()
        redis = Redis(wd.path).start()
        px = Pixrelay(wd.path, redis, args=["--redis-timeout-ms", "500", "--bank-webhook-base-url",
                                            "https://pix-webhook.loja.com.br/v1/"]).start()
        try:
            px.wait_ready()
            px.cli("init")
            key = px.create_key("sandbox")["key"]
            r = px.request("POST", CONNECTIONS, body={"pixKey": "a@b.co", "auth": "url-token"},
                           headers=auth(key))
            self.assertEqual(r.status, 200, r)
            # connections' webhookUrl name the banks' webhook server (trailing slash removed)
            url = r.json["data"]["webhookUrl"]
            self.assertRegex(url, r"^https://pix-webhook\.loja\.com\.br/v1/webhooks/bank/bnk_[0-9A-Z]{26}"
                                  r"\?hmac=[A-Za-z0-9]{43}&ignorar=$")
            u = urllib.parse.urlsplit(url + "/pix")
            # Redis out of reach: 503, the bank sends it again
            redis.stop()
            wait_for(lambda: px.request("GET", "/readyz").status == 503 or None)
            r = px.request("POST", u.path + "?" + u.query, raw=json.dumps(notification(pix("1.00"))).encode(),
                           headers={"Content-Type": "application/json"})
            self.assertEqual(r.status, 503, r)
            self.assertIsNotNone(r.header("Retry-After"))
            text = px.request("GET", "/metrics").body.decode()
            self.assertEqual(metric(text, "pixrelay_bank_calls_total", result="unavailable"), 1)
            check_exit(px.stop(), px.log())
        finally:
            px.stop()
            redis.stop()
            wd.cleanup()


class Sandbox(Base):
    def test_simulate_pix(self):
        conn = self.connect()
        path = unique("sim")
        c = self.charge(6100, path)
        body = notification(pix("61.00", c["id"]))
        r = self.px.request("POST", "%s/%s/simulate-pix" % (CONNECTIONS, conn["id"]), body=body,
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual(self.outcome(d), ("paid", None))
        got = self.events(path, 1)[0]
        self.assertEqual(got, {"id": d["pix"][0]["event"], "event": "EVENT:CHARGE_PAID",
                               "data": self.get_charge(c["id"])})
        # the same path: deduplicated against what the "bank" sends
        self.assertEqual(self.send(conn, body["pix"][0])["pix"][0]["outcome"], "duplicate")
        # another account's connection is not found
        r = self.px.request("POST", "%s/%s/simulate-pix" % (CONNECTIONS, conn["id"]), body=body,
                            headers=auth(self.quiet_key))
        self.assertEqual((r.status, r.json["error"]), (404, "bank connection not found: " + conn["id"]))
        # production: the bank reports the Pix (a production connection is
        # made with a master key)
        live_conn = self.connect(key=self.live_master, account=self.live_account)
        self.assertEqual(live_conn["environment"], "production")
        r = self.px.request("POST", "%s/%s/simulate-pix" % (CONNECTIONS, live_conn["id"]), body=body,
                            headers=auth(self.live))
        self.assertEqual((r.status, r.json["error"]),
                         (403, "simulate-pix is for sandbox keys only; in production the bank reports the Pix"))
        self.assertEqual(self.notifications(live_conn, key=self.live), [])
        # ... to the connection's webhook, as in the sandbox
        p = pix("61.00")
        d = self.send(live_conn, p)
        self.assertEqual(self.outcome(d), ("unmatched", "no_txid"))
        [entry] = self.notifications(live_conn, key=self.live)
        self.assertEqual((entry["endToEndId"], entry["source"]), (p["endToEndId"], "webhook"))


class Metrics(Base):
    def scrape(self):
        r = self.px.request("GET", "/metrics")
        self.assertEqual(r.status, 200)
        return r.body.decode()

    def test_outcomes_and_calls_are_counted(self):
        conn = self.connect()
        path = unique("metrics")
        paid = self.charge(500, path)
        mismatch = self.charge(600, path)
        expired = self.charge(700, path, expiration=3600)
        self.px.request("POST", "/v1/charge/pix/%s/simulate-expiry" % expired["id"], headers=auth(self.key))
        p = pix("5.00", paid["id"])
        before = self.scrape()
        self.send(conn, p, p, pix("6.01", mismatch["id"]), pix("5.00", paid["id"]),
                  pix("7.00", expired["id"], horario=rfc3339(expires_at(expired) + datetime.timedelta(hours=1))),
                  pix("1.00", new_ulid()), pix("1.00"))
        good = pix("1.00")
        bcb.validate("Pix", good)
        self.assertEqual(self.post(conn, {"pix": [pix("1"), good]}).status, 200)
        self.assertEqual(self.post(conn, {"pix": [pix("1")]}).status, 200)
        self.assertEqual(self.post(conn, None, raw=b"{").status, 400)
        self.assertEqual(self.post(conn, notification(), path="/v1/webhooks/bank/%s/pix" % conn["id"]).status,
                         401)
        after = self.scrape()

        def delta(name, **labels):
            return metric(after, name, **labels) - metric(before, name, **labels)

        outcomes = {o: delta("pixrelay_bank_pix_total", source="webhook", outcome=o)
                    for o in ("paid", "duplicate", "amount_mismatch", "charge_paid", "charge_expired",
                              "unknown_txid", "no_txid", "refused", "charge_refunded", "charge_failed")}
        self.assertEqual(outcomes, {"paid": 1, "duplicate": 1, "amount_mismatch": 1, "charge_paid": 1,
                                    "charge_expired": 1, "unknown_txid": 1, "no_txid": 2, "refused": 2,
                                    "charge_refunded": 0, "charge_failed": 0})
        calls = {c: delta("pixrelay_bank_calls_total", result=c)
                 for c in ("accepted", "unauthenticated", "malformed", "unavailable")}
        self.assertEqual(calls, {"accepted": 3, "unauthenticated": 1, "malformed": 1, "unavailable": 0})
        self.assertGreaterEqual(metric(after, "pixrelay_bank_calls_total", result="unauthenticated"), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
