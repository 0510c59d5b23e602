"""deploy/nginx.conf as shipped, run by real nginx in front of two real
pixrelay processes that share one real redis-server: the stack of the deploy
tests (test_nginx.py, test_nginx_bank.py).

    start(on, Workdir(), "pay.example.test", args=[...])   on.redis, on.px, on.port, ...
    r = send(conn, "GET", "/healthz", "pay.example.test")  a Response
    stop(on)

The file under test is deploy/nginx.conf itself. Only its lines marked
"site:" (pid file, logs, listen addresses, names, certificates, the two
upstream servers and their two bank doors) are replaced, textually, each of which must be found
exactly once; temporary-file paths are added at the top of the http block so
that nginx writes nothing outside the test's directory. Everything else runs as
shipped. nginx runs as a child process on the loopback with a self-signed
certificate made by deploy/nginx-selfcert.sh; as root its workers drop to
www-data as the file says, otherwise it runs as the calling user.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Fatal, Pixrelay, Redis, _live, free_port, wait_for  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SHIPPED = os.path.join(ROOT, "deploy", "nginx.conf")
SELFCERT = os.path.join(ROOT, "deploy", "nginx-selfcert.sh")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def envelope(status, msg):
    return {"error": msg, "status": status, "data": []}


def render(text, subs, http_prefix):
    """The shipped file with each (old, new) replaced; old must occur once."""
    for old, new in subs:
        n = text.count(old)
        if n != 1:
            raise AssertionError("deploy/nginx.conf: %r found %d times, expected once "
                                 "(the test replaces the lines marked 'site:')" % (old, n))
        text = text.replace(old, new)
    if text.count("\nhttp {\n") != 1:
        raise AssertionError("deploy/nginx.conf: no single 'http {' line")
    return text.replace("\nhttp {\n", "\nhttp {\n" + http_prefix, 1)


class NamedHTTPS(http.client.HTTPSConnection):
    """HTTPS to nginx's loopback address, naming `sni` in the TLS handshake
    and verifying the certificate for it (as a client that resolved that
    name would)."""

    def __init__(self, host, port, sni, **kwargs):
        super().__init__(host, port, **kwargs)
        self.sni = sni

    def connect(self):
        http.client.HTTPConnection.connect(self)
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self.sni)


class Response:
    def __init__(self, r):
        self.status = r.status
        self.headers = r.getheaders()
        self.body = r.read()

    @property
    def json(self):
        return json.loads(self.body)

    def header(self, name):
        vals = [v for k, v in self.headers if k.lower() == name.lower()]
        if len(vals) > 1:
            raise AssertionError("header %s sent %d times: %r" % (name, len(vals), vals))
        return vals[0] if vals else None

    def __repr__(self):
        return "<%d %r>" % (self.status, self.body[:300])


def send(conn, method, path, host, body=None, headers=None, close=True):
    """One request on `conn` with Host: host (body: JSON), its Response;
    closes conn after it unless close is false."""
    hdrs = {"Host": host}
    hdrs.update(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=data, headers=hdrs)
        return Response(conn.getresponse())
    finally:
        if close:
            conn.close()


def start(on, wd, public, args=(), hook=None, webhook_tls=None, one_port=False,
          webhook_port=None):
    """Start, as attributes of `on` (a test class), with `wd` (a harness
    Workdir, removed by stop) as `on.wd`: a Redis `on.redis`, two ready
    pixrelay processes `on.px` run with `args`, each with its bank door
    (p.door, where nginx's webhook server sends), and nginx `on.nginx` running
    the shipped file, the main server on 127.0.0.1:`on.port` with the
    certificate `on.cert` that nginx-selfcert.sh made for `public` (and
    `hook` when given, else its default webhook name), the webhook server on
    `on.webhook_port`: the same port when one_port (SNI chooses the server,
    as on a host where both listen on 443), else one of its own. With `hook`
    the two servers' server_name lines name `public` and `hook`. The webhook
    server's certificate is webhook_tls, (cert, key) paths, or the
    self-signed one. webhook_port: the webhook server's own port, chosen
    by the caller (free_port()) when pixrelay's args must name it (its
    bank-webhook-base-url). Also `on.ngx` (nginx's directory), `on.conf`,
    `on.nginx_cmd`. On failure everything started is stopped again."""
    on.wd = wd
    on.nginx = None
    try:
        if not os.path.exists(NGINX):
            raise AssertionError("nginx is not installed (bash deploy/install-deps.sh --test)")
        _start(on, public, list(args), hook, webhook_tls, one_port, webhook_port)
    except BaseException:
        stop(on)
        raise


def _start(on, public, args, hook, webhook_tls, one_port, webhook_port):
    wd = on.wd.path
    if os.geteuid() == 0:
        # nginx's workers run as www-data (the shipped `user` line) and
        # must reach their temporary directories inside this one
        os.chmod(wd, 0o711)
    on.redis = Redis(wd).start()
    if os.geteuid() == 0:
        # the bank doors let nginx's workers in (the shipped `user` line), as
        # bank-listen-group and bank-proxy-uids do under pixrelay@.service
        args = args + ["--bank-listen-group", "www-data", "--bank-proxy-uids", "www-data"]
    on.px = [Pixrelay(wd, on.redis, args=args, name="px%d" % i, door=True).start() for i in (1, 2)]
    for p in on.px:
        p.wait_ready()

    ngx = os.path.join(wd, "nginx")
    os.makedirs(ngx)
    if os.geteuid() == 0:
        os.chmod(ngx, 0o711)
    tls = os.path.join(ngx, "tls")
    subprocess.run(["bash", SELFCERT, tls, public] + ([hook] if hook else []), check=True,
                   capture_output=True)
    on.cert = os.path.join(tls, "fullchain.pem")
    hook_cert, hook_key = webhook_tls or (os.path.join(tls, "webhook-fullchain.pem"),
                                          os.path.join(tls, "webhook-privkey.pem"))
    on.port = free_port()
    on.webhook_port = on.port if one_port else (webhook_port or free_port())
    with open(SHIPPED) as f:
        shipped = f.read()
    subs = [
        ("pid /run/nginx.pid;", "pid %s/nginx.pid;" % ngx),
        ("error_log /var/log/nginx/error.log warn;", "error_log %s/error.log info;" % ngx),
        ("access_log /var/log/nginx/pixrelay.access.log pixrelay;",
         "access_log %s/access.log pixrelay;" % ngx),
        ("listen 443 ssl http2;", "listen 127.0.0.1:%d ssl http2;" % on.port),
        ("ssl_certificate /etc/nginx/pixrelay/fullchain.pem;",
         "ssl_certificate %s/fullchain.pem;" % tls),
        ("ssl_certificate_key /etc/nginx/pixrelay/privkey.pem;",
         "ssl_certificate_key %s/privkey.pem;" % tls),
        ("listen 443 ssl;", "listen 127.0.0.1:%d ssl;" % on.webhook_port),
        ("ssl_certificate /etc/nginx/pixrelay/webhook-fullchain.pem;",
         "ssl_certificate %s;" % hook_cert),
        ("ssl_certificate_key /etc/nginx/pixrelay/webhook-privkey.pem;",
         "ssl_certificate_key %s;" % hook_key),
        ("server 127.0.0.1:8081 ", "server 127.0.0.1:%d " % on.px[0].port),
        ("server 127.0.0.1:8082 ", "server 127.0.0.1:%d " % on.px[1].port),
        ("server unix:/run/pixrelay/a/bank.sock ", "server unix:%s " % on.px[0].door),
        ("server unix:/run/pixrelay/b/bank.sock ", "server unix:%s " % on.px[1].door),
    ]
    if hook:
        subs += [("server_name pay.example.com;", "server_name %s;" % public),
                 ("server_name pix-webhook.example.com;", "server_name %s;" % hook)]
    temp = "".join("    %s_temp_path %s/%s;\n" % (k, ngx, k)
                   for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    on.conf = os.path.join(ngx, "nginx.conf")
    with open(on.conf, "w") as f:
        f.write(render(shipped, subs, temp))
    on.ngx = ngx
    on.nginx_cmd = [NGINX, "-p", ngx + "/", "-c", on.conf, "-e", "stderr"]
    on.nginx_err = open(os.path.join(ngx, "stderr.log"), "ab")
    on.nginx = subprocess.Popen(on.nginx_cmd + ["-g", "daemon off;"],
                                stdout=subprocess.DEVNULL, stderr=on.nginx_err)
    _live.append(on.nginx)

    def up():
        if on.nginx.poll() is not None:
            raise Fatal("nginx exited at start:\n" + nginx_log(on))
        with socket.create_connection(("127.0.0.1", on.port), timeout=1):
            return True

    wait_for(up, what="nginx to listen")


def stop(on):
    """Stop what start started on `on` (as far as it got): nginx gracefully,
    the pixrelay processes, Redis; remove the work dir."""
    if getattr(on, "nginx", None) and on.nginx.poll() is None:
        on.nginx.send_signal(signal.SIGQUIT)  # graceful stop
        try:
            on.nginx.wait(10)
        except subprocess.TimeoutExpired:
            on.nginx.kill()
            on.nginx.wait(5)
    if getattr(on, "nginx", None) in _live:
        _live.remove(on.nginx)
    if getattr(on, "nginx_err", None):
        on.nginx_err.close()
    for p in getattr(on, "px", []):
        p.stop()
    if getattr(on, "redis", None):
        on.redis.stop()
    on.wd.cleanup()


def nginx_log(on):
    """nginx's stderr and error log so far."""
    with open(os.path.join(on.ngx, "stderr.log"), errors="replace") as f:
        out = f.read()
    p = os.path.join(on.ngx, "error.log")
    if os.path.exists(p):
        with open(p, errors="replace") as f:
            out += f.read()
    return out
