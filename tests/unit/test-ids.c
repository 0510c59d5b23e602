#include "pixrelay/core/ids.h"
#include "pixrelay/store/auth.h"
#include "pixrelay/core/timefmt.h"

#include "check.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	char a[IDS_ULID_LEN + 1], b[IDS_ULID_LEN + 1], u[IDS_UUID_LEN + 1], hex[65], t[20], r[25];
	char k[AUTH_KEY_MAX];
	const char *tok;
	size_t len;
	enum env env;

	/* the time part of a ULID is the big-endian millisecond count */
	ids_ulid_at(a, 1469918176385ull);
	CHECK(strncmp(a, "01ARYZ6S41", 10) == 0);
	CHECK(ids_is_ulid(a));
	ids_ulid(a);
	ids_ulid(b);
	CHECK(strcmp(a, b) != 0);
	CHECK(ids_is_ulid(b));
	CHECK(!ids_is_ulid("01ARYZ6S41"));
	CHECK(!ids_is_ulid("01ARYZ6S41IIIIIIIIIIIIIIII")); /* I is not Crockford */
	CHECK(!ids_is_ulid("81ARYZ6S410000000000000000")); /* overflows 48 bits */
	/* a ULID's digits and their values */
	for (int i = 0; i < 32; i++)
		CHECK_INT(ids_crockval(IDS_CROCKFORD[i]), i);
	CHECK_INT(ids_crockval('I'), -1);
	CHECK_INT(ids_crockval('a'), -1);
	CHECK_INT(ids_crockval('\0'), -1);
	/* the wall clock in us and in ms agree */
	{
		uint64_t ms = ids_now_ms(), us = ids_now_us();

		CHECK(us / 1000 >= ms && us / 1000 - ms < 1000);
	}
	/* event ids' random parts come from a pool: 1,000 of one millisecond
	 * differ, and a forked child does not repeat its parent's next one */
	{
		static char many[1000][IDS_ULID_LEN + 1];
		int fds[2], status = 0, dup = 0;
		pid_t pid;

		for (int i = 0; i < 1000; i++)
			ids_pooled_ulid_at(many[i], 1469918176385ull);
		qsort(many, 1000, sizeof(many[0]), (int (*)(const void *, const void *))strcmp);
		for (int i = 1; i < 1000; i++)
			dup += strcmp(many[i - 1], many[i]) == 0;
		CHECK_INT(dup, 0);
		CHECK(ids_is_ulid(many[0]) && strncmp(many[0], "01ARYZ6S41", 10) == 0);
		CHECK(pipe(fds) == 0);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			ids_pooled_ulid_at(a, 1469918176385ull);
			_exit(write(fds[1], a, IDS_ULID_LEN) == IDS_ULID_LEN ? 0 : 1);
		}
		close(fds[1]);
		if (pid > 0) {
			ids_pooled_ulid_at(b, 1469918176385ull);
			CHECK(read(fds[0], a, IDS_ULID_LEN) == IDS_ULID_LEN);
			a[IDS_ULID_LEN] = '\0';
			CHECK(waitpid(pid, &status, 0) == pid && status == 0);
			CHECK(strcmp(a, b) != 0);
		}
		close(fds[0]);
	}

	ids_uuid4(u);
	CHECK_INT(strlen(u), 36);
	CHECK(u[14] == '4');
	CHECK(u[19] == '8' || u[19] == '9' || u[19] == 'a' || u[19] == 'b');

	ids_sha256_hex(hex, "abc", 3);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK(ids_sha256_matches("abc", 3, hex));
	CHECK(!ids_sha256_matches("abd", 3, hex));
	CHECK(!ids_sha256_matches("abc", 2, hex));
	CHECK(!ids_sha256_matches(
	    "", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
	CHECK(!ids_sha256_matches("abc", 3, ""));	  /* no secret stored */
	CHECK(!ids_sha256_matches("abc", 3, "ba7816bf")); /* not a digest */

	timefmt_format(t, 1614265330123ull);
	CHECK_STR(t, "2021-02-25 15:02:10");
	timefmt_rfc3339(r, 1614265330123ull);
	CHECK_STR(r, "2021-02-25T15:02:10.123Z");

	auth_key_generate(ENV_SANDBOX, k);
	CHECK(strncmp(k, "pxr_test_", 9) == 0);
	CHECK_INT(strlen(k), 9 + AUTH_KEY_RANDOM);
	CHECK_INT(auth_token_env(k, strlen(k), &env), 0);
	CHECK_INT(env, ENV_SANDBOX);
	auth_key_generate(ENV_PRODUCTION, k);
	CHECK(strncmp(k, "pxr_live_", 9) == 0);
	CHECK_INT(auth_token_env(k, strlen(k), &env), 0);
	CHECK_INT(env, ENV_PRODUCTION);
	CHECK_INT(auth_token_env(k, strlen(k) - 1, &env), -1);
	k[20] = '-';
	CHECK_INT(auth_token_env(k, strlen(k), &env), -1);

	CHECK_INT(auth_bearer(NULL, &tok, &len), AUTH_MISSING);
	CHECK_INT(auth_bearer("  ", &tok, &len), AUTH_MISSING);
	CHECK_INT(auth_bearer("Basic abc", &tok, &len), AUTH_MALFORMED);
	CHECK_INT(auth_bearer("Bearer", &tok, &len), AUTH_MALFORMED);
	CHECK_INT(auth_bearer("Bearer ", &tok, &len), AUTH_MALFORMED);
	CHECK_INT(auth_bearer("Bearerabc", &tok, &len), AUTH_MALFORMED);
	CHECK_INT(auth_bearer("Bearer a b", &tok, &len), AUTH_MALFORMED);
	CHECK_INT(auth_bearer("bearer  tok123  ", &tok, &len), AUTH_OK);
	CHECK_INT(len, 6);
	CHECK(strncmp(tok, "tok123", 6) == 0);
	return check_finish("ids");
}
