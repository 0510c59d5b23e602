/* rslot: Redis Cluster's rules as pure functions: the CRC16 hash slot of a
 * key or of its hash tag, which argument routes a command, what an error
 * reply asks for (MOVED and ASK with their target, the retryable errors,
 * READONLY, NOSCRIPT) and the ranges of a CLUSTER SLOTS reply. Replies come
 * off the network, so every field is checked before use. The client acts
 * on them in cluster.c, send.c and redis.c. */
#include "pixrelay/redis/rslot.h"

#include "pixrelay/core/mem.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* CRC16/XMODEM: polynomial 0x1021, initial value 0, no reflection. Keys are
 * short (a hash tag is a few bytes), so bit by bit is fast enough. */
static unsigned crc16(const char *p, size_t len)
{
	unsigned crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (unsigned)(unsigned char)p[i] << 8;
		for (int b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
	}
	return crc & 0xffff;
}

void rslot_hashed_part(const char *key, size_t len, const char **part, size_t *partlen)
{
	const char *open = memchr(key, '{', len);

	if (open) {
		size_t rest = len - (size_t)(open - key) - 1;
		const char *close = memchr(open + 1, '}', rest);
		if (close && close > open + 1) {
			*part = open + 1;
			*partlen = (size_t)(close - open - 1);
			return;
		}
	}
	*part = key;
	*partlen = len;
}

int rslot_of(const char *key, size_t len)
{
	const char *part;
	size_t n;

	rslot_hashed_part(key, len, &part, &n);
	return (int)(crc16(part, n) & (RSLOT_COUNT - 1));
}

static size_t arglen(const char **argv, const size_t *lens, int i)
{
	return lens ? lens[i] : strlen(argv[i]);
}

static bool is(const char **argv, const size_t *lens, int i, const char *name)
{
	size_t n = strlen(name);

	return arglen(argv, lens, i) == n && strncasecmp(argv[i], name, n) == 0;
}

int rslot_key_index(int argc, const char **argv, const size_t *lens)
{
	static const char *const keyless[] = {
	    "PING",  "SCRIPT", "INFO", "CLUSTER", "WAIT",    "ASKING",	 "AUTH",      "SELECT",
	    "ROLE",  "HELLO",  "ECHO", "CLIENT",  "CONFIG",  "DBSIZE",	 "TIME",      "COMMAND",
	    "MULTI", "EXEC",   "KEYS", "SCAN",	  "FLUSHDB", "READONLY", "READWRITE", "SENTINEL"};

	if (argc < 1)
		return -1;
	if (is(argv, lens, 0, "EVALSHA") || is(argv, lens, 0, "EVAL") ||
	    is(argv, lens, 0, "EVALSHA_RO") || is(argv, lens, 0, "EVAL_RO") ||
	    is(argv, lens, 0, "FCALL")) {
		/* numkeys is argv[2]; with none, any node */
		if (argc < 4 || arglen(argv, lens, 2) == 0 || argv[2][0] < '1' || argv[2][0] > '9')
			return -1;
		return 3;
	}
	if (is(argv, lens, 0, "PUBSUB"))
		return argc >= 3 &&
			       (is(argv, lens, 1, "NUMSUB") || is(argv, lens, 1, "SHARDNUMSUB"))
			   ? 2
			   : -1;
	for (size_t i = 0; i < sizeof(keyless) / sizeof(keyless[0]); i++)
		if (is(argv, lens, 0, keyless[i]))
			return -1;
	return argc >= 2 ? 1 : -1;
}

static bool starts(const char *err, size_t len, const char *word)
{
	size_t n = strlen(word);

	return len >= n && memcmp(err, word, n) == 0 && (len == n || err[n] == ' ');
}

/* "<slot> <host>:<port>" after MOVED or ASK; the last ':' splits, so that an
 * IPv6 address works. */
static int parse_target(const char *p, size_t len, int *slot, char *host, size_t hostlen, int *port)
{
	const char *end = p + len, *sp, *colon = NULL;
	long s = 0, pt = 0;

	if (p == end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		if ((s = s * 10 + (*p - '0')) >= RSLOT_COUNT)
			return -1;
	if (p == end || *p != ' ')
		return -1;
	sp = ++p;
	for (const char *q = sp; q < end; q++)
		if (*q == ':')
			colon = q;
	if (!colon || colon == sp || (size_t)(colon - sp) >= hostlen || colon + 1 == end)
		return -1;
	for (const char *q = colon + 1; q < end; q++) {
		if (*q < '0' || *q > '9')
			return -1;
		if ((pt = pt * 10 + (*q - '0')) > 65535)
			return -1;
	}
	if (pt < 1)
		return -1;
	memcpy(host, sp, (size_t)(colon - sp));
	host[colon - sp] = '\0';
	*slot = (int)s;
	*port = (int)pt;
	return 0;
}

enum rslot_error rslot_parse_error(const char *err, size_t len, int *slot, char *host,
				   size_t hostlen, int *port)
{
	if (starts(err, len, "MOVED") || starts(err, len, "ASK")) {
		size_t skip = err[0] == 'M' ? 6 : 4;
		if (len <= skip ||
		    parse_target(err + skip, len - skip, slot, host, hostlen, port) < 0)
			return RSLOT_ERR_OTHER;
		return err[0] == 'M' ? RSLOT_ERR_MOVED : RSLOT_ERR_ASK;
	}
	if (starts(err, len, "TRYAGAIN") || starts(err, len, "CLUSTERDOWN") ||
	    starts(err, len, "LOADING") || starts(err, len, "MASTERDOWN"))
		return RSLOT_ERR_RETRY;
	if (starts(err, len, "READONLY"))
		return RSLOT_ERR_READONLY;
	if (starts(err, len, "NOSCRIPT"))
		return RSLOT_ERR_NOSCRIPT;
	return RSLOT_ERR_OTHER;
}

int rslot_parse_slots(const redisReply *reply, const char *fallback_host, struct rslot_range **out)
{
	struct rslot_range *ranges = NULL;
	int n = 0;

	if (!reply || reply->type != REDIS_REPLY_ARRAY)
		return -1;
	if (reply->elements)
		ranges = mem_calloc(reply->elements, sizeof(*ranges));
	for (size_t i = 0; i < reply->elements; i++) {
		const redisReply *e = reply->element[i], *node;
		struct rslot_range *rg = &ranges[n];
		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
		    e->element[0]->type != REDIS_REPLY_INTEGER ||
		    e->element[1]->type != REDIS_REPLY_INTEGER)
			goto bad;
		node = e->element[2];
		if (node->type != REDIS_REPLY_ARRAY || node->elements < 2 ||
		    node->element[0]->type != REDIS_REPLY_STRING ||
		    node->element[1]->type != REDIS_REPLY_INTEGER)
			goto bad;
		rg->start = (int)e->element[0]->integer;
		rg->end = (int)e->element[1]->integer;
		if (e->element[0]->integer < 0 || e->element[1]->integer >= RSLOT_COUNT ||
		    rg->start > rg->end || node->element[1]->integer < 1 ||
		    node->element[1]->integer > 65535)
			goto bad;
		rg->port = (int)node->element[1]->integer;
		rg->host = node->element[0]->str;
		rg->hostlen = node->element[0]->len;
		if (rg->hostlen == 0 || (rg->hostlen == 1 && rg->host[0] == '?')) {
			if (!fallback_host)
				goto bad;
			rg->host = fallback_host;
			rg->hostlen = strlen(fallback_host);
		}
		n++;
	}
	*out = ranges;
	return n;
bad:
	free(ranges);
	return -1;
}
