"""HTTP basics, authentication and environments against the real binary."""
import json
import os
import socket
import time
import unittest

from harness import Pixrelay, auth, init_platforms, start_stack, stop_stack, wait_for


class Foundation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls, args=["--trusted-proxies", "10.9.9.9, 127.0.0.1", "--max-body", "2048"])
        init = init_platforms(cls.px)
        cls.sandbox_platform = init["sandbox"]
        cls.production_platform = init["production"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.live = cls.px.create_key("production")["key"]
        cls.master = cls.px.create_key("sandbox", master=True)["key"]

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def test_healthz_and_readyz(self):
        r = self.px.request("GET", "/healthz")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json, {"status": "ok"})
        r = self.px.request("GET", "/readyz")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json["ready"], True)
        self.assertEqual(r.json["redis"], "ok")

    def test_every_script_is_loaded_under_its_sha1(self):
        import glob
        import hashlib
        import sys
        top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
        sys.path.insert(0, os.path.join(top, "tools"))
        from embed_scripts import expand  # the body Redis gets, shared functions included
        lua = sorted(glob.glob(os.path.join(top, "src/store/lua/*.lua")))
        self.assertGreater(len(lua), 10)
        shas = [hashlib.sha1(expand(f)).hexdigest() for f in lua]
        self.assertEqual(self.redis.cmd("SCRIPT", "EXISTS", *shas), [1] * len(shas))

    def test_unknown_route_is_404_envelope(self):
        r = self.px.request("GET", "/v1/nothing/here")
        self.assertEqual(r.status, 404)
        self.assertEqual(r.json, {"error": "no such endpoint: GET /v1/nothing/here",
                                  "status": 404, "data": []})
        self.assertTrue(r.header("Content-Type").startswith("application/json"))

    def test_wrong_method_is_405_with_allow(self):
        r = self.px.request("DELETE", "/v1/me", headers=auth(self.key))
        self.assertEqual(r.status, 405)
        self.assertEqual(r.header("Allow"), "GET")
        self.assertEqual(r.json["error"], "method DELETE not allowed on /v1/me; allowed: GET")
        self.assertEqual(r.json["data"], [])

    def test_me_with_account_key(self):
        r = self.px.request("GET", "/v1/me", headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        d = r.json
        self.assertIsNone(d["error"])
        self.assertEqual(d["status"], 200)
        self.assertEqual(d["data"]["environment"], "sandbox")
        self.assertEqual(d["data"]["account"], self.sandbox_platform)
        self.assertEqual(d["data"]["key"]["kind"], "account")

    def test_missing_key_is_401(self):
        r = self.px.request("GET", "/v1/me")
        self.assertEqual(r.status, 401)
        self.assertEqual(r.json, {"error": "missing API key: send the header Authorization: "
                                           "Bearer <API key>", "status": 401, "data": []})
        self.assertEqual(r.header("WWW-Authenticate"), "Bearer")

    def test_malformed_header_is_401(self):
        for h in ["Basic dXNlcjpwYXNz", "Bearer", "Bearer a b", "Token " + self.key]:
            r = self.px.request("GET", "/v1/me", headers={"Authorization": h})
            self.assertEqual(r.status, 401, h)
            self.assertEqual(r.json["error"],
                             "malformed Authorization header: expected Bearer <API key>", h)

    def test_invalid_key_is_401(self):
        forged = self.key[:-4] + ("AAAA" if not self.key.endswith("AAAA") else "BBBB")
        for k in ["nope", "pxr_test_short", forged, "pxr_xxxx_" + self.key[9:]]:
            r = self.px.request("GET", "/v1/me", headers=auth(k))
            self.assertEqual(r.status, 401, k)
            self.assertEqual(r.json, {"error": "invalid API key", "status": 401, "data": []})

    def test_revoked_key_is_401_at_once_for_every_process(self):
        k = self.px.create_key("sandbox", description="to revoke")
        other = Pixrelay(self.wd.path, self.redis, name="second").start()
        try:
            other.wait_ready()
            for p in (self.px, other):
                self.assertEqual(p.request("GET", "/v1/me", headers=auth(k["key"])).status, 200)
            out = self.px.cli("keys", "revoke", k["id"]).stdout
            self.assertIn("revoked", out)
            for p in (self.px, other):
                r = p.request("GET", "/v1/me", headers=auth(k["key"]))
                self.assertEqual(r.status, 401)
                self.assertEqual(r.json["error"], "API key revoked")
            again = self.px.cli("keys", "revoke", k["id"]).stdout
            self.assertIn("already revoked", again)
        finally:
            self.assertEqual(other.stop(), 0)

    def test_a_cached_key_is_never_served_after_its_revocation(self):
        # keys are cached in the process and forgotten when a revocation is
        # announced; while the announcements cannot be heard (its
        # subscription to them was cut), nothing is cached
        k = self.px.create_key("sandbox", description="cached")
        for _ in range(3):
            self.assertEqual(self.px.request("GET", "/v1/me", headers=auth(k["key"])).status, 200)
        self.assertGreaterEqual(self.redis.cmd("CLIENT", "KILL", "TYPE", "pubsub"), 1)
        self.px.cli("keys", "revoke", k["id"])
        r = self.px.request("GET", "/v1/me", headers=auth(k["key"]))
        self.assertEqual((r.status, r.json["error"]), (401, "API key revoked"))
        # the subscription comes back by itself, and with it the cache
        wait_for(lambda: self.redis.cmd("PUBSUB", "NUMSUB", "pixrelay:invalidate")[1] >= 1,
                 what="the cache to listen again")
        k2 = self.px.create_key("sandbox", description="cached again")
        self.assertEqual(self.px.request("GET", "/v1/me", headers=auth(k2["key"])).status, 200)
        self.px.cli("keys", "revoke", k2["id"])
        r = self.px.request("GET", "/v1/me", headers=auth(k2["key"]))
        self.assertEqual((r.status, r.json["error"]), (401, "API key revoked"))

    def test_environment_comes_from_the_key(self):
        r = self.px.request("GET", "/v1/me", headers=auth(self.live))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json["data"]["environment"], "production")
        self.assertEqual(r.json["data"]["account"], self.production_platform)
        self.assertNotEqual(self.production_platform, self.sandbox_platform)

    def test_master_key_acts_for_an_account(self):
        r = self.px.request("GET", "/v1/me", headers=auth(self.master, self.sandbox_platform))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json["data"]["account"], self.sandbox_platform)
        self.assertEqual(r.json["data"]["key"]["kind"], "master")
        # without the header, a master key speaks for the platform account
        r = self.px.request("GET", "/v1/me", headers=auth(self.master))
        self.assertEqual(r.json["data"]["account"], self.sandbox_platform)

    def test_master_key_cannot_reach_the_other_environment(self):
        r = self.px.request("GET", "/v1/me", headers=auth(self.master, self.production_platform))
        self.assertEqual(r.status, 404)
        self.assertEqual(r.json["error"],
                         "account not found: X-Account-ID " + self.production_platform)

    def test_x_account_id_rules(self):
        r = self.px.request("GET", "/v1/me", headers=auth(self.master, "not-a-ulid"))
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json["error"],
                         "X-Account-ID must be an account id (a 26-character ULID)")
        r = self.px.request("GET", "/v1/me", headers=auth(self.master, "01ARZ3NDEKTSV4RRFFQ69G5FAV"))
        self.assertEqual(r.status, 404)
        r = self.px.request("GET", "/v1/me", headers=auth(self.key, "01ARZ3NDEKTSV4RRFFQ69G5FAV"))
        self.assertEqual(r.status, 403)
        self.assertEqual(r.json["error"], "X-Account-ID names another account; only master "
                                          "keys may act on behalf of other accounts")
        r = self.px.request("GET", "/v1/me", headers=auth(self.key, self.sandbox_platform))
        self.assertEqual(r.status, 200)

    def test_body_rules(self):
        r = self.px.request("GET", "/v1/me", headers=dict(auth(self.key), **{"Content-Type": "text/plain"}),
                            raw=b"hello")
        self.assertEqual(r.status, 415)
        self.assertEqual(r.json, {"error": "Content-Type must be application/json",
                                  "status": 415, "data": []})
        r = self.px.request("GET", "/v1/me", headers=dict(auth(self.key), **{"Content-Type": "application/json"}),
                            raw=b"x" * 3000)
        self.assertEqual(r.status, 413)
        self.assertEqual(r.json["error"], "request body too large: 3000 bytes, the limit is 2048")
        r = self.px.request("GET", "/v1/me", headers=dict(auth(self.key), **{"Content-Type": "application/json"}),
                            raw=b"x" * 200000)
        self.assertEqual(r.status, 413)
        self.assertEqual(r.json["error"], "request body too large: 200000 bytes, the limit is 2048")
        # far above every limit the HTTP layer refuses before reading; the service stays up
        try:
            r = self.px.request("POST", "/v1/me", headers={"Content-Type": "application/json"},
                                raw=b"x" * (25 << 20))
            self.assertEqual(r.status, 413)
        except (ConnectionError, OSError):
            pass
        self.assertEqual(self.px.request("GET", "/healthz").status, 200)

    def test_request_id_echoed_or_generated(self):
        r = self.px.request("GET", "/healthz", headers={"X-Request-Id": "abc-123"})
        self.assertEqual(r.header("X-Request-Id"), "abc-123")
        r = self.px.request("GET", "/healthz", headers={"X-Request-Id": "bad id\x7f"})
        self.assertEqual(len(r.header("X-Request-Id")), 26)
        r = self.px.request("GET", "/healthz")
        self.assertEqual(len(r.header("X-Request-Id")), 26)
        self.assertIn("request_id=" + r.header("X-Request-Id"),
                      wait_for(lambda: r.header("X-Request-Id") in self.px.log() and self.px.log()))

    def test_forwarded_for_believed_only_from_trusted_proxies(self):
        self.px.request("GET", "/healthz", headers={"X-Forwarded-For": "198.51.100.7, 10.9.9.9",
                                                     "X-Request-Id": "xff-trusted"})
        line = wait_for(lambda: [l for l in self.px.log().splitlines() if "xff-trusted" in l])[0]
        self.assertIn("client=198.51.100.7", line)

    def test_secrets_never_reach_the_log(self):
        self.px.request("GET", "/v1/me", headers=auth(self.key))
        self.px.request("GET", "/v1/me", headers=auth(self.master))
        log = self.px.log()
        for secret in (self.key, self.live, self.master):
            self.assertNotIn(secret, log)
            self.assertNotIn(secret[9:], log)

    def test_keys_are_stored_hashed(self):
        dump = self.redis.cmd("KEYS", "*")
        for k in dump:
            self.assertNotIn(self.key[9:], k)
            t = self.redis.cmd("TYPE", k)
            if t == "hash":
                vals = self.redis.cmd("HGETALL", k)
                self.assertFalse(any(self.key[9:] in (v or "") for v in vals))
        keys = json.loads(self.px.cli("keys", "list", "--json").stdout)
        self.assertTrue(all(self.key not in json.dumps(k) for k in keys))
        self.assertTrue(any(k["hint"] == self.key[:13] + "..." for k in keys))

    def test_slow_client_is_cut_off(self):
        p = Pixrelay(self.wd.path, self.redis, args=["--http-timeout", "1"], name="slow").start()
        try:
            s = socket.create_connection(("127.0.0.1", p.port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finishes its headers
            s.settimeout(5)
            t0 = time.time()
            data = s.recv(100)  # the server closes the connection
            self.assertLess(time.time() - t0, 4.5)
            self.assertIn(data[:12], (b"", b"HTTP/1.1 408"))
            s.close()
            self.assertEqual(p.request("GET", "/healthz").status, 200)
        finally:
            self.assertEqual(p.stop(), 0)

    def test_connection_count_is_bounded(self):
        p = Pixrelay(self.wd.path, self.redis, args=["--max-connections", "2"], name="few").start()
        conns = []
        try:
            import http.client
            for _ in range(2):
                c = http.client.HTTPConnection("127.0.0.1", p.port, timeout=5)
                c.request("GET", "/healthz")
                self.assertEqual(c.getresponse().read(), b'{"status":"ok"}')
                conns.append(c)
            r = p.request("GET", "/healthz")
            self.assertEqual(r.status, 503)
            self.assertEqual(r.json["error"], "too many connections; retry shortly")
            for c in conns:
                c.close()
            wait_for(lambda: p.request("GET", "/healthz").status == 200, what="a free slot")
            ready = wait_for(lambda: (lambda j: j if j["connections"] <= 1 else None)(
                p.request("GET", "/readyz").json))
            self.assertLessEqual(ready["connections"], 1)
        finally:
            for c in conns:
                c.close()
            self.assertEqual(p.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
