/* scripts: the Lua scripts of src/store/lua/, compiled into the binary
 * (tools/embed_scripts.py writes scripts_data.c), matched to their ids by
 * file name and hashed with SHA1 once, on first use: a script id without
 * its file aborts there. The client loads them (SCRIPT LOAD in node.c,
 * again after NOSCRIPT in send.c) and calls them by SHA (redis.c); what
 * each script does is written at its head. */
#include "pixrelay/redis/scripts.h"

#include "pixrelay/core/ids.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* defined in the generated scripts_data.c, one per file of src/store/lua/ */
struct scripts_source {
	const char *name;
	const char *body;
};
extern const struct scripts_source scripts_sources[];
extern const size_t scripts_nsources;

/* the file name (without .lua) of each script id */
/* clang-format off */
static const char *const names[SCRIPT_COUNT] = {
	[SCRIPT_KEY_CREATE] = "key_create",
	[SCRIPT_KEY_AUTH] = "key_auth",
	[SCRIPT_KEY_REVOKE] = "key_revoke",
	[SCRIPT_CHARGE_CREATE] = "charge_create",
	[SCRIPT_CHARGE_TRANSITION] = "charge_transition",
	[SCRIPT_INGEST] = "ingest",
	[SCRIPT_EXPIRE_DUE] = "expire_due",
	[SCRIPT_EVENT_SETTLE] = "event_settle",
	[SCRIPT_EVENT_REPLAY] = "event_replay",
	[SCRIPT_EVENT_LIST] = "event_list",
	[SCRIPT_ACCOUNT_PUT] = "account_put",
	[SCRIPT_ACCOUNT_INDEX] = "account_index",
	[SCRIPT_ACCOUNT_ADMIT] = "account_admit",
	[SCRIPT_ACCOUNT_QUEUE] = "account_queue",
	[SCRIPT_ACCOUNT_CLAIMS] = "account_claims",
	[SCRIPT_ACCOUNT_REVIEW] = "account_review",
	[SCRIPT_TRANSFER_RESOLVE] = "transfer_resolve",
	[SCRIPT_TRANSFER_DEBIT] = "transfer_debit",
	[SCRIPT_TRANSFER_CREDIT] = "transfer_credit",
	[SCRIPT_TRANSFER_FINISH] = "transfer_finish",
	[SCRIPT_SECRET_ROTATE] = "secret_rotate",
	[SCRIPT_SHARD_STATS] = "shard_stats",
	[SCRIPT_KEY_LIST] = "key_list",
	[SCRIPT_CHARGE_LIST] = "charge_list",
	[SCRIPT_ACCOUNT_LIST] = "account_list",
	[SCRIPT_ACCOUNT_LEDGER] = "account_ledger",
	[SCRIPT_BANK_CONNECT] = "bank_connect",
	[SCRIPT_BANK_CREDENTIALS] = "bank_credentials",
	[SCRIPT_BANK_DISCONNECT] = "bank_disconnect",
	[SCRIPT_BANK_LOG] = "bank_log",
	[SCRIPT_BANK_PIX] = "bank_pix",
	[SCRIPT_CHARGE_RESERVE] = "charge_reserve",
	[SCRIPT_BANK_RECON] = "bank_recon",
	[SCRIPT_BANK_RECON_DONE] = "bank_recon_done",
	[SCRIPT_BANK_REPORT] = "bank_report",
	[SCRIPT_EVENT_GET] = "event_get",
	[SCRIPT_EVENT_AFTER] = "event_after",
	[SCRIPT_STREAM_TRIM] = "stream_trim",
	[SCRIPT_BANK_UPDATE] = "bank_update",
	[SCRIPT_BANK_LAST_CALL] = "bank_last_call",
	[SCRIPT_BANK_SET_TOKEN] = "bank_set_token",
	[SCRIPT_BANK_NOTE_API] = "bank_note_api",
	[SCRIPT_ACCOUNT_CHARGING] = "account_charging",
	[SCRIPT_ENDPOINT_PUT] = "endpoint_put",
	[SCRIPT_ENDPOINT_DELETE] = "endpoint_delete",
	[SCRIPT_ENDPOINT_ROTATE] = "endpoint_rotate",
	[SCRIPT_ENDPOINT_LIST] = "endpoint_list",
	[SCRIPT_ENDPOINT_EXPIRE] = "endpoint_expire",
	[SCRIPT_OVERVIEW_READ] = "overview_read",
	[SCRIPT_REC_CREATE] = "rec_create",
	[SCRIPT_REC_STATUS] = "rec_status",
	[SCRIPT_REC_LIST] = "rec_list",
	[SCRIPT_REC_OPEN] = "rec_open",
	[SCRIPT_COBR_HEARD] = "cobr_heard",
};
/* clang-format on */

static const char *bodies[SCRIPT_COUNT];
static char shas[SCRIPT_COUNT][41];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Match ids to the compiled-in sources once; a script id without its file
 * is a build mistake that must stop the program at once, not at first use. */
static void compute(void)
{
	for (int i = 0; i < SCRIPT_COUNT; i++) {
		for (size_t j = 0; names[i] && j < scripts_nsources; j++)
			if (strcmp(scripts_sources[j].name, names[i]) == 0)
				bodies[i] = scripts_sources[j].body;
		if (!bodies[i]) {
			fprintf(stderr, "pixrelay: script %d (%s) is not compiled in\n", i,
				names[i] ? names[i] : "unnamed");
			abort();
		}
	}
	for (int i = 0; i < SCRIPT_COUNT; i++) {
		unsigned char md[20];
		unsigned int len = 0;
		if (EVP_Digest(bodies[i], strlen(bodies[i]), md, &len, EVP_sha1(), NULL) != 1)
			abort();
		ids_hex(shas[i], md, 20);
	}
}

const char *scripts_name(enum script_id id)
{
	return names[id];
}

const char *scripts_body(enum script_id id)
{
	pthread_once(&once, compute);
	return bodies[id];
}

const char *scripts_sha(enum script_id id)
{
	pthread_once(&once, compute);
	return shas[id];
}
