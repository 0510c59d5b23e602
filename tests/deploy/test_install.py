"""`meson install` of the build under test, into a temporary DESTDIR, and
what systemd makes of what it installed.

systemd-analyze verify checks that ExecStart names an executable; the
installed unit names <prefix>/bin/pixrelay, which exists only under the
DESTDIR. So the test verifies a copy of the installed unit whose ExecStart
points at the DESTDIR's binary (the only change, made textually and checked),
with MANPATH pointing at the DESTDIR's man pages so that the
Documentation=man:pixrelay(1) check finds the installed page.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.environ.get("PIXRELAY_BUILD_DIR", os.path.join(ROOT, "build"))
MESON = shutil.which("meson") or "/usr/bin/meson"
ANALYZE = shutil.which("systemd-analyze") or "/usr/bin/systemd-analyze"
SYSUSERS = shutil.which("systemd-sysusers") or "/usr/bin/systemd-sysusers"
TMPFILES = shutil.which("systemd-tmpfiles") or "/usr/bin/systemd-tmpfiles"
UNIT_SRC = os.path.join(ROOT, "deploy", "pixrelay@.service")


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(args, **kw)


class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for tool in (MESON, ANALYZE, SYSUSERS, TMPFILES):
            if not os.path.exists(tool):
                raise AssertionError("%s is not installed (bash deploy/install-deps.sh --test)"
                                     % tool)
        cls.tmp = tempfile.mkdtemp(prefix="pixrelay-install-")
        cls.dest = os.path.join(cls.tmp, "dest")
        p = run([MESON, "install", "-C", BUILD, "--destdir", cls.dest, "--no-rebuild",
                 "--quiet"])
        if p.returncode != 0:
            raise AssertionError("meson install failed:\n" + p.stdout + p.stderr)
        p = run([MESON, "introspect", "--installed", BUILD], check=True)
        # source (in the tree or the build dir) -> installed path
        cls.installed = {os.path.relpath(k, ROOT) if k.startswith(ROOT + "/") else k: v
                         for k, v in json.loads(p.stdout).items()}
        opts = json.loads(run([MESON, "introspect", "--buildoptions", BUILD],
                              check=True).stdout)
        cls.prefix = next(o["value"] for o in opts if o["name"] == "prefix")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def at(self, source):
        """The DESTDIR path of what `source` installs."""
        for k, v in self.installed.items():
            if k == source or k.endswith("/" + source):
                return self.dest + v
        raise AssertionError("%s is not installed; installed: %s" % (source, self.installed))

    def unit_path(self):
        return self.at("pixrelay@.service")

    # ---- what is installed ----

    def test_everything_is_installed_where_systemd_man_and_bash_look(self):
        p = self.prefix
        expect = {
            "pixrelay": p + "/bin/pixrelay",
            "pixrelay@.service": p + "/lib/systemd/system/pixrelay@.service",
            "deploy/pixrelay.sysusers": p + "/lib/sysusers.d/pixrelay.conf",
            "deploy/pixrelay.tmpfiles": p + "/lib/tmpfiles.d/pixrelay.conf",
            "deploy/pixrelay.bash-completion":
                p + "/share/bash-completion/completions/pixrelay",
            "docs/pixrelay.1": p + "/share/man/man1/pixrelay.1",
            "deploy/pixrelay.conf.example":
                p + "/share/doc/pixrelay/examples/pixrelay.conf.example",
            "deploy/nginx.conf": p + "/share/doc/pixrelay/examples/nginx.conf",
            "deploy/nginx-selfcert.sh": p + "/share/doc/pixrelay/examples/nginx-selfcert.sh",
        }
        for source, path in expect.items():
            self.assertEqual(self.at(source), self.dest + path, source)
            self.assertTrue(os.path.isfile(self.dest + path), path)
        self.assertTrue(os.access(self.dest + p + "/bin/pixrelay", os.X_OK))
        docs = os.path.join(self.dest + p, "share/doc/pixrelay")
        for name in ("README.md", "configuration.md", "deployment.md", "install.md",
                     "postbacks.md", "openapi.yaml"):
            self.assertTrue(os.path.isfile(os.path.join(docs, name)), name)
        self.assertFalse(os.path.exists(os.path.join(docs, "pixrelay.1")))

    def test_installed_binary_runs(self):
        p = run([self.at("pixrelay"), "version"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^pixrelay \d+\.\d+\.\d+\n$")

    def test_installed_unit_is_the_shipped_one_with_this_prefix(self):
        with open(UNIT_SRC) as f:
            src = f.read()
        with open(self.unit_path()) as f:
            got = f.read()
        want = src.replace("/usr/local/bin/pixrelay", self.prefix + "/bin/pixrelay") \
                  .replace("/usr/local/share/doc/pixrelay", self.prefix + "/share/doc/pixrelay")
        self.assertEqual(got, want)

    # ---- systemd ----

    def verify_copy(self):
        """The installed unit with ExecStart pointing into the DESTDIR."""
        with open(self.unit_path()) as f:
            text = f.read()
        binary = self.prefix + "/bin/pixrelay"
        self.assertEqual(len(re.findall(r"(?m)^ExecStart=" + re.escape(binary) + " ", text)), 1)
        text = text.replace("ExecStart=" + binary + " ", "ExecStart=" + self.dest + binary + " ")
        d = os.path.join(self.tmp, "verify")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "pixrelay@.service")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_systemd_analyze_verify(self):
        env = dict(os.environ, MANPATH=self.dest + self.prefix + "/share/man",
                   SYSTEMD_LOG_LEVEL="notice")
        path = self.verify_copy()
        p = run([ANALYZE, "verify", "--man=yes", path], env=env, cwd=self.tmp)
        self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
        # the check has teeth: without the man page it fails
        env["MANPATH"] = os.path.join(self.tmp, "no-man")
        p = run([ANALYZE, "verify", "--man=yes", path], env=env, cwd=self.tmp)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("man pixrelay", p.stdout + p.stderr)

    def test_systemd_analyze_security_rates_it_2_or_better(self):
        p = run([ANALYZE, "security", "--offline=true", "--threshold=20", self.unit_path()],
                cwd=self.tmp)
        m = re.search(r"Overall exposure level for pixrelay@\S*: (\d+\.\d+) (\w+)", p.stdout)
        self.assertIsNotNone(m, p.stdout + p.stderr)
        self.assertLessEqual(float(m.group(1)), 2.0, p.stdout)
        self.assertEqual(m.group(2), "OK")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_sysusers_creates_the_service_user(self):
        root = os.path.join(self.tmp, "sysroot")
        os.makedirs(os.path.join(root, "etc"), exist_ok=True)
        p = run([SYSUSERS, "--root", root, self.at("deploy/pixrelay.sysusers")])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(root, "etc", "passwd")) as f:
            users = {line.split(":")[0]: line.strip().split(":") for line in f}
        self.assertIn("pixrelay", users)
        u = users["pixrelay"]
        self.assertLess(int(u[2]), 1000)  # a system user
        self.assertEqual(u[5], "/var/lib/pixrelay")
        self.assertIn(u[6], ("/usr/sbin/nologin", "/sbin/nologin"))
        # the bank door's group (bank-listen-group), pixrelay a member
        with open(os.path.join(root, "etc", "group")) as f:
            groups = {line.split(":")[0]: line.strip().split(":") for line in f}
        self.assertIn("pixrelay-bank", groups)
        self.assertEqual(groups["pixrelay-bank"][3].split(","), ["pixrelay"])
        self.__class__.sysroot = root
        self.__class__.uid = int(u[2])
        self.__class__.gid = int(u[3])

    def test_tmpfiles_creates_config_and_state_directories(self):
        if not getattr(self, "sysroot", None):
            self.test_sysusers_creates_the_service_user()
        root = self.sysroot
        p = run([TMPFILES, "--root", root, "--create", self.at("deploy/pixrelay.tmpfiles")])
        if os.geteuid() != 0:
            # chown to the service user needs root (CI runs as root); here
            # only the syntax is checked: no line may be refused as invalid
            self.assertNotIn("Failed to parse", p.stderr)
            self.assertNotIn("Unknown", p.stderr)
            return
        self.assertEqual(p.returncode, 0, p.stderr)
        st = os.stat(os.path.join(root, "etc", "pixrelay"))
        self.assertEqual((oct(st.st_mode & 0o7777), st.st_uid, st.st_gid),
                         (oct(0o750), 0, self.gid))
        st = os.stat(os.path.join(root, "var", "lib", "pixrelay"))
        self.assertEqual((oct(st.st_mode & 0o7777), st.st_uid, st.st_gid),
                         (oct(0o750), self.uid, self.gid))

    def test_unit_and_docs_name_the_same_files(self):
        with open(UNIT_SRC) as f:
            unit = f.read()
        self.assertIn("\nEnvironmentFile=-/etc/pixrelay/%i.env\n", unit)
        self.assertRegex(unit, r"\nExecStart=/usr/local/bin/pixrelay --config "
                               r"/etc/pixrelay/%i\.conf serve\n")
        self.assertIn("\nStateDirectory=pixrelay/%i\n", unit)
        # the bank door of pixrelay.conf.example and deploy/nginx.conf lives there
        self.assertIn("\nRuntimeDirectory=pixrelay/%i\n", unit)
        self.assertNotIn("\nPrivateUsers=yes", unit)  # SO_PEERCRED must see nginx's uid
        with open(os.path.join(ROOT, "deploy", "pixrelay.conf.example")) as f:
            self.assertIn("\nbank-listen = unix:/run/pixrelay/main/bank.sock\n", f.read())
        with open(os.path.join(ROOT, "deploy", "nginx.conf")) as f:
            self.assertIn("server unix:/run/pixrelay/a/bank.sock ", f.read())
        self.assertIn("\nEnvironment=PIXRELAY_DATA_DIR=/var/lib/pixrelay/%i\n", unit)
        self.assertRegex(unit, r"\nDocumentation=man:pixrelay\(1\)\n")
        for doc in ("deployment.md", "configuration.md", "install.md"):
            with open(os.path.join(ROOT, "docs", doc)) as f:
                text = f.read()
            for name in ("pixrelay@.service", "/etc/pixrelay/main.conf",
                         "/etc/pixrelay/main.env"):
                self.assertIn(name, text, "docs/%s does not mention %s" % (doc, name))
            self.assertNotRegex(text, r"/etc/pixrelay/(pixrelay\.conf|env)\b",
                                "docs/%s names a file the unit does not read" % doc)


if __name__ == "__main__":
    unittest.main(verbosity=2)
