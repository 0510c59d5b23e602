"""event_settle.lua's leases (docs/event-layout.md, "The lease and its
token"), called against a real redis-server as dispatchers with skewed clocks
would call it: a lease's token is its end, so a process that stalled past its
lease cannot have its late outcome recorded against the next lease, whatever
the clocks say; a call that carries one outcome twice records it once; and an
event already settled that is left in the lease set is not sent again.

Adapted from a review of issue 20's layout: the script is sent exactly as
pixrelay sends it (tools/embed_scripts.py expands its includes).
"""
import os
import sys
import unittest

from harness import SingleRedis, Workdir

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(TOP, "tools"))
from embed_scripts import expand  # noqa: E402

P = "px:{s0}:"
LEASE = 40000  # ms
T0 = 1_800_000_000_000
QUEUE = "sandbox:acc:sink"


class LeaseToken(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wd = Workdir()
        cls.redis = SingleRedis(cls.wd.path).start()
        body = expand(os.path.join(TOP, "src", "store", "lua", "event_settle.lua"))
        cls.sha = cls.redis.cmd("SCRIPT", "LOAD", body)

    @classmethod
    def tearDownClass(cls):
        cls.redis.stop()
        cls.wd.cleanup()

    def setUp(self):
        self.redis.cmd("FLUSHALL")

    def cmd(self, *args):
        return self.redis.cmd(*args)

    def busy_orders(self):
        """p busy's orders (its field '' only keeps it a hash table)."""
        h = self.cmd("HGETALL", P + "busy")
        return {k: v for k, v in zip(h[::2], h[1::2]) if k != ""}

    def event(self, eid, order, state="pending", due=True):
        self.cmd("HSET", P + "e:" + eid, "env", "sandbox", "account", "acc", "type", "T",
                 "url", "http://sink/hook", "queue", QUEUE, "body", "{}", "order", order,
                 "created_ms", T0, "state", state)
        self.cmd("RPUSH", P + "o:" + order, eid)
        if due:
            self.cmd("ZADD", P + "due:" + QUEUE, T0, eid)
            self.cmd("ZADD", P + "hosts", T0, QUEUE)

    def settle(self, now, lease_most, outcomes=(), hosts=(), done=()):
        """One event_settle call as dispatch.c makes it at `now`: outcomes
        are (id, token, outcome, next ms, status, error, attempt entry,
        attempt number, order, queue[, stream entry]); done are stream
        events delivered (stream entry, token, id, order, record[, queue]); hosts are
        (host, how many of its events at most). Returns (recorded, [leased
        rows]), each row as lease_decode (lease.c) reads it: id, url, body,
        attempts, budget_base, created_ms, account, env, 3 secrets, order,
        queue, stream entry."""
        argv = [P, now, LEASE, lease_most, now + LEASE, 10, 86400, 10, len(hosts),
                len(outcomes), 10, 0, 10, 10, len(done)]
        for h in hosts:
            argv += list(h)
        for o in outcomes:
            argv += list(o) + ([""] if len(o) == 10 else [])
        for o in done:
            argv += list(o) + ([QUEUE] if len(o) == 5 else [])
        res = self.cmd("EVALSHA", self.sha, 3, P + "hosts", P + "lease", P + "dead", *argv)
        rows = []
        for i in range(2, len(res), 5):
            sid, meta, body, counts, secrets = res[i:i + 5]
            order, queue, eid, env, account, _type, url = meta.split("\n")
            s1, s2, s3 = secrets.split("\n")
            if sid:
                self.assertEqual(counts, "")
                attempts, base, created = "1", "0", sid.split("-")[0]
            else:
                attempts, base, created = counts.split("\t")
            rows.append([eid, url, body, attempts, base, created, account, env, s1, s2, s3,
                         order, queue, sid])
        return res[0], rows

    def entry(self, eid, order, host="sink"):
        """An event as event_write (lib/event.lua) appends it to the shard's
        stream; returns its entry id."""
        sid = self.cmd("XADD", P + "s", "*", "m", "\n".join(
            [order, "sandbox:acc:" + host, eid, "sandbox", "acc", "T", "http://%s/hook" % host]),
            "b", "{\"id\":\"%s\"}" % eid)
        self.cmd("HINCRBY", P + "qn", "sandbox:acc:" + host, 1)
        return sid

    def test_a_stalled_lease_cannot_be_confused_with_the_next(self):
        self.event("E", "ch")
        # A (clock right) leases E at T0: its token is T0 + LEASE
        _, a = self.settle(T0, 10)
        self.assertEqual([r[0] for r in a], ["E"])
        token_a = str(T0 + LEASE)
        self.assertEqual(self.cmd("ZSCORE", P + "lease", "E"), token_a)
        # A stalls; B, whose clock is a whole lease ahead, takes the lease back
        self.settle(T0 + LEASE, 0)
        self.assertIsNone(self.cmd("ZSCORE", P + "lease", "E"))
        # C, a lease behind B: at its T0 the event is not due (B put it back at
        # B's now), so C cannot lease it with A's token
        self.assertEqual(self.settle(T0, 10)[1], [])
        _, c = self.settle(T0 + LEASE, 10)
        self.assertEqual([r[0] for r in c], ["E"])
        token_c = self.cmd("ZSCORE", P + "lease", "E")
        self.assertNotEqual(token_c, token_a)
        self.assertEqual(c[0][3], "2")  # the lease that ran out counted once
        # A wakes and sends its late outcome: ignored
        recorded, _ = self.settle(T0 + LEASE + 1, 0, [
            ("E", token_a, "retry", T0 + 1000, 500, "late", "{}", a[0][3], "ch", QUEUE)])
        self.assertEqual(recorded, 0)
        self.assertEqual(self.cmd("ZSCORE", P + "lease", "E"), token_c)
        # C delivers: recorded once, the charge's order list is done
        recorded, _ = self.settle(T0 + LEASE + 2, 0, [
            ("E", token_c, "delivered", 0, 200, "", "{}", c[0][3], "ch", QUEUE)])
        self.assertEqual(recorded, 1)
        self.assertEqual((self.cmd("HGET", P + "e:E", "state"), self.cmd("HGET", P + "e:E", "attempts")),
                         ("delivered", "2"))
        self.assertEqual(self.cmd("EXISTS", P + "o:ch"), 0)

    def test_one_outcome_sent_twice_in_a_call_counts_once(self):
        self.event("E", "ch")
        self.event("F", "ch", due=False)  # waits behind E
        _, a = self.settle(T0, 10)
        self.assertEqual([r[0] for r in a], ["E"])
        token = self.cmd("ZSCORE", P + "lease", "E")
        done = ("E", token, "delivered", 0, 200, "", "{}", a[0][3], "ch", QUEUE)
        recorded, _ = self.settle(T0 + 1, 0, [done, done])
        self.assertEqual(recorded, 1)
        # F is due once, and the order list holds it alone
        self.assertEqual(self.cmd("LRANGE", P + "o:ch", 0, -1), ["F"])
        self.assertEqual(self.cmd("ZRANGE", P + "due:" + QUEUE, 0, -1), ["F"])

    def test_a_settled_event_left_in_the_lease_set_is_not_sent_again(self):
        self.event("E", "ch", state="delivered", due=False)
        self.cmd("LPOP", P + "o:ch")
        self.cmd("ZADD", P + "lease", T0 - 1, "E")  # by hand, run out
        _, leased = self.settle(T0, 10)
        self.assertEqual(leased, [])
        self.assertIsNone(self.cmd("ZSCORE", P + "lease", "E"))
        self.assertEqual(self.cmd("ZCARD", P + "due:" + QUEUE), 0)
        self.assertIsNone(self.cmd("HGET", P + "e:E", "attempts"))



class StreamLeases(LeaseToken):
    """Layout 3: first attempts leased from the shard's stream by a cursor
    (docs/event-layout.md)."""

    def test_first_attempts_in_arrival_order_then_delivered(self):
        x, y = self.entry("X", "c1"), self.entry("Y", "c2")
        _, rows = self.settle(T0, 10)
        self.assertEqual([(r[0], r[3], r[11], r[12], r[13]) for r in rows],
                         [("X", "1", "c1", QUEUE, x), ("Y", "1", "c2", QUEUE, y)])
        self.assertEqual(rows[0][2], '{"id":"X"}')
        # one member of the lease set for the call's batch, its leases counted in p lb
        batch = "@%s/%s" % (x, y)
        self.assertEqual(self.cmd("ZRANGE", P + "lease", 0, -1, "WITHSCORES"),
                         [batch, str(T0 + LEASE)])
        self.assertEqual(self.cmd("HGETALL", P + "lb"), [batch, "2"])
        self.assertEqual(self.cmd("HGET", P + "cur", "id"), y)
        self.assertEqual(self.cmd("EXISTS", P + "qn"), 0)
        self.assertEqual(self.busy_orders(), {"c1": "X", "c2": "Y"})
        # a hash table, not a listpack scanned whole at each lookup (lib/event.lua, BUSY_TABLE)
        self.assertEqual(self.cmd("OBJECT", "ENCODING", P + "busy"), "hashtable")
        # nothing more to lease; X delivered: its outcome is one field of done:<day>; the
        # token of a stream event's lease is its batch (dispatch.c, lease_batch)
        token = batch
        record = "%d\t1\t200\t{\"a\":1}\t" % (T0 + 5)
        recorded, more = self.settle(T0 + 5, 10, done=[(x, token, "X", "c1", record)])
        self.assertEqual((recorded, more), (1, []))
        day = int(x.split("-")[0]) // 86400000
        self.assertEqual(self.cmd("HGET", P + "done:%d" % day, "X"), record)
        self.assertEqual(self.cmd("HGET", P + "lb", batch), "1")
        # the full form of the same outcome is recorded the same way (Y)
        self.settle(T0 + 6, 0, [("Y", token, "delivered", 0, 200, "", '{"a":1}', "1", "c2",
                                 QUEUE, y)])
        self.assertEqual(self.cmd("HGET", P + "done:%d" % day, "Y"),
                         "%d\t1\t200\t{\"a\":1}\t" % (T0 + 6))
        self.assertGreater(self.cmd("TTL", P + "done:%d" % day), 86400)
        self.assertEqual(self.busy_orders(), {})
        self.assertEqual(self.cmd("OBJECT", "ENCODING", P + "busy"), "hashtable")
        self.assertEqual([self.cmd("EXISTS", P + "e:" + e) for e in "XY"], [0, 0])
        self.assertEqual(self.cmd("ZCARD", P + "lease"), 0)
        self.assertEqual(self.cmd("EXISTS", P + "lb"), 0)

    def test_a_batch_that_runs_out_gives_back_only_its_leases_not_settled(self):
        x, y, z = self.entry("X", "c1"), self.entry("Y", "c2"), self.entry("Z", "c3")
        self.assertEqual([r[0] for r in self.settle(T0, 10)[1]], ["X", "Y", "Z"])
        token = "@%s/%s" % (x, z)
        # X delivered, Y to be retried (a hash, due later), the same outcome of X twice
        rec = "%d\t1\t200\t{}\t" % (T0 + 1)
        recorded, _ = self.settle(T0 + 1, 0, [("Y", token, "retry", T0 + LEASE + 5000, 503, "",
                                               "{}", "1", "c2", QUEUE, y)],
                                  done=[(x, token, "X", "c1", rec), (x, token, "X", "c1", rec)])
        self.assertEqual(recorded, 2)
        self.assertEqual(self.cmd("HGET", P + "lb", "@%s/%s" % (x, z)), "1")
        # the process holding Z stops: its lease runs out, Z alone is due again
        self.settle(T0 + LEASE, 0)
        self.assertEqual([self.cmd("ZCARD", P + "lease"), self.cmd("EXISTS", P + "lb")], [0, 0])
        self.assertEqual(self.cmd("HMGET", P + "e:Z", "state", "attempts", "sid"), ["pending", "1", z])
        self.assertEqual(self.cmd("HMGET", P + "e:Y", "attempts", "last_status"), ["1", "503"])
        self.assertEqual(self.cmd("ZRANGE", P + "due:" + QUEUE, 0, -1, "WITHSCORES"),
                         ["Z", str(T0 + LEASE), "Y", str(T0 + LEASE + 5000)])
        self.assertEqual(self.cmd("EXISTS", P + "e:X"), 0)
        # Z's late outcome is not counted: its lease is gone
        recorded, _ = self.settle(T0 + LEASE + 1, 0, done=[(z, token, "Z", "c3", rec)])
        self.assertEqual(recorded, 0)
        self.assertEqual([r[0] for r in self.settle(T0 + LEASE + 2, 10)[1]], ["Z"])

    def test_two_batches_of_one_token_each_count_their_own(self):
        # two calls in one ms (two processes, or one fast one) lease with the same token
        x = self.entry("X", "c1")
        self.assertEqual([r[0] for r in self.settle(T0, 10)[1]], ["X"])
        y, z = self.entry("Y", "c2"), self.entry("Z", "c3")
        self.assertEqual([r[0] for r in self.settle(T0, 10)[1]], ["Y", "Z"])
        b1, b2 = "@%s/%s" % (x, x), "@%s/%s" % (y, z)
        self.assertEqual(self.cmd("ZRANGE", P + "lease", 0, -1, "WITHSCORES"),
                         [b1, str(T0 + LEASE), b2, str(T0 + LEASE)])
        self.assertEqual(sorted(self.cmd("HGETALL", P + "lb")), sorted([b1, "1", b2, "2"]))
        rec = "%d\t1\t200\t{}\t" % (T0 + 1)
        self.assertEqual(self.settle(T0 + 1, 0, done=[(z, b2, "Z", "c3", rec)])[0], 1)
        self.assertEqual(sorted(self.cmd("HGETALL", P + "lb")), sorted([b1, "1", b2, "1"]))
        self.assertEqual(self.settle(T0 + 2, 0, done=[(x, b1, "X", "c1", rec)])[0], 1)
        self.assertEqual(self.cmd("ZRANGE", P + "lease", 0, -1), [b2])
        # X's batch is gone: an outcome of X again is not counted, nor taken for the other
        # batch of the same end (a token of the end alone is not a stream event's)
        for token in (b1, str(T0 + LEASE)):
            self.assertEqual(self.settle(T0 + 3, 0, done=[(x, token, "X", "c1", rec)])[0], 0)
        self.assertEqual(self.cmd("HGETALL", P + "lb"), [b2, "1"])

    def test_a_later_event_of_a_charge_waits_for_the_earlier(self):
        x, y = self.entry("X", "ch"), self.entry("Y", "ch")
        _, rows = self.settle(T0, 10)
        self.assertEqual([r[0] for r in rows], ["X"])
        # Y waits behind X: a hash of its own, in the order's list, not due
        self.assertEqual(self.cmd("LRANGE", P + "o:ch", 0, -1), ["X", "Y"])
        self.assertEqual(self.cmd("HGET", P + "busy", "ch"), "+")
        self.assertEqual(self.cmd("HMGET", P + "e:Y", "state", "sid", "body"),
                         ["pending", y, '{"id":"Y"}'])
        self.assertEqual(self.cmd("ZCARD", P + "due:" + QUEUE), 0)
        self.settle(T0 + 1, 0, [("X", "@%s/%s" % (x, x), "delivered", 0, 200, "", "{}", "1", "ch",
                                 QUEUE, x)])
        self.assertEqual(self.cmd("ZRANGE", P + "due:" + QUEUE, 0, -1), ["Y"])
        _, rows = self.settle(T0 + 2, 10)
        self.assertEqual([(r[0], r[3], r[13]) for r in rows], [("Y", "1", "")])
        self.settle(T0 + 3, 0, [("Y", str(T0 + 2 + LEASE), "delivered", 0, 200, "", "{}", "1",
                                 "ch", QUEUE)])
        self.assertEqual(self.cmd("HGET", P + "e:Y", "state"), "delivered")
        self.assertEqual((self.cmd("EXISTS", P + "o:ch"), self.busy_orders()), (0, {}))

    def test_an_event_behind_a_list_of_the_version_before_waits(self):
        # a shard without p v3 may hold lists of layout 2: one is left by the version before
        self.event("V", "ch")  # version 2: its list, no busy entry
        self.entry("X", "ch")
        _, rows = self.settle(T0, 10)
        self.assertEqual([r[0] for r in rows], ["V"])
        self.assertEqual(self.cmd("LRANGE", P + "o:ch", 0, -1), ["V", "X"])
        self.assertEqual((self.cmd("HGET", P + "busy", "ch"), self.cmd("GET", P + "nl")), ("+", "1"))
        self.settle(T0 + 1, 0, [("V", str(T0 + LEASE), "delivered", 0, 200, "", "{}", "1", "ch",
                                 QUEUE)])
        _, rows = self.settle(T0 + 2, 10)
        self.assertEqual([r[0] for r in rows], ["X"])
        self.assertEqual(self.cmd("EXISTS", P + "v3"), 0)  # X, a hash, is leased
        self.settle(T0 + 3, 0, [("X", str(T0 + 2 + LEASE), "delivered", 0, 200, "", "{}", "1",
                                 "ch", QUEUE)])
        self.assertEqual([self.cmd("EXISTS", P + k) for k in ("o:ch", "nl")], [0, 0])
        self.assertEqual(self.busy_orders(), {})
        # no event left that could head a list of layout 2: the mark is set at the next read
        self.entry("Y", "c2")
        self.assertEqual([r[0] for r in self.settle(T0 + 4, 10)[1]], ["Y"])
        self.assertEqual(self.cmd("EXISTS", P + "v3"), 1)

    def test_a_lease_that_runs_out_gives_the_event_a_hash(self):
        x = self.entry("X", "ch")
        _, rows = self.settle(T0, 10)
        token_a = "@%s/%s" % (x, x)
        self.assertEqual(self.settle(T0 + LEASE, 0)[0], 0)
        self.assertEqual(self.cmd("HMGET", P + "e:X", "state", "attempts", "sid"),
                         ["pending", "1", x])
        self.assertEqual(self.cmd("ZRANGE", P + "due:" + QUEUE, 0, -1), ["X"])
        # the late outcome of the first lease is ignored
        recorded, _ = self.settle(T0 + LEASE + 1, 0, [
            ("X", token_a, "delivered", 0, 200, "", "{}", "1", "ch", QUEUE, x)])
        self.assertEqual(recorded, 0)
        _, rows = self.settle(T0 + LEASE + 2, 10)
        self.assertEqual([(r[0], r[3], r[13]) for r in rows], [("X", "2", "")])

    def test_a_retry_gives_the_event_a_hash_in_its_due_set(self):
        x = self.entry("X", "ch")
        self.settle(T0, 10)
        self.settle(T0 + 1, 0, [("X", "@%s/%s" % (x, x), "retry", T0 + 5000, 503, "busy",
                                 '{"s":503}', "1", "ch", QUEUE, x)])
        self.assertEqual(self.cmd("HMGET", P + "e:X", "state", "attempts", "last_status", "attempt"),
                         ["pending", "1", "503", '{"s":503}'])
        self.assertEqual(self.cmd("ZSCORE", P + "due:" + QUEUE, "X"), str(T0 + 5000))
        self.assertEqual(self.cmd("HGET", P + "busy", "ch"), "X")
        self.assertEqual(self.settle(T0 + 2, 10)[1], [])
        _, rows = self.settle(T0 + 5000, 10)
        self.assertEqual([(r[0], r[3]) for r in rows], [("X", "2")])

    def test_one_host_over_its_budget_stops_the_reading(self):
        sids = [self.entry("A%d" % i, "a%d" % i) for i in range(5)]
        _, rows = self.settle(T0, 10, hosts=[("sink", 2)])
        self.assertEqual([r[0] for r in rows], ["A0", "A1"])
        # nothing spilled: the others wait in the stream, after the cursor
        self.assertEqual(self.cmd("HGET", P + "cur", "id"), sids[1])
        self.assertEqual(self.cmd("HGET", P + "qn", QUEUE), "3")
        self.assertEqual([self.cmd("EXISTS", P + "e:A%d" % i) for i in range(5)], [0] * 5)
        _, rows = self.settle(T0 + 1, 10, hosts=[("sink", 3)])
        self.assertEqual([r[0] for r in rows], ["A2", "A3", "A4"])

    def test_a_slow_host_does_not_hold_back_another(self):
        for i in range(3):
            self.entry("S%d" % i, "s%d" % i, host="slow")
        for i in range(2):
            self.entry("F%d" % i, "f%d" % i, host="fast")
        _, rows = self.settle(T0, 10, hosts=[("slow", 1)])
        self.assertEqual([r[0] for r in rows], ["S0", "F0", "F1"])
        # S1 and S2 wait in the slow host's due set, each the head of its charge
        self.assertEqual(self.cmd("ZRANGE", P + "due:sandbox:acc:slow", 0, -1), ["S1", "S2"])
        self.assertEqual(self.cmd("HMGET", P + "busy", "s1", "s2"), ["S1", "S2"])
        self.assertEqual(self.cmd("EXISTS", P + "qn"), 0)
        _, rows = self.settle(T0 + 1, 10, hosts=[("slow", 5)])
        self.assertEqual([(r[0], r[13]) for r in rows], [("S1", ""), ("S2", "")])


    def test_a_burst_of_one_charge_is_set_aside_a_bounded_part_a_call(self):
        # 300 events of one charge: the first is leased, the others wait behind
        # it, moved into its order list at most 256 a call
        for i in range(300):
            self.entry("B%03d" % i, "burst")
        _, rows = self.settle(T0, 10)
        self.assertEqual([r[0] for r in rows], ["B000"])
        self.assertEqual(self.cmd("LLEN", P + "o:burst"), 1 + 256)
        self.assertEqual(self.cmd("HGET", P + "qn", QUEUE), str(300 - 1 - 256))
        # the next call takes the rest aside, and leases nothing of the charge
        _, rows = self.settle(T0 + 1, 10)
        self.assertEqual(rows, [])
        self.assertEqual(self.cmd("LLEN", P + "o:burst"), 300)
        self.assertEqual(self.cmd("LRANGE", P + "o:burst", -1, -1), ["B299"])
        self.assertEqual(self.cmd("HEXISTS", P + "qn", QUEUE), 0)

    def test_entries_this_redis_does_not_hold_are_not_taken(self):
        # read on a primary that failed over before its replica had them: the
        # replica's cursor allows them, but its stream has not the last one
        sids = [self.entry("R%d" % i, "r%d" % i) for i in range(2)]
        argv = [P, T0, LEASE, 10, T0 + LEASE, 10, 86400, 10, 0, 0, 10, 0, 10, 10, 0, "", 3]
        for sid, eid in ((sids[0], "R0"), (sids[1], "R1"), ("9999999999999-0", "PHANTOM")):
            argv += [sid, eid.lower(), QUEUE, eid]
        res = self.cmd("EVALSHA", self.sha, 3, P + "hosts", P + "lease", P + "dead", *argv)
        rows = [res[i:i + 5] for i in range(2, len(res) - 1, 5)]
        # read by the script itself: the two it holds, with their meta and body
        self.assertEqual([(r[0], r[1].split("\n")[2]) for r in rows], [(sids[0], "R0"), (sids[1], "R1")])
        self.assertEqual(res[-1], sids[1])
        self.assertIsNone(self.cmd("HGET", P + "busy", "phantom"))

    def test_an_outcome_whose_entry_is_gone_frees_its_charge(self):
        # leased, then its entry removed (by hand, or lost in a failover): a retry
        # of it records nothing, and the charge's next event may go
        first = self.entry("G0", "gone")
        self.entry("G1", "gone")
        rows, _ = self.settle_given(T0, 1, "", [first])
        self.assertEqual([r[0] for r in rows], [first])
        self.assertEqual(self.cmd("HGET", P + "busy", "gone"), "G0")
        batch = self.cmd("ZRANGE", P + "lease", 0, -1)[0]
        self.cmd("XDEL", P + "s", first)
        recorded, rows = self.settle(T0 + 1, 10, [
            ("G0", batch, "retry", T0 + 1000, 500, "boom", "{}", 1, "gone", QUEUE, first)])
        self.assertEqual(self.cmd("EXISTS", P + "e:G0"), 0)
        self.assertEqual([r[0] for r in rows], ["G1"])
        self.assertEqual(self.cmd("HGET", P + "busy", "gone"), "G1")

    def settle_given(self, now, lease_most, frm, sids):
        """An event_settle call with the stream entries the dispatcher read
        itself (dispatch.c: XRANGE after `frm`, outside the script), given as
        their ids and the heads of their metas. Returns ([(stream entry,
        meta, body) per leased event], the cursor the answer ends with)."""
        argv = [P, now, LEASE, lease_most, now + LEASE, 10, 86400, 10, 0, 0, 10, 0, 10, 10, 0,
                frm, len(sids)]
        for sid in sids:
            en = self.cmd("XRANGE", P + "s", sid, sid)[0]
            argv += [sid] + en[1][1].split("\n")[:3]
        res = self.cmd("EVALSHA", self.sha, 3, P + "hosts", P + "lease", P + "dead", *argv)
        self.assertEqual((len(res) - 2) % 5, 1, res)
        return [tuple(res[i:i + 3]) for i in range(2, len(res) - 1, 5)], res[-1]

    def test_entries_the_dispatcher_read_are_leased_without_crossing_back(self):
        # read from the stream's start: leased as given, answered without their
        # meta and body (the dispatcher has them), the cursor last
        sids = [self.entry("G%d" % i, "g%d" % i) for i in range(4)]
        rows, cur = self.settle_given(T0, 3, "", sids[:3])
        self.assertEqual(rows, [(sid, "", "") for sid in sids[:3]])
        self.assertEqual(cur, sids[2])
        self.assertEqual(self.cmd("ZRANGE", P + "lease", 0, -1), ["@%s/%s" % (sids[0], sids[2])])
        # read after the cursor, and more wanted than given: the script reads on
        # from the last one given, itself (that one with its meta and body)
        sids.append(self.entry("G4", "g4"))
        rows, cur = self.settle_given(T0, 10, sids[2], sids[3:4])
        self.assertEqual([r[0] for r in rows], sids[3:5])
        self.assertEqual(rows[0][1:], ("", ""))
        self.assertEqual((rows[1][1].split("\n")[2], rows[1][2]), ("G4", '{"id":"G4"}'))
        self.assertEqual(cur, sids[4])

    def test_entries_read_from_a_stale_cursor_lease_nothing_twice(self):
        sids = [self.entry("H%d" % i, "h%d" % i) for i in range(5)]
        self.settle_given(T0, 2, "", sids[:2])
        # read from before the cursor (another process leased since): those at or
        # before it are not leased again, the rest are
        rows, cur = self.settle_given(T0, 10, "", sids[:4])
        self.assertEqual(rows[:2], [(sids[2], "", ""), (sids[3], "", "")])
        self.assertEqual([r[0] for r in rows], sids[2:5])
        self.assertEqual(cur, sids[4])
        # read from after the cursor (a guess that ran ahead: the call before took
        # less than it was given): not taken, the script reads the stream itself
        self.cmd("FLUSHALL")
        sids = [self.entry("K%d" % i, "k%d" % i) for i in range(4)]
        rows, cur = self.settle_given(T0, 10, sids[1], sids[2:4])
        self.assertEqual([r[0] for r in rows], sids)
        self.assertTrue(all(r[1] and r[2] for r in rows), rows)
        # nothing given at all, a cursor asked for: '' before any was consumed
        self.cmd("FLUSHALL")
        self.assertEqual(self.settle_given(T0, 10, "", []), ([], ""))

if __name__ == "__main__":
    unittest.main(verbosity=2)
