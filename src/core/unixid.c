/* unixid: uids and gids from settings, numbers or names (getpwnam_r,
 * getgrnam_r). A number is taken without a lookup, so a proxy that runs as
 * a uid with no name (a container's) can be listed too. */
#include "pixrelay/core/unixid.h"

#include "pixrelay/core/mem.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 64	       /* a user or group name, at most */
#define LOOKUP_BUF_MAX 1048576 /* the databases' answer for one name, at most */

/* A whole decimal number below (id_t)-1, the "no id" value. */
static int parse_number(const char *s, unsigned long *out)
{
	char *end = NULL;
	unsigned long v;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 10)
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v >= 0xffffffffUL)
		return -1;
	*out = v;
	return 0;
}

/* Look `name` up as a user (group 0) or a group (group 1). Returns 0 with
 * the id, 1 when there is no such name, -1 when the lookup failed (errno). */
static int lookup(const char *name, int group, unsigned long *id)
{
	size_t cap = 4096;
	char *buf = NULL;
	int rc = -1, e;

	for (;;) {
		buf = mem_realloc(buf, cap);
		if (group) {
			struct group gr, *res = NULL;
			e = getgrnam_r(name, &gr, buf, cap, &res);
			if (e == 0 && res)
				*id = (unsigned long)res->gr_gid;
			if (e == 0)
				rc = res ? 0 : 1;
		} else {
			struct passwd pw, *res = NULL;
			e = getpwnam_r(name, &pw, buf, cap, &res);
			if (e == 0 && res)
				*id = (unsigned long)res->pw_uid;
			if (e == 0)
				rc = res ? 0 : 1;
		}
		if (e != ERANGE || cap >= LOOKUP_BUF_MAX)
			break;
		cap *= 2;
	}
	free(buf);
	if (rc < 0)
		errno = e;
	return rc;
}

/* One entry, a number or a name (of a user, or of a group): its id, or -1
 * with why in err. */
static int parse_id(const char *s, int group, unsigned long *id, char *err, size_t errlen)
{
	int rc;

	if (parse_number(s, id) == 0)
		return 0;
	if (!*s || strlen(s) > NAME_MAX_LEN || strspn(s, "0123456789") == strlen(s)) {
		snprintf(err, errlen, "'%.*s': not a %s name or number", NAME_MAX_LEN + 1, s,
			 group ? "group" : "user");
		return -1;
	}
	rc = lookup(s, group, id);
	if (rc == 0)
		return 0;
	if (rc == 1)
		snprintf(err, errlen, "'%s': no such %s", s, group ? "group" : "user");
	else
		snprintf(err, errlen, "'%s': cannot look the %s up: %s", s,
			 group ? "group" : "user", strerror(errno));
	return -1;
}

int unixid_parse_uids(const char *s, struct unixid_uids *out, char *err, size_t errlen)
{
	struct unixid_uids l = {0};
	const char *p = s;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		goto done;
	for (;;) {
		const char *end = strchr(p, ','), *a = p, *b;
		char item[NAME_MAX_LEN + 2];
		unsigned long id;
		size_t n;

		b = end ? end : p + strlen(p);
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		n = (size_t)(b - a);
		if (n == 0) {
			snprintf(err, errlen, "an empty entry (two commas, or one at an end)");
			return -1;
		}
		if (n > NAME_MAX_LEN)
			n = NAME_MAX_LEN + 1; /* too long: refused as such below */
		memcpy(item, a, n);
		item[n] = '\0';
		if (parse_id(item, 0, &id, err, errlen) < 0)
			return -1;
		if (l.n == UNIXID_MAX) {
			snprintf(err, errlen, "more than %d entries", UNIXID_MAX);
			return -1;
		}
		l.uid[l.n++] = (uid_t)id;
		if (!end)
			break;
		p = end + 1;
	}
done:
	*out = l;
	return 0;
}

bool unixid_has_uid(const struct unixid_uids *l, uid_t uid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->uid[i] == uid)
			return true;
	return false;
}

int unixid_parse_gid(const char *s, gid_t *gid, char *err, size_t errlen)
{
	unsigned long id;

	if (parse_id(s, 1, &id, err, errlen) < 0)
		return -1;
	*gid = (gid_t)id;
	return 0;
}
