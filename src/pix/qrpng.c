/* qrpng: a BR Code drawn as a QR code PNG in memory: libqrencode makes the
 * symbol, libpng writes the image one row of pixels at a time into a
 * growing buffer. libpng reports errors by longjmp, so emit() alone calls
 * setjmp, and it owns nothing: every buffer is made before it and freed
 * after. GET /v1/qrcode/{id} serves it (api/api_charges.c); the code itself
 * is brcode.c's. No file or network I/O. */
#include "pixrelay/pix/qrpng.h"

#include "pixrelay/core/mem.h"

#include <errno.h>
#include <limits.h>
#include <png.h>
#include <qrencode.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The PNG being written: a buffer that grows as libpng hands over bytes. */
struct pngbuf {
	unsigned char *data;
	size_t len, cap;
};

/* The QR symbol for `text`, or NULL when it cannot be encoded. The caller
 * frees it with QRcode_free(). */
static QRcode *encode(const char *text)
{
	QRcode *qr;
	size_t n;

	if (!text)
		return NULL;
	n = strlen(text);
	if (n == 0 || n > INT_MAX)
		return NULL;
	errno = 0;
	qr = QRcode_encodeData((int)n, (const unsigned char *)text, 0, QR_ECLEVEL_M);
	if (!qr && errno == ENOMEM)
		mem_oom(__FILE__, __LINE__);
	return qr;
}

static bool scale_ok(int scale)
{
	return scale >= QRPNG_MIN_SCALE && scale <= QRPNG_MAX_SCALE;
}

/* Side in pixels; at most (177 + 8) * 20, so an int is plenty. */
static int side(const QRcode *qr, int scale)
{
	return (qr->width + 2 * QRPNG_QUIET_ZONE) * scale;
}

static void on_write(png_structp png, png_bytep data, size_t n)
{
	struct pngbuf *b = png_get_io_ptr(png);

	if (n > SIZE_MAX / 2 - b->len)
		png_error(png, "PNG too large");
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		b->data = mem_realloc(b->data, cap);
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, n);
	b->len += n;
}

/* Nothing to flush in memory; without this libpng would fflush() the io
 * pointer as if it were a FILE. */
static void on_flush(png_structp png)
{
}

/* A pure module prints nothing: errors go back to the setjmp in emit(). */
static void on_error(png_structp png, png_const_charp msg)
{
	png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
}

/* Set pixels [from, from + n) of a 1-bit row to white (bit set = white). */
static void row_white(unsigned char *row, int from, int n)
{
	for (int x = from; x < from + n; x++)
		row[x / 8] |= (unsigned char)(0x80 >> (x % 8));
}

/* Write the image through `png`. This is the only function that calls
 * setjmp, and it owns nothing: every resource was made by the caller before
 * and is freed by the caller after, so a longjmp back here loses nothing and
 * no local changed after setjmp is read again (hence no volatile). `row` has
 * room for one row of pixels. Returns 0, or -1 when libpng raised an error. */
static int emit(png_structp png, png_infop info, const QRcode *qr, int scale, unsigned char *row)
{
	int w = side(qr, scale);
	size_t rowbytes = ((size_t)w + 7) / 8;

	if (setjmp(png_jmpbuf(png)))
		return -1;
	png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)w, 1, PNG_COLOR_TYPE_GRAY,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
	png_write_info(png, info);

	memset(row, 0xff, rowbytes);
	for (int i = 0; i < QRPNG_QUIET_ZONE * scale; i++)
		png_write_row(png, row);
	for (int y = 0; y < qr->width; y++) {
		const unsigned char *mod = qr->data + (size_t)y * (size_t)qr->width;

		memset(row, 0, rowbytes);
		row_white(row, 0, QRPNG_QUIET_ZONE * scale);
		for (int x = 0; x < qr->width; x++) {
			if (!(mod[x] & 1))
				row_white(row, (QRPNG_QUIET_ZONE + x) * scale, scale);
		}
		row_white(row, (QRPNG_QUIET_ZONE + qr->width) * scale, QRPNG_QUIET_ZONE * scale);
		for (int i = 0; i < scale; i++)
			png_write_row(png, row);
	}
	memset(row, 0xff, rowbytes);
	for (int i = 0; i < QRPNG_QUIET_ZONE * scale; i++)
		png_write_row(png, row);

	png_write_end(png, info);
	return 0;
}

int qrpng_render(const char *text, int scale, unsigned char **png, size_t *len)
{
	QRcode *qr = NULL;
	png_structp wr = NULL;
	png_infop info = NULL;
	struct pngbuf *out = NULL;
	unsigned char *row = NULL;
	int rc = -1;

	if (!scale_ok(scale))
		goto done;
	qr = encode(text);
	if (!qr)
		goto done;

	wr = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, on_error, on_warning);
	if (!wr)
		goto done;
	info = png_create_info_struct(wr);
	if (!info)
		goto done;
	/* On the heap, not on the stack, so its contents are well defined after a
	 * longjmp out of on_write. */
	out = mem_new(struct pngbuf);
	png_set_write_fn(wr, out, on_write, on_flush);
	row = mem_alloc(((size_t)side(qr, scale) + 7) / 8);

	if (emit(wr, info, qr, scale, row) < 0)
		goto done;

	*png = out->data;
	*len = out->len;
	out->data = NULL;
	rc = 0;
done:
	if (wr)
		png_destroy_write_struct(&wr, info ? &info : NULL);
	if (out)
		free(out->data);
	free(out);
	free(row);
	if (qr)
		QRcode_free(qr);
	return rc;
}

int qrpng_size(const char *text, int scale)
{
	QRcode *qr;
	int n;

	if (!scale_ok(scale))
		return -1;
	qr = encode(text);
	if (!qr)
		return -1;
	n = side(qr, scale);
	QRcode_free(qr);
	return n;
}
