/* netaddr: addresses as text and as sockaddrs, with no I/O: a listen
 * address split into host and port, the CIDR lists of the settings
 * (trusted-proxies, read by http/request.c; destination-allow, by
 * relay/delivery.c), and whether an address is public, which keeps
 * production postbacks off private networks (delivery.c asks it of the
 * address curl connects to). An IPv4-mapped IPv6 address is judged as the
 * IPv4 address it holds, and a 6to4 address as its embedded one. */
#include "pixrelay/core/netaddr.h"

#include "pixrelay/core/mem.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int netaddr_split_hostport(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon, *h = s;
	size_t hl;
	char *end = NULL;
	long p;

	if (*s == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return -1;
		h = s + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		hl = (size_t)(colon - s);
	}
	p = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || *end || p < 0 || p > 65535)
		return -1;
	if (hl + 1 > hostlen)
		return -1;
	if (hl == 0) {
		snprintf(host, hostlen, "0.0.0.0");
	} else {
		memcpy(host, h, hl);
		host[hl] = '\0';
	}
	*port = (int)p;
	return 0;
}

/* Parse a textual address into family and 16 bytes; v4-mapped v6 becomes v4. */
static int parse_ip(const char *ip, int *family, unsigned char out[16])
{
	unsigned char b[16];

	memset(out, 0, 16);
	if (inet_pton(AF_INET, ip, b) == 1) {
		*family = AF_INET;
		memcpy(out, b, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, ip, b) == 1) {
		static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (memcmp(b, mapped, 12) == 0) {
			*family = AF_INET;
			memcpy(out, b + 12, 4);
		} else {
			*family = AF_INET6;
			memcpy(out, b, 16);
		}
		return 0;
	}
	return -1;
}

/* Split one allow-list entry into its address part (with "/bits" if any)
 * and its port (0 when none). Writes into addr (size bytes). */
static int split_entry(const char *tok, char *addr, size_t size, int *port)
{
	const char *colon = NULL, *a = tok;
	size_t al;

	*port = 0;
	if (*tok == '[') {
		const char *close = strchr(tok, ']');
		if (!close || close[1] != ':')
			return -1;
		a = tok + 1;
		al = (size_t)(close - a);
		colon = close + 1;
	} else {
		const char *first = strchr(tok, ':');
		/* an IPv4 entry has at most one colon, before its port; an IPv6 entry
		 * without brackets has no port */
		if (first && !strchr(first + 1, ':'))
			colon = first;
		al = colon ? (size_t)(colon - tok) : strlen(tok);
	}
	if (al == 0 || al >= size)
		return -1;
	memcpy(addr, a, al);
	addr[al] = '\0';
	if (colon) {
		char *end = NULL;
		long p = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || *end || p < 1 || p > 65535 || colon[1] == '+' ||
		    colon[1] == '-' || colon[1] == ' ')
			return -1;
		*port = (int)p;
	}
	return 0;
}

int netaddr_list_parse(struct netaddr_list *list, const char *spec, char *err, size_t errlen)
{
	char *copy = mem_strdup(spec), *save = NULL, *tok;
	int rc = -1;

	memset(list, 0, sizeof(*list));
	for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		struct netaddr_cidr c;
		char addr[INET6_ADDRSTRLEN + 8], *slash;
		int maxbits;

		if (split_entry(tok, addr, sizeof(addr), &c.port) < 0)
			goto bad;
		slash = strchr(addr, '/');
		if (slash)
			*slash = '\0';
		if (parse_ip(addr, &c.family, c.addr) < 0)
			goto bad;
		maxbits = c.family == AF_INET ? 32 : 128;
		c.bits = maxbits;
		if (slash) {
			char *end = NULL;
			long b = strtol(slash + 1, &end, 10);
			if (end == slash + 1 || *end || b < 0 || b > maxbits || slash[1] == '-' ||
			    slash[1] == '+' || slash[1] == ' ')
				goto bad;
			c.bits = (int)b;
		}
		list->items = mem_realloc(list->items, (list->n + 1) * sizeof(c));
		list->items[list->n++] = c;
		continue;
	bad:
		snprintf(err, errlen, "not an IP address or CIDR, with an optional port: '%.100s'",
			 tok);
		netaddr_list_deinit(list);
		goto done;
	}
	rc = 0;
done:
	free(copy);
	return rc;
}

void netaddr_list_deinit(struct netaddr_list *list)
{
	free(list->items);
	list->items = NULL;
	list->n = 0;
}

/* port < 0: any entry matches whatever its port */
static bool list_match(const struct netaddr_list *list, const char *ip, int port)
{
	unsigned char a[16];
	int family;

	if (parse_ip(ip, &family, a) < 0)
		return false;
	for (size_t i = 0; i < list->n; i++) {
		const struct netaddr_cidr *c = &list->items[i];
		int full = c->bits / 8, rest = c->bits % 8;
		if (c->family != family)
			continue;
		if (port >= 0 && c->port != 0 && c->port != port)
			continue;
		if (memcmp(a, c->addr, (size_t)full) != 0)
			continue;
		if (rest) {
			unsigned char mask = (unsigned char)(0xff << (8 - rest));
			if ((a[full] & mask) != (c->addr[full] & mask))
				continue;
		}
		return true;
	}
	return false;
}

bool netaddr_list_contains(const struct netaddr_list *list, const char *ip)
{
	return list_match(list, ip, -1);
}

bool netaddr_list_contains_port(const struct netaddr_list *list, const char *ip, int port)
{
	return list_match(list, ip, port < 0 ? 0 : port);
}

static bool v4_public(const unsigned char a[4])
{
	if (a[0] == 0 || a[0] == 10 || a[0] == 127 || a[0] >= 224)
		return false; /* this network, private, loopback, multicast, reserved, broadcast */
	if (a[0] == 100 && (a[1] & 0xc0) == 64)
		return false; /* 100.64.0.0/10 shared address space */
	if (a[0] == 169 && a[1] == 254)
		return false; /* link-local */
	if (a[0] == 172 && (a[1] & 0xf0) == 16)
		return false; /* 172.16.0.0/12 */
	if (a[0] == 192 && a[1] == 168)
		return false;
	if (a[0] == 192 && a[1] == 0 && (a[2] == 0 || a[2] == 2))
		return false; /* IETF protocol assignments, TEST-NET-1 */
	if (a[0] == 198 && (a[1] == 18 || a[1] == 19))
		return false; /* benchmarking */
	if ((a[0] == 198 && a[1] == 51 && a[2] == 100) || (a[0] == 203 && a[1] == 0 && a[2] == 113))
		return false; /* TEST-NET-2, TEST-NET-3 */
	if (a[0] == 192 && a[1] == 88 && a[2] == 99)
		return false; /* 6to4 relay anycast */
	return true;
}

static bool v6_public(const unsigned char a[16])
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (memcmp(a, mapped, 12) == 0)
		return v4_public(a + 12);
	/* only global unicast is public: everything below 2000::/3 (IPv4-
	 * compatible, SIIT, NAT64, ...) or above it (unique local, link-local,
	 * multicast) may lead to an address that is not */
	if ((a[0] & 0xe0) != 0x20)
		return false;
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] < 0x02)
		return false; /* 2001::/23: Teredo, benchmarking, ORCHID, ... */
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8)
		return false; /* documentation */
	if (a[0] == 0x3f && a[1] == 0xff && (a[2] & 0xf0) == 0)
		return false; /* documentation, 3fff::/20 */
	if (a[0] == 0x20 && a[1] == 0x02)
		return v4_public(a + 2); /* 6to4 leads to its embedded IPv4 address */
	return true;
}

bool netaddr_ip_is_public(const char *ip)
{
	unsigned char b[16];

	if (inet_pton(AF_INET, ip, b) == 1)
		return v4_public(b);
	if (inet_pton(AF_INET6, ip, b) == 1)
		return v6_public(b);
	return false;
}

bool netaddr_is_public(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_public(
		    (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr);
	if (sa->sa_family == AF_INET6)
		return v6_public(((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
	return false;
}

bool netaddr_list_contains_sa(const struct netaddr_list *list, const struct sockaddr *sa)
{
	char ip[INET6_ADDRSTRLEN];
	int port;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		port = ntohs(s4->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		port = ntohs(s6->sin6_port);
	} else {
		return false;
	}
	return netaddr_list_contains_port(list, ip, port);
}
