"""Money over many shards: 1,000 concurrent internal transfers between accounts
of different shards, with SIGKILL of a pixrelay process in the middle.

Against one Redis, or (PIXRELAY_TEST_REDIS=cluster) a Redis Cluster of 3
primaries, where the accounts' shards live on different primaries. What is
asserted:
  - the sum of all balances is conserved, and no balance is ever negative
    (sampled during the run, and at the end);
  - every transfer is applied once or not at all: its debit and its credit
    are each in a ledger exactly once, or neither is;
  - a 200 {"amount", "status": "DONE"} is answered only once the money has
    arrived (checked the moment the answer comes: the credit's marker exists);
  - transfers the killed process left debited and not credited are found and
    finished by the surviving dispatcher (recovery), and a client retrying
    one with its Idempotency-Key gets DONE, with the money moved once.
"""
import hashlib
import http.client
import json
import os
import random
import signal
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import CLUSTER_MODE, Pixrelay, Redis, Workdir, acct_key, auth, shard_of, wait_for  # noqa: E402
from test_accounts import account_body  # noqa: E402

ACCOUNTS = 12
TRANSFERS = 1000
WORKERS = 32
FUND = 30000          # cents per charge paid into each account
MEMBER = "52998224725"  # one representative shared by all: one group
PREFIX = "pixrelay:"


def cnpj(rng):
    """A valid CNPJ (check digits computed here)."""
    d = [rng.randrange(10) for _ in range(8)] + [0, 0, 0, 1]
    for weights in ([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]):
        s = sum(a * b for a, b in zip(d, weights)) % 11
        d.append(0 if s < 2 else 11 - s)
    return "".join(map(str, d))


def shard_key(shard, what):
    return "%s{s%d}:%s" % (PREFIX, shard, what)


class Money(unittest.TestCase):
    def setUp(self):
        self.wd = Workdir()
        self.redis = Redis(self.wd.path).start()
        self.procs = []
        self.a = self.start("a")
        self.b = self.start("b")
        init = json.loads(self.b.cli("init", "--json").stdout)
        self.platform = init["sandbox"]["account"]
        self.master = self.b.create_key("sandbox", master=True)["key"]
        self.rng = random.Random(int(os.environ.get("MONEY_SEED", "0")) or None)

    def tearDown(self):
        for p in self.procs:
            p.stop(signal.SIGKILL)
        self.redis.stop()
        self.wd.cleanup()

    def start(self, name):
        p = Pixrelay(self.wd.path, self.redis, name=name).start()
        p.wait_ready()
        self.procs.append(p)
        return p

    # ---- helpers ----

    def make_accounts(self):
        accts, seen = [], set()
        while len(accts) < ACCOUNTS:
            tax = cnpj(self.rng)
            if tax in seen:
                continue
            seen.add(tax)
            r = self.b.request("POST", "/v1/baas/account/create", body=account_body(tax, [MEMBER]),
                               headers=auth(self.master, self.platform))
            self.assertEqual(r.status, 200, r)
            accts.append(r.json["data"])
        for a in accts:
            r = self.b.request("POST", "/v1/charge/pix/create", body={"amount": FUND},
                               headers=auth(self.master, a["id"]))
            self.assertEqual(r.status, 200, r)
            r = self.b.request("POST", "/v1/charge/pix/%s/simulate-payment" % r.json["data"]["id"],
                               headers=auth(self.master, a["id"]))
            self.assertEqual(r.status, 200, r)
        return accts

    def balances(self, accts):
        return [int(self.redis.cmd("HGET", acct_key("sandbox", a["id"]), "balance")) for a in accts]

    def idem_key(self, src, key):
        return shard_key(shard_of(src), "idem:%s:%s" % (src, hashlib.sha256(key.encode()).hexdigest()))

    def transfer_id(self, src, key):
        v = self.redis.cmd("GET", self.idem_key(src, key))
        return v.split(" ", 1)[1] if v else None

    def half_done(self):
        ids = set()
        for k in range(16):
            ids.update(self.redis.cmd("ZRANGE", shard_key(k, "xout"), 0, -1) or [])
        return ids

    # ---- the test ----

    def test_concurrent_transfers_across_shards_with_a_process_killed(self):
        accts = self.make_accounts()
        shards = {shard_of(a["id"]) for a in accts}
        self.assertGreater(len(shards), 3, "accounts should spread over shards")
        if CLUSTER_MODE:
            nodes = {self.redis._route("{s%d}" % s) for s in shards}
            self.assertGreater(len(nodes), 1, "accounts should spread over primaries")
        total = sum(self.balances(accts))
        self.assertGreater(total, 0)
        pairs = [(x, y) for x in accts for y in accts if shard_of(x["id"]) != shard_of(y["id"])]
        plan = []
        for i in range(TRANSFERS):
            src, dst = self.rng.choice(pairs)
            plan.append({"i": i, "src": src, "dst": dst, "amount": self.rng.randrange(1, 3001),
                         "key": "money-%d-%d" % (os.getpid(), i)})

        lock = threading.Lock()
        state = {"next": 0, "done": 0, "victim": self.a, "survivor": self.b, "kills": 0,
                 "leftovers": set(), "violations": [], "negative": [], "stop": False}
        results = {}

        def send(t, px):
            h = auth(self.master, t["src"]["id"])
            h["Idempotency-Key"] = t["key"]
            body = {"amount": t["amount"], "from_key": t["src"]["taxID"], "to_key": t["dst"]["taxID"]}
            try:
                r = px.request("POST", "/v1/baas/internal-transfer", body=body, headers=h, timeout=30)
            except (OSError, http.client.HTTPException):
                return None, None
            return r.status, r.json

        def check_done(t, status, body):
            if status != 200:
                return
            if body != {"amount": t["amount"], "status": "DONE"}:
                state["violations"].append("transfer %d: 200 with %r" % (t["i"], body))
                return
            tid = self.transfer_id(t["src"]["id"], t["key"])
            if not tid:
                state["violations"].append("transfer %d: DONE without a debit" % t["i"])
            elif self.redis.cmd("EXISTS", shard_key(shard_of(t["dst"]["id"]), "xin:" + tid)) != 1:
                state["violations"].append("transfer %d (%s): DONE before the credit" % (t["i"], tid))

        def worker():
            while True:
                with lock:
                    if state["next"] >= len(plan):
                        return
                    t = plan[state["next"]]
                    state["next"] += 1
                    px = state["victim"] if state["victim"] and t["i"] % 3 else state["survivor"]
                status, body = send(t, px)
                check_done(t, status, body)
                with lock:
                    results[t["i"]] = (status, body, px.proc is not None and px is state["survivor"])
                    state["done"] += 1

        def killer():
            # SIGKILL the victim while transfers are in flight on it; if it
            # left no transfer half done, start another one and try again
            marks = [200, 350, 500, 650, 800]
            while state["kills"] < len(marks) and not state["stop"]:
                if state["done"] < marks[state["kills"]]:
                    time.sleep(0.002)
                    continue
                victim = state["victim"]
                # catch it between a debit and its credit: stop it, give the
                # survivor time to finish its own, and look; if nothing of
                # the victim's is half done, let it run a moment and look again
                left = set()
                for _ in range(50):
                    victim.proc.send_signal(signal.SIGSTOP)
                    seen = self.half_done()
                    time.sleep(0.1)
                    left = seen & self.half_done()
                    if left or state["stop"]:
                        break
                    victim.proc.send_signal(signal.SIGCONT)
                    time.sleep(0.005)
                victim.proc.send_signal(signal.SIGKILL)
                victim.proc.wait()
                with lock:
                    state["victim"] = None
                    state["kills"] += 1
                state["leftovers"] |= left
                if left or state["kills"] == len(marks) or state["stop"]:
                    return
                nxt = self.start("victim%d" % state["kills"])
                with lock:
                    state["victim"] = nxt

        def monitor():
            while not state["stop"]:
                bals = self.balances(accts)
                if min(bals) < 0:
                    state["negative"].append(bals)
                time.sleep(0.05)

        threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
        kt = threading.Thread(target=killer)
        mt = threading.Thread(target=monitor)
        t0 = time.time()
        for t in threads + [kt, mt]:
            t.start()
        for t in threads:
            t.join()
        state["stop"] = True
        kt.join()
        elapsed = time.time() - t0

        self.assertGreaterEqual(state["kills"], 1)
        self.assertTrue(state["leftovers"], "no kill caught a transfer between debit and credit")

        # the client retries half of the transfers whose answer it never got,
        # but not every one left half done: those are for the recovery
        unknown = [plan[i] for i, (s, _, _) in results.items() if s is None]
        half = [t for t in unknown if self.transfer_id(t["src"]["id"], t["key"]) in state["leftovers"]]
        rest = [t for t in unknown if t not in half]
        retried = rest[::2] + half[1::2]
        recovered = [self.transfer_id(t["src"]["id"], t["key"]) for t in half[0::2]]
        self.assertTrue(recovered)
        for t in retried:
            status, body = send(t, self.b)
            self.assertIn(status, (200, 400), body)
            check_done(t, status, body)
            results[t["i"]] = (status, body, True)

        # the surviving dispatcher finishes what the dead ones left debited
        wait_for(lambda: not self.half_done(), timeout=45, interval=0.5,
                 what="recovery to finish every transfer left debited")
        mt.join()

        self.assertEqual(state["violations"], [])
        self.assertEqual(state["negative"], [])
        final = self.balances(accts)
        self.assertEqual(sum(final), total)
        self.assertTrue(all(b >= 0 for b in final), final)

        # every transfer: debited and credited once each, or not at all
        debits, credits = {}, {}
        for a in accts:
            for e in self.redis.cmd("LRANGE", shard_key(shard_of(a["id"]), "ledger:" + a["id"]), 0, -1):
                e = json.loads(e)
                if e["kind"] != "internal_transfer":
                    continue
                side = debits if e["amount"] < 0 else credits
                side.setdefault(e["transfer"], []).append((a["id"], abs(e["amount"])))
        applied = 0
        counts = {}
        for t in plan:
            status = results.get(t["i"], (None,))[0]
            counts[status] = counts.get(status, 0) + 1
            tid = self.transfer_id(t["src"]["id"], t["key"])
            if tid is None:
                self.assertNotEqual(status, 200, t)
                continue
            applied += 1
            self.assertEqual(debits.get(tid), [(t["src"]["id"], t["amount"])], (t, tid))
            self.assertEqual(credits.get(tid), [(t["dst"]["id"], t["amount"])], (t, tid))
            self.assertNotEqual(status, 400, (t, results.get(t["i"])))
        self.assertEqual(sorted(debits), sorted(credits))
        self.assertEqual(len(debits), applied)
        statuses = set(counts) - {200, 400, None}
        self.assertEqual(statuses, set(), counts)
        for t in retried:
            if self.transfer_id(t["src"]["id"], t["key"]):
                self.assertEqual(results[t["i"]][0], 200, t)
        sys.stderr.write(
            "money (%s): %d transfers in %.1f s over %d shards; answers %s; %d applied; "
            "%d kill(s), %d left debited (%d finished by the recovery, %d by a client's retry); "
            "%d unanswered, %d retried\n"
            % ("cluster" if CLUSTER_MODE else "one redis", TRANSFERS, elapsed, len(shards),
               {str(k): v for k, v in sorted(counts.items(), key=str)}, applied, state["kills"],
               len(state["leftovers"]), len(recovered), len(half) - len(recovered), len(unknown),
               len(retried)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
