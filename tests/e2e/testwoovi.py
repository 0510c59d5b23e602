"""Woovi (OpenPix) as the tests play it: charges, Pix, refunds and signed notifications.

Not a stub that says yes: it serves HTTPS on 127.0.0.1 with a certificate from
a CA the test makes (certs.py); every API call must carry `Authorization:
<AppID>` exactly; every request's query and body is checked against the
vendored swagger (openpix.py) and a request that fails is answered 400
{"error": "..."} and recorded in wv.violations; every answer is checked too (a
fault of its own is a 500 and a violation, so no test passes on it). It keeps
charges, their BR Codes, Pix (PAYMENT) and refund (REFUND) transactions, and
POSTs Woovi's notifications signed with an RSA key of its own, retrying as
Woovi does.

    wv = TestWoovi().start()            (or: with TestWoovi() as wv:)
    wv.url                  https://127.0.0.1:PORT (paths /api/v1/... go after it)
    wv.server_ca            the CA file a client trusts for wv.url's certificate
    wv.app_id               the AppID (random); Authorization: <app_id>
    wv.public_key_pem       the notifications' public key (PEM text, RSA 2048);
                            wv.rotate_key(): a new current key, the old one
                            still published (is_current false)
    wv.pix_key              the account's Pix key (26.01 of every BR Code)

  API (under wv.url):
    POST /api/v1/charge[?return_existing=true]   GET /api/v1/charge/{id}
    GET /api/v1/charge?start&end&status&skip&limit
    POST, GET /api/v1/charge/{id}/refund         GET /api/v1/transaction/{id}
    GET /api/v1/transaction?start&end&charge&type&skip&limit (100 a page)
    GET /api/v1/webhook/public-keys (no AppID)   POST, GET /api/v1/webhook,
    DELETE /api/v1/webhook/{id}
  A charge's {id} is its correlationID, its transactionID or its globalID; a
  transaction's is its transactionID or its endToEndId. An unknown id is
  answered wv.not_found_status (404) {"error": "... not found"}, not a
  violation.

  The money side, as the tests drive it (each returns the view the API gives):
    tx = wv.pay(correlation_id, value=None, when=None, info=None)
                            settle a charge: a PAYMENT transaction (its
                            transactionID the charge's, a 32-character E...
                            endToEndId), the charge COMPLETED with paidAt
    tx = wv.pay_static(value, when=None, info=None)     a Pix to the key, no charge
    rf = wv.refund(charge_id, value=None, correlation_id=None)
                            a refund made elsewhere (Woovi's dashboard):
                            as POST /api/v1/charge/{id}/refund does
    rf = wv.confirm_refund(refund_correlation_id, status="CONFIRMED", when=None)
                            IN_PROCESSING -> CONFIRMED (a REFUND transaction,
                            endToEndId D...) or REJECTED
    ch = wv.expire(correlation_id)      ACTIVE -> EXPIRED
    wv.charge(id), wv.transaction(id), wv.transactions (all, oldest first)

  Notifications (docs/webhook/examples' shapes, sent by wooviwebhook.py), to
  wv.webhook_url and to the webhooks registered with POST /api/v1/webhook for
  that event (with their `authorization` as the Authorization header):
    wv.webhook_url = "https://host:port/path" | "http://..." |
                     "unix:/path/door.sock:/v1/webhooks/..."  (nginx's form;
                     "http://unix:PATH:/uri" too)   wv.receiver_ca for https
    wv.auto_notify = True    pay() sends OPENPIX:CHARGE_COMPLETED and
                             OPENPIX:TRANSACTION_RECEIVED, pay_static() the
                             latter, confirm_refund(CONFIRMED)
                             OPENPIX:TRANSACTION_REFUND_RECEIVED, expire()
                             OPENPIX:CHARGE_EXPIRED (wv.notify_events: which)
    notes = wv.notify(event, charge=None, transaction=None, refund=None, url=None, wait=True)
    notes = wv.send_raw(body_bytes, event="custom", url=None, wait=True)
    wv.sign = "good" | "none" | "bad" | "other-key"
                             x-webhook-signature: base64 RSA PKCS#1 v1.5
                             SHA-256 of the exact bytes sent; none: no header;
                             bad: a good signature of other bytes; other-key:
                             signed with a key that is not published
    wv.retry_factor = 1.0    a failed call (no answer, or a status above 400)
                             is tried again after 10*2^n s * factor, n = 0..7
                             (wv.retry_intervals): at most 9 calls
    wv.webhook_faults(drop=0.2, twice=0.1, delay=0.1, delay_seconds=1, seed=7)
                             per notification: never sent, its first call
                             sent twice, its first call held
    wv.deliveries            every call (Delivery: event, url, body, signature,
                             attempt, status, answer, error, dropped)
    wv.wait_deliveries(n), wv.wait_settled()

  Failure knobs and what happened:
    wv.down(seconds=None, mode="refuse" | "503" | "close"), wv.up(), wv.slow(seconds)
    wv.calls["POST /api/v1/charge"], wv.log, wv.violations, wv.take_violations()

Sources (github.com/Open-Pix/openpix-developers at 76584f02762014d90ab49bf0d9ff1aee8a3e8d3f,
MIT, vendored in tests/vendor/openpix/):
  - routes, parameters, request and answer schemas: src/swaggers/openpix.yml
    (vendored as openpix.yml; its errata in openpix.py);
  - Authorization: <AppID> without a scheme, and the 401 body {"data": null,
    "errors": [{"message": "appID inválido"}]}: docs/apis/start-api-integration.md;
  - paging (?skip=, 100 a page, pageInfo.totalCount/hasNextPage):
    docs/transaction/transaction-how-to-paginate-api.md;
  - refunds (correlationID idempotent, value defaults to what remains, status
    IN_PROCESSING at first): docs/charge/refund/charge-refund-create-api.mdx;
  - notification bodies: docs/webhook/examples/charge-payload.mdx,
    transaction-received-payload.mdx, refund-payload.mdx, charge-expired-payload.mdx;
  - x-webhook-signature (RSA SHA-256 over the raw body, base64):
    docs/webhook/seguranca/weebhook-signature-validation.mdx;
  - retries (retried when the answer's status is above 400 or there is none;
    intervals 10 * 2^n seconds, the table's 8 rows after the first call):
    docs/webhook/webhook-retry.md;
  - the BR Code: field 54 the value, 62.05 the first 25 characters of the
    charge's transactionID (the examples' brCode do so); 26.01 the account's
    Pix key (the examples carry a location in 26.25 instead; a key makes the
    code checkable without a location server).
  GET /api/v1/webhook/public-keys ({"public_keys": [{"key_identifier",
  "is_current", "key"}]}) is not in that repository: its shape is the one
  pixrelay's issue 33 design gives. Choices of this server where Woovi's
  documents say nothing: lists are newest first; an unknown id is 404; a
  charge does not expire by itself (expire()); a refund's REFUND transaction
  exists once the refund is confirmed.
"""
import base64
import datetime
import hashlib
import json
import random
import string
import urllib.parse
import uuid

import certs
import openpix
from fakeserver import RoutedServer, knob, parse_time
from fakeserver import rfc3339 as iso   # as Woovi writes times: 2024-01-25T09:46:14.824Z
from fakeserver import utc_now as _now
from fakeserver import same as _same
from testbank import emv_br_code
from wooviwebhook import WooviSender, make_rsa_key, public_key_pem

PAGE = 100
EVENTS = ("OPENPIX:CHARGE_COMPLETED", "OPENPIX:TRANSACTION_RECEIVED", "OPENPIX:TRANSACTION_REFUND_RECEIVED",
          "OPENPIX:CHARGE_EXPIRED")
UNAUTHORIZED = {"data": None, "errors": [{"message": "appID inválido"}]}
_ALNUM = string.ascii_letters + string.digits

# (method, template) -> handler name (_op_<name>); the order matters where
# templates overlap (public-keys before {id}).
ROUTES = [
    ("POST", "/api/v1/charge", "post_charge"),
    ("GET", "/api/v1/charge", "list_charges"),
    ("GET", "/api/v1/charge/{id}", "get_charge"),
    ("POST", "/api/v1/charge/{id}/refund", "post_refund"),
    ("GET", "/api/v1/charge/{id}/refund", "list_refunds"),
    ("GET", "/api/v1/transaction", "list_transactions"),
    ("GET", "/api/v1/transaction/{id}", "get_transaction"),
    ("GET", "/api/v1/webhook/public-keys", "public_keys"),
    ("POST", "/api/v1/webhook", "post_webhook"),
    ("GET", "/api/v1/webhook", "list_webhooks"),
    ("DELETE", "/api/v1/webhook/{id}", "delete_webhook"),
]
NO_AUTH = {"/api/v1/webhook/public-keys"}
NOT_IN_SWAGGER = {"/api/v1/webhook/public-keys"}


def _cents(value):
    return isinstance(value, int) and not isinstance(value, bool)


class Refusal(Exception):
    """An API refusal: status and {"error": message}; kind "schema" or
    "rule" for a 400 (recorded as a violation), None otherwise."""

    def __init__(self, status, message, kind=None, errors=None):
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind
        self.errors = errors or [("$", message)]


def _rule(message, where="$"):
    return Refusal(400, message, "rule", [(where, message)])


class TestWoovi(RoutedServer):
    name = "testwoovi"
    server_version = "pixrelay-testwoovi"
    json_type = "application/json; charset=utf-8"
    ROUTES = ROUTES

    def __init__(self, directory=None, app_id=None, pix_key=None, seed=None, retry_factor=1.0,
                 auto_notify=True, webhook_url=None, receiver_ca=None, merchant_name="LOJA WOOVI TESTE",
                 merchant_city="SAO PAULO", ispb="23114447", payer_ispb="12345678", host="127.0.0.1", port=0):
        """Not yet listening (start() does). Certificates and the RSA key are
        made in `directory` (a temporary one, removed by close(), when None).
        ispb: the PSP in refunds' endToEndIds; payer_ispb: in payments'."""
        self._init_server(directory, host, port)
        self._rng = random.Random(seed)
        self.app_id = app_id or "Q2xpZW50X0lkXz" + "".join(self._rng.choice(_ALNUM) for _ in range(40))
        self.pix_key = pix_key or str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        self.company = {"id": "%024x" % self._rng.getrandbits(96), "name": merchant_name,
                        "taxID": "%014d" % self._rng.randrange(10 ** 13, 10 ** 14)}
        self.client_id = str(uuid.UUID(int=self._rng.getrandbits(128), version=4)).upper()
        self.merchant_name, self.merchant_city = merchant_name, merchant_city
        self.ispb, self.payer_ispb = ispb, payer_ispb
        self.auto_notify = auto_notify
        self.notify_events = set(EVENTS)
        self.webhook_url = webhook_url
        self.not_found_status = 404
        self._sender = WooviSender(None, self.directory, retry_factor, receiver_ca)

        self._charges = {}        # correlationID -> charge record
        self._charge_ids = {}     # correlationID, transactionID, globalID -> correlationID
        self._txs = []            # transaction records, oldest first
        self._tx_ids = {}         # transactionID, endToEndId -> record
        self._refunds = {}        # refund correlationID -> refund record
        self._webhooks = {}       # id -> registered webhook
        self.server_cert = self.server_ca = None
        self._keys = []           # [(key file, public key PEM, key_identifier)], the current one last
        self._key_count = 0

    # ---- life cycle ----

    def start(self):
        """Make the certificates and the signing key, listen, serve."""
        ca = certs.make_ca(self.directory, "testwoovi-ca", "Test Woovi CA")
        self.server_cert, self.server_ca = certs.make_server(self.directory, ca, "testwoovi-server"), ca.cert
        self.rotate_key(keep_old=False)
        self._serve_tls(self.server_cert)
        return self

    def rotate_key(self, keep_old=True):
        """A new signing key (RSA 2048), current from now on; the old ones
        stay published, not current, unless keep_old is False."""
        with self._lock:
            self._key_count += 1
            key = make_rsa_key(self.directory, "testwoovi-signing-%d" % self._key_count)
            pem = public_key_pem(key)
            entry = (key, pem, hashlib.sha256(pem.encode()).hexdigest()[:32])
            self._keys = (self._keys if keep_old else []) + [entry]
            self._sender.key = key

    @property
    def public_key_pem(self):
        """The current signing key's public key (PEM text)."""
        return self._keys[-1][1]

    # ---- knobs (down, up, slow, webhook_faults, wait_deliveries, wait_settled:
    #      fakeserver.py's) ----

    sign = knob("_sender", "sign", "good, none, bad or other-key (wooviwebhook.py)")
    retry_factor = knob("_sender", "retry_factor", "the retries' intervals are multiplied by it")
    retry_intervals = knob("_sender", "retry_intervals", "seconds before each retry, before the factor")

    # ---- serving (the request loop and the routing are fakeserver.py's) ----

    def _error(self, status, code, message):
        return {"error": message}

    def _schema_refusal(self, message):
        return Refusal(400, message, "schema")

    def _api(self, h, method, query, raw, template, route, params, endpoint):
        if template not in NO_AUTH:
            got = h.headers.get("Authorization")
            if got is None or not _same(got, self.app_id):
                return self._send(h, 401, UNAUTHORIZED)
        q = {k: v[0] for k, v in urllib.parse.parse_qs(query, keep_blank_values=True).items()}
        try:
            obj = self._read_json(h, raw)
            if template not in NOT_IN_SWAGGER:
                errors = openpix.check_request(method, template, query, obj)
                if errors:
                    raise Refusal(400, "; ".join("%s: %s" % e for e in errors), "schema", errors)
            status, answer = getattr(self, "_op_" + route[2])(params, q, obj)
        except Refusal as r:
            status, answer = r.status, {"error": r.message}
            if r.kind:
                self._violation("request", r.kind, endpoint, h.path, r.status, r.errors, r.message)
        errors = openpix.check_response(method, template, status, answer)
        if errors:
            self._violation("response", "schema", endpoint, h.path, status, errors, "testwoovi's own answer")
            status, answer = 500, {"error": "testwoovi's answer broke the swagger: " + "; ".join(
                "%s: %s" % e for e in errors)}
        return self._send(h, status, answer)

    def _not_found(self, what):
        return Refusal(self.not_found_status, "%s not found" % what)

    # ---- identifiers and views ----

    def _hex(self, n=32):
        return "%0*x" % (n, self._rng.getrandbits(4 * n))

    def _global_id(self, kind):
        return base64.b64encode(("%s:%s" % (kind, self._hex(24))).encode()).decode()

    def _e2e(self, letter, ispb, moment):
        stamp = moment.astimezone(datetime.timezone.utc).strftime("%Y%m%d%H%M")
        return letter + ispb + stamp + "".join(self._rng.choice(_ALNUM) for _ in range(11))

    def br_code(self, value, txid):
        """The charge's BR Code: 26.01 the account's key, 54 the value in
        reais, 62.05 the first 25 characters of txid, CRC-16 in 63."""
        return emv_br_code("%d.%02d" % divmod(value, 100), self.merchant_name, self.merchant_city,
                           key=self.pix_key, reference=txid)

    @staticmethod
    def _customer_view(c):
        if c is None:
            return None
        out = {k: c[k] for k in ("name", "email", "phone", "correlationID") if k in c}
        if "taxID" in c:
            digits = "".join(ch for ch in str(c["taxID"]) if ch.isdigit())
            out["taxID"] = {"taxID": digits, "type": "BR:CPF" if len(digits) == 11 else "BR:CNPJ"}
        return out

    def _charge_view(self, ch):
        out = {"value": ch["value"], "comment": ch["comment"], "identifier": ch["transactionID"],
               "correlationID": ch["correlationID"], "transactionID": ch["transactionID"],
               "status": ch["status"], "additionalInfo": ch["additionalInfo"], "discount": 0,
               "valueWithDiscount": ch["value"], "expiresDate": iso(ch["createdAt"] + datetime.timedelta(
                   seconds=ch["expiresIn"])), "type": "DYNAMIC", "createdAt": iso(ch["createdAt"]),
               "updatedAt": iso(ch["updatedAt"])}
        if ch["customer"] is not None:
            out["customer"] = self._customer_view(ch["customer"])
        if ch["paidAt"] is not None:
            out["paidAt"] = iso(ch["paidAt"])
            out["payer"] = ch["payer"]
        link = ch["paymentLinkID"]
        out.update({"brCode": ch["brCode"], "expiresIn": ch["expiresIn"], "pixKey": self.pix_key,
                    "paymentLinkID": link, "paymentLinkUrl": "https://woovi.test/pay/" + link,
                    "qrCodeImage": "https://api.woovi.test/openpix/charge/brcode/image/%s.png" % link,
                    "globalID": ch["globalID"],
                    "paymentMethods": {"pix": {"method": "PIX_COB", "txId": ch["transactionID"],
                                               "value": ch["value"], "status": ch["status"], "fee": 0,
                                               "brCode": ch["brCode"], "transactionID": ch["transactionID"],
                                               "identifier": ch["transactionID"]}}})
        return out

    def _tx_view(self, tx):
        out = {}
        if tx["charge"] is not None:
            ch = self._charges[tx["charge"]]
            if ch["customer"] is not None:
                out["customer"] = self._customer_view(ch["customer"])
            out["charge"] = self._charge_view(ch)
        out.update({"value": tx["value"], "time": iso(tx["time"]), "endToEndId": tx["endToEndId"],
                    "transactionID": tx["transactionID"]})
        if tx["infoPagador"]:
            out["infoPagador"] = tx["infoPagador"]
        out.update({"type": tx["type"], "createdAt": iso(tx["createdAt"]), "globalID": tx["globalID"]})
        if tx["type"] == "PAYMENT":
            out["payer"] = tx["payer"]
        return out

    @staticmethod
    def _refund_view(rf):
        out = {"value": rf["value"], "status": rf["status"], "correlationID": rf["correlationID"],
               "endToEndId": rf["endToEndId"], "time": iso(rf["time"])}
        if rf["comment"]:
            out["comment"] = rf["comment"]
        return out

    def _find_charge(self, ident):
        corr = self._charge_ids.get(ident)
        if corr is None:
            raise self._not_found("charge")
        return self._charges[corr]

    def charge(self, ident):
        """The charge's view (by correlationID, transactionID or globalID);
        KeyError when there is none."""
        with self._lock:
            try:
                return self._charge_view(self._find_charge(ident))
            except Refusal:
                raise KeyError(ident) from None

    def transaction(self, ident):
        """The transaction's view (by transactionID or endToEndId); KeyError."""
        with self._lock:
            return self._tx_view(self._tx_ids[ident])

    @property
    def transactions(self):
        with self._lock:
            return [self._tx_view(t) for t in self._txs]

    # ---- operations: (params, query, body) -> (status, answer) ----

    def _op_post_charge(self, params, q, body):
        value, corr = body["value"], body["correlationID"]
        if not _cents(value) or value < 1:
            raise _rule("value: cents, a whole number of at least 1", "$.value")
        if not corr:
            raise _rule("correlationID: empty", "$.correlationID")
        expires = body.get("expiresIn", 86400)
        if not _cents(expires) or expires < 300:
            raise _rule("expiresIn: whole seconds, at least 300 (5 minutes)", "$.expiresIn")
        with self._lock:
            if corr in self._charges:
                if q.get("return_existing") != "true":
                    raise _rule("correlationID: a charge with this correlationID already exists",
                                "$.correlationID")
                ch = self._charges[corr]
            else:
                now = _now()
                txid = self._hex()
                ch = {"correlationID": corr, "value": value, "comment": body.get("comment", ""),
                      "transactionID": txid, "globalID": self._global_id("Charge"),
                      "paymentLinkID": str(uuid.UUID(int=self._rng.getrandbits(128), version=4)),
                      "status": "ACTIVE", "createdAt": now, "updatedAt": now, "expiresIn": expires,
                      "paidAt": None, "customer": body.get("customer"),
                      "additionalInfo": body.get("additionalInfo", []), "brCode": self.br_code(value, txid),
                      "refunds": []}
                self._charges[corr] = ch
                for k in (corr, txid, ch["globalID"]):
                    self._charge_ids.setdefault(k, corr)
            return 200, {"charge": self._charge_view(ch), "correlationID": corr, "brCode": ch["brCode"]}

    def _op_get_charge(self, params, q, body):
        with self._lock:
            return 200, {"charge": self._charge_view(self._find_charge(params["id"]))}

    @staticmethod
    def _page(items, q):
        skip = int(q.get("skip", 0))
        limit = min(int(q.get("limit", PAGE)), PAGE)
        page = items[skip:skip + limit]
        return page, {"skip": skip, "limit": limit, "totalCount": len(items),
                      "hasPreviousPage": skip > 0, "hasNextPage": skip + limit < len(items)}

    @staticmethod
    def _window(q):
        start = parse_time(q["start"]) if "start" in q else None
        end = parse_time(q["end"]) if "end" in q else None
        return lambda t: (start is None or t >= start) and (end is None or t <= end)

    def _op_list_charges(self, params, q, body):
        inside = self._window(q)
        with self._lock:
            items = [c for c in reversed(list(self._charges.values()))
                     if inside(c["createdAt"]) and q.get("status", c["status"]) == c["status"]
                     and ("customer" not in q or (c["customer"] or {}).get("correlationID") == q["customer"])
                     and "subscription" not in q]
            page, info = self._page(items, q)
            return 200, {"charges": [self._charge_view(c) for c in page], "pageInfo": info}

    def _op_list_transactions(self, params, q, body):
        inside = self._window(q)
        with self._lock:
            charge = None
            if "charge" in q:
                charge = self._charge_ids.get(q["charge"], "")
            items = [t for t in reversed(self._txs)
                     if inside(t["time"]) and q.get("type", t["type"]) == t["type"]
                     and (charge is None or t["charge"] == charge)
                     and "pixQrCode" not in q and "withdrawal" not in q]
            page, info = self._page(items, q)
            return 200, {"transactions": [self._tx_view(t) for t in page], "pageInfo": info}

    def _op_get_transaction(self, params, q, body):
        with self._lock:
            tx = self._tx_ids.get(params["id"])
            if tx is None:
                raise self._not_found("transaction")
            return 200, {"transaction": self._tx_view(tx)}

    def _create_refund(self, charge_id, corr, value, comment):
        """A refund IN_PROCESSING; the existing one for a known correlationID
        of the same charge. Refusal 400 (rule) when it cannot be."""
        with self._lock:
            ch = self._find_charge(charge_id)
            old = self._refunds.get(corr)
            if old is not None:
                if old["charge"] != ch["correlationID"]:
                    raise _rule("correlationID: already the id of a refund of another charge",
                                "$.correlationID")
                return old
            if ch["status"] != "COMPLETED":
                raise _rule("the charge is not paid (status %s)" % ch["status"])
            paid = sum(t["value"] for t in self._txs if t["type"] == "PAYMENT" and t["charge"] == ch["correlationID"])
            taken = sum(r["value"] for r in ch["refunds"] if r["status"] != "REJECTED")
            left = paid - taken
            if left < 1:
                raise _rule("the charge has nothing left to refund")
            if value is None:
                value = left
            if value < 1 or value > left:
                raise _rule("value: %d is above what remains to refund (%d)" % (value, left), "$.value")
            now = _now()
            rf = {"correlationID": corr, "value": value, "status": "IN_PROCESSING", "comment": comment,
                  "endToEndId": self._e2e("D", self.ispb, now), "time": now, "charge": ch["correlationID"]}
            ch["refunds"].append(rf)
            self._refunds[corr] = rf
            return rf

    def _op_post_refund(self, params, q, body):
        value = body.get("value")
        if value is not None and (not _cents(value) or value < 1):
            raise _rule("value: cents, a whole number of at least 1", "$.value")
        if not body["correlationID"]:
            raise _rule("correlationID: empty", "$.correlationID")
        rf = self._create_refund(params["id"], body["correlationID"], value, body.get("comment", ""))
        with self._lock:
            return 200, {"refund": self._refund_view(rf)}

    def _op_list_refunds(self, params, q, body):
        with self._lock:
            return 200, {"refunds": [self._refund_view(r) for r in self._find_charge(params["id"])["refunds"]]}

    def _op_public_keys(self, params, q, body):
        with self._lock:
            keys = list(self._keys)
        return 200, {"public_keys": [{"key_identifier": ident, "is_current": i == len(keys) - 1, "key": pem}
                                     for i, (_, pem, ident) in enumerate(keys)]}

    def _webhook_view(self, w):
        return dict(w)

    def _op_post_webhook(self, params, q, body):
        w = body.get("webhook")
        if not isinstance(w, dict):
            raise _rule("webhook: required", "$.webhook")
        url = w.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise _rule("webhook.url: an http(s) URL is required", "$.webhook.url")
        now = iso(_now())
        hook = {"id": self._global_id("Webhook"), "name": w.get("name", ""),
                "event": w.get("event", "OPENPIX:TRANSACTION_RECEIVED"), "url": url,
                "authorization": w.get("authorization", ""), "isActive": w.get("isActive", True),
                "createdAt": now, "updatedAt": now}
        with self._lock:
            self._webhooks[hook["id"]] = hook
        return 200, {"webhook": self._webhook_view(hook)}

    def _op_list_webhooks(self, params, q, body):
        with self._lock:
            hooks = [self._webhook_view(w) for w in self._webhooks.values()
                     if "url" not in q or w["url"] == q["url"]]
        return 200, {"webhooks": hooks, "pageInfo": {"skip": 0, "limit": len(hooks), "totalCount": len(hooks),
                                                     "hasPreviousPage": False, "hasNextPage": False}}

    def _op_delete_webhook(self, params, q, body):
        with self._lock:
            if self._webhooks.pop(params["id"], None) is None:
                raise self._not_found("webhook")
        return 200, {"status": "OK"}

    # ---- the money side, driven by the test ----

    def _payer(self):
        return {"name": "PAGADOR DE TESTE", "taxID": {"taxID": "%011d" % self._rng.randrange(10 ** 10, 10 ** 11),
                                                      "type": "BR:CPF"},
                "correlationID": str(uuid.UUID(int=self._rng.getrandbits(128), version=4))}

    def _add_tx(self, kind, value, when, charge, txid, e2e, info):
        moment = parse_time(when) if when is not None else _now()
        tx = {"type": kind, "transactionID": txid or self._hex(),
              "endToEndId": e2e or self._e2e("E", self.payer_ispb, moment), "time": moment,
              "createdAt": _now(), "value": value, "charge": charge, "infoPagador": info,
              "globalID": self._global_id("PixTransaction"), "payer": self._payer()}
        self._txs.append(tx)
        self._tx_ids[tx["transactionID"]] = tx
        self._tx_ids[tx["endToEndId"]] = tx
        return tx

    def pay(self, correlation_id, value=None, when=None, info=None):
        """Settle the charge (any of its ids): a PAYMENT of `value` cents
        (default the charge's) at `when` (default now), the charge COMPLETED.
        ValueError when it is not ACTIVE. Notifies when auto_notify."""
        with self._lock:
            ch = self._charges.get(self._charge_ids.get(correlation_id))
            if ch is None:
                raise KeyError(correlation_id)
            if ch["status"] != "ACTIVE":
                raise ValueError("the charge is %s" % ch["status"])
            tx = self._add_tx("PAYMENT", ch["value"] if value is None else value, when, ch["correlationID"],
                              ch["transactionID"], None, info)
            ch["status"], ch["paidAt"], ch["updatedAt"] = "COMPLETED", tx["time"], _now()
            ch["payer"] = tx["payer"]
            view = self._tx_view(tx)
            out = [self._auto(e, transaction=tx["transactionID"])
                   for e in ("OPENPIX:CHARGE_COMPLETED", "OPENPIX:TRANSACTION_RECEIVED")]
        self._send_auto(out)
        return view

    def pay_static(self, value, when=None, info=None):
        """A Pix of `value` cents to the account's key with no charge."""
        with self._lock:
            tx = self._add_tx("PAYMENT", value, when, None, None, None, info)
            view = self._tx_view(tx)
            out = [self._auto("OPENPIX:TRANSACTION_RECEIVED", transaction=tx["transactionID"])]
        self._send_auto(out)
        return view

    def refund(self, charge_id, value=None, correlation_id=None, comment=""):
        """A refund of the charge made elsewhere than the API (Woovi's
        dashboard), IN_PROCESSING. Refusal as the API's."""
        rf = self._create_refund(charge_id, correlation_id or self._hex(), value, comment)
        with self._lock:
            return self._refund_view(rf)

    def confirm_refund(self, correlation_id, status="CONFIRMED", when=None):
        """The refund IN_PROCESSING -> CONFIRMED (the money goes back: a
        REFUND transaction with the refund's endToEndId) or REJECTED."""
        if status not in ("CONFIRMED", "REJECTED"):
            raise ValueError("status is CONFIRMED or REJECTED")
        with self._lock:
            rf = self._refunds[correlation_id]
            if rf["status"] != "IN_PROCESSING":
                raise ValueError("the refund is %s" % rf["status"])
            rf["status"] = status
            if status == "CONFIRMED":
                tx = self._add_tx("REFUND", rf["value"], when or rf["time"], rf["charge"], None,
                                  rf["endToEndId"], None)
                rf["transaction"] = tx["transactionID"]
            view = self._refund_view(rf)
            out = [self._auto("OPENPIX:TRANSACTION_REFUND_RECEIVED", refund=correlation_id)] \
                if status == "CONFIRMED" else []
        self._send_auto(out)
        return view

    def expire(self, correlation_id):
        """The charge ACTIVE -> EXPIRED (it no longer takes pay())."""
        with self._lock:
            ch = self._charges[self._charge_ids[correlation_id]]
            if ch["status"] != "ACTIVE":
                raise ValueError("the charge is %s" % ch["status"])
            ch["status"], ch["updatedAt"] = "EXPIRED", _now()
            view = self._charge_view(ch)
            out = [self._auto("OPENPIX:CHARGE_EXPIRED", charge=correlation_id)]
        self._send_auto(out)
        return view

    # ---- notifications ----

    def notification_body(self, event, charge=None, transaction=None, refund=None):
        """The body of a notification as docs/webhook/examples shape it:
        CHARGE_COMPLETED (charge=, its payment), TRANSACTION_RECEIVED
        (transaction=), TRANSACTION_REFUND_RECEIVED (refund= correlationID),
        CHARGE_EXPIRED (charge=)."""
        with self._lock:
            account = {"clientId": self.client_id}
            if event == "OPENPIX:CHARGE_COMPLETED":
                ch = self._find_charge(charge) if charge else self._charges[self._tx_ids[transaction]["charge"]]
                tx = self._tx_ids[transaction] if transaction else next(
                    t for t in self._txs if t["type"] == "PAYMENT" and t["charge"] == ch["correlationID"])
                return {"event": event, "charge": self._charge_view(ch), "pix": self._tx_view(tx),
                        "company": self.company, "account": {}}
            if event == "OPENPIX:TRANSACTION_RECEIVED":
                tx = self._tx_ids[transaction]
                cv = self._charge_view(self._charges[tx["charge"]]) if tx["charge"] else None
                return {"event": event, "charge": cv, "pixQrCode": None, "pix": self._tx_view(tx),
                        "company": self.company, "account": account, "refunds": []}
            if event == "OPENPIX:TRANSACTION_REFUND_RECEIVED":
                rf = self._refunds[refund]
                ch = self._charges[rf["charge"]]
                cv = self._charge_view(ch)
                tx = self._tx_ids.get(rf.get("transaction"))
                paid = sum(t["value"] for t in self._txs if t["type"] == "PAYMENT" and t["charge"] == rf["charge"])
                pix = {"customer": cv.get("customer"), "charge": cv, "value": rf["value"],
                       "time": iso(tx["time"] if tx else rf["time"]), "endToEndId": rf["endToEndId"],
                       "createdAt": iso(tx["createdAt"] if tx else rf["time"]), "pixKey": self.pix_key,
                       "partial": rf["value"] < paid,
                       "globalID": tx["globalID"] if tx else self._global_id("PixTransaction")}
                return {"event": event, "charge": cv, "pixQrCode": None, "pix": pix, "company": self.company,
                        "account": account, "refunds": []}
            if event == "OPENPIX:CHARGE_EXPIRED":
                return {"event": event, "charge": self._charge_view(self._find_charge(charge)),
                        "company": self.company}
        raise ValueError("unknown event %r" % event)

    def _targets(self, event, url):
        """[(url, Authorization header or None)]."""
        if url is not None:
            return [(url, None)]
        with self._lock:
            out = [(self.webhook_url, None)] if self.webhook_url else []
            out += [(w["url"], w["authorization"] or None) for w in self._webhooks.values()
                    if w["isActive"] and w["event"] == event]
        return out

    @staticmethod
    def _encode(body):
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()

    def _auto(self, event, **subject):
        """(event, body bytes, targets) of an automatic notification, made
        now (under the lock, so the body shows the state of the moment);
        None when auto_notify is off or the event is not notified."""
        if not self.auto_notify or event not in self.notify_events:
            return None
        return event, self._encode(self.notification_body(event, **subject)), self._targets(event, None)

    def _send_auto(self, notes):
        for note in notes:
            if note is not None:
                self._sender.send(note[0], note[2], note[1], wait=False)

    def notify(self, event, charge=None, transaction=None, refund=None, url=None, wait=True):
        """POST the event's notification to `url`, else to wv.webhook_url
        and the registered webhooks of the event; retried as Woovi does.
        wait: return once each first call is over. Returns the first calls'
        Delivery records."""
        body = self._encode(self.notification_body(event, charge, transaction, refund))
        return self._sender.send(event, self._targets(event, url), body, wait)

    def send_raw(self, body, event="custom", url=None, wait=True):
        """POST `body` (bytes, as is) as a notification of `event` (the
        registered webhooks of that event get it too), signed per wv.sign."""
        return self._sender.send(event, self._targets(event, url), body, wait)

