/* netaddr: host:port parsing and address-in-CIDR checks (no I/O). */
#ifndef PIXRELAY_NETADDR_H
#define PIXRELAY_NETADDR_H

#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

/* Split "host:port", "[v6]:port" or ":port" into host (without brackets,
 * "0.0.0.0"-style empty host becomes "0.0.0.0") and port.
 * Returns 0, or -1 when malformed; outputs written only on success. */
int netaddr_split_hostport(const char *s, char *host, size_t hostlen, int *port);

/* A parsed list of CIDRs (IPv4 and IPv6). */
struct netaddr_list {
	size_t n;
	struct netaddr_cidr {
		int family; /* AF_INET or AF_INET6 */
		unsigned char addr[16];
		int bits;
	} * items;
};

/* Parse "10.0.0.1, 192.168.0.0/16, ::1" into `list`. Returns 0, or -1 with
 * the offending entry in err. The caller frees with netaddr_list_deinit. */
int netaddr_list_parse(struct netaddr_list *list, const char *spec, char *err, size_t errlen);
void netaddr_list_deinit(struct netaddr_list *list);

/* Nonzero when the textual address `ip` (v4 or v6; v4-mapped v6 counts as v4)
 * lies in one of the list's ranges. */
int netaddr_list_contains(const struct netaddr_list *list, const char *ip);

/* Nonzero when `sa` is a public unicast address: not loopback, private,
 * shared (CGNAT), link-local, multicast, reserved, unspecified or
 * documentation space (v4-mapped v6 judged as v4). */
int netaddr_is_public(const struct sockaddr *sa);

/* Nonzero when the list contains the address `sa`. */
int netaddr_list_contains_sa(const struct netaddr_list *list, const struct sockaddr *sa);

#endif
