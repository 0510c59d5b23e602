"""pixrelay listen (live events forwarded to a local URL, signed) and pixrelay trigger."""
import json
import os
import signal
import subprocess
import time
import unittest

from harness import BIN, Pixrelay, auth, connect_bank, start_stack, stop_stack, wait_for
from sink import Sink
from sse import verify


class Listen(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls)
        cls.px.cli("init")
        connect_bank(cls.px)
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.live_key = cls.px.create_key("production")["key"]
        cls.secrets = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)
        cls.sink = Sink().start()

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def base(self, px=None):
        return "http://127.0.0.1:%d/v1" % (px or self.px).port

    def run_cli(self, *args, key=None, env=None):
        e = dict(os.environ)
        e.update(env or {})
        if key is not None:
            e["PIXRELAY_API_KEY"] = key
        return subprocess.run([BIN, "--base-url", self.base()] + list(args), capture_output=True,
                              text=True, env=e, timeout=60)

    def listen(self, *args, base=None, key=None):
        e = dict(os.environ, PIXRELAY_API_KEY=key or self.key)
        out = open(os.path.join(self.wd.path, "listen-%f.out" % time.time()), "w+")
        p = subprocess.Popen([BIN, "--base-url", base or self.base(), "listen"] + list(args),
                             stdout=out, stderr=subprocess.PIPE, text=True, env=e)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait(), out.close()))
        return p, out

    def read(self, out):
        out.seek(0)
        return out.read()

    def wait_connected(self, p):
        line = p.stderr.readline()
        self.assertIn("pixrelay listen: connected to %s/events/stream: account " % self.base(), line)
        return line

    def test_trigger_each_event_forwarded_and_verified(self):
        path = "/hook-%f" % time.time()
        p, out = self.listen("--forward-to", self.sink.url(path))
        self.wait_connected(p)
        made = {}
        for what in ("charge.paid", "charge.expired", "charge.refunded", "charge.failed"):
            r = self.run_cli("trigger", what, "--json", key=self.key)
            self.assertEqual(r.returncode, 0, r.stderr)
            made[what] = json.loads(r.stdout)
        self.assertEqual(made["charge.paid"]["status"], "PAID")
        self.assertEqual(made["charge.expired"]["status"], "EXPIRED")
        self.assertEqual(made["charge.refunded"]["status"], "REFUNDED")
        self.assertEqual(made["charge.failed"], {"charge": made["charge.failed"]["charge"],
                                                 "status": "FAILED", "events": [], "event": None})
        self.assertEqual(len(made["charge.refunded"]["events"]), 2)
        ids = (made["charge.paid"]["events"] + made["charge.expired"]["events"] +
               made["charge.refunded"]["events"])
        got = self.sink.wait_count(4, path=path, timeout=15)
        self.assertEqual([g.header("webhook-id") for g in got], ids)
        types = []
        for g in got:
            self.assertTrue(verify(self.secrets["signingSecret"], {k.lower(): v for k, v in g.header_list},
                                   g.body), "the merchant's Standard Webhooks verification passes")
            self.assertEqual(g.header("Content-Type"), "application/json")
            self.assertTrue(g.header("User-Agent").startswith("pixrelay/"))
            stored = self.px.request("GET", "/v1/events/" + g.header("webhook-id"),
                                     headers=auth(self.key)).json["data"]["payload"]
            self.assertEqual(json.loads(g.body), stored, "the same body as the postback")
            types.append(json.loads(g.body)["event"])
        self.assertEqual(types, ["EVENT:CHARGE_PAID", "EVENT:CHARGE_EXPIRED", "EVENT:CHARGE_PAID",
                                 "EVENT:CHARGE_REFUND"])
        wait_for(lambda: self.read(out).count("-> 200") == 4, what="four lines")
        lines = self.read(out).splitlines()
        for line, eid, t in zip(lines, ids, types):
            self.assertRegex(line, r"^\d{4}-\d\d-\d\dT[\d:.]+Z  %s\s+%s  -> 200 \(\d+ ms\)$" % (t, eid))
        p.send_signal(signal.SIGINT)
        self.assertEqual(p.wait(10), 0)
        self.assertIn("pixrelay listen: 4 events forwarded", p.stderr.read())

    def test_trigger_text_and_refusals(self):
        r = self.run_cli("trigger", "charge.paid", key=self.key)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^charge \w{26} \(1000 cents\) is PAID\nevent evt_\w{26} "
                                   r"\(EVENT:CHARGE_PAID\)\n$")
        r = self.run_cli("trigger", "charge.failed", "--amount", "250", key=self.key)
        self.assertRegex(r.stdout, r"is FAILED\nno event: a FAILED charge is not notified")
        r = self.run_cli("trigger", "charge.paid", key=self.live_key)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr, r"answered 403: simulate-payment works with sandbox keys only")
        r = self.run_cli("trigger", "charge.paid", key="")
        self.assertEqual((r.returncode, r.stderr), (2, "pixrelay trigger: an API key is required: "
                                                       "--api-key KEY or PIXRELAY_API_KEY\n"))
        r = self.run_cli("trigger", "charge.lost", key=self.key)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown event 'charge.lost'", r.stderr)
        r = self.run_cli("trigger", "charge.paid", "--postback-url", "ftp://x", key=self.key)
        self.assertEqual(r.returncode, 2)
        r = self.run_cli("trigger", "charge.paid", "--api-key", "pxr_test_" + "x" * 40, key="")
        self.assertEqual(r.returncode, 1)
        self.assertIn("answered 401: invalid API key", r.stderr)

    def test_trigger_postback_url_gets_the_postback(self):
        path = "/pb-%f" % time.time()
        r = self.run_cli("trigger", "charge.paid", "--postback-url", self.sink.url(path), "--json",
                         key=self.key)
        ev = json.loads(r.stdout)["event"]
        got = self.sink.wait_count(1, path=path, timeout=15)
        self.assertEqual(got[0].header("webhook-id"), ev)

    def test_listen_refusals(self):
        r = self.run_cli("listen", "--forward-to", "http://127.0.0.1:9/x", key="pxr_test_" + "y" * 40)
        self.assertEqual(r.returncode, 1)
        self.assertIn("/v1/events/stream answered 401: invalid API key", r.stderr)
        r = self.run_cli("listen", key=self.key)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--forward-to must be an absolute http or https URL", r.stderr)
        r = self.run_cli("listen", "--forward-to", "http://127.0.0.1:9/x", key="")
        self.assertEqual(r.returncode, 2)
        self.assertIn("an API key is required", r.stderr)
        r = self.run_cli("listen", "--forward-to", "http://127.0.0.1:9/x", "--signing-secret", "!!",
                         key=self.key)
        self.assertEqual(r.returncode, 2)

    def test_resigning_compat_header_and_max_events(self):
        path = "/re-%f" % time.time()
        mine = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWY="
        p, out = self.listen("--forward-to", self.sink.url(path), "--signing-secret", mine,
                             "--signature", "compat-value", "--max-events", "1", "--json")
        self.wait_connected(p)
        r = self.run_cli("trigger", "charge.paid", "--json", key=self.key)
        ev = json.loads(r.stdout)["event"]
        self.assertEqual(p.wait(15), 0, "exits after --max-events")
        g = self.sink.wait_count(1, path=path)[0]
        h = {k.lower(): v for k, v in g.header_list}
        self.assertTrue(verify(mine, h, g.body))
        self.assertFalse(verify(self.secrets["signingSecret"], h, g.body))
        self.assertEqual(h["signature"], "compat-value")
        line = json.loads(self.read(out).splitlines()[0])
        self.assertEqual((line["event"], line["type"], line["status"], line["error"], line["url"]),
                         (ev, "EVENT:CHARGE_PAID", 200, None, self.sink.url(path)))

    def test_a_local_server_that_is_down_is_reported(self):
        p, out = self.listen("--forward-to", "http://127.0.0.1:9/down")
        self.wait_connected(p)
        self.run_cli("trigger", "charge.paid", key=self.key)
        wait_for(lambda: "-> no answer:" in self.read(out), what="a line for the failure")
        self.assertRegex(self.read(out), r"EVENT:CHARGE_PAID\s+evt_\w+  -> no answer: .*onnect")

    def test_reconnects_and_resumes_after_the_server_restarts(self):
        # two processes on one Redis: listen reads from b, which goes away for a while
        b = Pixrelay(self.wd.path, self.redis, name="b").start()
        try:
            b.wait_ready()
            path = "/rs-%f" % time.time()
            p, out = self.listen("--forward-to", self.sink.url(path), base=self.base(b))
            self.assertIn("connected to %s/events/stream" % self.base(b), p.stderr.readline())
            first = json.loads(self.run_cli("trigger", "charge.paid", "--json", key=self.key).stdout)["event"]
            self.sink.wait_count(1, path=path)
            port = b.port
            b.stop()
            self.assertIn("the stream ended", p.stderr.readline())
            # made while listen's server is down: on the other process
            missed = [json.loads(self.run_cli("trigger", "charge.paid", "--json", key=self.key).stdout)["event"]
                      for _ in range(2)]
            b.start(port=port)
            ours = [first] + missed
            wait_for(lambda: all(e in [g.header("webhook-id") for g in self.sink.requests(path=path)]
                                 for e in ours), timeout=30, what="the missed events")
            got = [g.header("webhook-id") for g in self.sink.requests(path=path)]
            # a resume starts a few seconds before the last id: events of other tests made
            # then come too, once; ours in order, each once
            self.assertEqual([e for e in got if e in ours], ours)
            self.assertEqual(len(got), len(set(got)))
            err = ""
            while "connected" not in err:
                err += p.stderr.readline()
            self.assertIn("resuming after " + first, err)
            time.sleep(1)
            got = [g.header("webhook-id") for g in self.sink.requests(path=path)]
            self.assertEqual(len(got), len(set(got)), "nothing twice")
        finally:
            b.stop()

    def test_resumes_across_stream_lifetimes_without_loss_or_repeats(self):
        # a process whose streams end every ~2 s: listen resumes each time with
        # Last-Event-ID, while events keep coming
        b = Pixrelay(self.wd.path, self.redis, args=["--stream-max-lifetime", "2"], name="short").start()
        try:
            b.wait_ready()
            path = "/life-%f" % time.time()
            p, out = self.listen("--forward-to", self.sink.url(path), base=self.base(b))
            self.assertIn("connected to %s/events/stream" % self.base(b), p.stderr.readline())
            ours, t0 = [], time.time()
            while time.time() - t0 < 6.5:
                r = self.run_cli("trigger", "charge.paid", "--json", key=self.key)
                ours.append(json.loads(r.stdout)["event"])
                time.sleep(0.2)
            wait_for(lambda: all(e in [g.header("webhook-id") for g in self.sink.requests(path=path)]
                                 for e in ours), timeout=30, what="every event")
            time.sleep(1)
            got = [g.header("webhook-id") for g in self.sink.requests(path=path)]
            # events of other tests made a few seconds before a resume point may come too
            self.assertEqual([e for e in got if e in ours], ours, "each once, in order")
            self.assertEqual(len(got), len(set(got)), "nothing twice")
            p.send_signal(signal.SIGINT)
            self.assertEqual(p.wait(10), 0)
            err = p.stderr.read()
            ended = ("pixrelay listen: the stream ended (closed by the server: this stream reached "
                     "its lifetime (stream-max-lifetime, 2 s); reconnect with Last-Event-ID to resume)")
            self.assertGreaterEqual(err.count(ended), 2, err)
            self.assertGreaterEqual(err.count(", resuming after evt_"), 2, err)
        finally:
            b.stop()

    def test_revoking_its_key_ends_listen(self):
        k = self.px.create_key("sandbox")
        p, out = self.listen("--forward-to", self.sink.url("/revoked"), key=k["key"])
        self.wait_connected(p)
        self.px.cli("keys", "revoke", k["id"])
        self.assertEqual(p.wait(10), 1)
        err = p.stderr.read()
        self.assertIn("pixrelay listen: the stream ended (closed by the server: the API key of this "
                      "stream was revoked)\n", err)
        self.assertIn("/v1/events/stream answered 401: API key revoked\n", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
