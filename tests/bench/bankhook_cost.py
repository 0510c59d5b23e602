#!/usr/bin/env python3
"""What one bank webhook call costs pixrelay (docs/performance.md): Redis
round trips and CPU per call, for a connection that authenticates its bank
by mutual TLS (the certificate forwarded on the bank door) and for one with
a URL token. Not a CI test: it prints figures.

    python3 tests/bench/bankhook_cost.py [--bin build/pixrelay] [--calls 2000]

What runs: a redis-server and pixrelay (serve, with a bank door), both on
this machine. Each call carries one Pix, the same one every time after the
first (a duplicate: the write deduplicates it and moves nothing, so no
postback runs beside the calls). Round trips are the commands pixrelay sends
(MONITOR, those run inside scripts left out), by command and key; CPU is
pixrelay's user + system time (/proc) over the calls, less what it spends
idle over as long.
"""
import argparse
import collections
import json
import os
import socket
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


class Monitor(threading.Thread):
    """MONITOR on the Redis at `path`: counts the commands clients send (not
    those a script runs), as (command, what its first key names)."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.sock.sendall(b"MONITOR\r\n")
        self.counts = collections.Counter()
        self.raw = collections.Counter()  # (command, its first words)
        self.on = False
        self.lock = threading.Lock()

    def run(self):
        buf = b""
        while True:
            data = self.sock.recv(65536)
            if not data:
                return
            buf += data
            *lines, buf = buf.split(b"\r\n")
            for line in lines:
                self.line(line.decode(errors="replace"))

    def line(self, line):
        # +1700000000.123456 [0 unix:/path] "EVALSHA" "sha" "1" "key" ...
        if not self.on or "[0 lua]" in line or '"' not in line:
            return
        words = line.split('"')[1::2]
        cmd = words[0].upper()
        key = words[3] if cmd in ("EVALSHA", "EVAL") and len(words) > 3 else (
            words[1] if len(words) > 1 else "")
        name = key.split("}:", 1)[1].split(":", 1)[0] if "}:" in key else key
        if cmd in ("PING", "INFO", "MONITOR", "CLIENT", "HELLO", "SUBSCRIBE"):
            return
        with self.lock:
            self.counts[(cmd, name)] += 1
            self.raw[(cmd, tuple(words[:8]))] += 1

    def take(self):
        with self.lock:
            c, self.counts = self.counts, collections.Counter()
            self.raw = collections.Counter()
        return c

    def take_raw(self):
        with self.lock:
            c, self.raw = self.raw, collections.Counter()
            self.counts = collections.Counter()
        return c


def measure(px, mon, path, body, headers, calls):
    """Round trips and CPU ms per call of `calls` POSTs of body to path."""
    from harness import _send, UnixHTTPConnection
    raw = body if isinstance(body, bytes) else None  # bytes: sent as they are (a signature)
    body = None if raw else body
    r = _send(UnixHTTPConnection(px.door, 10), "POST", path, body, headers, raw)
    assert r.status == 200, (r.status, r.body)
    pid = px.proc.pid
    time.sleep(0.5)
    mon.take()
    mon.on = True
    c0, t0 = cpu_seconds(pid), time.time()
    for _ in range(calls):
        r = _send(UnixHTTPConnection(px.door, 10), "POST", path, body, headers, raw)
        assert r.status == 200, (r.status, r.body)
    busy_cpu, wall = cpu_seconds(pid) - c0, time.time() - t0
    mon.on = False
    counts = mon.take()
    # idle: as long, no call
    c1 = cpu_seconds(pid)
    time.sleep(min(wall, 5.0))
    idle_rate = (cpu_seconds(pid) - c1) / min(wall, 5.0)
    cpu_ms = (busy_cpu - idle_rate * wall) * 1000.0 / calls
    return counts, cpu_ms, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=None)
    ap.add_argument("--calls", type=int, default=2000)
    a = ap.parse_args()
    if a.bin:
        os.environ["PIXRELAY_BIN"] = os.path.abspath(a.bin)
    import certs
    from harness import Pixrelay, Redis, Workdir, auth, init_platforms

    wd = Workdir()
    redis = Redis(wd.path).start()
    px = Pixrelay(wd.path, redis, door=True).start()
    try:
        px.wait_ready()
        account = init_platforms(px)["sandbox"]
        key = px.create_key("sandbox", account=account)["key"]
        ca = certs.make_ca(wd.path, "bank-ca")
        client = certs.make_client(wd.path, ca, cn="webhook.bank.example")
        with open(ca.cert) as f:
            ca_pem = f.read()
        with open(client.cert) as f:
            escaped = urllib.parse.quote(f.read(), safe="")
        pin = certs.key_pin(client.cert)
        conns = {}
        for name, body in (("mtls", {"pixKey": "cost-mtls@loja.example", "auth": "mtls",
                                     "clientCa": ca_pem, "clientCertPins": [pin]}),
                           ("url-token", {"pixKey": "cost-token@loja.example",
                                          "auth": "url-token"})):
            r = px.request("POST", "/v1/bank/connections", body=body, headers=auth(key))
            assert r.status == 200, (r.status, r.body)
            conns[name] = r.json["data"]
        mon = Monitor(redis.sock)
        mon.start()
        e2e = "E12345678" + time.strftime("%Y%m%d%H%M", time.gmtime()) + "costcost001"
        pix = {"pix": [{"endToEndId": e2e, "valor": "1.00",
                        "horario": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())}]}
        print("%d calls each, one Pix a call (a duplicate after the first)" % a.calls)
        for name, conn in conns.items():
            url = urllib.parse.urlsplit(conn["webhookUrl"])
            path = url.path + "/pix" + ("?" + url.query if url.query else "")
            headers = {"X-Client-Cert": escaped} if name == "mtls" else {}
            counts, cpu_ms, wall = measure(px, mon, path, pix, headers, a.calls)
            total = sum(counts.values())
            print("\n%s: %.2f round trips and %.3f ms of pixrelay's CPU a call (%.0f calls/s)"
                  % (name, total / a.calls, cpu_ms, a.calls / wall))
            for (cmd, what), n in counts.most_common():
                print("  %-8s %-10s %.3f a call" % (cmd, what, n / a.calls))
    finally:
        px.stop()
        redis.stop()
        wd.cleanup()


if __name__ == "__main__":
    main()
