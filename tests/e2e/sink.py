"""A real HTTP sink for postback tests.

It listens on 127.0.0.1 (a port of the system's choosing), records every
request it gets (method, path, headers, raw body, arrival time) and answers
per a script set for each path: a list of replies consumed in order; once a
path's script is used up (or when it has none) the answer is
200 {"received":true}.

A reply is one of:
  - an int: that status with the default body;
  - "close": drop the connection without answering;
  - a Reply(status, headers, body, delay, close); a header value may be a
    function, called when the answer is sent (e.g. an HTTP date);
  - a tuple (status[, headers[, body[, delay]]]).

    sink = Sink().start()
    sink.script("/hook", [500, Reply(503, {"Retry-After": "1"}), "close"])
    url = sink.url("/hook")
    sink.wait_count(3, path="/hook", timeout=10)
    sink.close()
"""
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_BODY = b'{"received":true}'


class Reply:
    def __init__(self, status=200, headers=None, body=None, delay=0.0, close=False):
        self.status = status
        self.headers = dict(headers or {})
        if body is None:
            body = DEFAULT_BODY
        self.body = body.encode() if isinstance(body, str) else body
        self.delay = delay
        self.close = close

    @classmethod
    def of(cls, spec):
        if isinstance(spec, Reply):
            return spec
        if spec == "close":
            return cls(close=True)
        if isinstance(spec, int):
            return cls(spec)
        if isinstance(spec, tuple):
            return cls(*spec)
        raise ValueError("bad reply spec: %r" % (spec,))

    def __repr__(self):
        return "Reply(%s%s%s)" % ("close" if self.close else self.status,
                                  ", delay=%s" % self.delay if self.delay else "",
                                  ", %r" % self.headers if self.headers else "")


class Request:
    """One request as the sink saw it."""

    def __init__(self, method, path, headers, body, at):
        self.method = method
        self.path = path
        self.header_list = headers          # [(name, value)] as sent
        self.body = body                    # raw bytes
        self.time = at                      # time.time() when the body was read
        self.reply = None                   # the Reply it got (set before answering)

    def header(self, name):
        for k, v in self.header_list:
            if k.lower() == name.lower():
                return v
        return None

    def headers_named(self, name):
        return [v for k, v in self.header_list if k.lower() == name.lower()]

    @property
    def json(self):
        return json.loads(self.body)

    @property
    def webhook_id(self):
        return self.header("webhook-id")

    def __repr__(self):
        return "<%s %s id=%s %r>" % (self.method, self.path, self.webhook_id, self.body[:120])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "pixrelay-test-sink"

    def log_message(self, *args):
        pass

    def _handle(self):
        sink = self.server.sink
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n > 0 else b""
        path = self.path.split("?", 1)[0]
        req = Request(self.command, path, list(self.headers.items()), body, time.time())
        reply = sink._record(req)
        if reply.delay:
            sink._stopping.wait(reply.delay)
        if reply.close or sink._stopping.is_set():
            # no answer at all: the client sees the connection close
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        try:
            self.send_response(reply.status)
            names = {k.lower() for k in reply.headers}
            for k, v in reply.headers.items():
                self.send_header(k, v() if callable(v) else v)
            if "content-type" not in names:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
        except OSError:
            # the client went away (timed out, or was killed) while we waited
            self.close_connection = True

    do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = _handle

    def setup(self):
        super().setup()
        self.server.sink._track(self.connection, True)

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass
        self.server.sink._track(self.connection, False)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # bursts of postbacks must not overflow the backlog


class Sink:
    def __init__(self, host="127.0.0.1", port=0):
        self._host, self._port = host, port
        self._lock = threading.Condition()
        self._scripts = {}
        self._requests = []
        self._conns = set()
        self.accepted = 0  # connections accepted so far
        self.max_open = 0  # most connections open at once
        self._stopping = threading.Event()
        self._server = None
        self._thread = None

    # ---- life cycle ----

    def start(self):
        self._server = _Server((self._host, self._port), _Handler)
        self._server.sink = self
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    @property
    def port(self):
        return self._server.server_address[1]

    def url(self, path):
        return "http://%s:%d%s" % (self._host, self.port, path)

    def close(self):
        """Stop serving: answers being delayed are dropped, open connections closed."""
        if not self._server:
            return
        self._stopping.set()
        self._server.shutdown()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._server.server_close()
        self._thread.join(5)
        self._server = None

    def _track(self, conn, alive):
        with self._lock:
            (self._conns.add if alive else self._conns.discard)(conn)
            if alive:
                self.accepted += 1
                self.max_open = max(self.max_open, len(self._conns))

    # ---- scripting ----

    def script(self, path, replies):
        """Replies for the next requests to `path`, in order (replaces any left)."""
        with self._lock:
            self._scripts[path] = [Reply.of(r) for r in replies]

    def _record(self, req):
        with self._lock:
            queue = self._scripts.get(req.path)
            req.reply = queue.pop(0) if queue else Reply()
            self._requests.append(req)
            self._lock.notify_all()
            return req.reply

    # ---- inspection ----

    def requests(self, path=None, webhook_id=None):
        with self._lock:
            return [r for r in self._requests
                    if (path is None or r.path == path)
                    and (webhook_id is None or r.webhook_id == webhook_id)]

    def count(self, path=None, webhook_id=None):
        return len(self.requests(path, webhook_id))

    def wait_until(self, pred, timeout=10.0, what="requests"):
        """Wait until pred(list of all requests) is true; return its value."""
        deadline = time.time() + timeout
        with self._lock:
            while True:
                v = pred(list(self._requests))
                if v:
                    return v
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError("sink: timed out after %.1f s waiting for %s; got %r"
                                         % (timeout, what, self._requests[-10:]))
                self._lock.wait(min(left, 0.5))

    def wait_count(self, n, path=None, webhook_id=None, timeout=10.0):
        """Wait until at least n requests (to path / with webhook-id) arrived; return them."""
        def enough(reqs):
            got = [r for r in reqs if (path is None or r.path == path)
                   and (webhook_id is None or r.webhook_id == webhook_id)]
            return got if len(got) >= n else None
        return self.wait_until(enough, timeout, "%d request(s) to %s" % (n, path or "any path"))
