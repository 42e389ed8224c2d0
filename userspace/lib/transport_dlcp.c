// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp transport over a DLCP socket (SOCK_DLCP, needs the dlcp module):
 * one sendmsg() per message, its metadata in control messages; a receive
 * peeks at the message first to size the buffer and the lost ranges.
 *
 * The socket reports the outcome of every message it sends on its error
 * queue (DLCP_RECVCOMPLETION), which every send and receive drains: a
 * message refused by its destination's host (ECONNREFUSED: no socket on
 * the port, its process died or closed it) fails the next send or receive
 * of the endpoint, so that a collective learns of a dead peer within a
 * round trip rather than at its timeout.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <linux/errqueue.h>

#include "libdlcp.h"
#include "addr.h"
#include "clock.h"
#include "transport.h"

struct dlcp_ep_dlcp {
	struct dlcp_ep ep;
	int seg_class_ok;	/* the module takes DLCP_CMSG_SEG_CLASS */
};

static struct dlcp_ep_dlcp *to_dlcp(struct dlcp_ep *ep)
{
	return (struct dlcp_ep_dlcp *)ep;
}

static int dlcpsk_open(struct dlcp_ep **epp, const struct sockaddr *addr)
{
	struct dlcp_ep_dlcp *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	d->seg_class_ok = 1;
	err = dlcp_ep_bind(&d->ep, addr, SOCK_DLCP, 0);
	if (!err && setsockopt(d->ep.fd, SOL_DLCP, DLCP_RECVCOMPLETION,
			       &(int){ 1 }, sizeof(int))) {
		err = -errno;
		close(d->ep.fd);
	}
	if (err) {
		free(d);
		return err;
	}
	*epp = &d->ep;
	return 0;
}

/*
 * Read every completion waiting on @ep's error queue. Returns
 * -ECONNREFUSED if one of them was refused by its destination's host,
 * else 0.
 */
static int dlcpsk_drain(struct dlcp_ep *ep)
{
	int refused = 0;

	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(struct sock_extended_err))];
			struct cmsghdr align;
		} ctl;
		struct dlcp_completion c;
		struct iovec iov = { .iov_base = &c, .iov_len = sizeof(c) };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.buf,
			.msg_controllen = sizeof(ctl.buf),
		};
		struct sock_extended_err ee;
		struct cmsghdr *cm;

		if (recvmsg(ep->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_DLCP ||
			    cm->cmsg_type != DLCP_CMSG_COMPLETION ||
			    cm->cmsg_len < CMSG_LEN(sizeof(ee)))
				continue;
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			if (ee.ee_errno == ECONNREFUSED)
				refused = -ECONNREFUSED;
		}
	}
	return refused;
}

static int dlcpsk_close(struct dlcp_ep *ep, int linger_ms)
{
	if (linger_ms >= 0) {
		struct linger l = { .l_onoff = 1,
				    .l_linger = (linger_ms + 999) / 1000 };

		setsockopt(ep->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	close(ep->fd);
	free(to_dlcp(ep));
	return 0;
}

static int dlcpsk_set_send_timeout(struct dlcp_ep *ep)
{
	struct timeval tv;

	tv.tv_sec = ep->send_timeout_ms / 1000;
	tv.tv_usec = (ep->send_timeout_ms % 1000) * 1000;
	if (setsockopt(ep->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

static int dlcpsk_segment_size(const struct dlcp_ep *ep)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(ep->fd, SOL_DLCP, DLCP_SEGMENT_SIZE, &v, &l))
		return -errno;
	return v;
}

static int dlcpsk_send(struct dlcp_ep *ep, const struct sockaddr_storage *dst,
		       socklen_t dstlen, const struct iovec *iov, int iovcnt,
		       size_t len, const struct dlcp_tensor_meta *meta)
{
	struct dlcp_ep_dlcp *d = to_dlcp(ep);
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_send_info)) +
			 CMSG_SPACE(sizeof(struct dlcp_range) * 16)];
		struct cmsghdr align;
	} small;
	char *ctl = small.buf;
	size_t ctl_len;
	struct msghdr mh = { 0 };
	struct dlcp_send_info si = { 0 };
	struct cmsghdr *c;
	int err, with_class;

	(void)len;
	with_class = meta && meta->seg_class && meta->nr_seg_class &&
		     d->seg_class_ok;
again:
	ctl_len = 0;
	if (meta) {
		ctl_len += CMSG_SPACE(sizeof(si));
		if (meta->nr_crit)
			ctl_len += CMSG_SPACE(meta->nr_crit * sizeof(struct dlcp_range));
		if (with_class)
			ctl_len += CMSG_SPACE(meta->nr_seg_class);
	}
	if (ctl_len > sizeof(small.buf)) {
		ctl = calloc(1, ctl_len);
		if (!ctl)
			return -ENOMEM;
	} else {
		memset(small.buf, 0, sizeof(small.buf));
	}
	mh.msg_name = (void *)dst;
	mh.msg_namelen = dstlen;
	mh.msg_iov = (struct iovec *)iov;
	mh.msg_iovlen = (size_t)iovcnt;
	if (meta) {
		mh.msg_control = ctl;
		mh.msg_controllen = ctl_len;
		si.tensor_id = meta->tensor_id;
		si.iteration = meta->iteration;
		si.layer = meta->layer;
		si.dtype = meta->dtype;
		si.flags = (meta->flags & (DLCP_MSG_CRITICAL | DLCP_MSG_HAS_DEADLINE)) |
			   DLCP_MSG_HAS_BUDGET | DLCP_MSG_HAS_LAYER;
		si.loss_budget_ppm = meta->loss_budget_ppm;
		si.deadline_ms = meta->deadline_ms;
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEND;
		c->cmsg_len = CMSG_LEN(sizeof(si));
		memcpy(CMSG_DATA(c), &si, sizeof(si));
		if (meta->nr_crit) {
			c = CMSG_NXTHDR(&mh, c);
			c->cmsg_level = SOL_DLCP;
			c->cmsg_type = DLCP_CMSG_CRITICAL;
			c->cmsg_len = CMSG_LEN(meta->nr_crit * sizeof(struct dlcp_range));
			memcpy(CMSG_DATA(c), meta->crit,
			       meta->nr_crit * sizeof(struct dlcp_range));
		}
		if (with_class) {
			c = CMSG_NXTHDR(&mh, c);
			c->cmsg_level = SOL_DLCP;
			c->cmsg_type = DLCP_CMSG_SEG_CLASS;
			c->cmsg_len = CMSG_LEN(meta->nr_seg_class);
			memcpy(CMSG_DATA(c), meta->seg_class, meta->nr_seg_class);
		}
	}
	err = dlcpsk_drain(ep);
	while (!err) {
		err = sendmsg(ep->fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
		if (err != -EINTR)
			break;
		err = 0;
	}
	if (ctl != small.buf)
		free(ctl);
	ctl = small.buf;
	if (err == -EOPNOTSUPP && with_class) {
		/* module without DLCP_CMSG_SEG_CLASS: send without classes */
		d->seg_class_ok = 0;
		with_class = 0;
		goto again;
	}
	if (err == -EAGAIN || err == -EWOULDBLOCK)
		err = -ETIMEDOUT;
	return err;
}

static long dlcpsk_recv(struct dlcp_ep *ep, void **bufp,
			struct dlcp_tensor_info *info,
			struct dlcp_range **lostp, int timeout_ms,
			struct sockaddr_storage *srcp)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_recv_info))];
		struct cmsghdr align;
	} peekctl;
	struct dlcp_recv_info ri;
	struct sockaddr_storage src;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	struct pollfd pfd;
	char *ctl = NULL, *buf = NULL;
	size_t ctl_len;
	long r, deadline;
	int got_info = 0;

	pfd.fd = ep->fd;
	pfd.events = POLLIN;
	deadline = timeout_ms >= 0 ? dlcp_clock_ms() + timeout_ms : -1;
again:
	/* every wait counts against the one deadline: signals (EINTR) and
	 * wake-ups with nothing to read do not restart the timeout */
	do {
		long left = deadline < 0 ? -1 : deadline - dlcp_clock_ms();

		r = poll(&pfd, 1, deadline < 0 ? -1 : left > 0 ? (int)left : 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	if (pfd.revents & POLLERR) {	/* completions of messages sent */
		r = dlcpsk_drain(ep);
		if (r)
			return r;
		if (!(pfd.revents & POLLIN))
			goto again;
	}

	/* Peek: length and number of lost ranges. */
	memset(&mh, 0, sizeof(mh));
	memset(&peekctl, 0, sizeof(peekctl));
	iov.iov_base = NULL;
	iov.iov_len = 0;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = peekctl.buf;
	mh.msg_controllen = sizeof(peekctl.buf);
	r = recvmsg(ep->fd, &mh, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		if (deadline >= 0 && dlcp_clock_ms() >= deadline)
			return -ETIMEDOUT;
		usleep(1000);	/* readable, yet nothing: no busy loop */
		goto again;
	}
	if (r < 0)
		return -errno;
	memset(&ri, 0, sizeof(ri));
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_DLCP && c->cmsg_type == DLCP_CMSG_RECV &&
		    c->cmsg_len >= CMSG_LEN(sizeof(ri))) {
			memcpy(&ri, CMSG_DATA(c), sizeof(ri));
			got_info = 1;
		}
	if (!got_info)
		return -EPROTO;

	buf = malloc(ri.msg_len ? ri.msg_len : 1);
	ctl_len = CMSG_SPACE(sizeof(ri)) +
		  CMSG_SPACE((size_t)ri.nr_lost_ranges * sizeof(struct dlcp_range));
	ctl = calloc(1, ctl_len);
	if (!buf || !ctl) {
		r = -ENOMEM;
		goto fail;
	}
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = buf;
	iov.iov_len = ri.msg_len;
	mh.msg_name = &src;
	mh.msg_namelen = sizeof(src);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl;
	mh.msg_controllen = ctl_len;
	r = recvmsg(ep->fd, &mh, MSG_DONTWAIT);
	if (r < 0) {
		r = -errno;
		goto fail;
	}
	memset(info, 0, sizeof(*info));
	dlcp_addr_unmap(&src);
	*srcp = src;
	got_info = 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_DLCP)
			continue;
		if (c->cmsg_type == DLCP_CMSG_RECV &&
		    c->cmsg_len >= CMSG_LEN(sizeof(ri))) {
			memcpy(&ri, CMSG_DATA(c), sizeof(ri));
			got_info = 1;
		} else if (c->cmsg_type == DLCP_CMSG_LOST && lostp) {
			size_t bytes = c->cmsg_len - CMSG_LEN(0);

			*lostp = malloc(bytes ? bytes : 1);
			if (!*lostp) {
				r = -ENOMEM;
				goto fail;
			}
			memcpy(*lostp, CMSG_DATA(c), bytes);
			info->nr_lost = (uint32_t)(bytes / sizeof(struct dlcp_range));
		}
	}
	if (!got_info || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    (uint32_t)r != ri.msg_len ||
	    (lostp && info->nr_lost != ri.nr_lost_ranges)) {
		/* A different message than the one peeked cannot happen with
		 * one reader; report rather than return partial data. */
		r = -EPROTO;
		goto fail;
	}
	info->tensor_id = ri.tensor_id;
	info->iteration = ri.iteration;
	info->layer = ri.layer;
	info->dtype = ri.dtype;
	info->status = ri.status;
	info->flags = ri.flags;
	info->msg_len = ri.msg_len;
	info->bytes_lost = ri.bytes_lost;
	info->nr_lost = ri.nr_lost_ranges;
	free(ctl);
	*bufp = buf;
	return r;
fail:
	if (lostp) {
		free(*lostp);
		*lostp = NULL;
	}
	free(ctl);
	free(buf);
	return r;
}

const struct dlcp_transport_ops dlcp_transport_dlcp = {
	.open			= dlcpsk_open,
	.close			= dlcpsk_close,
	.set_send_timeout	= dlcpsk_set_send_timeout,
	.segment_size		= dlcpsk_segment_size,
	.send			= dlcpsk_send,
	.recv			= dlcpsk_recv,
};
