#!/usr/bin/env python3
"""Check docs/openapi.yaml against the OpenAPI 3.0 rules and against the code.

usage: check_openapi.py [SOURCE_ROOT]

1. The document is valid OpenAPI 3.0: with openapi-spec-validator when it is
   installed (Debian's python3-openapi-spec-validator where the release has it,
   or pip's), and always with the structural checks below (references resolve,
   operations have responses, path parameters are declared, schema keywords
   are those of OpenAPI 3.0, ...), so the check still means something where
   the validator is not packaged (Debian bookworm).
2. Every route of the route table in src/api/api.c (`{HTTP_..., "/path",
   handler, flags}`) is in `paths` with its method, and `paths` has no
   operation that the table lacks: the document cannot fall behind the code.
   Path parameters may be named differently (`{id}` in the code,
   `{accountId}` here). GET /dashboard/ is the one route described in the
   operation of another path (DESCRIBED_UNDER: a trailing slash fails the
   linters).
   A route with HTTP_AUTH must require bearerAuth and document 401; a route
   without it must say `security: []`.
3. Every example of a request or response body matches its schema (with
   python3-jsonschema, when installed; OpenAPI's `nullable` is honoured).

Exits 0 with one line on success, 1 with the reasons on failure.
"""
import json
import os
import re
import sys

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
SCHEMA_KEYS = {
    "title", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "maxProperties", "minProperties", "required", "enum", "type", "allOf", "oneOf", "anyOf",
    "not", "items", "properties", "additionalProperties", "description", "format", "default",
    "nullable", "discriminator", "readOnly", "writeOnly", "xml", "externalDocs", "example",
    "deprecated", "$ref",
}
SCHEMA_TYPES = {"string", "number", "integer", "boolean", "array", "object"}
TOP_KEYS = {"openapi", "info", "servers", "paths", "components", "security", "tags",
            "externalDocs"}
PATH_ITEM_KEYS = set(METHODS) | {"$ref", "summary", "description", "servers", "parameters"}
OPERATION_KEYS = {"tags", "summary", "description", "externalDocs", "operationId",
                  "parameters", "requestBody", "responses", "callbacks", "deprecated",
                  "security", "servers"}

errors = []


def err(msg):
    errors.append(msg)


def finish_if_errors(what):
    if errors:
        print("check_openapi: docs/openapi.yaml %s:" % what, file=sys.stderr)
        for e in errors:
            print("  - " + e, file=sys.stderr)
        sys.exit(1)


def load(root):
    path = os.path.join(root, "docs", "openapi.yaml")
    try:
        import yaml
    except ImportError:
        print("check_openapi: PyYAML is missing (Debian: apt-get install python3-yaml)",
              file=sys.stderr)
        sys.exit(1)
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        print("check_openapi: cannot read %s: %s" % (path, e), file=sys.stderr)
        sys.exit(1)
    if not isinstance(doc, dict):
        print("check_openapi: %s is not a YAML mapping" % path, file=sys.stderr)
        sys.exit(1)
    # YAML reads unquoted 2026-01-01 as a date: the document must be plain JSON
    try:
        json.dumps(doc)
    except (TypeError, ValueError) as e:
        print("check_openapi: %s holds a value that is not JSON (quote dates and times): %s"
              % (path, e), file=sys.stderr)
        sys.exit(1)
    return doc


# ---- 1. OpenAPI validity ----

def external_validator(doc):
    """Run openapi-spec-validator if installed; returns its name and version, or None."""
    try:
        import openapi_spec_validator as osv
    except ImportError:
        return None
    version = getattr(osv, "__version__", "?")
    fn = getattr(osv, "validate", None)  # 0.6 and later
    if fn is None:
        fn = getattr(osv, "validate_spec", None)  # 0.5.x
    if fn is None:
        err("openapi-spec-validator %s has neither validate nor validate_spec" % version)
        return None
    try:
        fn(doc)
    except Exception as e:  # its error classes differ between versions
        # jsonschema-style errors repeat whole subtrees: keep the first line
        text = (getattr(e, "message", None) or str(e) or repr(e)).splitlines()[0]
        if len(text) > 400:
            text = text[:400] + "..."
        at = getattr(e, "json_path", None) or "/".join(str(p) for p in getattr(e, "path", []))
        err("openapi-spec-validator %s: %s%s" % (version, text, " (at %s)" % at if at else ""))
    return "openapi-spec-validator %s" % version


def resolve(doc, ref, where):
    if not isinstance(ref, str) or not ref.startswith("#/"):
        err("%s: only local references are used here, got %r" % (where, ref))
        return None
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            err("%s: $ref %s does not resolve" % (where, ref))
            return None
        node = node[part]
    return node


def deref(doc, node, where):
    seen = 0
    while isinstance(node, dict) and "$ref" in node:
        seen += 1
        if seen > 20:
            err("%s: $ref loop" % where)
            return None
        node = resolve(doc, node["$ref"], where)
    return node


def check_refs(doc, node, where):
    """Every $ref anywhere resolves."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                resolve(doc, v, where)
            elif k not in ("example", "examples", "default", "enum"):
                check_refs(doc, v, where + "/" + str(k))
            elif k == "examples" and isinstance(v, dict):
                for name, ex in v.items():
                    if isinstance(ex, dict) and "$ref" in ex:
                        resolve(doc, ex["$ref"], where + "/examples/" + name)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            check_refs(doc, v, "%s[%d]" % (where, i))


def check_schema(doc, s, where):
    if not isinstance(s, dict):
        err("%s: a schema must be a mapping" % where)
        return
    if "$ref" in s:
        if len([k for k in s if not k.startswith("x-")]) > 1:
            err("%s: keys beside $ref are ignored in OpenAPI 3.0 (use allOf)" % where)
        return
    for k in s:
        if k not in SCHEMA_KEYS and not k.startswith("x-"):
            err("%s: '%s' is not a keyword of an OpenAPI 3.0 schema" % (where, k))
    t = s.get("type")
    if t is not None and t not in SCHEMA_TYPES:
        err("%s: type %r is not an OpenAPI 3.0 type (use nullable: true for null)" % (where, t))
    if t == "array" and "items" not in s:
        err("%s: an array schema needs items" % where)
    if "nullable" in s and not isinstance(s["nullable"], bool):
        err("%s: nullable must be true or false" % where)
    if s.get("nullable") is True and t is None:
        # OpenAPI 3.0.3: nullable adds null to the type of its own schema
        # only; beside allOf/$ref it admits nothing (and linters refuse it)
        err("%s: nullable without a type (for a $ref that may be null, use anyOf with "
            "#/components/schemas/NullValue)" % where)
    if "required" in s:
        req = s["required"]
        if not isinstance(req, list) or not req or not all(isinstance(r, str) for r in req):
            err("%s: required must be a non-empty list of names" % where)
        elif isinstance(s.get("properties"), dict) and s.get("additionalProperties") is False:
            for r in req:
                if r not in s["properties"]:
                    err("%s: required '%s' is not among the properties" % (where, r))
    if "pattern" in s:
        try:
            re.compile(s["pattern"])
        except (re.error, TypeError) as e:
            err("%s: pattern %r does not compile: %s" % (where, s["pattern"], e))
    for k in ("allOf", "oneOf", "anyOf"):
        if k in s:
            if not isinstance(s[k], list) or not s[k]:
                err("%s: %s must be a non-empty list" % (where, k))
            else:
                for i, sub in enumerate(s[k]):
                    check_schema(doc, sub, "%s/%s[%d]" % (where, k, i))
    for k in ("not", "items"):
        if k in s:
            check_schema(doc, s[k], where + "/" + k)
    if isinstance(s.get("additionalProperties"), dict):
        check_schema(doc, s["additionalProperties"], where + "/additionalProperties")
    if "properties" in s:
        if not isinstance(s["properties"], dict):
            err("%s: properties must be a mapping" % where)
        else:
            for name, sub in s["properties"].items():
                check_schema(doc, sub, "%s/properties/%s" % (where, name))


def check_content(doc, content, where):
    if not isinstance(content, dict) or not content:
        err("%s: content must be a non-empty mapping of media types" % where)
        return
    for mt, m in content.items():
        if not isinstance(m, dict):
            err("%s/%s: must be a mapping" % (where, mt))
            continue
        if "schema" in m:
            check_schema(doc, m["schema"], "%s/%s/schema" % (where, mt))
        if "example" in m and "examples" in m:
            err("%s/%s: example and examples exclude each other" % (where, mt))
        for name, ex in (m.get("examples") or {}).items():
            ex = deref(doc, ex, where)
            if not isinstance(ex, dict) or ("value" not in ex and "externalValue" not in ex):
                err("%s/%s/examples/%s: needs a value" % (where, mt, name))


def check_parameter(doc, p, where):
    p = deref(doc, p, where)
    if not isinstance(p, dict):
        return None
    for k in ("name", "in"):
        if k not in p:
            err("%s: a parameter needs '%s'" % (where, k))
            return None
    if p["in"] not in ("query", "header", "path", "cookie"):
        err("%s: parameter %s: 'in' must be query, header, path or cookie" % (where, p["name"]))
    if p["in"] == "path" and p.get("required") is not True:
        err("%s: path parameter %s must have required: true" % (where, p["name"]))
    if ("schema" in p) == ("content" in p):
        err("%s: parameter %s needs exactly one of schema and content" % (where, p["name"]))
    if "schema" in p:
        check_schema(doc, p["schema"], "%s/%s/schema" % (where, p["name"]))
    return p


def check_structure(doc):
    v = doc.get("openapi")
    if not isinstance(v, str) or not re.match(r"^3\.0\.\d+$", v):
        err("openapi must be a 3.0.x version string, got %r" % (v,))
    for k in doc:
        if k not in TOP_KEYS and not k.startswith("x-"):
            err("unknown top-level key '%s'" % k)
    info = doc.get("info")
    if not isinstance(info, dict) or not isinstance(info.get("title"), str) or \
            not isinstance(info.get("version"), str):
        err("info needs a title and a version (strings)")
    paths = doc.get("paths")
    if not isinstance(paths, dict) or not paths:
        err("paths must be a non-empty mapping")
        return
    check_refs(doc, doc, "#")
    schemes = (doc.get("components") or {}).get("securitySchemes") or {}
    for name, s in ((doc.get("components") or {}).get("schemas") or {}).items():
        check_schema(doc, s, "components/schemas/" + name)
    op_ids = set()
    for path, item in paths.items():
        if not path.startswith("/"):
            err("path %r must start with /" % path)
        if not isinstance(item, dict):
            err("%s: must be a mapping" % path)
            continue
        for k in item:
            if k not in PATH_ITEM_KEYS and not k.startswith("x-"):
                err("%s: unknown key '%s'" % (path, k))
        common = [check_parameter(doc, p, path) for p in item.get("parameters", [])]
        template = set(re.findall(r"\{([^}]+)\}", path))
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            where = "%s %s" % (method.upper(), path)
            for k in op:
                if k not in OPERATION_KEYS and not k.startswith("x-"):
                    err("%s: unknown key '%s'" % (where, k))
            oid = op.get("operationId")
            if oid is not None:
                if oid in op_ids:
                    err("%s: operationId %s is used twice" % (where, oid))
                op_ids.add(oid)
            params = [check_parameter(doc, p, where) for p in op.get("parameters", [])]
            declared = {p["name"] for p in common + params if p and p.get("in") == "path"}
            for name in template - declared:
                err("%s: path parameter {%s} is not declared" % (where, name))
            for name in declared - template:
                err("%s: path parameter %s is not in the path" % (where, name))
            seen = set()
            for p in common + params:
                if p and (p["in"], p["name"].lower()) in seen and p not in common:
                    err("%s: parameter %s is declared twice" % (where, p["name"]))
                if p:
                    seen.add((p["in"], p["name"].lower()))
            if "requestBody" in op:
                rb = deref(doc, op["requestBody"], where)
                if isinstance(rb, dict):
                    check_content(doc, rb.get("content"), where + " requestBody")
            responses = op.get("responses")
            if not isinstance(responses, dict) or not responses:
                err("%s: needs at least one response" % where)
                continue
            for code, r in responses.items():
                code = str(code)
                if code != "default" and not re.match(r"^[1-5]([0-9]{2}|XX)$", code):
                    err("%s: response key %s is not an HTTP status" % (where, code))
                r = deref(doc, r, "%s %s" % (where, code))
                if not isinstance(r, dict):
                    continue
                if not isinstance(r.get("description"), str):
                    err("%s %s: a response needs a description" % (where, code))
                if "content" in r:
                    check_content(doc, r["content"], "%s %s" % (where, code))
            for req in op.get("security", doc.get("security", [])) or []:
                for name in req:
                    if name not in schemes:
                        err("%s: security scheme %s is not in components" % (where, name))


# ---- 2. the route table of src/api/api.c ----

def code_routes(root):
    path = os.path.join(root, "src", "api", "api.c")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        print("check_openapi: cannot read %s: %s" % (path, e), file=sys.stderr)
        sys.exit(1)
    m = re.search(r"api_routes\s*\[\s*\]\s*=\s*\{(.*?)\n\s*\}\s*;", text, re.S)
    if not m:
        print("check_openapi: cannot find the route table api_routes[] in %s" % path,
              file=sys.stderr)
        sys.exit(1)
    table = re.sub(r"/\*.*?\*/|//[^\n]*", "", m.group(1), flags=re.S)
    routes = re.findall(
        r"\{\s*HTTP_([A-Z]+)\s*,\s*\"([^\"]*)\"\s*,\s*\w+\s*,\s*([^{}]*?)\s*\}", table)
    if not routes:
        print("check_openapi: no {HTTP_..., \"/path\", ...} entry in api_routes[] of %s"
              % path, file=sys.stderr)
        sys.exit(1)
    return [(method.lower(), p, set(re.findall(r"HTTP_[A-Z_]+", flags)))
            for method, p, flags in routes]


# Routes described in the operation of another path. Both linters
# (lint_openapi.py) refuse a path ending in "/" (redocly no-path-trailing-slash,
# spectral path-keys-no-trailing-slash), yet the dashboard's page must be
# GET /dashboard/ (its relative links resolve against the directory); so it
# is described in prose in GET /dashboard, the redirect to it, whose
# description must name it ("GET /dashboard/").
DESCRIBED_UNDER = {"/dashboard/": "/dashboard"}


def shape(path):
    """A path with its parameter names erased: /v1/x/{id} and /v1/x/{xId} are one."""
    return re.sub(r"\{[^}]*\}", "{}", path)


def check_routes(doc, routes):
    paths = doc.get("paths") or {}
    by_shape = {shape(p): item for p, item in paths.items()}
    in_code = set()
    for method, path, flags in routes:
        under = DESCRIBED_UNDER.get(path)
        if under is not None:
            if path in paths:
                err("%s is a path here: describe it under %s (the linters refuse a "
                    "trailing slash)" % (path, under))
            op = (paths.get(under) or {}).get(method)
            named = r"\b%s %s(?![\w{.-])" % (method.upper(), re.escape(path))
            if not isinstance(op, dict) or not re.search(named, str(op.get("description"))):
                err("route %s %s of src/api/api.c is not named in the description of %s %s"
                    % (method.upper(), path, method.upper(), under))
                continue
            path = under
        in_code.add((method, shape(path)))
        item = by_shape.get(shape(path))
        if not isinstance(item, dict):
            err("route %s %s of src/api/api.c is not in paths" % (method.upper(), path))
            continue
        op = item.get(method)
        if not isinstance(op, dict):
            have = sorted(m.upper() for m in METHODS if m in item)
            err("route %s %s of src/api/api.c is documented with %s only"
                % (method.upper(), path, ", ".join(have) or "no method"))
            continue
        security = op.get("security", doc.get("security"))
        names = {n for req in (security or []) for n in req}
        where = "%s %s" % (method.upper(), path)
        if "HTTP_AUTH" in flags:
            if "bearerAuth" not in names:
                err("%s needs an API key in the code (HTTP_AUTH) but not in the document"
                    % where)
            if "401" not in {str(c) for c in op.get("responses", {})}:
                err("%s needs an API key in the code but documents no 401" % where)
        elif security != []:
            err("%s needs no key in the code; the document must say security: []" % where)
    for path, item in paths.items():
        if path in DESCRIBED_UNDER:
            continue  # reported above
        for method in METHODS:
            if isinstance(item, dict) and method in item and \
                    (method, shape(path)) not in in_code:
                err("%s %s is documented but not in the route table of src/api/api.c"
                    % (method.upper(), path))
    return len(routes)


# ---- 3. examples against their schemas ----

def to_jsonschema(doc, s, depth=0):
    """An OpenAPI 3.0 schema as a JSON Schema (draft 4): $ref inlined, nullable
    turned into a null alternative."""
    if depth > 50:
        return {}
    if isinstance(s, list):
        return [to_jsonschema(doc, x, depth + 1) for x in s]
    if not isinstance(s, dict):
        return s
    if "$ref" in s:
        return to_jsonschema(doc, resolve(doc, s["$ref"], "schema") or {}, depth + 1)
    out = {}
    for k, v in s.items():
        if k in ("allOf", "anyOf", "oneOf", "items", "not"):
            out[k] = to_jsonschema(doc, v, depth + 1)
        elif k == "properties":
            out[k] = {n: to_jsonschema(doc, x, depth + 1) for n, x in v.items()}
        elif k == "additionalProperties" and isinstance(v, dict):
            out[k] = to_jsonschema(doc, v, depth + 1)
        elif k in ("nullable", "example", "discriminator", "readOnly", "writeOnly", "xml",
                   "externalDocs", "deprecated", "format") or k.startswith("x-"):
            continue
        else:
            out[k] = v
    if s.get("nullable") is True:
        if "enum" in out and None not in out["enum"]:
            out["enum"] = list(out["enum"]) + [None]
        return {"anyOf": [out, {"type": "null"}]}
    return out


def check_examples(doc):
    try:
        import jsonschema
    except ImportError:
        return None
    validator_cls = getattr(jsonschema, "Draft4Validator", None)
    count = 0

    def check(schema, value, where):
        nonlocal count
        count += 1
        js = to_jsonschema(doc, schema)
        problems = sorted(validator_cls(js).iter_errors(value), key=lambda e: list(e.path))
        for p in problems[:3]:
            at = "/".join(str(x) for x in p.path) or "(top)"
            err("%s: example does not match its schema at %s: %s" % (where, at, p.message))

    def media(content, where):
        for mt, m in (content or {}).items():
            if not isinstance(m, dict) or "schema" not in m or not mt.endswith("json"):
                continue
            if "example" in m:
                check(m["schema"], m["example"], "%s %s" % (where, mt))
            for name, ex in (m.get("examples") or {}).items():
                ex = deref(doc, ex, where)
                if isinstance(ex, dict) and "value" in ex:
                    check(m["schema"], ex["value"], "%s %s example %s" % (where, mt, name))

    for path, item in (doc.get("paths") or {}).items():
        for method in METHODS:
            op = item.get(method) if isinstance(item, dict) else None
            if not isinstance(op, dict):
                continue
            where = "%s %s" % (method.upper(), path)
            if "requestBody" in op:
                rb = deref(doc, op["requestBody"], where)
                media(rb.get("content") if isinstance(rb, dict) else None, where + " request")
            for code, r in (op.get("responses") or {}).items():
                r = deref(doc, r, where)
                if isinstance(r, dict):
                    media(r.get("content"), "%s %s" % (where, code))
    return count


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    doc = load(root)
    validator = external_validator(doc)
    check_structure(doc)
    finish_if_errors("is not valid OpenAPI 3.0")
    nroutes = check_routes(doc, code_routes(root))
    finish_if_errors("does not match the route table of src/api/api.c")
    nexamples = check_examples(doc)
    finish_if_errors("has examples that contradict its schemas")
    print("openapi: docs/openapi.yaml is valid OpenAPI %s (%s), documents the %d routes of "
          "src/api/api.c, %s"
          % (doc["openapi"],
             validator or "structural checks only: openapi-spec-validator is not installed",
             nroutes,
             "%d examples match their schemas" % nexamples if nexamples is not None
             else "examples not checked: python3-jsonschema is not installed"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
