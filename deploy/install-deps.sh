#!/usr/bin/env bash
# Install pixrelay's build and run dependencies from Debian's packages when
# they are missing. --test adds what the test suites use.
set -euo pipefail

pkgs=(meson ninja-build pkg-config gcc libevent-dev libyajl-dev libhiredis-dev
	libcurl4-openssl-dev libssl-dev libqrencode-dev libpng-dev redis-server python3)
if [ "${1:-}" = "--test" ]; then
	pkgs+=(zbar-tools openssl curl clang-format python3-yaml python3-jsonschema
		nginx systemd man-db groff-base prometheus chromium wrk iproute2)
	# python3-yaml, python3-jsonschema: tests/docs/check_openapi.py and the
	# API Pix validator of the bank tests (tests/e2e/bcb.py)
	# openapi-spec-validator is packaged from Debian 13 (trixie) on, not in
	# bookworm: tests/docs/check_openapi.py then checks the structure itself
	if apt-cache show python3-openapi-spec-validator >/dev/null 2>&1; then
		pkgs+=(python3-openapi-spec-validator)
	fi
	# wrk and iproute2 (ss): the benchmark's short form (tests/bench)
	# chromium: the dashboard's browser test (tests/dashboard) drives Debian's
	# build with playwright-core, which downloads no browser of its own.
	# The OpenAPI linters (tests/docs/package.json) and playwright-core
	# (tests/dashboard/package.json) run on Node.js; a node
	# that is already there (from Debian or elsewhere) is used as it is
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		pkgs+=(nodejs npm)
	fi
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
# The tests run nginx themselves, unprivileged, on the loopback, and use only
# promtool of the prometheus package: installing them must not start the
# system's nginx on port 80 nor a Prometheus server. Debian's maintainer
# scripts ask /usr/sbin/policy-rc.d; when there is none, one that refuses
# only these two is in place for the duration of the install.
policy=""
if [[ " ${missing[*]} " == *" nginx "* || " ${missing[*]} " == *" prometheus "* ]] &&
	[ ! -e /usr/sbin/policy-rc.d ]; then
	policy=/usr/sbin/policy-rc.d
	trap '$sudo rm -f "$policy"' EXIT
	printf '#!/bin/sh\n# temporary, from pixrelay deploy/install-deps.sh\ncase "$1" in nginx|prometheus) exit 101 ;; esac\nexit 0\n' |
		$sudo tee "$policy" >/dev/null
	$sudo chmod 0755 "$policy"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
