"""Mercado Pago as the tests play it: Pix payments, refunds, search and signed notifications.

Not a stub that says yes: it serves HTTPS on 127.0.0.1 with a certificate from
a CA the test makes (certs.py); every call must carry `Authorization: Bearer
<access token>` of one of its accounts; every request body is checked against
the SDK's published types (mpapi.py, tests/vendor/mercadopago) and Mercado
Pago's rules for a Pix payment, and a request that breaks them is answered 400
in Mercado Pago's error shape and recorded in mp.violations; every answer is
checked too (a fault of its own is a 500 and a violation, so no test passes on
it). It keeps payments, their BR Codes and refunds, and POSTs Mercado Pago's
notifications signed as the SDK's validator checks them, retrying as Mercado
Pago does.

    mp = TestMP().start()            (or: with TestMP() as mp:)
    mp.url             https://127.0.0.1:PORT (as https://api.mercadopago.com)
    mp.server_ca       the CA file a client trusts for mp.url's certificate
    mp.access_token    "TEST-<app>-<date>-<hex>-<collector_id>" (random)
    mp.collector_id    the account's user id (the payments' collector_id)
    mp.secret          the webhook secret key (Your integrations > Webhooks)
    mp.application_id  the notifications' application_id
    token = mp.add_account()   another account's access token: its payments
                               are 404 to mp.access_token and the other way

  API (under mp.url), each answer as the SDK's types shape it:
    POST /v1/payments                X-Idempotency-Key required; 201 the payment
    GET  /v1/payments/{id}           another account's payment is 404
    GET  /v1/payments/search         sort, criteria, range, begin_date, end_date,
                                     limit, offset, external_reference
    POST /v1/payments/{id}/refunds   {amount?} with X-Idempotency-Key; 201 the refund

  The money side, as the tests drive it (each returns the payment's view):
    mp.pay(id or external_reference, when=None)   pending -> approved/accredited
    mp.cancel(id, detail="expired"|"by_collector"|"by_payer")  pending -> cancelled
    mp.refund(id, amount=None)       a refund made elsewhere (MP's panel), as the API's
    mp.chargeback(id, detail="settled"|"reimbursed"|"in_process")  -> charged_back
    mp.mediation(id)                 approved -> in_mediation (status_detail in_process)
    mp.payment(id), mp.payments (all, oldest first), mp.find(external_reference)

  Notifications (to mp.webhook_url, or the payment's notification_url, which
  Mercado Pago prefers):
    POST <url>?data.id=<id>&type=payment  {"id", "live_mode": false, "type":
      "payment", "date_created", "application_id", "user_id", "version",
      "api_version": "v1", "action": "payment.created" | "payment.updated",
      "data": {"id": "<payment id>"}}
      x-request-id: <uuid, new per call>, x-signature: ts=<unix s>,v1=<hex>
    mp.auto_notify = True   create: payment.created; pay, cancel, refund,
                            chargeback, mediation: payment.updated
    notes = mp.notify(payment_id, action="payment.updated", url=None, wait=True)
    notes = mp.send_raw(body_bytes, data_id, url=None, wait=True)
    mp.sign = "good" | "none" | "bad" | "qr"
                            good: v1 = hex HMAC-SHA256 with mp.secret of
                            "id:<data.id>;request-id:<x-request-id>;ts:<ts>;";
                            bad: the same over another data.id; none: no
                            x-signature; qr: as a QR-code integration's
                            notification: no x-signature either (MP-WH)
    mp.retry_factor = 1.0   a call not answered 200 or 201 within its wait is
                            tried again at 15 min, 30 min, 6 h, 48 h and 96 h
                            after the first (times the factor): 6 calls at most
    mp.webhook_faults(drop=, twice=, delay=, delay_seconds=, seed=)  as testwoovi's
    mp.deliveries (Delivery: .signature the x-signature sent, .request_id,
    .ts, .body, .url, .attempt, .status, ...), mp.wait_deliveries(n), mp.wait_settled()

  Failure knobs and what happened (borrowed from testwoovi.py):
    mp.down(seconds=None, mode="refuse" | "503" | "close"), mp.up(), mp.slow(seconds)
    mp.calls["POST /v1/payments"], mp.log, mp.violations, mp.take_violations()

Sources (short names as in /work/shared/reference/psp-facts.md):
  - MP-SDK: github.com/mercadopago/sdk-nodejs at 4339894 (MIT), vendored in
    tests/vendor/mercadopago/: the request and answer shapes
    (src/clients/payment/create/types.ts, commonTypes.ts, search/types.ts,
    paymentRefund/create/types.ts, paymentRefund/commonTypes.ts); the
    signature (src/utils/webhook/index.ts: the manifest, a pair whose value is
    missing left out, data.id as sent in the query, HMAC-SHA256 hex); the base
    URL and X-Idempotency-Key (src/utils/config/index.ts); the error body
    {message, error, status, cause} (src/utils/errors/index.ts). The SDK's
    types have no Pix end-to-end id, so the payment shows none.
  - MP-PIX: payment_method_id "pix", payer.email and X-Idempotency-Key
    required; the code in point_of_interaction.transaction_data.qr_code.
  - MP-REF: the search's errors (1 "Params Error.", 1000 "Number of rows
    exceeded the limits.", 1001 "Date format must be yyyy-MM-dd'T'HH:mm:ss.SSSZ.",
    1003 "Invalid sort value.", 1004 "Invalid criteria value."); relative dates
    NOW-<n>DAYS|MONTHS; POST /v1/payments's 8 "The name of the following
    parameters is wrong [...]" and 23 (date_of_expiration's format); 3005 (an
    action the payment's state does not allow).
  - MP-ST: the statuses and status_details (approved/accredited,
    approved/partially_refunded, refunded/refunded, cancelled/expired|by_collector|
    by_payer, charged_back/settled|reimbursed|in_process, pending/
    pending_waiting_transfer); in_mediation's status_detail is not in the
    table: in_process here.
  - MP-WH: the notification URL's query (data.id, type), the secret key, the
    QR-code exception (unsigned); a payment's notification_url takes precedence
    over Your integrations' URL; retries until 200 or 201 (22 s to answer the
    first call), at 15 min, 30 min, 6 h, 48 h, 96 h after it (the Brazilian IPN
    table; the Argentinian page says 5 min, 45 min, 6 h, 2 d, 4 d).
  - MP-EX: the notification's body (application_id, version too).
  - Answers quoted by integrators (find_string): 404 {"message": "Payment not
    found", "error": "not_found", "status": 404, "cause": [{"code": 2000, ...}]};
    401 {"message": "invalid_token", "error": "not_found", "status": 401, "cause": []}.
  - The BR Code: as Mercado Pago's published ones (integrators' examples): 26.01
    a Pix key (a UUID), 54 the amount, 62.05 "mpqrinter" and the payment id.
Choices of this server where Mercado Pago says nothing: payment ids are 11
digits, increasing; X-Idempotency-Key missing is 400 (code 1), and reused with
another body answers the first payment unchanged (as for the same body) but is
recorded as a violation; a refund above what remains is 400 code 1; search
pages are 30 by default and at most 1000; criteria defaults to desc;
qr_code_base64 is a PNG drawn from the code's bytes, not a scannable QR; times
are written at -03:00 with milliseconds.
"""
import base64
import datetime
import hashlib
import hmac
import json
import random
import re
import struct
import time
import urllib.parse
import uuid
import zlib
from decimal import Decimal, InvalidOperation

import certs
import mpapi
from bankspec import Violation
from fakeserver import Call, RoutedServer, knob
from fakeserver import utc_now as _now
from fakeserver import same as _same
from testbank import emv_br_code
from wooviwebhook import WooviSender

BRT = datetime.timezone(datetime.timedelta(hours=-3))
# Seconds after the first call (MP-WH's table), and the gaps between calls.
RETRY_AFTER_FIRST = (15 * 60, 30 * 60, 6 * 3600, 48 * 3600, 96 * 3600)
RETRY_INTERVALS = tuple(b - a for a, b in zip((0,) + RETRY_AFTER_FIRST, RETRY_AFTER_FIRST))
SEARCH_PAGE, SEARCH_MAX = 30, 1000
RANGES = ("date_created", "date_last_updated", "date_approved", "money_release_date")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(Z|[+-]\d{2}:?\d{2})")
_RELATIVE = re.compile(r"NOW(?:-(\d+)(DAYS|MONTHS|HOURS|MINUTES))?")
_EXPIRY = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?(Z|[+-]\d{2}:?\d{2})")

ROUTES = [
    ("POST", "/v1/payments", "post_payment"),
    ("GET", "/v1/payments/search", "search"),
    ("GET", "/v1/payments/{id}", "get_payment"),
    ("POST", "/v1/payments/{id}/refunds", "post_refund"),
]
NEEDS_KEY = {"post_payment", "post_refund"}
# (method, template) -> (the SDK type of the body, of the answer)
SHAPES = {
    ("POST", "/v1/payments"): ("PaymentCreateRequest", "PaymentResponse"),
    ("GET", "/v1/payments/{id}"): (None, "PaymentResponse"),
    ("GET", "/v1/payments/search"): (None, "PaymentSearch"),
    ("POST", "/v1/payments/{id}/refunds"): ("CreateRefundBody", "RefundResponse"),
}


def mp_time(moment):
    """2024-05-25T13:01:08.000-03:00: as Mercado Pago writes times."""
    m = moment.astimezone(BRT)
    return m.strftime("%Y-%m-%dT%H:%M:%S.") + "%03d-03:00" % (m.microsecond // 1000)


def parse_mp_time(text):
    """An aware datetime from yyyy-MM-dd'T'HH:mm:ss[.SSS](Z|±HH:MM|±HHMM)."""
    t = text.replace("Z", "+00:00")
    if re.search(r"[+-]\d{4}$", t):
        t = t[:-2] + ":" + t[-2:]
    return datetime.datetime.fromisoformat(t)


def reais(cents):
    """Cents as the JSON number of reais Mercado Pago writes (1050 -> 10.5)."""
    return int(cents // 100) if cents % 100 == 0 else float(Decimal(cents) / 100)


def error_body(status, error, message, code=None, description=None):
    """Mercado Pago's error answer (MP-SDK src/utils/errors: message, error,
    status, cause)."""
    cause = [] if code is None else [{"code": code, "description": description or message, "data": None}]
    return {"message": message, "error": error, "status": status, "cause": cause}


UNAUTHORIZED = error_body(401, "not_found", "invalid_token")


class Refusal(Exception):
    """An API refusal: status and MP's error body; kind "schema" or "rule"
    when it is recorded as a violation, None otherwise."""

    def __init__(self, status, body, kind=None, errors=None):
        super().__init__(body["message"])
        self.status, self.body, self.kind = status, body, kind
        self.errors = errors or [("$", body["message"])]


def _bad(message, code=1, description=None, where="$", kind="rule"):
    return Refusal(400, error_body(400, "bad_request", message, code, description), kind, [(where, message)])


def _not_found():
    return Refusal(404, error_body(404, "not_found", "Payment not found", 2000, "Payment not found"))


def _png(data, side=29):
    """A grey-scale PNG of side x side pixels drawn from `data`'s bytes."""
    seed = hashlib.sha256(data).digest()
    rows = b"".join(b"\x00" + bytes(255 if (seed[(y * side + x) % 32] >> (x % 8)) & 1 else 0
                                    for x in range(side)) for y in range(side))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def manifest(data_id, request_id, ts):
    """The text the SDK's validator signs (buildManifest): a pair whose value
    is missing is left out."""
    parts = (["id:%s" % data_id] if data_id else []) + (["request-id:%s" % request_id] if request_id else [])
    return ";".join(parts + ["ts:%s" % ts]) + ";"


def x_signature(secret, data_id, request_id, ts):
    mac = hmac.new(secret.encode(), manifest(data_id, request_id, ts).encode(), hashlib.sha256).hexdigest()
    return "ts=%s,v1=%s" % (ts, mac)


class MPSender(WooviSender):
    """wooviwebhook.WooviSender's calls, faults and records with Mercado
    Pago's headers (a new x-request-id and ts per call, MP-SDK) and rule
    (only 200 or 201 ends the retries, MP-WH)."""

    def __init__(self, secret, directory, retry_factor=1.0, receiver_ca=None):
        super().__init__(None, directory, retry_factor, receiver_ca, user_agent="MercadoPago WebHook v1.0 payment")
        self.secret = secret
        self.retry_intervals = RETRY_INTERVALS

    def _signature(self, body):
        if self.sign not in ("good", "none", "bad", "qr"):
            raise ValueError("sign is good, none, bad or qr")
        return None

    def _answered(self, d):
        return d.status in (200, 201)

    def _headers(self, d):
        headers = {"Content-Type": "application/json", "User-Agent": self.user_agent}
        d.request_id, d.ts = str(uuid.uuid4()), str(int(time.time()))
        headers["x-request-id"] = d.request_id
        data_id = urllib.parse.parse_qs(d.url.partition("?")[2]).get("data.id", [""])[0]
        if self.sign in ("good", "bad"):
            d.signature = x_signature(self.secret, data_id + ("0" if self.sign == "bad" else ""), d.request_id, d.ts)
            headers["x-signature"] = d.signature
        return headers


class TestMP(RoutedServer):
    name = "testmp"
    server_version = "pixrelay-testmp"
    json_type = "application/json; charset=utf-8"
    ROUTES = ROUTES
    not_found_message = "resource not found"
    allow_header = False

    def __init__(self, directory=None, access_token=None, secret=None, seed=None, retry_factor=1.0,
                 auto_notify=True, webhook_url=None, receiver_ca=None, merchant_name="LOJA MP TESTE",
                 merchant_city="SAO PAULO", host="127.0.0.1", port=0):
        """Not yet listening (start() does). Certificates are made in
        `directory` (a temporary one, removed by close(), when None)."""
        self._init_server(directory, host, port)
        self._rng = random.Random(seed)
        self._accounts = {}       # access token -> collector id
        self.access_token = self.add_account(access_token)
        self.collector_id = self._accounts[self.access_token]
        self.secret = secret or self._hex(64)
        self.application_id = self._rng.randrange(10 ** 15, 10 ** 16)
        self.pix_key = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        self.merchant_name, self.merchant_city = merchant_name, merchant_city
        self.auto_notify = auto_notify
        self.webhook_url = webhook_url
        self._sender = MPSender(self.secret, self.directory, retry_factor, receiver_ca)

        self._payments = {}       # id -> record, oldest first
        self._keys = {}           # (token, endpoint, key) -> (body fingerprint, status, kind, ident)
        self._next_id = self._rng.randrange(10 ** 10, 2 * 10 ** 10)
        self._next_refund = self._rng.randrange(10 ** 9, 2 * 10 ** 9)
        self._notes = 0
        self.server_cert = self.server_ca = None

    def add_account(self, token=None):
        """Another account: its access token (its collector id ends it)."""
        collector = self._rng.randrange(10 ** 8, 10 ** 10)
        token = token or "TEST-%016d-%s-%s-%d" % (self._rng.randrange(10 ** 15, 10 ** 16),
                                                  _now().strftime("%m%d%H"), self._hex(32), collector)
        self._accounts[token] = collector
        return token

    # ---- life cycle (and the knobs: fakeserver.py's) ----

    def start(self):
        """Make the certificates, listen, serve."""
        ca = certs.make_ca(self.directory, "testmp-ca", "Test Mercado Pago CA")
        self.server_cert, self.server_ca = certs.make_server(self.directory, ca, "testmp-server"), ca.cert
        self._serve_tls(self.server_cert)
        return self

    sign = knob("_sender", "sign", "good, none, bad or qr")
    retry_factor = knob("_sender", "retry_factor", "the retries' times are multiplied by it")
    retry_intervals = knob("_sender", "retry_intervals", "seconds between calls, before the factor")

    # ---- serving (the request loop and the routing are fakeserver.py's) ----

    def _error(self, status, code, message):
        return error_body(status, code, message)

    def _schema_refusal(self, message):
        return _bad(message, kind="schema")

    def _api(self, h, method, query, raw, template, route, params, endpoint):
        name = route[2]
        got = h.headers.get("Authorization", "")
        token = next((t for t in self._accounts if _same(got, "Bearer " + t)), None)
        if token is None:
            return self._send(h, 401, UNAUTHORIZED)
        try:
            obj = self._read_json(h, raw)
            in_type = SHAPES[(method, template)][0]
            if in_type is not None and obj is not None:
                errors = mpapi.check(in_type, obj)
                if errors:
                    unknown = [p for p, r in errors if r.startswith("not a field")]
                    message = ("The name of the following parameters is wrong %s" % unknown if unknown
                               else "; ".join("%s: %s" % e for e in errors))
                    raise Refusal(400, error_body(400, "bad_request", message, 8 if unknown else 1),
                                  "schema", errors)
            if method == "GET" and obj is not None:
                raise _bad("%s takes no body" % endpoint, kind="schema")
            key = h.headers.get("X-Idempotency-Key")
            if name in NEEDS_KEY:
                if not key:
                    raise _bad("X-Idempotency-Key: header required", where="X-Idempotency-Key")
                status, answer = self._idempotent(token, endpoint, params, key, raw or b"", obj, name, h.path)
            else:
                status, answer = getattr(self, "_op_" + name)(token, params, query, obj)
        except Refusal as r:
            status, answer = r.status, r.body
            if r.kind:
                self._violation("request", r.kind, endpoint, h.path, r.status, r.errors, r.body["message"])
        out_type = SHAPES[(method, template)][1]
        if 200 <= status < 300:
            errors = mpapi.check(out_type, answer)
            if errors:
                self._violation("response", "schema", endpoint, h.path, status, errors, "testmp's own answer")
                status, answer = 500, error_body(500, "internal_error", "testmp's answer broke the SDK types: "
                                                 + "; ".join("%s: %s" % e for e in errors))
        return self._send(h, status, answer)

    def _idempotent(self, token, endpoint, params, key, raw, obj, name, target):
        """The first answer's status and the resource's view again for a
        key seen before (a violation when the body differs)."""
        fingerprint = hashlib.sha256(json.dumps(obj, sort_keys=True).encode() if obj is not None else b"").hexdigest()
        slot = (token, endpoint, params.get("id"), key)
        with self._lock:
            seen = self._keys.get(slot)
            if seen is None:
                status, answer, ident = getattr(self, "_op_" + name)(token, params, None, obj)
                self._keys[slot] = (fingerprint, status, ident)
                return status, answer
            old, status, ident = seen
            if old != fingerprint:
                self._violation("request", "rule", endpoint, target, status,
                                [("X-Idempotency-Key", "reused with another body")],
                                "X-Idempotency-Key %s was sent before with another body" % key)
            if name == "post_payment":
                return status, self._view(self._payments[ident])
            return status, self._refund_view(ident)

    # ---- identifiers and views ----

    def _hex(self, n=32):
        return "%0*x" % (n, self._rng.getrandbits(4 * n))

    def br_code(self, cents, payment_id):
        """The payment's BR Code: 26.01 the account's key, 54 the amount in
        reais, 62.05 mpqrinter<payment id>, CRC-16 in 63."""
        return emv_br_code("%d.%02d" % divmod(cents, 100), self.merchant_name, self.merchant_city,
                           key=self.pix_key, reference="mpqrinter%d" % payment_id, single_use=False)

    def _view(self, p):
        refunded = sum(r["cents"] for r in p["refunds"])
        out = {"id": p["id"], "date_created": mp_time(p["created"]), "date_last_updated": mp_time(p["updated"]),
               "date_of_expiration": mp_time(p["expires"]), "operation_type": "regular_payment",
               "payment_method_id": "pix", "payment_type_id": "bank_transfer",
               "payment_method": {"id": "pix", "type": "bank_transfer", "issuer_id": "12501"},
               "status": p["status"], "status_detail": p["detail"], "currency_id": "BRL",
               "description": p["description"], "live_mode": False, "collector_id": p["collector"],
               "payer": p["payer"], "metadata": {}, "transaction_amount": reais(p["cents"]),
               "transaction_amount_refunded": reais(refunded), "installments": 1, "captured": True,
               "binary_mode": False, "refunds": [self._refund_dict(r) for r in p["refunds"]],
               "transaction_details": {"net_received_amount": reais(p["cents"] if p["approved"] else 0),
                                       "total_paid_amount": reais(p["cents"]), "overpaid_amount": 0,
                                       "installment_amount": 0}}
        if p["approved"] is not None:
            out["date_approved"] = mp_time(p["approved"])
            out["money_release_date"] = mp_time(p["approved"])
        for k in ("external_reference", "notification_url"):
            if p[k] is not None:
                out[k] = p[k]
        td = {"qr_code": p["qr_code"], "qr_code_base64": base64.b64encode(_png(p["qr_code"].encode())).decode(),
              "ticket_url": "https://www.mercadopago.com.br/payments/%d/ticket?caller_id=%d&hash=%s"
              % (p["id"], p["collector"], p["hash"])}
        if p["approved"] is not None:
            td["bank_info"] = {"payer": {"long_name": "BANCO PAGADOR TESTE"},
                               "collector": {"account_id": p["collector"], "long_name": "MERCADO PAGO"},
                               "is_same_bank_account_owner": "false"}
        out["point_of_interaction"] = {"type": "OPENPLATFORM",
                                       "business_info": {"unit": "online_payments", "sub_unit": "default"},
                                       "transaction_data": td}
        return out

    @staticmethod
    def _refund_dict(r):
        return {"id": r["id"], "payment_id": r["payment"], "amount": reais(r["cents"]), "metadata": {},
                "source": {"id": str(r["collector"]), "name": "Owner", "type": "collector"},
                "date_created": mp_time(r["created"]),
                "refund_mode": "standard", "adjustment_amount": 0, "status": "approved",
                "amount_refunded_to_payer": reais(r["cents"])}

    def _refund_view(self, refund_id):
        for p in self._payments.values():
            for r in p["refunds"]:
                if r["id"] == refund_id:
                    return self._refund_dict(r)
        raise KeyError(refund_id)

    def _find(self, token, ident):
        p = self._payments.get(int(ident)) if str(ident).isdigit() else None
        if p is None or (token is not None and p["collector"] != self._accounts[token]):
            raise _not_found()
        return p

    # ---- operations ----

    @staticmethod
    def _cents(value, field):
        """Integer cents from a JSON number of reais (at most 2 decimals,
        above 0); Refusal otherwise."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _bad("%s: a number of reais is required" % field, where="$." + field)
        try:
            d = Decimal(repr(value))
        except InvalidOperation:
            raise _bad("%s: not a number" % field, where="$." + field) from None
        cents = d * 100
        if cents != cents.to_integral_value() or cents < 1:
            raise _bad("%s: reais above 0 with at most 2 decimals" % field, where="$." + field)
        return int(cents)

    def _op_post_payment(self, token, params, query, body):
        if body is None:
            raise _bad("a JSON body is required", kind="schema")
        if body.get("payment_method_id") != "pix":
            raise _bad("payment_method_id: \"pix\" is required (MP-PIX)", where="$.payment_method_id")
        if not isinstance(body.get("payer"), dict) or not body["payer"].get("email"):
            raise _bad("payer.email: required", where="$.payer.email")
        if "transaction_amount" not in body:
            raise _bad("transaction_amount: required", where="$.transaction_amount")
        cents = self._cents(body["transaction_amount"], "transaction_amount")
        now = _now()
        expires = now + datetime.timedelta(days=1)
        if "date_of_expiration" in body:
            if not _EXPIRY.fullmatch(body["date_of_expiration"]):
                raise _bad("The following parameters must be valid date and format (yyyy-MM-dd'T'HH:mm:ssz) "
                           "date_of_expiration", code=23, where="$.date_of_expiration")
            expires = parse_mp_time(body["date_of_expiration"])
        url = body.get("notification_url")
        if url is not None and not url.startswith(("http://", "https://")):
            raise _bad("notification_url: an http(s) URL is required", where="$.notification_url")
        with self._lock:
            pid = self._next_id
            self._next_id += self._rng.randrange(1, 1000)
            payer = {k: v for k, v in body["payer"].items()
                     if k in ("email", "identification", "first_name", "last_name", "entity_type", "phone")}
            payer["type"] = "guest"
            p = {"id": pid, "collector": self._accounts[token], "status": "pending",
                 "detail": "pending_waiting_transfer", "created": now, "updated": now, "expires": expires,
                 "approved": None, "cents": cents, "description": body.get("description", ""),
                 "external_reference": body.get("external_reference"), "notification_url": url,
                 "payer": payer, "refunds": [], "qr_code": self.br_code(cents, pid), "hash": str(uuid.uuid4())}
            self._payments[pid] = p
            view = self._view(p)
            note = self._auto(p, "payment.created")
        self._send_auto(note)
        return 201, view, pid

    def _op_get_payment(self, token, params, query, body):
        with self._lock:
            return 200, self._view(self._find(token, params["id"]))

    @staticmethod
    def _search_date(text, field):
        """An aware datetime; Refusal 1001 when the text is neither
        yyyy-MM-dd'T'HH:mm:ss.SSSZ nor NOW[-<n>DAYS|MONTHS|HOURS|MINUTES]."""
        m = _RELATIVE.fullmatch(text)
        if m:
            n, unit = int(m.group(1) or 0), m.group(2)
            span = {"DAYS": datetime.timedelta(days=n), "MONTHS": datetime.timedelta(days=30 * n),
                    "HOURS": datetime.timedelta(hours=n), "MINUTES": datetime.timedelta(minutes=n),
                    None: datetime.timedelta(0)}[unit]
            return _now() - span
        if _DATE.fullmatch(text):
            try:
                return parse_mp_time(text)
            except ValueError:
                pass
        raise _bad("Date format must be yyyy-MM-dd'T'HH:mm:ss.SSSZ.", code=1001, where="?" + field)

    def _op_search(self, token, params, query, body):
        given = urllib.parse.parse_qs(query, keep_blank_values=True)
        declared = mpapi.declared_query("PaymentSearchOptions")
        q = {}
        for name, texts in given.items():
            if name not in declared:
                raise _bad("Params Error.", where="?" + name,
                           description="%s: a filter this server does not implement" % name)
            if len(texts) != 1:
                raise _bad("Params Error.", where="?" + name, description="%s: given %d times" % (name, len(texts)))
            q[name] = texts[0]
        sort = q.get("sort", "date_created")
        if sort not in RANGES:
            raise _bad("Invalid sort value.", code=1003, where="?sort")
        criteria = q.get("criteria", "desc")
        if criteria not in ("asc", "desc"):
            raise _bad("Invalid criteria value.", code=1004, where="?criteria")
        rng = q.get("range", "date_created")
        if rng not in RANGES:
            raise _bad("Params Error.", where="?range", description="range: one of %s" % ", ".join(RANGES))
        begin = self._search_date(q["begin_date"], "begin_date") if "begin_date" in q else None
        end = self._search_date(q["end_date"], "end_date") if "end_date" in q else None
        try:
            limit, offset = int(q.get("limit", SEARCH_PAGE)), int(q.get("offset", 0))
        except ValueError:
            raise _bad("Params Error.", where="?limit", description="limit, offset: whole numbers") from None
        if limit < 1 or offset < 0:
            raise _bad("Params Error.", where="?limit", description="limit at least 1, offset at least 0")
        if limit > SEARCH_MAX:
            raise _bad("Number of rows exceeded the limits.", code=1000, where="?limit")
        field = {"date_created": "created", "date_last_updated": "updated", "date_approved": "approved",
                 "money_release_date": "approved"}
        with self._lock:
            mine = [p for p in self._payments.values() if p["collector"] == self._accounts[token]
                    and ("external_reference" not in q or p["external_reference"] == q["external_reference"])]
            inside = []
            for p in mine:
                t = p[field[rng]]
                if (begin is not None or end is not None) and t is None:
                    continue
                if (begin is None or t >= begin) and (end is None or t <= end):
                    inside.append(p)
            have = [p for p in inside if p[field[sort]] is not None]
            have.sort(key=lambda p: (p[field[sort]], p["id"]), reverse=criteria == "desc")
            ordered = have + [p for p in inside if p[field[sort]] is None]
            allowed = mpapi.fields("PaymentSearchResult")
            results = []
            for p in ordered[offset:offset + limit]:
                v = self._view(p)
                v["payer"] = {"id": str(p["collector"] + 1), "email": p["payer"]["email"],
                              "identification": p["payer"].get("identification", {}), "type": p["payer"]["type"]}
                results.append({k: x for k, x in v.items() if k in allowed})
            return 200, {"paging": {"total": len(inside), "limit": limit, "offset": offset}, "results": results}

    def _create_refund(self, token, payment_id, amount):
        """The refund record; Refusal as Mercado Pago's when it cannot be."""
        with self._lock:
            p = self._find(token, payment_id)
            if p["status"] != "approved":
                raise _bad("Not valid action, the resource is in a state that does not allow this operation. "
                           "For more information see the state that has the resource.", code=3005)
            left = p["cents"] - sum(r["cents"] for r in p["refunds"])
            cents = left if amount is None else amount
            if cents > left:
                raise _bad("amount: %s is above what remains to refund (%s)" % (reais(cents), reais(left)),
                           where="$.amount")
            r = {"id": self._next_refund, "payment": p["id"], "cents": cents, "created": _now(),
                 "collector": p["collector"]}
            self._next_refund += 1
            p["refunds"].append(r)
            if cents == left:
                p["status"], p["detail"] = "refunded", "refunded"
            else:
                p["detail"] = "partially_refunded"
            p["updated"] = _now()
            note = self._auto(p, "payment.updated")
        self._send_auto(note)
        return r

    def _op_post_refund(self, token, params, query, body):
        amount = None
        if body is not None and "amount" in body:
            amount = self._cents(body["amount"], "amount")
        r = self._create_refund(token, params["id"], amount)
        with self._lock:
            return 201, self._refund_dict(r), r["id"]

    # ---- the money side, driven by the test ----

    def _by_any(self, ident):
        """The payment by id or external_reference (the latest); KeyError."""
        with self._lock:
            if str(ident).isdigit() and int(ident) in self._payments:
                return self._payments[int(ident)]
            for p in reversed(list(self._payments.values())):
                if p["external_reference"] == ident:
                    return p
        raise KeyError(ident)

    def _move(self, ident, allowed, status, detail, approved=None):
        with self._lock:
            p = self._by_any(ident)
            if p["status"] not in allowed:
                raise ValueError("the payment is %s" % p["status"])
            p["status"], p["detail"], p["updated"] = status, detail, _now()
            if approved is not None:
                p["approved"] = approved
            view = self._view(p)
            note = self._auto(p, "payment.updated")
        self._send_auto(note)
        return view

    def pay(self, ident, when=None):
        """The payer pays the Pix: pending -> approved/accredited, approved
        at `when` (default now). ValueError when not pending."""
        moment = when or _now()
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.timezone.utc)
        return self._move(ident, ("pending",), "approved", "accredited", approved=moment)

    def cancel(self, ident, detail="expired"):
        """pending -> cancelled (expired, by_collector or by_payer)."""
        return self._move(ident, ("pending",), "cancelled", detail)

    def refund(self, ident, amount=None):
        """A refund made elsewhere (Mercado Pago's panel) of `amount` reais
        (Decimal or text; default what remains); the payment's view."""
        p = self._by_any(ident)
        cents = None if amount is None else int(Decimal(str(amount)) * 100)
        self._create_refund(None, p["id"], cents)
        return self.payment(p["id"])

    def chargeback(self, ident, detail="settled"):
        """approved or in_mediation -> charged_back."""
        return self._move(ident, ("approved", "in_mediation"), "charged_back", detail)

    def mediation(self, ident):
        """approved -> in_mediation (a dispute opened)."""
        return self._move(ident, ("approved",), "in_mediation", "in_process")

    def payment(self, ident):
        """The payment's view (by id or external_reference); KeyError."""
        with self._lock:
            return self._view(self._by_any(ident))

    def find(self, external_reference):
        with self._lock:
            return [self._view(p) for p in self._payments.values() if p["external_reference"] == external_reference]

    @property
    def payments(self):
        with self._lock:
            return [self._view(p) for p in self._payments.values()]

    # ---- notifications ----

    def notification_body(self, payment_id, action="payment.updated"):
        """The body of a payment notification (MP-EX)."""
        with self._lock:
            self._notes += 1
            return {"id": self._rng.randrange(10 ** 10, 10 ** 12), "live_mode": False, "type": "payment",
                    "date_created": mp_time(_now()), "application_id": self.application_id,
                    "user_id": self._payments[int(payment_id)]["collector"] if int(payment_id) in self._payments
                    else self.collector_id, "version": self._notes, "api_version": "v1", "action": action,
                    "data": {"id": str(payment_id)}}

    @staticmethod
    def _with_query(url, data_id):
        sep = "&" if "?" in url else "?"
        return url + sep + urllib.parse.urlencode({"data.id": data_id, "type": "payment"})

    def _target(self, p, url):
        url = url or (p["notification_url"] if p is not None else None) or self.webhook_url
        return url

    def _auto(self, p, action):
        if not self.auto_notify:
            return None
        url = self._target(p, None)
        if url is None:
            return None
        body = json.dumps(self.notification_body(p["id"], action), separators=(",", ":")).encode()
        return action, self._with_query(url, str(p["id"])), body

    def _send_auto(self, note):
        if note is not None:
            self._sender.send(note[0], [(note[1], None)], note[2], wait=False)

    def notify(self, payment_id, action="payment.updated", url=None, wait=True):
        """POST the payment's notification to `url`, else its
        notification_url, else mp.webhook_url; retried as Mercado Pago does.
        Returns the first call's Delivery records."""
        with self._lock:
            p = self._payments.get(int(payment_id))
        body = json.dumps(self.notification_body(payment_id, action), separators=(",", ":")).encode()
        return self._sender.send(action, [(self._with_query(self._target(p, url), str(payment_id)), None)],
                                 body, wait)

    def send_raw(self, body, data_id, url=None, wait=True):
        """POST `body` (bytes, as is) with ?data.id=<data_id>&type=payment,
        signed per mp.sign."""
        return self._sender.send("custom", [(self._with_query(url or self.webhook_url, str(data_id)), None)],
                                 body, wait)


__all__ = ["TestMP", "manifest", "x_signature", "mp_time", "Call", "Violation"]
