// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp-perf client: sends the messages, at most --concurrency of them
 * unacknowledged, records when each was sent, received (the server's ACK)
 * and, for DLCP, completed (the error queue), then reports (report.c).
 * --senders N runs N clients at once, each a process.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <linux/dlcp.h>

#include "perf.h"

struct rec *recs;
uint64_t nrecs;
uint64_t boot_mismatch;
uint64_t completions_failed;
static uint64_t cap_recs;

static struct rec *rec_new(void)
{
	if (nrecs == cap_recs) {
		cap_recs = cap_recs ? 2 * cap_recs : 1024;
		recs = realloc(recs, cap_recs * sizeof(*recs));
		if (!recs)
			die("out of memory");
	}
	memset(&recs[nrecs], 0, sizeof(*recs));
	return &recs[nrecs++];
}

static void on_ack(const struct ack *a, uint64_t my_boot)
{
	struct rec *r;

	if (a->magic != PERF_MAGIC || a->type != T_ACK || a->client != opt.id ||
	    a->seq >= nrecs)
		die("bad ACK from the server (seq %u, client %u)", a->seq,
		    a->client);
	r = &recs[a->seq];
	if (r->acked)
		die("duplicate ACK for message %u", a->seq);
	r->acked = true;
	r->recv_ns = a->recv_ns;
	r->ack_ns = now_ns();
	r->lost = a->bytes_lost;
	r->status = a->status;
	if (a->boot != my_boot)
		boot_mismatch++;
}

/*
 * Take the completions queued on @fd; returns how many messages they
 * acknowledge with --no-ack (every completion, failed or not), else 0.
 */
static uint64_t drain_errqueue(int fd)
{
	uint64_t n_acked = 0;

	for (;;) {
		struct dlcp_completion c;
		char cbuf[256];
		struct iovec iov = { &c, sizeof(c) };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		ssize_t n = recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
		struct rec *r;

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return n_acked;
			die("recvmsg(MSG_ERRQUEUE): %s", strerror(errno));
		}
		if (n < (ssize_t)sizeof(c))
			continue;
		if (c.tensor_id != opt.id || c.iteration >= nrecs)
			continue;
		r = &recs[c.iteration];
		if (r->done_ns)
			continue;
		r->done_ns = now_ns();
		if (opt.no_ack) {
			r->acked = true;
			r->ack_ns = r->done_ns;
			r->lost = c.bytes_lost;
			r->status = c.status == DLCP_DONE_LOSSY ?
				    DLCP_RECV_LOSSY : DLCP_RECV_EXACT;
			n_acked++;
		}
		if (c.status == DLCP_DONE_TIMEOUT ||
		    c.status == DLCP_DONE_DEADLINE) {
			completions_failed++;
			fprintf(stderr, "%s: message %u %s\n", prog,
				c.iteration,
				c.status == DLCP_DONE_TIMEOUT ?
				"timed out: the receiver did not answer (is 'dlcp-perf server --proto dlcp' running?)" :
				"missed its deadline");
		}
	}
}

static int tcp_connect(const struct sockaddr_in *sin)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin))) {
		if (errno == ECONNREFUSED)
			die("connection to %s:%u refused: is 'dlcp-perf server --proto tcp' running there?",
			    opt.host, opt.port);
		die("connect to %s:%u: %s", opt.host, opt.port,
		    strerror(errno));
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void send_one(int fd, const struct sockaddr_in *sin, char *payload,
		     uint64_t seq, uint64_t len)
{
	if (opt.proto == P_TCP) {
		struct frame f = {
			.magic = htonl(PERF_MAGIC), .type = htonl(T_DATA),
			.client = htonl(opt.id), .seq = htonl((uint32_t)seq),
			.len = htobe64(len),
		};
		struct iovec iov[2] = { { &f, sizeof(f) }, { payload, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		uint64_t left = sizeof(f) + len;

		while (left) {
			ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);

			if (n < 0) {
				if (errno == EINTR)
					continue;
				die("send: %s", strerror(errno));
			}
			left -= n;
			while (n > 0) {
				if ((size_t)n >= mh.msg_iov[0].iov_len) {
					n -= mh.msg_iov[0].iov_len;
					mh.msg_iov++;
					mh.msg_iovlen--;
				} else {
					mh.msg_iov[0].iov_base =
						(char *)mh.msg_iov[0].iov_base + n;
					mh.msg_iov[0].iov_len -= n;
					n = 0;
				}
			}
		}
	} else {
		struct dlcp_send_info si = {
			.tensor_id = opt.id,
			.iteration = (uint32_t)seq,
			.dtype = DLCP_DTYPE_BYTES,
		};
		char cbuf[CMSG_SPACE(sizeof(si))] = { 0 };
		struct iovec iov = { payload, len };
		struct msghdr mh = {
			.msg_name = (void *)sin, .msg_namelen = sizeof(*sin),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		if (opt.layer >= 0) {
			si.layer = opt.layer;
			si.flags |= DLCP_MSG_HAS_LAYER;
		}
		if (opt.budget >= 0) {
			si.loss_budget_ppm = opt.budget;
			si.flags |= DLCP_MSG_HAS_BUDGET;
		}
#ifdef DLCP_MSG_HAS_PRIO
		if (opt.prio >= 0) {
			si.prio = opt.prio;
			si.flags |= DLCP_MSG_HAS_PRIO;
		}
#endif
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEND;
		c->cmsg_len = CMSG_LEN(sizeof(si));
		memcpy(CMSG_DATA(c), &si, sizeof(si));
		while (sendmsg(fd, &mh, 0) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EINVAL && opt.prio >= 0)
				die("sendmsg: %s (--prio %d refused: a module without priority classes, or not below net.dlcp.prio_classes?)",
				    strerror(errno), opt.prio);
			if (errno == EMSGSIZE)
				die("sendmsg of %" PRIu64 " bytes: message too long (sysctl net.dlcp.max_msg_size)",
				    len);
			die("sendmsg: %s", strerror(errno));
		}
	}
}

/*
 * Wait for one ACK, or with --no-ack for completions; returns how many
 * messages were acknowledged, 0 on timeout.
 */
static uint64_t wait_ack(int fd, uint64_t my_boot)
{
	uint64_t deadline = now_ns() + (uint64_t)(opt.timeout * 1e9);

	for (;;) {
		/* --no-ack: the error queue only (POLLERR is always polled) */
		struct pollfd p = { .fd = fd, .events = opt.no_ack ? 0 : POLLIN };
		int64_t left = (int64_t)(deadline - now_ns());
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)(left / 1000000 + 1));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (r == 0)
			continue;
		if (opt.proto == P_DLCP && (p.revents & POLLERR)) {
			uint64_t n = drain_errqueue(fd);

			if (n)
				return n;
		}
		if (opt.no_ack)
			continue;
		if (p.revents & POLLIN) {
			struct ack a;

			if (opt.proto == P_TCP) {
				int rr = dlcp_io_read_full(fd, &a, sizeof(a));

				if (rr == -ECONNRESET)
					die("the server closed the connection");
				if (rr)
					die("read: %s", strerror(-rr));
			} else {
				ssize_t n = recv(fd, &a, sizeof(a),
						 MSG_DONTWAIT);

				if (n < 0) {
					if (errno == EAGAIN || errno == EINTR)
						continue;
					die("recv: %s", strerror(errno));
				}
				if (n != sizeof(a))
					die("short ACK (%zd bytes)", n);
			}
			on_ack(&a, my_boot);
			return 1;
		} else if (p.revents & (POLLHUP | POLLNVAL)) {
			die("connection closed");
		}
	}
}

int run_client(void)
{
	struct sockaddr_in sin;
	struct client_usage u = { 0 };
	uint64_t my_boot = boot_id(), maxlen = 0, sent = 0, acked = 0;
	uint64_t t0, t_end, first_send = 0, i;
	char *payload;
	int fd, one = 1;

	signal(SIGPIPE, SIG_IGN);
	if (!opt.id)
		opt.id = (uint32_t)getpid();
	resolve(opt.host, opt.port, &sin);
	for (i = 0; i < opt.nsizes; i++)
		if (opt.sizes[i] > maxlen)
			maxlen = opt.sizes[i];
	payload = malloc(maxlen);
	if (!payload)
		die("out of memory");
	for (i = 0; i < maxlen; i++)
		payload[i] = (char)(i * 131 + 7);

	if (opt.proto == P_DLCP) {
		int mx = 0;
		socklen_t ol = sizeof(mx);

		fd = dlcp_socket();
		if (!getsockopt(fd, SOL_DLCP, DLCP_MAX_MSG_SIZE, &mx, &ol) &&
		    mx > 0 && maxlen > (uint64_t)mx)
			die("--size %" PRIu64 " exceeds net.dlcp.max_msg_size %d",
			    maxlen, mx);
		if (setsockopt(fd, SOL_DLCP, DLCP_RECVCOMPLETION, &one,
			       sizeof(one)))
			die("setsockopt(DLCP_RECVCOMPLETION): %s",
			    strerror(errno));
	} else {
		fd = tcp_connect(&sin);
	}
	read_counters(&u.ctr0);
	read_cpustat(&u.cpu0);
	getrusage(RUSAGE_SELF, &u.ru0);
	t0 = now_ns();
	t_end = opt.duration > 0 ? t0 + (uint64_t)(opt.duration * 1e9) : 0;

	for (;;) {
		uint64_t n;

		while (sent - acked < opt.concurrency &&
		       (!opt.count || sent < opt.count) &&
		       (!t_end || now_ns() < t_end)) {
			struct rec *r = rec_new();

			r->len = opt.sizes[sent % opt.nsizes];
			r->send_ns = now_ns();
			if (!first_send)
				first_send = r->send_ns;
			send_one(fd, &sin, payload, sent, r->len);
			sent++;
		}
		if (acked == sent)
			break;
		n = wait_ack(fd, my_boot);
		if (!n)
			die("no ACK from %s:%u for %.0f s (%" PRIu64 " of %" PRIu64
			    " messages acknowledged): is 'dlcp-perf server --proto %s' running there?",
			    opt.host, opt.port, opt.timeout, acked, sent,
			    opt.proto == P_DLCP ? "dlcp" : "tcp");
		acked += n;
	}
	/* DLCP: collect the remaining completions (STOPs) briefly */
	if (opt.proto == P_DLCP) {
		uint64_t until = now_ns() + 2000000000ull;

		for (;;) {
			bool all = true;

			drain_errqueue(fd);
			for (i = 0; i < nrecs && all; i++)
				all = recs[i].done_ns != 0;
			if (all || now_ns() > until)
				break;
			usleep(1000);
		}
	}
	getrusage(RUSAGE_SELF, &u.ru1);
	read_cpustat(&u.cpu1);
	read_counters(&u.ctr1);
	close(fd);	/* DLCP: waits for unfinished messages (none) */
	report_client(stdout, &u, first_send);
	dlcpstat_free(&u.ctr0);
	dlcpstat_free(&u.ctr1);
	free(payload);
	return completions_failed ? 1 : 0;
}

/*
 * --senders N: incast, N clients at once (ids id .. id + N - 1), each a
 * process with its own socket. Their reports (one JSON line each with
 * --json) are printed whole, in id order: each child writes to a pipe
 * that the parent copies to its stdout. Exit status: the worst of theirs.
 */
int run_senders(void)
{
	unsigned int i, started = 0;
	int fds[256], rc = 0, status;
	char buf[65536];
	ssize_t n;
	pid_t pid;

	fflush(NULL);
	for (i = 0; i < opt.senders; i++) {
		int p[2];

		if (pipe(p)) {
			fprintf(stderr, "%s: pipe: %s\n", prog, strerror(errno));
			rc = 1;
			break;
		}
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
			close(p[0]);
			close(p[1]);
			rc = 1;
			break;
		}
		if (!pid) {
			while (i--)
				close(fds[i]);
			close(p[0]);
			if (dup2(p[1], STDOUT_FILENO) < 0)
				_exit(1);
			close(p[1]);
			opt.id += started;
			exit(run_client());
		}
		close(p[1]);
		fds[started++] = p[0];
	}
	for (i = 0; i < started; i++) {
		while ((n = read(fds[i], buf, sizeof(buf))) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 || fwrite(buf, 1, n, stdout) != (size_t)n) {
				rc = 1;
				break;
			}
		}
		close(fds[i]);
	}
	fflush(stdout);
	while (started && wait(&status) > 0) {
		int r = WIFEXITED(status) ? WEXITSTATUS(status) : 1;

		started--;
		if (r > rc)
			rc = r;
	}
	return rc;
}
