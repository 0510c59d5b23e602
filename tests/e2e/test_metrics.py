"""GET /metrics: the Prometheus text format, checked by promtool (Debian's
prometheus package), with figures that follow what the process did: its
deliveries by destination (postback URL or webhook endpoint), the deliveries
pending and held and the endpoints disabled, per environment, as Redis holds
them at the scrape."""
import http.client
import json
import os
import re
import socket
import subprocess
import unittest

from harness import (BIN, Pixrelay, Redis, Workdir, auth, start_stack, stop_stack,
                     store_account, wait_for)


def value(text, name, **labels):
    """The value of the series `name` with exactly these labels, or None."""
    want = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        if not m or m.group(1) != name:
            continue
        got = ",".join(sorted((m.group(2) or "").split(","))) if m.group(2) else ""
        if got == want:
            return float(m.group(3))
    return None


class Metrics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls, args=["--retry-max-attempts", "1"], sink=True)
        cls.px.cli("init")
        cls.key = cls.px.create_key("sandbox")["key"]

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def scrape(self):
        r = self.px.request("GET", "/metrics")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8")
        return r.body.decode()

    def test_promtool_accepts_the_exposition(self):
        text = self.scrape()
        p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(value(text, "pixrelay_build_info", version=text.split('version="')[1].split('"')[0]), 1)
        self.assertEqual(value(text, "pixrelay_redis_up"), 1)

    def test_deliveries_and_events_are_counted(self):
        before = self.scrape()
        pb = {"env": "sandbox", "destination": "postback"}
        ok = value(before, "pixrelay_deliveries_total", outcome="delivered", **pb) or 0
        dead = value(before, "pixrelay_deliveries_total", outcome="dead", **pb) or 0
        for url in (self.sink.url("/m"), "http://127.0.0.1:1/none"):
            r = self.px.request("POST", "/v1/charge/pix/create",
                                body={"amount": 900, "postbackUrl": url}, headers=auth(self.key))
            self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % r.json["data"]["id"],
                            headers=auth(self.key))
        self.sink.wait_count(1, path="/m")

        def dead_events(t):
            return sum(v for v in (value(t, "pixrelay_events", shard=str(s), state="dead")
                                   for s in range(16)) if v)

        def counted():
            # counted when the attempt ends; in the dead set once recorded in Redis
            t = self.scrape()
            return t if (value(t, "pixrelay_deliveries_total", outcome="delivered", **pb) == ok + 1
                         and value(t, "pixrelay_deliveries_total", outcome="dead", **pb) == dead + 1
                         and dead_events(t) >= 1) else None
        text = wait_for(counted, what="the two attempts counted")
        self.assertGreaterEqual(value(text, "pixrelay_delivery_duration_seconds_count",
                                      outcome="delivered", **pb), 1)
        self.assertIsNotNone(value(text, "pixrelay_delivery_lag_seconds", shard="0"))
        # requests by route pattern (never the path the client sent), Redis round trips
        self.assertGreaterEqual(value(text, "pixrelay_http_requests_total",
                                      route="/v1/charge/pix/{id}/simulate-payment",
                                      method="POST", status="200"), 2)
        self.assertGreaterEqual(value(text, "pixrelay_http_request_duration_seconds_count",
                                      route="/v1/charge/pix/create", method="POST"), 2)
        self.assertGreater(value(text, "pixrelay_redis_command_duration_seconds_count"), 0)
        self.assertEqual(value(text, "pixrelay_redis_reconnects_total"), 0)

    def test_ingest_results_are_counted(self):
        before = value(self.scrape(), "pixrelay_ingest_total", result="relayed") or 0
        secrets = json.loads(self.px.cli("secrets", "--env", "sandbox", "--json").stdout)
        for i in range(3):
            r = self.px.request("POST", "/v1/webhooks/ingest/" + secrets["account"],
                                body={"id": "up-m-%d" % i, "event": "EVENT:CHARGE_PAID",
                                      "data": {"id": "upstream-charge-%d" % i}},
                                headers={"signature": secrets["ingestSecret"]})
            self.assertEqual(r.status, 200, r)
        dup = self.px.request("POST", "/v1/webhooks/ingest/" + secrets["account"],
                              body={"id": "up-m-0", "event": "EVENT:CHARGE_PAID",
                                    "data": {"id": "upstream-charge-0"}},
                              headers={"signature": secrets["ingestSecret"]})
        self.assertEqual(dup.json["data"]["duplicate"], True)
        text = self.scrape()
        self.assertEqual(value(text, "pixrelay_ingest_total", result="relayed"), before + 3)
        self.assertGreaterEqual(value(text, "pixrelay_ingest_total", result="duplicate"), 1)


class EndpointMetrics(unittest.TestCase):
    """Endpoint deliveries counted apart from postbacks, and what Redis holds at
    the scrape per environment: deliveries pending by destination, those held
    for disabled endpoints, the endpoints disabled by pixrelay and by request.
    Retries every second; an endpoint disabled after failing every attempt for
    4 s and 3 in a row (test_endpoints.py's settings)."""

    @classmethod
    def setUpClass(cls):
        start_stack(cls, sink=True, args=[
            "--retry-base-ms", "1000", "--retry-factor-pct", "100",
            "--endpoint-disable-after", "4", "--endpoint-disable-min-failures", "3"])
        cls.px.cli("init")

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def scrape(self):
        r = self.px.request("GET", "/metrics")
        self.assertEqual(r.status, 200)
        text = r.body.decode()
        p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return text

    def endpoint(self, key, url, **fields):
        r = self.px.request("POST", "/v1/webhook-endpoints", body=dict(url=url, **fields),
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["id"]

    def pay(self, key):
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 700},
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % r.json["data"]["id"],
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)

    def test_endpoint_deliveries_pending_held_and_disabled_move(self):
        sb = {"env": "sandbox"}
        ep = dict(sb, destination="endpoint")
        pb = dict(sb, destination="postback")
        t = self.scrape()
        # a fresh Redis: every figure is there, at 0, for both environments
        for env in ("sandbox", "production"):
            for dest in ("postback", "endpoint"):
                self.assertEqual(value(t, "pixrelay_deliveries_pending", env=env,
                                       destination=dest), 0)
            self.assertEqual(value(t, "pixrelay_deliveries_held", env=env), 0)
            for by in ("pixrelay", "request"):
                self.assertEqual(value(t, "pixrelay_endpoints_disabled", env=env, by=by), 0)
        account, key = store_account(self.redis, self.px, "Metricas")
        self.endpoint(key, self.sink.url("/mx/ok"))
        gone = self.endpoint(key, self.sink.url("/mx/gone"))
        self.sink.script("/mx/gone", [410])
        self.endpoint(key, self.sink.url("/mx/paused"), enabled=False)
        # nothing listens on port 1: refused at every attempt, retried every second
        self.endpoint(key, "http://127.0.0.1:1/down")
        t = self.scrape()
        self.assertEqual(value(t, "pixrelay_endpoints_disabled", by="request", **sb), 1)
        self.assertEqual(value(t, "pixrelay_endpoints_disabled", by="pixrelay", **sb), 0)
        self.pay(key)
        self.sink.wait_count(1, path="/mx/ok")
        # the endpoint down waits for its next attempt: pending, at an endpoint
        wait_for(lambda: value(self.scrape(), "pixrelay_deliveries_pending", **ep) == 1,
                 interval=0.1, what="the delivery to the endpoint down pending")
        # 410 disables at once; the endpoint down after 4 s and 3 failures: both
        # disabled by pixrelay, their deliveries held, none pending
        t = wait_for(lambda: (lambda t: t if value(t, "pixrelay_endpoints_disabled", by="pixrelay",
                                                   **sb) == 2 else None)(self.scrape()),
                     timeout=20, interval=0.2, what="two endpoints disabled")
        self.assertEqual(value(t, "pixrelay_deliveries_held", **sb), 2)
        self.assertEqual(value(t, "pixrelay_deliveries_pending", **ep), 0)
        self.assertEqual(value(t, "pixrelay_deliveries_pending", **pb), 0)
        self.assertEqual(value(t, "pixrelay_endpoints_disabled", by="request", **sb), 1)
        self.assertEqual(value(t, "pixrelay_endpoints_disabled", by="pixrelay",
                               env="production"), 0)
        self.assertEqual(value(t, "pixrelay_deliveries_total", outcome="delivered", **ep), 1)
        failed = sum(value(t, "pixrelay_deliveries_total", outcome=o, **ep) or 0
                     for o in ("retry", "dead"))
        self.assertGreaterEqual(failed, 4)  # the 410 and at least 3 refused
        # no postbackUrl: no postback attempt counted
        self.assertIsNone(value(t, "pixrelay_deliveries_total", outcome="delivered", **pb))
        # the 410 endpoint enabled again: its delivery goes, no longer held nor disabled
        r = self.px.request("PATCH", "/v1/webhook-endpoints/" + gone, body={"enabled": True},
                            headers=auth(key))
        self.assertEqual(r.status, 200, r)
        self.sink.wait_count(2, path="/mx/gone")
        t = wait_for(lambda: (lambda t: t if value(t, "pixrelay_deliveries_total",
                                                   outcome="delivered", **ep) == 2
                              else None)(self.scrape()), what="the held delivery delivered")
        self.assertEqual(value(t, "pixrelay_endpoints_disabled", by="pixrelay", **sb), 1)
        self.assertEqual(value(t, "pixrelay_deliveries_held", **sb), 1)


class MetricsListen(unittest.TestCase):
    """metrics-listen: /metrics, /healthz and /readyz on an address of their own,
    and no /metrics on the main listener."""

    def setUp(self):
        self.wd = Workdir()
        self.redis = Redis(self.wd.path).start()

    def tearDown(self):
        self.redis.stop()
        self.wd.cleanup()

    def get(self, port, path):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.getheader("Content-Type"), r.read().decode()
        finally:
            c.close()

    def test_metrics_on_their_own_address_only(self):
        px = Pixrelay(self.wd.path, self.redis, args=["--metrics-listen", "127.0.0.1:0"]).start()
        try:
            px.wait_ready()
            port = int(wait_for(lambda: re.search(r"metrics on \S+ \(port (\d+)\)", px.log()),
                                what="the metrics port").group(1))
            self.assertNotEqual(port, px.port)
            # the public listener no longer has it: for every method, the same
            # answer as a path it never served
            for method in ("GET", "POST", "HEAD"):
                r = px.request(method, "/metrics")
                other = px.request(method, "/nothing-here")
                self.assertEqual((r.status, other.status), (404, 404), method)
                if method != "HEAD":
                    self.assertEqual(r.json, {"error": "no such endpoint: %s /metrics" % method,
                                              "status": 404, "data": []})
                    self.assertEqual(set(r.json), set(other.json))
                self.assertIsNone(r.header("Allow"))
            self.assertEqual(px.request("GET", "/v1/me").status, 401)
            # the metrics listener: the exposition, probes, and nothing of the API
            status, ctype, text = self.get(port, "/metrics")
            self.assertEqual(status, 200)
            self.assertEqual(ctype, "text/plain; version=0.0.4; charset=utf-8")
            p = subprocess.run(["promtool", "check", "metrics"], input=text,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            # the requests of the main listener are what it counts
            self.assertEqual(value(text, "pixrelay_http_requests_total", route="/v1/me",
                                   method="GET", status="401"), 1)
            self.assertIsNone(value(text, "pixrelay_http_requests_total", route="/metrics",
                                    method="GET", status="404"))
            self.assertEqual(self.get(port, "/healthz")[0], 200)
            self.assertEqual(self.get(port, "/readyz")[0], 200)
            status, _, body = self.get(port, "/v1/me")
            self.assertEqual(status, 404)
            self.assertIn("no such endpoint", body)
        finally:
            self.assertEqual(px.stop(), 0)

    def test_a_bad_metrics_address_is_refused_before_anything_starts(self):
        p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--redis", self.redis.url,
                            "--metrics-listen", "127.0.0.1:99999"],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 2)
        self.assertIn("pixrelay: metrics-listen: expected host:port", p.stderr)
        # the same address as listen: refused before anything is created
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        data = os.path.join(self.wd.path, "same-data")
        p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:%d" % port, "--data-dir", data,
                            "--metrics-listen", "127.0.0.1:%d" % port],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 1)
        self.assertIn("pixrelay: metrics-listen: cannot listen on 127.0.0.1:%d: Address already "
                      "in use" % port, p.stderr)
        self.assertFalse(os.path.exists(data))


if __name__ == "__main__":
    unittest.main(verbosity=2)
