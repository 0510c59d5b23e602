"""Files at rest: everything in the embedded Redis's data directory is private
to pixrelay's user (issue 9, item 7). The AOF holds every secret (webhook
signing and ingest secrets, API key hashes) and every KYC file; a data
directory that existed before pixrelay (mkdir gives 0755, files 0644) used to
show them to every user of the machine.

The real binary with its embedded redis-server: the data directory is made
beforehand with the usual modes and a world-readable file in it, pixrelay
serve starts, data is created through the API and the CLI (an account with
KYC files, a charge paid, secrets rotated), the AOF is rewritten, and every
file and directory under the data directory is checked; then an AOF left
world-readable (as an older pixrelay left it) is fixed at the next start.
"""
import base64
import os
import stat
import unittest

from harness import Pixrelay, Workdir, auth, init_platforms, unix_cmd, wait_for

PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n").decode()
PNG = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")).decode()


def modes(top):
    """{path relative to top: mode} of top and everything under it."""
    found = {".": stat.S_IMODE(os.lstat(top).st_mode)}
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(root, n)
            found[os.path.relpath(p, top)] = stat.S_IMODE(os.lstat(p).st_mode)
    return found


class FilesAtRest(unittest.TestCase):
    def setUp(self):
        self.wd = Workdir()
        self.px = Pixrelay(self.wd.path)  # no redis: the embedded one, in px.data_dir
        self.sock = os.path.join(self.px.data_dir, "redis.sock")
        self.old_umask = os.umask(0o022)  # as a login shell has it

    def tearDown(self):
        os.umask(self.old_umask)
        if self.px.proc:
            self.px.stop()
        self.wd.cleanup()

    def assertPrivate(self, found):
        opened = {p: "%04o" % m for p, m in found.items() if m & 0o077}
        self.assertEqual(opened, {}, "open to other users: %s" % opened)

    def test_every_file_private(self):
        os.mkdir(self.px.data_dir, 0o755)
        os.chmod(self.px.data_dir, 0o755)
        with open(os.path.join(self.px.data_dir, "notes.txt"), "w") as f:
            f.write("left here before pixrelay\n")
        os.chmod(os.path.join(self.px.data_dir, "notes.txt"), 0o644)
        os.mkdir(os.path.join(self.px.data_dir, "old"), 0o755)

        self.px.start()
        self.px.wait_ready()
        log = self.px.log()
        self.assertIn("%s was open to other users (mode 0755); it is now 0700"
                      % self.px.data_dir, log)
        self.assertIn("%s/notes.txt was open to other users (mode 0644); it is now 0600"
                      % self.px.data_dir, log)

        # data: keys, an account with KYC files, a paid charge, rotated secrets
        init = init_platforms(self.px)
        platform = init["sandbox"]
        master = self.px.create_key("sandbox", master=True)["key"]
        body = {"officialName": "Empresa Ltda", "tradeName": "Loja", "taxID": "11222333000181",
                "documents": [PDF],
                "address": {"zipcode": "01310-100", "street": "Av. Paulista", "number": "1000",
                            "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
                "representatives": [{"name": "Fulano", "birthDate": "1990-05-17",
                                     "email": "f@example.com", "taxID": "52998224725",
                                     "phone": "+55 11 94321-4321",
                                     "documents": {"picture_face": PNG, "picture_identity_front": PNG,
                                                   "picture_identity_type": "RG"}}]}
        r = self.px.request("POST", "/v1/baas/account/create", body=body,
                            headers=auth(master, platform))
        self.assertEqual(r.status, 200, r)
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 500},
                            headers=auth(master, platform))
        self.assertEqual(r.status, 200, r)
        r = self.px.request("POST", "/v1/charge/pix/%s/simulate-payment" % r.json["data"]["id"],
                            headers=auth(master, platform))
        self.assertEqual(r.status, 200, r)
        self.px.cli("secrets", "rotate", "--env", "sandbox")

        # a rewrite makes new AOF files (base and incr) and a new manifest
        self.assertEqual(unix_cmd(self.sock, "BGREWRITEAOF", timeout=10),
                         "Background append only file rewriting started")
        wait_for(lambda: unix_cmd(self.sock, "INFO", "persistence", timeout=10).find(
            "aof_rewrite_in_progress:0") >= 0, what="the AOF rewrite")
        found = modes(self.px.data_dir)
        for name in ["appendonlydir", "redis.conf", "redis.log", "redis.pid", "pixrelay.lock",
                     "notes.txt", "old"]:
            self.assertIn(name, found)
        aof = [p for p in found if p.startswith("appendonlydir/")]
        self.assertTrue(any(p.endswith(".base.rdb") for p in aof), aof)
        self.assertTrue(any(p.endswith(".incr.aof") for p in aof), aof)
        self.assertTrue(any(p.endswith(".manifest") for p in aof), aof)
        self.assertPrivate(found)
        self.assertEqual(found["."], 0o700)
        self.assertEqual(found["appendonlydir"], 0o700)
        self.assertEqual(found["redis.conf"], 0o600)
        self.assertEqual(self.px.stop(), 0)

        # an AOF left readable by others (an older pixrelay, a restored
        # backup, a hand-made copy) is fixed at the next start, data intact
        for p in aof + ["redis.conf", "redis.log"]:
            full = os.path.join(self.px.data_dir, p)
            if os.path.exists(full):
                os.chmod(full, 0o644)
        os.chmod(os.path.join(self.px.data_dir, "appendonlydir"), 0o755)
        self.px.start()
        self.px.wait_ready()
        self.assertIn("appendonlydir was open to other users (mode 0755); it is now 0700",
                      self.px.log()[self.px.log_offset:])
        self.assertPrivate(modes(self.px.data_dir))
        r = self.px.request("GET", "/v1/baas/balance", headers=auth(master, platform))
        self.assertEqual(r.status, 200, r)
        self.assertGreater(r.json["data"]["balance"], 0)
        self.assertEqual(self.px.stop(), 0)

    def test_cli_with_its_own_redis(self):
        # the CLI starts the embedded Redis itself when no serve runs
        os.mkdir(self.px.data_dir, 0o755)
        os.chmod(self.px.data_dir, 0o755)
        self.px.cli("init")
        self.px.create_key("production", description="ci")
        self.assertPrivate(modes(self.px.data_dir))

    def test_refused_when_not_a_directory(self):
        with open(self.px.data_dir, "w") as f:
            f.write("x")
        p = self.px.cli("keys", "list", check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("data directory %s is not a directory" % self.px.data_dir, p.stderr)


if __name__ == "__main__":
    unittest.main()
