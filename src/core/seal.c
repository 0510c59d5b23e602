/* seal: AES-256-GCM sealing of stored secrets with the credentials key
 * file (the bank connections' API credentials, docs/bank-api.md): reading and
 * making the key, sealing a value for a name, opening it again, and a
 * process's key file looked for when it is needed. Nothing here knows
 * Redis or banks; store/banks.c decides what is sealed. */
#include "pixrelay/core/seal.h"

#include "pixrelay/core/base64.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"

#include <openssl/evp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NONCE_LEN 12
#define TAG_LEN 16

int seal_key_load(const char *path, struct seal_key *out, char *err, size_t errlen)
{
	unsigned char buf[SEAL_KEY_LEN * 2 + 2];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), rc = -1;

	if (fd < 0) {
		snprintf(err, errlen, "credentials key %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "credentials key %s: not a regular file", path);
		goto done;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen,
			 "credentials key %s: mode %03o lets others read it; chmod 600 it", path,
			 (unsigned)(st.st_mode & 0777));
		goto done;
	}
	n = read(fd, buf, sizeof(buf));
	if (n == SEAL_KEY_LEN) {
		memcpy(out->k, buf, SEAL_KEY_LEN);
		rc = 0;
	} else if (n == SEAL_KEY_LEN * 2 || (n == SEAL_KEY_LEN * 2 + 1 && buf[n - 1] == '\n')) {
		for (int i = 0; i < SEAL_KEY_LEN; i++) {
			int hi = ids_hexval((char)buf[2 * i]),
			    lo = ids_hexval((char)buf[2 * i + 1]);
			if (hi < 0 || lo < 0) {
				snprintf(err, errlen,
					 "credentials key %s: not 32 bytes nor 64 hex digits",
					 path);
				goto done;
			}
			out->k[i] = (unsigned char)(hi * 16 + lo);
		}
		rc = 0;
	} else {
		snprintf(err, errlen, "credentials key %s: not 32 bytes nor 64 hex digits", path);
	}
done:
	mem_wipe(buf, sizeof(buf));
	close(fd);
	return rc;
}

int seal_key_create(const char *path, char *err, size_t errlen)
{
	unsigned char k[SEAL_KEY_LEN];
	char hex[SEAL_KEY_LEN * 2 + 2];
	char dir[1024];
	const char *slash = strrchr(path, '/');
	int fd, rc = -1;

	/* its directory (the data directory, by default) is made private
	 * when missing: a deployment over an outside Redis never made it */
	if (slash && slash != path && (size_t)(slash - path) < sizeof(dir)) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "credentials key %s: %s", path, strerror(errno));
			return -1;
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "credentials key %s: %s", path, strerror(errno));
		return -1;
	}
	ids_random(k, sizeof(k));
	ids_hex(hex, k, sizeof(k));
	strcat(hex, "\n");
	if (write(fd, hex, strlen(hex)) != (ssize_t)strlen(hex) || fsync(fd) < 0) {
		snprintf(err, errlen, "credentials key %s: %s", path, strerror(errno));
		unlink(path);
	} else {
		rc = 0;
	}
	close(fd);
	mem_wipe(k, sizeof(k));
	mem_wipe(hex, sizeof(hex));
	return rc;
}

void seal_key_wipe(struct seal_key *key)
{
	mem_wipe(key->k, sizeof(key->k));
}

/* Run AES-256-GCM over `in` into `out`: encrypt (tag written) or decrypt
 * (tag checked). 0, or -1 when the tag does not match. */
static int gcm(const struct seal_key *key, int encrypt, const unsigned char nonce[NONCE_LEN],
	       const char *what, const unsigned char *in, size_t len, unsigned char *out,
	       unsigned char tag[TAG_LEN])
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0, rc = -1;

	if (!ctx || !EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL, encrypt) ||
	    !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) ||
	    !EVP_CipherInit_ex(ctx, NULL, NULL, key->k, nonce, encrypt) ||
	    !EVP_CipherUpdate(ctx, NULL, &n, (const unsigned char *)what, (int)strlen(what)))
		mem_oom(__FILE__, __LINE__);
	if (len && !EVP_CipherUpdate(ctx, out, &n, in, (int)len))
		mem_oom(__FILE__, __LINE__);
	if (!encrypt && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, tag))
		mem_oom(__FILE__, __LINE__);
	if (EVP_CipherFinal_ex(ctx, out + len, &n) == 1) {
		if (encrypt && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag))
			mem_oom(__FILE__, __LINE__);
		rc = 0;
	}
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}

char *seal(const struct seal_key *key, const char *what, const void *data, size_t len)
{
	size_t blen = NONCE_LEN + len + TAG_LEN;
	unsigned char *box = mem_alloc(blen + 16);
	char *out = mem_alloc(strlen(SEAL_PREFIX) + base64_encoded_len(blen) + 1);

	ids_random(box, NONCE_LEN);
	if (gcm(key, 1, box, what, data, len, box + NONCE_LEN, box + NONCE_LEN + len) < 0)
		mem_oom(__FILE__, __LINE__); /* encryption cannot fail but for memory */
	strcpy(out, SEAL_PREFIX);
	base64_encode(box, blen, out + strlen(SEAL_PREFIX));
	mem_wipe(box, blen);
	free(box);
	return out;
}

unsigned char *seal_open(const struct seal_key *key, const char *what, const char *sealed,
			 size_t *len)
{
	size_t plen = strlen(SEAL_PREFIX), blen = 0, n;
	unsigned char *box, *out;

	if (strncmp(sealed, SEAL_PREFIX, plen) != 0)
		return NULL;
	box = base64_decode(sealed + plen, strlen(sealed + plen), &blen);
	if (!box)
		return NULL;
	if (blen < NONCE_LEN + TAG_LEN) {
		free(box);
		return NULL;
	}
	n = blen - NONCE_LEN - TAG_LEN;
	out = mem_alloc(n + 16);
	if (gcm(key, 0, box, what, box + NONCE_LEN, n, out, box + NONCE_LEN + n) < 0) {
		mem_wipe(out, n + 16);
		free(out);
		free(box);
		return NULL;
	}
	out[n] = '\0';
	free(box);
	*len = n;
	return out;
}

/* ---- a process's key file ---- */

void seal_keyfile_init(struct seal_keyfile *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
}

void seal_keyfile_hold(struct seal_keyfile *f, const struct seal_key *key)
{
	f->key = *key;
	f->loaded = 1;
}

int seal_keyfile_load(struct seal_keyfile *f, char *err, size_t errlen)
{
	if (f->loaded || access(f->path, F_OK) < 0)
		return 0;
	if (seal_key_load(f->path, &f->key, err, errlen) < 0)
		return -1;
	f->loaded = 1;
	return 0;
}

const struct seal_key *seal_keyfile_get(struct seal_keyfile *f)
{
	unsigned long long now;
	char err[512];

	if (f->loaded)
		return &f->key;
	now = ids_now_ms();
	if (f->looked_ms && now - f->looked_ms < SEAL_LOOK_MS)
		return NULL;
	f->looked_ms = now;
	if (access(f->path, F_OK) < 0)
		return NULL;
	if (seal_keyfile_load(f, err, sizeof(err)) < 0) {
		if (strcmp(err, f->said) != 0)
			log_error("%s", err);
		snprintf(f->said, sizeof(f->said), "%s", err);
		return NULL;
	}
	log_info("credentials key %s loaded: bank connections' API calls are on", f->path);
	return &f->key;
}

void seal_keyfile_wipe(struct seal_keyfile *f)
{
	seal_key_wipe(&f->key);
	f->loaded = 0;
}
