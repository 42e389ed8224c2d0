/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the DLCP selftests of a shared node (dlcp_hostile.c: hostile
 * peers, dlcp_hostile_users.c: hostile users, dlcp_hostile_mem.c: floods
 * and memory): sockets on 127.0.0.x, sending and receiving one message
 * with its DLCP control message, counters, shell commands, and forged
 * packets from a raw socket. Each of those programs includes this header
 * once. The helpers are static inline so that a program need not use
 * them all.
 */
#ifndef DLCP_SELFTEST_HOSTILE_H
#define DLCP_SELFTEST_HOSTILE_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <linux/dlcp.h>
#include <linux/errqueue.h>

/* the harness's TEST() has a parameter a plain test does not use */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "dlcp_pkt.h"
#include "dlcp_util.h"

#define WAIT_MS		10000
#define QUIET_MS	1500

static inline struct sockaddr_in sin4(const char *ip, uint16_t port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* A DLCP socket bound to @ip, port chosen by the kernel; -1 on error. */
static inline int bound4(const char *ip)
{
	struct sockaddr_in a = sin4(ip, 0);
	int fd = socket(AF_INET, SOCK_DLCP, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static inline uint16_t port_of(int fd)
{
	struct sockaddr_in6 a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len))
		return 0;
	return ntohs(a.sin6_port);	/* same offset in sockaddr_in */
}

/* Send @len bytes to @ip:@port as one message with DLCP_CMSG_SEND @flags. */
static inline ssize_t send_to(int fd, const char *ip, uint16_t port,
			      const void *buf, size_t len, uint16_t flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_send_info))];
		struct cmsghdr align;
	} ctl;
	struct dlcp_send_info si = { .flags = flags };
	struct sockaddr_in to = sin4(ip, port);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	struct cmsghdr *c;

	if (flags) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEND;
		c->cmsg_len = CMSG_LEN(sizeof(si));
		memcpy(CMSG_DATA(c), &si, sizeof(si));
	}
	return sendmsg(fd, &mh, 0);
}

/*
 * Receive one message within @ms into @buf, its DLCP_CMSG_RECV into @ri
 * (if not NULL). Returns its length, or -1 (errno ETIMEDOUT on time out).
 */
static inline ssize_t recv_within(int fd, void *buf, size_t len,
				  struct dlcp_recv_info *ri, int ms)
{
	char ctl[CMSG_SPACE(sizeof(struct dlcp_recv_info)) + 4096];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;

	if (poll(&p, 1, ms) != 1) {
		errno = ETIMEDOUT;
		return -1;
	}
	n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < 0 || !ri)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_DLCP && c->cmsg_type == DLCP_CMSG_RECV)
			memcpy(ri, CMSG_DATA(c), sizeof(*ri));
	return n;
}

static inline uint64_t snmp(const char *name)
{
	struct dlcp_snmp s;

	if (dlcp_snmp_read(&s))
		return UINT64_MAX;
	return dlcp_snmp_get(&s, name);
}

/* Close @fd at once: what it has not delivered is aborted (SO_LINGER 0). */
static inline void close_now(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

static inline int sh(const char *cmd)
{
	int rc = system(cmd);

	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/*
 * Send the DLCP packet @pkt from @saddr (any address: a raw IPv4 socket
 * writes the IP header itself) to @daddr.
 */
static inline int raw_send4(const char *saddr, const char *daddr,
			    const void *pkt, size_t len)
{
	uint8_t buf[2048] = { 0 };
	struct sockaddr_in to = sin4(daddr, 0);
	uint32_t s, d;
	int fd, rc;

	if (len + 20 > sizeof(buf))
		return -1;
	inet_pton(AF_INET, saddr, &s);
	inet_pton(AF_INET, daddr, &d);
	buf[0] = 0x45;
	dlcp_put16(buf + 2, (uint16_t)(len + 20));
	buf[8] = 64;
	buf[9] = IPPROTO_DLCP;
	memcpy(buf + 12, &s, 4);
	memcpy(buf + 16, &d, 4);
	memcpy(buf + 20, pkt, len);
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0)
		return -1;
	rc = sendto(fd, buf, len + 20, 0, (struct sockaddr *)&to, sizeof(to));
	close(fd);
	return rc == (int)(len + 20) ? 0 : -1;
}

/*
 * Wait up to @ms for a completion on @fd's error queue; its status in
 * @status and errno in @err. 0, or -1 if none came.
 */
static inline int completion(int fd, int ms, uint32_t *status, int *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sock_extended_err) + 64)];
		struct cmsghdr align;
	} ctl;
	struct dlcp_completion c;
	struct iovec iov = { .iov_base = &c, .iov_len = sizeof(c) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct pollfd p = { .fd = fd };
	struct cmsghdr *cm;

	poll(&p, 1, ms);	/* POLLERR is always reported */
	if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) != sizeof(c))
		return -1;
	*status = c.status;
	*err = 0;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_DLCP &&
		    cm->cmsg_type == DLCP_CMSG_COMPLETION)
			*err = ((struct sock_extended_err *)CMSG_DATA(cm))->ee_errno;
	return 0;
}

/* A sender on 127.0.0.1 with completions on and msg_timeout_ms @ms. */
static inline int quick_sender(int ms)
{
	int fd, one = 1;

	if (dlcp_sysctl_write("msg_timeout_ms", ms))
		return -1;
	fd = bound4("127.0.0.1");
	if (fd >= 0 &&
	    setsockopt(fd, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one))) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif /* DLCP_SELFTEST_HOSTILE_H */
