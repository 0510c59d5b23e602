"""What the tests' bank and the tests' providers share: an HTTPS server on
127.0.0.1 with the knobs and the records the tests drive.

testbank.py (the API Pix), testwoovi.py, testasaas.py and testmp.py each
subclass FakeServer; this module holds no rule of any of them. A server
listens with TLS (a client certificate demanded where it is given a CA for
them), makes each connection's TLS handshake in that connection's thread,
tracks the open connections (down() cuts them), and answers each request
through one loop:

    read the body          (_read_body: at most MAX_BODY; a refusal kept
                            for later, answered _answer_early)
    count it               self.calls[endpoint]
    wait                   slow(seconds, duration=None)
    answer as down()       "close": no answer; "503" (and "refuse" for a
                            connection opened just before the port closed):
                            _answer_unavailable
    else                   _dispatch; an exception there is a bug of the
                            server's: a violation ("where" bug_where) and
                            _answer_bug's 500, so no test passes on it

and logs every call in self.log (Call, before its answer leaves: a client
that has the answer finds it there). A server with a route table (ROUTES:
(method, template, handler name, ...)) gets routing, 404 and 405 from
RoutedServer; its errors are shaped by _error(status, code, message).

    srv.port, srv.origin, srv.url (origin + prefix)
    srv.down(seconds=None, mode="refuse" | "503" | "close"), srv.up()
    srv.slow(seconds, duration=None)
    srv.calls, srv.log, srv.handshake_failures, srv.violations,
    srv.take_violations()
    srv.receiver_ca, srv.deliveries, srv.webhook_faults(...),
    srv.wait_deliveries(n)   (the server's notification sender, _sender)

The notification senders (bankhook.py, wooviwebhook.py, asaaswebhook.py)
share SenderRecords (the wait for n calls, one POST with its record) and
CallRecord (what each of their Delivery records holds). And the servers
share the times: utc_now(), rfc3339(moment), parse_time(value).
"""
import collections
import datetime
import hmac
import http.client
import json
import math
import shutil
import socket
import ssl
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bankspec import Violation
from harness import http_connection

MAX_BODY = 1 << 20

Call = collections.namedtuple("Call", "time method path endpoint status")
Call.__doc__ = """One request a server answered (or dropped: status None)."""


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def rfc3339(moment):
    """2020-09-09T20:15:00.358Z: UTC, milliseconds (as the API Pix and
    Woovi write times)."""
    moment = moment.astimezone(datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


def parse_time(value):
    """An aware datetime from an RFC 3339 (ISO 8601) text, Z, z or an
    offset, or a datetime (naive = UTC)."""
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value


def same(a, b):
    """Whether two texts are equal, compared in constant time."""
    return hmac.compare_digest(a.encode(), b.encode())


def knob(owner, name, doc):
    """A property that reads and writes self.<owner>.<name>."""
    return property(lambda self: getattr(getattr(self, owner), name),
                    lambda self, value: setattr(getattr(self, owner), name, value), doc=doc)


def match_route(routes, method, path):
    """(template, route, {param: value}) of the first route of `routes`
    ((method, template, ...) each; a {name} part matches one non-empty
    part) that matches; a path that matches a template only with another
    method gives (template, None, params); None when none matches."""
    parts = path.split("/")
    hit = None
    for route in routes:
        m, template = route[0], route[1]
        tparts = template.split("/")
        if len(tparts) != len(parts):
            continue
        params = {}
        for t, p in zip(tparts, parts):
            if t.startswith("{"):
                if not p:
                    break
                params[t[1:-1]] = urllib.parse.unquote(p)
            elif t != p:
                break
        else:
            if m == method:
                return template, route, params
            hit = hit or (template, None, params)
    return hit


# ---------------------------------------------------------------------------
# The HTTP side

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30

    def version_string(self):
        return self.server.owner.server_version + " " + self.sys_version

    def log_message(self, *args):
        pass

    def _handle(self):
        self.server.owner._serve(self)

    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def finish_request(self, request, client_address):
        """The TLS handshake in the connection's own thread (a client that
        stalls holds up nobody else), then HTTP over it."""
        owner = self.owner
        request.settimeout(10)
        # headers and body leave in two writes: without this, Nagle and the
        # client's delayed ACK hold every answer ~40 ms
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            conn = owner._server_ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            owner._handshake_failed(e)
            return
        owner._track(conn, True)
        try:
            self.RequestHandlerClass(conn, client_address, self)
        except OSError:
            pass
        finally:
            owner._track(conn, False)
            try:
                conn.close()
            except OSError:
                pass


class FakeServer:
    """The base of the tests' bank and providers (see the module's text).
    A subclass sets `name` (threads, the temporary directory, its bug's
    detail) and server_version, calls _init_server() in its __init__, makes
    self._sender (close(), wait(), faults(), receiver_ca, deliveries) and
    gives _dispatch and the _answer_* hooks."""
    __test__ = False   # not a unittest class, whatever a collector thinks

    name = "fakeserver"
    server_version = "pixrelay-fakeserver"
    prefix = ""                       # the API's path under the origin
    json_type = "application/json"    # Content-Type of a JSON answer
    handshake_reasons = False         # handshake_failures: "REASON (error)" rather than the error
    bug_where = "server"              # a bug's violation: where
    bug_detail = None                 # and its detail (None: "<name> failed")

    def _init_server(self, directory, host, port):
        """The state every server keeps: `directory` (a temporary one,
        removed by close(), when None), the records, the knobs."""
        self._own_dir = directory is None
        self.directory = directory or tempfile.mkdtemp(prefix="pixrelay-%s-" % self.name)
        self.host, self._port = host, port
        self._lock = threading.RLock()
        self.violations = []
        self.log = []
        self.calls = collections.Counter()
        self.handshake_failures = []
        self._down_until = None    # monotonic deadline, math.inf, or None
        self._down_mode = None
        self._slow = 0.0
        self._slow_until = None
        self._timers = []
        self._stopping = threading.Event()
        self._conns = set()
        self._server = self._thread = self._server_ctx = None

    # ---- life cycle ----

    def _serve_tls(self, cert, client_ca=None):
        """Listen with `cert` (a certs.Cert), TLS 1.2 at least; with
        client_ca, a client certificate it signed is demanded."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(cert.cert, cert.key)
        if client_ca is not None:
            ctx.load_verify_locations(client_ca)
            ctx.verify_mode = ssl.CERT_REQUIRED
        self._server_ctx = ctx
        self._listen()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Stop serving and sending: open connections are closed, answers
        being delayed are dropped, calls waiting for a retry abandoned; the
        temporary directory is removed."""
        self._stopping.set()
        with self._lock:
            timers, self._timers = self._timers, []
        for t in timers:
            t.cancel()
        self._unlisten()
        self._sender.close()
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def _listen(self):
        with self._lock:
            if self._server is not None or self._stopping.is_set():
                return
            srv = _Server((self.host, self._port), _Handler)
            srv.owner = self
            self._port = srv.server_address[1]
            self._server = srv
            self._thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                                            daemon=True, name="%s-%d" % (self.name, self._port))
            self._thread.start()

    def _unlisten(self):
        with self._lock:
            srv, thread, self._server = self._server, self._thread, None
            conns = list(self._conns)
        if srv is None:
            return
        srv.shutdown()
        srv.server_close()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        thread.join(5)

    def _track(self, conn, alive):
        with self._lock:
            (self._conns.add if alive else self._conns.discard)(conn)

    def _handshake_failed(self, err):
        reason = getattr(err, "reason", None) if self.handshake_reasons else None
        with self._lock:
            self.handshake_failures.append("%s (%s)" % (reason, err) if reason else str(err))

    @property
    def port(self):
        return self._port

    @property
    def origin(self):
        return "https://%s:%d" % (self.host, self._port)

    @property
    def url(self):
        """The API's base URL: the API's paths go after it."""
        return self.origin + self.prefix

    # ---- knobs ----

    def down(self, seconds=None, mode="refuse"):
        """Out of service for `seconds` (None: until up()). mode "refuse":
        the port is closed, connections are refused and open ones cut;
        "503": every call is answered 503 (with Retry-After); "close": the
        request is read and the connection closed unanswered."""
        if mode not in ("refuse", "503", "close"):
            raise ValueError("mode is refuse, 503 or close")
        with self._lock:
            self._down_mode = mode
            self._down_until = math.inf if seconds is None else time.monotonic() + seconds
        if mode == "refuse":
            self._unlisten()
        if seconds is not None:
            self._later(seconds, self._up_if_due)

    def up(self):
        """Back in service now."""
        with self._lock:
            self._down_until = self._down_mode = None
        self._listen()

    def _up_if_due(self):
        with self._lock:
            due = self._down_until is not None and time.monotonic() >= self._down_until - 0.001
        if due:
            self.up()

    def _later(self, seconds, fn):
        t = threading.Timer(seconds, fn)
        t.daemon = True
        with self._lock:
            self._timers.append(t)
        t.start()

    def _down_now(self):
        with self._lock:
            if self._down_until is not None and time.monotonic() >= self._down_until:
                self._down_until = self._down_mode = None
            return self._down_mode

    def slow(self, seconds, duration=None):
        """Every answer waits `seconds` before it is sent, for `duration`
        seconds (None: until slow(0))."""
        with self._lock:
            self._slow = seconds
            self._slow_until = None if duration is None else time.monotonic() + duration

    def _delay_now(self):
        with self._lock:
            if self._slow_until is not None and time.monotonic() >= self._slow_until:
                self._slow, self._slow_until = 0.0, None
            return self._slow

    receiver_ca = knob("_sender", "receiver_ca", "the CA file trusted for an https notification receiver")
    deliveries = knob("_sender", "deliveries", "every notification call, dropped ones too")

    def webhook_faults(self, drop=0.0, twice=0.0, delay=0.0, delay_seconds=0.5, seed=0):
        """Each notification from now on is, by three draws of a random
        seeded with `seed`: never sent (recorded as dropped) with
        probability `drop`; else sent twice with probability `twice`; and
        held `delay_seconds` first with probability `delay` (a held one may
        arrive after later ones). No arguments: no faults."""
        self._sender.faults(drop, twice, delay, delay_seconds, seed)

    def wait_deliveries(self, n, timeout=10.0):
        """Wait until at least n notification calls are over (answered,
        failed or dropped); return them all. AssertionError on timeout."""
        return self._sender.wait(n, timeout)

    def take_violations(self):
        """The violations so far, and forget them (for a test that caused
        them on purpose)."""
        with self._lock:
            out, self.violations = self.violations, []
            return out

    def _violation(self, where, kind, endpoint, path, status, errors, detail):
        with self._lock:
            self.violations.append(Violation(where, kind, endpoint, path, status, errors, detail))

    # ---- serving ----

    def _serve(self, h):
        method, target = h.command, h.path
        path, _, query = target.partition("?")
        found, endpoint = self._resolve(method, path)
        h.fake_call = (method, target, endpoint, self._call_extra(h))
        body, early = self._read_body(h)
        with self._lock:
            self.calls[endpoint] += 1
        delay = self._delay_now()
        if delay:
            self._stopping.wait(delay)
        mode = self._down_now()
        if self._stopping.is_set() or mode == "close":
            h.close_connection = True
            self._log(h, None)
        elif mode in ("503", "refuse"):
            # "refuse" with a connection opened just before the port closed
            self._answer_unavailable(h, path)
        elif early is not None:
            self._answer_early(h, early)
        else:
            try:
                self._dispatch(h, method, path, query, body, found, endpoint)
            except Exception as e:   # a bug of the server's: recorded, so no test passes on it
                self._violation(self.bug_where, "error", endpoint, target, 500, [("$", repr(e))],
                                self.bug_detail or "%s failed" % self.name)
                self._answer_bug(h, e)
                h.close_connection = True

    # the subclass's part of the loop

    def _resolve(self, method, path):
        """(what _dispatch is given as found, the endpoint: "GET /pix")."""
        raise NotImplementedError

    def _dispatch(self, h, method, path, query, body, found, endpoint):
        """Answer the request (every answer through _send)."""
        raise NotImplementedError

    def _answer_unavailable(self, h, path):
        raise NotImplementedError

    def _answer_early(self, h, early):
        """Answer the refusal _read_body kept."""
        raise NotImplementedError

    def _answer_bug(self, h, e):
        """Answer 500 for the exception e of _dispatch."""
        raise NotImplementedError

    def _call_extra(self, h):
        """The fields of the call's Call after its status (none here)."""
        return ()

    def _log(self, h, status):
        """The call in self.log, before its answer leaves."""
        method, target, endpoint, extra = h.fake_call
        with self._lock:
            self.log.append(self.Call(time.time(), method, target, endpoint, status, *extra))

    Call = Call

    def _read_body(self, h):
        """(body bytes or None, None), or (None, True) for a body larger
        than MAX_BODY or chunked (the connection is closed after the
        answer, _answer_early's)."""
        n = int(h.headers.get("Content-Length") or 0)
        if n > MAX_BODY or h.headers.get("Transfer-Encoding"):
            h.close_connection = True
            return None, True
        return (h.rfile.read(n) if n > 0 else None), None

    def _encode(self, body):
        """A JSON answer's bytes."""
        return json.dumps(body, ensure_ascii=False).encode()

    def _send(self, h, status, body, headers=None, content_type=None):
        """Answer; body is a JSON value, bytes, or None (no body); logged
        first. Returns status."""
        if isinstance(body, (bytes, bytearray)):
            data = bytes(body)
        elif body is None:
            data = b""
        else:
            data = self._encode(body)
        self._log(h, status)
        try:
            h.send_response(status)
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            if data or status not in (204, 304):
                if data:
                    h.send_header("Content-Type", content_type or self.json_type)
                h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            if data and h.command != "HEAD":
                h.wfile.write(data)
            h.wfile.flush()
        except OSError:
            h.close_connection = True
        return status


class RoutedServer(FakeServer):
    """A server with a route table, ROUTES: (method, template, handler
    name, ...) in the order they are tried; errors shaped by _error(status,
    code, message). too_large_code, not_found_message, allow_header and
    bug_message(e) are the details where the providers differ."""
    ROUTES = ()
    too_large_code = "request_entity_too_large"
    not_found_message = "Not Found"
    allow_header = True    # a 405 names the methods of the path in Allow

    def _error(self, status, code, message):
        raise NotImplementedError

    def _schema_refusal(self, message):
        """The subclass's refusal (400, a "schema" violation) of a body."""
        raise NotImplementedError

    def _resolve(self, method, path):
        found = match_route(self.ROUTES, method, path)
        return found, "%s %s" % (method, found[0] if found else path)

    def _answer_unavailable(self, h, path):
        return self._send(h, 503, self._error(503, "service_unavailable", "Service Unavailable"), {"Retry-After": "1"})

    def _answer_early(self, h, early):
        return self._send(h, 413, self._error(413, self.too_large_code, "body too large or chunked"))

    def _bug_message(self, e):
        return "internal error: %r" % (e,)

    def _answer_bug(self, h, e):
        return self._send(h, 500, self._error(500, "internal_error", self._bug_message(e)))

    def _dispatch(self, h, method, path, query, raw, found, endpoint):
        if found is None:
            return self._send(h, 404, self._error(404, "not_found", self.not_found_message))
        template, route, params = found
        if route is None:
            allow = {"Allow": ", ".join(r[0] for r in self.ROUTES if r[1] == template)} if self.allow_header else None
            return self._send(h, 405, self._error(405, "method_not_allowed", "Method Not Allowed"), allow)
        return self._api(h, method, query, raw, template, route, params, endpoint)

    def _read_json(self, h, raw, loads=json.loads):
        """The request's JSON body (None when it has none); the subclass's
        _schema_refusal when it is not application/json or not JSON."""
        if not raw:
            return None
        ctype = h.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise self._schema_refusal("Content-Type: application/json expected")
        try:
            return loads(raw)
        except ValueError as e:
            raise self._schema_refusal("body: not JSON (%s)" % e) from None

    def wait_settled(self, timeout=30.0):
        """Wait until no notification is being sent or waits for a retry;
        return every Delivery. AssertionError on timeout."""
        return self._sender.wait_settled(timeout)


# ---------------------------------------------------------------------------
# The notification senders' common part

class CallRecord:
    """What a sender's Delivery holds besides its own fields: dropped (a
    fault knob's), status and answer (bytes) the receiver's, error the
    reason when there is none, sent_at time.time() of the sending, done
    set when it is over."""

    def __init__(self):
        self.dropped = False
        self.status = self.answer = self.error = self.sent_at = None
        self.done = threading.Event()

    @property
    def ok(self):
        return self.status is not None and 200 <= self.status < 300

    @property
    def json(self):
        return json.loads(self.body)

    def _state(self):
        """For a repr: dropped, the error, the status, or pending."""
        return ("dropped" if self.dropped else self.error if self.error
                else self.status if self.done.is_set() else "pending")


class SenderRecords:
    """For a sender with self.deliveries (each with .done, an Event) and
    self._cond (a Condition): the wait for calls, and one POST recorded in
    its Delivery. `label` names the sender in its timeouts' messages."""
    label = "sender"
    noun = "calls"
    receiver_ca = None

    def _finish(self, d):
        with self._cond:
            d.done.set()
            self._cond.notify_all()

    def wait(self, n, timeout=10.0):
        """Wait until at least n calls are over (answered, failed or
        dropped); return every Delivery. AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                done = [d for d in self.deliveries if d.done.is_set()]
                if len(done) >= n:
                    return list(self.deliveries)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("%s: %d of %d %s over: %r"
                                         % (self.label, len(done), n, self.noun, self.deliveries[-10:]))
                self._cond.wait(min(left, 0.2))

    def _connection(self, url, timeout):
        """(connection, request target) for an http(s) URL or unix:PATH:/uri."""
        return http_connection(url, self.receiver_ca, timeout)

    def _post_call(self, d, headers, timeout=10):
        """POST d.body to d.url with `headers`: d.sent_at, then d.status
        and d.answer, or d.error; d is done after."""
        try:
            conn, target = self._connection(d.url, timeout)
            d.sent_at = time.time()
            try:
                conn.request("POST", target, d.body, headers)
                resp = conn.getresponse()
                d.answer = resp.read()
                d.status = resp.status
            finally:
                conn.close()
        except (OSError, http.client.HTTPException, ValueError) as e:
            d.error = "%s: %s" % (type(e).__name__, e)
        self._finish(d)
