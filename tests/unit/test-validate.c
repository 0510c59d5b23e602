/* Unit tests for validate. */
#include "pixrelay/core/validate.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>

#define U8(lit) validate_utf8_chars((lit), sizeof(lit) - 1)

static void test_utf8(void)
{
	char buf[71];

	CHECK_INT(U8(""), 0);
	CHECK_INT(U8("abc"), 3);
	CHECK_INT(U8("S\xc3\xa3o"), 3); /* São */
	CHECK_INT(U8("S\xc3\xa3o Paulo"), 9);
	CHECK_INT(U8("\xe2\x82\xac"), 1);      /* € */
	CHECK_INT(U8("\xf0\x9f\x98\x80!"), 2); /* 😀! */
	CHECK_INT(U8("a\0b"), 3);	       /* U+0000 is a character */
	CHECK_INT(validate_utf8_chars("S\xc3\xa3o", 4), 3);

	/* 35 "ç" (2 bytes each): 70 bytes, 35 characters */
	for (int i = 0; i < 35; i++)
		memcpy(buf + 2 * i, "\xc3\xa7", 2);
	buf[70] = '\0';
	CHECK_INT(validate_utf8_chars(buf, 70), 35);
	CHECK_INT(validate_utf8_chars(buf, 68), 34);
	CHECK_INT(validate_utf8_chars(buf, 69), -1); /* cut inside a character */

	/* boundaries */
	CHECK_INT(U8("\x7f"), 1);
	CHECK_INT(U8("\xc2\x80"), 1);	      /* U+0080 */
	CHECK_INT(U8("\xdf\xbf"), 1);	      /* U+07FF */
	CHECK_INT(U8("\xe0\xa0\x80"), 1);     /* U+0800 */
	CHECK_INT(U8("\xed\x9f\xbf"), 1);     /* U+D7FF */
	CHECK_INT(U8("\xee\x80\x80"), 1);     /* U+E000 */
	CHECK_INT(U8("\xef\xbf\xbf"), 1);     /* U+FFFF */
	CHECK_INT(U8("\xf0\x90\x80\x80"), 1); /* U+10000 */
	CHECK_INT(U8("\xf4\x8f\xbf\xbf"), 1); /* U+10FFFF */

	/* overlong forms */
	CHECK_INT(U8("\xc0\xaf"), -1);
	CHECK_INT(U8("\xc0\x80"), -1);
	CHECK_INT(U8("\xc1\xbf"), -1);
	CHECK_INT(U8("\xe0\x80\xaf"), -1);
	CHECK_INT(U8("\xe0\x9f\xbf"), -1);
	CHECK_INT(U8("\xf0\x80\x80\xaf"), -1);
	CHECK_INT(U8("\xf0\x8f\xbf\xbf"), -1);
	/* surrogates */
	CHECK_INT(U8("\xed\xa0\x80"), -1);	       /* U+D800 */
	CHECK_INT(U8("\xed\xbf\xbf"), -1);	       /* U+DFFF */
	CHECK_INT(U8("\xed\xa0\xbd\xed\xb8\x80"), -1); /* CESU-8 pair */
	/* past U+10FFFF, and bytes that never occur */
	CHECK_INT(U8("\xf4\x90\x80\x80"), -1);
	CHECK_INT(U8("\xf5\x80\x80\x80"), -1);
	CHECK_INT(U8("\xf8\x88\x80\x80\x80"), -1);
	CHECK_INT(U8("\xfe"), -1);
	CHECK_INT(U8("\xff"), -1);
	/* stray continuation bytes */
	CHECK_INT(U8("\x80"), -1);
	CHECK_INT(U8("a\xbf"), -1);
	CHECK_INT(U8("\xc3\xa3\xa3"), -1);
	/* bad or missing continuation bytes */
	CHECK_INT(U8("\xc3\x28"), -1);
	CHECK_INT(U8("\xe2\x28\xa1"), -1);
	CHECK_INT(U8("\xe2\x82\x28"), -1);
	CHECK_INT(U8("\xf0\x9f\x98\x28"), -1);
	CHECK_INT(U8("\xc3"), -1);
	CHECK_INT(U8("S\xc3"), -1);
	CHECK_INT(U8("\xe2\x82"), -1);
	CHECK_INT(U8("\xf0\x9f\x98"), -1);
	CHECK_INT(U8("\xe2\x82\0"), -1);
	/* Latin-1 "São" */
	CHECK_INT(U8("S\xe3o"), -1);
	CHECK_INT(validate_utf8_chars(NULL, 0), -1);
}

static void test_email(void)
{
	char local64[65], label63[64], label64[65];
	char buf[300];

	CHECK_INT(validate_is_email("a@b.co"), 1);
	CHECK_INT(validate_is_email("A@B.CO"), 1);
	CHECK_INT(validate_is_email("fulano.de.tal@example.com.br"), 1);
	CHECK_INT(validate_is_email("user+tag@sub-domain.example.org"), 1);
	CHECK_INT(validate_is_email("!#$%&'*+/=?^_`{|}~-@example.com"), 1);
	CHECK_INT(validate_is_email("x@123.example.com"), 1);
	CHECK_INT(validate_is_email("x@b.c2"), 1);
	CHECK_INT(validate_is_email("x@b--c.io"), 1);

	CHECK_INT(validate_is_email(NULL), 0);
	CHECK_INT(validate_is_email(""), 0);
	CHECK_INT(validate_is_email("ab.co"), 0);   /* no @ */
	CHECK_INT(validate_is_email("a@@b.co"), 0); /* two @ */
	CHECK_INT(validate_is_email("a@b@c.co"), 0);
	CHECK_INT(validate_is_email("@b.co"), 0);     /* empty local part */
	CHECK_INT(validate_is_email("a@"), 0);	      /* empty domain */
	CHECK_INT(validate_is_email(".a@b.co"), 0);   /* leading dot */
	CHECK_INT(validate_is_email("a.@b.co"), 0);   /* trailing dot */
	CHECK_INT(validate_is_email("a..b@b.co"), 0); /* double dot */
	CHECK_INT(validate_is_email("a@b..co"), 0);   /* empty label */
	CHECK_INT(validate_is_email("a@.b.co"), 0);
	CHECK_INT(validate_is_email("a@b.co."), 0);
	CHECK_INT(validate_is_email("a@b"), 0);	     /* one label */
	CHECK_INT(validate_is_email("a b@b.co"), 0); /* spaces */
	CHECK_INT(validate_is_email("a@b .co"), 0);
	CHECK_INT(validate_is_email(" a@b.co"), 0);
	CHECK_INT(validate_is_email("a@b.co "), 0);
	CHECK_INT(validate_is_email("a@b.co\n"), 0);
	CHECK_INT(validate_is_email("a@-b.co"), 0); /* hyphen at a label's end */
	CHECK_INT(validate_is_email("a@b-.co"), 0);
	CHECK_INT(validate_is_email("a@b.co-"), 0);
	CHECK_INT(validate_is_email("a@b.123"), 0); /* numeric TLD */
	CHECK_INT(validate_is_email("a@1.2.3.4"), 0);
	CHECK_INT(validate_is_email("a@b_c.co"), 0);
	CHECK_INT(validate_is_email("a@[1.2.3.4]"), 0);
	CHECK_INT(validate_is_email("\"a\"@b.co"), 0);
	CHECK_INT(validate_is_email("a(b)@b.co"), 0);
	CHECK_INT(validate_is_email("a,b@b.co"), 0);
	CHECK_INT(validate_is_email("jo\xc3\xa3o@b.co"), 0);
	CHECK_INT(validate_is_email("a@s\xc3\xa3o.br"), 0);

	/* local part at most 64 */
	memset(local64, 'l', 64);
	local64[64] = '\0';
	snprintf(buf, sizeof(buf), "%s@b.co", local64);
	CHECK_INT(validate_is_email(buf), 1);
	snprintf(buf, sizeof(buf), "x%s@b.co", local64);
	CHECK_INT(validate_is_email(buf), 0);

	/* labels at most 63 */
	memset(label63, 'd', 63);
	label63[63] = '\0';
	memset(label64, 'd', 64);
	label64[64] = '\0';
	snprintf(buf, sizeof(buf), "a@%s.co", label63);
	CHECK_INT(validate_is_email(buf), 1);
	snprintf(buf, sizeof(buf), "a@%s.co", label64);
	CHECK_INT(validate_is_email(buf), 0);
	snprintf(buf, sizeof(buf), "a@b.%s", label64);
	CHECK_INT(validate_is_email(buf), 0);

	/* 254 characters in all, and 255 */
	snprintf(buf, sizeof(buf), "%s@%s.%s.%.57s.com", local64, label63, label63, label63);
	CHECK_INT(strlen(buf), 254);
	CHECK_INT(validate_is_email(buf), 1);
	snprintf(buf, sizeof(buf), "%s@%s.%s.%.58s.com", local64, label63, label63, label63);
	CHECK_INT(strlen(buf), 255);
	CHECK_INT(validate_is_email(buf), 0);
}

/* "http://example.com/" followed by 'a's up to `total` characters. */
static char *long_url(size_t total)
{
	char *s = malloc(total + 1);
	size_t prefix = strlen("http://example.com/");

	if (!s)
		abort();
	memcpy(s, "http://example.com/", prefix);
	memset(s + prefix, 'a', total - prefix);
	s[total] = '\0';
	return s;
}

static void test_url(void)
{
	char *s;

	CHECK_INT(validate_is_http_url("http://127.0.0.1:8080/hook"), 1);
	CHECK_INT(validate_is_http_url("https://shop.example.com/wc-api/x?a=1"), 1);
	CHECK_INT(validate_is_http_url("http://localhost"), 1);
	CHECK_INT(validate_is_http_url("https://example.com/"), 1);
	CHECK_INT(validate_is_http_url("https://example.com?x=1&y=2"), 1);
	CHECK_INT(validate_is_http_url("HTTPS://Example.COM/a%20b"), 1);
	CHECK_INT(validate_is_http_url("http://example.com:1"), 1);
	CHECK_INT(validate_is_http_url("http://example.com:65535/"), 1);
	CHECK_INT(validate_is_http_url("http://[::1]:8080/x"), 1);
	CHECK_INT(validate_is_http_url("https://[2001:db8::1]/"), 1);
	CHECK_INT(validate_is_http_url("http://[::ffff:10.0.0.1]"), 1);
	CHECK_INT(validate_is_http_url("http://0.0.0.0/"), 1);
	CHECK_INT(validate_is_http_url("http://255.255.255.255/"), 1);
	CHECK_INT(validate_is_http_url("https://a.b/p@x:y;z=1&w=2!$'()*+,~_-.?q=/?@"), 1);
	CHECK_INT(validate_is_http_url("http://xn--so-paulo-wxa.br/"), 1);

	CHECK_INT(validate_is_http_url(NULL), 0);
	CHECK_INT(validate_is_http_url(""), 0);
	CHECK_INT(validate_is_http_url("ftp://example.com/"), 0);
	CHECK_INT(validate_is_http_url("httpx://example.com/"), 0);
	CHECK_INT(validate_is_http_url("javascript:alert(1)"), 0);
	CHECK_INT(validate_is_http_url("//example.com/"), 0);
	CHECK_INT(validate_is_http_url("example.com"), 0);
	CHECK_INT(validate_is_http_url("http:/example.com"), 0);
	CHECK_INT(validate_is_http_url("http:example.com"), 0);
	CHECK_INT(validate_is_http_url("http//example.com"), 0);
	/* missing host */
	CHECK_INT(validate_is_http_url("http://"), 0);
	CHECK_INT(validate_is_http_url("https://"), 0);
	CHECK_INT(validate_is_http_url("http:///hook"), 0);
	CHECK_INT(validate_is_http_url("http://:8080/hook"), 0);
	CHECK_INT(validate_is_http_url("http://?a=1"), 0);
	/* spaces and control characters */
	CHECK_INT(validate_is_http_url("https://exa mple.com/"), 0);
	CHECK_INT(validate_is_http_url("http://example.com/a b"), 0);
	CHECK_INT(validate_is_http_url(" http://example.com/"), 0);
	CHECK_INT(validate_is_http_url("http://example.com/ "), 0);
	CHECK_INT(validate_is_http_url("http://example.com/\n"), 0);
	CHECK_INT(validate_is_http_url("http://example.com/\x01"), 0);
	CHECK_INT(validate_is_http_url("http://example.com/\x7f"), 0);
	CHECK_INT(validate_is_http_url("http://example.com/s\xc3\xa3o"), 0);
	/* userinfo */
	CHECK_INT(validate_is_http_url("http://user:pw@host/"), 0);
	CHECK_INT(validate_is_http_url("http://user@host"), 0);
	CHECK_INT(validate_is_http_url("http://@host"), 0);
	CHECK_INT(validate_is_http_url("http://good.com\\@evil.com/"), 0);
	CHECK_INT(validate_is_http_url("http://evil.com\\good.com/"), 0);
	/* ports */
	CHECK_INT(validate_is_http_url("http://host:0/"), 0);
	CHECK_INT(validate_is_http_url("http://host:00000/"), 0);
	CHECK_INT(validate_is_http_url("http://host:65536/"), 0);
	CHECK_INT(validate_is_http_url("http://host:70000/"), 0);
	CHECK_INT(validate_is_http_url("http://host:123456/"), 0);
	CHECK_INT(validate_is_http_url("http://host:/"), 0);
	CHECK_INT(validate_is_http_url("http://host:8a/"), 0);
	CHECK_INT(validate_is_http_url("http://host:-1/"), 0);
	CHECK_INT(validate_is_http_url("http://host:80:80/"), 0);
	/* fragment */
	CHECK_INT(validate_is_http_url("http://example.com/x#frag"), 0);
	CHECK_INT(validate_is_http_url("http://example.com#frag"), 0);
	CHECK_INT(validate_is_http_url("http://example.com/?a=1#"), 0);
	/* host names */
	CHECK_INT(validate_is_http_url("http://-a.com/"), 0);
	CHECK_INT(validate_is_http_url("http://a-.com/"), 0);
	CHECK_INT(validate_is_http_url("http://a..com/"), 0);
	CHECK_INT(validate_is_http_url("http://.a.com/"), 0);
	CHECK_INT(validate_is_http_url("http://a.com./"), 0);
	CHECK_INT(validate_is_http_url("http://exa_mple.com/"), 0);
	CHECK_INT(validate_is_http_url("http://s\xc3\xa3o.br/"), 0);
	/* numeric hosts must be real IPv4 addresses */
	CHECK_INT(validate_is_http_url("http://256.1.1.1/"), 0);
	CHECK_INT(validate_is_http_url("http://01.1.1.1/"), 0);
	CHECK_INT(validate_is_http_url("http://1.2.3/"), 0);
	CHECK_INT(validate_is_http_url("http://1.2.3.4.5/"), 0);
	CHECK_INT(validate_is_http_url("http://2130706433/"), 0);
	CHECK_INT(validate_is_http_url("http://example.123/"), 0);
	CHECK_INT(validate_is_http_url("http://1.2.3.0x4/"), 0);
	CHECK_INT(validate_is_http_url("http://0x7f000001/"), 0);
	CHECK_INT(validate_is_http_url("http://0x7f.1/"), 0);
	CHECK_INT(validate_is_http_url("http://0177.0.0.1/"), 0);
	CHECK_INT(validate_is_http_url("http://a.0X1F/"), 0);
	CHECK_INT(validate_is_http_url("http://a.0x/"), 0);
	CHECK_INT(validate_is_http_url("http://0xdead.com/"), 1);
	CHECK_INT(validate_is_http_url("http://a.0xg/"), 1);
	/* IPv6 */
	CHECK_INT(validate_is_http_url("http://[::1/"), 0);
	CHECK_INT(validate_is_http_url("http://[]/"), 0);
	CHECK_INT(validate_is_http_url("http://[zz::1]/"), 0);
	CHECK_INT(validate_is_http_url("http://[::1]x/"), 0);
	CHECK_INT(validate_is_http_url("http://[::1]:/"), 0);
	CHECK_INT(validate_is_http_url("http://[fe80::1%25eth0]/"), 0);
	CHECK_INT(validate_is_http_url("http://[1.2.3.4]/"), 0);
	CHECK_INT(validate_is_http_url("http://::1/"), 0);
	/* path and query characters */
	CHECK_INT(validate_is_http_url("http://a.com/%zz"), 0);
	CHECK_INT(validate_is_http_url("http://a.com/%4"), 0);
	CHECK_INT(validate_is_http_url("http://a.com/x%"), 0);
	CHECK_INT(validate_is_http_url("http://a.com/<script>"), 0);
	CHECK_INT(validate_is_http_url("http://a.com/\"x\""), 0);
	CHECK_INT(validate_is_http_url("http://a.com/{x}"), 0);
	CHECK_INT(validate_is_http_url("http://a.com/x|y"), 0);
	CHECK_INT(validate_is_http_url("http://a.com/x^y"), 0);
	CHECK_INT(validate_is_http_url("http://a.com/x`y"), 0);
	CHECK_INT(validate_is_http_url("http://a.com/[x]"), 0);

	/* length */
	s = long_url(2048);
	CHECK_INT(validate_is_http_url(s), 1);
	free(s);
	s = long_url(2049);
	CHECK_INT(validate_is_http_url(s), 0);
	free(s);
	s = long_url(3000);
	CHECK_INT(validate_is_http_url(s), 0);
	free(s);
}

static void test_uf(void)
{
	static const char *const ufs[] = {"AC", "AL", "AP", "AM", "BA", "CE", "DF", "ES", "GO",
					  "MA", "MT", "MS", "MG", "PA", "PB", "PR", "PE", "PI",
					  "RJ", "RN", "RS", "RO", "RR", "SC", "SP", "SE", "TO"};
	char s[3] = {0};
	int valid = 0;

	CHECK_INT(sizeof(ufs) / sizeof(ufs[0]), 27);
	for (size_t i = 0; i < 27; i++)
		CHECK_INT(validate_is_uf(ufs[i]), 1);
	/* of all pairs of upper-case letters, exactly the 27 are accepted */
	for (char a = 'A'; a <= 'Z'; a++) {
		for (char b = 'A'; b <= 'Z'; b++) {
			int listed = 0;
			s[0] = a;
			s[1] = b;
			for (size_t i = 0; i < 27; i++)
				if (strcmp(ufs[i], s) == 0)
					listed = 1;
			CHECK_INT(validate_is_uf(s), listed);
			valid += validate_is_uf(s);
		}
	}
	CHECK_INT(valid, 27);

	CHECK_INT(validate_is_uf("sp"), 0);
	CHECK_INT(validate_is_uf("Sp"), 0);
	CHECK_INT(validate_is_uf("sP"), 0);
	CHECK_INT(validate_is_uf("XX"), 0);
	CHECK_INT(validate_is_uf("BR"), 0);
	CHECK_INT(validate_is_uf("S"), 0);
	CHECK_INT(validate_is_uf(""), 0);
	CHECK_INT(validate_is_uf("SPX"), 0);
	CHECK_INT(validate_is_uf("SP "), 0);
	CHECK_INT(validate_is_uf(" SP"), 0);
	CHECK_INT(validate_is_uf("S "), 0);
	CHECK_INT(validate_is_uf("SP\n"), 0);
	CHECK_INT(validate_is_uf("S\xc3\x83"), 0);
	CHECK_INT(validate_is_uf("C "), 0);
	CHECK_INT(validate_is_uf(NULL), 0);
}

static const char *cep(const char *in)
{
	static char out[9];

	memcpy(out, "xxxxxxxx", 9);
	if (validate_cep_normalize(in, out) != 0) {
		CHECK_STR(out, "xxxxxxxx");
		return "FAIL";
	}
	return out;
}

static void test_cep(void)
{
	CHECK_STR(cep("01310-100"), "01310100");
	CHECK_STR(cep("01310100"), "01310100");
	CHECK_STR(cep("70040-010"), "70040010");
	CHECK_STR(cep("99999999"), "99999999");

	CHECK_STR(cep(NULL), "FAIL");
	CHECK_STR(cep(""), "FAIL");
	CHECK_STR(cep("0131010"), "FAIL");
	CHECK_STR(cep("013101000"), "FAIL");
	CHECK_STR(cep("01310-10"), "FAIL");
	CHECK_STR(cep("01310-1000"), "FAIL");
	CHECK_STR(cep("0131-0100"), "FAIL");
	CHECK_STR(cep("013101-00"), "FAIL");
	CHECK_STR(cep("01310--100"), "FAIL");
	CHECK_STR(cep("01310 100"), "FAIL");
	CHECK_STR(cep("01310.100"), "FAIL");
	CHECK_STR(cep("01.310-100"), "FAIL");
	CHECK_STR(cep("01310-1a0"), "FAIL");
	CHECK_STR(cep("a1310100"), "FAIL");
	CHECK_STR(cep("0131010-"), "FAIL");
	CHECK_STR(cep(" 01310100"), "FAIL");
	CHECK_STR(cep("01310100 "), "FAIL");
	CHECK_STR(cep("-01310100"), "FAIL");
}

/* "y-m-d" of a valid date, or "FAIL" (checking outputs are untouched). */
static const char *date(const char *in)
{
	static char buf[32];
	int y = -7, m = -7, d = -7;

	if (validate_date(in, &y, &m, &d) != 0) {
		CHECK(y == -7 && m == -7 && d == -7);
		return "FAIL";
	}
	snprintf(buf, sizeof(buf), "%d/%d/%d", y, m, d);
	return buf;
}

static void test_date(void)
{
	CHECK_STR(date("2024-02-29"), "2024/2/29");
	CHECK_STR(date("2000-02-29"), "2000/2/29");
	CHECK_STR(date("2023-12-31"), "2023/12/31");
	CHECK_STR(date("2023-01-31"), "2023/1/31");
	CHECK_STR(date("2023-04-30"), "2023/4/30");
	CHECK_STR(date("2023-02-28"), "2023/2/28");
	CHECK_STR(date("1900-01-01"), "1900/1/1");
	CHECK_STR(date("1985-07-09"), "1985/7/9");
	CHECK_STR(date("9999-12-31"), "9999/12/31");

	CHECK_STR(date("2023-02-29"), "FAIL");
	CHECK_STR(date("2023-02-30"), "FAIL");
	CHECK_STR(date("1900-02-29"), "FAIL");
	CHECK_STR(date("2100-02-29"), "FAIL");
	CHECK_STR(date("2023-04-31"), "FAIL");
	CHECK_STR(date("2023-06-31"), "FAIL");
	CHECK_STR(date("2023-09-31"), "FAIL");
	CHECK_STR(date("2023-11-31"), "FAIL");
	CHECK_STR(date("2023-01-32"), "FAIL");
	CHECK_STR(date("2023-13-01"), "FAIL");
	CHECK_STR(date("2023-00-10"), "FAIL");
	CHECK_STR(date("2023-01-00"), "FAIL");
	CHECK_STR(date("1899-12-31"), "FAIL");
	CHECK_STR(date("0000-01-01"), "FAIL");
	CHECK_STR(date("2023-1-01"), "FAIL");
	CHECK_STR(date("2023-01-1"), "FAIL");
	CHECK_STR(date("2023-01-01x"), "FAIL");
	CHECK_STR(date("2023-01-01T00:00:00"), "FAIL");
	CHECK_STR(date(" 2023-01-01"), "FAIL");
	CHECK_STR(date("2023/01/01"), "FAIL");
	CHECK_STR(date("20230101"), "FAIL");
	CHECK_STR(date("+023-01-01"), "FAIL");
	CHECK_STR(date("2023-+1-01"), "FAIL");
	CHECK_STR(date("10000-01-01"), "FAIL");
	CHECK_STR(date("01-01-2023"), "FAIL");
	CHECK_STR(date(""), "FAIL");
	CHECK_STR(date(NULL), "FAIL");

	/* outputs are optional */
	CHECK_INT(validate_date("2024-02-29", NULL, NULL, NULL), 0);
	CHECK_INT(validate_date("2023-02-29", NULL, NULL, NULL), -1);
}

static void test_phone(void)
{
	CHECK_INT(validate_is_phone("+5511943214321"), 1);
	CHECK_INT(validate_is_phone("5511943214321"), 1);
	CHECK_INT(validate_is_phone("+55 (11) 94321-4321"), 1);
	CHECK_INT(validate_is_phone("+55 11 94321-4321"), 1);
	CHECK_INT(validate_is_phone("(11) 4321-4321"), 1);
	CHECK_INT(validate_is_phone("(11)94321-4321"), 1);
	CHECK_INT(validate_is_phone("+1 555-123-4567"), 1);
	CHECK_INT(validate_is_phone("12345678"), 1);	    /* 8 digits */
	CHECK_INT(validate_is_phone("123456789012345"), 1); /* 15 digits */
	CHECK_INT(validate_is_phone("+123 4567 8901 2345"), 1);

	CHECK_INT(validate_is_phone(NULL), 0);
	CHECK_INT(validate_is_phone(""), 0);
	CHECK_INT(validate_is_phone("+"), 0);
	CHECK_INT(validate_is_phone("1234567"), 0); /* 7 digits */
	CHECK_INT(validate_is_phone("1234-567"), 0);
	CHECK_INT(validate_is_phone("1234567890123456"), 0); /* 16 digits */
	CHECK_INT(validate_is_phone("+55 (11) 94321-43210-12"), 0);
	CHECK_INT(validate_is_phone("++5511943214321"), 0);
	CHECK_INT(validate_is_phone("55+11943214321"), 0);
	CHECK_INT(validate_is_phone("+ 5511943214321"), 0);
	CHECK_INT(validate_is_phone("+-5511943214321"), 0);
	CHECK_INT(validate_is_phone("+(55) 11943214321"), 0);
	CHECK_INT(validate_is_phone(" 11943214321"), 0);
	CHECK_INT(validate_is_phone("11943214321 "), 0);
	CHECK_INT(validate_is_phone("-11943214321"), 0);
	CHECK_INT(validate_is_phone("11943214321-"), 0);
	CHECK_INT(validate_is_phone("11 94321--4321"), 0);
	CHECK_INT(validate_is_phone("11  94321 4321"), 0);
	CHECK_INT(validate_is_phone("11 -94321 4321"), 0);
	CHECK_INT(validate_is_phone("()11943214321"), 0);
	CHECK_INT(validate_is_phone("(11"), 0);
	CHECK_INT(validate_is_phone("(11 94321-4321"), 0);
	CHECK_INT(validate_is_phone("11) 94321-4321"), 0);
	CHECK_INT(validate_is_phone("((11)) 94321-4321"), 0);
	CHECK_INT(validate_is_phone("(11)(22)94321-4321"), 0);
	CHECK_INT(validate_is_phone("(1 1) 94321-4321"), 0);
	CHECK_INT(validate_is_phone("(11-)94321-4321"), 0);
	CHECK_INT(validate_is_phone("11.94321.4321"), 0);
	CHECK_INT(validate_is_phone("11/94321-4321"), 0);
	CHECK_INT(validate_is_phone("+55 (11) 9432a-4321"), 0);
	CHECK_INT(validate_is_phone("tel:+5511943214321"), 0);
	CHECK_INT(validate_is_phone("11943214321\n"), 0);
}

int main(void)
{
	test_utf8();
	test_email();
	test_url();
	test_uf();
	test_cep();
	test_date();
	test_phone();
	/* control characters and blank text */
	CHECK(validate_has_control("a\tb"));
	CHECK(validate_has_control("\x7f"));
	CHECK(!validate_has_control("S\xc3\xa3o Paulo"));
	CHECK(validate_is_blank(""));
	CHECK(validate_is_blank("   "));
	CHECK(!validate_is_blank(" x "));
	return check_finish("validate");
}
