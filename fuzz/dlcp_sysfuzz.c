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
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <time.h>
#include <unistd.h>

#include <linux/dlcp.h>

#define NR_SLOTS	12
#define NR_ERRNO	520
#define PEER_PORT	7500
#define BASE_PORT	7600	/* slots bind BASE_PORT + slot (or random) */
#define BIG		((4u << 20) + 4096)

enum call {
	C_SOCKET, C_SOCKET_ODD, C_BIND, C_CONNECT, C_SENDMSG, C_RECVMSG,
	C_RECV_ERRQ, C_SETSOCKOPT_DLCP, C_GETSOCKOPT_DLCP, C_SETSOCKOPT_SOCK,
	C_GETSOCKOPT_SOCK, C_SETSOCKOPT_IP, C_GETSOCKOPT_IP, C_SOCKOPT_OTHER,
	C_POLL, C_SHUTDOWN, C_IOCTL, C_LISTEN_ACCEPT, C_GETNAME, C_CLOSE,
	__C_MAX
};

static const char *const call_name[] = {
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
	[C_SETSOCKOPT_IP] = { GENERIC_OPT, 0 },
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
static uint8_t *pattern;	/* BIG bytes, byte i = (i * 7 + 3) & 0xff */
static int max_msg = 4 << 20;

struct slot {
	pthread_rwlock_t lock;
	int fd;
};

static struct slot slots[NR_SLOTS];

/* ------------------------------------------------------------ PRNG */

struct rng {
	uint64_t s;
};

static uint64_t rnd64(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd64(r) % n) : 0;
}

static int chance(struct rng *r, unsigned int pct)
{
	return rnd(r, 100) < pct;
}

static int boundary_int(struct rng *r)
{
	static const int v[] = {
		-2, -1, 0, 1, 2, 3, 7, 8, 255, 256, 65535, 65536, 1000000,
		1000001, 0x7fffffff, (int)0x80000000, 4096, 1 << 20,
	};

	if (chance(r, 70))
		return v[rnd(r, sizeof(v) / sizeof(v[0]))];
	return (int)rnd64(r);
}

/* ------------------------------------------------------------ result */

static void account(enum call c, long ret, int err, const char *what)
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

static void call_begin(const char *what)
{
	if (!me)
		return;
	atomic_store(&me->what, what);
	atomic_store(&me->since_ms, mono_ms());
}

static long call_end(void)
{
	long t;

	if (!me)
		return 0;
	t = mono_ms() - atomic_load(&me->since_ms);
	atomic_store(&me->since_ms, 0);
	return t;
}

#define DO(c, what, expr)						\
	do {								\
		long __r;						\
		call_begin(call_name[c]);				\
		errno = 0;						\
		__r = (long)(expr);					\
		call_end();						\
		account(c, __r, errno, what);				\
	} while (0)

static void max_ms(atomic_long *m, long v)
{
	long cur = atomic_load(m);

	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

/* close() with the SO_LINGER setting @linger (-1: none), timed */
static int timed_close(int fd, int linger)
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

/* ------------------------------------------------------------ sockets */

static int open_dlcp(struct rng *r)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 10000 };
	int fd;

	fd = socket(AF_INET, SOCK_DLCP | (chance(r, 30) ? SOCK_NONBLOCK : 0),
		    chance(r, 50) ? 0 : IPPROTO_DLCP);
	account(C_SOCKET, fd, errno, NULL);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (chance(r, 50)) {
		int one = 1;

		setsockopt(fd, SOL_DLCP, DLCP_RECVCOMPLETION, &one,
			   sizeof(one));
	}
	if (chance(r, 60)) {
		struct sockaddr_in sin = {
			.sin_family = AF_INET,
			.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
			.sin_port = htons(BASE_PORT + rnd(r, NR_SLOTS)),
		};

		DO(C_BIND, "initial", bind(fd, (void *)&sin, sizeof(sin)));
	}
	return fd;
}

static void rand_addr(struct rng *r, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	static const uint32_t addrs[] = {
		0x7f000001, 0x7f000001, 0x7f000001, 0x7f000002, 0,
		0xe0000001, 0xffffffff, 0x0a090909, 0x7fffffff,
	};

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = chance(r, 95) ? AF_INET :
			  (chance(r, 50) ? AF_INET6 : AF_UNSPEC);
	sin->sin_addr.s_addr = htonl(addrs[rnd(r, sizeof(addrs) / 4)]);
	switch (rnd(r, 6)) {
	case 0:
		sin->sin_port = htons(PEER_PORT);
		break;
	case 1:
	case 2:
		sin->sin_port = htons(BASE_PORT + rnd(r, NR_SLOTS));
		break;
	case 3:
		sin->sin_port = 0;
		break;
	case 4:
		sin->sin_port = htons((uint16_t)rnd(r, 65536));
		break;
	default:
		sin->sin_port = htons(PEER_PORT);
		break;
	}
	*len = sizeof(*sin);
	if (chance(r, 5)) {
		static const socklen_t lens[] = { 0, 1, 2, 8, 15, 17, 28, 128 };

		*len = lens[rnd(r, sizeof(lens) / sizeof(lens[0]))];
	}
}

static size_t rand_size(struct rng *r)
{
	/* large messages are rare: under TCG every MiB costs */
	switch (rnd(r, 40)) {
	case 0:
	case 1:
		return 0;
	case 2:
	case 3:
		return 1;
	case 4:
		return (size_t)max_msg;
	case 5:
	case 6:
		return (size_t)max_msg + 1;
	case 7:
		return 1 + rnd(r, 1 << 20);
	case 8:
	case 9:
	case 10:
		return 65464 + rnd(r, 3) - 1;	/* a segment over lo */
	default:
		return 1 + rnd(r, 16384);
	}
}

/* A random control buffer for sendmsg(); returns its length. */
static size_t rand_cmsgs(struct rng *r, uint8_t *ctl, size_t room,
			 size_t msglen)
{
	size_t used = 0;
	unsigned int n = rnd(r, 4), i;

	for (i = 0; i < n; i++) {
		struct cmsghdr *c = (struct cmsghdr *)(ctl + used);
		size_t dlen = 0;
		uint8_t *d = CMSG_DATA(c);

		if (used + CMSG_SPACE(8200) > room)
			break;
		c->cmsg_level = chance(r, 90) ? SOL_DLCP :
				(chance(r, 50) ? SOL_SOCKET : (int)rnd64(r));
		switch (rnd(r, 5)) {
		case 0:
		case 1: {
			struct dlcp_send_info si = {
				.tensor_id = (uint32_t)rnd64(r),
				.iteration = (uint32_t)rnd64(r),
				.layer = (uint16_t)rnd(r, 100),
				.dtype = (uint8_t)(chance(r, 80) ?
						   rnd(r, __DLCP_DTYPE_MAX) :
						   rnd(r, 256)),
				.flags = (uint16_t)(chance(r, 80) ?
					 rnd(r, DLCP_MSG_FLAGS_SEND + 1) :
					 rnd(r, 65536)),
			};

			if (si.flags & DLCP_MSG_HAS_PRIO)
				si.prio = (uint8_t)rnd(r, 10);
			if (si.flags & DLCP_MSG_HAS_BUDGET)
				si.loss_budget_ppm = (uint32_t)(chance(r, 80) ?
					rnd(r, DLCP_PPM_MAX + 1) : rnd64(r));
			if (si.flags & DLCP_MSG_HAS_DEADLINE)
				si.deadline_ms = rnd(r, 300);
			if (si.flags & DLCP_MSG_HAS_DROPPABLE)
				si.droppable_ppm = rnd(r, DLCP_PPM_MAX + 2);
			if (chance(r, 5))
				si.reserved = 1;
			if (chance(r, 5))
				si.reserved1 = 1;
			c->cmsg_type = DLCP_CMSG_SEND;
			dlen = sizeof(si);
			if (chance(r, 5))
				dlen = rnd(r, sizeof(si) + 8);
			memcpy(d, &si, sizeof(si));
			break;
		}
		case 2: {
			struct dlcp_range *rg = (void *)d;
			unsigned int k, nr = chance(r, 3) ? 1025 :
					     1 + rnd(r, 8);

			if (nr * sizeof(*rg) > 8200)
				nr = 8200 / sizeof(*rg);
			for (k = 0; k < nr; k++) {
				uint32_t ml = msglen ? (uint32_t)msglen : 1;

				rg[k].offset = chance(r, 90) ? rnd(r, ml) :
					       (uint32_t)rnd64(r);
				rg[k].len = chance(r, 90) ?
					1 + rnd(r, ml - rg[k].offset) :
					(uint32_t)rnd64(r);
			}
			c->cmsg_type = DLCP_CMSG_CRITICAL;
			dlen = nr * sizeof(*rg);
			if (chance(r, 5))
				dlen -= rnd(r, 8);
			break;
		}
		case 3:
			c->cmsg_type = DLCP_CMSG_SEG_CLASS;
			dlen = chance(r, 50) ? msglen / 65464 + 1 :
			       rnd(r, 300);
			if (dlen > 8200)
				dlen = 8200;
			memset(d, (int)rnd(r, 3), dlen);
			break;
		default:
			c->cmsg_type = (int)rnd(r, 12);
			dlen = rnd(r, 64);
			memset(d, (int)rnd64(r), dlen);
			break;
		}
		c->cmsg_len = CMSG_LEN(dlen);
		if (chance(r, 3))
			c->cmsg_len = rnd(r, (uint32_t)CMSG_LEN(dlen) + 16);
		used += CMSG_SPACE(dlen);
	}
	return used;
}

/* ------------------------------------------------------------ calls */

static void op_sendmsg(struct rng *r, int fd)
{
	static const int extra[] = {
		0, 0, 0, 0, MSG_NOSIGNAL, MSG_EOR, MSG_OOB, MSG_MORE,
		MSG_CONFIRM, MSG_PEEK, MSG_TRUNC, MSG_ZEROCOPY, MSG_FASTOPEN,
	};
	uint8_t ctl[CMSG_SPACE(8200) * 4];
	struct sockaddr_storage ss;
	struct iovec iov[3];
	struct msghdr mh = { 0 };
	size_t len = rand_size(r), sent = 0;
	socklen_t alen;
	int flags;

	if (len > BIG)
		len = BIG;
	/* one to three iovecs over the pattern */
	mh.msg_iovlen = 1 + rnd(r, 3);
	for (unsigned int i = 0; i < mh.msg_iovlen; i++) {
		size_t part = i + 1 == mh.msg_iovlen ? len - sent :
			      rnd(r, (uint32_t)(len - sent + 1));

		iov[i].iov_base = pattern + sent;
		iov[i].iov_len = part;
		sent += part;
	}
	mh.msg_iov = iov;
	if (chance(r, 70)) {
		rand_addr(r, &ss, &alen);
		mh.msg_name = &ss;
		mh.msg_namelen = alen;
	}
	if (chance(r, 40)) {
		mh.msg_control = ctl;
		mh.msg_controllen = rand_cmsgs(r, ctl, sizeof(ctl), len);
		if (!mh.msg_controllen)
			mh.msg_control = NULL;
	}
	flags = (chance(r, 80) ? MSG_DONTWAIT : 0) |
		(chance(r, 25) ? extra[rnd(r, sizeof(extra) / sizeof(extra[0]))] : 0);
	DO(C_SENDMSG, NULL, sendmsg(fd, &mh, flags));
}

/* Is a received message intact (no loss reported, buffer big enough)? */
static int check_rcvd(const uint8_t *buf, ssize_t n, struct msghdr *mh)
{
	struct dlcp_recv_info ri;
	struct cmsghdr *c;
	int have = 0;

	if (mh->msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return 0;
	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_DLCP)
			continue;
		if (c->cmsg_type == DLCP_CMSG_LOST)
			return 0;
		if (c->cmsg_type == DLCP_CMSG_RECV) {
			memcpy(&ri, CMSG_DATA(c), sizeof(ri));
			have = 1;
		}
	}
	if (!have)
		return 0;
	if (ri.msg_len != (uint32_t)n || ri.bytes_lost) {
		fprintf(stderr, "CORRUPT: recv %zd bytes, info msg_len %u "
			"lost %u\n", n, ri.msg_len, ri.bytes_lost);
		return -1;
	}
	if (memcmp(buf, pattern, (size_t)n)) {
		fprintf(stderr, "CORRUPT: %zd-byte message differs\n", n);
		return -1;
	}
	return 1;
}

static atomic_ulong peer_msgs, peer_checked, corrupt;

static void op_recvmsg(struct rng *r, int fd, uint8_t *buf)
{
	static const int extra[] = {
		0, 0, 0, MSG_PEEK, MSG_TRUNC, MSG_WAITALL, MSG_OOB,
		MSG_CMSG_CLOEXEC, MSG_PEEK | MSG_TRUNC, MSG_ERRQUEUE,
		MSG_ERRQUEUE | MSG_PEEK, MSG_NOSIGNAL,
	};
	static const size_t bufs[] = { 0, 1, 7, 4096, 65536, BIG };
	static const size_t ctls[] = { 0, 1, 16, 64, 256, 4096 };
	uint8_t ctl[4096];
	struct sockaddr_in from;
	struct iovec iov = { buf, bufs[rnd(r, 6)] };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl,
			     .msg_controllen = ctls[rnd(r, 6)] };
	int flags = (chance(r, 85) ? MSG_DONTWAIT : 0) |
		    extra[rnd(r, sizeof(extra) / sizeof(extra[0]))];
	ssize_t n;

	if (chance(r, 50)) {
		mh.msg_name = &from;
		mh.msg_namelen = chance(r, 90) ? sizeof(from) : rnd(r, 20);
	}
	if (!mh.msg_controllen)
		mh.msg_control = NULL;
	errno = 0;
	n = recvmsg(fd, &mh, flags);
	account(flags & MSG_ERRQUEUE ? C_RECV_ERRQ : C_RECVMSG, n, errno,
		NULL);
	if (n > 0 && !(flags & (MSG_ERRQUEUE | MSG_TRUNC)) &&
	    check_rcvd(buf, n, &mh) < 0)
		atomic_fetch_add(&corrupt, 1);
}

static void op_sockopt(struct rng *r, int fd)
{
	uint8_t val[64];
	socklen_t len;
	int level, name, v = boundary_int(r), set = chance(r, 55);
	enum call c;

	memset(val, 0, sizeof(val));
	memcpy(val, &v, sizeof(v));
	if (chance(r, 10))
		for (unsigned int i = 0; i < sizeof(val); i++)
			val[i] = (uint8_t)rnd64(r);
	len = chance(r, 80) ? sizeof(int) : rnd(r, sizeof(val) + 1);
	switch (rnd(r, 10)) {
	case 0:
	case 1:
	case 2:
	case 3:
		level = SOL_DLCP;
		name = chance(r, 85) ? (int)rnd(r, 9) : boundary_int(r);
		c = set ? C_SETSOCKOPT_DLCP : C_GETSOCKOPT_DLCP;
		break;
	case 4:
	case 5:
		level = SOL_SOCKET;
		do
			name = (int)rnd(r, 80);
		while (name == SO_RCVTIMEO || name == SO_SNDTIMEO ||
		       name == 66 || name == 67 ||	/* *TIMEO_NEW */
		       name == SO_ATTACH_FILTER || name == SO_ATTACH_BPF ||
		       name == SO_ATTACH_REUSEPORT_CBPF ||
		       name == SO_ATTACH_REUSEPORT_EBPF ||
		       name == SO_LOCK_FILTER);
		c = set ? C_SETSOCKOPT_SOCK : C_GETSOCKOPT_SOCK;
		break;
	case 6:
	case 7:
	case 8:
		level = SOL_IP;
		name = (int)rnd(r, 80);
		c = set ? C_SETSOCKOPT_IP : C_GETSOCKOPT_IP;
		break;
	default:
		do
			level = chance(r, 50) ? (int)rnd(r, 300) :
				(int)rnd64(r);
		while (level == SOL_DLCP || level == SOL_SOCKET ||
		       level == SOL_IP);
		name = (int)rnd(r, 80);
		c = C_SOCKOPT_OTHER;
		break;
	}
	if (set) {
		DO(c, NULL, setsockopt(fd, level, name, val, len));
	} else {
		int l = chance(r, 90) ? (int)len : boundary_int(r);

		if (l > (int)sizeof(val))
			l = sizeof(val);
		len = (socklen_t)l;
		DO(c, NULL, getsockopt(fd, level, name, val, &len));
	}
}

static void one_call(struct rng *r, uint8_t *buf)
{
	unsigned int s = rnd(r, NR_SLOTS), op = rnd(r, 100);
	struct slot *sl = &slots[s];
	int fd;

	if (op < 4) {	/* close and reopen */
		int newfd = chance(r, 90) ? open_dlcp(r) : -1;

		/* swap under the lock, close outside it: close() waits for
		 * unfinished messages (up to msg_timeout_ms) unless
		 * SO_LINGER is 0, and must not hold up the other threads */
		pthread_rwlock_wrlock(&sl->lock);
		fd = sl->fd;
		sl->fd = newfd;
		pthread_rwlock_unlock(&sl->lock);
		if (fd >= 0) {
			/* mostly abort at once; else wait (bounded, dlcp(7)) */
			int lg = chance(r, 80) ? 0 : chance(r, 50) ?
				 1 + (int)rnd(r, 2) : -1;
			int rc;

			errno = 0;
			rc = timed_close(fd, lg);
			account(C_CLOSE, rc, errno, NULL);
		}
		return;
	}
	if (op < 6) {	/* a socket DLCP does not take */
		static const int types[] = { SOCK_DLCP, SOCK_SEQPACKET,
					     SOCK_DLCP, 11 };
		int t = types[rnd(r, 4)], p = (int)rnd(r, 300);

		if (t == SOCK_DLCP && (p == 0 || p == IPPROTO_DLCP))
			p = 1;
		fd = socket(AF_INET, t, p);
		account(C_SOCKET_ODD, fd, errno, NULL);
		if (fd >= 0)
			close(fd);
		return;
	}

	pthread_rwlock_rdlock(&sl->lock);
	fd = sl->fd;
	if (fd < 0) {
		pthread_rwlock_unlock(&sl->lock);
		return;
	}
	if (op < 12) {
		struct sockaddr_storage ss;
		socklen_t alen;

		rand_addr(r, &ss, &alen);
		if (chance(r, 60) && alen == sizeof(struct sockaddr_in)) {
			struct sockaddr_in *sin = (void *)&ss;

			sin->sin_port = htons(chance(r, 70) ?
					      BASE_PORT + rnd(r, NR_SLOTS) :
					      (uint16_t)rnd(r, 2048));
			if (chance(r, 70))
				sin->sin_addr.s_addr = chance(r, 50) ?
					htonl(INADDR_LOOPBACK) : 0;
		}
		DO(C_BIND, NULL, bind(fd, (void *)&ss, alen));
	} else if (op < 18) {
		struct sockaddr_storage ss;
		socklen_t alen;

		rand_addr(r, &ss, &alen);
		if (chance(r, 10)) {
			ss.ss_family = AF_UNSPEC;
			alen = chance(r, 50) ? sizeof(sa_family_t) :
			       sizeof(struct sockaddr_in);
		}
		DO(C_CONNECT, NULL, connect(fd, (void *)&ss, alen));
	} else if (op < 45) {
		op_sendmsg(r, fd);
	} else if (op < 65) {
		op_recvmsg(r, fd, buf);
	} else if (op < 85) {
		op_sockopt(r, fd);
	} else if (op < 89) {
		struct pollfd p = {
			.fd = fd,
			.events = (short)(chance(r, 50) ?
					  POLLIN | POLLOUT | POLLERR :
					  rnd(r, 0x10000)),
		};

		DO(C_POLL, NULL, poll(&p, 1, (int)rnd(r, 3)));
	} else if (op < 92) {
		DO(C_SHUTDOWN, NULL, shutdown(fd, (int)rnd(r, 4)));
	} else if (op < 95) {
		static const unsigned long cmds[] = {
			SIOCINQ, SIOCOUTQ, FIONBIO, SIOCGSTAMP_OLD, SIOCGIFADDR,
			0x89ff, 0x1234,
		};
		unsigned long cmd = cmds[rnd(r, 7)];
		int arg[16] = { (int)rnd(r, 2) };
		struct ifreq ifr = { .ifr_name = "lo" };

		/*
		 * Device ioctls (SIOCGIFADDR, SIOCDEVPRIVATE 0x89f0-0x89ff)
		 * the protocol does not take reach dev_ioctl(), which for a
		 * name that is not a device runs modprobe (dev_load():
		 * request_module("netdev-%s")) and waits for it, killable
		 * only. In the TCG guest one took over a second, on a busy
		 * host long enough to stall the run; name a device that
		 * exists.
		 */
		if (cmd == SIOCGIFADDR || (cmd & ~0xful) == 0x89f0)
			DO(C_IOCTL, NULL, ioctl(fd, cmd, &ifr));
		else
			DO(C_IOCTL, NULL, ioctl(fd, cmd, arg));
	} else if (op < 96) {
		if (chance(r, 50)) {
			DO(C_LISTEN_ACCEPT, "listen", listen(fd, 1));
		} else {
			DO(C_LISTEN_ACCEPT, "accept",
			   accept4(fd, NULL, NULL, SOCK_NONBLOCK));
		}
	} else {
		struct sockaddr_in sin;
		socklen_t l = chance(r, 90) ? sizeof(sin) : rnd(r, 20);

		if (chance(r, 50))
			DO(C_GETNAME, "getsockname",
			   getsockname(fd, (void *)&sin, &l));
		else
			DO(C_GETNAME, "getpeername",
			   getpeername(fd, (void *)&sin, &l));
	}
	pthread_rwlock_unlock(&sl->lock);
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
