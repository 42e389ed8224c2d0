// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp transport over TCP, with the semantics of a DLCP endpoint: a send
 * is queued and returns at once (a thread writes the queue, one connection
 * per destination, made on first use); a receive accepts connections and
 * reads one whole message from any of them. Every message is a struct
 * tcp_frame carrying the metadata, then the payload. Never lossy.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "libdlcp.h"
#include "addr.h"
#include "clock.h"
#include "io.h"
#include "transport.h"

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

struct dlcp_ep_tcp {
	struct dlcp_ep ep;	/* ep.fd: the listener */
	struct tcp_conn *in;	/* accepted connections */
	int nr_in;
	int rr;			/* round-robin start for fairness */
	pthread_t thr;		/* the sender */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tcp_out *qhead, *qtail;
	int busy;
	int stop;
	int err;		/* first error of the sender thread */
	struct tcp_conn *out;
	int nr_out;
};

static struct dlcp_ep_tcp *to_tcp(struct dlcp_ep *ep)
{
	return (struct dlcp_ep_tcp *)ep;
}

static int tcp_connect(struct dlcp_ep_tcp *t, const struct sockaddr_storage *dst)
{
	int tmo = t->ep.send_timeout_ms > 0 ? t->ep.send_timeout_ms : 30000;
	long deadline = dlcp_clock_ms() + tmo;
	struct sockaddr_storage me = t->ep.addr;
	socklen_t dl = dlcp_addr_len((const struct sockaddr *)dst);
	int one = 1;

	if (!dl)
		return -EAFNOSUPPORT;
	dlcp_addr_set_port((struct sockaddr *)&me, 0);
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
		    !dlcp_addr_is_any((const struct sockaddr *)&me))
			bind(fd, (struct sockaddr *)&me,
			     dlcp_addr_len((const struct sockaddr *)&me));
		if (!connect(fd, (const struct sockaddr *)dst, dl))
			return fd;
		close(fd);
		if (errno != ECONNREFUSED && errno != ENETUNREACH &&
		    errno != EHOSTUNREACH && errno != ETIMEDOUT && errno != EINTR)
			return -errno;
		if (dlcp_clock_ms() > deadline)
			return -ETIMEDOUT;
		usleep(20000);
	}
}

/* The connection to @dst, made on first use. */
static int tcp_out_fd(struct dlcp_ep_tcp *t, const struct sockaddr_storage *dst)
{
	struct tcp_conn *n;
	int i, fd;

	for (i = 0; i < t->nr_out; i++)
		if (dlcp_addr_same((const struct sockaddr *)&t->out[i].peer,
				   (const struct sockaddr *)dst))
			return t->out[i].fd;
	fd = tcp_connect(t, dst);
	if (fd < 0)
		return fd;
	n = realloc(t->out, (size_t)(t->nr_out + 1) * sizeof(*n));
	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	t->out = n;
	t->out[t->nr_out].fd = fd;
	t->out[t->nr_out].peer = *dst;
	t->nr_out++;
	return fd;
}

/* The sender thread: writes the queue in order until told to stop. */
static void *tcp_sender(void *arg)
{
	struct dlcp_ep_tcp *t = arg;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		struct tcp_out *o;
		int fd, err = 0;

		while (!t->qhead && !t->stop)
			pthread_cond_wait(&t->cond, &t->lock);
		if (!t->qhead)
			break;
		o = t->qhead;
		t->qhead = o->next;
		if (!t->qhead)
			t->qtail = NULL;
		t->busy = 1;
		pthread_mutex_unlock(&t->lock);

		fd = tcp_out_fd(t, &o->dst);
		if (fd < 0)
			err = fd;
		if (!err)
			err = dlcp_io_write_full(fd, &o->fr, sizeof(o->fr));
		if (!err)
			err = dlcp_io_write_full(fd, o->data, o->fr.len);

		pthread_mutex_lock(&t->lock);
		if (err && !t->err)
			t->err = err;
		t->busy = 0;
		free(o->data);
		free(o);
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static int tcp_open(struct dlcp_ep **epp, const struct sockaddr *addr)
{
	struct dlcp_ep_tcp *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	err = dlcp_ep_bind(&t->ep, addr, SOCK_STREAM, 1);
	if (err)
		goto fail;
	if (listen(t->ep.fd, SOMAXCONN)) {
		err = -errno;
		goto fail_fd;
	}
	err = pthread_create(&t->thr, NULL, tcp_sender, t);
	if (err) {
		err = -err;
		goto fail_fd;
	}
	*epp = &t->ep;
	return 0;
fail_fd:
	close(t->ep.fd);
fail:
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	free(t);
	return err;
}

static int tcp_close(struct dlcp_ep *ep, int linger_ms)
{
	struct dlcp_ep_tcp *t = to_tcp(ep);
	long deadline = linger_ms >= 0 ? dlcp_clock_ms() + linger_ms : -1;
	int i, err;

	pthread_mutex_lock(&t->lock);
	while ((t->qhead || t->busy) && !t->err &&
	       (deadline < 0 || dlcp_clock_ms() < deadline)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&t->cond, &t->lock, &ts);
	}
	while (t->qhead) {	/* give up on what is left */
		struct tcp_out *o = t->qhead;

		t->qhead = o->next;
		free(o->data);
		free(o);
	}
	t->qtail = NULL;
	t->stop = 1;
	err = t->err;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	/* unblock a sender stuck in write() */
	for (i = 0; i < t->nr_out; i++)
		shutdown(t->out[i].fd, SHUT_RDWR);
	pthread_join(t->thr, NULL);
	for (i = 0; i < t->nr_out; i++)
		close(t->out[i].fd);
	for (i = 0; i < t->nr_in; i++)
		close(t->in[i].fd);
	free(t->out);
	free(t->in);
	close(t->ep.fd);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	free(t);
	return err;
}

static int tcp_segment_size(const struct dlcp_ep *ep)
{
	(void)ep;
	/* what a DLCP socket reports on a path of MTU 1500 */
	return 1428;
}

static int tcp_send(struct dlcp_ep *ep, const struct sockaddr_storage *dst,
		    socklen_t dstlen, const struct iovec *iov, int iovcnt,
		    size_t len, const struct dlcp_tensor_meta *meta)
{
	struct dlcp_ep_tcp *t = to_tcp(ep);
	struct tcp_out *o;
	size_t off = 0;
	int i, err;

	(void)dstlen;
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
	o->fr.src_port = dlcp_addr_port((const struct sockaddr *)&ep->addr);
	o->fr.dtype = meta ? meta->dtype : 0;
	o->fr.tensor_id = meta ? meta->tensor_id : 0;
	o->fr.iteration = meta ? meta->iteration : 0;
	o->fr.layer = meta ? meta->layer : 0;
	o->fr.flags = meta ? meta->flags : 0;
	o->fr.len = (uint32_t)len;
	pthread_mutex_lock(&t->lock);
	err = t->err;
	if (!err) {
		if (t->qtail)
			t->qtail->next = o;
		else
			t->qhead = o;
		t->qtail = o;
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	if (err) {
		free(o->data);
		free(o);
	}
	return err;
}

/*
 * Take the pending connection of the listener. 0, or -errno where the
 * connection would stay pending (out of descriptors or memory) and poll()
 * return at once, forever.
 */
static int tcp_accept(struct dlcp_ep_tcp *t)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	struct tcp_conn *nc;
	int fd = accept4(t->ep.fd, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);

	if (fd < 0 && (errno == EMFILE || errno == ENFILE ||
		       errno == ENOBUFS || errno == ENOMEM))
		return -errno;
	if (fd < 0)
		return 0;
	nc = realloc(t->in, (size_t)(t->nr_in + 1) * sizeof(*nc));
	if (!nc) {
		close(fd);
		return 0;
	}
	t->in = nc;
	t->in[t->nr_in].fd = fd;
	dlcp_addr_unmap(&peer);
	t->in[t->nr_in].peer = peer;
	t->nr_in++;
	return 0;
}

/* A peer gone (or speaking something else): forget connection @k. */
static void tcp_drop_in(struct dlcp_ep_tcp *t, int k)
{
	close(t->in[k].fd);
	t->in[k] = t->in[t->nr_in - 1];
	t->nr_in--;
}

/* Accept pending connections, then read one message from a ready one. */
static long tcp_recv(struct dlcp_ep *ep, void **bufp,
		     struct dlcp_tensor_info *info, struct dlcp_range **lostp,
		     int timeout_ms, struct sockaddr_storage *src)
{
	struct dlcp_ep_tcp *t = to_tcp(ep);
	long deadline = timeout_ms >= 0 ? dlcp_clock_ms() + timeout_ms : -1;

	(void)lostp;	/* nothing is ever lost */
	for (;;) {
		struct pollfd *pfd;
		int i, n = t->nr_in + 1, r, wait;

		pfd = calloc((size_t)n, sizeof(*pfd));
		if (!pfd)
			return -ENOMEM;
		pfd[0].fd = t->ep.fd;
		pfd[0].events = POLLIN;
		for (i = 0; i < t->nr_in; i++) {
			pfd[i + 1].fd = t->in[i].fd;
			pfd[i + 1].events = POLLIN;
		}
		wait = deadline < 0 ? 200 : (int)(deadline - dlcp_clock_ms());
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
			int e = tcp_accept(t);

			if (e) {
				free(pfd);
				return e;
			}
		}
		for (i = 0; r > 0 && i < n - 1; i++) {
			int k = (t->rr + i) % (n - 1);
			struct tcp_frame fr;
			char *buf;
			int fd = t->in[k].fd, e;

			if (!(pfd[k + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			e = dlcp_io_read_full(fd, &fr, sizeof(fr));
			if (!e && fr.magic != TCP_MAGIC)
				e = -EPROTO;
			if (e) {
				tcp_drop_in(t, k);
				break;
			}
			buf = malloc(fr.len ? fr.len : 1);
			if (!buf) {
				free(pfd);
				return -ENOMEM;
			}
			e = dlcp_io_read_full(fd, buf, fr.len);
			if (e) {
				free(buf);
				tcp_drop_in(t, k);
				break;
			}
			memset(info, 0, sizeof(*info));
			*src = t->in[k].peer;
			dlcp_addr_set_port((struct sockaddr *)src, fr.src_port);
			info->tensor_id = fr.tensor_id;
			info->iteration = fr.iteration;
			info->layer = fr.layer;
			info->dtype = fr.dtype;
			info->flags = fr.flags;
			info->status = DLCP_RECV_EXACT;
			info->msg_len = fr.len;
			*bufp = buf;
			t->rr = k + 1;
			free(pfd);
			return (long)fr.len;
		}
		free(pfd);
		/* a failed send (peer gone) once nothing is left to read */
		pthread_mutex_lock(&t->lock);
		r = t->err;
		pthread_mutex_unlock(&t->lock);
		if (r)
			return r;
		if (deadline >= 0 && dlcp_clock_ms() >= deadline)
			return -ETIMEDOUT;
	}
}

const struct dlcp_transport_ops dlcp_transport_tcp = {
	.open		= tcp_open,
	.close		= tcp_close,
	/* connections read ep.send_timeout_ms when they are made */
	.set_send_timeout = NULL,
	.segment_size	= tcp_segment_size,
	.send		= tcp_send,
	.recv		= tcp_recv,
};
