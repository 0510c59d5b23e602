"""The test bank's webhook sender: POSTs a body to a URL over HTTPS,
presenting the bank's client certificate and trusting the receiver's CA,
with the faults a real bank shows (a call never sent, sent twice, sent
late) drawn from a seeded random, and a record of every call and answer.

It knows nothing of Pix: testbank.py composes {"pix": [...]} and the URL
({webhookUrl}/pix) and hands them over.

    sender = WebhookSender(cert, receiver_ca)
    sender.faults(drop=0.2, twice=0.1, delay=0.1, delay_seconds=1, seed=7)
    out = sender.send([(url, chave, body), ...], wait=True)
    sender.deliveries, sender.wait(n), sender.close()
"""
import http.client
import json
import random
import ssl
import threading
import urllib.parse

from fakeserver import CallRecord, SenderRecords


class Delivery(CallRecord):
    """One webhook POST (or one that a knob dropped). copy is 1, or 2 for
    the second sending of a doubled one; delay the seconds it was held;
    status and answer (bytes) are the receiver's; error the reason when
    there is none (refused, TLS, timeout); e2eids the body's endToEndIds;
    sent_at time.time() of the sending; done is set when it is over."""

    def __init__(self, url, chave, body, copy, delay):
        super().__init__()
        self.url, self.chave, self.body, self.copy, self.delay = url, chave, body, copy, delay
        try:
            self.e2eids = [p.get("endToEndId") for p in json.loads(body)["pix"]]
        except (ValueError, KeyError, TypeError, AttributeError):
            self.e2eids = []

    def __repr__(self):
        return "<Delivery %s copy %d %s: %s>" % (self.url, self.copy, self.e2eids, self._state())


class WebhookSender(SenderRecords):
    label, noun = "webhook sender", "deliveries"

    def __init__(self, cert, receiver_ca, user_agent="pixrelay-testbank"):
        """cert: the certs.Cert presented to the receiver; receiver_ca: the
        CA file its server certificate must verify against (None: sending
        raises ValueError)."""
        self.cert, self.receiver_ca, self.user_agent = cert, receiver_ca, user_agent
        self.deliveries = []
        self._cond = threading.Condition()
        self._faults = {"drop": 0.0, "twice": 0.0, "delay": 0.0, "delay_seconds": 0.5}
        self._rng = random.Random(0)
        self._threads = []
        self._stopping = threading.Event()

    def faults(self, drop=0.0, twice=0.0, delay=0.0, delay_seconds=0.5, seed=0):
        """Each POST from now on is, by three draws of a random seeded with
        `seed` (drawn whatever the fractions, so a seed gives one sequence):
        dropped (not sent, recorded as dropped) with probability `drop`;
        else sent twice, one after the other, with probability `twice`;
        and held `delay_seconds` first with probability `delay` (a held
        POST may arrive after later ones)."""
        with self._cond:
            self._faults = {"drop": drop, "twice": twice, "delay": delay, "delay_seconds": delay_seconds}
            self._rng = random.Random(seed)

    def send(self, posts, wait=True, timeout=10.0):
        """POST each (url, chave, body bytes) of `posts`, each in a thread of
        its own. The URL is used as given: its path and query string are
        the request's target. wait: return when every POST is over; else at
        once. Returns the Delivery records (also in self.deliveries)."""
        if self.receiver_ca is None:
            raise ValueError("the receiver's CA (receiver_ca) is needed to send webhooks")
        out = []
        for url, chave, body in posts:
            with self._cond:
                r_drop, r_twice, r_delay = (self._rng.random() for _ in range(3))
                f = self._faults
                delay = f["delay_seconds"] if r_delay < f["delay"] else 0.0
                copies = [Delivery(url, chave, body, 1, delay)]
                if r_drop < f["drop"]:
                    copies[0].dropped = True
                    copies[0].done.set()
                elif r_twice < f["twice"]:
                    copies.append(Delivery(url, chave, body, 2, delay))
                self.deliveries.extend(copies)
                self._cond.notify_all()
                self._threads = [t for t in self._threads if t.is_alive()]
            out.extend(copies)
            if not copies[0].dropped:
                t = threading.Thread(target=self._deliver, args=(copies, timeout), daemon=True)
                self._threads.append(t)
                t.start()
        if wait:
            for d in out:
                d.done.wait(timeout * 2 + 5 + d.delay)
        return out

    def _deliver(self, copies, timeout):
        if copies[0].delay and self._stopping.wait(copies[0].delay):
            for d in copies:
                d.error = "the bank closed"
                self._finish(d)
            return
        for d in copies:
            self._post_call(d, {"Content-Type": "application/json", "User-Agent": self.user_agent}, timeout)

    def _connection(self, url, timeout):
        """Over HTTPS only, presenting the bank's certificate."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(self.receiver_ca)
        ctx.load_cert_chain(self.cert.cert, self.cert.key)
        parts = urllib.parse.urlsplit(url)
        target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        return http.client.HTTPSConnection(parts.hostname, parts.port or 443, timeout=timeout, context=ctx), target

    def close(self):
        """Held POSTs are dropped (error "the bank closed"); the others are
        waited for (5 s each at most)."""
        self._stopping.set()
        for t in list(self._threads):
            t.join(5)
