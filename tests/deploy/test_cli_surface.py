"""The command line as a user meets it, on the real binary: `pixrelay --help`
lists every command the binary accepts, the man page and the bash completion
know each of them, and `serve` refuses a listen address that cannot work
before it creates anything.
"""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.path.abspath(os.environ.get("PIXRELAY_BIN", os.path.join(ROOT, "build", "pixrelay")))
COMPLETION = os.path.join(ROOT, "deploy", "pixrelay.bash-completion")
MAN = os.path.join(ROOT, "docs", "pixrelay.1")
GROFF = shutil.which("groff")
LISTEN_FORMAT = ("pixrelay: listen: expected host:port, [IPv6]:port or :port with a port from "
                 "0 to 65535, got '%s'\n")


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, **kw)


def dispatched_commands():
    """The command names src/cli/cli.c dispatches on (aliases such as --help aside)."""
    with open(os.path.join(ROOT, "src", "cli", "cli.c")) as f:
        text = f.read()
    names = set(re.findall(r'strcmp\(cmd, "([a-z][a-z-]*)"\)', text))
    names |= set(re.findall(r'\{\s*"([a-z][a-z-]*)"\s*,\s*(?:cli_)?cmd_\w+', text))
    if len(names) < 5:
        raise AssertionError("cannot find the commands in src/cli/cli.c (strcmp(cmd, \"name\") or "
                             "a {\"name\", cli_cmd_name} table); update this test")
    return names


def help_commands(text):
    """Command names in the Commands: section of `pixrelay --help`."""
    m = re.search(r"\nCommands:\n(.*?)\n\n", text, re.S)
    if not m:
        raise AssertionError("no Commands: section in:\n" + text)
    return [line.split()[0] for line in m.group(1).splitlines() if re.match(r"^  [a-z]", line)]


def complete(line, path_dir=None):
    """What the bash completion offers for `line` (the cursor at its end)."""
    script = ('source "$1"; COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}; _pixrelay; '
              'printf "%s\\n" "${COMPREPLY[@]}"')
    env = dict(os.environ)
    if path_dir:
        env["PATH"] = path_dir + ":" + env.get("PATH", "")
    p = run(["bash", "-c", script, "_", COMPLETION, line], env=env)
    if p.returncode != 0:
        raise AssertionError("completion failed: " + p.stderr)
    return [w for w in p.stdout.split("\n") if w]


class Help(unittest.TestCase):
    def test_help_lists_every_command_the_binary_accepts(self):
        p = run([BIN, "--help"])
        self.assertEqual(p.returncode, 0, p.stderr)
        listed = help_commands(p.stdout)
        self.assertEqual(sorted(listed), sorted(set(listed)), "a command is listed twice")
        self.assertEqual(set(listed), dispatched_commands())
        # today's commands, by name: a user's documentation must not lose one
        for name in ("serve", "init", "keys", "account", "secrets", "events", "endpoints",
                     "tail", "brcode", "version", "help"):
            self.assertIn(name, listed)
        # and every listed one answers its --help (help and version have none)
        for name in listed:
            if name in ("help", "version"):
                continue
            q = run([BIN, name, "--help"])
            self.assertEqual(q.returncode, 0, "%s --help: %s" % (name, q.stderr))
            self.assertTrue(q.stdout.startswith("usage: pixrelay " + name), q.stdout)

    def test_help_without_a_command_is_a_usage_error(self):
        p = run([BIN])
        self.assertEqual(p.returncode, 2)
        self.assertTrue(p.stderr.startswith("usage: pixrelay [SETTINGS] COMMAND [ARGS]\n"))
        self.assertEqual(p.stdout, "")

    def test_man_page_describes_every_command_and_renders_cleanly(self):
        with open(MAN) as f:
            man = f.read()
        for name in dispatched_commands():
            self.assertRegex(man, r"(?m)^\.(B|BR|BI) \"?%s\b" % re.escape(name),
                             "the man page has no entry for the command %s" % name)
        if not GROFF:
            self.fail("groff is not installed (bash deploy/install-deps.sh --test)")
        p = run([GROFF, "-man", "-ww", "-z", MAN])
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertIn('.TH PIXRELAY 1 ', man)
        version = run([BIN, "version"]).stdout.split()[1]
        self.assertIn('"pixrelay %s"' % version, man, "the man page names another version")


class Completion(unittest.TestCase):
    def test_commands(self):
        p = run([BIN, "--help"])
        self.assertEqual(sorted(complete(BIN + " ")), sorted(help_commands(p.stdout)))
        self.assertEqual(complete(BIN + " ev"), ["events"])

    def test_by_name_on_the_path(self):
        d = tempfile.mkdtemp(prefix="pixrelay-completion-")
        try:
            os.symlink(BIN, os.path.join(d, "pixrelay"))
            self.assertEqual(complete("pixrelay ta", path_dir=d), ["tail"])
        finally:
            shutil.rmtree(d)

    def test_actions_options_and_values(self):
        self.assertEqual(complete(BIN + " keys "), ["create", "list", "revoke"])
        self.assertEqual(complete(BIN + " secrets "), ["show", "rotate", "end-rotation"])
        self.assertEqual(complete(BIN + " events "), ["list", "show", "replay"])
        self.assertEqual(complete(BIN + " brcode "), ["decode"])
        self.assertEqual(complete(BIN + " endpoints "),
                         ["create", "list", "show", "update", "delete", "rotate-secret", "test"])
        self.assertEqual(complete(BIN + " endpoints create --env "), ["sandbox", "production"])
        self.assertIn("--event-type", complete(BIN + " endpoints create --ev"))
        self.assertIn("--grace", complete(BIN + " endpoints rotate-secret --g"))
        self.assertEqual(complete(BIN + " keys create --env "), ["sandbox", "production"])
        self.assertEqual(complete(BIN + " keys create --env=p"), ["production"])
        self.assertEqual(complete(BIN + " init --env "), ["sandbox", "production", "all"])
        self.assertEqual(complete(BIN + " --log-level w"), ["warn"])
        self.assertIn("--description", complete(BIN + " keys create --d"))
        self.assertIn("--postback-url", complete(BIN + " account set --p"))
        # settings before the command, values with ':' and '=' included
        self.assertEqual(complete(BIN + " --listen 127.0.0.1:9 --redis redis://h:1/0 keys "),
                         ["create", "list", "revoke"])
        self.assertEqual(complete(BIN + " --listen=127.0.0.1:9 ac"), ["account"])
        # every setting of `pixrelay help`
        p = run([BIN, "help"])
        settings = set(re.findall(r"(?m)^  (--[a-z][a-z0-9-]*)", p.stdout))
        self.assertGreater(len(settings), 20)
        self.assertTrue(settings <= set(complete(BIN + " serve --")))


class Listen(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pixrelay-listen-")
        self.data = os.path.join(self.tmp, "data")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def serve(self, listen):
        return run([BIN, "serve", "--listen", listen, "--data-dir", self.data])

    def refused(self, listen, code, stderr):
        p = self.serve(listen)
        self.assertEqual((p.returncode, p.stderr, p.stdout), (code, stderr, ""), listen)
        self.assertFalse(os.path.exists(self.data), "%s: the data directory was created" % listen)

    def test_malformed(self):
        for bad in ("8080", "127.0.0.1", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:65536",
                    "127.0.0.1:-1", "[::1]8080", "[::1", "host:80:80x", ""):
            self.refused(bad, 2, LISTEN_FORMAT % bad)

    def test_unknown_host(self):
        p = self.serve("no-such-host.invalid:8080")
        # glibc's words: the name does not exist, or no resolver could say
        self.assertIn(p.stderr, ["pixrelay: listen: cannot resolve 'no-such-host.invalid': "
                                 "%s\n" % why for why in ("Name or service not known",
                                                          "Temporary failure in name resolution")])
        self.assertEqual(p.returncode, 2)
        self.assertFalse(os.path.exists(self.data))

    def test_address_not_on_this_machine(self):
        self.refused("192.0.2.1:8080", 1, "pixrelay: listen: cannot listen on 192.0.2.1:8080: "
                                          "Cannot assign requested address\n")

    def test_address_in_use(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        try:
            port = s.getsockname()[1]
            self.refused("127.0.0.1:%d" % port, 1, "pixrelay: listen: cannot listen on "
                                                  "127.0.0.1:%d: Address already in use\n" % port)
        finally:
            s.close()

    def test_from_the_environment_and_config_file_too(self):
        env = dict(os.environ, PIXRELAY_LISTEN="nope")
        p = run([BIN, "serve", "--data-dir", self.data], env=env)
        self.assertEqual((p.returncode, p.stderr), (2, LISTEN_FORMAT % "nope"))
        conf = os.path.join(self.tmp, "p.conf")
        with open(conf, "w") as f:
            f.write("listen = 127.0.0.1:99999\n")
        p = run([BIN, "--config", conf, "serve", "--data-dir", self.data])
        self.assertEqual((p.returncode, p.stderr), (2, LISTEN_FORMAT % "127.0.0.1:99999"))
        self.assertFalse(os.path.exists(self.data))


if __name__ == "__main__":
    unittest.main(verbosity=2)
