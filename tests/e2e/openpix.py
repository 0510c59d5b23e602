"""The OpenPix (Woovi) API as a validator for the tests' own Woovi (testwoovi.py).

The swagger and the documents used are vendored in tests/vendor/openpix/ (MIT,
Open-Pix/openpix-developers at 76584f0, see the NOTICE there) and read from
there only. Its OpenAPI 3.0 schemas become JSON Schema with bcb.py's converter
and are checked with Debian's python3-jsonschema:

    validate("ChargePayload", obj)          a components.schemas name
    check_request("POST", "/api/v1/charge", query, body)   [(path, reason)]
    check_response("GET", "/api/v1/charge/{id}", 200, obj) [(path, reason)]
    webhook_example("charge-payload")       docs/webhook/examples/<name>.mdx's JSON
    signature_vector()                      (public key PEM, payload, signature)

Where the swagger is wrong, the fix is one entry of ERRATA (what, why),
applied in code below it; the vendored file is not edited. An erratum that no
longer finds its fault raises bcb.ErratumGone, as bcb.py's do.
"""
import base64
import copy
import functools
import json
import os
import re
import urllib.parse

import yaml

import bcb

VENDOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vendor", "openpix")
SPEC_PATH = os.path.join(VENDOR, "openpix.yml")
SpecViolation = bcb.SpecViolation


@functools.lru_cache(maxsize=None)
def raw_spec():
    """The vendored openpix.yml as loaded (YAML 1.2 timestamps stay text).
    Shared: do not modify it."""
    with open(SPEC_PATH, encoding="utf-8") as f:
        return yaml.load(f, Loader=bcb._Loader)


# ---------------------------------------------------------------------------
# Errata

ERRATA = []
_FIXES = []


def _erratum(what, why):
    def register(fn):
        ERRATA.append((what, why))
        _FIXES.append(fn)
        return fn
    return register


def _expect(spec, ptr, faulty):
    try:
        node = bcb._pointer(spec, ptr)
    except (KeyError, IndexError, TypeError):
        node = None
    if node != faulty:
        raise bcb.ErratumGone("erratum at %s: expected %r, the swagger has %r" % (ptr, faulty, node))
    return node


_TX = "/components/schemas/Transaction/properties/"


@_erratum("Transaction: the enums of `type` and `status` are swapped",
          "every example (docs/webhook/examples) has type: PAYMENT; the swagger's own "
          "GET /api/v1/transaction?type= lists PAYMENT, WITHDRAW, REFUND, FEE")
def _fix_transaction_type(spec):
    t = _expect(spec, _TX + "type/enum", ["CREATED", "CONFIRMED", "REFUNDED", "PARTIAL_REFUND",
                                          "IN_PROCESSING", "REJECTED"])
    s = _expect(spec, _TX + "status/enum", ["PAYMENT", "WITHDRAW", "REFUND", "FEE"])
    props = bcb._pointer(spec, _TX[:-1])
    props["type"]["enum"], props["status"]["enum"] = list(s), list(t)


@_erratum("Charge.expiresIn is a string",
          "every example (the swagger's and docs/webhook/examples) gives a number of seconds, "
          "as ChargePayload.expiresIn is")
def _fix_expires_in(spec):
    _expect(spec, "/components/schemas/Charge/properties/expiresIn/type", "string")
    bcb._pointer(spec, "/components/schemas/Charge/properties/expiresIn")["type"] = "number"


@_erratum("ChargeRefundPayload.comment: `maximum: 140` on a string",
          "the description and docs/charge/refund/charge-refund-create-api.mdx: at most 140 characters")
def _fix_refund_comment(spec):
    node = bcb._pointer(spec, "/components/schemas/ChargeRefundPayload/properties/comment")
    _expect(spec, "/components/schemas/ChargeRefundPayload/properties/comment/maximum", 140)
    del node["maximum"]
    node["maxLength"] = 140


@_erratum("CustomerPayload: a oneOf of name+taxID, name+email, name+phone",
          "its description says at least one of the combinations, and the swagger's own example "
          "(POST /api/v1/charge: name, taxID, email, phone) matches all three: anyOf")
def _fix_customer_payload(spec):
    node = bcb._pointer(spec, "/components/schemas/CustomerPayload")
    if "oneOf" not in node or "anyOf" in node:
        raise bcb.ErratumGone("erratum: CustomerPayload is no longer a oneOf")
    node["anyOf"] = node.pop("oneOf")


_PAGING = [{"in": "query", "name": "skip", "schema": {"type": "integer", "minimum": 0}},
           {"in": "query", "name": "limit", "schema": {"type": "integer", "minimum": 1}}]


@_erratum("GET /api/v1/transaction and GET /api/v1/charge declare no skip and limit",
          "docs/transaction/transaction-how-to-paginate-api.md pages with ?skip= (and pageInfo.limit); "
          "the answers' pageInfo has skip and limit")
def _fix_paging(spec):
    for path in ("/api/v1/transaction", "/api/v1/charge"):
        item = spec["paths"][path]
        names = {p.get("name") for p in item.get("parameters", []) + item["get"].get("parameters", [])}
        if names & {"skip", "limit"}:
            raise bcb.ErratumGone("erratum: GET %s now declares skip or limit" % path)
        item["get"].setdefault("parameters", []).extend(copy.deepcopy(_PAGING))


@functools.lru_cache(maxsize=None)
def fixed_spec():
    spec = copy.deepcopy(raw_spec())
    for fix in _FIXES:
        fix(spec)
    return spec


@functools.lru_cache(maxsize=None)
def _converter():
    return bcb._Converter(fixed_spec())


def schema(name):
    """The JSON Schema of components.schemas[name], errata applied."""
    if name not in fixed_spec()["components"]["schemas"]:
        raise KeyError("the OpenPix swagger has no components.schemas.%s" % name)
    return _converter().ref("#/components/schemas/" + bcb._ptr_escape(name))


def _errors(json_schema, instance):
    v = bcb._Validator(json_schema, format_checker=bcb._FORMATS)
    return sorted({(bcb.json_path(e.absolute_path), bcb._reason(e)) for e in v.iter_errors(instance)})


def validate(name, instance):
    """Check a decoded JSON value against components.schemas[name]; returns
    it, raises SpecViolation naming each fault."""
    errors = _errors(schema(name), instance)
    if errors:
        raise SpecViolation(name, errors)
    return instance


def operation(method, template):
    """(operation, path item) of the swagger; KeyError when it has none."""
    item = fixed_spec()["paths"][template]
    return item[method.lower()], item


def check_request(method, template, query, body):
    """The faults of a request to `template` (/api/v1/charge/{id}): its query
    (a raw query string) against the operation's declared query parameters
    (an undeclared or repeated one is a fault), its body (decoded JSON, or
    None) against the requestBody's schema. Returns [(path, reason)], sorted:
    ?name for a query parameter, $... for the body."""
    op, item = operation(method, template)
    errors = []
    declared = {}
    for p in item.get("parameters", []) + op.get("parameters", []):
        if p.get("in") == "query":
            declared[p["name"]] = p
    given = urllib.parse.parse_qs(query, keep_blank_values=True)
    for name, texts in given.items():
        if name not in declared:
            errors.append(("?" + name, "not a query parameter of %s %s" % (method, template)))
            continue
        if len(texts) != 1:
            errors.append(("?" + name, "given %d times" % len(texts)))
            continue
        s = _converter().schema(declared[name].get("schema", {}), "query " + name)
        value = bcb._coerce(texts[0], bcb._schema_type(s))
        errors += [("?" + name, r) for _, r in _errors(s, value)]
    for name, p in declared.items():
        if p.get("required") and name not in given:
            errors.append(("?" + name, "required query parameter is missing"))
    rb = op.get("requestBody")
    if rb is not None:
        if body is None:
            if rb.get("required"):
                errors.append(("$", "a JSON body is required"))
        else:
            s = _converter().schema(rb["content"]["application/json"]["schema"], template + " body")
            errors += _errors(s, body)
    elif body is not None:
        errors.append(("$", "%s %s takes no body" % (method, template)))
    return sorted(set(errors))


def check_response(method, template, status, answer):
    """The faults of an answer against the operation's schema for `status`
    ([] when the swagger declares no schema for it)."""
    try:
        op, _ = operation(method, template)
    except KeyError:
        return []
    resp = op.get("responses", {}).get(str(status))
    content = (resp or {}).get("content", {}).get("application/json")
    if not content or "schema" not in content:
        return []
    return _errors(_converter().schema(content["schema"], "%s %s %d" % (method, template, status)), answer)


# ---------------------------------------------------------------------------
# The documents

_JSON_BLOCK = re.compile(r"```json\n(.*?)\n```", re.S)


def webhook_example(name):
    """The first JSON block of docs/webhook/examples/<name>.mdx, decoded."""
    with open(os.path.join(VENDOR, "docs", "webhook", "examples", name + ".mdx"), encoding="utf-8") as f:
        return json.loads(_JSON_BLOCK.search(f.read()).group(1))


def signature_vector():
    """The test vector of docs/webhook/seguranca/weebhook-signature-validation.mdx:
    (public key PEM bytes, payload bytes, base64 signature text)."""
    with open(os.path.join(VENDOR, "docs", "webhook", "seguranca", "weebhook-signature-validation.mdx"),
              encoding="utf-8") as f:
        text = f.read()
    key = re.search(r"\$publicKeyBase64 = '([A-Za-z0-9+/=]+)'", text).group(1)
    payload = re.search(r"\$payload = '(.*?)';\n", text).group(1)
    signature = re.search(r"\$signature = '([A-Za-z0-9+/=]+)'", text).group(1)
    return base64.b64decode(key), payload.encode("utf-8"), signature
