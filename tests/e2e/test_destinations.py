"""Where production postbacks may go (issue 9.1): only to public addresses,
or to those the operator allows with destination-allow, whatever connection
carries them. Test hosts live in network namespaces of their own: a "public"
one (11.77.0.2) and a private one (10.77.0.2)."""
import json
import unittest

import netns
from harness import Pixrelay, Processes, auth, connect_bank, init_platforms, wait_for

CREATE = "/v1/charge/pix/create"


@unittest.skipUnless(netns.available(), "needs root for network namespaces (CI runs as root)")
class Destinations(Processes):
    @classmethod
    def setUpClass(cls):
        cls.pub = netns.NetHost("pub", "11.77.0.1", "11.77.0.2").create()
        cls.priv = netns.NetHost("prv", "10.77.0.1", "10.77.0.2").create()
        cls.pub_sink = cls.pub.sink(8080)
        cls.priv_sink = cls.priv.sink(8080)
        cls.priv_sink2 = cls.priv.sink(8081)

    @classmethod
    def tearDownClass(cls):
        cls.pub.destroy()
        cls.priv.destroy()

    def start(self, args=()):
        px = super().start(args)
        init = init_platforms(px)
        connect_bank(px)
        self.test_key = px.create_key("sandbox")["key"]
        self.live_key = px.create_key("production")["key"]
        self.live_platform = init["production"]
        return px

    def charge(self, px, key, url):
        r = px.request("POST", CREATE, body={"amount": 1000, "postbackUrl": url}, headers=auth(key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["id"]

    def pay_sandbox(self, px, url):
        cid = self.charge(px, self.test_key, url)
        r = px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid, headers=auth(self.test_key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def pay_production(self, px, url, upstream):
        cid = self.charge(px, self.live_key, url)
        secrets = json.loads(px.cli("secrets", "--env", "production", "--json").stdout)
        body = {"id": upstream, "event": "EVENT:CHARGE_PAID", "data": {"id": cid}}
        r = px.request("POST", "/v1/webhooks/ingest/" + secrets["account"], body=body,
                       headers={"signature": secrets["ingestSecret"]})
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["event"]

    def attempted(self, px, evt):
        def done():
            e = px.request("GET", "/v1/events/" + evt, headers=auth(self.live_key)).json["data"]
            return e if e["attempts"] >= 1 and e["state"] != "delivering" else None
        return wait_for(done, timeout=15, what="an attempt at " + evt)

    def test_production_reaches_a_public_host(self):
        px = self.start()
        self.pay_production(px, self.pub_sink.url("/pub"), "up-pub")
        got = self.pub_sink.wait_count(1, "/pub")[0]
        self.assertEqual(json.loads(got["body"])["data"]["status"], "PAID")

    def test_production_refuses_a_private_host(self):
        px = self.start()
        evt = self.pay_production(px, self.priv_sink.url("/priv"), "up-priv")
        e = self.attempted(px, evt)
        self.assertEqual(e["state"], "pending")
        self.assertIn("destination address 10.77.0.2 is not public", e["lastError"])
        self.assertEqual(self.priv_sink.requests("/priv"), [])

    def test_a_sandbox_connection_is_never_reused_for_production(self):
        # the sandbox may reach any address, and its keep-alive connections
        # stay open; a production event to the same address must not ride
        # on them (it was delivered before the fix, with the production
        # account's secrets)
        px = self.start()
        for sink, host in ((self.sink, "127.0.0.1"), (self.priv_sink, "10.77.0.2")):
            self.pay_sandbox(px, sink.url("/warm"))
            sink.wait_count(1, "/warm")
            evt = self.pay_production(px, sink.url("/prod"), "up-reuse-" + host)
            e = self.attempted(px, evt)
            self.assertIn("destination address %s is not public" % host, e["lastError"])
            self.assertEqual(sink.requests("/prod"), [])
            self.pay_sandbox(px, sink.url("/again"))  # the sandbox still gets through
            sink.wait_count(1, "/again")

    def test_ipv6_forms_that_embed_a_private_ipv4_address_are_refused(self):
        port = self.sink.port
        px = self.start()
        for i, host in enumerate(["[::127.0.0.1]", "[::ffff:127.0.0.1]", "[::ffff:0:7f00:1]",
                                  "[2002:7f00:1::1]", "[64:ff9b::7f00:1]", "[::1]"]):
            evt = self.pay_production(px, "http://%s:%d/v6" % (host, port), "up-v6-%d" % i)
            e = self.attempted(px, evt)
            self.assertRegex(e["lastError"], r"destination address \S+ is not public", host)
        self.assertEqual(self.sink.requests("/v6"), [])

    def test_destination_allow_can_name_a_port(self):
        px = self.start(["--destination-allow", "10.77.0.2:8080"])
        self.pay_production(px, self.priv_sink.url("/allowed"), "up-allow")
        self.priv_sink.wait_count(1, "/allowed")
        evt = self.pay_production(px, self.priv_sink2.url("/other-port"), "up-other")
        e = self.attempted(px, evt)
        self.assertIn("destination address 10.77.0.2 is not public", e["lastError"])
        self.assertEqual(self.priv_sink2.requests("/other-port"), [])

    def test_a_bad_allow_list_entry_is_refused_at_start(self):
        px = Pixrelay(self.wd.path, self.redis, args=["--destination-allow", "10.0.0.1:http"],
                      name="bad")
        with self.assertRaises(AssertionError):
            px.start()
        self.assertIn("destination-allow: not an IP address or CIDR, with an optional port: "
                      "'10.0.0.1:http'", px.log())


if __name__ == "__main__":
    unittest.main(verbosity=2)
