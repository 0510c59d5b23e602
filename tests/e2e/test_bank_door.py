"""The bank door (bank-listen; docs/deployment.md, "The bank door"): a bank's
client certificate, as the proxy forwards it in X-Client-Cert, is believed
only on pixrelay's Unix socket for bank webhooks, and there only from a peer
whose uid (SO_PEERCRED) is root or in bank-proxy-uids. Another process of the
host that holds the bank's real certificate (it is public) cannot pose as
the bank through any socket or port pixrelay listens on.

The test runs as root (as CI does) and switches uid in child processes
(setpriv), each sending one request:

- uid 65534, no groups: the API port (even from 127.0.0.1, a trusted proxy
  there) 401, the metrics port 404, the bank door EACCES (mode 0660);
- uid 4242 in the door's group (www-data) but not in bank-proxy-uids: 401
  on the door, the reason in the log;
- uid 33 (www-data, listed by name): 200; root: 200;

and nothing of the refused calls is stored (the connection's notifications,
the charge PENDING, no postback). Also: the door serves the bank webhooks
only, the URL-token form works on both doors, X-Forwarded-For is believed on
the door from a proxy only, the socket file (mode, group, replaced when
stale, refused when in use or not a socket, removed at exit), the settings
refused at start, and creating an mTLS connection where serve has no door
(409).
"""
import grp
import json
import os
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import time
import unittest
import urllib.parse

import bcb
import certs
from harness import (BIN, Pixrelay, Redis, Workdir, auth, check_exit, free_port, init_platforms,
                     wait_for)
from sink import Sink

SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"
# the clients' interpreter: one every user may run (the tests' own may live
# in root's home)
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
UNAUTHENTICATED = {"error": "not authenticated as the bank of this connection", "status": 401,
                   "data": []}
GROUP = "www-data"  # the door's group: the proxy's
PROXY = (33, 33, [33])  # www-data: uid, gid, groups (listed in bank-proxy-uids by name)
INSIDER = (4242, 4242, [33])  # in the door's group, not a bank proxy
STRANGER = (65534, 65534, [])  # nobody, in no group
API_PORT = "X-Client-Cert on the API listener: ignored (mTLS banks come through bank-listen)"
DOOR_HINT = ("no bank's client certificate can reach pixrelay without it: set bank-listen and "
             "send the proxy's bank webhooks there (docs/deployment.md, \"The bank door\")")

# One request as another uid: the request as JSON on stdin, the answer (or
# the errno of a socket that refused) as JSON on stdout.
CLIENT = r'''
import errno, http.client, json, os, socket, sys
q = json.load(sys.stdin)

class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(q["unix"])

out = {"uid": os.getuid(), "groups": sorted(os.getgroups())}
try:
    if "unix" in q:
        c = Unix("localhost", timeout=10)
    else:
        c = http.client.HTTPConnection("127.0.0.1", q["port"], timeout=10)
    c.request(q["method"], q["path"], body=q.get("body"), headers=q.get("headers", {}))
    r = c.getresponse()
    out.update(status=r.status, body=json.loads(r.read()))
except OSError as e:
    out["errno"] = errno.errorcode.get(e.errno, str(e))
print(json.dumps(out))
'''


def as_uid(who, method, path, body=None, headers=None, port=None, unix=None):
    """One request sent by a process of uid/gid/groups `who`: {"status",
    "body"} or {"errno"}."""
    uid, gid, groups = who
    q = {"method": method, "path": path, "headers": dict(headers or {})}
    if body is not None:
        q["body"] = json.dumps(body)
        q["headers"]["Content-Type"] = "application/json"
    q.update({"unix": unix} if unix else {"port": port})
    ids = ["--reuid", str(uid), "--regid", str(gid)]
    ids += ["--groups", ",".join(map(str, groups))] if groups else ["--clear-groups"]
    p = subprocess.run([SETPRIV] + ids + ["--", PYTHON, "-c", CLIENT], input=json.dumps(q),
                       capture_output=True, text=True, cwd="/", timeout=30)
    if p.returncode != 0:
        raise AssertionError("setpriv failed: " + p.stderr)
    out = json.loads(p.stdout)
    assert (out["uid"], out["groups"]) == (uid, sorted(groups)), out
    del out["uid"], out["groups"]
    return out


def e2e_id():
    return "E12345678" + time.strftime("%Y%m%d%H%M", time.gmtime()) + secrets.token_hex(6)[:11]


def notification(cents, txid=None):
    p = {"endToEndId": e2e_id()}
    if txid:
        p["txid"] = txid
    p["valor"] = "%d.%02d" % divmod(cents, 100)
    p["horario"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    body = {"pix": [p]}
    bcb.validate_webhook_body(body)
    return body


def serve(args, who=None, binary=BIN, timeout=30):
    """`pixrelay serve ARGS` until it exits (it is expected to refuse): (exit
    status, stderr). `who`: run as that uid (give a `binary` it may run)."""
    cmd = [binary, "serve", "--listen", "127.0.0.1:0", "--redis-timeout-ms", "300"] + args
    if who:
        cmd = [SETPRIV, "--reuid", str(who[0]), "--regid", str(who[1]), "--clear-groups", "--"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd="/")
    return p.returncode, p.stderr


@unittest.skipUnless(os.geteuid() == 0, "needs root to switch uid (CI runs as root)")
class Door(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wd = Workdir()
        os.chmod(cls.wd.path, 0o711)  # the socket's own mode decides who gets in
        cls.redis = Redis(cls.wd.path).start()
        cls.sink = Sink().start()
        cls.metrics_port = free_port()
        cls.px = Pixrelay(cls.wd.path, cls.redis, door=True, args=[
            "--trusted-proxies", "127.0.0.1", "--metrics-listen", "127.0.0.1:%d" % cls.metrics_port,
            "--bank-listen-group", GROUP, "--bank-proxy-uids", "www-data"]).start()
        cls.px.wait_ready()
        platform = init_platforms(cls.px)["sandbox"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.px.cli("account", "set", "--env", "sandbox", "--postback-url", cls.sink.url("/account"))
        d = os.path.join(cls.wd.path, "certs")
        ca = certs.make_ca(d, "bank-ca", "Test Bank Webhook CA")
        with open(certs.make_client(d, ca, "bank", "webhook.bank.example").cert) as f:
            cls.cert = urllib.parse.quote(f.read(), safe="")  # as nginx forwards it
        with open(ca.cert) as f:
            ca_pem = f.read()
        # the account's charges go to it (docs/banks.md, "The key on the QR")
        cls.mtls = cls.connect({"pixKey": "door@loja.example", "auth": "mtls", "clientCa": ca_pem,
                                "default": True})
        cls.token = cls.connect({"pixKey": "token@loja.example", "auth": "url-token"})
        assert cls.mtls["account"] == platform

    @classmethod
    def connect(cls, body):
        r = cls.px.request("POST", "/v1/bank/connections", body=body, headers=auth(cls.key))
        assert r.status == 200, r
        return r.json["data"]

    @classmethod
    def tearDownClass(cls):
        code = cls.px.stop()
        cls.sink.close()
        cls.redis.stop()
        log = cls.px.log()
        cls.wd.cleanup()
        check_exit(code, log)

    # ---- helpers ----

    @staticmethod
    def path_of(conn, suffix="/pix"):
        u = urllib.parse.urlsplit(conn["webhookUrl"] + suffix)
        return u.path + ("?" + u.query if u.query else "")

    def charge(self, cents):
        """A charge whose postbacks go to a path of its own: (id, path)."""
        path = "/charge-%s" % secrets.token_hex(6)
        r = self.px.request("POST", "/v1/charge/pix/create",
                            body={"amount": cents, "postbackUrl": self.sink.url(path)},
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["id"], path

    def status(self, cid):
        r = self.px.request("GET", "/v1/charge/pix/" + cid, headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return r.json["data"]["status"]

    def heard(self, conn):
        """The endToEndIds the connection's notifications log holds."""
        r = self.px.request("GET", "/v1/bank/connections/%s/notifications" % conn["id"],
                            headers=auth(self.key))
        self.assertEqual(r.status, 200, r)
        return [n.get("endToEndId") for n in r.json["data"]["notifications"]]

    def reason(self, rid):
        """What pixrelay logged of the refused bank call `rid`."""
        marker = "bank webhook %s: " % rid
        return wait_for(lambda: next((line.split(marker, 1)[1] for line in self.px.log().splitlines()
                                      if marker in line), None), what="the log line of " + rid)

    def client_of(self, rid):
        """The client pixrelay's request line names for request `rid`."""
        marker = "request_id=%s client=" % rid
        return wait_for(lambda: next((line.split(marker, 1)[1] for line in self.px.log().splitlines()
                                      if marker in line), None), what="the request line of " + rid)

    # ---- the proof ----

    def test_another_uid_posing_as_the_bank_is_refused_everywhere(self):
        cid, path = self.charge(4200)
        body = notification(4200, cid)
        e2e = body["pix"][0]["endToEndId"]
        hook = self.path_of(self.mtls)

        def headers(who):
            rid = "pose-%d-%s" % (who[0], secrets.token_hex(4))
            return rid, {"X-Client-Cert": self.cert, "X-Request-Id": rid,
                         "X-Forwarded-For": "203.0.113.9"}

        # a process of another user, with the bank's real certificate
        for who in (STRANGER, INSIDER, PROXY):
            rid, h = headers(who)
            r = as_uid(who, "POST", hook, body, h, port=self.px.port)
            self.assertEqual(r, {"status": 401, "body": UNAUTHENTICATED}, who)
            self.assertEqual(self.reason(rid), "connection %s: %s" % (self.mtls["id"], API_PORT))
            rid, h = headers(who)
            r = as_uid(who, "POST", hook, body, h, port=self.metrics_port)
            self.assertEqual(r, {"status": 404, "body": {
                "error": "no such endpoint: POST %s" % hook, "status": 404, "data": []}}, who)
        rid, h = headers(STRANGER)
        self.assertEqual(as_uid(STRANGER, "POST", hook, body, h, unix=self.px.door),
                         {"errno": "EACCES"})
        rid, h = headers(INSIDER)
        r = as_uid(INSIDER, "POST", hook, body, h, unix=self.px.door)
        self.assertEqual(r, {"status": 401, "body": UNAUTHENTICATED})
        self.assertEqual(self.reason(rid), "connection %s: X-Client-Cert from uid 4242, not a bank "
                                           "proxy (bank-proxy-uids): ignored" % self.mtls["id"])
        self.assertEqual(self.client_of(rid), "uid:4242")  # its X-Forwarded-For is not believed
        # nothing stored
        time.sleep(1)
        self.assertNotIn(e2e, self.heard(self.mtls))
        self.assertEqual(self.status(cid), "PENDING")
        self.assertEqual(self.sink.count(path), 0)
        self.assertEqual([q for q in self.sink.requests("/account") if e2e in q.body.decode()], [])
        # the proxy's uid, then root: the bank
        rid, h = headers(PROXY)
        r = as_uid(PROXY, "POST", hook, body, h, unix=self.px.door)
        self.assertEqual(r["status"], 200, r)
        self.assertEqual((r["body"]["data"]["pix"][0]["outcome"], self.status(cid)), ("paid", "PAID"))
        self.assertEqual(self.client_of(rid), "203.0.113.9")
        self.assertEqual(self.sink.wait_count(1, path=path)[0].json["event"], "EVENT:CHARGE_PAID")
        cid2, _ = self.charge(4300)
        r = self.px.door_request("POST", hook, body=notification(4300, cid2),
                                 headers={"X-Client-Cert": self.cert})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.status(cid2), "PAID")
        self.assertEqual(self.heard(self.mtls)[1], e2e)

    def test_url_token_on_both_doors(self):
        hook = self.path_of(self.token)
        for who, where in ((STRANGER, {"port": self.px.port}), (INSIDER, {"unix": self.px.door}),
                           (PROXY, {"unix": self.px.door})):
            body = notification(100)
            r = as_uid(who, "POST", hook, body, **where)
            self.assertEqual(r["status"], 200, (who, r))
            self.assertEqual(self.heard(self.token)[0], body["pix"][0]["endToEndId"])
        r = as_uid(PROXY, "POST", hook.replace("hmac=", "hmac=x"), notification(100),
                   unix=self.px.door)
        self.assertEqual(r, {"status": 401, "body": UNAUTHENTICATED})

    def test_the_door_serves_the_bank_webhooks_only(self):
        for method, path in (("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"),
                             ("GET", "/v1/me"), ("POST", "/v1/charge/pix/create"),
                             ("GET", "/v1/bank/connections"), ("GET", "/dashboard/"),
                             ("POST", "/v1/webhooks/ingest/x")):
            r = self.px.door_request(method, path, headers=auth(self.key))
            self.assertEqual((r.status, r.json), (404, {
                "error": "no such endpoint: %s %s" % (method, path), "status": 404, "data": []}))
        r = self.px.door_request("GET", self.path_of(self.mtls))
        self.assertEqual((r.status, r.header("Allow")), (405, "POST"))

    def test_the_socket_file(self):
        st = os.stat(self.px.door)
        self.assertTrue(stat.S_ISSOCK(st.st_mode))
        self.assertEqual((oct(st.st_mode & 0o7777), st.st_uid, st.st_gid),
                         (oct(0o660), 0, grp.getgrnam(GROUP).gr_gid))
        self.assertIn("bank webhooks on unix:%s (mode 0660, group www-data; X-Client-Cert "
                      "believed from root and www-data)" % self.px.door, self.px.log())

    # ---- refused at start ----

    def test_settings_that_cannot_work(self):
        d = os.path.join(self.wd.path, "start")
        os.makedirs(d, exist_ok=True)
        base = ["--redis", self.redis.url]
        for args, want in [
                (["--bank-listen", "127.0.0.1:9000"],
                 "pixrelay: bank-listen: expected unix:/path/to/bank.sock, got '127.0.0.1:9000' (the bank "
                 "door is a Unix socket, where pixrelay knows the proxy by its uid; a TCP address cannot "
                 "tell the proxy from any other local process)\n"),
                (["--bank-listen", "unix:bank.sock"],
                 "pixrelay: bank-listen: expected unix:/path/to/bank.sock, got 'unix:bank.sock' (the bank "
                 "door is a Unix socket, where pixrelay knows the proxy by its uid; a TCP address cannot "
                 "tell the proxy from any other local process)\n"),
                (["--bank-listen", "unix:/" + "x" * 120],
                 "pixrelay: bank-listen: the socket path must be at most 107 bytes\n"),
                (["--bank-listen", "unix:%s/a.sock" % d, "--bank-listen-group", "no-such-group-px"],
                 "pixrelay: bank-listen-group: 'no-such-group-px': no such group\n"),
                (["--bank-listen", "unix:%s/a.sock" % d, "--bank-proxy-uids", "33,no-such-user-px"],
                 "pixrelay: bank-proxy-uids: 'no-such-user-px': no such user\n")]:
            self.assertEqual(serve(base + args), (2, want))
            self.assertEqual(os.listdir(d), [])
        # a socket in use: this test's pixrelay
        code, err = serve(base + ["--bank-listen", "unix:" + self.px.door])
        self.assertEqual(code, 1)
        self.assertIn("error bank-listen: a process listens on %s already (another pixrelay serve "
                      "with the same path?)\n" % self.px.door, err)
        self.assertTrue(stat.S_ISSOCK(os.stat(self.px.door).st_mode))
        # another file
        plain = os.path.join(d, "plain")
        open(plain, "w").close()
        code, err = serve(base + ["--bank-listen", "unix:" + plain])
        self.assertEqual(code, 1)
        self.assertIn("error bank-listen: %s exists and is not a socket: remove it, or choose another "
                      "path\n" % plain, err)
        # a group this process's user is not a member of (root may choose any)
        bin_copy = os.path.join(d, "pixrelay")
        shutil.copy(BIN, bin_copy)
        os.chmod(d, 0o777)
        code, err = serve(["--data-dir", d + "/data", "--redis", "redis://127.0.0.1:%d" % free_port(),
                           "--bank-listen", "unix:%s/g.sock" % d, "--bank-listen-group", GROUP],
                          who=STRANGER, binary=bin_copy)
        self.assertEqual(code, 1, err)
        self.assertIn("error bank-listen: cannot give %s/g.sock the group www-data: Operation not "
                      "permitted (the user this process runs as must be a member of the group)\n" % d, err)
        self.assertFalse(os.path.exists(d + "/g.sock"))

    def test_a_stale_socket_is_replaced_and_the_file_removed_at_exit(self):
        d = os.path.join(self.wd.path, "stale")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "bank.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.close()  # the file stays, nobody listens: a process that died
        px = Pixrelay(self.wd.path, self.redis, name="stale",
                      env={"PIXRELAY_BANK_LISTEN": "unix:" + path}).start()
        try:
            px.wait_ready()
            self.assertIn("removed the stale socket %s (no process listened on it)" % path, px.log())
            px.door = path
            r = px.door_request("POST", self.path_of(self.token), body=notification(100))
            self.assertEqual(r.status, 200, r)
        finally:
            check_exit(px.stop(), px.log())
        self.assertFalse(os.path.exists(path))


@unittest.skipUnless(os.geteuid() == 0, "needs root to switch uid (CI runs as root)")
class NoDoor(unittest.TestCase):
    """A serve without bank-listen takes no mTLS connection: its banks'
    certificates could reach it nowhere."""

    def test_an_mtls_connection_needs_the_door(self):
        wd = Workdir()
        redis = Redis(wd.path).start()
        px = Pixrelay(wd.path, redis).start()
        try:
            px.wait_ready()
            init_platforms(px)
            key = px.create_key("sandbox")["key"]
            d = os.path.join(wd.path, "certs")
            with open(certs.make_ca(d, "bank-ca").cert) as f:
                ca_pem = f.read()
            r = px.request("POST", "/v1/bank/connections", headers=auth(key),
                           body={"pixKey": "a@loja.example", "auth": "mtls", "clientCa": ca_pem})
            self.assertEqual((r.status, r.json["error"]), (
                409, "auth: \"mtls\" needs the bank door, and this server has no bank-listen: " + DOOR_HINT))
            r = px.request("GET", "/v1/bank/connections", headers=auth(key))
            self.assertEqual(r.json["data"]["connections"], [])
            r = px.request("POST", "/v1/bank/connections", headers=auth(key),
                           body={"pixKey": "a@loja.example", "auth": "url-token"})
            self.assertEqual(r.status, 200, r)
        finally:
            code, log = px.stop(), px.log()
            redis.stop()
            wd.cleanup()
            check_exit(code, log)


if __name__ == "__main__":
    unittest.main(verbosity=2)
