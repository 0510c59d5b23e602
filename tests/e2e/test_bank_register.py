"""pixrelay bank register-webhook, bank connect --register-webhook and what
bank show says the bank holds (docs/banks.md, "Connect a bank"), against the
tests' bank (testbank.py: the API Pix over mutual TLS, OAuth2, the webhook
sent over mutual TLS). The banks' webhook server is a TLS proxy of the
test's own in front of pixrelay's bank door (bank-listen), as nginx is in
production: it asks for the bank's client certificate and forwards it in
X-Client-Cert; pixrelay's bank-webhook-base-url names it (https)."""
import base64
import calendar
import http.client
import json
import os
import re
import ssl
import subprocess
import threading
import time
import unittest
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness import BIN, Pixrelay, Redis, UnixHTTPConnection, Workdir, wait_for

import certs
from testbank import SCOPES, TestBank

KEYS = ["mtls@loja.example", "rec@loja.example", "cobr@loja.example", "token@loja.example",
        "show@loja.example", "plain@loja.example", "renew@loja.example", "made@loja.example"]
NOT_AT_THE_BANK = "elsewhere@loja.example"


class WebhookProxy:
    """HTTPS on 127.0.0.1 with a server certificate of `ca`; asks for a
    client certificate of `client_ca` (optional, like nginx's
    ssl_verify_client optional_no_ca) and forwards each request to
    pixrelay's bank door (set .door later, a Unix socket) with the
    certificate in X-Client-Cert, percent-escaped as nginx's
    $ssl_client_escaped_cert."""

    def __init__(self, directory, ca, client_ca):
        cert = certs.make_server(directory, ca, "webhook-proxy")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert.cert, cert.key)
        ctx.load_verify_locations(client_ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL
        self.door = None
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                der = self.connection.getpeercert(binary_form=True)
                if der:
                    headers["X-Client-Cert"] = urllib.parse.quote(ssl.DER_cert_to_PEM_cert(der), safe="")
                conn = UnixHTTPConnection(proxy.door)
                try:
                    conn.request("POST", self.path, body, headers)
                    r = conn.getresponse()
                    status, data = r.status, r.read()
                finally:
                    conn.close()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return "https://127.0.0.1:%d/v1" % self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Merchant:
    """A plain client of the bank's API with the merchant's certificate."""

    def __init__(self, bank, cert):
        self.bank = bank
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.ctx.load_verify_locations(bank.server_ca)
        self.ctx.load_cert_chain(cert.cert, cert.key)

    def _call(self, method, url, body, headers):
        parts = urllib.parse.urlsplit(url)
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=10, context=self.ctx)
        try:
            conn.request(method, parts.path, body, headers)
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def put_webhook(self, chave, url):
        basic = base64.b64encode(("%s:%s" % (self.bank.client_id, self.bank.client_secret)).encode())
        status, body = self._call("POST", self.bank.token_url, "grant_type=client_credentials",
                                  {"Authorization": "Basic " + basic.decode(),
                                   "Content-Type": "application/x-www-form-urlencoded"})
        assert status == 200, body
        token = json.loads(body)["access_token"]
        status, body = self._call("PUT", self.bank.url + "/webhook/" + urllib.parse.quote(chave, safe=""),
                                  json.dumps({"webhookUrl": url}),
                                  {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        assert status == 200, body


class Register(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wd = Workdir()
        d = cls.certs = os.path.join(cls.wd.path, "certs")
        os.makedirs(d)
        merchant_ca = certs.make_ca(d, "merchant-ca", "Merchant CA")
        cls.merchant = certs.make_client(d, merchant_ca, "merchant", "loja")
        proxy_ca = certs.make_ca(d, "proxy-ca", "Webhook Proxy CA")
        cls.bank = TestBank(client_ca=merchant_ca.cert, receiver_ca=proxy_ca.cert,
                            keys=KEYS, directory=os.path.join(cls.wd.path, "bank")).start()
        cls.proxy = WebhookProxy(d, proxy_ca, cls.bank.webhook_ca)
        cls.redis = Redis(cls.wd.path).start()
        cls.px = Pixrelay(cls.wd.path, cls.redis,
                          args=["--bank-timeout-ms", "3000"], door=True,
                          env={"PIXRELAY_BANK_WEBHOOK_BASE_URL": cls.proxy.url}).start()
        cls.proxy.door = cls.px.door
        cls.px.wait_ready()
        cls.px.cli("init", "--env", "sandbox")
        cls.secret = os.path.join(d, "secret.txt")
        with open(cls.secret, "w") as f:
            f.write(cls.bank.client_secret + "\n")
        cls.api = ["--api-url", cls.bank.url, "--token-url", cls.bank.token_url,
                   "--client-id", cls.bank.client_id, "--client-secret-file", cls.secret,
                   "--cert", cls.merchant.cert, "--key", cls.merchant.key, "--bank-ca", cls.bank.server_ca]
        cls.at_bank = Merchant(cls.bank, cls.merchant)

    @classmethod
    def tearDownClass(cls):
        cls.px.stop()
        cls.proxy.close()
        cls.bank.close()
        cls.redis.stop()
        cls.wd.cleanup()

    def tearDown(self):
        self.bank.up()
        self.assertEqual(self.bank.violations, [])

    def cli(self, *args, env=None):
        e = dict(self.px.env)
        e.update(env or {})
        return subprocess.run([BIN] + self.px.common_args() + list(args), capture_output=True,
                              text=True, env=e, timeout=60)

    def bankcli(self, *args, env=None):
        """pixrelay bank ARGS; its stderr without the log lines of the Redis
        client (timestamped)."""
        r = self.cli("bank", *args, env=env)
        r.stderr = "".join(line for line in r.stderr.splitlines(True)
                           if not re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ", line))
        return r

    def connect(self, chave, *args):
        r = self.bankcli("connect", "--env", "sandbox", "--chave", chave, *args, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def show(self, conn_id):
        r = self.bankcli("show", conn_id, "--env", "sandbox", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def post(self, url, body):
        """POST straight to pixrelay (no proxy, no certificate): the path
        and query of a webhook URL with /pix appended to it whole."""
        u = urllib.parse.urlsplit(url + "/pix")
        return self.px.request("POST", u.path + "?" + u.query, body=body)

    def pix_of(self, chave, valor="1.00"):
        return self.bank.pay_key(valor, chave=chave)

    def test_connect_with_mtls_registers_the_webhook(self):
        chave = "mtls@loja.example"
        r = self.bankcli("connect", "--env", "sandbox", "--chave", chave, "--client-ca",
                         self.bank.webhook_ca, "--register-webhook", *self.api)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        conn_id = lines[0].split()[0]
        url = "%s/webhooks/bank/%s" % (self.proxy.url, conn_id)
        self.assertIn("  webhook URL  " + url, lines)
        self.assertEqual(lines[-1], "Registered the webhook URL above at the bank for the Pix key %s." % chave)
        self.assertEqual(self.bank.webhook(chave), url)
        # show: the bank holds this connection's URL; nothing heard yet
        out = self.bankcli("show", conn_id, "--env", "sandbox").stdout
        self.assertRegex(out, r"\n  at the bank  this connection's webhook URL, since "
                              r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n  last call    none recorded\n$")
        # the bank's webhook, through the proxy with its certificate: heard
        pix = self.pix_of(chave)
        d = self.bank.notify([pix["endToEndId"]])[0]
        self.assertEqual(d.status, 200, (d.error, d.answer))
        shown = wait_for(lambda: (lambda s: s["lastCallAt"] and s)(self.show(conn_id)),
                         what="the last call recorded")
        self.assertEqual(shown["bankWebhook"]["status"], "registered")
        self.assertRegex(shown["bankWebhook"]["registeredAt"], r"^\d{4}-\d\d-\d\dT.*Z$")
        called = time.time()
        at = calendar.timegm(time.strptime(shown["lastCallAt"][:19], "%Y-%m-%dT%H:%M:%S"))
        self.assertLess(abs(called - at), 30)
        out = self.bankcli("show", conn_id, "--env", "sandbox").stdout
        self.assertIn("\n  last call    %s (the bank's last webhook call answered 200)\n"
                      % shown["lastCallAt"], out)
        # register-webhook again: the same URL, no token involved
        r = self.bankcli("register-webhook", conn_id, "--env", "sandbox", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), {"id": conn_id, "pixKey": chave, "webhookUrl": url,
                                                "newToken": False, "webhookRec": "not_enabled",
                                                "webhookCobr": "not_enabled"})

    def test_register_webhook_registers_the_rec_callback_too(self):
        """Pix Automático (docs/recurrences.md): register-webhook puts the same URL as the
        API client's /webhookrec, show reads it back and flags another URL, and the bank's
        /rec callback through the proxy reaches the bank door, which reads its top key."""
        chave = "rec@loja.example"
        conn = self.connect(chave, "--url-token", *self.api, "--scope", " ".join(SCOPES))
        r = self.bankcli("register-webhook", conn["id"], "--env", "sandbox", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual(got["webhookRec"], "registered")
        self.assertEqual(self.bank._webhookrec["webhookUrl"], got["webhookUrl"])
        self.assertEqual(self.bank.webhook(chave), got["webhookUrl"])
        self.assertEqual(self.show(conn["id"])["bankWebhookRec"]["status"], "registered")
        out = self.bankcli("show", conn["id"], "--env", "sandbox").stdout
        self.assertIn("\n  recurrences  the bank's /rec callback: this connection's webhook URL\n", out)
        # the bank's /rec callback, through the proxy: the body's top key routes it
        body = json.dumps({"recs": [{"idRec": "RN9999999920260101zzzzzzzzzzz", "status": "APROVADA",
                                     "atualizacao": [{"status": "APROVADA",
                                                      "data": "2026-12-02T10:00:00Z"}]}]}).encode()
        d = self.bank._sender.send([(self.bank._webhookrec["webhookUrl"] + "/rec", None, body)])[0]
        self.assertEqual(d.status, 200, (d.error, d.answer))
        self.assertEqual(json.loads(d.answer)["data"]["recs"],
                         [{"idRec": "RN9999999920260101zzzzzzzzzzz", "outcome": "unknown"}])
        # another URL at the bank: flagged
        self.bank._webhookrec = {"webhookUrl": "https://elsewhere.example/hook",
                                 "criacao": "2026-12-02T10:00:00.000Z"}
        held = self.show(conn["id"])["bankWebhookRec"]
        self.assertEqual((held["status"], held["host"]), ("other", "elsewhere.example"))
        out = self.bankcli("show", conn["id"], "--env", "sandbox").stdout
        self.assertIn("  recurrences  the bank's /rec callback goes to another URL, on host "
                      "elsewhere.example: not this connection's (pixrelay bank register-webhook %s)\n"
                      % conn["id"], out)

    def test_register_webhook_registers_the_cobr_callback_too(self):
        """Pix Automático's recurring charges (docs/recurrences.md): register-webhook puts
        the same URL as the API client's /webhookcobr, show reads it back and flags another
        URL, and the bank's /cobr callback through the proxy reaches the bank door."""
        chave = "cobr@loja.example"
        conn = self.connect(chave, "--url-token", *self.api, "--scope", " ".join(SCOPES))
        r = self.bankcli("register-webhook", conn["id"], "--env", "sandbox", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual(got["webhookCobr"], "registered")
        self.assertEqual(self.bank._webhookcobr["webhookUrl"], got["webhookUrl"])
        self.assertEqual(self.show(conn["id"])["bankWebhookCobr"]["status"], "registered")
        out = self.bankcli("show", conn["id"], "--env", "sandbox").stdout
        self.assertIn("\n  cobr         the bank's /cobr callback: this connection's webhook URL\n", out)
        # the bank's /cobr callback, through the proxy: the body's top key routes it
        body = json.dumps({"cobsr": [{"idRec": "RN9999999920260101zzzzzzzzzzz",
                                      "txid": "0" * 26, "status": "ATIVA",
                                      "atualizacao": [{"status": "ATIVA",
                                                       "data": "2026-12-02T10:00:00Z"}]}]}).encode()
        d = self.bank._sender.send([(self.bank._webhookcobr["webhookUrl"] + "/cobr", None, body)])[0]
        self.assertEqual(d.status, 200, (d.error, d.answer))
        self.assertEqual(json.loads(d.answer)["data"]["cobsr"], [{"txid": "0" * 26, "outcome": "unknown"}])
        # another URL at the bank: flagged
        self.bank._webhookcobr = {"webhookUrl": "https://elsewhere.example/hook",
                                  "criacao": "2026-12-02T10:00:00.000Z"}
        held = self.show(conn["id"])["bankWebhookCobr"]
        self.assertEqual((held["status"], held["host"]), ("other", "elsewhere.example"))
        out = self.bankcli("show", conn["id"], "--env", "sandbox").stdout
        self.assertIn("  cobr         the bank's /cobr callback goes to another URL, on host "
                      "elsewhere.example: not this connection's (pixrelay bank register-webhook %s)\n"
                      % conn["id"], out)

    def test_register_webhook_gives_a_url_token_connection_a_new_token(self):
        chave = "token@loja.example"
        conn = self.connect(chave, "--url-token", *self.api)
        old = conn["webhookUrl"]
        self.assertTrue(old.startswith(self.proxy.url + "/webhooks/bank/" + conn["id"] + "?hmac="))
        self.assertIsNone(self.bank.webhook(chave))
        body = {"pix": [self.pix_of(chave)]}
        self.assertEqual(self.post(old, body).status, 200)
        # the bank down: nothing changes, the old token keeps working
        self.bank.down(mode="503")
        r = self.bankcli("register-webhook", conn["id"], "--env", "sandbox")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr,
                         'pixrelay bank register-webhook: could not call the bank: bank token: HTTP 503 '
                         'temporarily_unavailable\n'
                         'pixrelay bank register-webhook: nothing changed in pixrelay: the connection keeps '
                         'its token\n')
        self.bank.up()
        self.assertEqual(self.post(old, {"pix": [self.pix_of(chave)]}).status, 200)
        # registered: a new token in the URL, printed this once
        r = self.bankcli("register-webhook", conn["id"], "--env", "sandbox")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0], "Registered at the bank for the Pix key %s:" % chave)
        new = lines[1].strip()
        self.assertRegex(new, r"^%s/webhooks/bank/%s\?hmac=[0-9A-Za-z]{43}&ignorar=$"
                         % (self.proxy.url.replace(".", r"\."), conn["id"]))
        self.assertNotEqual(new, old)
        self.assertEqual(lines[2], "It carries a new token, shown only this once; the connection's "
                                   "previous token is refused from now on.")
        self.assertEqual(self.bank.webhook(chave), new)
        # the old token is refused, the bank's calls with the new one taken
        self.assertEqual(self.post(old, {"pix": [self.pix_of(chave)]}).status, 401)
        d = self.bank.notify([self.pix_of(chave)["endToEndId"]])[0]
        self.assertEqual(d.status, 200, (d.error, d.answer))
        # show: this connection's URL, the token never printed
        token = new.split("hmac=")[1].split("&")[0]
        out = self.bankcli("show", conn["id"], "--env", "sandbox").stdout
        self.assertIn("  at the bank  this connection's webhook URL, since ", out)
        self.assertNotIn(token, out)
        shown = self.show(conn["id"])
        self.assertEqual(shown["bankWebhook"]["status"], "registered")
        self.assertNotIn(token, json.dumps(shown))
        self.assertNotIn(token, self.px.log())
        # the bank still holding the old URL: its calls are refused, show says so
        self.at_bank.put_webhook(chave, old)
        out = self.bankcli("show", conn["id"], "--env", "sandbox").stdout
        self.assertIn("  at the bank  this connection's webhook URL with a token it no longer takes, "
                      "since ", out)
        self.assertIn(": the bank's calls are refused (pixrelay bank register-webhook %s)\n" % conn["id"], out)
        self.assertEqual(self.show(conn["id"])["bankWebhook"]["status"], "old_token")
        # --json
        r = self.bankcli("register-webhook", conn["id"], "--env", "sandbox", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual((got["id"], got["pixKey"], got["newToken"]), (conn["id"], chave, True))
        self.assertEqual(self.bank.webhook(chave), got["webhookUrl"])
        self.assertEqual(self.post(new, {"pix": [self.pix_of(chave)]}).status, 401)
        self.assertEqual(self.post(got["webhookUrl"], {"pix": [self.pix_of(chave)]}).status, 200)

    def test_connect_with_a_url_token_registers_the_url_it_prints(self):
        chave = "made@loja.example"
        conn = self.connect(chave, "--url-token", "--register-webhook", *self.api)
        self.assertTrue(conn["webhookRegistered"])
        self.assertIn("?hmac=", conn["webhookUrl"])
        self.assertEqual(self.bank.webhook(chave), conn["webhookUrl"])
        d = self.bank.notify([self.pix_of(chave)["endToEndId"]])[0]
        self.assertEqual(d.status, 200, (d.error, d.answer))
        self.assertEqual(self.show(conn["id"])["bankWebhook"]["status"], "registered")

    def test_the_bank_refusing(self):
        # a key the bank does not know: its Problema, and nothing changes
        conn = self.connect(NOT_AT_THE_BANK, "--url-token", *self.api)
        r = self.bankcli("register-webhook", conn["id"], "--env", "sandbox")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr,
                         "pixrelay bank register-webhook: the bank refused the webhook: HTTP 400 o parâmetro "
                         "{chave} não corresponde a uma chave DICT pertencente a este usuário recebedor. "
                         "(chave)\n"
                         "pixrelay bank register-webhook: nothing changed in pixrelay: the connection keeps "
                         "its token\n")
        self.assertEqual([v.endpoint for v in self.bank.take_violations()], ["PUT /webhook/{chave}"])
        self.assertEqual(self.post(conn["webhookUrl"], {"pix": [self.pix_of(NOT_AT_THE_BANK)]}).status, 200)
        # connect --register-webhook: connected, printed, but not registered
        r = self.bankcli("disconnect", conn["id"], "--env", "sandbox")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.bankcli("connect", "--env", "sandbox", "--chave", NOT_AT_THE_BANK, "--client-ca",
                         self.bank.webhook_ca, "--register-webhook", *self.api)
        self.assertEqual(r.returncode, 1)
        made = r.stdout.splitlines()[0].split()[0]
        self.assertEqual(r.stdout.splitlines()[-1],
                         "Register the webhook URL above at the bank for the Pix key %s." % NOT_AT_THE_BANK)
        self.assertIn("pixrelay bank connect: the bank refused the webhook: HTTP 400 ", r.stderr)
        self.assertIn("pixrelay bank connect: connected as %s, but its webhook is not registered at the "
                      "bank: pixrelay bank register-webhook %s to try again\n" % (made, made),
                      r.stderr)
        self.bank.take_violations()
        # and show says what the bank answers: nothing for that key
        out = self.bankcli("show", made, "--env", "sandbox").stdout
        self.assertIn("  at the bank  no webhook for the Pix key (pixrelay bank register-webhook %s)\n" % made,
                      out)
        self.assertEqual(self.show(made)["bankWebhook"], {"status": "none"})

    def test_show_another_url_and_a_bank_out_of_reach(self):
        chave = "show@loja.example"
        conn = self.connect(chave, "--client-ca", self.bank.webhook_ca, *self.api)
        self.assertEqual(self.show(conn["id"])["bankWebhook"], {"status": "none"})
        # another URL: its host only, never its path, query or user info
        self.at_bank.put_webhook(chave, "https://user:pw@hooks.elsewhere.example:8443/p/s3cr3t?k=t0k3n")
        r = self.bankcli("show", conn["id"], "--env", "sandbox")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("\n  at the bank  another URL, on host hooks.elsewhere.example, since ", r.stdout)
        self.assertIn(": the bank's calls go there (pixrelay bank register-webhook %s)\n" % conn["id"], r.stdout)
        shown = self.show(conn["id"])
        held = dict(shown["bankWebhook"])
        del held["registeredAt"]
        self.assertEqual(held, {"status": "other", "host": "hooks.elsewhere.example", "connection": None})
        for secret in ("s3cr3t", "t0k3n", "pw@", "user"):
            self.assertNotIn(secret, r.stdout + json.dumps(shown))
        # another connection's URL on our webhook server
        other = self.connect("plain@loja.example", "--client-ca", self.bank.webhook_ca)
        self.at_bank.put_webhook(chave, other["webhookUrl"])
        held = self.show(conn["id"])["bankWebhook"]
        self.assertEqual((held["status"], held["host"], held["connection"]),
                         ("other", "127.0.0.1", other["id"]))
        out = self.bankcli("show", conn["id"], "--env", "sandbox").stdout
        self.assertIn("  at the bank  the URL of connection %s, on host 127.0.0.1, since " % other["id"], out)
        # a connection without API credentials: nothing asked
        plain = self.show(other["id"])
        self.assertIsNone(plain["bankWebhook"])
        self.assertIsNone(plain["lastCallAt"])
        out = self.bankcli("show", other["id"], "--env", "sandbox").stdout
        self.assertNotIn("at the bank", out)
        self.assertTrue(out.endswith("\n  last call    none recorded\n"), out)
        r = self.bankcli("register-webhook", other["id"], "--env", "sandbox")
        self.assertEqual((r.returncode, r.stderr),
                         (1, "pixrelay bank register-webhook: %s has no API credentials of the bank: give "
                             "them with pixrelay bank credentials %s, or register its webhookUrl in the "
                             "bank's portal\n" % (other["id"], other["id"])))
        # a host without the credentials key cannot ask the bank: show says why
        r = self.bankcli("show", conn["id"], "--env", "sandbox", "--credentials-key-file",
                         os.path.join(self.wd.path, "no-such.key"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("\n  at the bank  cannot tell: its API credentials cannot be used on this host: ",
                      r.stdout)
        self.assertIn("pixrelay bank show: %s: its API credentials cannot be used on this host: "
                      % conn["id"], r.stderr)
        # the bank out of reach, then failing: show says so and still shows the rest
        self.bank.down(mode="refuse")
        r = self.bankcli("show", conn["id"], "--env", "sandbox")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"\n  at the bank  cannot tell: could not call the bank: bank token: .+\n")
        self.assertEqual(self.show(conn["id"])["bankWebhook"]["status"], "error")
        self.bank.up()
        self.bank.down(mode="503")
        held = self.show(conn["id"])["bankWebhook"]
        self.assertEqual(held["status"], "error")
        self.assertTrue(held["error"].startswith("could not call the bank: bank token: HTTP 503 "), held)

    def test_https_is_required(self):
        conn = self.connect("renew@loja.example", "--url-token", *self.api)
        puts = self.bank.count("PUT /webhook/{chave}")
        r = self.bankcli("register-webhook", conn["id"], "--env", "sandbox",
                         env={"PIXRELAY_BANK_WEBHOOK_BASE_URL": "http://pix-webhook.loja.example/v1"})
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertEqual(r.stderr, "pixrelay bank register-webhook: the webhook URL must be https (the standard "
                                   "demands it), and bank-webhook-base-url is http://pix-webhook.loja.example/v1: "
                                   "set it to the https name of the server that takes the banks' webhooks\n")
        r = self.bankcli("register-webhook", conn["id"], "--env", "sandbox", "--base-url",
                         "http://api.loja.example/v1", env={"PIXRELAY_BANK_WEBHOOK_BASE_URL": ""})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "pixrelay bank register-webhook: the webhook URL must be https (the standard "
                                   "demands it), and base-url is http://api.loja.example/v1 "
                                   "(bank-webhook-base-url is not set): set bank-webhook-base-url to the https "
                                   "name of the server that takes the banks' webhooks\n")
        # connect --register-webhook refuses before it connects anything
        before = json.loads(self.bankcli("list", "--env", "sandbox", "--json").stdout)["connections"]
        r = self.bankcli("connect", "--env", "sandbox", "--chave", "http@loja.example", "--url-token",
                         "--register-webhook", *self.api,
                         env={"PIXRELAY_BANK_WEBHOOK_BASE_URL": "http://pix-webhook.loja.example/v1"})
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertIn("pixrelay bank connect: the webhook URL must be https", r.stderr)
        after = json.loads(self.bankcli("list", "--env", "sandbox", "--json").stdout)["connections"]
        self.assertEqual(len(after), len(before))
        self.assertEqual(self.bank.count("PUT /webhook/{chave}"), puts)
        # the old token was never touched
        self.assertEqual(self.post(conn["webhookUrl"], {"pix": [self.pix_of("renew@loja.example")]}).status, 200)

    def test_usage(self):
        for args, msg in [
                (("register-webhook", "--env", "sandbox"), "the connection ID is required"),
                (("connect", "--env", "sandbox", "--chave", "u@b.example", "--url-token", "--register-webhook"),
                 "--register-webhook is for connect with the bank's API options"),
                (("list", "--env", "sandbox", "--register-webhook"), "--register-webhook is for connect"),
                (("register-webhook", "bnk_x", "--env", "sandbox", "--url-token"),
                 "--chave and --url-token are for connect"),
                (("register-webhook", "bnk_x", "--env", "sandbox", "--api-url", "https://x.example"),
                 "the bank's API options are for connect and credentials")]:
            r = self.bankcli(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(msg, r.stderr, args)
        r = self.bankcli("register-webhook", "bnk_01M8C0C563ET99G3XMMMT3BH0C", "--env", "sandbox")
        self.assertEqual((r.returncode, r.stderr),
                         (1, "pixrelay bank register-webhook: no connection bnk_01M8C0C563ET99G3XMMMT3BH0C "
                             "in sandbox\n"))
        r = self.bankcli("--help")
        self.assertIn("pixrelay bank register-webhook ID [--email ADDRESS] [--json]", r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
