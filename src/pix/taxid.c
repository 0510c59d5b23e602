/* taxid: CPF and CNPJ as a person types them, checked and normalised: all
 * the punctuation in its place or none, check digits right (mod 11; each
 * character of an alphanumeric CNPJ worth its ASCII code minus 48), the
 * all-equal CPF and all-zero CNPJ refused. The input is hostile and read
 * with our own ASCII classes, never the locale's. Pure; the fields that hold
 * tax ids are read in charge.c (the payer) and account.c (the company and
 * its representatives). */
#include "pixrelay/pix/taxid.h"

#include <stdbool.h>
#include <string.h>

/* Locale-independent character classes: the C library's depend on the
 * current locale and are undefined for negative chars. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

/* Copy the characters of `in` that are not at the punctuation positions of
 * `mask` (a string the length of the punctuated form, where '#' stands for a
 * significant character and anything else for that exact punctuation mark)
 * into `sig`. `in` must be either exactly `nsig` characters long, with no
 * punctuation at all, or exactly as long as `mask` with every mark in
 * place. Returns 0, or -1 when neither shape fits. Characters themselves are
 * not checked here. */
static int strip_punct(const char *in, const char *mask, size_t nsig, char *sig)
{
	size_t n = strlen(in), m = strlen(mask), j = 0;

	if (n == nsig) {
		memcpy(sig, in, nsig);
		for (size_t i = 0; i < nsig; i++)
			if (!is_digit(sig[i]) && !is_upper(sig[i]) && !is_lower(sig[i]))
				return -1;
		return 0;
	}
	if (n != m)
		return -1;
	for (size_t i = 0; i < m; i++) {
		if (mask[i] == '#') {
			if (!is_digit(in[i]) && !is_upper(in[i]) && !is_lower(in[i]))
				return -1;
			sig[j++] = in[i];
		} else if (in[i] != mask[i]) {
			return -1;
		}
	}
	return j == nsig ? 0 : -1;
}

/* CPF check digit over the first `n` digits, weights n+1 .. 2. */
static char cpf_check_digit(const char *d, int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += (d[i] - '0') * (n + 1 - i);
	return (char)('0' + (sum * 10 % 11) % 10);
}

int taxid_cpf_normalize(const char *in, char out[12])
{
	char d[TAXID_CPF_LEN];
	int all_equal = 1;

	if (!in || strip_punct(in, "###.###.###-##", TAXID_CPF_LEN, d) < 0)
		return -1;
	for (int i = 0; i < TAXID_CPF_LEN; i++) {
		if (!is_digit(d[i]))
			return -1;
		if (d[i] != d[0])
			all_equal = 0;
	}
	if (all_equal)
		return -1;
	if (cpf_check_digit(d, 9) != d[9] || cpf_check_digit(d, 10) != d[10])
		return -1;
	memcpy(out, d, TAXID_CPF_LEN);
	out[TAXID_CPF_LEN] = '\0';
	return 0;
}

/* CNPJ check digit over the first `n` (12 or 13) characters: weights cycle
 * 2..9 from the right; each character is worth its ASCII code minus 48. */
static char cnpj_check_digit(const char *c, int n)
{
	int sum = 0, r;

	for (int i = 0; i < n; i++) {
		int w = (n - 1 - i) % 8 + 2;
		sum += (c[i] - '0') * w;
	}
	r = sum % 11;
	return (char)('0' + (r < 2 ? 0 : 11 - r));
}

int taxid_cnpj_normalize(const char *in, char out[15])
{
	char c[TAXID_CNPJ_LEN];
	int all_zero = 1;

	if (!in || strip_punct(in, "##.###.###/####-##", TAXID_CNPJ_LEN, c) < 0)
		return -1;
	for (int i = 0; i < TAXID_CNPJ_LEN; i++) {
		if (is_lower(c[i]))
			c[i] = (char)(c[i] - 'a' + 'A');
		if (i >= 12 && !is_digit(c[i]))
			return -1;
		if (c[i] != '0')
			all_zero = 0;
	}
	if (all_zero)
		return -1;
	if (cnpj_check_digit(c, 12) != c[12] || cnpj_check_digit(c, 13) != c[13])
		return -1;
	memcpy(out, c, TAXID_CNPJ_LEN);
	out[TAXID_CNPJ_LEN] = '\0';
	return 0;
}

int taxid_normalize(const char *in, char out[15], enum taxid_kind *kind)
{
	char buf[TAXID_CNPJ_LEN + 1];
	enum taxid_kind k;

	if (taxid_cpf_normalize(in, buf) == 0)
		k = TAXID_CPF;
	else if (taxid_cnpj_normalize(in, buf) == 0)
		k = TAXID_CNPJ;
	else
		return -1;
	memcpy(out, buf, strlen(buf) + 1);
	if (kind)
		*kind = k;
	return 0;
}
