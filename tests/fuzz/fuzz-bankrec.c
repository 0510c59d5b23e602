/* Fuzz what a bank says of Pix Automático's recurrences as pixrelay reads
 * it (pix/recurrence.c): a /rec callback body (recurrence_parse_notification),
 * the same bytes as GET /rec/{idRec}'s answer read for its QR
 * (recurrence_read_qr) and as one recurrence (recurrence_read_one), and as
 * a QR code itself (recurrence_check_code). None may crash, leak or read out
 * of bounds; each item taken has a 29-character idRec and a status in range;
 * a code taken passes recurrence_check_code again. */
#include "pixrelay/pix/recurrence.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define IDREC "RN9999999920261202abcdefghijk"
#define LOC "qr.banco.example/qr/v2/rec/2353c790eefb11eaadc10242ac120002"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = malloc(size + 1), err[256], *code = NULL;
	struct recurrence_batch b;
	struct recurrence_heard h;

	memcpy(body, data, size);
	body[size] = '\0';
	if (recurrence_parse_notification(body, size, &b, err, sizeof(err)) ==
	    RECURRENCE_PARSE_OK) {
		for (size_t i = 0; i < b.n; i++)
			if (strlen(b.items[i].idrec) != RECURRENCE_IDREC_LEN ||
			    b.items[i].status < RECURRENCE_CREATED ||
			    b.items[i].status > RECURRENCE_CANCELLED)
				__builtin_trap();
		recurrence_batch_deinit(&b);
	}
	if (recurrence_read_qr(body, size, IDREC, LOC, &code, err, sizeof(err)) == 0) {
		if (!code || !recurrence_check_code(code, LOC, err, sizeof(err)))
			__builtin_trap();
		free(code);
	}
	if (recurrence_read_one(body, size, IDREC, &h, err, sizeof(err)) == 0 &&
	    strcmp(h.idrec, IDREC) != 0)
		__builtin_trap();
	(void)recurrence_check_code(body, LOC, err, sizeof(err));
	(void)recurrence_is_callback(body, size);
	free(body);
	return 0;
}
