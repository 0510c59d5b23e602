/* log: one line per event on stderr, `time level message key=value ...`.
 *
 * Callers never pass secrets (API keys, webhook secrets, document contents);
 * values are escaped so a hostile string cannot forge a second log line.
 */
#ifndef PIXRELAY_LOG_H
#define PIXRELAY_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 };

void log_set_level(enum log_level level);
/* Whether a line of `level` is written: to skip preparing one that is not. */
bool log_on(enum log_level level);
/* Buffer log lines (up to 64 KiB) instead of writing each at once; the
 * caller then calls log_flush() at least every 100 ms and before exiting.
 * The server does, so that a busy process spends one write per turn of its
 * loop on logging instead of one per line. */
void log_buffered(void);
void log_flush(void);
/* Parse "debug", "info", "warn" or "error"; returns 0 or -1. */
int log_parse_level(const char *s, enum log_level *out);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append `s` to `buf` (of `size` bytes, NUL-terminated) with control
 * characters, quotes and backslashes escaped; truncates rather than overflows. */
void log_escape(char *buf, size_t size, const char *s);

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
