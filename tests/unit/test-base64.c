#include "pixrelay/core/base64.h"

#include "check.h"

#include <stdlib.h>

/* Decode `in` and compare with `want` (wantlen bytes); want NULL means "refused". */
static void check_decode(const char *in, const char *want, size_t wantlen, int line)
{
	size_t outlen = 12345;
	unsigned char *out = base64_decode(in, strlen(in), &outlen);

	check_count++;
	if (!want) {
		if (out) {
			check_failures++;
			fprintf(stderr, "%s:%d: \"%s\" decoded, want refusal\n", __FILE__, line,
				in);
		} else if (outlen != 12345) {
			check_failures++;
			fprintf(stderr, "%s:%d: \"%s\" wrote outlen on failure\n", __FILE__, line,
				in);
		}
	} else if (!out || outlen != wantlen || memcmp(out, want, wantlen) != 0 ||
		   out[outlen] != '\0') {
		check_failures++;
		fprintf(stderr, "%s:%d: \"%s\" decoded wrong (%s, len %zu)\n", __FILE__, line, in,
			out ? "got data" : "refused", out ? outlen : 0);
	}
	free(out);
}

#define DEC_OK(in, want) check_decode((in), (want), sizeof(want) - 1, __LINE__)
#define DEC_BAD(in) check_decode((in), NULL, 0, __LINE__)

static void test_encode(void)
{
	/* RFC 4648 section 10 */
	static const struct {
		const char *in, *out;
	} v[] = {
	    {"", ""},
	    {"f", "Zg=="},
	    {"fo", "Zm8="},
	    {"foo", "Zm9v"},
	    {"foob", "Zm9vYg=="},
	    {"fooba", "Zm9vYmE="},
	    {"foobar", "Zm9vYmFy"},
	};
	char out[16];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		memset(out, 'x', sizeof(out));
		CHECK_INT(base64_encoded_len(strlen(v[i].in)), strlen(v[i].out));
		base64_encode(v[i].in, strlen(v[i].in), out);
		CHECK_STR(out, v[i].out);
	}
	base64_encode(NULL, 0, out);
	CHECK_STR(out, "");

	/* every byte value, and both alphabet ends */
	unsigned char all[256];
	char enc[345];
	size_t n = 0;
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	CHECK_INT(base64_encoded_len(256), 344);
	base64_encode(all, 256, enc);
	CHECK_INT(strlen(enc), 344);
	CHECK(strncmp(enc, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g", 44) == 0);
	CHECK_STR(enc + 332, "+fr7/P3+/w==");
	unsigned char *back = base64_decode(enc, strlen(enc), &n);
	CHECK(back && n == 256 && memcmp(back, all, 256) == 0);
	free(back);

	static const unsigned char ff[] = {0xfb, 0xff, 0xbf};
	base64_encode(ff, 3, out);
	CHECK_STR(out, "+/+/");
}

static void test_decode(void)
{
	DEC_OK("", "");
	DEC_OK("Zg==", "f");
	DEC_OK("Zm8=", "fo");
	DEC_OK("Zm9v", "foo");
	DEC_OK("Zm9vYg==", "foob");
	DEC_OK("Zm9vYmE=", "fooba");
	DEC_OK("Zm9vYmFy", "foobar");
	/* padding may be left out */
	DEC_OK("Zg", "f");
	DEC_OK("Zm8", "fo");
	DEC_OK("Zm9vYg", "foob");
	DEC_OK("Zm9vYmE", "fooba");
	/* non-zero unused bits are tolerated */
	DEC_OK("Zh==", "f");
	DEC_OK("Zm9=", "fo");
	DEC_OK("+/+/", "\xfb\xff\xbf");
	/* embedded zero bytes survive */
	DEC_OK("AGEA", "\0a\0");

	/* outside the alphabet */
	DEC_BAD("Zm9v YmFy");
	DEC_BAD(" Zm9v");
	DEC_BAD("Zm9v\n");
	DEC_BAD("Zm9v\r\nYmFy");
	DEC_BAD("Zm9v\tYmFy");
	DEC_BAD("-_-_");
	DEC_BAD("Zm9*");
	DEC_BAD("Zm9v\x80YmFy");
	/* misplaced or wrong padding */
	DEC_BAD("=");
	DEC_BAD("==");
	DEC_BAD("====");
	DEC_BAD("Zg=");
	DEC_BAD("Zg===");
	DEC_BAD("Z===");
	DEC_BAD("Zg==Zg==");
	DEC_BAD("Zm=v");
	DEC_BAD("=m9v");
	DEC_BAD("Zm9v=");
	DEC_BAD("Zm9v====");
	DEC_BAD("Zm8==");
	/* a lone final character carries fewer than 8 bits */
	DEC_BAD("Z");
	DEC_BAD("Zm9vY");
	DEC_BAD("Zm9vY===");

	/* exactly len characters are read: a NUL inside is refused, the rest ignored */
	size_t n = 99;
	unsigned char *out = base64_decode("Zm9v\0YmFy", 9, &n);
	CHECK(out == NULL);
	CHECK_INT(n, 99);
	out = base64_decode("Zm9vYmFy", 4, &n);
	CHECK(out && n == 3 && memcmp(out, "foo", 4) == 0);
	free(out);
}

int main(void)
{
	test_encode();
	test_decode();
	return check_finish("base64");
}
