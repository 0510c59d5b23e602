"""deploy/nginx.conf as shipped, run by real nginx in front of two real
pixrelay processes that share one real redis-server.

The file under test is deploy/nginx.conf itself. Only its lines marked
"site:" (pid file, logs, listen address, certificate, the two upstream
servers) are replaced, textually, each of which must be found exactly once;
temporary-file paths are added at the top of the http block so that nginx
writes nothing outside the test's directory. Everything else (the upstream
policy, the request-id map, the headers sent to pixrelay, the rate limit, the
JSON error pages) runs as shipped. nginx runs as a child process on the
loopback with a self-signed certificate made by deploy/nginx-selfcert.sh; as
root its workers drop to www-data as the file says, otherwise it runs as the
calling user.

The client connects from 127.0.0.2 (the whole of 127.0.0.0/8 is the
loopback), while pixrelay trusts only 127.0.0.1, nginx's own address: so
pixrelay's log shows 127.0.0.2 only if nginx passed it in X-Forwarded-For.
"""
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time
import unittest

import nginxstack
from nginxstack import NamedHTTPS, Response, envelope, send

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Workdir, auth, read_to_eof, wait_for  # noqa: E402

CURL = shutil.which("curl")
PUBLIC = "pay.example.test"
CLIENT = "127.0.0.2"
BURSTER = "127.0.0.3"
RID_RE = re.compile(r"^[0-9a-f]{32}$")  # nginx's $request_id


class PublicHTTPS(NamedHTTPS):
    """HTTPS to nginx's loopback address, verifying the certificate for the
    public name (as a client that resolved pay.example.test would)."""

    def __init__(self, host, port, **kwargs):
        super().__init__(host, port, PUBLIC, **kwargs)


class NginxInFront(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        base = "https://%s/v1" % PUBLIC
        nginxstack.start(cls, Workdir(), PUBLIC,
                         args=["--base-url", base, "--trusted-proxies", "127.0.0.1"])
        try:
            cls.px[0].cli("init", "--env", "sandbox")
            cls.key = cls.px[0].create_key("sandbox")["key"]
        except BaseException:
            nginxstack.stop(cls)
            raise

    @classmethod
    def tearDownClass(cls):
        nginxstack.stop(cls)

    # ---- helpers ----

    def access_log(self):
        with open(os.path.join(self.ngx, "access.log"), errors="replace") as f:
            return f.read()

    def context(self):
        ctx = ssl.create_default_context(cafile=self.cert)
        return ctx

    def conn(self, source=CLIENT):
        return PublicHTTPS("127.0.0.1", self.port, source_address=(source, 0),
                           context=self.context(), timeout=15)

    def request(self, method, path, body=None, headers=None, source=CLIENT, conn=None):
        return send(conn or self.conn(source), method, path, PUBLIC, body, headers,
                    close=conn is None)

    def pixrelay_lines(self, request_id):
        """pixrelay's request log lines carrying this request id, from both."""
        found = []
        for p in self.px:
            for line in p.log().splitlines():
                if " request " in line and ("request_id=%s " % request_id) in line:
                    found.append((p, line))
        return found

    def one_pixrelay_line(self, request_id):
        return wait_for(lambda: len(self.pixrelay_lines(request_id)) == 1 and
                        self.pixrelay_lines(request_id)[0],
                        what="one pixrelay log line for request %s" % request_id)

    # ---- the file itself ----

    def test_configuration_passes_nginx_t(self):
        p = subprocess.run(self.nginx_cmd + ["-t"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("test is successful", p.stderr)

    def test_tls_with_the_certificate_and_not_without(self):
        r = self.request("GET", "/healthz")
        self.assertEqual(r.status, 200)
        c = PublicHTTPS("127.0.0.1", self.port, source_address=(CLIENT, 0),
                        context=ssl.create_default_context(), timeout=15)
        with self.assertRaises(ssl.SSLCertVerificationError):
            c.request("GET", "/healthz", headers={"Host": PUBLIC})
        c.close()
        # HSTS on every answer, the proxy's own ones included
        self.assertEqual(r.header("Strict-Transport-Security"), "max-age=31536000")

    # ---- what goes through ----

    def test_healthz_reachable_through_nginx(self):
        r = self.request("GET", "/healthz")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json, {"status": "ok"})

    def test_readyz_only_from_the_machine_itself(self):
        r = self.request("GET", "/readyz", source=CLIENT)
        self.assertEqual(r.status, 403)
        self.assertEqual(r.json, envelope(
            403, "forbidden: this path is only served to the local machine"))
        self.assertTrue(r.header("Content-Type").startswith("application/json"), r.headers)
        r = self.request("GET", "/readyz", source="127.0.0.1")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json["ready"], True)

    def test_public_base_url_in_brcode_image_url_and_the_qr_through_nginx(self):
        # a hostile Host and X-Forwarded-Proto change nothing: the URL comes
        # from --base-url only
        r = self.request("POST", "/v1/charge/pix/create",
                         body={"amount": 1990, "comment": "through nginx"},
                         headers=dict(auth(self.key), **{"X-Forwarded-Proto": "http",
                                                         "X-Forwarded-Host": "evil.example"}))
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        url = d["brCodeImageUrl"]
        self.assertEqual(url, "https://%s/v1/qrcode/%s" % (PUBLIC, d["id"]))
        # fetch that very URL as a browser would, pay.example.test:443 being nginx
        if not CURL:
            self.fail("curl is not installed (bash deploy/install-deps.sh --test)")
        out = os.path.join(self.wd.path, "qr.png")
        p = subprocess.run([CURL, "-sS", "--cacert", self.cert, "--interface", CLIENT,
                            "--connect-to", "%s:443:127.0.0.1:%d" % (PUBLIC, self.port),
                            "-o", out, "-w", "%{http_code} %{content_type}", url],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "200 image/png")
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_client_address_reaches_pixrelay_and_a_claimed_one_does_not(self):
        rid = "xff-check-%d" % time.time_ns()
        r = self.request("GET", "/v1/me", headers=dict(auth(self.key), **{
            "X-Request-Id": rid, "X-Forwarded-For": "203.0.113.9"}))
        self.assertEqual(r.status, 200, r)
        _, line = self.one_pixrelay_line(rid)
        self.assertRegex(line, r" client=127\.0\.0\.2$")
        self.assertNotIn("203.0.113.9", line)

    def test_request_id_kept_when_valid(self):
        rid = "shop-42:order.7_a-%d" % time.time_ns()
        r = self.request("GET", "/v1/me", headers=dict(auth(self.key), **{"X-Request-Id": rid}))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("X-Request-Id"), rid)
        self.one_pixrelay_line(rid)
        # nginx logs the same id
        wait_for(lambda: ("request_id=%s " % rid) in self.access_log(),
                 what="nginx access log line")

    def test_request_id_made_by_nginx_when_missing_or_invalid(self):
        for sent in (None, "has space", "x" * 65, "emoji-\u00e9"):
            headers = auth(self.key)
            if sent is not None:
                headers["X-Request-Id"] = sent.encode("utf-8").decode("latin-1")
            r = self.request("GET", "/v1/me", headers=headers)
            self.assertEqual(r.status, 200, r)
            rid = r.header("X-Request-Id")
            self.assertRegex(rid, RID_RE, "sent %r" % sent)
            self.one_pixrelay_line(rid)

    def test_requests_are_spread_over_both_processes(self):
        ids = ["lb-%d-%d" % (i, time.time_ns()) for i in range(20)]
        c = self.conn()
        try:
            for rid in ids:
                r = self.request("GET", "/v1/me", conn=c,
                                 headers=dict(auth(self.key), **{"X-Request-Id": rid}))
                self.assertEqual(r.status, 200, r)
        finally:
            c.close()
        served = {}
        for rid in ids:
            p, _ = self.one_pixrelay_line(rid)
            served[p.log_path] = served.get(p.log_path, 0) + 1
        self.assertEqual(len(served), 2, "only one process was used: %r" % served)
        self.assertEqual(sum(served.values()), 20)

    # ---- what nginx refuses itself: the JSON envelope ----

    def test_burst_gets_429_envelope_with_retry_after_per_client(self):
        c = self.conn(BURSTER)
        limited = None
        sent = 0
        try:
            # 50 a second with bursts of 100: 400 requests in a row cannot
            # all pass unless they take 6 seconds (a generous liveness bound)
            while sent < 400 and limited is None:
                r = self.request("GET", "/v1/qrcode/none", conn=c)
                sent += 1
                if r.status == 429:
                    limited = r
                else:
                    self.assertEqual(r.status, 404, r)
        finally:
            c.close()
        self.assertIsNotNone(limited, "no 429 after %d requests" % sent)
        self.assertGreater(sent, 100)  # the burst passes
        self.assertEqual(limited.json, envelope(
            429, "too many requests: at most 50 a second from one address; "
                 "retry after the Retry-After seconds"))
        self.assertEqual(limited.header("Retry-After"), "1")
        self.assertTrue(limited.header("Content-Type").startswith("application/json"))
        self.assertRegex(limited.header("X-Request-Id"), RID_RE)
        # another client is not limited
        r = self.request("GET", "/healthz", source=CLIENT)
        self.assertEqual(r.status, 200)
        r = self.request("GET", "/v1/qrcode/none", source=CLIENT)
        self.assertEqual(r.status, 404)
        self.assertEqual(r.json, envelope(404, "QR code not found: none"))

    def test_body_over_the_proxy_limit_gets_413_envelope(self):
        c = self.conn()
        try:
            c.putrequest("POST", "/v1/charge/pix/create", skip_host=True)
            c.putheader("Host", PUBLIC)
            c.putheader("Content-Type", "application/json")
            c.putheader("Content-Length", str(18 * 1024 * 1024))
            c.endheaders()
            r = Response(c.getresponse())
        finally:
            c.close()
        self.assertEqual(r.status, 413)
        self.assertEqual(r.json, envelope(
            413, "request body too large: at most 17 MiB reach the service"))

    def test_malformed_request_gets_400_envelope(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10,
                                     source_address=(CLIENT, 0))
        tls = self.context().wrap_socket(s, server_hostname=PUBLIC)
        try:
            tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: " + PUBLIC.encode() +
                        b"\r\nContent-Length: nope\r\n\r\n")
            data = read_to_eof(tls)
        finally:
            tls.close()
        head, _, body = data.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 400 "), head)
        self.assertEqual(json.loads(body), envelope(400, "bad request: the proxy could not "
                                                         "parse it"))

    # Last (unittest runs tests in name order): stops the processes.
    def test_zz_one_process_down_then_both(self):
        self.px[1].stop()
        for i in range(6):
            r = self.request("GET", "/v1/me", headers=auth(self.key))
            self.assertEqual(r.status, 200, "request %d with one process down: %r" % (i, r))
        self.px[0].stop()
        r = self.request("GET", "/v1/me", headers=auth(self.key))
        self.assertEqual(r.status, 502, r)
        self.assertEqual(r.json, envelope(502, "bad gateway: no pixrelay process answered; "
                                               "retry later"))
        self.assertEqual(r.header("Retry-After"), "5")
        self.assertRegex(r.header("X-Request-Id"), RID_RE)


if __name__ == "__main__":
    unittest.main(verbosity=2)
