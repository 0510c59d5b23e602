/* Fuzz the names and key pins a bank connection pins its bank's
 * certificate to (certcheck): any bytes read as an RFC 4514 subject
 * (certcheck_subject_normal) and as a key pin (certcheck_pins_add). Neither
 * may crash, leak or read out of bounds; a refusal names why; an accepted
 * subject is written out in at most CERTCHECK_DN_MAX characters of UTF-8
 * without control characters, and reads back as itself (the form pixrelay
 * keeps is a fixed point); an accepted pin is kept as "sha256/" and 44
 * base64 characters. */
#include "pixrelay/core/certcheck.h"
#include "pixrelay/core/validate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *dn = malloc(size + 1), out[CERTCHECK_DN_MAX + 1], again[CERTCHECK_DN_MAX + 1];
	char err[256] = "", list[CERTCHECK_PINS_TEXT] = "";

	memcpy(dn, data, size);
	dn[size] = '\0';
	if (certcheck_subject_normal(dn, out, sizeof(out), err, sizeof(err)) == 0) {
		size_t n = strnlen(out, sizeof(out));

		if (n > CERTCHECK_DN_MAX || validate_utf8_chars(out, n) < 0)
			__builtin_trap();
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)out[i] < ' ' || out[i] == 0x7f)
				__builtin_trap();
		if (certcheck_subject_normal(out, again, sizeof(again), err, sizeof(err)) != 0 ||
		    strcmp(out, again) != 0)
			__builtin_trap();
	} else if (!err[0] || strnlen(err, sizeof(err)) == sizeof(err)) {
		__builtin_trap();
	}
	err[0] = '\0';
	if (certcheck_pins_add(list, dn, err, sizeof(err)) == 0) {
		if (strlen(list) != CERTCHECK_PIN_LEN || strncmp(list, "sha256/", 7) != 0)
			__builtin_trap();
	} else if (!err[0]) {
		__builtin_trap();
	}
	free(dn);
	return 0;
}
