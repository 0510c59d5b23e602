"""The Central Bank's API Pix (release 2.9.0) as a validator for the bank tests.

The specification is vendored in tests/vendor/bcb-pix-api/openapi.yaml (Apache
2.0, see the README there) and read from there only. Its OpenAPI 3.0 schemas are
turned into JSON Schema draft 4 and checked with Debian's python3-jsonschema:

    validate("Pix", obj)              a components.schemas name
    validate_webhook_body(body)       components.requestBodies.WebhookPixBody
    validate_query("/pix", "get", {"inicio": ..., "fim": ...})
    example("pixWebhook1")            components.examples[name].value, as is
    example_fixed("pixWebhook1")      the same with the example errata fixed

A failure raises SpecViolation (an AssertionError, so a unittest reports it as
a failure) whose message names the JSON path and the reason of every fault:

    Pix does not validate: $.valor: '110' does not match '\\d{1,10}\\.\\d{2}'

The conversion keeps the schemas' meaning: $ref is resolved within the file,
`nullable` adds null to the type, `example` and other annotations are dropped,
the formats the spec uses (date-time, date, uri, int32, int64) are checked, and
a pattern is an ECMA-262 regular expression searched anywhere in the string,
unanchored, as JSON Schema says (so \\d is [0-9] and $ is the very end).

Where the spec is wrong, the fix is one entry of ERRATA, (what, why), applied
in code just below it; nothing else is changed. A schema is fixed where it
contradicts itself (requires what it does not define, a pattern that matches
nothing, a oneOf whose branches all overlap) or the Pix rules its examples
follow; otherwise the schema is the contract and a contradicting example is
what is fixed, in example_fixed() only. An erratum that no longer finds the
fault it fixes (a newer spec) raises ErratumGone on first use, so nothing is
silently left patched or unpatched; check_errata() applies them all at once.
"""
import copy
import datetime
import functools
import json
import os
import re
import urllib.parse

import jsonschema
import yaml

SPEC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vendor", "bcb-pix-api",
                         "openapi.yaml")


class SpecViolation(AssertionError):
    """An instance that the spec's schema refuses. `subject` names the schema
    or the operation, `errors` is a list of (path, reason), sorted: a JSON
    path such as $.pix[0].valor for a body, ?name for a query parameter."""

    def __init__(self, subject, errors):
        self.subject = subject
        self.errors = errors
        if len(errors) == 1:
            msg = "%s does not validate: %s: %s" % (subject, errors[0][0], errors[0][1])
        else:
            msg = "%s does not validate (%d errors):\n" % (subject, len(errors)) + "\n".join(
                "  %s: %s" % e for e in errors)
        super().__init__(msg)


# ---------------------------------------------------------------------------
# Loading. YAML 1.1 would read an unquoted 2020-01-01 as a date object; the
# spec is YAML 1.2, where it is a string, so timestamps stay strings.

_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):
    pass


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in _BASE_LOADER.yaml_implicit_resolvers.items()}


@functools.lru_cache(maxsize=None)
def raw_spec():
    """The vendored openapi.yaml as loaded, errata not applied. Shared: do
    not modify it (copy.deepcopy first)."""
    with open(SPEC_PATH, encoding="utf-8") as f:
        return yaml.load(f, Loader=_Loader)


def _pointer(doc, ptr):
    """The node at a JSON pointer such as /paths/~1pix/get (KeyError if none)."""
    node = doc
    for part in ptr.lstrip("/").split("/") if ptr not in ("", "/") else []:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _ptr_escape(s):
    return s.replace("~", "~0").replace("/", "~1")


# ---------------------------------------------------------------------------
# Errata: each is one (what, why) entry and the function that applies it,
# either to the spec before its schemas are used, or to one example's value
# in example_fixed(). Each checks that the spec still has the fault.

ERRATA = []
_SPEC_FIXES = []
_EXAMPLE_FIXES = {}


def _erratum(what, why, examples=()):
    def register(fn):
        ERRATA.append((what, why))
        if examples:
            for name in examples:
                _EXAMPLE_FIXES.setdefault(name, []).append(fn)
        else:
            _SPEC_FIXES.append(fn)
        return fn
    return register


class ErratumGone(RuntimeError):
    """The vendored spec no longer has the fault an erratum fixes."""


def _expect(doc, ptr, faulty):
    try:
        node = _pointer(doc, ptr)
    except (KeyError, IndexError, TypeError):
        node = None
    if node != faulty:
        raise ErratumGone("erratum at %s: expected %r, the spec has %r" % (ptr, faulty, node))
    return node


def _query_param(spec, path, method, name):
    """The JSON pointer of the query parameter `name` declared inline in an
    operation's parameters."""
    op_ptr = "/paths/%s/%s" % (_ptr_escape(path), method)
    for i, p in enumerate(_pointer(spec, op_ptr).get("parameters", [])):
        if "$ref" not in p and p.get("name") == name and p.get("in") == "query":
            return "%s/parameters/%d" % (op_ptr, i)
    raise ErratumGone("erratum: %s %s has no inline query parameter %s" % (method, path, name))


_TXID_ALLOF = {"allOf": [{"$ref": "#/components/schemas/TxId"}, {"pattern": "[a-zA-Z0-9]{1,35}"}]}
_TXID_1_35 = {"type": "string", "pattern": "[a-zA-Z0-9]{1,35}"}
_CPF_SLASHES = "/^\\d{11}$/"
_CPF = "^\\d{11}$"


def _replace(spec, ptr, faulty, fixed):
    """Put `fixed` at `ptr`, where the spec must have `faulty`."""
    _expect(spec, ptr, faulty)
    parent, key = ptr.rsplit("/", 1)
    _pointer(spec, parent)[key.replace("~1", "/").replace("~0", "~")] = copy.deepcopy(fixed)


# The errata the bank tests were told of.

@_erratum("Pix.txid: allOf [TxId [a-zA-Z0-9]{26,35}, pattern [a-zA-Z0-9]{1,35}] is validated against "
          "[a-zA-Z0-9]{1,35} only",
          "taken literally no txid under 26 characters validates, yet a static BR Code's txid is at "
          "most 25 and banks report it")
def _fix_pix_txid(spec):
    _replace(spec, "/components/schemas/Pix/properties/txid", _TXID_ALLOF, _TXID_1_35)


@_erratum("PixConsultados: `required` lists `cobs`, which it does not define; `pix` is required instead",
          "the schema defines `parametros` and `pix` only; `cobs` is the list of CobsConsultadas")
def _fix_pix_consultados(spec):
    _replace(spec, "/components/schemas/PixConsultados/required", ["parametros", "cobs"],
             ["parametros", "pix"])


@_erratum("GET /pix, query parameter cpf: the pattern /^\\d{11}$/ is read ^\\d{11}$",
          "a JavaScript regex literal, slashes included, as the pattern: it matches no string at all")
def _fix_get_pix_cpf(spec):
    _replace(spec, _query_param(spec, "/pix", "get", "cpf") + "/schema/pattern", _CPF_SLASHES, _CPF)


@_erratum("example pixWebhook1: `devolucoes` is one Devolucao object; example_fixed() wraps it in an array",
          "Pix.devolucoes is an array of Devolucao; the example writes a bare object",
          examples=["pixWebhook1"])
def _fix_pix_webhook1(value):
    if not isinstance(value.get("devolucoes"), dict):
        raise ErratumGone("erratum pixWebhook1: devolucoes is no longer an object")
    value["devolucoes"] = [value["devolucoes"]]
    return value


# The errata found by validating the spec's own examples (and its changelog)
# for the schemas the bank tests use.

@_erratum("GET /pix, query parameter txid, and ParametrosConsultaPix.txid: the same allOf as Pix.txid, "
          "validated against [a-zA-Z0-9]{1,35} only",
          "the changelog of 2.2.1 (#269) widened the txid of the /pix endpoints to {1,35} for static "
          "BR Codes, but as an allOf that cannot widen")
def _fix_get_pix_txid(spec):
    _replace(spec, _query_param(spec, "/pix", "get", "txid") + "/schema", _TXID_ALLOF, _TXID_1_35)
    _replace(spec, "/components/schemas/ParametrosConsultaPix/properties/txid", _TXID_ALLOF, _TXID_1_35)


@_erratum("PessoaFisica.cpf (a charge's devedor) and ParametrosConsultaPix.cpf (GET /pix's cpf echoed "
          "back): the pattern /^\\d{11}$/ is read ^\\d{11}$",
          "the same regex literal as GET /pix's cpf; no devedor with a CPF validated (examples "
          "cobBody3, cobResponse3)")
def _fix_cpf_elsewhere(spec):
    for ptr in ("/components/schemas/PessoaFisica/properties/cpf/pattern",
                "/components/schemas/ParametrosConsultaPix/properties/cpf/pattern"):
        _replace(spec, ptr, _CPF_SLASHES, _CPF)


@_erratum("CobValor.retirada and CobPayloadValor.retirada: oneOf [{saque}, {troco}] with each branch "
          "requiring its own key (saque, troco)",
          "neither branch requires its key, so every retirada matches both and oneOf refuses them all "
          "(examples cobBody6, cobBody8, cobBody9, cobResponse5-7)")
def _fix_retirada(spec):
    for name in ("CobValor", "CobPayloadValor"):
        branches = _pointer(spec, "/components/schemas/%s/properties/retirada/oneOf" % name)
        keys = [list(b.get("properties", {})) for b in branches]
        if keys != [["saque"], ["troco"]] or any("required" in b for b in branches):
            raise ErratumGone("erratum %s.retirada: the oneOf is no longer [saque, troco] without "
                              "required" % name)
        for b, k in zip(branches, keys):
            b["required"] = k


@_erratum("PayloadLocationCob (the loc of CobSolicitada, CobRevisada): `required` lists `tipoCob`, "
          "which it does not define; only `id` is required",
          "a request names an existing location by its id; every example's loc is {id} alone "
          "(cobBody3)")
def _fix_payload_location_cob(spec):
    _replace(spec, "/components/schemas/PayloadLocationCob/required", ["id", "tipoCob"], ["id"])


@_erratum("CobGerada.loc: `required` lists `txid`, which PayloadLocation does not define; the list is "
          "id, tipoCob, criacao",
          "PayloadLocation defines no txid (the charge's own txid is beside loc); every example's "
          "loc lacks it (cobResponse1-7)")
def _fix_cob_gerada_loc(spec):
    ptr = "/components/schemas/CobGerada/allOf/2/properties/loc/required"
    _replace(spec, ptr, ["id", "txid", "tipoCob", "criacao"], ["id", "tipoCob", "criacao"])


@_erratum("CobVGerada.loc: `required` lists `txid`, which PayloadLocation does not define, as CobGerada.loc",
          "the same fault as CobGerada's; the example cobResponse4's loc lacks it")
def _fix_cobv_gerada_loc(spec):
    ptr = "/components/schemas/CobVGerada/allOf/3/properties/loc/required"
    _replace(spec, ptr, ["id", "txid", "tipoCob", "criacao"], ["id", "tipoCob", "criacao"])


@_erratum("DadosRecebedor: `required` (logradouro, cidade, uf, cep) at the level of the charge, beside "
          "`recebedor`, where it does not define them; recebedor's own allOf requires them already",
          "a CobVGerada (cobResponse4) would need an address of its own beside recebedor's")
def _fix_dados_recebedor(spec):
    ptr = "/components/schemas/DadosRecebedor"
    node = _pointer(spec, ptr)
    if node.get("required") != ["logradouro", "cidade", "uf", "cep"] or "logradouro" in node["properties"]:
        raise ErratumGone("erratum DadosRecebedor: required is no longer the address beside recebedor")
    del node["required"]


@_erratum("CobGerada.location and PayloadLocation.location: `format: uri` is not checked (maxLength 77 "
          "still is)",
          "a location is the BR Code's URL without a scheme (pix.example.com/qr/v2/...), as every "
          "example of the spec writes it, its own schema example included")
def _fix_location_format(spec):
    for ptr in ("/components/schemas/CobGerada/allOf/3/properties/location",
                "/components/schemas/PayloadLocation/properties/location"):
        node = _pointer(spec, ptr)
        if node.get("format") != "uri" or "://" in node.get("example", "://"):
            raise ErratumGone("erratum %s: no longer format uri with a scheme-less example" % ptr)
        del node["format"]


@_erratum("WebhookCompleto: `chave` (string, maxLength 77) required in place of `cnpj`, as up to 2.6.3",
          "2.7.0-RC1 put a cnpj with a query filter's description in place of the webhook's key; the "
          "webhook is per chave, as its example webhookResponse1 shows")
def _fix_webhook_completo(spec):
    ptr = "/components/schemas/WebhookCompleto"
    _replace(spec, ptr + "/required", ["webhookUrl", "cnpj", "criacao"], ["webhookUrl", "chave", "criacao"])
    props = _pointer(spec, ptr + "/properties")
    if "chave" in props or props.get("cnpj", {}).get("pattern") != "^[0-9A-Z]{14}$":
        raise ErratumGone("erratum WebhookCompleto: cnpj no longer where chave was")
    del props["cnpj"]
    props["chave"] = {"type": "string", "title": "Chave DICT do recebedor", "maxLength": 77}


# The errata of Pix Automático's schemas (recurrences), found validating the requests and
# answers of POST /locrec, POST /rec, GET /rec/{idRec} and the /rec callback.

@_erratum("RecBase: `required` lists `idRec` and `retentativa`; only `calendario` and `vinculo` are "
          "required",
          "`idRec` is not a property of RecBase (a request, RecSolicitada, has none: the bank makes "
          "it) and `retentativa` is no property at all (the policy is RecConfiguracao's "
          "`politicaRetentativa`); examples recBody1 and recBody2 have neither")
def _fix_rec_base(spec):
    _replace(spec, "/components/schemas/RecBase/required", ["idRec", "calendario", "vinculo", "retentativa"],
             ["calendario", "vinculo"])


@_erratum("PessoaFisicaRecorrencia.cpf and CPF.cpf (a recurrence's devedor and pagador): the pattern "
          "/^\\d{11}$/ is read ^\\d{11}$",
          "the same regex literal as GET /pix's cpf: no payer with a CPF validates (example recBody1)")
def _fix_cpf_recurrence(spec):
    for ptr in ("/components/schemas/PessoaFisicaRecorrencia/properties/cpf/pattern",
                "/components/schemas/CPF/properties/cpf/pattern"):
        _replace(spec, ptr, _CPF_SLASHES, _CPF)


@_erratum("PayloadLocationRecGerada: `required` lists `tipo`, which it does not define; the list is id, "
          "location, criacao; and its location's `format: uri` is not checked (maxLength 77 still is)",
          "example payloadLocationRecResponse2 has no tipo; a location is a URL without its scheme "
          "(pix.example.com/qr/v2/rec/...), as the schema's own example writes it")
def _fix_payload_location_rec(spec):
    ptr = "/components/schemas/PayloadLocationRecGerada"
    _replace(spec, ptr + "/required", ["id", "location", "tipo", "criacao"], ["id", "location", "criacao"])
    node = _pointer(spec, ptr + "/properties/location")
    if node.get("format") != "uri" or "://" in node.get("example", "://"):
        raise ErratumGone("erratum PayloadLocationRecGerada.location: no longer format uri")
    del node["format"]


@_erratum("DadosPagadorRec (RecCompleta's pagador): `required: [ispbParticipante]` at its top level is "
          "read inside `pagador`, where ispbParticipante is defined",
          "at the top level it makes every recurrence, also one no payer approved yet, need a field "
          "that belongs to the payer (examples recResponse3-8 carry it in pagador)")
def _fix_dados_pagador_rec(spec):
    ptr = "/components/schemas/DadosPagadorRec"
    _replace(spec, ptr + "/required", ["ispbParticipante"], [])
    del _pointer(spec, ptr)["required"]
    first = _pointer(spec, ptr + "/properties/pagador/allOf/0")
    if "ispbParticipante" not in first.get("properties", {}):
        raise ErratumGone("erratum DadosPagadorRec: pagador no longer defines ispbParticipante")
    first["required"] = ["ispbParticipante"]


@_erratum("RecEncerramento.encerramento: oneOf [{rejeicao}, {cancelamento}] with each branch requiring "
          "its own key",
          "neither branch requires its key, so every encerramento matches both and oneOf refuses them "
          "all (as CobValor.retirada)")
def _fix_rec_encerramento(spec):
    branches = _pointer(spec, "/components/schemas/RecEncerramento/properties/encerramento/oneOf")
    keys = [list(b.get("properties", {})) for b in branches]
    if keys != [["rejeicao"], ["cancelamento"]] or any("required" in b for b in branches):
        raise ErratumGone("erratum RecEncerramento: the oneOf is no longer [rejeicao, cancelamento] "
                          "without required")
    for b, k in zip(branches, keys):
        b["required"] = k


@_erratum("RecNotification: `required` lists `atualizacao\"` (a stray quote of the YAML); it is "
          "`atualizacao`",
          "no object has a key with a quote in it: taken literally no /rec callback validates")
def _fix_rec_notification(spec):
    _replace(spec, "/components/schemas/RecNotification/required", ["idRec", "status", 'atualizacao"'],
             ["idRec", "status", "atualizacao"])


@_erratum("CobRAtualizacao.encerramento: oneOf [{cancelamento}, {rejeicao}] with each branch requiring "
          "its own key",
          "neither branch requires its key, so every encerramento of a recurring charge matches both and "
          "oneOf refuses them all (as RecEncerramento.encerramento)")
def _fix_cobr_encerramento(spec):
    branches = _pointer(spec, "/components/schemas/CobRAtualizacao/properties/encerramento/oneOf")
    keys = [list(b.get("properties", {})) for b in branches]
    if keys != [["cancelamento"], ["rejeicao"]] or any("required" in b for b in branches):
        raise ErratumGone("erratum CobRAtualizacao: the oneOf is no longer [cancelamento, rejeicao] "
                          "without required")
    for b, k in zip(branches, keys):
        b["required"] = k


@_erratum("PixAutomatico.valor: a string (`\\d{1,10}\\.\\d{2}`) that must also match anyOf five object "
          "schemas (PixValorOriginal, ...Juros, ...Multa, ...Abatimento, ...Desconto); the anyOf is dropped",
          "no value is both a string and an object: taken literally no Pix of a recurring charge (a /cobr "
          "callback's pix[], GET /cobr's) validates; the parts are Pix.componentesValor's")
def _fix_pix_automatico_valor(spec):
    valor = _pointer(spec, "/components/schemas/PixAutomatico/properties/valor")
    if valor.get("type") != "string" or len(valor.get("anyOf", [])) != 5:
        raise ErratumGone("erratum PixAutomatico.valor: no longer a string with an anyOf of five")
    del valor["anyOf"]


# Examples: example() gives them as the spec has them, example_fixed() with
# these fixes. The schemas are the contract; an example that contradicts a
# coherent schema is what is fixed.

@_erratum("examples pixResponse2, pixResponse3: `endToEndId` of 34 characters; example_fixed() keeps the "
          "first 32",
          "an EndToEndId is exactly 32 characters (E, ISPB, yyyyMMddHHmm, 11 characters)",
          examples=["pixResponse2", "pixResponse3"])
def _fix_e2e_length(value):
    if len(value.get("endToEndId", "")) != 34:
        raise ErratumGone("erratum: the example's endToEndId is no longer 34 characters")
    value["endToEndId"] = value["endToEndId"][:32]
    return value


def _compose(item, target=None):
    """An array item written {"allOf": [{"$ref": "#/components/examples/X/value"}]}: the example
    X (fixed), or `target` in its place."""
    if not (isinstance(item, dict) and list(item) == ["allOf"] and len(item["allOf"]) == 1
            and list(item["allOf"][0]) == ["$ref"]):
        raise ErratumGone("erratum: the example's item is no longer an allOf $ref: %r" % (item,))
    ref = item["allOf"][0]["$ref"]
    m = re.fullmatch(r"#/components/examples/([^/]+)(/value)?", ref)
    if not m:
        raise ErratumGone("erratum: unexpected $ref %s" % ref)
    return example_fixed(target or m[1])


@_erratum("example getPix1: each of `pix` is {allOf: [{$ref: .../pixResponseN/value}]}; example_fixed() "
          "puts the (fixed) example pixResponseN there",
          "an example's value is literal JSON: OpenAPI resolves no $ref or allOf in it",
          examples=["getPix1"])
def _fix_get_pix1(value):
    value["pix"] = [_compose(item) for item in value["pix"]]
    return value


@_erratum("example getWebhook1: `webhooks` holds {allOf: [{$ref: .../recWebhookResponse1}]}; "
          "example_fixed() puts webhookResponse1's value there",
          "besides the unresolved $ref, it names a recurrence webhook's example object, not a Pix "
          "webhook's value",
          examples=["getWebhook1"])
def _fix_get_webhook1(value):
    if value["webhooks"] != [{"allOf": [{"$ref": "#/components/examples/recWebhookResponse1"}]}]:
        raise ErratumGone("erratum getWebhook1: webhooks changed")
    value["webhooks"] = [_compose(value["webhooks"][0], "webhookResponse1")]
    return value


@_erratum("examples cobBody6, cobBody8, cobBody9: no `calendario`, which CobSolicitada requires; "
          "example_fixed() adds {expiracao: 86400}, the default the schema states",
          "CobSolicitada requires it (its expiracao has a default); these Pix Saque/Troco "
          "examples leave it out, cobBody2 has it",
          examples=["cobBody6", "cobBody8", "cobBody9"])
def _fix_cob_calendario(value):
    if "calendario" in value:
        raise ErratumGone("erratum: the example has a calendario now")
    value["calendario"] = {"expiracao": 86400}
    return value


@_erratum("examples cobResponse1, 2, 3, 5, 6, 7: `loc` without `criacao` (and cobResponse2's without "
          "`tipoCob`), which CobGerada.loc requires; example_fixed() adds the charge's calendario.criacao "
          "and tipoCob cob",
          "PayloadLocation and CobGerada.loc both require them; an immediate charge's location is of "
          "type cob",
          examples=["cobResponse1", "cobResponse2", "cobResponse3", "cobResponse5", "cobResponse6",
                    "cobResponse7"])
def _fix_cob_loc(value):
    loc = value.get("loc", {})
    if "criacao" in loc:
        raise ErratumGone("erratum: the example's loc has a criacao now")
    loc["criacao"] = value["calendario"]["criacao"]
    loc.setdefault("tipoCob", "cob")
    return value


# ---------------------------------------------------------------------------
# OpenAPI 3.0 Schema Object -> JSON Schema draft 4.

_ASSERTIONS = {"type", "enum", "format", "pattern", "multipleOf", "maximum", "exclusiveMaximum",
               "minimum", "exclusiveMinimum", "maxLength", "minLength", "maxItems", "minItems",
               "uniqueItems", "maxProperties", "minProperties", "required"}
_ANNOTATIONS = {"title", "description", "default", "example", "readOnly", "writeOnly",
                "deprecated", "xml", "externalDocs", "discriminator"}


class _Converter:
    def __init__(self, spec):
        self.spec = spec
        self.done = {}
        self.busy = []

    def ref(self, ref):
        if not ref.startswith("#/"):
            raise ValueError("only references within the file are supported: %s" % ref)
        if ref in self.done:
            return self.done[ref]
        if ref in self.busy:
            raise ValueError("recursive schema reference not supported: %s" % " -> ".join(
                self.busy + [ref]))
        self.busy.append(ref)
        try:
            out = self.schema(_pointer(self.spec, ref[1:]), ref)
        finally:
            self.busy.pop()
        self.done[ref] = out
        return out

    def schema(self, s, where):
        if not isinstance(s, dict):
            raise ValueError("%s: a schema must be an object, not %r" % (where, s))
        if "$ref" in s:
            # OpenAPI 3.0: a $ref's siblings are ignored
            return self.ref(s["$ref"])
        out = {}
        for k, v in s.items():
            if k in _ASSERTIONS:
                out[k] = copy.deepcopy(v)
            elif k in ("allOf", "anyOf", "oneOf"):
                out[k] = [self.schema(x, "%s/%s/%d" % (where, k, i)) for i, x in enumerate(v)]
            elif k in ("not", "items"):
                out[k] = self.schema(v, "%s/%s" % (where, k))
            elif k == "additionalProperties":
                out[k] = v if isinstance(v, bool) else self.schema(v, where + "/" + k)
            elif k == "properties":
                out[k] = {n: self.schema(x, "%s/properties/%s" % (where, n)) for n, x in v.items()}
            elif k == "nullable" or k in _ANNOTATIONS or k.startswith("x-"):
                pass
            else:
                raise ValueError("%s: schema keyword %r is not OpenAPI 3.0" % (where, k))
        if s.get("nullable") is True and isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = out["enum"] + [None]
        return out


@functools.lru_cache(maxsize=None)
def _fixed_spec():
    spec = copy.deepcopy(raw_spec())
    for fix in _SPEC_FIXES:
        fix(spec)
    return spec


@functools.lru_cache(maxsize=None)
def _converter():
    return _Converter(_fixed_spec())


def schema(name):
    """The JSON Schema (draft 4) of components.schemas[name], errata applied,
    $ref resolved. KeyError when the spec has no such schema."""
    if name not in _fixed_spec()["components"]["schemas"]:
        raise KeyError("the API Pix spec has no components.schemas.%s" % name)
    return _converter().ref("#/components/schemas/" + _ptr_escape(name))


def webhook_body_schema():
    """The JSON Schema of components.requestBodies.WebhookPixBody."""
    return _converter().ref("#/components/requestBodies/WebhookPixBody/content/application~1json/schema")


# ---------------------------------------------------------------------------
# Formats and patterns. Unknown formats are annotations (JSON Schema); a
# format applies to strings (or, int32/int64, to integers) only.

_FORMATS = jsonschema.FormatChecker(formats=())
_DATE_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?"
                        r"([Zz]|[+-](\d{2}):(\d{2}))", re.ASCII)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f]*", re.ASCII)


@_FORMATS.checks("date-time")
def _is_date_time(v):
    """RFC 3339 section 5.6: a full date, T, a full time with its offset."""
    if not isinstance(v, str):
        return True
    m = _DATE_TIME.fullmatch(v)
    if not m:
        return False
    try:
        datetime.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]),
                          min(int(m[6]), 59))   # 60: a leap second
    except ValueError:
        return False
    return int(m[6]) <= 60 and (m[9] is None or (int(m[9]) <= 23 and int(m[10]) <= 59))


@_FORMATS.checks("date")
def _is_date(v):
    """RFC 3339 full-date."""
    return not isinstance(v, str) or (bool(_DATE.fullmatch(v)) and _is_date_time(v + "T00:00:00Z"))


@_FORMATS.checks("uri")
def _is_uri(v):
    """RFC 3986 absolute URI: a scheme, a colon, no space or control."""
    return not isinstance(v, str) or bool(_URI.fullmatch(v))


@_FORMATS.checks("int32")
def _is_int32(v):
    return not isinstance(v, int) or isinstance(v, bool) or -2**31 <= v < 2**31


@_FORMATS.checks("int64")
def _is_int64(v):
    return not isinstance(v, int) or isinstance(v, bool) or -2**63 <= v < 2**63


@functools.lru_cache(maxsize=None)
def _ecma_regex(pattern):
    """Python's re with ECMA-262 meaning for the spec's patterns: \\d, \\w
    ASCII only (re.ASCII), and $ outside a class the end of the string only
    (Python's $ also matches before a final newline)."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return re.compile("".join(out), re.ASCII)


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not _ecma_regex(pattern).search(instance):
        yield jsonschema.ValidationError("%r does not match %r" % (instance, pattern))


_Validator = jsonschema.validators.extend(jsonschema.Draft4Validator, {"pattern": _pattern})


# ---------------------------------------------------------------------------
# Validation and its messages.

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def json_path(parts, root="$"):
    """$.pix[0].devolucoes from the keys and indexes of a path."""
    out = root
    for p in parts:
        if isinstance(p, int):
            out += "[%d]" % p
        elif _IDENT.fullmatch(p):
            out += "." + p
        else:
            out += "[%s]" % json.dumps(p, ensure_ascii=False)
    return out


def _short(text, limit=300):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _reason(err):
    """jsonschema's message, but a oneOf/anyOf names the first fault of each
    branch instead of printing the whole instance."""
    if err.validator in ("oneOf", "anyOf") and err.context:
        first = {}
        for sub in sorted(err.context, key=lambda e: (json_path(e.absolute_path), e.message)):
            first.setdefault(sub.schema_path[0], sub)
        return _short("matches none of the %d branches of %s: %s" % (
            len(err.validator_value), err.validator, "; ".join(
                "[%d] %s: %s" % (i, json_path(s.absolute_path), _short(s.message, 120))
                for i, s in sorted(first.items()))), 500)
    if err.validator == "oneOf":
        return "matches more than one branch of oneOf"
    return _short(err.message)


def _check(subject, json_schema, instance):
    if isinstance(instance, (bytes, bytearray)):
        try:
            instance = json.loads(instance)
        except ValueError as e:
            raise SpecViolation(subject, [("$", "not JSON: %s" % e)]) from None
    errors = sorted({(json_path(e.absolute_path), _reason(e))
                     for e in _Validator(json_schema, format_checker=_FORMATS).iter_errors(instance)})
    if errors:
        raise SpecViolation(subject, errors)
    return instance


def validate(schema_name, instance):
    """Check `instance` (a decoded JSON value, or bytes of JSON) against
    components.schemas[schema_name] with the errata applied. Returns the
    decoded instance; raises SpecViolation listing every fault, KeyError for
    an unknown schema name."""
    return _check(schema_name, schema(schema_name), instance)


def validate_webhook_body(body):
    """Check the body a bank POSTs to {webhookUrl}/pix, {"pix": [Pix, ...]}
    (components.requestBodies.WebhookPixBody). As the spec has it, the body's
    schema has no `type` and no `required`: only `pix`, when present, is
    checked. Returns the decoded body; raises SpecViolation."""
    return _check("WebhookPixBody", webhook_body_schema(), body)


# ---------------------------------------------------------------------------
# Query parameters.

def _operation(path, method):
    """(template, operation, path item) for a template such as /pix/{e2eid}
    or a concrete path such as /pix/E1234..."""
    paths = _fixed_spec()["paths"]
    method = method.lower()
    template = path if path in paths else None
    if template is None:
        for t in paths:
            rx = "".join("[^/]+" if part.startswith("{") else re.escape(part)
                         for part in re.split(r"(\{[^}]*\})", t))
            if re.fullmatch(rx, path):
                template = t
                break
    if template is None or method not in paths[template]:
        raise KeyError("the API Pix spec has no operation %s %s" % (method.upper(), path))
    return template, paths[template][method], paths[template]


def _parameters(item, op):
    """The parameters of an operation, those of its path item included,
    $ref resolved, keyed by (in, name)."""
    out = {}
    for p in item.get("parameters", []) + op.get("parameters", []):
        if "$ref" in p:
            p = _pointer(_fixed_spec(), p["$ref"][1:])
        out[(p["in"], p["name"])] = p
    return out


def _schema_type(s):
    if "type" in s:
        return s["type"]
    for sub in s.get("allOf", []):
        t = _schema_type(sub)
        if t:
            return t
    return None


def _coerce(text, typ):
    """A query string's text as the value its schema's type describes; text
    that is not such a value stays text, so the type check names it."""
    if typ == "integer" and re.fullmatch(r"-?[0-9]+", text, re.ASCII):
        return int(text)
    if typ == "number":
        try:
            return float(text)
        except ValueError:
            return text
    if typ == "boolean" and text in ("true", "false"):
        return text == "true"
    return text


def validate_query(path, method, params, allow_unknown=False):
    """Check the query parameters of a request to the API Pix, e.g. GET /pix.
    `path` is a spec path (/pix) or a concrete one (/pix/E123...), without
    the PSP's base URL; `params` a dict name -> text (or list of texts when
    repeated), or a raw query string. Every required parameter must be
    there, each value must fit its schema (texts read as integer or boolean
    first), a parameter must not repeat, and, unless allow_unknown, every
    name must be a query parameter of the operation. Returns the values as
    read; raises SpecViolation with paths such as ?cpf, KeyError for an
    operation the spec does not have."""
    template, op, item = _operation(path, method)
    subject = "%s %s query" % (method.upper(), template)
    if isinstance(params, str):
        params = urllib.parse.parse_qs(params, keep_blank_values=True)
    declared = {name: p for (where, name), p in _parameters(item, op).items() if where == "query"}
    errors, values = [], {}
    for name, given in params.items():
        texts = given if isinstance(given, (list, tuple)) else [given]
        if name not in declared:
            if not allow_unknown:
                errors.append(("?" + name, "not a query parameter of %s %s" % (method.upper(), template)))
            continue
        if len(texts) != 1:
            errors.append(("?" + name, "given %d times; it is not an array" % len(texts)))
            continue
        s = _converter().schema(declared[name].get("schema", {}), "query " + name)
        value = _coerce(str(texts[0]), _schema_type(s))
        for e in _Validator(s, format_checker=_FORMATS).iter_errors(value):
            errors.append(("?" + name, _reason(e)))
        values[name] = value
    for name, p in declared.items():
        if p.get("required") and name not in params:
            errors.append(("?" + name, "required query parameter is missing"))
    if errors:
        raise SpecViolation(subject, sorted(set(errors)))
    return values


# ---------------------------------------------------------------------------
# Examples.

def example(name):
    """components.examples[name].value exactly as the spec has it (a copy).
    KeyError when there is no such example."""
    examples = raw_spec()["components"]["examples"]
    if name not in examples:
        raise KeyError("the API Pix spec has no components.examples.%s" % name)
    return copy.deepcopy(examples[name]["value"])


def example_fixed(name):
    """example(name) with the errata of that example (see ERRATA) fixed; the
    same as example(name) for an example without one."""
    value = example(name)
    for fix in _EXAMPLE_FIXES.get(name, []):
        value = fix(value)
    return value


def check_errata():
    """Apply every erratum once (the spec fixes, and each example fix on its
    example): raises ErratumGone when one no longer finds its fault."""
    _fixed_spec()
    for name in _EXAMPLE_FIXES:
        example_fixed(name)
