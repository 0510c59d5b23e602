#include "pixrelay/redis/scripts.h"

#include "check.h"

/* Every script id has its file compiled in (scripts_body aborts otherwise),
 * and its SHA1 is what Redis will compute. */
int main(void)
{
	for (int i = 0; i < SCRIPT_COUNT; i++) {
		const char *body = scripts_body((enum script_id)i),
			   *sha = scripts_sha((enum script_id)i);
		CHECK(scripts_name((enum script_id)i) != NULL);
		CHECK(body && strlen(body) > 20);
		CHECK(body && strstr(body, "return") != NULL);
		CHECK_INT(strlen(sha), 40);
		CHECK(strspn(sha, "0123456789abcdef") == 40);
	}
	/* SHA1 of a known body would be brittle; check distinctness instead */
	for (int i = 0; i < SCRIPT_COUNT; i++)
		for (int j = 0; j < i; j++)
			CHECK(strcmp(scripts_sha((enum script_id)i),
				     scripts_sha((enum script_id)j)) != 0);
	return check_finish("scripts");
}
