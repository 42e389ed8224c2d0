// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_sysfuzz: random syscall sequences on DLCP sockets.
 *
 *   dlcp_sysfuzz [--seed S] [--count N] [--threads T] [--time SECONDS] [-v]
 *
 * Run as root in a fresh network namespace (lo up; selftests/dlcp_fuzz.sh
 * makes one, with small net.dlcp.wmem/rmem/max_msg_size and a short
 * msg_timeout_ms). T threads (default 4) share a table of DLCP sockets
 * (some bound to 127.0.0.1 ports the others send to, some not) and make N
 * syscalls in all: socket (also with odd protocols), bind, connect (also
 * AF_UNSPEC), sendmsg/sendto (sizes 0, 1, ..., a few MiB, over
 * max_msg_size; random flags; valid and invalid DLCP_CMSG_SEND, _CRITICAL,
 * _SEG_CLASS and random control messages), recvmsg (MSG_ERRQUEUE,
 * MSG_PEEK, MSG_TRUNC, MSG_WAITALL, MSG_DONTWAIT, odd flags, small and
 * missing buffers), setsockopt/getsockopt at SOL_DLCP, SOL_SOCKET and
 * SOL_IP and at random levels with random option numbers, lengths and
 * values, poll, shutdown, ioctl, listen/accept, getsockname/getpeername,
 * close and reopen. Every socket has 10 ms SO_SNDTIMEO/SO_RCVTIMEO, so
 * that no call blocks for long. A peer thread receives on 127.0.0.1:7500
 * and checks the messages that arrive whole.
 *
 * Every errno is checked against a per-call allow-list (dlcp_sock.c and
 * the ERRORS of docs/man/dlcp.7, plus the generic socket layer's for
 * SOL_SOCKET/SOL_IP and foreign levels). At the end it prints the count of
 * every (call, result) pair; any errno outside the list (or a message the
 * peer got corrupted) makes the exit status 1.
 *
 * Deterministic for a seed and one thread; with several threads the
 * interleaving varies, the per-thread sequences do not.
 *
 * No call may block for long: the 10 ms timeouts bound sendmsg/recvmsg,
 * and close() waits at most until its messages are delivered or failed
 * (dlcp(7); net.dlcp.msg_timeout_ms without an answer fails one), at once
 * with SO_LINGER 0, and at most l_linger with SO_LINGER. A watchdog thread
 * checks every thread's current call (workers, and the main thread's
 * closes at the end): one that is still in it after --stuck SECONDS
 * (default 30) is reported with its kernel stack (/proc/self/task/TID/
 * stack, wchan), the namespace's /proc/net/dlcp/sockets, and interrupted
 * with SIGUSR1 (close() gives up waiting on a signal); the run then fails,
 * and ends at once (exit 1) if the call is still there after twice that.
 * The longest close() of each kind is printed. Without this a blocked call
 * showed only as the whole run being killed by its time bound, with no
 * summary.
 *
 * This file is the driver: the allow-lists and the accounting of results,
 * the watchdog, the worker and peer threads, main() and the summary. The
 * random calls themselves are made by sysfuzz_calls.c; sysfuzz.h has what
 * the two share.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/dlcp.h>

#include "sysfuzz.h"

#define NR_ERRNO	520

const char *const call_name[] = {
	"socket", "socket-odd", "bind", "connect", "sendmsg", "recvmsg",
	"recvmsg-errqueue", "setsockopt-dlcp", "getsockopt-dlcp",
	"setsockopt-socket", "getsockopt-socket", "setsockopt-ip",
	"getsockopt-ip", "sockopt-other-level", "poll", "shutdown", "ioctl",
	"listen-accept", "getsockname-peername", "close",
};

#ifndef ENOIOCTLCMD
#define ENOIOCTLCMD 515	/* kernel-internal: must never reach userspace */
#endif

/* Generic socket-layer errnos for options at SOL_SOCKET/SOL_IP. */
#define GENERIC_OPT EINVAL, ENOPROTOOPT, EFAULT, EPERM, ENOMEM, EOPNOTSUPP, \
	ENODEV, ENOBUFS, EBUSY, ENOENT, ERANGE, EDOM, EACCES, EADDRNOTAVAIL, \
	ENOTCONN, ENXIO, EADDRINUSE, ENOSPC, ENODATA /* SO_PEERGROUPS, no peer */

/*
 * The allow-lists, 0-terminated. Where they come from:
 *  socket-odd: the inet layer for protocols/types DLCP does not take.
 *  bind: dlcp_bind() (EINVAL, EAFNOSUPPORT, EADDRNOTAVAIL, EACCES,
 *	EADDRINUSE).
 *  connect: dlcp_check_sin(), routing (ENETUNREACH, EHOSTUNREACH, EINVAL;
 *	ENODEV when SO_BINDTODEVICE/SO_BINDTOIFINDEX named a device that
 *	does not exist), EACCES for broadcast/multicast, autobind
 *	(EADDRINUSE).
 *  sendmsg: dlcp_sendmsg(), routing as for connect, dlcp(7) ERRORS.
 *  recvmsg: dlcp_recvmsg(), skb_recv_datagram (EAGAIN), dlcp(7).
 *  sockopts at SOL_DLCP: dlcp_[gs]etsockopt(); ENODEV from DLCP_PATHS
 *	naming an interface that does not exist.
 *  setsockopt at SOL_IP: EMSGSIZE from IP_IPSEC_POLICY and IP_XFRM_POLICY
 *	(xfrm_user_policy()) for a length of 0 or over a page.
 */
static const int allow[__C_MAX][32] = {
	[C_SOCKET] = { ENOMEM, ENOBUFS, EMFILE, 0 },
	[C_SOCKET_ODD] = { EPROTONOSUPPORT, ESOCKTNOSUPPORT, EINVAL,
			   EAFNOSUPPORT, EPERM, ENOMEM, ENOBUFS, EMFILE, 0 },
	[C_BIND] = { EINVAL, EAFNOSUPPORT, EADDRNOTAVAIL, EACCES, EADDRINUSE,
		     0 },
	[C_CONNECT] = { EINVAL, EAFNOSUPPORT, EACCES, ENETUNREACH,
			EHOSTUNREACH, EADDRINUSE, ENODEV, 0 },
	[C_SENDMSG] = { EINVAL, EMSGSIZE, EOPNOTSUPP, EDESTADDRREQ,
			EAFNOSUPPORT, EACCES, EAGAIN, EPIPE, ENOMEM,
			ENETUNREACH, EHOSTUNREACH, EPERM, EINTR, EADDRINUSE,
			ENODEV, ENOBUFS, 0 },
	[C_RECVMSG] = { EAGAIN, EOPNOTSUPP, ENOTCONN, EINTR, 0 },
	[C_RECV_ERRQ] = { EAGAIN, 0 },
	[C_SETSOCKOPT_DLCP] = { EINVAL, ENOPROTOOPT, EPERM, EFAULT, ENODEV,
				0 },
	[C_GETSOCKOPT_DLCP] = { EINVAL, ENOPROTOOPT, EFAULT, 0 },
	[C_SETSOCKOPT_SOCK] = { GENERIC_OPT, 0 },
	[C_GETSOCKOPT_SOCK] = { GENERIC_OPT, 0 },
	[C_SETSOCKOPT_IP] = { GENERIC_OPT, EMSGSIZE, 0 },
	[C_GETSOCKOPT_IP] = { GENERIC_OPT, 0 },
	[C_SOCKOPT_OTHER] = { ENOPROTOOPT, EINVAL, EOPNOTSUPP, 0 },
	[C_POLL] = { 0 },
	[C_SHUTDOWN] = { EINVAL, ENOTCONN, 0 },
	/* SIOCGSTAMP without a timestamp yet: ENOENT (sock_gettstamp) */
	[C_IOCTL] = { ENOTTY, EINVAL, EOPNOTSUPP, ENODEV, EFAULT, ENOENT, 0 },
	[C_LISTEN_ACCEPT] = { EOPNOTSUPP, EINVAL, 0 },
	[C_GETNAME] = { ENOTCONN, 0 },
	[C_CLOSE] = { 0 },
};

static struct {
	uint64_t seed;
	unsigned long count;
	int threads, time, verbose, stuck;
} o = { .seed = 1, .count = 20000, .threads = 4, .time = 300, .stuck = 30 };

/*
 * The call each thread is in (for the watchdog): its name and since when
 * (CLOCK_MONOTONIC ms, 0 when in none). Slot 0 is the main thread.
 */
#define NR_TRACK	65
static struct track {
	atomic_long since_ms;
	const char *_Atomic what;
	atomic_int reported;
	pid_t tid;
	pthread_t th;
} track[NR_TRACK];
static __thread struct track *me;
static atomic_ulong stuck_calls;
/* longest close() (ms): [0] SO_LINGER 0, [1] SO_LINGER > 0, [2] plain */
static atomic_long close_max_ms[3];

/* hist[call][errno]; [call][0] counts successes */
static atomic_ulong hist[__C_MAX][NR_ERRNO];
static atomic_ulong done_calls, bad_calls;
static atomic_int stop;
uint8_t *pattern;
int max_msg = 4 << 20;

struct slot slots[NR_SLOTS];

/* ------------------------------------------------------------ result */

void account(enum call c, long ret, int err, const char *what)
{
	unsigned int i;

	atomic_fetch_add(&done_calls, 1);
	if (ret >= 0) {
		atomic_fetch_add(&hist[c][0], 1);
		return;
	}
	atomic_fetch_add(&hist[c][err > 0 && err < NR_ERRNO ? err : 0], 1);
	for (i = 0; allow[c][i]; i++)
		if (allow[c][i] == err)
			return;
	atomic_fetch_add(&bad_calls, 1);
	fprintf(stderr, "UNEXPECTED: %s (%s): errno %d %s\n", call_name[c],
		what ? what : "", err, strerror(err));
}

static long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

void call_begin(const char *what)
{
	if (!me)
		return;
	atomic_store(&me->what, what);
	atomic_store(&me->since_ms, mono_ms());
}

long call_end(void)
{
	long t;

	if (!me)
		return 0;
	t = mono_ms() - atomic_load(&me->since_ms);
	atomic_store(&me->since_ms, 0);
	return t;
}

static void max_ms(atomic_long *m, long v)
{
	long cur = atomic_load(m);

	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

/* close() with the SO_LINGER setting @linger (-1: none), timed */
int timed_close(int fd, int linger)
{
	long t;
	int rc;

	if (linger >= 0) {
		struct linger lg = { 1, linger };

		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	call_begin("close");
	rc = close(fd);
	t = call_end();
	max_ms(&close_max_ms[linger < 0 ? 2 : linger > 0], t);
	return rc;
}

static void dump_file(const char *path, const char *prefix)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("%s%s", prefix, line);
	fclose(f);
}

static void on_sigusr1(int sig)
{
	(void)sig;	/* only interrupts the blocked call */
}

/* Watchdog: report and interrupt a call stuck for o.stuck seconds. */
static void *watchdog_main(void *arg)
{
	(void)arg;
	for (;;) {
		long t = mono_ms();
		int i;

		for (i = 0; i < NR_TRACK; i++) {
			struct track *k = &track[i];
			long since = atomic_load(&k->since_ms);
			char path[96];

			if (!k->tid || !since || t - since < o.stuck * 1000L)
				continue;
			if (!atomic_exchange(&k->reported, 1)) {
				atomic_fetch_add(&stuck_calls, 1);
				printf("STUCK: thread %d in %s for %.1f s "
				       "(more than --stuck %d s); kernel stack:\n",
				       k->tid, atomic_load(&k->what),
				       (t - since) / 1000.0, o.stuck);
				snprintf(path, sizeof(path),
					 "/proc/self/task/%d/wchan", k->tid);
				dump_file(path, "  wchan: ");
				printf("\n");
				snprintf(path, sizeof(path),
					 "/proc/self/task/%d/stack", k->tid);
				dump_file(path, "  ");
				dump_file("/proc/net/dlcp/sockets", "  sockets: ");
				fflush(stdout);
			}
			/* again every 100 ms until it returns */
			pthread_kill(k->th, SIGUSR1);
			if (t - since >= 2 * o.stuck * 1000L) {
				/* not interruptible (a killable-only wait):
				 * end the run before its caller's time bound */
				printf("STUCK: thread %d still in %s after %.1f s "
				       "despite SIGUSR1: giving up, exit 1\n",
				       k->tid, atomic_load(&k->what),
				       (t - since) / 1000.0);
				fflush(stdout);
				_exit(1);
			}
		}
		usleep(100000);
	}
	return NULL;
}

struct worker {
	int idx;	/* in track[] */
	pthread_t th;
	struct rng rng;
	unsigned long calls;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(BIG);
	unsigned long i;

	me = &track[w->idx];
	me->th = pthread_self();
	me->tid = gettid();

	if (!buf)
		return NULL;
	for (i = 0; i < w->calls && !atomic_load(&stop); i++)
		one_call(&w->rng, buf);
	free(buf);
	return NULL;
}

static atomic_ulong peer_msgs, peer_checked;
atomic_ulong corrupt;

static void *peer_main(void *arg)
{
	int fd = *(int *)arg;
	uint8_t *buf = malloc(BIG);
	uint8_t ctl[8192];

	while (buf && !atomic_load(&stop)) {
		struct iovec iov = { buf, BIG };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int rc;

		if (poll(&p, 1, 50) <= 0)
			continue;
		n = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (n < 0)
			continue;
		atomic_fetch_add(&peer_msgs, 1);
		rc = check_rcvd(buf, n, &mh);
		if (rc < 0)
			atomic_fetch_add(&corrupt, 1);
		else if (rc > 0)
			atomic_fetch_add(&peer_checked, 1);
	}
	free(buf);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", 1, 0, 's' }, { "count", 1, 0, 'c' },
		{ "threads", 1, 0, 't' }, { "time", 1, 0, 'T' },
		{ "stuck", 1, 0, 'k' },
		{ "verbose", 0, 0, 'v' }, { 0, 0, 0, 0 }
	};
	struct sockaddr_in peer = { .sin_family = AF_INET,
				    .sin_port = htons(PEER_PORT),
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct worker *w;
	pthread_t peer_th;
	unsigned long total_err = 0;
	int c, i, j, peer_fd;
	double t0;
	FILE *f;

	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'c': o.count = strtoul(optarg, NULL, 0); break;
		case 't': o.threads = atoi(optarg); break;
		case 'T': o.time = atoi(optarg); break;
		case 'k': o.stuck = atoi(optarg); break;
		case 'v': o.verbose = 1; break;
		default:
			fprintf(stderr, "usage: dlcp_sysfuzz [--seed S] "
				"[--count N] [--threads T] [--time S] "
				"[--stuck S]\n");
			return 2;
		}
	}
	if (o.threads < 1 || o.threads > NR_TRACK - 1)
		o.threads = 4;
	if (o.stuck < 1)
		o.stuck = 30;
	{
		struct sigaction sa = { .sa_handler = on_sigusr1 };
		pthread_t wd;

		/* no SA_RESTART: the signal ends a blocked close() */
		sigaction(SIGUSR1, &sa, NULL);
		me = &track[0];
		me->th = pthread_self();
		me->tid = gettid();
		pthread_create(&wd, NULL, watchdog_main, NULL);
		pthread_detach(wd);
	}
	f = fopen("/proc/sys/net/dlcp/max_msg_size", "r");
	if (f) {
		if (fscanf(f, "%d", &max_msg) != 1)
			max_msg = 4 << 20;
		fclose(f);
	}
	if ((size_t)max_msg + 1 > BIG)
		max_msg = BIG - 1;	/* sizes beyond: EMSGSIZE anyway */
	pattern = malloc(BIG);
	if (!pattern)
		return 1;
	for (size_t k = 0; k < BIG; k++)
		pattern[k] = (uint8_t)(k * 7 + 3);

	peer_fd = socket(AF_INET, SOCK_DLCP, 0);
	if (peer_fd < 0 || bind(peer_fd, (void *)&peer, sizeof(peer))) {
		perror("dlcp_sysfuzz: peer socket");
		return 1;
	}
	{
		struct rng r0 = { o.seed ^ 0x5eed };

		for (i = 0; i < NR_SLOTS; i++) {
			pthread_rwlock_init(&slots[i].lock, NULL);
			slots[i].fd = open_dlcp(&r0);
		}
	}
	pthread_create(&peer_th, NULL, peer_main, &peer_fd);
	w = calloc((size_t)o.threads, sizeof(*w));
	t0 = now();
	for (i = 0; i < o.threads; i++) {
		w[i].rng.s = o.seed * 1000003 + (uint64_t)i;
		w[i].idx = i + 1;
		w[i].calls = o.count / (unsigned long)o.threads;
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);
	}
	while (atomic_load(&done_calls) < o.count && now() - t0 < o.time) {
		int alive = 0;

		for (i = 0; i < o.threads; i++)
			alive |= pthread_tryjoin_np(w[i].th, NULL) == EBUSY;
		if (!alive)
			break;
		usleep(100000);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < o.threads; i++)
		pthread_join(w[i].th, NULL);
	pthread_join(peer_th, NULL);
	for (i = 0; i < NR_SLOTS; i++) {
		if (slots[i].fd < 0)
			continue;
		/* odd slots abort, even ones wait (bounded: dlcp(7)) */
		timed_close(slots[i].fd, i % 2 ? 0 : -1);
	}
	close(peer_fd);

	printf("%lu syscalls in %.1f s, seed %llu, %d threads; peer got %lu "
	       "messages, %lu checked intact, %lu corrupt\n",
	       (unsigned long)atomic_load(&done_calls), now() - t0,
	       (unsigned long long)o.seed, o.threads,
	       (unsigned long)atomic_load(&peer_msgs),
	       (unsigned long)atomic_load(&peer_checked),
	       (unsigned long)atomic_load(&corrupt));
	printf("%-22s %-16s %9s\n", "call", "result", "count");
	for (i = 0; i < __C_MAX; i++) {
		for (j = 0; j < NR_ERRNO; j++) {
			unsigned long n = atomic_load(&hist[i][j]);

			if (!n)
				continue;
			if (j)
				total_err += n;
			printf("%-22s %-16s %9lu\n", call_name[i],
			       j ? strerrorname_np(j) ? strerrorname_np(j) :
			       "E?" : "ok", n);
		}
	}
	printf("%lu calls failed with an allowed errno, %lu with an "
	       "unexpected one\n", total_err - atomic_load(&bad_calls),
	       (unsigned long)atomic_load(&bad_calls));
	printf("longest close(): %.1f s with SO_LINGER 0, %.1f s with "
	       "SO_LINGER 1-2 s, %.1f s without SO_LINGER\n",
	       atomic_load(&close_max_ms[0]) / 1000.0,
	       atomic_load(&close_max_ms[1]) / 1000.0,
	       atomic_load(&close_max_ms[2]) / 1000.0);
	printf("%lu calls blocked for more than %d s\n",
	       (unsigned long)atomic_load(&stuck_calls), o.stuck);
	return atomic_load(&bad_calls) || atomic_load(&corrupt) ||
	       atomic_load(&stuck_calls) ? 1 : 0;
}
