#!/usr/bin/env python3
"""The return convention (docs/architecture.md, "Return values"): a function
returns 0 or a negative error, and its expected outcomes are named positive
codes of its module; a yes/no answer is a bool. The compiler holds the bool
side (comparing a bool with < 0 is an error: tests/style/bool_compare.py);
this holds what it cannot see:

- predicates: a prototype of a header documented as answering yes or no
  ("True when", "Nonzero when", "Whether", "May ...", "Returns 1 when",
  "1 or 0", "0; 1 when") returns bool, not int: a bare 1 is either a bool
  or a named outcome;
- callbacks: the result handed to a store callback (store_fn and every
  callback type whose second parameter is `int result` or `int status`, and
  any call `...cb(ud, x, ...)`, `...fn(ud, x, ...)`, `...done(ud, x, ...)`)
  is 0, a negative value, a named code or a variable, never a bare positive
  literal, a comparison or a negation (each branch of a ?: on its own);
- returns: the same of every `return` of a function documented as returning
  named codes (its comment, on the prototype or the static definition, names
  one: an enumerator or a #define of an integer, or "PREFIX_*").

Exit 1 naming each place that breaks a rule.
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # importing floors must leave no cache in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from floors import check_cases, run, walk  # noqa: E402

# A comment documenting a yes/no answer: a bare 1 returned ...
ANSWERS_ONE = re.compile(
    r"\b[Rr]eturns? (?:0, )?1 (?:when|if|or 0)\b"
    r"|(?:^|[.;:,] )1 (?:when|if)\b"
    r"|\b1 or 0\b|\b0 or 1\b")
# ... or a question ("Nonzero when", "Whether", "May it"), unless the comment
# also gives the 0 / -1 of a check ("Whether ... : 0, or -1 with err").
QUESTION = re.compile(r"(?:^|[.;:] )(?:True|False|Nonzero|Non-zero|Whether|May|Can|Is|Are|Has|"
                      r"Does)\b|\band whether\b")
CHECK = re.compile(r"(?:^|[:;,] |[Rr]eturns )0(?:,| or -1| when|;)")
TOKEN = re.compile(r"[A-Za-z_]\w*|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|->|<<=|>>=|<=|>=|==|!=|&&|"
                   r"\|\||<<|>>|\+\+|--|\S")
INT_LITERAL = re.compile(r"^(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*$")
COMPARISON = {"==", "!=", "<", ">", "<=", ">=", "&&", "||"}
FN_TYPEDEF = re.compile(r"typedef\s+[\w\s\*]+?\(\s*\*\s*(\w+)\s*\)\s*\(([^)]*)\)\s*;")
PROTOTYPE = re.compile(r"(/\*(?:(?!\*/).)*\*/)[ \t]*\n((?:[ \t]*(?:static|inline|extern)\s+)*"
                       r"(int|bool|long|void|[\w\s\*]+?)\s*\**\s*\b(\w+)\s*\([^;{]*?\)\s*)([;{])",
                       re.S)
DEFINITION = re.compile(r"^(?:static\s+|inline\s+)*(?:int|long)\s+(\w+)\s*\([^;{]*?\)\s*\{", re.M)
ENUM = re.compile(r"\benum\s*\w*\s*\{([^}]*)\}")
DEFINE_INT = re.compile(r"^\s*#\s*define\s+([A-Z][A-Z0-9_]*)\s+"
                        r"\(?-?(?:0[xX][0-9a-fA-F]+|\d+)\)?\s*(?:/\*.*)?$", re.M)
UD = re.compile(r"^(?:\w+(?:->|\.))*(?:\w*_ud|ud|arg|owner)$")
CALLBACK_NAME = re.compile(r"(?:^|_)(?:cb|fn|done)$")


def blank(text):
    """`text` with comments, strings and character constants turned to
    spaces (newlines kept, so offsets and line numbers still hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
            continue
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def tokens(text, start=0, end=None):
    """The tokens of blanked text in [start, end) as (offset, token)."""
    end = len(text) if end is None else end
    return [(m.start() + start, m.group(0)) for m in TOKEN.finditer(text[start:end])]


def split_args(toks, i):
    """toks[i] is "(": the top-level arguments up to its ")" as lists of
    tokens, and the index after it; None when unbalanced."""
    depth, args, cur = 0, [], []
    for j in range(i, len(toks)):
        t = toks[j][1]
        if t in "([{":
            depth += 1
            if depth == 1:
                continue
        elif t in ")]}":
            depth -= 1
            if depth == 0:
                args.append(cur)
                return args, j + 1
        elif t == "," and depth == 1:
            args.append(cur)
            cur = []
            continue
        cur.append(toks[j])
    return None


def top_level(toks):
    """Indices of the tokens of toks outside any bracket."""
    depth, out = 0, []
    for k, (_, t) in enumerate(toks):
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif depth == 0:
            out.append(k)
    return out


def bad_result(toks):
    """Why the expression toks cannot be a result of the convention (a bare
    positive literal, a comparison), or None. Each branch of a ?: is looked at
    on its own; outer parentheses and casts are dropped."""
    while len(toks) >= 2 and toks[0][1] == "(" and toks[-1][1] == ")" and \
            split_args(toks, 0) and split_args(toks, 0)[1] == len(toks):
        toks = toks[1:-1]
    top = top_level(toks)
    q = [k for k in top if toks[k][1] == "?"]
    if q:
        # cond ? a : b, with b possibly another ?: (right-associative)
        depth = 0
        for k in top:
            if k <= q[0]:
                continue
            if toks[k][1] == "?":
                depth += 1
            elif toks[k][1] == ":":
                if depth == 0:
                    return bad_result(toks[q[0] + 1:k]) or bad_result(toks[k + 1:])
                depth -= 1
        return None
    # a cast: (type) x
    if len(toks) > 3 and toks[0][1] == "(":
        closed = split_args(toks, 0)
        if closed and all(re.match(r"^\w+$|^\*$", t) for _, t in toks[1:closed[1] - 1]):
            return bad_result(toks[closed[1]:])
    if len(toks) == 1 and INT_LITERAL.match(toks[0][1]):
        if int(re.sub(r"[uUlL]+$", "", toks[0][1]), 0) > 0:
            return "the bare literal %s" % toks[0][1]
        return None
    for k in top:
        if toks[k][1] in COMPARISON:
            return "a comparison (%s), worth 1 or 0" % toks[k][1]
    if toks and toks[0][1] == "!":
        return "a negation (!), worth 1 or 0"
    return None


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def sources(root):
    """(rel, text) of every header and C file of include/pixrelay/ and src/."""
    for base in (os.path.join("include", "pixrelay"), "src"):
        for d, rel_dir, names in walk(root, base):
            for name in names:
                rel = os.path.normpath(os.path.join(base, rel_dir, name))
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    yield rel, f.read()


def named_codes(files):
    """Every enumerator and every #define of an integer of the tree."""
    codes = set()
    for rel, text in files:
        b = blank(text)
        for m in ENUM.finditer(b):
            for item in m.group(1).split(","):
                name = item.split("=")[0].strip()
                if re.match(r"^[A-Z][A-Z0-9_]+$", name):
                    codes.add(name)
        for m in DEFINE_INT.finditer(text):
            codes.add(m.group(1))
    return codes


def names_codes(doc, codes):
    """Whether the comment `doc` names a code: one of codes, or "PREFIX_*"."""
    if re.search(r"\b[A-Z][A-Z0-9]*_\*", doc):
        return True
    return any(w in codes for w in re.findall(r"\b[A-Z][A-Z0-9_]*_[A-Z0-9_]+\b", doc))


def callback_types(files):
    """The callback typedefs whose second parameter is a result ({name:
    True}) or something else ({name: False})."""
    types = {}
    for rel, text in files:
        for m in FN_TYPEDEF.finditer(blank(text)):
            params = [p.strip() for p in m.group(2).split(",")]
            types[m.group(1)] = len(params) > 1 and bool(
                re.match(r"^int\s+(?:result|status|rc)$", params[1]))
    return types


def declared(text, types):
    """{identifier: set of bools}: the names blanked `text` declares with a
    callback type (a field, parameter or variable), True for a result one."""
    out = {}
    if not types:
        return out
    for m in re.finditer(r"\b(%s)\s+(\w+)\b" % "|".join(map(re.escape, types)), text):
        out.setdefault(m.group(2), set()).add(types[m.group(1)])
    return out


def check_callbacks(rel, b, header_decls, types, errors):
    mine = declared(b, types)
    toks = tokens(b)
    for i in range(1, len(toks) - 1):
        name = toks[i][1]
        if toks[i + 1][1] != "(" or not re.match(r"^[A-Za-z_]\w*$", name):
            continue
        kinds = mine.get(name) or header_decls.get(name)
        if kinds is not None:
            if True not in kinds:
                continue
        elif not CALLBACK_NAME.search(name):
            continue
        split = split_args(toks, i + 1)
        if not split or len(split[0]) < 2:
            continue
        args = split[0]
        ud = "".join(t for _, t in args[0])
        if not UD.match(ud) or not args[1]:
            continue
        why = bad_result(args[1])
        if why:
            errors.append("%s:%d: %s(%s, ...) passes %s as its result: pass 0, a negative "
                          "error or a named code" % (rel, line_of(b, args[1][0][0]), name, ud, why))


def function_docs(files):
    """{name: comment} of every prototype of a header that has one."""
    docs = {}
    for rel, text in files:
        if not rel.endswith(".h"):
            continue
        for m in PROTOTYPE.finditer(text):
            if m.group(5) == ";":
                docs.setdefault(m.group(4), normal(m.group(1)))
    return docs


def normal(comment):
    """A /* */ comment as one line of words (the leading stars gone)."""
    lines = [re.sub(r"^\s*\*(?!/)", "", ln) for ln in comment[2:-2].split("\n")]
    return " ".join(" ".join(lines).split())


def yes_no(doc):
    """The words by which the comment `doc` (normal()) documents a yes/no
    answer, or None."""
    hit = ANSWERS_ONE.search(doc) or (not CHECK.search(doc) and QUESTION.search(doc))
    return hit.group(0).strip(" .;:,") if hit else None


def prototypes(text):
    """(offset, return type, name, comment as normal()) of each prototype of
    a header that has a comment right above it."""
    for m in PROTOTYPE.finditer(text):
        if m.group(5) == ";":
            yield m.start(2), m.group(3).split()[-1:], m.group(4), normal(m.group(1))


def check_predicates(rel, text, errors):
    for at, rtype, name, doc in prototypes(text):
        hit = rtype == ["int"] and yes_no(doc)
        if hit:
            errors.append("%s:%d: %s returns int but is documented as answering yes or no "
                          "(\"%s\"): return bool, or name the outcome in the module's header"
                          % (rel, line_of(text, at), name, hit))


def static_docs(text):
    """{name: comment} of each function of a C file defined right under a
    comment."""
    return {m.group(4): normal(m.group(1)) for m in PROTOTYPE.finditer(text) if m.group(5) == "{"}


def check_returns(rel, text, b, docs, codes, errors):
    local = static_docs(text)
    for m in DEFINITION.finditer(b):
        name = m.group(1)
        doc = local.get(name) or docs.get(name)
        if not doc or not names_codes(doc, codes):
            continue
        toks = tokens(b, m.end() - 1)
        depth = 0
        for k, (off, t) in enumerate(toks):
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    break
            elif t == "return":
                end = k + 1
                while end < len(toks) and toks[end][1] != ";":
                    end += 1
                why = toks[k + 1:end] and bad_result(toks[k + 1:end])
                if why:
                    errors.append("%s:%d: %s is documented as returning named codes but "
                                  "returns %s: return 0, a negative error or a named code"
                                  % (rel, line_of(b, off), name, why))


def main(root):
    files = list(sources(root))
    codes = named_codes(files)
    types = callback_types(files)
    docs = function_docs(files)
    header_decls = {}
    for rel, text in files:
        if rel.endswith(".h"):
            for k, v in declared(blank(text), types).items():
                header_decls.setdefault(k, set()).update(v)
    errors = []
    checked = 0
    for rel, text in files:
        checked += 1
        if rel.endswith(".h"):
            check_predicates(rel, text, errors)
            continue
        b = blank(text)
        check_callbacks(rel, b, header_decls, types, errors)
        check_returns(rel, text, b, docs, codes, errors)
    for e in errors:
        print(e)
    if errors:
        print("returns: %d place(s) break the return convention (docs/architecture.md, "
              "\"Return values\")" % len(errors))
        return 1
    if checked < 50:
        print("returns: only %d files found under %s: wrong root?" % (checked, root))
        return 1
    print("returns: %d files, every predicate a bool, every result and named-code return "
          "0, negative or named" % checked)
    return 0


STORE_H = """/* store */
/* The answer. */
typedef void (*store_fn)(void *ud, int result, const char *json, const char *err);
typedef void (*other_fn)(void *ud, long status, const char *body);
enum banks_result {
\tBANKS_NOT_FOUND = 1,
\tBANKS_LIMIT,
};
#define BANKRECON_NO_API 10
"""
# relay/bankrecon.c before it was mended: `1` (BANKS_NOT_FOUND) passed for
# BANKRECON_NO_API, in a call over three lines
RECON = """/* r */
#include "pixrelay/store/store.h"
struct run { store_fn done_cb; void *done_ud; };
static void on_conn(struct run *u, int result, int e)
{
\tif (u->done_cb)
\t\tu->done_cb(u->done_ud,
\t\t\t   result != 0 || e != 1 ? BANKS_NOT_FOUND : %s, NULL,
\t\t\t   NULL);
}
"""
PREDICATE = """/* json */
/* %s when `v` is an integer; writes it to *out. */
%s json_is_int64(int v, long *out);
"""
NAMED = """/* b */
/* The thing: 0, BANKS_NOT_FOUND, or -1. */
static int find(int x)
{
\tif (x)
\t\treturn %s;
\treturn x < 0 ? -1 : 0;
}
"""
CALL = """/* a */
static void f(%s cb, void *ud, int n)
{
\tcb(ud, %s, NULL, NULL);
}
"""


def self_test():
    """The check itself catches the two bugs that made it (a yes/no answer
    returning int; `1` passed as a callback's result where a named code was
    meant), a bare 1 beside 0 and -1, a bare positive return of a function
    documented with named codes, a comparison or a negation passed as a
    result, and passes their mended forms and another callback's status."""
    h = {"include/pixrelay/store/store.h": STORE_H}
    return check_cases("returns", main, [
        ({}, 0),
        (h, 0),
        (dict(h, **{"src/relay/r.c": RECON % "BANKRECON_NO_API"}), 0),
        (dict(h, **{"src/relay/r.c": RECON % "1"}), 1),
        (dict(h, **{"src/relay/r.c": RECON % "(1)"}), 1),
        ({"include/pixrelay/core/json.h": PREDICATE % ("True", "bool")}, 0),
        ({"include/pixrelay/core/json.h": PREDICATE % ("True", "int")}, 1),
        ({"include/pixrelay/core/json.h": PREDICATE % ("Nonzero", "int")}, 1),
        ({"include/pixrelay/core/v.h": "/* v */\n/* An e-mail. Returns 1 when valid, 0 "
          "otherwise. */\nint v_is_email(const char *s);\n"}, 1),
        ({"include/pixrelay/core/v.h": "/* v */\n/* Lock it: 0 when owned, 1 when another "
          "holds it, -1 on error. */\nint v_lock(int fd);\n"}, 1),
        ({"include/pixrelay/core/v.h": "/* v */\n/* Whether it is https: 0, or -1 with "
          "err. */\nint v_https(char *err);\n"}, 0),
        (dict(h, **{"src/store/b.c": NAMED % "BANKS_LIMIT"}), 0),
        (dict(h, **{"src/store/b.c": NAMED % "2"}), 1),
        (dict(h, **{"src/store/b.c": NAMED % "x > 3"}), 1),
        (dict(h, **{"src/api/a.c": CALL % ("store_fn", "n ? -1 : BANKS_LIMIT")}), 0),
        (dict(h, **{"src/api/a.c": CALL % ("store_fn", "n == 2")}), 1),
        (dict(h, **{"src/api/a.c": CALL % ("store_fn", "!n")}), 1),
        (dict(h, **{"src/api/a.c": CALL % ("other_fn", "200")}), 0),
    ], "/* f: a file. */\n#include <stdio.h>\n")


if __name__ == "__main__":
    sys.exit(run(main, self_test, __file__))
