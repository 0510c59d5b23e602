"""GET /v1/events/stream: live events as Server-Sent Events, resumable, bounded."""
import hashlib
import json
import time
import unittest

from accountdata import account_body, cpf
from harness import (Pixrelay, Processes, Redis, Workdir, auth, init_platforms, start_stack,
                     stop_stack, wait_for)
from sse import Stream, verify


class EventStream(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls, args=["--stream-max-per-account", "3", "--stream-heartbeat", "1",
                               "--stream-max-pending", "4096"])
        init = init_platforms(cls.px)
        cls.platform = init["sandbox"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.master = cls.px.create_key("sandbox", master=True)["key"]
        cls.secrets = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)
        r = cls.px.request("POST", "/v1/baas/account/create", headers=auth(cls.master, cls.platform),
                           body=account_body([cpf()]))
        assert r.status == 200, r
        cls.other = r.json["data"]["id"]
        cls.other_key = cls.px.create_key("sandbox", account=cls.other)["key"]
        cls.live_platform = init["production"]
        cls.live_secrets = json.loads(cls.px.cli("secrets", "--env", "production", "--json").stdout)

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def setUp(self):
        self.open = []

    def tearDown(self):
        for s in self.open:
            s.close()
        time.sleep(0.2)  # the server sees them go

    def stream(self, key=None, **kw):
        s = Stream(self.px.port, self.key if key is None else key, **kw)
        self.open.append(s)
        return s

    def paid(self, key=None):
        """A sandbox charge paid now: (charge id, event id)."""
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 1234},
                            headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        cid = r.json["data"]["id"]
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid,
                            headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return cid, r.header("X-Event-Id")

    def test_auth_is_required_like_every_v1_route(self):
        s = self.stream(key="")
        self.assertEqual(s.head(), 401)
        self.assertEqual(self.px.request("GET", "/v1/events/stream").json,
                         {"error": "missing API key: send the header Authorization: Bearer <API key>",
                          "status": 401, "data": []})
        r = self.px.request("GET", "/v1/events/stream", headers=auth("pxr_test_" + "x" * 40))
        self.assertEqual((r.status, r.json["error"]), (401, "invalid API key"))
        k = self.px.create_key("sandbox")
        self.px.cli("keys", "revoke", k["id"])
        r = self.px.request("GET", "/v1/events/stream", headers=auth(k["key"]))
        self.assertEqual((r.status, r.json["error"]), (401, "API key revoked"))

    def test_bad_resume_points_are_refused(self):
        r = self.px.request("GET", "/v1/events/stream", headers=dict(auth(self.key), **{"Last-Event-ID": "nope"}))
        self.assertEqual((r.status, r.json["error"]),
                         (400, "Last-Event-ID: must be the id of an event of this account (evt_...)"))
        r = self.px.request("GET", "/v1/events/stream?since=yesterday", headers=auth(self.key))
        self.assertEqual((r.status, r.json["error"]),
                         (400, "since: must be an event id of this account, Unix seconds, "
                               "'YYYY-MM-DD HH:MM:SS' (UTC) or RFC 3339"))

    def test_live_events_signed_like_their_postback(self):
        s = self.stream()
        self.assertEqual(s.head(), 200)
        self.assertEqual(s.headers["content-type"], "text/event-stream")
        self.assertEqual(s.headers["cache-control"], "no-store")
        s.wait_comment("pixrelay live events of account %s (sandbox)" % self.platform)
        cid, evt = self.paid()
        self.assertTrue(evt.startswith("evt_"))
        (eid, data), = s.wait_events(1)
        self.assertEqual(eid, evt)
        self.assertEqual(set(data), {"id", "type", "createdAt", "destination", "headers", "body"})
        self.assertEqual((data["id"], data["type"], data["destination"]), (evt, "EVENT:CHARGE_PAID", None))
        h = data["headers"]
        self.assertEqual(h["Content-Type"], "application/json")
        self.assertEqual(h["webhook-id"], evt)
        self.assertNotIn("signature", h)  # the compatibility header is the secret itself
        self.assertTrue(verify(self.secrets["signingSecret"], h, data["body"].encode()))
        self.assertFalse(verify(self.live_secrets["signingSecret"], h, data["body"].encode()))
        payload = json.loads(data["body"])
        self.assertEqual((payload["id"], payload["event"], payload["data"]["id"], payload["data"]["status"]),
                         (evt, "EVENT:CHARGE_PAID", cid, "PAID"))
        # exactly the stored payload
        stored = self.px.request("GET", "/v1/events/" + evt, headers=auth(self.key)).json["data"]["payload"]
        self.assertEqual(payload, stored)

    def test_another_accounts_events_are_never_seen(self):
        mine = self.stream()
        theirs = self.stream(key=self.other_key)
        self.assertEqual((mine.head(), theirs.head()), (200, 200))
        theirs.wait_comment("account %s (sandbox)" % self.other)
        # production platform account: an ingested notification about an unknown charge
        r = self.px.request("POST", "/v1/webhooks/ingest/" + self.live_platform,
                            body={"id": "up-%f" % time.time(), "event": "EVENT:CHARGE_PAID",
                                  "data": {"id": "x"}},
                            headers={"signature": self.live_secrets["ingestSecret"]})
        self.assertEqual(r.status, 200, r)
        _, other_evt = self.paid(self.other_key)
        _, my_evt = self.paid()
        self.assertEqual([e for e, _ in mine.wait_events(1)], [my_evt])
        self.assertEqual([e for e, _ in theirs.wait_events(1)], [other_evt])
        time.sleep(0.5)
        mine._fill(0.2)
        mine._parse()
        theirs._parse()
        self.assertEqual(len(mine.events), 1)
        self.assertEqual(len(theirs.events), 1)
        # a master key acting for the other account sees its events, not the platform's
        as_other = self.stream(key=self.master, headers={"X-Account-ID": self.other})
        self.assertEqual(as_other.head(), 200)
        as_other.wait_comment("account %s (sandbox)" % self.other)
        _, e2 = self.paid(self.other_key)
        self.assertEqual([e for e, _ in as_other.wait_events(1)], [e2])

    def test_resume_with_last_event_id_and_since(self):
        s = self.stream()
        self.assertEqual(s.head(), 200)
        s.wait_comment("pixrelay live events")
        _, a = self.paid()
        s.wait_events(1)
        s.close()
        _, b = self.paid()
        _, c = self.paid()
        r = self.stream(headers={"Last-Event-ID": a})
        self.assertEqual(r.head(), 200)

        def ours(stream, want, among=None):
            # a resume starts a few seconds before the last id (docs): earlier events
            # of other tests may come again; ours come in order, once
            def have():
                stream._parse()
                if all(x in [e for e, _ in stream.events] for x in want):
                    return True
                stream._fill(0.2)
            wait_for(have, what=str(want) + repr(stream.body[-3000:]))
            got = [e for e, _ in stream.events]
            self.assertEqual(len(got), len(set(got)), "no event twice")
            return [e for e in got if e in (among or (a, b, c, d))]

        d = None
        self.assertEqual(ours(r, [b, c]), [b, c])
        _, d = self.paid()  # then live
        self.assertEqual(ours(r, [b, c, d]), [b, c, d])
        # ?since= an event id: after it; ?since= a time: from then
        r2 = self.stream(path="/v1/events/stream?since=" + b)
        self.assertEqual(r2.head(), 200)
        self.assertEqual(ours(r2, [c, d], among=(b, c, d)), [c, d])
        t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
        r3 = self.stream(path="/v1/events/stream?since=" + t)
        self.assertEqual(r3.head(), 200)
        self.assertEqual(ours(r3, [a, b, c, d]), [a, b, c, d])

    def test_heartbeats_keep_an_idle_stream_alive(self):
        s = self.stream(key=self.other_key)
        self.assertEqual(s.head(), 200)
        s.wait_comment("keep-alive", timeout=5)

    def test_streams_per_account_are_limited(self):
        ss = [self.stream(key=self.other_key) for _ in range(3)]
        for s in ss:
            self.assertEqual(s.head(), 200)
        wait_for(lambda: all(any("pixrelay live" in c for c in (s._parse() or s.comments)) for s in ss) or
                 [s._fill(0.1) for s in ss] and False, what="three streams open")
        r = self.px.request("GET", "/v1/events/stream", headers=auth(self.other_key))
        self.assertEqual(r.status, 429)
        self.assertEqual(r.json["error"], "too many live streams for this account: 3 are open "
                                          "(limit 3 per process, stream-max-per-account); close one")
        self.assertEqual(r.header("Retry-After"), "5")
        ss[0].close()
        # the server notices the client left, and the place is free again
        s = wait_for(lambda: (lambda t: t if t.head() == 200 else t.close())(self.stream(key=self.other_key)),
                     what="a fourth stream once one closed")
        self.assertEqual(s.status, 200)
        for x in ss[1:] + [s]:
            x.close()

    def test_a_client_that_does_not_read_is_dropped(self):
        # a small receive window, and nothing read after the head
        big = "x" * 100000
        ingest = json.loads(self.px.cli("secrets", "--env", "sandbox", "--account", self.other,
                                        "--json").stdout)["ingestSecret"]
        s = self.stream(key=self.other_key, rcvbuf=4096)
        self.assertEqual(s.head(), 200)
        for i in range(80):
            r = self.px.request("POST", "/v1/webhooks/ingest/" + self.other,
                                body={"id": "big-%d-%f" % (i, time.time()), "event": "EVENT:CHARGE_PAID",
                                      "data": {"id": "y", "pad": big}},
                                headers={"signature": ingest})
            self.assertEqual(r.status, 200, r)
            if "unread; dropping the client" in self.px.log()[self.px.log_offset:]:
                break
        wait_for(lambda: "unread; dropping the client" in self.px.log()[self.px.log_offset:],
                 what="the slow client dropped")
        self.assertTrue(s.wait_eof(20), "the connection was closed")
        self.assertLess(len(s.body), 80 * 100000)
        # the account may stream again, and a client that reads gets events larger than
        # stream-max-pending (4096 here)
        s2 = self.stream(key=self.other_key, path="/v1/events/stream?since=" +
                         time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 600)))
        self.assertEqual(s2.head(), 200)
        self.assertGreaterEqual(len(s2.wait_events(3, timeout=20)), 3)
        self.assertIn(big, s2.events[0][1]["body"])


class StreamStops(unittest.TestCase):
    def test_sigterm_ends_streams_and_redis_loss_ends_them(self):
        wd = Workdir()
        redis = Redis(wd.path).start()
        px = Pixrelay(wd.path, redis).start()
        try:
            px.wait_ready()
            px.cli("init")
            key = px.create_key("sandbox")["key"]
            s = Stream(px.port, key)
            self.assertEqual(s.head(), 200)
            s.wait_comment("pixrelay live events")
            redis.stop()
            self.assertTrue(s.wait_eof(15), "the stream ended when Redis went away")
            s.close()
            redis.start()
            px.wait_ready(20)
            s = wait_for(lambda: (lambda t: t if t.head() == 200 else None)(Stream(px.port, key)),
                         timeout=20, what="a stream once Redis is back")
            s.wait_comment("pixrelay live events")
            px.proc.send_signal(15)
            self.assertTrue(s.wait_eof(15), "SIGTERM ended the stream")
            self.assertEqual(px.proc.wait(20), 0)
            s.close()
        finally:
            px.stop()
            redis.stop()
            wd.cleanup()


REVOKED = "end: the API key of this stream was revoked"


def opened(px, key, **kw):
    """A stream of px with `key`, begun (its greeting read)."""
    s = Stream(px.port, key, **kw)
    assert s.head() == 200, (s.status, s.body)
    s.wait_comment("pixrelay live events")
    return s


def refused(px, key):
    """Ask px for a stream with `key` that must be refused: (status, error, headers).
    A plain socket: a stream that is not refused does not hang the test."""
    s = Stream(px.port, key)
    try:
        assert s.head() != 200, "the stream was not refused"
        n = int(s.headers["content-length"])
        while len(s.body) < n and s._fill(5):
            pass
        return s.status, s.json()["error"], s.headers
    finally:
        s.close()


class StreamKeys(Processes):
    """A stream lives no longer than the API key that opened it."""

    def test_revoking_a_key_ends_its_streams_in_every_process(self):
        a, b = self.start(), self.start()
        a.cli("init")
        victim, other = a.create_key("sandbox"), a.create_key("sandbox")
        on_a, on_b = opened(a, victim["key"]), opened(b, victim["key"])
        kept = opened(a, other["key"])
        # revoked through the API of b: the stream on a ends too
        t0 = time.time()
        r = b.request("POST", "/v1/keys/%s/revoke" % victim["id"], headers=auth(other["key"]))
        self.assertEqual(r.status, 200, r)
        for s in (on_a, on_b):
            s.wait_comment(REVOKED, timeout=5)
            self.assertTrue(s.wait_eof(5), "the stream was closed")
            s.close()
        self.assertLess(time.time() - t0, 2.5, "within a second or two")
        wait_for(lambda: "live streams: an API key was revoked; 1 streams opened with it ended"
                 in a.log(), what="the log line")
        # the other key's stream goes on, and gets the next event; the revoked key opens nothing
        r = a.request("POST", "/v1/charge/pix/create", body={"amount": 500}, headers=auth(other["key"]))
        r = a.request("POST", "/v1/charge/pix/%s/simulate-payment" % r.json["data"]["id"],
                      headers=auth(other["key"]))
        self.assertEqual([e for e, _ in kept.wait_events(1)], [r.header("X-Event-Id")])
        for px in (a, b):
            self.assertEqual(refused(px, victim["key"])[:2], (401, "API key revoked"))
        # revoked from the command line (a process of its own): the same
        third = a.create_key("sandbox")
        on_a, on_b = opened(a, third["key"]), opened(b, third["key"])
        t0 = time.time()
        a.cli("keys", "revoke", third["id"])
        for s in (on_a, on_b):
            s.wait_comment(REVOKED, timeout=5)
            self.assertTrue(s.wait_eof(5))
            s.close()
        self.assertLess(time.time() - t0, 2.5)
        self.assertFalse(kept.eof)
        kept._fill(0.2)
        self.assertFalse(kept.eof, "a stream of another key stays open")
        kept.close()

    def revoke_unannounced(self, key):
        """Revoke `key` in Redis without the announcement: what a process sees of a
        revocation announced while its subscription was down, or just before its
        stream was registered."""
        sha = hashlib.sha256(key.encode()).hexdigest()
        self.redis.cmd("HSET", "pixrelay:{keys}:h:" + sha, "revoked_at", str(int(time.time() * 1000)))

    def test_a_revocation_the_process_did_not_hear_of_still_ends_its_streams(self):
        px = self.start()
        px.cli("init")
        # before any stream, the one subscriber of the process is the cache's
        subs = [l for l in self.redis.cmd("CLIENT", "LIST", "TYPE", "pubsub").splitlines() if l]
        self.assertEqual(len(subs), 1, subs)
        cache_sub = subs[0].split()[0].split("=")[1]
        # a stream that opens after the revocation, while the process still believes in
        # the key (its cache holds it), is refused when it opens
        k = px.create_key("sandbox")["key"]
        self.assertEqual(px.request("GET", "/v1/me", headers=auth(k)).status, 200)
        self.revoke_unannounced(k)
        self.assertEqual(px.request("GET", "/v1/me", headers=auth(k)).status, 200, "cached")
        status, error, headers = refused(px, k)
        self.assertEqual((status, error, headers["www-authenticate"]),
                         (401, "API key revoked", "Bearer"))
        # an open stream whose revocation was announced while the process did not listen
        # ends once the subscription is back
        k2 = px.create_key("sandbox")["key"]
        s = opened(px, k2)
        self.revoke_unannounced(k2)
        s._fill(0.5)
        self.assertFalse(s.eof)
        self.assertEqual(self.redis.cmd("CLIENT", "KILL", "ID", cache_sub), 1)
        s.wait_comment(REVOKED, timeout=5)
        self.assertTrue(s.wait_eof(5))
        s.close()


class StreamBudget(Processes):
    """Streams hold a share of the connections, each for a bounded time."""

    def test_streams_hold_at_most_half_of_the_connections(self):
        px = self.start(["--max-connections", "6", "--stream-max-per-account", "10"])
        px.cli("init")
        key = px.create_key("sandbox")["key"]
        ss = [opened(px, key) for _ in range(3)]
        status, error, headers = refused(px, key)
        self.assertEqual((status, error, headers["retry-after"]),
                         (503, "service unavailable: this process serves 3 live streams, its limit "
                               "(1/2 of max-connections 6); retry later", "5"))
        # the other half stays for the API
        self.assertEqual(px.request("GET", "/v1/me", headers=auth(key)).status, 200)
        ss[0].close()

        def another():
            t = Stream(px.port, key)
            if t.head() == 200:
                return t
            t.close()
        ss.append(wait_for(another, what="a stream once one closed"))
        for s in ss:
            s.close()

    def test_a_stream_ends_after_its_lifetime(self):
        px = self.start(["--stream-max-lifetime", "2"])
        px.cli("init")
        key = px.create_key("sandbox")["key"]
        t0 = time.time()
        s = opened(px, key)
        s.wait_comment("end: this stream reached its lifetime (stream-max-lifetime, 2 s); "
                       "reconnect with Last-Event-ID to resume", timeout=6)
        self.assertTrue(s.wait_eof(2))
        # up to a tenth early, and the stream's timer ticks each second
        self.assertGreaterEqual(time.time() - t0, 1.8)
        self.assertLess(time.time() - t0, 4.5)
        s.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
