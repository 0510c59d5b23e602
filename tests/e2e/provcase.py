"""What the suites of a payment provider's connection share
(test_provider_woovi.py, test_provider_asaas.py, test_provider_mp.py): a
stack (Redis, a sink, pixrelay), the sandbox platform account with a key
and its postbacks to the sink, the provider's connection made through the
real CLI with its secrets in files of mode 0600, and the merchant's view of
it: charges, their events (signature checked), the connection and its
reconciliation asked for now.

    class MyProvider(ProviderCase):
        @classmethod
        def setUpClass(cls):
            cls.server = TestX().start()
            cls.connect("asaas", {"api-token-file": key, ...}, ["--api-url", ...])
"""
import json
import os
import urllib.parse
import unittest

from harness import auth, free_port, init_platforms, start_stack, stop_stack, wait_for
from sse import verify

CREATE = "/v1/charge/pix/create"
CONNECTIONS = "/v1/bank/connections"
QUIET = 1.0  # after a notification or a reconciliation: nothing more comes


class ProviderCase(unittest.TestCase):
    server = None  # the tests' provider (its close() is called at the end)

    @classmethod
    def start(cls, args=("--bank-reconcile-interval", "3600", "--bank-timeout-ms", "2000")):
        """The stack, the sandbox platform account, its key and postbacks."""
        start_stack(cls, sink=True, port=free_port(), args=list(args))
        cls.account = init_platforms(cls.px)["sandbox"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.px.cli("account", "set", "--env", "sandbox", "--postback-url", cls.sink.url("/account"))
        cls.signing = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)[
            "signingSecret"]

    @classmethod
    def secret_file(cls, name, text):
        """`text` in a file of the work dir, mode 0600: its path."""
        path = os.path.join(cls.wd.path, name)
        with open(path, "w") as f:
            f.write(text + "\n")
        os.chmod(path, 0o600)
        return path

    @classmethod
    def connect(cls, provider, *args):
        """`pixrelay bank connect --provider` of the platform account with
        `args`: the connection (cls.conn), what the command printed
        (cls.connect_out) and its webhook's path (cls.hook)."""
        r = cls.px.cli("bank", "connect", "--provider", provider, "--env", "sandbox",
                       "--account", cls.account, "--json", *args)
        cls.connect_out = r.stdout + r.stderr
        cls.conn = json.loads(r.stdout)
        cls.hook = urllib.parse.urlsplit(cls.conn["webhookUrl"]).path
        return cls.conn

    @classmethod
    def hook_url(cls):
        """The connection's webhook on the API listener, as the provider
        reaches it in the tests."""
        return "http://127.0.0.1:%d%s" % (cls.px.port, cls.hook)

    @classmethod
    def tearDownClass(cls):
        code = cls.px.stop()
        log = cls.px.log()
        if cls.server:
            cls.server.close()
        stop_stack(cls)
        if code != 0 or "Sanitizer" in log:
            raise AssertionError("pixrelay exited %s:\n%s" % (code, log[-3000:]))

    def setUp(self):
        self.server.take_violations()

    def tearDown(self):
        self.assertEqual(self.server.take_violations(), [])

    # ---- the merchant's view ----

    def charge(self, amount, path, external=None, **fields):
        """A charge of `amount` cents whose postbacks go to the sink's `path`."""
        body = dict(fields, amount=amount, postbackUrl=self.sink.url(path))
        if external:
            body["externalID"] = external
        r = self.px.request("POST", CREATE, headers=auth(self.key), body=body)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def get_charge(self, cid):
        r = self.px.request("GET", "/v1/charge/pix/" + cid, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def connection(self):
        r = self.px.request("GET", "%s/%s" % (CONNECTIONS, self.conn["id"]),
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def events(self, path, n):
        """The first n postbacks to `path`, each signed with the account's
        secret."""
        reqs = self.sink.wait_count(n, path=path, timeout=15)
        for q in reqs:
            self.assertTrue(verify(self.signing, {k.lower(): v for k, v in q.header_list}, q.body))
        return [q.json for q in reqs]

    def reconcile_now(self):
        """A reconciliation now; returns once it recorded its success."""
        before = self.connection()["api"]["reconciliation"]["lastSuccessAt"]
        r = self.px.request("POST", "%s/%s/reconcile" % (CONNECTIONS, self.conn["id"]),
                            headers=auth(self.key))
        self.assertEqual(r.status, 202, r)
        wait_for(lambda: self.connection()["api"]["reconciliation"]["lastSuccessAt"] != before,
                 timeout=15, what="a reconciliation")

    def report(self, day):
        """bank report of the connection for `day` (YYYY-MM-DD), as JSON."""
        return json.loads(self.px.cli("bank", "report", self.conn["id"], "--date", day,
                                      "--json").stdout)
