"""The tests' Woovi's notification sender: signs a body as Woovi does
(x-webhook-signature: base64 of RSA PKCS#1 v1.5 SHA-256 over the exact bytes,
docs/webhook/seguranca/weebhook-signature-validation.mdx), POSTs it to an
http(s) URL or a Unix socket (unix:/path.sock:/uri, nginx's form), retries a
call that gets no answer or a status above 400 after 10 * 2^n seconds times
a factor, n = 0..7 (docs/webhook/webhook-retry.md), with the faults of
bankhook.py (never sent, sent twice, held), and records every call.

It knows nothing of charges: testwoovi.py composes the bodies and the targets.

    sender = WooviSender(key, directory)
    sender.sign = "good" | "none" | "bad" | "other-key"
    sender.retry_factor, sender.retry_intervals, sender.receiver_ca
    sender.faults(drop=0.2, twice=0.1, delay=0.1, delay_seconds=1, seed=7)
    calls = sender.send(event, [(url, authorization or None), ...], body, wait=True)
    sender.deliveries, sender.wait(n), sender.wait_settled(), sender.close()
"""
import base64
import os
import random
import subprocess
import threading
import time

import certs
from fakeserver import CallRecord, SenderRecords

RETRY_INTERVALS = tuple(10 * 2 ** n for n in range(8))


def make_rsa_key(directory, name, bits=2048):
    """A new RSA key (directory/name.key, PEM, mode 0600); its path."""
    path = os.path.join(directory, name + ".key")
    certs._run("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:%d" % bits, "-out", path)
    os.chmod(path, 0o600)
    return path


def public_key_pem(key):
    """The public key of the key file `key`, PEM text."""
    return certs._run("pkey", "-in", key, "-pubout")


class Delivery(CallRecord):
    """One notification call (or one that a fault knob dropped). note: the
    notification's number (its calls share it); attempt: 1 for the first
    call, 2.. for retries; copy 2 for the second sending of a doubled call;
    signature: the x-webhook-signature sent (None: none); status and answer
    (bytes) the receiver's; error the reason when there is none."""

    def __init__(self, note, event, url, body, signature, attempt, copy=1):
        super().__init__()
        self.note, self.event, self.url, self.body = note, event, url, body
        self.signature, self.attempt, self.copy = signature, attempt, copy
        self.delay = 0.0

    def __repr__(self):
        return "<Delivery #%d %s try %d to %s: %s>" % (self.note, self.event, self.attempt, self.url, self._state())

class WooviSender(SenderRecords):
    label = "testwoovi"

    def __init__(self, key, directory, retry_factor=1.0, receiver_ca=None, user_agent="pixrelay-testwoovi"):
        """key: the RSA key file that signs; directory: where the key of
        sign = "other-key" is made when first needed; receiver_ca: the CA
        file trusted for an https receiver (None: the system's)."""
        self.key, self.directory = key, directory
        self.sign = "good"
        self.retry_factor = retry_factor
        self.retry_intervals = RETRY_INTERVALS
        self.receiver_ca = receiver_ca
        self.user_agent = user_agent
        self.deliveries = []
        self._cond = threading.Condition()
        self._notes = 0
        self._pending = 0
        self._faults = {"drop": 0.0, "twice": 0.0, "delay": 0.0, "delay_seconds": 0.5}
        self._fault_rng = random.Random(0)
        self._other_key = None
        self._threads = []
        self._stopping = threading.Event()

    def faults(self, drop=0.0, twice=0.0, delay=0.0, delay_seconds=0.5, seed=0):
        """Each notification from now on is, by three draws of a random
        seeded with `seed`: never sent (one Delivery, dropped) with
        probability `drop`; else its first call is sent twice with
        probability `twice`; and held `delay_seconds` first with probability
        `delay`. No arguments: no faults."""
        with self._cond:
            self._faults = {"drop": drop, "twice": twice, "delay": delay, "delay_seconds": delay_seconds}
            self._fault_rng = random.Random(seed)

    def send(self, event, targets, body, wait=True):
        """Sign `body` (bytes, sent as is) and POST it to each (url,
        authorization) of `targets`, each in a thread of its own that
        retries. wait: return once each first call is over. Returns the
        first calls' Delivery records (all are in self.deliveries)."""
        out = [self._start_note(event, url, auth, body) for url, auth in targets]
        if wait:
            for d in out:
                d.done.wait(30 + d.delay)
        return out

    def close(self):
        """Calls held or waiting for a retry are abandoned; calls under way
        are waited for (5 s each at most)."""
        self._stopping.set()
        with self._cond:
            threads = list(self._threads)
        for t in threads:
            t.join(5)

    def _signature(self, body):
        mode = self.sign
        if mode == "none":
            return None
        if mode not in ("good", "bad", "other-key"):
            raise ValueError("sign is good, none, bad or other-key")
        key = self.key
        if mode == "other-key":
            with self._cond:
                if self._other_key is None:
                    self._other_key = make_rsa_key(self.directory, "testwoovi-other")
                key = self._other_key
        data = body + b" " if mode == "bad" else body
        p = subprocess.run([certs.OPENSSL, "dgst", "-sha256", "-sign", key], input=data, capture_output=True,
                           check=True, timeout=60)
        return base64.b64encode(p.stdout).decode()

    def _start_note(self, event, url, auth, body):
        signature = self._signature(body)
        with self._cond:
            self._notes += 1
            note = self._notes
            r_drop, r_twice, r_delay = (self._fault_rng.random() for _ in range(3))
            f = self._faults
            first = Delivery(note, event, url, body, signature, 1)
            first.delay = f["delay_seconds"] if r_delay < f["delay"] else 0.0
            self.deliveries.append(first)
            if r_drop < f["drop"]:
                first.dropped = True
                first.done.set()
                self._cond.notify_all()
                return first
            twice = r_twice < f["twice"]
            self._pending += 1
            t = threading.Thread(target=self._run_note, args=(first, auth, twice), daemon=True)
            self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()
        return first

    def _run_note(self, first, auth, twice):
        try:
            if first.delay and self._stopping.wait(first.delay):
                first.error = "the sender closed"
                return self._finish(first)
            d = first
            for attempt in range(1, len(self.retry_intervals) + 2):
                if attempt > 1:
                    if self._stopping.wait(self.retry_intervals[attempt - 2] * self.retry_factor):
                        return
                    d = Delivery(first.note, first.event, first.url, first.body, first.signature, attempt)
                    with self._cond:
                        self.deliveries.append(d)
                copies = [d]
                if attempt == 1 and twice:
                    second = Delivery(first.note, first.event, first.url, first.body, first.signature, 1, 2)
                    with self._cond:
                        self.deliveries.append(second)
                    copies.append(second)
                for c in copies:
                    self._post(c, auth)
                if self._answered(d):
                    return
        finally:
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()

    def _answered(self, d):
        """Whether the call ends the notification's retries:
        docs/webhook/webhook-retry.md retries only above 400."""
        return d.status is not None and d.status <= 400

    def _headers(self, d):
        """The call's headers (a sender of another provider overrides it)."""
        headers = {"Content-Type": "application/json", "User-Agent": self.user_agent}
        if d.signature is not None:
            headers["x-webhook-signature"] = d.signature
        return headers

    def _post(self, d, auth):
        headers = self._headers(d)
        if auth:
            headers["Authorization"] = auth
        self._post_call(d, headers)

    def wait_settled(self, timeout=30.0):
        """Wait until no notification is being sent or waiting for a retry;
        return every Delivery. AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("testwoovi: %d notifications still retrying" % self._pending)
                self._cond.wait(min(left, 0.2))
            return list(self.deliveries)
