#!/usr/bin/env python3
"""docs/architecture.md names every .c file of src/, on its own floor, so that
the page a newcomer reads first cannot fall behind the tree again.

A file src/<floor>/<stem>.c is named when the page writes it in backticks as
`<floor>/<stem>.c` (or `src/<floor>/<stem>.c`) anywhere, or as `<stem>` (or
`<stem>.c`) within its floor's part of the page: the row of the floors table
whose folder is `src/<floor>/`, or the text under a heading that names
`src/<floor>/`, up to the next heading. src/main.c is named as `main.c` or
`src/main.c`. The folders are walked as tests/style/floors.py walks them
(the Lua scripts' folders left out).

Exit 1 naming each file the page does not name.
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # importing floors must leave no cache in the tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "style"))
from floors import FLOORS, check_cases, walk  # noqa: E402

PAGE = os.path.join("docs", "architecture.md")
SPAN = re.compile(r"`([^`\n]+)`")
FOLDER = re.compile(r"`(?:src/)?(%s)/`" % "|".join(sorted(FLOORS)))


def spans_by_floor(text):
    """(every backticked span of the page, {floor: the spans of its part})."""
    everywhere, by_floor = set(), {f: set() for f in FLOORS}
    floor = None  # the floor whose heading the current text is under
    fenced = False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        spans = set(SPAN.findall(line))
        everywhere |= spans
        if line.startswith("#"):
            m = FOLDER.search(line)
            floor = m.group(1) if m else None
            continue
        cells = [c.strip() for c in line.split("|")] if line.startswith("|") else []
        if len(cells) > 2 and FOLDER.fullmatch(cells[2]):
            by_floor[FOLDER.fullmatch(cells[2]).group(1)] |= spans
        elif floor:
            by_floor[floor] |= spans
    return everywhere, by_floor


def named(rel, everywhere, by_floor):
    """Whether the page names src/<rel> (rel: "<floor>/<stem>.c" or "main.c")."""
    if "/" not in rel:
        return rel in everywhere or "src/" + rel in everywhere
    floor, name = rel.split("/", 1)
    stem = name[:-2]
    if rel in everywhere or "src/" + rel in everywhere:
        return True
    return stem in by_floor.get(floor, ()) or name in by_floor.get(floor, ())


def main(root):
    try:
        with open(os.path.join(root, PAGE), encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        print("architecture-doc: %s" % e)
        return 1
    everywhere, by_floor = spans_by_floor(text)
    missing, checked = [], 0
    for d, rel_dir, names in walk(root, "src"):
        for name in names:
            if not name.endswith(".c"):
                continue
            rel = os.path.normpath(os.path.join(rel_dir, name))
            checked += 1
            if not named(rel, everywhere, by_floor):
                missing.append(rel)
    for rel in missing:
        print("src/%s: not named in %s (write `%s` in its floor's row or under the "
              "heading of `src/%s/`, or `%s` anywhere)"
              % (rel, PAGE, os.path.basename(rel)[:-2], os.path.dirname(rel) or ".", rel))
    if missing:
        print("architecture-doc: %d file(s) of src/ not named in %s" % (len(missing), PAGE))
        return 1
    if checked < 50:
        print("architecture-doc: only %d .c files found under %s/src: wrong root?"
              % (checked, root))
        return 1
    print("architecture-doc: %s names the %d .c files of src/" % (PAGE, checked))
    return 0


def self_test():
    """The check itself catches a file named nowhere, named only under
    another floor, or named only inside a code block, and passes a file named
    by its path, in its floor's row or under its floor's heading."""
    core = "### `src/core/` (rank 0)\n\n" + ", ".join("`f%d`" % i for i in range(50)) + "\n"
    table = "| rank | folder | what | may use |\n|---|---|---|---|\n"
    return check_cases("architecture-doc", main, [
        ({PAGE: core}, 0),
        ({PAGE: None}, 1),
        ({PAGE: core.replace("`f7`", "f7")}, 1),
        ({PAGE: core, "src/main.c": ""}, 1),
        ({PAGE: core + "\n`src/main.c`\n", "src/main.c": ""}, 0),
        ({PAGE: core + "\n## Next\n\n`banks`\n", "src/store/banks.c": ""}, 1),
        ({PAGE: core + "\n### `src/pix/`\n\n`banks`\n", "src/store/banks.c": ""}, 1),
        ({PAGE: core + "\n### `src/store/`\n\n`banks`\n", "src/store/banks.c": ""}, 0),
        ({PAGE: core + "\n### `src/store/`\n\n```\n`banks`\n```\n", "src/store/banks.c": ""}, 1),
        ({PAGE: core + "\n## Flows\n\n`store/banks.c`\n", "src/store/banks.c": ""}, 0),
        ({PAGE: core + table + "| 3 | `src/store/` | `banks` | core |\n",
          "src/store/banks.c": ""}, 0),
        ({PAGE: core + table + "| 3 | `src/relay/` | `banks` | core |\n",
          "src/store/banks.c": ""}, 1),
        ({PAGE: core + "\n### `src/http/`\n\n`server`\n", "src/http/server.c": "",
          "src/api/server.c": ""}, 1),
        ({PAGE: core, "src/core/f0.c": None}, 1),  # 49 files: the wrong root
    ], "/* f: a file. */\n")


if __name__ == "__main__":
    if self_test():
        sys.exit(1)
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
