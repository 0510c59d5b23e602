#!/usr/bin/env bash
# Install pixrelay's build and run dependencies from Debian's packages when
# they are missing. --test adds what the test suites use.
set -euo pipefail

pkgs=(meson ninja-build pkg-config gcc libevent-dev libyajl-dev libhiredis-dev
	libcurl4-openssl-dev libssl-dev libqrencode-dev libpng-dev redis-server python3)
if [ "${1:-}" = "--test" ]; then
	pkgs+=(zbar-tools openssl curl clang-format python3-yaml python3-jsonschema)
	# openapi-spec-validator is packaged from Debian 13 (trixie) on, not in
	# bookworm: tests/docs/check_openapi.py then checks the structure itself
	if apt-cache show python3-openapi-spec-validator >/dev/null 2>&1; then
		pkgs+=(python3-openapi-spec-validator)
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
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
