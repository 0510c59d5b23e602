/* brcode: the Pix "copy and paste" code (BR Code, an EMV merchant-presented
 * QR payload): building one from a charge, and strictly reading one back.
 *
 * A BR Code is a run of TLV fields, each `ID(2 digits) LEN(2 digits) VALUE`,
 * that ends in field 63, a CRC-16/CCITT-FALSE over everything before its
 * value (including the literal "6304"), printed as 4 uppercase hex digits.
 * This module emits printable ASCII only, so characters and bytes agree.
 *
 * Choices made here:
 * - txid (62.05) is 1..25 ASCII letters or digits, or "***" when there is
 *   none: 25 is what published decoders accept, although the BCB's API allows
 *   26..35 for immediate charges (such a txid must go in the location URL).
 * - Codes longer than BRCODE_MAX_LEN characters are refused when decoding
 *   (the EMV QR limit is 512).
 * - Decoding refuses any byte that is not printable ASCII, repeated top-level
 *   IDs, names over 25 and cities over 15 characters, a currency other than
 *   986, and a txid that is not "***" or 1..25 letters and digits.
 *
 * No I/O, no allocation except inside the yajl generator the caller passes.
 */
#ifndef PIXRELAY_BRCODE_H
#define PIXRELAY_BRCODE_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

#define BRCODE_GUI "br.gov.bcb.pix"
#define BRCODE_KEY_MAX 77     /* 26.01 */
#define BRCODE_URL_MAX 77     /* 26.25 */
#define BRCODE_ACCOUNT_MAX 99 /* the whole of field 26 */
#define BRCODE_NAME_MAX 25    /* 59 */
#define BRCODE_CITY_MAX 15    /* 60 */
#define BRCODE_TXID_MAX 25    /* 62.05 */
#define BRCODE_AMOUNT_MAX 13  /* 54, characters */
/* An out buffer of this many bytes always holds what brcode_encode writes. */
#define BRCODE_ENCODE_BUF 256
/* The longest code brcode_decode accepts, in characters. */
#define BRCODE_MAX_LEN 512
#define BRCODE_MAX_FIELDS (BRCODE_MAX_LEN / 4)

/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor)
 * over len bytes. Cannot fail; "123456789" gives 0x29B1. */
uint16_t brcode_crc16(const void *data, size_t len);

/* Fold UTF-8 text to printable ASCII for BR Code fields: letters of the
 * Latin-1 supplement lose their accents ("São Paulo" -> "Sao Paulo",
 * ç -> c, ß -> ss, Æ -> AE), combining accents are dropped, control
 * characters and non-ASCII spaces become a space, any other non-ASCII
 * character and every byte of invalid UTF-8 is dropped. Runs of spaces are
 * collapsed to one and leading and trailing spaces removed. The result is cut
 * to at most maxchars characters (and to outlen - 1 bytes) and always
 * NUL-terminated when outlen > 0. utf8 NULL is read as "". Cannot fail. */
void brcode_fold_ascii(const char *utf8, size_t maxchars, char *out, size_t outlen);

/* What goes into a code. Every pointer is borrowed for the call only. */
struct brcode_input {
	const char *gui;	   /* 26.00, NULL for "br.gov.bcb.pix"; when given it must
				    * be that text in any letter case ("BR.GOV.BCB.PIX") */
	const char *pix_key;	   /* 26.01, required, printable ASCII, <= 77 chars */
	const char *description;   /* 26.02, optional (NULL or ""), folded to ASCII */
	const char *location;	   /* 26.25, optional (NULL), printable ASCII URL without
				    * "https://", <= 77 chars */
	long long amount_cents;	   /* 54 when >= 0 (formatted "12.34"); < 0 omits field 54 */
	const char *merchant_name; /* 59, required, folded to ASCII, cut to 25 */
	const char *merchant_city; /* 60, required, folded to ASCII, cut to 15 */
	const char *txid;	   /* 62.05, 1..25 ASCII letters or digits, NULL for "***" */
	int single_use;		   /* field 01 = "12" when nonzero, omitted otherwise */
};

/* Build the BR Code into out (outlen bytes, NUL-terminated; BRCODE_ENCODE_BUF
 * always suffices). Fields go in the order 00, 01, 26, 52, 53, 54, 58, 59,
 * 60, 62, 63. Returns 0, or -1 with a message in err (when errlen > 0) when
 * an input breaks a rule: a missing or too long key, a txid that is not 1..25
 * letters and digits, field 26 over 99 characters, a name or city that folds
 * to nothing, an amount over 13 characters, out too small. out is written only
 * on success. */
int brcode_encode(const struct brcode_input *in, char *out, size_t outlen, char *err,
		  size_t errlen);

/* A part of the decoded code: ptr points into the code, not NUL-terminated;
 * ptr is NULL when the part is absent. */
struct brcode_slice {
	const char *ptr;
	size_t len;
};

struct brcode_field {
	int id; /* 0..99 */
	struct brcode_slice value;
};

/* A decoded code. Every slice borrows from the string given to brcode_decode
 * and lives as long as it does. */
struct brcode_decoded {
	struct brcode_slice payload_format;	 /* 00, always "01" */
	struct brcode_slice point_of_initiation; /* 01, "11" or "12", or absent */
	struct brcode_slice gui;		 /* 26.00 as written */
	struct brcode_slice pix_key;		 /* 26.01 or absent */
	struct brcode_slice description;	 /* 26.02 or absent */
	struct brcode_slice location;		 /* 26.25 or absent */
	struct brcode_slice mcc;		 /* 52, 4 digits */
	struct brcode_slice currency;		 /* 53, "986" */
	struct brcode_slice amount;		 /* 54 as written, or absent */
	long long amount_cents;			 /* 54 in cents, -1 when absent */
	struct brcode_slice country;		 /* 58, 2 uppercase letters */
	struct brcode_slice merchant_name;	 /* 59 */
	struct brcode_slice merchant_city;	 /* 60 */
	struct brcode_slice txid;		 /* 62.05; absent when "***" or no 62 */
	uint16_t crc;				 /* 63, verified */
	size_t nfields;				 /* top-level fields in code order */
	struct brcode_field fields[BRCODE_MAX_FIELDS];
};

/* Strictly decode a NUL-terminated BR Code into *out: every TLV length must
 * fit exactly (also inside 26 and 62), IDs and lengths are 2 digits, field 00
 * comes first with "01", field 63 last with 4 uppercase hex digits matching
 * the CRC over everything before them; 26.00 is "br.gov.bcb.pix" in any case
 * and 26 holds a key or a location; 52, 53, 58, 59, 60 are present; 54 is
 * digits with an optional dot and 1 or 2 decimals. Returns 0, or -1 with a
 * message in err naming the field and the fault. *out is written only on
 * success and borrows from code. */
int brcode_decode(const char *code, struct brcode_decoded *out, char *err, size_t errlen);

/* Decode like brcode_decode and write the result as one JSON object into g:
 * {"payloadFormat":"01","pointOfInitiation":"12"|null,
 *  "merchantAccount":{"gui":..,"key":..|null,"description":..|null,"url":..|null},
 *  "mcc":"0000","currency":"986","amount":"66.66"|null,"amountCents":6666|null,
 *  "country":"BR","merchantName":..,"merchantCity":..,"txid":..|null,
 *  "crc":"1D3D","fields":[{"id":"00","value":"01"},...]}
 * "amount" is normalised to two decimals ("100" -> "100.00"); "fields" holds
 * the top-level fields as written. txid is null for "***". Returns 0, or -1
 * with a message in err; on failure nothing is written to g. g is borrowed. */
int brcode_decode_json(const char *code, yajl_gen g, char *err, size_t errlen);

#endif
