/* Fuzz the BR Code decoder: any bytes must be accepted or refused with a
 * message, never crash, leak or read out of bounds. What is accepted must
 * carry a CRC that verifies, give valid JSON, and, when it can be written
 * again by brcode_encode, come back as a code that decodes to the same key,
 * amount and txid. */
#include "pixrelay/pix/brcode.h"
#include "pixrelay/core/json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dup_slice(struct brcode_slice s)
{
	char *p;

	if (!s.ptr)
		return NULL;
	p = malloc(s.len + 1);
	if (!p)
		abort();
	memcpy(p, s.ptr, s.len);
	p[s.len] = '\0';
	return p;
}

static int slice_eq(struct brcode_slice a, struct brcode_slice b)
{
	if (!a.ptr || !b.ptr)
		return !a.ptr && !b.ptr;
	return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
}

static void check_reencode(const struct brcode_decoded *d)
{
	struct brcode_input in = {.amount_cents = d->amount_cents};
	struct brcode_decoded *again = malloc(sizeof(*again));
	char out[BRCODE_ENCODE_BUF], err[256];
	char *gui = dup_slice(d->gui), *key = dup_slice(d->pix_key);
	char *desc = dup_slice(d->description), *loc = dup_slice(d->location);
	char *name = dup_slice(d->merchant_name), *city = dup_slice(d->merchant_city);
	char *txid = dup_slice(d->txid);

	if (!again)
		abort();
	in.gui = gui;
	in.pix_key = key;
	in.description = desc;
	in.location = loc;
	in.merchant_name = name;
	in.merchant_city = city;
	in.txid = txid;
	in.single_use = d->point_of_initiation.ptr && d->point_of_initiation.ptr[1] == '2';
	/* refusals are fine (no key, a name of spaces, ...); what is built must
	 * decode again to the same money and identifiers */
	if (brcode_encode(&in, out, sizeof(out), err, sizeof(err)) == 0) {
		if (brcode_decode(out, again, err, sizeof(err)) != 0)
			__builtin_trap();
		if (!slice_eq(again->pix_key, d->pix_key) || !slice_eq(again->txid, d->txid) ||
		    !slice_eq(again->location, d->location) ||
		    again->amount_cents != d->amount_cents)
			__builtin_trap();
	} else if (err[0] == '\0') {
		__builtin_trap();
	}
	free(gui);
	free(key);
	free(desc);
	free(loc);
	free(name);
	free(city);
	free(txid);
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct brcode_decoded *d = malloc(sizeof(*d));
	char *code = malloc(size + 1);
	char err[256] = "", hex[8];
	yajl_gen g = json_gen_new();
	const char *json;
	size_t len;

	if (!code || !d)
		abort();
	memcpy(code, data, size);
	code[size] = '\0';

	if (brcode_decode_json(code, g, err, sizeof(err)) == 0) {
		char *text;
		yajl_val tree;

		json = json_buf(g, &len);
		text = malloc(len + 1);
		if (!text)
			abort();
		memcpy(text, json, len);
		text[len] = '\0';
		tree = yajl_tree_parse(text, NULL, 0);
		if (!tree || !YAJL_IS_OBJECT(tree))
			__builtin_trap();
		yajl_tree_free(tree);
		free(text);

		if (brcode_decode(code, d, err, sizeof(err)) != 0)
			__builtin_trap();
		/* the CRC verifies independently of the decoder's own check */
		len = strlen(code);
		if (len < 8 || memcmp(code + len - 8, "6304", 4) != 0)
			__builtin_trap();
		snprintf(hex, sizeof(hex), "%04X", brcode_crc16(code, len - 4));
		if (memcmp(code + len - 4, hex, 4) != 0)
			__builtin_trap();
		check_reencode(d);
	} else {
		if (err[0] == '\0')
			__builtin_trap(); /* a refusal always says why */
		json_buf(g, &len);
		if (len != 0)
			__builtin_trap(); /* nothing written on failure */
		if (brcode_decode(code, d, err, sizeof(err)) == 0)
			__builtin_trap();
	}
	yajl_gen_free(g);
	free(code);
	free(d);
	return 0;
}
