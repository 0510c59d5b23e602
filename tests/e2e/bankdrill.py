"""What the bank drills need besides the test bank: the proof, from outside,
that every Pix a bank settled became exactly one event. Used by
tests/deploy/test_bankdrill.py (CI, through nginx) and tests/drill/bank_drill.py
(by hand, a day of traffic in minutes).

    bank = DrillBank(client_ca=..., receiver_ca=..., keys=[...]).start()
    bank.listings            one Listing per page of GET /pix the bank answered
    bank.arrivals            every call as it came (Pending: method, path, port, time)
    bank.pending_calls()     the calls being answered now
    bank.after_page = fn     fn(page, pages) once a page is made, before it leaves
    register_webhook(bank, merchant_cert, url)     PUT /webhook/{chave}, as a merchant
    heard = events_by_e2e(sink.requests(), signing_secret)  {e2e: Heard}
    outcomes = webhook_outcomes(bank.deliveries)   {e2e: [Answer, ...]}
    rep = day_reports(px, key, conn_id, days_of(horarios))  the days summed

Everything here reads what a merchant (or the bank) can see: the signed
postbacks, the webhook's answers, the day's report.
"""
import base64
import collections
import http.client
import json
import math
import ssl
import threading
import time
import urllib.parse

from sse import verify
from testbank import TestBank, parse_time

BRASILIA = -3 * 3600  # UTC-3, no daylight saving since 2019 (docs/banks.md)

Listing = collections.namedtuple("Listing", "asked time page items pages total")
Listing.__doc__ = """One page of GET /pix the bank answered: when it was
asked and when made, which page, how many Pix it held, quantidadeDePaginas
and quantidadeTotalDeItens."""

Pending = collections.namedtuple("Pending", "method path port time")
Pending.__doc__ = """A call the bank read: method, path, the client's port, when it came."""

Answer = collections.namedtuple("Answer", "copy delay dropped status outcome sent_at")
Answer.__doc__ = """One webhook POST that carried a Pix: copy 1 or 2 (sent
twice), the seconds it was held, dropped (never sent), the HTTP status the
bank got (None: no answer), the Pix's outcome in pixrelay's answer (paid,
unmatched, duplicate; None without one), when it left (time.time())."""


class DrillBank(TestBank):
    """The test bank, recording what each page of GET /pix listed and the
    client port of each call while it is being answered (to find which
    process asks)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.listings = []
        self.arrivals = []
        self.after_page = None
        self._pending = {}
        self._call = threading.local()

    def _serve(self, h):
        mark = object()
        call = Pending(h.command, h.path.partition("?")[0], h.client_address[1], time.time())
        self._call.time = call.time
        with self._lock:
            self._pending[mark] = call
            self.arrivals.append(call)
        try:
            super()._serve(h)
        finally:
            with self._lock:
                self._pending.pop(mark, None)

    def pending_calls(self):
        """The calls read and not yet answered (a slow() bank holds them)."""
        with self._lock:
            return list(self._pending.values())

    def _op_get_pix_list(self, params, values, body):
        status, answer = super()._op_get_pix_list(params, values, body)
        p = answer["parametros"]["paginacao"]
        with self._lock:
            self.listings.append(Listing(self._call.time, time.time(), p["paginaAtual"],
                                         len(answer["pix"]), p["quantidadeDePaginas"],
                                         p["quantidadeTotalDeItens"]))
        if self.after_page:
            self.after_page(p["paginaAtual"], p["quantidadeDePaginas"])
        return status, answer

    def runs(self):
        """The reconciliation runs as the bank saw them: (asked, done, pages,
        Pix listed) of each sequence of pages 0 .. quantidadeDePaginas - 1."""
        out, cur = [], None
        with self._lock:
            listings = list(self.listings)
        for x in listings:
            if x.page == 0:
                cur = [x.asked, x.time, 0, 0]
            if cur is None:
                continue
            cur[1], cur[2], cur[3] = x.time, cur[2] + 1, cur[3] + x.items
            if x.page == x.pages - 1:
                out.append(tuple(cur))
                cur = None
        return out

    def listed(self):
        """Pix listed on every page answered so far."""
        with self._lock:
            return sum(x.items for x in self.listings)


def register_webhook(bank, merchant, url, chave=None):
    """The merchant registers `url` as the webhook of `chave` (default
    bank.key) at the bank: a token, then PUT {api}/webhook/{chave}, over
    mutual TLS with the merchant's certificate (a certs.Cert)."""
    ctx = ssl.create_default_context(cafile=bank.server_ca)
    ctx.load_cert_chain(merchant.cert, merchant.key)

    def call(method, target, body, headers):
        conn = http.client.HTTPSConnection(bank.host, bank.port, context=ctx, timeout=10)
        try:
            conn.request(method, target, body, headers)
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    basic = base64.b64encode(("%s:%s" % (bank.client_id, bank.client_secret)).encode()).decode()
    status, body = call("POST", "/oauth/token", "grant_type=client_credentials",
                        {"Content-Type": "application/x-www-form-urlencoded",
                         "Authorization": "Basic " + basic})
    if status != 200:
        raise AssertionError("token: %d %r" % (status, body))
    token = json.loads(body)["access_token"]
    path = "%s/webhook/%s" % (bank.prefix, urllib.parse.quote(chave or bank.key, safe=""))
    status, body = call("PUT", path, json.dumps({"webhookUrl": url}),
                        {"Content-Type": "application/json", "Authorization": "Bearer " + token})
    if status != 200:
        raise AssertionError("PUT /webhook: %d %r" % (status, body))


class Heard:
    """What the merchant's endpoint got about one Pix: the distinct events
    (by id), their types, where pixrelay took the Pix from (webhook or
    reconciliation), when the first delivery arrived, how many deliveries
    (a redelivery of one event is the same id)."""

    def __init__(self):
        self.ids, self.types, self.sources, self.first, self.deliveries = set(), [], [], None, 0
        self.charges = []

    def add(self, req, j):
        self.deliveries += 1
        self.first = req.time if self.first is None else min(self.first, req.time)
        if j["id"] in self.ids:
            return
        self.ids.add(j["id"])
        self.types.append(j["event"])
        d = j["data"]
        if j["event"] == "EVENT:CHARGE_PAID":
            self.sources.append(d["pix"]["source"])
            self.charges.append(d["id"])
        else:
            self.sources.append(d["source"])
            self.charges.append((d.get("charge") or {}).get("id"))

    def __repr__(self):
        return "<Heard %d event(s) %s from %s, %d deliveries>" % (
            len(self.ids), self.types, self.sources, self.deliveries)


def events_by_e2e(requests, signing=None):
    """{endToEndId: Heard} of the Pix events among the sink's requests
    (EVENT:CHARGE_PAID, EVENT:PIX_UNMATCHED); with `signing` each one's
    signature must verify (AssertionError otherwise)."""
    out = collections.defaultdict(Heard)
    for q in requests:
        try:
            j = q.json
        except ValueError:
            continue
        if j.get("event") not in ("EVENT:CHARGE_PAID", "EVENT:PIX_UNMATCHED"):
            continue
        if signing is not None and not verify(
                signing, {k.lower(): v for k, v in q.header_list}, q.body):
            raise AssertionError("a postback whose signature does not verify: %r" % q)
        out[j["data"]["pix"]["endToEndId"]].add(q, j)
    return dict(out)


def webhook_outcomes(deliveries):
    """{endToEndId: [Answer, ...]} of the bank's webhook POSTs (every one
    over: call after bank.wait_deliveries)."""
    out = collections.defaultdict(list)
    for d in deliveries:
        outcomes = {}
        if d.ok and d.answer:
            try:
                outcomes = {p["endToEndId"]: p["outcome"]
                            for p in json.loads(d.answer)["data"]["pix"]}
            except (ValueError, KeyError, TypeError):
                outcomes = {}
        for e2e in d.e2eids:
            out[e2e].append(Answer(d.copy, d.delay, d.dropped, d.status, outcomes.get(e2e),
                                   d.sent_at))
    return dict(out)


def epoch(horario):
    """An RFC 3339 horario as seconds since the epoch."""
    return parse_time(horario).timestamp()


def day_of(ts):
    """The Brasilia day (YYYY-MM-DD) of an instant: the day's report's."""
    return time.strftime("%Y-%m-%d", time.gmtime(ts + BRASILIA))


def days_of(instants):
    return sorted({day_of(t) for t in instants})


def day_reports(px, key, conn, days):
    """GET /v1/bank/reconciliation of each day, summed: {"pix": {...},
    "cents": {...}, "outcomes": {...}, "recoveredEndToEndIds": [...],
    "reports": [each day's]}."""
    total = {"pix": collections.Counter(), "cents": collections.Counter(),
             "outcomes": collections.Counter(), "recoveredEndToEndIds": [], "reports": []}
    for day in days:
        r = px.request("GET", "/v1/bank/reconciliation?connection=%s&date=%s" % (conn, day),
                       headers={"Authorization": "Bearer " + key})
        if r.status != 200:
            raise AssertionError("the day's report of %s: %r" % (day, r))
        d = r.json["data"]
        for part in ("pix", "cents", "outcomes"):
            total[part].update(d[part])
        total["recoveredEndToEndIds"] += d["recoveredEndToEndIds"]
        total["reports"].append(d)
    return total


def percentile(values, q):
    """The q-th percentile (0-100) of values, nearest rank; None if empty."""
    if not values:
        return None
    v = sorted(values)
    return v[max(0, min(len(v), math.ceil(q / 100.0 * len(v))) - 1)]
