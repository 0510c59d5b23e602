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

    def event(self, eid, order, state="pending", due=True):
        self.cmd("HSET", P + "e:" + eid, "env", "sandbox", "account", "acc", "type", "T",
                 "url", "http://sink/hook", "queue", QUEUE, "body", "{}", "order", order,
                 "created_ms", T0, "state", state)
        self.cmd("RPUSH", P + "o:" + order, eid)
        if due:
            self.cmd("ZADD", P + "due:" + QUEUE, T0, eid)
            self.cmd("ZADD", P + "hosts", T0, QUEUE)

    def settle(self, now, lease_most, outcomes=()):
        """One event_settle call as dispatch.c makes it at `now`: outcomes
        are (id, token, outcome, next ms, status, error, attempt entry,
        attempt number, order, queue). Returns (recorded, [leased rows])."""
        argv = [P, now, LEASE, lease_most, now + LEASE, 10, 86400, 10, 0, len(outcomes), 10, 0,
                10, 10]
        for o in outcomes:
            argv += list(o)
        res = self.cmd("EVALSHA", self.sha, 3, P + "hosts", P + "lease", P + "dead", *argv)
        rows = res[2:]
        return res[0], [rows[i:i + 13] for i in range(0, len(rows), 13)]

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


if __name__ == "__main__":
    unittest.main(verbosity=2)
