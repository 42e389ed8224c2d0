// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP socket API selftests, messages: sendmsg/recvmsg semantics (message
 * boundaries, scatter/gather, sizes and truncation), blocking, timeouts,
 * poll and epoll, the counters of /proc/net/dlcp/snmp, and bigger
 * transfers on loopback.
 *
 * Every test runs in a network namespace of its own (the harness forks one
 * child per test, and the fixture unshares its netns), on 127.0.0.1, so
 * ports and counters start from a clean slate. Needs root (CAP_SYS_ADMIN
 * for unshare(CLONE_NEWNET)) and the dlcp module loaded. The fixture and
 * helpers are in dlcp_api.h.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "dlcp_api.h"

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

TEST_HARNESS_MAIN
