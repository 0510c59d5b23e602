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
 * certificates, or the certificate itself.
 *
 * A CA often issues client certificates to many (public CAs, ICP-Brasil),
 * so a connection may also pin what the leaf must be beyond its chain: its
 * subject, an RFC 4514 name compared with OpenSSL's canonical comparison
 * (X509_NAME_cmp: case, spaces and string types folded), and/or the
 * SHA-256 of its DER SubjectPublicKeyInfo (RFC 7469, curl's
 * CURLOPT_PINNEDPUBLICKEY), several so that a bank can rotate its key, any
 * one matching, compared in constant time. No I/O.
 */
#ifndef PIXRELAY_CERTCHECK_H
#define PIXRELAY_CERTCHECK_H

#include <stddef.h>

#define CERTCHECK_PEM_MAX 65536	    /* a trust list in PEM */
#define CERTCHECK_CERTS_MAX 16	    /* certificates in a trust list */
#define CERTCHECK_ESCAPED_MAX 16384 /* one escaped client certificate */
#define CERTCHECK_DN_MAX 1024	    /* characters of a pinned subject, read or written */
#define CERTCHECK_DN_ATTRS 32	    /* attributes of a pinned subject */
#define CERTCHECK_PINS_MAX 8	    /* key pins of one connection */
#define CERTCHECK_PIN_LEN 51	    /* "sha256/" and 44 base64 characters */
/* a list of pins as kept: separated by one space, NUL-terminated */
#define CERTCHECK_PINS_TEXT (CERTCHECK_PINS_MAX * (CERTCHECK_PIN_LEN + 1))

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
 * list, is valid now and matches the pins (certcheck_pin), -1 with the
 * reason in err ("certificate has expired", "unable to get local issuer
 * certificate", "not a PEM certificate", "the certificate's subject is not
 * the connection's pinned subject (it is CN=...)", "the certificate's key
 * matches none of the connection's pins", ...). Reads `escaped` up to its NUL; at most
 * CERTCHECK_ESCAPED_MAX bytes are considered. */
int certcheck_verify_escaped(const struct certcheck *c, const char *escaped, long long now_s,
			     char *err, size_t errlen);

/* Read `dn` as an RFC 4514 distinguished name, the most specific RDN
 * first ("CN=webhook.bank.example,O=Banco Exemplo S.A.,C=BR"): escapes
 * (\, \+ \" \\ \< \> \; \= \# \<space>, and \XX bytes), #hex values (the DER of a
 * string), multi-valued RDNs joined by '+', short names in any case (CN, O,
 * OU, C, L, ST, DC, UID, ...), OpenSSL's other names and dotted OIDs;
 * spaces around ',', '+' and '=' are ignored. Write it into out (`size`
 * bytes, at least CERTCHECK_DN_MAX + 1) as pixrelay keeps and shows it:
 * the same name written back with short names, ',' between RDNs, text
 * values in UTF-8 (as `openssl x509 -noout -subject -nameopt RFC2253`
 * writes, multi-byte characters unescaped). 0, or -1 with why in err
 * ("unknown attribute type 'XX' (at character 1)", ...), out untouched. */
int certcheck_subject_normal(const char *dn, char *out, size_t size, char *err, size_t errlen);

/* Add key pin `pin` ("sha256/" and the base64 of the SHA-256 of a DER
 * SubjectPublicKeyInfo; curl's "sha256//" form too) to `list` (pins as
 * kept, "" for none), written as kept. 0, or -1 with why in err (not such
 * a pin, given twice, more than CERTCHECK_PINS_MAX), list untouched. */
int certcheck_pins_add(char list[CERTCHECK_PINS_TEXT], const char *pin, char *err, size_t errlen);

/* Pin the leaf beyond its chain: its subject must be `subject` (an RFC
 * 4514 name; NULL or "": any) and the SHA-256 of its public key one of
 * `pins` (a list as certcheck_pins_add makes it; NULL or "": any). 0, or
 * -1 with why in err when either does not read (c unchanged then). */
int certcheck_pin(struct certcheck *c, const char *subject, const char *pins, char *err,
		  size_t errlen);

/* The subject of certificate `x` (an OpenSSL X509) as RFC 4514 text, the
 * most specific RDN first, as --client-cert-subject takes it, into out
 * (`size` bytes): 0, or -1 when it does not fit or a value cannot be
 * written (out is then ""). */
struct x509_st;
int certcheck_subject_text(const struct x509_st *x, char *out, size_t size);

/* Undo percent-escaping (%XX; '+' stays '+'): the bytes written to out,
 * NUL-terminated, or -1 when a % is not followed by two hex digits or out
 * (of `size` bytes) is too small. */
long certcheck_unescape(const char *in, char *out, size_t size);

#endif
