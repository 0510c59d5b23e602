#include "pixrelay/netaddr.h"

#include "check.h"

int main(void)
{
	char host[64], err[128];
	int port = 0;
	struct netaddr_list l;

	CHECK_INT(netaddr_split_hostport("127.0.0.1:8080", host, sizeof(host), &port), 0);
	CHECK_STR(host, "127.0.0.1");
	CHECK_INT(port, 8080);
	CHECK_INT(netaddr_split_hostport("[::1]:9", host, sizeof(host), &port), 0);
	CHECK_STR(host, "::1");
	CHECK_INT(port, 9);
	CHECK_INT(netaddr_split_hostport(":0", host, sizeof(host), &port), 0);
	CHECK_STR(host, "0.0.0.0");
	CHECK_INT(port, 0);
	CHECK_INT(netaddr_split_hostport("localhost", host, sizeof(host), &port), -1);
	CHECK_INT(netaddr_split_hostport("h:70000", host, sizeof(host), &port), -1);
	CHECK_INT(netaddr_split_hostport("h:8x", host, sizeof(host), &port), -1);
	CHECK_INT(netaddr_split_hostport("[::1]8080", host, sizeof(host), &port), -1);

	CHECK_INT(
	    netaddr_list_parse(&l, "10.0.0.0/8, 192.168.1.7 ,::1, fd00::/8", err, sizeof(err)), 0);
	CHECK_INT(l.n, 4);
	CHECK(netaddr_list_contains(&l, "10.200.3.4"));
	CHECK(!netaddr_list_contains(&l, "11.0.0.1"));
	CHECK(netaddr_list_contains(&l, "192.168.1.7"));
	CHECK(!netaddr_list_contains(&l, "192.168.1.8"));
	CHECK(netaddr_list_contains(&l, "::1"));
	CHECK(netaddr_list_contains(&l, "fd12:3456::1"));
	CHECK(!netaddr_list_contains(&l, "fe80::1"));
	CHECK(netaddr_list_contains(&l, "::ffff:10.1.2.3")); /* v4-mapped counts as v4 */
	CHECK(!netaddr_list_contains(&l, "not-an-ip"));
	netaddr_list_deinit(&l);

	CHECK_INT(netaddr_list_parse(&l, "172.16.0.0/12", err, sizeof(err)), 0);
	CHECK(netaddr_list_contains(&l, "172.31.255.255"));
	CHECK(!netaddr_list_contains(&l, "172.32.0.0"));
	netaddr_list_deinit(&l);

	CHECK_INT(netaddr_list_parse(&l, "", err, sizeof(err)), 0);
	CHECK_INT(l.n, 0);
	CHECK(!netaddr_list_contains(&l, "127.0.0.1"));
	netaddr_list_deinit(&l);

	CHECK_INT(netaddr_list_parse(&l, "10.0.0.0/33", err, sizeof(err)), -1);
	CHECK_STR(err, "not an IP address or CIDR: '10.0.0.0/33'");
	CHECK_INT(netaddr_list_parse(&l, "1.2.3.4, example.com", err, sizeof(err)), -1);
	CHECK_STR(err, "not an IP address or CIDR: 'example.com'");
	return check_finish("netaddr");
}
