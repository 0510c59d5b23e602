/* keyspace: every name the module gives a Redis key or channel, for one
 * prefix, shard, environment and id, against the literal name; and each
 * name's spelling in docs/storage.md (the path is argv[1]), under the tag it
 * lives in there, matched against the literal (each <...> of the docs
 * stands for some text), so that a rename that forgets the docs fails. Also
 * the shards that ids name. */
#include "pixrelay/pix/keyspace.h"

#include "check.h"

#include <stdlib.h>

#define P "pixrelay:"
#define ACCT "01JCM0K7RXS4V1M8H3Q2N5B615" /* "15": shard 1 * 32 + 5 = 37 */
#define CHARGE "01JCM0K8ZZ2T6W9PRH4QJ1D815"
#define EVT "evt_01JCM0K9A1B2C3D4E5F6G7H815"
#define TRF "trf_01JCM0KA000000000000000015"
#define BNK "bnk_01JCM0KC3M5N7P9R1T3V5X7Z15"
#define WEP "wep_01JCM0KD3M5N7P9R1T3V5X7Z15"
#define KEY_ID "key_01JCM0KB7Q4W3E2R1T0Y9V8H7P"
#define SHA "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

/* The sections of docs/storage.md, each from its first words to the next's. */
enum section { SHARD, ENV, META, KEYS, CHANNELS, NSECTIONS };

static const char *const section_starts[NSECTIONS + 1] = {
    "Under `{s<k>}`", "Under `{<env>}`",  "Under `{meta}`",
    "Under `{keys}`", "Pub/sub channels", "The C code spells",
};

/* The tag each section's keys are under, as the docs spell it. */
static const char *const section_tags[NSECTIONS] = {
    "<prefix>{s<k>}:", "<prefix>{<env>}:", "<prefix>{meta}:", "<prefix>{keys}:", "",
};

static char *docs;
static const char *section_at[NSECTIONS + 1];

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* Does `name` match `pattern`, where each <...> of the pattern stands for
 * one character or more? */
static int matches(const char *pattern, const char *name)
{
	const char *close;

	if (*pattern != '<')
		return *pattern == *name && (!*pattern || matches(pattern + 1, name + 1));
	close = strchr(pattern, '>');
	if (!close)
		return 0;
	for (const char *n = name + 1; n <= name + strlen(name); n++)
		if (*name && matches(close + 1, n))
			return 1;
	return 0;
}

/* Is "`spelled`" written in section s of the docs? */
static int in_section(enum section s, const char *spelled)
{
	char quoted[128];
	const char *at;

	snprintf(quoted, sizeof(quoted), "`%s`", spelled);
	at = strstr(section_at[s], quoted);
	return at && at < section_at[s + 1];
}

/* `got` is `want`; and `doc`, as spelled in section s of the docs (NULL for
 * a prefix that the docs do not list), names it there. */
static void check_name(const char *got, const char *want, enum section s, const char *doc)
{
	char pattern[256];

	CHECK_STR(got, want);
	if (!doc)
		return;
	if (!in_section(s, doc)) {
		check_failures++;
		fprintf(stderr, "docs/storage.md does not list `%s` after \"%s\"\n", doc,
			section_starts[s]);
	}
	snprintf(pattern, sizeof(pattern), "%s%s", section_tags[s], doc);
	if (!matches(pattern, want)) {
		check_failures++;
		fprintf(stderr, "\"%s\" is not what docs/storage.md spells as %s\n", want, pattern);
	}
	check_count += 2;
}

static void test_shard_keys(void)
{
	char k[KS_KEY_MAX];

	ks_shard_prefix(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:", SHARD, NULL);
	CHECK_INT(ks_account_key(k, sizeof(k), P, ENV_SANDBOX, ACCT), 0);
	check_name(k, P "{s37}:acct:sandbox:" ACCT, SHARD, "acct:<env>:<id>");
	ks_account_key(k, sizeof(k), P, ENV_PRODUCTION, ACCT);
	check_name(k, P "{s37}:acct:production:" ACCT, SHARD, "acct:<env>:<id>");
	CHECK_INT(ks_charge_key(k, sizeof(k), P, 37, CHARGE), 0);
	check_name(k, P "{s37}:ch:" CHARGE, SHARD, "ch:<id>");
	ks_charge_key_prefix(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:ch:", SHARD, NULL);
	ks_external_ids_key(k, sizeof(k), P, 37, ACCT);
	check_name(k, P "{s37}:ext:" ACCT, SHARD, "ext:<account>");
	ks_charge_reservations_key(k, sizeof(k), P, 37, ACCT);
	check_name(k, P "{s37}:cres:" ACCT, SHARD, "cres:<account>");
	ks_charge_index_key(k, sizeof(k), P, 37, ACCT);
	check_name(k, P "{s37}:charges:" ACCT, SHARD, "charges:<account>");
	ks_expiry_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:expiry", SHARD, "expiry");
	ks_ledger_key(k, sizeof(k), P, 37, ACCT);
	check_name(k, P "{s37}:ledger:" ACCT, SHARD, "ledger:<account>");
	ks_files_key(k, sizeof(k), P, 37, ACCT);
	check_name(k, P "{s37}:files:" ACCT, SHARD, "files:<account>");
	ks_idempotency_key(k, sizeof(k), P, 37, KEY_ID, SHA);
	check_name(k, P "{s37}:idem:" KEY_ID ":" SHA, SHARD, "idem:<caller>:<sha256>");
	ks_transfer_key(k, sizeof(k), P, 37, TRF);
	check_name(k, P "{s37}:xfer:" TRF, SHARD, "xfer:<transfer id>");
	ks_transfers_out_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:xout", SHARD, "xout");
	ks_transfer_in_key(k, sizeof(k), P, 37, TRF);
	check_name(k, P "{s37}:xin:" TRF, SHARD, "xin:<transfer id>");
	ks_event_key(k, sizeof(k), P, 37, EVT);
	check_name(k, P "{s37}:e:" EVT, SHARD, "e:<event id>");
	ks_event_log_key(k, sizeof(k), P, 37, EVT);
	check_name(k, P "{s37}:log:" EVT, SHARD, "log:<event id>");
	ks_event_index_key(k, sizeof(k), P, 37, ACCT);
	check_name(k, P "{s37}:a:" ACCT, SHARD, "a:<account>");
	ks_hosts_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:hosts", SHARD, "hosts");
	ks_lease_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:lease", SHARD, "lease");
	ks_dead_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:dead", SHARD, "dead");
	ks_stream_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:s", SHARD, "s");
	ks_upstream_key(k, sizeof(k), P, 37, ACCT, "up-1");
	check_name(k, P "{s37}:up:" ACCT ":up-1", SHARD, "up:<account>:<upstream id>");
	ks_ingest_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:ingest", SHARD, "ingest");
	ks_live_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:live", SHARD, "live");
	ks_endpoint_key(k, sizeof(k), P, 37, WEP);
	check_name(k, P "{s37}:ep:" WEP, SHARD, "ep:<endpoint id>");
	ks_endpoint_index_key(k, sizeof(k), P, 37, ENV_PRODUCTION, ACCT);
	check_name(k, P "{s37}:eps:production:" ACCT, SHARD, "eps:<env>:<account>");
	ks_held_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:held", SHARD, "held");
	ks_bank_key(k, sizeof(k), P, 37, BNK);
	check_name(k, P "{s37}:bank:" BNK, SHARD, "bank:<connection id>");
	ks_bank_key_prefix(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:bank:", SHARD, NULL);
	ks_bank_index_key(k, sizeof(k), P, 37, ACCT);
	check_name(k, P "{s37}:banks:" ACCT, SHARD, "banks:<account>");
	ks_bank_log_key(k, sizeof(k), P, 37, BNK);
	check_name(k, P "{s37}:blog:" BNK, SHARD, "blog:<connection id>");
	ks_bank_pix_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:bank", SHARD, "bank");
	ks_bank_refunds_key(k, sizeof(k), P, 37, BNK);
	check_name(k, P "{s37}:bref:" BNK, SHARD, "bref:<connection id>");
	ks_bank_read_key(k, sizeof(k), P, 37, BNK);
	check_name(k, P "{s37}:bread:" BNK, SHARD, "bread:<connection id>");
	ks_bank_schedule_key(k, sizeof(k), P, 37);
	check_name(k, P "{s37}:bankrec", SHARD, "bankrec");
	ks_bank_ok_key(k, sizeof(k), P, 37, ENV_PRODUCTION);
	check_name(k, P "{s37}:bankok:production", SHARD, "bankok:<env>");
	ks_bank_day_key(k, sizeof(k), P, 37, BNK, "2026-11-26");
	check_name(k, P "{s37}:bday:" BNK ":2026-11-26", SHARD, "bday:<connection>:<day>");
	ks_bank_recovered_key(k, sizeof(k), P, 37, BNK, "2026-11-26");
	check_name(k, P "{s37}:brec:" BNK ":2026-11-26", SHARD, "brec:<connection>:<day>");
	ks_bank_elsewhere_key(k, sizeof(k), P, 37, BNK, "2026-11-26");
	check_name(k, P "{s37}:bels:" BNK ":2026-11-26", SHARD, "bels:<connection>:<day>");
	CHECK_INT(ks_recurrence_key(k, sizeof(k), P, 37, "rec_" CHARGE), 0);
	check_name(k, P "{s37}:rec:rec_" CHARGE, SHARD, "rec:<id>");
	ks_recurrence_index_key(k, sizeof(k), P, 37, ACCT);
	check_name(k, P "{s37}:recs:" ACCT, SHARD, "recs:<account>");
	ks_recurrence_idrec_key(k, sizeof(k), P, 37, ACCT);
	check_name(k, P "{s37}:recx:" ACCT, SHARD, "recx:<account>");
	ks_recurrence_open_key(k, sizeof(k), P, 37, BNK);
	check_name(k, P "{s37}:recopen:" BNK, SHARD, "recopen:<connection>");
	ks_cobr_open_key(k, sizeof(k), P, 37, BNK);
	check_name(k, P "{s37}:cobropen:" BNK, SHARD, "cobropen:<connection>");
	ks_recurrence_charges_key(k, sizeof(k), P, 37, ACCT, "rec_X");
	check_name(k, P "{s37}:recch:" ACCT ":rec_X", SHARD, "recch:<account>:<recurrence>");

	/* the first and last shards, another prefix */
	ks_hosts_key(k, sizeof(k), "px/", 0);
	CHECK_STR(k, "px/{s0}:hosts");
	ks_event_key(k, sizeof(k), "", KS_SHARDS_MAX - 1, EVT);
	CHECK_STR(k, "{s1023}:e:" EVT);
}

static void test_no_shard(void)
{
	char k[KS_KEY_MAX];

	strcpy(k, "x");
	CHECK_INT(ks_charge_key(k, sizeof(k), P, -1, CHARGE), -1);
	CHECK_STR(k, "");
	strcpy(k, "x");
	CHECK_INT(ks_hosts_key(k, sizeof(k), P, KS_SHARDS_MAX), -1);
	CHECK_STR(k, "");
	strcpy(k, "x");
	CHECK_INT(ks_account_key(k, sizeof(k), P, ENV_SANDBOX, "not-an-id"), -1);
	CHECK_STR(k, "");
	strcpy(k, "x");
	CHECK_INT(ks_files_key(k, sizeof(k), P, ks_shard_of("01JCM0K7RX"), "01JCM0K7RX"), -1);
	CHECK_STR(k, "");
	/* a shard prefix is written for any number */
	ks_shard_prefix(k, sizeof(k), P, -1);
	CHECK_STR(k, P "{s-1}:");
}

/* Cut short where one snprintf of the whole name would be. */
static void test_cut_short(void)
{
	char k[KS_KEY_MAX];

	CHECK_INT(ks_charge_key(k, 12, P, 37, CHARGE), 0);
	CHECK_STR(k, "pixrelay:{s");
	ks_charge_key(k, 16, P, 37, CHARGE);
	CHECK_STR(k, "pixrelay:{s37}:");
	ks_charge_key(k, 20, P, 37, CHARGE);
	CHECK_STR(k, "pixrelay:{s37}:ch:0");
	ks_env_kyc_key(k, 20, P, ENV_SANDBOX);
	CHECK_STR(k, "pixrelay:{sandbox}:");
	ks_env_kyc_key(k, 21, P, ENV_SANDBOX);
	CHECK_STR(k, "pixrelay:{sandbox}:k");
	ks_keys_id_key(k, 20, P, KEY_ID);
	CHECK_STR(k, "pixrelay:{keys}:id:");
	ks_meta_layout_key(k, 17, P);
	CHECK_STR(k, "pixrelay:{meta}:");
	ks_invalidation_channel(k, 13, P);
	CHECK_STR(k, "pixrelay:inv");
}

static void test_env_keys(void)
{
	char k[KS_KEY_MAX];

	ks_env_prefix(k, sizeof(k), P, ENV_SANDBOX);
	check_name(k, P "{sandbox}:", ENV, NULL);
	ks_env_taxids_key(k, sizeof(k), P, ENV_SANDBOX);
	check_name(k, P "{sandbox}:taxids", ENV, "taxids");
	ks_env_pixkeys_key(k, sizeof(k), P, ENV_PRODUCTION);
	check_name(k, P "{production}:pixkeys", ENV, "pixkeys");
	ks_env_accounts_key(k, sizeof(k), P, ENV_SANDBOX);
	check_name(k, P "{sandbox}:accounts", ENV, "accounts");
	ks_env_accounts_key(k, sizeof(k), P, ENV_PRODUCTION);
	check_name(k, P "{production}:accounts", ENV, "accounts");
	ks_env_platform_key(k, sizeof(k), P, ENV_PRODUCTION);
	check_name(k, P "{production}:platform", ENV, "platform");
	ks_env_kyc_key(k, sizeof(k), P, ENV_SANDBOX);
	check_name(k, P "{sandbox}:kyc", ENV, "kyc");
	ks_env_review_key(k, sizeof(k), P, ENV_SANDBOX);
	check_name(k, P "{sandbox}:review", ENV, "review");
	ks_env_banks_key(k, sizeof(k), P, ENV_PRODUCTION);
	check_name(k, P "{production}:banks", ENV, "banks");
}

static void test_keys_meta_channels(void)
{
	char k[KS_KEY_MAX];

	ks_keys_prefix(k, sizeof(k), P);
	check_name(k, P "{keys}:", KEYS, NULL);
	ks_keys_record_key(k, sizeof(k), P, SHA);
	check_name(k, P "{keys}:h:" SHA, KEYS, "h:<sha256>");
	ks_keys_id_key(k, sizeof(k), P, KEY_ID);
	check_name(k, P "{keys}:id:" KEY_ID, KEYS, "id:<key id>");
	ks_keys_all_key(k, sizeof(k), P);
	check_name(k, P "{keys}:all", KEYS, "all");
	/* key_create.lua finds the {keys} prefix by cutting 3 characters off
	 * KEYS[3], the "all" key */
	CHECK_INT(strlen(k), strlen(P "{keys}:") + 3);

	ks_meta_layout_key(k, sizeof(k), P);
	check_name(k, P "{meta}:layout", META, "layout");
	ks_meta_dispatchers_key(k, sizeof(k), P);
	check_name(k, P "{meta}:dispatchers", META, "dispatchers");

	ks_invalidation_channel(k, sizeof(k), P);
	check_name(k, P "invalidate", CHANNELS, "<prefix>invalidate");
	ks_invalidation_key_message(k, sizeof(k), SHA);
	check_name(k, "k:" SHA, CHANNELS, "k:<sha256>");
	ks_invalidation_account_message(k, sizeof(k), ACCT);
	check_name(k, "a:" ACCT, CHANNELS, "a:<account id>");
	ks_invalidation_bank_message(k, sizeof(k), "bnk_" ACCT);
	check_name(k, "b:bnk_" ACCT, CHANNELS, "b:<connection id>");
	ks_live_channel(k, sizeof(k), P);
	check_name(k, P "live", CHANNELS, "<prefix>live");
	ks_deliveries_channel(k, sizeof(k), P);
	check_name(k, P "deliveries", CHANNELS, "<prefix>deliveries");
}

static void test_shards_of_ids(void)
{
	char u[IDS_ULID_LEN + 1], e[KS_EVENT_ID_MAX];

	CHECK_INT(ks_shard_of(ACCT), 37);
	CHECK_INT(ks_shard_of(CHARGE), 37);
	CHECK_INT(ks_shard_of(EVT), 37);
	CHECK_INT(ks_shard_of("01JCM0K7RXS4V1M8H3Q2N5B600"), 0);
	CHECK_INT(ks_shard_of("01JCM0K7RXS4V1M8H3Q2N5B6ZZ"), 1023);
	CHECK_INT(ks_shard_of("not-an-id"), -1);
	CHECK_INT(ks_shard_of("evt_not-an-id"), -1);
	CHECK_INT(ks_shard_of(""), -1);
	ks_ulid(5, u);
	CHECK_INT(ks_shard_of(u), 5);
	ks_ulid_at(1023, 1700000000000ull, u);
	CHECK_INT(ks_shard_of(u), 1023);
	ks_event_id(700, e);
	CHECK(strncmp(e, "evt_", 4) == 0);
	CHECK_INT(ks_shard_of(e), 700);
	ks_endpoint_id(37, e);
	CHECK(strncmp(e, "wep_", 4) == 0);
	CHECK_INT(ks_shard_of(e), 37);
	CHECK_INT(ks_shard_of(WEP), 37);
	for (int i = 0; i < 100; i++) {
		int s = ks_random_shard(16);
		CHECK(s >= 0 && s < 16);
	}
	CHECK_INT(ks_random_shard(1), 0);
	CHECK_INT(ks_random_shard(0), 0);
}

int main(int argc, char **argv)
{
	if (argc != 2 || !(docs = read_file(argv[1]))) {
		fprintf(stderr, "usage: test-keyspace PATH/TO/docs/storage.md (readable)\n");
		return 1;
	}
	for (int s = 0; s <= NSECTIONS; s++) {
		section_at[s] = strstr(s ? section_at[s - 1] : docs, section_starts[s]);
		if (!section_at[s]) {
			fprintf(stderr, "docs/storage.md: no \"%s\" (in this order)\n",
				section_starts[s]);
			free(docs);
			return 1;
		}
	}
	test_shard_keys();
	test_no_shard();
	test_cut_short();
	test_env_keys();
	test_keys_meta_channels();
	test_shards_of_ids();
	free(docs);
	return check_finish("keyspace");
}
