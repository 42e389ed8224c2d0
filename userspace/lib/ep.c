// SPDX-License-Identifier: GPL-2.0
/*
 * libdlcp endpoints: one message per tensor over a DLCP socket, or over TCP
 * with the same semantics (asynchronous send, whole-message receive from
 * any sender, metadata preserved, never lossy).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "libdlcp.h"
#include "libdlcp_int.h"

#define TCP_MAGIC	0x444c4354u	/* "DLCT" */

struct tcp_frame {
	uint32_t magic;
	uint16_t src_port;	/* sender's endpoint port, network order */
	uint8_t dtype;
	uint8_t reserved;
	uint32_t tensor_id;
	uint32_t iteration;
	uint16_t layer;
	uint16_t flags;
	uint32_t len;
};

struct tcp_out {
	struct tcp_out *next;
	struct sockaddr_storage dst;
	struct tcp_frame fr;
	char *data;
};

struct tcp_conn {
	int fd;
	struct sockaddr_storage peer;	/* outbound: destination */
};

struct dlcp_ep {
	int transport;
	int fd;			/* DLCP socket, or TCP listener */
	struct sockaddr_storage addr;
	int seg_class_ok;
	int send_timeout_ms;
	/* TCP only */
	struct tcp_conn *in;	/* accepted connections */
	int nr_in;
	int rr;			/* round-robin start for fairness */
	pthread_t thr;
	int thr_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tcp_out *qhead, *qtail;
	size_t qbytes;
	int busy;
	int stop;
	int err;		/* first error of the sender thread */
	struct tcp_conn *out;
	int nr_out;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

long dlcp__now_ms(void)
{
	return now_ms();
}

static int write_full(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t r = send(fd, b, n, MSG_NOSIGNAL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -ETIMEDOUT;	/* SO_SNDTIMEO */
			return -errno;
		}
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int read_full(int fd, void *p, size_t n)
{
	char *b = p;

	while (n) {
		ssize_t r = recv(fd, b, n, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ECONNRESET;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int tcp_connect(struct dlcp_ep *ep, const struct sockaddr_storage *dst)
{
	int tmo = ep->send_timeout_ms > 0 ? ep->send_timeout_ms : 30000;
	long deadline = now_ms() + tmo;
	struct sockaddr_storage me = ep->addr;
	socklen_t dl = dlcp__sa_len((const struct sockaddr *)dst);
	int one = 1;

	if (!dl)
		return -EAFNOSUPPORT;
	dlcp__sa_set_port((struct sockaddr *)&me, 0);
	for (;;) {
		int fd = socket(dst->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct timeval tv = { .tv_sec = tmo / 1000,
				      .tv_usec = (tmo % 1000) * 1000 };
		unsigned int ut = (unsigned int)tmo;

		if (fd < 0)
			return -errno;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* a peer that vanishes fails the send within the timeout
		 * instead of blocking the sender thread for TCP's own
		 * (minutes-long) retransmission limit */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
		if (me.ss_family == dst->ss_family &&
		    !dlcp__sa_is_any((const struct sockaddr *)&me))
			bind(fd, (struct sockaddr *)&me,
			     dlcp__sa_len((const struct sockaddr *)&me));
		if (!connect(fd, (const struct sockaddr *)dst, dl))
			return fd;
		close(fd);
		if (errno != ECONNREFUSED && errno != ENETUNREACH &&
		    errno != EHOSTUNREACH && errno != ETIMEDOUT && errno != EINTR)
			return -errno;
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(20000);
	}
}

static int tcp_out_fd(struct dlcp_ep *ep, const struct sockaddr_storage *dst)
{
	struct tcp_conn *n;
	int i, fd;

	for (i = 0; i < ep->nr_out; i++)
		if (dlcp__sa_same((const struct sockaddr *)&ep->out[i].peer,
				  (const struct sockaddr *)dst))
			return ep->out[i].fd;
	fd = tcp_connect(ep, dst);
	if (fd < 0)
		return fd;
	n = realloc(ep->out, (size_t)(ep->nr_out + 1) * sizeof(*n));
	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	ep->out = n;
	ep->out[ep->nr_out].fd = fd;
	ep->out[ep->nr_out].peer = *dst;
	ep->nr_out++;
	return fd;
}

static void *tcp_sender(void *arg)
{
	struct dlcp_ep *ep = arg;

	pthread_mutex_lock(&ep->lock);
	for (;;) {
		struct tcp_out *o;
		int fd, err = 0;

		while (!ep->qhead && !ep->stop)
			pthread_cond_wait(&ep->cond, &ep->lock);
		if (!ep->qhead)
			break;
		o = ep->qhead;
		ep->qhead = o->next;
		if (!ep->qhead)
			ep->qtail = NULL;
		ep->busy = 1;
		pthread_mutex_unlock(&ep->lock);

		fd = tcp_out_fd(ep, &o->dst);
		if (fd < 0)
			err = fd;
		if (!err)
			err = write_full(fd, &o->fr, sizeof(o->fr));
		if (!err)
			err = write_full(fd, o->data, o->fr.len);

		pthread_mutex_lock(&ep->lock);
		if (err && !ep->err)
			ep->err = err;
		ep->qbytes -= o->fr.len;
		ep->busy = 0;
		free(o->data);
		free(o);
		pthread_cond_broadcast(&ep->cond);
	}
	pthread_mutex_unlock(&ep->lock);
	return NULL;
}

int dlcp_ep_open(struct dlcp_ep **epp, const struct sockaddr_in *addr,
		 int transport)
{
	return dlcp_ep_open_sa(epp, (const struct sockaddr *)addr,
			       sizeof(*addr), transport);
}

int dlcp_ep_open_sa(struct dlcp_ep **epp, const struct sockaddr *addr,
		    socklen_t addrlen, int transport)
{
	struct dlcp_ep *ep;
	socklen_t sl = sizeof(ep->addr);
	int one = 1, err;

	if (!epp || !addr || (transport != DLCP_TRANSPORT_DLCP &&
			      transport != DLCP_TRANSPORT_TCP))
		return -EINVAL;
	if (!dlcp__sa_len(addr))
		return -EAFNOSUPPORT;
	if (addrlen < dlcp__sa_len(addr))
		return -EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->transport = transport;
	ep->seg_class_ok = 1;
	pthread_mutex_init(&ep->lock, NULL);
	pthread_cond_init(&ep->cond, NULL);
	if (transport == DLCP_TRANSPORT_DLCP)
		ep->fd = socket(addr->sa_family, SOCK_DLCP | SOCK_CLOEXEC, 0);
	else
		ep->fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ep->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (transport == DLCP_TRANSPORT_TCP)
		setsockopt(ep->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ep->fd, addr, dlcp__sa_len(addr)) ||
	    getsockname(ep->fd, (struct sockaddr *)&ep->addr, &sl)) {
		err = -errno;
		goto fail_fd;
	}
	if (transport == DLCP_TRANSPORT_TCP) {
		if (listen(ep->fd, SOMAXCONN)) {
			err = -errno;
			goto fail_fd;
		}
		err = pthread_create(&ep->thr, NULL, tcp_sender, ep);
		if (err) {
			err = -err;
			goto fail_fd;
		}
		ep->thr_started = 1;
	}
	*epp = ep;
	return 0;
fail_fd:
	close(ep->fd);
fail:
	free(ep);
	return err;
}

int dlcp_ep_close(struct dlcp_ep *ep, int linger_ms)
{
	int i, err = 0;

	if (!ep)
		return -EINVAL;
	if (ep->transport == DLCP_TRANSPORT_TCP) {
		long deadline = linger_ms >= 0 ? now_ms() + linger_ms : -1;

		pthread_mutex_lock(&ep->lock);
		while ((ep->qhead || ep->busy) && !ep->err &&
		       (deadline < 0 || now_ms() < deadline)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 20000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&ep->cond, &ep->lock, &ts);
		}
		while (ep->qhead) {	/* give up on what is left */
			struct tcp_out *o = ep->qhead;

			ep->qhead = o->next;
			free(o->data);
			free(o);
		}
		ep->qtail = NULL;
		ep->stop = 1;
		err = ep->err;
		pthread_cond_broadcast(&ep->cond);
		pthread_mutex_unlock(&ep->lock);
		/* unblock a sender stuck in write() */
		for (i = 0; i < ep->nr_out; i++)
			shutdown(ep->out[i].fd, SHUT_RDWR);
		if (ep->thr_started)
			pthread_join(ep->thr, NULL);
		for (i = 0; i < ep->nr_out; i++)
			close(ep->out[i].fd);
		for (i = 0; i < ep->nr_in; i++)
			close(ep->in[i].fd);
		free(ep->out);
		free(ep->in);
	} else if (linger_ms >= 0) {
		struct linger l = { .l_onoff = 1,
				    .l_linger = (linger_ms + 999) / 1000 };

		setsockopt(ep->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	close(ep->fd);
	pthread_mutex_destroy(&ep->lock);
	pthread_cond_destroy(&ep->cond);
	free(ep);
	return err;
}

int dlcp_ep_fd(const struct dlcp_ep *ep)
{
	return ep ? ep->fd : -EINVAL;
}

int dlcp_ep_addr(const struct dlcp_ep *ep, struct sockaddr_in *addr)
{
	if (!ep || !addr)
		return -EINVAL;
	if (ep->addr.ss_family != AF_INET)
		return -EAFNOSUPPORT;
	memcpy(addr, &ep->addr, sizeof(*addr));
	return 0;
}

int dlcp_ep_addr_sa(const struct dlcp_ep *ep, struct sockaddr_storage *addr)
{
	if (!ep || !addr)
		return -EINVAL;
	*addr = ep->addr;
	return 0;
}

int dlcp_ep_set_send_timeout(struct dlcp_ep *ep, int timeout_ms)
{
	struct timeval tv;

	if (!ep || timeout_ms < 0)
		return -EINVAL;
	ep->send_timeout_ms = timeout_ms;
	if (ep->transport == DLCP_TRANSPORT_DLCP) {
		tv.tv_sec = timeout_ms / 1000;
		tv.tv_usec = (timeout_ms % 1000) * 1000;
		if (setsockopt(ep->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
			return -errno;
	}
	return 0;
}

int dlcp_ep_segment_size(const struct dlcp_ep *ep)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (!ep)
		return -EINVAL;
	/* over TCP: what a DLCP socket reports on a path of MTU 1500 */
	if (ep->transport == DLCP_TRANSPORT_TCP)
		return 1428;
	if (getsockopt(ep->fd, SOL_DLCP, DLCP_SEGMENT_SIZE, &v, &l))
		return -errno;
	return v;
}

int dlcp_send_tensor(struct dlcp_ep *ep, const struct sockaddr_in *dst,
		     const void *buf, size_t len,
		     const struct dlcp_tensor_meta *meta)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return dlcp_send_tensorv(ep, dst, &iov, 1, meta);
}

static int tcp_send(struct dlcp_ep *ep, const struct sockaddr_storage *dst,
		    const struct iovec *iov, int iovcnt, size_t len,
		    const struct dlcp_tensor_meta *meta)
{
	struct tcp_out *o;
	size_t off = 0;
	int i, err;

	if (len > UINT32_MAX)
		return -EMSGSIZE;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->data = malloc(len ? len : 1);
	if (!o->data) {
		free(o);
		return -ENOMEM;
	}
	for (i = 0; i < iovcnt; i++) {
		memcpy(o->data + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	o->dst = *dst;
	o->fr.magic = TCP_MAGIC;
	o->fr.src_port = dlcp__sa_port((const struct sockaddr *)&ep->addr);
	o->fr.dtype = meta ? meta->dtype : 0;
	o->fr.tensor_id = meta ? meta->tensor_id : 0;
	o->fr.iteration = meta ? meta->iteration : 0;
	o->fr.layer = meta ? meta->layer : 0;
	o->fr.flags = meta ? meta->flags : 0;
	o->fr.len = (uint32_t)len;
	pthread_mutex_lock(&ep->lock);
	err = ep->err;
	if (!err) {
		if (ep->qtail)
			ep->qtail->next = o;
		else
			ep->qhead = o;
		ep->qtail = o;
		ep->qbytes += len;
		pthread_cond_broadcast(&ep->cond);
	}
	pthread_mutex_unlock(&ep->lock);
	if (err) {
		free(o->data);
		free(o);
	}
	return err;
}

int dlcp_send_tensorv(struct dlcp_ep *ep, const struct sockaddr_in *dst,
		      const struct iovec *iov, int iovcnt,
		      const struct dlcp_tensor_meta *meta)
{
	return dlcp_send_tensorv_sa(ep, (const struct sockaddr *)dst,
				    sizeof(*dst), iov, iovcnt, meta);
}

int dlcp_send_tensorv_sa(struct dlcp_ep *ep, const struct sockaddr *dst,
			 socklen_t dstlen, const struct iovec *iov, int iovcnt,
			 const struct dlcp_tensor_meta *meta)
{
	struct sockaddr_storage d;
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_send_info)) +
			 CMSG_SPACE(sizeof(struct dlcp_range) * 16)];
		struct cmsghdr align;
	} small;
	char *ctl = small.buf;
	size_t ctl_len, len = 0;
	struct msghdr mh = { 0 };
	struct dlcp_send_info si = { 0 };
	struct cmsghdr *c;
	int i, err, with_class;

	if (!ep || !dst || (iovcnt && !iov) || iovcnt < 0)
		return -EINVAL;
	if (!dlcp__sa_len(dst) || dstlen < dlcp__sa_len(dst))
		return -EINVAL;
	if (dst->sa_family != ep->addr.ss_family)
		return -EAFNOSUPPORT;
	memset(&d, 0, sizeof(d));
	memcpy(&d, dst, dlcp__sa_len(dst));
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (!len)
		return -EINVAL;
	if (meta && (meta->flags & ~(DLCP_MSG_CRITICAL | DLCP_MSG_HAS_DEADLINE |
				     DLCP_MSG_HAS_BUDGET | DLCP_MSG_HAS_LAYER)))
		return -EINVAL;
	if (meta && (meta->loss_budget_ppm > DLCP_PPM_MAX ||
		     !dlcp_dtype_size(meta->dtype) ||
		     len % dlcp_dtype_size(meta->dtype)))
		return -EINVAL;
	if (ep->transport == DLCP_TRANSPORT_TCP)
		return tcp_send(ep, &d, iov, iovcnt, len, meta);

	with_class = meta && meta->seg_class && meta->nr_seg_class &&
		     ep->seg_class_ok;
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
	mh.msg_name = &d;
	mh.msg_namelen = dlcp__sa_len(dst);
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
	do {
		err = sendmsg(ep->fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
	} while (err == -EINTR);
	if (ctl != small.buf)
		free(ctl);
	ctl = small.buf;
	if (err == -EOPNOTSUPP && with_class) {
		/* module without DLCP_CMSG_SEG_CLASS: send without classes */
		ep->seg_class_ok = 0;
		with_class = 0;
		goto again;
	}
	if (err == -EAGAIN || err == -EWOULDBLOCK)
		err = -ETIMEDOUT;
	return err;
}

/* TCP: accept pending connections, then read one message from a ready one. */
static long tcp_recv(struct dlcp_ep *ep, void **bufp,
		     struct dlcp_tensor_info *info, int timeout_ms,
		     struct sockaddr_storage *src)
{
	long deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;

	for (;;) {
		struct pollfd *pfd;
		int i, n = ep->nr_in + 1, r, wait;

		pfd = calloc((size_t)n, sizeof(*pfd));
		if (!pfd)
			return -ENOMEM;
		pfd[0].fd = ep->fd;
		pfd[0].events = POLLIN;
		for (i = 0; i < ep->nr_in; i++) {
			pfd[i + 1].fd = ep->in[i].fd;
			pfd[i + 1].events = POLLIN;
		}
		wait = deadline < 0 ? 200 : (int)(deadline - now_ms());
		if (wait > 200)
			wait = 200;
		if (wait < 0)
			wait = 0;
		r = poll(pfd, (nfds_t)n, wait);
		if (r < 0 && errno != EINTR) {
			r = -errno;
			free(pfd);
			return r;
		}
		if (r > 0 && (pfd[0].revents & POLLIN)) {
			struct sockaddr_storage peer;
			socklen_t pl = sizeof(peer);
			int fd = accept4(ep->fd, (struct sockaddr *)&peer, &pl,
					 SOCK_CLOEXEC);

			/* out of descriptors or memory: the connection stays
			 * pending and poll() would return at once, forever */
			if (fd < 0 && (errno == EMFILE || errno == ENFILE ||
				       errno == ENOBUFS || errno == ENOMEM)) {
				r = -errno;
				free(pfd);
				return r;
			}
			if (fd >= 0) {
				struct tcp_conn *nc = realloc(ep->in,
					(size_t)(ep->nr_in + 1) * sizeof(*nc));

				if (!nc) {
					close(fd);
				} else {
					ep->in = nc;
					ep->in[ep->nr_in].fd = fd;
					dlcp__sa_unmap(&peer);
					ep->in[ep->nr_in].peer = peer;
					ep->nr_in++;
				}
			}
		}
		for (i = 0; r > 0 && i < n - 1; i++) {
			int k = (ep->rr + i) % (n - 1);
			struct tcp_frame fr;
			char *buf;
			int fd = ep->in[k].fd, e;

			if (!(pfd[k + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			e = read_full(fd, &fr, sizeof(fr));
			if (!e && fr.magic != TCP_MAGIC)
				e = -EPROTO;
			if (e) {	/* peer gone: forget the connection */
				close(fd);
				ep->in[k] = ep->in[ep->nr_in - 1];
				ep->nr_in--;
				break;
			}
			buf = malloc(fr.len ? fr.len : 1);
			if (!buf) {
				free(pfd);
				return -ENOMEM;
			}
			e = read_full(fd, buf, fr.len);
			if (e) {
				free(buf);
				close(fd);
				ep->in[k] = ep->in[ep->nr_in - 1];
				ep->nr_in--;
				break;
			}
			memset(info, 0, sizeof(*info));
			*src = ep->in[k].peer;
			dlcp__sa_set_port((struct sockaddr *)src, fr.src_port);
			info->tensor_id = fr.tensor_id;
			info->iteration = fr.iteration;
			info->layer = fr.layer;
			info->dtype = fr.dtype;
			info->flags = fr.flags;
			info->status = DLCP_RECV_EXACT;
			info->msg_len = fr.len;
			*bufp = buf;
			ep->rr = k + 1;
			free(pfd);
			return (long)fr.len;
		}
		free(pfd);
		/* a failed send (peer gone) once nothing is left to read */
		pthread_mutex_lock(&ep->lock);
		r = ep->err;
		pthread_mutex_unlock(&ep->lock);
		if (r)
			return r;
		if (deadline >= 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
	}
}

long dlcp_recv_tensor(struct dlcp_ep *ep, void **bufp,
		      struct dlcp_tensor_info *info, struct dlcp_range **lostp,
		      int timeout_ms)
{
	struct sockaddr_storage src;
	long r = dlcp_recv_tensor_sa(ep, bufp, info, lostp, timeout_ms, &src);

	if (r >= 0) {
		memset(&info->src, 0, sizeof(info->src));
		if (src.ss_family == AF_INET)
			memcpy(&info->src, &src, sizeof(info->src));
		else	/* see dlcp_recv_tensor_sa() */
			info->src.sin_family = src.ss_family;
	}
	return r;
}

long dlcp_recv_tensor_sa(struct dlcp_ep *ep, void **bufp,
			 struct dlcp_tensor_info *info,
			 struct dlcp_range **lostp, int timeout_ms,
			 struct sockaddr_storage *srcp)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_recv_info))];
		struct cmsghdr align;
	} peekctl;
	struct dlcp_recv_info ri;
	struct sockaddr_storage src, dummy;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	struct pollfd pfd;
	char *ctl = NULL, *buf = NULL;
	size_t ctl_len;
	long r, deadline;
	int got_info = 0;

	if (!ep || !bufp || !info)
		return -EINVAL;
	if (!srcp)
		srcp = &dummy;
	*bufp = NULL;
	if (lostp)
		*lostp = NULL;
	if (ep->transport == DLCP_TRANSPORT_TCP)
		return tcp_recv(ep, bufp, info, timeout_ms, srcp);

	pfd.fd = ep->fd;
	pfd.events = POLLIN;
	deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
again:
	/* every wait counts against the one deadline: signals (EINTR) and
	 * wake-ups with nothing to read do not restart the timeout */
	do {
		long left = deadline < 0 ? -1 : deadline - now_ms();

		r = poll(&pfd, 1, deadline < 0 ? -1 : left > 0 ? (int)left : 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;

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
		if (deadline >= 0 && now_ms() >= deadline)
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
	dlcp__sa_unmap(&src);
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
