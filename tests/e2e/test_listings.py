"""Listings over HTTP: GET /v1/charges, GET /v1/baas/accounts,
GET /v1/baas/accounts/{id} (balance, postbackUrl, a ledger page) and
POST /v1/baas/accounts/{id}/secrets/reveal."""
import json
import time
import unittest

from harness import auth, init_platforms, new_ulid, start_stack, stop_stack, wait_for
from test_keys_api import _account_body

ACCOUNT_FIELDS = {"id", "environment", "kind", "officialName", "tradeName", "taxID", "status",
                  "owner", "pixKey", "postbackUrl", "balance", "createdAt"}


class Listings(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls)
        init = init_platforms(cls.px)
        cls.platform = init["sandbox"]
        cls.live_platform = init["production"]
        cls.master = cls.px.create_key("sandbox", master=True)["key"]
        cls.live_master = cls.px.create_key("production", master=True)["key"]
        cls.key = cls.px.create_key("sandbox")["key"]
        body = _account_body()
        body["postbackUrl"] = "https://shop.example/hooks"
        r = cls.px.request("POST", "/v1/baas/account/create", headers=auth(cls.master, cls.platform),
                           body=body)
        assert r.status == 200, r
        cls.shop = r.json["data"]
        cls.shop_key = cls.px.create_key("sandbox", account=cls.shop["id"])["key"]
        # charges of the platform account: 6, of which 3 paid (3 ledger entries)
        cls.charges = []
        for i in range(6):
            r = cls.px.request("POST", "/v1/charge/pix/create", body={"amount": 1000 + i},
                               headers=auth(cls.key))
            cls.charges.append(r.json["data"]["id"])
            time.sleep(0.002)  # distinct creation times: equal ones are listed by id
            if i % 2 == 0:
                r = cls.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cls.charges[-1],
                                   headers=auth(cls.key))
                assert r.status == 200, r
        cls.charges.reverse()  # newest first
        # an account whose ledger the ledger test pages through (and adds to)
        r = cls.px.request("POST", "/v1/baas/account/create", headers=auth(cls.master, cls.platform),
                           body=_account_body("33000167000101"))
        assert r.status == 200, r
        cls.books = r.json["data"]["id"]
        cls.books_key = cls.px.create_key("sandbox", account=cls.books)["key"]
        cls.books_paid = []
        for i in range(3):
            cid = cls.pay(cls.books_key, 2000 + i)
            cls.books_paid.insert(0, cid)
        cls.shop_charge = cls.px.request("POST", "/v1/charge/pix/create", body={"amount": 777},
                                         headers=auth(cls.shop_key)).json["data"]["id"]

    @classmethod
    def pay(cls, key, amount):
        cid = cls.px.request("POST", "/v1/charge/pix/create", body={"amount": amount},
                             headers=auth(key)).json["data"]["id"]
        r = cls.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid, headers=auth(key))
        assert r.status == 200, r
        time.sleep(0.002)
        return cid

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def get(self, path, key=None, account=None):
        return self.px.request("GET", path, headers=auth(key or self.key, account))

    def pages(self, path, field, key=None, account=None, limit=2, sep="?"):
        out, cursor = [], None
        for _ in range(100):
            r = self.get(path + sep + "limit=%d" % limit + ("&cursor=" + cursor if cursor else ""),
                         key, account)
            self.assertEqual(r.status, 200, r)
            d = r.json["data"]
            self.assertLessEqual(len(d[field]), limit)
            out += d[field]
            cursor = d["nextCursor"]
            if not cursor:
                return out
        self.fail("paging never ended")

    def assertError(self, r, status, message):
        self.assertEqual((r.status, r.json), (status, {"error": message, "status": status, "data": []}))

    # ---- charges ----

    def test_charges_newest_first_as_get_shows_them(self):
        r = self.get("/v1/charges")
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual([c["id"] for c in d["charges"]], self.charges)
        self.assertIsNone(d["nextCursor"])
        one = self.get("/v1/charge/pix/" + self.charges[0]).json["data"]
        self.assertEqual(d["charges"][0], one)
        self.assertEqual(self.pages("/v1/charges", "charges"), d["charges"])
        self.assertEqual([c["id"] for c in self.pages("/v1/charges", "charges", limit=5)], self.charges)

    def test_charges_by_status(self):
        paid = [c["id"] for c in self.get("/v1/charges?status=PAID").json["data"]["charges"]]
        self.assertEqual(paid, self.charges[1::2])
        self.assertEqual([c["id"] for c in self.pages("/v1/charges?status=PENDING", "charges", sep="&",
                                                      limit=1)], self.charges[0::2])
        self.assertEqual(self.get("/v1/charges?status=REFUNDED").json["data"],
                         {"charges": [], "nextCursor": None})

    def test_charges_of_the_acting_account_only(self):
        shop = self.get("/v1/charges", key=self.shop_key).json["data"]["charges"]
        self.assertEqual([c["id"] for c in shop], [self.shop_charge])
        mine = [c["id"] for c in self.get("/v1/charges?limit=100").json["data"]["charges"]]
        self.assertNotIn(self.shop_charge, mine)
        acting = self.get("/v1/charges", key=self.master, account=self.shop["id"]).json["data"]
        self.assertEqual([c["id"] for c in acting["charges"]], [self.shop_charge])
        self.assertEqual(self.get("/v1/charges", key=self.live_master).json["data"]["charges"], [])
        r = self.get("/v1/charges", key=self.key, account=self.shop["id"])
        self.assertEqual(r.status, 403)

    def test_charges_refuse_malformed_queries(self):
        cases = [
            ("?status=paid", "status: must be PENDING, PAID, EXPIRED, REFUNDED or FAILED"),
            ("?status=", "status: must be PENDING, PAID, EXPIRED, REFUNDED or FAILED"),
            ("?limit=0", "limit: must be an integer from 1 to 100"),
            ("?limit=1e3", "limit: must be an integer from 1 to 100"),
            ("?cursor=" + self.charges[0], "cursor: not a cursor this endpoint returned"),
            ("?cursor=17_evt_" + self.charges[0], "cursor: not a cursor this endpoint returned"),
            ("?since=1", "unknown query parameter 'since'; allowed: status, limit, cursor, recurrence"),
            ("?status=PAID&status=PENDING", "status: given more than once"),
        ]
        for q, message in cases:
            with self.subTest(q=q):
                self.assertError(self.get("/v1/charges" + q), 400, message)
        self.assertEqual(self.px.request("GET", "/v1/charges").status, 401)

    # ---- accounts ----

    def test_a_master_key_lists_its_environments_accounts(self):
        every = self.pages("/v1/baas/accounts", "accounts", key=self.master, limit=1)
        self.assertEqual([a["id"] for a in every], [self.books, self.shop["id"], self.platform])
        for a in every:
            self.assertEqual(set(a), ACCOUNT_FIELDS)
        shop, platform = every[1:]
        self.assertEqual((shop["kind"], shop["taxID"], shop["owner"], shop["postbackUrl"], shop["balance"],
                          shop["environment"], shop["status"]),
                         ("business", "11222333000181", self.platform, "https://shop.example/hooks", 0,
                          "sandbox", "ACTIVE"))
        self.assertEqual(shop["createdAt"], self.shop["createdAt"])
        self.assertEqual(shop["pixKey"], self.shop["pixKeys"][0]["key"])
        self.assertEqual((platform["kind"], platform["taxID"], platform["owner"]), ("platform", None, None))
        live = self.get("/v1/baas/accounts", key=self.live_master).json["data"]
        self.assertEqual([a["id"] for a in live["accounts"]], [self.live_platform])
        self.assertEqual(live["accounts"][0]["environment"], "production")

    def test_an_account_key_lists_itself(self):
        d = self.get("/v1/baas/accounts", key=self.shop_key).json["data"]
        self.assertEqual(([a["id"] for a in d["accounts"]], d["nextCursor"]), ([self.shop["id"]], None))
        # so does a master key acting for one account
        d = self.get("/v1/baas/accounts", key=self.master, account=self.shop["id"]).json["data"]
        self.assertEqual([a["id"] for a in d["accounts"]], [self.shop["id"]])
        cur = self.get("/v1/baas/accounts?limit=1", key=self.master).json["data"]["nextCursor"]
        d = self.get("/v1/baas/accounts?cursor=" + cur, key=self.shop_key).json["data"]
        self.assertEqual(d, {"accounts": [], "nextCursor": None})

    def test_account_lists_refuse_malformed_queries(self):
        for q, message in [("?limit=101", "limit: must be an integer from 1 to 100"),
                           ("?cursor=x_y", "cursor: not a cursor this endpoint returned"),
                           ("?kind=business", "unknown query parameter 'kind'; allowed: limit, cursor")]:
            with self.subTest(q=q):
                self.assertError(self.get("/v1/baas/accounts" + q, key=self.master), 400, message)

    def test_an_account_with_its_balance_and_ledger_pages(self):
        path = "/v1/baas/accounts/" + self.books
        r = self.get(path, key=self.books_key)
        self.assertEqual(r.status, 200, r)
        d = r.json["data"]
        self.assertEqual(set(d), ACCOUNT_FIELDS | {"ledger"})
        balance = self.get("/v1/baas/balance", key=self.books_key).json["data"]
        self.assertEqual(d["balance"], balance["balance"])
        self.assertEqual(d["ledger"], {"entries": balance["entries"], "nextCursor": None})
        self.assertEqual([e["charge"] for e in d["ledger"]["entries"]], self.books_paid)
        seen, cursor = [], None
        for _ in range(10):
            led = self.get("%s?limit=1%s" % (path, "&cursor=" + cursor if cursor else ""),
                           key=self.master).json["data"]["ledger"]
            seen += led["entries"]
            cursor = led["nextCursor"]
            if not cursor:
                break
        self.assertEqual(seen, d["ledger"]["entries"])
        first = self.get(path + "?limit=2", key=self.master).json["data"]["ledger"]
        self.assertEqual(first["entries"], d["ledger"]["entries"][:2])
        self.assertRegex(first["nextCursor"], r"^2\.[0-9a-f]{12}$")
        # money arrives between the pages: the next page still starts after the last entry shown
        self.pay(self.books_key, 5000)
        second = self.get("%s?limit=2&cursor=%s" % (path, first["nextCursor"]), key=self.master)
        self.assertEqual(second.status, 200, second)
        self.assertEqual(second.json["data"]["ledger"], {"entries": d["ledger"]["entries"][2:],
                                                         "nextCursor": None})
        self.assertEqual(second.json["data"]["balance"], d["balance"] + 5000 - 40)
        # a ledger entry the cursor names that is no longer there: nothing older either
        gone = self.get(path + "?cursor=1.0123456789ab", key=self.master).json["data"]
        self.assertEqual(gone["ledger"], {"entries": [], "nextCursor": None})

    def test_who_may_see_which_account(self):
        shop = self.shop["id"]
        self.assertEqual(self.get("/v1/baas/accounts/" + shop, key=self.master).status, 200)
        self.assertEqual(self.get("/v1/baas/accounts/" + shop, key=self.shop_key).status, 200)
        self.assertEqual(self.get("/v1/baas/accounts/" + shop, key=self.master, account=shop).status, 200)
        self.assertError(self.get("/v1/baas/accounts/" + shop), 404, "account not found: " + shop)
        self.assertError(self.get("/v1/baas/accounts/" + shop, key=self.master, account=self.platform), 404,
                         "account not found: " + shop)
        self.assertError(self.get("/v1/baas/accounts/" + shop, key=self.live_master), 404,
                         "account not found: " + shop)
        unknown = new_ulid()
        self.assertError(self.get("/v1/baas/accounts/" + unknown, key=self.master), 404,
                         "account not found: " + unknown)
        self.assertError(self.get("/v1/baas/accounts/nope", key=self.master), 404, "account not found: nope")
        for q, message in [("?limit=0", "limit: must be an integer from 1 to 100"),
                           ("?cursor=5_" + shop, "cursor: not a cursor this endpoint returned"),
                           ("?cursor=0.0123456789ab", "cursor: not a cursor this endpoint returned"),
                           ("?cursor=2.0123456789AB", "cursor: not a cursor this endpoint returned"),
                           ("?page=2", "unknown query parameter 'page'; allowed: limit, cursor")]:
            with self.subTest(q=q):
                self.assertError(self.get("/v1/baas/accounts/" + shop + q, key=self.master), 400, message)

    # ---- secrets ----

    def test_secrets_are_revealed_to_master_keys_on_request(self):
        shop = self.shop["id"]
        r = self.px.request("POST", "/v1/baas/accounts/%s/secrets/reveal" % shop, headers=auth(self.master))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Cache-Control"), "no-store")
        self.assertEqual(r.json["data"], {
            "account": shop,
            "postbackSigningSecret": self.shop["secrets"]["postbackSigningSecret"],
            "postbackSigningSecretPrevious": None,
            "postbackSignature": self.shop["secrets"]["postbackSignature"],
            "ingestSecret": self.shop["secrets"]["ingestSecret"]})
        cli = json.loads(self.px.cli("secrets", "--env", "sandbox", "--json").stdout)
        r = self.px.request("POST", "/v1/baas/accounts/%s/secrets/reveal" % self.platform,
                            headers=auth(self.master))
        self.assertEqual(r.json["data"]["postbackSigningSecret"], cli["signingSecret"])
        # an audit line names the account and the key, never a secret
        line = "revealed the secrets of account " + shop
        log = wait_for(lambda: line in self.px.log() and self.px.log(), what="the audit line")
        for s in self.shop["secrets"].values():
            self.assertNotIn(s, log)

    def test_secrets_refused_otherwise(self):
        shop = self.shop["id"]
        path = "/v1/baas/accounts/%s/secrets/reveal" % shop
        msg = "revealing an account's secrets needs a master key; an account key cannot see them"
        self.assertError(self.px.request("POST", path, headers=auth(self.shop_key)), 403, msg)
        self.assertError(self.px.request("POST", path, headers=auth(self.key)), 403, msg)
        self.assertError(self.px.request("POST", path, headers=auth(self.live_master)), 404,
                         "account not found: " + shop)
        self.assertError(self.px.request("POST", path, headers=auth(self.master, self.platform)), 404,
                         "account not found: " + shop)
        self.assertError(self.px.request("POST", "/v1/baas/accounts/x/secrets/reveal",
                                         headers=auth(self.master)), 404, "account not found: x")
        r = self.px.request("GET", path, headers=auth(self.master))
        self.assertEqual((r.status, r.header("Allow")), (405, "POST"))
        self.assertEqual(self.px.request("POST", path).status, 401)


if __name__ == "__main__":
    unittest.main()
