"""The command line as a user meets it: settings shared with serve, --json, events
show for people, bulk replay with filters, tail and who dispatches."""
import json
import os
import re
import signal
import subprocess
import time
import unittest

from harness import BIN, Pixrelay, Redis, Workdir, auth, start_stack, stop_stack, wait_for


class EventsCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls, args=["--retry-max-attempts", "1"])
        cls.px.cli("init")
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.dead, cls.ok = [], []
        for url in ["http://127.0.0.1:1/x"] * 3 + [None]:
            body = {"amount": 700}
            if url:
                body["postbackUrl"] = url
            cid = cls.px.request("POST", "/v1/charge/pix/create", body=body, headers=auth(cls.key)).json["data"]["id"]
            r = cls.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid, headers=auth(cls.key))
            (cls.dead if url else cls.ok).append(r.header("X-Event-Id"))
        wait_for(lambda: all(cls.state(e) == "dead" for e in cls.dead), what="three dead events")

    @classmethod
    def state(cls, eid):
        return cls.px.request("GET", "/v1/events/" + eid, headers=auth(cls.key)).json["data"]["state"]

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def test_show_is_for_people_and_json_on_request(self):
        p = self.px.cli("events", "show", self.dead[0])
        self.assertRegex(p.stdout, r"^event %s  EVENT:CHARGE_PAID  dead\n  destination   http://127.0.0.1:1/x\n"
                         % self.dead[0])
        self.assertRegex(p.stdout, r"\n  attempts      \d+\n")
        self.assertRegex(p.stdout, r"\nattempts:\n  #1   \S+  dead      no answer  \d+ ms  .*onnect")
        self.assertIn('\npayload:\n{\n    "id": "%s",' % self.dead[0], p.stdout)
        j = json.loads(self.px.cli("events", "show", self.dead[0], "--json").stdout)
        self.assertEqual((j["id"], j["type"]), (self.dead[0], "EVENT:CHARGE_PAID"))
        self.assertEqual(len(j["attemptLog"]), j["attempts"])
        p = self.px.cli("events", "show", "evt_01M83JDVGVF74826K0GFA3YN0C", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, r"no event evt_01M83JDVGVF74826K0GFA3YN0C for account \w+ \(sandbox\)")

    def test_a_command_is_quiet_unless_asked(self):
        # nothing on standard error when all is well, --json or not; the
        # Redis client's lines with --verbose (or log-level)
        for args in (["events", "list", "--json"], ["events", "list"], ["keys", "list", "--env", "sandbox"],
                     ["bank", "list", "--env", "sandbox", "--json"]):
            p = self.px.cli(*args)
            self.assertEqual(p.stderr, "", args)
        p = self.px.cli("events", "list", "--json", "--verbose")
        self.assertRegex(p.stderr, r" info redis \S+ connected\n")
        self.assertEqual(json.loads(p.stdout), json.loads(self.px.cli("events", "list", "--json").stdout))
        p = self.px.cli("--log-level", "info", "bank", "list", "--env", "sandbox")
        self.assertRegex(p.stderr, r" info redis ready\n")
        # what went wrong is still said
        p = self.px.cli("events", "show", "evt_01M83JDVGVF74826K0GFA3YN0C", "--json", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, r"^pixrelay events show: no event")

    def test_replay_one_with_json(self):
        e = self.dead[2]
        wait_for(lambda: self.state(e) == "dead", what="dead")
        p = self.px.cli("events", "replay", e, "--json")
        self.assertEqual(json.loads(p.stdout), {"id": e, "requeued": True})
        p = self.px.cli("events", "replay", e)
        self.assertRegex(p.stdout, r"^%s (queued for delivery again|is already waiting or in flight)\n$" % e)
        wait_for(lambda: self.state(e) == "dead", what="dead again")

    def test_bulk_replay_with_filters(self):
        p = self.px.cli("events", "replay", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("EVENT_ID, or a filter (--state, --type, --since, --until) for a bulk replay", p.stderr)
        p = self.px.cli("events", "replay", "--state", "dead", "--since", "1h", "--type",
                        "EVENT:CHARGE_REFUND", "--json")
        self.assertEqual(json.loads(p.stdout), {"matched": 0, "requeued": 0, "alreadyWaiting": 0})
        p = self.px.cli("events", "replay", "--state", "dead", "--until", "2020-01-01 00:00:00", "--json")
        self.assertEqual(json.loads(p.stdout)["matched"], 0)
        p = self.px.cli("events", "replay", "--since", "xyz", check=False)
        self.assertEqual(p.returncode, 2)
        p = self.px.cli("events", "replay", "--state", "dead", "--since", "1h", "--limit", "2")
        self.assertEqual(p.stdout, "2 dead events matched; 2 queued for delivery again, 0 already "
                                   "waiting or in flight\n")
        wait_for(lambda: sum(self.state(e) == "dead" for e in self.dead) == 3, what="dead again")
        p = self.px.cli("events", "replay", "--state", "dead", "--since", "1h", "--json")
        self.assertEqual(json.loads(p.stdout), {"matched": 3, "requeued": 3, "alreadyWaiting": 0})
        wait_for(lambda: all(self.state(e) == "dead" for e in self.dead), what="dead again")
        p = self.px.cli("events", "list", "--state", "dead", "--json")
        self.assertEqual(sorted(e["id"] for e in json.loads(p.stdout)), sorted(self.dead))
        for e in self.dead:
            log = json.loads(self.px.cli("events", "show", e, "--json").stdout)["attemptLog"]
            self.assertGreaterEqual(len(log), 2)


class ServeSettings(unittest.TestCase):
    """Commands find what a running serve uses; tail says who dispatches."""

    def setUp(self):
        self.wd = Workdir()
        self.addCleanup(self.wd.cleanup)

    def test_secrets_prints_the_base_url_of_the_running_serve(self):
        px = Pixrelay(self.wd.path).start()  # embedded Redis, port chosen at start
        self.addCleanup(px.stop)
        px.wait_ready()
        time.sleep(0.5)  # its first heartbeat
        p = px.cli("secrets", "--env", "sandbox")
        self.assertRegex(p.stdout, r"ingest secret \(for http://127\.0\.0\.1:%d/v1/webhooks/ingest/\w+\)"
                         % px.port)
        j = json.loads(px.cli("secrets", "--env", "sandbox", "--json").stdout)
        self.assertTrue(j["ingestUrl"].startswith("http://127.0.0.1:%d/v1/webhooks/ingest/" % px.port))
        # a base-url that is given wins
        p = px.cli("--base-url", "https://pix.example/v1", "secrets", "--env", "sandbox")
        self.assertIn("(for https://pix.example/v1/webhooks/ingest/", p.stdout)
        # the action after the options rotates: it never shows instead
        before = j["signingSecret"]
        r = json.loads(px.cli("secrets", "--env", "sandbox", "rotate", "--json").stdout)
        self.assertNotEqual(r["signingSecret"], before)
        self.assertEqual(json.loads(px.cli("secrets", "--env", "sandbox", "--json").stdout)
                         ["signingSecret"], r["signingSecret"])
        for args, extra in [(("secrets", "rotate", "--env", "sandbox", "now"), "rotate: unexpected argument 'now'"),
                            (("secrets", "--env", "sandbox", "rotate", "now"), "unexpected argument 'now'")]:
            p = px.cli(*args, check=False)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn("pixrelay secrets" + (" " if extra.startswith("rotate") else ": ") + extra,
                          p.stderr)

    def tail(self, px):
        p = subprocess.Popen([BIN] + px.common_args() + ["tail"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        return p

    def test_tail_says_who_dispatches_and_exits_when_the_server_goes(self):
        redis = Redis(self.wd.path).start()
        self.addCleanup(redis.stop)
        api = Pixrelay(self.wd.path, redis, args=["--dispatch", "0"], name="api").start()
        self.addCleanup(api.stop)
        api.wait_ready()
        t = self.tail(api)
        self.assertEqual(t.stderr.readline(), "pixrelay tail: watching postback deliveries (Ctrl-C to stop)\n")
        self.assertEqual(t.stderr.readline(),
                         "pixrelay tail: no process is dispatching: postbacks wait until a 'pixrelay serve' "
                         "(with dispatch = 1) runs on this Redis\n")
        disp = Pixrelay(self.wd.path, redis, name="disp").start()
        self.addCleanup(disp.stop)
        disp.wait_ready()
        disp.cli("init")
        self.assertEqual(t.stderr.readline(),
                         "pixrelay tail: 1 process is dispatching; waiting for deliveries (Ctrl-C to stop)...\n")
        # a delivery, named with the API's state names
        key = disp.create_key("sandbox")["key"]
        r = disp.request("POST", "/v1/charge/pix/create", body={"amount": 300, "postbackUrl": "http://127.0.0.1:1/x"},
                         headers=auth(key))
        self.assertEqual(r.status, 200, r)
        cid = r.json["data"]["id"]
        time.sleep(1.5)  # the dispatcher counts subscribers every second
        disp.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid, headers=auth(key))
        line = t.stdout.readline()
        self.assertRegex(line, r"^\S+ sandbox pending\s+evt_\w+\s+-> http://127.0.0.1:1/x  no answer \d+ ms  ")
        disp.stop()
        self.assertEqual(t.wait(20), 1)
        self.assertRegex(t.stderr.read(), r"pixrelay tail: no process is dispatching any more \(the last "
                                          r"heartbeat was \d+ s ago\): the server stopped\n")

    def test_tail_exits_when_the_embedded_redis_stops(self):
        px = Pixrelay(self.wd.path).start()
        self.addCleanup(px.stop)
        px.wait_ready()
        time.sleep(1)  # its first heartbeat
        t = self.tail(px)
        self.assertEqual(t.stderr.readline(), "pixrelay tail: watching postback deliveries (Ctrl-C to stop)\n")
        self.assertIn("1 process is dispatching", t.stderr.readline())
        px.stop()
        self.assertEqual(t.wait(20), 1)
        self.assertRegex(t.stderr.read(), r"pixrelay tail: (lost the connection to Redis|no process is "
                                          r"dispatching any more|Redis does not answer)")

    def test_tail_json_and_ctrl_c(self):
        px = Pixrelay(self.wd.path).start()
        self.addCleanup(px.stop)
        px.wait_ready()
        time.sleep(1)  # its first heartbeat
        p = subprocess.Popen([BIN] + px.common_args() + ["tail", "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        self.assertIn("1 process is dispatching", p.stderr.readline())
        p.send_signal(signal.SIGINT)
        self.assertEqual(p.wait(10), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
