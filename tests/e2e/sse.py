"""A Server-Sent Events client for the tests: a plain socket, HTTP/1.1, the
chunked body decoded, events parsed as the SSE specification says."""
import base64
import hashlib
import hmac
import json
import socket
import time


def verify(secret, headers, body):
    """Standard Webhooks verification, as docs/postbacks.md shows it (standard library)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    msg_id, ts = headers["webhook-id"], headers["webhook-timestamp"]
    if abs(time.time() - int(ts)) > 300:
        return False
    signed = f"{msg_id}.{ts}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(expected, s.split(",", 1)[1])
               for s in headers["webhook-signature"].split() if s.startswith("v1,"))


class Stream:
    def __init__(self, port, key=None, path="/v1/events/stream", headers=None, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(10)
        self.sock.connect(("127.0.0.1", port))
        h = {"Host": "127.0.0.1", "Accept": "text/event-stream"}
        if key:
            h["Authorization"] = "Bearer " + key
        h.update(headers or {})
        req = "GET %s HTTP/1.1\r\n" % path + "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
        self.sock.sendall(req.encode())
        self.raw = b""
        self.body = b""      # the decoded body so far
        self.pos = 0         # parsed up to here
        self.status = None
        self.headers = {}
        self.chunked = False
        self.eof = False
        self.comments = []
        self.events = []     # (id, data) in order

    def _fill(self, timeout):
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return False
        except ConnectionResetError:
            data = b""
        if not data:
            self.eof = True
            return False
        self.raw += data
        self._decode()
        return True

    def _decode(self):
        if self.status is None:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.raw[:end].decode("latin-1").split("\r\n")
            self.status = int(head[0].split()[1])
            for line in head[1:]:
                k, v = line.split(":", 1)
                self.headers[k.strip().lower()] = v.strip()
            self.chunked = self.headers.get("transfer-encoding") == "chunked"
            self.raw = self.raw[end + 4:]
        if not self.chunked:
            self.body += self.raw
            self.raw = b""
            return
        while True:
            nl = self.raw.find(b"\r\n")
            if nl < 0:
                return
            size = int(self.raw[:nl], 16)
            if len(self.raw) < nl + 2 + size + 2:
                return
            self.body += self.raw[nl + 2:nl + 2 + size]
            self.raw = self.raw[nl + 2 + size + 2:]
            if size == 0:
                self.eof = True
                return

    def head(self, timeout=10):
        deadline = time.time() + timeout
        while self.status is None and not self.eof and time.time() < deadline:
            self._fill(max(0.01, deadline - time.time()))
        return self.status

    def json(self):
        return json.loads(self.body)

    def _parse(self):
        while True:
            end = self.body.find(b"\n\n", self.pos)
            if end < 0:
                return
            block = self.body[self.pos:end].decode()
            self.pos = end + 2
            eid, data = None, []
            for line in block.split("\n"):
                if line.startswith(":"):
                    self.comments.append(line[1:].strip())
                elif line.startswith("id: "):
                    eid = line[4:]
                elif line.startswith("data: "):
                    data.append(line[6:])
            if data:
                self.events.append((eid, json.loads("\n".join(data))))

    def wait_events(self, n, timeout=10):
        """Wait until n events in all came; returns them all."""
        deadline = time.time() + timeout
        self._parse()
        while len(self.events) < n and not self.eof and time.time() < deadline:
            self._fill(max(0.01, deadline - time.time()))
            self._parse()
        if len(self.events) < n:
            raise AssertionError("got %d events of %d (eof=%s): %r" % (len(self.events), n, self.eof,
                                                                         self.body[-500:]))
        return self.events

    def wait_comment(self, text, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            self._parse()
            if any(text in c for c in self.comments):
                return True
            if self.eof:
                break
            self._fill(max(0.01, deadline - time.time()))
        raise AssertionError("no comment %r in %r" % (text, self.comments))

    def wait_eof(self, timeout=10):
        deadline = time.time() + timeout
        while not self.eof and time.time() < deadline:
            self._fill(max(0.01, deadline - time.time()))
        return self.eof

    def close(self):
        self.sock.close()
