"""What the test bank (testbank.py) lets in and sends out: the API Pix
operations it serves, each request and answer checked against the official
spec with bcb.py, and the standard's Problema for each refusal.

Everything is read from the vendored openapi.yaml: the path parameters'
schemas, the query parameters (bcb.validate_query), the request body's
schema, the statuses an operation answers and each answer's schema. What
this module adds is the standard's error catalogue (the `type` of each
operation's refusal, from the spec's description) and the shape of a
Violation. The bank's behaviour is in testbank.py; its webhook sender in
bankhook.py.
"""
import collections
import re
import time
import urllib.parse

import jsonschema

import bcb

ERROR_BASE = "https://pix.bcb.gov.br/api/v2/error/"

# Error statuses the spec's "Gerais" section allows on any endpoint, with
# 401 (the OAuth2 bearer scheme's) and 405 (a method the path lacks).
GENERAL_ERRORS = {400, 401, 403, 404, 405, 410, 500, 503, 504}

Operation = collections.namedtuple("Operation", "invalid title prefix not_found handler")
Operation.__doc__ = """invalid: the error type of a refused request (the
standard's catalogue) and its title; prefix: what a violation's propriedade
starts with (cob.valor.original); not_found: the 404's type; handler: the
name of the bank's method for it (_op_<handler>)."""

OPERATIONS = {
    ("PUT", "/cob/{txid}"): Operation("CobOperacaoInvalida", "Cobrança inválida.", "cob",
                                      "CobNaoEncontrado", "put_cob"),
    ("GET", "/cob/{txid}"): Operation("CobConsultaInvalida", "Consulta inválida.", "cob",
                                      "CobNaoEncontrado", "get_cob"),
    ("PUT", "/cobv/{txid}"): Operation("CobVOperacaoInvalida", "Cobrança inválida.", "cobv",
                                       "CobVNaoEncontrada", "put_cobv"),
    ("GET", "/cobv/{txid}"): Operation("CobVConsultaInvalida", "Consulta inválida.", "cobv",
                                       "CobVNaoEncontrada", "get_cobv"),
    ("GET", "/pix"): Operation("PixConsultaInvalida", "Consulta inválida.", "pix", "NaoEncontrado",
                               "get_pix_list"),
    ("GET", "/pix/{e2eid}"): Operation("RequisicaoInvalida", "Requisição inválida.", "pix",
                                       "PixNaoEncontrado", "get_pix"),
    ("PUT", "/pix/{e2eid}/devolucao/{id}"): Operation("PixDevolucaoInvalida", "Devolução inválida.",
                                                      "devolucao", "PixNaoEncontrado", "put_devolucao"),
    ("GET", "/pix/{e2eid}/devolucao/{id}"): Operation("RequisicaoInvalida", "Requisição inválida.",
                                                      "devolucao", "PixDevolucaoNaoEncontrada",
                                                      "get_devolucao"),
    ("PUT", "/webhook/{chave}"): Operation("WebhookOperacaoInvalida", "Webhook inválido.", "webhook",
                                           "WebhookNaoEncontrado", "put_webhook"),
    ("GET", "/webhook/{chave}"): Operation("RequisicaoInvalida", "Requisição inválida.", "webhook",
                                           "WebhookNaoEncontrado", "get_webhook"),
    ("DELETE", "/webhook/{chave}"): Operation("RequisicaoInvalida", "Requisição inválida.", "webhook",
                                              "WebhookNaoEncontrado", "delete_webhook"),
    # Pix Automático (testbank_rec.py)
    ("POST", "/locrec"): Operation("PayloadLocationOperacaoInvalida", "Location inválida.", "loc",
                                   "PayloadLocationNaoEncontrado", "post_locrec"),
    ("POST", "/rec"): Operation("RecOperacaoInvalida", "Operação inválida.", "rec", "RecNaoEncontrada",
                                "post_rec"),
    ("GET", "/rec"): Operation("RecConsultaInvalida", "Consulta inválida.", "rec", "RecNaoEncontrada",
                               "get_rec_list"),
    ("GET", "/rec/{idRec}"): Operation("RecConsultaInvalida", "Consulta inválida.", "rec",
                                       "RecNaoEncontrada", "get_rec"),
    ("PATCH", "/rec/{idRec}"): Operation("RecOperacaoInvalida", "Operação inválida.", "rec",
                                         "RecNaoEncontrada", "patch_rec"),
    ("PUT", "/webhookrec"): Operation("WebhookRecOperacaoInvalida", "Webhook inválido.", "webhook",
                                      "WebhookNaoEncontrado", "put_webhookrec"),
    ("GET", "/webhookrec"): Operation("WebhookRecConsultaInvalida", "Consulta inválida.", "webhook",
                                      "WebhookNaoEncontrado", "get_webhookrec"),
    # Pix Automático's recurring charges (testbank_cobr.py)
    ("PUT", "/cobr/{txid}"): Operation("CobROperacaoInvalida", "Cobrança inválida.", "cobr",
                                       "CobRNaoEncontrado", "put_cobr"),
    ("GET", "/cobr/{txid}"): Operation("CobRConsultaInvalida", "Consulta inválida.", "cobr",
                                       "CobRNaoEncontrado", "get_cobr"),
    ("PATCH", "/cobr/{txid}"): Operation("CobROperacaoInvalida", "Cobrança inválida.", "cobr",
                                         "CobRNaoEncontrado", "patch_cobr"),
    ("POST", "/cobr/{txid}/retentativa/{data}"): Operation(
        "CobROperacaoInvalida", "Cobrança inválida.", "cobr", "CobRNaoEncontrado", "post_retentativa"),
    ("PUT", "/webhookcobr"): Operation("WebhookCobROperacaoInvalida", "Webhook inválido.", "webhook",
                                       "WebhookNaoEncontrado", "put_webhookcobr"),
    ("GET", "/webhookcobr"): Operation("WebhookCobRConsultaInvalida", "Consulta inválida.", "webhook",
                                       "WebhookNaoEncontrado", "get_webhookcobr"),
    ("DELETE", "/webhookcobr"): Operation("RequisicaoInvalida", "Requisição inválida.", "webhook",
                                          "WebhookNaoEncontrado", "delete_webhookcobr"),
    ("DELETE", "/webhookrec"): Operation("RequisicaoInvalida", "Requisição inválida.", "webhook",
                                         "WebhookNaoEncontrado", "delete_webhookrec"),
}


class Violation:
    """A request, an answer of the bank's own, or a failure of the bank,
    that broke the standard. where: "request", "response" or "bank"; kind:
    "schema" (the spec's schema refuses it), "rule" (the standard's rules
    do) or "error" (the bank failed); endpoint such as "PUT /cob/{txid}";
    path the request's target; status what was answered; errors
    [(where in it, reason)] with places such as $.valor.original, ?inicio,
    {txid}; detail one line."""

    def __init__(self, where, kind, endpoint, path, status, errors, detail):
        self.where, self.kind, self.endpoint, self.path = where, kind, endpoint, path
        self.status, self.errors, self.detail = status, errors, detail
        self.time = time.time()

    def __repr__(self):
        return "<Violation %s %s %s -> %s: %s>" % (self.where, self.kind, self.path, self.status,
                                                   "; ".join("%s: %s" % e for e in self.errors))


class Refusal(Exception):
    """An answer other than success, as a Problema: raised by the checks
    and the bank's handlers, answered by its dispatcher. errors are
    [(place, reason)] as in Violation; kind "schema" or "rule" (for 400)."""

    def __init__(self, status, tipo, title, detail, errors=(), kind="rule", headers=None):
        super().__init__(detail)
        self.status, self.tipo, self.title, self.detail = status, tipo, title, detail
        self.errors, self.kind, self.headers = list(errors), kind, dict(headers or {})


def rule(method, template, detail, where="$"):
    """The 400 of an operation for a request the standard's rules refuse."""
    op = OPERATIONS[(method, template)]
    return Refusal(400, op.invalid, op.title, detail, [(where, detail)])


def not_found(method, template, detail):
    return Refusal(404, OPERATIONS[(method, template)].not_found, "Não Encontrado", detail)


def _propriedade(prefix, place):
    if place == "$":
        return prefix
    if place.startswith("$"):
        return prefix + place[1:]
    return place.lstrip("?{").rstrip("}")


def problem_body(refusal, prefix=""):
    """The Problema (RFC 7807, components.schemas.Problema) of a refusal;
    each error becomes a violacao whose propriedade starts with `prefix`."""
    r = refusal
    body = {"type": ERROR_BASE + r.tipo, "title": r.title, "status": r.status, "detail": r.detail}
    if r.errors:
        body["violacoes"] = [{"razao": reason, "propriedade": _propriedade(prefix, place)}
                             for place, reason in r.errors]
    return body


# ---------------------------------------------------------------------------
# Routes

def _template_regex(template):
    return re.compile("".join("(?P<%s>[^/]+)" % part[1:-1] if part.startswith("{") else re.escape(part)
                              for part in re.split(r"(\{[^}]*\})", template)))


_ROUTES = [(t, _template_regex(t)) for t in sorted({t for _, t in OPERATIONS}, key=len, reverse=True)]


def route(path):
    """(template, {name: decoded value}) of a path under the API's base
    (/cob/abc -> /cob/{txid}), or None."""
    for template, rx in _ROUTES:
        m = rx.fullmatch(path)
        if m:
            return template, {k: urllib.parse.unquote(v) for k, v in m.groupdict().items()}
    return None


def methods(template):
    return [m for m, t in OPERATIONS if t == template]


def spec_operation(method, template):
    """The spec's operation object (raw, $refs in place)."""
    return bcb.raw_spec()["paths"][template][method.lower()]


def _deref(node):
    """A spec node, or what its $ref names (#/components/...)."""
    while isinstance(node, dict) and "$ref" in node:
        node = bcb._pointer(bcb.raw_spec(), node["$ref"][1:])
    return node


def _schema_name(media):
    """The components.schemas name a media type object's schema names, or
    None when the schema is inline."""
    ref = (media or {}).get("schema", {}).get("$ref", "")
    return ref.rsplit("/", 1)[-1] if ref.startswith("#/components/schemas/") else None


def _check_value(schema, value, place):
    """[(place, reason)] for a path parameter's text against its schema: a
    components.schemas $ref through bcb.validate, an inline one (the spec
    has only {type: string, maxLength}) with jsonschema."""
    if "$ref" in schema:
        try:
            bcb.validate(schema["$ref"].rsplit("/", 1)[-1], value)
        except bcb.SpecViolation as e:
            return [(place, reason) for _, reason in e.errors]
        return []
    inline = {k: v for k, v in schema.items() if k in ("type", "maxLength", "minLength", "pattern")}
    return [(place, e.message) for e in jsonschema.Draft4Validator(inline).iter_errors(value)]


# ---------------------------------------------------------------------------
# Checks

def check_request(method, template, params, query, content_type, body):
    """A request's path parameters, query string and body against the
    spec. Returns (the query's values as bcb.validate_query reads them, the
    decoded body or None). Raises Refusal 400, kind "schema", naming every
    fault; a body must come as application/json."""
    op = spec_operation(method, template)
    errors = []
    item = bcb.raw_spec()["paths"][template]
    for p in item.get("parameters", []) + op.get("parameters", []):
        p = _deref(p)
        if p["in"] == "path":
            errors += _check_value(p["schema"], params[p["name"]], "{%s}" % p["name"])
    try:
        values = bcb.validate_query(template, method, query)
    except bcb.SpecViolation as e:
        values = {}
        errors += e.errors
    obj = None
    if "requestBody" in op:
        ctype = (content_type or "").split(";")[0].strip().lower()
        media = _deref(op["requestBody"])["content"].get("application/json")
        if ctype != "application/json":
            errors.append(("$", "Content-Type is %r, not application/json" % ctype))
        elif not body:
            errors.append(("$", "the request has no body"))
        else:
            try:
                obj = bcb.validate(_schema_name(media), body)
            except bcb.SpecViolation as e:
                errors += e.errors
    if errors:
        o = OPERATIONS[(method, template)]
        raise Refusal(400, o.invalid, o.title, "A requisição não respeita o _schema_: " + "; ".join(
            "%s: %s" % e for e in errors), errors, kind="schema")
    return values, obj


def check_response(method, template, status, answer):
    """[(place, reason)] of an answer the spec does not allow: a status the
    operation does not declare (beyond GENERAL_ERRORS), a body where it
    declares none or none where it does, a body its schema (Problema for
    an error) refuses. [] when it keeps the spec."""
    op = spec_operation(method, template)
    errors = []
    declared = op["responses"].get(str(status))
    if declared is None and status not in GENERAL_ERRORS:
        errors.append(("status", "%d is not an answer of %s %s" % (status, method, template)))
    content = (_deref(declared) or {}).get("content") if declared else None
    if status >= 400:
        name = "Problema"
    elif content:
        name = _schema_name(content.get("application/json"))
    else:
        name = None
        if answer is not None:
            errors.append(("$", "%d has no body in the spec" % status))
    if name and answer is None:
        errors.append(("$", "%d needs a %s body" % (status, name)))
    elif name:
        try:
            bcb.validate(name, answer)
        except bcb.SpecViolation as e:
            errors += e.errors
    return errors
