/* banks_door: whether a Redis holds a connection that needs the bank door
 * (bank-listen), for `serve` to refuse to start without it: a bank that
 * authenticates by mutual TLS has its certificate believed only there, so
 * without the door every one of its webhook calls would be refused. Read at
 * start on the blocking client: the environment's index, then each
 * connection's auth. */
#include "pixrelay/store/banks_door.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/pix/keyspace.h"

#include <stdio.h>
#include <string.h>

int banks_find_mtls(struct rds *c, const char *prefix, char id[BANKS_ID_MAX], enum env *env,
		    char *err, size_t errlen)
{
	redisReply *ids = NULL, *r = NULL;
	int rc = BANKS_NOT_FOUND;

	for (int e = 0; e < 2 && rc == BANKS_NOT_FOUND; e++) {
		enum env en = e ? ENV_PRODUCTION : ENV_SANDBOX;
		char idx[KS_KEY_MAX];
		const char *argv[4] = {"ZRANGE", idx, "0", "-1"};

		ks_env_banks_key(idx, sizeof(idx), prefix, en);
		freeReplyObject(ids);
		ids = rds_call(c, 4, argv, NULL, err, errlen);
		if (!ids || ids->type != REDIS_REPLY_ARRAY) {
			if (ids)
				snprintf(err, errlen, "unexpected reply listing bank connections");
			rc = -1;
			break;
		}
		for (size_t i = 0; i < ids->elements; i++) {
			const redisReply *x = ids->element[i];
			char key[KS_KEY_MAX];
			const char *hget[3] = {"HGET", key, "auth"};

			if (x->type != REDIS_REPLY_STRING || strlen(x->str) != IDS_ULID_LEN + 4 ||
			    strncmp(x->str, "bnk_", 4) != 0 || ks_shard_of(x->str) < 0)
				continue;
			ks_bank_key(key, sizeof(key), prefix, ks_shard_of(x->str), x->str);
			freeReplyObject(r);
			r = rds_call(c, 3, hget, NULL, err, errlen);
			if (!r || r->type == REDIS_REPLY_ERROR) {
				if (r)
					snprintf(err, errlen, "%s", r->str);
				rc = -1;
				break;
			}
			/* a connection disconnected meanwhile has no hash: nil */
			if (r->type == REDIS_REPLY_STRING && strcmp(r->str, "mtls") == 0) {
				snprintf(id, BANKS_ID_MAX, "%s", x->str);
				*env = en;
				rc = 0;
				break;
			}
		}
	}
	freeReplyObject(ids);
	freeReplyObject(r);
	return rc;
}
