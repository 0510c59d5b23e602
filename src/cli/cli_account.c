/* cli_account: `pixrelay account show|set`, an account and its
 * postbackUrl (keys.c), and `pixrelay review list|show|approve|reject`, the
 * operator's KYC review of business accounts (review.c, called on a
 * private event loop: cli_call of cli_redis.c). The account's secrets are
 * `pixrelay secrets` (cli_secrets.c), its keys `pixrelay keys` (cli_keys.c).
 */
#include "cli_int.h"

#include "pixrelay/core/base64.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/store/accounts.h"
#include "pixrelay/store/keys.h"
#include "pixrelay/store/review.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_account[] =
    "usage: pixrelay account show --env sandbox|production [--account ID]\n"
    "       pixrelay account set --env sandbox|production [--account ID] --postback-url URL\n\n"
    "show  an account (default: the platform account), without its secrets.\n"
    "set   its postbackUrl: where the events of its charges that name none go, and\n"
    "      the upstream notifications about charges pixrelay does not know\n"
    "      (\"\" clears it).\n";

int cli_cmd_account(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {CLI_OPT_ENV,
					   CLI_OPT_ACCOUNT,
					   {"postback-url", required_argument, NULL, 'p'},
					   CLI_OPT_END};
	struct cli_args a;
	const char *verb, *url = NULL;
	int opt, rc = 1;
	enum env env;
	struct cli_redis cr;
	char id[32], err[256];

	if ((rc = cli_action(argc, argv, usage_account, &verb)) >= 0)
		return rc;
	rc = 1;
	cli_args_init(&a, argc - 1, argv + 1, lo, NULL, usage_account);
	while ((opt = cli_args_next(&a)) >= 0)
		if (opt == 'p')
			url = optarg;
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	if (!cli_verb_known("account", usage_account, verb,
			    (const char *const[]){"show", "set", NULL}) ||
	    cli_env_required("account", a.env, &env) < 0)
		return 2;
	if (strcmp(verb, "set") == 0) {
		if (!url) {
			fprintf(stderr, "pixrelay account set: --postback-url is required\n");
			return 2;
		}
		if (*url && !validate_is_http_url(url)) {
			fprintf(stderr,
				"pixrelay account set: --postback-url must be an absolute http "
				"or https URL\n");
			return 2;
		}
	}
	if (cli_open_account(cfg, env, a.account, &cr, id) < 0)
		return 1;
	if (strcmp(verb, "show") == 0) {
		rc = keys_account_show(cr.c, cfg->prefix, env, id, stdout, err, sizeof(err));
		if (rc == 0)
			putchar('\n');
	} else {
		rc = keys_set_postback(cr.c, cfg->prefix, env, id, url, err, sizeof(err));
		if (rc == 0)
			printf("account %s: postbackUrl %s\n", id, *url ? url : "cleared");
	}
	if (rc != 0) {
		fprintf(stderr, "pixrelay account %s: %s\n", verb, err);
		rc = 1;
	}
	cli_redis_close(&cr);
	return rc;
}

static const char usage_review[] =
    "usage: pixrelay review list --env sandbox|production [--limit N] [--json]\n"
    "       pixrelay review show ACCOUNT_ID --env sandbox|production [--files DIR]\n"
    "       pixrelay review approve ACCOUNT_ID --env sandbox|production [--json]\n"
    "       pixrelay review reject ACCOUNT_ID --env sandbox|production [--reason TEXT]\n"
    "                              [--json]\n\n"
    "The operator's KYC review of business accounts. A new account waits for it\n"
    "(in production; in the sandbox too with sandbox-review = 1): until it is\n"
    "approved, its representatives make no group, so no other account's money can\n"
    "be moved through it (internal transfers).\n\n"
    "list     the accounts waiting, oldest first (default --limit 50).\n"
    "show     one account with its KYC data, and the other accounts that name the\n"
    "         same representatives, with their status and owner; --files DIR also\n"
    "         writes its documents and pictures into DIR (<sha256>.pdf|jpg|png):\n"
    "         a new directory, or one of yours that no other user can write to.\n"
    "approve  its representatives count for groups from now on.\n"
    "reject   they do not, also when it was approved before (--reason is kept).\n";

/* The extension of a file by its magic bytes (account.h). */
static const char *review_file_ext(const unsigned char *d, size_t n)
{
	if (n >= 5 && memcmp(d, "%PDF-", 5) == 0)
		return "pdf";
	if (n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff)
		return "jpg";
	if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "png";
	return "bin";
}

/* Write the files of a `review show` answer ("files": {sha256: base64})
 * into dir, readable by the operator alone. dir is created 0700; one that
 * exists must be a directory (not a link) of this user that no other user
 * may write to, and no file is written through a link: otherwise another
 * user who made the directory (/tmp/kyc) or planted <sha256>.pdf in it as a
 * link (the name is known to whoever uploaded the file) would read the KYC
 * files or have them written over a file of the operator's. Returns 0 or -1
 * (printed). */
static int review_write_files(yajl_val files, const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "pixrelay review show: cannot create %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		fprintf(stderr,
			"pixrelay review show: %s must be a directory of this user that no other "
			"user can write to (it receives KYC files); name a new one\n",
			dir);
		return -1;
	}
	for (size_t i = 0; YAJL_IS_OBJECT(files) && i < files->u.object.len; i++) {
		const char *sha = files->u.object.keys[i];
		const char *b64 = YAJL_GET_STRING(files->u.object.values[i]);
		unsigned char *data;
		size_t n = 0;
		char *path;
		int fd;
		if (!b64 || strspn(sha, "0123456789abcdef") != 64 || sha[64])
			continue;
		data = base64_decode(b64, strlen(b64), &n);
		if (!data)
			continue;
		path = mem_printf("%s/%s.%s", dir, sha, review_file_ext(data, n));
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 || fchmod(fd, 0600) < 0 || write(fd, data, n) != (ssize_t)n) {
			fprintf(stderr, "pixrelay review show: cannot write %s: %s\n", path,
				strerror(errno));
			if (fd >= 0)
				close(fd);
			free(path);
			free(data);
			return -1;
		}
		close(fd);
		printf("wrote %s (%zu bytes)\n", path, n);
		free(path);
		free(data);
	}
	return 0;
}

/* Print the accounts waiting for review as a table. */
static void review_print_list(const char *json)
{
	char err[128];
	yajl_val root = NULL, list;

	if (json_parse_object(json, strlen(json), &root, err, sizeof(err)) < 0)
		return;
	list = json_get(root, "accounts");
	printf("%s accounts waiting for review\n",
	       YAJL_IS_NUMBER(json_get(root, "total")) ? json_get(root, "total")->u.number.r : "0");
	if (YAJL_IS_ARRAY(list) && list->u.array.len) {
		printf("%-26s %-19s %-14s %-30s %-5s %s\n", "ACCOUNT", "CREATED", "TAXID", "NAME",
		       "REPS", "ALSO CLAIMED BY");
		for (size_t i = 0; i < list->u.array.len; i++) {
			yajl_val a = list->u.array.values[i], reps = json_get(a, "representatives");
			const char *name = YAJL_GET_STRING(json_get(a, "officialName"));
			const char *taxid = YAJL_GET_STRING(json_get(a, "taxID"));
			printf("%-26s %-19s %-14s %-30.30s %-5zu %s\n",
			       YAJL_GET_STRING(json_get(a, "id")),
			       YAJL_GET_STRING(json_get(a, "createdAt")), taxid ? taxid : "-",
			       name ? name : "-", YAJL_IS_ARRAY(reps) ? reps->u.array.len : 0,
			       YAJL_IS_NUMBER(json_get(a, "alsoClaimedBy"))
				   ? json_get(a, "alsoClaimedBy")->u.number.r
				   : "0");
		}
	}
	yajl_tree_free(root);
}

/* Print a `review show` answer indented, its files (if any) written into dir
 * instead. Returns 0 or -1. */
static int review_print_show(const char *json, const char *dir)
{
	char err[128];
	yajl_val root = NULL;
	yajl_gen g;
	size_t len;
	const char *out;
	int rc = 0;

	if (json_parse_object(json, strlen(json), &root, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay review show: %s\n", err);
		return -1;
	}
	g = json_gen_new();
	yajl_gen_config(g, yajl_gen_beautify, 1);
	json_open(g);
	for (size_t i = 0; i < root->u.object.len; i++) {
		if (strcmp(root->u.object.keys[i], "files") == 0)
			continue;
		json_str(g, root->u.object.keys[i]);
		json_write_value(g, root->u.object.values[i]);
	}
	json_close(g);
	out = json_buf(g, &len);
	fwrite(out, 1, len, stdout);
	yajl_gen_free(g);
	if (dir)
		rc = review_write_files(json_get(root, "files"), dir);
	yajl_tree_free(root);
	return rc;
}

int cli_cmd_review(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {CLI_OPT_ENV,
					   {"limit", required_argument, NULL, 'l'},
					   {"files", required_argument, NULL, 'f'},
					   {"reason", required_argument, NULL, 'r'},
					   CLI_OPT_JSON,
					   CLI_OPT_END};
	struct cli_args a;
	const char *verb, *dir = NULL, *reason = NULL, *id = NULL;
	long limit = 50;
	int opt, rc;
	enum env env;
	struct cli_redis cr;
	struct cli_call call;
	char *end = NULL;

	if ((rc = cli_action(argc, argv, usage_review, &verb)) >= 0)
		return rc;
	cli_args_init(&a, argc - 1, argv + 1, lo, NULL, usage_review);
	while ((opt = cli_args_next(&a)) >= 0) {
		switch (opt) {
		case 'l':
			limit = strtol(optarg, &end, 10);
			if (!*optarg || *end)
				limit = 0;
			break;
		case 'f':
			dir = optarg;
			break;
		case 'r':
			reason = optarg;
			break;
		}
	}
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	if (!cli_verb_known("review", usage_review, verb,
			    (const char *const[]){"list", "show", "approve", "reject", NULL}) ||
	    cli_env_required("review", a.env, &env) < 0)
		return 2;
	if (strcmp(verb, "list") == 0) {
		if (limit < 1 || limit > 1000) {
			fprintf(stderr, "pixrelay review list: --limit must be from 1 to 1000\n");
			return 2;
		}
	} else {
		id = optind + 1 < argc ? argv[optind + 1] : NULL;
		if (!id) {
			fprintf(stderr, "pixrelay review %s: ACCOUNT_ID is required\n", verb);
			return 2;
		}
		if (optind + 2 < argc)
			return cli_unexpected("review", verb, argv[optind + 2]);
	}
	if (reason && (strlen(reason) > 500 || validate_has_control(reason))) {
		fprintf(stderr, "pixrelay review reject: --reason must be at most 500 characters, "
				"without control characters\n");
		return 2;
	}
	if (reason && strcmp(verb, "reject") != 0) {
		fprintf(stderr, "pixrelay review %s: --reason goes with reject\n", verb);
		return 2;
	}
	if (cli_redis_open(cfg, &cr) < 0)
		return 1;
	rc = 1;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		if (strcmp(verb, "list") == 0)
			review_list(call.r, cfg, env, (int)limit, cli_call_done, &call);
		else if (strcmp(verb, "show") == 0)
			review_show(call.r, cfg, env, id, dir != NULL, cli_call_done, &call);
		else
			review_decide(call.r, cfg, env, id, strcmp(verb, "approve") == 0, reason,
				      cli_call_done, &call);
		cli_call_wait(&call);
		if (call.result < 0) {
			fprintf(stderr, "pixrelay review %s: %s\n", verb, call.err);
		} else if (call.result == ACCOUNTS_NOT_FOUND) {
			fprintf(stderr, "pixrelay review %s: no account %s in %s\n", verb, id,
				env_name(env));
		} else if (call.result == ACCOUNTS_PLATFORM) {
			fprintf(
			    stderr,
			    "pixrelay review %s: %s is the platform account of %s, which has no "
			    "KYC review\n",
			    verb, id, env_name(env));
		} else if (strcmp(verb, "list") == 0) {
			if (a.json)
				printf("%s\n", call.json);
			else
				review_print_list(call.json);
			rc = 0;
		} else if (strcmp(verb, "show") == 0) {
			rc = review_print_show(call.json, dir) < 0 ? 1 : 0;
		} else {
			char err[128];
			yajl_val v = NULL;
			if (a.json) {
				printf("%s\n", call.json);
			} else if (json_parse_object(call.json, strlen(call.json), &v, err,
						     sizeof(err)) == 0) {
				const char *before = YAJL_GET_STRING(json_get(v, "previous"));
				printf("account %s: KYC %s (it was %s)\n", id,
				       strcmp(verb, "approve") == 0 ? "approved" : "rejected",
				       before ? before : "never reviewed");
				yajl_tree_free(v);
			}
			rc = 0;
		}
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
	return rc;
}
