/* taxid: Brazilian tax identifiers, CPF (people) and CNPJ (companies).
 *
 * Pure functions, no I/O. Input is a NUL-terminated string as the user typed
 * it; output is the normalised form that is stored and compared: CPF as 11
 * digits, CNPJ as 14 upper-case characters (alphanumeric CNPJs exist since
 * July 2026: the first 12 positions are [0-9A-Z], the last two are digits).
 * Leading or trailing blanks, partial punctuation and any other character
 * make the input invalid.
 */
#ifndef PIXRELAY_TAXID_H
#define PIXRELAY_TAXID_H

#define TAXID_CPF_LEN 11
#define TAXID_CNPJ_LEN 14

enum taxid_kind { TAXID_CPF = 1, TAXID_CNPJ = 2 };

/* Normalise a CPF: accept 11 digits, or the punctuated form 123.456.789-09
 * (all of the dots and the dash in their usual places, or none at all).
 * The check digits must be right; all-equal digits (111.111.111-11) are
 * refused. On success writes 11 digits + NUL to `out` and returns 0; returns
 * -1 when `in` is NULL or invalid, and then `out` is left untouched.
 * `in` is borrowed; `out` is the caller's buffer of 12 bytes. */
int taxid_cpf_normalize(const char *in, char out[12]);

/* Normalise a CNPJ, numeric or alphanumeric: 14 characters, the first 12
 * [0-9A-Z] (lower-case letters accepted and upper-cased), the last 2 digits,
 * either bare or with all of the usual punctuation 12.345.678/0001-95.
 * The check digits must be right (each character is worth its ASCII code
 * minus 48); all zeros is refused. On success writes 14 characters + NUL to
 * `out` and returns 0; returns -1 when `in` is NULL or invalid, and then
 * `out` is left untouched. `in` is borrowed; `out` holds 15 bytes. */
int taxid_cnpj_normalize(const char *in, char out[15]);

/* Normalise a CPF or a CNPJ, whichever `in` is (the two forms never
 * overlap). On success writes the normalised form (11 or 14 characters +
 * NUL) to `out`, the kind to `*kind` (may be NULL when not wanted) and
 * returns 0; returns -1 when `in` is neither, writing nothing. */
int taxid_normalize(const char *in, char out[15], enum taxid_kind *kind);

#endif
