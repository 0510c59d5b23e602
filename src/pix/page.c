/* page: the cursors and page sizes clients send to the listings, read as
 * hostile query text (digits without a leading zero, the listing's id
 * prefix and a ULID, a bounded ledger position), and the nextCursor written
 * back. The walk a cursor resumes runs in Redis (src/store/lua/lib/page.lua,
 * account_ledger.lua); the query is read in api/api_common.c, and the
 * stores of charges, events and keys write nextCursor. No I/O. */
#include "pixrelay/pix/page.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void page_cursor_start(struct page_cursor *c)
{
	snprintf(c->score, sizeof(c->score), "+inf");
	c->id[0] = '\0';
}

/* True when s[0..n) are 1 to `max` decimal digits without a leading zero. */
static bool digits(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max || s[0] == '0')
		return false;
	return strspn(s, "0123456789") >= n;
}

int page_parse_cursor(const char *s, const char *id_prefix, struct page_cursor *c)
{
	const char *sep = s ? strchr(s, '_') : NULL;
	size_t n = sep ? (size_t)(sep - s) : 0, plen = strlen(id_prefix);
	const char *id;

	/* 15 digits hold any time in ms until the year 33658 */
	if (!sep || !digits(s, n, 15))
		return -1;
	id = sep + 1;
	if (strncmp(id, id_prefix, plen) != 0 || !ids_is_ulid(id + plen))
		return -1;
	snprintf(c->score, sizeof(c->score), "%.*s", (int)n, s);
	snprintf(c->id, sizeof(c->id), "%s", id);
	return 0;
}

int page_parse_limit(const char *s, int max, int *out)
{
	size_t n = s ? strlen(s) : 0;
	long v = 0;

	if (!digits(s ? s : "", n, 9))
		return -1;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	if (v < 1 || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

int page_parse_ledger_cursor(const char *s, char pos[16], char fp[PAGE_FP_LEN + 1])
{
	const char *dot = s ? strchr(s, '.') : NULL;
	size_t n = dot ? (size_t)(dot - s) : 0;

	if (!dot || !digits(s, n, 7) || strlen(dot + 1) != PAGE_FP_LEN ||
	    strspn(dot + 1, "0123456789abcdef") != PAGE_FP_LEN)
		return -1;
	if (n == 7 && strncmp(s, "1000000", 7) > 0)
		return -1;
	snprintf(pos, 16, "%.*s", (int)n, s);
	snprintf(fp, PAGE_FP_LEN + 1, "%s", dot + 1);
	return 0;
}

void page_write_next(yajl_gen g, const char *score, const char *id)
{
	char *cur;

	json_str(g, "nextCursor");
	if (!score || !*score || !id || !*id) {
		json_null(g);
		return;
	}
	cur = mem_printf("%s_%s", score, id);
	json_str(g, cur);
	free(cur);
}
