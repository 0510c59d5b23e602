/* Fuzz the parsers of URLs and addresses: validate_http_url (postbackUrl),
 * validate_email, netaddr_split_hostport (--listen), netaddr_list_parse
 * (--trusted-proxies, --destination-allow) and netaddr_list_contains. The
 * input is used whole as each string, and also split at its first newline
 * into a CIDR list and an address to look up in it. Never crash, leak or
 * read out of bounds; what validate_http_url accepts has its scheme and no
 * byte it promises to refuse. */
#include "pixrelay/netaddr.h"
#include "pixrelay/validate.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_url(const char *s)
{
	if (!validate_http_url(s))
		return;
	if (strncasecmp(s, "http://", 7) != 0 && strncasecmp(s, "https://", 8) != 0)
		__builtin_trap();
	if (strlen(s) > VALIDATE_URL_MAX)
		__builtin_trap();
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '\\' || *p == '#')
			__builtin_trap();
}

static void check_list(const char *spec, const char *ip)
{
	struct netaddr_list list;
	char err[256] = "";

	memset(&list, 0, sizeof(list));
	if (netaddr_list_parse(&list, spec, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			__builtin_trap();
		return;
	}
	(void)netaddr_list_contains(&list, ip);
	{
		struct sockaddr_in6 sa6;
		struct sockaddr_in sa4;

		memset(&sa6, 0, sizeof(sa6));
		memset(&sa4, 0, sizeof(sa4));
		if (inet_pton(AF_INET6, ip, &sa6.sin6_addr) == 1) {
			sa6.sin6_family = AF_INET6;
			(void)netaddr_list_contains_sa(&list, (struct sockaddr *)&sa6);
			(void)netaddr_is_public((struct sockaddr *)&sa6);
		} else if (inet_pton(AF_INET, ip, &sa4.sin_addr) == 1) {
			sa4.sin_family = AF_INET;
			(void)netaddr_list_contains_sa(&list, (struct sockaddr *)&sa4);
			(void)netaddr_is_public((struct sockaddr *)&sa4);
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
	(void)validate_email(s);
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
