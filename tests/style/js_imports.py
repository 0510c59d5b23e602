#!/usr/bin/env python3
"""The dashboard's modules import one another as a tree, never in a cycle:
the pages (keys.js, events.js, ...) import session.js, api.js and ui.js;
app.js imports the pages. A cycle would make a page run before the module it
imports has been evaluated.

Reads the `import ... from "./x.js"` lines (and `export ... from`) of every
dashboard/*.js. Exit 1 naming each cycle (a.js -> b.js -> a.js) and each
import of a file that is not there.
"""
import os
import re
import sys

# import x from "./a.js"; import { a, b } from './a.js'; import "./a.js";
# export { a } from "./a.js" -- the braces may span lines
IMPORT = re.compile(r'^\s*(?:import|export)\b[^;"\']*?\bfrom\s*["\']\./([^"\']+)["\']'
                    r'|^\s*import\s*["\']\./([^"\']+)["\']', re.M)


def imports_of(text):
    """The names ("api.js") that a module's text imports from its folder."""
    return [a or b for a, b in IMPORT.findall(text)]


def cycles(graph):
    """Each cycle of graph (name: [names]) once, as a list of names starting
    and ending at its alphabetically first member."""
    found = []
    seen = set()
    for start in sorted(graph):
        # paths from start through names after it only, back to start
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(set(graph.get(node, ())), reverse=True):
                if nxt == start:
                    key = tuple(path)
                    if key not in seen:
                        seen.add(key)
                        found.append(path + [start])
                elif nxt > start and nxt not in path:
                    stack.append((nxt, path + [nxt]))
    return sorted(found)


def main(root):
    folder = os.path.join(root, "dashboard")
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".js"))
    except OSError as e:
        print("js_imports: %s" % e)
        return 1
    graph = {}
    errors = []
    edges = 0
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            graph[name] = imports_of(f.read())
        for target in graph[name]:
            edges += 1
            if target not in names:
                errors.append("dashboard/%s imports ./%s, which is not in dashboard/"
                              % (name, target))
    for c in cycles(graph):
        errors.append("import cycle: " + " -> ".join(c))
    for e in errors:
        print(e)
    if errors:
        print("js_imports: %d problem(s) in the imports of dashboard/*.js" % len(errors))
        return 1
    if len(names) < 3 or edges < 3:
        print("js_imports: only %d modules and %d imports under %s: wrong root?"
              % (len(names), edges, folder))
        return 1
    print("js_imports: %d modules, %d imports, no cycle" % (len(names), edges))
    return 0


def self_test():
    """The check itself finds a cycle of two, of three and of one, an import
    spread over lines or written with single quotes, and passes a tree."""
    import contextlib
    import io
    import shutil
    import tempfile

    tree = {
        "api.js": "export function f() {}\n",
        "ui.js": "export function h() {}\n",
        "session.js": 'import * as api from "./api.js";\n',
        "page.js": ('import * as api from "./api.js";\n'
                    'import { session } from "./session.js";\n'
                    'import {\n  h,\n} from "./ui.js";\n'),
        "app.js": ('import * as api from "./api.js";\n'
                   'import * as page from "./page.js";\n'
                   "import './ui.js';\n"),
    }
    cases = [
        ({}, 0, None),
        ({"api.js": 'import { h } from "./ui.js";\n'}, 0, None),
        # the cycle this check was written against: a page imports app.js
        ({"page.js": tree["page.js"] + 'import { route } from "./app.js";\n'},
         1, "import cycle: app.js -> page.js -> app.js"),
        ({"ui.js": "import {\n  session\n} from './session.js';\n",
          "session.js": 'import { h } from "./ui.js";\n'},
         1, "import cycle: session.js -> ui.js -> session.js"),
        ({"api.js": 'export { h } from "./page.js";\n'},
         1, "import cycle: api.js -> page.js -> api.js"),
        ({"api.js": 'import "./page.js";\n'},
         1, "import cycle: api.js -> page.js -> session.js -> api.js"),
        ({"ui.js": 'import "./ui.js";\n'}, 1, "import cycle: ui.js -> ui.js"),
        ({"api.js": 'import { x } from "./gone.js";\n'}, 1, "./gone.js, which is not"),
    ]
    for change, want, says in cases:
        d = tempfile.mkdtemp()
        os.mkdir(os.path.join(d, "dashboard"))
        for name, text in dict(tree, **change).items():
            with open(os.path.join(d, "dashboard", name), "w") as f:
                f.write(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            got = main(d)
        shutil.rmtree(d)
        if got != want or (says and says not in out.getvalue()):
            print("js_imports: self-test: %s gave %d, want %d%s:\n%s"
                  % (change, got, want, " saying %r" % says if says else "",
                     out.getvalue()))
            return 1
    return 0


if __name__ == "__main__":
    if self_test():
        sys.exit(1)
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
