/* Fuzz the refund body (POST /v1/charge/{id}/refund): json_parse_object then
 * reqbody_refund, as the handler does. Accept with a positive amount or
 * none, or refuse with a message; never crash, leak or read out of bounds. */
#include "pixrelay/core/json.h"
#include "pixrelay/pix/reqbody.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "";
	yajl_val v = NULL;
	int64_t amount = -1;

	if (size > 0 && json_parse_object((const char *)data, size, &v, err, sizeof(err)) != 0)
		return 0;
	err[0] = '\0';
	if (reqbody_refund(v, &amount, err, sizeof(err)) == 0) {
		if (amount < 0)
			__builtin_trap();
	} else if (err[0] == '\0') {
		__builtin_trap();
	}
	yajl_tree_free(v);
	return 0;
}
