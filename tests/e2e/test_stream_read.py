"""Events of layout 3 (docs/event-layout.md): an event with a destination is
one entry of its shard's stream and has no hash of its own until it must
wait. Every reader shows it as the same event kept as a hash would read:
GET /v1/events/{id}, the listing and its filters, the CLI, /metrics; while
pending, while being delivered, once delivered (its record in p done:<day>),
and replayed. Several events made in one millisecond are told apart. The
trim of the stream (stream_trim.lua, as pixrelay sends it) keeps what is not
leased yet and drops what the retention let go."""
import json
import os
import re
import sys
import threading
import time
import unittest

from harness import Pixrelay, Redis, Workdir, auth, rkey, shard_of, stored_event, wait_for
from sink import Reply, Sink

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(TOP, "tools"))
from embed_scripts import expand  # noqa: E402

LISTED = {"id", "type", "state", "destination", "attempts", "createdAt", "updatedAt",
          "nextAttemptAt", "lastStatus", "lastError"}
DAY_MS = 86400000


class Stack:
    """A Redis, a sink and one pixrelay at a time on them (restarted with or
    without dispatching), with the sandbox platform account and a key."""

    def __init__(self, redis_config=()):
        self.wd = Workdir()
        self.redis = Redis(self.wd.path).start()
        for name, value in redis_config:
            self.redis.cmd("CONFIG", "SET", name, value)
        self.sink = Sink().start()
        self.px = None
        self.run(dispatch=False)
        self.account = json.loads(self.px.cli("init", "--json").stdout)["sandbox"]["account"]
        self.key = self.px.create_key("sandbox")["key"]
        self.sp = rkey("", self.account)[:-len(self.account)]  # <prefix>{s<k>}:

    def run(self, dispatch):
        if self.px:
            self.px.stop()
        self.px = Pixrelay(self.wd.path, self.redis, args=[] if dispatch else ["--dispatch", "0"])
        self.px.start()
        self.px.wait_ready()

    def close(self):
        if self.px:
            self.px.stop()
        self.sink.close()
        self.redis.stop()
        self.wd.cleanup()

    def paid_event(self, path):
        """A charge with the sink's `path` as its destination, paid: its
        event's id."""
        r = self.px.request("POST", "/v1/charge/pix/create",
                            body={"amount": 900, "postbackUrl": self.sink.url(path)},
                            headers=auth(self.key))
        assert r.status == 200, r
        cid = r.json["data"]["id"]
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid,
                            headers=auth(self.key))
        assert r.status == 200, r
        return [e["id"] for e in self.listed() if json.loads(
            stored_event(self.redis, self.account, e["id"])["body"])["data"]["id"] == cid][0]

    def listed(self, query=""):
        r = self.px.request("GET", "/v1/events?limit=100" + query, headers=auth(self.key))
        assert r.status == 200, r
        return r.json["data"]["events"]

    def get(self, eid):
        return self.px.request("GET", "/v1/events/" + eid, headers=auth(self.key))

    def one(self, eid):
        r = self.get(eid)
        assert r.status == 200, r
        return r.json["data"]


class StreamEvent(unittest.TestCase):
    """One event through its life, read at each step."""

    def setUp(self):
        self.s = Stack()

    def tearDown(self):
        self.s.close()

    def check_reads_agree(self, eid):
        """The listing, the listing's filters and the CLI say what GET says."""
        s = self.s
        d = s.one(eid)
        row = [e for e in s.listed() if e["id"] == eid]
        self.assertEqual(row, [{k: d[k] for k in LISTED}])
        for state in ("pending", "delivering", "delivered", "dead"):
            self.assertEqual(eid in [e["id"] for e in s.listed("&state=" + state)],
                             state == d["state"], state)
        self.assertIn(eid, [e["id"] for e in s.listed("&type=EVENT:CHARGE_PAID")])
        self.assertNotIn(eid, [e["id"] for e in s.listed("&type=EVENT:CHARGE_REFUND")])
        cli = json.loads(s.px.cli("events", "show", eid, "--json").stdout)
        self.assertEqual(cli, d)
        return d

    def metric(self, state):
        text = self.s.px.request("GET", "/metrics").body.decode()
        m = re.search(r'^pixrelay_events\{shard="%d",state="%s"\} (\S+)$'
                      % (shard_of(self.s.account), state), text, re.M)
        return float(m.group(1)) if m else None

    def test_pending_delivering_delivered_replayed(self):
        s = self.s
        # the first attempt takes 3 s at the sink: long enough to read it in flight
        s.sink.script("/slow", [Reply(200, delay=3.0)])
        eid = s.paid_event("/slow")
        ek = rkey("e:", eid)

        # pending: the entry alone, never attempted
        self.assertEqual(s.redis.cmd("EXISTS", ek), 0)
        entry = stored_event(s.redis, s.account, eid)
        self.assertEqual(entry["url"], s.sink.url("/slow"))
        d = self.check_reads_agree(eid)
        self.assertEqual((d["state"], d["attempts"], d["attemptLog"]), ("pending", 0, []))
        self.assertEqual(d["updatedAt"], d["createdAt"])
        self.assertEqual(d["nextAttemptAt"], d["createdAt"])
        self.assertIsNone(d["deliveredAt"])
        self.assertIsNone(d["lastStatus"])
        self.assertEqual(d["destination"], s.sink.url("/slow"))
        self.assertEqual(d["payload"], json.loads(entry["body"]))
        self.assertEqual(self.metric("pending"), 1)
        # a replay of an event not yet delivered has nothing to do
        r = s.px.request("POST", "/v1/events/%s/replay" % eid, headers=auth(s.key))
        self.assertEqual((r.status, r.json["data"]), (200, {"id": eid, "requeued": False}))
        self.assertEqual(s.redis.cmd("EXISTS", ek), 0)

        # delivering: leased (its call's batch in the lease set, its charge busy with it), no
        # attempt recorded yet
        s.run(dispatch=True)
        d = wait_for(lambda: (lambda j: j if j["state"] == "delivering" else None)(s.one(eid)),
                     what="the event in flight")
        batches = [m for m in s.redis.cmd("ZRANGE", s.sp + "lease", 0, -1) if m.startswith("@")]
        self.assertEqual(len(batches), 1)
        self.assertTrue(batches[0].startswith("@" + entry["sid"] + "/"), batches)
        self.assertEqual(s.redis.cmd("HGET", s.sp + "busy", entry["order"]), eid)
        self.assertEqual(s.redis.cmd("EXISTS", ek), 0)
        # /metrics counts the batch's one lease not settled, not the batch
        self.assertEqual((self.metric("delivering"), self.metric("pending")), (1, 0))
        d = self.check_reads_agree(eid)
        if d["state"] == "delivering":
            self.assertEqual((d["attempts"], d["attemptLog"]), (0, []))
            self.assertIsNone(d["nextAttemptAt"])
            self.assertEqual(d["updatedAt"], d["createdAt"])

        # delivered at its first attempt: one field of p done:<day>, still no hash
        d = wait_for(lambda: (lambda j: j if j["state"] == "delivered" else None)(s.one(eid)),
                     what="the event delivered")
        self.assertEqual(s.redis.cmd("EXISTS", ek), 0)
        day = s.sp + "done:%d" % (int(entry["created_ms"]) // DAY_MS)
        self.assertIsNotNone(s.redis.cmd("HGET", day, eid))
        d = self.check_reads_agree(eid)
        self.assertEqual((d["attempts"], d["lastStatus"], d["lastError"]), (1, 200, None))
        self.assertEqual(d["deliveredAt"], d["updatedAt"])
        self.assertGreaterEqual(d["deliveredAt"], d["createdAt"])
        self.assertIsNone(d["nextAttemptAt"])
        self.assertEqual(len(d["attemptLog"]), 1)
        self.assertEqual(d["attemptLog"][0]["status"], 200)
        self.assertEqual(s.sink.count(webhook_id=eid), 1)

        # replayed: it gets a hash, its done record goes, it is delivered again
        r = s.px.request("POST", "/v1/events/%s/replay" % eid, headers=auth(s.key))
        self.assertEqual((r.status, r.json["data"]), (200, {"id": eid, "requeued": True}))
        self.assertEqual(s.redis.cmd("HGET", ek, "sid"), entry["sid"])
        self.assertIsNone(s.redis.cmd("HGET", day, eid))
        s.sink.wait_count(2, webhook_id=eid, timeout=15)
        d = wait_for(lambda: (lambda j: j if j["state"] == "delivered" and j["attempts"] == 2
                              else None)(s.one(eid)), what="the replayed event delivered")
        self.assertEqual([a["status"] for a in d["attemptLog"]], [200, 200])
        self.check_reads_agree(eid)
        time.sleep(0.3)
        self.assertEqual(s.sink.count(webhook_id=eid), 2)

    def test_an_unknown_or_foreign_id(self):
        s = self.s
        eid = s.paid_event("/ok")
        other = s.px.create_key("production")["key"]
        r = s.px.request("GET", "/v1/events/" + eid, headers=auth(other))
        self.assertEqual(r.status, 404, r)
        gone = eid[:-6] + ("A" if eid[-6] != "A" else "B") + eid[-5:]
        self.assertEqual(s.get(gone).status, 404)


class OneMillisecond(unittest.TestCase):
    """Notifications gathered into one ingest call are written in one script:
    their entries share their ms, and each reads as itself."""

    def test_events_of_one_ms(self):
        s = Stack()
        try:
            sec = json.loads(s.px.cli("secrets", "--env", "sandbox", "--json").stdout)
            s.px.cli("account", "set", "--env", "sandbox", "--postback-url", s.sink.url("/acct"))
            sent = {}
            shared = None
            for rnd in range(5):
                results, lock = {}, threading.Lock()

                def post(i, rnd=rnd):
                    note = {"id": "ms-%d-%d" % (rnd, i), "event": "EVENT:CHARGE_EXPIRED",
                            "data": {"id": "up-%d-%d" % (rnd, i)}}
                    r = s.px.request("POST", "/v1/webhooks/ingest/" + s.account,
                                     raw=json.dumps(note).encode(),
                                     headers={"Content-Type": "application/json",
                                              "signature": sec["ingestSecret"]})
                    with lock:
                        results[i] = (r, note)
                threads = [threading.Thread(target=post, args=(i,)) for i in range(24)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                by_ms = {}
                for r, note in results.values():
                    self.assertEqual(r.status, 200, r)
                    eid = r.json["data"]["event"]
                    sent[eid] = note
                    ms = stored_event(s.redis, s.account, eid)["created_ms"]
                    by_ms.setdefault(ms, []).append(eid)
                shared = [ids for ids in by_ms.values() if len(ids) > 1]
                if shared:
                    break
            self.assertTrue(shared, "no two events were written in one ms in 5 rounds")
            listed = {e["id"]: e for e in s.listed()}
            for eid, note in sent.items():
                d = s.one(eid)
                self.assertEqual((d["id"], d["type"], d["state"], d["attempts"]),
                                 (eid, "EVENT:CHARGE_EXPIRED", "pending", 0))
                self.assertEqual(d["payload"]["data"]["id"], note["data"]["id"])
                self.assertEqual(listed[eid], {k: d[k] for k in LISTED})
            for ids in shared:
                self.assertEqual(len({s.one(i)["payload"]["data"]["id"] for i in ids}), len(ids))
                self.assertEqual(len({s.one(i)["createdAt"] for i in ids}), 1)
        finally:
            s.close()


class Trim(unittest.TestCase):
    """stream_trim.lua as pixrelay sends it (events_trim, for the janitor)."""

    def test_trim_keeps_what_is_not_leased_and_drops_what_is_settled(self):
        # one entry per node of the stream: XTRIM MINID ~ then drops exactly
        s = Stack(redis_config=[("stream-node-max-entries", "1")])
        try:
            sha = s.redis.cmd("SCRIPT", "LOAD",
                              expand(os.path.join(TOP, "src", "store", "lua", "stream_trim.lua")))
            lease, sk = s.sp + "lease", s.sp + "s"

            def trim(oldest_ms):
                return s.redis.cmd("EVALSHA", sha, 1, lease, s.sp, str(oldest_ms))

            later = int(time.time() * 1000) + 400 * DAY_MS  # as if the retention let all go
            old = []
            for _ in range(3):
                old.append(s.paid_event("/ok"))
                time.sleep(0.005)  # distinct ms
            # nothing leased yet (no cursor): nothing goes, however old
            self.assertEqual(trim(later), 0)
            self.assertEqual(s.redis.cmd("XLEN", sk), 3)

            s.run(dispatch=True)
            wait_for(lambda: all(s.one(e)["state"] == "delivered" for e in old),
                     what="three events delivered")
            s.run(dispatch=False)
            new = []
            for _ in range(2):
                new.append(s.paid_event("/ok"))
                time.sleep(0.005)
            sids = [stored_event(s.redis, s.account, e)["sid"] for e in old + new]
            self.assertEqual(s.redis.cmd("HGET", s.sp + "cur", "id"), sids[2])

            # within the retention: nothing goes
            self.assertEqual(trim(0), 0)
            self.assertEqual(trim(int(time.time() * 1000) - 7 * DAY_MS), 0)
            # an entry leased now holds back everything from it on: the first of a batch,
            # or one leased alone (an earlier build)
            for member in ("@%s/%s" % (sids[0], sids[2]), sids[0]):
                s.redis.cmd("ZADD", lease, str(later), member)
                self.assertEqual(trim(later), 0)
                s.redis.cmd("ZREM", lease, member)
            self.assertEqual(s.redis.cmd("XLEN", sk), 5)

            # past the retention: the settled entries before the cursor's go
            self.assertEqual(trim(later), 2)
            self.assertEqual([e[0] for e in s.redis.cmd("XRANGE", sk, "-", "+")], sids[2:])
            # their events are gone from the listing; the rest read as before
            for e in old[:2]:
                self.assertEqual(s.get(e).status, 404)
            listed = {e["id"]: e["state"] for e in s.listed()}
            self.assertEqual(listed, {old[2]: "delivered", new[0]: "pending", new[1]: "pending"})
            for e in old[:2]:
                self.assertIsNone(s.redis.cmd("ZSCORE", rkey("a:", s.account), e))
            # and they are still delivered in order once a dispatcher runs
            s.run(dispatch=True)
            wait_for(lambda: all(s.one(e)["state"] == "delivered" for e in new),
                     what="the new events delivered")
            self.assertEqual(trim(later), 2)
            self.assertEqual([e[0] for e in s.redis.cmd("XRANGE", sk, "-", "+")], sids[4:])
        finally:
            s.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
