"""The HTTP server against hostile clients, over raw sockets (issue 9, items 3,
6 and 8): a catalogue of malformed requests on every route of src/api/api.c,
HEAD, keep-alive and pipelining, Expect, chunked bodies, body caps before the
body is read, and drills: slowloris, running out of file descriptors, large
trickled bodies and memory, and a client that does not read its answers.

Every answer is checked as a user sees it: exact status, exact message, the
JSON envelope under /v1, and whether the connection stays open.
"""
import http.client
import json
import os
import re
import resource
import select
import signal
import socket
import threading
import time
import unittest

from harness import Pixrelay, auth, read_to_eof, start_stack, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_BODY = 4096
MAX_UPLOAD = 65536


def api_routes():
    """(method, pattern, flags) of every route in src/api/api.c's table."""
    with open(os.path.join(HERE, "../../src/api/api.c")) as f:
        src = f.read()
    table = src[src.index("const struct http_route api_routes[]"):]
    table = table[:table.index("};")]
    routes = re.findall(r'\{HTTP_(\w+),\s*"([^"]+)",\s*\w+,\s*([^}]*)\}', table)
    assert len(routes) >= 15, routes
    return [(m, p, f) for m, p, f in routes]


def concrete(pattern):
    return pattern.replace("{id}", "01ARZ3NDEKTSV4RRFFQ69G5FAV")


def parse_responses(data, head_only=()):
    """Split raw bytes into [(status, {header: value}, body)]; the i-th
    answer has no body when i is in head_only. Raises on a malformed answer."""
    out = []
    while data:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            raise AssertionError("incomplete answer head: %r" % data[:200])
        lines = data[:end].decode("latin-1").split("\r\n")
        m = re.match(r"HTTP/1\.1 (\d{3}) [^\r\n]+$", lines[0])
        if not m:
            raise AssertionError("bad status line %r" % lines[0])
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            k = k.lower()
            if k in headers:
                raise AssertionError("header %s twice" % k)
            headers[k] = v.strip()
        data = data[end + 4:]
        status = int(m.group(1))
        if status == 100:
            continue
        if len(out) in head_only:
            body = b""
        elif headers.get("transfer-encoding") == "chunked":
            body = b""
            while True:
                eol = data.index(b"\r\n")
                n = int(data[:eol], 16)
                body += data[eol + 2:eol + 2 + n]
                data = data[eol + 2 + n + 2:]
                if n == 0:
                    break
        else:
            n = int(headers["content-length"])
            if len(data) < n:
                raise AssertionError("answer body cut: %d of %d bytes" % (len(data), n))
            body, data = data[:n], data[n:]
        out.append((status, headers, body))
    return out


def exchange(port, data, timeout=5.0, rcvbuf=None):
    """Send `data` on a new connection and read until the server closes it
    (or `timeout`); returns (bytes read, closed by the server)."""
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    got = b""
    closed = False
    try:
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may refuse before the whole request is sent
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            got += chunk
    finally:
        s.close()
    return got, closed


def proc_stat(pid):
    """(utime + stime in seconds, VmRSS in KiB) of a process."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return cpu, rss


class Base(unittest.TestCase):
    args = []

    @classmethod
    def setUpClass(cls):
        start_stack(cls, args=cls.args, name=cls.__name__)
        cls.px.cli("init")
        cls.key = cls.px.create_key("sandbox")["key"]

    @classmethod
    def tearDownClass(cls):
        code = cls.px.stop()
        cls.redis.stop()
        log = cls.px.log()
        cls.wd.cleanup()
        assert code == 0, "pixrelay exited with %r" % code
        assert "BUG" not in log, [l for l in log.splitlines() if "BUG" in l][:5]

    def get(self, path, headers=None, timeout=10):
        return self.px.request("GET", path, headers=headers, timeout=timeout)


class Strictness(Base):
    args = ["--max-body", str(MAX_BODY), "--max-upload", str(MAX_UPLOAD)]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = cls.px.request("POST", "/v1/charge/pix/create", body={"amount": 500},
                           headers=auth(cls.key))
        assert r.status == 200, r
        cls.charge = r.json["data"]["id"]

    def check_error(self, name, path, status, headers, body, want_status, want_msg=None,
                    envelope=None):
        """An error answer as promised: status, JSON, envelope under /v1."""
        problems = []
        if status != want_status:
            problems.append("status %d, want %d" % (status, want_status))
        if not headers.get("content-type", "").startswith("application/json"):
            problems.append("content type %r" % headers.get("content-type"))
        try:
            j = json.loads(body)
        except ValueError:
            return problems + ["not JSON: %r" % body[:200]]
        if envelope is None:
            envelope = path.startswith("/v1")
        want_keys = {"error", "status", "data"} if envelope else {"error", "status"}
        if envelope and set(j) != want_keys:
            problems.append("not the envelope: %r" % j)
        if not envelope and not want_keys <= set(j):
            problems.append("no error/status: %r" % j)
        if envelope and j.get("data") != []:
            problems.append("data is %r" % j.get("data"))
        if j.get("status") != want_status:
            problems.append("JSON status %r" % j.get("status"))
        err = j.get("error")
        if not isinstance(err, str) or not err or not all(32 <= ord(ch) < 127 for ch in err):
            problems.append("error text not plain ASCII: %r" % err)
        if want_msg is not None and err != want_msg:
            problems.append("error %r, want %r" % (err, want_msg))
        return ["%s: %s" % (name, p) for p in problems]

    def catalogue(self):
        """[(name, path, raw request, status, message or None, closes)] over every route."""
        key = self.key.encode()
        cases = []
        for method, pattern, flags in api_routes():
            path = concrete(pattern)
            p = path.encode()
            m = method.encode()
            cap = MAX_UPLOAD if "HTTP_UPLOAD" in flags else MAX_BODY
            # a method the path does not take (a path may take DELETE too)
            taken = {m2 for m2, p2, _ in api_routes() if p2 == pattern}
            other = b"DELETE" if method == "GET" and "DELETE" not in taken else b"PUT"
            line = m + b" " + p + b" HTTP/1.1\r\n"
            host = b"Host: t\r\n"
            c = [
                ("bare LF", m + b" " + p + b" HTTP/1.1\nHost: t\n\n", 400,
                 "bare LF in the request head: lines must end with CRLF"),
                ("bare LF after a header", line + b"Host: t\n\r\n", 400,
                 "bare LF in the request head: lines must end with CRLF"),
                ("space before colon", line + b"Host : t\r\n\r\n", 400,
                 "whitespace between a header name and its colon"),
                ("obs-fold", line + host + b"X-A: 1\r\n  folded\r\n\r\n", 400,
                 "obsolete line folding (a header line starting with a blank) is not accepted"),
                ("NUL in Authorization", line + host + b"Authorization: Bearer " + key +
                 b"\0junk\r\n\r\n", 400,
                 "invalid character (control or NUL) in header Authorization"),
                ("control character in a value", line + host + b"X-A: a\x01b\r\n\r\n", 400,
                 "invalid character (control or NUL) in header X-A"),
                ("DEL in a value", line + host + b"X-A: a\x7f\r\n\r\n", 400,
                 "invalid character (control or NUL) in header X-A"),
                ("bad header name", line + host + b"X(A): 1\r\n\r\n", 400,
                 "invalid character in a header name"),
                ("empty header name", line + host + b": 1\r\n\r\n", 400, "empty header name"),
                ("header without colon", line + host + b"Nothing\r\n\r\n", 400,
                 "header line without a colon"),
                ("two different Content-Length", line + host +
                 b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400,
                 "more than one Content-Length header"),
                ("two equal Content-Length", line + host +
                 b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400,
                 "more than one Content-Length header"),
                ("Content-Length list", line + host + b"Content-Length: 2, 2\r\n\r\n{}", 400,
                 "invalid Content-Length: expected 0 to 18 digits"),
                ("Content-Length sign", line + host + b"Content-Length: +2\r\n\r\n{}", 400,
                 "invalid Content-Length: expected 0 to 18 digits"),
                ("Content-Length hex", line + host + b"Content-Length: 0x2\r\n\r\n{}", 400,
                 "invalid Content-Length: expected 0 to 18 digits"),
                ("Content-Length huge", line + host +
                 b"Content-Length: 99999999999999999999\r\n\r\n", 400,
                 "invalid Content-Length: expected 0 to 18 digits"),
                ("Transfer-Encoding and Content-Length", line + host +
                 b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
                 "both Transfer-Encoding and Content-Length: send only one"),
                ("Transfer-Encoding gzip", line + host + b"Transfer-Encoding: gzip\r\n\r\n", 501,
                 "Transfer-Encoding: only chunked is supported"),
                ("Transfer-Encoding twice", line + host +
                 b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
                 "more than one Transfer-Encoding header"),
                ("bad chunk size", line + host + b"Transfer-Encoding: chunked\r\n"
                 b"Content-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400,
                 "invalid chunk size: expected hex digits"),
                ("chunk data without CRLF", line + host + b"Transfer-Encoding: chunked\r\n"
                 b"Content-Type: application/json\r\n\r\n2\r\n{}XX0\r\n\r\n", 400,
                 "chunk data not followed by CRLF"),
                ("chunk size too long", line + host + b"Transfer-Encoding: chunked\r\n\r\n" +
                 b"0" * 20 + b"1\r\n", 400, "chunk size too long"),
                ("Content-Length over the cap", line + host +
                 b"Content-Length: %d\r\n\r\n" % (cap + 1), 413,
                 "request body too large: %d bytes, the limit is %d" % (cap + 1, cap)),
                ("chunked body over the cap", line + host + b"Transfer-Encoding: chunked\r\n"
                 b"\r\n%x\r\n" % (cap + 1), 413,
                 "request body too large: the limit is %d bytes" % cap),
                ("chunks over the cap", line + host + b"Transfer-Encoding: chunked\r\n"
                 b"\r\n%x\r\n" % (cap // 2) + b"x" * (cap // 2) + b"\r\n%x\r\n" % (cap // 2 + 1),
                 413, "request body too large: the limit is %d bytes" % cap),
                ("request line too long", m + b" " + p + b"?" + b"a" * 9000 + b" HTTP/1.1\r\n"
                 + host + b"\r\n", 414, "request line too long (at most 8192 bytes)"),
                ("header too large", line + host + b"X-Big: " + b"b" * 17000 + b"\r\n\r\n", 431,
                 "request head too large (at most 16384 bytes)"),
                ("too many headers", line + host + b"".join(b"X-%d: 1\r\n" % i
                                                            for i in range(100)) + b"\r\n",
                 431, "too many header fields (at most 100)"),
                ("unknown method", b"BREW " + p + b" HTTP/1.1\r\n" + host + b"\r\n", 501,
                 "method BREW is not implemented"),
                ("lower-case method", m.lower() + b" " + p + b" HTTP/1.1\r\n" + host + b"\r\n",
                 501, "method %s is not implemented" % method.lower()),
                ("CONNECT", b"CONNECT " + p + b" HTTP/1.1\r\n" + host + b"\r\n", 501,
                 "method CONNECT is not implemented"),
                ("HTTP/2.0", m + b" " + p + b" HTTP/2.0\r\n" + host + b"\r\n", 505,
                 "HTTP version not supported: use HTTP/1.1"),
                ("HTTP/3.1", m + b" " + p + b" HTTP/3.1\r\n" + host + b"\r\n", 505,
                 "HTTP version not supported: use HTTP/1.1"),
                ("bad version", m + b" " + p + b" HTTP/1.1x\r\n" + host + b"\r\n", 400,
                 "malformed request line: expected METHOD SP /path SP HTTP/1.1"),
                ("no version", m + b" " + p + b"\r\n\r\n", 400,
                 "malformed request line: expected METHOD SP /path SP HTTP/1.1"),
                ("two spaces", m + b"  " + p + b" HTTP/1.1\r\n" + host + b"\r\n", 400,
                 "malformed request line: expected METHOD SP /path SP HTTP/1.1"),
                ("leading space", b" " + line + host + b"\r\n", 400,
                 "malformed request line: expected METHOD SP /path SP HTTP/1.1"),
                ("no Host", line + b"\r\n", 400, "Host header missing (required in HTTP/1.1)"),
                ("two Hosts", line + host + b"Host: u\r\n\r\n", 400, "more than one Host header"),
                ("raw 0xFF in the path", m + b" " + p + b"\xff HTTP/1.1\r\n" + host + b"\r\n",
                 400, "invalid character in the request target (byte %d); escape it as %%XX"
                 % (len(p) + 1)),
                ("raw UTF-8 in the path", m + b" " + p + b"\xc3\xa9 HTTP/1.1\r\n" + host +
                 b"\r\n", 400, "invalid character in the request target (byte %d); escape it "
                 "as %%XX" % (len(p) + 1)),
                ("bad percent-escape", m + b" " + p + b"%zz HTTP/1.1\r\n" + host + b"\r\n", 400,
                 "invalid percent-escape in the request target (byte %d)" % (len(p) + 1)),
                ("%00", m + b" " + p + b"?a=%00 HTTP/1.1\r\n" + host + b"\r\n", 400,
                 "%00 (NUL) in the request target"),
                ("fragment", m + b" " + p + b"#x HTTP/1.1\r\n" + host + b"\r\n", 400,
                 "invalid character in the request target (byte %d); escape it as %%XX"
                 % (len(p) + 1)),
                ("backslash", m + b" " + p + b"\\x HTTP/1.1\r\n" + host + b"\r\n", 400,
                 "invalid character in the request target (byte %d); escape it as %%XX"
                 % (len(p) + 1)),
                ("asterisk target", m + b" * HTTP/1.1\r\n" + host + b"\r\n", 400,
                 "the request target must be a path such as /v1/me"),
                ("ftp target", m + b" ftp://h" + p + b" HTTP/1.1\r\n" + host + b"\r\n", 400,
                 "the request target must be a path such as /v1/me"),
                ("Expect other", line + host + b"Expect: 200-ok\r\n\r\n", 417,
                 "Expect: only 100-continue is supported"),
                ("HTTP/1.0 with Transfer-Encoding", m + b" " + p + b" HTTP/1.0\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
                 "Transfer-Encoding in an HTTP/1.0 request"),
            ]
            for name, raw, status, msg in c:
                cases.append((name, path, raw, status, msg, True))
            # errors after routing keep the connection; every method of the
            # pattern, in the order of the route table
            allow = ", ".join(m2 for m2, p2, _ in api_routes() if p2 == pattern)
            cases.append(("wrong method", path, other + b" " + p + b" HTTP/1.1\r\n" + host +
                          b"\r\n", 405, "method %s not allowed on %s; allowed: %s"
                          % (other.decode(), path, allow), False))
            cases.append(("TRACE", path, b"TRACE " + p + b" HTTP/1.1\r\n" + host + b"\r\n", 405,
                          "method TRACE not allowed on %s; allowed: %s" % (path, allow), False))
            cases.append(("unknown path below", path + "/x/y/z", m + b" " + p +
                          b"/x/y/z HTTP/1.1\r\n" + host + b"\r\n", 404,
                          "no such endpoint: %s %s/x/y/z" % (method, path), False))
            if method == "POST" and "GET" not in allow.split(", "):
                cases.append(("HEAD on POST", path, b"HEAD " + p + b" HTTP/1.1\r\n" + host +
                              b"\r\n", 405, None, False))
        return cases

    def test_malformed_request_catalogue(self):
        cases = self.catalogue()
        self.assertGreaterEqual(len(cases), 200)
        problems = []
        statuses = {}
        for name, path, raw, want, msg, closes in cases:
            label = "%s %s" % (path, name)
            head_only = (0,) if raw.startswith(b"HEAD ") else ()
            if not closes:
                # the connection stays open: a second request is answered on it
                raw += b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
            data, closed = exchange(self.px.port, raw)
            try:
                answers = parse_responses(data, head_only)
            except (AssertionError, ValueError, KeyError) as e:
                problems.append("%s: %s" % (label, e))
                continue
            if not answers:
                problems.append("%s: no answer" % label)
                continue
            status, headers, body = answers[0]
            statuses[status] = statuses.get(status, 0) + 1
            if status >= 500 and status not in (501, 505):
                problems.append("%s: server error %d" % (label, status))
            if head_only:
                if status != want or body:
                    problems.append("%s: %d with %d body bytes" % (label, status, len(body)))
            else:
                problems += self.check_error(label, path, status, headers, body, want, msg)
            if closes:
                if headers.get("connection") != "close" or len(answers) != 1 or not closed:
                    problems.append("%s: connection %r, %d answers, closed %s"
                                    % (label, headers.get("connection"), len(answers), closed))
            elif len(answers) != 2 or answers[1][0] != 200:
                problems.append("%s: the connection did not carry the next request (%r)"
                                % (label, [a[0] for a in answers]))
        print("\n%d malformed requests over %d routes; answers by status: %s"
              % (len(cases), len(api_routes()), dict(sorted(statuses.items()))))
        self.assertEqual(problems, [], "\n".join(problems[:40]))
        self.assertEqual(self.get("/healthz").status, 200)

    def test_head_answers_headers_only(self):
        qr = ("/v1/qrcode/%s" % self.charge).encode()
        raw = (b"HEAD " + qr + b" HTTP/1.1\r\nHost: t\r\n\r\n"
               b"GET " + qr + b" HTTP/1.1\r\nHost: t\r\n\r\n"
               b"HEAD /v1/me HTTP/1.1\r\nHost: t\r\n\r\n"
               b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        data, closed = exchange(self.px.port, raw)
        answers = parse_responses(data, head_only=(0, 2))
        self.assertEqual([a[0] for a in answers], [200, 200, 401, 200])
        head, get = answers[0], answers[1]
        self.assertEqual(head[1]["content-type"], "image/png")
        self.assertEqual(head[2], b"")
        self.assertEqual(int(head[1]["content-length"]), len(get[2]))
        self.assertTrue(get[2].startswith(b"\x89PNG"))
        # the 401 of HEAD /v1/me: its length is announced, no body follows
        self.assertGreater(int(answers[2][1]["content-length"]), 0)
        self.assertEqual(answers[3][2], b'{"status":"ok"}')
        self.assertTrue(closed)

    def test_pipelined_requests_are_answered_in_order(self):
        # an authenticated request (answered after a Redis round trip) between
        # requests answered at once; X-Request-Id tells them apart
        reqs = []
        for i in range(30):
            if i % 3 == 1:
                reqs.append(b"GET /v1/me HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                            b"X-Request-Id: r%d\r\n\r\n" % (self.key.encode(), i))
            elif i % 3 == 2:
                body = b'{"amount": 300}'
                reqs.append(b"POST /v1/charge/pix/create HTTP/1.1\r\nHost: t\r\n"
                            b"Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
                            b"Content-Length: %d\r\nX-Request-Id: r%d\r\n\r\n%s"
                            % (self.key.encode(), len(body), i, body))
            else:
                reqs.append(b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Request-Id: r%d\r\n\r\n" % i)
        reqs.append(b"GET /nothing HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
                    b"X-Request-Id: last\r\n\r\n")
        data, closed = exchange(self.px.port, b"".join(reqs))
        answers = parse_responses(data)
        self.assertEqual([a[1]["x-request-id"] for a in answers],
                         ["r%d" % i for i in range(30)] + ["last"])
        self.assertEqual([a[0] for a in answers], [200] * 30 + [404])
        self.assertEqual(json.loads(answers[1][2])["data"]["account"] is not None, True)
        self.assertTrue(all("connection" not in a[1] for a in answers[:30]))
        self.assertTrue(closed)

    def test_bytes_sent_while_a_request_is_worked_on_wait_without_spinning(self):
        # reading stays armed while the application has a request: a second
        # request arriving then is answered after the first, and the process
        # does not spin on the unread bytes meanwhile
        key = self.px.create_key("sandbox")["key"]  # not cached: /v1/me needs Redis
        os.kill(self.redis.proc.pid, signal.SIGSTOP)
        s = socket.create_connection(("127.0.0.1", self.px.port), timeout=10)
        try:
            s.sendall(b"GET /v1/me HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                      b"X-Request-Id: first\r\n\r\n" % key.encode())
            time.sleep(0.2)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
                      b"X-Request-Id: second\r\n\r\n")
            cpu0 = proc_stat(self.px.proc.pid)[0]
            time.sleep(1.0)
            cpu1 = proc_stat(self.px.proc.pid)[0]
        finally:
            os.kill(self.redis.proc.pid, signal.SIGCONT)
        got = read_to_eof(s)
        s.close()
        self.assertLess(cpu1 - cpu0, 0.3)
        answers = parse_responses(got)
        self.assertEqual([(a[0], a[1]["x-request-id"]) for a in answers],
                         [(200, "first"), (200, "second")])

    def test_half_close_after_requests_gets_every_answer(self):
        # like `printf ... | nc -N`: requests, then the end of the client's
        # sending side, while answers are still on their way
        qr = ("/v1/qrcode/%s?size=20" % self.charge).encode()
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect(("127.0.0.1", self.px.port))
        s.sendall((b"GET " + qr + b" HTTP/1.1\r\nHost: t\r\n\r\n") * 3000)
        s.shutdown(socket.SHUT_WR)
        time.sleep(0.5)
        data = read_to_eof(s)
        s.close()
        answers = parse_responses(data)
        self.assertEqual(len(answers), 3000)
        self.assertTrue(all(a[0] == 200 and a[2].startswith(b"\x89PNG") for a in answers))

    def test_keep_alive_and_http_1_0(self):
        c = http.client.HTTPConnection("127.0.0.1", self.px.port, timeout=5)
        for _ in range(50):
            c.request("GET", "/v1/me", headers=auth(self.key))
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            r.read()
        c.close()
        data, closed = exchange(self.px.port, b"GET /healthz HTTP/1.0\r\n\r\n")
        (status, headers, body), = parse_responses(data)
        self.assertEqual((status, headers["connection"], body, closed),
                         (200, "close", b'{"status":"ok"}', True))
        data, closed = exchange(self.px.port, b"GET /healthz HTTP/1.0\r\nConnection: keep-alive"
                                b"\r\n\r\nGET /healthz HTTP/1.0\r\n\r\n")
        answers = parse_responses(data)
        self.assertEqual([a[1].get("connection") for a in answers], ["keep-alive", "close"])

    def test_expect_100_continue(self):
        body = b'{"amount": 700}'
        s = socket.create_connection(("127.0.0.1", self.px.port), timeout=5)
        s.sendall(b"POST /v1/charge/pix/create HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n"
                  b"Expect: 100-continue\r\nConnection: close\r\n\r\n" % (self.key.encode(), len(body)))
        self.assertEqual(s.recv(100), b"HTTP/1.1 100 Continue\r\n\r\n")
        s.sendall(body)
        data = read_to_eof(s)
        s.close()
        (status, _, got), = parse_responses(data)
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(got)["data"]["amount"], 700)
        # refused from the head: 413 and no 100 Continue
        data, closed = exchange(self.px.port, b"POST /v1/charge/pix/create HTTP/1.1\r\nHost: t\r\n"
                                b"Content-Length: 5000\r\nExpect: 100-continue\r\n\r\n")
        self.assertTrue(data.startswith(b"HTTP/1.1 413 "), data[:100])
        self.assertTrue(closed)

    def test_chunked_body_is_accepted(self):
        body = json.dumps({"amount": 1234, "comment": "x" * 35}).encode()
        chunks = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7])
                          for i in range(0, len(body), 7))
        raw = (b"POST /v1/charge/pix/create HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
               b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%s"
               b"0\r\nX-Trailer: 1\r\n\r\n"
               b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
               % (self.key.encode(), chunks))
        data, _ = exchange(self.px.port, raw)
        answers = parse_responses(data)
        self.assertEqual([a[0] for a in answers], [200, 200])
        d = json.loads(answers[0][2])["data"]
        self.assertEqual((d["amount"], d["comment"]), (1234, "x" * 35))

    def test_body_cap_applies_before_the_body_is_sent(self):
        # nothing of the body is sent: the answer comes from the head alone
        for path, cap in (("/healthz", MAX_BODY), ("/v1/charge/pix/create", MAX_BODY),
                          ("/v1/baas/account/create", MAX_UPLOAD), ("/nowhere", MAX_BODY)):
            s = socket.create_connection(("127.0.0.1", self.px.port), timeout=5)
            s.sendall(b"POST %s HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n"
                      % (path.encode(), 19 << 20))
            data = s.recv(65536)
            s.close()
            (status, headers, body), = parse_responses(data)
            self.assertEqual(status, 413, path)
            self.assertEqual(json.loads(body)["error"],
                             "request body too large: %d bytes, the limit is %d" % (19 << 20, cap))
            self.assertEqual(headers["connection"], "close")

    def test_repeated_authorization_is_refused(self):
        r = self.get("/v1/me", headers=[("Authorization", "Bearer " + self.key)] * 1)
        self.assertEqual(r.status, 200)
        raw = (b"GET /v1/me HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
               b"Authorization: Bearer %s\r\nConnection: close\r\n\r\n"
               % (self.key.encode(), self.key.encode()))
        data, _ = exchange(self.px.port, raw)
        (status, headers, body), = parse_responses(data)
        self.assertEqual(status, 401)
        self.assertEqual(json.loads(body)["status"], 401)

    def test_absolute_form_target(self):
        data, _ = exchange(self.px.port, b"GET http://pix.example/v1/me HTTP/1.1\r\nHost: t\r\n"
                           b"Authorization: Bearer %s\r\nConnection: close\r\n\r\n"
                           % self.key.encode())
        (status, _, body), = parse_responses(data)
        self.assertEqual(status, 200)

    def test_idle_keep_alive_connection_stays_within_http_timeout(self):
        # the default http-timeout (30 s) is too long to wait for here; the
        # connection must at least carry requests spaced out in time
        s = socket.create_connection(("127.0.0.1", self.px.port), timeout=5)
        for _ in range(2):
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            self.assertTrue(s.recv(4096).startswith(b"HTTP/1.1 200 "))
            time.sleep(0.5)
        s.close()


class Deadlines(Base):
    args = ["--http-header-timeout", "2", "--http-body-timeout", "2", "--http-timeout", "5",
            "--http-send-timeout", "2"]

    def test_head_and_body_deadlines_hold_against_trickling(self):
        # one byte every 0.3 s never lets the connection go idle, but the
        # deadlines hold
        for first, rest, what in (
                (b"GET /healthz HTTP/1.1\r\nHost: t\r\n", b"X-Slow: " + b"a" * 100, "head"),
                (b"POST /v1/charge/pix/create HTTP/1.1\r\nHost: t\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n",
                 b" " * 100, "body")):
            s = socket.create_connection(("127.0.0.1", self.px.port), timeout=5)
            t0 = time.time()
            s.sendall(first)
            for i in range(len(rest)):
                if select.select([s], [], [], 0.3)[0] or time.time() - t0 > 6:
                    break
                s.sendall(rest[i:i + 1])
            got = s.recv(65536)
            elapsed = time.time() - t0
            s.close()
            (status, headers, body), = parse_responses(got)
            self.assertEqual(status, 408, what)
            self.assertEqual(json.loads(body), {"error": "request %s not received in time" % what,
                                                "status": 408, "data": []})
            self.assertEqual(headers["connection"], "close")
            self.assertLess(elapsed, 4.5, what)
            self.assertGreater(elapsed, 1.5, what)

    def test_a_connection_that_sends_nothing_is_closed(self):
        s = socket.create_connection(("127.0.0.1", self.px.port), timeout=6)
        t0 = time.time()
        self.assertEqual(s.recv(100), b"")
        self.assertLess(time.time() - t0, 4.5)
        s.close()


class Slowloris(Base):
    args = ["--http-header-timeout", "4", "--http-body-timeout", "4"]

    def test_slowloris_drill(self):
        port = self.px.port
        header_socks, body_socks = [], []
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
            header_socks.append(s)
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /v1/charge/pix/create HTTP/1.1\r\nHost: t\r\n"
                      b"Content-Type: application/json\r\nContent-Length: 4000\r\n\r\n{")
            body_socks.append(s)
        answers = {}
        stop = threading.Event()

        def trickle():
            live = header_socks + body_socks
            n = 0
            while live and not stop.is_set():
                readable = select.select(live, [], [], 0)[0]
                for s in readable:
                    try:
                        answers[s] = s.recv(65536)
                    except OSError as e:
                        answers[s] = repr(e).encode()
                    live.remove(s)
                for s in live:
                    try:
                        s.sendall(b"X-%d: y\r\n" % n if s in header_socks else b" ")
                    except OSError:
                        pass
                n += 1
                time.sleep(0.2)

        t = threading.Thread(target=trickle)
        t.start()
        latencies = []
        try:
            t_end = time.time() + 3.0
            while time.time() < t_end:
                for path, h in (("/healthz", None), ("/v1/me", auth(self.key))):
                    t0 = time.perf_counter()
                    r = self.get(path, headers=h, timeout=5)
                    latencies.append((path, time.perf_counter() - t0))
                    self.assertEqual(r.status, 200)
                time.sleep(0.05)
            # the deadlines (4 s from each connection's start) end the drill
            t.join(8)
        finally:
            stop.set()
            t.join(5)
            for s in header_socks + body_socks:
                s.close()
        lat = sorted(l for _, l in latencies)
        print("\nslowloris: 300 trickling heads + 20 trickling bodies; %d requests of a normal "
              "client: p50 %.1f ms, p90 %.1f ms, max %.1f ms"
              % (len(lat), lat[len(lat) // 2] * 1e3, lat[int(len(lat) * 0.9)] * 1e3,
                 lat[-1] * 1e3))
        self.assertLess(lat[-1], 1.0)
        got = [answers.get(s, b"") for s in header_socks + body_socks]
        self.assertEqual(sum(1 for g in got[:300] if g.startswith(b"HTTP/1.1 408 ")), 300,
                         set(g[:40] for g in got[:300]))
        self.assertEqual(sum(1 for g in got[300:] if g.startswith(b"HTTP/1.1 408 ")), 20,
                         set(g[:40] for g in got[300:]))
        wait_for(lambda: json.loads(self.get("/readyz").body)["connections"] <= 1,
                 what="the trickling connections to be gone")


class DescriptorExhaustion(Base):
    def test_out_of_descriptors_pauses_without_spinning(self):
        pid = self.px.proc.pid
        # a keep-alive connection opened before the descriptors run out
        keep = http.client.HTTPConnection("127.0.0.1", self.px.port, timeout=5)
        keep.request("GET", "/healthz")
        self.assertEqual(keep.getresponse().read(), b'{"status":"ok"}')
        used = len(os.listdir("/proc/%d/fd" % pid))
        limit = used + 20
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, limit))
        socks = []
        try:
            for _ in range(200):
                socks.append(socket.create_connection(("127.0.0.1", self.px.port), timeout=5))
            wait_for(lambda: "cannot accept connections: Too many open files" in self.px.log(),
                     what="accept() to fail")
            cpu0, _ = proc_stat(pid)
            time.sleep(3)
            cpu1, _ = proc_stat(pid)
            # the connection opened before still works meanwhile
            keep.request("GET", "/v1/me", headers=auth(self.key))
            self.assertEqual(keep.getresponse().status, 200)
            print("\nout of descriptors (limit %d): CPU %.3f s over 3 s" % (limit, cpu1 - cpu0))
            self.assertLess(cpu1 - cpu0, 0.3)
        finally:
            for s in socks:
                s.close()
            keep.close()
        # every connection closed: new ones are served again
        r = wait_for(lambda: (lambda r: r if r.status == 200 else None)(
            self.get("/v1/me", headers=auth(self.key), timeout=3)), timeout=10,
            what="service after the descriptors came back")
        self.assertEqual(r.json["data"]["environment"], "sandbox")
        lines = [l for l in self.px.log().splitlines() if "cannot accept connections" in l]
        self.assertLessEqual(len(lines), 2, lines)
        self.assertIn("pausing accepts for 250 ms at a time", lines[0])


class Memory(Base):
    args = ["--max-upload", str(16 << 20), "--max-body-memory", str(1 << 30),
            "--http-body-timeout", "3"]

    def rss(self):
        return proc_stat(self.px.proc.pid)[1]

    def test_large_trickled_bodies_return_their_memory(self):
        self.get("/healthz")
        base = self.rss()
        # 25 bodies of 19 MiB to /healthz: refused from the head, nothing read
        socks = []
        for _ in range(25):
            s = socket.create_connection(("127.0.0.1", self.px.port), timeout=5)
            s.sendall(b"POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n"
                      % (19 << 20) + b"x" * 65536)
            socks.append(s)
        for s in socks:
            self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 413 "))
            s.close()
        after_refused = self.rss()
        # 25 uploads of 15 MiB, 12 MiB of each sent, then silence until the
        # body deadline
        socks = []
        chunk = b"x" * (1 << 20)
        for _ in range(25):
            s = socket.create_connection(("127.0.0.1", self.px.port), timeout=10)
            s.sendall(b"POST /v1/baas/account/create HTTP/1.1\r\nHost: t\r\n"
                      b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (15 << 20))
            socks.append(s)
        for _ in range(12):
            for s in socks:
                s.sendall(chunk)
        peak = wait_for(lambda: (lambda r: r if r > base + 200 * 1024 else None)(self.rss()),
                        what="the bodies to be held")
        for s in socks:
            s.settimeout(10)
            data = s.recv(65536)
            self.assertTrue(data.startswith(b"HTTP/1.1 408 "), data[:60])
            s.close()
        end = wait_for(lambda: (lambda r: r if r < base + 24 * 1024 else None)(self.rss()),
                       what="memory to be returned")
        print("\nRSS: %d KiB at rest, %d KiB after 25 refused 19 MiB bodies, %d KiB holding 25 "
              "partial 15 MiB bodies, %d KiB after they timed out" % (base, after_refused, peak, end))
        self.assertLess(after_refused, base + 8 * 1024)

    def test_body_memory_budget(self):
        p = Pixrelay(self.wd.path, self.redis, name="budget",
                     args=["--max-upload", str(8 << 20), "--max-body-memory", str(10 << 20)]).start()
        try:
            a = socket.create_connection(("127.0.0.1", p.port), timeout=5)
            a.sendall(b"POST /v1/baas/account/create HTTP/1.1\r\nHost: t\r\n"
                      b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n{" % (6 << 20))
            time.sleep(0.2)
            data, closed = exchange(p.port, b"POST /v1/baas/account/create HTTP/1.1\r\nHost: t\r\n"
                                    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                                    % (6 << 20))
            (status, headers, body), = parse_responses(data)
            self.assertEqual(status, 503)
            self.assertEqual(headers["retry-after"], "1")
            self.assertEqual(json.loads(body), {"error": "too many request bodies in progress; "
                                                         "retry shortly", "status": 503, "data": []})
            a.close()
            # once the first body is gone, the second fits
            wait_for(lambda: exchange(p.port, b"POST /v1/baas/account/create HTTP/1.1\r\nHost: t"
                                      b"\r\nContent-Type: application/json\r\nContent-Length: 2"
                                      b"\r\nConnection: close\r\n\r\n{}")[0]
                     .startswith(b"HTTP/1.1 401 "), what="the budget to be free")
        finally:
            self.assertEqual(p.stop(), 0)


class SlowReader(Base):
    args = ["--http-send-timeout", "2", "--http-timeout", "2"]

    @classmethod
    def setUpClass(cls):
        # under AddressSanitizer, freed memory waits in a quarantine and
        # would count as held; without it RSS means what it does normally
        asan = os.environ.get("ASAN_OPTIONS", "")
        os.environ["ASAN_OPTIONS"] = (asan + ":" if asan else "") + \
            "quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
        try:
            super().setUpClass()
        finally:
            if asan:
                os.environ["ASAN_OPTIONS"] = asan
            else:
                del os.environ["ASAN_OPTIONS"]

    def test_a_client_that_does_not_read_is_bounded(self):
        r = self.px.request("POST", "/v1/charge/pix/create", body={"amount": 500},
                            headers=auth(self.key))
        qr = ("/v1/qrcode/%s?size=20" % r.json["data"]["id"]).encode()
        png = len(self.get(qr.decode()).body)
        base = self.rss()
        log0 = len(self.px.log())
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        s.connect(("127.0.0.1", self.px.port))
        s.setblocking(False)
        one = b"GET " + qr + b" HTTP/1.1\r\nHost: t\r\n\r\n"
        sent = 0
        t0 = time.time()
        while time.time() - t0 < 1.5:
            try:
                sent += s.send(one * 50)
            except BlockingIOError:
                time.sleep(0.05)
            except OSError:
                break
        requests = sent // len(one)
        # the server stops reading, then closes within http-send-timeout
        during = self.rss()
        t_healthz = time.perf_counter()
        self.assertEqual(self.get("/healthz").status, 200)
        t_healthz = time.perf_counter() - t_healthz

        wait_for(lambda: json.loads(self.get("/readyz").body)["connections"] <= 1, timeout=8,
                 what="the slow reader to be cut off")
        elapsed = time.time() - t0
        s.close()
        answered = self.px.log()[log0:].count("path=\"%s\" status=200"
                                              % qr.decode().split("?")[0])
        print("\nslow reader: %d pipelined requests sent (%d KiB, most of them left in the "
              "kernel's socket buffers), %d answered (%d KiB) before the server stopped; RSS "
              "%d -> %d KiB; cut off after %.1f s; /healthz meanwhile in %.1f ms"
              % (requests, sent // 1024, answered, answered * png // 1024, base, during,
                 elapsed, t_healthz * 1e3))
        # what was answered fits in the socket buffers and 64 KiB of the server's
        self.assertGreater(answered, 0)
        self.assertLess(answered * png, 12 << 20)
        self.assertLess(answered, requests)
        self.assertLess(during, base + 16 * 1024)

    def rss(self):
        return proc_stat(self.px.proc.pid)[1]


if __name__ == "__main__":
    unittest.main(verbosity=2)
