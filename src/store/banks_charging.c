/* banks_charging: the bank connection an account's charges go to (docs/
 * banks.md, "The key on the QR"), derived for an account whose record an
 * older version wrote (account_charging.lua): its record (charge_via,
 * charge_key, bank_api) as lua/lib/charging.lua derives it, as connect,
 * update, disconnect and credentials do (banks.c). */
#include "pixrelay/store/banks_charging.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/keyspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct charging {
	banks_charging_fn charging_cb;
	void *ud;
};

static bool reply_str(const redisReply *r)
{
	return r->type == REDIS_REPLY_STRING;
}

static void on_charging(void *ud, redisReply *reply, const char *err)
{
	struct charging *c = ud;
	struct banks_charging ch;

	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
	    !reply_str(reply->element[0]) || !reply_str(reply->element[1]) ||
	    !reply_str(reply->element[2])) {
		c->charging_cb(c->ud, -1, NULL,
			       err ? err : "unexpected reply from account_charging");
		goto done;
	}
	memset(&ch, 0, sizeof(ch));
	snprintf(ch.via, sizeof(ch.via), "%s", reply->element[0]->str);
	snprintf(ch.key, sizeof(ch.key), "%s", reply->element[1]->str);
	snprintf(ch.bank_api, sizeof(ch.bank_api), "%s", reply->element[2]->str);
	c->charging_cb(c->ud, 0, &ch, NULL);
done:
	free(c);
}

void banks_charging(struct rds *r, const struct config *cfg, enum env env, const char *account,
		    banks_charging_fn cb, void *ud)
{
	struct charging *c;
	char ak[KS_KEY_MAX], sp[KS_PREFIX_MAX], channel[KS_KEY_MAX];
	int shard = ks_shard_of(account);

	if (shard < 0 || strlen(account) != IDS_ULID_LEN) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	c = mem_new(struct charging);
	c->charging_cb = cb;
	c->ud = ud;
	ks_account_key(ak, sizeof(ak), cfg->prefix, env, account);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	ks_invalidation_channel(channel, sizeof(channel), cfg->prefix);
	{
		const char *argv[] = {ak, env_name(env), account, sp, channel};
		rds_script(r, on_charging, c, SCRIPT_ACCOUNT_CHARGING, 1, 5, argv, NULL);
	}
}
