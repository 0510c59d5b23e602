#include "pixrelay/pix/sign.h"

#include "pixrelay/core/base64.h"

#include "check.h"

#include <stdlib.h>

/* The Standard Webhooks reference example. */
#define SECRET "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
/* the same secret without its prefix */
#define SECRET_BARE (&SECRET[sizeof(SIGN_SECRET_PREFIX) - 1])
#define MSG_ID "msg_p5jXN8AQM9LWM0D4loKWxJek"
#define TS 1614265330LL
#define BODY "{\"test\": 2432232314}"
#define SIG "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
#define LONG_SECRET                                                                                \
	"whsec_"                                                                                   \
	"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BB" \
	"QkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiYw=="
#define OTHER_SECRET "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

static int verify(const char *secret, const char *id, long long ts, const char *body,
		  const char *header, long long now)
{
	return sign_verify(secret, id, ts, body, strlen(body), header, now, 300);
}

static void test_signature(void)
{
	char out[SIGN_SIGNATURE_LEN + 1];

	CHECK_INT(sign_signature(SECRET, MSG_ID, TS, BODY, strlen(BODY), out, sizeof(out)), 0);
	CHECK_STR(out, SIG);
	CHECK_INT(strlen(out), SIGN_SIGNATURE_LEN);

	/* without the prefix the whole secret is the key; padding is optional */
	memset(out, 0, sizeof(out));
	CHECK_INT(sign_signature(SECRET_BARE, MSG_ID, TS, BODY, strlen(BODY), out, sizeof(out)), 0);
	CHECK_STR(out, SIG);

	/* expected values below come from Python's hmac module, not from this code */
	CHECK_INT(sign_signature(OTHER_SECRET, "01J0ABCDEF", -5, NULL, 0, out, sizeof(out)), 0);
	CHECK_STR(out, "v1,LmyUiM+K5kjrtSRdKe7y/TVGYxQ0tuFuw/AdY9lyvNI=");
	CHECK_INT(sign_signature(OTHER_SECRET "=", "evt", 1700000000, "a\0b", 3, out, sizeof(out)),
		  0);
	CHECK_STR(out, "v1,z/iozIUjzz2iRe7VMZlHM9AMkLeNlD/qZz+uwEnDBbI=");
	/* a key longer than SHA-256's block (100 bytes: 0, 1, ..., 99), and keys
	 * taking turns: the context is re-keyed each time, nothing of the last
	 * key stays */
	for (int round = 0; round < 2; round++) {
		CHECK_INT(sign_signature(LONG_SECRET, "evt_long", 1700000000, "{\"x\":1}", 7, out,
					 sizeof(out)),
			  0);
		CHECK_STR(out, "v1,EdAt7p2bdjoBHffMy3CgVZmtrsoE53lQLKqf6YhmaNk=");
		CHECK_INT(sign_signature(SECRET, MSG_ID, TS, BODY, strlen(BODY), out, sizeof(out)),
			  0);
		CHECK_STR(out, SIG);
	}

	/* malformed secrets: SIGN_BAD_SECRET (-1), out untouched */
	static const char *const bad[] = {
	    "",
	    "whsec_",
	    "whsec_!!!!",
	    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaL",	/* lone trailing character */
	    "whsec_MfKQ9r8GKYqrTwjU PD8ILPZIo2LaLaSw",	/* whitespace */
	    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", /* trailing newline from a file */
	    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-w",	/* URL-safe alphabet */
	    "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",	/* prefix is case-sensitive */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(out, "untouched");
		CHECK_INT(sign_signature(bad[i], MSG_ID, TS, BODY, strlen(BODY), out, sizeof(out)),
			  SIGN_BAD_SECRET);
		CHECK_STR(out, "untouched");
	}
	CHECK_INT(SIGN_BAD_SECRET, -1);
}

static void test_verify(void)
{
	/* the reference example, at the timestamp and at both edges of the tolerance */
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, SIG, TS), 0);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, SIG, TS + 300), 0);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, SIG, TS - 300), 0);

	/* timestamp too old or too far in the future */
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, SIG, TS + 301), SIGN_BAD_TIMESTAMP);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, SIG, TS - 301), SIGN_BAD_TIMESTAMP);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, SIG, 0), SIGN_BAD_TIMESTAMP);
	CHECK_INT(sign_verify(SECRET, MSG_ID, TS, BODY, strlen(BODY), SIG, TS + 1, 0),
		  SIGN_BAD_TIMESTAMP);
	CHECK_INT(sign_verify(SECRET, MSG_ID, TS, BODY, strlen(BODY), SIG, TS, -1), 0);
	/* extreme values do not overflow into a pass */
	CHECK_INT(sign_verify(SECRET, MSG_ID, -9223372036854775807LL - 1, BODY, strlen(BODY), SIG,
			      9223372036854775807LL, 300),
		  SIGN_BAD_TIMESTAMP);
	CHECK_INT(sign_verify(SECRET, MSG_ID, 9223372036854775807LL, BODY, strlen(BODY), SIG,
			      -9223372036854775807LL - 1, 9223372036854775807LL),
		  SIGN_BAD_TIMESTAMP);

	/* a right signature for other content */
	CHECK_INT(verify(OTHER_SECRET, MSG_ID, TS, BODY, SIG, TS), SIGN_BAD_SIGNATURE);
	CHECK_INT(verify(SECRET, MSG_ID, TS, "{\"test\": 2432232315}", SIG, TS),
		  SIGN_BAD_SIGNATURE);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY " ", SIG, TS), SIGN_BAD_SIGNATURE);
	CHECK_INT(verify(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJel", TS, BODY, SIG, TS),
		  SIGN_BAD_SIGNATURE);
	CHECK_INT(verify(SECRET, MSG_ID, TS + 1, BODY, SIG, TS), SIGN_BAD_SIGNATURE);
	/* the signature itself altered, cut, extended or re-cased */
	CHECK_INT(
	    verify(SECRET, MSG_ID, TS, BODY, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF=", TS),
	    SIGN_BAD_SIGNATURE);
	CHECK_INT(
	    verify(SECRET, MSG_ID, TS, BODY, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE", TS),
	    SIGN_BAD_SIGNATURE);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, SIG "=", TS), SIGN_BAD_SIGNATURE);
	CHECK_INT(
	    verify(SECRET, MSG_ID, TS, BODY, "V1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", TS),
	    SIGN_BAD_SIGNATURE);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY,
			 "v1, g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", TS),
		  SIGN_BAD_SIGNATURE);
	CHECK_INT(
	    verify(SECRET, MSG_ID, TS, BODY, "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", TS),
	    SIGN_BAD_SIGNATURE);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, "", TS), SIGN_BAD_SIGNATURE);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, "   ", TS), SIGN_BAD_SIGNATURE);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, "v1,", TS), SIGN_BAD_SIGNATURE);
	CHECK_INT(sign_verify(SECRET, MSG_ID, TS, BODY, strlen(BODY), NULL, TS, 300),
		  SIGN_BAD_SIGNATURE);

	/* rotation: several entries, any one may match, extra spaces are fine */
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY,
			 "v1,LmyUiM+K5kjrtSRdKe7y/TVGYxQ0tuFuw/AdY9lyvNI= " SIG, TS),
		  0);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY,
			 SIG " v1,LmyUiM+K5kjrtSRdKe7y/TVGYxQ0tuFuw/AdY9lyvNI=", TS),
		  0);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, "  v1,AAAA   " SIG "  ", TS), 0);
	/* unknown versions are ignored, even when they carry the right MAC */
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY,
			 "v1a,abc v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= " SIG, TS),
		  0);
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY,
			 "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= "
			 "v1a,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= "
			 "v,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= "
			 "v1g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
			 TS),
		  SIGN_BAD_SIGNATURE);
	/* the key is the decoded secret: with and without prefix both verify */
	CHECK_INT(verify(SECRET_BARE, MSG_ID, TS, BODY, SIG, TS), 0);

	/* a malformed secret is reported first, before the timestamp */
	CHECK_INT(verify("whsec_!!", MSG_ID, TS, BODY, SIG, TS), SIGN_BAD_SECRET);
	CHECK_INT(verify("whsec_", MSG_ID, TS, BODY, SIG, TS + 1000), SIGN_BAD_SECRET);
	CHECK_INT(sign_verify(NULL, MSG_ID, TS, BODY, strlen(BODY), SIG, TS, 300), SIGN_BAD_SECRET);
	/* a bad timestamp is reported before a bad signature */
	CHECK_INT(verify(SECRET, MSG_ID, TS, BODY, "v1,AAAA", TS + 1000), SIGN_BAD_TIMESTAMP);

	/* the codes are distinct and negative */
	CHECK(SIGN_BAD_SIGNATURE < 0 && SIGN_BAD_TIMESTAMP < 0 && SIGN_BAD_SECRET < 0);
	CHECK(SIGN_BAD_SIGNATURE != SIGN_BAD_TIMESTAMP && SIGN_BAD_SIGNATURE != SIGN_BAD_SECRET &&
	      SIGN_BAD_TIMESTAMP != SIGN_BAD_SECRET);
}

static void test_secret_new(void)
{
	char a[64], b[64], sig[SIGN_SIGNATURE_LEN + 1];
	unsigned char *key;
	size_t n = 0;

	memset(a, 'x', sizeof(a));
	sign_secret_new(a, sizeof(a));
	sign_secret_new(b, SIGN_SECRET_LEN + 1);
	CHECK_INT(strlen(a), SIGN_SECRET_LEN);
	CHECK_INT(strlen(b), SIGN_SECRET_LEN);
	CHECK(strncmp(a, SIGN_SECRET_PREFIX, 6) == 0);
	CHECK(strcmp(a, b) != 0);
	key = base64_decode(a + 6, strlen(a + 6), &n);
	CHECK(key != NULL);
	CHECK_INT(n, 32);
	free(key);
	/* a new secret works for signing and verifying */
	CHECK_INT(sign_signature(a, "id", 1, "x", 1, sig, sizeof(sig)), 0);
	CHECK_INT(sign_verify(a, "id", 1, "x", 1, sig, 1, 0), 0);
	CHECK_INT(sign_verify(b, "id", 1, "x", 1, sig, 1, 0), SIGN_BAD_SIGNATURE);
}

static void test_equal(void)
{
	CHECK_INT(sign_equal("", ""), 1);
	CHECK_INT(sign_equal("abc", "abc"), 1);
	CHECK_INT(sign_equal("abc", "abd"), 0);
	CHECK_INT(sign_equal("abc", "Abc"), 0);
	CHECK_INT(sign_equal("abc", "ab"), 0);
	CHECK_INT(sign_equal("ab", "abc"), 0);
	CHECK_INT(sign_equal("", "a"), 0);
	CHECK_INT(sign_equal(SIG, SIG), 1);
}

int main(void)
{
	test_signature();
	test_verify();
	test_secret_new();
	test_equal();
	return check_finish("sign");
}
