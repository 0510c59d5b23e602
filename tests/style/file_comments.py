#!/usr/bin/env python3
"""Every .c file of src/ starts with a one-paragraph /* */ comment saying
what the file is for: the idea it holds, and where the neighbouring ideas
live. A reader opening any file learns that first.

Exit 1 naming each .c file of src/ whose first line does not open a
comment. The folders are walked as tests/style/floors.py walks them.
"""
import os
import sys

sys.dont_write_bytecode = True  # importing floors must leave no cache in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from floors import check_cases, run, walk  # noqa: E402


def main(root):
    errors = []
    checked = 0
    for d, rel_dir, names in walk(root, "src"):
        for name in names:
            if not name.endswith(".c"):
                continue
            rel = os.path.normpath(os.path.join("src", rel_dir, name))
            checked += 1
            with open(os.path.join(d, name), encoding="utf-8") as f:
                first = f.readline()
            if not first.startswith("/*"):
                errors.append("%s: the first line does not open a /* */ comment saying "
                              "what the file is for" % rel)
    for e in errors:
        print(e)
    if errors:
        print("file_comments: %d .c file(s) without their opening comment" % len(errors))
        return 1
    if checked < 50:
        print("file_comments: only %d .c files found under %s/src: wrong root?"
              % (checked, root))
        return 1
    print("file_comments: %d .c files, each opening with its comment" % checked)
    return 0


def self_test():
    """The check itself catches a file that opens with code, a blank line, a
    // comment or nothing, in a floor's folder or not, and a root with too
    few files, and passes a tree whose .c files all open with their comment
    (headers are not its business)."""
    return check_cases("file_comments", main, [
        ({}, 0),
        ({"src/main.c": "/* main: the entry point.\n * More. */\nint main(void);\n"}, 0),
        ({"src/pix/x.h": "#ifndef X_H\n"}, 0),
        ({"src/main.c": "int main(void);\n"}, 1),
        ({"src/api/a.c": '#include "pixrelay/api/a.h"\n/* a: too late. */\n'}, 1),
        ({"src/api/a.c": "\n/* a: after a blank line. */\n"}, 1),
        ({"src/api/a.c": "// a: not a block comment\n"}, 1),
        ({"src/api/a.c": ""}, 1),
        ({"src/extra/e.c": "int e;\n"}, 1),
        ({"src/core/f3.c": "int f;\n"}, 1),
        ({"src/core/f0.c": None}, 1),  # 49 files: the wrong root
    ], "/* f: a file. */\n#include <stdio.h>\n")


if __name__ == "__main__":
    sys.exit(run(main, self_test, __file__))
