/* Unit tests for qrpng: the PNG's header and pixels, a round trip through a
 * real QR decoder (zbarimg), and the arguments that are refused. */
#include "pixrelay/pix/qrpng.h"
#include "check.h"

#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const brcode =
    "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-42665544000052040000530398658"
    "02BR5913Fulano de Tal6008BRASILIA62070503***63041D3D";

/* 137 bytes need version 8 at level M (version 7 holds 122): 49 modules. */
#define BRCODE_MODULES 49

static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Check the signature and the IHDR chunk (which must come first) of `png`:
 * a `side` x `side`, 1-bit grayscale image. */
static void check_header(const unsigned char *png, size_t len, int side)
{
	CHECK(len > 33);
	if (len <= 33)
		return;
	CHECK(memcmp(png, png_sig, sizeof(png_sig)) == 0);
	CHECK_INT(be32(png + 8), 13);
	CHECK(memcmp(png + 12, "IHDR", 4) == 0);
	CHECK_INT(be32(png + 16), side);
	CHECK_INT(be32(png + 20), side);
	CHECK_INT(png[24], 1); /* bit depth */
	CHECK_INT(png[25], 0); /* colour type: grayscale */
}

/* Decode `png` to 8-bit gray pixels with libpng; NULL on failure. The caller
 * frees the result; its side is written to *side. */
static unsigned char *decode_gray(const unsigned char *png, size_t len, int *side)
{
	png_image img;
	unsigned char *px = NULL;

	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&img, png, len))
		return NULL;
	img.format = PNG_FORMAT_GRAY;
	px = malloc(PNG_IMAGE_SIZE(img));
	if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
		png_image_free(&img);
		free(px);
		return NULL;
	}
	*side = (int)img.width;
	return px;
}

/* The quiet zone is white all round, the top-left finder pattern starts
 * right after it (black), and its white ring is one module further in. */
static void check_pixels(const char *text, int scale)
{
	unsigned char *png = NULL, *px;
	size_t len = 0;
	int side = 0, q = QRPNG_QUIET_ZONE * scale;
	int grey = 0, border_dark = 0, dark = 0, light = 0;

	CHECK_INT(qrpng_render(text, scale, &png, &len), 0);
	px = png ? decode_gray(png, len, &side) : NULL;
	CHECK(px != NULL);
	if (!px)
		goto done;
	CHECK_INT(side, qrpng_size(text, scale));
	for (int y = 0; y < side; y++) {
		for (int x = 0; x < side; x++) {
			unsigned char v = px[(size_t)y * (size_t)side + (size_t)x];
			int border = x < q || y < q || x >= side - q || y >= side - q;

			if (v != 0 && v != 255)
				grey++;
			else if (border && v != 255)
				border_dark++;
			else if (!border && v == 0)
				dark++;
			else if (!border)
				light++;
		}
	}
	CHECK_INT(grey, 0);
	CHECK_INT(border_dark, 0);
	/* the finder's outer ring: black from its first pixel to 7 modules on */
	CHECK_INT(px[(size_t)q * (size_t)side + (size_t)q], 0);
	CHECK_INT(px[(size_t)(q + 7 * scale - 1) * (size_t)side + (size_t)(q + 7 * scale - 1)], 0);
	/* its white ring, one module in */
	CHECK_INT(px[(size_t)(q + scale) * (size_t)side + (size_t)(q + scale)], 255);
	/* its 3x3 black centre */
	CHECK_INT(px[(size_t)(q + 3 * scale) * (size_t)side + (size_t)(q + 3 * scale)], 0);
	/* a real symbol is roughly half dark */
	CHECK(dark > (dark + light) / 4 && light > (dark + light) / 4);
done:
	free(px);
	free(png);
}

/* Render `text` at `scale`, write it to a temp file, decode it with zbarimg
 * and return what it read (trailing newline stripped), or NULL. The caller
 * frees the result. */
static char *zbar_roundtrip(const char *text, int scale)
{
	const char *tmp = getenv("TMPDIR");
	char *path = NULL, *cmd = NULL, *got = NULL;
	unsigned char *png = NULL;
	size_t len = 0, n = 0, cap = 8192;
	FILE *p = NULL;
	int fd = -1, status;

	if (qrpng_render(text, scale, &png, &len) != 0)
		goto done;
	check_header(png, len, qrpng_size(text, scale));
	if (asprintf(&path, "%s/test-qrpng-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		path = NULL;
		goto done;
	}
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		goto done;
	CHECK(write(fd, png, len) == (ssize_t)len);
	CHECK_INT(close(fd), 0);
	if (asprintf(&cmd, "zbarimg --raw -q --nodbus '%s'", path) < 0) {
		cmd = NULL;
		goto done;
	}
	p = popen(cmd, "r");
	CHECK(p != NULL);
	if (!p)
		goto done;
	got = malloc(cap);
	while (got && n < cap - 1) {
		size_t r = fread(got + n, 1, cap - 1 - n, p);
		if (r == 0)
			break;
		n += r;
	}
	status = pclose(p);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!got)
		goto done;
	got[n] = '\0';
	if (n > 0 && got[n - 1] == '\n')
		got[n - 1] = '\0';
done:
	if (path) {
		if (fd >= 0)
			CHECK_INT(unlink(path), 0);
		free(path);
	}
	free(cmd);
	free(png);
	return got;
}

static void test_brcode_decodes(void)
{
	char *got;

	got = zbar_roundtrip(brcode, 4);
	CHECK_STR(got, brcode);
	free(got);

	/* lower case survives (byte mode, not the upper-case-only alphanumeric mode) */
	got = zbar_roundtrip("Pix Chave: fulano@example.com", 3);
	CHECK_STR(got, "Pix Chave: fulano@example.com");
	free(got);
}

static void test_size(void)
{
	int s1 = qrpng_size(brcode, 1), s8 = qrpng_size(brcode, 8);
	unsigned char *png = NULL;
	size_t len = 0;

	CHECK_INT(s1, BRCODE_MODULES + 2 * QRPNG_QUIET_ZONE);
	CHECK_INT(s8, 8 * s1);
	CHECK_INT(qrpng_size(brcode, QRPNG_MAX_SCALE), QRPNG_MAX_SCALE * s1);
	/* a one-byte text fits version 1 (21 modules) */
	CHECK_INT(qrpng_size("x", 1), 21 + 2 * QRPNG_QUIET_ZONE);

	CHECK_INT(qrpng_render(brcode, 1, &png, &len), 0);
	check_header(png, len, s1);
	free(png);
	png = NULL;
	CHECK_INT(qrpng_render(brcode, 8, &png, &len), 0);
	check_header(png, len, s8);
	free(png);
	png = NULL;
	CHECK_INT(qrpng_render(brcode, QRPNG_MAX_SCALE, &png, &len), 0);
	check_header(png, len, QRPNG_MAX_SCALE * s1);
	free(png);
}

static void test_pixels(void)
{
	check_pixels(brcode, 1);
	check_pixels(brcode, 3);
	check_pixels("x", 2);
}

/* A refused call returns -1 and leaves the out-parameters alone. */
static void check_refused(const char *text, int scale)
{
	unsigned char sentinel = 0, *png = &sentinel;
	size_t len = 12345;

	CHECK_INT(qrpng_render(text, scale, &png, &len), -1);
	CHECK(png == &sentinel);
	CHECK_INT(len, 12345);
	CHECK_INT(qrpng_size(text, scale), -1);
}

static void test_refused(void)
{
	char *big = malloc(5001);
	unsigned char *png = NULL;
	size_t len = 0;

	check_refused(brcode, 0);
	check_refused(brcode, QRPNG_MIN_SCALE - 1);
	check_refused(brcode, QRPNG_MAX_SCALE + 1);
	check_refused(brcode, 21);
	check_refused(brcode, -1);
	check_refused("", 4);
	check_refused(NULL, 4);

	CHECK(big != NULL);
	if (!big)
		return;
	memset(big, 'a', 5000);
	big[5000] = '\0';
	check_refused(big, 4);

	/* the limit is exact: version 40 at level M holds 2331 bytes */
	big[2332] = '\0';
	check_refused(big, 1);
	big[2331] = '\0';
	CHECK_INT(qrpng_size(big, 1), 177 + 2 * QRPNG_QUIET_ZONE);
	CHECK_INT(qrpng_render(big, 1, &png, &len), 0);
	check_header(png, len, 177 + 2 * QRPNG_QUIET_ZONE);
	free(png);
	free(big);
}

int main(void)
{
	test_brcode_decodes();
	test_size();
	test_pixels();
	test_refused();
	return check_finish("qrpng");
}
