/* Fuzz the request-body parser: any bytes must be accepted or refused with a
 * message, never crash, leak or read out of bounds. */
#include "pixrelay/json.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	yajl_val v = NULL;

	if (json_parse_object((const char *)data, size, &v, err, sizeof(err)) == 0)
		yajl_tree_free(v);
	else if (err[0] == '\0')
		__builtin_trap(); /* a refusal always says why */
	return 0;
}
