/* Fuzz the event filters: the body of POST /v1/events/replay (through
 * json_parse_object and reqbody_replay) and, for the query of GET
 * /v1/events, the input read as "name=value" through reqbody_filter_field
 * (which also reaches timefmt_parse and event_parse_cursor). Accept or
 * refuse with a message; never crash, leak or read out of bounds. */
#include "pixrelay/core/json.h"
#include "pixrelay/pix/reqbody.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_filter(const struct event_filter *f, int max_limit)
{
	if (f->limit < 1 || f->limit > max_limit)
		__builtin_trap();
}

static void fuzz_query(const uint8_t *data, size_t size)
{
	struct event_filter f = {.limit = 20};
	char *text = malloc(size + 1), *eq, err[512] = "";

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	eq = strchr(text, '=');
	if (eq) {
		*eq = '\0';
		if (reqbody_filter_field(text, eq + 1, &f, 100, err, sizeof(err)) == 0) {
			check_filter(&f, 100);
			if (f.cursor_id && (f.cursor_id < eq + 1 || f.cursor_id > text + size))
				__builtin_trap();
		} else if (err[0] == '\0') {
			__builtin_trap();
		}
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct event_filter f = {.state = "dead", .limit = 100};
	char err[512] = "";
	yajl_val v = NULL;

	fuzz_query(data, size);
	if (size > 0 && json_parse_object((const char *)data, size, &v, err, sizeof(err)) != 0)
		return 0;
	err[0] = '\0';
	if (reqbody_replay(v, &f, err, sizeof(err)) == 0)
		check_filter(&f, EVENT_LIST_MAX);
	else if (err[0] == '\0')
		__builtin_trap();
	yajl_tree_free(v);
	return 0;
}
