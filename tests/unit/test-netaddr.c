#include "pixrelay/core/netaddr.h"

#include "check.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

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
	CHECK_STR(err, "not an IP address or CIDR, with an optional port: '10.0.0.0/33'");
	CHECK_INT(netaddr_list_parse(&l, "1.2.3.4, example.com", err, sizeof(err)), -1);
	CHECK_STR(err, "not an IP address or CIDR, with an optional port: 'example.com'");
	{
		static const char *const bad[] = {"1.2.3.4:",	"1.2.3.4:0",   "1.2.3.4:65536",
						  "1.2.3.4:-1", "[::1]",       "[::1]x",
						  "[::1]:",	"10.0.0.0/-1", "10.0.0.0/8:x",
						  "::1]:9",	"1.2.3.4:+80"};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			CHECK_INT(netaddr_list_parse(&l, bad[i], err, sizeof(err)), -1);
	}

	/* entries limited to a port */
	CHECK_INT(netaddr_list_parse(&l,
				     "127.0.0.1:9000, 10.0.0.0/8:443, [::1]:8080, "
				     "[fd00::/8]:25, 192.168.0.0/16",
				     err, sizeof(err)),
		  0);
	CHECK_INT(l.n, 5);
	CHECK(netaddr_list_contains_port(&l, "127.0.0.1", 9000));
	CHECK(!netaddr_list_contains_port(&l, "127.0.0.1", 9001));
	CHECK(!netaddr_list_contains_port(&l, "127.0.0.1", 0));
	CHECK(netaddr_list_contains_port(&l, "10.9.8.7", 443));
	CHECK(!netaddr_list_contains_port(&l, "10.9.8.7", 80));
	CHECK(netaddr_list_contains_port(&l, "::1", 8080));
	CHECK(!netaddr_list_contains_port(&l, "::1", 8081));
	CHECK(netaddr_list_contains_port(&l, "fd00:1::2", 25));
	CHECK(netaddr_list_contains_port(&l, "192.168.3.4", 1234)); /* no port: any */
	CHECK(netaddr_list_contains_port(&l, "::ffff:127.0.0.1", 9000));
	{
		struct sockaddr_in s4;
		struct sockaddr_in6 s6;
		memset(&s4, 0, sizeof(s4));
		s4.sin_family = AF_INET;
		inet_pton(AF_INET, "127.0.0.1", &s4.sin_addr);
		s4.sin_port = htons(9000);
		CHECK(netaddr_list_contains_sa(&l, (struct sockaddr *)&s4));
		s4.sin_port = htons(9002);
		CHECK(!netaddr_list_contains_sa(&l, (struct sockaddr *)&s4));
		memset(&s6, 0, sizeof(s6));
		s6.sin6_family = AF_INET6;
		inet_pton(AF_INET6, "::1", &s6.sin6_addr);
		s6.sin6_port = htons(8080);
		CHECK(netaddr_list_contains_sa(&l, (struct sockaddr *)&s6));
		s6.sin6_port = htons(80);
		CHECK(!netaddr_list_contains_sa(&l, (struct sockaddr *)&s6));
	}
	netaddr_list_deinit(&l);

	/* public or not */
	{
		static const char *const not_public[] = {"127.0.0.1",
							 "10.1.2.3",
							 "172.16.0.1",
							 "192.168.1.1",
							 "100.64.0.1",
							 "169.254.1.1",
							 "0.0.0.0",
							 "224.0.0.1",
							 "255.255.255.255",
							 "192.0.2.1",
							 "198.51.100.1",
							 "203.0.113.1",
							 "198.18.0.1",
							 "192.0.0.1",
							 "192.88.99.1",
							 "::",
							 "::1",
							 "::127.0.0.1",
							 "::7f00:1",
							 "::ffff:127.0.0.1",
							 "::ffff:10.0.0.1",
							 "::ffff:0:7f00:1",
							 "::ffff:0:808:808",
							 "2002:7f00:1::1",
							 "2002:a00:1::1",
							 "2002:c0a8:101::1",
							 "64:ff9b::7f00:1",
							 "64:ff9b::808:808",
							 "64:ff9b:1::1",
							 "2001::1",
							 "2001:0:4136:e378:8000:63bf:3fff:fdd2",
							 "2001:2::1",
							 "2001:10::1",
							 "2001:db8::1",
							 "3fff::1",
							 "fc00::1",
							 "fd12::1",
							 "fe80::1",
							 "ff02::1",
							 "100::1",
							 "4000::1",
							 "not-an-ip",
							 ""};
		static const char *const public_[] = {"8.8.8.8",
						      "1.1.1.1",
						      "11.1.1.2",
						      "172.32.0.1",
						      "100.128.0.1",
						      "::ffff:8.8.8.8",
						      "2606:4700:4700::1111",
						      "2a00:1450:4001::1",
						      "2002:808:808::1",
						      "2400:cb00::1",
						      "2001:200::1"};
		for (size_t i = 0; i < sizeof(not_public) / sizeof(not_public[0]); i++) {
			if (netaddr_ip_is_public(not_public[i]))
				fprintf(stderr, "public? %s\n", not_public[i]);
			CHECK(!netaddr_ip_is_public(not_public[i]));
		}
		for (size_t i = 0; i < sizeof(public_) / sizeof(public_[0]); i++) {
			if (!netaddr_ip_is_public(public_[i]))
				fprintf(stderr, "not public? %s\n", public_[i]);
			CHECK(netaddr_ip_is_public(public_[i]));
		}
	}
	return check_finish("netaddr");
}
