"""Asaas as the tests play it: customers, Pix payments, refunds and webhooks.

Not a stub that says yes: it serves HTTPS on 127.0.0.1 with a certificate
from a CA the test makes (certs.py); every call must carry `access_token:
<key>` and a `User-Agent`; every request's query and body is checked
against Asaas's documented shapes (asaasapi.py: no licensed OpenAPI of
Asaas's was found to vendor, so the shapes are Python checks citing their
sources) and one that fails is answered 400 {"errors": [{"code",
"description"}]} and recorded in asa.violations; so is every payment
object it answers or notifies (a fault of its own is a 500 and a
violation, so no test passes on it). It keeps customers, payments, their
Pix and refunds, and POSTs Asaas's notifications with the webhook's
authToken, a queue per webhook that Asaas interrupts after 15 consecutive
failures.

    asa = TestAsaas().start()            (or: with TestAsaas() as asa:)
    asa.url                 https://127.0.0.1:PORT/v3 (Asaas's base ends in /v3)
    asa.server_ca           the CA file a client trusts for asa.url's certificate
    asa.api_key             "$aact_hmlg_..." (random; a sandbox key, AS-AUTH)
    asa.user_agent_required = True       (False: as accounts made before 2024-06-13)

  API (under asa.url; ids: cus_..., pay_...):
    POST /customers  GET /customers?cpfCnpj&externalReference&name&email&offset&limit
    GET /customers/{id}
    POST /payments   GET /payments?externalReference&billingType&status&customer
                     &paymentDate[ge]&paymentDate[le]&dateCreated[ge]&dateCreated[le]&offset&limit
    GET, DELETE /payments/{id}    GET /payments/{id}/pixQrCode
    POST /payments/{id}/refund {value?, description?}   (answers the payment)
    POST, GET /webhooks   GET, PUT, DELETE /webhooks/{id}
  Lists are {"object": "list", "hasMore", "totalCount", "limit", "offset",
  "data"}, newest first, limit 10 by default and at most 100. An unknown id
  is 404 {"errors": [{"code": "not_found", ...}]}, not a violation.

  (The queues, the token, the retries and the interruption are
  asaaswebhook.py's.)

  The money side, as the tests drive it (each returns the payment's view,
  values as Decimal; KeyError for a payment it does not hold or that was
  deleted, ValueError for a change its status does not allow):
    asa.pay(external_reference or payment id, value=None, when=None)
                            PENDING or OVERDUE -> RECEIVED: paymentDate,
                            clientPaymentDate, confirmedDate (Brasilia date
                            of `when`, default now), pixTransaction;
                            value in cents (default the payment's; another
                            one keeps the charged one in originalValue)
    asa.overdue(id)         PENDING -> OVERDUE (still payable: AS-PIX)
    asa.refund(id, value=None, description=None, in_progress=False)
                            a refund made elsewhere (Asaas's dashboard), as
                            POST /payments/{id}/refund does (asa.refund_in_progress
                            makes the API's refunds wait too); in_progress:
                            REFUND_IN_PROGRESS until asa.finish_refund(id)
    asa.delete(id)          deleted (PAYMENT_DELETED); GET still shows it
    asa.payment(id), asa.payments (all, oldest first), asa.customer(id)

  Notifications (AS-WH's shape), to each webhook whose events hold the
  event: the one "made in the web application" (asa.webhook_url, its token
  asa.auth_token, every payment event) and those made with POST /webhooks:
    asa.webhook_url = "https://host:port/path" | "http://..." |
                      "unix:/path/door.sock:/v1/webhooks/..." (nginx's form)
    asa.receiver_ca         the CA file trusted for an https receiver
    asa.auth_token          asaas-access-token's value (None: no header)
    asa.token = "good" | "none" | "bad"     good: the webhook's authToken;
                            none: no header; bad: another token
    asa.auto_notify = True  create: PAYMENT_CREATED, pay(): PAYMENT_RECEIVED,
                            overdue(): PAYMENT_OVERDUE, refund():
                            PAYMENT_REFUNDED | PAYMENT_PARTIALLY_REFUNDED |
                            PAYMENT_REFUND_IN_PROGRESS, delete():
                            PAYMENT_DELETED (asa.notify_events: which)
    events = asa.notify(event, payment_id, wait=True)
    asa.webhook_faults(drop=0.2, twice=0.1, seed=7)   per event: never sent;
                            delivered a second time after its first 200
    asa.retry_seconds = 30.0  the wait before a failed event is tried again
    asa.deliveries          every call (asaaswebhook.Delivery: webhook, event, event_id,
                            url, body, token, attempt, copy, status, answer,
                            error, dropped)
    asa.wait_deliveries(n), asa.wait_settled()
    asa.interrupted(webhook_id=None), asa.resume(webhook_id=None)

  Failure knobs and what happened:
    asa.down(seconds=None, mode="refuse" | "503" | "close"), asa.up(), asa.slow(seconds)
    asa.calls["POST /v3/payments"], asa.log, asa.violations, asa.take_violations()

Behaviours and their sources (asaasapi.py's short names):
  - base URL .../v3; headers access_token and User-Agent on every call;
    "$aact_prod_" and "$aact_hmlg_" keys; the 401 bodies of a missing
    header (access_token_not_found), a key of another environment
    (invalid_environment), a malformed key (invalid_access_token_format),
    a wrong key (invalid_access_token), each {"errors": [{"code",
    "description"}]}: AS-AUTH "Erros de autenticação". The User-Agent is
    mandatory for root accounts made from 2024-06-13 (AS-AUTH); the body
    Asaas answers without it is not in the sources: this server answers
    401 {"errors": [{"code": "user_agent_not_found", ...}]}, its own code;
  - customers, payments, lists, filters, refunds, pixQrCode: AS-GO
    charge.go, customer.go, refund.go, pageable.go; AS-PIX (the copy-and-
    paste code only from GET /payments/{id}/pixQrCode; a Pix charge stays
    payable 12 months past its dueDate, so OVERDUE is still payable);
  - the payment object and the notification {"id": "evt_...", "event",
    "dateCreated": "yyyy-MM-dd HH:mm:ss", "payment": {...}}: AS-WH
    receba-eventos-do-asaas-no-seu-endpoint-de-webhook and the example of
    webhook-para-cobrancas; a Pix payment's pixTransaction (a UUID) and
    pixQrCodeId as sandbox notifications quoted in public integrations
    show them; a Pix charge's events: PAYMENT_CREATED then
    PAYMENT_RECEIVED (AS-WH fluxos-de-webhook);
  - asaas-access-token: the authToken (AS-WH criar-novo-webhook-pela-
    aplicacao-web); only HTTP 200 counts as delivered, any other status is
    a failure, the same event is tried again, and after 15 consecutive
    failures the queue is interrupted: events are kept and sent in order
    once it is reactivated (PUT /webhooks/{id} {"interrupted": false} or
    asa.resume()) (AS-WH fila-pausada, como-reativar-fila-interrompida);
    "the same event may be delivered more than once" (AS-WH faq-de-
    webhooks); Asaas waits 10 s for an answer and syncs every 30 s (AS-WH
    erro-read-timed-out);
  - the BR Code of pixQrCode's payload: testbank.br_code_dynamic (26.25 a
    location of this server's, 54 the value, 62.05 "***", CRC-16); its
    expirationDate 12 months past the dueDate, 23:59:59.

Money: a payment's value is integer cents inside; the JSON writes it as
Asaas does, a number in reais with no trailing zeros (1050 -> 10.5, 1000
-> 10, 1 -> 0.01), never through a float; requests are read with Decimals
(asaasapi.decimal_json) and a value must be a JSON number with at most two
decimal places: pixrelay, which keeps cents, writes "10.5" from 1050 as
text, never from a double.

Choices of this server where the sources say nothing: lists are newest
first, 10 a page unless ?limit says; an unknown id is 404 (AS-GO reads a
404 as "no content"; the body {"errors": [{"code": "not_found", ...}]} is
this server's); a refund of a payment not received is 400 invalid_action,
one larger than what remains 400 invalid_value (both recorded as "rule"
violations); a partial refund leaves the status RECEIVED; netValue equals
value (no fee); both sendTypes deliver in order, one event at a time; the
default webhook lists as "Web application"; a webhook's view says
hasAuthToken rather than echoing the token; encodedImage is a 1x1 PNG.
"""
import base64
import datetime
import json
import random
import re
import string
import struct
import time
import urllib.parse
import uuid
import zlib

import asaasapi
import certs
from asaaswebhook import AsaasWebhooks
from fakeserver import RoutedServer, knob, parse_time
from fakeserver import utc_now as _now
from fakeserver import same as _same
from testbank import BRASILIA, br_code_dynamic

PAGE, MAX_PAGE = 10, 100
_ALNUM = string.ascii_letters + string.digits

AUTH_ERRORS = {
    "access_token_not_found": "O cabeçalho de autenticação 'access_token' é obrigatório e não foi encontrado "
                              "na requisição",
    "invalid_environment": "A chave de API informada não pertence a este ambiente",
    "invalid_access_token_format": "O valor fornecido não parece ser uma chave de API válida do Asaas. "
                                   "Verifique o formato da sua chave",
    "invalid_access_token": "A chave de API fornecida é inválida",
    "user_agent_not_found": "O cabeçalho 'User-Agent' é obrigatório e não foi encontrado na requisição",
}

# (method, template, handler name (_op_<name>), body check, query check)
ROUTES = [
    ("POST", "/v3/customers", "post_customer", asaasapi.check_customer, None),
    ("GET", "/v3/customers", "list_customers", None, asaasapi.check_customer_query),
    ("GET", "/v3/customers/{id}", "get_customer", None, None),
    ("POST", "/v3/payments", "post_payment", asaasapi.check_payment, None),
    ("GET", "/v3/payments", "list_payments", None, asaasapi.check_payment_query),
    ("GET", "/v3/payments/{id}", "get_payment", None, None),
    ("DELETE", "/v3/payments/{id}", "delete_payment", None, None),
    ("GET", "/v3/payments/{id}/pixQrCode", "pix_qr_code", None, None),
    ("POST", "/v3/payments/{id}/refund", "post_refund", asaasapi.check_refund, None),
    ("POST", "/v3/webhooks", "post_webhook", asaasapi.check_webhook, None),
    ("GET", "/v3/webhooks", "list_webhooks", None, asaasapi.check_list_query),
    ("GET", "/v3/webhooks/{id}", "get_webhook", None, None),
    ("PUT", "/v3/webhooks/{id}", "put_webhook", lambda b: asaasapi.check_webhook(b, create=False), None),
    ("DELETE", "/v3/webhooks/{id}", "delete_webhook", None, None),
]


def _aware(when):
    return _now() if when is None else parse_time(when)


def brasilia_date(moment):
    """yyyy-MM-dd of the moment in Brasilia (Asaas's dates are local)."""
    return moment.astimezone(BRASILIA).strftime("%Y-%m-%d")


def brasilia_datetime(moment):
    """yyyy-MM-dd HH:mm:ss in Brasilia, as an event's dateCreated."""
    return moment.astimezone(BRASILIA).strftime("%Y-%m-%d %H:%M:%S")


class Reais:
    """A value in cents that the JSON writes as Asaas does: a number in
    reais without trailing zeros (1050 -> 10.5, 1000 -> 10)."""
    __slots__ = ("cents",)

    def __init__(self, cents):
        self.cents = cents

    def text(self):
        whole, frac = divmod(abs(self.cents), 100)
        sign = "-" if self.cents < 0 else ""
        if frac == 0:
            return "%s%d" % (sign, whole)
        return ("%s%d.%02d" % (sign, whole, frac)).rstrip("0")


_MARK = "\u0001reais:"
_MARK_RE = re.compile(r'"\\u0001reais:(-?[0-9]+)"')


def encode(obj):
    """JSON bytes with every Reais written as a number in reais."""
    def default(o):
        if isinstance(o, Reais):
            return _MARK + str(o.cents)
        raise TypeError(repr(o))

    def pre(o):
        if isinstance(o, Reais):
            return _MARK + str(o.cents)
        if isinstance(o, dict):
            return {k: pre(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [pre(v) for v in o]
        return o
    text = json.dumps(pre(obj), ensure_ascii=False, separators=(",", ":"), default=default)
    return _MARK_RE.sub(lambda m: Reais(int(m.group(1))).text(), text).encode()


def _png_1x1():
    """A valid 1x1 white PNG (encodedImage: this server draws no QR image;
    pixrelay reads the payload)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff")) + chunk(b"IEND", b""))


ENCODED_IMAGE = base64.b64encode(_png_1x1()).decode()


class Refusal(Exception):
    """An API refusal: status and {"errors": [{"code", "description"}]};
    kind "schema" or "rule" for a 400 (recorded as a violation), None
    otherwise."""

    def __init__(self, status, code, description, kind=None, errors=None):
        super().__init__(description)
        self.status, self.code, self.description, self.kind = status, code, description, kind
        self.errors = errors or [("$", description)]

    def body(self):
        return {"errors": [{"code": self.code, "description": self.description}]}


def _rule(description, code="invalid_action", where="$"):
    return Refusal(400, code, description, "rule", [(where, description)])


class TestAsaas(RoutedServer):
    name = "testasaas"
    server_version = "pixrelay-testasaas"
    prefix = "/v3"
    ROUTES = ROUTES
    too_large_code = "invalid_request"

    def __init__(self, directory=None, api_key=None, seed=None, auto_notify=True, webhook_url=None,
                 auth_token=None, receiver_ca=None, retry_seconds=30.0, merchant_name="LOJA ASAAS TESTE",
                 merchant_city="JOINVILLE", host="127.0.0.1", port=0):
        """Not yet listening (start() does). The certificates are made in
        `directory` (a temporary one, removed by close(), when None)."""
        self._init_server(directory, host, port)
        self._rng = random.Random(seed)
        self.api_key = api_key or "$aact_hmlg_000" + base64.b64encode(
            bytes(self._rng.getrandbits(8) for _ in range(90))).decode()
        self.user_agent_required = True
        self.merchant_name, self.merchant_city = merchant_name, merchant_city
        self.auto_notify = auto_notify
        self.notify_events = set(asaasapi.PAYMENT_EVENTS)
        self.refund_in_progress = False
        self._hooks = AsaasWebhooks(retry_seconds, receiver_ca, seed)
        self._customers = {}      # id -> record
        self._payments = {}       # id -> record (insertion order = creation order)
        self._events = 0
        self.server_cert = self.server_ca = None
        self._default = self._hooks.add({
            "name": "Web application", "url": webhook_url, "email": "loja@example.com", "enabled": True,
            "interrupted": False, "authToken": auth_token, "sendType": "SEQUENTIALLY",
            "events": list(asaasapi.PAYMENT_EVENTS)})

    # ---- life cycle ----

    def start(self):
        """Make the certificates, listen, serve."""
        ca = certs.make_ca(self.directory, "testasaas-ca", "Test Asaas CA")
        self.server_cert, self.server_ca = certs.make_server(self.directory, ca, "testasaas-server"), ca.cert
        self._serve_tls(self.server_cert)
        return self

    # ---- knobs (down, up, slow, wait_deliveries, wait_settled: fakeserver.py's) ----

    @property
    def webhook_url(self):
        return self._default["url"]

    @webhook_url.setter
    def webhook_url(self, url):
        self._hooks.update(self._default, {"url": url})

    @property
    def auth_token(self):
        return self._default["authToken"]

    @auth_token.setter
    def auth_token(self, token):
        self._hooks.update(self._default, {"authToken": token})

    def webhook_faults(self, drop=0.0, twice=0.0, seed=0):
        """Per event and webhook from now on (asaaswebhook.py): never sent
        with probability `drop`; else delivered once more after its first
        200 with probability `twice`."""
        self._hooks.faults(drop, twice, seed)

    token = knob("_hooks", "token", "good, none or bad (asaaswebhook.py)")
    retry_seconds = knob("_hooks", "retry_seconds", "the wait before a failed event is tried again")

    @property
    def _sender(self):
        """The notification sender fakeserver.py's knobs and close() use:
        the webhooks' queues."""
        return self._hooks

    # ---- serving (the request loop and the routing are fakeserver.py's) ----

    def _error(self, status, code, message):
        return {"errors": [{"code": code, "description": message}]}

    def _schema_refusal(self, message):
        return Refusal(400, "invalid_request", message, "schema")

    def _bug_message(self, e):
        return repr(e)

    def _encode(self, body):
        return encode(body)

    def _authenticate(self, h):
        """The code of AUTH_ERRORS that refuses the call, or None."""
        key = h.headers.get("access_token")
        if key is None or key == "":
            return "access_token_not_found"
        if not re.match(r"\$aact_(prod|hmlg)_[A-Za-z0-9+/=_:-]+\Z", key):
            return "invalid_access_token_format"
        if key.startswith("$aact_prod_") != self.api_key.startswith("$aact_prod_"):
            return "invalid_environment"
        if not _same(key, self.api_key):
            return "invalid_access_token"
        if self.user_agent_required and not (h.headers.get("User-Agent") or "").strip():
            return "user_agent_not_found"
        return None

    def _api(self, h, method, query, raw, template, route, params, endpoint):
        refused = self._authenticate(h)
        if refused:
            return self._send(h, 401, self._error(401, refused, AUTH_ERRORS[refused]))
        _, _, name, check_body, check_query = route
        try:
            q = {}
            for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True):
                if k in q:
                    raise Refusal(400, "invalid_" + k, "%s: given twice" % k, "schema", [("?" + k, "given twice")])
                q[k] = v
            obj = self._read_json(h, raw, asaasapi.decimal_json)
            errors = []
            if check_query is not None:
                errors += check_query(q)
            elif q:
                errors += [("?" + k, "not a parameter of this call") for k in q]
            if check_body is not None:
                if obj is None and name != "post_refund":
                    errors.append(("$", "a JSON body is required"))
                else:
                    errors += check_body(obj)
            elif obj is not None:
                errors.append(("$", "this call takes no body"))
            if errors:
                where = errors[0][0]
                field = re.sub(r"^[$?]\.?|\[.*$", "", where) or "request"
                raise Refusal(400, "invalid_" + field, "; ".join("%s: %s" % e for e in errors), "schema", errors)
            status, answer = getattr(self, "_op_" + name)(params, q, obj)
        except Refusal as r:
            status, answer = r.status, r.body()
            if r.kind:
                self._violation("request", r.kind, endpoint, h.path, r.status, r.errors, r.description)
        data = encode(answer)
        errors = self._check_answer(answer, data)
        if errors:
            self._violation("response", "schema", endpoint, h.path, status, errors, "testasaas's own answer")
            status, data = 500, encode(self._error(500, "internal_error", "; ".join("%s: %s" % e for e in errors)))
        return self._send(h, status, data)

    @staticmethod
    def _check_answer(answer, data):
        """The payment objects of an answer, as the client reads them."""
        obj = asaasapi.decimal_json(data)
        views = []
        if isinstance(obj, dict) and obj.get("object") == "payment":
            views = [obj]
        elif isinstance(obj, dict) and obj.get("object") == "list":
            views = [v for v in obj["data"] if v.get("object") == "payment"]
        errors = []
        for i, v in enumerate(views):
            errors += [("data[%d]%s" % (i, p[1:]), r) for p, r in asaasapi.check_payment_view(v)]
        return errors

    @staticmethod
    def _not_found(what):
        return Refusal(404, "not_found", "%s not found" % what)

    # ---- identifiers and views ----

    def _id(self, prefix, n=16):
        alphabet = string.ascii_lowercase + string.digits
        return prefix + "".join(self._rng.choice(alphabet) for _ in range(n))

    @staticmethod
    def _page(items, q):
        offset = int(q.get("offset", 0))
        limit = int(q.get("limit", PAGE))
        page = items[offset:offset + limit]
        return {"object": "list", "hasMore": offset + limit < len(items), "totalCount": len(items),
                "limit": limit, "offset": offset, "data": page}

    @staticmethod
    def _customer_view(c):
        return dict(c)

    def _payment_view(self, p):
        """The payment object (AS-WH's example, AS-GO ChargeResponse)."""
        code = p["id"][len("pay_"):]
        out = {"object": "payment", "id": p["id"], "dateCreated": brasilia_date(p["created"]),
               "customer": p["customer"], "checkoutSession": None, "paymentLink": None,
               "value": Reais(p["value"]), "netValue": Reais(p["value"]),
               "originalValue": Reais(p["original"]) if p["original"] is not None else None,
               "interestValue": None, "description": p["description"], "billingType": p["billingType"],
               "confirmedDate": p["paymentDate"], "pixTransaction": p["pixTransaction"],
               "pixQrCodeId": p["pixQrCodeId"], "status": p["status"], "dueDate": p["dueDate"],
               "originalDueDate": p["dueDate"], "paymentDate": p["paymentDate"],
               "clientPaymentDate": p["paymentDate"], "installmentNumber": None,
               "invoiceUrl": "https://sandbox.asaas.test/i/" + code, "invoiceNumber": p["invoiceNumber"],
               "externalReference": p["externalReference"], "deleted": p["deleted"], "anticipated": False,
               "anticipable": False, "creditDate": p["paymentDate"], "estimatedCreditDate": p["paymentDate"],
               "transactionReceiptUrl": ("https://sandbox.asaas.test/comprovantes/" + code)
               if p["paymentDate"] else None,
               "nossoNumero": None, "bankSlipUrl": None, "lastInvoiceViewedDate": None,
               "lastBankSlipViewedDate": None,
               "discount": {"value": Reais(0), "limitDate": None, "dueDateLimitDays": 0, "type": "FIXED"},
               "fine": {"value": Reais(0), "type": "FIXED"}, "interest": {"value": Reais(0), "type": "PERCENTAGE"},
               "postalService": False, "custody": None, "escrow": None,
               "refunds": [self._refund_view(r) for r in p["refunds"]] or None}
        return out

    @staticmethod
    def _refund_view(r):
        """AS-GO refund.go RefundResponse."""
        return {"dateCreated": brasilia_datetime(r["created"]), "status": r["status"], "value": Reais(r["value"]),
                "description": r["description"], "transactionReceiptUrl": None}

    def _held(self, ident):
        """The payment the money side acts on (by id or externalReference,
        not deleted); KeyError when there is none."""
        try:
            return self._find_payment(ident, deleted_ok=False)
        except Refusal:
            raise KeyError(ident) from None

    def _find_payment(self, ident, deleted_ok=True):
        """By id (pay_...) or externalReference (the newest not deleted)."""
        p = self._payments.get(ident)
        if p is None:
            for q in reversed(list(self._payments.values())):
                if q["externalReference"] == ident and not q["deleted"]:
                    p = q
                    break
        if p is None or (p["deleted"] and not deleted_ok):
            raise self._not_found("payment")
        return p

    def payment(self, ident):
        """The payment's view (by id or externalReference), values as
        Decimal; KeyError when there is none."""
        with self._lock:
            try:
                return asaasapi.decimal_json(encode(self._payment_view(self._find_payment(ident))))
            except Refusal:
                raise KeyError(ident) from None

    @property
    def payments(self):
        with self._lock:
            return [asaasapi.decimal_json(encode(self._payment_view(p))) for p in self._payments.values()]

    def customer(self, ident):
        with self._lock:
            return dict(self._customers[ident])

    # ---- operations: (params, query, body) -> (status, answer) ----

    def _op_post_customer(self, params, q, body):
        with self._lock:
            cid = "cus_" + "%012d" % self._rng.randrange(10 ** 11, 10 ** 12)
            digits = re.sub(r"[.\-/]", "", body["cpfCnpj"])
            c = {"object": "customer", "id": cid, "dateCreated": brasilia_date(_now()), "name": body["name"],
                 "email": body.get("email"), "phone": body.get("phone"), "mobilePhone": body.get("mobilePhone"),
                 "address": body.get("address"), "addressNumber": body.get("addressNumber"),
                 "complement": body.get("complement"), "province": body.get("province"),
                 "postalCode": body.get("postalCode"), "cpfCnpj": digits,
                 "personType": "FISICA" if len(digits) == 11 else "JURIDICA", "deleted": False,
                 "additionalEmails": body.get("additionalEmails"),
                 "externalReference": body.get("externalReference"),
                 "notificationDisabled": body.get("notificationDisabled", False),
                 "observations": body.get("observations"), "foreignCustomer": False}
            self._customers[cid] = c
            return 200, self._customer_view(c)

    def _op_list_customers(self, params, q, body):
        with self._lock:
            cpf = re.sub(r"[.\-/]", "", q["cpfCnpj"]) if "cpfCnpj" in q else None
            items = [self._customer_view(c) for c in reversed(list(self._customers.values()))
                     if (cpf is None or c["cpfCnpj"] == cpf)
                     and ("externalReference" not in q or c["externalReference"] == q["externalReference"])
                     and ("email" not in q or c["email"] == q["email"])
                     and ("name" not in q or q["name"].lower() in c["name"].lower())
                     and "groupName" not in q]
            return 200, self._page(items, q)

    def _op_get_customer(self, params, q, body):
        with self._lock:
            c = self._customers.get(params["id"])
            if c is None:
                raise self._not_found("customer")
            return 200, self._customer_view(c)

    def _create_payment(self, body):
        value = asaasapi.cents_of(body["value"])
        with self._lock:
            if body["customer"] not in self._customers:
                raise _rule("customer: no customer %s in this account" % body["customer"], "invalid_customer",
                            "$.customer")
            if body.get("billingType", "UNDEFINED") != "PIX":
                raise _rule("billingType: this server plays Pix charges only (absent is UNDEFINED)",
                            "invalid_billingType",
                            "$.billingType")
            now = _now()
            pid = self._id("pay_")
            p = {"id": pid, "customer": body["customer"], "billingType": "PIX", "value": value, "original": None,
                 "dueDate": body["dueDate"], "description": body.get("description"),
                 "externalReference": body.get("externalReference"), "status": "PENDING", "created": now,
                 "paymentDate": None, "paid_at": None, "pixTransaction": None,
                 "pixQrCodeId": "".join(self._rng.choice(string.ascii_uppercase + string.digits)
                                        for _ in range(22)) + "ASA",
                 "location": "pix.asaas.test/qr/cobv/" + str(uuid.UUID(int=self._rng.getrandbits(128), version=4)),
                 "invoiceNumber": "%08d" % (len(self._payments) + 1), "deleted": False, "refunds": []}
            self._payments[pid] = p
            out = [self._event("PAYMENT_CREATED", p)]
        self._queue(out)
        return p

    def _op_post_payment(self, params, q, body):
        p = self._create_payment(body)
        with self._lock:
            return 200, self._payment_view(p)

    def _op_list_payments(self, params, q, body):
        def inside(day, lo, hi):
            return day is not None and (lo is None or day >= lo) and (hi is None or day <= hi)
        with self._lock:
            items = []
            for p in reversed(list(self._payments.values())):
                if p["deleted"]:
                    continue
                if any(k in q and q[k] != p[f] for k, f in (("externalReference", "externalReference"),
                                                             ("billingType", "billingType"), ("status", "status"),
                                                             ("customer", "customer"),
                                                             ("pixQrCodeId", "pixQrCodeId"))):
                    continue
                if ("paymentDate[ge]" in q or "paymentDate[le]" in q or "paymentDate" in q) and not inside(
                        p["paymentDate"], q.get("paymentDate[ge]", q.get("paymentDate")),
                        q.get("paymentDate[le]", q.get("paymentDate"))):
                    continue
                if ("dateCreated[ge]" in q or "dateCreated[le]" in q) and not inside(
                        brasilia_date(p["created"]), q.get("dateCreated[ge]"), q.get("dateCreated[le]")):
                    continue
                if ("dueDate[ge]" in q or "dueDate[le]" in q) and not inside(
                        p["dueDate"], q.get("dueDate[ge]"), q.get("dueDate[le]")):
                    continue
                items.append(self._payment_view(p))
            return 200, self._page(items, q)

    def _op_get_payment(self, params, q, body):
        with self._lock:
            p = self._payments.get(params["id"])
            if p is None:
                raise self._not_found("payment")
            return 200, self._payment_view(p)

    def _op_delete_payment(self, params, q, body):
        self.delete(self._find_id(params["id"]))
        return 200, {"deleted": True, "id": params["id"]}

    def _find_id(self, ident):
        with self._lock:
            p = self._payments.get(ident)
            if p is None or p["deleted"]:
                raise self._not_found("payment")
            return p["id"]

    def _op_pix_qr_code(self, params, q, body):
        with self._lock:
            p = self._payments.get(params["id"])
            if p is None or p["deleted"]:
                raise self._not_found("payment")
            return 200, self.pix_qr_code(p["id"])

    def pix_qr_code(self, payment_id):
        """{encodedImage, payload, expirationDate} of the payment (AS-PIX):
        the payload a dynamic BR Code with the value in 54; it expires 12
        months after the dueDate."""
        with self._lock:
            p = self._payments[payment_id]
            due = datetime.date.fromisoformat(p["dueDate"])
            try:
                exp = due.replace(year=due.year + 1)
            except ValueError:   # 29 February
                exp = due.replace(year=due.year + 1, day=28)
            valor = "%d.%02d" % divmod(p["original"] if p["original"] is not None else p["value"], 100)
            return {"encodedImage": ENCODED_IMAGE,
                    "payload": br_code_dynamic(p["location"], valor, self.merchant_name, self.merchant_city),
                    "expirationDate": exp.isoformat() + " 23:59:59"}

    def _op_post_refund(self, params, q, body):
        body = body or {}
        value = asaasapi.cents_of(body["value"]) if "value" in body else None
        self._refund(self._find_id(params["id"]), value, body.get("description"), self.refund_in_progress)
        with self._lock:
            return 200, self._payment_view(self._payments[params["id"]])

    # ---- webhooks ----

    def _op_post_webhook(self, params, q, body):
        try:
            w = self._hooks.add(body)
        except ValueError as e:
            raise _rule(str(e) + " (AS-WH)") from None
        return 200, self._hooks.view(w)

    def _op_list_webhooks(self, params, q, body):
        return 200, self._page([self._hooks.view(w) for w in self._hooks.records()], q)

    def _find_webhook(self, wid):
        w = self._hooks.find(wid)
        if w is None:
            raise self._not_found("webhook")
        return w

    def _op_get_webhook(self, params, q, body):
        return 200, self._hooks.view(self._find_webhook(params["id"]))

    def _op_put_webhook(self, params, q, body):
        w = self._find_webhook(params["id"])
        self._hooks.update(w, body)
        return 200, self._hooks.view(w)

    def _op_delete_webhook(self, params, q, body):
        w = self._find_webhook(params["id"])
        if w is self._default:
            raise _rule("the web application's webhook is removed there")
        self._hooks.remove(w)
        return 200, {"deleted": True, "id": params["id"]}

    def interrupted(self, webhook_id=None):
        """Whether the webhook's queue (default: asa.webhook_url's) is
        interrupted."""
        return (self._find_webhook(webhook_id) if webhook_id else self._default)["interrupted"]

    def resume(self, webhook_id=None):
        """Reactivate an interrupted queue (the panel's or the API's
        "interrupted": false): its kept events are sent in order."""
        self._hooks.resume(self._find_webhook(webhook_id) if webhook_id else self._default)

    # ---- the money side, driven by the test ----

    def pay(self, ident, value=None, when=None):
        """Settle the payment (id or externalReference): RECEIVED, paid
        `value` cents (default its value) at `when` (default now).
        ValueError when it is not PENDING or OVERDUE. Notifies
        PAYMENT_RECEIVED."""
        moment = _aware(when)
        with self._lock:
            p = self._held(ident)
            if p["status"] not in ("PENDING", "OVERDUE"):
                raise ValueError("the payment is %s" % p["status"])
            if value is not None and value != p["value"]:
                p["original"], p["value"] = p["value"], value
            p["status"], p["paid_at"] = "RECEIVED", moment
            p["paymentDate"] = brasilia_date(moment)
            p["pixTransaction"] = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
            out = [self._event("PAYMENT_RECEIVED", p)]
            view = self._payment_view(p)
        self._queue(out)
        return asaasapi.decimal_json(encode(view))

    def overdue(self, ident):
        """PENDING -> OVERDUE (past its dueDate; the Pix code stays
        payable). Notifies PAYMENT_OVERDUE."""
        with self._lock:
            p = self._held(ident)
            if p["status"] != "PENDING":
                raise ValueError("the payment is %s" % p["status"])
            p["status"] = "OVERDUE"
            out = [self._event("PAYMENT_OVERDUE", p)]
            view = self._payment_view(p)
        self._queue(out)
        return asaasapi.decimal_json(encode(view))

    def _refund(self, pid, value, description, in_progress):
        with self._lock:
            p = self._payments[pid]
            if p["status"] not in ("RECEIVED", "CONFIRMED"):
                raise _rule("only a received payment can be refunded (status %s)" % p["status"])
            left = p["value"] - sum(r["value"] for r in p["refunds"] if r["status"] != "CANCELLED")
            if value is None:
                value = left
            if value > left:
                raise _rule("the value to refund (%s) is above what remains (%s)" % (
                    Reais(value).text(), Reais(left).text()), "invalid_value", "$.value")
            r = {"created": _now(), "status": "PENDING" if in_progress else "DONE", "value": value,
                 "description": description}
            p["refunds"].append(r)
            if in_progress:
                p["status"], event = "REFUND_IN_PROGRESS", "PAYMENT_REFUND_IN_PROGRESS"
            elif value == left:
                p["status"], event = "REFUNDED", "PAYMENT_REFUNDED"
            else:
                event = "PAYMENT_PARTIALLY_REFUNDED"
            out = [self._event(event, p)]
        self._queue(out)

    def refund(self, ident, value=None, description=None, in_progress=False):
        """A refund of `value` cents (default what remains) made elsewhere
        (Asaas's dashboard). ValueError when it cannot be."""
        with self._lock:
            pid = self._held(ident)["id"]
        try:
            self._refund(pid, value, description, in_progress)
        except Refusal as r:
            raise ValueError(r.description) from None
        return self.payment(pid)

    def finish_refund(self, ident):
        """REFUND_IN_PROGRESS -> REFUNDED (or back to RECEIVED when the
        refund was partial). Notifies PAYMENT_REFUNDED or
        PAYMENT_PARTIALLY_REFUNDED."""
        with self._lock:
            p = self._held(ident)
            if p["status"] != "REFUND_IN_PROGRESS":
                raise ValueError("the payment is %s" % p["status"])
            for r in p["refunds"]:
                r["status"] = "DONE"
            whole = sum(r["value"] for r in p["refunds"]) >= p["value"]
            p["status"] = "REFUNDED" if whole else "RECEIVED"
            out = [self._event("PAYMENT_REFUNDED" if whole else "PAYMENT_PARTIALLY_REFUNDED", p)]
        self._queue(out)
        return self.payment(p["id"])

    def delete(self, ident):
        """The payment removed (deleted: true, PAYMENT_DELETED); GET by id
        still answers it, lists leave it out."""
        with self._lock:
            p = self._held(ident)
            p["deleted"] = True
            out = [self._event("PAYMENT_DELETED", p)]
        self._queue(out)
        return self.payment(p["id"])

    # ---- notifications ----

    def _event(self, event, p):
        """(event, evt id, body bytes) made now, or None when not notified."""
        if not self.auto_notify or event not in self.notify_events:
            return None
        return self._make_event(event, p)

    def _make_event(self, event, p):
        with self._lock:
            self._events += 1
            eid = "evt_%032x&%d" % (self._rng.getrandbits(128), 368604920 + self._events)
            body = {"id": eid, "event": event, "dateCreated": brasilia_datetime(_now()),
                    "payment": self._payment_view(p)}
            return event, eid, encode(body)

    def notify(self, event, ident, wait=True, timeout=30.0):
        """Queue `event` of the payment (whatever auto_notify says) to every
        webhook of that event. wait: until its first calls are over.
        Returns those first Delivery records."""
        with self._lock:
            note = self._make_event(event, self._find_payment(ident))
        firsts = self._queue([note])
        if wait:
            deadline = time.monotonic() + timeout
            for d in firsts:
                d.done.wait(max(0.0, deadline - time.monotonic()))
        return firsts

    def _queue(self, notes):
        return self._hooks.queue(notes)
