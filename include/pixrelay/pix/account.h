/* account: the business account create request of spec 4.2, without I/O.
 *
 * It validates a parsed request body field by field (company data, PDF
 * documents, address, legal representatives with identity pictures),
 * normalises what has a normal form (CNPJ, CPF, CEP), decodes every file
 * from base64, checks its magic bytes and computes its SHA-256.
 *
 * Error messages read "<path>: <rule>", where the path names the first field
 * at fault in the spec's order, e.g. "representatives[0].documents.picture_face".
 */
#ifndef PIXRELAY_ACCOUNT_H
#define PIXRELAY_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>

#define ACCOUNT_MAX_DOCUMENTS 10
#define ACCOUNT_MAX_REPRESENTATIVES 10
#define ACCOUNT_TEXT_MAX 200 /* characters of a name or an address part */
#define ACCOUNT_PHONE_MAX 30
#define ACCOUNT_DEFAULT_MAX_FILE_BYTES (5u * 1024 * 1024)

struct account_limits {
	size_t max_file_bytes; /* decoded bytes per file; 0 = ACCOUNT_DEFAULT_MAX_FILE_BYTES */
};

enum account_file_kind { ACCOUNT_PDF = 1, ACCOUNT_JPEG = 2, ACCOUNT_PNG = 3 };

#define ACCOUNT_KIND_BIT(k) (1u << (k))
#define ACCOUNT_KINDS_PDF ACCOUNT_KIND_BIT(ACCOUNT_PDF)
#define ACCOUNT_KINDS_IMAGE (ACCOUNT_KIND_BIT(ACCOUNT_JPEG) | ACCOUNT_KIND_BIT(ACCOUNT_PNG))

/* A decoded file. `data` is owned (malloc'ed, with one NUL byte after the
 * data); len 0 means absent. sha256 is the lower-case hex digest of the data. */
struct account_file {
	unsigned char *data;
	size_t len;
	enum account_file_kind kind;
	char sha256[65];
};

/* One legal representative. Strings are owned and never NULL after a
 * successful parse; tax_id is the normalised CPF (11 digits). */
struct account_representative {
	char *name;
	char birth_date[11]; /* YYYY-MM-DD */
	char *email;
	char tax_id[12];
	char *phone;
	struct account_file picture_face, picture_identity_front, picture_identity_back;
	char picture_identity_type[4]; /* "RG" or "CNH" */
};

/* The company address. zipcode is the normalised CEP (8 digits); strings owned. */
struct account_address {
	char zipcode[9];
	char *street, *number, *neighborhood, *city;
	char state[3];
};

/* A validated create request; everything in it is owned. tax_id is the
 * normalised CNPJ (14 characters, upper case). */
struct account_input {
	char *official_name, *trade_name;
	char tax_id[15];
	struct account_file *documents;
	size_t ndocuments;
	struct account_address address;
	struct account_representative *representatives;
	size_t nrepresentatives;
	char *postback_url; /* NULL when absent */
};

/* Validate a create request (`body`, a parsed JSON object, borrowed) against
 * the rules of 4.2. `lim` may be NULL (defaults). `today_days` is today as days
 * since 1970-01-01: a birthDate must be a real date from 1900 on and strictly
 * before it. A representative appears once: a CPF already listed is refused
 * ("representatives[1].taxID: the same CPF as representatives[0]"). JSON
 * null for an optional field means absent; for a required one, missing.
 * Returns 0 and fills *out (the caller frees it with
 * account_input_deinit), or -1 with "<path>: <rule>" in `err` for the first
 * field at fault in the spec's order, e.g. "taxID: not a valid CNPJ",
 * "representatives[0].taxID: invalid CPF", "documents[1]: not a PDF",
 * "unknown field 'foo'", "address: unknown field 'x'"; *out is then untouched. */
int account_parse_create(yajl_val body, const struct account_limits *lim, long long today_days,
			 struct account_input *out, char *err, size_t errlen);

/* The file slots of a request: its documents, then three pictures per
 * representative (face, identity front, identity back). account_file_slot
 * returns slot i (< account_file_slots(in)), borrowed; len 0 when absent. */
size_t account_file_slots(const struct account_input *in);
struct account_file *account_file_slot(const struct account_input *in, size_t i);

/* True when slot i holds a file and no earlier slot has the same content
 * (SHA-256): the account keeps each content once. */
bool account_file_is_first(const struct account_input *in, size_t i);

/* What an account made from `in` keeps: the number of distinct files and
 * their decoded bytes (for the quotas max-account-files and
 * max-account-bytes). */
void account_files_usage(const struct account_input *in, size_t *files, size_t *bytes);

/* Free everything `in` owns and zero it. Safe on a zeroed struct. */
void account_input_deinit(struct account_input *in);

/* Decode one file given as base64: raw standard base64 (padding optional, no
 * whitespace), or a data: URI "data:<mime>[;param...];base64,<data>". Its
 * magic bytes decide its kind: PDF "%PDF-", JPEG FF D8 FF, PNG 89 50 4E 47 0D
 * 0A 1A 0A; the kind must be in `allowed_kinds` (a mask of
 * ACCOUNT_KIND_BIT(kind)). A data: URI whose mime type (application/pdf,
 * image/jpeg or image/jpg, image/png; any case) does not name the content's
 * kind is refused. Files of more than `max_bytes` decoded bytes are refused
 * before decoding. Returns 0 and fills *out (data owned by the caller, free
 * with account_file_deinit), or -1 with the rule alone (no path) in `err`:
 * "not valid base64", "not a PDF", "not a JPG or PNG image", "file too large
 * (N bytes, the limit is M)", ...; *out is then untouched. `text` is borrowed. */
int account_decode_file(const char *text, unsigned allowed_kinds, size_t max_bytes,
			struct account_file *out, char *err, size_t errlen);

/* Free the file's data and zero it. Safe on a zeroed struct. */
void account_file_deinit(struct account_file *f);

#endif
