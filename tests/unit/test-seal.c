/* Unit tests of seal: a secret sealed for a name opens with the same key
 * and name only; altered, truncated or foreign texts do not open; the key
 * file is refused when others may read it, made only where none exists. */
#include "check.h"

#include "pixrelay/core/seal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/test-seal-XXXXXX";

static const char *path(const char *name)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void test_roundtrip(void)
{
	struct seal_key k, other;
	const char secret[] = "client-secret \x01\x02 with bytes";
	char *s, *t;
	unsigned char *back;
	size_t n = 0;

	memset(k.k, 7, sizeof(k.k));
	memset(other.k, 8, sizeof(other.k));
	s = seal(&k, "bnk_A:client_secret", secret, sizeof(secret));
	CHECK(strncmp(s, "s1:", 3) == 0);
	CHECK(strstr(s, "client") == NULL); /* not in the clear */
	back = seal_open(&k, "bnk_A:client_secret", s, &n);
	CHECK(back != NULL && n == sizeof(secret) && memcmp(back, secret, n) == 0);
	free(back);
	/* the same value twice seals differently (a fresh nonce each time) */
	t = seal(&k, "bnk_A:client_secret", secret, sizeof(secret));
	CHECK(strcmp(s, t) != 0);
	free(t);
	/* another key, another name, another connection: nothing opens */
	CHECK(seal_open(&other, "bnk_A:client_secret", s, &n) == NULL);
	CHECK(seal_open(&k, "bnk_A:key", s, &n) == NULL);
	CHECK(seal_open(&k, "bnk_B:client_secret", s, &n) == NULL);
	/* one character altered anywhere, or cut short */
	for (size_t i = 3; i < strlen(s); i += 5) {
		char *u = strdup(s);
		u[i] = u[i] == 'A' ? 'B' : 'A';
		CHECK(seal_open(&k, "bnk_A:client_secret", u, &n) == NULL);
		free(u);
	}
	s[20] = '\0';
	CHECK(seal_open(&k, "bnk_A:client_secret", s, &n) == NULL);
	CHECK(seal_open(&k, "bnk_A:client_secret", "plain text", &n) == NULL);
	CHECK(seal_open(&k, "bnk_A:client_secret", "s1:", &n) == NULL);
	free(s);
	/* an empty secret seals and opens too */
	s = seal(&k, "x", "", 0);
	back = seal_open(&k, "x", s, &n);
	CHECK(back != NULL && n == 0);
	free(back);
	free(s);
}

static void test_key_files(void)
{
	struct seal_key a, b;
	char err[256];
	FILE *f;

	CHECK_INT(seal_key_create(path("k"), err, sizeof(err)), 0);
	CHECK_INT(seal_key_create(path("k"), err, sizeof(err)), -1); /* never over one */
	CHECK(strstr(err, "File exists") != NULL);
	CHECK_INT(seal_key_load(path("k"), &a, err, sizeof(err)), 0);
	{
		struct stat st;
		CHECK(stat(path("k"), &st) == 0 && (st.st_mode & 0777) == 0600);
	}
	/* readable by others: refused, as ssh refuses such a private key */
	chmod(path("k"), 0640);
	CHECK_INT(seal_key_load(path("k"), &b, err, sizeof(err)), -1);
	CHECK(strstr(err, "mode 640 lets others read it; chmod 600 it") != NULL);
	chmod(path("k"), 0600);
	/* 32 raw bytes work as well as 64 hex digits */
	f = fopen(path("raw"), "wb");
	fwrite(a.k, 1, sizeof(a.k), f);
	fclose(f);
	chmod(path("raw"), 0400);
	CHECK_INT(seal_key_load(path("raw"), &b, err, sizeof(err)), 0);
	CHECK(memcmp(a.k, b.k, sizeof(a.k)) == 0);
	f = fopen(path("short"), "w");
	fputs("abcdef\n", f);
	fclose(f);
	chmod(path("short"), 0600);
	CHECK_INT(seal_key_load(path("short"), &b, err, sizeof(err)), -1);
	CHECK(strstr(err, "not 32 bytes nor 64 hex digits") != NULL);
	CHECK_INT(seal_key_load(path("none"), &b, err, sizeof(err)), -1);
	CHECK(strstr(err, "No such file") != NULL);
	seal_key_wipe(&a);
	unlink(path("k"));
	unlink(path("raw"));
	unlink(path("short"));
}

/* A process's key file: looked for when needed, at most once a
 * SEAL_LOOK_MS, taken once it is there; one that does not load is refused
 * at the start and left unloaded after it. */
static void test_keyfile(void)
{
	struct seal_keyfile f;
	struct seal_key a;
	char err[256];

	seal_keyfile_init(&f, path("later"));
	CHECK_INT(seal_keyfile_load(&f, err, sizeof(err)), 0); /* no file: fine, no key */
	CHECK(!f.loaded);
	CHECK(seal_keyfile_get(&f) == NULL);
	CHECK(f.looked_ms != 0);
	CHECK_INT(seal_key_create(path("later"), err, sizeof(err)), 0);
	/* looked for a moment ago: not again yet */
	CHECK(seal_keyfile_get(&f) == NULL);
	f.looked_ms -= SEAL_LOOK_MS;
	CHECK(seal_keyfile_get(&f) == &f.key);
	CHECK_INT(seal_key_load(path("later"), &a, err, sizeof(err)), 0);
	CHECK(memcmp(a.k, f.key.k, sizeof(a.k)) == 0);
	CHECK(seal_keyfile_get(&f) == &f.key);
	seal_keyfile_wipe(&f);
	CHECK(!f.loaded);
	/* readable by others: refused at the start, never taken after it */
	chmod(path("later"), 0644);
	seal_keyfile_init(&f, path("later"));
	CHECK_INT(seal_keyfile_load(&f, err, sizeof(err)), -1);
	CHECK(strstr(err, "mode 644 lets others read it") != NULL);
	CHECK(seal_keyfile_get(&f) == NULL);
	CHECK(strstr(f.said, "mode 644 lets others read it") != NULL);
	/* held: a command's own key */
	seal_keyfile_init(&f, "");
	seal_keyfile_hold(&f, &a);
	CHECK(seal_keyfile_get(&f) == &f.key && memcmp(a.k, f.key.k, sizeof(a.k)) == 0);
	seal_keyfile_wipe(&f);
	seal_key_wipe(&a);
	unlink(path("later"));
}

int main(void)
{
	if (!mkdtemp(dir))
		return 2;
	test_roundtrip();
	test_key_files();
	test_keyfile();
	rmdir(dir);
	return check_finish("seal");
}
