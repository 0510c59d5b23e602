#!/usr/bin/env python3
"""Every setting of src/core/config.c is documented in docs/configuration.md with
its flag, its environment variable and its default."""
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
src = open(root + "/src/core/config.c").read()
doc = open(root + "/docs/configuration.md").read()
opts = re.findall(r'\{"([a-z-]+)", [SL]\([a-z_]+\), "([^"]*)"', src)
if len(opts) < 10:
    sys.exit("check_config_doc: could not read the settings table of src/core/config.c")
missing = []
for name, default in opts:
    var = "PIXRELAY_" + name.upper().replace("-", "_")
    for what in ("`%s`" % name, var):
        if what not in doc:
            missing.append("%s (setting %s)" % (what, name))
    if default and default not in doc:
        missing.append("default %r of %s" % (default, name))
if missing:
    sys.exit("check_config_doc: docs/configuration.md does not mention:\n  - " + "\n  - ".join(missing))
print("configuration: the %d settings of src/core/config.c are documented" % len(opts))
