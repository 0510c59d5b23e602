/* Under gcc (no libFuzzer) each fuzz target is linked with this file and
 * replays its corpus: every file named on the command line, or every file in
 * a directory named there, goes once through LLVMFuzzerTestOneInput. A crash
 * or sanitizer report fails the test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			while (d && (e = readdir(d))) {
				char path[4096];
				if (e->d_name[0] == '.')
					continue;
				snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
				if (run_file(path) == 0)
					count++;
			}
			if (d)
				closedir(d);
		} else if (run_file(argv[i]) == 0) {
			count++;
		}
	}
	printf("replayed %d inputs\n", count);
	return count > 0 ? 0 : 1;
}
