/* Fuzz the account create parser: any bytes go through json_parse_object and
 * account_parse_create (with a small file limit), and also straight into
 * account_decode_file. Each must accept or refuse with a message, never
 * crash, leak or read out of bounds. */
#include "pixrelay/pix/account.h"
#include "pixrelay/core/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_FILE 4096
#define FUZZ_TODAY 20527LL /* 2026-03-15 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_decode(const uint8_t *data, size_t size)
{
	struct account_file f;
	char err[256];
	char *text = malloc(size + 1);

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	if (account_decode_file(text, ACCOUNT_KINDS_PDF | ACCOUNT_KINDS_IMAGE, FUZZ_MAX_FILE, &f,
				err, sizeof(err)) == 0) {
		if (f.len == 0 || !f.data || strlen(f.sha256) != 64)
			__builtin_trap();
		account_file_deinit(&f);
	} else if (err[0] == '\0') {
		__builtin_trap(); /* a refusal always says why */
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct account_limits lim = {FUZZ_MAX_FILE};
	struct account_input in;
	char err[256];
	yajl_val v = NULL;

	fuzz_decode(data, size);
	if (json_parse_object((const char *)data, size, &v, err, sizeof(err)) < 0)
		return 0;
	err[0] = '\0';
	if (account_parse_create(v, &lim, FUZZ_TODAY, &in, err, sizeof(err)) == 0) {
		if (in.ndocuments == 0 || in.nrepresentatives == 0 || !in.official_name)
			__builtin_trap();
		account_input_deinit(&in);
	} else if (err[0] == '\0') {
		__builtin_trap();
	}
	yajl_tree_free(v);
	return 0;
}
