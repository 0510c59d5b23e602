/* Fuzz a bank's answer to PUT /cob/{txid} as relay/bankcharges.c takes
 * it (cobcheck_answer): it may not crash, leak or read out of bounds; an
 * answer taken gives the code it holds, which decodes as a charge's
 * dynamic BR Code of the amount asked (a location, no Pix key); a refused
 * one gives a reason, NUL-terminated within its buffer, without control
 * characters, and leaves the code untouched. */
#include "pixrelay/pix/brcode.h"
#include "pixrelay/pix/cobcheck.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cobcheck_asked asked = {"01HZY8K3M4N5P6Q7R8S9T0V1WX",
						    "pagamentos@loja.example", 1000, 3600, NULL};
	static const struct charge_due due = {"2026-12-10", 30, 200, 100, 50, "2026-12-05"};
	static const struct cobcheck_asked asked_v = {"01HZY8K3M4N5P6Q7R8S9T0V1WX",
						      "pagamentos@loja.example", 1000, 0, &due};
	char *body = malloc(size + 1), why[200], *code = NULL;
	struct brcode_decoded d;
	int rc;

	memcpy(body, data, size);
	body[size] = '\0';
	rc = cobcheck_answer(&asked, body, size, &code, why, sizeof(why));
	if (rc == 0) {
		if (!code || brcode_decode(code, &d, why, sizeof(why)) < 0 || d.pix_key.ptr ||
		    !d.location.ptr || (d.amount_cents >= 0 && d.amount_cents != asked.amount))
			__builtin_trap();
		free(code);
	} else {
		if (rc != COBCHECK_REFUSED || code || !why[0] ||
		    strnlen(why, sizeof(why)) == sizeof(why))
			__builtin_trap();
		for (const char *p = why; *p; p++)
			if ((unsigned char)*p < ' ' || *p == 0x7f)
				__builtin_trap();
	}
	/* the same answer as a cobv's (a due-date charge): refused or taken,
	 * never a crash */
	code = NULL;
	rc = cobcheck_answer(&asked_v, body, size, &code, why, sizeof(why));
	if ((rc == 0) != (code != NULL))
		__builtin_trap();
	free(code);
	free(body);
	return 0;
}
