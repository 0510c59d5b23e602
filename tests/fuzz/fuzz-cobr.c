/* Fuzz what a bank says of Pix Automático's recurring charges as pixrelay
 * reads it (pix/cobr.c): a /cobr callback body (cobr_parse_notification),
 * the same bytes as GET /cobr/{txid}'s answer (cobr_read_one) and as PUT
 * /cobr's (cobr_read_answer). None may crash, leak or read out of bounds;
 * each item taken has a 29-character idRec, a txid of 26 to 35 and at most
 * COBR_ATTEMPTS_MAX attempts; its Pix, when any, are a {"pix": [...]}
 * object; the attempts' lines hold one line an attempt. */
#include "pixrelay/pix/cobr.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define IDREC "RR9999999920261202abcdefghijk"
#define TXID "01M8C0C5SXF1HDHDYQV5PETZ0C"

static void check(const struct cobr_heard *h)
{
	char *lines;
	size_t n = 0;

	if (strlen(h->idrec) != 29 || strlen(h->txid) < 26 || strlen(h->txid) > 35 ||
	    h->nattempts > COBR_ATTEMPTS_MAX)
		__builtin_trap();
	lines = cobr_attempt_lines(h);
	for (const char *p = lines; *p; p++)
		n += *p == '\n';
	if (h->nattempts && n != h->nattempts - 1)
		__builtin_trap();
	free(lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = malloc(size + 1), err[256], *pix = NULL;
	struct cobr_batch b;
	struct cobr_heard h;
	struct cobr_input in = {9990, "2026-12-10"};
	struct cobr_recebedor rcv = {"9708", "012682", "CORRENTE"};

	memcpy(body, data, size);
	body[size] = '\0';
	if (cobr_parse_notification(body, size, &b, err, sizeof(err)) == COBR_PARSE_OK) {
		for (size_t i = 0; i < b.n; i++)
			check(&b.items[i]);
		if (b.pix && strncmp(b.pix, "{\"pix\":[", 8) != 0)
			__builtin_trap();
		cobr_batch_deinit(&b);
	}
	if (cobr_read_one(body, size, TXID, &h, &pix, err, sizeof(err)) == 0) {
		check(&h);
		if (strcmp(h.txid, TXID) != 0)
			__builtin_trap();
		free(pix);
	}
	(void)cobr_read_answer(body, size, TXID, IDREC, &in, &rcv, err, sizeof(err));
	(void)cobr_is_callback(body, size);
	free(body);
	return 0;
}
