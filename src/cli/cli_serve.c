/* cli_serve: `pixrelay serve`, the command that runs the HTTP API. Before
 * server_run creates anything (the data directory, the embedded Redis) it
 * refuses a listen or metrics-listen address that cannot work, and bank
 * door settings (bank-listen, its group, its proxies) that cannot. The other
 * commands are in cli_<command>.c, the dispatch on their names in cli.c.
 */
#include "cli_int.h"

#include "pixrelay/api/server.h"
#include "pixrelay/core/netaddr.h"
#include "pixrelay/core/unixid.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Refuse a listen address that cannot work before serve creates anything
 * (data directory, embedded Redis): malformed (2), or a host that does not
 * resolve or an address that cannot be bound now (1). 0 when it looks fine.
 * The trial socket is closed again, unless `keep` is given: then it is left
 * listening in *keep, so that a second address cannot be the same one. */
static int cli_check_listen(const char *setting, const char *addr, int *keep)
{
	struct addrinfo hints, *res = NULL;
	char host[256], port_s[8];
	int port = 0, fd = -1, one = 1, rc = 1, gai;

	if (netaddr_split_hostport(addr, host, sizeof(host), &port) < 0) {
		fprintf(stderr,
			"pixrelay: %s: expected host:port, [IPv6]:port or :port with a port "
			"from 0 to 65535, got '%s'\n",
			setting, addr);
		return 2;
	}
	snprintf(port_s, sizeof(port_s), "%d", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	gai = getaddrinfo(host, port_s, &hints, &res);
	if (gai != 0) {
		fprintf(stderr, "pixrelay: %s: cannot resolve '%s': %s\n", setting, host,
			gai_strerror(gai));
		return 2;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || (keep && listen(fd, 1) < 0)) {
		fprintf(stderr, "pixrelay: %s: cannot listen on %s: %s\n", setting, addr,
			strerror(errno));
		goto done;
	}
	rc = 0;
	if (keep) {
		*keep = fd;
		fd = -1;
	}
done:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return rc;
}

/* The bank door's settings as far as they can be judged before anything is
 * created: bank-listen is unix:/absolute/path (a TCP address could not tell
 * the proxy from any other local process), its group and the proxies'
 * users exist. 2 with the problem said; 0 when they look fine (or the door
 * is off). Whether the socket can be made is http_new_unix's to say. */
static int cli_check_bank_door(const struct config *cfg)
{
	struct sockaddr_un sa;
	struct unixid_uids uids;
	const char *path = cfg->bank_listen + 5;
	char err[256];
	gid_t gid;

	if (!cfg->bank_listen[0])
		return 0;
	if (strncmp(cfg->bank_listen, "unix:", 5) != 0 || path[0] != '/') {
		fprintf(stderr,
			"pixrelay: bank-listen: expected unix:/path/to/bank.sock, got '%s' (the "
			"bank door is a Unix socket, where pixrelay knows the proxy by its uid; "
			"a TCP address cannot tell the proxy from any other local process)\n",
			cfg->bank_listen);
		return 2;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr,
			"pixrelay: bank-listen: the socket path must be at most %zu bytes\n",
			sizeof(sa.sun_path) - 1);
		return 2;
	}
	if (cfg->bank_listen_group[0] &&
	    unixid_parse_gid(cfg->bank_listen_group, &gid, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay: bank-listen-group: %s\n", err);
		return 2;
	}
	if (unixid_parse_uids(cfg->bank_proxy_uids, &uids, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay: bank-proxy-uids: %s\n", err);
		return 2;
	}
	return 0;
}

int cli_cmd_serve(struct config *cfg, int argc, char **argv)
{
	int rc;

	if (cli_want_help(argc, argv)) {
		printf(
		    "usage: pixrelay serve [SETTINGS]\n\n"
		    "Serve the v1 API on --listen, and banks' webhooks on --bank-listen (a Unix\n"
		    "socket) when set. Without --redis, a private redis-server is started in\n"
		    "--data-dir (unix socket only, every write fsynced).\n\n");
		config_usage(stdout);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "pixrelay serve: unexpected argument '%s' (see --help)\n", argv[1]);
		return 2;
	}
	{
		int held = -1;
		rc = cli_check_listen("listen", cfg->listen, cfg->metrics_listen[0] ? &held : NULL);
		if (rc == 0 && cfg->metrics_listen[0])
			rc = cli_check_listen("metrics-listen", cfg->metrics_listen, NULL);
		if (held >= 0)
			close(held);
		if (rc != 0)
			return rc;
	}
	rc = cli_check_bank_door(cfg);
	if (rc != 0)
		return rc;
	return server_run(cfg);
}
