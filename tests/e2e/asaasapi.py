"""What the tests' Asaas (testasaas.py) lets in: the shapes of Asaas's API v3
requests it serves, written as Python checks, each citing its source.

No OpenAPI or JSON schema of Asaas's API was found with a license that
allows vendoring it (docs.asaas.com publishes none; third-party copies
carry none), so nothing is vendored under tests/vendor/asaas/: the shapes
are written here from these sources (checked 2026-12-02):
  AS-AUTH  docs.asaas.com/docs/autenticação-1 (and /docs/authentication-2):
           the headers, the 401 bodies of "Erros de autenticação";
  AS-PIX   docs.asaas.com/docs/cobrancas-via-pix,
           /reference/obter-qr-code-para-pagamentos-via-pix;
  AS-WH    docs.asaas.com/docs/create-new-webhook-via-api (the body of POST
           /v3/webhooks), /docs/webhook-para-cobrancas (the events),
           /docs/fila-pausada, /docs/faq-de-webhooks;
  AS-GO    github.com/GabrielHCataldo/go-asaas @ 38452b1 (MIT):
           asaas/charge.go (CreateChargeRequest, GetAllChargesRequest,
           ChargeResponse, ChargePixQrCodeResponse), asaas/customer.go
           (CreateCustomerRequest, GetAllCustomersRequest), asaas/refund.go
           (RefundRequest), asaas/pageable.go (limit max 100),
           asaas/error.go ({"errors": [{"code", "description"}]}),
           asaas/date.go (dates as yyyy-MM-dd), asaas/enum.go.

Values are numbers in reais (`"value": 10.5`, AS-GO's float64; the
docs' examples write 100, 94.51): a request's JSON is read with every
number as a Decimal, and a value must be a number (not a string) with at
most two decimal places, so a float's 0.30000000000000004 is refused.

Each check returns [(place, reason)]: places such as $.value, ?limit.
"""
import datetime
import decimal
import json
import re

DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")

# AS-WH webhook-para-cobrancas: the payment events.
PAYMENT_EVENTS = (
    "PAYMENT_CREATED", "PAYMENT_AWAITING_RISK_ANALYSIS", "PAYMENT_APPROVED_BY_RISK_ANALYSIS",
    "PAYMENT_REPROVED_BY_RISK_ANALYSIS", "PAYMENT_AUTHORIZED", "PAYMENT_UPDATED", "PAYMENT_CONFIRMED",
    "PAYMENT_RECEIVED", "PAYMENT_CREDIT_CARD_CAPTURE_REFUSED", "PAYMENT_ANTICIPATED", "PAYMENT_OVERDUE",
    "PAYMENT_DELETED", "PAYMENT_RESTORED", "PAYMENT_REFUNDED", "PAYMENT_PARTIALLY_REFUNDED",
    "PAYMENT_REFUND_IN_PROGRESS", "PAYMENT_RECEIVED_IN_CASH_UNDONE", "PAYMENT_CHARGEBACK_REQUESTED",
    "PAYMENT_CHARGEBACK_DISPUTE", "PAYMENT_AWAITING_CHARGEBACK_REVERSAL", "PAYMENT_DUNNING_RECEIVED",
    "PAYMENT_DUNNING_REQUESTED", "PAYMENT_BANK_SLIP_VIEWED", "PAYMENT_CHECKOUT_VIEWED")

# AS-GO enum.go ChargeStatus.
STATUSES = ("PENDING", "RECEIVED", "CONFIRMED", "OVERDUE", "REFUNDED", "RECEIVED_IN_CASH", "REFUND_REQUESTED",
            "REFUND_IN_PROGRESS", "CHARGEBACK_REQUESTED", "CHARGEBACK_DISPUTE", "AWAITING_CHARGEBACK_REVERSAL",
            "DUNNING_REQUESTED", "DUNNING_RECEIVED", "AWAITING_RISK_ANALYSIS")

# AS-GO enum.go BillingType.
BILLING_TYPES = ("BOLETO", "CREDIT_CARD", "UNDEFINED", "DEBIT_CARD", "TRANSFER", "DEPOSIT", "PIX")

# AS-WH create-new-webhook-via-api, tipos-de-envio.
SEND_TYPES = ("SEQUENTIALLY", "NON_SEQUENTIALLY")


def decimal_json(raw):
    """A JSON text read with every number as a Decimal (ValueError when it
    is not JSON)."""
    return json.loads(raw, parse_float=decimal.Decimal, parse_int=decimal.Decimal)


def _is_number(v):
    return isinstance(v, decimal.Decimal)


def cents_of(value):
    """Integer cents of a Decimal in reais with at most 2 decimal places;
    None when it has more or is not a number."""
    if not _is_number(value) or not value.is_finite():
        return None
    c = value * 100
    if c != c.to_integral_value():
        return None
    return int(c)


def _date(v):
    if not isinstance(v, str) or not DATE.match(v):
        return False
    try:
        datetime.date.fromisoformat(v)
    except ValueError:
        return False
    return True


def _digits_ok(digits):
    """A CPF (11) or CNPJ (14) with right check digits (the Receita's
    mod-11 rule)."""
    def dv(ds, weights):
        s = sum(int(d) * w for d, w in zip(ds, weights)) % 11
        return "0" if s < 2 else str(11 - s)
    if len(digits) == 11:
        if len(set(digits)) == 1:
            return False
        return dv(digits[:9], range(10, 1, -1)) == digits[9] and dv(digits[:10], range(11, 1, -1)) == digits[10]
    if len(digits) == 14:
        w1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
        return dv(digits[:12], w1) == digits[12] and dv(digits[:13], [6] + w1) == digits[13]
    return False


def _fields(body, spec, required):
    """Type checks of a JSON object against spec {name: kind}; kind is
    "str", "bool", "number", "date", "list", "object", "str?" (string or
    null). Unknown names are refused: the server checks that pixrelay sends
    only what Asaas documents."""
    if not isinstance(body, dict):
        return [("$", "a JSON object is expected")]
    out = []
    for name in required:
        if body.get(name) is None:
            out.append(("$." + name, "required"))
    for name, v in body.items():
        kind = spec.get(name)
        where = "$." + name
        if kind is None:
            out.append((where, "not a field of this request"))
        elif v is None:
            if name in required:
                continue   # already said
            if not kind.endswith("?"):
                out.append((where, "null is not allowed"))
        elif kind.rstrip("?") == "str" and not isinstance(v, str):
            out.append((where, "a string is expected"))
        elif kind == "bool" and not isinstance(v, bool):
            out.append((where, "true or false is expected"))
        elif kind == "number" and not _is_number(v):
            out.append((where, "a number is expected (in reais, e.g. 10.5)"))
        elif kind == "int" and not (_is_number(v) and v == v.to_integral_value()):
            out.append((where, "a whole number is expected"))
        elif kind == "date" and not _date(v):
            out.append((where, "a date yyyy-MM-dd is expected"))
        elif kind == "list" and not isinstance(v, list):
            out.append((where, "a list is expected"))
        elif kind == "object" and not isinstance(v, dict):
            out.append((where, "an object is expected"))
    return out


# AS-GO customer.go CreateCustomerRequest.
CUSTOMER_FIELDS = {k: "str" for k in (
    "name", "cpfCnpj", "email", "phone", "mobilePhone", "address", "addressNumber", "complement", "province",
    "postalCode", "externalReference", "additionalEmails", "municipalInscription", "stateInscription",
    "observations", "groupName", "company")}
CUSTOMER_FIELDS["notificationDisabled"] = "bool"
CUSTOMER_FIELDS["foreignCustomer"] = "bool"


def check_customer(body):
    """POST /v3/customers: name and cpfCnpj required (AS-GO
    CreateCustomerRequest's comments), cpfCnpj 11 or 14 digits with right
    check digits (punctuation allowed)."""
    out = _fields(body, CUSTOMER_FIELDS, ("name", "cpfCnpj"))
    if not out:
        digits = re.sub(r"[.\-/]", "", body["cpfCnpj"])
        if not digits.isdigit() or not _digits_ok(digits):
            out.append(("$.cpfCnpj", "not a valid CPF or CNPJ"))
        if not body["name"].strip():
            out.append(("$.name", "empty"))
    return out


# AS-GO charge.go CreateChargeRequest (the Pix-relevant part and the rest,
# typed loosely: this server only plays PIX, AS-PIX).
PAYMENT_FIELDS = {"customer": "str", "billingType": "str", "value": "number", "dueDate": "date",
                  "description": "str?", "externalReference": "str?", "discount": "object", "interest": "object",
                  "fine": "object", "postalService": "bool", "split": "list", "callback": "object",
                  "installmentCount": "int", "installmentValue": "number"}


def check_payment(body):
    """POST /v3/payments: customer, value (> 0, in reais, at most 2
    decimal places) and dueDate (yyyy-MM-dd) are required; billingType
    defaults to UNDEFINED; description at most 500 characters (AS-GO
    CreateChargeRequest's comments; AS-PIX)."""
    out = _fields(body, PAYMENT_FIELDS, ("customer", "value", "dueDate"))
    if out:
        return out
    if "billingType" in body and body["billingType"] not in BILLING_TYPES:
        out.append(("$.billingType", "one of " + ", ".join(BILLING_TYPES)))
    c = cents_of(body["value"])
    if c is None:
        out.append(("$.value", "reais with at most 2 decimal places"))
    elif c < 1:
        out.append(("$.value", "above zero"))
    if len(body.get("description") or "") > 500:
        out.append(("$.description", "at most 500 characters"))
    return out


def check_refund(body):
    """POST /v3/payments/{id}/refund: {value?, description?} (AS-GO
    refund.go); no body at all is a whole refund."""
    if body is None:
        return []
    out = _fields(body, {"value": "number", "description": "str?"}, ())
    if not out and "value" in body:
        c = cents_of(body["value"])
        if c is None or c < 1:
            out.append(("$.value", "reais above zero with at most 2 decimal places"))
    return out


WEBHOOK_FIELDS = {"name": "str", "url": "str", "email": "str", "enabled": "bool", "interrupted": "bool",
                  "authToken": "str?", "sendType": "str", "events": "list", "apiVersion": "int"}


def check_webhook(body, create=True):
    """POST /v3/webhooks (create=True: name, url, email, sendType, events
    required) and PUT /v3/webhooks/{id}: the body of AS-WH
    create-new-webhook-via-api; authToken 32 to 255 characters (the
    WebhookConfigSaveRequestDTO's limits) or null; url http(s)."""
    req = ("name", "url", "email", "sendType", "events") if create else ()
    out = _fields(body, WEBHOOK_FIELDS, req)
    if out:
        return out
    if "url" in body and not re.match(r"https?://[^\s]+\Z", body["url"]):
        out.append(("$.url", "an http or https URL"))
    if "sendType" in body and body["sendType"] not in SEND_TYPES:
        out.append(("$.sendType", "SEQUENTIALLY or NON_SEQUENTIALLY"))
    if body.get("authToken") is not None and not 32 <= len(body["authToken"]) <= 255:
        out.append(("$.authToken", "32 to 255 characters"))
    for i, e in enumerate(body.get("events", [])):
        if not isinstance(e, str) or not re.match(r"[A-Z_]+\Z", e):
            out.append(("$.events[%d]" % i, "an event name"))
    return out


def _query(q, allowed, dates=(), ints=()):
    out = []
    for k, v in q.items():
        if k not in allowed:
            out.append(("?" + k, "not a filter of this list"))
        elif k in dates and not _date(v):
            out.append(("?" + k, "a date yyyy-MM-dd is expected (Asaas filters by whole dates)"))
        elif k in ints and not re.match(r"[0-9]+\Z", v):
            out.append(("?" + k, "a whole number is expected"))
    if "limit" in q and re.match(r"[0-9]+\Z", q["limit"]) and not 1 <= int(q["limit"]) <= 100:
        out.append(("?limit", "1 to 100 (AS-GO pageable.go: max 100)"))
    return out


# AS-GO charge.go GetAllChargesRequest.
PAYMENT_FILTERS = ("customer", "subscription", "installment", "customerGroupName", "billingType", "status",
                   "externalReference", "invoiceStatus", "estimatedCreditDate", "pixQrCodeId", "anticipated",
                   "paymentDate", "dateCreated[ge]", "dateCreated[le]", "paymentDate[ge]", "paymentDate[le]",
                   "estimatedCreditDate[ge]", "estimatedCreditDate[le]", "dueDate[ge]", "dueDate[le]", "user",
                   "offset", "limit")
PAYMENT_DATE_FILTERS = ("estimatedCreditDate", "paymentDate", "dateCreated[ge]", "dateCreated[le]",
                        "paymentDate[ge]", "paymentDate[le]", "estimatedCreditDate[ge]", "estimatedCreditDate[le]",
                        "dueDate[ge]", "dueDate[le]")


def check_payment_query(q):
    """GET /v3/payments: AS-GO's filters; dates yyyy-MM-dd; offset, limit
    whole numbers, limit at most 100; status and billingType from the
    enums."""
    out = _query(q, PAYMENT_FILTERS, PAYMENT_DATE_FILTERS, ("offset", "limit"))
    if "status" in q and q["status"] not in STATUSES:
        out.append(("?status", "one of " + ", ".join(STATUSES)))
    if "billingType" in q and q["billingType"] not in BILLING_TYPES:
        out.append(("?billingType", "one of " + ", ".join(BILLING_TYPES)))
    return out


def check_customer_query(q):
    """GET /v3/customers: AS-GO customer.go GetAllCustomersRequest."""
    return _query(q, ("name", "email", "cpfCnpj", "groupName", "externalReference", "offset", "limit"),
                  (), ("offset", "limit"))


def check_list_query(q):
    """GET /v3/webhooks: offset and limit only."""
    return _query(q, ("offset", "limit"), (), ("offset", "limit"))


# The answer's payment object (AS-GO ChargeResponse; the docs' webhook
# example of webhook-para-cobrancas): the fields a client reads, typed.
PAYMENT_VIEW = {"object": str, "id": str, "dateCreated": str, "customer": str, "value": "reais",
                "netValue": "reais", "billingType": str, "status": str, "dueDate": str,
                "originalDueDate": str, "externalReference": (str, type(None)), "deleted": bool,
                "pixTransaction": (str, type(None)), "paymentDate": (str, type(None)),
                "clientPaymentDate": (str, type(None)), "refunds": (list, type(None))}


def check_payment_view(view):
    """[(place, reason)] of a payment object this server answers or
    notifies (values are Decimals here: the server writes them so)."""
    out = []
    for k, t in PAYMENT_VIEW.items():
        if k not in view:
            out.append(("$." + k, "missing"))
        elif t == "reais":
            if cents_of(view[k]) is None:
                out.append(("$." + k, "not reais with 2 decimal places"))
        elif not isinstance(view[k], t):
            out.append(("$." + k, "wrong type"))
    if view.get("status") not in STATUSES:
        out.append(("$.status", "not a status of AS-GO's enum"))
    return out
