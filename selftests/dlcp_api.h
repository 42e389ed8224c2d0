/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers and the fixture of the DLCP socket API selftests (dlcp_api.c,
 * dlcp_api_msg.c, dlcp_api_cmsg.c). Each of those programs includes this
 * header once, after which its TEST_F(dlcp, ...) run in a fresh network
 * namespace with a receiver bound on 127.0.0.1 and a sender.
 *
 * The helpers are static inline so that a program need not use them all;
 * those that take _metadata fail the calling test with the harness's
 * ASSERT_*().
 */
#ifndef DLCP_SELFTEST_API_H
#define DLCP_SELFTEST_API_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

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

static inline struct sockaddr_in lo_addr(uint16_t port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};

	return a;
}

static inline void set_rcvtimeo_ms(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static inline int dlcp_socket(struct __test_metadata *_metadata)
{
	int fd = socket(AF_INET, SOCK_DLCP, 0);

	ASSERT_LE(0, fd) TH_LOG("socket(AF_INET, SOCK_DLCP, 0): %s",
				strerror(errno));
	set_rcvtimeo_ms(fd, RCV_TIMEOUT_MS);
	return fd;
}

static inline uint16_t local_port(struct __test_metadata *_metadata, int fd)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);

	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&a, &alen));
	ASSERT_EQ(AF_INET, a.sin_family);
	return ntohs(a.sin_port);
}

/* A socket bound to 127.0.0.1 on an ephemeral port; returns the port. */
static inline int bound_socket(struct __test_metadata *_metadata,
			       uint16_t *port)
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
static inline ssize_t send_cmsg(int fd, const struct sockaddr_in *to,
				const void *buf, size_t len, int level,
				int type, const void *data, size_t dlen,
				size_t cmsg_len)
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

static inline ssize_t send_info(int fd, const struct sockaddr_in *to,
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
static inline ssize_t recv_full(int fd, void *buf, size_t len, int flags,
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
static inline void assert_empty(struct __test_metadata *_metadata, int fd)
{
	char c;

	usleep(100 * 1000);
	ASSERT_EQ(-1, recv(fd, &c, 1, MSG_DONTWAIT));
	ASSERT_EQ(EAGAIN, errno);
}

static inline void *xmalloc(struct __test_metadata *_metadata, size_t len)
{
	void *p = malloc(len ? len : 1);

	ASSERT_NE(NULL, p);
	return p;
}

static inline int getopt_int(int fd, int name, int *val)
{
	socklen_t len = sizeof(*val);
	int ret = getsockopt(fd, SOL_DLCP, name, val, &len);

	if (!ret && len != sizeof(*val)) {
		errno = ERANGE;
		return -1;
	}
	return ret;
}

static inline int setopt_int(int fd, int name, int val)
{
	return setsockopt(fd, SOL_DLCP, name, &val, sizeof(val));
}

static inline struct dlcp_send_info good_info(void)
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

#endif /* DLCP_SELFTEST_API_H */
