/* env: the two environments a key decides (spec section 5), sandbox and
 * production, which share nothing (no I/O).
 */
#ifndef PIXRELAY_ENV_H
#define PIXRELAY_ENV_H

enum env { ENV_SANDBOX = 0, ENV_PRODUCTION = 1 };

/* "sandbox" / "production" */
const char *env_name(enum env env);
/* Parse "sandbox" or "production" (also "test"/"live"); 0 or -1, *out
 * written only on success. */
int env_parse(const char *s, enum env *out);

#endif
