"""What the two bank suites share (test_banks.py: the banks' webhooks;
test_bankapi.py: the connected bank's API): a test case on the module's
stack, charges read back, postbacks checked for the account's signature,
and small helpers."""
import random
import time
import unittest

from harness import auth
from sse import verify

CREATE = "/v1/charge/pix/create"
QUIET = 0.5  # how long "nothing more arrives" is watched for


def valor_of(cents):
    """Integer cents as the standard's valor: "12.34"."""
    return "%d.%02d" % (cents // 100, cents % 100)


def unique(prefix):
    """A sink path no other test uses."""
    return "/%s/%d" % (prefix, random.randrange(10 ** 12))


class BankCase(unittest.TestCase):
    """A test class of a module whose one stack is `env` (a harness.ModuleStack
    subclass): setUpClass starts it and takes its shared attributes."""
    env = None

    @classmethod
    def setUpClass(cls):
        cls.env.share(cls)

    def get_charge(self, cid, key=None):
        r = self.px.request("GET", "/v1/charge/pix/" + cid, headers=auth(key or self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def events(self, path, n, webhook_id=None):
        """Wait for n postbacks to `path`; each must carry the account's
        signature and its event id as webhook-id. Returns their bodies."""
        reqs = self.sink.wait_count(n, path=path, webhook_id=webhook_id)
        for q in reqs:
            self.assertTrue(verify(self.signing, {k.lower(): v for k, v in q.header_list}, q.body),
                            "a postback not signed with the account's signing secret: %r" % q)
            self.assertEqual(q.header("webhook-id"), q.json["id"])
        return [q.json for q in reqs]

    def quiet_after(self, path, n):
        """Exactly n postbacks reached `path`, and no more come."""
        time.sleep(QUIET)
        self.assertEqual(self.sink.count(path), n, self.sink.requests(path))
