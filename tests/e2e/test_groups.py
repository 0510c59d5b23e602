"""Groups that nobody can claim (spec 4.3; issue 9, item 5).

Two accounts are one group when they share a member (a representative, by
CPF). A member is only what the account's creator wrote, so it counts once the
operator has approved both accounts' KYC (`pixrelay review`), and only between
accounts of one owner. The attack: a new account that names a victim's
representative tries to move the victim's balance to itself with
internal-transfer. Every case runs with the two accounts in one shard and in
two (transfers across shards are three scripts).
"""
import hashlib
import json
import os
import stat
import unittest

from accountdata import JPG_BYTES, PDF_BYTES, PNG_BYTES, account_body, cpf
from harness import Pixrelay, auth, connect_bank, init_platforms, shard_of, start_stack, stop_stack
from test_ingest import wh_headers

GROUP = ("the accounts of from_key and to_key must both belong to the caller's group: the "
         "caller's account, or an account of the same owner sharing a member with it, both "
         "approved in the operator's KYC review")
PENDING = ("the accounts of from_key and to_key must both belong to the caller's group, and the "
           "caller's account is waiting for the operator's KYC review: until it is approved, its "
           "group is itself alone")
REJECTED = ("the accounts of from_key and to_key must both belong to the caller's group, and the "
            "caller's account was rejected in the operator's KYC review: its group is itself alone")


class Groups(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # the sandbox reviewed like production (sandbox-review), over two shards so that
        # both "one shard" and "two shards" come quickly
        start_stack(cls, args=["--sandbox-review", "1", "--shards", "2"])
        init = init_platforms(cls.px)
        cls.platform = init["sandbox"]
        cls.live_platform = init["production"]
        cls.master = cls.px.create_key("sandbox", master=True)["key"]
        cls.live_master = cls.px.create_key("production", master=True)["key"]

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    # --- helpers ---

    def create(self, cpfs, key=None, owner=None, env="sandbox", **extra):
        key = key or (self.live_master if env == "production" else self.master)
        if owner is None and key in (self.master, self.live_master):
            owner = self.live_platform if env == "production" else self.platform
        r = self.px.request("POST", "/v1/baas/account/create", body=account_body(cpfs, **extra),
                            headers=auth(key, owner))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]

    def create_in(self, cpfs, other, same_shard, **kw):
        """An account in the shard of account `other` (same_shard) or in another one."""
        for _ in range(40):
            a = self.create(cpfs, **kw)
            if (shard_of(a["id"]) == shard_of(other["id"])) == same_shard:
                return a
            # a spare account with these members: take it out of every group
            self.review("reject", a["id"], env=kw.get("env", "sandbox"))
        self.fail("no account in the wanted shard after 40 tries")

    def review(self, verb, *args, env="sandbox", check=True):
        return self.px.cli("review", verb, *args, "--env", env, check=check)

    def fund(self, account, amount):
        """Pay a sandbox charge of `account`; returns what its balance grew by."""
        h = auth(self.master, account)
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": amount}, headers=h)
        self.assertEqual(r.status, 200, r)
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % r.json["data"]["id"],
                            headers=h)
        self.assertEqual(r.status, 200, r)
        return amount - r.json["data"]["fee"]

    def balance(self, account, key=None):
        key = key or self.master
        r = self.px.request("GET", "/v1/baas/balance", headers=auth(key, account))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["balance"]

    def transfer(self, amount, src, dst, account, key=None, src_key=0, dst_key=0):
        """Move `amount` from account src to account dst (by their Pix keys: 0 the EVP,
        1 the CNPJ), acting as `account` (with `key`, or the master key)."""
        body = {"amount": amount, "from_key": src["pixKeys"][src_key]["key"],
                "to_key": dst["pixKeys"][dst_key]["key"]}
        key = key or self.master
        return self.px.request("POST", "/v1/baas/internal-transfer", body=body,
                               headers=auth(key, account if key in (self.master, self.live_master)
                                            else None))

    def assertRefused(self, r, message):
        self.assertEqual((r.status, r.json), (403, {"error": message, "status": 403, "data": []}))

    # --- the attack ---

    def test_an_account_naming_a_victims_representative_cannot_move_its_money(self):
        victim_cpf = cpf()
        victim = self.create([victim_cpf])
        self.assertEqual(victim["kycStatus"], "PENDING")
        self.review("approve", victim["id"])
        net = self.fund(victim["id"], 50000)
        for same_shard in (True, False):
            with self.subTest(same_shard=same_shard):
                attacker = self.create_in([cpf(), victim_cpf], victim, same_shard)
                self.assertEqual(attacker["kycStatus"], "PENDING")
                # the attacker holds an account key of its own account, as a merchant does
                key = self.px.create_key("sandbox", account=attacker["id"])["key"]
                for src_key in (0, 1):  # the victim's EVP key, its CNPJ
                    r = self.transfer(net, victim, attacker, None, key=key, src_key=src_key)
                    self.assertRefused(r, PENDING)
                # the same through a master key acting for the attacker
                self.assertRefused(self.transfer(net, victim, attacker, attacker["id"]), PENDING)
                self.assertRefused(self.transfer(1, victim, attacker, attacker["id"]), PENDING)
                # the operator sees who else names the CPF, and rejects the account
                shown = json.loads(self.review("show", attacker["id"]).stdout)
                claim = [c for c in shown["claims"] if c["taxID"] == victim_cpf][0]
                self.assertIn({"id": victim["id"], "kycStatus": "APPROVED",
                               "owner": self.platform, "sameOwner": True}, claim["accounts"])
                out = self.review("reject", attacker["id"], "--reason", "not a representative")
                self.assertEqual(out.stdout, "account %s: KYC rejected (it was PENDING)\n"
                                 % attacker["id"])
                self.assertRefused(self.transfer(net, victim, attacker, None, key=key), REJECTED)
                self.assertEqual(self.balance(attacker["id"]), 0)
                self.assertEqual(self.balance(victim["id"]), net)
        # the victim's money is still its own to move
        mine = self.create_in([victim_cpf], victim, False)
        self.review("approve", mine["id"])
        r = self.transfer(net, victim, mine, victim["id"])
        self.assertEqual((r.status, r.json), (200, {"amount": net, "status": "DONE"}))
        self.assertEqual((self.balance(victim["id"]), self.balance(mine["id"])), (0, net))

    def test_approved_by_mistake_under_another_owner_still_cannot(self):
        """An owner's accounts never make a group with another owner's, even approved."""
        victim_cpf = cpf()
        victim = self.create([victim_cpf])
        self.review("approve", victim["id"])
        net = self.fund(victim["id"], 9000)
        # a merchant (its own account, approved) creates accounts with its account key:
        # they are the merchant's, not the platform's
        merchant = self.create([cpf()])
        self.review("approve", merchant["id"])
        mkey = self.px.create_key("sandbox", account=merchant["id"])["key"]
        for same_shard in (True, False):
            with self.subTest(same_shard=same_shard):
                for _ in range(40):
                    attacker = self.create([victim_cpf], key=mkey)
                    if (shard_of(attacker["id"]) == shard_of(victim["id"])) == same_shard:
                        break
                self.assertEqual(attacker["owner"], merchant["id"])
                self.review("approve", attacker["id"])
                key = self.px.create_key("sandbox", account=attacker["id"])["key"]
                self.assertRefused(self.transfer(net, victim, attacker, None, key=key), GROUP)
                self.assertRefused(self.transfer(net, victim, attacker, attacker["id"]), GROUP)
                # nor the other way round: the victim's side cannot pull the attacker's
                self.assertRefused(self.transfer(1, attacker, victim, victim["id"]), GROUP)
        self.assertEqual(self.balance(victim["id"]), net)

    # --- groups that are real ---

    def test_a_group_works_once_both_accounts_are_approved(self):
        for same_shard in (True, False):
            with self.subTest(same_shard=same_shard):
                shared = cpf()
                a = self.create([shared, cpf()])
                b = self.create_in([shared], a, same_shard)
                net = self.fund(a["id"], 20000)
                # neither approved; then a alone; then both
                self.assertRefused(self.transfer(100, a, b, a["id"]), PENDING)
                self.review("approve", a["id"])
                self.assertRefused(self.transfer(100, a, b, a["id"]), GROUP)
                self.assertRefused(self.transfer(100, a, b, b["id"]), PENDING)
                out = self.review("approve", b["id"], "--json")
                self.assertEqual(json.loads(out.stdout), {"id": b["id"], "kycStatus": "APPROVED",
                                                          "previous": "PENDING"})
                r = self.transfer(1500, a, b, a["id"], dst_key=1)
                self.assertEqual((r.status, r.json), (200, {"amount": 1500, "status": "DONE"}))
                # b may move a's money too (spec 4.3: a shares a member with b)
                r = self.transfer(500, a, b, b["id"], src_key=1)
                self.assertEqual((r.status, r.json), (200, {"amount": 500, "status": "DONE"}))
                self.assertEqual((self.balance(a["id"]), self.balance(b["id"])), (net - 2000, 2000))
                # a rejection, also after an approval, ends the group at once...
                self.review("reject", b["id"])
                self.assertRefused(self.transfer(1, a, b, a["id"]), GROUP)
                self.assertRefused(self.transfer(1, b, a, b["id"]), REJECTED)
                # ... and a new approval restores it
                out = self.review("approve", b["id"])
                self.assertEqual(out.stdout, "account %s: KYC approved (it was REJECTED)\n" % b["id"])
                r = self.transfer(2000, b, a, a["id"])
                self.assertEqual((r.status, r.json), (200, {"amount": 2000, "status": "DONE"}))
                self.assertEqual((self.balance(a["id"]), self.balance(b["id"])), (net, 0))

    def test_accounts_of_one_merchant_make_groups(self):
        merchant = self.create([cpf()])
        self.review("approve", merchant["id"])
        mkey = self.px.create_key("sandbox", account=merchant["id"])["key"]
        shared = cpf()
        a = self.create([shared], key=mkey)
        b = self.create([shared], key=mkey)
        self.assertEqual((a["owner"], b["owner"]), (merchant["id"], merchant["id"]))
        self.review("approve", a["id"])
        self.review("approve", b["id"])
        net = self.fund(a["id"], 3000)
        akey = self.px.create_key("sandbox", account=a["id"])["key"]
        r = self.transfer(net, a, b, None, key=akey)
        self.assertEqual((r.status, r.json), (200, {"amount": net, "status": "DONE"}))
        self.assertEqual(self.balance(b["id"]), net)

    def test_production_accounts_wait_for_review_by_default(self):
        """No setting needed in production; the victim's money arrives by the provider's
        notification (ingest), as real money does."""
        victim_cpf = cpf()
        victim = self.create([victim_cpf], env="production")
        self.assertEqual(victim["kycStatus"], "PENDING")
        self.review("approve", victim["id"], env="production")
        connect_bank(self.px, account=victim["id"])
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 70000},
                            headers=auth(self.live_master, victim["id"]))
        self.assertEqual(r.status, 200, r)
        charge, fee = r.json["data"]["id"], r.json["data"]["fee"]
        body = json.dumps({"id": "up-" + charge, "event": "EVENT:CHARGE_PAID",
                           "data": {"id": charge}}).encode()
        r = self.px.request("POST", "/v1/webhooks/ingest/" + victim["id"], raw=body,
                            headers=wh_headers(victim["secrets"]["ingestSecret"], body,
                                               msg_id="up-" + charge))
        self.assertEqual(r.status, 200, r)
        net = 70000 - fee
        self.assertEqual(self.balance(victim["id"], self.live_master), net)
        for same_shard in (True, False):
            with self.subTest(same_shard=same_shard):
                for _ in range(40):
                    attacker = self.create([victim_cpf], env="production")
                    if (shard_of(attacker["id"]) == shard_of(victim["id"])) == same_shard:
                        break
                self.assertEqual(attacker["kycStatus"], "PENDING")
                key = self.px.create_key("production", account=attacker["id"])["key"]
                self.assertRefused(self.transfer(net, victim, attacker, None, key=key), PENDING)
                listed = json.loads(self.px.cli("review", "list", "--env", "production",
                                                "--limit", "1000", "--json").stdout)
                ids = [a["id"] for a in listed["accounts"]]
                self.assertIn(attacker["id"], ids)
                self.assertNotIn(victim["id"], ids)
                entry = listed["accounts"][ids.index(attacker["id"])]
                self.assertEqual(entry["representatives"], [victim_cpf])
                self.assertGreaterEqual(entry["alsoClaimedBy"], 1)
        self.assertEqual(self.balance(victim["id"], self.live_master), net)

    def test_sandbox_accounts_are_approved_at_creation_by_default(self):
        other = Pixrelay(self.wd.path, self.redis, name="default-sandbox").start()
        try:
            other.wait_ready()
            shared = cpf()
            made = []
            for _ in range(2):
                r = other.request("POST", "/v1/baas/account/create", body=account_body([shared]),
                                  headers=auth(self.master, self.platform))
                self.assertEqual(r.status, 200, r)
                self.assertEqual(r.json["data"]["kycStatus"], "APPROVED")
                made.append(r.json["data"])
            net = self.fund(made[0]["id"], 2000)
            r = self.transfer(net, made[0], made[1], made[1]["id"])
            self.assertEqual((r.status, r.json), (200, {"amount": net, "status": "DONE"}))
            # production still waits
            r = other.request("POST", "/v1/baas/account/create", body=account_body([shared]),
                              headers=auth(self.live_master, self.live_platform))
            self.assertEqual(r.json["data"]["kycStatus"], "PENDING")
        finally:
            other.stop()

    # --- the review commands ---

    def test_review_list_show_and_files(self):
        shared, own = cpf(), cpf()
        first = self.create([shared, own])
        second = self.create([shared])
        listed = json.loads(self.px.cli("review", "list", "--env", "sandbox", "--limit", "1000",
                                        "--json").stdout)
        ids = [a["id"] for a in listed["accounts"]]
        self.assertLess(ids.index(first["id"]), ids.index(second["id"]))  # oldest first
        self.assertEqual(listed["total"], len(ids))
        entry = listed["accounts"][ids.index(first["id"])]
        self.assertEqual({k: entry[k] for k in ("officialName", "taxID", "owner", "createdAt")},
                         {"officialName": first["officialName"], "taxID": first["taxID"],
                          "owner": self.platform, "createdAt": first["createdAt"]})
        self.assertEqual(entry["representatives"], sorted([shared, own]))
        self.assertEqual(entry["alsoClaimedBy"], 1)
        table = self.px.cli("review", "list", "--env", "sandbox", "--limit", "1000").stdout
        self.assertIn("accounts waiting for review\n", table)
        self.assertRegex(table, r"(?m)^%s .* %s " % (first["id"], first["taxID"]))

        d = os.path.join(self.wd.path, "kyc-files")
        shown = self.review("show", first["id"], "--files", d).stdout
        doc, wrote = shown.split("\n}\n")
        doc = json.loads(doc + "\n}")
        self.assertEqual((doc["id"], doc["kind"], doc["kycStatus"], doc["taxID"], doc["owner"]),
                         (first["id"], "business", "PENDING", first["taxID"], self.platform))
        self.assertEqual(doc["address"]["zipcode"], "01310100")
        self.assertEqual([r["taxID"] for r in doc["representatives"]][0], shared)
        self.assertEqual(doc["representatives"][0]["documents"]["picture_face"]["type"], "png")
        self.assertEqual((doc["fileCount"], doc["fileBytes"]),
                         (3, len(PDF_BYTES) + len(PNG_BYTES) + len(JPG_BYTES)))
        self.assertNotIn("secrets", doc)
        self.assertNotIn(first["secrets"]["ingestSecret"], shown)
        claim = [c for c in doc["claims"] if c["taxID"] == shared][0]
        self.assertEqual(claim, {"taxID": shared, "otherAccounts": 1, "accounts": [
            {"id": second["id"], "kycStatus": "PENDING", "owner": self.platform, "sameOwner": True}]})
        for data, ext in ((PDF_BYTES, "pdf"), (PNG_BYTES, "png"), (JPG_BYTES, "jpg")):
            path = os.path.join(d, "%s.%s" % (hashlib.sha256(data).hexdigest(), ext))
            self.assertIn("wrote %s (%d bytes)" % (path, len(data)), wrote)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), data)
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)

        # decided accounts leave the queue; the reason is kept
        self.review("approve", first["id"])
        self.review("reject", second["id"], "--reason", "face does not match the ID")
        listed = json.loads(self.px.cli("review", "list", "--env", "sandbox", "--limit", "1000",
                                        "--json").stdout)
        ids = [a["id"] for a in listed["accounts"]]
        self.assertNotIn(first["id"], ids)
        self.assertNotIn(second["id"], ids)
        doc = json.loads(self.review("show", second["id"]).stdout)
        self.assertEqual((doc["kycStatus"], doc["reviewReason"]),
                         ("REJECTED", "face does not match the ID"))
        self.assertRegex(doc["reviewedAt"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")

    def test_review_files_go_only_where_no_one_else_can_reach_them(self):
        # the file names are known to whoever uploaded the files (their SHA-256): a
        # directory another user may write to (say /tmp/kyc, made by that user) would
        # let them read the KYC files, or plant <sha256>.pdf as a link and have the
        # operator write the upload over a file of the operator's
        a = self.create([cpf()])
        pdf = "%s.pdf" % hashlib.sha256(PDF_BYTES).hexdigest()
        msg = ("pixrelay review show: %s must be a directory of this user that no other user "
               "can write to (it receives KYC files); name a new one\n")
        shared = os.path.join(self.wd.path, "kyc-shared")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        group = os.path.join(self.wd.path, "kyc-group")
        os.mkdir(group)
        os.chmod(group, 0o770)
        mine = os.path.join(self.wd.path, "kyc-mine")
        os.mkdir(mine, 0o700)
        link = os.path.join(self.wd.path, "kyc-link")
        os.symlink(mine, link)
        afile = os.path.join(self.wd.path, "kyc-file")
        open(afile, "w").close()
        for d in (shared, group, link, afile):
            p = self.review("show", a["id"], "--files", d, check=False)
            self.assertEqual(p.returncode, 1, d)
            self.assertTrue(p.stderr.endswith(msg % d), p.stderr)
            self.assertNotIn("wrote ", p.stdout)
        self.assertEqual(os.listdir(shared) + os.listdir(group) + os.listdir(mine), [])
        # a link in the operator's own directory is not followed
        victim = os.path.join(self.wd.path, "operator-file")
        with open(victim, "w") as f:
            f.write("the operator's\n")
        os.symlink(victim, os.path.join(mine, pdf))
        p = self.review("show", a["id"], "--files", mine, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("pixrelay review show: cannot write %s/%s: " % (mine, pdf), p.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "the operator's\n")
        # a file left from before, open to others, is private again once rewritten
        os.unlink(os.path.join(mine, pdf))
        with open(os.path.join(mine, pdf), "w") as f:
            f.write("old")
        os.chmod(os.path.join(mine, pdf), 0o644)
        os.chmod(mine, 0o755)  # others may read the names, not write
        self.review("show", a["id"], "--files", mine)
        with open(os.path.join(mine, pdf), "rb") as f:
            self.assertEqual(f.read(), PDF_BYTES)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(mine, pdf)).st_mode), 0o600)

    def test_review_refusals(self):
        a = self.create([cpf()])
        cases = [
            (("approve", "01ARZ3NDEKTSV4RRFFQ69G5FAV"), 1,
             "pixrelay review approve: no account 01ARZ3NDEKTSV4RRFFQ69G5FAV in sandbox\n"),
            (("show", "nope"), 1, "pixrelay review show: no account nope in sandbox\n"),
            (("approve", self.platform), 1,
             "pixrelay review approve: %s is the platform account of sandbox, which has no KYC "
             "review\n" % self.platform),
            # an account of the other environment is not there
            (("reject", a["id"], "--env", "production"), 1,
             "pixrelay review reject: no account %s in production\n" % a["id"]),
            (("approve",), 2, "pixrelay review approve: ACCOUNT_ID is required\n"),
            (("approve", a["id"], "--reason", "x"), 2,
             "pixrelay review approve: --reason goes with reject\n"),
            (("list", "--limit", "0"), 2, "pixrelay review list: --limit must be from 1 to 1000\n"),
        ]
        for args, code, err in cases:
            env = () if "--env" in args else ("--env", "sandbox")
            p = self.px.cli("review", *args, *env, check=False)
            self.assertEqual((p.returncode, p.stderr.splitlines()[-1] + "\n"), (code, err), args)
        p = self.px.cli("review", "approve", a["id"], check=False)
        self.assertEqual((p.returncode, p.stderr),
                         (2, "pixrelay review: --env sandbox|production is required\n"))
        p = self.px.cli("review", "frobnicate", "--env", "sandbox", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertTrue(p.stderr.startswith("pixrelay review: unknown action 'frobnicate'\n"))
        # nothing of it changed the account
        self.assertEqual(json.loads(self.review("show", a["id"]).stdout)["kycStatus"], "PENDING")


if __name__ == "__main__":
    unittest.main(verbosity=2)
