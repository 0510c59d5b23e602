"""Banking as a service: accounts, Pix keys, groups, balances, transfers."""
import base64
import json
import threading
import unittest

from accountdata import cnpj as new_cnpj, cpf as new_cpf
from harness import auth, init_platforms, shard_of, start_stack, stop_stack, wait_for

PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n").decode()
PNG = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")).decode()
JPG = base64.b64encode(bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")).decode()

CPFS = ["52998224725", "39053344705", "11144477735", "29094848074"]
CNPJS = ["11222333000181", "33000167000101", "12345678000195", "07549767000113", "12ABC34501DE35"]


def rep(cpf, name="Fulano de Tal"):
    return {"name": name, "birthDate": "1990-05-17", "email": "fulano@example.com",
            "taxID": cpf, "phone": "+55 11 94321-4321",
            "documents": {"picture_face": PNG, "picture_identity_front": "data:image/jpeg;base64," + JPG,
                          "picture_identity_type": "RG"}}


def account_body(cnpj, cpfs, **extra):
    b = {"officialName": "Empresa %s Ltda" % cnpj[:4], "tradeName": "Loja %s" % cnpj[:4],
         "taxID": cnpj, "documents": [PDF],
         "address": {"zipcode": "01310-100", "street": "Av. Paulista", "number": "1000",
                     "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
         "representatives": [rep(c) for c in cpfs]}
    b.update(extra)
    return b


class Accounts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls)
        init = init_platforms(cls.px)
        cls.platform = init["sandbox"]
        cls.master = cls.px.create_key("sandbox", master=True)["key"]
        cls.live_master = cls.px.create_key("production", master=True)["key"]
        cls.live_platform = init["production"]
        cls.key = cls.px.create_key("sandbox")["key"]

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def create(self, body, key=None, account=None):
        key = key or self.master
        return self.px.request("POST", "/v1/baas/account/create", body=body,
                               headers=auth(key, account if account is not None else self.platform))

    def make(self, cnpj, cpfs, key=None, account=None, **extra):
        r = self.create(account_body(cnpj, cpfs, **extra), key, account)
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def fund(self, account, amount, key=None):
        """Pay a sandbox charge of `account` so that its balance grows by amount - fee."""
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": amount},
                            headers=auth(key or self.master, account))
        self.assertEqual(r.status, 200, r)
        cid = r.json["data"]["id"]
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid,
                            headers=auth(key or self.master, account))
        self.assertEqual(r.status, 200, r)
        return amount - r.json["data"]["fee"]

    def balance(self, account):
        r = self.px.request("GET", "/v1/baas/balance", headers=auth(self.master, account))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["balance"]

    def transfer(self, body, account, key=None, headers=None):
        h = auth(key or self.master, account)
        h.update(headers or {})
        return self.px.request("POST", "/v1/baas/internal-transfer", body=body, headers=h)

    # --- creation ---

    def test_create_returns_the_account_and_its_secrets_once(self):
        d = self.make("33000167000101", [CPFS[0]], postbackUrl="http://127.0.0.1:9/hook")
        self.assertRegex(d["id"], r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
        self.assertEqual(d["taxID"], "33000167000101")
        self.assertEqual(d["status"], "ACTIVE")
        self.assertEqual(d["owner"], self.platform)
        self.assertEqual([k["type"] for k in d["pixKeys"]], ["EVP", "CNPJ"])
        self.assertRegex(d["pixKeys"][0]["key"], r"^[0-9a-f-]{36}$")
        self.assertEqual(d["pixKeys"][1]["key"], "33000167000101")
        self.assertTrue(d["secrets"]["postbackSigningSecret"].startswith("whsec_"))
        self.assertTrue(d["secrets"]["ingestSecret"].startswith("whsec_"))
        self.assertEqual(d["postbackUrl"], "http://127.0.0.1:9/hook")
        self.assertRegex(d["createdAt"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
        # the duplicate taxID is refused, punctuated or not
        r = self.create(account_body("33.000.167/0001-01", [CPFS[1]]))
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json["error"], "taxID: already registered in this environment "
                                          "(account %s)" % d["id"])
        # the files are stored by SHA-256 and never logged
        self.assertNotIn(PDF[:40], self.px.log())
        import hashlib
        sha = hashlib.sha256(base64.b64decode(PDF)).hexdigest()
        # in the account's shard, with everything else of the account
        self.assertEqual(self.redis.cmd("HEXISTS", "pixrelay:{s%d}:files:%s" % (shard_of(d["id"]), d["id"]),
                                        sha), 1)

    def test_same_taxid_is_fine_in_the_other_environment(self):
        a = self.make("07549767000113", [CPFS[2]])
        r = self.create(account_body("07549767000113", [CPFS[2]]), self.live_master, self.live_platform)
        self.assertEqual(r.status, 200, r)
        self.assertNotEqual(r.json["data"]["id"], a["id"])

    def test_validation_errors_name_the_field(self):
        cases = [
            (dict(taxID="11222333000182"), "taxID: "),
            (dict(representatives=[]), "representatives: "),
            (dict(documents=[PNG]), "documents[0]: "),
        ]
        for extra, prefix in cases:
            r = self.create(account_body("12345678000195", [CPFS[3]], **extra))
            self.assertEqual(r.status, 400, (extra, r))
            self.assertTrue(r.json["error"].startswith(prefix), (prefix, r.json["error"]))
            self.assertEqual(r.json["data"], [])
        b = account_body("12345678000195", [CPFS[3]])
        b["representatives"][0]["taxID"] = "52998224724"
        r = self.create(b)
        self.assertEqual(r.status, 400)
        self.assertTrue(r.json["error"].startswith("representatives[0].taxID: "), r.json["error"])
        # the same representative twice (by CPF, however written) is refused, named
        for cpfs, field, first in [([CPFS[3], CPFS[3]], 1, 0),
                                   ([CPFS[0], CPFS[3], "111.444.777-35", "11144477735"], 3, 2)]:
            r = self.create(account_body("12345678000195", cpfs))
            self.assertEqual(r.status, 400, r)
            self.assertEqual(r.json["error"], "representatives[%d].taxID: the same CPF as "
                                              "representatives[%d]" % (field, first))
        b = account_body("12345678000195", [CPFS[3]], extra="x")
        r = self.create(b)
        self.assertEqual(r.status, 400)
        self.assertIn("unknown field 'extra'", r.json["error"])

    def test_no_route_serves_a_stored_file(self):
        # files are known by their first bytes only: a "PDF" may hold anything after
        # %PDF-. So no route answers a stored file's bytes at all (inline or not, in
        # any type): walk every GET route of src/api/api.c with the account's id, the
        # file's SHA-256 and names made of it, and look for the file in every answer
        import hashlib
        import os
        import re
        marker = b"<html><script>alert('pixrelay-%s')</script></html>" % os.urandom(6).hex().encode()
        data = b"%PDF-1.4\n" + marker + b"\n%%EOF\n"
        b64 = base64.b64encode(data)
        sha = hashlib.sha256(data).hexdigest()
        d = self.make("60701190000104", [CPFS[0]], documents=["data:application/pdf;base64," + b64.decode()])
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "../../src/api/api.c")) as f:
            src = f.read()
        table = src[src.index("const struct http_route api_routes[]"):]
        routes = re.findall(r'\{HTTP_GET,\s*"([^"]+)"', table[:table.index("};")])
        self.assertGreater(len(routes), 15)
        names = [d["id"], sha, sha + ".pdf", "files:" + d["id"], "../files/" + sha]
        seen = 0
        for pattern in routes:
            if pattern == "/v1/events/stream":
                continue  # the live form of /v1/events: the same events, walked below
            for name in (names if "{" in pattern else [None]):
                path = re.sub(r"\{\w+\}", name, pattern) if name else pattern
                for h in (auth(self.master), auth(self.master, d["id"])):
                    r = self.px.request("GET", path, headers=h)
                    seen += 1
                    for needle in (marker, b64[:40], b64[-40:], data.hex().encode()):
                        self.assertNotIn(needle, r.body, (path, r.status, r.header("Content-Type")))
        self.assertGreater(seen, 60)
        # the API shows nothing of an account's files, not even their digests: neither
        # the account nor the creation's answer (only `pixrelay review show` does)
        r = self.px.request("GET", "/v1/baas/accounts/" + d["id"], headers=auth(self.master))
        self.assertEqual(r.status, 200, r)
        for shown in (json.dumps(r.json["data"]), json.dumps(d)):
            for needle in ("documents", "picture_face", sha, b64[:40].decode()):
                self.assertNotIn(needle, shown)

    def test_master_key_needs_x_account_id(self):
        r = self.px.request("POST", "/v1/baas/account/create", body=account_body("12ABC34501DE35", [CPFS[0]]),
                            headers=auth(self.master))
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json["error"], "X-Account-ID header is required with a master key "
                                          "on this operation")
        r = self.px.request("POST", "/v1/baas/internal-transfer",
                            body={"amount": 1, "from_key": "a", "to_key": "b"}, headers=auth(self.master))
        self.assertEqual(r.status, 400)

    def test_a_taxid_already_registered_names_its_account_only_to_who_may_know(self):
        # the account holding a taxID is named to a master key, and to an account key
        # acting for that account or for its owner (which was answered the id when it
        # made it); anyone else learns that the taxID is taken, not by whom: no oracle
        # of which account holds which CNPJ
        def named(account):
            return "taxID: already registered in this environment (account %s)" % account

        hidden = ("taxID: already registered in this environment, to an account the "
                  "caller's account does not own")
        for env, master, platform in (("sandbox", self.master, self.platform),
                                      ("production", self.live_master, self.live_platform)):
            with self.subTest(env=env):
                platform_key = self.px.create_key(env)["key"]
                shop = self.make(new_cnpj(), [new_cpf()], key=master, account=platform)
                shop_keys = [self.px.create_key(env, account=shop["id"])["key"] for _ in "ab"]
                mine = self.make(new_cnpj(), [new_cpf()], key=shop_keys[0], account="")
                self.assertEqual(mine["owner"], shop["id"])
                theirs = self.make(new_cnpj(), [new_cpf()], key=master, account=platform)

                def refused(holder, key, account="", punctuated=False):
                    taxid = holder["taxID"]
                    if punctuated:
                        taxid = "%s.%s.%s/%s-%s" % (taxid[:2], taxid[2:5], taxid[5:8],
                                                    taxid[8:12], taxid[12:])
                    r = self.create(account_body(taxid, [new_cpf()]), key, account)
                    return r.status, r.json["error"], r.json["data"]

                # the shop's keys (the one that made `mine` and another): the shop itself
                # and the account it made, by id; not an account of the platform
                for k in shop_keys:
                    self.assertEqual(refused(mine, k), (400, named(mine["id"]), []))
                    self.assertEqual(refused(mine, k, punctuated=True),
                                     (400, named(mine["id"]), []))
                    self.assertEqual(refused(shop, k), (400, named(shop["id"]), []))
                    self.assertEqual(refused(theirs, k), (400, hidden, []))
                    self.assertEqual(refused(theirs, k, punctuated=True), (400, hidden, []))
                # the platform's account key: the accounts the platform owns, not the shop's
                self.assertEqual(refused(theirs, platform_key), (400, named(theirs["id"]), []))
                self.assertEqual(refused(shop, platform_key), (400, named(shop["id"]), []))
                self.assertEqual(refused(mine, platform_key), (400, hidden, []))
                # a master key: any account of its environment, whoever it acts for
                self.assertEqual(refused(mine, master, platform), (400, named(mine["id"]), []))
                self.assertEqual(refused(theirs, master, shop["id"]),
                                 (400, named(theirs["id"]), []))
                # the hidden answer never carries the id, anywhere in the reply
                r = self.create(account_body(mine["taxID"], [new_cpf()]), platform_key, "")
                self.assertNotIn(mine["id"], r.body.decode())

    def test_account_key_creates_accounts_it_owns(self):
        d = self.make("12ABC34501DE35", [CPFS[1]], key=self.key, account="")
        self.assertEqual(d["owner"], self.platform)

    # --- transfers ---

    def test_transfers_inside_a_group(self):
        a = self.make("11222333000181", [CPFS[0], CPFS[1]])
        b = self.make("11444777000161", [CPFS[1]])          # shares CPFS[1] with a
        c = self.make("04252011000110", [CPFS[2]])          # shares nobody with a
        net = self.fund(a["id"], 10000)
        self.assertEqual(self.balance(a["id"]), net)
        evp_a, evp_b, evp_c = (x["pixKeys"][0]["key"] for x in (a, b, c))

        r = self.transfer({"amount": 1500, "from_key": evp_a, "to_key": b["taxID"]}, a["id"])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json, {"amount": 1500, "status": "DONE"})
        self.assertEqual(self.balance(a["id"]), net - 1500)
        self.assertEqual(self.balance(b["id"]), 1500)
        # b may move a's money too: a shares a member with b
        r = self.transfer({"amount": 500, "from_key": evp_a, "to_key": evp_b}, b["id"])
        self.assertEqual(r.status, 200, r)
        # c is outside a's group
        r = self.transfer({"amount": 1, "from_key": evp_a, "to_key": evp_c}, a["id"])
        self.assertEqual(r.status, 403)
        self.assertEqual(r.json["error"], "the accounts of from_key and to_key must both belong to "
                         "the caller's group: the caller's account, or an account of the same owner "
                         "sharing a member with it, both approved in the operator's KYC review")
        r = self.transfer({"amount": 1, "from_key": evp_a, "to_key": evp_b}, c["id"])
        self.assertEqual(r.status, 403)
        # unknown keys
        r = self.transfer({"amount": 1, "from_key": "nope", "to_key": evp_b}, a["id"])
        self.assertEqual((r.status, r.json["error"]), (404, "from_key: no account has this Pix key"))
        r = self.transfer({"amount": 1, "from_key": evp_a, "to_key": "nope"}, a["id"])
        self.assertEqual((r.status, r.json["error"]), (404, "to_key: no account has this Pix key"))
        # same account, too much, validation
        r = self.transfer({"amount": 1, "from_key": evp_a, "to_key": a["taxID"]}, a["id"])
        self.assertEqual((r.status, r.json["error"]), (400, "from_key and to_key belong to the same account"))
        r = self.transfer({"amount": 10 ** 9, "from_key": evp_a, "to_key": evp_b}, a["id"])
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json["error"], "insufficient balance: the source account has %d cents"
                         % (net - 2000))
        for body, msg in [({"amount": 0, "from_key": evp_a, "to_key": evp_b}, "amount: must be at least 1 (cent)"),
                          ({"amount": 1.5, "from_key": evp_a, "to_key": evp_b}, "amount: must be an integer number of cents"),
                          ({"amount": "1", "from_key": evp_a, "to_key": evp_b}, "amount: must be an integer number of cents"),
                          ({"from_key": evp_a, "to_key": evp_b}, "amount: is required (an integer number of cents)"),
                          ({"amount": 1, "to_key": evp_b}, "from_key: is required (a Pix key)"),
                          ({"amount": 1, "from_key": 5, "to_key": evp_b}, "from_key: must be a string (a Pix key)"),
                          ({"amount": 1, "from_key": evp_a, "to_key": evp_b, "x": 1},
                           "unknown field 'x'; allowed: amount, from_key, to_key")]:
            r = self.transfer(body, a["id"])
            self.assertEqual((r.status, r.json["error"]), (400, msg), body)
        self.assertEqual(self.balance(a["id"]) + self.balance(b["id"]), net)
        # the ledger shows the movements
        r = self.px.request("GET", "/v1/baas/balance", headers=auth(self.master, a["id"]))
        kinds = [e["kind"] for e in r.json["data"]["entries"]]
        self.assertEqual(kinds, ["internal_transfer", "internal_transfer", "charge_paid"])

    def test_idempotency_key(self):
        a = self.make("45997418000153", [CPFS[3]])
        b = self.make("62173620000180", [CPFS[3]])
        self.fund(a["id"], 5000)
        before = self.balance(a["id"])
        body = {"amount": 700, "from_key": a["taxID"], "to_key": b["taxID"]}
        for _ in range(3):
            r = self.transfer(body, a["id"], headers={"Idempotency-Key": "order-77"})
            self.assertEqual((r.status, r.json), (200, {"amount": 700, "status": "DONE"}))
        self.assertEqual(self.balance(a["id"]), before - 700)
        r = self.transfer(dict(body, amount=701), a["id"], headers={"Idempotency-Key": "order-77"})
        self.assertEqual((r.status, r.json["error"]),
                         (400, "Idempotency-Key: already used with a different request"))

    def test_concurrent_transfers_keep_the_total(self):
        cpf = "86288366757"
        accts = [self.make(c, [cpf]) for c in ("19131243000197", "27865757000102", "60746948000112")]
        for a in accts:
            self.fund(a["id"], 20000)
        total = sum(self.balance(a["id"]) for a in accts)
        results = []

        def worker(i):
            src, dst = accts[i % 3], accts[(i + 1) % 3]
            r = self.transfer({"amount": 997, "from_key": src["taxID"], "to_key": dst["taxID"]},
                              src["id"])
            results.append(r.status)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(200)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertTrue(set(results) <= {200, 400}, set(results))
        bals = [self.balance(a["id"]) for a in accts]
        self.assertEqual(sum(bals), total)
        self.assertTrue(all(b >= 0 for b in bals), bals)
        self.assertGreater(results.count(200), 0)

    def test_transfer_postbacks_reach_both_sides(self):
        from sink import Sink
        sink = Sink().start()
        try:
            cpf = "71428793860"
            a = self.make("34028316000103", [cpf], postbackUrl=sink.url("/a"))
            b = self.make("00000000000191", [cpf], postbackUrl=sink.url("/b"))
            self.fund(a["id"], 3000)
            r = self.transfer({"amount": 1234, "from_key": a["pixKeys"][0]["key"],
                               "to_key": b["pixKeys"][0]["key"]}, a["id"])
            self.assertEqual(r.status, 200, r)
            got_b = sink.wait_count(1, path="/b")[0].json
            got_a = [q.json for q in sink.wait_count(2, path="/a")]  # the payment, then the transfer
            out = [e for e in got_a if e["event"] == "EVENT:TRANSFER_DONE"][0]
            self.assertEqual(got_b["event"], "EVENT:TRANSFER_DONE")
            for e, direction in ((out, "out"), (got_b, "in")):
                self.assertEqual(e["data"]["amount"], 1234)
                self.assertEqual(e["data"]["status"], "DONE")
                self.assertEqual(e["data"]["direction"], direction)
                self.assertEqual(e["data"]["fromAccount"], a["id"])
                self.assertEqual(e["data"]["toAccount"], b["id"])
                self.assertRegex(e["data"]["id"], r"^trf_")
            self.assertEqual(out["data"]["id"], got_b["data"]["id"])
            self.assertNotEqual(out["id"], got_b["id"])
        finally:
            sink.close()

    def test_environments_are_isolated(self):
        a = self.make("15436940000103", [CPFS[0]])
        # a sandbox account does not exist for production keys
        r = self.px.request("GET", "/v1/baas/balance", headers=auth(self.live_master, a["id"]))
        self.assertEqual(r.status, 404)
        r = self.transfer({"amount": 1, "from_key": a["taxID"], "to_key": a["taxID"]},
                          self.live_platform, key=self.live_master)
        self.assertEqual(r.status, 404)


if __name__ == "__main__":
    unittest.main(verbosity=2)
