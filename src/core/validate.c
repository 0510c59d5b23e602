/* validate: checks of the text fields clients send (e-mail, http URL, UF,
 * CEP, date, phone) and strict UTF-8 counting. Every input is hostile: the
 * checks use their own ASCII classes, never the locale's, and never read
 * past the NUL. A postback URL must name one host to every URL parser, so a
 * host whose last label looks numeric must be a plain dotted quad. The
 * field rules built on these (which field, how long) are pix/charge.c,
 * pix/account.c and pix/reqbody.c. Pure: no I/O, no allocation. */
#include "pixrelay/core/validate.h"

#include <arpa/inet.h>
#include <limits.h>
#include <string.h>
#include <strings.h>

/* Locale-independent character classes (the C library's depend on the
 * locale and are undefined for negative chars). */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_alnum(char c)
{
	return is_digit(c) || is_alpha(c);
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
}

static char to_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

long validate_utf8_chars(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	long count = 0;
	size_t i = 0;

	if (!s || len > LONG_MAX)
		return -1;
	while (i < len) {
		unsigned char c = p[i];
		unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
		size_t n;

		if (c < 0x80)
			n = 1;
		else if (c >= 0xC2 && c <= 0xDF)
			n = 2;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 3;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 4;
		else
			return -1; /* continuation byte, overlong lead C0/C1, or F5..FF */
		/* the second byte's range rules out overlongs (E0, F0), surrogates
		 * (ED) and code points past U+10FFFF (F4) */
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
		else if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
		if (n > len - i)
			return -1;
		for (size_t k = 1; k < n; k++) {
			unsigned char b = p[i + k];
			if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
				return -1;
		}
		i += n;
		count++;
	}
	return count;
}

/* Check `n` bytes at `p` as dot-separated labels of letters, digits and
 * hyphens, each 1..63 long with no hyphen at either end. On success stores
 * the number of labels and whether the last one is all digits. */
static int dns_name_check(const char *p, size_t n, int *labels, int *last_numeric)
{
	size_t start = 0;
	int count = 0, numeric = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] != '.') {
			if (!is_alnum(p[i]) && p[i] != '-')
				return -1;
			continue;
		}
		size_t len = i - start;
		if (len == 0 || len > 63 || p[start] == '-' || p[i - 1] == '-')
			return -1;
		numeric = 1;
		for (size_t k = start; k < i; k++)
			if (!is_digit(p[k]))
				numeric = 0;
		count++;
		start = i + 1;
	}
	*labels = count;
	*last_numeric = numeric;
	return 0;
}

/* RFC 5322 atext: the characters of a dot-atom other than the dot. */
static bool is_atext(char c)
{
	return is_alnum(c) || (c && strchr("!#$%&'*+/=?^_`{|}~-", c));
}

bool validate_is_email(const char *s)
{
	const char *at;
	size_t n, local;
	int labels, numeric_tld;

	if (!s)
		return false;
	n = strlen(s);
	if (n > VALIDATE_EMAIL_MAX)
		return false;
	at = strchr(s, '@');
	if (!at || strchr(at + 1, '@'))
		return false;
	local = (size_t)(at - s);
	if (local == 0 || local > 64 || s[0] == '.' || at[-1] == '.')
		return false;
	for (size_t i = 0; i < local; i++) {
		if (s[i] == '.') {
			if (s[i + 1] == '.')
				return false;
		} else if (!is_atext(s[i])) {
			return false;
		}
	}
	if (dns_name_check(at + 1, n - local - 1, &labels, &numeric_tld) < 0)
		return false;
	return labels >= 2 && !numeric_tld;
}

/* A dotted-quad IPv4 address: 4 decimal parts 0..255, no leading zeros. */
static int ipv4_check(const char *p, size_t n)
{
	size_t i = 0;

	for (int part = 0; part < 4; part++) {
		size_t start = i;
		int v = 0;

		if (part > 0) {
			if (i >= n || p[i] != '.')
				return -1;
			start = ++i;
		}
		while (i < n && is_digit(p[i]) && i - start < 3)
			v = v * 10 + (p[i++] - '0');
		if (i == start || v > 255 || (p[start] == '0' && i - start > 1))
			return -1;
	}
	return i == n ? 0 : -1;
}

/* Whether the last label of a host name looks like a number, decimal or
 * hex ("0x7f"): URL parsers (WHATWG, curl) then read the whole host as an
 * IPv4 address in one of several notations, so it must be a plain dotted
 * quad to mean the same to every reader. */
static bool host_ends_in_number(const char *p, size_t n)
{
	size_t start = n;

	while (start > 0 && p[start - 1] != '.')
		start--;
	if (start == n)
		return false;
	if (n - start >= 2 && p[start] == '0' && (p[start + 1] == 'x' || p[start + 1] == 'X')) {
		for (size_t i = start + 2; i < n; i++)
			if (!is_hex(p[i]))
				return false;
		return true;
	}
	for (size_t i = start; i < n; i++)
		if (!is_digit(p[i]))
			return false;
	return true;
}

/* Characters allowed in a path or query besides %XX: RFC 3986 unreserved,
 * sub-delims, ':', '@', '/', '?'. */
static bool is_path_char(char c)
{
	return is_alnum(c) || (c && strchr("-._~!$&'()*+,;=:@/?", c));
}

bool validate_is_http_url(const char *s)
{
	const char *p, *host, *host_end, *auth_end;
	size_t n, slen;
	int labels, numeric;

	if (!s)
		return false;
	n = strlen(s);
	if (n > VALIDATE_URL_MAX)
		return false;
	slen = 0;
	if (n >= 7 && to_lower(s[0]) == 'h' && to_lower(s[1]) == 't' && to_lower(s[2]) == 't' &&
	    to_lower(s[3]) == 'p') {
		if (memcmp(s + 4, "://", 3) == 0)
			slen = 7;
		else if (to_lower(s[4]) == 's' && n >= 8 && memcmp(s + 5, "://", 3) == 0)
			slen = 8;
	}
	if (slen == 0)
		return false;

	/* the authority runs to the first '/' or '?'; '#' and anything else
	 * outside the URL character set is refused by the host, port or path
	 * checks. An '@' there would fail them too, but userinfo is refused
	 * by name so that no later change lets it through. */
	host = s + slen;
	auth_end = host + strcspn(host, "/?");
	if (memchr(host, '@', (size_t)(auth_end - host)))
		return false;
	if (*host == '[') {
		char addr[INET6_ADDRSTRLEN];
		unsigned char bin[16];
		const char *close = memchr(host, ']', (size_t)(auth_end - host));
		size_t alen;

		if (!close)
			return false;
		alen = (size_t)(close - host - 1);
		if (alen == 0 || alen >= sizeof(addr))
			return false;
		memcpy(addr, host + 1, alen);
		addr[alen] = '\0';
		if (inet_pton(AF_INET6, addr, bin) != 1)
			return false;
		host_end = close + 1;
		if (host_end != auth_end && *host_end != ':')
			return false;
	} else {
		host_end = memchr(host, ':', (size_t)(auth_end - host));
		if (!host_end)
			host_end = auth_end;
		size_t hlen = (size_t)(host_end - host);

		if (dns_name_check(host, hlen, &labels, &numeric) < 0)
			return false;
		if (host_ends_in_number(host, hlen) && ipv4_check(host, hlen) < 0)
			return false;
	}
	if (host_end != auth_end) {
		/* host_end is ':' */
		long port = 0;
		size_t digits = (size_t)(auth_end - host_end - 1);

		if (digits < 1 || digits > 5)
			return false;
		for (p = host_end + 1; p < auth_end; p++) {
			if (!is_digit(*p))
				return false;
			port = port * 10 + (*p - '0');
		}
		if (port < 1 || port > 65535)
			return false;
	}
	for (p = auth_end; *p; p++) {
		if (*p == '%') {
			if (!is_hex(p[1]) || !is_hex(p[2]))
				return false;
			p += 2;
		} else if (!is_path_char(*p)) {
			return false;
		}
	}
	return true;
}

bool validate_is_uf(const char *s)
{
	static const char ufs[] = "AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS "
				  "RO RR SC SP SE TO";

	if (!s || !(s[0] >= 'A' && s[0] <= 'Z') || !(s[1] >= 'A' && s[1] <= 'Z') || s[2])
		return false;
	for (const char *p = ufs; *p; p += 3) {
		if (p[0] == s[0] && p[1] == s[1])
			return true;
		if (!p[2])
			break;
	}
	return false;
}

int validate_cep_normalize(const char *s, char out[9])
{
	char d[8];
	size_t n;

	if (!s)
		return -1;
	n = strlen(s);
	if (n == 8) {
		memcpy(d, s, 8);
	} else if (n == 9 && s[5] == '-') {
		memcpy(d, s, 5);
		memcpy(d + 5, s + 6, 3);
	} else {
		return -1;
	}
	for (int i = 0; i < 8; i++)
		if (!is_digit(d[i]))
			return -1;
	memcpy(out, d, 8);
	out[8] = '\0';
	return 0;
}

int validate_date(const char *s, int *y, int *m, int *d)
{
	static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int year, month, day, dim;

	if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return -1;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !is_digit(s[i]))
			return -1;
	year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
	month = (s[5] - '0') * 10 + (s[6] - '0');
	day = (s[8] - '0') * 10 + (s[9] - '0');
	if (year < 1900 || month < 1 || month > 12 || day < 1)
		return -1;
	dim = mdays[month - 1];
	if (month == 2 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0))
		dim = 29;
	if (day > dim)
		return -1;
	if (y)
		*y = year;
	if (m)
		*m = month;
	if (d)
		*d = day;
	return 0;
}

bool validate_is_phone(const char *s)
{
	const char *p;
	int digits = 0, in_paren = 0, groups = 0;

	if (!s)
		return false;
	p = s;
	if (*p == '+') {
		p++;
		if (!is_digit(*p))
			return false;
	}
	if (!is_digit(*p) && *p != '(')
		return false;
	for (; *p; p++) {
		char c = *p, next = p[1];

		if (is_digit(c)) {
			digits++;
		} else if (c == '(') {
			if (in_paren || groups || !is_digit(next))
				return false;
			in_paren = 1;
			groups = 1;
		} else if (c == ')') {
			if (!in_paren)
				return false;
			in_paren = 0;
		} else if (c == ' ' || c == '-') {
			if (in_paren || !(is_digit(p[-1]) || p[-1] == ')') ||
			    !(is_digit(next) || next == '('))
				return false;
		} else {
			return false;
		}
	}
	/* the last character is a digit or ')': a '(' always has a digit after
	 * it and a space or dash always has something after it */
	return !in_paren && digits >= 8 && digits <= 15;
}

bool validate_has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

bool validate_is_blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ')
			return false;
	return true;
}

/* RFC 9110 tchar */
static bool is_tchar(char c)
{
	return is_alnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

bool validate_header_name(const char *s, size_t n)
{
	if (!s || n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_tchar(s[i]))
			return false;
	return true;
}

bool validate_printable(const char *s, size_t n)
{
	if (!s)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < ' ' || (unsigned char)s[i] > '~')
			return false;
	return true;
}

/* Headers a sender sets, or that frame the request: never an extra. */
static const char *const reserved_headers[] = {"accept",
					       "authorization",
					       "connection",
					       "content-encoding",
					       "content-length",
					       "content-type",
					       "cookie",
					       "expect",
					       "host",
					       "keep-alive",
					       "proxy-authorization",
					       "te",
					       "trailer",
					       "transfer-encoding",
					       "upgrade",
					       "user-agent",
					       NULL};

bool validate_header_reserved(const char *name)
{
	for (size_t i = 0; name && reserved_headers[i]; i++)
		if (strcasecmp(name, reserved_headers[i]) == 0)
			return true;
	return false;
}
