#!/usr/bin/env python3
"""The floors of src/ (docs/architecture.md): a file includes headers of its
own folder or of a lower floor, never of a higher one nor of a sibling floor.

Every C file and header of src/ and include/pixrelay/ sits in the folder of
its floor (src/main.c alone above them all). Exit 1 naming each include that
breaks the rule, each file outside a floor and each floor this table lacks.
"""
import os
import re
import sys

# floor: rank. A file may include a header of its own floor or of a floor of
# a strictly lower rank; floors of one rank (redis, http) know nothing of each
# other.
FLOORS = {
    "core": 0,   # memory, logs, ids, time, JSON, settings, metrics
    "pix": 1,    # the Pix domain as values: BR Codes, charges, keyspace
    "redis": 2,  # connections, cluster, Sentinel, scripts, cache
    "http": 2,   # the HTTP/1.1 server
    "store": 3,  # the domain stores and their Lua scripts
    "relay": 4,  # deliveries and the background work of a process
    "api": 5,    # routes, handlers, dashboard, event stream, serve
    "cli": 6,    # the commands
}
TOP = 7  # src/main.c
INCLUDE = re.compile(r'^\s*#\s*include\s+"pixrelay/([^"]+)"', re.M)


def floor_of(rel):
    """(floor, rank) of a path under src/ or include/pixrelay/, or None."""
    parts = rel.split("/")
    if parts == ["main.c"]:
        return ("main", TOP)
    if len(parts) == 2 and parts[0] in FLOORS:
        return (parts[0], FLOORS[parts[0]])
    return None


def walk(root, base):
    """Each folder under root/base (the Lua scripts' folders left out) as
    (path, rel_dir, names): rel_dir is relative to base ("." for base
    itself), names are its C files and headers, sorted. tests/style/
    file_comments.py walks src/ with it too."""
    top = os.path.join(root, base)
    for d, dirs, names in os.walk(top):
        dirs[:] = [x for x in dirs if x != "lua"]
        yield d, os.path.relpath(d, top), sorted(n for n in names if n.endswith((".c", ".h")))


def main(root):
    errors = []
    checked = 0
    for base in ("src", os.path.join("include", "pixrelay")):
        for d, rel_dir, names in walk(root, base):
            if rel_dir != "." and rel_dir.split("/")[0] not in FLOORS:
                errors.append("%s/%s: a folder that is no floor (add it to FLOORS in %s)"
                              % (base, rel_dir, __file__))
                continue
            for name in names:
                rel = os.path.normpath(os.path.join(rel_dir, name))
                me = floor_of(rel)
                if me is None:
                    errors.append("%s/%s: not in the folder of a floor" % (base, rel))
                    continue
                checked += 1
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    text = f.read()
                for m in INCLUDE.finditer(text):
                    target = m.group(1)
                    other = floor_of(target)
                    line = text.count("\n", 0, m.start()) + 1
                    if other is None:
                        errors.append('%s/%s:%d: includes "pixrelay/%s", which is in no floor'
                                      % (base, rel, line, target))
                    elif other[0] != me[0] and other[1] >= me[1]:
                        errors.append('%s/%s:%d: %s (floor %d) includes "pixrelay/%s" of %s (floor %d)'
                                      % (base, rel, line, me[0], me[1], target, other[0], other[1]))
    for e in errors:
        print(e)
    if errors:
        print("floors: %d include(s) or file(s) break the floors" % len(errors))
        return 1
    if checked < 50:
        print("floors: only %d files found under %s: wrong root?" % (checked, root))
        return 1
    print("floors: %d files, every include from its own or a lower floor" % checked)
    return 0


def run(main, self_test, path):
    """A checker run as a script: its self-test, then main on the root given
    as the first argument, by default the tree that holds `path` (its
    tests/style/ file). The exit code."""
    if self_test():
        return 1
    return main(sys.argv[1] if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(os.path.abspath(path)), "..", ".."))


def scratch_tree(files, filler):
    """A scratch tree (a temporary directory; the caller removes it) holding
    `files` (path -> text) and, unless given, the 50 files src/core/f<i>.c
    with the text `filler`, enough that the root counts as a tree."""
    import tempfile

    d = tempfile.mkdtemp()
    files = dict(files)
    for i in range(50):
        files.setdefault("src/core/f%d.c" % i, filler)
    for path, text in files.items():
        p = os.path.join(d, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if text is not None:
            with open(p, "w") as f:
                f.write(text)
    return d


def check_cases(name, main, cases, filler):
    """Run `main` on the scratch tree of each (files, expected exit code);
    a text of None leaves that file out. Returns 0, or 1 after printing the
    first case that gave another code (a check that cannot fail is none)."""
    import contextlib
    import io
    import shutil

    for files, want in cases:
        d = scratch_tree(files, filler)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                got = main(d)
        finally:
            shutil.rmtree(d)
        if got != want:
            print("%s: self-test: %s gave %d, want %d" % (name, files, got, want))
            return 1
    return 0


def self_test():
    """The check itself catches an include upward, sideways and out of a
    floor, and passes a tree that keeps the rule."""
    return check_cases("floors", main, [
        ({"src/api/a.c": '#include "pixrelay/store/x.h"\n'}, 0),
        ({"src/store/x.c": '#include "pixrelay/api/a.h"\n'}, 1),
        ({"src/redis/r.c": '#include "pixrelay/http/h.h"\n'}, 1),
        ({"include/pixrelay/pix/p.h": '#  include "pixrelay/redis/r.h"\n'}, 1),
        ({"src/x.c": ""}, 1),
        ({"src/core/c.c": '#include "pixrelay/mem.h"\n'}, 1),
        ({"src/extra/e.c": ""}, 1),
    ], '#include "pixrelay/core/mem.h"\n')


if __name__ == "__main__":
    sys.exit(run(main, self_test, __file__))
