"""Quotas on what accounts keep (issue 9, item 7): files and bytes per account
(413), accounts per account key per hour (429 with Retry-After; a creation
refused for a taxID already registered counts too, so a key cannot probe
taxIDs without limit), business accounts and file bytes per environment
(403). The counters live in the environment's hash tag and are checked again
by the script that makes an account known, so two processes creating at once
never pass a limit; a refused account leaves nothing behind.
"""
import base64
import hashlib
import json
import os
import re
import sys
import threading
import time
import unittest

from accountdata import JPG, JPG_BYTES, PDF, PDF_BYTES, PNG, PNG_BYTES, account_body, cpf, rep
from harness import Pixrelay, Redis, Workdir, auth, init_platforms, wait_for

DEFAULT_BYTES = len(PDF_BYTES) + len(PNG_BYTES) + len(JPG_BYTES)  # what account_body keeps
STORED = 2 * DEFAULT_BYTES + 60  # max-stored-file-bytes of FileStorage


def pdf(n, tag=b""):
    """A PDF of exactly n bytes (by its magic bytes), different for each tag."""
    head = b"%PDF-1.4\n%" + tag + b"\n"
    return base64.b64encode(head + b"0" * (n - len(head))).decode()


class Stack:
    """A Redis and `n` pixrelay processes sharing it, started with `args`."""

    def __init__(self, args, n=1):
        self.wd = Workdir()
        self.redis = Redis(self.wd.path).start()
        self.px = [Pixrelay(self.wd.path, self.redis, args=args, name="px%d" % i).start()
                   for i in range(n)]
        for p in self.px:
            p.wait_ready()
        init = init_platforms(self.px[0])
        self.platform = init["sandbox"]
        self.live_platform = init["production"]
        self.master = self.px[0].create_key("sandbox", master=True)["key"]
        self.live_master = self.px[0].create_key("production", master=True)["key"]

    def stop(self):
        for p in self.px:
            p.stop()
        self.redis.stop()
        self.wd.cleanup()

    def create(self, body, key=None, account=None, via=0):
        if key is None:
            key, account = self.master, account or self.platform
        return self.px[via].request("POST", "/v1/baas/account/create", body=body,
                                    headers=auth(key, account))

    def keys(self, pattern):
        return self.redis.cmd("KEYS", "pixrelay:" + pattern)

    def stored(self):
        """(business account records, account file hashes) in every shard."""
        records = [k for k in self.keys("{s*}:acct:*")
                   if self.redis.cmd("HGET", k, "kind") == "business"]
        return len(records), len(self.keys("{s*}:files:*"))

    def orphans(self):
        """File hashes whose account record does not exist."""
        out = []
        for k in self.keys("{s*}:files:*"):
            tag, acct = re.match(r"pixrelay:(\{s\d+\}):files:(\w+)$", k).groups()
            if not any(self.redis.cmd("EXISTS", "pixrelay:%s:acct:%s:%s" % (tag, env, acct))
                       for env in ("sandbox", "production")):
                out.append(k)
        return out


class PerAccount(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Stack(["--max-account-files", "3", "--max-account-bytes", "1024"])

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def test_files_per_account(self):
        before = self.s.stored()
        body = account_body([cpf()], documents=[PDF, pdf(60, b"2")])  # 4 different files
        r = self.s.create(body)
        self.assertEqual((r.status, r.json),
                         (413, {"error": "documents and pictures: 4 different files, more than the "
                                         "3 an account may keep (max-account-files)",
                                "status": 413, "data": []}))
        # a file sent twice is kept once, and counted once
        r = self.s.create(account_body([cpf()], documents=[PDF, PDF],
                                       reps=[rep(cpf(), face=PNG, front=JPG, back=PNG)]))
        self.assertEqual(r.status, 200, r)
        shown = json.loads(self.s.px[0].cli("review", "show", r.json["data"]["id"], "--env",
                                            "sandbox").stdout)
        self.assertEqual((shown["fileCount"], shown["fileBytes"]), (3, DEFAULT_BYTES))
        self.assertEqual(self.s.stored(), (before[0] + 1, before[1] + 1))

    def test_bytes_per_account(self):
        before = self.s.stored()
        body = account_body([cpf()], documents=[pdf(1024 - len(PNG_BYTES) - len(JPG_BYTES) + 1)])
        r = self.s.create(body)
        self.assertEqual((r.status, r.json["error"]),
                         (413, "documents and pictures: 1025 bytes in all, more than the 1024 an "
                               "account may keep (max-account-bytes)"))
        self.assertEqual(self.s.stored(), before)  # nothing was written
        body = account_body([cpf()], documents=[pdf(1024 - len(PNG_BYTES) - len(JPG_BYTES))])
        r = self.s.create(body)
        self.assertEqual(r.status, 200, r)


class PerKey(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Stack(["--max-accounts-per-key-hour", "4"], n=2)

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def limited(self, r, wait_min, wait_max):
        self.assertEqual(r.status, 429, r)
        wait = int(r.header("Retry-After"))
        self.assertTrue(wait_min <= wait <= wait_max, wait)
        self.assertEqual(r.json, {"error": "too many accounts created with this account's API keys: "
                                           "at most 4 in an hour (max-accounts-per-key-hour); retry in "
                                           "%d s" % wait, "status": 429, "data": []})

    def test_an_account_key_makes_four_accounts_an_hour(self):
        k = self.s.px[0].create_key("sandbox")
        first = account_body([cpf()])
        self.assertEqual(self.s.create(first, k["key"]).status, 200)
        # a refusal for a taxID already registered counts...
        r = self.s.create(account_body([cpf()], taxid=first["taxID"]), k["key"])
        self.assertEqual(r.status, 400, r)
        # ... a malformed request does not
        r = self.s.create(account_body([cpf()], taxid="11222333000182"), k["key"])
        self.assertEqual(r.status, 400, r)
        for i in range(2):
            r = self.s.create(account_body([cpf()]), k["key"], via=i % 2)
            self.assertEqual(r.status, 200, r)
        before = self.s.stored()
        for via in (0, 1):
            self.limited(self.s.create(account_body([cpf()]), k["key"], via=via), 3590, 3600)
        self.assertEqual(self.s.stored(), before)  # nothing written for them
        # another key of the same account shares its hour: more keys are not
        # more accounts (it could make one through POST /v1/keys itself)
        made_key = self.s.px[0].request("POST", "/v1/keys", body={"description": "more"},
                                        headers=auth(k["key"]))
        self.assertEqual(made_key.status, 200, made_key)
        same = made_key.json["data"]["key"]
        self.limited(self.s.create(account_body([cpf()]), same, via=1), 3590, 3600)
        # another account's key has its own hour; a master key has no such limit
        shop = self.s.create(account_body([cpf()])).json["data"]
        other = self.s.px[1].create_key("sandbox", account=shop["id"])["key"]
        self.assertEqual(self.s.create(account_body([cpf()]), other).status, 200)
        for _ in range(5):
            self.assertEqual(self.s.create(account_body([cpf()])).status, 200)

        # the hour slides: once the oldest is nearly an hour old, the wait is what is left...
        made = "pixrelay:{sandbox}:made:" + k["account"]
        entries = self.s.redis.cmd("ZRANGE", made, 0, -1)
        self.assertEqual(len(entries), 4)
        now = int(time.time() * 1000)
        self.s.redis.cmd("ZADD", made, now - 3600000 + 5000, entries[0])
        self.limited(self.s.create(account_body([cpf()]), k["key"]), 4, 6)
        # ... and once it is an hour old, the key may make one more
        self.s.redis.cmd("ZADD", made, now - 3600000 - 1, entries[0])
        self.assertEqual(self.s.create(account_body([cpf()]), k["key"]).status, 200)
        self.limited(self.s.create(account_body([cpf()]), k["key"], via=1), 1, 3600)

    def test_probing_taxids_counts_towards_the_hour(self):
        # an account key of an account of its own: the CNPJs of others' accounts are
        # refused without naming them, and each refusal is one of the key's four an hour
        shop = self.s.create(account_body([cpf()])).json["data"]
        k = self.s.px[0].create_key("sandbox", account=shop["id"])
        held = [self.s.create(account_body([cpf()])).json["data"] for _ in range(5)]
        hidden = ("taxID: already registered in this environment, to an account the "
                  "caller's account does not own")
        made = "pixrelay:{sandbox}:made:" + shop["id"]
        before = self.s.stored()
        for i, other in enumerate(held[:4]):
            r = self.s.create(account_body([cpf()], taxid=other["taxID"]), k["key"], via=i % 2)
            self.assertEqual((r.status, r.json["error"]), (400, hidden), r)
            self.assertEqual(self.s.redis.cmd("ZCARD", made), i + 1)
        # the fifth probe, and any creation, waits for the hour: 429, which says nothing
        # of the taxID
        for via, body in ((0, account_body([cpf()], taxid=held[4]["taxID"])),
                          (1, account_body([cpf()]))):
            self.limited(self.s.create(body, k["key"], via=via), 3590, 3600)
        self.assertEqual(self.s.redis.cmd("ZCARD", made), 4)
        self.assertEqual(self.s.stored(), before)  # nothing written but the count
        # the count lives an hour, like a creation's
        self.assertTrue(0 < self.s.redis.cmd("PTTL", made) <= 3600000)
        # a master key, which has no hourly limit, still sees who holds it
        r = self.s.create(account_body([cpf()], taxid=held[4]["taxID"]))
        self.assertEqual((r.status, r.json["error"]),
                         (400, "taxID: already registered in this environment (account %s)"
                               % held[4]["id"]))

    def test_a_duplicate_found_when_made_known_is_refused_alike(self):
        # two creations of one taxID that both passed account_admit: account_index, which
        # makes an account known, refuses the later one the same way (counted in the key's
        # hour, the holder named only to who may know it). Called here as pixrelay calls it.
        top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
        sys.path.insert(0, os.path.join(top, "tools"))
        from embed_scripts import expand
        sha = hashlib.sha1(expand(os.path.join(top, "src/store/lua/account_index.lua"))).hexdigest()
        holder = self.s.create(account_body([cpf()])).json["data"]  # the platform owns it
        shop = self.s.create(account_body([cpf()])).json["data"]
        shop_key = self.s.px[0].create_key("sandbox", account=shop["id"])["id"]
        platform_key = self.s.px[0].create_key("sandbox")["id"]
        g = "pixrelay:{sandbox}:"
        accounts = self.s.redis.cmd("ZCARD", g + "accounts")

        def index(owner, key_id, new_id):
            now = str(int(time.time() * 1000))
            return self.s.redis.cmd("EVALSHA", sha, "1", g + "taxids", g, new_id,
                                    holder["taxID"], now, "0", "2", "evp-" + new_id,
                                    holder["taxID"], owner, "approved", key_id, "4", "0", "0",
                                    "0", cpf())

        new_ids = ["01M8C2ZVAKDFM1T3RKJBWQQ1%02d" % i for i in range(3)]
        self.assertEqual(index(shop["id"], shop_key, new_ids[0]), ["duplicate", ""])
        self.assertEqual(self.s.redis.cmd("ZCARD", g + "made:" + shop_key), 1)
        self.assertEqual(index(self.s.platform, platform_key, new_ids[1]),
                         ["duplicate", holder["id"]])
        self.assertEqual(self.s.redis.cmd("ZCARD", g + "made:" + platform_key), 1)
        self.assertEqual(index(shop["id"], "", new_ids[2]), ["duplicate", holder["id"]])
        # nothing else was written
        self.assertEqual(self.s.redis.cmd("ZCARD", g + "accounts"), accounts)
        for new_id in new_ids:
            self.assertEqual(self.s.redis.cmd("HEXISTS", g + "owners", new_id), 0)
            self.assertEqual(self.s.redis.cmd("HEXISTS", g + "pixkeys", "evp-" + new_id), 0)

    def test_two_processes_creating_at_once_make_exactly_the_limit(self):
        # a key of an account of its own: the account's hour is untouched
        shop = self.s.create(account_body([cpf()])).json["data"]
        k = self.s.px[0].create_key("sandbox", account=shop["id"])
        before = self.s.stored()
        results = []

        def one(i):
            r = self.s.create(account_body([cpf()]), k["key"], via=i % 2)
            results.append(r.status)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(sorted(results), [200] * 4 + [429] * 36)
        self.assertEqual(self.s.redis.cmd("ZCARD", "pixrelay:{sandbox}:made:" + shop["id"]), 4)
        # the ones refused after their record was written (another process got there
        # first) left nothing behind: their record and files are deleted at once
        wait_for(lambda: self.s.stored()[0] == before[0] + 4 and self.s.orphans() == [],
                 what="no records or files of refused accounts")


class PerEnvironment(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Stack(["--max-accounts", "6"], n=2)

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def test_accounts_per_environment_under_concurrency(self):
        results = []

        def one(i):
            r = self.s.create(account_body([cpf()]), via=i % 2)
            results.append(r.status)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(sorted(results), [200] * 6 + [403] * 14)
        r = self.s.create(account_body([cpf()]))
        self.assertEqual((r.status, r.json["error"]),
                         (403, "this environment holds the most business accounts it may "
                               "(max-accounts = 6); the operator must raise the limit"))
        wait_for(lambda: self.s.stored()[0] == 6 and self.s.orphans() == [],
                 what="no records or files of refused accounts")
        # production counts its own
        r = self.s.create(account_body([cpf()]), self.s.live_master, self.s.live_platform)
        self.assertEqual(r.status, 200, r)


class FileStorage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Stack(["--max-stored-file-bytes", str(STORED)])

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def test_file_bytes_per_environment(self):
        for _ in range(2):
            self.assertEqual(self.s.create(account_body([cpf()])).status, 200)
        before = self.s.stored()
        r = self.s.create(account_body([cpf()]))
        self.assertEqual((r.status, r.json["error"]),
                         (403, "this environment keeps the most account files it may "
                               "(max-stored-file-bytes = %d, %d bytes kept); the operator must "
                               "raise the limit" % (STORED, 2 * DEFAULT_BYTES)))
        self.assertEqual(self.s.stored(), before)
        # a smaller account still fits
        small = account_body([cpf()], documents=[pdf(20)], reps=[rep(cpf(), face=PNG, front=PNG)])
        self.assertEqual(self.s.create(small).status, 200)
        self.assertEqual(self.s.redis.cmd("HGET", "pixrelay:{sandbox}:usage", "file_bytes"),
                         str(2 * DEFAULT_BYTES + 20 + len(PNG_BYTES)))
        # production keeps its own
        r = self.s.create(account_body([cpf()]), self.s.live_master, self.s.live_platform)
        self.assertEqual(r.status, 200, r)


if __name__ == "__main__":
    unittest.main(verbosity=2)
