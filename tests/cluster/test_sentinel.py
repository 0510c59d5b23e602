"""Sentinel drill: one master with a replica, three sentinels, pixrelay given
only the sentinels and the master's name (redis-sentinel://...). The master is
SIGKILLed while clients create charges: pixrelay answers 200 or 503, 503 only
until shortly after the sentinels have promoted the replica, then carries on
with it by itself; the old master, back, is a replica and pixrelay stays with
the new one."""
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import (BIN, REDIS_SERVER, ClusterNode, Pixrelay, Workdir, _free_port_pair, _live,  # noqa: E402
                     _tcp_cmd, auth, wait_for)
from test_failover import GRACE_S, Load  # noqa: E402

MASTER = "pixmaster"


class Node(ClusterNode):
    """A plain redis-server on loopback (AOF always), optionally a replica."""

    def __init__(self, root, port, master_port=None):
        self.port = port
        self.dir = os.path.join(root, "r%d" % port)
        os.makedirs(self.dir, exist_ok=True)
        self.proc = None
        with open(os.path.join(self.dir, "redis.conf"), "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s/redis.log\nappendonly yes\n"
                    "appendfsync always\nsave \"\"\nrepl-diskless-sync-delay 0\n"
                    % (port, self.dir, self.dir))
            if master_port:
                f.write("replicaof 127.0.0.1 %d\n" % master_port)


class SentinelProc:
    def __init__(self, root, port, master_port, password=None):
        self.port = port
        self.password = password
        self.dir = os.path.join(root, "s%d" % port)
        os.makedirs(self.dir, exist_ok=True)
        self.conf = os.path.join(self.dir, "sentinel.conf")
        with open(self.conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s/sentinel.log\n"
                    "sentinel monitor %s 127.0.0.1 %d 2\n"
                    "sentinel down-after-milliseconds %s 1000\n"
                    "sentinel failover-timeout %s 5000\n"
                    "sentinel parallel-syncs %s 1\n"
                    % (port, self.dir, self.dir, MASTER, master_port, MASTER, MASTER, MASTER))
            if password:
                # clients and the other sentinels must authenticate
                f.write("requirepass %s\nsentinel sentinel-pass %s\n" % (password, password))
        self.proc = subprocess.Popen([REDIS_SERVER, self.conf, "--sentinel"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _live.append(self.proc)
        wait_for(lambda: _tcp_cmd(port, "PING", password=password) == "PONG",
                 what="sentinel to answer")

    def cmd(self, *args):
        return _tcp_cmd(self.port, *args, password=self.password)

    def master(self):
        return self.cmd("SENTINEL", "get-master-addr-by-name", MASTER)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.proc in _live:
            _live.remove(self.proc)


class SentinelSetup(unittest.TestCase):
    """One master, one replica, three sentinels (with PASSWORD, if set)."""
    PASSWORD = None

    def setUp(self):
        self.wd = Workdir()
        self.master = Node(self.wd.path, _free_port_pair())
        self.master.start()
        self.replica = Node(self.wd.path, _free_port_pair(), self.master.port)
        self.replica.start()
        wait_for(lambda: self.replica.info("replication")["master_link_status"] == "up",
                 what="the replica to sync")
        self.sentinels = [SentinelProc(self.wd.path, _free_port_pair(), self.master.port,
                                       self.PASSWORD) for _ in range(3)]
        # every sentinel knows the replica and the other sentinels
        wait_for(lambda: all(int(dict(zip(*[iter(s.cmd("SENTINEL", "master", MASTER))] * 2))
                                  ["num-other-sentinels"]) == 2 for s in self.sentinels),
                 timeout=30, what="the sentinels to find each other")
        self.url = "redis-sentinel://%s/%s" % (
            ",".join("127.0.0.1:%d" % s.port for s in self.sentinels), MASTER)
        self.px = None

    def tearDown(self):
        if self.px:
            self.px.stop(signal.SIGKILL)
        for s in self.sentinels:
            s.stop()
        self.master.stop()
        self.replica.stop()
        self.wd.cleanup()


class Sentinel(SentinelSetup):
    def test_sigkill_of_the_master_during_load(self):
        class Addr:
            url = self.url
        px = self.px = Pixrelay(self.wd.path, Addr()).start()
        px.wait_ready()
        # the log is written out on a timer: wait for the line
        line = "redis sentinel: master '%s' is 127.0.0.1:%d" % (MASTER, self.master.port)
        wait_for(lambda: line in px.log(), timeout=5, what=line)
        pid = px.proc.pid
        px.cli("init")
        key = px.create_key("sandbox")
        with Load(px, key["key"]) as load:
            time.sleep(2)
            t_kill = time.time()
            self.master.stop(signal.SIGKILL)
            wait_for(lambda: self.sentinels[0].master()[1] == str(self.replica.port), timeout=30,
                     interval=0.05, what="the sentinels to promote the replica")
            t_ok = time.time()
            wait_for(lambda: self.replica.info("replication")["role"] == "master", timeout=10)
            time.sleep(GRACE_S + 3)
            # the old master comes back: the sentinels make it a replica
            self.master.start()
            wait_for(lambda: self.master.info("replication").get("master_link_status") == "up",
                     timeout=30, what="the old master to become a replica")
            t_back = time.time()
            time.sleep(2)

        self.assertEqual(px.proc.poll(), None)
        self.assertEqual(px.proc.pid, pid)
        # the log is written out on a timer: wait for the line
        line = "redis sentinel: master '%s' is 127.0.0.1:%d" % (MASTER, self.replica.port)
        wait_for(lambda: line in px.log(), timeout=5, what=line)
        statuses = {a[2] for a in load.answers}
        self.assertTrue(statuses <= {200, 503}, [a for a in load.answers if a[2] not in (200, 503)][:5])
        self.assertIn(503, statuses)
        for a in load.answers:
            if a[2] == 503:
                self.assertGreaterEqual(a[1], t_kill, a)
                self.assertLessEqual(a[0], t_ok + GRACE_S, a)
        after = [a for a in load.answers if a[0] > t_ok + GRACE_S]
        self.assertGreater(len(after), 10)
        self.assertEqual({a[2] for a in after}, {200})
        self.assertTrue(any(a[0] > t_back and a[2] == 200 for a in load.answers))
        # charges made after the switch are on the new master
        last = [a[3] for a in load.answers if a[2] == 200][-1]
        self.assertEqual(px.request("GET", "/v1/charge/pix/" + last, headers=auth(key["key"])).status,
                         200)
        window = max(a[1] for a in load.answers if a[2] == 503) - t_kill
        sys.stderr.write("sentinel failover: %d answers, %d x 503 within %.1f s of the kill "
                         "(the sentinels took %.1f s)\n"
                         % (len(load.answers), sum(1 for a in load.answers if a[2] == 503), window,
                            t_ok - t_kill))


class SentinelPassword(SentinelSetup):
    """Sentinels with requirepass: redis-sentinel-password, never logged."""
    PASSWORD = "s3nt1nel-only-pw"

    def test_sentinels_that_require_a_password(self):
        class Addr:
            url = self.url
        # without it: not ready, and the log says why
        px = self.px = Pixrelay(self.wd.path, Addr()).start()
        wait_for(lambda: "NOAUTH" in px.log() or "Authentication required" in px.log() or None,
                 what="the sentinels' refusal in the log")
        self.assertEqual(px.request("GET", "/readyz").status, 503)
        self.assertEqual(px.stop(), 0)
        p = subprocess.run([BIN, "--redis", self.url, "init"], capture_output=True, text=True,
                           timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("Authentication required", p.stderr)
        # a wrong one: refused at once, and not echoed
        p = subprocess.run([BIN, "--redis", self.url, "--redis-sentinel-password", "bad-pw-7731",
                            "init"], capture_output=True, text=True, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("WRONGPASS", p.stderr)
        self.assertNotIn("bad-pw-7731", p.stderr)
        # one longer than 255 bytes: refused before anything starts, by serve and by the
        # CLI alike, never cut to a prefix and tried, and not echoed
        long_pw = "L" * 256
        for args in (["serve", "--listen", "127.0.0.1:0"], ["init"]):
            p = subprocess.run([BIN, "--redis", self.url, "--redis-sentinel-password", long_pw] + args,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 1, (args, p.stderr))
            self.assertIn("redis-sentinel-password: longer than 255 bytes", p.stderr)
            self.assertNotIn(long_pw[:20], p.stderr)
        # with it (a flag for serve, the environment for the CLI below): the
        # sentinels answer and the master is used
        px = self.px = Pixrelay(self.wd.path, Addr(),
                                args=["--redis-sentinel-password", self.PASSWORD],
                                env={"PIXRELAY_REDIS_SENTINEL_PASSWORD": self.PASSWORD}).start()
        px.wait_ready()
        # the log is written out on a timer: wait for the line
        line = "redis sentinel: master '%s' is 127.0.0.1:%d" % (MASTER, self.master.port)
        wait_for(lambda: line in px.log(), timeout=5, what=line)
        px.cli("init")
        key = px.create_key("sandbox")
        self.assertEqual(px.request("GET", "/v1/me", headers=auth(key["key"])).status, 200)
        self.assertEqual(px.stop(), 0)
        self.px = None
        self.assertNotIn(self.PASSWORD, px.log() + px.output())

        # the first address refuses the AUTH (a Redis that is no sentinel, without a
        # password): pixrelay passes on to the next one
        class First:
            url = "redis-sentinel://127.0.0.1:%d,%s" % (self.replica.port, self.url.split("://")[1])
        px = self.px = Pixrelay(self.wd.path, First(),
                                env={"PIXRELAY_REDIS_SENTINEL_PASSWORD": self.PASSWORD}).start()
        px.wait_ready(timeout=20)
        line = "redis 127.0.0.1:%d: setup failed" % self.replica.port
        wait_for(lambda: line in px.log(), timeout=5, what=line)
        self.assertEqual(px.request("GET", "/v1/me", headers=auth(key["key"])).status, 200)
        self.assertEqual(px.stop(), 0)
        self.px = None


class WrongSentinel(unittest.TestCase):
    """A sentinel that answers get-master-addr-by-name with a port no Redis
    has (a broken or hostile one, played here by a RESP server of the test's
    own, since a real one will not give it): the CLI says so at once instead
    of waiting for redis-timeout-ms."""

    def serve(self, answer):
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        self.addCleanup(srv.close)

        def one(conn):
            with conn:
                buf = b""
                while True:
                    data = conn.recv(4096)
                    if not data:
                        return
                    buf += data
                    while True:
                        lines = buf.split(b"\r\n")
                        if not buf.startswith(b"*") or len(lines) < 2:
                            break
                        n = int(lines[0][1:])
                        if len(lines) < 2 + 2 * n:
                            break
                        args = [lines[2 + 2 * i] for i in range(n)]
                        buf = b"\r\n".join(lines[1 + 2 * n:])
                        if args[0].upper() == b"SENTINEL":
                            conn.sendall(answer)
                        elif args[0].upper() == b"ROLE":
                            conn.sendall(b"*2\r\n$8\r\nsentinel\r\n*1\r\n$%d\r\n%s\r\n"
                                         % (len(MASTER), MASTER.encode()))
                        else:
                            conn.sendall(b"+OK\r\n")

        def accept():
            while True:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    return
                threading.Thread(target=one, args=(conn,), daemon=True).start()
        threading.Thread(target=accept, daemon=True).start()
        return srv.getsockname()[1]

    def test_a_port_out_of_range_fails_at_once(self):
        for port in (b"0", b"70000"):
            sport = self.serve(b"*2\r\n$9\r\n127.0.0.1\r\n$%d\r\n%s\r\n" % (len(port), port))
            t0 = time.monotonic()
            p = subprocess.run([BIN, "--redis", "redis-sentinel://127.0.0.1:%d/%s" % (sport, MASTER),
                                "--redis-timeout-ms", "10000", "keys", "list"],
                               capture_output=True, text=True, timeout=30)
            took = time.monotonic() - t0
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("redis sentinel 127.0.0.1:%d: gave the port '%s'" % (sport, port.decode()),
                          p.stderr)
            self.assertLess(took, 5, "waited for redis-timeout-ms (10 s)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
