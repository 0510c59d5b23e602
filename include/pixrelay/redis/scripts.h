/* scripts: the Lua scripts of src/store/lua/, compiled in, with their SHA1 digests.
 *
 * Each atomic multi-key change in Redis is one script named after the change.
 */
#ifndef PIXRELAY_SCRIPTS_H
#define PIXRELAY_SCRIPTS_H

enum script_id {
	SCRIPT_KEY_CREATE,
	SCRIPT_KEY_AUTH,
	SCRIPT_KEY_REVOKE,
	SCRIPT_CHARGE_CREATE,
	SCRIPT_CHARGE_TRANSITION,
	SCRIPT_INGEST,
	SCRIPT_EXPIRE_DUE,
	SCRIPT_EVENT_SETTLE,
	SCRIPT_EVENT_REPLAY,
	SCRIPT_EVENT_LIST,
	SCRIPT_ACCOUNT_PUT,
	SCRIPT_ACCOUNT_INDEX,
	SCRIPT_ACCOUNT_ADMIT,
	SCRIPT_ACCOUNT_QUEUE,
	SCRIPT_ACCOUNT_CLAIMS,
	SCRIPT_ACCOUNT_REVIEW,
	SCRIPT_TRANSFER_RESOLVE,
	SCRIPT_TRANSFER_DEBIT,
	SCRIPT_TRANSFER_CREDIT,
	SCRIPT_TRANSFER_FINISH,
	SCRIPT_SECRET_ROTATE,
	SCRIPT_SHARD_STATS,
	SCRIPT_KEY_LIST,
	SCRIPT_CHARGE_LIST,
	SCRIPT_ACCOUNT_LIST,
	SCRIPT_ACCOUNT_LEDGER,
	SCRIPT_BANK_CONNECT,
	SCRIPT_BANK_CREDENTIALS,
	SCRIPT_BANK_DISCONNECT,
	SCRIPT_BANK_LOG,
	SCRIPT_BANK_PIX,
	SCRIPT_CHARGE_RESERVE,
	SCRIPT_COUNT
};

/* Name (file name without .lua), body and lower-case hex SHA1 of a script;
 * all borrowed, static. */
const char *scripts_name(enum script_id id);
const char *scripts_body(enum script_id id);
const char *scripts_sha(enum script_id id);

#endif
