"""Test hosts in network namespaces of their own, on this machine.

    host = NetHost("pub", "11.77.0.1", "11.77.0.2").create()
    sink = host.sink(8080)          # a sink.Sink running inside the namespace
    ...
    sink.requests("/path")          # what it received
    host.destroy()

Each host is a namespace joined to the test's namespace by a veth pair
(`ip netns add`, `ip link add ... type veth`): the test side gets `near`,
the host gets `far`, both /24. The addresses need not be private: the
namespace reaches nothing but this machine, so a "public" host (say
11.77.0.2) is as safe as a private one. Needs root (CI runs as root).
Everything is removed on destroy() and at exit.
"""
import atexit
import json
import os
import subprocess
import sys
import threading
import time

from harness import wait_for

_hosts = []


def _cleanup():
    for h in list(_hosts):
        h.destroy()


atexit.register(_cleanup)


def available():
    return os.geteuid() == 0 and subprocess.run(
        ["ip", "netns", "list"], capture_output=True).returncode == 0


def _ip(*args, ns=None):
    cmd = ["ip"] + (["netns", "exec", ns, "ip"] if ns else []) + list(args)
    subprocess.run(cmd, check=True, capture_output=True)


class NetHost:
    def __init__(self, tag, near, far):
        self.ns = "pxr%s%d" % (tag, os.getpid())
        self.veth = ("v%s%d" % (tag, os.getpid()))[:12]
        self.near, self.far = near, far
        self.procs = []

    def create(self):
        _hosts.append(self)
        subprocess.run(["ip", "netns", "add", self.ns], check=True, capture_output=True)
        _ip("link", "add", self.veth, "type", "veth", "peer", "name", self.veth + "p")
        _ip("link", "set", self.veth + "p", "netns", self.ns)
        _ip("addr", "add", self.near + "/24", "dev", self.veth)
        _ip("link", "set", self.veth, "up")
        _ip("addr", "add", self.far + "/24", "dev", self.veth + "p", ns=self.ns)
        _ip("link", "set", self.veth + "p", "up", ns=self.ns)
        _ip("link", "set", "lo", "up", ns=self.ns)
        return self

    def sink(self, port):
        s = RemoteSink(self, port)
        self.procs.append(s)
        return s.start()

    def destroy(self):
        for s in self.procs:
            s.close()
        self.procs = []
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
        if self in _hosts:
            _hosts.remove(self)


class RemoteSink:
    """A sink.Sink in the host's namespace; what it receives comes back as
    one JSON line per request on the child's stdout."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self._reqs = []
        self._lock = threading.Lock()
        self.proc = None

    def start(self):
        here = os.path.dirname(os.path.abspath(__file__))
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", self.host.ns, sys.executable, "-u",
             os.path.join(here, "netns.py"), "serve", self.host.far, str(self.port)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        first = self.proc.stdout.readline()
        if first.strip() != "ready":
            raise AssertionError("sink in %s did not start: %r" % (self.host.ns, first))
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self):
        for line in self.proc.stdout:
            with self._lock:
                self._reqs.append(json.loads(line))

    def url(self, path):
        return "http://%s:%d%s" % (self.host.far, self.port, path)

    def requests(self, path=None):
        with self._lock:
            return [r for r in self._reqs if path is None or r["path"] == path]

    def wait_count(self, n, path=None, timeout=10.0):
        return wait_for(lambda: len(self.requests(path)) >= n and self.requests(path),
                        timeout, what="%d request(s) to %s" % (n, path))

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


def _serve(host, port):
    from sink import Sink
    s = Sink(host, port).start()
    print("ready", flush=True)
    seen = 0
    while True:
        reqs = s.requests()
        for r in reqs[seen:]:
            print(json.dumps({"path": r.path, "headers": dict(r.header_list),
                              "body": r.body.decode("utf-8", "replace")}), flush=True)
        seen = len(reqs)
        time.sleep(0.02)


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    _serve(sys.argv[2], int(sys.argv[3]))
