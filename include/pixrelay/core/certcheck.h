/* certcheck: is this client certificate one that these authorities issued?
 *
 * A bank calls a merchant's webhook with a client certificate (mutual
 * TLS). The reverse proxy in front of pixrelay terminates TLS, asks for the
 * certificate without judging it (nginx: `ssl_verify_client
 * optional_no_ca`) and forwards it URL-escaped (`$ssl_client_escaped_cert`)
 * in a header; pixrelay then decides per bank connection with the
 * authorities that connection trusts, so a proxy whose CA bundle is broader
 * never widens who gets in. The chain is checked with OpenSSL's verifier:
 * signatures, validity dates, and the TLS-client purpose (a certificate
 * whose extended key usage leaves out clientAuth is refused). A certificate
 * of the trust list itself is a trust anchor too (X509_V_FLAG_PARTIAL_CHAIN),
 * so a connection may pin the intermediate that signs its bank's client
 * certificates, or the certificate itself. No I/O.
 */
#ifndef PIXRELAY_CERTCHECK_H
#define PIXRELAY_CERTCHECK_H

#include <stddef.h>

#define CERTCHECK_PEM_MAX 65536	    /* a trust list in PEM */
#define CERTCHECK_CERTS_MAX 16	    /* certificates in a trust list */
#define CERTCHECK_ESCAPED_MAX 16384 /* one escaped client certificate */

struct certcheck;

/* Read a trust list: PEM text of 1 to CERTCHECK_CERTS_MAX certificates
 * (anything else in it, such as a private key, refuses it). NULL with a
 * message in err ("no certificate in the PEM", ...). The caller frees. */
struct certcheck *certcheck_new(const char *pem, size_t len, char *err, size_t errlen);
void certcheck_free(struct certcheck *c);

/* How many certificates the list holds, and the SHA-256 fingerprint of its
 * first one as 64 hex digits (shown by `pixrelay bank show`). */
size_t certcheck_count(const struct certcheck *c);
void certcheck_fingerprint(const struct certcheck *c, char out[65]);

/* Verify a client certificate as nginx's $ssl_client_escaped_cert gives it
 * (PEM, percent-escaped) at `now_s` (Unix seconds). 0 when it chains to the
 * list and is valid now, -1 with the reason in err ("certificate has
 * expired", "unable to get local issuer certificate", "not a PEM
 * certificate", ...). Reads `escaped` up to its NUL; at most
 * CERTCHECK_ESCAPED_MAX bytes are considered. */
int certcheck_verify_escaped(const struct certcheck *c, const char *escaped, long long now_s,
			     char *err, size_t errlen);

/* Undo percent-escaping (%XX; '+' stays '+'): the bytes written to out,
 * NUL-terminated, or -1 when a % is not followed by two hex digits or out
 * (of `size` bytes) is too small. */
long certcheck_unescape(const char *in, char *out, size_t size);

#endif
