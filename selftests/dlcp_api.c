// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP socket API selftests, the socket calls: socket creation, bind,
 * connect, the addresses that bind, connect and sendto take (and what an
 * unbound or unconnected socket may do), socket options, and AF_INET6
 * sockets. Messages are in dlcp_api_msg.c, control messages and
 * completions in dlcp_api_cmsg.c.
 *
 * Every test runs in a network namespace of its own (the harness forks one
 * child per test, and the fixture unshares its netns), on 127.0.0.1, so
 * ports and counters start from a clean slate. Needs root (CAP_SYS_ADMIN
 * for unshare(CLONE_NEWNET)) and the dlcp module loaded. The fixture and
 * helpers are in dlcp_api.h.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <net/if.h>
#include <sys/un.h>

#include "dlcp_api.h"

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
