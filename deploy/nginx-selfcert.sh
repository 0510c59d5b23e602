#!/usr/bin/env bash
# A self-signed certificate where deploy/nginx.conf expects one, to try that
# file (`nginx -t`) or a staging setup before the real certificate exists:
#
#   sudo bash deploy/nginx-selfcert.sh [DIR [NAME [WEBHOOK_NAME]]]
#
# DIR defaults to /etc/nginx/pixrelay, NAME (the public host name) to
# pay.example.com, WEBHOOK_NAME (the banks' webhook name) to
# pix-webhook.example.com. Writes DIR/fullchain.pem and DIR/privkey.pem (mode
# 0600), an EC P-256 key valid for 30 days for NAME, WEBHOOK_NAME, localhost
# and 127.0.0.1, and the same as DIR/webhook-fullchain.pem and
# DIR/webhook-privkey.pem for the webhook server.
# Existing files are kept unless --force is given. Clients trust it with
# `curl --cacert DIR/fullchain.pem`. Never use it in production: replace both
# files with a real certificate (for instance from Let's Encrypt).
set -euo pipefail

force=0
args=()
for a in "$@"; do
	case "$a" in
	--force) force=1 ;;
	-h | --help)
		sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "nginx-selfcert.sh: unknown option $a" >&2
		exit 2
		;;
	*) args+=("$a") ;;
	esac
done
dir=${args[0]:-/etc/nginx/pixrelay}
name=${args[1]:-pay.example.com}
hook=${args[2]:-pix-webhook.example.com}
for n in "$name" "$hook"; do
	if ! [[ "$n" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$ ]]; then
		echo "nginx-selfcert.sh: '$n' is not a host name" >&2
		exit 2
	fi
done
command -v openssl >/dev/null || {
	echo "nginx-selfcert.sh: openssl is not installed (apt-get install openssl)" >&2
	exit 1
}

if [ $force -eq 0 ] && { [ -e "$dir/fullchain.pem" ] || [ -e "$dir/privkey.pem" ]; }; then
	echo "nginx-selfcert.sh: $dir already has a certificate; --force replaces it" >&2
	exit 1
fi
mkdir -p "$dir"
umask 077
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
	-subj "/CN=$name" \
	-addext "subjectAltName=DNS:$name,DNS:$hook,DNS:localhost,IP:127.0.0.1" \
	-keyout "$dir/privkey.pem.tmp" -out "$dir/fullchain.pem.tmp" 2>/dev/null
chmod 0644 "$dir/fullchain.pem.tmp"
cp -p "$dir/privkey.pem.tmp" "$dir/webhook-privkey.pem"
cp -p "$dir/fullchain.pem.tmp" "$dir/webhook-fullchain.pem"
mv "$dir/privkey.pem.tmp" "$dir/privkey.pem"
mv "$dir/fullchain.pem.tmp" "$dir/fullchain.pem"
echo "self-signed certificate for $name and $hook (30 days): $dir/fullchain.pem, key $dir/privkey.pem (and webhook-*.pem)"
