#!/usr/bin/env python3
"""A yes/no answer is a bool, and the build refuses to compare one with a
number it can never equal (docs/architecture.md, "Return values"):
`if (json_is_int64(v, &n) < 0)`, the test that once read a bank's page with
whatever the stack held as its count, does not compile.

This compiles, with the very command the build gives src/core/json.c
(compile_commands.json of the build directory: its compiler, its flags),
a scratch file that includes every header and tests each bool function of
include/pixrelay/ and of the floors' private headers with `< 0`. Each such
line must be refused (-Wbool-compare under GCC, -Wtautological-constant-
compare under clang, made errors in meson.build whatever werror says); the
same file testing each answer plainly must compile without a word. So the
check fails when a predicate goes back to int, or when the flag goes.

Usage: bool_compare.py SOURCE_ROOT BUILD_ROOT. Exit 1 naming what is wrong.
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # importing returns must leave no cache in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from returns import blank, prototypes, yes_no  # noqa: E402

BOOL_FN = re.compile(r"^bool\s+(\w+)\s*\(([^;{]*?)\)\s*;", re.M | re.S)
ANY_FN = re.compile(r"^[\w ]+?[\s*](\w+)\s*\(([^;{]*?)\)\s*;", re.M | re.S)
# GCC says [-Werror=bool-compare], clang [-Werror,-Wtautological-constant-compare]
REFUSED = re.compile(r"^[^:\n]*:(\d+):\d+: error: .*\[-Werror[=,](?:-W)?(?:bool-compare|"
                     r"tautological-constant(?:-out-of-range)?-compare)\]", re.M)


def header_groups(root):
    """The headers to probe together, as absolute paths: every public header
    in one group, then each floor's private header (src/*/*_int.h) alone, as
    two of them may each define a helper of the same name."""
    public = sorted(glob.glob(os.path.join(root, "include", "pixrelay", "*", "*.h")))
    return [public] + [[p] for p in sorted(glob.glob(os.path.join(root, "src", "*", "*_int.h")))]


def predicates(paths):
    """(name, number of parameters) of each function the headers declare
    bool, or int and documented as answering yes or no (returns.py), so
    that one turned back into an int is probed, and fails."""
    seen = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            text = f.read()
        asked = {name for _, rtype, name, doc in prototypes(text)
                 if rtype == ["int"] and yes_no(doc)}
        for m in ANY_FN.finditer(blank(text)):
            if m.group(1) in asked or BOOL_FN.match(m.group(0)):
                # commas outside a parameter's own parentheses (a function pointer's)
                params = re.sub(r"\([^()]*\)", "", m.group(2)).strip()
                n = 0 if params in ("", "void") else params.count(",") + 1
                seen.setdefault(m.group(1), n)
    return sorted(seen.items())


def scratch(paths, preds, test):
    """The scratch file's text, and the line of each predicate's test."""
    lines = ["/* bool_compare.py: never built into anything */"]
    lines += ['#include "%s"' % p for p in paths]
    lines += ["int bool_compare_probe(void);", "int bool_compare_probe(void)", "{",
              "\tint n = 0;", ""]
    at = {}
    for name, n in preds:
        at[len(lines) + 1] = name
        lines.append("\tif (%s(%s)%s)" % (name, ", ".join(["0"] * n), test))
        lines.append("\t\tn++;")
    lines += ["\treturn n;", "}", ""]
    return "\n".join(lines), at


def build_command(build):
    """The argument list the build compiles src/core/json.c with, the source
    and its outputs left out, and the directory it runs in."""
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    for e in entries:
        if e["file"].replace("\\", "/").endswith("src/core/json.c"):
            args = e.get("arguments") or shlex.split(e["command"])
            out, skip = [], 0
            for a in args:
                if skip:
                    skip -= 1
                elif a in ("-MQ", "-MF", "-MT", "-o"):
                    skip = 1
                elif a in ("-MD", "-MMD", "-c") or a == e["file"]:
                    continue
                else:
                    out.append(a)
            # every error told, not the first 20 (clang's default)
            version = subprocess.run(out[:1] + ["--version"], capture_output=True, text=True)
            limit = "-ferror-limit=0" if "clang" in version.stdout else "-fmax-errors=0"
            out += ["-fdiagnostics-color=never", limit, "-o", os.devnull, "-c"]
            return out, e["directory"]
    return None, None


def main(root, build):
    root = os.path.abspath(root)
    cmd, cwd = build_command(build)
    if not cmd:
        print("bool_compare: no compile command for src/core/json.c in %s" % build)
        return 1
    groups = [(paths, predicates(paths)) for paths in header_groups(root)]
    total = sum(len(preds) for _, preds in groups)
    if total < 30:
        print("bool_compare: only %d bool functions found under %s: wrong root?"
              % (total, root))
        return 1
    errors = []
    with tempfile.TemporaryDirectory() as d:
        for (paths, preds), (test, want) in ((g, t) for g in groups if g[1]
                                             for t in ((" < 0", "refused"), ("", "clean"))):
            text, at = scratch(paths, preds, test)
            src = os.path.join(d, "probe.c")
            with open(src, "w") as f:
                f.write(text)
            r = subprocess.run(cmd + [src], cwd=cwd, capture_output=True, text=True)
            said = r.stdout + r.stderr
            if want == "clean":
                if r.returncode != 0 or said.strip():
                    errors.append("the bool functions of %s tested plainly do not "
                                  "compile cleanly:\n%s" % (paths[0] if len(paths) == 1
                                                            else "include/pixrelay", said))
                continue
            refused = {int(m.group(1)) for m in REFUSED.finditer(said)}
            for line, name in sorted(at.items()):
                if line not in refused:
                    errors.append("`%s(...) < 0` compiles: %s must return bool, and "
                                  "meson.build must make -Wbool-compare an error" % (name, name))
            if r.returncode == 0:
                errors.append("testing the bool functions with < 0 compiled")
    for e in errors:
        print("bool_compare: " + e)
    if errors:
        return 1
    print("bool_compare: `< 0` on each of %d bool functions is a compile error; "
          "each tested plainly compiles" % total)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: bool_compare.py SOURCE_ROOT BUILD_ROOT")
    sys.exit(main(sys.argv[1], sys.argv[2]))
