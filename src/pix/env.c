/* env: the names of the two environments, sandbox and production. */
#include "pixrelay/pix/env.h"

#include <string.h>

const char *env_name(enum env env)
{
	return env == ENV_PRODUCTION ? "production" : "sandbox";
}

int env_parse(const char *s, enum env *out)
{
	if (strcmp(s, "sandbox") == 0 || strcmp(s, "test") == 0) {
		*out = ENV_SANDBOX;
		return 0;
	}
	if (strcmp(s, "production") == 0 || strcmp(s, "live") == 0) {
		*out = ENV_PRODUCTION;
		return 0;
	}
	return -1;
}
