"""End-to-end harness: a real redis-server on a temporary unix socket, the
real pixrelay binary as a child process, and plain HTTP to it.

Everything started here is stopped on every exit path (atexit and the
unittest class teardown), and the temporary directory is removed.
"""
import atexit
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

BIN = os.environ.get("PIXRELAY_BIN", os.path.join(os.path.dirname(__file__), "../../build/pixrelay"))
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"

_live = []


def _cleanup():
    for p in list(_live):
        try:
            p.kill()
            p.wait(5)
        except Exception:
            pass


atexit.register(_cleanup)


class Fatal(AssertionError):
    """Raised inside a wait_for predicate to stop waiting at once."""


def wait_for(pred, timeout=10.0, interval=0.02, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            v = pred()
            if v:
                return v
        except Fatal:
            raise
        except Exception:
            pass
        time.sleep(interval)
    raise AssertionError("timed out waiting for " + what)


class Redis:
    """A throw-away redis-server: unix socket only, AOF fsynced on every write."""

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "redis")
        os.makedirs(self.dir, exist_ok=True)
        self.sock = os.path.join(self.dir, "redis.sock")
        self.proc = None
        with open(os.path.join(self.dir, "redis.conf"), "w") as f:
            f.write("port 0\nunixsocket %s\nunixsocketperm 700\ndir %s\n"
                    "appendonly yes\nappendfsync always\nsave \"\"\n"
                    "logfile %s/redis.log\n" % (self.sock, self.dir, self.dir))

    @property
    def url(self):
        return "unix://" + self.sock

    def start(self):
        self.proc = subprocess.Popen([REDIS_SERVER, os.path.join(self.dir, "redis.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _live.append(self.proc)
        wait_for(lambda: self.ping(), what="redis-server to answer")
        return self

    def ping(self):
        return self.cmd("PING") == "PONG"

    def cmd(self, *args):
        """Send one command with RESP and return a simple decoded reply."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(self.sock)
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        s.sendall(out)
        f = s.makefile("rb")
        try:
            return _read_resp(f)
        finally:
            f.close()
            s.close()

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)
        if self.proc in _live:
            _live.remove(self.proc)
        self.proc = None


def _read_resp(f):
    line = f.readline()
    if not line:
        raise ConnectionError("redis closed the connection")
    t, rest = line[:1], line[1:-2]
    if t == b"+":
        return rest.decode()
    if t == b"-":
        raise RuntimeError(rest.decode())
    if t == b":":
        return int(rest)
    if t == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)[:-2]
        return data.decode(errors="replace")
    if t == b"*":
        n = int(rest)
        return None if n < 0 else [_read_resp(f) for _ in range(n)]
    raise RuntimeError("bad RESP reply: %r" % line)


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def json(self):
        return json.loads(self.body)

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def __repr__(self):
        return "<%d %r>" % (self.status, self.body[:300])


class Pixrelay:
    """The real binary. `redis` is a Redis (shared) or None for the embedded one."""

    def __init__(self, workdir, redis=None, args=(), env=None, name="pixrelay"):
        self.workdir = workdir
        self.redis = redis
        self.args = list(args)
        self.env = dict(os.environ)
        self.env.update(env or {})
        self.data_dir = os.path.join(workdir, name + "-data")
        self.log_path = os.path.join(workdir, name + ".log")
        self.out_path = os.path.join(workdir, name + ".out")
        self.proc = None
        self.port = None

    def common_args(self):
        a = ["--data-dir", self.data_dir]
        if self.redis:
            a += ["--redis", self.redis.url]
        return a

    def start(self, port=0):
        listen = "127.0.0.1:%d" % (port or self.port or 0)
        self.log_offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        with open(self.out_path, "ab") as out, open(self.log_path, "ab") as err:
            self.proc = subprocess.Popen(
                [BIN, "serve", "--listen", listen] + self.common_args() + self.args,
                stdout=out, stderr=err, env=self.env)
        _live.append(self.proc)

        def bound():
            m = re.search(r"listening on \S+ \(port (\d+)\)", self.log()[self.log_offset:])
            if self.proc.poll() is not None:
                raise Fatal("pixrelay exited at start:\n" + self.log()[self.log_offset:])
            return m and int(m.group(1))

        self.port = wait_for(bound, what="pixrelay to listen")
        return self

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def output(self):
        with open(self.out_path, errors="replace") as f:
            return f.read()

    def wait_ready(self, timeout=10):
        wait_for(lambda: self.request("GET", "/readyz").status == 200, timeout, what="readyz")

    def stop(self, sig=signal.SIGTERM, timeout=20):
        code = None
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            code = self.proc.wait(timeout)
        elif self.proc:
            code = self.proc.returncode
        if self.proc in _live:
            _live.remove(self.proc)
        self.proc = None
        return code

    @property
    def base(self):
        return "/v1"

    def request(self, method, path, body=None, headers=None, raw=None, timeout=10):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        hdrs = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        try:
            conn.request(method, path, body=data, headers=hdrs)
            r = conn.getresponse()
            return Response(r.status, r.getheaders(), r.read())
        finally:
            conn.close()

    def cli(self, *args, check=True):
        p = subprocess.run([BIN] + self.common_args() + list(args), capture_output=True,
                           text=True, env=self.env, timeout=60)
        if check and p.returncode != 0:
            raise AssertionError("pixrelay %s failed (%d): %s" % (args, p.returncode, p.stderr))
        return p

    def create_key(self, env="sandbox", master=False, account=None, description="test"):
        args = ["keys", "create", "--env", env, "--description", description, "--json"]
        if master:
            args.append("--master")
        if account:
            args += ["--account", account]
        return json.loads(self.cli(*args).stdout)


def auth(key, account=None):
    h = {"Authorization": "Bearer " + key}
    if account:
        h["X-Account-ID"] = account
    return h


class Workdir:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="pixrelay-e2e-")

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


# ---- where pixrelay keeps things in Redis (src/keyspace.c) ----

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
SHARDS = 16  # the default of the `shards` setting


def shard_of(id):
    """The shard an id names: its last two Crockford characters."""
    u = id[4:] if len(id) == 30 and id[3] == "_" else id
    return CROCKFORD.index(u[-2]) * 32 + CROCKFORD.index(u[-1])


def new_ulid(shard=None):
    """A ULID-shaped id naming `shard` (a random one of the default shards if None)."""
    import random
    if shard is None:
        shard = random.randrange(SHARDS)
    body = "01" + "".join(random.choice(CROCKFORD) for _ in range(22))
    return body + CROCKFORD[shard // 32] + CROCKFORD[shard % 32]


def rkey(what, id, prefix="pixrelay:"):
    """The Redis key of `what` (e.g. "ch:") for an id, in the id's shard."""
    return "%s{s%d}:%s%s" % (prefix, shard_of(id), what, id)


def acct_key(env, id, prefix="pixrelay:"):
    return rkey("acct:%s:" % env, id, prefix)
