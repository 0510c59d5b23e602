/* brcode: the Pix copy-and-paste code, both ways. Encoding folds the
 * merchant's UTF-8 text to printable ASCII, lays out the TLV fields and
 * appends the CRC (store/charges.c calls it for each new charge). Decoding
 * takes a code as hostile input and refuses any byte, length or field the
 * standard does not allow, naming the field at fault (`pixrelay brcode
 * decode`, cli/cli_brcode.c). Decoded parts are slices of the caller's
 * string; no I/O, no allocation. The QR image is qrpng.c. */
#include "pixrelay/pix/brcode.h"
#include "pixrelay/core/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

uint16_t brcode_crc16(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint16_t crc = 0xFFFF;

	for (size_t i = 0; i < len; i++) {
		crc ^= (uint16_t)(p[i] << 8);
		for (int b = 0; b < 8; b++)
			crc =
			    (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
	}
	return crc;
}

/* ---- folding to ASCII ---- */

/* U+00C0..U+00FF without their accents; "" drops, " " is a space. */
static const char *const latin1_fold[64] = {
    "A", "A", "A", "A", "A", "A", "AE", "C", "E", "E", "E", "E", "I", "I", "I",	 "I",
    "D", "N", "O", "O", "O", "O", "O",	" ", "O", "U", "U", "U", "U", "Y", "TH", "ss",
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i",	 "i",
    "d", "n", "o", "o", "o", "o", "o",	" ", "o", "u", "u", "u", "u", "y", "th", "y",
};

struct fold {
	char *out;
	size_t n;     /* characters written */
	size_t limit; /* at most this many */
	int space;    /* a space is owed before the next character */
	int full;
};

static void fold_put(struct fold *f, const char *s)
{
	for (; *s && !f->full; s++) {
		if (*s == ' ') {
			if (f->n > 0)
				f->space = 1;
			continue;
		}
		/* a space is written only with a character after it, so the result
		 * never ends in one */
		if (f->n + (size_t)f->space + 1 > f->limit) {
			f->full = 1;
			return;
		}
		if (f->space) {
			f->out[f->n++] = ' ';
			f->space = 0;
		}
		f->out[f->n++] = *s;
	}
}

/* Decode one UTF-8 sequence at s (n bytes left). Returns its length and sets
 * *cp, or 0 for invalid UTF-8 (overlong, surrogate, out of range, cut). */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c;
	size_t len;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		len = 2;
		c = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3;
		c = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
	    (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

static bool is_unicode_space(uint32_t c)
{
	return c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
	       c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

void brcode_fold_ascii(const char *utf8, size_t maxchars, char *out, size_t outlen)
{
	const unsigned char *s = (const unsigned char *)(utf8 ? utf8 : "");
	size_t n = strlen((const char *)s);
	struct fold f = {.out = out};

	if (!out || outlen == 0)
		return;
	f.limit = maxchars < outlen - 1 ? maxchars : outlen - 1;
	for (size_t i = 0; i < n && !f.full;) {
		char one[2] = {0, 0};
		const char *rep = "";
		uint32_t cp;
		size_t len = utf8_next(s + i, n - i, &cp);

		if (len == 0) {
			i++; /* drop a byte of invalid UTF-8 */
			continue;
		}
		i += len;
		if (cp >= 0x21 && cp <= 0x7E) {
			one[0] = (char)cp;
			rep = one;
		} else if (cp <= 0x20 || (cp >= 0x7F && cp <= 0x9F) || is_unicode_space(cp)) {
			rep = " ";
		} else if (cp >= 0xC0 && cp <= 0xFF) {
			rep = latin1_fold[cp - 0xC0];
		} else if (cp == 0xAA) {
			rep = "a"; /* feminine ordinal, as in "1a" */
		} else if (cp == 0xBA) {
			rep = "o"; /* masculine ordinal, as in "No" */
		}
		fold_put(&f, rep);
	}
	out[f.n] = '\0';
}

/* ---- encoding ---- */

static bool ascii_ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = (*a >= 'A' && *a <= 'Z') ? (char)(*a + 32) : *a;
		char y = (*b >= 'A' && *b <= 'Z') ? (char)(*b + 32) : *b;
		if (x != y)
			return false;
	}
	return *a == *b;
}

static int ascii_iprefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	char head[16];

	if (strlen(s) < n || n >= sizeof(head))
		return 0;
	memcpy(head, s, n);
	head[n] = '\0';
	return ascii_ieq(head, prefix);
}

/* printable ASCII without space */
static bool is_token(const char *s)
{
	for (; *s; s++)
		if (*s < 0x21 || *s > 0x7E)
			return false;
	return true;
}

static bool is_alnum_c(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_txid(const char *s, size_t len)
{
	if (len < 1 || len > BRCODE_TXID_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_alnum_c(s[i]))
			return false;
	return true;
}

struct builder {
	char buf[BRCODE_ENCODE_BUF];
	size_t n;
};

/* Callers have checked len <= 99 and that everything fits the buffer. */
static void put_tlv(struct builder *b, int id, const char *v, size_t len)
{
	b->n += (size_t)snprintf(b->buf + b->n, sizeof(b->buf) - b->n, "%02d%02zu", id, len);
	memcpy(b->buf + b->n, v, len);
	b->n += len;
	b->buf[b->n] = '\0';
}

int brcode_encode(const struct brcode_input *in, char *out, size_t outlen, char *err, size_t errlen)
{
	char desc[BRCODE_ACCOUNT_MAX + 1], name[BRCODE_NAME_MAX + 1], city[BRCODE_CITY_MAX + 1];
	char amount[32], account[BRCODE_ACCOUNT_MAX + 1], extra[BRCODE_TXID_MAX + 5];
	struct builder b = {.n = 0};
	struct builder sub = {.n = 0};
	const char *gui, *txid;
	size_t key_len, desc_len = 0, loc_len = 0, acc_len, txid_len;

	if (!in) {
		set_err(err, errlen, "no input");
		return -1;
	}
	gui = in->gui ? in->gui : BRCODE_GUI;
	if (!ascii_ieq(gui, BRCODE_GUI)) {
		set_err(err, errlen, "gui must be \"%s\" (in any letter case)", BRCODE_GUI);
		return -1;
	}
	if (!in->pix_key || !in->pix_key[0]) {
		set_err(err, errlen, "pix_key is required");
		return -1;
	}
	key_len = strlen(in->pix_key);
	if (key_len > BRCODE_KEY_MAX) {
		set_err(err, errlen, "pix_key has %zu characters, over %d", key_len,
			BRCODE_KEY_MAX);
		return -1;
	}
	if (!is_token(in->pix_key)) {
		set_err(err, errlen, "pix_key must be printable ASCII without spaces");
		return -1;
	}
	brcode_fold_ascii(in->description, BRCODE_ACCOUNT_MAX, desc, sizeof(desc));
	desc_len = strlen(desc);
	if (in->location) {
		loc_len = strlen(in->location);
		if (loc_len == 0 || loc_len > BRCODE_URL_MAX) {
			set_err(err, errlen, "location must have 1 to %d characters, not %zu",
				BRCODE_URL_MAX, loc_len);
			return -1;
		}
		if (!is_token(in->location)) {
			set_err(err, errlen, "location must be printable ASCII without spaces");
			return -1;
		}
		if (ascii_iprefix(in->location, "https://") ||
		    ascii_iprefix(in->location, "http://")) {
			set_err(err, errlen, "location must be written without its scheme");
			return -1;
		}
	}
	acc_len = 4 + strlen(BRCODE_GUI) + 4 + key_len + (desc_len ? 4 + desc_len : 0) +
		  (loc_len ? 4 + loc_len : 0);
	if (acc_len > BRCODE_ACCOUNT_MAX) {
		set_err(err, errlen,
			"field 26 (merchant account) would have %zu characters, over %d", acc_len,
			BRCODE_ACCOUNT_MAX);
		return -1;
	}
	if (in->amount_cents >= 0) {
		int n = snprintf(amount, sizeof(amount), "%lld.%02lld", in->amount_cents / 100,
				 in->amount_cents % 100);
		if (n > BRCODE_AMOUNT_MAX) {
			set_err(err, errlen, "amount_cents %lld is too large for field 54",
				in->amount_cents);
			return -1;
		}
	}
	brcode_fold_ascii(in->merchant_name, BRCODE_NAME_MAX, name, sizeof(name));
	if (!name[0]) {
		set_err(err, errlen, "merchant_name is empty once folded to ASCII");
		return -1;
	}
	brcode_fold_ascii(in->merchant_city, BRCODE_CITY_MAX, city, sizeof(city));
	if (!city[0]) {
		set_err(err, errlen, "merchant_city is empty once folded to ASCII");
		return -1;
	}
	txid = in->txid ? in->txid : "***";
	txid_len = strlen(txid);
	if (in->txid && !is_txid(txid, txid_len)) {
		set_err(err, errlen, "txid must be 1 to %d ASCII letters or digits",
			BRCODE_TXID_MAX);
		return -1;
	}

	put_tlv(&sub, 0, gui, strlen(gui));
	put_tlv(&sub, 1, in->pix_key, key_len);
	if (desc_len)
		put_tlv(&sub, 2, desc, desc_len);
	if (loc_len)
		put_tlv(&sub, 25, in->location, loc_len);
	memcpy(account, sub.buf, sub.n + 1);

	put_tlv(&b, 0, "01", 2);
	if (in->single_use)
		put_tlv(&b, 1, "12", 2);
	put_tlv(&b, 26, account, acc_len);
	put_tlv(&b, 52, "0000", 4);
	put_tlv(&b, 53, "986", 3);
	if (in->amount_cents >= 0)
		put_tlv(&b, 54, amount, strlen(amount));
	put_tlv(&b, 58, "BR", 2);
	put_tlv(&b, 59, name, strlen(name));
	put_tlv(&b, 60, city, strlen(city));
	snprintf(extra, sizeof(extra), "05%02zu%s", txid_len, txid);
	put_tlv(&b, 62, extra, strlen(extra));
	memcpy(b.buf + b.n, "6304", 4);
	b.n += 4;
	snprintf(b.buf + b.n, sizeof(b.buf) - b.n, "%04X", brcode_crc16(b.buf, b.n));
	b.n += 4;

	if (!out || outlen < b.n + 1) {
		set_err(err, errlen, "out has %zu bytes, the code needs %zu", out ? outlen : 0,
			b.n + 1);
		return -1;
	}
	memcpy(out, b.buf, b.n + 1);
	return 0;
}

/* ---- decoding ---- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool slice_is(struct brcode_slice s, const char *text)
{
	return s.ptr && s.len == strlen(text) && memcmp(s.ptr, text, s.len) == 0;
}

/* Split s[0..len) into TLV fields. base is the offset of s in the code and
 * parent the enclosing field (-1 at the top) for messages. */
static int parse_tlvs(const char *s, size_t len, size_t base, int parent,
		      struct brcode_field *fields, size_t max, size_t *count, char *err,
		      size_t errlen)
{
	char name[16];
	size_t pos = 0, n = 0;

	while (pos < len) {
		size_t left = len - pos, vlen;
		int id;

		if (parent >= 0)
			snprintf(name, sizeof(name), "%02d.", parent);
		else
			name[0] = '\0';
		if (left < 4) {
			if (parent >= 0)
				set_err(
				    err, errlen,
				    "field %02d: offset %zu: %zu character(s) left, too few for "
				    "an ID and a length",
				    parent, base + pos, left);
			else
				set_err(
				    err, errlen,
				    "offset %zu: %zu character(s) left, too few for an ID and a "
				    "length",
				    base + pos, left);
			return -1;
		}
		if (!is_digit(s[pos]) || !is_digit(s[pos + 1])) {
			set_err(err, errlen, "field ID \"%s%.2s\" at offset %zu is not 2 digits",
				name, s + pos, base + pos);
			return -1;
		}
		id = (s[pos] - '0') * 10 + (s[pos + 1] - '0');
		if (!is_digit(s[pos + 2]) || !is_digit(s[pos + 3])) {
			set_err(err, errlen,
				"field %s%02d at offset %zu: length \"%.2s\" is not 2 digits", name,
				id, base + pos, s + pos + 2);
			return -1;
		}
		vlen = (size_t)((s[pos + 2] - '0') * 10 + (s[pos + 3] - '0'));
		if (vlen == 0) {
			set_err(err, errlen,
				"field %s%02d at offset %zu: length 00, a field cannot be empty",
				name, id, base + pos);
			return -1;
		}
		if (vlen > left - 4) {
			set_err(err, errlen,
				"field %s%02d at offset %zu: length %02zu runs past the end (%zu "
				"characters left)",
				name, id, base + pos, vlen, left - 4);
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			if (fields[i].id == id) {
				set_err(err, errlen, "field %s%02d appears more than once", name,
					id);
				return -1;
			}
		}
		if (n == max) {
			set_err(err, errlen, "too many fields");
			return -1;
		}
		fields[n].id = id;
		fields[n].value.ptr = s + pos + 4;
		fields[n].value.len = vlen;
		n++;
		pos += 4 + vlen;
	}
	*count = n;
	return 0;
}

static struct brcode_slice find(const struct brcode_field *fields, size_t n, int id)
{
	struct brcode_slice none = {NULL, 0};

	for (size_t i = 0; i < n; i++)
		if (fields[i].id == id)
			return fields[i].value;
	return none;
}

/* digits, optionally a dot and 1 or 2 decimals; *cents on success */
static int parse_amount(struct brcode_slice s, long long *cents)
{
	size_t i = 0, int_digits = 0, dec_digits = 0;
	long long whole = 0, frac = 0;

	if (s.len > BRCODE_AMOUNT_MAX)
		return -1;
	for (; i < s.len && is_digit(s.ptr[i]); i++, int_digits++)
		whole = whole * 10 + (s.ptr[i] - '0');
	if (int_digits == 0)
		return -1;
	if (i < s.len) {
		if (s.ptr[i++] != '.')
			return -1;
		for (; i < s.len && is_digit(s.ptr[i]); i++, dec_digits++)
			frac = frac * 10 + (s.ptr[i] - '0');
		if (i < s.len || dec_digits < 1 || dec_digits > 2)
			return -1;
		if (dec_digits == 1)
			frac *= 10;
	}
	*cents = whole * 100 + frac;
	return 0;
}

static int hex_upper_value(const char *s, uint16_t *v)
{
	uint16_t x = 0;

	for (int i = 0; i < 4; i++) {
		int d;
		if (is_digit(s[i]))
			d = s[i] - '0';
		else if (s[i] >= 'A' && s[i] <= 'F')
			d = s[i] - 'A' + 10;
		else
			return -1;
		x = (uint16_t)((x << 4) | d);
	}
	*v = x;
	return 0;
}

static int decode_account(struct brcode_slice acc, size_t base, struct brcode_decoded *d, char *err,
			  size_t errlen)
{
	struct brcode_field sub[BRCODE_ACCOUNT_MAX / 4 + 1];
	size_t n = 0;
	int gui_ok;

	if (parse_tlvs(acc.ptr, acc.len, base, 26, sub, sizeof(sub) / sizeof(sub[0]), &n, err,
		       errlen) < 0)
		return -1;
	d->gui = find(sub, n, 0);
	d->pix_key = find(sub, n, 1);
	d->description = find(sub, n, 2);
	d->location = find(sub, n, 25);
	if (!d->gui.ptr) {
		set_err(err, errlen, "field 26.00 (GUI) is missing");
		return -1;
	}
	gui_ok = d->gui.len == strlen(BRCODE_GUI);
	for (size_t i = 0; gui_ok && i < d->gui.len; i++) {
		char c = d->gui.ptr[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		gui_ok = c == BRCODE_GUI[i];
	}
	if (!gui_ok) {
		set_err(err, errlen, "field 26.00 (GUI) is \"%.*s\", not \"%s\"", (int)d->gui.len,
			d->gui.ptr, BRCODE_GUI);
		return -1;
	}
	if (d->pix_key.ptr && d->pix_key.len > BRCODE_KEY_MAX) {
		set_err(err, errlen, "field 26.01 (Pix key) has %zu characters, over %d",
			d->pix_key.len, BRCODE_KEY_MAX);
		return -1;
	}
	if (d->location.ptr && d->location.len > BRCODE_URL_MAX) {
		set_err(err, errlen, "field 26.25 (location) has %zu characters, over %d",
			d->location.len, BRCODE_URL_MAX);
		return -1;
	}
	if (!d->pix_key.ptr && !d->location.ptr) {
		set_err(err, errlen, "field 26 holds neither a Pix key (01) nor a location (25)");
		return -1;
	}
	return 0;
}

static int decode_extra(struct brcode_slice extra, size_t base, struct brcode_decoded *d, char *err,
			size_t errlen)
{
	struct brcode_field sub[99 / 4 + 1];
	struct brcode_slice txid;
	size_t n = 0;

	if (parse_tlvs(extra.ptr, extra.len, base, 62, sub, sizeof(sub) / sizeof(sub[0]), &n, err,
		       errlen) < 0)
		return -1;
	txid = find(sub, n, 5);
	if (txid.ptr && !slice_is(txid, "***") && !is_txid(txid.ptr, txid.len)) {
		set_err(err, errlen,
			"field 62.05 (txid) \"%.*s\" is not \"***\" nor 1 to %d letters or digits",
			(int)txid.len, txid.ptr, BRCODE_TXID_MAX);
		return -1;
	}
	if (txid.ptr && !slice_is(txid, "***"))
		d->txid = txid;
	return 0;
}

static const struct {
	int id;
	const char *what;
} required_fields[] = {
    {26, "merchant account"}, {52, "merchant category code"}, {53, "currency"},
    {58, "country"},	      {59, "merchant name"},	      {60, "merchant city"},
};

int brcode_decode(const char *code, struct brcode_decoded *out, char *err, size_t errlen)
{
	struct brcode_decoded d;
	const struct brcode_field *last;
	size_t len;
	uint16_t crc;

	memset(&d, 0, sizeof(d));
	if (!code || !out) {
		set_err(err, errlen, "no code");
		return -1;
	}
	len = strnlen(code, BRCODE_MAX_LEN + 1);
	if (len == 0) {
		set_err(err, errlen, "the code is empty");
		return -1;
	}
	if (len > BRCODE_MAX_LEN) {
		set_err(err, errlen, "the code is longer than %d characters", BRCODE_MAX_LEN);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)code[i];
		if (c < 0x20 || c > 0x7E) {
			set_err(err, errlen,
				"byte 0x%02X at offset %zu is not a printable ASCII character", c,
				i);
			return -1;
		}
	}
	if (parse_tlvs(code, len, 0, -1, d.fields, BRCODE_MAX_FIELDS, &d.nfields, err, errlen) < 0)
		return -1;

	if (d.fields[0].id != 0) {
		set_err(err, errlen, "the code must start with field 00 (payload format), not %02d",
			d.fields[0].id);
		return -1;
	}
	d.payload_format = d.fields[0].value;
	if (!slice_is(d.payload_format, "01")) {
		set_err(err, errlen, "field 00 (payload format) is \"%.*s\", not \"01\"",
			(int)d.payload_format.len, d.payload_format.ptr);
		return -1;
	}
	last = &d.fields[d.nfields - 1];
	if (last->id != 63) {
		set_err(err, errlen, "the code must end with field 63 (CRC), not %02d", last->id);
		return -1;
	}
	if (last->value.len != 4 || hex_upper_value(last->value.ptr, &crc) < 0) {
		set_err(err, errlen, "field 63 (CRC) \"%.*s\" is not 4 uppercase hex digits",
			(int)last->value.len, last->value.ptr);
		return -1;
	}
	d.crc = brcode_crc16(code, (size_t)(last->value.ptr - code));
	if (d.crc != crc) {
		set_err(err, errlen, "field 63 (CRC) is %.4s but the code's CRC is %04X",
			last->value.ptr, d.crc);
		return -1;
	}

	for (size_t i = 0; i < sizeof(required_fields) / sizeof(required_fields[0]); i++) {
		if (!find(d.fields, d.nfields, required_fields[i].id).ptr) {
			set_err(err, errlen, "field %02d (%s) is missing", required_fields[i].id,
				required_fields[i].what);
			return -1;
		}
	}
	d.point_of_initiation = find(d.fields, d.nfields, 1);
	if (d.point_of_initiation.ptr && !slice_is(d.point_of_initiation, "11") &&
	    !slice_is(d.point_of_initiation, "12")) {
		set_err(err, errlen, "field 01 (point of initiation) is \"%.*s\", not 11 or 12",
			(int)d.point_of_initiation.len, d.point_of_initiation.ptr);
		return -1;
	}
	for (size_t i = 0; i < d.nfields; i++) {
		if (d.fields[i].id == 26 &&
		    decode_account(d.fields[i].value, (size_t)(d.fields[i].value.ptr - code), &d,
				   err, errlen) < 0)
			return -1;
		if (d.fields[i].id == 62 &&
		    decode_extra(d.fields[i].value, (size_t)(d.fields[i].value.ptr - code), &d, err,
				 errlen) < 0)
			return -1;
	}
	d.mcc = find(d.fields, d.nfields, 52);
	if (d.mcc.len != 4 || !is_digit(d.mcc.ptr[0]) || !is_digit(d.mcc.ptr[1]) ||
	    !is_digit(d.mcc.ptr[2]) || !is_digit(d.mcc.ptr[3])) {
		set_err(err, errlen, "field 52 (merchant category code) \"%.*s\" is not 4 digits",
			(int)d.mcc.len, d.mcc.ptr);
		return -1;
	}
	d.currency = find(d.fields, d.nfields, 53);
	if (!slice_is(d.currency, "986")) {
		set_err(err, errlen, "field 53 (currency) is \"%.*s\", not 986 (BRL)",
			(int)d.currency.len, d.currency.ptr);
		return -1;
	}
	d.amount = find(d.fields, d.nfields, 54);
	d.amount_cents = -1;
	if (d.amount.ptr && parse_amount(d.amount, &d.amount_cents) < 0) {
		set_err(err, errlen,
			"field 54 (amount) \"%.*s\" is not digits with an optional dot and 1 or 2 "
			"decimals, at most %d characters",
			(int)d.amount.len, d.amount.ptr, BRCODE_AMOUNT_MAX);
		return -1;
	}
	d.country = find(d.fields, d.nfields, 58);
	if (d.country.len != 2 || d.country.ptr[0] < 'A' || d.country.ptr[0] > 'Z' ||
	    d.country.ptr[1] < 'A' || d.country.ptr[1] > 'Z') {
		set_err(err, errlen, "field 58 (country) \"%.*s\" is not 2 uppercase letters",
			(int)d.country.len, d.country.ptr);
		return -1;
	}
	d.merchant_name = find(d.fields, d.nfields, 59);
	if (d.merchant_name.len > BRCODE_NAME_MAX) {
		set_err(err, errlen, "field 59 (merchant name) has %zu characters, over %d",
			d.merchant_name.len, BRCODE_NAME_MAX);
		return -1;
	}
	d.merchant_city = find(d.fields, d.nfields, 60);
	if (d.merchant_city.len > BRCODE_CITY_MAX) {
		set_err(err, errlen, "field 60 (merchant city) has %zu characters, over %d",
			d.merchant_city.len, BRCODE_CITY_MAX);
		return -1;
	}
	*out = d;
	return 0;
}

static void json_slice(yajl_gen g, struct brcode_slice s)
{
	if (s.ptr)
		json_strn(g, s.ptr, s.len);
	else
		json_null(g);
}

int brcode_decode_json(const char *code, yajl_gen g, char *err, size_t errlen)
{
	struct brcode_decoded d;
	char text[32];

	if (brcode_decode(code, &d, err, errlen) < 0)
		return -1;
	json_open(g);
	json_str(g, "payloadFormat");
	json_slice(g, d.payload_format);
	json_str(g, "pointOfInitiation");
	json_slice(g, d.point_of_initiation);
	json_str(g, "merchantAccount");
	json_open(g);
	json_str(g, "gui");
	json_slice(g, d.gui);
	json_str(g, "key");
	json_slice(g, d.pix_key);
	json_str(g, "description");
	json_slice(g, d.description);
	json_str(g, "url");
	json_slice(g, d.location);
	json_close(g);
	json_str(g, "mcc");
	json_slice(g, d.mcc);
	json_str(g, "currency");
	json_slice(g, d.currency);
	json_str(g, "amount");
	if (d.amount_cents >= 0) {
		snprintf(text, sizeof(text), "%lld.%02lld", d.amount_cents / 100,
			 d.amount_cents % 100);
		json_str(g, text);
	} else {
		json_null(g);
	}
	json_str(g, "amountCents");
	if (d.amount_cents >= 0)
		json_int(g, d.amount_cents);
	else
		json_null(g);
	json_str(g, "country");
	json_slice(g, d.country);
	json_str(g, "merchantName");
	json_slice(g, d.merchant_name);
	json_str(g, "merchantCity");
	json_slice(g, d.merchant_city);
	json_str(g, "txid");
	json_slice(g, d.txid);
	json_str(g, "crc");
	snprintf(text, sizeof(text), "%04X", d.crc);
	json_str(g, text);
	json_str(g, "fields");
	json_open_array(g);
	for (size_t i = 0; i < d.nfields; i++) {
		json_open(g);
		json_str(g, "id");
		snprintf(text, sizeof(text), "%02d", d.fields[i].id);
		json_str(g, text);
		json_str(g, "value");
		json_slice(g, d.fields[i].value);
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	return 0;
}
