"""Mercado Pago's published shapes as checks for the tests' own Mercado Pago (testmp.py).

The shapes are the TypeScript types of Mercado Pago's Node.js SDK, vendored in
tests/vendor/mercadopago/ (MIT, mercadopago/sdk-nodejs at 4339894, see the
NOTICE there) and read from there only: a small reader of the SDK's
`export declare type|interface Name [extends Base] {...}` declarations (field
`name?: type`, unions, string literals, Array<T>, T[], imports between files)
turns them into checks:

    check("PaymentCreateRequest", obj)   [(path, reason)]: fields not in the type
                                         ("not a field of ...") and wrong types
    fields("PaymentSearchResult")        the field names a type declares
    declared_query("PaymentSearchOptions")  {name: type text} of a query's own fields

    src/clients/payment/create/types.ts       PaymentCreateRequest, PayerRequest
    src/clients/payment/commonTypes.ts        PaymentResponse, TransactionData, ...
    src/clients/payment/search/types.ts       PaymentSearchOptions, PaymentSearch
    src/clients/paymentRefund/create/types.ts CreateRefundBody
    src/clients/paymentRefund/commonTypes.ts  RefundResponse

Rules of the reading, each a choice where TypeScript says more or less than JSON:
  - a field marked optional (`?:`) or not is optional here: the SDK's markers
    are not a contract (search/types.ts's Payer has `id: string` required, the
    PaymentResponse's Payer the same field optional); what Mercado Pago
    requires of a Pix payment is checked by testmp.py as a rule (MP-PIX);
  - a field's value may not be null (TypeScript's `?:` admits none);
  - `number` is any JSON number, `any` and `unknown` anything; a type the
    vendored files do not declare (MercadoPagoConfig) is anything;
  - `api_response` (ApiResponse) is what the SDK adds to an answer, not a
    field of Mercado Pago's JSON: it is not expected and not allowed.
Where the types are wrong, the fix is one entry of ERRATA (what, why), applied
in code; an erratum that no longer finds its fault raises ErratumGone.
"""
import functools
import os
import re

VENDOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vendor", "mercadopago")
SDK_ONLY = {"api_response"}


class ErratumGone(Exception):
    """An erratum whose fault the vendored types no longer have."""


_DECL = re.compile(r"export\s+(?:declare\s+)?(?:type|interface)\s+(\w+)(?:\s+extends\s+(\w+))?\s*=?\s*\{")
_IMPORT = re.compile(r"import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'")


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(?m)^\s*//.*$", "", text)


def _split_top(text, seps):
    """Split on any of `seps` outside <>, {}, (), [] and quotes."""
    out, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "<{([":
            depth += 1
        elif ch in ">})]":
            depth -= 1
        elif depth == 0 and ch in seps:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]


def _body_end(text, start):
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced braces")


class _File:
    """One vendored .ts file: its declarations {name: (base, {field: type
    text}, index type text or None)} and its imports {name: file path}."""

    def __init__(self, path):
        self.path = path
        with open(path, encoding="utf-8") as f:
            text = _strip_comments(f.read())
        self.imports = {}
        for names, source in _IMPORT.findall(text):
            target = _resolve(path, source)
            for n in names.split(","):
                if n.strip():
                    self.imports[n.strip()] = target
        self.decls = {}
        for m in _DECL.finditer(text):
            end = _body_end(text, m.end() - 1)
            members, index = {}, None
            for member in _split_top(text[m.end():end], ";,\n"):
                if member.startswith("["):
                    index = member.split("]:", 1)[1].strip()
                    continue
                name, _, typ = member.partition(":")
                members[name.strip().rstrip("?").strip()] = typ.strip()
            self.decls[m.group(1)] = (m.group(2), members, index)


def _resolve(path, source):
    if source.startswith("@src/"):
        base = os.path.join(VENDOR, "src", source[len("@src/"):])
    elif source.startswith("@utils/"):
        base = os.path.join(VENDOR, "src", "utils", source[len("@utils/"):])
    else:
        base = os.path.normpath(os.path.join(os.path.dirname(path), source))
    return base + ".ts"


@functools.lru_cache(maxsize=None)
def _file(path):
    return _File(path) if os.path.exists(path) else None


# Where each checked type lives; the types they use are found through the
# files' declarations and imports.
ROOTS = {
    "PaymentCreateRequest": "src/clients/payment/create/types.ts",
    "PaymentResponse": "src/clients/payment/commonTypes.ts",
    "PaymentSearchOptions": "src/clients/payment/search/types.ts",
    "PaymentSearch": "src/clients/payment/search/types.ts",
    "PaymentSearchResult": "src/clients/payment/search/types.ts",
    "CreateRefundBody": "src/clients/paymentRefund/create/types.ts",
    "RefundResponse": "src/clients/paymentRefund/commonTypes.ts",
}


def _lookup(path, name):
    """(file, declaration) of `name` as seen from the file at `path`; None
    when the vendored files do not declare it."""
    f = _file(path)
    if f is None:
        return None
    if name in f.decls:
        return f, f.decls[name]
    if name in f.imports:
        return _lookup(f.imports[name], name)
    return None


# ---------------------------------------------------------------------------
# Errata: (type, field) -> corrected type text

ERRATA = []
_OVERRIDES = {}


def _erratum(type_name, field, faulty, fixed, why):
    path = os.path.join(VENDOR, ROOTS.get(type_name, "src/clients/payment/search/types.ts"))
    found = _lookup(path, type_name)
    have = found[1][1].get(field) if found else None
    if have != faulty:
        raise ErratumGone("erratum %s.%s: expected %r, the SDK has %r" % (type_name, field, faulty, have))
    ERRATA.append(("%s.%s is %s, not %s" % (type_name, field, fixed, faulty), why))
    _OVERRIDES[(type_name, field)] = fixed


_erratum("PaymentSearchResult", "id", "string", "number",
         "the same payment's PaymentResponse.id is a number, and search results are payments "
         "(GET /v1/payments/{id} takes the id a search gives)")
_erratum("PaymentSearchResult", "collector_id", "string", "number",
         "PaymentResponse.collector_id is a number: the same account")
_erratum("PaymentSearchResult", "sponsor_id", "string", "number", "PaymentResponse.sponsor_id is a number")


# ---------------------------------------------------------------------------
# Checking

def _members(path, name):
    """{field: (type text, file path)} of a declaration with its bases, and
    the index signature's type (or None); None when undeclared."""
    found = _lookup(path, name)
    if found is None:
        return None
    f, (base, members, index) = found
    out = {}
    if base:
        got = _members(f.path, base)
        if got is not None:
            out.update(got[0])
            index = index or got[1]
    for k, t in members.items():
        out[k] = (_OVERRIDES.get((name, k), t), f.path)
    for k in SDK_ONLY:
        out.pop(k, None)
    return out, index


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check(value, typ, path, where, errors):
    alts = _split_top(typ, "|")
    if len(alts) > 1:
        trial = []
        for alt in alts:
            sub = []
            _check(value, alt, path, where, sub)
            if not sub:
                return
            trial.append(sub)
        errors.append((where, "not %s" % typ))
        return
    t = alts[0]
    if t in ("any", "unknown"):
        return
    if value is None:
        errors.append((where, "null (leave the field out)"))
        return
    if t == "string":
        if not isinstance(value, str):
            errors.append((where, "not a string"))
    elif t == "number":
        if not _is_number(value):
            errors.append((where, "not a number"))
    elif t == "boolean":
        if not isinstance(value, bool):
            errors.append((where, "not a boolean"))
    elif t[0] in "'\"":
        if value != t[1:-1]:
            errors.append((where, "not %s" % t))
    elif t.startswith("Array<") or t.endswith("[]"):
        inner = t[6:-1] if t.startswith("Array<") else t[:-2]
        if not isinstance(value, list):
            errors.append((where, "not an array"))
            return
        for i, item in enumerate(value):
            _check(item, inner, path, "%s[%d]" % (where, i), errors)
    elif re.fullmatch(r"\w+", t):
        got = _members(path, t)
        if got is None:
            return   # declared outside the vendored files: anything
        if not isinstance(value, dict):
            errors.append((where, "not an object (%s)" % t))
            return
        members, index = got
        for k, v in value.items():
            if k in members:
                _check(v, members[k][0], members[k][1], "%s.%s" % (where, k), errors)
            elif index is not None:
                _check(v, index, path, "%s.%s" % (where, k), errors)
            else:
                errors.append(("%s.%s" % (where, k), "not a field of %s" % t))
    # tuples, functions and the like: not checked


def check(type_name, value):
    """The faults of a decoded JSON value against the SDK type `type_name`
    (one of ROOTS): [(path, reason)], sorted; [] when none."""
    errors = []
    _check(value, type_name, os.path.join(VENDOR, ROOTS[type_name]), "$", errors)
    return sorted(set(errors))


def fields(type_name):
    """The field names the SDK type declares (with its bases)."""
    return set(_members(os.path.join(VENDOR, ROOTS[type_name]), type_name)[0])


def declared_query(type_name):
    """{name: type text} of a query type's own and inherited declared
    fields (its index signature left out)."""
    members, _ = _members(os.path.join(VENDOR, ROOTS[type_name]), type_name)
    return {k: t for k, (t, _) in members.items()}


def webhook_source():
    """The vendored validator's text (src/utils/webhook/index.ts)."""
    with open(os.path.join(VENDOR, "src", "utils", "webhook", "index.ts"), encoding="utf-8") as f:
        return f.read()
