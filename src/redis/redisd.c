/* redisd: the embedded redis-server and its data directory: the flock,
 * making the directory and its files this user's alone, the redis.conf of
 * each start, stopping a redis-server a killed pixrelay left behind,
 * forking the child and waiting for its PING, and, on the loop, starting it
 * again with backoff when it dies. Start and stop block, so they run before
 * and after the loop (api/server.c for serve, cli/cli_redis.c for the other
 * commands); the client that talks to it over its socket is redis.c. */
#include "pixrelay/redis/redisd.h"

#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/backoff.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The wait before restarting a redis-server that died: 100 ms after the
 * first death, doubled at each one after up to 6.4 s. */
#define RESTART_MIN_MS 100
#define RESTART_MAX_MS 6400

struct redisd {
	char *binary;
	char *data_dir;
	char *conf_path;
	char sock[108];
	int lock_fd;
	pid_t pid;
	struct event *sigchld;
	struct event *restart_timer;
	long restart_backoff_ms;
	int stopping;
};

void redisd_socket_path(const char *data_dir, char *out, size_t size)
{
	snprintf(out, size, "%s/redis.sock", data_dir);
}

static int mkdir_p(const char *path, mode_t mode)
{
	char *copy = mem_strdup(path);
	int rc = 0;

	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			rc = -1;
		*p = '/';
	}
	if (rc == 0 && mkdir(copy, mode) < 0 && errno != EEXIST)
		rc = -1;
	free(copy);
	return rc;
}

/* Clear the group and other bits of `path` (described by *st), which must
 * belong to this user (root may tighten anyone's). Returns 0, or -1 with err. */
static int make_private(const char *path, const struct stat *st, char *err, size_t errlen)
{
	mode_t mode = st->st_mode & 07777;

	if (st->st_uid != geteuid() && geteuid() != 0) {
		snprintf(err, errlen,
			 "%s belongs to uid %u, not to this user (uid %u); the data directory "
			 "holds secrets and must be this user's alone: chown it, or choose "
			 "another --data-dir",
			 path, (unsigned)st->st_uid, (unsigned)geteuid());
		return -1;
	}
	if (!(mode & 077))
		return 0;
	if (chmod(path, mode & 0700) < 0) {
		snprintf(err, errlen, "cannot make %s private (chmod): %s", path, strerror(errno));
		return -1;
	}
	log_warn("%s was open to other users (mode %04o); it is now %04o", path, (unsigned)mode,
		 (unsigned)(mode & 0700));
	return 0;
}

/* make_private on `dir` and everything in it, `depth` levels down (the
 * AOF directory is one). Symbolic links are left as they are. */
static int make_tree_private(const char *dir, int depth, char *err, size_t errlen)
{
	DIR *d = NULL;
	struct dirent *e;
	int rc = -1;

	if (!(d = opendir(dir))) {
		snprintf(err, errlen, "cannot read %s: %s", dir, strerror(errno));
		goto done;
	}
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (lstat(path, &st) < 0) {
			if (errno == ENOENT)
				continue;
			snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
			goto done;
		}
		if (S_ISLNK(st.st_mode))
			continue;
		if (make_private(path, &st, err, errlen) < 0)
			goto done;
		if (S_ISDIR(st.st_mode) && depth > 0 &&
		    make_tree_private(path, depth - 1, err, errlen) < 0)
			goto done;
	}
	rc = 0;
done:
	if (d)
		closedir(d);
	return rc;
}

int redisd_check_private(const char *data_dir, char *err, size_t errlen)
{
	struct stat st;

	if (stat(data_dir, &st) < 0) {
		snprintf(err, errlen, "cannot stat data directory %s: %s", data_dir,
			 strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "data directory %s is not a directory", data_dir);
		return -1;
	}
	if (make_private(data_dir, &st, err, errlen) < 0)
		return -1;
	return make_tree_private(data_dir, 2, err, errlen);
}

int redisd_lock(const char *data_dir, int *lock_fd, char *err, size_t errlen)
{
	char path[4096];
	int fd;

	if (mkdir_p(data_dir, 0700) < 0) {
		snprintf(err, errlen, "cannot create data directory %s: %s", data_dir,
			 strerror(errno));
		return -1;
	}
	if (redisd_check_private(data_dir, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/pixrelay.lock", data_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		if (errno == EWOULDBLOCK)
			return REDISD_IN_USE;
		snprintf(err, errlen, "cannot lock %s: %s", path, strerror(errno));
		return -1;
	}
	*lock_fd = fd;
	return 0;
}

/* redis.conf values are written double-quoted; refuse what would need escaping */
static bool conf_safe(const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || *s == '\n' || (unsigned char)*s < 0x20)
			return false;
	return true;
}

static int write_conf(struct redisd *d, char *err, size_t errlen)
{
	int fd = open(d->conf_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	FILE *f = NULL;

	/* an older file keeps its mode through O_TRUNC */
	if (fd >= 0 && fchmod(fd, 0600) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0 && !(f = fdopen(fd, "w")))
		close(fd);
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", d->conf_path, strerror(errno));
		return -1;
	}
	fprintf(f,
		"# written by pixrelay at each start; edits are lost\n"
		"port 0\n"
		"unixsocket \"%s\"\n"
		"unixsocketperm 700\n"
		"dir \"%s\"\n"
		"appendonly yes\n"
		"appendfsync always\n"
		"save \"\"\n"
		"hash-max-listpack-value 2048\n"
		"daemonize no\n"
		"protected-mode yes\n"
		"logfile \"%s/redis.log\"\n"
		"pidfile \"%s/redis.pid\"\n",
		d->sock, d->data_dir, d->data_dir, d->data_dir);
	if (fclose(f) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", d->conf_path, strerror(errno));
		return -1;
	}
	return 0;
}

/* A redis-server left from a pixrelay that was killed before its child saw
 * the parent die would still hold the files: stop it first. */
static void stop_stale(struct redisd *d)
{
	char path[4096], comm[64] = "";
	FILE *f;
	long pid = 0;

	snprintf(path, sizeof(path), "%s/redis.pid", d->data_dir);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid <= 1)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	if (strncmp(comm, "redis-server", 12) != 0)
		return;
	log_warn("stopping a redis-server (pid %ld) left running in %s", pid, d->data_dir);
	kill((pid_t)pid, SIGTERM);
	for (int i = 0; i < 200 && kill((pid_t)pid, 0) == 0; i++)
		usleep(50000);
}

static pid_t spawn(struct redisd *d)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* never outlive pixrelay: SIGTERM lets Redis finish its AOF */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		setpgid(0, 0); /* a Ctrl-C meant for pixrelay must not hit Redis first */
		/* the AOF holds every secret: whatever Redis creates (AOF directory
		 * and files, rewrites, log, pid file) is for this user alone */
		umask(077);
		execlp(d->binary, d->binary, d->conf_path, (char *)NULL);
		fprintf(stderr, "pixrelay: cannot run %s: %s\n", d->binary, strerror(errno));
		_exit(127);
	}
	return pid;
}

static int ping(const char *sock)
{
	struct timeval tv = {0, 200000};
	redisContext *c = redisConnectUnixWithTimeout(sock, tv);
	redisReply *r;
	int ok = 0;

	if (!c)
		return 0;
	if (!c->err) {
		redisSetTimeout(c, tv);
		r = redisCommand(c, "PING");
		ok = r && r->type == REDIS_REPLY_STATUS;
		freeReplyObject(r);
	}
	redisFree(c);
	return ok;
}

struct redisd *redisd_start(const char *binary, const char *data_dir, int lock_fd, long wait_ms,
			    char *err, size_t errlen)
{
	struct redisd *d = mem_new(struct redisd);
	char sock[4096];
	struct timespec t0, t;

	d->lock_fd = lock_fd;
	d->pid = -1;
	d->restart_backoff_ms = RESTART_MIN_MS;
	d->binary = mem_strdup(binary);
	d->data_dir = mem_strdup(data_dir);
	d->conf_path = mem_printf("%s/redis.conf", data_dir);
	redisd_socket_path(data_dir, sock, sizeof(sock));
	if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path) ||
	    strlen(sock) >= sizeof(d->sock)) {
		snprintf(err, errlen,
			 "data directory path too long for a unix socket (%zu chars): %s; "
			 "choose a shorter --data-dir",
			 strlen(sock), data_dir);
		goto fail;
	}
	if (!conf_safe(data_dir)) {
		snprintf(err, errlen, "data directory path has quotes or control characters");
		goto fail;
	}
	snprintf(d->sock, sizeof(d->sock), "%s", sock);
	stop_stale(d);
	if (write_conf(d, err, errlen) < 0)
		goto fail;
	d->pid = spawn(d);
	if (d->pid < 0) {
		snprintf(err, errlen, "fork failed: %s", strerror(errno));
		goto fail;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int status;
		long elapsed;
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = -1;
			snprintf(err, errlen, "%s exited at start (status %d); see %s/redis.log",
				 binary,
				 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
				 data_dir);
			goto fail;
		}
		if (ping(d->sock))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		elapsed = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (elapsed > wait_ms) {
			snprintf(err, errlen, "%s did not answer within %ld ms; see %s/redis.log",
				 binary, wait_ms, data_dir);
			goto fail;
		}
		usleep(20000);
	}
	log_info("embedded redis started: pid=%d socket=%s", (int)d->pid, d->sock);
	return d;
fail:
	redisd_stop(d);
	return NULL;
}

static void on_restart(evutil_socket_t fd, short what, void *arg)
{
	struct redisd *d = arg;
	struct timeval tv;

	if (d->stopping || d->pid > 0)
		return;
	d->pid = spawn(d);
	if (d->pid < 0) {
		log_error("cannot restart redis-server: %s", strerror(errno));
		tv.tv_sec = 1;
		tv.tv_usec = 0;
		evtimer_add(d->restart_timer, &tv);
		return;
	}
	log_warn("embedded redis restarted: pid=%d", (int)d->pid);
}

static void on_sigchld(evutil_socket_t fd, short what, void *arg)
{
	struct redisd *d = arg;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct timeval tv;
		if (pid != d->pid)
			continue;
		d->pid = -1;
		if (d->stopping)
			continue;
		log_error("embedded redis-server exited (status %d); restarting in %ld ms",
			  WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
			  d->restart_backoff_ms);
		tv.tv_sec = d->restart_backoff_ms / 1000;
		tv.tv_usec = (d->restart_backoff_ms % 1000) * 1000;
		evtimer_add(d->restart_timer, &tv);
		d->restart_backoff_ms = backoff_double(d->restart_backoff_ms, RESTART_MAX_MS);
	}
}

void redisd_supervise(struct redisd *d, struct event_base *base)
{
	d->sigchld = evsignal_new(base, SIGCHLD, on_sigchld, d);
	d->restart_timer = evtimer_new(base, on_restart, d);
	evsignal_add(d->sigchld, NULL);
}

int redisd_pid(const struct redisd *d)
{
	return d ? (int)d->pid : -1;
}

void redisd_stop(struct redisd *d)
{
	if (!d)
		return;
	d->stopping = 1;
	if (d->pid > 0) {
		int status;
		kill(d->pid, SIGTERM);
		for (int i = 0; i < 400; i++) {
			if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
				d->pid = -1;
				break;
			}
			usleep(25000);
		}
		if (d->pid > 0) {
			log_warn("redis-server did not stop in 10 s; killing it");
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &status, 0);
		}
	}
	if (d->sigchld)
		event_free(d->sigchld);
	if (d->restart_timer)
		event_free(d->restart_timer);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d->binary);
	free(d->data_dir);
	free(d->conf_path);
	free(d);
}
