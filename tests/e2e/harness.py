"""End-to-end harness: a real redis-server on a temporary unix socket (or,
with PIXRELAY_TEST_REDIS=cluster, a real Redis Cluster of 3 primaries and 3
replicas on loopback), the real pixrelay binary as a child process, and plain
HTTP to it.

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
import ssl
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.parse

from sink import Sink

BIN = os.environ.get("PIXRELAY_BIN", os.path.join(os.path.dirname(__file__), "../../build/pixrelay"))
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"

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


def read_to_eof(sock):
    """Every byte a socket (plain or TLS) receives until the peer closes."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


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


class SingleRedis:
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
        return unix_cmd(self.sock, *args)

    def stop(self, sig=signal.SIGTERM):
        _stop(self.proc, sig)
        self.proc = None


def _stop(proc, sig):
    """Send `sig` to a child started here if it still runs, wait for it, and
    forget it."""
    if proc and proc.poll() is None:
        proc.send_signal(sig)
        proc.wait(10)
    if proc in _live:
        _live.remove(proc)


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


def _resp_encode(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def unix_cmd(path, *args, timeout=5):
    """One command to the Redis on the unix socket `path`; an error reply
    raises RuntimeError."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    s.sendall(_resp_encode(args))
    f = s.makefile("rb")
    try:
        return _read_resp(f)
    finally:
        f.close()
        s.close()


def _tcp_cmd(port, *args, asking=False, timeout=5, password=None):
    """One command to 127.0.0.1:port (after AUTH when a password is given); an
    error reply raises RuntimeError."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    f = s.makefile("rb")
    try:
        if password:
            s.sendall(_resp_encode(["AUTH", password]))
            _read_resp(f)
        if asking:
            s.sendall(_resp_encode(["ASKING"]))
            _read_resp(f)
        s.sendall(_resp_encode(args))
        return _read_resp(f)
    finally:
        f.close()
        s.close()


def crc16(data):
    """CRC16/XMODEM, as Redis Cluster hashes keys (computed here, not by pixrelay)."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key):
    k = key if isinstance(key, bytes) else str(key).encode()
    i = k.find(b"{")
    if i >= 0:
        j = k.find(b"}", i + 1)
        if j > i + 1:
            k = k[i + 1:j]
    return crc16(k) % 16384


_KEYLESS = {"PING", "INFO", "CLUSTER", "SCRIPT", "DBSIZE", "FLUSHALL", "FLUSHDB", "KEYS", "SCAN",
            "CONFIG", "WAIT", "TIME", "ROLE", "CLIENT", "LASTSAVE", "BGREWRITEAOF", "SAVE"}


def free_port():
    """A loopback TCP port free now (the kernel's choice; it may be taken
    again before it is used)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _free_port_pair():
    """A loopback port p with p + 10000 (its cluster bus) free too, both below
    the ephemeral range (32768 and up), where no outgoing connection takes
    one while a node is stopped for a while."""
    import random
    for _ in range(200):
        p = random.randrange(11000, 22000)
        socks = []
        try:
            for q in (p, p + 10000):
                t = socket.socket()
                socks.append(t)
                t.bind(("127.0.0.1", q))
            return p
        except OSError:
            continue
        finally:
            for t in socks:
                t.close()
    raise RuntimeError("no free port pair")


class PortTaken(RuntimeError):
    pass


class ClusterNode:
    def __init__(self, root, port, node_timeout, conf=""):
        self.root, self.node_timeout, self.conf = root, node_timeout, conf
        self.configure(port)

    def configure(self, port):
        self.port = port
        self.dir = os.path.join(self.root, "n%d" % port)
        os.makedirs(self.dir, exist_ok=True)
        self.proc = None
        node_timeout = self.node_timeout
        with open(os.path.join(self.dir, "redis.conf"), "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s/redis.log\n"
                    "cluster-enabled yes\ncluster-config-file nodes.conf\n"
                    "cluster-node-timeout %d\ncluster-replica-validity-factor 0\n"
                    "cluster-allow-replica-migration no\nrepl-diskless-sync-delay 0\n"
                    "appendonly yes\nappendfsync always\nsave \"\"\n%s"
                    % (port, self.dir, self.dir, node_timeout, self.conf))

    def start(self):
        self.proc = subprocess.Popen([REDIS_SERVER, os.path.join(self.dir, "redis.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _live.append(self.proc)

        def up():
            if self.proc.poll() is not None:
                raise Fatal("exited")
            return self.cmd("PING") == "PONG"
        try:
            wait_for(up, what="redis node %d to answer" % self.port)
        except Fatal:
            _live.remove(self.proc)
            self.proc = None
            with open(os.path.join(self.dir, "redis.log"), errors="replace") as f:
                log = f.read()
            if "Address already in use" in log:
                raise PortTaken(self.port)
            raise AssertionError("redis node %d exited: %s" % (self.port, log[-1000:]))

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def cmd(self, *args):
        return _tcp_cmd(self.port, *args)

    def info(self, section):
        return dict(line.split(":", 1) for line in self.cmd("INFO", section).splitlines()
                    if ":" in line)

    def stop(self, sig=signal.SIGTERM):
        _stop(self.proc, sig)
        self.proc = None


class Cluster:
    """A throw-away Redis Cluster on loopback: `primaries` primaries with
    `replicas` replicas each (redis-server --cluster-enabled yes, then
    redis-cli --cluster create), AOF fsynced on every write like SingleRedis,
    a small cluster-node-timeout so that a failover takes about two seconds.
    `conf`: more lines for every node's redis.conf. cmd() routes by the key's
    slot and follows MOVED and ASK, so tests read and write keys as they would
    on one Redis."""

    def __init__(self, workdir, primaries=3, replicas=1, node_timeout=1000, conf=""):
        self.dir = os.path.join(workdir, "cluster")
        os.makedirs(self.dir, exist_ok=True)
        self.primaries_wanted = primaries
        self.replicas = replicas
        self.nodes = [ClusterNode(self.dir, _free_port_pair(), node_timeout, conf)
                      for _ in range(primaries * (1 + replicas))]
        self.created = False
        self.slots = {}

    @property
    def url(self):
        return "redis://127.0.0.1:%d" % self.nodes[0].port

    def node(self, port):
        return next(n for n in self.nodes if n.port == port)

    def start(self):
        for n in self.nodes:
            for _ in range(5):
                if n.running():
                    break
                try:
                    n.start()
                except PortTaken:
                    if self.created:
                        raise
                    # taken since it was chosen (another test's node?): another
                    n.configure(_free_port_pair())
        if not self.created and self.primaries_wanted >= 3:
            args = [REDIS_CLI, "--cluster", "create"]
            args += ["127.0.0.1:%d" % n.port for n in self.nodes]
            args += ["--cluster-replicas", str(self.replicas), "--cluster-yes"]
            p = subprocess.run(args, capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                raise RuntimeError("redis-cli --cluster create: " + p.stdout + p.stderr)
            self.created = True
        elif not self.created:
            self._create_small()
        self.wait_ok()
        return self

    def _create_small(self):
        """redis-cli --cluster create wants 3 primaries at least: fewer
        (the benchmark's single primary) are assigned by hand."""
        n = self.primaries_wanted
        prim, reps = self.nodes[:n], self.nodes[n:]
        for i, node in enumerate(prim):
            node.cmd("CLUSTER", "ADDSLOTSRANGE", i * 16384 // n, (i + 1) * 16384 // n - 1)
        for node in self.nodes[1:]:
            node.cmd("CLUSTER", "MEET", "127.0.0.1", self.nodes[0].port)
        wait_for(lambda: all(len(x.cmd("CLUSTER", "NODES").splitlines()) == len(self.nodes)
                             for x in self.nodes), what="the nodes to meet")
        for i, node in enumerate(reps):
            master = prim[i % n].cmd("CLUSTER", "MYID")
            wait_for(lambda: node.cmd("CLUSTER", "REPLICATE", master) == "OK",
                     what="a replica to follow its primary")
        self.created = True

    def primaries(self):
        """Ports of the running nodes that are primaries now, with their slot ranges."""
        out = {}
        for n in self.nodes:
            if not n.running():
                continue
            for e in n.cmd("CLUSTER", "SLOTS"):
                out[int(e[2][1])] = out.get(int(e[2][1]), []) + [(int(e[0]), int(e[1]))]
            return out
        return out

    def wait_ok(self, timeout=30):
        """Every running node sees the cluster ok with every slot served, the
        same primaries, and every running replica in sync with its primary."""
        def ok():
            views = set()
            for n in self.nodes:
                if not n.running():
                    continue
                info = dict(line.split(":", 1) for line in n.cmd("CLUSTER", "INFO").splitlines()
                            if ":" in line)
                if info.get("cluster_state") != "ok" or info.get("cluster_slots_ok") != "16384":
                    return False
                views.add(tuple(sorted((int(e[0]), int(e[1]), int(e[2][1]))
                                       for e in n.cmd("CLUSTER", "SLOTS"))))
                repl = n.info("replication")
                if repl.get("role") == "slave" and repl.get("master_link_status") != "up":
                    return False
            return len(views) == 1
        wait_for(ok, timeout, interval=0.1, what="the redis cluster to be ok")
        self.slots = {}

    def _route(self, key):
        s = key_slot(key)
        if s not in self.slots:
            for port, ranges in self.primaries().items():
                for a, b in ranges:
                    for x in range(a, b + 1):
                        self.slots[x] = port
        return self.slots.get(s, self.nodes[0].port)

    def cmd(self, *args):
        """One command, sent to the primary of its key's slot."""
        name = str(args[0]).upper()
        if name in _KEYLESS or len(args) < 2:
            port = next(iter(self.primaries()))
        elif name in ("EVAL", "EVALSHA") and int(args[2]) > 0:
            port = self._route(args[3])
        else:
            port = self._route(args[1])
        asking = False
        for _ in range(10):
            try:
                return _tcp_cmd(port, *args, asking=asking)
            except RuntimeError as e:
                m = re.match(r"(MOVED|ASK) (\d+) [\d.]+:(\d+)", str(e))
                if not m:
                    raise
                port, asking = int(m.group(3)), m.group(1) == "ASK"
                if not asking:
                    self.slots[int(m.group(2))] = port
        raise RuntimeError("too many redirections")

    def stop(self, sig=signal.SIGTERM):
        for n in self.nodes:
            n.stop(sig)


# Which Redis the end-to-end tests get: PIXRELAY_TEST_REDIS=cluster runs a
# suite against a Redis Cluster (tests/meson.build registers some suites twice).
CLUSTER_MODE = os.environ.get("PIXRELAY_TEST_REDIS", "") == "cluster"
Redis = Cluster if CLUSTER_MODE else SingleRedis


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


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over the Unix socket at `path`, as nginx's proxy_pass
    http://unix:PATH: does."""

    def __init__(self, path, timeout=10):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def _send(conn, method, path, body=None, headers=None, raw=None):
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


def http_connection(url, ca=None, timeout=10):
    """(connection, request target) for an http(s) URL, or unix:PATH:/uri
    (nginx's form; http://unix:PATH:/uri too): where the tests' providers
    send their notifications. `ca`: the CA file an https URL is checked
    against."""
    rest = url[len("http://"):] if url.startswith("http://unix:") else url
    if rest.startswith("unix:"):
        path, sep, uri = rest[len("unix:"):].partition(":")
        if not sep or not uri.startswith("/"):
            raise ValueError("expected unix:/path/to.sock:/uri, got %r" % url)
        return UnixHTTPConnection(path, timeout=timeout), uri
    parts = urllib.parse.urlsplit(url)
    target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    if parts.scheme == "http":
        return http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout), target
    if parts.scheme == "https":
        ctx = ssl.create_default_context(cafile=ca)
        return (http.client.HTTPSConnection(parts.hostname, parts.port or 443, timeout=timeout,
                                            context=ctx), target)
    raise ValueError("not an http, https or unix: URL: %r" % url)


class Pixrelay:
    """The real binary. `redis` is a Redis (shared) or None for the embedded one.
    With door=True it has a bank door (bank-listen) at `self.door`, set in its
    environment so that the command-line tools run with px.cli() see it too;
    a caller that is not root is its bank proxy (bank-proxy-uids), as root
    always is."""

    def __init__(self, workdir, redis=None, args=(), env=None, name="pixrelay", door=False):
        self.workdir = workdir
        self.redis = redis
        self.args = list(args)
        self.env = dict(os.environ)
        self.door = os.path.join(workdir, name + ".bank.sock") if door else None
        if door:
            self.env["PIXRELAY_BANK_LISTEN"] = "unix:" + self.door
            if os.geteuid() != 0:
                self.env["PIXRELAY_BANK_PROXY_UIDS"] = str(os.geteuid())
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
        return _send(conn, method, path, body, headers, raw)

    def door_request(self, method, path, body=None, headers=None, raw=None, timeout=10):
        """A request through the bank door (door=True), as the proxy's bank
        webhook server sends it."""
        if not self.door:
            raise AssertionError("%s has no bank door (Pixrelay(..., door=True))" % self.log_path)
        return _send(UnixHTTPConnection(self.door, timeout), method, path, body, headers, raw)

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


def start_stack(on, args=(), name="pixrelay", sink=False, port=0, door=False):
    """Start, as attributes of `on` (a test class or a test case), a work dir
    `on.wd`, a Redis `on.redis`, with sink=True a Sink `on.sink`, and a ready
    pixrelay `on.px` run with `args` (listening on `port`, 0: any; with
    door=True a bank door, see Pixrelay); returns on.px. stop_stack(on)
    stops them again."""
    on.wd = Workdir()
    on.redis = Redis(on.wd.path).start()
    if sink:
        on.sink = Sink().start()
    on.px = Pixrelay(on.wd.path, on.redis, args=args, name=name, door=door).start(port)
    on.px.wait_ready()
    return on.px


def stop_stack(on):
    """Stop what start_stack started on `on` (and `on.sink` if it has one),
    pixrelay first, and remove the work dir."""
    on.px.stop()
    if getattr(on, "sink", None) is not None:
        on.sink.close()
    on.redis.stop()
    on.wd.cleanup()


class ModuleStack:
    """One stack for a whole test module, started by the first test class
    that needs it (share) and stopped by the module's tearDownModule (stop).
    A subclass writes setup() (start_stack, then what its tests share),
    names in `shared` the attributes its test classes take, and closes in
    teardown() what setup() started beside the stack. stop() fails when
    pixrelay did not exit cleanly (check_exit; the ASan build reports leaks
    at exit)."""
    ready = False
    shared = ()

    @classmethod
    def setup(cls):
        raise NotImplementedError

    @classmethod
    def teardown(cls):
        """What setup() started beside the stack, once pixrelay stopped."""

    @classmethod
    def start(cls):
        if not cls.ready:
            cls.setup()
            cls.ready = True
        return cls

    @classmethod
    def share(cls, to):
        """Start the stack and give the test class `to` its shared attributes
        (and itself as `to.env`)."""
        cls.start()
        to.env = cls
        for name in cls.shared:
            setattr(to, name, getattr(cls, name))

    @classmethod
    def stop(cls):
        if cls.ready:
            cls.ready = False
            code = cls.px.stop()
            log = cls.px.log()
            cls.teardown()
            stop_stack(cls)
            check_exit(code, log)


def store_account(redis, px, name, env="sandbox"):
    """An account of `env` written straight into Redis (the fields charges and
    banks read of it, as test_charges.py stores them) and a key of it:
    (account id, key)."""
    import random
    account = new_ulid()
    redis.cmd("HSET", acct_key(env, account), "id", account, "env", env,
              "kind", "business", "officialName", name + " Ltda", "tradeName", name,
              "status", "ACTIVE", "created_at", "0", "owner", "",
              "pix_key", "c1f7c2a4-3d5e-4f60-8a9b-%012d" % random.randrange(10 ** 12))
    return account, px.create_key(env, account=account)["key"]


def connect_bank(px, env="production", account=None, chave=None, default=False):
    """A bank connection (URL token) of `account` (None: the platform account
    of `env`), so that its charges have a bank to receive them: in
    production a charge no bank would receive is refused, and a charge's
    static BR Code carries its charging connection's Pix key (docs/banks.md,
    "The key on the QR"). Returns the connection as `bank connect --json`
    prints it."""
    import random
    chave = chave or "recebe-%d@loja.example" % random.randrange(10 ** 9)
    args = ["bank", "connect", "--env", env, "--chave", chave, "--url-token", "--json"]
    if account:
        args += ["--account", account]
    if default:
        args.append("--default")
    return json.loads(px.cli(*args).stdout)


def check_exit(code, log):
    """A process stopped with SIGTERM exits 0, with no sanitizer report (the
    ASan build reports leaks at exit)."""
    if code != 0 or "Sanitizer" in log:
        raise AssertionError("pixrelay exited %s:\n%s" % (code, log[-3000:]))


def init_platforms(px):
    """Run `pixrelay init --json`: the platform account of each environment,
    {"sandbox": ID, "production": ID}."""
    init = json.loads(px.cli("init", "--json").stdout)
    return {env: init[env]["account"] for env in ("sandbox", "production")}


class Processes(unittest.TestCase):
    """For each test, a work dir, a Redis, a Sink and the pixrelay processes
    that start() starts on them (self.procs), all stopped after the test."""

    def setUp(self):
        self.wd = Workdir()
        self.redis = Redis(self.wd.path).start()
        self.sink = Sink().start()
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            p.stop()
        self.sink.close()
        self.redis.stop()
        self.wd.cleanup()

    def start(self, args=(), name=None):
        """A ready pixrelay run with `args`, named px0, px1, ... unless `name`."""
        px = Pixrelay(self.wd.path, self.redis, args=list(args),
                      name=name or "px%d" % len(self.procs))
        px.start()
        px.wait_ready()
        self.procs.append(px)
        return px


# ---- where pixrelay keeps things in Redis: the names of docs/storage.md, as
# include/pixrelay/pix/keyspace.h builds them (ks_shard_of, ks_*_key) ----

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
    """The Redis key of `what` (e.g. "ch:") for an id, in the id's shard
    (ks_charge_key and its kin for the id's ks_shard_of)."""
    return "%s{s%d}:%s%s" % (prefix, shard_of(id), what, id)


def stored_event(redis, account, id, prefix="pixrelay:"):
    """What Redis holds of event `id` of `account` (docs/event-layout.md), as a
    dict: its hash p e:<id> when it has one; else its entry in its shard's
    stream p s, found by the event's score in the account's listing (the
    entry's ms), as the fields env account type url queue order body
    created_ms sid. None when neither holds it."""
    h = redis.cmd("HGETALL", rkey("e:", id, prefix))
    if h:
        return dict(zip(h[::2], h[1::2]))
    ms = redis.cmd("ZSCORE", rkey("a:", account, prefix), id)
    if ms is None:
        return None
    sp = rkey("", account, prefix)[:-len(account)]  # <prefix>{s<k>}:
    for sid, f in redis.cmd("XRANGE", sp + "s", ms, ms):
        v = dict(zip(f[::2], f[1::2]))
        # m: order key, queue, id, env, account, type, url; b: the body
        order, queue, eid, env, acc, etype, url = v["m"].split("\n", 6)
        if eid == id:
            return {"env": env, "account": acc, "type": etype, "url": url, "queue": queue,
                    "order": order, "body": v["b"], "created_ms": sid.split("-")[0], "sid": sid}
    return None


def acct_key(env, id, prefix="pixrelay:"):
    """The record of account `id` of `env` (ks_account_key)."""
    return rkey("acct:%s:" % env, id, prefix)
