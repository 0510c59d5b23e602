/* Unit tests of provsig: Woovi's published signature vector (the public
 * key, payload and x-webhook-signature of its documentation, read from
 * tests/vendor/openpix/weebhook-signature-validation.mdx, whose directory
 * meson passes as argv[1]), refused when a byte changes, under another key
 * or as garbage; pixrelay's own key pair signing and verifying; Mercado
 * Pago's manifest with vectors from the inputs of the SDK's own tests
 * (HMACs computed independently with Python's hmac); Asaas's token. */
#include "check.h"

#include "pixrelay/core/base64.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/provsig.h"

#include <stdlib.h>
#include <string.h>

static char why[256];

/* The single-quoted text after `marker` in `s` (from `from` on). */
static char *quoted_after(const char *s, const char *marker)
{
	const char *p = strstr(s, marker), *q, *e;

	if (!p || !(q = strchr(p, '\'')) || !(e = strchr(q + 1, '\''))) {
		fprintf(stderr, "%s not found\n", marker);
		exit(2);
	}
	return mem_strndup(q + 1, (size_t)(e - q - 1));
}

struct vector {
	char *pem, *payload, *sig;
};

/* The JavaScript tab of the page: the key (base64 of the PEM), the
 * payload and the signature as its code gives them. */
static void vector_read(const char *dir, struct vector *v)
{
	char *page = check_file(dir, "docs/webhook/seguranca/weebhook-signature-validation.mdx");
	const char *js = strstr(page, "<TabItem value=\"JavaScript\">");
	char *key_b64;
	size_t n = 0;

	CHECK(js != NULL);
	key_b64 = quoted_after(js, "const publicKeyBase64 =");
	v->pem = (char *)base64_decode(key_b64, strlen(key_b64), &n);
	CHECK(v->pem != NULL);
	v->payload = quoted_after(js, "const payload =");
	v->sig = quoted_after(js, "const signature =");
	free(key_b64);
	free(page);
}

static void test_woovi_vector(const char *dir)
{
	struct vector v;
	char *other_priv, *other_pub, *two, *nine, *flipped, sig2[2048];
	size_t plen;

	vector_read(dir, &v);
	plen = strlen(v.payload);
	CHECK(strstr(v.pem, "-----BEGIN PUBLIC KEY-----") == v.pem);
	CHECK(strstr(v.payload, "Pizzaria do Jos\xc3\xa9") != NULL); /* the exact UTF-8 bytes */

	/* the published vector verifies */
	why[0] = '\0';
	CHECK(provsig_woovi_verify(v.pem, v.payload, plen, v.sig, why, sizeof(why)));
	CHECK_STR(why, "");

	/* one byte of the body changed: refused */
	flipped = mem_strdup(v.payload);
	flipped[plen / 2] ^= 0x01;
	CHECK(!provsig_woovi_verify(v.pem, flipped, plen, v.sig, why, sizeof(why)));
	CHECK_STR(why, "x-webhook-signature: made by none of the 1 key");
	/* one byte less (the body is exact bytes, not a JSON value) */
	CHECK(!provsig_woovi_verify(v.pem, v.payload, plen - 1, v.sig, why, sizeof(why)));
	/* one bit of the signature changed */
	snprintf(sig2, sizeof(sig2), "%s", v.sig);
	sig2[10] = sig2[10] == 'A' ? 'B' : 'A';
	CHECK(!provsig_woovi_verify(v.pem, v.payload, plen, sig2, why, sizeof(why)));
	CHECK_STR(why, "x-webhook-signature: made by none of the 1 key");

	/* another key: refused; with Woovi's among the keys (a rotation): taken */
	provsig_woovi_keypair(&other_priv, &other_pub);
	CHECK(!provsig_woovi_verify(other_pub, v.payload, plen, v.sig, why, sizeof(why)));
	CHECK_STR(why, "x-webhook-signature: made by none of the 1 key");
	two = mem_printf("%s%s", other_pub, v.pem);
	CHECK(provsig_woovi_verify(two, v.payload, plen, v.sig, why, sizeof(why)));
	free(two);
	two = mem_printf("%s\n%s", v.pem, other_pub);
	CHECK(provsig_woovi_verify(two, v.payload, plen, v.sig, why, sizeof(why)));
	free(two);

	/* bounded: at most 8 keys */
	nine = mem_printf("%s%s%s%s%s%s%s%s%s", other_pub, other_pub, other_pub, other_pub,
			  other_pub, other_pub, other_pub, other_pub, v.pem);
	CHECK(!provsig_woovi_verify(nine, v.payload, plen, v.sig, why, sizeof(why)));
	CHECK_STR(why, "keys: more than 8");
	free(nine);

	/* garbage signatures */
	CHECK(!provsig_woovi_verify(v.pem, v.payload, plen, NULL, why, sizeof(why)));
	CHECK_STR(why, "no x-webhook-signature");
	CHECK(!provsig_woovi_verify(v.pem, v.payload, plen, "", why, sizeof(why)));
	CHECK_STR(why, "no x-webhook-signature");
	CHECK(!provsig_woovi_verify(v.pem, v.payload, plen, "not base64!", why, sizeof(why)));
	CHECK_STR(why, "x-webhook-signature: not base64");
	CHECK(!provsig_woovi_verify(v.pem, v.payload, plen, "QUJD", why, sizeof(why)));
	CHECK_STR(why, "x-webhook-signature: made by none of the 1 key");
	{
		/* 1025 bytes decoded: refused before any key is read */
		unsigned char big[1025];
		char b64[1500];

		memset(big, 'x', sizeof(big));
		base64_encode(big, sizeof(big), b64);
		CHECK(!provsig_woovi_verify(v.pem, v.payload, plen, b64, why, sizeof(why)));
		CHECK_STR(why, "x-webhook-signature: more than 1024 bytes");
	}

	/* keys that are no keys */
	CHECK(!provsig_woovi_verify(NULL, v.payload, plen, v.sig, why, sizeof(why)));
	CHECK_STR(why, "keys: none configured");
	CHECK(!provsig_woovi_verify("hello", v.payload, plen, v.sig, why, sizeof(why)));
	CHECK_STR(why, "keys: no PEM public key");
	CHECK(!provsig_woovi_verify("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
				    v.payload, plen, v.sig, why, sizeof(why)));
	CHECK_STR(why, "keys: key 1 is not a PEM public key");

	mem_free_wiped(other_priv);
	free(other_pub);
	free(flipped);
	free(v.pem);
	free(v.payload);
	free(v.sig);
}

static void test_woovi_own_pair(void)
{
	char *priv, *pub, *priv2, *pub2, *sig = NULL, *keep;
	const char body[] = "{\"event\":\"OPENPIX:CHARGE_COMPLETED\"}";

	provsig_woovi_keypair(&priv, &pub);
	CHECK(strstr(priv, "-----BEGIN PRIVATE KEY-----") == priv);
	CHECK(strstr(pub, "-----BEGIN PUBLIC KEY-----") == pub);
	CHECK_INT(provsig_woovi_sign(priv, body, strlen(body), &sig), 0);
	CHECK(sig != NULL);
	CHECK_INT(strlen(sig), 344); /* 256 bytes of RSA 2048 */
	CHECK(provsig_woovi_verify(pub, body, strlen(body), sig, why, sizeof(why)));
	CHECK(!provsig_woovi_verify(pub, body, strlen(body) - 1, sig, why, sizeof(why)));

	/* another pair does not verify it */
	provsig_woovi_keypair(&priv2, &pub2);
	CHECK(strcmp(pub, pub2) != 0);
	CHECK(!provsig_woovi_verify(pub2, body, strlen(body), sig, why, sizeof(why)));

	/* not a private key: -1, *sig untouched */
	keep = sig;
	CHECK_INT(provsig_woovi_sign(pub, body, strlen(body), &sig), -1);
	CHECK_INT(provsig_woovi_sign("", body, strlen(body), &sig), -1);
	CHECK_INT(provsig_woovi_sign(NULL, body, strlen(body), &sig), -1);
	CHECK(sig == keep);

	free(sig);
	mem_free_wiped(priv);
	mem_free_wiped(priv2);
	free(pub);
	free(pub2);
}

/* Mercado Pago: the SDK's test inputs (webhook.spec.ts). */
#define MP_SECRET "your_secret_key_here"
#define MP_RID "2066ca19-c6f1-498a-be75-1923005edd06"
#define MP_TS "1742505638683"
/* HMAC-SHA256(secret, manifest), lower-case hex, for the manifests: */
/* id:ord01jq4s4ky8hwq6na5pxb65b3d3;request-id:<rid>;ts:<ts>; */
#define MP_H_LOWER "633f91233312dd391ec75fa0bea539cfc2d6c4918873305b84a96cc1c58db71c"
/* id:ORD01JQ4S4KY8HWQ6NA5PXB65B3D3;request-id:<rid>;ts:<ts>; */
#define MP_H_UPPER "fb15ae6472eb449173c556793205d77787d58f384d183bb5bc3b724c27bd103c"
/* request-id:<rid>;ts:<ts>; */
#define MP_H_NO_ID "8a7b0cc777a8217c3bab41a50c95dc92debbc6f8448f1c967dfe10ac1cb8b894"
/* id:ord01jq4s4ky8hwq6na5pxb65b3d3;ts:<ts>; */
#define MP_H_NO_RID "a20c44820ab71562e89a7c9f64d5636efc8beba587b16c2f9bbbc3504892741a"
/* ts:<ts>; */
#define MP_H_TS_ONLY "3f075add3ddb923bebf0bc0648457b8244cf4420b98d5b445167d379bec0ca54"

static bool mp(const char *sig, const char *rid, const char *id)
{
	return provsig_mp_verify(MP_SECRET, sig, rid, id, NULL, why, sizeof(why));
}

static void test_mp(void)
{
	const char *lower = "ord01jq4s4ky8hwq6na5pxb65b3d3",
		   *upper = "ORD01JQ4S4KY8HWQ6NA5PXB65B3D3";
	long long ts = -7;

	CHECK(provsig_mp_verify(MP_SECRET, "ts=" MP_TS ",v1=" MP_H_LOWER, MP_RID, lower, &ts, why,
				sizeof(why)));
	CHECK_INT(ts, 1742505638683LL);
	/* data.id keeps its case (SDK ac20999): the upper-case id's own HMAC */
	CHECK(mp("ts=" MP_TS ",v1=" MP_H_UPPER, MP_RID, upper));
	CHECK(!mp("ts=" MP_TS ",v1=" MP_H_LOWER, MP_RID, upper));
	CHECK_STR(why, "x-signature: v1 is not the manifest's HMAC");
	/* a pair whose value is missing is left out of the manifest */
	CHECK(mp("ts=" MP_TS ",v1=" MP_H_NO_ID, MP_RID, NULL));
	CHECK(mp("ts=" MP_TS ",v1=" MP_H_NO_ID, MP_RID, "   "));
	CHECK(mp("ts=" MP_TS ",v1=" MP_H_NO_RID, NULL, lower));
	CHECK(mp("ts=" MP_TS ",v1=" MP_H_TS_ONLY, "", " "));
	CHECK(!mp("ts=" MP_TS ",v1=" MP_H_NO_ID, MP_RID, lower));
	/* parts trimmed, keys in any case, in any order, unknown ones ignored */
	CHECK(mp(" v1 = " MP_H_LOWER " , TS=" MP_TS ", foo=bar,junk ", " " MP_RID " ", lower));
	CHECK(mp("ts=" MP_TS ",v2=abc,v1=" MP_H_LOWER, MP_RID, lower));
	/* a later key wins */
	CHECK(mp("ts=1,v1=00,ts=" MP_TS ",v1=" MP_H_LOWER, MP_RID, lower));
	/* the hash as the SDK compares it: lower-case hex exactly */
	{
		char up[65];

		snprintf(up, sizeof(up), "%s", MP_H_LOWER);
		for (int i = 0; up[i]; i++)
			if (up[i] >= 'a' && up[i] <= 'f')
				up[i] = (char)(up[i] - 'a' + 'A');
		char h[128];
		snprintf(h, sizeof(h), "ts=%s,v1=%s", MP_TS, up);
		CHECK(!mp(h, MP_RID, lower));
	}
	CHECK(!provsig_mp_verify("another secret", "ts=" MP_TS ",v1=" MP_H_LOWER, MP_RID, lower,
				 NULL, why, sizeof(why)));
	CHECK_STR(why, "x-signature: v1 is not the manifest's HMAC");

	/* what is missing or malformed, with the SDK's reasons */
	ts = -7;
	CHECK(!provsig_mp_verify(MP_SECRET, NULL, MP_RID, lower, &ts, why, sizeof(why)));
	CHECK_STR(why, "no x-signature");
	CHECK_INT(ts, -7);
	CHECK(!mp("   ", MP_RID, lower));
	CHECK_STR(why, "no x-signature");
	CHECK(!mp("this-is-garbage", MP_RID, lower));
	CHECK_STR(why, "x-signature: not ts=...,v1=...");
	CHECK(!mp("v1=" MP_H_LOWER, MP_RID, lower));
	CHECK_STR(why, "x-signature: no ts");
	CHECK(!mp("ts=" MP_TS, MP_RID, lower));
	CHECK_STR(why, "x-signature: no v1 hash");
	CHECK(!mp("ts=" MP_TS ",v2=somehash", MP_RID, lower));
	CHECK_STR(why, "x-signature: no v1 hash");
	CHECK(!mp("ts=12a,v1=" MP_H_LOWER, MP_RID, lower));
	CHECK_STR(why, "x-signature: ts must be 1 to 18 digits");
	CHECK(!mp("ts=-1,v1=" MP_H_LOWER, MP_RID, lower));
	CHECK(!mp("ts=1234567890123456789,v1=" MP_H_LOWER, MP_RID, lower));
	CHECK_STR(why, "x-signature: ts must be 1 to 18 digits");
	/* a v1 of another length, or of multibyte text (SDK issue #459) */
	CHECK(!mp("ts=" MP_TS ",v1=633f", MP_RID, lower));
	CHECK(!mp("ts=" MP_TS ",v1=\xc3\xa9\xc3\xa9", MP_RID, lower));
	CHECK(!provsig_mp_verify("", "ts=" MP_TS ",v1=" MP_H_LOWER, MP_RID, lower, NULL, why,
				 sizeof(why)));
	CHECK_STR(why, "no secret key configured");
	CHECK(!provsig_mp_verify(NULL, "ts=" MP_TS ",v1=" MP_H_LOWER, MP_RID, lower, NULL, why,
				 sizeof(why)));
}

static void test_asaas(void)
{
	char sha[65];
	const char *token = "whatever-the-merchant-chose-0123456789";

	ids_sha256_hex(sha, token, strlen(token));
	why[0] = '\0';
	CHECK(provsig_asaas_verify(sha, token, why, sizeof(why)));
	CHECK_STR(why, "");
	CHECK(
	    !provsig_asaas_verify(sha, "whatever-the-merchant-chose-0123456780", why, sizeof(why)));
	CHECK_STR(why, "wrong asaas-access-token");
	CHECK(!provsig_asaas_verify(sha, "", why, sizeof(why)));
	CHECK_STR(why, "no asaas-access-token");
	CHECK(!provsig_asaas_verify(sha, NULL, why, sizeof(why)));
	CHECK_STR(why, "no asaas-access-token");
	/* the digest itself is not the token */
	CHECK(!provsig_asaas_verify(sha, sha, why, sizeof(why)));
	CHECK(!provsig_asaas_verify("", token, why, sizeof(why)));
	CHECK_STR(why, "no access token configured");
	CHECK(!provsig_asaas_verify(NULL, token, why, sizeof(why)));
	CHECK_STR(why, "no access token configured");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test-provsig VENDOR_OPENPIX_DIR\n");
		return 2;
	}
	test_woovi_vector(argv[1]);
	test_woovi_own_pair();
	test_mp();
	test_asaas();
	return check_finish("provsig");
}
