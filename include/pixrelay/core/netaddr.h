/* netaddr: host:port parsing and address-in-CIDR checks (no I/O). */
#ifndef PIXRELAY_NETADDR_H
#define PIXRELAY_NETADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Split "host:port", "[v6]:port" or ":port" into host (without brackets,
 * "0.0.0.0"-style empty host becomes "0.0.0.0") and port.
 * Returns 0, or -1 when malformed; outputs written only on success. */
int netaddr_split_hostport(const char *s, char *host, size_t hostlen, int *port);

/* A parsed list of CIDRs (IPv4 and IPv6), each optionally limited to a port. */
struct netaddr_list {
	size_t n;
	struct netaddr_cidr {
		int family; /* AF_INET or AF_INET6 */
		unsigned char addr[16];
		int bits;
		int port; /* 0 = any port */
	} * items;
};

/* Parse a comma-separated list into `list`. An entry is an address or CIDR,
 * optionally with a port: "10.0.0.1", "192.168.0.0/16", "::1", "fd00::/8",
 * "10.0.0.5:8080", "10.0.0.0/8:443", "[::1]:9000", "[fd00::/8]:443" (an IPv6
 * entry with a port is written in brackets). Returns 0, or -1 with the
 * offending entry in err. The caller frees with netaddr_list_deinit. */
int netaddr_list_parse(struct netaddr_list *list, const char *spec, char *err, size_t errlen);
void netaddr_list_deinit(struct netaddr_list *list);

/* True when the textual address `ip` (v4 or v6; v4-mapped v6 counts as v4)
 * lies in one of the list's ranges, whatever their port. */
bool netaddr_list_contains(const struct netaddr_list *list, const char *ip);

/* True when `sa` is a public unicast address. IPv4: not "this network",
 * private, loopback, shared (CGNAT), link-local, IETF protocol assignments,
 * documentation, benchmarking, 6to4 relay, multicast, reserved or broadcast.
 * IPv6: inside global unicast 2000::/3 and not the IETF special-purpose
 * block 2001::/23 (Teredo, ORCHID, benchmarking, ...), documentation
 * (2001:db8::/32, 3fff::/20), nor a 6to4 address (2002::/16) whose embedded
 * IPv4 address is not public. v4-mapped (::ffff:a.b.c.d) is judged as IPv4;
 * every other form outside 2000::/3 (IPv4-compatible ::a.b.c.d, SIIT
 * ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, unique local,
 * link-local, multicast, ...) is not public. */
bool netaddr_is_public(const struct sockaddr *sa);

/* True when the list contains the address `sa` with its port. */
bool netaddr_list_contains_sa(const struct netaddr_list *list, const struct sockaddr *sa);

/* True when the list contains the textual address `ip` with `port` (0 = not
 * known: only entries without a port match). */
bool netaddr_list_contains_port(const struct netaddr_list *list, const char *ip, int port);

/* True when the textual address `ip` is public (netaddr_is_public); false
 * for anything that is not an IP address. */
bool netaddr_ip_is_public(const char *ip);

#endif
