/* rargs: the arguments of one command or script call, built in order by
 * appending (a string, a byte slice, a number), for rds_script and
 * rds_cmd_argv: a call site says what it sends, one argument a line,
 * instead of filling argv[i] and lens[i] by index.
 *
 *     struct rargs a;
 *     rargs_init(&a);
 *     rargs_str(&a, key);
 *     rargs_ll(&a, now_ms);
 *     rds_script(r, cb, ud, SCRIPT_X, 1, a.argc, a.argv, a.lens);
 *     rargs_deinit(&a);
 *
 * Strings and slices are borrowed: they must stay alive until the call
 * that sends them returns (rds_script and rds_cmd_argv copy their
 * arguments before they return). Numbers are written as decimal text into
 * buffers the rargs owns, which never move while it grows and are freed
 * once, by rargs_deinit. Out of memory aborts.
 */
#ifndef PIXRELAY_RARGS_H
#define PIXRELAY_RARGS_H

#include <stddef.h>

struct rargs_text;

struct rargs {
	int argc;
	const char **argv; /* argc arguments, in the order appended */
	size_t *lens;	   /* their lengths */
	int cap;
	struct rargs_text *texts; /* owned: the numbers' text */
};

/* Start empty (no allocation yet). */
void rargs_init(struct rargs *a);
/* Free what a owns (its arrays and the numbers' text); a is empty again. */
void rargs_deinit(struct rargs *a);

/* Append a NUL-terminated string (borrowed). */
void rargs_str(struct rargs *a, const char *s);
/* Append n bytes at p (borrowed; may hold NUL bytes). */
void rargs_bytes(struct rargs *a, const char *p, size_t n);
/* Append v as decimal text ("-12", "0", "1700000000000"). */
void rargs_ll(struct rargs *a, long long v);

#endif
