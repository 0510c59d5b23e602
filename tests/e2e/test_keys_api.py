"""API keys over HTTP: GET /v1/keys, POST /v1/keys, POST /v1/keys/{id}/revoke.

Who sees what: an account key its own account's account keys (never a master
key, though master keys belong to the platform account); a master key every
key of its environment (or one account's with X-Account-ID); never the other
environment's, never a key's text after its creation.
"""
import hashlib
import socket
import threading
import unittest

from harness import auth, init_platforms, new_ulid, start_stack, stop_stack

FIELDS = {"id", "environment", "kind", "account", "description", "hint", "createdAt",
          "lastUsedAt", "revokedAt"}


class Subscriber:
    """A real Redis SUBSCRIBE on one channel, recording messages in a thread."""

    def __init__(self, sock_path, channel):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(sock_path)
        self.s.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n" % (len(channel), channel.encode()))
        self.f = self.s.makefile("rb")
        self.messages = []
        self.ready = threading.Event()
        self.got = threading.Condition()
        threading.Thread(target=self.run, daemon=True).start()
        assert self.ready.wait(5)

    def read(self):
        line = self.f.readline()
        if line[:1] == b"*":
            return [self.read() for _ in range(int(line[1:]))]
        if line[:1] == b"$":
            data = self.f.read(int(line[1:]) + 2)[:-2]
            return data.decode()
        return line[1:-2].decode()

    def run(self):
        try:
            while True:
                m = self.read()
                if m[0] == "subscribe":
                    self.ready.set()
                elif m[0] == "message":
                    with self.got:
                        self.messages.append(m[2])
                        self.got.notify_all()
        except (OSError, ValueError, IndexError):
            pass

    def wait(self, n, timeout=5):
        with self.got:
            self.got.wait_for(lambda: len(self.messages) >= n, timeout)
            return list(self.messages)

    def close(self):
        self.s.close()


class KeysApi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls)
        init = init_platforms(cls.px)
        cls.platform = init["sandbox"]
        cls.master = cls.px.create_key("sandbox", master=True, description="ops")["key"]
        cls.key = cls.px.create_key("sandbox", description="platform key")["key"]
        cls.live_master = cls.px.create_key("production", master=True)["key"]
        cls.live_platform = init["production"]
        cls.live_key = cls.px.create_key("production", description="platform key")["key"]
        # a second account with a key of its own
        r = cls.px.request("POST", "/v1/baas/account/create", headers=auth(cls.master, cls.platform),
                           body=_account_body())
        assert r.status == 200, r
        cls.other = r.json["data"]["id"]
        cls.other_key = cls.px.create_key("sandbox", account=cls.other, description="shop")["key"]

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def get(self, query="", key=None, account=None):
        return self.px.request("GET", "/v1/keys" + query, headers=auth(key or self.key, account))

    def create(self, body, key=None, account=None, **kw):
        return self.px.request("POST", "/v1/keys", body=body,
                               headers=auth(key or self.key, account), **kw)

    def revoke(self, key_id, key=None, account=None):
        return self.px.request("POST", "/v1/keys/%s/revoke" % key_id,
                               headers=auth(key or self.key, account))

    def all_keys(self, key, account=None, limit=100):
        out, cursor = [], None
        for _ in range(50):
            r = self.get("?limit=%d" % limit + ("&cursor=" + cursor if cursor else ""), key, account)
            self.assertEqual(r.status, 200, r)
            out += r.json["data"]["keys"]
            cursor = r.json["data"]["nextCursor"]
            if not cursor:
                return out
        self.fail("paging never ended")

    def assertError(self, r, status, message):
        self.assertEqual((r.status, r.json), (status, {"error": message, "status": status, "data": []}))

    # ---- create ----

    def test_create_answers_the_text_once_and_it_works(self):
        r = self.create({"description": "laptop of Ana"})
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual(set(d), FIELDS | {"key"})
        self.assertTrue(d["key"].startswith("pxr_test_") and len(d["key"]) == 53, d)
        self.assertTrue(d["id"].startswith("key_"))
        self.assertEqual((d["environment"], d["kind"], d["account"], d["description"]),
                         ("sandbox", "account", self.platform, "laptop of Ana"))
        self.assertEqual(d["hint"], d["key"][:13] + "...")
        self.assertIsNone(d["lastUsedAt"])
        self.assertIsNone(d["revokedAt"])
        self.assertEqual(r.header("Cache-Control"), "no-store")
        me = self.px.request("GET", "/v1/me", headers=auth(d["key"]))
        self.assertEqual(me.status, 200, me)
        self.assertEqual(me.json["data"]["key"]["id"], d["id"])
        # listed, with its last use, never with its text
        listed = [k for k in self.all_keys(self.key) if k["id"] == d["id"]]
        self.assertEqual(len(listed), 1)
        self.assertEqual(set(listed[0]), FIELDS)
        self.assertIsNotNone(listed[0]["lastUsedAt"])
        self.assertNotIn(d["key"], self.get("?limit=100").body.decode())
        # the text is not in the server's log
        self.assertNotIn(d["key"], self.px.log())

    def test_create_for_the_acting_account(self):
        # a master key makes keys of the account it names; an account key of its own
        r = self.create({"description": "for the shop"}, key=self.master, account=self.other)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["data"]["account"], self.other)
        r = self.create({"description": "shop's own"}, key=self.other_key)
        self.assertEqual(r.json["data"]["account"], self.other)
        # without X-Account-ID a master key acts for the platform account
        r = self.create({"description": "platform's"}, key=self.master)
        self.assertEqual((r.json["data"]["account"], r.json["data"]["kind"]), (self.platform, "account"))
        # an account key cannot name another account
        r = self.create({"description": "x"}, key=self.other_key, account=self.platform)
        self.assertEqual(r.status, 403, r)
        # a master key cannot name an account of the other environment
        r = self.create({"description": "x"}, key=self.live_master, account=self.other)
        self.assertError(r, 404, "account not found: X-Account-ID " + self.other)

    def test_create_refuses_malformed_bodies(self):
        cases = [
            ({}, "description: is required (what the key is for, 1 to 200 characters)"),
            ({"description": None}, "description: is required (what the key is for, 1 to 200 characters)"),
            ({"description": 5}, "description: must be a string"),
            ({"description": ["a"]}, "description: must be a string"),
            ({"description": ""}, "description: must be 1 to 200 characters"),
            ({"description": "é" * 201}, "description: must be 1 to 200 characters"),
            ({"description": "a\nb"}, "description: must not contain control characters"),
            ({"description": "x", "kind": "master"}, "unknown field 'kind'; allowed: description"),
        ]
        for body, message in cases:
            with self.subTest(body=body):
                self.assertError(self.create(body), 400, message)
        self.assertEqual(self.create({"description": "é" * 200}).status, 200)
        self.assertError(self.px.request("POST", "/v1/keys", raw=b"[1]", headers=dict(
            auth(self.key), **{"Content-Type": "application/json"})), 400,
            "request body must be a JSON object")
        r = self.px.request("POST", "/v1/keys", raw=b"{\"description\":", headers=dict(
            auth(self.key), **{"Content-Type": "application/json"}))
        self.assertEqual(r.status, 400, r)
        self.assertTrue(r.json["error"].startswith("invalid JSON: "), r)
        r = self.px.request("POST", "/v1/keys", headers=auth(self.key))
        self.assertError(r, 400, "request body is empty; a JSON object is expected")
        r = self.px.request("POST", "/v1/keys", raw=b"description=x",
                            headers=dict(auth(self.key), **{"Content-Type": "text/plain"}))
        self.assertError(r, 415, "Content-Type must be application/json")
        r = self.px.request("POST", "/v1/keys", body={"description": "x"})
        self.assertEqual(r.status, 401)

    # ---- list ----

    def test_an_account_key_sees_its_own_accounts_keys(self):
        mine = self.all_keys(self.other_key)
        self.assertTrue(mine)
        self.assertEqual({k["account"] for k in mine}, {self.other})
        self.assertEqual({k["environment"] for k in mine}, {"sandbox"})
        ids = [k["id"] for k in mine]
        self.assertEqual(len(ids), len(set(ids)))

    def test_a_master_key_sees_the_environment_or_one_account(self):
        every = self.all_keys(self.master)
        accounts = {k["account"] for k in every}
        self.assertTrue({self.platform, self.other} <= accounts, accounts)
        self.assertEqual({k["environment"] for k in every}, {"sandbox"})
        self.assertIn("master", {k["kind"] for k in every})
        one = self.all_keys(self.master, account=self.other)
        self.assertEqual({k["account"] for k in one}, {self.other})
        live = self.all_keys(self.live_master)
        self.assertEqual({k["environment"] for k in live}, {"production"})
        self.assertFalse({k["id"] for k in live} & {k["id"] for k in every})

    def test_newest_first_and_the_cursor_covers_everything_once(self):
        for i in range(5):
            self.assertEqual(self.create({"description": "paging %d" % i}).status, 200)
        every = self.all_keys(self.key, limit=100)
        self.assertEqual([k["createdAt"] for k in every],
                         sorted((k["createdAt"] for k in every), reverse=True))
        paged = self.all_keys(self.key, limit=2)
        self.assertEqual([k["id"] for k in paged], [k["id"] for k in every])
        r = self.get("?limit=1")
        self.assertEqual(len(r.json["data"]["keys"]), 1)
        self.assertRegex(r.json["data"]["nextCursor"], r"^\d+_key_[0-9A-Z]{26}$")

    def test_listing_refuses_malformed_queries(self):
        cases = [
            ("?limit=0", "limit: must be an integer from 1 to 100"),
            ("?limit=101", "limit: must be an integer from 1 to 100"),
            ("?limit=abc", "limit: must be an integer from 1 to 100"),
            ("?limit=-1", "limit: must be an integer from 1 to 100"),
            ("?limit=", "limit: must be an integer from 1 to 100"),
            ("?cursor=abc", "cursor: not a cursor this endpoint returned"),
            ("?cursor=1795308078008_01M80B6GXRC6162E4XN5NPCTY3",
             "cursor: not a cursor this endpoint returned"),
            ("?cursor=1795308078008_key_01M80B6GXRC6162E4XN5NPCT",
             "cursor: not a cursor this endpoint returned"),
            ("?state=dead", "unknown query parameter 'state'; allowed: limit, cursor"),
            ("?limit=1&limit=2", "limit: given more than once"),
        ]
        for q, message in cases:
            with self.subTest(q=q):
                self.assertError(self.get(q), 400, message)
        self.assertEqual(self.px.request("GET", "/v1/keys").status, 401)
        r = self.px.request("DELETE", "/v1/keys", headers=auth(self.key))
        self.assertEqual((r.status, r.header("Allow")), (405, "GET, POST"))

    def test_keys_made_before_the_indexes_are_listed(self):
        # pixrelay before this version kept only {keys}:all: drop the indexes
        for k in self.redis.cmd("KEYS", "pixrelay:{keys}:env:*") + self.redis.cmd("KEYS", "pixrelay:{keys}:acct:*"):
            self.redis.cmd("DEL", k)
        every = self.all_keys(self.master)
        self.assertEqual(len(every), self.redis.cmd("ZCARD", "pixrelay:{keys}:env:sandbox"))
        self.assertTrue({self.platform, self.other} <= {k["account"] for k in every})
        self.assertEqual({k["account"] for k in self.all_keys(self.other_key)}, {self.other})

    # ---- revoke ----

    def test_revoke_stops_the_key_at_once_and_tells_every_process(self):
        sub = Subscriber(self.redis.sock, "pixrelay:invalidate")
        try:
            new = self.create({"description": "to revoke"}).json["data"]
            self.assertEqual(self.px.request("GET", "/v1/me", headers=auth(new["key"])).status, 200)
            r = self.revoke(new["id"])
            self.assertEqual(r.status, 200, r)
            d = r.json["data"]
            self.assertEqual(set(d), FIELDS)
            self.assertEqual(d["id"], new["id"])
            self.assertIsNotNone(d["revokedAt"])
            r = self.px.request("GET", "/v1/me", headers=auth(new["key"]))
            self.assertEqual((r.status, r.json["error"]), (401, "API key revoked"))
            self.assertEqual(r.header("WWW-Authenticate"), "Bearer")
            sha = hashlib.sha256(new["key"].encode()).hexdigest()
            self.assertEqual(sub.wait(1), ["k:" + sha])
            # again: the same answer, nothing published
            r = self.revoke(new["id"])
            self.assertEqual((r.status, r.json["data"]["revokedAt"]), (200, d["revokedAt"]))
            listed = [k for k in self.all_keys(self.key) if k["id"] == new["id"]]
            self.assertEqual(listed[0]["revokedAt"], d["revokedAt"])
        finally:
            sub.close()
        self.assertEqual(sub.messages, ["k:" + sha])

    def test_a_key_can_revoke_itself(self):
        new = self.create({"description": "self"}).json["data"]
        r = self.revoke(new["id"], key=new["key"])
        self.assertEqual(r.status, 200, r)
        r = self.revoke(new["id"], key=new["key"])
        self.assertEqual((r.status, r.json["error"]), (401, "API key revoked"))

    def test_who_may_revoke_what(self):
        shop = self.create({"description": "shop's"}, key=self.other_key).json["data"]
        # an account key: only its account's keys; others are not found
        self.assertError(self.revoke(shop["id"]), 404, "key not found: " + shop["id"])
        # a master key acting for the platform account: not the shop's either
        self.assertError(self.revoke(shop["id"], key=self.master, account=self.platform), 404,
                         "key not found: " + shop["id"])
        # the other environment's master key: not found
        self.assertError(self.revoke(shop["id"], key=self.live_master), 404, "key not found: " + shop["id"])
        self.assertEqual(self.px.request("GET", "/v1/me", headers=auth(shop["key"])).status, 200)
        # a master key over the whole environment: yes
        r = self.revoke(shop["id"], key=self.master)
        self.assertEqual((r.status, r.json["data"]["account"]), (200, self.other))
        self.assertEqual(self.px.request("GET", "/v1/me", headers=auth(shop["key"])).status, 401)

    def test_an_account_key_of_the_platform_account_cannot_touch_master_keys(self):
        # master keys belong to the platform account, but only a master key (or the
        # operator's CLI) lists or revokes them; an account key of the platform account
        # (the bootstrap sandbox key is one) sees account keys only, and a master key is
        # not found for it, like any key it may not see
        for env, master, key, platform in (("sandbox", self.master, self.key, self.platform),
                                           ("production", self.live_master, self.live_key,
                                            self.live_platform)):
            with self.subTest(env=env):
                target = self.px.create_key(env, master=True, description="target")
                mine = self.all_keys(key)
                self.assertTrue(mine)
                self.assertEqual({k["kind"] for k in mine}, {"account"})
                self.assertEqual({k["account"] for k in mine}, {platform})
                self.assertNotIn(target["id"], {k["id"] for k in mine})
                # a page never shows one either, whatever its size
                for k in self.all_keys(key, limit=1):
                    self.assertEqual(k["kind"], "account")
                # naming its own account changes nothing
                self.assertEqual({k["kind"] for k in self.all_keys(key, account=platform)},
                                 {"account"})
                # a master key sees them, over the environment and for the platform account
                self.assertIn(target["id"], {k["id"] for k in self.all_keys(master)})
                self.assertIn(target["id"],
                              {k["id"] for k in self.all_keys(master, account=platform)})
                # revoking: not found, and the master key still works
                self.assertError(self.revoke(target["id"], key=key), 404,
                                 "key not found: " + target["id"])
                self.assertError(self.revoke(target["id"], key=key, account=platform), 404,
                                 "key not found: " + target["id"])
                me = self.px.request("GET", "/v1/me", headers=auth(target["key"]))
                self.assertEqual((me.status, me.json["data"]["key"]["kind"]), (200, "master"),
                                 me)
                # a master key may revoke it
                r = self.revoke(target["id"], key=master)
                self.assertEqual((r.status, r.json["data"]["kind"]), (200, "master"), r)
                r = self.px.request("GET", "/v1/me", headers=auth(target["key"]))
                self.assertEqual((r.status, r.json["error"]), (401, "API key revoked"))
                # revoked, it is still not the account key's to see
                self.assertError(self.revoke(target["id"], key=key), 404,
                                 "key not found: " + target["id"])
                self.assertNotIn(target["id"], {k["id"] for k in self.all_keys(key)})

    def test_revoke_refuses_unknown_and_malformed_ids(self):
        self.assertError(self.revoke("nope"), 404, "key not found: nope")
        bare = new_ulid()
        self.assertError(self.revoke(bare), 404, "key not found: " + bare)
        unknown = "key_" + new_ulid()
        self.assertError(self.revoke(unknown), 404, "key not found: " + unknown)
        self.assertError(self.revoke("key_" + "x" * 100), 404, "key not found: key_" + "x" * 36)
        r = self.px.request("GET", "/v1/keys/%s/revoke" % unknown, headers=auth(self.key))
        self.assertEqual((r.status, r.header("Allow")), (405, "POST"))
        self.assertEqual(self.px.request("POST", "/v1/keys/%s/revoke" % unknown).status, 401)


def _account_body(tax_id="11222333000181"):
    import base64
    pdf = base64.b64encode(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n").decode()
    png = base64.b64encode(bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")).decode()
    return {"officialName": "Loja do Bairro Ltda", "tradeName": "Loja do Bairro",
            "taxID": tax_id, "documents": [pdf],
            "address": {"zipcode": "01310-100", "street": "Av. Paulista", "number": "1000",
                        "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
            "representatives": [{"name": "Fulano de Tal", "birthDate": "1990-05-17",
                                 "email": "fulano@example.com", "taxID": "52998224725",
                                 "phone": "+55 11 94321-4321",
                                 "documents": {"picture_face": png, "picture_identity_front": png,
                                               "picture_identity_type": "RG"}}]}


if __name__ == "__main__":
    unittest.main()
