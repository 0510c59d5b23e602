#!/usr/bin/env python3
"""No page of docs/ is over 800 lines: a page that grows past it holds two
subjects (split it by what a reader comes for, as docs/banks.md and
docs/bank-api.md are), or history (the commit log has it).

Exit 1 naming each Markdown page of docs/ over the limit.
"""
import glob
import os
import sys

LIMIT = 800


def main(root):
    pages = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    if len(pages) < 5:
        print("page-length: only %d pages under %s/docs: wrong root?" % (len(pages), root))
        return 1
    over = []
    for p in pages:
        with open(p, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > LIMIT:
            over.append((os.path.relpath(p, root), n))
    for rel, n in over:
        print("%s: %d lines, over %d: split it by what a reader comes for" % (rel, n, LIMIT))
    if over:
        return 1
    print("page-length: the %d pages of docs/ are at most %d lines" % (len(pages), LIMIT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
