/* config: settings from flags > environment (PIXRELAY_*) > config file > defaults.
 *
 * One table in config.c names every setting; `--help` and docs/configuration.md
 * are written from the same names.
 */
#ifndef PIXRELAY_CONFIG_H
#define PIXRELAY_CONFIG_H

/* bytes of the `prefix` setting at most: every key name built from it fits */
#define CONFIG_PREFIX_MAX 64

#include <stdio.h>

struct config {
	char *listen;		 /* host:port the HTTP server binds */
	char *metrics_listen;	 /* host:port of the metrics listener; empty = none */
	char *bank_listen;	 /* unix:PATH of the bank door (banks' webhooks); empty = none */
	char *bank_listen_group; /* the bank door's group (name or gid); empty = the process's */
	char *bank_proxy_uids;	 /* uids or user names believed on the bank door, besides root */
	char *base_url;	      /* public base URL ending in /v1 (derived from listen when unset) */
	int base_url_derived; /* base_url was not given: serve fixes its port once bound */
	char *bank_webhook_base_url; /* banks' webhook URLs start with it ("": base_url) */
	char
	    *credentials_key_file; /* seals bank API credentials ("": <data_dir>/credentials.key) */
	char *redis;	       /* redis://host:port[/db], unix:///path or /path; empty = embedded */
	char *data_dir;	       /* embedded Redis files live here */
	char *redis_server;    /* redis-server binary for the embedded Redis */
	char *prefix;	       /* prefix of every Redis key */
	char *trusted_proxies; /* comma-separated addresses/CIDRs whose X-Forwarded-* is believed */
	char *log_level;
	long max_body;		  /* bytes of a JSON request body */
	long max_upload;	  /* bytes of a request body carrying files (account creation) */
	long max_file;		  /* decoded bytes of one uploaded file */
	long http_timeout;	  /* seconds a client may stay idle mid-request */
	long http_header_timeout; /* seconds to receive a request head */
	long http_body_timeout;	  /* seconds to receive a request body */
	long http_send_timeout;	  /* seconds to send a response */
	long max_body_memory;	  /* bytes of request bodies held at once, all connections */
	long redis_timeout_ms;	  /* a Redis command without reply by then fails */
	long shutdown_grace;	  /* seconds to finish requests in flight on SIGTERM */
	long max_connections;	  /* open client connections at most */
	long bootstrap;		  /* 1: on first run with embedded Redis, create a sandbox key */
	char *pix_key;		  /* Pix key written into BR Codes (empty: the account's own key) */
	char *merchant_name;	  /* BR Code field 59 */
	char *merchant_city;	  /* BR Code field 60 */
	long fee_fixed;		  /* cents added to every charge's fee */
	long fee_bps;		  /* fee in basis points of the amount (80 = 0.80 %) */
	long default_expiration;  /* seconds, when a charge gives none */
	long max_expiration;	  /* seconds, the largest expiration accepted */
	long shards;		  /* shards (hash tags) new accounts are spread over */
	long delivery_concurrency;    /* deliveries in flight per process */
	long delivery_per_host;	      /* deliveries in flight per destination host, at first */
	long delivery_per_host_max;   /* ... at most, for a host that answers fast */
	long delivery_per_account;    /* deliveries of one account held at once */
	long delivery_sandbox_share;  /* percent of delivery_concurrency for the sandbox */
	long delivery_timeout_ms;     /* whole request */
	long bank_timeout_ms;	      /* one call to a bank's API */
	long bank_reconcile_interval; /* seconds; 0: no reconciliation */
	long delivery_connect_timeout_ms;
	long retry_base_ms;
	long retry_factor_pct; /* 300 = each delay three times the one before */
	long retry_cap_ms;
	long retry_max_attempts;
	long retry_max_age_s;
	long attempt_log_cap;		    /* attempts kept in each event's log */
	long event_retention_days;	    /* delivered and dead events are kept this long */
	long endpoint_disable_after;	    /* seconds an endpoint fails every attempt ... */
	long endpoint_disable_min_failures; /* ... and attempts in a row, to be disabled */
	char *destination_allow; /* CIDRs allowed as destinations in production despite being
				    private */
	long dispatch;		 /* 1: this process delivers events */

	/* live event streams (GET /v1/events/stream) */
	long stream_max;	     /* streams served at once by this process */
	long stream_max_per_account; /* ... for one account */
	long stream_heartbeat;	     /* seconds between keep-alive comments */
	long stream_max_pending;     /* bytes unread before a client is dropped */
	long stream_max_lifetime;    /* seconds a stream lasts before the client resumes */

	/* accounts: KYC review and quotas (0 = no limit where said) */
	long sandbox_review;		/* 1: sandbox accounts wait for KYC review too */
	long max_account_files;		/* files one account may keep */
	long max_account_bytes;		/* decoded bytes of one account's files */
	long max_accounts_per_key_hour; /* accounts an account key may create per hour; 0 */
	long max_accounts;		/* business accounts per environment; 0 */
	long max_stored_file_bytes;	/* bytes of account files per environment; 0 */

	/* WAIT for this many replicas before acknowledging a change */
	long redis_wait_replicas;
	char *redis_sentinel_password; /* AUTH to the sentinels; empty = none */
};

/* Fill `cfg` from argv (flags it recognises are consumed; others are left for
 * the caller in *rest / *nrest, borrowed from argv), then the environment, then
 * the file named by --config or PIXRELAY_CONFIG, then defaults.
 * Returns 0, or -1 after printing the problem to stderr. The caller frees
 * with config_deinit. */
int config_load(struct config *cfg, int argc, char **argv, char ***rest, int *nrest);
void config_deinit(struct config *cfg);

/* Print every setting with its flag, variable and default. */
void config_usage(FILE *out);

#endif
