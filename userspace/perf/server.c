// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp-perf server: receives the clients' messages and answers each with
 * an ACK holding the time its receive returned (DLCP: one socket, read by
 * --threads threads; TCP: a thread a connection). Counts messages and
 * bytes, printed at SIGINT or SIGTERM.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <linux/dlcp.h>

#include "perf.h"

static volatile sig_atomic_t stop_flag;
static uint64_t srv_msgs, srv_bytes, srv_lost;
static uint64_t srv_boot;
static pthread_mutex_t srv_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void server_summary(void)
{
	pthread_mutex_lock(&srv_lock);
	if (opt.json)
		printf("{\"role\":\"server\",\"proto\":\"%s\",\"messages\":%" PRIu64
		       ",\"bytes\":%" PRIu64 ",\"bytes_lost\":%" PRIu64 "}\n",
		       opt.proto == P_DLCP ? "dlcp" : "tcp", srv_msgs,
		       srv_bytes, srv_lost);
	else
		printf("server: %" PRIu64 " messages, %" PRIu64
		       " bytes, %" PRIu64 " bytes lost within budget\n",
		       srv_msgs, srv_bytes, srv_lost);
	fflush(stdout);
	pthread_mutex_unlock(&srv_lock);
}

/*
 * One receiving thread of the DLCP server: takes whole messages off the
 * shared socket @arg and answers each. --threads of them share the socket,
 * as the TCP server has a thread per connection.
 */
static void *dlcp_receiver(void *arg)
{
	int fd = (int)(intptr_t)arg, one_max = 0;
	size_t bufsz = 64u << 20;
	socklen_t olen = sizeof(one_max);
	char *buf;

	if (!getsockopt(fd, SOL_DLCP, DLCP_MAX_MSG_SIZE, &one_max, &olen) &&
	    one_max > 0)
		bufsz = one_max;
	buf = malloc(bufsz);
	if (!buf)
		die("out of memory (%zu byte buffer)", bufsz);

	while (!stop_flag) {
		char cbuf[CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
			  CMSG_SPACE(64 * sizeof(struct dlcp_range))];
		struct dlcp_recv_info ri = { 0 };
		struct sockaddr_in peer;
		struct iovec iov = { buf, bufsz };
		struct msghdr mh = {
			.msg_name = &peer, .msg_namelen = sizeof(peer),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *cm;
		struct ack a;
		bool have_ri = false;
		ssize_t n;

		n = recvmsg(fd, &mh, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("recvmsg: %s", strerror(errno));
		}
		a.recv_ns = now_ns();
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_DLCP &&
			    cm->cmsg_type == DLCP_CMSG_RECV) {
				memcpy(&ri, CMSG_DATA(cm), sizeof(ri));
				have_ri = true;
			}
		if (!have_ri) {
			fprintf(stderr, "%s: message without DLCP_CMSG_RECV\n",
				prog);
			continue;
		}
		if (ri.tensor_id == ACK_TENSOR)
			continue;
		pthread_mutex_lock(&srv_lock);
		srv_msgs++;
		srv_bytes += n;
		srv_lost += ri.bytes_lost;
		pthread_mutex_unlock(&srv_lock);
		if (opt.no_ack)
			continue;
		a.magic = PERF_MAGIC;
		a.type = T_ACK;
		a.client = ri.tensor_id;
		a.seq = ri.iteration;
		a.boot = srv_boot;
		a.len = ri.msg_len;
		a.bytes_lost = ri.bytes_lost;
		a.status = ri.status;
		a.pad = 0;
		{
			struct dlcp_send_info si = {
				.tensor_id = ACK_TENSOR,
				.flags = DLCP_MSG_HAS_BUDGET,
				.loss_budget_ppm = 0,
			};
			char sbuf[CMSG_SPACE(sizeof(si))] = { 0 };
			struct iovec aiov = { &a, sizeof(a) };
			struct msghdr am = {
				.msg_name = &peer, .msg_namelen = sizeof(peer),
				.msg_iov = &aiov, .msg_iovlen = 1,
				.msg_control = sbuf,
				.msg_controllen = sizeof(sbuf),
			};
			struct cmsghdr *c = CMSG_FIRSTHDR(&am);

			c->cmsg_level = SOL_DLCP;
			c->cmsg_type = DLCP_CMSG_SEND;
			c->cmsg_len = CMSG_LEN(sizeof(si));
			memcpy(CMSG_DATA(c), &si, sizeof(si));
			if (sendmsg(fd, &am, 0) < 0 && errno != EINTR)
				fprintf(stderr, "%s: ack to %s:%u: %s\n", prog,
					inet_ntoa(peer.sin_addr),
					ntohs(peer.sin_port), strerror(errno));
		}
	}
	free(buf);
	return NULL;
}

static void dlcp_server(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(opt.port) };
	int fd = dlcp_socket();
	sigset_t stop, old;
	unsigned int i;

	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind port %u: %s", opt.port, strerror(errno));
	if (opt.verbose)
		fprintf(stderr, "dlcp server on port %u, %u thread(s)\n",
			opt.port, opt.threads);
	/* SIGTERM and SIGINT reach this thread only, which then returns */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	for (i = 1; i < opt.threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, dlcp_receiver, (void *)(intptr_t)fd))
			die("pthread_create failed");
		pthread_detach(t);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	dlcp_receiver((void *)(intptr_t)fd);
}

static void *tcp_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	size_t cap = 1u << 20;
	char *buf = malloc(cap);

	if (!buf)
		die("out of memory");
	for (;;) {
		struct frame f;
		struct ack a;
		uint64_t len, left;

		if (dlcp_io_read_full(fd, &f, sizeof(f)))
			break;
		if (ntohl(f.magic) != PERF_MAGIC || ntohl(f.type) != T_DATA) {
			fprintf(stderr, "%s: bad frame from a TCP client\n",
				prog);
			break;
		}
		len = be64toh(f.len);
		for (left = len; left; ) {
			size_t chunk = left < cap ? left : cap;

			if (dlcp_io_read_full(fd, buf, chunk))
				goto out;
			left -= chunk;
		}
		a.recv_ns = now_ns();
		a.magic = PERF_MAGIC;
		a.type = T_ACK;
		a.client = ntohl(f.client);
		a.seq = ntohl(f.seq);
		a.boot = srv_boot;
		a.len = (uint32_t)len;
		a.bytes_lost = 0;
		a.status = 0;
		a.pad = 0;
		pthread_mutex_lock(&srv_lock);
		srv_msgs++;
		srv_bytes += len;
		pthread_mutex_unlock(&srv_lock);
		if (dlcp_io_write_full(fd, &a, sizeof(a)))
			break;
	}
out:
	free(buf);
	close(fd);
	return NULL;
}

static void tcp_server(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(opt.port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind port %u: %s", opt.port, strerror(errno));
	if (listen(fd, 128))
		die("listen: %s", strerror(errno));
	while (!stop_flag) {
		int c = accept(fd, NULL, NULL);
		pthread_t t;

		if (c < 0) {
			if (errno == EINTR)
				continue;
			die("accept: %s", strerror(errno));
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (pthread_create(&t, NULL, tcp_conn, (void *)(intptr_t)c))
			die("pthread_create failed");
		pthread_detach(t);
	}
	close(fd);
}

int run_server(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	srv_boot = boot_id();
	if (opt.proto == P_DLCP)
		dlcp_server();
	else
		tcp_server();
	server_summary();
	return 0;
}
