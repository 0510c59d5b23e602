#!/usr/bin/env python3
"""Lint docs/openapi.yaml with a real OpenAPI linter and fail on any finding.

usage: lint_openapi.py redocly|spectral [SOURCE_ROOT]

The linters are npm packages pinned in tests/docs/package.json and
package-lock.json. They are installed with `npm ci --ignore-scripts` into
tests/docs/node_modules (ignored by git) when that is missing or was made
from another lock file; a file lock keeps two tests from installing at once.
They need Node.js >= 18.17 (Debian 12's nodejs is 18.20; install-deps.sh
--test installs nodejs and npm when `node` or `npm` is missing).

- redocly: `@redocly/cli lint` with tests/docs/redocly.yaml (the
  `recommended` rules, none switched off); the two warnings listed in
  tests/docs/.redocly.lint-ignore.yaml are ignored, each with its reason
  written there. Any other error or warning fails, and so does a change in
  the number of problems ignored (an ignore entry added or gone stale).
- spectral: `@stoplight/spectral-cli lint` with tests/docs/.spectral.yaml
  (`spectral:oas`, one rule off with its reason); any result, down to a hint,
  fails.
"""
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_NODE = (18, 17)
# the problems listed, each with its reason, in .redocly.lint-ignore.yaml
IGNORED = 2


def die(msg):
    print("lint_openapi: " + msg, file=sys.stderr)
    sys.exit(1)


def node_ok():
    node = shutil.which("node")
    if not node or not shutil.which("npm"):
        die("node and npm are needed (bash deploy/install-deps.sh --test installs them)")
    v = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    m = re.match(r"^v(\d+)\.(\d+)", v)
    if not m or (int(m.group(1)), int(m.group(2))) < MIN_NODE:
        die("the linters need Node.js >= %d.%d, this is %s" % (MIN_NODE + (v,)))
    return v


def install():
    """npm ci, unless node_modules was made from this very lock file."""
    with open(os.path.join(HERE, "package-lock.json"), "rb") as f:
        want = hashlib.sha256(f.read()).hexdigest()
    stamp = os.path.join(HERE, "node_modules", ".pixrelay-lock-sha256")
    with open(os.path.join(HERE, ".npm-install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(stamp) as f:
                if f.read().strip() == want:
                    return
        except OSError:
            pass
        env = dict(os.environ, npm_config_fund="false", npm_config_audit="false",
                   npm_config_update_notifier="false")
        p = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund",
                            "--loglevel=error"], cwd=HERE, env=env, capture_output=True,
                           text=True, timeout=900)
        if p.returncode != 0:
            die("npm ci failed in tests/docs (is the npm registry reachable?):\n"
                + p.stdout + p.stderr)
        with open(stamp, "w") as f:
            f.write(want + "\n")


def lint_redocly(root):
    cmd = [os.path.join(HERE, "node_modules", ".bin", "redocly"), "lint",
           os.path.join(root, "docs", "openapi.yaml"),
           "--config", os.path.join(HERE, "redocly.yaml"), "--format=json"]
    # no usage reports to Redocly, no update check
    env = dict(os.environ, REDOCLY_TELEMETRY="off", REDOCLY_SUPPRESS_UPDATE_NOTICE="true")
    p = subprocess.run(cmd, cwd=HERE, env=env, capture_output=True, text=True, timeout=300)
    try:
        out = json.loads(p.stdout[p.stdout.index("{"):])
    except ValueError:
        die("redocly printed no JSON (exit %d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
    problems = [x for x in out.get("problems", []) if not x.get("ignored")]
    for x in problems:
        where = ", ".join(loc.get("pointer", "?") for loc in x.get("location", []))
        print("redocly %s %s: %s (%s)" % (x.get("severity"), x.get("ruleId"), x.get("message"),
                                          where))
    totals = out.get("totals", {})
    ignored = totals.get("ignored", 0)
    if problems or p.returncode != 0:
        die("@redocly/cli lint: %d errors, %d warnings" % (totals.get("errors", -1),
                                                          totals.get("warnings", -1)))
    if ignored != IGNORED:
        die("expected exactly the %d problems listed in .redocly.lint-ignore.yaml to be "
            "ignored, got %d: update that file and its reasons" % (IGNORED, ignored))
    return ("@redocly/cli lint: no errors, no warnings (%d explained in .redocly.lint-ignore.yaml)"
            % IGNORED)


def lint_spectral(root):
    cmd = [os.path.join(HERE, "node_modules", ".bin", "spectral"), "lint",
           os.path.join(root, "docs", "openapi.yaml"),
           "--ruleset", os.path.join(HERE, ".spectral.yaml"),
           "--format", "json", "--fail-severity", "hint", "--quiet"]
    p = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=300)
    text = p.stdout.strip()
    try:
        results = json.loads(text[text.index("["):]) if "[" in text else None
    except ValueError:
        results = None
    if results is None:
        if p.returncode == 0:
            results = []
        else:
            die("spectral printed no JSON (exit %d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
    names = {0: "error", 1: "warning", 2: "info", 3: "hint"}
    for r in results:
        line = r.get("range", {}).get("start", {}).get("line", -1) + 1
        print("spectral %s %s: %s (line %d, %s)" % (names.get(r.get("severity")), r.get("code"),
                                                    r.get("message"), line,
                                                    ".".join(map(str, r.get("path", [])))))
    if results or p.returncode != 0:
        die("@stoplight/spectral-cli lint (spectral:oas): %d results" % len(results))
    return "@stoplight/spectral-cli lint (spectral:oas): no results"


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("redocly", "spectral"):
        die("usage: lint_openapi.py redocly|spectral [SOURCE_ROOT]")
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(HERE))
    version = node_ok()
    install()
    msg = (lint_redocly if sys.argv[1] == "redocly" else lint_spectral)(root)
    print("openapi: docs/openapi.yaml: %s (node %s)" % (msg, version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
