/* addr.c: where Redis is, read from the redis setting: redis://, unix://, a
 * path, or redis-sentinel:// with its sentinels (rds_parse_addr), and the
 * sentinels' password. Pure: no I/O and no event loop, so
 * tests/unit/test-redis_addr.c calls it directly. The client that connects
 * to these addresses is redis.c and node.c; Sentinel's questions are in
 * sentinel.c. */
#include "pixrelay/redis/redis.h"

#include "pixrelay/core/mem.h"

#include <stdlib.h>
#include <string.h>

static int parse_hostport(const char *p, size_t n, int defport, char *host, size_t hostlen,
			  int *port)
{
	const char *colon = memchr(p, ':', n);
	size_t hl = colon ? (size_t)(colon - p) : n;

	if (hl == 0 || hl >= hostlen)
		return -1;
	memcpy(host, p, hl);
	host[hl] = '\0';
	*port = defport;
	if (colon) {
		long v = 0;
		const char *q = colon + 1, *end = p + n;
		if (q == end)
			return -1;
		for (; q < end; q++) {
			if (*q < '0' || *q > '9' || (v = v * 10 + (*q - '0')) > 65535)
				return -1;
		}
		if (v < 1)
			return -1;
		*port = (int)v;
	}
	return 0;
}

static int parse_db(const char *s, int *db)
{
	char *end = NULL;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v > 1000000)
		return -1;
	*db = (int)v;
	return 0;
}

/* [:password@] at p: copied into a->password; returns what follows. */
static const char *parse_password(const char *p, struct rds_addr *a)
{
	const char *at = strrchr(p, '@');

	if (at) {
		const char *pw = memchr(p, ':', (size_t)(at - p));
		pw = pw ? pw + 1 : p;
		if ((size_t)(at - pw) >= sizeof(a->password))
			return NULL;
		memcpy(a->password, pw, (size_t)(at - pw));
		p = at + 1;
	}
	return p;
}

static int parse_sentinel(const char *p, struct rds_addr *a)
{
	const char *slash = strchr(p, '/'), *name, *end;

	if (!slash || slash == p)
		return -1;
	while (p < slash) {
		const char *comma = memchr(p, ',', (size_t)(slash - p));
		size_t n = comma ? (size_t)(comma - p) : (size_t)(slash - p);
		struct rds_hostport *s;
		if (a->nsentinels == RDS_MAX_SENTINELS)
			return -1;
		s = &a->sentinels[a->nsentinels];
		if (parse_hostport(p, n, 26379, s->host, sizeof(s->host), &s->port) < 0)
			return -1;
		a->nsentinels++;
		p += n + (comma ? 1 : 0);
		if (comma && p == slash)
			return -1;
	}
	name = slash + 1;
	end = strchr(name, '/');
	if (!end)
		end = name + strlen(name);
	if (end == name || (size_t)(end - name) >= sizeof(a->master))
		return -1;
	memcpy(a->master, name, (size_t)(end - name));
	if (*end && (!end[1] || parse_db(end + 1, &a->db) < 0))
		return -1;
	return 0;
}

int rds_parse_addr(const char *url, struct rds_addr *out)
{
	struct rds_addr *a = mem_new(struct rds_addr);
	const char *p;
	int rc = -1;

	if (url[0] == '/') {
		if (strlen(url) >= sizeof(a->path))
			goto done;
		strcpy(a->path, url);
	} else if (strncmp(url, "unix://", 7) == 0) {
		const char *q = strchr(url + 7, '?');
		size_t n = q ? (size_t)(q - url - 7) : strlen(url + 7);
		if (n == 0 || n >= sizeof(a->path) || url[7] != '/')
			goto done;
		memcpy(a->path, url + 7, n);
		if (q && (strncmp(q, "?db=", 4) != 0 || parse_db(q + 4, &a->db) < 0))
			goto done;
	} else if (strncmp(url, "redis://", 8) == 0) {
		const char *slash;
		p = parse_password(url + 8, a);
		if (!p)
			goto done;
		slash = strchr(p, '/');
		if (parse_hostport(p, slash ? (size_t)(slash - p) : strlen(p), 6379, a->host,
				   sizeof(a->host), &a->port) < 0)
			goto done;
		if (slash && slash[1] && parse_db(slash + 1, &a->db) < 0)
			goto done;
	} else if (strncmp(url, "redis-sentinel://", 17) == 0) {
		p = parse_password(url + 17, a);
		if (!p || parse_sentinel(p, a) < 0)
			goto done;
	} else {
		goto done;
	}
	*out = *a;
	rc = 0;
done:
	mem_wipe(a, sizeof(*a));
	free(a);
	return rc;
}

int rds_addr_set_sentinel_password(struct rds_addr *a, const char *password)
{
	if (strlen(password) >= sizeof(a->sentinel_password))
		return -1;
	strcpy(a->sentinel_password, password);
	return 0;
}
