#!/usr/bin/env python3
"""The alert examples of docs/metrics.md ("## Alerts") are rules Prometheus
takes: `promtool check rules` accepts the YAML block, and every metric an
expression names is one of the page's table (a name pixrelay serves, a
histogram's by its family), with only the labels the table gives it.

    python3 check_alert_rules.py ROOT

Exit 1 saying what is wrong.
"""
import os
import re
import subprocess
import sys
import tempfile


def main(root):
    with open(os.path.join(root, "docs", "metrics.md"), encoding="utf-8") as f:
        page = f.read()
    m = re.search(r"^## Alerts\n.*?^```yaml\n(.*?)^```", page, re.S | re.M)
    if not m:
        print("alert-rules: docs/metrics.md has no ```yaml block under ## Alerts")
        return 1
    rules = m.group(1)
    # the table: | `name` (or `a`, `b`) | type | labels | what |
    table = {}
    for row in re.finditer(r"^\| (`pixrelay_[^|]*) \| \w+ \|([^|]*)\|", page, re.M):
        labels = set(re.findall(r"`(\w+)`", row.group(2)))
        for name in re.findall(r"`(pixrelay_\w+)`", row.group(1)):
            table[name] = labels
    bad = []
    for expr in re.findall(r"expr: (?:>\n)?((?:.+\n)+?)(?=\s+(?:for|labels):)", rules):
        for name, sel in re.findall(r"(pixrelay_\w+)(\{[^}]*\})?", expr):
            family = re.sub(r"_(bucket|sum|count)$", "", name)
            if name not in table and family not in table:
                bad.append("%s: not a metric of the table" % name)
                continue
            for label in re.findall(r"(\w+)\s*[!=]~?", sel or ""):
                if label not in table.get(name, table.get(family, set())) | {"le"}:
                    bad.append("%s: no label %s in the table" % (name, label))
        for label in re.findall(r"by \(([^)]*)\)", expr):
            for l in (x.strip() for x in label.split(",")):
                names = re.findall(r"(pixrelay_\w+)", expr)
                if not any(l in table.get(n, set()) for n in names):
                    bad.append("by (%s): no metric of the expression has it" % l)
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        f.write(rules)
    try:
        p = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True,
                           text=True, timeout=60)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        bad.append("promtool check rules: " + (p.stdout + p.stderr).strip())
    for b in bad:
        print("alert-rules: docs/metrics.md: " + b)
    if bad:
        return 1
    print("alert-rules: %d rules of docs/metrics.md pass promtool and name served metrics"
          % len(re.findall(r"- alert:", rules)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
