/* cli_brcode: `pixrelay brcode decode CODE`, which checks a Pix
 * copy-and-paste code and prints its fields (the parser is brcode.c). It
 * needs no settings and no Redis.
 */
#include "cli_int.h"

#include "pixrelay/core/json.h"
#include "pixrelay/pix/brcode.h"

#include <stdio.h>
#include <string.h>

int cli_cmd_brcode(const struct config *cfg, int argc, char **argv)
{
	char err[256];
	yajl_gen g;
	size_t len;
	const char *s;
	int rc;

	if (argc < 2 || cli_want_help(argc, argv) || strcmp(argv[1], "decode") != 0 || argc != 3) {
		fputs("usage: pixrelay brcode decode CODE\n\n"
		      "Check a Pix copy-and-paste code (TLV lengths, CRC16, required fields) and\n"
		      "print its fields as JSON. Exit status 1 when the code is invalid.\n",
		      cli_want_help(argc, argv) ? stdout : stderr);
		return cli_want_help(argc, argv) ? 0 : 2;
	}
	g = json_gen_new();
	yajl_gen_config(g, yajl_gen_beautify, 1);
	rc = brcode_decode_json(argv[2], g, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "pixrelay brcode decode: invalid BR Code: %s\n", err);
	} else {
		s = json_buf(g, &len);
		fwrite(s, 1, len, stdout);
		if (len && s[len - 1] != '\n')
			putchar('\n');
	}
	yajl_gen_free(g);
	return rc < 0 ? 1 : 0;
}
