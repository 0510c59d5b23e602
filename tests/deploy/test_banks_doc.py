"""docs/banks.md's "Connect a bank, step by step", walked from top to bottom:
the commands as the page writes them, in its order, so that the page cannot
drift from the code.

The parties are real: two pixrelay processes (tests/e2e/harness.py) behind
nginx running deploy/nginx.conf as shipped (nginxstack.py replaces only its
"site:" lines), and a bank of the tests' own (tests/e2e/testbank.py: its API
Pix over mutual TLS, OAuth2, cobs, Pix, and its webhook sent with the bank's
client certificate, through nginx's webhook server to the processes' bank
doors).

What is read of the section, in order:

- its ```ini block, the settings of step 2: written, with PLACEHOLDERS
  replaced, into the config file both processes and every command read
  (PIXRELAY_CONFIG), with the test's own lines after it (TEST_SETTINGS,
  which the page may not set);
- each ```sh block, a script run by bash -e -o pipefail in a directory
  holding the files the page names (FILES), `pixrelay` on PATH; it must exit
  0. Before its run, a few commands need the money to have moved (BEFORE):
  the bank pays a charge and its webhook comes through nginx, or pays
  another whose webhook is lost;
- the untagged ``` block after an ```sh block (before the next ```sh or
  ```ini one), what the page says the script prints: each of its lines must
  be a line of the standard output, in order, consecutive lines
  consecutively; a line "..." stands for lines left out, "..." within a
  line for any text; RFC 3339 instants match any instant; the first and
  last lines are the output's first and last unless "..." stands there.

The placeholders of the page (ids, hosts, the bank's URLs, a pin, Pix ids,
today's date) are replaced by an explicit table, PLACEHOLDERS, some of them
captured from what earlier commands printed (the connection's id from `bank
connect`). What the test cannot change is made to fit the page instead
(BANK: the bank's Pix key, client id, webhook certificate's subject). A
command that fails, a "..." left in a command (a placeholder the table does
not know), or an output line the command did not print fails the test,
naming the page's line.

After the walk: the charge the bank's webhook paid and the one only the
reconciliation found are PAID with their Pix, the day's report counts both
in the API too, and the bank saw no call outside the standard. A few
seconds, with or without the sanitizers.
"""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

import nginxstack

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import certs  # noqa: E402
from harness import BIN, Workdir, auth, free_port, wait_for  # noqa: E402
from testbank import TestBank  # noqa: E402

DOC = os.path.join(nginxstack.ROOT, "docs", "banks.md")
DOC_NAME = "docs/banks.md"
SECTION = "## Connect a bank, step by step"
PUBLIC = "pay.example.test"
BRASILIA = datetime.timezone(datetime.timedelta(hours=-3))

# The bank as the page describes it: what the test cannot substitute (the
# bank's answers carry them) is made so.
BANK = {
    "chave": "pagamentos@loja.com.br",
    "client_id": "1234",
    "webhook_subject": "/C=BR/O=Banco Exemplo S.A./CN=webhook.bank.example",
}

# The charges the bank pays: the first's webhook comes, the second's is
# lost. The page's report says R$ 17.50.
CENTS_BY_WEBHOOK = 500
CENTS_WEBHOOK_LOST = 1250

# The files the page's commands name, made in the directory they run in:
# name -> the test's file (an attribute of the Walk).
FILES = {
    "bank-webhook.pem": "bank_webhook_cert",  # the bank's webhook certificate
    "bank-webhook-ca.pem": "bank_webhook_ca",  # the CA that signs it
    "secret.txt": "secret_file",  # the client secret of the bank's API
    "loja.crt": "merchant_cert",  # the certificate the bank knows the company by
    "loja.key": "merchant_key",
    "banco-ca.pem": "bank_server_ca",  # the CA of the bank's API certificate
}

# What the page writes -> what the walk has, in this order (the longer
# first). None while the walk does not know it yet (the command then fails,
# or keeps a "..." the walk refuses).
PLACEHOLDERS = (
    ("bnk_01M8...", lambda w: w.connection),  # printed by bank connect
    ("01M8...", lambda w: w.account),  # the production platform account
    ("https://pix-webhook.loja.com.br", lambda w: "https://127.0.0.1:%d" % w.hook_port),
    ("https://pix.banco.example", lambda w: w.bank.origin),
    ("unix:/run/pixrelay/main/bank.sock", lambda w: "unix:" + w.door),
    # the door's group: nginx's workers' (www-data) as root, else ours
    ("bank-listen-group = pixrelay-bank", lambda w: "bank-listen-group = " + w.door_group),
    ("bank-proxy-uids = www-data", lambda w: "bank-proxy-uids = " + w.proxy_uids),
    ("Q2ltrHcR0jeD3z9uZ4HbXyS1MAdmSWvD0dP2kTMl9hk=", lambda w: w.webhook_pin),
    ("E12345678202611271405kZ3Qp8xY2mN", lambda w: w.e2e_by_webhook),
    ("E12345678202611271410Rt7LwQ2bV9c", lambda w: w.e2e_webhook_lost),
    ("2026-11-27", lambda w: datetime.datetime.now(BRASILIA).strftime("%Y-%m-%d")),
)

INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
CONNECTION_ID = re.compile(r"\bbnk_[0-9A-Z]{26}\b")


class DocError(AssertionError):
    """What the page says is not what happens: names the page's line."""

    def __init__(self, line, what):
        super().__init__("%s:%d: %s" % (DOC_NAME, line, what))


class Block:
    """A fenced block of the page: its tag ("sh", "ini", "" ...), the line
    number of its opening fence, and its lines as (number, text), the
    fence's indentation removed."""

    def __init__(self, tag, line, lines):
        self.tag, self.line, self.lines = tag, line, lines

    @property
    def text(self):
        return "\n".join(t for _, t in self.lines) + "\n"


def section_blocks(text, section=SECTION):
    """The fenced blocks of `section` (up to the next "## " heading), in
    order."""
    lines = text.split("\n")
    try:
        start = lines.index(section)
    except ValueError:
        raise AssertionError("%s: no section %r" % (DOC_NAME, section))
    out, i = [], start + 1
    while i < len(lines) and not lines[i].startswith("## "):
        m = re.match(r"^( *)```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, tag, first, body = len(m.group(1)), m.group(2), i + 1, []
        i += 1
        while i < len(lines) and not re.match(r"^ {%d}```\s*$" % indent, lines[i]):
            if lines[i].strip() and not lines[i].startswith(" " * indent):
                raise DocError(i + 1, "a line of the block at line %d is not indented as "
                                      "its fence" % first)
            body.append((i + 1, lines[i][indent:]))
            i += 1
        if i == len(lines):
            raise DocError(first, "the block is not closed")
        out.append(Block(tag, first, body))
        i += 1
    return out


def steps(blocks):
    """(the ini block, [(sh block, its output block or None), ...])."""
    ini = [b for b in blocks if b.tag == "ini"]
    if len(ini) != 1:
        raise AssertionError("%s: %r has %d ```ini blocks, not one (the settings)"
                             % (DOC_NAME, SECTION, len(ini)))
    first = next((b for b in blocks if b.tag == "sh" and "pixrelay " in b.text), None)
    if first and first.line < ini[0].line:
        raise DocError(ini[0].line, "the settings come after a command that reads them "
                                    "(line %d)" % first.line)
    pairs = []
    for b in blocks:
        if b.tag == "sh":
            pairs.append([b, None])
        elif b.tag == "" and pairs and pairs[-1][1] is None:
            pairs[-1][1] = b
        elif b.tag not in ("ini",):
            raise DocError(b.line, "a ```%s block: the walk knows ```sh, ```ini and the "
                                   "untagged output of an ```sh block" % b.tag)
    return ini[0], [tuple(p) for p in pairs]


def _pattern(line):
    """A page's output line as a regular expression: "..." any text, an
    instant any instant."""
    line = INSTANT.sub("\0", line.rstrip())
    parts = [re.escape(p).replace("\0", INSTANT.pattern) for p in line.split("...")]
    return re.compile(".*".join(parts))


def match_output(expected, printed, command, substitute=lambda text: text):
    """Each line of `expected` (the page's (number, text)), placeholders
    replaced by `substitute`, is a line of `printed`, as the module's
    docstring says; DocError naming the first that is not."""
    out = [x.rstrip() for x in printed.rstrip("\n").split("\n")] if printed else []
    chunks, cur = [], []
    for number, text in expected:
        if text.strip() == "...":
            chunks.append(cur)
            cur = []
        else:
            cur.append((number, text))
    chunks.append(cur)
    # the first chunk begins the output, the last ends it (empty: "..." there)
    pos = 0
    for k, chunk in enumerate(chunks):
        if not chunk:
            continue
        pats = [_pattern(substitute(text)) for _, text in chunk]
        starts = range(pos, len(out) - len(pats) + 1)
        if k == 0:
            starts = [s for s in starts if s == 0]
        if k == len(chunks) - 1:
            starts = [s for s in starts if s == len(out) - len(pats)]
        found, most = None, 0
        for s in starts:
            n = 0
            while n < len(pats) and pats[n].fullmatch(out[s + n]):
                n += 1
            if n == len(pats):
                found = s
                break
            most = max(most, n)
        if found is None:
            number, text = chunk[most]
            raise DocError(number, "the page says `%s` prints %r%s; it printed:\n%s"
                           % (command, text, " there" if most else
                              " as its first line" if k == 0 else
                              " among its last lines" if k == len(chunks) - 1 else "",
                              printed or "(nothing)\n"))
        pos = found + len(pats)


def run_block(w, block):
    """Run an ```sh block of the page with bash, as the walk `w` has it; its
    CompletedProcess. DocError when it keeps a placeholder or fails."""
    script = w.substitute(block.text)
    for (number, _), line in zip(block.lines, script.split("\n")):
        if "..." in line.split("#", 1)[0]:
            raise DocError(number, "a placeholder the test does not know (PLACEHOLDERS): %s"
                           % line.strip())
    p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=w.cwd, env=w.env,
                       capture_output=True, text=True, timeout=90)
    if p.returncode != 0:
        raise DocError(block.line + 1, "exit status %d of:\n%s\nstdout:\n%s\nstderr:\n%s"
                       % (p.returncode, script, p.stdout, p.stderr))
    return p


class Walk:
    """What the walk knows: the parties and what commands printed."""

    connection = account = e2e_by_webhook = e2e_webhook_lost = None

    def substitute(self, text):
        """`text` with the placeholders the walk knows by now replaced (one it
        does not know yet stays: its command fails, or keeps a "...")."""
        for old, value in PLACEHOLDERS:
            try:
                new = value(self)
            except (AttributeError, TypeError):  # a party not there yet
                new = None
            if new is not None:
                text = text.replace(old, new)
        return text


class BanksDocWalk(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(DOC) as f:
            cls.ini, cls.steps = steps(section_blocks(f.read()))
        w = cls.w = Walk()
        w.door_group = "www-data" if os.geteuid() == 0 else _group_name()
        w.proxy_uids = "www-data" if os.geteuid() == 0 else str(os.geteuid())
        cls.wd = Workdir()
        try:
            cls._parties(cls.wd)
        except BaseException:
            if getattr(w, "bank", None):
                w.bank.close()
            nginxstack.stop(cls)  # as far as it started; removes the directory
            raise

    @classmethod
    def _parties(cls, wd):
        w = cls.w
        d = os.path.join(wd.path, "certs")
        merchant_ca = certs.make_ca(d, "merchant-ca", "Loja Exemplo CA")
        merchant = certs.make_client(d, merchant_ca, "loja", "loja.com.br")
        hook_tls = certs.make_server(d, merchant_ca, "webhook", hosts=("127.0.0.1",))
        webhook_ca = certs.make_ca(d, "bank-webhook-ca", "Banco Exemplo Webhook CA")
        webhook = certs.make_client(d, webhook_ca, "bank-webhook",
                                    subject=BANK["webhook_subject"])
        w.bank = TestBank(client_ca=merchant_ca.cert, receiver_ca=merchant_ca.cert,
                          webhook_cert=webhook, webhook_ca=webhook_ca.cert,
                          keys=[BANK["chave"]], client_id=BANK["client_id"]).start()
        w.secret_file = os.path.join(d, "secret.txt")
        with open(w.secret_file, "w") as f:
            f.write(w.bank.client_secret)
        w.bank_webhook_cert, w.bank_webhook_ca = webhook.cert, webhook_ca.cert
        w.merchant_cert, w.merchant_key = merchant.cert, merchant.key
        w.bank_server_ca = w.bank.server_ca
        w.webhook_pin = certs.key_pin(webhook.cert)[len("sha256/"):]

        # the directory the page's commands run in, with its files
        w.cwd = os.path.join(wd.path, "walk")
        os.makedirs(w.cwd)
        for name, attr in FILES.items():
            shutil.copy(getattr(w, attr), os.path.join(w.cwd, name))
        os.chmod(os.path.join(w.cwd, "loja.key"), 0o600)

        # the settings: the page's block, then the test's own, which the
        # page may not set: the credentials key where every process finds
        # it, and no scheduled reconciliation in the walk but the first (the
        # one the credentials start), so that the Pix whose webhook is lost
        # is bank reconcile's to find
        w.hook_port = free_port()
        w.door = os.path.join(wd.path, "px1.bank.sock")  # as harness.Pixrelay names it
        settings = w.substitute(cls.ini.text)
        own = {"credentials-key-file": os.path.join(wd.path, "credentials.key"),
               "bank-reconcile-interval": "3600"}
        for line in settings.splitlines():
            if line.split("=", 1)[0].strip() in own:
                raise DocError(cls.ini.line, "the settings set %s, which the test sets itself"
                                             % line.split("=", 1)[0].strip())
        cls.config = os.path.join(wd.path, "pixrelay.conf")
        with open(cls.config, "w") as f:
            f.write(settings + "".join("%s = %s\n" % kv for kv in own.items()))
        nginxstack.start(cls, wd, PUBLIC, args=["--config", cls.config],
                         webhook_tls=hook_tls, webhook_port=w.hook_port)
        if cls.px[0].door != w.door:
            raise AssertionError("the first process's door is not %s" % w.door)

        # `pixrelay` on PATH, the config file and the processes' Redis
        bindir = os.path.join(wd.path, "bin")
        os.makedirs(bindir)
        os.symlink(os.path.abspath(BIN), os.path.join(bindir, "pixrelay"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIXRELAY_")}
        env.update(PATH=bindir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
                   PIXRELAY_CONFIG=cls.config, PIXRELAY_REDIS=cls.redis.url,
                   PIXRELAY_DATA_DIR=os.path.join(wd.path, "cli-data"))
        w.env = env

        # what the page takes as given: a deployment with its production
        # platform account, and a key of it for the shop's charges
        init = json.loads(cls.cli("init", "--env", "production", "--json"))
        w.account = init["production"]["account"]
        w.key = json.loads(cls.cli("keys", "create", "--env", "production", "--json"))["key"]

    @classmethod
    def tearDownClass(cls):
        cls.w.bank.close()
        codes = [(p.stop(), p.log()) for p in cls.px]
        nginxstack.stop(cls)
        for code, log in codes:
            if code not in (0, None) or "Sanitizer" in log:
                raise AssertionError("pixrelay exited %s:\n%s" % (code, log[-3000:]))

    @classmethod
    def cli(cls, *args):
        p = subprocess.run([BIN] + list(args), capture_output=True, text=True,
                           env=cls.w.env, timeout=60)
        if p.returncode != 0:
            raise AssertionError("pixrelay %s failed (%d): %s" % (args, p.returncode, p.stderr))
        return p.stdout

    # ---- the money, between the page's commands ----

    def api(self, method, path, body=None):
        r = self.px[0].request(method, path, body=body, headers=auth(self.w.key))
        self.assertEqual(r.status, 200, (method, path, r))
        return r.json["data"]

    def charge(self, cents):
        """A charge of the shop, created at the bank (it has API credentials)."""
        ch = self.api("POST", "/v1/charge/pix/create", {"amount": cents})
        self.assertIsNotNone(self.w.bank.cob(ch["id"]), "the charge was not created at the bank")
        return ch["id"]

    def pay_by_webhook(self):
        """The bank pays a charge and its webhook comes, through nginx's
        webhook server with the bank's certificate, to a bank door."""
        w = self.w
        # the connection's first reconciliation (due as soon as it has API
        # credentials) over first: else, on a slow machine, it may take the
        # Pix between the payment and its webhook, which is then a duplicate
        wait_for(lambda: self.api("GET", "/v1/bank/connections/" + w.connection)["api"]
                 ["reconciliation"]["lastSuccessAt"], timeout=30,
                 what="the connection's first reconciliation")
        w.charge_by_webhook = self.charge(CENTS_BY_WEBHOOK)
        pix = w.bank.pay(w.charge_by_webhook)
        w.e2e_by_webhook = pix["endToEndId"]
        sent = w.bank.notify([pix["endToEndId"]])
        self.assertEqual([d.status for d in sent], [200], sent)
        self.assertEqual(json.loads(sent[0].answer)["data"]["pix"][0]["outcome"], "paid",
                         sent[0].answer)
        # nginx's webhook server sent it to a bank door
        doors = ["unix:" + p.door for p in self.px]
        call = '"POST /v1/webhooks/bank/%s/pix ' % w.connection

        def logged():
            with open(os.path.join(self.ngx, "access.log"), errors="replace") as f:
                return next((x for x in f if call in x), None)

        line = wait_for(logged, what="nginx's line of the bank's call")
        self.assertIn(line.split(" upstream=", 1)[1].split()[0], doors, line)

    def pay_webhook_lost(self):
        """The bank pays another charge and loses its webhook, after the
        first scheduled reconciliation ran (the next is an hour away)."""
        w = self.w
        path = "/v1/bank/connections/%s" % w.connection
        wait_for(lambda: self.api("GET", path)["api"]["reconciliation"]["lastSuccessAt"],
                 timeout=20, what="the first reconciliation of the connection")
        w.charge_webhook_lost = self.charge(CENTS_WEBHOOK_LOST)
        pix = w.bank.pay(w.charge_webhook_lost)
        w.e2e_webhook_lost = pix["endToEndId"]
        w.bank.webhook_faults(drop=1.0)
        sent = w.bank.notify([pix["endToEndId"]])
        w.bank.webhook_faults()
        self.assertEqual([d.dropped for d in sent], [True], sent)

    BEFORE = {
        "pixrelay bank notifications": pay_by_webhook,
        "pixrelay bank reconcile": pay_webhook_lost,
    }

    # ---- the walk ----

    def test_walk(self):
        # today's report must hold both Pix: not across Brasilia's midnight
        now = datetime.datetime.now(BRASILIA)
        if now.hour == 23 and now.minute >= 58:
            time.sleep((60 - now.minute) * 60 - now.second + 1)
        ran = set()
        for block, output in self.steps:
            command = " ".join(block.text.split()[:3])
            if command in self.BEFORE:
                self.BEFORE[command](self)
                ran.add(command)
            p = run_block(self.w, block)
            if self.w.connection is None:
                m = CONNECTION_ID.search(p.stdout)
                self.w.connection = m.group(0) if m else None
            if output is not None:
                match_output(output.lines, p.stdout, block.text.strip(), self.w.substitute)
        self.assertEqual(ran, set(self.BEFORE),
                         "%s no longer runs these commands of the walk" % DOC_NAME)
        self.assert_the_money_arrived()

    def assert_the_money_arrived(self):
        w = self.w
        for cid, e2e in ((w.charge_by_webhook, w.e2e_by_webhook),
                         (w.charge_webhook_lost, w.e2e_webhook_lost)):
            c = self.api("GET", "/v1/charge/pix/%s" % cid)
            self.assertEqual((c["status"], c["pix"]["endToEndId"]), ("PAID", e2e), c)
        rep = self.api("GET", "/v1/bank/reconciliation?connection=%s" % w.connection)
        self.assertEqual((rep["pix"]["received"], rep["pix"]["byWebhook"],
                          rep["pix"]["recovered"], rep["cents"]["received"],
                          rep["recoveredEndToEndIds"]),
                         (2, 1, 1, CENTS_BY_WEBHOOK + CENTS_WEBHOOK_LOST,
                          [w.e2e_webhook_lost]), rep)
        self.assertEqual(w.bank.violations, [])


def _group_name():
    import grp
    return grp.getgrgid(os.getegid()).gr_name


class TheExampleConfig(unittest.TestCase):
    def test_it_has_the_settings_of_step_2(self):
        # the page says deploy/pixrelay.conf.example has its lines
        with open(DOC) as f:
            ini, _ = steps(section_blocks(f.read()))
        with open(os.path.join(nginxstack.ROOT, "deploy", "pixrelay.conf.example")) as f:
            example = {ln.split("=", 1)[0].strip() for ln in f if re.match(r"^[a-z-]+ *=", ln)}
        for number, line in ini.lines:
            name = line.split("=", 1)[0].strip()
            if name not in example:
                raise DocError(number, "deploy/pixrelay.conf.example has no %s" % name)


class TheWalkFails(unittest.TestCase):
    """The walk's own checks fail when the page and the code part: an
    output line not printed, a placeholder not known."""

    PAGE = "\n".join([
        "# t", "", SECTION, "", "1. **Do**:", "", "   ```ini", "   a = b", "   ```", "",
        "   ```sh", "   pixrelay bank show bnk_01M8...", "   ```", "", "   ```",
        "   bnk_01M8...  pagamentos  2026-11-27T14:02:11.032Z", "   ...",
        "     last call    none recorded", "   ```", "", "## Next", ""])

    def test_the_page_is_read_with_its_line_numbers(self):
        ini, pairs = steps(section_blocks(self.PAGE))
        self.assertEqual((ini.line, ini.lines), (7, [(8, "a = b")]))
        (sh, out), = pairs
        self.assertEqual((sh.line, sh.lines), (11, [(12, "pixrelay bank show bnk_01M8...")]))
        self.assertEqual([n for n, _ in out.lines], [16, 17, 18])

    def test_output_as_the_page_says_passes(self):
        _, ((_, out),) = steps(section_blocks(self.PAGE))
        match_output(out.lines, "bnk_01M8X  pagamentos  2026-12-01T10:00:00Z\n  webhook URL  x\n"
                                "  last call    none recorded\n", "show")

    def test_another_output_names_the_pages_line(self):
        _, ((_, out),) = steps(section_blocks(self.PAGE))
        for printed, line in (("bnk_01M8X  pagamentos  2026-12-01T10:00:00Z\n"
                               "  last call    2026-12-01T10:00:00Z\n", 18),
                              ("bnk_01M8X  recebimentos  2026-12-01T10:00:00Z\n"
                               "  last call    none recorded\n", 16),
                              ("", 16)):
            with self.assertRaises(DocError) as e:
                match_output(out.lines, printed, "show")
            self.assertTrue(str(e.exception).startswith("%s:%d: " % (DOC_NAME, line)),
                            str(e.exception))

    def test_an_unknown_placeholder_names_the_pages_line(self):
        _, ((sh, _),) = steps(section_blocks(self.PAGE.replace("bnk_01M8...", "bnk_01M9...")))
        w = Walk()
        w.connection = "bnk_01M8T8WTQ6DE996WSXTQXEMD0B"
        with self.assertRaises(DocError) as e:
            run_block(w, sh)
        self.assertEqual(str(e.exception), "%s:12: a placeholder the test does not know "
                                           "(PLACEHOLDERS): pixrelay bank show bnk_01M9..."
                         % DOC_NAME)


if __name__ == "__main__":
    unittest.main(verbosity=2)
