#include "pixrelay/pix/page.h"

#include "pixrelay/core/json.h"

#include "check.h"

#include <yajl/yajl_gen.h>

/* {"nextCursor": ...} as page_write_next writes it, in buf. */
static const char *next_of(char *buf, size_t size, const char *score, const char *id)
{
	yajl_gen g = json_gen_new();
	const char *s;
	size_t len;

	json_open(g);
	page_write_next(g, score, id);
	json_close(g);
	s = json_buf(g, &len);
	snprintf(buf, size, "%.*s", (int)len, s);
	yajl_gen_free(g);
	return buf;
}

int main(void)
{
	struct page_cursor c;
	char pos[16], fp[PAGE_FP_LEN + 1], buf[128];
	int n = 0;

	page_cursor_start(&c);
	CHECK_STR(c.score, "+inf");
	CHECK_STR(c.id, "");

	CHECK_INT(page_parse_cursor("1795308078008_key_01M80B6GXRC6162E4XN5NPCTY3", "key_", &c), 0);
	CHECK_STR(c.score, "1795308078008");
	CHECK_STR(c.id, "key_01M80B6GXRC6162E4XN5NPCTY3");
	CHECK_INT(page_parse_cursor("1795308078008_01M80B6GXRC6162E4XN5NPCTY3", "", &c), 0);
	CHECK_STR(c.id, "01M80B6GXRC6162E4XN5NPCTY3");
	/* the wrong kind of id, a bad time, junk */
	CHECK_INT(page_parse_cursor("1795308078008_01M80B6GXRC6162E4XN5NPCTY3", "key_", &c), -1);
	CHECK_INT(page_parse_cursor("1795308078008_key_01M80B6GXRC6162E4XN5NPCTY3", "", &c), -1);
	CHECK_INT(page_parse_cursor("_01M80B6GXRC6162E4XN5NPCTY3", "", &c), -1);
	CHECK_INT(page_parse_cursor("0_01M80B6GXRC6162E4XN5NPCTY3", "", &c), -1);
	CHECK_INT(page_parse_cursor("-5_01M80B6GXRC6162E4XN5NPCTY3", "", &c), -1);
	CHECK_INT(page_parse_cursor("12x_01M80B6GXRC6162E4XN5NPCTY3", "", &c), -1);
	CHECK_INT(page_parse_cursor("1234567890123456_01M80B6GXRC6162E4XN5NPCTY3", "", &c), -1);
	CHECK_INT(page_parse_cursor("17_01M80B6GXRC6162E4XN5NPCTY", "", &c), -1);
	CHECK_INT(page_parse_cursor("17_01M80B6GXRC6162E4XN5NPCTY3x", "", &c), -1);
	CHECK_INT(page_parse_cursor("", "", &c), -1);
	CHECK_INT(page_parse_cursor(NULL, "", &c), -1);
	/* a failed parse leaves the cursor as it was */
	CHECK_STR(c.id, "01M80B6GXRC6162E4XN5NPCTY3");

	CHECK_INT(page_parse_limit("1", 100, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(page_parse_limit("100", 100, &n), 0);
	CHECK_INT(n, 100);
	CHECK_INT(page_parse_limit("101", 100, &n), -1);
	CHECK_INT(page_parse_limit("0", 100, &n), -1);
	CHECK_INT(page_parse_limit("-1", 100, &n), -1);
	CHECK_INT(page_parse_limit("+5", 100, &n), -1);
	CHECK_INT(page_parse_limit("05", 100, &n), -1);
	CHECK_INT(page_parse_limit("5 ", 100, &n), -1);
	CHECK_INT(page_parse_limit("2.0", 100, &n), -1);
	CHECK_INT(page_parse_limit("", 100, &n), -1);
	CHECK_INT(page_parse_limit("99999999999999999999", 100, &n), -1);
	CHECK_INT(n, 100);

	CHECK_INT(page_parse_ledger_cursor("20.3f2a9c0d1b4e", pos, fp), 0);
	CHECK_STR(pos, "20");
	CHECK_STR(fp, "3f2a9c0d1b4e");
	CHECK_INT(page_parse_ledger_cursor("1000000.3f2a9c0d1b4e", pos, fp), 0);
	CHECK_INT(page_parse_ledger_cursor("1000001.3f2a9c0d1b4e", pos, fp), -1);
	CHECK_INT(page_parse_ledger_cursor("0.3f2a9c0d1b4e", pos, fp), -1);
	CHECK_INT(page_parse_ledger_cursor("20.3F2A9C0D1B4E", pos, fp), -1);
	CHECK_INT(page_parse_ledger_cursor("20.3f2a9c0d1b4", pos, fp), -1);
	CHECK_INT(page_parse_ledger_cursor("20_3f2a9c0d1b4e", pos, fp), -1);
	CHECK_INT(page_parse_ledger_cursor(".3f2a9c0d1b4e", pos, fp), -1);

	/* the cursor of the next page, or null on the last one */
	CHECK_STR(next_of(buf, sizeof(buf), "1795308078008", "key_01M80B6GXRC6162E4XN5NPCTY3"),
		  "{\"nextCursor\":\"1795308078008_key_01M80B6GXRC6162E4XN5NPCTY3\"}");
	CHECK_STR(next_of(buf, sizeof(buf), "", "key_01M80B6GXRC6162E4XN5NPCTY3"),
		  "{\"nextCursor\":null}");
	CHECK_STR(next_of(buf, sizeof(buf), "1795308078008", ""), "{\"nextCursor\":null}");
	CHECK_STR(next_of(buf, sizeof(buf), NULL, NULL), "{\"nextCursor\":null}");
	return check_finish("page");
}
