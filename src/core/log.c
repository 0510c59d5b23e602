/* log: the log line, `time level message` on stderr, stamped in UTC to the
 * millisecond and cut at 4 KiB. A newline inside a message becomes a space,
 * so a hostile value cannot forge a second line; callers quote values with
 * log_escape. The level is one setting for the process; log_buffered makes
 * stderr fully buffered, and serve flushes it from a timer (api/server.c).
 * The line of each HTTP request is written in http/reply.c. */
#include "pixrelay/core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static enum log_level min_level = LOG_INFO;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

static char stderr_buf[1 << 16];

void log_buffered(void)
{
	setvbuf(stderr, stderr_buf, _IOFBF, sizeof(stderr_buf));
}

void log_flush(void)
{
	fflush(stderr);
}

void log_set_level(enum log_level level)
{
	min_level = level;
}

bool log_on(enum log_level level)
{
	return level >= min_level;
}

int log_parse_level(const char *s, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[4096];
	struct timeval tv;
	struct tm tm;
	size_t n;
	va_list ap;

	if (level < min_level)
		return;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03dZ %s ", (int)(tv.tv_usec / 1000),
			      level_names[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* a newline inside a message would forge a second entry */
	for (char *p = line; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	fprintf(stderr, "%s\n", line);
}

void log_escape(char *buf, size_t size, const char *s)
{
	size_t n = strlen(buf);

	for (; *s && n + 5 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
		} else {
			buf[n++] = (char)c;
		}
	}
	buf[n] = '\0';
}
