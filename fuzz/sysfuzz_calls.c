// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_sysfuzz: the random calls on DLCP sockets that the worker threads
 * make, one_call() each: socket setup (open_dlcp()), random addresses,
 * message sizes and control messages, sendmsg, recvmsg (and the check of
 * what arrives, check_rcvd(), which the peer thread uses too), socket
 * options at every level, and the other calls (bind, connect, poll,
 * shutdown, ioctl, listen/accept, getsockname/getpeername, close and
 * reopen). dlcp_sysfuzz.c says what the tool does and accounts each
 * result; the generator here is a splitmix64 PRNG, one per thread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <unistd.h>

#include <linux/dlcp.h>

#include "sysfuzz.h"

/* ------------------------------------------------------------ PRNG */

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

/* ------------------------------------------------------------ sockets */

int open_dlcp(struct rng *r)
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
int check_rcvd(const uint8_t *buf, ssize_t n, struct msghdr *mh)
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

void one_call(struct rng *r, uint8_t *buf)
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
