#!/usr/bin/env python3
"""The bank drill (issue 18): a day of Pix compressed into minutes, 30 % of
the bank's webhook calls lost, and the proof that every Pix the bank settled
became exactly one event. Not a CI test (tests/deploy/test_bankdrill.py is
the CI form): it prints figures.

    python3 tests/drill/bank_drill.py [--bin build/pixrelay] [--seconds 120]
        [--peak 300] [--loss 0.3] [--interval 5] [--processes 1] [--seed 18]

What runs, all on this machine: a redis-server (AOF, appendfsync always),
pixrelay (`serve --bank-reconcile-interval INTERVAL`), the tests' bank
(tests/e2e/testbank.py: the API Pix over mutual TLS, every call and answer
checked against the Central Bank's schemas) and a postback sink in a process
of its own. The account is connected to the bank with its API credentials and
a URL token.

The bank's webhook calls go to pixrelay's URL-token webhook straight, not
through nginx: the shipped nginx.conf lets one address make 20 calls a second
(burst 200) on the banks' server, so at a few hundred Pix a second, one per
call, nginx would refuse most calls itself (429) and the drill would measure
that limit instead of the loss it sets; a TLS handshake per call would also
take the CPU pixrelay needs on a small machine. The CI test goes through
nginx with mutual TLS.

The day: 24 "hours" of SECONDS/24 each, each with a share of the peak rate
(a shop's day: quiet at night, busy at lunch and in the evening). Payers pay
charges created at the bank through pixrelay beforehand (--charges of the
Pix), static QR codes (a txid that names no charge) and the key itself
without a txid (--no-txid; the standard's webhook tells only Pix with a
txid, so only the reconciliation brings those). Each webhook call is lost
(--loss), or sent twice (--twice), and held --late-seconds (--late).

It prints how many Pix were settled, taken by webhook, recovered by the
reconciliation; the recovery delay (a recovered Pix's first postback after
its settlement: p50, p99, max) against its bound (the interval, the claim
timer, and the run before and the run that took it, as long as the longest
run); the events per Pix; the day's report; and the work: pages and Pix
the bank listed, per Pix settled. Exit status 0 when every Pix became
exactly one event, the report adds up and the delay kept its bound.
"""
import argparse
import collections
import heapq
import http.client
import http.server
import json
import os
import queue
import random
import re
import signal
import string
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

TICK = 1.0  # how often pixrelay claims the connections that are due
# a shop's day, hour by hour, as shares of its peak
PROFILE = [0.10, 0.06, 0.04, 0.03, 0.03, 0.05, 0.12, 0.25, 0.45, 0.60, 0.72, 0.85,
           1.00, 0.95, 0.80, 0.75, 0.78, 0.82, 0.90, 0.98, 1.00, 0.85, 0.55, 0.25]
ALNUM = string.ascii_letters + string.digits


# ---- the sink, in a process of its own ----

def run_sink(out_path, signing):
    """Answer every POST 200 and write one JSON line per postback: arrival
    time, event id and type, endToEndId, source, and whether its signature
    verifies. Prints its port."""
    from sse import verify
    lock = threading.Lock()
    out = open(out_path, "a", buffering=1)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            at = time.time()
            try:
                j = json.loads(body)
                d = j["data"]
                rec = {"t": at, "id": j["id"], "event": j["event"],
                       "e2e": d["pix"]["endToEndId"],
                       "source": d["pix"]["source"] if j["event"] == "EVENT:CHARGE_PAID"
                       else d["source"],
                       "ok": verify(signing, {k.lower(): v for k, v in self.headers.items()},
                                    body)}
            except (ValueError, KeyError, TypeError):
                rec = {"t": at, "other": body[:200].decode(errors="replace")}
            with lock:
                out.write(json.dumps(rec) + "\n")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "17")
            self.end_headers()
            self.wfile.write(b'{"received":true}')

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256

    srv = Server(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


# ---- the bank's webhook ----

class Webhook:
    """The bank's webhook calls to pixrelay's URL, one Pix a call, each
    lost, doubled or held as drawn when its Pix settled; `threads` calls at
    once on keep-alive connections. answers: {e2e: [(copy, status,
    outcome), ...]}."""

    def __init__(self, port, path, threads, late_seconds):
        self.port, self.path, self.late_seconds = port, path, late_seconds
        self.q = queue.Queue()
        self.held = []  # (when, seq, e2e, body, copy)
        self.cond = threading.Condition()
        self.answers = collections.defaultdict(list)
        self.lock = threading.Lock()
        self.sent = self.lost = self.twice = self.late = 0
        self.stopping = False
        self.seq = 0
        self.threads = [threading.Thread(target=self._work, daemon=True) for _ in range(threads)]
        self.threads.append(threading.Thread(target=self._release, daemon=True))
        for t in self.threads:
            t.start()

    def send(self, e2e, pix, lost, twice, late):
        if lost:
            self.lost += 1
            return
        body = json.dumps({"pix": [pix]}).encode()
        copies = (1, 2) if twice else (1,)
        self.twice += bool(twice)
        if late:
            self.late += 1
            with self.cond:
                for c in copies:
                    self.seq += 1
                    heapq.heappush(self.held, (time.time() + self.late_seconds, self.seq, e2e,
                                               body, c))
                self.cond.notify()
        else:
            for c in copies:
                self.q.put((e2e, body, c))

    def _release(self):
        with self.cond:
            while not self.stopping:
                now = time.time()
                while self.held and self.held[0][0] <= now:
                    _, _, e2e, body, c = heapq.heappop(self.held)
                    self.q.put((e2e, body, c))
                self.cond.wait(0.05)

    def _work(self):
        conn = None
        while True:
            item = self.q.get()
            if item is None:
                return
            e2e, body, copy = item
            status, outcome = None, None
            for _ in range(2):  # a keep-alive connection the server closed: once more
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                    conn.request("POST", self.path, body, {"Content-Type": "application/json"})
                    r = conn.getresponse()
                    data = r.read()
                    status = r.status
                    if status == 200:
                        outcome = json.loads(data)["data"]["pix"][0]["outcome"]
                    break
                except (OSError, http.client.HTTPException, ValueError, KeyError):
                    if conn is not None:
                        conn.close()
                    conn = None
            with self.lock:
                self.sent += 1
                self.answers[e2e].append((copy, status, outcome))
            self.q.task_done()

    def pending(self):
        with self.cond:
            return len(self.held) + self.q.unfinished_tasks

    def close(self):
        with self.cond:
            self.stopping = True
            self.cond.notify()
        for _ in self.threads:
            self.q.put(None)


# ---- the drill ----

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "pixrelay"))
    ap.add_argument("--seconds", type=float, default=120, help="the day, compressed (120)")
    ap.add_argument("--peak", type=float, default=300, help="Pix per second at the peak (300)")
    ap.add_argument("--loss", type=float, default=0.3, help="webhook calls lost (0.3)")
    ap.add_argument("--twice", type=float, default=0.02, help="webhook calls sent twice (0.02)")
    ap.add_argument("--late", type=float, default=0.02, help="webhook calls held (0.02)")
    ap.add_argument("--late-seconds", type=float, default=None,
                    help="how long a held call is held (default: 2 intervals)")
    ap.add_argument("--charges", type=float, default=0.3, help="Pix that pay a charge (0.3)")
    ap.add_argument("--no-txid", type=float, default=0.05, help="Pix without txid (0.05)")
    ap.add_argument("--interval", type=int, default=5, help="bank-reconcile-interval (5)")
    ap.add_argument("--processes", type=int, default=1, help="pixrelay processes (1)")
    ap.add_argument("--senders", type=int, default=12, help="webhook calls at once (12)")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--sink", help=argparse.SUPPRESS)
    ap.add_argument("--signing", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.sink:
        return run_sink(a.sink, a.signing)
    os.environ.setdefault("PIXRELAY_BIN", os.path.abspath(a.bin))
    return Drill(a).run()


class Drill:
    def __init__(self, a):
        self.a = a
        self.late_seconds = a.late_seconds if a.late_seconds is not None else 2 * a.interval
        self.rng = random.Random(a.seed)
        self.settled = {}  # e2e -> (horario epoch, kind, cents)
        self.procs = []
        self.sink_proc = None

    def say(self, *args):
        print(*args, flush=True)

    def run(self):
        import harness
        self.h = harness
        self.wd = harness.Workdir()
        try:
            self.start()
            self.day()
            ok = self.figures()
        finally:
            self.stop()
        return 0 if ok else 1

    # ---- setting up ----

    def start(self):
        import certs
        from bankdrill import DrillBank
        h, a = self.h, self.a
        d = os.path.join(self.wd.path, "certs")
        ca = certs.make_ca(d, "merchant-ca", "Loja Example CA")
        self.merchant = certs.make_client(d, ca, "loja", "loja.example")
        secret = "drill-secret-" + "".join(self.rng.choice(ALNUM) for _ in range(24))
        secret_file = os.path.join(d, "secret.txt")
        with open(secret_file, "w") as f:
            f.write(secret)
        os.chmod(secret_file, 0o600)
        self.bank = DrillBank(client_ca=ca.cert, keys=["vendas@loja.example"], client_secret=secret,
                              seed=a.seed).start()
        self.redis = h.Redis(self.wd.path).start()
        key_file = os.path.join(self.wd.path, "credentials.key")
        self.config = ["--credentials-key-file", key_file]
        args = self.config + ["--bank-reconcile-interval", str(a.interval)]
        self.px = [h.Pixrelay(self.wd.path, self.redis, args=args, name="px%d" % i).start()
                   for i in range(a.processes)]
        for p in self.px:
            p.wait_ready()
        px = self.px[0]
        h.init_platforms(px)
        self.key = px.create_key("sandbox")["key"]
        signing = json.loads(px.cli("secrets", "--env", "sandbox", "--json").stdout)[
            "signingSecret"]
        self.sink_out = os.path.join(self.wd.path, "sink.jsonl")
        self.sink_proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--sink",
                                           self.sink_out, "--signing", signing],
                                          stdout=subprocess.PIPE, text=True)
        sink_port = int(self.sink_proc.stdout.readline())
        px.cli("account", "set", "--env", "sandbox", "--postback-url",
               "http://127.0.0.1:%d/postbacks" % sink_port)
        out = px.cli(*self.config, "bank", "connect", "--env", "sandbox", "--chave", self.bank.key,
                     "--url-token", "--api-url", self.bank.url, "--token-url",
                     self.bank.token_url, "--client-id", self.bank.client_id,
                     "--client-secret-file", secret_file, "--cert", self.merchant.cert, "--key",
                     self.merchant.key, "--bank-ca", self.bank.server_ca, "--json").stdout
        self.conn = json.loads(out)
        # (each process takes the credentials key when a call first needs it)
        u = urllib.parse.urlsplit(self.conn["webhookUrl"] + "/pix")
        # every process's URL is the same webhook; the first one takes the calls
        self.hook = Webhook(px.port, u.path + "?" + u.query, a.senders, self.late_seconds)
        self.expected = int(sum(PROFILE) / len(PROFILE) * a.peak * a.seconds)
        self.charges = self.make_charges(int(self.expected * a.charges * 1.1) + 10)

    def make_charges(self, n):
        """n charges created at the bank through pixrelay, before the day."""
        self.say("making %d charges at the bank through pixrelay..." % n)
        out, lock, t0 = [], threading.Lock(), time.time()
        todo = queue.Queue()
        for i in range(n):
            todo.put(100 + self.rng.randrange(50000))

        def worker():
            while True:
                try:
                    cents = todo.get_nowait()
                except queue.Empty:
                    return
                r = self.px[0].request("POST", "/v1/charge/pix/create", body={"amount": cents},
                                       headers={"Authorization": "Bearer " + self.key})
                if r.status == 200:
                    with lock:
                        out.append(r.json["data"])
        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.say("  %d made in %.1f s" % (len(out), time.time() - t0))
        return out

    def stop(self):
        if getattr(self, "hook", None):
            self.hook.close()
        if self.sink_proc:
            self.sink_proc.terminate()
            self.sink_proc.wait(10)
        for p in getattr(self, "px", []):
            p.stop()
        if getattr(self, "redis", None):
            self.redis.stop()
        if getattr(self, "bank", None):
            self.bank.close()
        if self.a.keep:
            self.say("work directory kept: %s" % self.wd.path)
        else:
            self.wd.cleanup()

    # ---- the day ----

    def settle_one(self):
        from bankdrill import epoch
        a, rng, bank = self.a, self.rng, self.bank
        lost, twice, late = rng.random() < a.loss, rng.random() < a.twice, rng.random() < a.late
        draw = rng.random()
        if draw < a.charges and self.charges:
            ch = self.charges.pop()
            pix = bank.pay(ch["id"])
            kind = "charge"
        elif draw < a.charges + a.no_txid:
            pix = bank.pay_key("%d.%02d" % divmod(100 + rng.randrange(20000), 100))
            kind = "no txid"
        else:
            txid = "QR" + "".join(rng.choice(ALNUM) for _ in range(20))
            pix = bank.pay_key("%d.%02d" % divmod(100 + rng.randrange(20000), 100), txid=txid)
            kind = "static QR"
        cents = int(pix["valor"].replace(".", ""))
        self.settled[pix["endToEndId"]] = (epoch(pix["horario"]), kind, cents)
        if kind != "no txid":
            self.hook.send(pix["endToEndId"], pix, lost, twice, late)

    def day(self):
        a = self.a
        hour = a.seconds / 24
        self.say("the day: %.0f s, %.0f Pix/s at the peak, about %d Pix; webhook calls lost "
                 "%.0f %%, twice %.0f %%, held %.0f s %.0f %%; reconciliation every %d s"
                 % (a.seconds, a.peak, self.expected, a.loss * 100, a.twice * 100,
                    self.late_seconds, a.late * 100, a.interval))
        self.t0 = time.time()
        owed, last, step = 0.0, self.t0, 0.01
        next_say = self.t0 + hour * 4
        while True:
            now = time.time()
            t = now - self.t0
            if t >= a.seconds:
                break
            owed += PROFILE[min(23, int(t / hour))] * a.peak * (now - last)
            last = now
            while owed >= 1:
                self.settle_one()
                owed -= 1
            if now >= next_say:
                self.say("  %02d h: %d Pix settled, %d webhook calls sent, %d heard"
                         % (int(t / hour), len(self.settled), self.hook.sent,
                            self.count_heard()))
                next_say += hour * 4
            time.sleep(max(0.0, step - (time.time() - now)))
        self.t_end = time.time()
        self.say("the day is over: %d Pix settled in %.1f s (%.0f/s); waiting for the last"
                 % (len(self.settled), self.t_end - self.t0,
                    len(self.settled) / (self.t_end - self.t0)))
        deadline = time.time() + self.late_seconds + 6 * a.interval + 60
        while time.time() < deadline:
            if self.hook.pending() == 0 and self.count_heard() >= len(self.settled):
                break
            time.sleep(0.5)
        # one reconciliation more, and nothing else comes
        before = self.connection()["lastSuccessAt"]
        self.api("POST", "/v1/bank/connections/%s/reconcile" % self.conn["id"])
        self.h.wait_for(lambda: self.connection()["lastSuccessAt"] != before,
                        timeout=6 * a.interval + 60, what="one more reconciliation")
        time.sleep(2)

    def count_heard(self):
        return len(self.heard()[0])

    def heard(self):
        """({e2e: [record, ...]}, other lines) from the sink's file."""
        by, other = collections.defaultdict(list), []
        if os.path.exists(self.sink_out):
            with open(self.sink_out) as f:
                for line in f:
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue
                    if "e2e" in r:
                        by[r["e2e"]].append(r)
                    else:
                        other.append(r)
        return by, other

    def api(self, method, path):
        r = self.px[0].request(method, path, headers={"Authorization": "Bearer " + self.key})
        if r.status >= 300:
            raise AssertionError("%s %s: %r" % (method, path, r))
        return r.json["data"]

    def connection(self):
        return self.api("GET", "/v1/bank/connections/" + self.conn["id"])["api"]["reconciliation"]

    # ---- the figures ----

    def figures(self):
        from bankdrill import day_reports, days_of, percentile
        a, ok = self.a, True
        by, other = self.heard()
        settled = self.settled
        n = len(settled)
        kinds = collections.Counter(k for _, k, _ in settled.values())
        ids = {e: {r["id"] for r in rs} for e, rs in by.items()}
        per_pix = collections.Counter(len(ids.get(e, ())) for e in settled)
        strangers = set(by) - set(settled)
        unsigned = sum(1 for rs in by.values() for r in rs if not r["ok"])
        deliveries = collections.Counter(len(by.get(e, ())) for e in settled)
        source = {e: {r["source"] for r in rs} for e, rs in by.items()}
        recovered = {e for e in settled if source.get(e) == {"reconciliation"}}
        webhook = {e for e in settled if source.get(e) == {"webhook"}}
        delay = {e: min(r["t"] for r in by[e]) - settled[e][0] for e in settled if e in by}
        rdelays = [delay[e] for e in recovered]
        wdelays = [delay[e] for e in webhook]
        runs = self.bank.runs()
        longest = max((r[1] - r[0] for r in runs), default=0.0)
        bound = a.interval + TICK + 2 * longest + 2.0
        answers = self.hook.answers
        repeats = sum(1 for ans in answers.values() for _, _, o in ans if o == "duplicate")
        not_200 = collections.Counter(s for ans in answers.values() for _, s, _ in ans if s != 200)
        rep = day_reports(self.px[0], self.key, self.conn["id"],
                          days_of(t for t, _, _ in settled.values()))
        metrics = self.metrics()
        listed = sum(r[3] for r in runs)
        pages = sum(r[2] for r in runs)
        calls = collections.Counter("%s %s" % (c.method, re.sub(r"/pix/.*", "/pix/{e2eid}",
                                                                 re.sub(r"/cob/.*", "/cob/{txid}",
                                                                        c.path)))
                                    for c in self.bank.arrivals)

        def row(name, value):
            self.say("| %s | %s |" % (name, value))

        def pct(xs):
            return ("p50 %.2f s, p99 %.2f s, max %.2f s" % (percentile(xs, 50), percentile(xs, 99),
                                                              max(xs))) if xs else "none"

        self.say("")
        self.say("| bank drill | %.0f s day, peak %.0f Pix/s, webhook calls lost %.0f %%, "
                 "interval %d s, %d process(es) |" % (a.seconds, a.peak, a.loss * 100,
                                                      a.interval, a.processes))
        self.say("|---|---|")
        row("Pix settled", "%d (%s) in %.1f s, %.0f/s on average"
            % (n, ", ".join("%d %s" % (v, k) for k, v in sorted(kinds.items())),
               self.t_end - self.t0, n / (self.t_end - self.t0)))
        row("webhook calls", "%d made of %d Pix with a txid: %d lost, %d twice, %d held %.0f s; "
            "answers other than 200: %s" % (self.hook.sent, n - kinds["no txid"], self.hook.lost,
                                            self.hook.twice, self.hook.late, self.late_seconds,
                                            dict(not_200) or "none"))
        row("taken by webhook", "%d; first postback after settlement %s" % (len(webhook),
                                                                           pct(wdelays)))
        row("recovered by reconciliation", "%d (%.1f %%)" % (len(recovered),
                                                            100.0 * len(recovered) / max(1, n)))
        row("**recovery delay**", "%s; bound %.1f s (interval %d + claim %.0f + 2 x longest run "
            "%.2f + 2 delivery)" % (pct(rdelays), bound, a.interval, TICK, longest))
        row("**events per Pix**", "%s; deliveries per Pix %s; events of no Pix settled %d, "
            "unsigned %d, other postbacks %d"
            % (", ".join("%d: %d Pix" % kv for kv in sorted(per_pix.items())),
               ", ".join("%d: %d" % kv for kv in sorted(deliveries.items())), len(strangers),
               unsigned, len(other)))
        row("the day's report", "received %d = byWebhook %d + recovered %d; duplicates %d "
            "(webhook repeats answered duplicate: %d); recoveredEndToEndIds %d listed"
            % (rep["pix"]["received"], rep["pix"]["byWebhook"], rep["pix"]["recovered"],
               rep["pix"]["duplicates"], repeats, len(rep["recoveredEndToEndIds"])))
        row("reconciliation runs", "%d, %d pages, %d Pix listed; a run %.2f s on average, "
            "%.2f s at most" % (len(runs), pages, listed,
                                sum(r[1] - r[0] for r in runs) / max(1, len(runs)), longest))
        row("**work per Pix settled**", "%.1f Pix listed, %.3f pages, %.2f webhook calls; "
            "bank calls %s" % (listed / max(1, n), pages / max(1, n), self.hook.sent / max(1, n),
                               dict(calls)))
        row("pixrelay_bank_pix_total", ", ".join("%s %s %d" % (s, o, v)
                                                 for (s, o), v in sorted(metrics.items())))
        # the verdict
        checks = [
            ("every Pix settled became exactly one event", per_pix == {1: n}),
            ("no event of a Pix the bank did not settle, every postback signed",
             not strangers and not unsigned),
            ("the report: received = settled = byWebhook + recovered",
             rep["pix"]["received"] == n == rep["pix"]["byWebhook"] + rep["pix"]["recovered"]),
            ("the report: recovered = the Pix whose events say reconciliation",
             rep["pix"]["recovered"] == len(recovered)
             and set(rep["recoveredEndToEndIds"]) <= recovered),
            ("the report: duplicates = the webhook's repeats", rep["pix"]["duplicates"] == repeats),
            ("the recovery delay within its bound", not rdelays or max(rdelays) <= bound),
        ]
        self.say("")
        for name, good in checks:
            self.say("%s  %s" % ("ok  " if good else "FAIL", name))
            ok = ok and good
        return ok

    def metrics(self):
        out = {}
        for p in self.px:
            r = p.request("GET", "/metrics")
            for line in r.body.decode().splitlines():
                m = re.match(r'pixrelay_bank_pix_total\{(.*)\} (\S+)$', line)
                if m:
                    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
                    k = (labels.get("source"), labels.get("outcome"))
                    out[k] = out.get(k, 0) + int(float(m.group(2)))
        return out


if __name__ == "__main__":
    sys.exit(main())
