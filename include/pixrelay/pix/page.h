/* page: the cursors and page sizes of the listing endpoints (no I/O).
 *
 * A listing walks an index of things by creation time, newest first
 * (src/store/lua/lib/page.lua). Its cursor is opaque to clients and names where the
 * previous page stopped: "<created ms>_<id>" of the last thing looked at. The
 * ledger, a list rather than an index, has its own cursor,
 * "<position>.<fingerprint>" (src/store/lua/account_ledger.lua).
 */
#ifndef PIXRELAY_PAGE_H
#define PIXRELAY_PAGE_H

#include <stddef.h>
#include <yajl/yajl_gen.h>

#define PAGE_ID_MAX 48	  /* an id of a cursor + NUL fits */
#define PAGE_SCORE_MAX 24 /* a time in ms as text + NUL fits */
#define PAGE_FP_LEN 12	  /* hex digits of a ledger entry's fingerprint */

/* Where the next page starts. */
struct page_cursor {
	char score[PAGE_SCORE_MAX]; /* "+inf": from the newest */
	char id[PAGE_ID_MAX];	    /* "": none */
};

/* Set `c` to "from the newest". */
void page_cursor_start(struct page_cursor *c);

/* Parse a cursor "<ms>_<id>" whose id is `id_prefix` (may be "") followed by
 * a ULID. Returns 0 with *c written, or -1 when `s` is not such a cursor. */
int page_parse_cursor(const char *s, const char *id_prefix, struct page_cursor *c);

/* Parse a page size: decimal digits only, from 1 to `max`. 0 with *out, or -1. */
int page_parse_limit(const char *s, int max, int *out);

/* Parse a ledger cursor "<position>.<12 lower-case hex digits>", position from
 * 1 to 1000000. Writes the position as text into pos (16 bytes) and the
 * fingerprint into fp (PAGE_FP_LEN + 1 bytes); 0, or -1. */
int page_parse_ledger_cursor(const char *s, char pos[16], char fp[PAGE_FP_LEN + 1]);

/* Write "nextCursor" and the cursor "<score>_<id>" of the next page into the
 * object open in g, or null (the last page) when score or id is NULL or "". */
void page_write_next(yajl_gen g, const char *score, const char *id);

#endif
