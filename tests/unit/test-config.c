#include "pixrelay/core/config.h"

#include "check.h"

#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	struct config c;
	char **rest = NULL;
	int nrest = 0;
	char path[] = "/tmp/pixrelay-config-XXXXXX";
	int fd;
	FILE *f;

	unsetenv("PIXRELAY_CONFIG");
	unsetenv("PIXRELAY_LISTEN");
	unsetenv("PIXRELAY_MAX_BODY");
	setenv("HOME", "/home/u", 1);
	unsetenv("XDG_DATA_HOME");
	{
		char *argv[] = {"serve", NULL};
		CHECK_INT(config_load(&c, 1, argv, &rest, &nrest), 0);
		CHECK_STR(c.listen, "127.0.0.1:8080");
		CHECK_STR(c.base_url, "http://127.0.0.1:8080/v1");
		CHECK_STR(c.data_dir, "/home/u/.local/share/pixrelay");
		CHECK_INT(c.max_body, 1048576);
		CHECK_INT(nrest, 1);
		CHECK_STR(rest[0], "serve");
		free(rest);
		config_deinit(&c);
	}

	/* a file under the environment under the flags */
	fd = mkstemp(path);
	f = fdopen(fd, "w");
	fprintf(f, "# comment\nlisten = 0.0.0.0:9000\nmax-body=2048\nbase-url = "
		   "https://pix.example/v1/\n");
	fclose(f);
	setenv("PIXRELAY_MAX_BODY", "4096", 1);
	{
		char *argv[] = {"--config", path, "keys", "--listen=127.0.0.1:1", "list", NULL};
		CHECK_INT(config_load(&c, 5, argv, &rest, &nrest), 0);
		CHECK_STR(c.listen, "127.0.0.1:1");
		CHECK_INT(c.max_body, 4096);
		CHECK_STR(c.base_url, "https://pix.example/v1");
		CHECK_INT(nrest, 2);
		CHECK_STR(rest[0], "keys");
		CHECK_STR(rest[1], "list");
		free(rest);
		config_deinit(&c);
	}
	unsetenv("PIXRELAY_MAX_BODY");
	{
		char *argv[] = {"--config", path, NULL};
		CHECK_INT(config_load(&c, 2, argv, &rest, &nrest), 0);
		CHECK_INT(c.max_body, 2048);
		CHECK_STR(c.listen, "0.0.0.0:9000");
		free(rest);
		config_deinit(&c);
	}
	{
		char *argv[] = {"--max-body", "-5", NULL};
		CHECK_INT(config_load(&c, 2, argv, &rest, &nrest), -1);
	}
	{
		char *argv[] = {"--listen", NULL};
		CHECK_INT(config_load(&c, 1, argv, &rest, &nrest), -1);
	}
	f = fopen(path, "w");
	fprintf(f, "no-such-setting = 1\n");
	fclose(f);
	{
		char *argv[] = {"--config", path, NULL};
		CHECK_INT(config_load(&c, 2, argv, &rest, &nrest), -1);
	}
	/* a long comment is refused, not read in pieces whose last one would
	 * become a setting */
	f = fopen(path, "w");
	fprintf(f, "# ");
	for (int i = 0; i < 4093; i++)
		fputc('a', f);
	fprintf(f, "prefix = evil:\n");
	fclose(f);
	{
		char *argv[] = {"--config", path, NULL};
		CHECK_INT(config_load(&c, 2, argv, &rest, &nrest), -1);
	}
	/* the longest line allowed: 4095 characters and its newline */
	f = fopen(path, "w");
	fprintf(f, "base-url = http://h/");
	for (int i = 0; i < 4095 - 20; i++)
		fputc('a', f);
	fprintf(f, "\n");
	fclose(f);
	{
		char *argv[] = {"--config", path, NULL};
		CHECK_INT(config_load(&c, 2, argv, &rest, &nrest), 0);
		CHECK_INT(strlen(c.base_url), 4095 - 11);
		free(rest);
		config_deinit(&c);
	}
	/* a NUL byte does not hide the rest of a line */
	f = fopen(path, "w");
	fwrite("prefix = a\0b\n", 1, 13, f);
	fclose(f);
	{
		char *argv[] = {"--config", path, NULL};
		CHECK_INT(config_load(&c, 2, argv, &rest, &nrest), -1);
	}
	/* a prefix that would choose the Cluster slot, or not fit a key name */
	{
		char longest[CONFIG_PREFIX_MAX + 2];
		const char *bad[] = {
		    "--prefix=app{x}:", "--prefix=a b:", "--prefix=caf\xc3\xa9:", NULL};
		for (int i = 0; bad[i]; i++) {
			char *argv[] = {(char *)bad[i], NULL};
			CHECK_INT(config_load(&c, 1, argv, &rest, &nrest), -1);
		}
		memset(longest, 'p', sizeof(longest));
		longest[CONFIG_PREFIX_MAX] = '\0';
		{
			char *argv[] = {"--prefix", longest, NULL};
			CHECK_INT(config_load(&c, 2, argv, &rest, &nrest), 0);
			CHECK_INT(strlen(c.prefix), CONFIG_PREFIX_MAX);
			free(rest);
			config_deinit(&c);
		}
		longest[CONFIG_PREFIX_MAX] = 'p';
		longest[CONFIG_PREFIX_MAX + 1] = '\0';
		{
			char *argv[] = {"--prefix", longest, NULL};
			CHECK_INT(config_load(&c, 2, argv, &rest, &nrest), -1);
		}
	}
	unlink(path);
	return check_finish("config");
}
