/* Fuzz the internal-transfer body (POST /v1/baas/internal-transfer):
 * json_parse_object then reqbody_transfer, as the handler does. What is
 * accepted has an amount in range and two Pix keys of 1..77 bytes. */
#include "pixrelay/pix/charge.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/reqbody.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_key(const char *k)
{
	size_t n = k ? strlen(k) : 0;

	if (n < 1 || n > REQBODY_PIX_KEY_MAX)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reqbody_transfer t;
	char err[512] = "";
	yajl_val v = NULL;

	if (json_parse_object((const char *)data, size, &v, err, sizeof(err)) != 0)
		return 0;
	err[0] = '\0';
	if (reqbody_transfer(v, &t, err, sizeof(err)) == 0) {
		if (t.amount < 1 || t.amount > CHARGE_MAX_AMOUNT)
			__builtin_trap();
		check_key(t.from_key);
		check_key(t.to_key);
	} else if (err[0] == '\0') {
		__builtin_trap();
	}
	yajl_tree_free(v);
	return 0;
}
