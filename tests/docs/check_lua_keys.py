#!/usr/bin/env python3
"""Every key name a Lua script of src/store/lua/ builds from a prefix is
listed in docs/storage.md.

The C code spells its keys in src/pix/keyspace.c (tests/unit/test-keyspace.c
checks those against the page); the scripts derive more from the prefix of
the tag they are given (`p .. 'bday:' .. conn .. ':' .. day`, `g ..
'members:' .. id`, `p .. 'busy'`). This finds each such concatenation, a
string that starts with a letter after a prefix expression and `..`, takes
the key's name (up to its first `:`, kept, or the whole string), and looks
for that name among the keys the page lists (a spelling in backquotes in
its sections "Under `{s<k>}`" to "Pub/sub channels": `bday:<connection>:<day>`
for `bday:`, `busy` for `busy`). A script that builds a key the page does not
list fails the test, naming the script, the line and the name.

    python3 tests/docs/check_lua_keys.py SOURCE_ROOT
"""
import os
import re
import sys

# <prefix expression> .. '<name...>': an identifier, a field (r.p), an
# element (ARGV[9]) or a call's result before the operator
BUILT = re.compile(r"""(?:[A-Za-z_][A-Za-z0-9_.]*(?:\[[^\]\n]*\])?|\))\s*\.\.\s*(['"])([A-Za-z][^'"\n]*)\1""")
LISTED = re.compile(r"`([A-Za-z][A-Za-z0-9_]*(?::[^`]*)?)`")


def names_listed(storage):
    """The key names the page lists: `name:` for a spelling with a colon
    and more after it, `name` for a spelling without one; of the shard's
    table, only its first column (the others name fields)."""
    shard = storage.index("Under `{s<k>}`")
    env = storage.index("Under `{<env>}`")
    end = storage.index("Pub/sub channels")
    spellings = []
    for line in storage[shard:env].splitlines():
        if line.startswith("| `"):
            spellings += LISTED.findall(line.split("|")[1])
    spellings += LISTED.findall(storage[env:end])
    names = set()
    for spelled in spellings:
        head, colon, rest = spelled.partition(":")
        if colon and rest:
            names.add(head + ":")
        elif not colon:
            names.add(head)
    return names


def names_in(text):
    """(line, name) of every key name the Lua `text` builds."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        code = "" if line.lstrip().startswith("--") else line
        for m in BUILT.finditer(code):
            head, colon, _ = m.group(2).partition(":")
            out.append((number, head + colon))
    return out


# The check must be able to fail: these lines build what no page lists.
SELF_TEST = """local k = p .. 'nosuch:' .. id
redis.call('DEL', ARGV[4] .. 'nokey', r.p .. "nomore:" .. x)
redis.call('PUBLISH', ch, 'a:' .. id) -- a message, not a key: not counted
"""


def main(root):
    with open(os.path.join(root, "docs", "storage.md"), encoding="utf-8") as f:
        listed = names_listed(f.read())
    lua = os.path.join(root, "src", "store", "lua")
    scripts = sorted(os.path.join(d, n) for d in (lua, os.path.join(lua, "lib"))
                     for n in os.listdir(d) if n.endswith(".lua"))
    if names_in(SELF_TEST) != [(1, "nosuch:"), (2, "nokey"), (2, "nomore:")] or \
            {"nosuch:", "nokey", "nomore:"} & listed:
        print("the check does not see what its self-test builds: %r" % names_in(SELF_TEST))
        return 1
    missing, seen = [], 0
    for path in scripts:
        with open(path, encoding="utf-8") as f:
            built = names_in(f.read())
        for number, name in built:
            seen += 1
            if name not in listed:
                missing.append("%s:%d: builds the key `%s...`, which docs/storage.md does not list"
                               % (os.path.relpath(path, root), number, name))
    for m in missing:
        print(m)
    if not seen:
        print("no key built by any script: the check reads nothing")
        return 1
    print("%d scripts, %d keys built from a prefix, %d not in docs/storage.md"
          % (len(scripts), seen, len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")))
