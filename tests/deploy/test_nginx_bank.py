"""deploy/nginx.conf's server for banks' Pix webhooks (docs/banks.md), as
shipped, run by real nginx in front of two real pixrelay processes.

The stack is test_nginx.py's (nginxstack.py: the shipped file with only its
"site:" lines replaced), with both servers on one port as on a host where both
listen on 443, so the name in the TLS handshake (SNI) chooses the server: the
API name pay.example.test with deploy/nginx-selfcert.sh's certificate, the
webhook name pix-webhook.example.test with a certificate of the merchant's
own CA made here (tests/e2e/certs.py), so that a handshake that verifies for
the webhook name shows that nginx chose the webhook server. The webhook server
sends to the processes' bank doors (bank-listen, Unix sockets), where pixrelay
believes X-Client-Cert from nginx's workers (bank-proxy-uids www-data, as
root) alone; on the API port it believes it from no one, not even from
127.0.0.1, nginx's own address, which it trusts (--trusted-proxies) for
X-Forwarded-For. Clients connect from 127.0.0.2.

The test makes a bank CA and the bank's client certificate (clientAuth),
another CA with its client certificate, an expired client certificate of the
bank CA and one of the bank CA for TLS servers only; connects an account to
the bank by mutual TLS (clientCa: the bank CA) and by URL token; and sends
each Pix, checked first against the Central Bank's API Pix schema
(tests/e2e/bcb.py), to the webhook name:

- the bank's certificate: 200, the charge PAID (HTTP/1.1 and HTTP/2);
- no certificate, another CA's, the expired one, the one not for TLS
  clients: 401 with pixrelay's one message, its log naming the reason (the
  expired one nginx finds faulty itself and hands on through its error_page);
- the bank's call reaches pixrelay through a bank door (its request line
  names the client 127.0.0.2, from nginx's X-Forwarded-For; nginx's access
  log names the door's socket);
- X-Client-Cert carrying the bank's valid certificate, forged straight to
  pixrelay's API port from an untrusted address or from nginx's own, or
  through the API name (whose server clears the header): 401;
- a URL-token connection, no certificate: 200 (a wrong token: 401);
- any other path on the webhook name: nginx's 404 envelope;
- a connection's log holds the accepted Pix only, the charges of refused
  calls stay PENDING.
"""
import http.client
import json
import os
import secrets
import shutil
import ssl
import subprocess
import sys
import time
import unittest
import urllib.parse

import nginxstack
from nginxstack import NamedHTTPS, envelope, send

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import accountdata  # noqa: E402
import bcb  # noqa: E402
import certs  # noqa: E402
from harness import Workdir, auth, init_platforms, wait_for  # noqa: E402

CURL = shutil.which("curl")
PUBLIC = "pay.example.test"
HOOK = "pix-webhook.example.test"
CLIENT = "127.0.0.2"
UNAUTHENTICATED = "not authenticated as the bank of this connection"
MTLS_KEY = "pagamentos@loja.example"
TOKEN_KEY = "recebimentos@loja.example"


class BankWebhooksThroughNginx(unittest.TestCase):
    accepted = []  # (connection, endToEndId) of every Pix a test saw accepted
    refused = []  # (connection, endToEndId) of every Pix a test saw refused

    @classmethod
    def setUpClass(cls):
        wd = Workdir()
        try:
            d = os.path.join(wd.path, "certs")
            cls.merchant_ca = certs.make_ca(d, "merchant-ca", "Loja Example CA")
            hook_tls = certs.make_server(d, cls.merchant_ca, "webhook", hosts=(HOOK,))
            cls.bank_ca = certs.make_ca(d, "bank-ca", "Test Bank Webhook CA")
            cls.bank = certs.make_client(d, cls.bank_ca, "bank", "webhook.bank.example")
            cls.alien = certs.make_foreign_client(d, "alien", "webhook.bank.example",
                                                  ca_name="other-ca")
            cls.expired = certs.make_expired_client(d, cls.bank_ca, "bank-expired",
                                                    "webhook.bank.example")
            # the bank CA's, but for TLS servers only (no clientAuth)
            cls.server_only = certs.make_server(d, cls.bank_ca, "bank-server",
                                                hosts=("webhook.bank.example",))
        except BaseException:
            wd.cleanup()
            raise
        base = "https://%s/v1" % PUBLIC
        nginxstack.start(cls, wd, PUBLIC, args=["--base-url", base,
                                                "--bank-webhook-base-url", "https://%s/v1" % HOOK,
                                                "--trusted-proxies", "127.0.0.1"],
                         hook=HOOK, webhook_tls=hook_tls, one_port=True)
        try:
            cls._connect()
        except BaseException:
            nginxstack.stop(cls)
            raise

    @classmethod
    def _connect(cls):
        """An account, its key, and its two bank connections, made through
        the API name."""
        px = cls.px[0]
        platform = init_platforms(px)["sandbox"]
        master = px.create_key("sandbox", master=True)["key"]
        r = cls.api("POST", "/v1/baas/account/create", master,
                    accountdata.account_body([accountdata.cpf()]), account=platform)
        assert r.status == 200, r
        cls.account = r.json["data"]["id"]
        cls.key = px.create_key("sandbox", account=cls.account)["key"]
        with open(cls.bank_ca.cert) as f:
            ca_pem = f.read()
        r = cls.api("POST", "/v1/bank/connections", cls.key,
                    {"pixKey": MTLS_KEY, "auth": "mtls", "clientCa": ca_pem, "default": True})
        assert r.status == 200, r
        cls.mtls = r.json["data"]
        r = cls.api("POST", "/v1/bank/connections", cls.key,
                    {"pixKey": TOKEN_KEY, "auth": "url-token"})
        assert r.status == 200, r
        cls.token = r.json["data"]

    @classmethod
    def tearDownClass(cls):
        nginxstack.stop(cls)

    # ---- helpers ----

    @classmethod
    def api(cls, method, path, key, body=None, account=None):
        """A call to pixrelay's API through nginx's main server, as the
        merchant makes it."""
        conn = NamedHTTPS("127.0.0.1", cls.port, PUBLIC, source_address=(CLIENT, 0),
                          context=ssl.create_default_context(cafile=cls.cert), timeout=15)
        return send(conn, method, path, PUBLIC, body, auth(key, account))

    def hook_context(self, client=None):
        """TLS as the bank does it: the merchant's certificate for the webhook
        name verified, `client` (a certs.Cert) presented when asked for."""
        ctx = ssl.create_default_context(cafile=self.merchant_ca.cert)
        if client:
            ctx.load_cert_chain(client.cert, client.key)
        return ctx

    def hook(self, path, body, client=None, headers=None):
        """POST `body` to `path` on the webhook name, through nginx, with the
        client certificate `client` (None: none); (Response, request id)."""
        rid = "bank-%s" % secrets.token_hex(8)
        conn = NamedHTTPS("127.0.0.1", self.webhook_port, HOOK, source_address=(CLIENT, 0),
                          context=self.hook_context(client), timeout=15)
        return send(conn, "POST", path, HOOK, body,
                    dict(headers or {}, **{"X-Request-Id": rid})), rid

    @staticmethod
    def path_of(conn, suffix="/pix"):
        """The path of a connection's webhookUrl with `suffix` appended, as
        the bank appends /pix to the path."""
        u = urllib.parse.urlsplit(conn["webhookUrl"])
        # the URL to register at the bank names the webhook server
        assert u.netloc == HOOK, conn["webhookUrl"]
        return u.path + suffix + ("?" + u.query if u.query else "")

    def charge(self, amount):
        r = self.api("POST", "/v1/charge/pix/create", self.key, {"amount": amount})
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["id"]

    def charge_data(self, cid):
        r = self.api("GET", "/v1/charge/pix/%s" % cid, self.key)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def pix(self, cid, amount, chave):
        """A notification of one Pix paying charge `cid`, as the standard has
        it (checked against the API Pix schema), and its endToEndId."""
        e2e = "E00000000" + time.strftime("%Y%m%d%H%M", time.gmtime()) + \
              secrets.token_hex(6)[:11].upper()
        body = {"pix": [{"endToEndId": e2e, "txid": cid, "valor": "%d.%02d" % divmod(amount, 100),
                         "horario": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         "chave": chave, "infoPagador": "pedido 42"}]}
        bcb.validate_webhook_body(body)
        return body, e2e

    def refusal_reason(self, rid):
        """What pixrelay logged for the refused bank call `rid`."""
        marker = "bank webhook %s: " % rid

        def found():
            for p in self.px:
                for line in p.log().splitlines():
                    if marker in line:
                        return line.split(marker, 1)[1]
            return None

        return wait_for(found, what="pixrelay's log line for %s" % rid)

    def assert_refused(self, r, rid, cid, e2e, reason, conn=None):
        """401 with pixrelay's one message, `reason` in its log for the
        connection (the mTLS one by default), the charge still PENDING."""
        conn = conn or self.mtls
        self.assertEqual(r.status, 401, r)
        self.assertEqual(r.json, envelope(401, UNAUTHENTICATED))
        self.assertEqual(self.refusal_reason(rid), "connection %s: %s" % (conn["id"], reason))
        self.assertEqual(self.charge_data(cid)["status"], "PENDING")
        self.refused.append((conn["id"], e2e))

    def assert_paid(self, r, conn, cid, e2e):
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual((d["received"], d["accepted"], d["duplicates"], d["refused"]),
                         (1, 1, 0, []), d)
        self.assertEqual((d["pix"][0]["endToEndId"], d["pix"][0]["outcome"],
                          d["pix"][0]["charge"]), (e2e, "paid", cid), d)
        c = self.charge_data(cid)
        self.assertEqual(c["status"], "PAID", c)
        self.assertEqual(c["pix"]["endToEndId"], e2e, c)
        self.accepted.append((conn["id"], e2e))

    def access_log(self):
        with open(os.path.join(self.ngx, "access.log"), errors="replace") as f:
            return f.read()

    def escaped(self, client):
        """A certificate as nginx's $ssl_client_escaped_cert carries it."""
        with open(client.cert) as f:
            return urllib.parse.quote(f.read(), safe="")

    # ---- the bank, by mutual TLS ----

    def test_bank_certificate_pays_the_charge(self):
        cid = self.charge(1990)
        body, e2e = self.pix(cid, 1990, MTLS_KEY)
        r, rid = self.hook(self.path_of(self.mtls), body, self.bank)
        self.assertTrue(r.header("Content-Type").startswith("application/json"), r.headers)
        self.assert_paid(r, self.mtls, cid, e2e)
        # through a bank door: nginx's upstream is one of the sockets, and
        # pixrelay believed nginx's X-Forwarded-For there
        doors = ["unix:" + p.door for p in self.px]
        line = wait_for(lambda: next((x for x in self.access_log().splitlines()
                                      if "request_id=%s " % rid in x), None), what="nginx's line")
        self.assertIn(line.split(" upstream=", 1)[1].split()[0], doors, line)
        wait_for(lambda: any("request_id=%s client=%s\n" % (rid, CLIENT) in p.log() for p in self.px),
                 what="pixrelay's request line naming the client")

    def refused_with(self, client, amount, reason):
        cid = self.charge(amount)
        body, e2e = self.pix(cid, amount, MTLS_KEY)
        r, rid = self.hook(self.path_of(self.mtls), body, client)
        self.assert_refused(r, rid, cid, e2e, reason)

    def test_no_client_certificate_is_refused(self):
        self.refused_with(None, 2500, "no client certificate")

    def test_certificate_of_another_ca_is_refused(self):
        self.refused_with(self.alien, 2600, "unable to get local issuer certificate")

    def test_expired_certificate_of_the_bank_ca_is_refused(self):
        # nginx finds it faulty itself (495, whatever optional_no_ca says): it
        # reaches pixrelay through the webhook server's error_page
        self.refused_with(self.expired, 2700, "certificate has expired")

    def test_bank_ca_certificate_not_for_tls_clients_is_refused(self):
        # nginx lets it through (it cannot build the chain, and says only
        # that): the purpose is pixrelay's to check
        self.refused_with(self.server_only, 2750, "unsuitable certificate purpose")

    def test_http2_as_well(self):
        # both servers share the port, so the webhook server speaks HTTP/2
        # too (ALPN); curl, as a bank's client might
        if not CURL:
            self.fail("curl is not installed (bash deploy/install-deps.sh --test)")
        for client, status, outcome in ((self.bank, 200, "PAID"), (self.expired, 401, "PENDING"),
                                        (None, 401, "PENDING")):
            cid = self.charge(3000)
            body, e2e = self.pix(cid, 3000, MTLS_KEY)
            args = [CURL, "-sS", "--http2", "--cacert", self.merchant_ca.cert,
                    "--interface", CLIENT, "--connect-to",
                    "%s:443:127.0.0.1:%d" % (HOOK, self.webhook_port),
                    "-H", "Content-Type: application/json", "--data-binary", json.dumps(body),
                    "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                    "https://%s%s" % (HOOK, self.path_of(self.mtls))]
            if client:
                args += ["--cert", client.cert, "--key", client.key]
            p = subprocess.run(args, capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, "2 %d" % status, client)
            self.assertEqual(self.charge_data(cid)["status"], outcome, client)
            (self.accepted if status == 200 else self.refused).append((self.mtls["id"], e2e))

    # ---- X-Client-Cert forged ----

    def test_forged_header_straight_to_pixrelay_is_ignored(self):
        # the bank's valid certificate, as nginx would forward it, sent by a
        # client that reaches pixrelay's API port itself: from an address it
        # does not trust, and from nginx's own, which it trusts for
        # X-Forwarded-For: the API port believes X-Client-Cert from no one
        cid = self.charge(2800)
        body, e2e = self.pix(cid, 2800, MTLS_KEY)
        p = self.px[0]
        for source in (CLIENT, "127.0.0.1"):
            rid = "forged-%s" % secrets.token_hex(8)
            forged = {"X-Client-Cert": self.escaped(self.bank), "X-Request-Id": rid}
            c = http.client.HTTPConnection("127.0.0.1", p.port, source_address=(source, 0),
                                           timeout=15)
            r = send(c, "POST", self.path_of(self.mtls), "127.0.0.1:%d" % p.port, body, forged)
            self.assert_refused(r, rid, cid, e2e, "X-Client-Cert on the API listener: ignored "
                                                  "(mTLS banks come through bank-listen)")
        # the control: the very same call through the bank door, from root
        # (always a bank proxy), pays (the header is what a bank's call carries)
        r = p.door_request("POST", self.path_of(self.mtls), body=body,
                           headers=dict(forged, **{"X-Request-Id": rid + "-door"}))
        while (self.mtls["id"], e2e) in self.refused:
            self.refused.remove((self.mtls["id"], e2e))
        self.assert_paid(r, self.mtls, cid, e2e)

    def test_forged_header_through_the_api_name_is_cleared(self):
        cid = self.charge(2900)
        body, e2e = self.pix(cid, 2900, MTLS_KEY)
        rid = "forged-%s" % secrets.token_hex(8)
        conn = NamedHTTPS("127.0.0.1", self.port, PUBLIC, source_address=(CLIENT, 0),
                          context=ssl.create_default_context(cafile=self.cert), timeout=15)
        r = send(conn, "POST", self.path_of(self.mtls), PUBLIC, body,
                 {"X-Client-Cert": self.escaped(self.bank), "X-Request-Id": rid})
        # on the API port, without the header: nginx dropped it
        self.assert_refused(r, rid, cid, e2e, "no client certificate on the API listener "
                                              "(mTLS banks come through bank-listen)")

    # ---- the bank, by URL token ----

    def test_url_token_connection_needs_no_certificate(self):
        cid = self.charge(3100)
        body, e2e = self.pix(cid, 3100, TOKEN_KEY)
        r, _ = self.hook(self.path_of(self.token), body)
        self.assert_paid(r, self.token, cid, e2e)
        # a bank that appends /pix to the whole URL (into ignorar=)
        u = urllib.parse.urlsplit(self.token["webhookUrl"])
        self.assertTrue(u.query.endswith("&ignorar="), u)
        cid = self.charge(3200)
        body, e2e = self.pix(cid, 3200, TOKEN_KEY)
        r, _ = self.hook("%s?%s/pix" % (u.path, u.query), body)
        self.assert_paid(r, self.token, cid, e2e)
        # the bank's certificate does not stand in for the token
        cid = self.charge(3300)
        body, e2e = self.pix(cid, 3300, TOKEN_KEY)
        r, rid = self.hook(u.path + "/pix?hmac=" + "0" * 43, body, self.bank)
        self.assert_refused(r, rid, cid, e2e, "wrong hmac token", self.token)

    # ---- the webhook name serves nothing else ----

    def test_other_paths_on_the_webhook_name_are_nginx_404(self):
        msg = "not found: this name serves the bank webhooks only (/v1/webhooks/bank/)"
        paths = (("GET", "/"), ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"),
                 ("GET", "/v1/me"), ("POST", "/v1/charge/pix/create"),
                 ("POST", "/v1/webhooks/ingest"), ("POST", "/v1/webhooks/bankx"))
        # whatever the certificate: the expired one takes the error_page path
        for client in (self.bank, self.expired, None):
            for method, path in paths:
                conn = NamedHTTPS("127.0.0.1", self.webhook_port, HOOK,
                                  source_address=(CLIENT, 0),
                                  context=self.hook_context(client), timeout=15)
                r = send(conn, method, path, HOOK, {} if method == "POST" else None,
                         auth(self.key))
                what = (method, path, client)
                self.assertEqual(r.status, 404, (what, r))
                self.assertEqual(r.json, envelope(404, msg), what)
                self.assertTrue(r.header("Content-Type").startswith("application/json"), what)

    # ---- last (unittest runs tests in name order) ----

    def test_zz_only_the_accepted_pix_were_stored(self):
        for conn in (self.mtls, self.token):
            r = self.api("GET", "/v1/bank/connections/%s/notifications" % conn["id"], self.key)
            self.assertEqual(r.status, 200, r)
            heard = sorted(n.get("endToEndId") for n in r.json["data"]["notifications"])
            self.assertEqual(heard, sorted(e for c, e in self.accepted if c == conn["id"]),
                             r.json)
            for c, e in self.refused:
                self.assertNotIn(e, heard)


if __name__ == "__main__":
    unittest.main(verbosity=2)
