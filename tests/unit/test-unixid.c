/* test-unixid: bank-proxy-uids and bank-listen-group as settings give them:
 * numbers, names of the system's databases (root exists everywhere), blanks,
 * and each refusal with its message. */
#include "pixrelay/core/unixid.h"

#include "check.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	struct unixid_uids l = {0}, keep;
	char err[160] = "", many[512] = "";
	gid_t gid = 7;

	CHECK_INT(unixid_parse_uids("", &l, err, sizeof(err)), 0);
	CHECK_INT(l.n, 0);
	CHECK_INT(unixid_parse_uids("  ", &l, err, sizeof(err)), 0);
	CHECK_INT(l.n, 0);
	CHECK_INT(unixid_parse_uids("33, root ,4294967294,\t1000", &l, err, sizeof(err)), 0);
	CHECK_INT(l.n, 4);
	CHECK_INT(l.uid[0], 33);
	CHECK_INT(l.uid[1], 0);
	CHECK_INT(l.uid[2], 4294967294u);
	CHECK_INT(l.uid[3], 1000);
	CHECK(unixid_has_uid(&l, 1000));
	CHECK(unixid_has_uid(&l, 0));
	CHECK(!unixid_has_uid(&l, 1001));

	/* refusals leave the list as it was */
	keep = l;
	CHECK_INT(unixid_parse_uids("33,,34", &l, err, sizeof(err)), -1);
	CHECK_STR(err, "an empty entry (two commas, or one at an end)");
	CHECK_INT(unixid_parse_uids("33,", &l, err, sizeof(err)), -1);
	CHECK_STR(err, "an empty entry (two commas, or one at an end)");
	CHECK_INT(unixid_parse_uids("no-such-user-pixrelay", &l, err, sizeof(err)), -1);
	CHECK_STR(err, "'no-such-user-pixrelay': no such user");
	CHECK_INT(unixid_parse_uids("4294967295", &l, err, sizeof(err)), -1);
	CHECK_STR(err, "'4294967295': not a user name or number");
	CHECK_INT(unixid_parse_uids("99999999999999999999", &l, err, sizeof(err)), -1);
	CHECK_STR(err, "'99999999999999999999': not a user name or number");
	CHECK_INT(unixid_parse_uids(
		      "a23456789012345678901234567890123456789012345678901234567890123456789", &l,
		      err, sizeof(err)),
		  -1);
	CHECK_STR(err, "'a2345678901234567890123456789012345678901234567890123456789012345': not "
		       "a user name or number");
	for (int i = 0; i < UNIXID_MAX + 1; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s%d", i ? "," : "", i);
	CHECK_INT(unixid_parse_uids(many, &l, err, sizeof(err)), -1);
	CHECK_STR(err, "more than 32 entries");
	CHECK_INT(l.n, keep.n);
	CHECK_INT(l.uid[3], keep.uid[3]);
	many[strlen(many) - 3] = '\0'; /* 32 entries: fine */
	CHECK_INT(unixid_parse_uids(many, &l, err, sizeof(err)), 0);
	CHECK_INT(l.n, UNIXID_MAX);

	CHECK_INT(unixid_parse_gid("root", &gid, err, sizeof(err)), 0);
	CHECK_INT(gid, 0);
	CHECK_INT(unixid_parse_gid("4242", &gid, err, sizeof(err)), 0);
	CHECK_INT(gid, 4242);
	CHECK_INT(unixid_parse_gid("no-such-group-pixrelay", &gid, err, sizeof(err)), -1);
	CHECK_STR(err, "'no-such-group-pixrelay': no such group");
	CHECK_INT(unixid_parse_gid("", &gid, err, sizeof(err)), -1);
	CHECK_STR(err, "'': not a group name or number");
	CHECK_INT(gid, 4242);
	return check_finish("unixid");
}
