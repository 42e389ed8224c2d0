// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP socket API selftests: socket creation, bind/connect/sendto address
 * checks, message semantics, blocking behaviour, poll, control messages,
 * socket options and counters.
 *
 * Every test runs in a network namespace of its own (the harness forks one
 * child per test, and the fixture unshares its netns), on 127.0.0.1, so
 * ports and counters start from a clean slate. Needs root (CAP_SYS_ADMIN
 * for unshare(CLONE_NEWNET)) and the dlcp module loaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/errqueue.h>

#include <linux/dlcp.h>

/* The 6.1 harness has an unused parameter; keep -Wextra for our code. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#include "dlcp_util.h"
#include "dlcp_pkt.h"

#ifndef SOCK_RDM
#define SOCK_RDM 4
#endif

#define RCV_TIMEOUT_MS	5000
#define MAX_MSG_DEFAULT	67108864
#define SEG_MAX		(1500 - 20 - DLCP_DATA_HDR_LEN)

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

static struct sockaddr_in lo_addr(uint16_t port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};

	return a;
}

static void set_rcvtimeo_ms(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static int dlcp_socket(struct __test_metadata *_metadata)
{
	int fd = socket(AF_INET, SOCK_DLCP, 0);

	ASSERT_LE(0, fd) TH_LOG("socket(AF_INET, SOCK_DLCP, 0): %s",
				strerror(errno));
	set_rcvtimeo_ms(fd, RCV_TIMEOUT_MS);
	return fd;
}

static uint16_t local_port(struct __test_metadata *_metadata, int fd)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);

	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&a, &alen));
	ASSERT_EQ(AF_INET, a.sin_family);
	return ntohs(a.sin_port);
}

/* A socket bound to 127.0.0.1 on an ephemeral port; returns the port. */
static int bound_socket(struct __test_metadata *_metadata, uint16_t *port)
{
	struct sockaddr_in a = lo_addr(0);
	int fd = dlcp_socket(_metadata);

	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)))
		TH_LOG("bind: %s", strerror(errno));
	*port = local_port(_metadata, fd);
	ASSERT_NE(0, *port);
	return fd;
}

/* sendmsg() with one optional control message. */
static ssize_t send_cmsg(int fd, const struct sockaddr_in *to,
			 const void *buf, size_t len, int level, int type,
			 const void *data, size_t dlen, size_t cmsg_len)
{
	static union {
		char buf[CMSG_SPACE(16384)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = to ? sizeof(*to) : 0,
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	struct cmsghdr *cm;

	if (data) {
		if (dlen > 16384) {
			errno = EMSGSIZE;
			return -1;
		}
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(dlen);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = level;
		cm->cmsg_type = type;
		cm->cmsg_len = cmsg_len;
		memcpy(CMSG_DATA(cm), data, dlen);
	}
	return sendmsg(fd, &msg, 0);
}

static ssize_t send_info(int fd, const struct sockaddr_in *to,
			 const void *buf, size_t len,
			 const struct dlcp_send_info *si)
{
	return send_cmsg(fd, to, buf, len, SOL_DLCP, DLCP_CMSG_SEND, si,
			 sizeof(*si), CMSG_LEN(sizeof(*si)));
}

struct rx {
	ssize_t n;
	int flags;
	struct sockaddr_in from;
	socklen_t fromlen;
	int have_info;
	int have_lost;
	struct dlcp_recv_info info;
};

/* recvmsg() with room for DLCP_CMSG_RECV; fills @r. */
static ssize_t recv_full(int fd, void *buf, size_t len, int flags,
			 struct rx *r)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
			 CMSG_SPACE(64 * sizeof(struct dlcp_range))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = &r->from,
		.msg_namelen = sizeof(r->from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;

	memset(&r->from, 0, sizeof(r->from));
	r->have_info = 0;
	r->have_lost = 0;
	r->n = recvmsg(fd, &msg, flags);
	r->flags = msg.msg_flags;
	r->fromlen = msg.msg_namelen;
	if (r->n < 0)
		return r->n;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_DLCP)
			continue;
		if (cm->cmsg_type == DLCP_CMSG_RECV &&
		    cm->cmsg_len == CMSG_LEN(sizeof(r->info))) {
			memcpy(&r->info, CMSG_DATA(cm), sizeof(r->info));
			r->have_info = 1;
		} else if (cm->cmsg_type == DLCP_CMSG_LOST) {
			r->have_lost = 1;
		}
	}
	return r->n;
}

/* Nothing is queued on @fd, also after a short grace period. */
static void assert_empty(struct __test_metadata *_metadata, int fd)
{
	char c;

	usleep(100 * 1000);
	ASSERT_EQ(-1, recv(fd, &c, 1, MSG_DONTWAIT));
	ASSERT_EQ(EAGAIN, errno);
}

static void *xmalloc(struct __test_metadata *_metadata, size_t len)
{
	void *p = malloc(len ? len : 1);

	ASSERT_NE(NULL, p);
	return p;
}

static int getopt_int(int fd, int name, int *val)
{
	socklen_t len = sizeof(*val);
	int ret = getsockopt(fd, SOL_DLCP, name, val, &len);

	if (!ret && len != sizeof(*val)) {
		errno = ERANGE;
		return -1;
	}
	return ret;
}

static int setopt_int(int fd, int name, int val)
{
	return setsockopt(fd, SOL_DLCP, name, &val, sizeof(val));
}

/* ------------------------------------------------------------------ */
/* Fixture: a fresh netns, a receiver bound on 127.0.0.1, a sender       */
/* ------------------------------------------------------------------ */

FIXTURE(dlcp) {
	int rx;
	int tx;
	uint16_t port;
	struct sockaddr_in to;
	long long saved_max_msg;	/* -1: sysctl not changed */
	long long saved_timeout;	/* -1: sysctl not changed */
};

FIXTURE_SETUP(dlcp)
{
	self->saved_max_msg = -1;
	self->saved_timeout = -1;
	self->rx = -1;
	self->tx = -1;
	ASSERT_EQ(0, dlcp_new_netns())
		TH_LOG("unshare(CLONE_NEWNET): %s (needs root)",
		       strerror(errno));
	self->rx = bound_socket(_metadata, &self->port);
	self->tx = dlcp_socket(_metadata);
	self->to = lo_addr(self->port);
}

FIXTURE_TEARDOWN(dlcp)
{
	if (self->saved_max_msg >= 0)
		dlcp_sysctl_write("max_msg_size", self->saved_max_msg);
	if (self->saved_timeout >= 0)
		dlcp_sysctl_write("msg_timeout_ms", self->saved_timeout);
	if (self->rx >= 0)
		close(self->rx);
	if (self->tx >= 0)
		close(self->tx);
}

/* ------------------------------------------------------------------ */
/* Socket creation                                                      */
/* ------------------------------------------------------------------ */

TEST_F(dlcp, socket_create)
{
	int type, proto, fd;
	socklen_t len;

	ASSERT_EQ(SOCK_RDM, SOCK_DLCP);

	fd = socket(AF_INET, SOCK_DLCP, IPPROTO_DLCP);
	ASSERT_LE(0, fd) TH_LOG("IPPROTO_DLCP: %s", strerror(errno));
	close(fd);

	fd = socket(AF_INET, SOCK_DLCP | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, fd);
	ASSERT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);

	len = sizeof(type);
	ASSERT_EQ(0, getsockopt(self->tx, SOL_SOCKET, SO_TYPE, &type, &len));
	EXPECT_EQ(SOCK_RDM, type);
	len = sizeof(proto);
	ASSERT_EQ(0, getsockopt(self->tx, SOL_SOCKET, SO_PROTOCOL, &proto,
				&len));
	EXPECT_EQ(IPPROTO_DLCP, proto);

	/* No other protocol behind SOCK_RDM. */
	EXPECT_EQ(-1, socket(AF_INET, SOCK_DLCP, IPPROTO_UDP));
	EXPECT_EQ(EPROTONOSUPPORT, errno);
}

/* ------------------------------------------------------------------ */
/* bind                                                                 */
/* ------------------------------------------------------------------ */

TEST_F(dlcp, bind_ephemeral)
{
	struct sockaddr_in a = lo_addr(0), b;
	socklen_t blen = sizeof(b);
	int fd1 = dlcp_socket(_metadata), fd2 = dlcp_socket(_metadata);

	ASSERT_EQ(0, local_port(_metadata, fd1));
	ASSERT_EQ(0, bind(fd1, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, bind(fd2, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, getsockname(fd1, (struct sockaddr *)&b, &blen));
	EXPECT_EQ(htonl(INADDR_LOOPBACK), b.sin_addr.s_addr);
	EXPECT_NE(0, b.sin_port);
	EXPECT_NE(local_port(_metadata, fd1), local_port(_metadata, fd2));
	EXPECT_NE(self->port, local_port(_metadata, fd1));
	close(fd1);
	close(fd2);
}

TEST_F(dlcp, bind_explicit_port)
{
	struct sockaddr_in a = lo_addr(40123);
	int fd = dlcp_socket(_metadata);

	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	EXPECT_EQ(40123, local_port(_metadata, fd));
	close(fd);
}

TEST_F(dlcp, bind_twice)
{
	struct sockaddr_in a = lo_addr(0);

	ASSERT_EQ(-1, bind(self->rx, (struct sockaddr *)&a, sizeof(a)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->port, local_port(_metadata, self->rx));
}

TEST_F(dlcp, bind_in_use)
{
	struct sockaddr_in a = lo_addr(self->port);
	struct sockaddr_in any = {
		.sin_family = AF_INET,
		.sin_port = htons(40200),
	};
	int fd = dlcp_socket(_metadata), fd2;

	ASSERT_EQ(-1, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	EXPECT_EQ(EADDRINUSE, errno);

	/* A wildcard bind takes the port for every address. */
	fd2 = dlcp_socket(_metadata);
	ASSERT_EQ(0, bind(fd2, (struct sockaddr *)&any, sizeof(any)));
	a = lo_addr(40200);
	ASSERT_EQ(-1, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	EXPECT_EQ(EADDRINUSE, errno);

	/* The failed binds left fd unbound: it can still bind elsewhere. */
	a = lo_addr(0);
	EXPECT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	close(fd);
	close(fd2);
}

TEST_F(dlcp, bind_port_freed_on_close)
{
	struct sockaddr_in a = lo_addr(self->port);
	int fd = dlcp_socket(_metadata);

	close(self->rx);
	self->rx = -1;
	EXPECT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)))
		TH_LOG("port %u not freed on close: %s", self->port,
		       strerror(errno));
	close(fd);
}

/* The port space belongs to the network namespace. */
TEST_F(dlcp, bind_per_netns)
{
	struct sockaddr_in a = lo_addr(self->port);
	int fd;

	ASSERT_EQ(0, dlcp_new_netns());
	fd = dlcp_socket(_metadata);
	EXPECT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)))
		TH_LOG("port %u of another netns in use: %s", self->port,
		       strerror(errno));
	close(fd);
}

TEST_F(dlcp, bind_bad_family)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(40300) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct sockaddr_in a = lo_addr(40301);
	int fd = dlcp_socket(_metadata);

	a6.sin6_addr = in6addr_loopback;
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&a6, sizeof(a6)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&un, sizeof(un)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	a.sin_family = AF_INET6;	/* IPv4-sized, wrong family */
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	EXPECT_EQ(0, local_port(_metadata, fd));
	close(fd);
}

TEST_F(dlcp, bind_short_addrlen)
{
	struct sockaddr_in a = lo_addr(40400);
	int fd = dlcp_socket(_metadata);

	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&a, sizeof(a) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&a, 2));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, local_port(_metadata, fd));
	close(fd);
}

/* ------------------------------------------------------------------ */
/* Messages                                                             */
/* ------------------------------------------------------------------ */

TEST_F(dlcp, send_recv_basic)
{
	static const char hello[] = "hello, dlcp";
	char buf[256];
	struct rx r;

	ASSERT_EQ(sizeof(hello), sendto(self->tx, hello, sizeof(hello), 0,
					(struct sockaddr *)&self->to,
					sizeof(self->to)))
		TH_LOG("sendto: %s", strerror(errno));
	ASSERT_EQ(sizeof(hello), recv_full(self->rx, buf, sizeof(buf), 0, &r))
		TH_LOG("recvmsg: %s", strerror(errno));
	EXPECT_EQ(0, memcmp(buf, hello, sizeof(hello)));
	EXPECT_EQ(0, r.flags & (MSG_TRUNC | MSG_CTRUNC));
	EXPECT_EQ(sizeof(struct sockaddr_in), r.fromlen);
	EXPECT_EQ(AF_INET, r.from.sin_family);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), r.from.sin_addr.s_addr);
	EXPECT_EQ(local_port(_metadata, self->tx), ntohs(r.from.sin_port));
	assert_empty(_metadata, self->rx);
}

/* sendto() on an unbound socket picks a local port. */
TEST_F(dlcp, autobind_on_sendto)
{
	struct sockaddr_in from;
	socklen_t flen = sizeof(from);
	uint16_t port;
	char c = 'x', buf[8];

	ASSERT_EQ(0, local_port(_metadata, self->tx));
	ASSERT_EQ(1, sendto(self->tx, &c, 1, 0, (struct sockaddr *)&self->to,
			    sizeof(self->to)));
	port = local_port(_metadata, self->tx);
	EXPECT_NE(0, port);
	ASSERT_EQ(1, recvfrom(self->rx, buf, sizeof(buf), 0,
			      (struct sockaddr *)&from, &flen));
	EXPECT_EQ(port, ntohs(from.sin_port));
	/* And it can receive the answer on that port. */
	ASSERT_EQ(1, sendto(self->rx, &c, 1, 0, (struct sockaddr *)&from,
			    flen));
	EXPECT_EQ(1, recv(self->tx, buf, sizeof(buf), 0));
}

/* Each send is one message; each receive returns one whole message. */
TEST_F(dlcp, message_boundaries)
{
	static const size_t sizes[] = { 1, 7, SEG_MAX - 1, SEG_MAX,
					SEG_MAX + 1, 3000, 65536, 200001 };
	const unsigned int n = sizeof(sizes) / sizeof(sizes[0]);
	unsigned int i, j, seen[sizeof(sizes) / sizeof(sizes[0])] = { 0 };
	size_t max = 200001 + 1;
	uint8_t *buf = xmalloc(_metadata, max);
	struct rx r;

	for (i = 0; i < n; i++) {
		dlcp_payload_fill(buf, sizes[i], dlcp_payload_seed(1, i,
								   sizes[i]));
		ASSERT_EQ(sizes[i], sendto(self->tx, buf, sizes[i], 0,
					   (struct sockaddr *)&self->to,
					   sizeof(self->to)))
			TH_LOG("message %u (%zu bytes): %s", i, sizes[i],
			       strerror(errno));
	}
	for (i = 0; i < n; i++) {
		ASSERT_LT(0, recv_full(self->rx, buf, max, 0, &r))
			TH_LOG("message %u of %u: %s", i + 1, n,
			       strerror(errno));
		EXPECT_EQ(0, r.flags & MSG_TRUNC);
		for (j = 0; j < n; j++)
			if (sizes[j] == (size_t)r.n)
				break;
		ASSERT_LT(j, n) TH_LOG("unexpected length %zd", r.n);
		EXPECT_EQ(0, seen[j]) TH_LOG("size %zu twice", sizes[j]);
		seen[j]++;
		EXPECT_EQ(sizes[j], dlcp_payload_cmp(buf, sizes[j],
						     dlcp_payload_seed(1, j,
								       sizes[j])))
			TH_LOG("message of %zu bytes corrupted", sizes[j]);
	}
	assert_empty(_metadata, self->rx);
	free(buf);
}

/* Gathered sends and scattered receives keep message boundaries. */
TEST_F(dlcp, iovec_gather_scatter)
{
	char a[] = "abc", b[] = "defgh", c[] = "ij";
	struct iovec siov[3] = {
		{ a, 3 }, { b, 5 }, { c, 2 },
	};
	char r1[4], r2[16];
	struct iovec riov[2] = { { r1, sizeof(r1) }, { r2, sizeof(r2) } };
	struct msghdr msg = {
		.msg_name = &self->to,
		.msg_namelen = sizeof(self->to),
		.msg_iov = siov,
		.msg_iovlen = 3,
	};

	ASSERT_EQ(10, sendmsg(self->tx, &msg, 0));
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = riov;
	msg.msg_iovlen = 2;
	ASSERT_EQ(10, recvmsg(self->rx, &msg, 0));
	EXPECT_EQ(0, memcmp(r1, "abcd", 4));
	EXPECT_EQ(0, memcmp(r2, "efghij", 6));
	EXPECT_EQ(0, msg.msg_flags & MSG_TRUNC);
}

TEST_F(dlcp, send_zero_length)
{
	struct msghdr msg = {
		.msg_name = &self->to,
		.msg_namelen = sizeof(self->to),
	};
	char c = 0;

	EXPECT_EQ(-1, sendto(self->tx, &c, 0, 0, (struct sockaddr *)&self->to,
			     sizeof(self->to)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, sendmsg(self->tx, &msg, 0));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, send_too_big)
{
	size_t len = MAX_MSG_DEFAULT + 1;
	long long max;
	int val;
	socklen_t vlen = sizeof(val);
	void *buf;

	ASSERT_EQ(0, dlcp_sysctl_read("max_msg_size", &max));
	ASSERT_EQ(MAX_MSG_DEFAULT, max);
	ASSERT_EQ(0, getsockopt(self->tx, SOL_DLCP, DLCP_MAX_MSG_SIZE, &val,
				&vlen));
	ASSERT_EQ(MAX_MSG_DEFAULT, val);

	/* Untouched anonymous memory: reading it costs no RAM. */
	buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	EXPECT_EQ(-1, sendto(self->tx, buf, len, 0,
			     (struct sockaddr *)&self->to, sizeof(self->to)));
	EXPECT_EQ(EMSGSIZE, errno);
	/* The kernel clamps the length to MAX_RW_COUNT, still too big. */
	EXPECT_EQ(-1, sendto(self->tx, buf, (size_t)INT32_MAX + 2, 0,
			     (struct sockaddr *)&self->to, sizeof(self->to)));
	EXPECT_EQ(EMSGSIZE, errno);
	munmap(buf, len);
	assert_empty(_metadata, self->rx);
}

/* net.dlcp.max_msg_size is the limit, and the socket option shows it. */
TEST_F(dlcp, max_msg_size_sysctl)
{
	uint8_t buf[4097];
	socklen_t vlen;
	int val;

	ASSERT_EQ(0, dlcp_sysctl_read("max_msg_size", &self->saved_max_msg));
	ASSERT_EQ(0, dlcp_sysctl_write("max_msg_size", 4096))
		TH_LOG("write net.dlcp.max_msg_size: %s", strerror(errno));
	vlen = sizeof(val);
	ASSERT_EQ(0, getsockopt(self->tx, SOL_DLCP, DLCP_MAX_MSG_SIZE, &val,
				&vlen));
	EXPECT_EQ(4096, val);
	EXPECT_EQ(sizeof(int), vlen);

	memset(buf, 0x5a, sizeof(buf));
	EXPECT_EQ(-1, sendto(self->tx, buf, 4097, 0,
			     (struct sockaddr *)&self->to, sizeof(self->to)));
	EXPECT_EQ(EMSGSIZE, errno);
	ASSERT_EQ(4096, sendto(self->tx, buf, 4096, 0,
			       (struct sockaddr *)&self->to,
			       sizeof(self->to)));
	EXPECT_EQ(4096, recv(self->rx, buf, sizeof(buf), 0));
	assert_empty(_metadata, self->rx);
}

/* Too small a buffer: what fits, MSG_TRUNC, the rest is discarded. */
TEST_F(dlcp, recv_truncated)
{
	uint8_t big[1000], buf[1000];
	struct rx r;

	dlcp_payload_fill(big, sizeof(big), 99);
	ASSERT_EQ(1000, sendto(self->tx, big, 1000, 0,
			       (struct sockaddr *)&self->to,
			       sizeof(self->to)));
	ASSERT_EQ(100, sendto(self->tx, big, 100, 0,
			      (struct sockaddr *)&self->to,
			      sizeof(self->to)));
	/*
	 * Order is not guaranteed: whichever comes first, a 10-byte buffer
	 * gets its first 10 bytes and MSG_TRUNC.
	 */
	ASSERT_EQ(10, recv_full(self->rx, buf, 10, 0, &r));
	EXPECT_TRUE(r.flags & MSG_TRUNC);
	EXPECT_EQ(0, memcmp(buf, big, 10));
	ASSERT_TRUE(r.have_info);
	EXPECT_TRUE(r.info.msg_len == 1000 || r.info.msg_len == 100);
	/* The next receive is the other message, whole: no leftovers. */
	ASSERT_LT(0, recv_full(self->rx, buf, sizeof(buf), 0, &r));
	EXPECT_EQ(0, r.flags & MSG_TRUNC);
	EXPECT_TRUE(r.n == 1000 || r.n == 100);
	EXPECT_EQ(0, memcmp(buf, big, (size_t)r.n));
	assert_empty(_metadata, self->rx);
}

/* MSG_TRUNC in the flags: the real length is returned. */
TEST_F(dlcp, recv_trunc_flag_real_length)
{
	uint8_t big[5000], buf[16];
	ssize_t n;

	memset(big, 0xa5, sizeof(big));
	ASSERT_EQ(5000, sendto(self->tx, big, 5000, 0,
			       (struct sockaddr *)&self->to,
			       sizeof(self->to)));
	ASSERT_EQ(5000, sendto(self->tx, big, 5000, 0,
			       (struct sockaddr *)&self->to,
			       sizeof(self->to)));
	n = recv(self->rx, buf, sizeof(buf), MSG_TRUNC);
	EXPECT_EQ(5000, n);
	EXPECT_EQ(0xa5, buf[15]);
	/* With no buffer at all, as with UDP: length, message consumed. */
	n = recv(self->rx, NULL, 0, MSG_TRUNC);
	EXPECT_EQ(5000, n);
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, recv_dontwait_eagain)
{
	char buf[16];
	int flags;

	EXPECT_EQ(-1, recv(self->rx, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);

	flags = fcntl(self->rx, F_GETFL);
	ASSERT_EQ(0, fcntl(self->rx, F_SETFL, flags | O_NONBLOCK));
	EXPECT_EQ(-1, recv(self->rx, buf, sizeof(buf), 0));
	EXPECT_EQ(EAGAIN, errno);

	/* Then a message arrives and is returned without blocking. */
	ASSERT_EQ(3, sendto(self->tx, "abc", 3, 0,
			    (struct sockaddr *)&self->to, sizeof(self->to)));
	usleep(200 * 1000);
	EXPECT_EQ(3, recv(self->rx, buf, sizeof(buf), 0));
}

TEST_F(dlcp, recv_rcvtimeo)
{
	char buf[16];
	double t0, dt;

	set_rcvtimeo_ms(self->rx, 300);
	t0 = dlcp_now();
	EXPECT_EQ(-1, recv(self->rx, buf, sizeof(buf), 0));
	EXPECT_EQ(EAGAIN, errno);
	dt = dlcp_now() - t0;
	EXPECT_LE(0.25, dt) TH_LOG("returned after %.3f s", dt);
	EXPECT_GE(3.0, dt) TH_LOG("returned after %.3f s", dt);
}

/* A receiver blocked in recvmsg() is woken by the message. */
TEST_F(dlcp, recv_blocking_wakeup)
{
	char buf[16];
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		usleep(300 * 1000);
		_exit(sendto(self->tx, "wake", 4, 0,
			     (struct sockaddr *)&self->to,
			     sizeof(self->to)) == 4 ? 0 : 1);
	}
	EXPECT_EQ(4, recv(self->rx, buf, sizeof(buf), 0))
		TH_LOG("recv: %s", strerror(errno));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

TEST_F(dlcp, poll_in_out)
{
	struct pollfd pfd = { .fd = self->rx, .events = POLLIN | POLLOUT };
	char buf[64];

	ASSERT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLOUT, pfd.revents);

	ASSERT_EQ(5, sendto(self->tx, "12345", 5, 0,
			    (struct sockaddr *)&self->to, sizeof(self->to)));
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, RCV_TIMEOUT_MS));
	EXPECT_EQ(POLLIN, pfd.revents & (POLLIN | POLLERR | POLLHUP));
	EXPECT_EQ(5, recv(self->rx, buf, sizeof(buf), MSG_DONTWAIT));
	ASSERT_EQ(0, poll(&pfd, 1, 0));

	/* An unbound, never used socket can send. */
	pfd.fd = self->tx;
	pfd.events = POLLOUT;
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLOUT, pfd.revents);
}

TEST_F(dlcp, epoll_in)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	char buf[64];
	int ep;

	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->rx, &ev));
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 0));
	ASSERT_EQ(1, sendto(self->tx, "e", 1, 0, (struct sockaddr *)&self->to,
			    sizeof(self->to)));
	ASSERT_EQ(1, epoll_wait(ep, &out, 1, RCV_TIMEOUT_MS));
	EXPECT_TRUE(out.events & EPOLLIN);
	EXPECT_EQ(1, recv(self->rx, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 0));
	close(ep);
}

/* POLLIN only once the whole message is there, not at its first packet. */
TEST_F(dlcp, poll_whole_message)
{
	size_t len = 4 << 20;
	uint8_t *buf = xmalloc(_metadata, len);
	struct pollfd pfd = { .fd = self->rx, .events = POLLIN };
	ssize_t n;

	dlcp_payload_fill(buf, len, 7);
	ASSERT_EQ(len, sendto(self->tx, buf, len, 0,
			      (struct sockaddr *)&self->to,
			      sizeof(self->to)));
	ASSERT_EQ(1, poll(&pfd, 1, 20000));
	memset(buf, 0, len);
	n = recv(self->rx, buf, len, MSG_DONTWAIT);
	ASSERT_EQ(len, n) TH_LOG("POLLIN but recv gave %zd (%s)", n,
				 n < 0 ? strerror(errno) : "short");
	EXPECT_EQ(len, dlcp_payload_cmp(buf, len, 7));
	free(buf);
}

/* ------------------------------------------------------------------ */
/* connect                                                              */
/* ------------------------------------------------------------------ */

TEST_F(dlcp, connect_default_peer)
{
	struct sockaddr_in peer;
	socklen_t plen = sizeof(peer);
	struct rx r;
	char buf[16];

	ASSERT_EQ(0, connect(self->tx, (struct sockaddr *)&self->to,
			     sizeof(self->to)));
	ASSERT_EQ(0, getpeername(self->tx, (struct sockaddr *)&peer, &plen));
	EXPECT_EQ(self->to.sin_port, peer.sin_port);
	EXPECT_EQ(self->to.sin_addr.s_addr, peer.sin_addr.s_addr);
	EXPECT_NE(0, local_port(_metadata, self->tx));

	ASSERT_EQ(4, send(self->tx, "conn", 4, 0))
		TH_LOG("send on connected socket: %s", strerror(errno));
	ASSERT_EQ(4, recv_full(self->rx, buf, sizeof(buf), 0, &r));
	EXPECT_EQ(0, memcmp(buf, "conn", 4));
	EXPECT_EQ(local_port(_metadata, self->tx), ntohs(r.from.sin_port));
	ASSERT_EQ(4, write(self->tx, "writ", 4));
	ASSERT_EQ(4, recv(self->rx, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp(buf, "writ", 4));
}

TEST_F(dlcp, connect_unspec_dissolves)
{
	struct sockaddr_in peer;
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	socklen_t plen = sizeof(peer);
	char buf[8];

	ASSERT_EQ(0, connect(self->tx, (struct sockaddr *)&self->to,
			     sizeof(self->to)));
	ASSERT_EQ(1, send(self->tx, "a", 1, 0));
	ASSERT_EQ(1, recv(self->rx, buf, sizeof(buf), 0));
	ASSERT_EQ(0, connect(self->tx, &unspec, sizeof(unspec)));
	EXPECT_EQ(-1, send(self->tx, "b", 1, 0));
	EXPECT_EQ(EDESTADDRREQ, errno);
	EXPECT_EQ(-1, getpeername(self->tx, (struct sockaddr *)&peer, &plen));
	EXPECT_EQ(ENOTCONN, errno);
	/* sendto() with an address still works. */
	EXPECT_EQ(1, sendto(self->tx, "c", 1, 0, (struct sockaddr *)&self->to,
			    sizeof(self->to)));
	EXPECT_EQ(1, recv(self->rx, buf, sizeof(buf), 0));
	EXPECT_EQ('c', buf[0]);
}

/* sendto() with an address overrides the connected peer. */
TEST_F(dlcp, connect_sendto_override)
{
	uint16_t port2;
	int rx2 = bound_socket(_metadata, &port2);
	struct sockaddr_in to2 = lo_addr(port2);
	char buf[8];

	ASSERT_EQ(0, connect(self->tx, (struct sockaddr *)&self->to,
			     sizeof(self->to)));
	ASSERT_EQ(1, sendto(self->tx, "x", 1, 0, (struct sockaddr *)&to2,
			    sizeof(to2)));
	EXPECT_EQ(1, recv(rx2, buf, sizeof(buf), 0));
	assert_empty(_metadata, self->rx);
	close(rx2);
}

TEST_F(dlcp, send_unconnected_no_address)
{
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	EXPECT_EQ(-1, send(self->tx, "x", 1, 0));
	EXPECT_EQ(EDESTADDRREQ, errno);
	EXPECT_EQ(-1, sendmsg(self->tx, &msg, 0));
	EXPECT_EQ(EDESTADDRREQ, errno);
	EXPECT_EQ(-1, write(self->tx, "x", 1));
	EXPECT_EQ(EDESTADDRREQ, errno);
}

TEST_F(dlcp, sendto_bad_family)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(self->port) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct sockaddr_in a = self->to;

	a6.sin6_addr = in6addr_loopback;
	EXPECT_EQ(-1, sendto(self->tx, "x", 1, 0, (struct sockaddr *)&a6,
			     sizeof(a6)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	EXPECT_EQ(-1, sendto(self->tx, "x", 1, 0, (struct sockaddr *)&un,
			     sizeof(un)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	a.sin_family = AF_INET6;
	EXPECT_EQ(-1, sendto(self->tx, "x", 1, 0, (struct sockaddr *)&a,
			     sizeof(a)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, sendto_short_addrlen)
{
	EXPECT_EQ(-1, sendto(self->tx, "x", 1, 0, (struct sockaddr *)&self->to,
			     sizeof(self->to) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, sendto(self->tx, "x", 1, 0, (struct sockaddr *)&self->to,
			     4));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, connect_bad_address)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(self->port) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };

	a6.sin6_addr = in6addr_loopback;
	EXPECT_EQ(-1, connect(self->tx, (struct sockaddr *)&a6, sizeof(a6)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	EXPECT_EQ(-1, connect(self->tx, (struct sockaddr *)&un, sizeof(un)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	EXPECT_EQ(-1, connect(self->tx, (struct sockaddr *)&self->to,
			      sizeof(self->to) - 1));
	EXPECT_EQ(EINVAL, errno);
	/* None of them set a peer. */
	EXPECT_EQ(-1, send(self->tx, "x", 1, 0));
	EXPECT_EQ(EDESTADDRREQ, errno);
}

/* recvmsg() on a socket with no local port cannot ever get anything. */
TEST_F(dlcp, recv_unbound_enotconn)
{
	char buf[8];

	EXPECT_EQ(-1, recv(self->tx, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(ENOTCONN, errno);
	/* Blocking, too: an error at once, not a timeout. */
	set_rcvtimeo_ms(self->tx, 2000);
	EXPECT_EQ(-1, recv(self->tx, buf, sizeof(buf), 0));
	EXPECT_EQ(ENOTCONN, errno);
}

TEST_F(dlcp, send_msg_oob)
{
	EXPECT_EQ(-1, sendto(self->tx, "x", 1, MSG_OOB,
			     (struct sockaddr *)&self->to, sizeof(self->to)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	assert_empty(_metadata, self->rx);
}

/* ------------------------------------------------------------------ */
/* Control messages                                                     */
/* ------------------------------------------------------------------ */

static struct dlcp_send_info good_info(void)
{
	struct dlcp_send_info si = {
		.tensor_id = 0x11223344,
		.iteration = 987654,
		.layer = 42,
		.dtype = DLCP_DTYPE_FP32,
		.flags = DLCP_MSG_HAS_LAYER | DLCP_MSG_CRITICAL,
	};

	return si;
}

TEST_F(dlcp, cmsg_metadata_round_trip)
{
	struct dlcp_send_info si = good_info();
	uint8_t buf[4096], in[4096];
	struct rx r;

	dlcp_payload_fill(buf, sizeof(buf), 3);
	ASSERT_EQ(4096, send_info(self->tx, &self->to, buf, 4096, &si))
		TH_LOG("sendmsg with DLCP_CMSG_SEND: %s", strerror(errno));
	ASSERT_EQ(4096, recv_full(self->rx, in, sizeof(in), 0, &r));
	EXPECT_EQ(0, memcmp(buf, in, 4096));
	EXPECT_EQ(0, r.flags & MSG_CTRUNC);
	ASSERT_TRUE(r.have_info) TH_LOG("no DLCP_CMSG_RECV");
	EXPECT_EQ(si.tensor_id, r.info.tensor_id);
	EXPECT_EQ(si.iteration, r.info.iteration);
	EXPECT_EQ(si.layer, r.info.layer);
	EXPECT_EQ(si.dtype, r.info.dtype);
	EXPECT_EQ(si.flags, r.info.flags);
	EXPECT_EQ(DLCP_RECV_EXACT, r.info.status);
	EXPECT_EQ(4096, r.info.msg_len);
	EXPECT_EQ(0, r.info.bytes_lost);
	EXPECT_EQ(0, r.info.nr_lost_ranges);
	EXPECT_EQ(0, r.info.loss_budget_ppm);
	EXPECT_EQ(0, r.info.reserved0);
	EXPECT_EQ(0, r.info.reserved[0]);
	EXPECT_EQ(0, r.info.reserved[1]);
	EXPECT_FALSE(r.have_lost);
}

/* Without DLCP_CMSG_SEND, the socket defaults go with the message. */
TEST_F(dlcp, cmsg_socket_defaults)
{
	int layer = 9, budget = 250000;
	uint8_t buf[64];
	struct rx r;

	ASSERT_EQ(0, setsockopt(self->tx, SOL_DLCP, DLCP_LAYER, &layer,
				sizeof(layer)));
	ASSERT_EQ(0, setsockopt(self->tx, SOL_DLCP, DLCP_LOSS_BUDGET, &budget,
				sizeof(budget)));
	ASSERT_EQ(10, sendto(self->tx, "0123456789", 10, 0,
			     (struct sockaddr *)&self->to, sizeof(self->to)));
	ASSERT_EQ(10, recv_full(self->rx, buf, sizeof(buf), 0, &r));
	ASSERT_TRUE(r.have_info);
	EXPECT_EQ(9, r.info.layer);
	EXPECT_EQ(DLCP_DTYPE_BYTES, r.info.dtype);
	EXPECT_EQ(250000, r.info.loss_budget_ppm);
	EXPECT_EQ(10, r.info.msg_len);
	/* Nothing is lost on loopback, whatever the budget. */
	EXPECT_EQ(DLCP_RECV_EXACT, r.info.status);
	EXPECT_EQ(0, r.info.bytes_lost);
}

/* Two messages, two sets of metadata: each arrives with its own. */
TEST_F(dlcp, cmsg_metadata_per_message)
{
	struct dlcp_send_info a = good_info(), b = good_info();
	uint8_t buf[64];
	struct rx r;
	int i, seen = 0;

	a.tensor_id = 1;
	b.tensor_id = 2;
	b.dtype = DLCP_DTYPE_INT8;
	b.layer = 3;
	ASSERT_EQ(8, send_info(self->tx, &self->to, "aaaaaaaa", 8, &a));
	ASSERT_EQ(3, send_info(self->tx, &self->to, "bbb", 3, &b));
	for (i = 0; i < 2; i++) {
		ASSERT_LT(0, recv_full(self->rx, buf, sizeof(buf), 0, &r));
		ASSERT_TRUE(r.have_info);
		if (r.n == 8) {
			EXPECT_EQ(1, r.info.tensor_id);
			EXPECT_EQ(DLCP_DTYPE_FP32, r.info.dtype);
			EXPECT_EQ(42, r.info.layer);
			EXPECT_EQ('a', buf[0]);
			seen |= 1;
		} else {
			EXPECT_EQ(3, r.n);
			EXPECT_EQ(2, r.info.tensor_id);
			EXPECT_EQ(DLCP_DTYPE_INT8, r.info.dtype);
			EXPECT_EQ(3, r.info.layer);
			EXPECT_EQ('b', buf[0]);
			seen |= 2;
		}
	}
	EXPECT_EQ(3, seen);
}

TEST_F(dlcp, cmsg_bad_length)
{
	struct {
		struct dlcp_send_info si;
		uint8_t pad[8];
	} big = { .si = good_info() };
	struct dlcp_send_info si = good_info();
	uint8_t buf[16] = { 0 };

	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP,
				DLCP_CMSG_SEND, &si, sizeof(si),
				CMSG_LEN(sizeof(si) - 4)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP,
				DLCP_CMSG_SEND, &big, sizeof(big),
				CMSG_LEN(sizeof(si) + 4)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP,
				DLCP_CMSG_SEND, &si, sizeof(si), CMSG_LEN(0)));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, cmsg_unknown_flags)
{
	struct dlcp_send_info si;
	uint8_t buf[16] = { 0 };
	unsigned int bit;

	for (bit = 0; bit < 16; bit++) {
		if ((1u << bit) & DLCP_MSG_FLAGS_SEND)
			continue;
		si = good_info();
		si.flags |= (uint16_t)(1u << bit);
		EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si))
			TH_LOG("flag 0x%x accepted", 1u << bit);
		EXPECT_EQ(EINVAL, errno);
	}
	assert_empty(_metadata, self->rx);
}

/* Reserved fields, and fields whose flag is not set, must be zero. */
TEST_F(dlcp, cmsg_reserved_nonzero)
{
	struct dlcp_send_info si;
	uint8_t buf[16] = { 0 };
	int i;

	for (i = 0; i < 4; i++) {
		si = good_info();
		switch (i) {
		case 0:
			si.reserved1 = 0x8000;
			break;
		case 1:
			si.reserved = 1;
			break;
		case 2:
			si.prio = 1;		/* without DLCP_MSG_HAS_PRIO */
			break;
		case 3:
			si.droppable_ppm = 1;	/* without HAS_DROPPABLE */
			break;
		}
		EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si))
			TH_LOG("case %d not checked", i);
		EXPECT_EQ(EINVAL, errno);
	}
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, cmsg_bad_dtype)
{
	struct dlcp_send_info si = good_info();
	uint8_t buf[16] = { 0 };

	si.dtype = __DLCP_DTYPE_MAX;
	EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si));
	EXPECT_EQ(EINVAL, errno);
	si.dtype = 255;
	EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, cmsg_loss_budget_range)
{
	struct dlcp_send_info si = good_info();
	uint8_t buf[16] = { 0 };
	struct rx r;

	si.flags |= DLCP_MSG_HAS_BUDGET;
	si.loss_budget_ppm = DLCP_PPM_MAX + 1;
	EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si));
	EXPECT_EQ(EINVAL, errno);
	si.loss_budget_ppm = 0xffffffff;
	EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);

	si.loss_budget_ppm = DLCP_PPM_MAX;
	ASSERT_EQ(16, send_info(self->tx, &self->to, buf, 16, &si))
		TH_LOG("budget %u refused: %s", DLCP_PPM_MAX, strerror(errno));
	ASSERT_EQ(16, recv_full(self->rx, buf, sizeof(buf), 0, &r));
	ASSERT_TRUE(r.have_info);
	EXPECT_EQ(DLCP_PPM_MAX, r.info.loss_budget_ppm);
	EXPECT_EQ(si.flags, r.info.flags);
}

/* The message length must be a whole number of elements. */
TEST_F(dlcp, cmsg_dtype_alignment)
{
	static const struct {
		uint8_t dtype;
		size_t len;
		int ok;
	} cases[] = {
		{ DLCP_DTYPE_BYTES, 3, 1 },
		{ DLCP_DTYPE_INT8, 3, 1 },
		{ DLCP_DTYPE_FP32, 4, 1 },
		{ DLCP_DTYPE_FP32, 6, 0 },
		{ DLCP_DTYPE_FP32, 1, 0 },
		{ DLCP_DTYPE_FP32, 4099, 0 },
		{ DLCP_DTYPE_FP32, 4100, 1 },
		{ DLCP_DTYPE_FP16, 3, 0 },
		{ DLCP_DTYPE_FP16, 2, 1 },
		{ DLCP_DTYPE_BF16, 5, 0 },
		{ DLCP_DTYPE_BF16, 6, 1 },
		{ DLCP_DTYPE_INT32, 2, 0 },
		{ DLCP_DTYPE_INT32, 8, 1 },
	};
	uint8_t buf[4100], in[4100];
	unsigned int i, nok = 0;
	struct dlcp_send_info si;
	struct rx r;

	memset(buf, 0x33, sizeof(buf));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ssize_t n;

		si = good_info();
		si.dtype = cases[i].dtype;
		n = send_info(self->tx, &self->to, buf, cases[i].len, &si);
		if (cases[i].ok) {
			EXPECT_EQ(cases[i].len, n)
				TH_LOG("dtype %u len %zu: %s", cases[i].dtype,
				       cases[i].len, strerror(errno));
			nok++;
		} else {
			EXPECT_EQ(-1, n)
				TH_LOG("dtype %u len %zu accepted",
				       cases[i].dtype, cases[i].len);
			EXPECT_EQ(EINVAL, errno);
		}
	}
	for (i = 0; i < nok; i++) {
		ASSERT_LT(0, recv_full(self->rx, in, sizeof(in), 0, &r));
		ASSERT_TRUE(r.have_info);
		EXPECT_EQ(0, r.n % dlcp_dtype_size(r.info.dtype));
	}
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, cmsg_unknown_type)
{
	uint32_t v = 0;
	uint8_t buf[16] = { 0 };

	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP, 99,
				&v, sizeof(v), CMSG_LEN(sizeof(v))));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP, 0,
				&v, sizeof(v), CMSG_LEN(sizeof(v))));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

static ssize_t send_crit(int fd, const struct sockaddr_in *to,
			 const void *buf, size_t len,
			 const struct dlcp_range *r, size_t n)
{
	return send_cmsg(fd, to, buf, len, SOL_DLCP, DLCP_CMSG_CRITICAL, r,
			 n * sizeof(*r), CMSG_LEN(n * sizeof(*r)));
}

/* Critical ranges: each non-empty, inside the message, a bounded number. */
TEST_F(dlcp, cmsg_critical_ranges)
{
	static struct dlcp_range many[DLCP_MAX_CRIT_RANGES + 1];
	struct dlcp_range r[2] = { { 0, 10 }, { 100, 50 } };
	uint8_t buf[2048], in[2048];
	unsigned int i;
	struct rx rx;

	dlcp_payload_fill(buf, sizeof(buf), 11);
	ASSERT_EQ(1000, send_crit(self->tx, &self->to, buf, 1000, r, 2))
		TH_LOG("valid critical ranges: %s", strerror(errno));
	ASSERT_EQ(1000, recv_full(self->rx, in, sizeof(in), 0, &rx));
	EXPECT_EQ(0, memcmp(buf, in, 1000));
	ASSERT_TRUE(rx.have_info);
	EXPECT_EQ(DLCP_RECV_EXACT, rx.info.status);

	/* the last byte is inside, one more is not */
	r[0] = (struct dlcp_range){ 990, 10 };
	EXPECT_EQ(1000, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(1000, recv(self->rx, in, sizeof(in), 0));
	r[0] = (struct dlcp_range){ 990, 11 };
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(EINVAL, errno);
	r[0] = (struct dlcp_range){ 1000, 1 };
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(EINVAL, errno);
	r[0] = (struct dlcp_range){ 0xfffffff0u, 0x20 };	/* wraps */
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(EINVAL, errno);
	r[0] = (struct dlcp_range){ 5, 0 };			/* empty */
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(EINVAL, errno);
	/* not a whole number of ranges */
	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 1000, SOL_DLCP,
				DLCP_CMSG_CRITICAL, r, sizeof(r),
				CMSG_LEN(sizeof(r[0]) + 4)));
	EXPECT_EQ(EINVAL, errno);

	/* DLCP_MAX_CRIT_RANGES ranges pass, one more does not */
	for (i = 0; i <= DLCP_MAX_CRIT_RANGES; i++)
		many[i] = (struct dlcp_range){ i, 1 };
	EXPECT_EQ(2048, send_crit(self->tx, &self->to, buf, 2048, many,
				  DLCP_MAX_CRIT_RANGES))
		TH_LOG("%u ranges: %s", DLCP_MAX_CRIT_RANGES, strerror(errno));
	EXPECT_EQ(2048, recv(self->rx, in, sizeof(in), 0));
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 2048, many,
				DLCP_MAX_CRIT_RANGES + 1));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

/* Segment classes: exactly one valid class per segment. */
TEST_F(dlcp, cmsg_seg_class)
{
	uint8_t cls[8] = { DLCP_SEG_IMPORTANT, DLCP_SEG_DROPPABLE,
			   DLCP_SEG_IMPORTANT, DLCP_SEG_DROPPABLE,
			   DLCP_SEG_IMPORTANT };
	size_t len;
	uint8_t *buf;
	int seg;

	ASSERT_EQ(0, connect(self->tx, (struct sockaddr *)&self->to,
			     sizeof(self->to)));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_SEGMENT_SIZE, &seg));
	ASSERT_LT(0, seg);
	len = 3 * (size_t)seg + 1;		/* 4 segments */
	buf = xmalloc(_metadata, len);
	dlcp_payload_fill(buf, len, 12);

	EXPECT_EQ(len, send_cmsg(self->tx, NULL, buf, len, SOL_DLCP,
				 DLCP_CMSG_SEG_CLASS, cls, 4, CMSG_LEN(4)))
		TH_LOG("4 classes for 4 segments of %d: %s", seg,
		       strerror(errno));
	EXPECT_EQ(len, recv(self->rx, buf, len, 0));
	EXPECT_EQ(len, dlcp_payload_cmp(buf, len, 12));
	EXPECT_EQ(-1, send_cmsg(self->tx, NULL, buf, len, SOL_DLCP,
				DLCP_CMSG_SEG_CLASS, cls, 3, CMSG_LEN(3)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, send_cmsg(self->tx, NULL, buf, len, SOL_DLCP,
				DLCP_CMSG_SEG_CLASS, cls, 5, CMSG_LEN(5)));
	EXPECT_EQ(EINVAL, errno);
	cls[2] = 2;				/* no such class */
	EXPECT_EQ(-1, send_cmsg(self->tx, NULL, buf, len, SOL_DLCP,
				DLCP_CMSG_SEG_CLASS, cls, 4, CMSG_LEN(4)));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
	free(buf);
}

/* No room for DLCP_CMSG_RECV: the data still comes, with MSG_CTRUNC. */
TEST_F(dlcp, cmsg_recv_ctrunc)
{
	union {
		char buf[CMSG_LEN(4)];
		struct cmsghdr align;
	} ctl;
	char buf[16];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};

	ASSERT_EQ(5, sendto(self->tx, "hello", 5, 0,
			    (struct sockaddr *)&self->to, sizeof(self->to)));
	ASSERT_EQ(5, recvmsg(self->rx, &msg, 0));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	EXPECT_TRUE(msg.msg_flags & MSG_CTRUNC);
}

/* ------------------------------------------------------------------ */
/* Socket options                                                       */
/* ------------------------------------------------------------------ */

TEST_F(dlcp, sockopt_loss_budget)
{
	long long def = 0;
	int val;

	if (dlcp_sysctl_read("loss_budget_ppm", &def))
		def = 0;
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_LOSS_BUDGET, &val));
	EXPECT_EQ(def, val);
	EXPECT_EQ(0, val) TH_LOG("default loss budget is not 0 (exact)");

	EXPECT_EQ(0, setopt_int(self->tx, DLCP_LOSS_BUDGET, 500000));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_LOSS_BUDGET, &val));
	EXPECT_EQ(500000, val);
	EXPECT_EQ(0, setopt_int(self->tx, DLCP_LOSS_BUDGET, DLCP_PPM_MAX));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_LOSS_BUDGET, &val));
	EXPECT_EQ(DLCP_PPM_MAX, val);

	EXPECT_EQ(-1, setopt_int(self->tx, DLCP_LOSS_BUDGET, DLCP_PPM_MAX + 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setopt_int(self->tx, DLCP_LOSS_BUDGET, -1));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_LOSS_BUDGET, &val));
	EXPECT_EQ(DLCP_PPM_MAX, val);

	EXPECT_EQ(0, setopt_int(self->tx, DLCP_LOSS_BUDGET, 0));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_LOSS_BUDGET, &val));
	EXPECT_EQ(0, val);
}

static int lo_mtu(void)
{
	FILE *f = fopen("/sys/class/net/lo/mtu", "re");
	int mtu = -1;

	if (f) {
		if (fscanf(f, "%d", &mtu) != 1)
			mtu = -1;
		fclose(f);
	}
	return mtu;
}

TEST_F(dlcp, sockopt_segment_size)
{
	int val, mtu = lo_mtu(), expect;

	/* Unconnected: the largest MTU the module assumes, Ethernet's. */
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_SEGMENT_SIZE, &val));
	EXPECT_LT(0, val);
	EXPECT_GE(SEG_MAX, val);
	/*
	 * Connected: what fits the route's MTU, here loopback's, and the
	 * 16-bit IP total length.
	 */
	ASSERT_LT(0, mtu);
	expect = (mtu < 65535 ? mtu : 65535) - 20 - DLCP_DATA_HDR_LEN;
	ASSERT_EQ(0, connect(self->tx, (struct sockaddr *)&self->to,
			     sizeof(self->to)));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_SEGMENT_SIZE, &val));
	EXPECT_EQ(expect, val) TH_LOG("lo MTU %d", mtu);
	EXPECT_EQ(-1, setopt_int(self->tx, DLCP_SEGMENT_SIZE, 1000));
	EXPECT_EQ(ENOPROTOOPT, errno);
}

TEST_F(dlcp, sockopt_layer)
{
	int val;

	ASSERT_EQ(0, getopt_int(self->tx, DLCP_LAYER, &val));
	EXPECT_EQ(0, val);
	EXPECT_EQ(0, setopt_int(self->tx, DLCP_LAYER, 17));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_LAYER, &val));
	EXPECT_EQ(17, val);
	EXPECT_EQ(0, setopt_int(self->tx, DLCP_LAYER, 65535));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_LAYER, &val));
	EXPECT_EQ(65535, val);
}

TEST_F(dlcp, sockopt_max_msg_size)
{
	long long sys;
	int val;

	ASSERT_EQ(0, dlcp_sysctl_read("max_msg_size", &sys));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_MAX_MSG_SIZE, &val));
	EXPECT_EQ(sys, val);
	EXPECT_EQ(-1, setopt_int(self->tx, DLCP_MAX_MSG_SIZE, 100));
	EXPECT_EQ(ENOPROTOOPT, errno);
}

TEST_F(dlcp, sockopt_short_optlen)
{
	static const int opts[] = { DLCP_LOSS_BUDGET, DLCP_SEGMENT_SIZE,
				    DLCP_LAYER, DLCP_MAX_MSG_SIZE };
	unsigned int i;
	int val = 0;
	socklen_t len;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		len = sizeof(val) - 1;
		EXPECT_EQ(-1, getsockopt(self->tx, SOL_DLCP, opts[i], &val,
					 &len)) TH_LOG("option %d", opts[i]);
		EXPECT_EQ(EINVAL, errno);
		len = 0;
		EXPECT_EQ(-1, getsockopt(self->tx, SOL_DLCP, opts[i], &val,
					 &len)) TH_LOG("option %d", opts[i]);
		EXPECT_EQ(EINVAL, errno);
	}
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, DLCP_LOSS_BUDGET, &val,
				 2));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, DLCP_LAYER, &val, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dlcp, sockopt_unknown)
{
	int val = 0;
	socklen_t len = sizeof(val);

	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, 99, &val, sizeof(val)));
	EXPECT_EQ(ENOPROTOOPT, errno);
	EXPECT_EQ(-1, getsockopt(self->tx, SOL_DLCP, 99, &val, &len));
	EXPECT_EQ(ENOPROTOOPT, errno);
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, 0, &val, sizeof(val)));
	EXPECT_EQ(ENOPROTOOPT, errno);
}

TEST_F(dlcp, sockopt_paths)
{
	struct dlcp_path p[DLCP_MAX_PATHS + 1] = { 0 }, got[DLCP_MAX_PATHS];
	unsigned int lo = if_nametoindex("lo");
	char buf[1 << 12];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	socklen_t len = sizeof(got);
	ssize_t n;
	int i;

	ASSERT_NE(0, lo);
	/* none by default */
	ASSERT_EQ(0, getsockopt(self->tx, SOL_DLCP, DLCP_PATHS, got, &len));
	EXPECT_EQ(0, len);
	/* bad lengths, fields and interfaces */
	p[0].ifindex = lo;
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, DLCP_PATHS, p,
				 sizeof(p[0]) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, DLCP_PATHS, p,
				 sizeof(p)));
	EXPECT_EQ(EINVAL, errno);
	p[0].reserved = 1;
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, DLCP_PATHS, p,
				 sizeof(p[0])));
	EXPECT_EQ(EINVAL, errno);
	p[0].reserved = 0;
	p[0].weight = DLCP_PATH_WEIGHT_MAX + 1;
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, DLCP_PATHS, p,
				 sizeof(p[0])));
	EXPECT_EQ(EINVAL, errno);
	p[0].weight = 0;
	p[0].ifindex = 0;
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, DLCP_PATHS, p,
				 sizeof(p[0])));
	EXPECT_EQ(EINVAL, errno);
	p[0].ifindex = 0x7fff0000;
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, DLCP_PATHS, p,
				 sizeof(p[0])));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, setsockopt(self->tx, SOL_DLCP, DLCP_PATHS, (void *)8,
				 sizeof(p[0])));
	EXPECT_EQ(EFAULT, errno);
	/* a full set reads back, weight 0 as 1 */
	for (i = 0; i < DLCP_MAX_PATHS; i++) {
		p[i].ifindex = lo;
		p[i].weight = (uint16_t)i;
	}
	ASSERT_EQ(0, setsockopt(self->tx, SOL_DLCP, DLCP_PATHS, p,
				DLCP_MAX_PATHS * sizeof(p[0])));
	len = sizeof(got) - 1;
	EXPECT_EQ(-1, getsockopt(self->tx, SOL_DLCP, DLCP_PATHS, got, &len));
	EXPECT_EQ(EINVAL, errno);
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(self->tx, SOL_DLCP, DLCP_PATHS, got, &len));
	ASSERT_EQ(sizeof(got), len);
	for (i = 0; i < DLCP_MAX_PATHS; i++) {
		EXPECT_EQ(lo, got[i].ifindex);
		EXPECT_EQ(i ? i : 1, got[i].weight);
		EXPECT_EQ(0, got[i].reserved);
	}
	/* messages go over the paths (all lo here) and arrive whole */
	memset(buf, 0x3c, sizeof(buf));
	ASSERT_EQ(sizeof(buf), sendto(self->tx, buf, sizeof(buf), 0,
				      (struct sockaddr *)&self->to,
				      sizeof(self->to)));
	memset(buf, 0, sizeof(buf));
	n = recvmsg(self->rx, &mh, 0);
	ASSERT_EQ(sizeof(buf), n);
	EXPECT_EQ(0x3c, buf[0]);
	EXPECT_EQ(0x3c, buf[sizeof(buf) - 1]);
	/* optlen 0 clears */
	ASSERT_EQ(0, setsockopt(self->tx, SOL_DLCP, DLCP_PATHS, NULL, 0));
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(self->tx, SOL_DLCP, DLCP_PATHS, got, &len));
	EXPECT_EQ(0, len);
}

TEST_F(dlcp, sockopt_socket_level)
{
	/* below net.core.[rw]mem_max's default, which caps them */
	int val = 100000, got;
	socklen_t len = sizeof(got);
	struct timeval tv = { .tv_sec = 1, .tv_usec = 500000 }, tv2;

	ASSERT_EQ(0, setsockopt(self->tx, SOL_SOCKET, SO_SNDBUF, &val,
				sizeof(val)));
	ASSERT_EQ(0, getsockopt(self->tx, SOL_SOCKET, SO_SNDBUF, &got, &len));
	EXPECT_LE(val, got);
	val = 150000;
	ASSERT_EQ(0, setsockopt(self->rx, SOL_SOCKET, SO_RCVBUF, &val,
				sizeof(val)));
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(self->rx, SOL_SOCKET, SO_RCVBUF, &got, &len));
	EXPECT_LE(val, got);
	ASSERT_EQ(0, setsockopt(self->rx, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	len = sizeof(tv2);
	ASSERT_EQ(0, getsockopt(self->rx, SOL_SOCKET, SO_RCVTIMEO, &tv2,
				&len));
	EXPECT_EQ(1, tv2.tv_sec);
	EXPECT_EQ(500000, tv2.tv_usec);
	/* The socket still works with the new buffer sizes. */
	ASSERT_EQ(3, sendto(self->tx, "buf", 3, 0,
			    (struct sockaddr *)&self->to, sizeof(self->to)));
	EXPECT_EQ(3, recv(self->rx, &got, sizeof(got), 0));
}

/* ------------------------------------------------------------------ */
/* Completions                                                          */
/* ------------------------------------------------------------------ */

struct completion {
	ssize_t n;
	struct dlcp_completion c;
	int have_ee;
	struct sock_extended_err ee;
	int other_level;	/* another control message, for the log */
	int other_type;
};

/* Wait up to @ms for the error queue of @fd, then read one completion. */
static ssize_t recv_completion(int fd, int ms, struct completion *r)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sock_extended_err) + 64)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = &r->c, .iov_len = sizeof(r->c) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct pollfd pfd = { .fd = fd, .events = 0 };
	struct cmsghdr *cm;

	memset(r, 0, sizeof(*r));
	poll(&pfd, 1, ms);	/* POLLERR is always reported */
	r->n = recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
	if (r->n < 0)
		return r->n;
	r->other_level = -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_DLCP &&
		    cm->cmsg_type == DLCP_CMSG_COMPLETION &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(r->ee))) {
			memcpy(&r->ee, CMSG_DATA(cm), sizeof(r->ee));
			r->have_ee = 1;
		} else {
			r->other_level = cm->cmsg_level;
			r->other_type = cm->cmsg_type;
		}
	}
	return r->n;
}

TEST_F(dlcp, completion_delivered)
{
	struct dlcp_send_info si = good_info();
	struct pollfd pfd = { .fd = self->tx, .events = 0 };
	uint8_t buf[5000];
	struct completion cp;
	struct rx r;
	int val;

	ASSERT_EQ(0, getopt_int(self->tx, DLCP_RECVCOMPLETION, &val));
	EXPECT_EQ(0, val);
	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1))
		TH_LOG("DLCP_RECVCOMPLETION: %s", strerror(errno));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_RECVCOMPLETION, &val));
	EXPECT_EQ(1, val);
	EXPECT_EQ(-1, setopt_int(self->tx, DLCP_RECVCOMPLETION, 2));
	EXPECT_EQ(EINVAL, errno);

	memset(buf, 0x42, sizeof(buf));
	si.tensor_id = 0x77;
	si.iteration = 5;
	ASSERT_EQ(5000, send_info(self->tx, &self->to, buf, 5000, &si));
	ASSERT_EQ(5000, recv_full(self->rx, buf, sizeof(buf), 0, &r));
	ASSERT_TRUE(r.have_info);

	ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 5000, &cp))
		TH_LOG("no completion: %s", strerror(errno));
	EXPECT_EQ(r.info.msg_id, cp.c.msg_id);
	EXPECT_EQ(0x77, cp.c.tensor_id);
	EXPECT_EQ(5, cp.c.iteration);
	EXPECT_EQ(DLCP_DONE_EXACT, cp.c.status);
	EXPECT_EQ(5000, cp.c.msg_len);
	EXPECT_EQ(0, cp.c.bytes_lost);
	ASSERT_TRUE(cp.have_ee)
		TH_LOG("no SOL_DLCP/DLCP_CMSG_COMPLETION (got level %d type %d)",
		       cp.other_level, cp.other_type);
	EXPECT_EQ(SO_EE_ORIGIN_LOCAL, cp.ee.ee_origin);
	EXPECT_EQ(0, cp.ee.ee_errno);
	EXPECT_EQ(r.info.msg_id, cp.ee.ee_info);
	EXPECT_EQ(0, cp.ee.ee_data);

	/* One completion per message, and the error queue is empty again. */
	EXPECT_EQ(-1, recv_completion(self->tx, 0, &cp));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

/* Each message of several gets its own completion. */
TEST_F(dlcp, completion_per_message)
{
	struct dlcp_send_info si = good_info();
	unsigned int i, seen = 0;
	struct completion cp;
	uint8_t buf[64];

	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1));
	memset(buf, 1, sizeof(buf));
	for (i = 0; i < 4; i++) {
		si.iteration = i;
		ASSERT_EQ(64, send_info(self->tx, &self->to, buf, 64, &si));
	}
	for (i = 0; i < 4; i++)
		ASSERT_EQ(64, recv(self->rx, buf, sizeof(buf), 0));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 5000, &cp))
			TH_LOG("completion %u: %s", i, strerror(errno));
		ASSERT_GT(4, cp.c.iteration);
		EXPECT_EQ(DLCP_DONE_EXACT, cp.c.status);
		seen |= 1u << cp.c.iteration;
	}
	EXPECT_EQ(0xf, seen);
}

/* Without DLCP_RECVCOMPLETION nothing is queued. */
TEST_F(dlcp, completion_off_by_default)
{
	struct completion cp;
	char buf[8];

	ASSERT_EQ(3, sendto(self->tx, "abc", 3, 0,
			    (struct sockaddr *)&self->to, sizeof(self->to)));
	ASSERT_EQ(3, recv(self->rx, buf, sizeof(buf), 0));
	usleep(200 * 1000);
	EXPECT_EQ(-1, recv_completion(self->tx, 0, &cp));
	EXPECT_EQ(EAGAIN, errno);
}

/* No receiver: after net.dlcp.msg_timeout_ms the sender gives up. */
TEST_F(dlcp, completion_timeout)
{
	struct sockaddr_in nobody = lo_addr(9);
	struct completion cp;
	uint8_t buf[100] = { 0 };
	double t0, dt;

	ASSERT_EQ(0, dlcp_sysctl_read("msg_timeout_ms", &self->saved_timeout))
		TH_LOG("net.dlcp.msg_timeout_ms: %s", strerror(errno));
	ASSERT_EQ(0, dlcp_sysctl_write("msg_timeout_ms", 1000));
	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1));
	t0 = dlcp_now();
	ASSERT_EQ(100, sendto(self->tx, buf, 100, 0,
			      (struct sockaddr *)&nobody, sizeof(nobody)));
	ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 15000, &cp))
		TH_LOG("no completion: %s", strerror(errno));
	dt = dlcp_now() - t0;
	EXPECT_EQ(DLCP_DONE_TIMEOUT, cp.c.status);
	EXPECT_EQ(100, cp.c.msg_len);
	ASSERT_TRUE(cp.have_ee)
		TH_LOG("no SOL_DLCP/DLCP_CMSG_COMPLETION (got level %d type %d)",
		       cp.other_level, cp.other_type);
	EXPECT_EQ(ETIMEDOUT, cp.ee.ee_errno);
	EXPECT_EQ(SO_EE_ORIGIN_LOCAL, cp.ee.ee_origin);
	EXPECT_LE(0.8, dt) TH_LOG("gave up after %.2f s", dt);
	EXPECT_GE(10.0, dt) TH_LOG("gave up after %.2f s", dt);
}

/*
 * Messages queued behind others to a silent receiver fail with the first
 * one, not one msg_timeout_ms after another; close() then returns within
 * about one timeout too.
 */
TEST_F(dlcp, completion_timeout_queued)
{
	struct sockaddr_in nobody = lo_addr(9);
	static uint8_t buf[256 * 1024];
	struct completion cp;
	double t0, dt, last = 0;
	unsigned int i;
	int fd;

	ASSERT_EQ(0, dlcp_sysctl_read("msg_timeout_ms", &self->saved_timeout))
		TH_LOG("net.dlcp.msg_timeout_ms: %s", strerror(errno));
	ASSERT_EQ(0, dlcp_sysctl_write("msg_timeout_ms", 1000));
	/* 180 segments a message: only the first fits the initial window */
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1));
	t0 = dlcp_now();
	for (i = 0; i < 4; i++)
		ASSERT_EQ(sizeof(buf),
			  sendto(self->tx, buf, sizeof(buf), 0,
				 (struct sockaddr *)&nobody, sizeof(nobody)))
			TH_LOG("message %u: %s", i, strerror(errno));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 15000, &cp))
			TH_LOG("completion %u: %s", i, strerror(errno));
		EXPECT_EQ(DLCP_DONE_TIMEOUT, cp.c.status);
		EXPECT_EQ(ETIMEDOUT, cp.ee.ee_errno);
		last = dlcp_now() - t0;
	}
	EXPECT_LE(0.8, last) TH_LOG("the last gave up after %.2f s", last);
	EXPECT_GE(2.5, last) TH_LOG("the last gave up after %.2f s", last);

	fd = dlcp_socket(_metadata);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(sizeof(buf),
			  sendto(fd, buf, sizeof(buf), 0,
				 (struct sockaddr *)&nobody, sizeof(nobody)));
	t0 = dlcp_now();
	close(fd);
	dt = dlcp_now() - t0;
	EXPECT_GE(2.5, dt) TH_LOG("close() took %.2f s", dt);
}

/*
 * A message queued while its route existed, whose route then vanished
 * before it could start, fails with EHOSTUNREACH about msg_timeout_ms
 * after its first attempt, instead of waiting for a route for ever (and
 * close() with it).
 */
TEST_F(dlcp, completion_no_route)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct sockaddr_in b = a;
	static uint8_t buf[256 * 1024];
	struct dlcp_snmp snmp;
	struct completion cp;
	double t0, dt;

	a.sin_addr.s_addr = inet_addr("10.201.0.2");
	b.sin_addr.s_addr = a.sin_addr.s_addr;
	b.sin_port = htons(10);
	ASSERT_EQ(0, dlcp_sysctl_read("msg_timeout_ms", &self->saved_timeout));
	ASSERT_EQ(0, dlcp_sysctl_write("msg_timeout_ms", 1000));
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	/* nobody there: lo hands the packets to IP, which drops them */
	ASSERT_EQ(0, system("ip route add 10.201.0.0/24 dev lo"));
	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1));
	t0 = dlcp_now();
	/* a fills the peer's initial window; b (another port) waits */
	ASSERT_EQ(sizeof(buf), sendto(self->tx, buf, sizeof(buf), 0,
				      (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(sizeof(buf), sendto(self->tx, buf, sizeof(buf), 0,
				      (struct sockaddr *)&b, sizeof(b)));
	ASSERT_EQ(0, system("ip route del 10.201.0.0/24 dev lo"));
	/* the new routing table: a cannot reach it either */
	EXPECT_EQ(-1, sendto(self->tx, buf, 1, 0, (struct sockaddr *)&a,
			     sizeof(a)));
	EXPECT_EQ(ENETUNREACH, errno);

	/* a started: it timed out, its last resends found no route */
	ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 5000, &cp));
	EXPECT_EQ(DLCP_DONE_TIMEOUT, cp.c.status);
	EXPECT_TRUE(cp.ee.ee_errno == ETIMEDOUT ||
		    cp.ee.ee_errno == EHOSTUNREACH)
		TH_LOG("a: %s", strerror(cp.ee.ee_errno));
	ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 5000, &cp))
		TH_LOG("b never gave up: %s", strerror(errno));
	EXPECT_EQ(DLCP_DONE_TIMEOUT, cp.c.status);
	EXPECT_EQ(EHOSTUNREACH, cp.ee.ee_errno);
	EXPECT_EQ(0, cp.c.bytes_lost);
	dt = dlcp_now() - t0;
	/*
	 * b's clock starts at its first attempt: when a's window times out
	 * (200 ms) or a gives up (1 s); one msg_timeout later b gives up
	 */
	EXPECT_LE(1.1, dt) TH_LOG("b gave up after %.2f s", dt);
	EXPECT_GE(2.8, dt) TH_LOG("b gave up after %.2f s", dt);
	ASSERT_EQ(0, dlcp_snmp_read(&snmp));
	EXPECT_EQ(2, dlcp_snmp_get(&snmp, "DlcpOutMsgsFailed"));
}

/* ------------------------------------------------------------------ */
/* Counters                                                             */
/* ------------------------------------------------------------------ */

TEST_F(dlcp, snmp_counter_names)
{
	struct dlcp_snmp s;
	unsigned int i;

	ASSERT_EQ(0, dlcp_snmp_read(&s)) TH_LOG("%s: %s", DLCP_SNMP_PATH,
						 strerror(errno));
	for (i = 0; i < dlcp_snmp_nr_names; i++)
		EXPECT_TRUE(dlcp_snmp_has(&s, dlcp_snmp_names[i]))
			TH_LOG("%s missing", dlcp_snmp_names[i]);
	/* A fresh netns starts from zero: no traffic yet. */
	for (i = 0; i < s.n; i++)
		EXPECT_EQ(0, s.c[i].val) TH_LOG("%s = %llu in a new netns",
						s.c[i].name,
						(unsigned long long)s.c[i].val);
}

TEST_F(dlcp, snmp_counts_messages)
{
	struct dlcp_snmp s;
	uint8_t buf[200000];
	int seg;

	/* The segment size towards the receiver sets the packet count. */
	ASSERT_EQ(0, connect(self->tx, (struct sockaddr *)&self->to,
			     sizeof(self->to)));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_SEGMENT_SIZE, &seg));
	ASSERT_LT(0, seg);
	memset(buf, 1, sizeof(buf));
	ASSERT_EQ(sizeof(buf), send(self->tx, buf, sizeof(buf), 0));
	ASSERT_EQ(sizeof(buf), recv(self->rx, buf, sizeof(buf), 0));
	usleep(200 * 1000);	/* the STOP may still be on its way */
	ASSERT_EQ(0, dlcp_snmp_read(&s));
	EXPECT_EQ(1, dlcp_snmp_get(&s, "DlcpOutMsgs"));
	EXPECT_EQ(1, dlcp_snmp_get(&s, "DlcpInMsgs"));
	/* data packets, and at least the STOP back */
	EXPECT_LE((sizeof(buf) + seg - 1) / seg + 1,
		  dlcp_snmp_get(&s, "DlcpOutPkts"));
	/* One netns, no loss: every packet sent is received. */
	EXPECT_EQ(dlcp_snmp_get(&s, "DlcpOutPkts"),
		  dlcp_snmp_get(&s, "DlcpInPkts"));
	EXPECT_EQ(0, dlcp_snmp_get(&s, "DlcpInCsumErrors"));
	EXPECT_EQ(0, dlcp_snmp_get(&s, "DlcpDropNoSocket"));
}

/* Counters belong to the network namespace. */
TEST_F(dlcp, snmp_per_netns)
{
	struct dlcp_snmp s;
	uint16_t port;
	struct sockaddr_in to;
	int rx, tx;
	char c;

	ASSERT_EQ(1, sendto(self->tx, "1", 1, 0, (struct sockaddr *)&self->to,
			    sizeof(self->to)));
	ASSERT_EQ(1, recv(self->rx, &c, 1, 0));
	ASSERT_EQ(0, dlcp_snmp_read(&s));
	ASSERT_EQ(1, dlcp_snmp_get(&s, "DlcpOutMsgs"));

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_snmp_read(&s));
	EXPECT_EQ(0, dlcp_snmp_get(&s, "DlcpOutMsgs"));
	EXPECT_EQ(0, dlcp_snmp_get(&s, "DlcpInMsgs"));

	rx = bound_socket(_metadata, &port);
	tx = dlcp_socket(_metadata);
	to = lo_addr(port);
	ASSERT_EQ(1, sendto(tx, "2", 1, 0, (struct sockaddr *)&to,
			    sizeof(to)));
	ASSERT_EQ(1, sendto(tx, "3", 1, 0, (struct sockaddr *)&to,
			    sizeof(to)));
	ASSERT_EQ(1, recv(rx, &c, 1, 0));
	ASSERT_EQ(1, recv(rx, &c, 1, 0));
	ASSERT_EQ(0, dlcp_snmp_read(&s));
	EXPECT_EQ(2, dlcp_snmp_get(&s, "DlcpOutMsgs"));
	EXPECT_EQ(2, dlcp_snmp_get(&s, "DlcpInMsgs"));
	close(rx);
	close(tx);
}

/* ------------------------------------------------------------------ */
/* Bigger transfers on loopback                                         */
/* ------------------------------------------------------------------ */

/* A 1 MiB tensor with metadata, byte for byte. */
TEST_F(dlcp, large_message)
{
	size_t len = 1 << 20;
	uint8_t *buf = xmalloc(_metadata, len + 1);
	struct dlcp_send_info si = good_info();
	struct rx r;

	dlcp_payload_fill(buf, len, dlcp_payload_seed(5, 6, len));
	ASSERT_EQ(len, send_info(self->tx, &self->to, buf, len, &si))
		TH_LOG("send 1 MiB: %s", strerror(errno));
	memset(buf, 0, len);
	ASSERT_EQ(len, recv_full(self->rx, buf, len + 1, 0, &r))
		TH_LOG("recv: %s", strerror(errno));
	EXPECT_EQ(len, dlcp_payload_cmp(buf, len,
					dlcp_payload_seed(5, 6, len)));
	ASSERT_TRUE(r.have_info);
	EXPECT_EQ(len, r.info.msg_len);
	EXPECT_EQ(DLCP_RECV_EXACT, r.info.status);
	free(buf);
}

/*
 * A sender in another process sends many messages while this one
 * receives: each exactly once, intact, whatever the order.
 */
TEST_F(dlcp, many_messages)
{
	enum { N = 200 };
	static uint8_t seen[N];
	size_t max = 70000;
	uint8_t *buf = xmalloc(_metadata, max);
	unsigned int i, got = 0;
	int status;
	pid_t pid;
	struct rx r;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct dlcp_send_info si = { .flags = 0 };

		for (i = 0; i < N; i++) {
			size_t len = 1 + (i * 7919u) % 65536;

			dlcp_payload_fill(buf, len,
					  dlcp_payload_seed(9, i, len));
			si.tensor_id = 9;
			si.iteration = i;
			if (send_info(self->tx, &self->to, buf, len, &si) !=
			    (ssize_t)len)
				_exit(1);
		}
		/* Stay until everything is received: close aborts. */
		set_rcvtimeo_ms(self->tx, 20000);
		_exit(recv(self->tx, buf, 1, 0) == 1 ? 0 : 2);
	}
	for (i = 0; i < N; i++) {
		if (recv_full(self->rx, buf, max, 0, &r) <= 0) {
			TH_LOG("recv %u/%u: %s", i, N, strerror(errno));
			break;
		}
		ASSERT_TRUE(r.have_info);
		ASSERT_GT(N, r.info.iteration);
		EXPECT_EQ(0, seen[r.info.iteration]);
		seen[r.info.iteration]++;
		EXPECT_EQ(1 + (r.info.iteration * 7919u) % 65536, r.n);
		EXPECT_EQ(r.n, dlcp_payload_cmp(buf, r.n,
						dlcp_payload_seed(9,
							r.info.iteration,
							r.n)));
		got++;
	}
	/* Tell the sender it may go. */
	sendto(self->rx, "k", 1, 0, (struct sockaddr *)&r.from,
	       sizeof(r.from));
	EXPECT_EQ(N, got);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	free(buf);
}

/* Closing sockets with queued and in-flight messages frees everything. */
TEST_F(dlcp, close_with_queued)
{
	uint8_t *buf = xmalloc(_metadata, 300000);
	int i;

	memset(buf, 7, 300000);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(300000, sendto(self->tx, buf, 300000, 0,
					 (struct sockaddr *)&self->to,
					 sizeof(self->to)));
	close(self->tx);
	self->tx = -1;
	usleep(200 * 1000);
	close(self->rx);
	self->rx = -1;
	free(buf);
}

/* ------------------------------------------------------------------ */
/* AF_INET6                                                             */
/* ------------------------------------------------------------------ */

static int dlcp6_socket(struct __test_metadata *_metadata, uint16_t port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(port) };
	int fd = socket(AF_INET6, SOCK_DLCP, 0);

	ASSERT_LE(0, fd) TH_LOG("socket(AF_INET6, SOCK_DLCP, 0): %s",
				strerror(errno));
	set_rcvtimeo_ms(fd, RCV_TIMEOUT_MS);
	if (port)
		ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)))
			TH_LOG("bind [::]:%u: %s", port, strerror(errno));
	return fd;
}

/* A message over ::1 arrives whole, from a sockaddr_in6 sender. */
TEST_F(dlcp, ipv6_loopback)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6,
				   .sin6_port = htons(41600),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in6 from;
	socklen_t flen = sizeof(from);
	int rx = dlcp6_socket(_metadata, 41600), tx = dlcp6_socket(_metadata, 0);
	size_t n = 100000, i;
	uint8_t *buf = xmalloc(_metadata, n), *got = xmalloc(_metadata, n);

	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 7);
	ASSERT_EQ((ssize_t)n, sendto(tx, buf, n, 0, (struct sockaddr *)&to,
				     sizeof(to))) TH_LOG("%s", strerror(errno));
	ASSERT_EQ((ssize_t)n, recvfrom(rx, got, n, 0, (struct sockaddr *)&from,
				       &flen)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, memcmp(buf, got, n));
	EXPECT_EQ(sizeof(from), flen);
	EXPECT_EQ(AF_INET6, from.sin6_family);
	EXPECT_TRUE(IN6_IS_ADDR_LOOPBACK(&from.sin6_addr));
	EXPECT_NE(0, from.sin6_port);
	close(rx);
	close(tx);
	free(buf);
	free(got);
}

/*
 * An AF_INET6 socket talks to an AF_INET one through v4-mapped addresses,
 * both ways, unless IPV6_V6ONLY: then sending to a mapped address fails
 * with ENETUNREACH and IPv4 packets do not reach it.
 */
TEST_F(dlcp, ipv6_v4mapped_and_v6only)
{
	struct sockaddr_in6 to6 = { .sin6_family = AF_INET6,
				    .sin6_port = htons(self->port) };
	struct sockaddr_in6 from;
	socklen_t flen = sizeof(from);
	struct sockaddr_in to4 = lo_addr(41700);
	int s6 = dlcp6_socket(_metadata, 41700), one = 1, only;
	char b[8];

	inet_pton(AF_INET6, "::ffff:127.0.0.1", &to6.sin6_addr);
	/* v6 socket -> v4 socket */
	ASSERT_EQ(3, sendto(s6, "abc", 3, 0, (struct sockaddr *)&to6,
			    sizeof(to6))) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(3, recv(self->rx, b, sizeof(b), 0));
	/* v4 socket -> v6 socket: the sender shows as v4-mapped */
	ASSERT_EQ(3, sendto(self->tx, "def", 3, 0, (struct sockaddr *)&to4,
			    sizeof(to4)));
	ASSERT_EQ(3, recvfrom(s6, b, sizeof(b), 0, (struct sockaddr *)&from,
			      &flen));
	EXPECT_TRUE(IN6_IS_ADDR_V4MAPPED(&from.sin6_addr));
	close(s6);

	/* IPV6_V6ONLY, set before bind */
	s6 = socket(AF_INET6, SOCK_DLCP, 0);
	ASSERT_LE(0, s6);
	ASSERT_EQ(0, setsockopt(s6, SOL_IPV6, IPV6_V6ONLY, &one, sizeof(one)));
	flen = sizeof(only);
	ASSERT_EQ(0, getsockopt(s6, SOL_IPV6, IPV6_V6ONLY, &only, &flen));
	EXPECT_EQ(1, only);
	EXPECT_EQ(-1, sendto(s6, "abc", 3, 0, (struct sockaddr *)&to6,
			     sizeof(to6)));
	EXPECT_EQ(ENETUNREACH, errno);
	close(s6);
}

/* An AF_INET6 socket takes only sockaddr_in6; a short one is EINVAL. */
TEST_F(dlcp, ipv6_bad_addresses)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(41800) };
	struct sockaddr_in a = lo_addr(41800);
	int s6 = socket(AF_INET6, SOCK_DLCP, 0);

	ASSERT_LE(0, s6);
	EXPECT_EQ(-1, bind(s6, (struct sockaddr *)&a, sizeof(a)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	EXPECT_EQ(-1, bind(s6, (struct sockaddr *)&a6, 8));
	EXPECT_EQ(EINVAL, errno);
	/* not an address of this host */
	inet_pton(AF_INET6, "2001:db8::1", &a6.sin6_addr);
	EXPECT_EQ(-1, bind(s6, (struct sockaddr *)&a6, sizeof(a6)));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	/* multicast destinations are refused */
	inet_pton(AF_INET6, "ff02::1", &a6.sin6_addr);
	EXPECT_EQ(-1, sendto(s6, "x", 1, 0, (struct sockaddr *)&a6,
			     sizeof(a6)));
	EXPECT_EQ(EACCES, errno);
	close(s6);
}

TEST_HARNESS_MAIN
