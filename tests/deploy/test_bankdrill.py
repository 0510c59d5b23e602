"""The drill of issue 18, in CI: every Pix a bank settled becomes exactly one
event, however its webhook fares.

deploy/nginx.conf as shipped (nginxstack.py) in front of two pixrelay
processes on one Redis, reconciling every INTERVAL seconds. Each test has a
bank of its own (tests/e2e/testbank.py, every call checked against the
Central Bank's API Pix) connected by mutual TLS: its webhook goes through
nginx's bank server with the bank's client certificate, and loses a third of
its calls, sends a tenth twice and holds a tenth past a reconciliation
(webhook_faults, seeded). Payers pay charges created at the bank through
pixrelay, and pay the key itself without a txid (a Pix the standard's
webhook never tells). What the merchant sees is checked:

- each Pix the bank settled is one signed event (CHARGE_PAID of its charge,
  or PIX_UNMATCHED), and only one, within a reconciliation interval of its
  settlement (plus the claim timer and slack: BOUND);
- the event says where pixrelay took the Pix from, and the day's report
  agrees: byWebhook + recovered == the Pix settled, recoveredEndToEndIds are
  exactly the Pix whose webhook never came or came after the reconciliation
  took them, duplicates are exactly the webhook's repeats (a second copy, a
  late one); the cents add up;
- the bank saw no call outside the standard (bank.violations == []).

Then the same result through what goes wrong: the bank down for longer than
two intervals (12 s here, not the issue's 30 s: it is the two failed runs
and the doubled delay after them that matter), pages of exactly 1,000 and
1,001 Pix with the token revoked between the two pages, and the process
running a reconciliation killed (SIGKILL) in the middle of it, taken over by
the other one once its lease runs out (4 x bank-timeout-ms + 4 x
redis-timeout-ms: 10 s with this file's settings, a minute by default).
About 75 s in all.
"""
import collections
import itertools
import json
import os
import sys
import time
import unittest

import nginxstack

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import certs  # noqa: E402
from bankdrill import (DrillBank, day_reports, days_of, epoch, events_by_e2e,  # noqa: E402
                      register_webhook, webhook_outcomes)
from harness import Workdir, auth, free_port, init_platforms, shard_of, wait_for  # noqa: E402
from sink import Sink  # noqa: E402

PUBLIC = "pay.example.test"
INTERVAL = 5  # --bank-reconcile-interval
BANK_TIMEOUT_MS = 1500
REDIS_TIMEOUT_MS = 1000
TICK = 1.0  # how often a process claims the connections that are due
SLACK = 3.0  # the page, its write, the postback (more under the sanitizers)
BOUND = INTERVAL + TICK + SLACK  # a Pix's event at most this long after its settlement
HELD = BOUND + 1  # a held webhook comes after a reconciliation took its Pix
DOWN = 12  # seconds the bank is down: more than two intervals
SECRET = "drill-client-secret-0123456789abcdef"
CONNECTIONS = "/v1/bank/connections"
_serial = itertools.count(1)


def brl(cents):
    return "%d.%02d" % divmod(cents, 100)


def pid_of_local_port(procs, port):
    """The process among `procs` (Pixrelay) with a TCP socket bound to the
    local `port`, found through /proc."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add("socket:[%s]" % fields[9])
    for p in procs:
        fds = "/proc/%d/fd" % p.proc.pid
        for fd in os.listdir(fds):
            try:
                if os.readlink(os.path.join(fds, fd)) in inodes:
                    return p
            except OSError:
                pass
    return None


class BankDrill(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        wd = Workdir()
        try:
            d = os.path.join(wd.path, "certs")
            cls.merchant_ca = certs.make_ca(d, "merchant-ca", "Loja Example CA")
            # the merchant's client certificate for the bank's API
            cls.merchant = certs.make_client(d, cls.merchant_ca, "loja", "loja.example")
            # the webhook server's certificate, for the address the bank calls
            hook_tls = certs.make_server(d, cls.merchant_ca, "webhook", hosts=("127.0.0.1",))
            cls.secret_file = os.path.join(d, "secret.txt")
            with open(cls.secret_file, "w") as f:
                f.write(SECRET)
            os.chmod(cls.secret_file, 0o600)
        except BaseException:
            wd.cleanup()
            raise
        cls.hook_port = free_port()
        # what the CLI shares with both processes: one credentials key file,
        # the webhook server's URL
        cls.config = ["--credentials-key-file", os.path.join(wd.path, "credentials.key"),
                      "--bank-webhook-base-url", "https://127.0.0.1:%d/v1" % cls.hook_port]
        nginxstack.start(cls, wd, PUBLIC, args=cls.config + [
            "--bank-reconcile-interval", str(INTERVAL),
            "--bank-timeout-ms", str(BANK_TIMEOUT_MS),
            "--redis-timeout-ms", str(REDIS_TIMEOUT_MS),
            "--trusted-proxies", "127.0.0.1"],
            webhook_tls=hook_tls, webhook_port=cls.hook_port)
        try:
            cls.sink = Sink().start()
            px = cls.px[0]
            init_platforms(px)
            cls.key = px.create_key("sandbox")["key"]
            cls.signing = json.loads(px.cli("secrets", "--env", "sandbox", "--json").stdout)[
                "signingSecret"]
        except BaseException:
            nginxstack.stop(cls)
            raise

    @classmethod
    def tearDownClass(cls):
        codes = [(p.stop(), p.log()) for p in cls.px]
        cls.sink.close()
        nginxstack.stop(cls)
        for code, log in codes:
            if code not in (0, None) or "Sanitizer" in log:
                raise AssertionError("pixrelay exited %s:\n%s" % (code, log[-3000:]))

    def setUp(self):
        self.settled = {}  # endToEndId -> (horario as epoch seconds, charge id or None, cents)
        self.path = "/drill-%s-%d" % (self._testMethodName, time.time_ns())

    # ---- the stack ----

    def live(self):
        """A pixrelay process that runs (the kill test stops one)."""
        return next(p for p in self.px if p.proc and p.proc.poll() is None)

    def api(self, method, path, body=None):
        r = self.live().request(method, path, body=body, headers=auth(self.key))
        self.assertLess(r.status, 300, (method, path, r))
        return r.json["data"]

    def open_bank(self, faults=True, before_connect=None):
        """A bank of the test's own, connected to the account by mutual TLS
        with its API credentials; the merchant registers the connection's
        webhookUrl at the bank. before_connect(bank) runs before the
        connection exists. Returns (bank, connection)."""
        n = next(_serial)
        bank = DrillBank(client_ca=self.merchant_ca.cert, receiver_ca=self.merchant_ca.cert,
                         keys=["drill%d-%d@loja.example" % (n, time.time_ns() % 10 ** 9)],
                         client_secret=SECRET, seed=n).start()
        self.addCleanup(bank.close)
        self.addCleanup(lambda: self.assertEqual(bank.violations, []))
        if before_connect:
            before_connect(bank)
        px = self.live()
        px.cli("account", "set", "--env", "sandbox", "--postback-url",
               self.sink.url(self.path + "/account"))
        conn = json.loads(px.cli(*self.config, "bank", "connect", "--env", "sandbox",
                                 "--chave", bank.key, "--client-ca", bank.webhook_ca,
                                 "--api-url", bank.url, "--token-url", bank.token_url,
                                 "--client-id", bank.client_id,
                                 "--client-secret-file", self.secret_file,
                                 "--cert", self.merchant.cert, "--key", self.merchant.key,
                                 "--bank-ca", bank.server_ca, "--json").stdout)
        self.addCleanup(lambda: self.live().cli("bank", "disconnect", conn["id"], "--env",
                                                "sandbox"))
        self.assertEqual(conn["webhookUrl"], "https://127.0.0.1:%d/v1/webhooks/bank/%s"
                         % (self.hook_port, conn["id"]))
        # (each process takes the credentials key when a call first needs it)
        register_webhook(bank, self.merchant, conn["webhookUrl"])
        if faults:
            bank.webhook_faults(drop=0.33, twice=0.1, delay=0.1, delay_seconds=HELD, seed=1)
        return bank, conn

    def charge(self, bank, cents):
        """A charge created at the bank through pixrelay."""
        ch = self.api("POST", "/v1/charge/pix/create",
                      {"amount": cents, "postbackUrl": self.sink.url(self.path + "/charge")})
        self.assertIsNotNone(bank.cob(ch["id"]), "the charge was not created at the bank")
        return ch

    def pay(self, bank, ch):
        """The payer pays charge `ch`; the bank sends its webhook."""
        pix = bank.pay(ch["id"])
        self.settled[pix["endToEndId"]] = (epoch(pix["horario"]), ch["id"], ch["amount"])
        bank.notify([pix["endToEndId"]], wait=False)

    def pay_key(self, bank, cents, when=None):
        """A Pix to the key itself, without txid: no webhook tells of it."""
        pix = bank.pay_key(brl(cents), when=when)
        self.settled[pix["endToEndId"]] = (epoch(pix["horario"]), None, cents)

    def connection(self, conn):
        return self.api("GET", "%s/%s" % (CONNECTIONS, conn["id"]))["api"]["reconciliation"]

    def heard(self):
        return events_by_e2e(self.sink.requests(self.path + "/charge")
                             + self.sink.requests(self.path + "/account"), self.signing)

    def wait_heard(self, timeout):
        """Every Pix settled has its event; returns heard()."""
        def all_heard():
            h = self.heard()
            return h if set(self.settled) <= set(h) else None
        try:
            return wait_for(all_heard, timeout=timeout, interval=0.1,
                            what="an event of every Pix settled")
        except AssertionError:
            h = self.heard()
            missing = sorted(set(self.settled) - set(h))
            raise AssertionError("%d of %d Pix without an event after %.0f s: %s"
                                 % (len(missing), len(self.settled), timeout, missing[:5]))

    def quiet(self, bank, conn):
        """Every webhook the bank sends is over and a reconciliation more
        ran: nothing is still on its way."""
        bank.wait_deliveries(len(bank.deliveries), timeout=HELD + 10)
        before = self.connection(conn)["lastSuccessAt"]
        self.api("POST", "%s/%s/reconcile" % (CONNECTIONS, conn["id"]))
        wait_for(lambda: self.connection(conn)["lastSuccessAt"] != before, timeout=BOUND * 2,
                 what="one more reconciliation")
        time.sleep(1)

    # ---- what the merchant sees ----

    def assert_each_once(self, heard, deadline=None):
        """Each Pix settled is exactly one event (and one delivery of it),
        the right one, and nothing else came; its first delivery at most
        deadline(e2e) (default: BOUND after its settlement). Returns the
        Pix taken by the reconciliation."""
        self.assertEqual(set(heard), set(self.settled))
        late = []
        self.slowest = max(heard[e].first - at for e, (at, _, _) in self.settled.items())
        for e2e, (at, cid, cents) in self.settled.items():
            h = heard[e2e]
            self.assertEqual((len(h.ids), h.deliveries), (1, 1), (e2e, h))
            if cid:
                self.assertEqual((h.types, h.charges), (["EVENT:CHARGE_PAID"], [cid]), h)
            else:
                self.assertEqual(h.types, ["EVENT:PIX_UNMATCHED"], h)
            limit = deadline(e2e) if deadline else at + BOUND
            if h.first > limit:
                late.append((e2e, round(h.first - at, 1), round(limit - at, 1)))
        self.assertEqual(late, [], "events later than the bound (Pix, seconds after "
                                   "settlement, bound)")
        return {e for e, h in heard.items() if h.sources == ["reconciliation"]}

    def assert_report(self, bank, conn, recovered):
        """The day's report (each day the Pix fall on, summed) agrees with
        the events, and with what the bank's webhook calls were told."""
        outcomes = webhook_outcomes(bank.deliveries)
        taken = {e for e, ans in outcomes.items()
                 if any(a.outcome in ("paid", "unmatched") for a in ans)}
        self.assertEqual(set(self.settled) - recovered, taken,
                         "the Pix the webhook brought first: the events disagree with its answers")
        repeats = sum(1 for ans in outcomes.values() for a in ans if a.outcome == "duplicate")
        for e2e, ans in outcomes.items():
            for a in ans:
                # every webhook call that was sent was answered 200, through nginx
                self.assertTrue(a.dropped or a.status == 200, (e2e, a))
        never = {e for e in self.settled if not any(not a.dropped for a in outcomes.get(e, []))}
        self.assertLessEqual(never, recovered, "a Pix whose webhook never came, not recovered")
        rep = day_reports(self.live(), self.key, conn["id"],
                          days_of(at for at, _, _ in self.settled.values()))
        cents = sum(c for _, _, c in self.settled.values())
        self.assertEqual(dict(rep["pix"]), {
            "received": len(self.settled), "byWebhook": len(self.settled) - len(recovered),
            "recovered": len(recovered), "duplicates": repeats, "refused": 0, "heldElsewhere": 0},
            rep["reports"])
        self.assertEqual(dict(rep["cents"]), {
            "received": cents, "byWebhook": cents - sum(self.settled[e][2] for e in recovered),
            "recovered": sum(self.settled[e][2] for e in recovered), "refused": 0})
        paid = sum(1 for _, cid, _ in self.settled.values() if cid)
        self.assertEqual({k: v for k, v in rep["outcomes"].items() if v},
                         {k: v for k, v in (("paid", paid), ("no_txid", len(self.settled) - paid))
                          if v})
        ids = rep["recoveredEndToEndIds"]
        self.assertEqual(len(ids), len(set(ids)))
        if len(recovered) <= 1000:
            self.assertEqual(set(ids), recovered)
        else:
            # the report lists the first 1,000 of a day (BANKS_REPORT_E2E_MAX)
            self.assertEqual(len(ids), sum(min(1000, r["pix"]["recovered"])
                                           for r in rep["reports"]))
            self.assertLessEqual(set(ids), recovered)
        rec = self.connection(conn)
        self.assertEqual((rec["failures"], rec["lastError"], rec["newTotal"]),
                         (0, None, len(recovered)), rec)
        return outcomes

    # ---- the drill ----

    def test_every_pix_once_with_a_third_of_the_webhooks_lost(self):
        bank, conn = self.open_bank()
        charges = [self.charge(bank, 1000 + 7 * i) for i in range(36)]
        # payers pay over about two intervals; every fourth a Pix to the key
        for i, ch in enumerate(charges):
            self.pay(bank, ch)
            if i % 4 == 3:
                self.pay_key(bank, 500 + i)
            time.sleep(2.0 * INTERVAL / len(charges))
        self.wait_heard(BOUND + 2)
        self.quiet(bank, conn)
        recovered = self.assert_each_once(self.heard())
        outcomes = self.assert_report(bank, conn, recovered)
        # a webhook held past the reconciliation is a duplicate when it
        # comes; a second copy of one is a duplicate
        held = {e for e, ans in outcomes.items() if any(a.delay and not a.dropped for a in ans)}
        self.assertLessEqual(held, recovered)
        for e2e, ans in outcomes.items():
            for a in ans:
                if a.copy == 2 or e2e in held:
                    self.assertEqual(a.outcome, "duplicate", (e2e, ans))
        # the connection's log (the Banks page): each call of the bank's
        # webhook, and each Pix the reconciliation took, not its re-reads
        log = self.api("GET", "%s/%s/notifications?limit=1000" % (CONNECTIONS, conn["id"]))
        heard = collections.Counter((n["source"], n["endToEndId"])
                                    for n in log["notifications"])
        sent = collections.Counter(("webhook", e) for e, ans in outcomes.items()
                                   for a in ans if not a.dropped)
        self.assertEqual(heard, sent + collections.Counter(("reconciliation", e)
                                                           for e in recovered))
        # the draws of seed 1 give each kind of fault here
        dropped = {e for e, ans in outcomes.items() if all(a.dropped for a in ans)}
        twice = {e for e, ans in outcomes.items() if len(ans) == 2}
        self.assertTrue(dropped and twice and held, (dropped, twice, held))
        # the charges are PAID, with their Pix
        for e2e, (_, cid, _) in self.settled.items():
            if cid:
                c = self.api("GET", "/v1/charge/pix/" + cid)
                self.assertEqual((c["status"], c["pix"]["endToEndId"], c["pix"]["source"]),
                                 ("PAID", e2e, "reconciliation" if e2e in recovered
                                  else "webhook"))
        print("\n%d Pix: %d by webhook, %d recovered (%d never sent, %d held), %d duplicates; "
              "the slowest heard %.1f s after settlement (bound %.0f s)"
              % (len(self.settled), len(self.settled) - len(recovered), len(recovered),
                 len(dropped), len(held), sum(1 for ans in outcomes.values() for a in ans
                                              if a.outcome == "duplicate"), self.slowest, BOUND),
              file=sys.stderr)

    def test_the_bank_down_for_longer_than_two_intervals(self):
        bank, conn = self.open_bank()
        charges = [self.charge(bank, 2000 + i) for i in range(12)]
        wait_for(lambda: self.connection(conn)["lastSuccessAt"], timeout=BOUND,
                 what="the first reconciliation")
        bank.down(DOWN, mode="refuse")
        up_at = time.time() + DOWN
        # the next run now: it fails at once, the one after it INTERVAL later
        self.api("POST", "%s/%s/reconcile" % (CONNECTIONS, conn["id"]))
        # payers keep paying while the bank's API is down
        for i, ch in enumerate(charges):
            self.pay(bank, ch)
            if i % 4 == 3:
                self.pay_key(bank, 600 + i)
            time.sleep((DOWN - 4.0) / len(charges))
        rec = wait_for(lambda: self.connection(conn)["failures"] >= 2 and self.connection(conn),
                       timeout=max(1.0, up_at - time.time()),
                       what="two reconciliations failed while the bank is down")
        self.assertIn("GET /pix", rec["lastError"])
        second = epoch(rec["lastErrorAt"])
        self.assertLess(time.time(), up_at, "the bank came up before two runs failed")
        # after two failures the next run waits twice the interval (then the
        # bank is up again): every Pix the webhook missed is taken by then
        catch_up = second + 2 * INTERVAL + TICK + SLACK
        self.assertGreater(catch_up - 2 * INTERVAL, up_at - DOWN)
        self.wait_heard(catch_up - time.time() + 2)
        self.quiet(bank, conn)
        recovered = self.assert_each_once(
            self.heard(), deadline=lambda e: max(self.settled[e][0] + BOUND, catch_up))
        self.assert_report(bank, conn, recovered)
        print("\nthe bank down %d s: failed at +%.1f s, %d Pix recovered by +%.1f s"
              % (DOWN, second - (up_at - DOWN), len(recovered),
                 max(self.heard()[e].first for e in recovered) - (up_at - DOWN)),
              file=sys.stderr)

    def test_pages_of_1000_and_1001_pix_and_a_token_revoked_between_them(self):
        # 1,000 Pix to the key before the connection: its first window
        # (from 10 minutes before the credentials) lists exactly 1,000
        start = time.time() - 120

        def thousand(bank):
            for i in range(1000):
                self.pay_key(bank, 100 + i % 50, when=_iso(start + i * 0.05))

        bank, conn = self.open_bank(faults=False, before_connect=thousand)
        connected = time.time()
        self.wait_heard(BOUND + 10)
        first = bank.listings[0]
        self.assertEqual((first.page, first.items, first.pages, first.total), (0, 1000, 1, 1000))
        self.assertEqual({x.page for x in bank.listings if x.total == 1000}, {0})
        for c in bank.log:
            if c.endpoint == "GET /pix":
                self.assertIn("paginacao.itensPorPagina=1000", c.path)

        # one more Pix: the next run reads two pages, and the bank revokes
        # its tokens once it has made the first
        def revoke(page, pages):
            if page == 0 and pages == 2 and not revoked:
                revoked.append(time.time())
                bank.revoke_tokens()
        revoked = []
        bank.after_page = revoke
        self.pay_key(bank, 4321)
        last = max(self.settled, key=lambda e: self.settled[e][0])
        self.wait_heard(BOUND + 5)
        self.assertTrue(revoked)
        two = [x for x in bank.listings if x.total == 1001]
        self.assertEqual([(x.page, x.items, x.pages) for x in two[:2]], [(0, 1000, 2), (1, 1, 2)])
        after = [(c.endpoint, c.status, "paginaAtual=1" in c.path) for c in bank.log
                 if c.time >= revoked[0]]
        self.assertEqual(after[:4], [("GET /pix", 200, False), ("GET /pix", 401, True),
                                     ("POST /oauth/token", 200, False),
                                     ("GET /pix", 200, True)], after)
        self.quiet(bank, conn)
        recovered = self.assert_each_once(
            self.heard(), deadline=lambda e: (self.settled[e][0] if e == last else connected)
            + BOUND)
        self.assertEqual(recovered, set(self.settled))
        self.assert_report(bank, conn, recovered)

    def test_a_process_killed_mid_reconciliation(self):
        bank, conn = self.open_bank()
        charges = [self.charge(bank, 3000 + i) for i in range(12)]
        for ch in charges[:4]:
            self.pay(bank, ch)
        self.pay_key(bank, 700)
        self.wait_heard(BOUND + 2)
        # the bank slows (under bank-timeout-ms): the next run waits on it
        bank.slow(1.0)
        self.pay_key(bank, 701)
        self.pay_key(bank, 702)
        call = wait_for(lambda: [c for c in bank.pending_calls() if c.path.endswith("/pix")],
                        timeout=INTERVAL + TICK + 3, what="a page asked of the slow bank")[0]
        victim = pid_of_local_port(self.px, call.port)
        self.assertIsNotNone(victim, call)
        survivor = next(p for p in self.px if p is not victim)
        victim.proc.kill()
        victim.proc.wait(10)
        killed = time.time()
        self.addCleanup(self.restart, victim)
        bank.slow(0)
        lease_end = float(self.redis.cmd("ZSCORE", "pixrelay:{s%d}:bankrec" % shard_of(conn["id"]),
                                         conn["id"])) / 1000
        self.assertGreater(lease_end, killed)
        # payers go on paying; the webhook reaches the other process
        for ch in charges[4:]:
            self.pay(bank, ch)
            time.sleep(0.2)
        self.pay_key(bank, 703)
        self.wait_heard(lease_end - time.time() + BOUND + 2)
        # nobody asked the bank while the killed run's lease held
        asked = [c.time for c in bank.arrivals if c.path.endswith("/pix") and c.time > killed]
        self.assertGreaterEqual(min(asked), lease_end, "a run began before the lease ran out")
        self.quiet(bank, conn)
        recovered = self.assert_each_once(
            self.heard(), deadline=lambda e: max(self.settled[e][0], lease_end) + BOUND)
        self.assert_report(bank, conn, recovered)
        self.assertTrue(survivor.proc.poll() is None)
        print("\nkilled at +0, lease ran out at +%.1f s, first page asked at +%.1f s"
              % (lease_end - killed, min(asked) - killed), file=sys.stderr)

    def restart(self, p):
        p.start()
        p.wait_ready()


def _iso(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + ".%03dZ" % (int(ts * 1000) % 1000)


if __name__ == "__main__":
    unittest.main(verbosity=2)
