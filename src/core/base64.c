/* base64: the standard alphabet, always padded on the way out. The decoder
 * reads outside text (webhook secrets pasted by hand, in sign.c; the files
 * of an account's create request, in account.c) strictly: the alphabet and
 * final padding only, though the padding may be dropped. A decoded buffer
 * has a NUL after its data, so decoded text is a C string. Pure: no I/O. */
#include "pixrelay/core/base64.h"

#include "pixrelay/core/mem.h"

#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
	return (n / 3 + (n % 3 != 0)) * 4;
}

void base64_encode(const void *in, size_t n, char *out)
{
	const unsigned char *p = in;
	size_t i = 0, o = 0;

	for (; n - i >= 3; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = '=';
	}
	out[o] = '\0';
}

/* The 6-bit value of `c`, or -1 outside the alphabet. */
static int sextet(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

unsigned char *base64_decode(const char *in, size_t len, size_t *outlen)
{
	unsigned char *out = NULL;
	size_t data = len, n = 0;
	uint32_t acc = 0;
	int bits = 0;

	/* padding: only at the end, only one or two, only to complete a group of 4 */
	if (data > 0 && in[data - 1] == '=') {
		data--;
		if (data > 0 && in[data - 1] == '=')
			data--;
		if (len % 4 != 0 || data % 4 == 0)
			goto err;
	}
	if (data % 4 == 1)
		goto err;

	out = mem_alloc(data / 4 * 3 + 3 + 1);
	for (size_t i = 0; i < data; i++) {
		int v = sextet((unsigned char)in[i]);
		if (v < 0)
			goto err;
		acc = (acc << 6 | (uint32_t)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (unsigned char)(acc >> bits);
		}
	}
	out[n] = '\0';
	*outlen = n;
	return out;
err:
	free(out);
	return NULL;
}
