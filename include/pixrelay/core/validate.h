/* validate: checks of the text fields that callers send (e-mail, URL, UF,
 * CEP, date, phone) and UTF-8 character counting.
 *
 * Pure functions, no I/O, no allocation, independent of the locale. Every
 * argument is borrowed. A NULL string is never valid. The predicates
 * (validate_is_*, validate_has_*) return bool; the functions with
 * out-parameters return 0 or -1 and write their outputs only on success.
 */
#ifndef PIXRELAY_VALIDATE_H
#define PIXRELAY_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#define VALIDATE_EMAIL_MAX 254
#define VALIDATE_URL_MAX 2048

/* Count the characters (code points) of the `len` bytes at `s`. Strict
 * UTF-8: overlong forms, surrogates (U+D800..U+DFFF), code points above
 * U+10FFFF, stray continuation bytes and truncated sequences are invalid.
 * A NUL byte inside the range is U+0000 and counts as one character.
 * Returns the count, or -1 when `s` is NULL or the bytes are not valid
 * UTF-8. */
long validate_utf8_chars(const char *s, size_t len);

/* A practical e-mail check (ASCII only, no quoted local parts, no comments,
 * no IP-literal domains): exactly one '@'; a local part of 1..64 characters
 * of RFC 5322 dot-atom (letters, digits, !#$%&'*+/=?^_`{|}~- and dots, but
 * no dot first, last or doubled); a domain of at least 2 labels of letters,
 * digits and hyphens, each 1..63 long, none starting or ending with a
 * hyphen, and a last label (TLD) that is not all digits; at most 254
 * characters in all. True when valid. */
bool validate_is_email(const char *s);

/* An absolute http:// or https:// URL (scheme in any case) with a host,
 * which is one of:
 * - a DNS name: dot-separated labels of letters, digits and hyphens, each
 *   1..63 long with no hyphen at either end (so no empty label and no
 *   trailing dot);
 * - a dotted-quad IPv4 address of decimal parts 0..255 without leading
 *   zeros; a name whose last label looks like a number (all digits, or 0x
 *   and hex digits) must be one, as URL parsers read such hosts as IPv4
 *   in other notations (0x7f000001, 0177.0.0.1);
 * - an IPv6 address in brackets, without zone id.
 * Then an optional :port of 1..5 digits worth 1..65535, then nothing, or a
 * path starting with '/' and/or a query starting with '?', made of RFC 3986
 * characters (unreserved, sub-delims, ':', '@', '/', '?', and '%' with two
 * hex digits). Refused: spaces, control and non-ASCII bytes, backslashes,
 * userinfo (user:pass@host), a fragment ('#'), more than 2048 characters.
 * True when valid. */
bool validate_is_http_url(const char *s);

/* A Brazilian UF: exactly 2 upper-case letters naming one of the 27 units
 * (AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC
 * SP SE TO). True when valid. */
bool validate_is_uf(const char *s);

/* A CEP: 8 digits, or 5 digits, '-', 3 digits (only the format is checked).
 * On success writes the 8 digits + NUL to `out` (9 bytes, the caller's) and
 * returns 0; returns -1 otherwise. */
int validate_cep_normalize(const char *s, char out[9]);

/* A real calendar date written exactly "YYYY-MM-DD" (Gregorian leap years,
 * years 1900..9999, nothing before or after). On success writes the year,
 * month and day (each pointer may be NULL when not wanted) and returns 0;
 * returns -1 otherwise. */
int validate_date(const char *s, int *y, int *m, int *d);

/* A phone number: an optional leading '+' followed by 8..15 digits, which
 * may be grouped with single spaces or dashes between digits and at most
 * one parenthesised group such as "(11)": e.g. "+55 (11) 94321-4321". A
 * separator may not start or end the number, be doubled, or follow '+';
 * the parentheses must pair up and hold only digits. True when valid. */
bool validate_is_phone(const char *s);

/* True when `s` holds a control character (below 0x20, or 0x7f). */
bool validate_has_control(const char *s);

/* True when `s` is empty or only spaces. */
bool validate_is_blank(const char *s);

/* True when the `n` bytes at `s` are an HTTP field name: one or more
 * RFC 9110 tchars (letters, digits and !#$%&'*+-.^_`|~). */
bool validate_header_name(const char *s, size_t n);

/* True when the `n` bytes at `s` are printable ASCII (space to '~'). */
bool validate_printable(const char *s, size_t n);

/* True when the header `name` (letter case ignored) frames a request or
 * is the sender's own to set (Host, Content-Type, Content-Length,
 * Authorization, User-Agent, Cookie, ...): never an extra a caller adds. */
bool validate_header_reserved(const char *name);

#endif
