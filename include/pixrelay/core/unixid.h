/* unixid: user and group ids named by settings (bank-proxy-uids,
 * bank-listen-group): numbers, or names looked up once in the system's
 * user and group databases when the setting is read. */
#ifndef PIXRELAY_UNIXID_H
#define PIXRELAY_UNIXID_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define UNIXID_MAX 32 /* entries of one list */

/* A list of user ids. */
struct unixid_uids {
	size_t n;
	uid_t uid[UNIXID_MAX];
};

/* Parse a comma-separated list of uids or user names ("33, www-data";
 * blanks around entries are ignored; "" is the empty list). A number is
 * taken as it is (a uid needs no entry in the user database); a name must
 * be a user. Returns 0, or -1 with the offending entry and why in err
 * ("'x': no such user"); *out is written only on success. */
int unixid_parse_uids(const char *s, struct unixid_uids *out, char *err, size_t errlen);

/* True when `uid` is in the list. */
bool unixid_has_uid(const struct unixid_uids *l, uid_t uid);

/* The group named `s`: a number, or a group name. Returns 0, or -1 with why
 * in err; *gid is written only on success. */
int unixid_parse_gid(const char *s, gid_t *gid, char *err, size_t errlen);

#endif
