"""Redis going away and coming back, the embedded Redis, signals, the CLI."""
import json
import os
import signal
import subprocess
import threading
import time
import unittest

from harness import BIN, Pixrelay, Redis, Workdir, auth, start_stack, stop_stack, wait_for


class ExternalRedis(unittest.TestCase):
    def setUp(self):
        start_stack(self, args=["--redis-timeout-ms", "500"])
        self.px.cli("init")
        self.key = self.px.create_key("sandbox")["key"]

    def tearDown(self):
        stop_stack(self)

    def test_redis_down_answers_503_then_recovers(self):
        self.assertEqual(self.px.request("GET", "/v1/me", headers=auth(self.key)).status, 200)
        self.redis.stop(signal.SIGKILL)
        r = wait_for(lambda: (lambda r: r if r.status == 503 else None)(
            self.px.request("GET", "/readyz")), what="readyz to report not ready")
        self.assertEqual(r.json["ready"], False)
        self.assertNotEqual(r.json["redis"], "ok")
        r = self.px.request("GET", "/v1/me", headers=auth(self.key))
        self.assertEqual(r.status, 503)
        self.assertEqual(r.json, {"error": "service unavailable: storage is unreachable; "
                                           "retry later", "status": 503, "data": []})
        self.assertEqual(r.header("Retry-After"), "1")
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 500},
                            headers=auth(self.key))
        self.assertEqual(r.status, 503)
        self.assertEqual(self.px.request("GET", "/healthz").status, 200)  # alive all along
        self.redis.start()
        self.px.wait_ready(timeout=15)
        # the key survived: the AOF was fsynced
        self.assertEqual(self.px.request("GET", "/v1/me", headers=auth(self.key)).status, 200)
        self.assertIsNone(self.px.proc.poll())

    def test_stuck_redis_times_out_instead_of_hanging(self):
        os.kill(self.redis.proc.pid, signal.SIGSTOP)
        try:
            t0 = time.time()
            r = self.px.request("GET", "/v1/me", headers=auth(self.key), timeout=10)
            self.assertEqual(r.status, 503)
            self.assertLess(time.time() - t0, 5)
        finally:
            os.kill(self.redis.proc.pid, signal.SIGCONT)
        self.px.wait_ready(timeout=15)
        self.assertEqual(self.px.request("GET", "/v1/me", headers=auth(self.key)).status, 200)

    def test_sigterm_finishes_requests_in_flight(self):
        p2 = Pixrelay(self.wd.path, self.redis, args=["--redis-timeout-ms", "8000"],
                      name="drain").start()
        p2.wait_ready()
        result = {}
        # hold Redis so that a request stays in flight, then ask pixrelay to stop
        os.kill(self.redis.proc.pid, signal.SIGSTOP)
        try:
            t = threading.Thread(target=lambda: result.__setitem__(
                "r", p2.request("GET", "/v1/me", headers=auth(self.key), timeout=15)))
            t.start()
            wait_for(lambda: p2.request("GET", "/readyz").json["inflight"] == 2 or None,
                     what="a request in flight")
            p2.proc.send_signal(signal.SIGTERM)
            wait_for(lambda: "SIGTERM received" in p2.log() or None, what="the signal")
            # no new connections once stopping
            with self.assertRaises(OSError):
                p2.request("GET", "/healthz", timeout=2)
            self.assertIsNone(p2.proc.poll())  # still finishing the request
            os.kill(self.redis.proc.pid, signal.SIGCONT)
            t.join(10)
            self.assertEqual(result["r"].status, 200)
            self.assertEqual(p2.proc.wait(10), 0)
        finally:
            try:
                os.kill(self.redis.proc.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            p2.stop()


class EmbeddedRedis(unittest.TestCase):
    def setUp(self):
        self.wd = Workdir()

    def tearDown(self):
        self.wd.cleanup()

    def test_first_start_prints_a_working_key_and_restarts_keep_data(self):
        px = Pixrelay(self.wd.path).start()
        try:
            px.wait_ready()
            out = wait_for(lambda: "pxr_test_" in px.output() and px.output())
            key = [w for w in out.split() if w.startswith("pxr_test_")][0]
            self.assertIn("whsec_", out)
            r = px.request("GET", "/v1/me", headers=auth(key))
            self.assertEqual(r.status, 200)
            platform = r.json["data"]["account"]
            # hashes with a 1 KB event body keep the compact encoding (docs/configuration.md)
            sock = os.path.join(px.data_dir, "redis.sock")
            cfg = subprocess.run(["redis-cli", "-s", sock, "CONFIG", "GET", "hash-max-listpack-value"],
                                 capture_output=True, text=True, timeout=10).stdout.split()
            self.assertEqual(cfg, ["hash-max-listpack-value", "2048"])
            # the CLI finds the running service's Redis through the data dir
            init = json.loads(px.cli("init", "--json").stdout)
            self.assertEqual(init["sandbox"]["account"], platform)
            self.assertFalse(init["sandbox"]["created"])
            # a second serve on the same data dir is refused
            p = subprocess.run([BIN, "serve", "--data-dir", px.data_dir, "--listen",
                                "127.0.0.1:0"], capture_output=True, text=True, timeout=20)
            self.assertEqual(p.returncode, 1)
            self.assertIn("is in use by another pixrelay serve", p.stderr)
            # the embedded redis-server dies: pixrelay restarts it and recovers
            pid = int(open(os.path.join(px.data_dir, "redis.pid")).read())
            os.kill(pid, signal.SIGKILL)
            wait_for(lambda: px.request("GET", "/readyz").status == 503 or None, 5,
                     what="not ready")
            px.wait_ready(timeout=20)
            self.assertIn("restarting", px.log())
            self.assertEqual(px.request("GET", "/v1/me", headers=auth(key)).status, 200)
        finally:
            self.assertEqual(px.stop(), 0)
        # redis-server stopped with pixrelay
        pid = int(open(os.path.join(px.data_dir, "redis.pid")).read()) if os.path.exists(
            os.path.join(px.data_dir, "redis.pid")) else None
        if pid:
            self.assertRaises(ProcessLookupError, os.kill, pid, 0)
        # second start: no new key printed, the old one still works
        px2 = Pixrelay(self.wd.path, name="pixrelay").start()
        try:
            px2.wait_ready()
            self.assertEqual(px2.output().count("pxr_test_"), out.count("pxr_test_"))
            self.assertEqual(px2.request("GET", "/v1/me", headers=auth(key)).status, 200)
        finally:
            self.assertEqual(px2.stop(), 0)

    def test_a_redis_password_is_never_echoed(self):
        url = "redis://:Sup3rSecretPw@10.0.0.5:6379/x"
        p = subprocess.run([BIN, "--redis", url, "keys", "list"], capture_output=True, text=True,
                           timeout=20)
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot parse the redis setting", p.stderr)
        self.assertNotIn("Sup3rSecretPw", p.stderr + p.stdout)
        p = subprocess.run([BIN, "serve", "--redis", url, "--listen", "127.0.0.1:0"],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(p.returncode, 1)
        self.assertNotIn("Sup3rSecretPw", p.stderr + p.stdout)

    def test_cli_without_a_running_service(self):
        px = Pixrelay(self.wd.path)
        self.assertIn("created", px.cli("init").stdout)
        again = px.cli("init").stdout
        self.assertIn("already there", again)
        k = px.create_key("production", description="ci")
        self.assertTrue(k["key"].startswith("pxr_live_"))
        self.assertEqual(k["env"], "production")
        m = px.create_key("sandbox", master=True)
        self.assertEqual(m["kind"], "master")
        lst = json.loads(px.cli("keys", "list", "--json").stdout)
        self.assertEqual({x["id"] for x in lst}, {k["id"], m["id"]})
        self.assertTrue(all("key" not in x for x in lst))
        p = px.cli("keys", "revoke", "key_nope", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no key key_nope", p.stderr)
        p = px.cli("keys", "create", "--description", "x", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--env sandbox|production is required", p.stderr)
        p = px.cli("keys", "create", "--env", "sandbox", "--account", "01ARZ3NDEKTSV4RRFFQ69G5FAV",
                   check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no account 01ARZ3NDEKTSV4RRFFQ69G5FAV in sandbox", p.stderr)
        for args in (["--help"], ["serve", "--help"], ["init", "--help"], ["keys", "--help"],
                     ["secrets", "--help"], ["account", "--help"], ["events", "--help"],
                     ["tail", "--help"], ["brcode", "--help"]):
            p = px.cli(*args)
            self.assertIn("usage", p.stdout.lower() + p.stderr.lower(), args)
        acct = json.loads(px.cli("account", "show", "--env", "sandbox").stdout)
        self.assertEqual(acct["kind"], "platform")
        self.assertIsNone(acct["postbackUrl"])
        self.assertEqual(acct["balance"], 0)
        px.cli("account", "set", "--env", "sandbox", "--postback-url", "https://shop.example/pix")
        acct = json.loads(px.cli("account", "show", "--env", "sandbox").stdout)
        self.assertEqual(acct["postbackUrl"], "https://shop.example/pix")
        p = px.cli("account", "set", "--env", "sandbox", "--postback-url", "javascript:x", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("must be an absolute http or https URL", p.stderr)
        p = px.cli("account", "show", "--env", "sandbox", "--account", "01ARZ3NDEKTSV4RRFFQ69G5FAV",
                   check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no account 01ARZ3NDEKTSV4RRFFQ69G5FAV in sandbox", p.stderr)
        p = px.cli("frobnicate", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown command 'frobnicate'", p.stderr)
        # no redis-server is left behind by the CLI
        time.sleep(0.2)
        self.assertFalse(os.path.exists(os.path.join(px.data_dir, "redis.pid")) and
                         _alive(int(open(os.path.join(px.data_dir, "redis.pid")).read())))


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


class Layout(unittest.TestCase):
    def test_init_refuses_a_redis_holding_0_1_data(self):
        # 0.1 kept every account of an environment under {sandbox}: this
        # version does not read that layout and says so instead of writing
        # beside it
        wd = Workdir()
        redis = Redis(wd.path).start()
        try:
            redis.cmd("ZADD", "pixrelay:{sandbox}:accounts", "1", "01JCM0K7RXS4V1M8H3Q2N5B6TA")
            p = Pixrelay(wd.path, redis).cli("init", check=False)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("this Redis holds pixrelay 0.1 data (key layout 1), which this "
                          "version does not read", p.stderr)
            self.assertIsNone(redis.cmd("GET", "pixrelay:{meta}:layout"))
            # an empty Redis is marked with this version's layout
            redis.cmd("DEL", "pixrelay:{sandbox}:accounts")
            Pixrelay(wd.path, redis).cli("init")
            self.assertEqual(redis.cmd("GET", "pixrelay:{meta}:layout"), "3")
        finally:
            redis.stop()
            wd.cleanup()

    def test_serve_refuses_a_redis_of_a_layout_it_does_not_read(self):
        # a later version's layout, or 0.1's: `serve` stops at start with the
        # reason instead of writing beside data it cannot read
        wd = Workdir()
        redis = Redis(wd.path).start()
        try:
            for setup, says in (
                    (("SET", "pixrelay:{meta}:layout", "9"),
                     "this Redis holds pixrelay data of key layout 9, which this version "
                     "does not read"),
                    (("ZADD", "pixrelay:{production}:accounts", "1", "01JCM0K7RXS4V1M8H3Q2N5B6TA"),
                     "this Redis holds pixrelay 0.1 data (key layout 1)")):
                redis.cmd("FLUSHALL")
                redis.cmd(*setup)
                px = Pixrelay(wd.path, redis, name="refused")
                with self.assertRaises(Exception) as e:
                    px.start()
                self.assertIn(says, str(e.exception))
                self.assertEqual(px.proc.wait(10), 1)
                self.assertEqual(redis.cmd("KEYS", "*"), [setup[1]])  # nothing written
        finally:
            redis.stop()
            wd.cleanup()


if __name__ == "__main__":
    unittest.main(verbosity=2)
