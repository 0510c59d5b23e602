"""pixrelay bank connect|update|list|show|disconnect|notifications (the
operator's bank connections, docs/banks.md) and pixrelay trigger pix (a bank's standard
Pix notification through the receiver's path), forwarded by pixrelay listen."""
import json
import os
import subprocess
import tempfile
import time
import unittest
import urllib.parse

from harness import BIN, auth, start_stack, stop_stack
from sink import Sink
from sse import verify

import bcb
import certs


class BankCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls, door=True)
        cls.platform = json.loads(cls.px.cli("init", "--env", "sandbox", "--json").stdout)[
            "sandbox"]["account"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.secrets = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)
        cls.sink = Sink().start()

    @classmethod
    def tearDownClass(cls):
        cls.sink.close()
        stop_stack(cls)

    def bank(self, *args, check=True):
        return self.px.cli("bank", *args, check=check)

    def run_cli(self, *args):
        e = dict(os.environ, PIXRELAY_API_KEY=self.key)
        return subprocess.run([BIN, "--base-url", "http://127.0.0.1:%d/v1" % self.px.port]
                              + list(args), capture_output=True, text=True, env=e, timeout=60)

    def test_connect_list_show_disconnect(self):
        r = self.bank("connect", "--env", "sandbox", "--chave", "cli@loja.example", "--url-token",
                      "--json")
        conn = json.loads(r.stdout)
        self.assertEqual((conn["pixKey"], conn["auth"], conn["account"], conn["environment"]),
                         ("cli@loja.example", "url-token", self.platform, "sandbox"))
        self.assertRegex(conn["webhookUrl"],
                         r"^http://127\.0\.0\.1:\d+/v1/webhooks/bank/bnk_[0-9A-Z]{26}\?hmac="
                         r"[0-9A-Za-z]{43}&ignorar=$")
        token = conn["webhookUrl"].split("hmac=")[1].split("&")[0]
        # the same key again is refused, naming the connection that has it
        r = self.bank("connect", "--env", "sandbox", "--chave", "cli@loja.example", "--url-token",
                      check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("pixrelay bank connect: the Pix key cli@loja.example is connected already "
                      "(%s)" % conn["id"], r.stderr)
        # listed and shown without the token
        listed = json.loads(self.bank("list", "--env", "sandbox", "--json").stdout)
        self.assertIn(conn["id"], [c["id"] for c in listed["connections"]])
        shown = self.bank("show", conn["id"], "--env", "sandbox").stdout
        self.assertIn(conn["id"] + "  cli@loja.example  URL token  account " + self.platform, shown)
        self.assertNotIn(token, shown + json.dumps(listed))
        self.assertNotIn(token, self.px.log())
        # the bank's webhook works, and its Pix are in the notifications
        body = {"pix": [{"endToEndId": "E00000000202611261200clibank0001", "valor": "3.00",
                         "horario": "2026-11-26T12:00:00Z"}]}
        bcb.validate_webhook_body(body)
        # (the host names the running serve once its first heartbeat is in)
        u = urllib.parse.urlsplit(conn["webhookUrl"])
        path = u.path + "?" + u.query
        r = self.px.request("POST", path + "/pix", body=body)
        self.assertEqual(r.status, 200, r)
        notes = self.bank("notifications", conn["id"], "--env", "sandbox").stdout
        self.assertEqual(notes, "webhook    unmatched E00000000202611261200clibank0001 (no_txid)\n")
        # disconnected: the URL is refused, show says so
        out = self.bank("disconnect", conn["id"], "--env", "sandbox").stdout
        self.assertEqual(out, conn["id"] + " disconnected: its webhook URL is refused from now on\n")
        r = self.px.request("POST", path + "/pix", body=body)
        self.assertEqual(r.status, 401)
        r = self.bank("show", conn["id"], "--env", "sandbox", check=False)
        self.assertEqual((r.returncode, r.stderr.strip().splitlines()[-1]),
                         (1, "pixrelay bank show: no connection %s in sandbox" % conn["id"]))

    def test_connect_with_a_ca_file_and_the_chave(self):
        with tempfile.TemporaryDirectory() as d:
            ca = certs.make_ca(d, "Bank Webhook CA")
            # without the bank door, no bank certificate could reach pixrelay:
            # refused before anything is stored
            r = self.bank("connect", "--env", "sandbox", "--chave", "+5511999990000",
                          "--client-ca", ca.cert, "--bank-listen", "", check=False)
            self.assertEqual((r.returncode, r.stdout, r.stderr),
                             (2, "", "pixrelay bank connect: --client-ca (mutual TLS) needs the bank "
                                     "door, and bank-listen is not set: no bank's client certificate "
                                     "can reach pixrelay without it: set bank-listen and send the "
                                     "proxy's bank webhooks there (docs/deployment.md, \"The bank "
                                     "door\")\n"))
            r = self.bank("list", "--env", "sandbox", "--json")
            self.assertNotIn("+5511999990000", r.stdout)
            # one name for a connection's key: --chave; --pix-key is the
            # setting of the platform account's BR Codes, and is not taken
            # for it
            r = self.bank("connect", "--env", "sandbox", "--pix-key", "+5511999990000",
                          "--client-ca", ca.cert, "--json", check=False)
            self.assertEqual((r.returncode, r.stdout, r.stderr),
                             (2, "", "pixrelay bank connect: the connection's Pix key is required: "
                                     "--chave KEY (the pix-key setting is the key of the platform "
                                     "account's BR Codes, not a connection's)\n"))
            r = self.bank("connect", "--env", "sandbox", "--chave", "+5511999990000",
                          "--client-ca", ca.cert, "--json")
            conn = json.loads(r.stdout)
            self.assertEqual((conn["pixKey"], conn["auth"]), ("+5511999990000", "mtls"))
            self.assertEqual(conn["clientCa"]["certificates"], 1)
            self.assertRegex(conn["clientCa"]["sha256"], r"^[0-9a-f]{64}$")
            self.assertTrue(conn["webhookUrl"].endswith("/webhooks/bank/" + conn["id"]))
            # the connection names its environment: no --env needed after it,
            # and one that contradicts it is refused
            shown = json.loads(self.bank("show", conn["id"], "--json").stdout)
            self.assertEqual((shown["id"], shown["environment"]), (conn["id"], "sandbox"))
            r = self.bank("show", conn["id"], "--env", "production", check=False)
            self.assertEqual((r.returncode, r.stdout, r.stderr),
                             (2, "", "pixrelay bank show: connection %s is of sandbox, not production "
                                     "(--env)\n" % conn["id"]))
            for verb in ("notifications", "report"):
                r = self.bank(verb, conn["id"], "--json")
                self.assertEqual((r.returncode, r.stderr), (0, ""), verb)
            # a file that holds no certificate, a key with the certificate
            with open(os.path.join(d, "bad.pem"), "w") as f:
                f.write("not a certificate\n")
            r = self.bank("connect", "--env", "sandbox", "--chave", "other@loja.example",
                          "--client-ca", os.path.join(d, "bad.pem"), check=False)
            self.assertEqual(r.returncode, 1)
            self.assertIn("--client-ca %s: no certificate in the PEM" % os.path.join(d, "bad.pem"),
                          r.stderr)
            with open(os.path.join(d, "withkey.pem"), "w") as f:
                f.write(open(ca.cert).read() + open(ca.key).read())
            r = self.bank("connect", "--env", "sandbox", "--chave", "other@loja.example",
                          "--client-ca", os.path.join(d, "withkey.pem"), check=False)
            self.assertIn("the PEM holds something other than certificates", r.stderr)

    def test_usage_errors(self):
        for args, msg in [
                (("connect", "--env", "sandbox", "--chave", "a@b.example"),
                 "give --client-ca FILE (mutual TLS) or --url-token, one of them"),
                (("connect", "--env", "sandbox", "--chave", "a b", "--url-token"),
                 "the Pix key must be printable ASCII without spaces"),
                (("connect", "--chave", "a@b.example", "--url-token"),
                 "--env sandbox|production is required"),
                (("show", "--env", "sandbox"), "the connection ID is required"),
                (("list", "--env", "sandbox", "--url-token"),
                 "--chave and --url-token are for connect"),
                (("show", "bnk_x", "--env", "sandbox", "--default"),
                 "--client-ca, --client-cert-subject, --client-cert-pin, --default, --agencia, "
                 "--conta and --tipo-conta are for connect and update"),
                (("update", "--env", "sandbox"), "the connection ID is required"),
                (("update", "bnk_x", "--env", "sandbox"),
                 "nothing to change: give --client-ca FILE, --client-cert-subject DN, "
                 "--client-cert-pin PIN, --default, --conta, --scope, --api-header or --api-query"),
                (("update", "bnk_x", "--env", "sandbox", "--chave", "a@b.example"),
                 "--chave and --url-token are for connect"),
                (("update", "bnk_x", "--env", "sandbox", "--default", "--no-default"),
                 "--default or --no-default, one of them"),
                (("update", "bnk_x", "--env", "sandbox", "--client-cert-pin", "sha256/x"),
                 "--client-cert-pin sha256/x: must be sha256/ and the base64 of the SHA-256 of "
                 "the certificate's public key (its DER SubjectPublicKeyInfo): 44 characters"),
                (("update", "bnk_x", "--env", "sandbox", "--client-cert-pin", "",
                  "--client-cert-pin", "sha256/" + "A" * 43 + "="),
                 "an empty --client-cert-pin removes the pins: give it alone"),
                (("update", "bnk_x", "--env", "sandbox", "--client-cert-subject",
                  "/C=BR/CN=x"),
                 "--client-cert-subject /C=BR/CN=x: an RFC 4514 name is written "
                 "CN=...,O=...,C=..., the most specific first"),
                (("connect", "--env", "sandbox", "--chave", "a@b.example", "--url-token",
                  "--client-cert-subject", "CN=x"),
                 "--client-cert-subject and --client-cert-pin pin a certificate: they go with "
                 "--client-ca"),
                (("connect", "--env", "sandbox", "--chave", "a@b.example", "--url-token",
                  "--no-default"), "--no-default is for update"),
                (("notifications", "bnk_x", "--env", "sandbox", "--limit", "0"),
                 "--limit must be from 1 to 1000"),
                (("open", "--env", "sandbox"), "unknown action 'open'"),
                # the bank's API options come whole, on connect and credentials only
                (("connect", "--env", "sandbox", "--chave", "a@b.example", "--url-token", "--scope",
                  "cob.write"), "the bank's API needs --api-url, --token-url, --client-id, "
                                "--client-secret-file, --cert and --key (--bank-ca, --scope, --api-header, "
                                "--api-query and --no-check optional)"),
                (("connect", "--env", "sandbox", "--chave", "a@b.example", "--url-token", "--api-query",
                  "gw-dev-app-key=x"), "the bank's API needs --api-url"),
                (("list", "--env", "sandbox", "--no-check"),
                 "the bank's API options are for connect and credentials"),
                (("show", "bnk_x", "--env", "sandbox", "--api-header", "X-Key: v"),
                 "the bank's API options are for connect and credentials")]:
            r = self.bank(*args, check=False)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(msg, r.stderr, args)

    def test_update_and_what_an_unpinned_production_connection_trusts(self):
        live = json.loads(self.px.cli("init", "--env", "production", "--json").stdout)[
            "production"]["account"]
        with tempfile.TemporaryDirectory() as d:
            ca = certs.make_ca(d, "Public CA")
            bank = certs.make_client(d, ca, "bank",
                                     subject="/C=BR/O=Banco Exemplo/CN=webhook.bank.example")
            pin = certs.key_pin(bank.cert)
            r = self.bank("connect", "--env", "production", "--chave", "prod@loja.example",
                          "--client-ca", ca.cert)
            cid = r.stdout.split()[0]
            warning = ("not pinned: any certificate for TLS clients that a CA of the trust list "
                       "issued is taken as this connection's bank, so anyone who holds one can "
                       "report Pix for it; pin the bank's own certificate with pixrelay bank "
                       "update %s --client-cert-subject DN or --client-cert-pin "
                       "sha256/..., or PATCH /v1/bank/connections/%s with clientCertSubject or "
                       "clientCertPins" % (cid, cid))
            lines = r.stdout.splitlines()
            self.assertTrue(lines[0].startswith(cid + "  prod@loja.example  mutual TLS  account "
                                                + live), r.stdout)
            self.assertIn("  pinned       nothing: the client CA alone decides", lines)
            self.assertIn("  WARNING      " + warning, lines)
            # bank show says it too, and --json gives it to scripts
            shown = self.bank("show", cid, "--env", "production").stdout.splitlines()
            self.assertIn("  WARNING      " + warning, shown)
            conn = json.loads(self.bank("show", cid, "--env", "production", "--json").stdout)
            self.assertEqual(conn["trust"], {"subject": None, "pins": [], "warning": warning})
            # pinned without reconnecting: the subject as a name, the key
            r = self.bank("update", cid, "--env", "production", "--client-cert-subject",
                          "cn=webhook.bank.example, o=Banco Exemplo, c=BR",
                          "--client-cert-pin", pin, "--default", "--json")
            conn = json.loads(r.stdout)
            self.assertEqual((conn["id"], conn["default"], conn["trust"]),
                             (cid, True, {"subject": "CN=webhook.bank.example,O=Banco Exemplo,C=BR",
                                          "pins": [pin], "warning": None}))
            shown = self.bank("show", cid, "--env", "production").stdout.splitlines()
            for line in ("  default      the account's default charging connection",
                         "  pinned       subject CN=webhook.bank.example,O=Banco Exemplo,C=BR",
                         "  pinned       key " + pin):
                self.assertIn(line, shown)
            self.assertFalse([x for x in shown if "WARNING" in x], shown)
            # an empty one removes it; with neither, the warning is back
            out = self.bank("update", cid, "--env", "production", "--client-cert-pin", "",
                            "--no-default").stdout.splitlines()
            self.assertIn("  pinned       subject CN=webhook.bank.example,O=Banco Exemplo,C=BR", out)
            self.assertFalse([x for x in out if "key" in x or "default" in x], out)
            out = self.bank("update", cid, "--env", "production", "--client-cert-subject",
                            "").stdout.splitlines()
            self.assertIn("  WARNING      " + warning, out)
            # a URL-token connection has no certificate to pin; none at all
            token = json.loads(self.bank("connect", "--env", "production", "--chave",
                                         "token@loja.example", "--url-token", "--json").stdout)
            self.assertIsNone(token["trust"])
            r = self.bank("update", token["id"], "--env", "production", "--client-cert-pin", pin,
                          check=False)
            self.assertEqual((r.returncode, r.stderr.strip().splitlines()[-1]),
                             (1, "pixrelay bank update: connection %s authenticates its bank with a "
                                 "URL token: --client-ca, --client-cert-subject and "
                                 "--client-cert-pin are for mutual TLS" % token["id"]))
            r = self.bank("update", "bnk_01JZZZZZZZZZZZZZZZZZZZZZZZ", "--env", "production",
                          "--default", check=False)
            self.assertEqual((r.returncode, r.stderr.strip().splitlines()[-1]),
                             (1, "pixrelay bank update: no connection bnk_01JZZZZZZZZZZZZZZZZZZZZZZZ "
                                 "in production"))
            for c in (cid, token["id"]):
                self.bank("disconnect", c, "--env", "production")

    def test_trigger_pix_pays_a_charge_and_listen_forwards_it(self):
        path = "/bank-hook-%f" % time.time()
        out = open(os.path.join(self.wd.path, "listen-bank.out"), "w+")
        e = dict(os.environ, PIXRELAY_API_KEY=self.key)
        p = subprocess.Popen([BIN, "--base-url", "http://127.0.0.1:%d/v1" % self.px.port, "listen",
                              "--forward-to", self.sink.url(path)],
                             stdout=out, stderr=subprocess.PIPE, text=True, env=e)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait(), out.close()))
        self.assertIn("connected", p.stderr.readline())
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 4500},
                            headers=auth(self.key))
        charge = r.json["data"]["id"]
        # the static BR Code's txid: the id without its leading 0
        r = self.run_cli("trigger", "pix", "--txid", charge[1:], "--amount", "4500",
                         "--payer", "Pedido 7", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual((got["outcome"], got["reason"], got["charge"]), ("paid", None, charge))
        self.assertRegex(got["endToEndId"], r"^E00000000\d{12}[0-9A-Za-z]{11}$")
        c = self.px.request("GET", "/v1/charge/pix/" + charge, headers=auth(self.key)).json["data"]
        self.assertEqual((c["status"], c["pix"]["endToEndId"], c["pix"]["infoPagador"]),
                         ("PAID", got["endToEndId"], "Pedido 7"))
        # listen forwarded the event, signed like the postback
        fwd = self.sink.wait_count(1, path=path, webhook_id=got["event"])[0]
        self.assertEqual(fwd.json["event"], "EVENT:CHARGE_PAID")
        self.assertEqual(fwd.json["data"]["pix"]["endToEndId"], got["endToEndId"])
        self.assertTrue(verify(self.secrets["signingSecret"],
                               {k.lower(): v for k, v in fwd.header_list}, fwd.body))
        # the same endToEndId again: a duplicate, no new event
        r = self.run_cli("trigger", "pix", "--txid", charge, "--amount", "4500",
                         "--e2e", got["endToEndId"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("duplicate", r.stdout)
        # a wrong amount: reported, the charge unchanged
        r2 = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 1000},
                             headers=auth(self.key)).json["data"]["id"]
        r = self.run_cli("trigger", "pix", "--txid", r2, "--amount", "999")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^Pix E\w{31} \(9\.99\) through bnk_\w{26}: unmatched, "
                         r"amount_mismatch\ncharge %s\nevent evt_\w{26} \(EVENT:PIX_UNMATCHED\)\n$" % r2)
        # usage
        r = self.run_cli("trigger", "pix", "--e2e", "short")
        self.assertEqual((r.returncode, r.stderr.strip()),
                         (2, "pixrelay trigger: --e2e must be 32 letters or digits"))
        r = self.run_cli("trigger", "charge.paid", "--txid", "x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--txid, --e2e, --payer and --connection are for trigger pix", r.stderr)


if __name__ == "__main__":
    unittest.main()
