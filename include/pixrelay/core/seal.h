/* seal: secrets sealed for storage with a key that is not stored beside
 * them (AES-256-GCM, no I/O but reading the key file).
 *
 * A bank connection's API credentials (the OAuth2 client secret, the
 * merchant's private key) must be usable by every process of a deployment,
 * so they live in Redis with the connection; but Redis, its AOF and its
 * backups must not hold them in the clear. Each is sealed with the
 * credentials key, 32 random bytes in a file of mode 0600 that every host
 * of the deployment has (docs/bank-api.md): a sealed value is
 * "s1:" + base64(12-byte nonce | ciphertext | 16-byte tag), and the name
 * of what it is (the associated data) is bound to it, so a sealed client
 * secret cannot be passed off as a private key, nor one connection's as
 * another's.
 */
#ifndef PIXRELAY_SEAL_H
#define PIXRELAY_SEAL_H

#include <stddef.h>

#define SEAL_KEY_LEN 32
#define SEAL_PREFIX "s1:"

struct seal_key {
	unsigned char k[SEAL_KEY_LEN];
};

/* Read the credentials key from `path`: a file of exactly 32 bytes, or of
 * 64 hex digits (a newline after them allowed), that only its owner may
 * read or write (mode 0600 or stricter: anything else is refused, as ssh
 * refuses a readable private key). 0, or -1 with the reason in err. */
int seal_key_load(const char *path, struct seal_key *out, char *err, size_t errlen);

/* Make a new credentials key at `path` (64 hex digits, mode 0600), never
 * over an existing file; its directory is made (mode 0700) when it is
 * missing but its parent is not. 0, or -1 with the reason in err. */
int seal_key_create(const char *path, char *err, size_t errlen);

/* Seal `len` bytes for the name `what` (e.g. "bnk_...:client_secret"):
 * a malloc'd NUL-terminated text (caller frees). Aborts when out of memory. */
char *seal(const struct seal_key *key, const char *what, const void *data, size_t len);

/* Open a sealed text: the bytes (malloc'd, NUL-terminated for convenience;
 * *len gets their count; the caller wipes and frees), or NULL when the text
 * is not one this key sealed for `what` (wrong key, another name, altered). */
unsigned char *seal_open(const struct seal_key *key, const char *what, const char *sealed,
			 size_t *len);

/* Forget a key (wipe it). */
void seal_key_wipe(struct seal_key *key);

/* A process's credentials key, which may appear after the process started
 * (the first `pixrelay bank credentials` makes it): looked for when it is
 * needed, at most once a SEAL_LOOK_MS, so a missing file is never stat'ed
 * in a tight loop. */
#define SEAL_LOOK_MS 1000

struct seal_keyfile {
	char path[1024];
	int loaded;
	struct seal_key key;
	unsigned long long looked_ms; /* the file was last looked for then (0: never) */
	char said[512];		      /* the last problem logged (a file that does not load) */
};

/* Start without a key, for the file at `path`. Cannot fail. */
void seal_keyfile_init(struct seal_keyfile *f, const char *path);
/* Hold `key` (copied) as the loaded key (a command that read it itself). */
void seal_keyfile_hold(struct seal_keyfile *f, const struct seal_key *key);
/* Load the file now, at a process's start: 0 when loaded or when there is
 * no file (f then has no key); -1 with the reason in err when the file is
 * there but unusable (others may read it, malformed). */
int seal_keyfile_load(struct seal_keyfile *f, char *err, size_t errlen);
/* The key, when one is needed: loaded already, or loaded now from the
 * file when it was not looked for in the last SEAL_LOOK_MS (the log says
 * it was loaded, or once per problem why it does not load). NULL when
 * there is none; f keeps ownership. */
const struct seal_key *seal_keyfile_get(struct seal_keyfile *f);
/* Forget the key (wipe it). */
void seal_keyfile_wipe(struct seal_keyfile *f);

#endif
