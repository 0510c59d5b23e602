/* Fuzz the config file parser: the input is the file given by --config, read
 * by config_load as at start. It must load or refuse with a message on
 * stderr (run the fuzzer with -close_fd_mask=2), never crash, leak or read
 * out of bounds. */
#include "pixrelay/core/config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("pixrelay-fuzz-config", MFD_CLOEXEC);
	char arg[64], prog[] = "pixrelay", **rest = NULL;
	char *argv[] = {prog, arg};
	struct config cfg;
	int nrest = 0;

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(arg, sizeof(arg), "--config=/proc/self/fd/%d", fd);
	if (config_load(&cfg, 2, argv, &rest, &nrest) == 0) {
		if (nrest != 1 || !cfg.listen || !cfg.data_dir || cfg.max_body < 64)
			__builtin_trap();
		free(rest);
		config_deinit(&cfg);
	}
	close(fd);
	return 0;
}
