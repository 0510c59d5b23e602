#include "pixrelay/scripts.h"

#include "pixrelay/ids.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* defined in the generated scripts_data.c */
extern const char script_key_create[], script_key_auth[], script_key_revoke[],
    script_platform_init[], script_charge_create[], script_charge_transition[],
    script_event_enqueue[], script_event_claim[], script_event_complete[], script_event_replay[],
    script_ingest_relay[], script_event_list[];

static const struct {
	const char *name;
	const char *body;
} table[SCRIPT_COUNT] = {
    [SCRIPT_KEY_CREATE] = {"key_create", script_key_create},
    [SCRIPT_KEY_AUTH] = {"key_auth", script_key_auth},
    [SCRIPT_KEY_REVOKE] = {"key_revoke", script_key_revoke},
    [SCRIPT_PLATFORM_INIT] = {"platform_init", script_platform_init},
    [SCRIPT_CHARGE_CREATE] = {"charge_create", script_charge_create},
    [SCRIPT_CHARGE_TRANSITION] = {"charge_transition", script_charge_transition},
    [SCRIPT_EVENT_ENQUEUE] = {"event_enqueue", script_event_enqueue},
    [SCRIPT_EVENT_CLAIM] = {"event_claim", script_event_claim},
    [SCRIPT_EVENT_COMPLETE] = {"event_complete", script_event_complete},
    [SCRIPT_EVENT_REPLAY] = {"event_replay", script_event_replay},
    [SCRIPT_INGEST_RELAY] = {"ingest_relay", script_ingest_relay},
    [SCRIPT_EVENT_LIST] = {"event_list", script_event_list},
};

static char shas[SCRIPT_COUNT][41];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void compute(void)
{
	for (int i = 0; i < SCRIPT_COUNT; i++) {
		unsigned char md[20];
		unsigned int len = 0;
		if (EVP_Digest(table[i].body, strlen(table[i].body), md, &len, EVP_sha1(), NULL) !=
		    1)
			abort();
		ids_hex(shas[i], md, 20);
	}
}

const char *scripts_name(enum script_id id)
{
	return table[id].name;
}

const char *scripts_body(enum script_id id)
{
	return table[id].body;
}

const char *scripts_sha(enum script_id id)
{
	pthread_once(&once, compute);
	return shas[id];
}
