"""A webhook receiver of the tests' own: what the tests' providers
(testwoovi.py, testasaas.py) send their notifications to when their
self-tests check them without pixrelay."""
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """A plain HTTP server on 127.0.0.1 (or on a Unix socket) that records
    (path, headers, body) and answers the statuses of `answers` in turn
    (the last one again and again)."""

    def __init__(self, answers=(200,), unix=None):
        self.got, self.answers = [], list(answers)
        self.lock = threading.Lock()
        receiver = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def address_string(self):
                return "receiver"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.got.append((self.path, dict(self.headers), body))
                    status = receiver.answers.pop(0) if len(receiver.answers) > 1 else receiver.answers[0]
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        if unix:
            class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
                daemon_threads = True
            self.srv = S(unix, H)
        else:
            self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
            self.srv.daemon_threads = True
        self.thread = threading.Thread(target=self.srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def url(self, path="/hook"):
        return "http://127.0.0.1:%d%s" % (self.srv.server_address[1], path)

    def set_answers(self, answers):
        with self.lock:
            self.answers = list(answers)

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()
