"""The tests' Asaas's webhooks: the queues that deliver its events as Asaas
does, one per webhook, with the webhook's authToken in asaas-access-token
(AS-WH criar-novo-webhook-pela-aplicacao-web). Only HTTP 200 counts as
delivered; any other answer, or none in 10 s, is a failure and the same
event is tried again (every retry_seconds; Asaas syncs every 30 s); after
15 consecutive failures the queue is interrupted: events are kept and sent
in order once it is reactivated (AS-WH fila-pausada, faq-de-webhooks,
erro-read-timed-out, como-reativar-fila-interrompida). Both sendTypes
deliver in order, one event at a time (a choice of this server).

It knows nothing of payments: testasaas.py makes the events' bodies.

    hooks = AsaasWebhooks(retry_seconds=30.0, receiver_ca=None)
    w = hooks.add({name, url, email, enabled, interrupted, authToken,
                   sendType, events}); hooks.update(w, {...}); hooks.remove(w)
    hooks.token = "good" | "none" | "bad"
    hooks.faults(drop=0.2, twice=0.1, seed=7)
    firsts = hooks.queue([(event, event_id, body bytes), ...])
    hooks.deliveries, hooks.wait(n), hooks.wait_settled(), hooks.resume(w), hooks.close()

A URL is http(s)://... or unix:/path.sock:/uri (nginx's form; http://unix:
too), as testwoovi's and testbank's senders reach pixrelay's bank door.
"""
import collections
import random
import threading
import time
import uuid

from fakeserver import CallRecord, SenderRecords

FAILURES_BEFORE_INTERRUPT = 15
MAX_WEBHOOKS = 10   # AS-WH: up to 10 webhooks per account
USER_AGENT = "Asaas_Hmlg/3.0 (pixrelay-testasaas)"


class Delivery(CallRecord):
    """One notification call (or one a fault dropped). webhook: its id;
    event_id the evt_...; attempt 1, 2.. for the same event tried again;
    copy 2 for the second delivery of a doubled event; token the
    asaas-access-token sent (None: none); status and answer (bytes) the
    receiver's, error the reason when there is none."""

    def __init__(self, webhook, event, event_id, url, body, token, attempt, copy=1):
        super().__init__()
        self.webhook, self.event, self.event_id, self.url, self.body = webhook, event, event_id, url, body
        self.token, self.attempt, self.copy = token, attempt, copy

    @property
    def ok(self):
        return self.status == 200

    def __repr__(self):
        return "<Delivery %s %s try %d to %s: %s>" % (self.event_id, self.event, self.attempt, self.url,
                                                       self._state())


class AsaasWebhooks(SenderRecords):
    label = "testasaas"

    def __init__(self, retry_seconds=30.0, receiver_ca=None, seed=None):
        self.retry_seconds = retry_seconds
        self.receiver_ca = receiver_ca
        self.token = "good"
        self.deliveries = []
        self._rng = random.Random(seed)
        self._cond = threading.Condition()
        self._hooks = {}          # id -> record (its queue inside)
        self._fault = {"drop": 0.0, "twice": 0.0}
        self._fault_rng = random.Random(0)
        self._stopping = threading.Event()

    # ---- the webhooks ----

    def add(self, body):
        """A webhook from a POST /v3/webhooks body (checked by the caller);
        its record. ValueError past MAX_WEBHOOKS."""
        with self._cond:
            if len(self._hooks) >= MAX_WEBHOOKS:
                raise ValueError("at most %d webhooks per account" % MAX_WEBHOOKS)
            wid = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
            w = {"id": wid, "name": body["name"], "url": body["url"], "email": body["email"],
                 "enabled": body.get("enabled", True), "interrupted": body.get("interrupted", False),
                 "authToken": body.get("authToken"), "sendType": body["sendType"], "events": list(body["events"]),
                 "apiVersion": int(body.get("apiVersion", 3)),
                 "queue": collections.deque(), "failures": 0, "worker": None}
            self._hooks[wid] = w
            return w

    def find(self, wid):
        """The record, or None."""
        with self._cond:
            return self._hooks.get(wid)

    def records(self):
        with self._cond:
            return list(self._hooks.values())

    def update(self, w, changes):
        """Apply a PUT /v3/webhooks/{id} body; "interrupted": false
        reactivates the queue."""
        with self._cond:
            for k in ("name", "url", "email", "enabled", "interrupted", "authToken", "sendType", "events"):
                if k in changes:
                    w[k] = list(changes[k]) if k == "events" else changes[k]
            if not w["interrupted"]:
                w["failures"] = 0
            self._cond.notify_all()
            self._kick(w)

    def remove(self, w):
        """The webhook and its kept events are gone."""
        with self._cond:
            self._hooks.pop(w["id"], None)
            w["queue"].clear()
            self._cond.notify_all()

    def resume(self, w):
        """Reactivate an interrupted queue: its kept events are sent in
        order."""
        self.update(w, {"interrupted": False})

    @staticmethod
    def view(w):
        """The webhook as GET /v3/webhooks/{id} shows it: hasAuthToken
        rather than the token (a choice of this server)."""
        return {"object": "webhook", "id": w["id"], "name": w["name"], "url": w["url"], "email": w["email"],
                "enabled": w["enabled"], "interrupted": w["interrupted"], "apiVersion": w["apiVersion"],
                "hasAuthToken": w["authToken"] is not None, "sendType": w["sendType"], "events": list(w["events"])}

    # ---- the events ----

    def faults(self, drop=0.0, twice=0.0, seed=0):
        """Per event and webhook from now on, by two draws of a random
        seeded with `seed`: never sent (one Delivery, dropped) with
        probability `drop`; else delivered once more after its first 200
        with probability `twice`. No arguments: no faults."""
        with self._cond:
            self._fault = {"drop": drop, "twice": twice}
            self._fault_rng = random.Random(seed)

    def queue(self, notes):
        """Put each (event, event_id, body) in the queue of each webhook of
        that event that has a URL; returns the first Delivery of each
        (pending, or dropped)."""
        out = []
        with self._cond:
            for note in notes:
                if note is None:
                    continue
                event, eid, body = note
                for w in self._hooks.values():
                    if event not in w["events"] or not w["url"]:
                        continue
                    d = Delivery(w["id"], event, eid, w["url"], body, None, 1)
                    drop = self._fault_rng.random() < self._fault["drop"]
                    twice = self._fault_rng.random() < self._fault["twice"]
                    self.deliveries.append(d)
                    out.append(d)
                    if drop:
                        d.dropped = True
                        d.done.set()
                        continue
                    w["queue"].append((d, twice))
                    self._kick(w)
            self._cond.notify_all()
        return out

    def close(self):
        """Events waiting for a retry are abandoned; calls under way are
        waited for (a receiver gets 10 s)."""
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
            workers = [w["worker"] for w in self._hooks.values() if w["worker"] is not None]
        for t in workers:
            t.join(12)

    def _kick(self, w):
        """Start the webhook's worker when it has none (under the lock)."""
        if w["worker"] is None or not w["worker"].is_alive():
            t = threading.Thread(target=self._work, args=(w,), daemon=True, name="testasaas-hook")
            w["worker"] = t
            t.start()

    def _token(self, w):
        mode = self.token
        if mode not in ("good", "none", "bad"):
            raise ValueError("token is good, none or bad")
        if mode == "none" or w["authToken"] is None:
            return None
        if mode == "bad":
            t = w["authToken"]
            return t[:-1] + ("y" if t.endswith("x") else "x")
        return w["authToken"]

    def _work(self, w):
        """Deliver the webhook's queue in order: an event is tried until a
        200 (every retry_seconds); 15 failures in a row interrupt the queue
        until it is reactivated. Ends when the queue is empty."""
        while not self._stopping.is_set():
            with self._cond:
                while (w["interrupted"] or not w["enabled"]) and w["queue"] and not self._stopping.is_set():
                    self._cond.wait(0.2)
                if not w["queue"] or self._stopping.is_set() or w["id"] not in self._hooks:
                    w["worker"] = None
                    self._cond.notify_all()
                    return
                d, twice = w["queue"][0]
                if d.done.is_set():   # tried before: a new attempt of the same event
                    d = Delivery(w["id"], d.event, d.event_id, w["url"], d.body, None, d.attempt + 1)
                    self.deliveries.append(d)
                    w["queue"][0] = (d, twice)
                d.url, d.token = w["url"], self._token(w)
            self._post(d)
            second = None
            with self._cond:
                if d.ok:
                    w["failures"] = 0
                    if w["queue"] and w["queue"][0][0] is d:
                        w["queue"].popleft()
                    if twice:
                        second = Delivery(w["id"], d.event, d.event_id, d.url, d.body, d.token, d.attempt, copy=2)
                        self.deliveries.append(second)
                else:
                    w["failures"] += 1
                    if w["failures"] >= FAILURES_BEFORE_INTERRUPT:
                        w["interrupted"] = True
                self._cond.notify_all()
            if second is not None:
                self._post(second)
            elif not d.ok and not w["interrupted"]:
                self._stopping.wait(self.retry_seconds)

    def _post(self, d):
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        if d.token is not None:
            headers["asaas-access-token"] = d.token
        self._post_call(d, headers)

    def wait_settled(self, timeout=30.0):
        """Wait until every queue that is not interrupted is empty and no
        call is under way; return every Delivery. AssertionError on
        timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                busy = [w["name"] for w in self._hooks.values()
                        if w["queue"] and not w["interrupted"] and w["enabled"]]
                busy += [d for d in self.deliveries if not d.done.is_set() and not self._kept(d)]
                if not busy:
                    return list(self.deliveries)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("testasaas: still delivering: %r" % busy[:5])
                self._cond.wait(min(left, 0.2))

    def _kept(self, d):
        """Whether d waits in an interrupted or disabled queue."""
        w = self._hooks.get(d.webhook)
        return w is not None and (w["interrupted"] or not w["enabled"]) and any(x is d for x, _ in w["queue"])
