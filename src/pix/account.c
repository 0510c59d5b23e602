/* account: a business account's create request as values. The client's
 * body is read field by field in the spec's order, each fault named by its
 * path ("representatives[0].taxID: invalid CPF"); CNPJ, CPFs and CEP are
 * normalised; every file (PDF documents, identity pictures) is sized before
 * it is decoded from base64 or a data: URI, known by its magic bytes and
 * hashed, so that an account keeps each content once. No I/O: the handler
 * is api/api_accounts.c, the store store/accounts.c. */
#include "pixrelay/pix/account.h"

#include "pixrelay/core/base64.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/taxid.h"
#include "pixrelay/core/validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PATH_MAX_LEN 128
#define MIME_MAX 63

static const char *const top_fields[] = {
    "officialName", "tradeName", "taxID", "documents", "address", "representatives", "postbackUrl"};
static const char *const address_fields[] = {"zipcode",	     "street", "number",
					     "neighborhood", "city",   "state"};
static const char *const rep_fields[] = {"name",  "birthDate", "email",
					 "taxID", "phone",     "documents"};
static const char *const rep_doc_fields[] = {"picture_face", "picture_identity_front",
					     "picture_identity_back", "picture_identity_type"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* "<path>: <message>" into err; an empty path gives the message alone. */
static void fail_at(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void fail_at(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err || errlen == 0)
		return;
	if (path[0])
		n = snprintf(err, errlen, "%s: ", path);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static void path_join(char *buf, const char *prefix, const char *key)
{
	size_t plen = strlen(prefix), klen = strlen(key), n = 0;

	/* paths are built from fixed names and indices, far below the limit;
	 * cut rather than overrun all the same */
	if (plen > PATH_MAX_LEN - 1)
		plen = PATH_MAX_LEN - 1;
	memcpy(buf, prefix, plen);
	n = plen;
	if (plen && n < PATH_MAX_LEN - 1)
		buf[n++] = '.';
	if (klen > PATH_MAX_LEN - 1 - n)
		klen = PATH_MAX_LEN - 1 - n;
	memcpy(buf + n, key, klen);
	buf[n + klen] = '\0';
}

/* Refuse any key of `obj` that is not in `known`, quoted back as json_echo
 * does. */
static int check_unknown(yajl_val obj, const char *path, const char *const *known, size_t nknown,
			 char *err, size_t errlen)
{
	for (size_t i = 0; i < obj->u.object.len; i++) {
		const char *key = obj->u.object.keys[i];
		char echo[JSON_ECHO_MAX + 1];
		size_t k;

		for (k = 0; k < nknown; k++)
			if (strcmp(key, known[k]) == 0)
				break;
		if (k < nknown)
			continue;
		fail_at(err, errlen, path, "unknown field '%s'", json_echo(echo, key));
		return -1;
	}
	return 0;
}

/* A string value at `path`. Absent or null: -1 with "is required" when
 * `required`, else 0 with *out NULL. *out is borrowed from the tree. */
static int get_string(yajl_val v, const char *path, int required, const char **out, char *err,
		      size_t errlen)
{
	if (!v || YAJL_IS_NULL(v)) {
		if (required) {
			fail_at(err, errlen, path, "is required");
			return -1;
		}
		*out = NULL;
		return 0;
	}
	if (!YAJL_IS_STRING(v)) {
		fail_at(err, errlen, path, "must be a string");
		return -1;
	}
	*out = YAJL_GET_STRING(v);
	return 0;
}

/* A required free-text field: non-blank, valid UTF-8 without control
 * characters, at most max_chars characters. *out is a new copy. */
static int text_field(yajl_val v, const char *path, size_t max_chars, char **out, char *err,
		      size_t errlen)
{
	const char *s;
	long chars;

	if (get_string(v, path, 1, &s, err, errlen) < 0)
		return -1;
	chars = validate_utf8_chars(s, strlen(s));
	if (chars < 0) {
		fail_at(err, errlen, path, "must be valid UTF-8");
		return -1;
	}
	if (validate_has_control(s)) {
		fail_at(err, errlen, path, "must not contain control characters");
		return -1;
	}
	if (validate_is_blank(s)) {
		fail_at(err, errlen, path, "must not be empty");
		return -1;
	}
	if ((size_t)chars > max_chars) {
		fail_at(err, errlen, path, "must be at most %zu characters (got %ld)", max_chars,
			chars);
		return -1;
	}
	*out = mem_strdup(s);
	return 0;
}

/* An object value at `path` (required). */
static int get_object(yajl_val v, const char *path, char *err, size_t errlen)
{
	if (!v || YAJL_IS_NULL(v)) {
		fail_at(err, errlen, path, "is required");
		return -1;
	}
	if (!YAJL_IS_OBJECT(v)) {
		fail_at(err, errlen, path, "must be an object");
		return -1;
	}
	return 0;
}

/* A required array of 1..max items at `path`. */
static int get_array(yajl_val v, const char *path, size_t max, char *err, size_t errlen)
{
	if (!v || YAJL_IS_NULL(v)) {
		fail_at(err, errlen, path, "is required");
		return -1;
	}
	if (!YAJL_IS_ARRAY(v)) {
		fail_at(err, errlen, path, "must be an array");
		return -1;
	}
	if (v->u.array.len == 0) {
		fail_at(err, errlen, path, "must have at least 1 item");
		return -1;
	}
	if (v->u.array.len > max) {
		fail_at(err, errlen, path, "must have at most %zu items", max);
		return -1;
	}
	return 0;
}

/* ---- files ---- */

static const char *kind_noun(enum account_file_kind k)
{
	switch (k) {
	case ACCOUNT_PDF:
		return "a PDF";
	case ACCOUNT_JPEG:
		return "a JPG image";
	case ACCOUNT_PNG:
		return "a PNG image";
	}
	return "an unknown file";
}

static enum account_file_kind sniff(const unsigned char *p, size_t n)
{
	static const unsigned char png[8] = {0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a};

	if (n >= 5 && memcmp(p, "%PDF-", 5) == 0)
		return ACCOUNT_PDF;
	if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
		return ACCOUNT_JPEG;
	if (n >= 8 && memcmp(p, png, 8) == 0)
		return ACCOUNT_PNG;
	return 0;
}

static enum account_file_kind mime_kind(const char *mime)
{
	if (strcasecmp(mime, "application/pdf") == 0)
		return ACCOUNT_PDF;
	if (strcasecmp(mime, "image/jpeg") == 0 || strcasecmp(mime, "image/jpg") == 0)
		return ACCOUNT_JPEG;
	if (strcasecmp(mime, "image/png") == 0)
		return ACCOUNT_PNG;
	return 0;
}

/* "not a PDF", "not a JPG or PNG image", "not a PDF, JPG or PNG". */
static void not_allowed(char *err, size_t errlen, unsigned allowed)
{
	static const struct {
		enum account_file_kind kind;
		const char *name;
	} names[] = {{ACCOUNT_PDF, "PDF"}, {ACCOUNT_JPEG, "JPG"}, {ACCOUNT_PNG, "PNG"}};
	const char *list[3];
	size_t n = 0;
	char buf[64] = "";

	for (size_t i = 0; i < COUNT(names); i++)
		if (allowed & ACCOUNT_KIND_BIT(names[i].kind))
			list[n++] = names[i].name;
	if (n == 0) {
		fail_at(err, errlen, "", "not an allowed kind of file");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(buf);
		const char *sep = i == 0 ? "" : (i + 1 == n ? " or " : ", ");
		snprintf(buf + used, sizeof(buf) - used, "%s%s", sep, list[i]);
	}
	fail_at(err, errlen, "", "not a %s%s", buf,
		(allowed & ACCOUNT_KIND_BIT(ACCOUNT_PDF)) ? "" : " image");
}

/* Split a data: URI (after "data:") into its mime type and base64 part.
 * Returns -1 when it is not "<mime>[;params];base64,<data>". */
static int split_data_uri(const char *s, char mime[MIME_MAX + 1], const char **b64)
{
	const char *comma = strchr(s, ',');
	size_t hlen, mlen;
	const char *semi;

	if (!comma)
		return -1;
	hlen = (size_t)(comma - s);
	if (hlen < 7 || strncasecmp(comma - 7, ";base64", 7) != 0)
		return -1;
	for (const char *p = s; p < comma; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return -1;
	semi = memchr(s, ';', hlen);
	mlen = (size_t)(semi - s);
	if (mlen == 0 || mlen > MIME_MAX || !memchr(s, '/', mlen))
		return -1;
	memcpy(mime, s, mlen);
	mime[mlen] = '\0';
	*b64 = comma + 1;
	return 0;
}

int account_decode_file(const char *text, unsigned allowed_kinds, size_t max_bytes,
			struct account_file *out, char *err, size_t errlen)
{
	char mime[MIME_MAX + 1] = "";
	const char *b64 = text;
	unsigned char *data = NULL;
	size_t len, pad = 0, n, size, dlen = 0;
	enum account_file_kind kind;
	int is_uri = 0;

	if (!text) {
		fail_at(err, errlen, "", "is required");
		goto fail;
	}
	if (strncasecmp(text, "data:", 5) == 0) {
		is_uri = 1;
		if (split_data_uri(text + 5, mime, &b64) < 0) {
			fail_at(err, errlen, "",
				"not a valid data: URI (data:<type>;base64,<data>)");
			goto fail;
		}
	}
	len = strlen(b64);
	if (len == 0) {
		fail_at(err, errlen, "", "must not be empty");
		goto fail;
	}
	/* the decoded size, known from the length alone: refuse an oversized
	 * file before allocating for it */
	while (pad < 2 && pad < len && b64[len - 1 - pad] == '=')
		pad++;
	n = len - pad;
	size = n / 4 * 3 + (n % 4 > 1 ? n % 4 - 1 : 0);
	if (size > max_bytes) {
		fail_at(err, errlen, "", "file too large (%zu bytes, the limit is %zu)", size,
			max_bytes);
		goto fail;
	}
	data = base64_decode(b64, len, &dlen);
	if (!data) {
		fail_at(err, errlen, "", "not valid base64");
		goto fail;
	}
	kind = sniff(data, dlen);
	if (!kind || !(allowed_kinds & ACCOUNT_KIND_BIT(kind))) {
		not_allowed(err, errlen, allowed_kinds);
		goto fail;
	}
	if (is_uri && mime_kind(mime) != kind) {
		fail_at(err, errlen, "", "data: URI says %s but the content is %s", mime,
			kind_noun(kind));
		goto fail;
	}
	out->data = data;
	out->len = dlen;
	out->kind = kind;
	ids_sha256_hex(out->sha256, data, dlen);
	return 0;
fail:
	free(data);
	return -1;
}

void account_file_deinit(struct account_file *f)
{
	free(f->data);
	memset(f, 0, sizeof(*f));
}

/* A file field: decoded into *f, or -1 with "<path>: <rule>". */
static int file_field(const char *text, const char *path, unsigned kinds, size_t max,
		      struct account_file *f, char *err, size_t errlen)
{
	char rule[160];

	if (account_decode_file(text, kinds, max, f, rule, sizeof(rule)) == 0)
		return 0;
	fail_at(err, errlen, path, "%s", rule);
	return -1;
}

/* ---- sections ---- */

static int parse_documents(yajl_val v, struct account_input *in, size_t max, char *err,
			   size_t errlen)
{
	if (get_array(v, "documents", ACCOUNT_MAX_DOCUMENTS, err, errlen) < 0)
		return -1;
	in->ndocuments = v->u.array.len;
	in->documents = mem_calloc(in->ndocuments, sizeof(*in->documents));
	for (size_t i = 0; i < in->ndocuments; i++) {
		yajl_val item = v->u.array.values[i];
		char path[PATH_MAX_LEN];

		snprintf(path, sizeof(path), "documents[%zu]", i);
		if (!YAJL_IS_STRING(item)) {
			fail_at(err, errlen, path, "must be a string");
			return -1;
		}
		if (file_field(YAJL_GET_STRING(item), path, ACCOUNT_KINDS_PDF, max,
			       &in->documents[i], err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int parse_address(yajl_val v, struct account_address *a, char *err, size_t errlen)
{
	char path[PATH_MAX_LEN];
	const char *s;

	if (get_object(v, "address", err, errlen) < 0)
		return -1;
	if (check_unknown(v, "address", address_fields, COUNT(address_fields), err, errlen) < 0)
		return -1;
	if (get_string(json_get(v, "zipcode"), "address.zipcode", 1, &s, err, errlen) < 0)
		return -1;
	if (validate_cep_normalize(s, a->zipcode) < 0) {
		fail_at(err, errlen, "address.zipcode",
			"not a valid CEP (8 digits, e.g. 01310-100)");
		return -1;
	}
	{
		static const char *const keys[] = {"street", "number", "neighborhood", "city"};
		char **dst[] = {&a->street, &a->number, &a->neighborhood, &a->city};

		for (size_t i = 0; i < COUNT(keys); i++) {
			path_join(path, "address", keys[i]);
			if (text_field(json_get(v, keys[i]), path, ACCOUNT_TEXT_MAX, dst[i], err,
				       errlen) < 0)
				return -1;
		}
	}
	if (get_string(json_get(v, "state"), "address.state", 1, &s, err, errlen) < 0)
		return -1;
	if (!validate_is_uf(s)) {
		fail_at(err, errlen, "address.state",
			"must be a Brazilian UF (2 capital letters, e.g. SP)");
		return -1;
	}
	memcpy(a->state, s, 3);
	return 0;
}

static int parse_rep_documents(yajl_val v, const char *prefix, struct account_representative *r,
			       size_t max, char *err, size_t errlen)
{
	char path[PATH_MAX_LEN], field[PATH_MAX_LEN];
	const char *s;

	path_join(path, prefix, "documents");
	if (get_object(v, path, err, errlen) < 0)
		return -1;
	if (check_unknown(v, path, rep_doc_fields, COUNT(rep_doc_fields), err, errlen) < 0)
		return -1;
	{
		static const char *const keys[] = {"picture_face", "picture_identity_front",
						   "picture_identity_back"};
		struct account_file *dst[] = {&r->picture_face, &r->picture_identity_front,
					      &r->picture_identity_back};

		for (size_t i = 0; i < COUNT(keys); i++) {
			int required = i < 2;

			path_join(field, path, keys[i]);
			if (get_string(json_get(v, keys[i]), field, required, &s, err, errlen) < 0)
				return -1;
			if (s &&
			    file_field(s, field, ACCOUNT_KINDS_IMAGE, max, dst[i], err, errlen) < 0)
				return -1;
		}
	}
	path_join(field, path, "picture_identity_type");
	if (get_string(json_get(v, "picture_identity_type"), field, 1, &s, err, errlen) < 0)
		return -1;
	if (strcmp(s, "RG") != 0 && strcmp(s, "CNH") != 0) {
		fail_at(err, errlen, field, "must be RG or CNH");
		return -1;
	}
	snprintf(r->picture_identity_type, sizeof(r->picture_identity_type), "%s", s);
	return 0;
}

/* Parse representative `idx` into reps[idx]; reps[0 .. idx-1] are parsed
 * already: a representative may appear once (by CPF). */
static int parse_representative(yajl_val v, size_t idx, long long today_days,
				struct account_representative *reps, size_t max, char *err,
				size_t errlen)
{
	struct account_representative *r = &reps[idx];
	char prefix[PATH_MAX_LEN], path[PATH_MAX_LEN];
	const char *s;
	int y, m, d;

	snprintf(prefix, sizeof(prefix), "representatives[%zu]", idx);
	if (!YAJL_IS_OBJECT(v)) {
		fail_at(err, errlen, prefix, "must be an object");
		return -1;
	}
	if (check_unknown(v, prefix, rep_fields, COUNT(rep_fields), err, errlen) < 0)
		return -1;

	path_join(path, prefix, "name");
	if (text_field(json_get(v, "name"), path, ACCOUNT_TEXT_MAX, &r->name, err, errlen) < 0)
		return -1;

	path_join(path, prefix, "birthDate");
	if (get_string(json_get(v, "birthDate"), path, 1, &s, err, errlen) < 0)
		return -1;
	if (validate_date(s, &y, &m, &d) < 0 || timefmt_days_from_civil(y, m, d) >= today_days) {
		fail_at(err, errlen, path, "must be a real date YYYY-MM-DD in the past");
		return -1;
	}
	memcpy(r->birth_date, s, 11);

	path_join(path, prefix, "email");
	if (get_string(json_get(v, "email"), path, 1, &s, err, errlen) < 0)
		return -1;
	if (!validate_is_email(s)) {
		fail_at(err, errlen, path, "not a valid e-mail address");
		return -1;
	}
	r->email = mem_strdup(s);

	path_join(path, prefix, "taxID");
	if (get_string(json_get(v, "taxID"), path, 1, &s, err, errlen) < 0)
		return -1;
	if (taxid_cpf_normalize(s, r->tax_id) < 0) {
		fail_at(err, errlen, path, "invalid CPF");
		return -1;
	}
	for (size_t i = 0; i < idx; i++)
		if (strcmp(reps[i].tax_id, r->tax_id) == 0) {
			fail_at(err, errlen, path, "the same CPF as representatives[%zu]", i);
			return -1;
		}

	path_join(path, prefix, "phone");
	if (get_string(json_get(v, "phone"), path, 1, &s, err, errlen) < 0)
		return -1;
	if (strlen(s) > ACCOUNT_PHONE_MAX || !validate_is_phone(s)) {
		fail_at(err, errlen, path, "not a valid phone number (8 to 15 digits, optional +)");
		return -1;
	}
	r->phone = mem_strdup(s);

	return parse_rep_documents(json_get(v, "documents"), prefix, r, max, err, errlen);
}

int account_parse_create(yajl_val body, const struct account_limits *lim, long long today_days,
			 struct account_input *out, char *err, size_t errlen)
{
	struct account_input in;
	size_t max =
	    lim && lim->max_file_bytes ? lim->max_file_bytes : ACCOUNT_DEFAULT_MAX_FILE_BYTES;
	const char *s;
	yajl_val v;

	memset(&in, 0, sizeof(in));
	if (!body || !YAJL_IS_OBJECT(body)) {
		fail_at(err, errlen, "", "the body must be a JSON object");
		goto fail;
	}
	if (check_unknown(body, "", top_fields, COUNT(top_fields), err, errlen) < 0)
		goto fail;
	if (text_field(json_get(body, "officialName"), "officialName", ACCOUNT_TEXT_MAX,
		       &in.official_name, err, errlen) < 0)
		goto fail;
	if (text_field(json_get(body, "tradeName"), "tradeName", ACCOUNT_TEXT_MAX, &in.trade_name,
		       err, errlen) < 0)
		goto fail;
	if (get_string(json_get(body, "taxID"), "taxID", 1, &s, err, errlen) < 0)
		goto fail;
	if (taxid_cnpj_normalize(s, in.tax_id) < 0) {
		fail_at(err, errlen, "taxID", "not a valid CNPJ");
		goto fail;
	}
	if (parse_documents(json_get(body, "documents"), &in, max, err, errlen) < 0)
		goto fail;
	if (parse_address(json_get(body, "address"), &in.address, err, errlen) < 0)
		goto fail;
	v = json_get(body, "representatives");
	if (get_array(v, "representatives", ACCOUNT_MAX_REPRESENTATIVES, err, errlen) < 0)
		goto fail;
	in.nrepresentatives = v->u.array.len;
	in.representatives = mem_calloc(in.nrepresentatives, sizeof(*in.representatives));
	for (size_t i = 0; i < in.nrepresentatives; i++)
		if (parse_representative(v->u.array.values[i], i, today_days, in.representatives,
					 max, err, errlen) < 0)
			goto fail;
	if (get_string(json_get(body, "postbackUrl"), "postbackUrl", 0, &s, err, errlen) < 0)
		goto fail;
	if (s) {
		if (!validate_is_http_url(s)) {
			fail_at(err, errlen, "postbackUrl",
				"must be an absolute http or https URL");
			goto fail;
		}
		in.postback_url = mem_strdup(s);
	}
	*out = in;
	return 0;
fail:
	account_input_deinit(&in);
	return -1;
}

static void representative_deinit(struct account_representative *r)
{
	free(r->name);
	free(r->email);
	free(r->phone);
	account_file_deinit(&r->picture_face);
	account_file_deinit(&r->picture_identity_front);
	account_file_deinit(&r->picture_identity_back);
	memset(r, 0, sizeof(*r));
}

void account_input_deinit(struct account_input *in)
{
	free(in->official_name);
	free(in->trade_name);
	for (size_t i = 0; i < in->ndocuments; i++)
		account_file_deinit(&in->documents[i]);
	free(in->documents);
	free(in->address.street);
	free(in->address.number);
	free(in->address.neighborhood);
	free(in->address.city);
	for (size_t i = 0; i < in->nrepresentatives; i++)
		representative_deinit(&in->representatives[i]);
	free(in->representatives);
	free(in->postback_url);
	memset(in, 0, sizeof(*in));
}

size_t account_file_slots(const struct account_input *in)
{
	return in->ndocuments + 3 * in->nrepresentatives;
}

struct account_file *account_file_slot(const struct account_input *in, size_t i)
{
	struct account_representative *r;

	if (i < in->ndocuments)
		return &in->documents[i];
	i -= in->ndocuments;
	r = &in->representatives[i / 3];
	return i % 3 == 0   ? &r->picture_face
	       : i % 3 == 1 ? &r->picture_identity_front
			    : &r->picture_identity_back;
}

bool account_file_is_first(const struct account_input *in, size_t i)
{
	const struct account_file *f = account_file_slot(in, i);

	if (!f->len)
		return false;
	for (size_t j = 0; j < i; j++) {
		const struct account_file *e = account_file_slot(in, j);
		if (e->len && strcmp(e->sha256, f->sha256) == 0)
			return false;
	}
	return true;
}

void account_files_usage(const struct account_input *in, size_t *files, size_t *bytes)
{
	size_t n = 0, b = 0;

	for (size_t i = 0; i < account_file_slots(in); i++) {
		if (account_file_is_first(in, i)) {
			n++;
			b += account_file_slot(in, i)->len;
		}
	}
	*files = n;
	*bytes = b;
}
