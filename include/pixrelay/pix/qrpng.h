/* qrpng: a text (a BR Code, in practice) as a QR code image in PNG format.
 *
 * The text is encoded as-is in 8-bit (byte) mode at error-correction level M,
 * in the smallest QR version that holds it (at most 2331 bytes, version 40).
 * The image is a 1-bit grayscale PNG: black modules on white, with a white
 * quiet zone of QRPNG_QUIET_ZONE modules on every side, each module `scale`
 * pixels square.
 *
 * No I/O: the PNG is built in memory. Out of memory aborts (see mem.h).
 */
#ifndef PIXRELAY_QRPNG_H
#define PIXRELAY_QRPNG_H

#include <stddef.h>

#define QRPNG_MIN_SCALE 1
#define QRPNG_MAX_SCALE 20
#define QRPNG_QUIET_ZONE 4 /* modules of white border, as the QR standard asks */

/* Encode `text` (8-bit mode, case-sensitive, error-correction level M) as a QR code and
 * render it as a grayscale (1-bit) PNG with a quiet zone of QRPNG_QUIET_ZONE modules,
 * each module `scale` pixels square. On success returns 0 and a malloc'ed buffer in
 * *png (caller frees) with its length in *len; returns -1 when the text cannot be
 * encoded (NULL, empty, or too long for a QR code at level M), when scale is out of
 * [QRPNG_MIN_SCALE, QRPNG_MAX_SCALE], or if libpng reports an error (not expected).
 * On failure *png and *len are left untouched and nothing stays allocated.
 * Writes to memory only, never to files. `text` is borrowed. */
int qrpng_render(const char *text, int scale, unsigned char **png, size_t *len);

/* The PNG's width in pixels for `text` at `scale` (same for height):
 * (modules + 2 * QRPNG_QUIET_ZONE) * scale. Returns -1 when qrpng_render would
 * refuse the same arguments (text cannot be encoded, or scale out of range).
 * `text` is borrowed. */
int qrpng_size(const char *text, int scale);

#endif
