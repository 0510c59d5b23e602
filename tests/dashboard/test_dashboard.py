#!/usr/bin/env python3
"""The dashboard in a real browser: Debian's chromium driven by playwright-core.

It starts a real redis-server, the real pixrelay binary and a real postback
sink (tests/e2e), makes what the pages show (keys, charges, recurrences, a business
account, events that died at once because the sink answered 410 Gone, bank
connections: one heard only by webhook, one with API credentials at the test
bank (tests/e2e/testbank.py) and a Pix settled there that its webhook never
brought, one whose bank is down), then runs dashboard.mjs: sign in, create a
key and copy it, use it, revoke it and see it refused, open a dead event,
replay it and see it delivered, bulk replay, an event delivered to a webhook
endpoint besides its postbackUrl (its badge and table), a charge with its QR image, a
recurrence with its QR, approved by the bank's /rec callback, cancelled at the bank, the
banks (reconcile now, the recovered Pix in the day's report, the failing
bank), accounts with their secrets on request, production marked. Then it
checks at the sink that the replayed events arrived, that the recovered Pix
paid its charge, and that no key's text is in the server's log.

playwright-core is pinned in package.json / package-lock.json here, installed
with `npm ci --ignore-scripts` (it downloads no browser) into node_modules
(ignored by git) when missing or made from another lock file. Screenshots of
each page go to $PIXRELAY_SCREENSHOTS when set (update_screenshots.sh points
it at docs/screenshots), else to a temporary directory.
"""
import datetime
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

import certs  # noqa: E402
from harness import Pixrelay, Redis, Workdir, auth, wait_for  # noqa: E402
from sink import Sink  # noqa: E402
import sse  # noqa: E402
from test_keys_api import _account_body  # noqa: E402
from testbank import SCOPES, TestBank  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def install():
    """npm ci, unless node_modules was made from this very lock file."""
    with open(os.path.join(HERE, "package-lock.json"), "rb") as f:
        want = hashlib.sha256(f.read()).hexdigest()
    stamp = os.path.join(HERE, "node_modules", ".pixrelay-lock-sha256")
    with open(os.path.join(HERE, ".npm-install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(stamp) as f:
                if f.read().strip() == want:
                    return
        except OSError:
            pass
        env = dict(os.environ, npm_config_fund="false", npm_config_audit="false",
                   npm_config_update_notifier="false")
        p = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund",
                            "--loglevel=error"], cwd=HERE, env=env, capture_output=True,
                           text=True, timeout=900)
        if p.returncode != 0:
            raise AssertionError("npm ci failed in tests/dashboard (is the npm registry "
                                 "reachable?):\n" + p.stdout + p.stderr)
        with open(stamp, "w") as f:
            f.write(want + "\n")


class Dashboard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for tool in (CHROMIUM, shutil.which("node"), shutil.which("npm")):
            if not tool or not os.path.exists(tool):
                raise AssertionError("chromium, node and npm are needed "
                                     "(bash deploy/install-deps.sh --test installs them)")
        install()
        cls.wd = Workdir()
        cls.redis = Redis(cls.wd.path).start()
        cls.sink = Sink().start()
        cls.px = Pixrelay(cls.wd.path, cls.redis).start()
        cls.px.wait_ready()
        init = json.loads(cls.px.cli("init", "--json").stdout)
        cls.platform = init["sandbox"]["account"]
        cls.master = cls.px.create_key("sandbox", master=True, description="ops")["key"]
        cls.live_master = cls.px.create_key("production", master=True, description="ops")["key"]
        revoked = cls.px.create_key("sandbox", description="old laptop")
        cls.px.cli("keys", "revoke", revoked["id"])
        cls.revoked = revoked["key"]

    @classmethod
    def tearDownClass(cls):
        cls.px.stop()
        cls.sink.close()
        cls.redis.stop()
        cls.wd.cleanup()

    def call(self, method, path, body=None, account=None):
        r = self.px.request(method, path, body=body, headers=auth(self.master, account))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def paid_charge(self, url, amount, account=None):
        c = self.call("POST", "/v1/charge/pix/create", {"amount": amount, "postbackUrl": url,
                                                         "comment": "Pedido %d" % amount}, account)
        self.call("POST", "/v1/charge/pix/%s/simulate-payment" % c["id"], account=account)
        return c["id"]

    def event_of(self, charge, state, account=None):
        def find():
            evs = self.call("GET", "/v1/events?limit=100", account=account)["events"]
            for e in evs:
                full = self.call("GET", "/v1/events/" + e["id"], account=account)
                if full["payload"]["data"]["id"] == charge and e["state"] == state:
                    return e["id"]
            return None
        return wait_for(find, timeout=20, what="the event of %s to be %s" % (charge, state))

    def connect_api(self, bank, client, account, *more):
        """A connection of `account` to the Pix key of `bank` with its API
        credentials (the operator's CLI, as docs/banks.md says), its default
        (the one its charges go to); the running server takes the
        credentials key when a call needs it. `more`: more options."""
        secret = os.path.join(self.wd.path, "secret-%d.txt" % bank.port)
        with open(secret, "w") as f:
            f.write(bank.client_secret)
        os.chmod(secret, 0o600)
        r = self.px.cli("bank", "connect", "--env", "sandbox", "--account", account,
                        "--chave", bank.key, "--url-token", "--api-url", bank.url,
                        "--token-url", bank.token_url, "--client-id", bank.client_id,
                        "--client-secret-file", secret, "--cert", client.cert,
                        "--key", client.key, "--bank-ca", bank.server_ca, "--default", *more, "--json")
        return json.loads(r.stdout)

    def reconciliation(self, conn, account):
        return self.call("GET", "/v1/bank/connections/" + conn, account=account)["api"]["reconciliation"]

    def test_a_person_uses_the_dashboard(self):
        # what the pages show
        shop = self.call("POST", "/v1/baas/account/create",
                         dict(_account_body(), postbackUrl=self.sink.url("/shop")), self.platform)
        shop_paid = self.paid_charge(self.sink.url("/shop"), 15000, shop["id"])
        self.sink.script("/gone", [410, 410])
        dead = self.event_of(self.paid_charge(self.sink.url("/gone"), 2500), "dead")
        bulk = self.event_of(self.paid_charge(self.sink.url("/gone"), 3100), "dead")
        ok = self.paid_charge(self.sink.url("/ok"), 4200)
        self.event_of(ok, "delivered")
        pending = self.call("POST", "/v1/charge/pix/create", {"amount": 990, "externalID": "order-77"})
        secrets = self.call("POST", "/v1/baas/accounts/%s/secrets/reveal" % shop["id"])
        # a bank connection of the platform account, with a Pix that paid a
        # charge and one that named none (docs/banks.md)
        conn = self.call("POST", "/v1/bank/connections",
                         {"pixKey": "pagamentos@loja.example", "auth": "url-token"}, self.platform)
        by_bank = self.call("POST", "/v1/charge/pix/create", {"amount": 5300})
        e2e = "E00000000202611261200dashboard01"
        sent = self.call("POST", "/v1/bank/connections/%s/simulate-pix" % conn["id"], {"pix": [
            {"endToEndId": e2e, "txid": by_bank["id"], "valor": "53.00",
             "horario": "2026-11-26T12:00:00Z", "infoPagador": "Maria, pedido 53"},
            {"endToEndId": "E00000000202611261200dashboard02", "txid": "semcobranca",
             "valor": "7.00", "horario": "2026-11-26T12:00:00Z"}]})
        self.assertEqual([p["outcome"] for p in sent["pix"]], ["paid", "unmatched"])
        # a connection with the bank's API credentials (docs/banks.md,
        # "Reconciliation"): its first run done, a charge created at the bank
        # and paid there, its webhook never sent; and one of the shop whose
        # bank answers 503 to everything
        certdir = os.path.join(self.wd.path, "certs")
        os.makedirs(certdir)
        merchant_ca = certs.make_ca(certdir, "merchant-ca", "Loja Client CA")
        merchant = certs.make_client(certdir, merchant_ca, "loja", "loja.example")
        bank = TestBank(client_ca=merchant_ca.cert, keys=["recebimentos@loja.example"]).start()
        self.addCleanup(bank.close)
        down = TestBank(client_ca=merchant_ca.cert, keys=["caixa@loja.example"]).start()
        self.addCleanup(down.close)
        down.down(mode="503")
        # (with Pix Automático's scopes: its recurrences are made there, docs/recurrences.md)
        api_made = self.connect_api(bank, merchant, self.platform, "--scope", " ".join(SCOPES))
        api_conn = api_made["id"]
        # a run now, whenever the first was (done once its success is new:
        # nothing made after it is taken before the browser asks)
        first = self.reconciliation(api_conn, self.platform)["lastSuccessAt"]
        r = self.px.request("POST", "/v1/bank/connections/%s/reconcile" % api_conn,
                            headers=auth(self.master, self.platform))
        self.assertEqual(r.status, 202, r)
        wait_for(lambda: self.reconciliation(api_conn, self.platform)["lastSuccessAt"] not in (None, first),
                 timeout=20, what="the reconciliation asked now")
        # two recurrences made at that bank (docs/recurrences.md); the payer
        # approves the first at the bank, whose /rec callback the browser's
        # side posts as the bank would (its URL token)
        start = (datetime.date.today() + datetime.timedelta(days=7)).isoformat()
        rec = self.call("POST", "/v1/recurrences", {
            "payer": {"name": "Fulano de Tal", "document": "529.982.247-25"}, "contract": "CT-2026-0001",
            "object": "Academia: plano mensal", "periodicity": "MONTHLY", "startDate": start,
            "amount": 9990, "retryPolicy": "NONE"}, self.platform)
        other_rec = self.call("POST", "/v1/recurrences", {
            "payer": {"name": "Empresa X", "document": "11.222.333/0001-81"}, "contract": "CT-2026-0002",
            "object": "Software: licença anual", "periodicity": "ANNUAL", "startDate": start,
            "minimumAmount": 50000, "retryPolicy": "THREE_IN_SEVEN_DAYS"}, self.platform)
        bank.rec_status(rec["idRec"], "APROVADA", notify=False)
        rec_callback = {"recs": [{k: v for k, v in bank.rec(rec["idRec"]).items()
                                  if k in ("idRec", "status", "atualizacao", "ativacao")}]}
        hook = urllib.parse.urlsplit(api_made["webhookUrl"] + "/rec")
        # a third, approved (its /rec callback, as the bank posts it), charged for its
        # first cycle: a recurring charge, which the payer's bank pays with no QR code
        cycle = self.call("POST", "/v1/recurrences", {
            "payer": {"name": "Beltrana Souza", "document": "529.982.247-25"}, "contract": "CT-2026-0003",
            "object": "Escola: mensalidade", "periodicity": "MONTHLY", "startDate": start,
            "amount": 4990, "retryPolicy": "NONE"}, self.platform)
        bank.rec_status(cycle["idRec"], "APROVADA", notify=False)
        approved = {"recs": [{k: v for k, v in bank.rec(cycle["idRec"]).items()
                              if k in ("idRec", "status", "atualizacao", "ativacao")}]}
        r = self.px.request("POST", hook.path + "?" + hook.query, raw=json.dumps(approved).encode(),
                            headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r)
        r = self.px.request("PATCH", "/v1/bank/connections/" + api_conn,
                            body={"recebedor": {"agencia": "9708", "conta": "012682", "tipoConta": "CORRENTE"}},
                            headers=auth(self.master, self.platform))
        self.assertEqual(r.status, 200, r)
        recurring = self.call("POST", "/v1/recurrences/%s/charges" % cycle["id"], {
            "amount": 4990, "dueDate": (datetime.date.today() + datetime.timedelta(days=8)).isoformat()},
            self.platform)
        self.assertEqual((recurring["brCode"], recurring["recurrence"]), (None, cycle["id"]))
        at_bank = self.call("POST", "/v1/charge/pix/create", {"amount": 123456}, self.platform)
        self.assertIsNotNone(bank.cob(at_bank["id"]), "the charge is created at the bank")
        missed = bank.pay(at_bank["id"])  # settled at the bank; no webhook
        # (a bank that gives no token: its credentials kept untried)
        down_conn = self.connect_api(down, merchant, shop["id"], "--no-check")["id"]
        wait_for(lambda: self.reconciliation(down_conn, shop["id"])["failures"] >= 1,
                 timeout=20, what="the down bank's reconciliation to fail")
        with open(merchant.key) as f:
            private_key = f.read()

        # the overview's numbers: what the test caused so far (the environment's, the
        # API's): the shop's and /ok's delivered, the two 410s dead at their first attempt
        self.event_of(shop_paid, "delivered", shop["id"])
        caused = {"delivered": 2, "failedAttempts": 2, "dead": 2}
        wait_for(lambda: self.call("GET", "/v1/overview")["lastHour"] == caused, timeout=20,
                 what="the overview to count what the test caused")
        self.assertEqual(self.call("GET", "/v1/overview")["lastDay"], caused)
        # the endpoint the browser makes: the test ping and one delivery answered, then 503s
        self.sink.script("/ep-page", [200, 200] + [503] * 40)

        shots = os.environ.get("PIXRELAY_SCREENSHOTS") or tempfile.mkdtemp(prefix="pixrelay-shots-")
        os.makedirs(shots, exist_ok=True)
        cfg = {"url": "http://127.0.0.1:%d" % self.px.port, "screenshots": shots,
               "chromium": CHROMIUM, "master": self.master, "liveMaster": self.live_master,
               "revokedKey": self.revoked, "deadEvent": dead, "bulkEvent": bulk,
               "charge": pending["id"], "shopName": shop["tradeName"],
               "shopSigningSecret": secrets["postbackSigningSecret"],
               "platform": self.platform, "bankConn": conn["id"], "bankCharge": by_bank["id"],
               "bankE2E": e2e, "apiConn": api_conn, "apiUrl": bank.url, "clientId": bank.client_id,
               "apiE2E": missed["endToEndId"], "apiAmount": "R$ 1.234,56", "downConn": down_conn,
               "secrets": [bank.client_secret, down.client_secret, private_key.strip()],
               "sinkUrl": self.sink.url(""), "overviewAtLeast": caused,
               "shop": shop["id"], "recurrence": rec["id"], "otherRecurrence": other_rec["id"],
               "recHook": hook.path + "?" + hook.query, "recCallback": rec_callback,
               "recurringCharge": recurring["id"], "cycleRecurrence": cycle["id"]}
        p = subprocess.run(["node", os.path.join(HERE, "dashboard.mjs")], cwd=HERE,
                           env=dict(os.environ, DASHBOARD_TEST=json.dumps(cfg)),
                           capture_output=True, text=True, timeout=240)
        if p.returncode != 0:
            self.fail("the browser test failed (exit %d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
        out = json.loads(p.stdout.strip().splitlines()[-1])
        print("dashboard: first load of /dashboard/ in chromium: %(files)d files, %(bytes)d bytes, "
              "DOMContentLoaded at %(domContentLoadedMs)d ms, load at %(loadMs)d ms" % out["figures"])

        # the endpoint made in the browser: its ping and deliveries signed with its secret
        got = self.sink.requests(path="/ep-page")
        self.assertGreaterEqual(len(got), 3)
        self.assertEqual(got[0].json["event"], "EVENT:ENDPOINT_TEST")
        self.assertEqual([r.header("X-Team") for r in got[:2]], ["erp", "erp"])
        headers = {k.lower(): v for k, v in got[1].header_list}
        self.assertTrue(sse.verify(out["pageEndpointSecret"], headers, got[1].body))
        # the event of the webhook endpoint's page reached it, besides its postbackUrl
        self.assertEqual(len(self.sink.requests(path="/endpoint", webhook_id=out["endpointEvent"])), 1)
        self.assertEqual(len(self.sink.requests(path="/ok", webhook_id=out["endpointEvent"])), 1)
        # the replayed event arrived at the sink: once dead (410), then delivered (200)
        self.assertEqual(out["replayed"], dead)
        got = self.sink.requests(path="/gone", webhook_id=dead)
        self.assertEqual([r.reply.status for r in got], [410, 200])
        self.assertEqual(got[-1].json["id"], dead)
        # the bulk replay sent the other dead one again
        self.assertRegex(out["bulkToast"], r"^\d+ matched, [1-9]\d* queued again\.$")
        self.sink.wait_count(2, path="/gone", webhook_id=bulk, timeout=20)
        # the key made in the browser was revoked through the API, and is refused
        keys = self.call("GET", "/v1/keys?limit=100")["keys"]
        made = [k for k in keys if k["id"] == out["revokedKeyId"]]
        self.assertEqual(len(made), 1)
        self.assertIsNotNone(made[0]["revokedAt"])
        self.assertIsNotNone(made[0]["lastUsedAt"])
        # every page has its screenshot
        for name in ("signin", "overview", "endpoints", "endpoint", "keys", "events", "event",
                     "event-delivered", "charges", "charge", "recurrences", "recurrence",
                     "banks", "bank", "bank-failing", "charge-pix", "accounts", "account",
                     "production"):
            with open(os.path.join(shots, name + ".png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)
        # the bank connection made in the browser exists, its token was shown once
        made = [c for c in self.call("GET", "/v1/bank/connections", account=self.platform)["connections"]
                if c["pixKey"] == "browser@loja.example"]
        self.assertEqual(len(made), 1)
        self.assertTrue(out["bankUrl"].startswith(made[0]["webhookUrl"] + "?hmac="), out["bankUrl"])
        # "Reconcile now" in the browser took the Pix the webhook missed: it
        # paid its charge; the down bank was asked again, and failed again
        got = self.call("GET", "/v1/charge/pix/" + at_bank["id"], account=self.platform)
        self.assertEqual((got["status"], got["pix"]["endToEndId"], got["pix"]["source"]),
                         ("PAID", missed["endToEndId"], "reconciliation"))
        self.assertEqual(self.reconciliation(down_conn, shop["id"])["failures"], out["downFailures"])
        self.assertGreaterEqual(out["downFailures"], 2)
        # the recurrence approved by its callback, then cancelled at the bank in the browser
        got = self.call("GET", "/v1/recurrences/" + rec["id"], account=self.platform)
        self.assertEqual((got["status"], got["closing"]), ("CANCELLED", {"code": "SLCR", "reason": None,
                                                                        "by": "USUARIO_RECEBEDOR"}))
        self.assertEqual(bank.rec(rec["idRec"])["status"], "CANCELADA")
        self.assertEqual(bank.rec(other_rec["idRec"])["status"], "CRIADA")
        self.assertEqual(bank.take_violations(), [])
        # no key's text in the server's log
        time.sleep(0.2)  # the log is flushed every 100 ms
        log = self.px.log()
        for k in (self.master, self.live_master, self.revoked):
            self.assertNotIn(k, log)
        self.assertNotIn(secrets["postbackSigningSecret"], log)
        if not os.environ.get("PIXRELAY_SCREENSHOTS"):
            shutil.rmtree(shots, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
