/* Fuzz the parsers of URLs and addresses: validate_is_http_url (postbackUrl),
 * validate_is_email, netaddr_split_hostport (--listen), netaddr_list_parse
 * (--trusted-proxies, --destination-allow) and netaddr_list_contains. The
 * input is used whole as each string, and also split at its first newline
 * into a CIDR list (with ports) and an address to look up in it. Never
 * crash, leak or read out of bounds; what validate_is_http_url accepts has its
 * scheme and no byte it promises to refuse; an address as text and as a
 * sockaddr gets the same answers from netaddr_ip_is_public /
 * netaddr_is_public and netaddr_list_contains_port / _contains_sa. */
#include "pixrelay/core/netaddr.h"
#include "pixrelay/core/validate.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_url(const char *s)
{
	if (!validate_is_http_url(s))
		return;
	if (strncasecmp(s, "http://", 7) != 0 && strncasecmp(s, "https://", 8) != 0)
		__builtin_trap();
	if (strlen(s) > VALIDATE_URL_MAX)
		__builtin_trap();
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '\\' || *p == '#')
			__builtin_trap();
}

/* The textual and the sockaddr forms of the same address must get the same
 * answers (public, in the list, with a port). */
static void check_list(const char *spec, const char *ip)
{
	static const int ports[] = {0, 443, 8080, 65535};
	struct netaddr_list list;
	struct sockaddr_in6 sa6;
	struct sockaddr_in sa4;
	struct sockaddr *sa = NULL;
	char err[256] = "";

	memset(&sa6, 0, sizeof(sa6));
	memset(&sa4, 0, sizeof(sa4));
	if (inet_pton(AF_INET6, ip, &sa6.sin6_addr) == 1) {
		sa6.sin6_family = AF_INET6;
		sa = (struct sockaddr *)&sa6;
	} else if (inet_pton(AF_INET, ip, &sa4.sin_addr) == 1) {
		sa4.sin_family = AF_INET;
		sa = (struct sockaddr *)&sa4;
	}
	if (!!netaddr_ip_is_public(ip) != (sa ? !!netaddr_is_public(sa) : 0))
		__builtin_trap();
	memset(&list, 0, sizeof(list));
	if (netaddr_list_parse(&list, spec, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			__builtin_trap();
		return;
	}
	for (size_t i = 0; i < list.n; i++)
		if (list.items[i].port < 0 || list.items[i].port > 65535 ||
		    list.items[i].bits < 0 ||
		    list.items[i].bits > (list.items[i].family == AF_INET ? 32 : 128))
			__builtin_trap();
	(void)netaddr_list_contains(&list, ip);
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		int by_text = netaddr_list_contains_port(&list, ip, ports[i]);

		if (by_text && !netaddr_list_contains(&list, ip))
			__builtin_trap(); /* in the list with a port, so in it at all */
		if (sa && ports[i]) {
			sa6.sin6_port = htons((uint16_t)ports[i]);
			sa4.sin_port = htons((uint16_t)ports[i]);
			if (!!netaddr_list_contains_sa(&list, sa) != !!by_text)
				__builtin_trap();
		}
	}
	netaddr_list_deinit(&list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *nl, host[256];
	int port = -1;

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	check_url(s);
	(void)validate_is_email(s);
	if (netaddr_split_hostport(s, host, sizeof(host), &port) == 0 && (port < 0 || port > 65535))
		__builtin_trap();
	nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		check_list(s, nl + 1);
	} else {
		check_list(s, s);
	}
	free(s);
	return 0;
}
