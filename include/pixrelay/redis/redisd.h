/* redisd: the embedded Redis, a private redis-server child process.
 *
 * It listens only on a unix socket inside the data directory (no TCP port),
 * with appendonly yes and appendfsync always, so an answer given after a
 * write means the write is on disk. Every file in the data directory is
 * private (0600, directories 0700): the child runs with umask 077 and the
 * modes are checked at each start (redisd_check_private). One process at a time owns a data
 * directory (an flock on <data-dir>/pixrelay.lock); the child gets SIGTERM if
 * its parent dies, so it never outlives pixrelay.
 */
#ifndef PIXRELAY_REDISD_H
#define PIXRELAY_REDISD_H

#include <event2/event.h>
#include <stddef.h>

struct redisd;

/* Expected outcomes (positive) besides 0. */
enum redisd_result {
	REDISD_IN_USE = 1, /* redisd_lock: another process owns the data directory */
};

/* The socket path of the embedded Redis of `data_dir` into out. */
void redisd_socket_path(const char *data_dir, char *out, size_t size);

/* Make `data_dir` private to this user, as redisd_lock does at every start:
 * the directory and every file and directory in it (two levels down:
 * appendonlydir/ and its files) lose their group and other permission bits,
 * with a warning in the log for each one changed (a directory made before
 * pixrelay, with the usual 0755/0644, would show the AOF, and so every
 * secret, to every user). Symbolic links inside are left alone. Returns 0,
 * or -1 with err set when something belongs to another user (unless this
 * is root), cannot be changed, or data_dir is not a directory. */
int redisd_check_private(const char *data_dir, char *err, size_t errlen);

/* Try to own `data_dir` (created if missing, mode 0700, and made private with
 * redisd_check_private). Returns 0 when this process now owns it (*lock_fd
 * written), REDISD_IN_USE when another process does (its Redis may be used
 * through the socket), -1 on error with err set. */
int redisd_lock(const char *data_dir, int *lock_fd, char *err, size_t errlen);

/* Start redis-server for `data_dir` (which the caller has locked; lock_fd is
 * taken) and wait until it answers, at most `wait_ms`. Blocking: call before
 * the loop runs. Returns the new object, or NULL with err set. */
struct redisd *redisd_start(const char *binary, const char *data_dir, int lock_fd, long wait_ms,
			    char *err, size_t errlen);

/* Watch the child from `base`: if it dies, it is started again (with backoff)
 * while the rest of pixrelay reconnects by itself. */
void redisd_supervise(struct redisd *d, struct event_base *base);

/* Stop redis-server (SIGTERM, then SIGKILL after 10 s), release the lock and
 * free `d`. Blocking. */
void redisd_stop(struct redisd *d);

/* pid of the running child, or -1. */
int redisd_pid(const struct redisd *d);

#endif
