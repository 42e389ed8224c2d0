// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP's sock_diag handler, through NETLINK_SOCK_DIAG as ss(8) uses it:
 * a dump lists the bound and connected sockets of the requester's network
 * namespace, IPv4 and IPv6 each under its family, with their addresses,
 * ports, state, owner and inode and the INET_DIAG_INFO of DLCP; a socket
 * of another namespace is not listed, a closed one disappears; a request
 * for one socket finds it by port and cookie; a socket sending over a
 * delayed path (netem on lo) shows its message, segments in flight,
 * window and round-trip time, and its destination's.
 *
 * Each test runs in a network namespace of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/dlcp.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

/* the harness's TEST() has a parameter a plain test does not use */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "dlcp_util.h"

#define STATE_ESTABLISHED	1	/* TCP_ESTABLISHED: connected */
#define STATE_CLOSE		7	/* TCP_CLOSE: bound */
#define MAX_ENTS		64

/* One socket as the dump describes it. */
struct ent {
	int			family;
	int			state;
	uint16_t		sport;
	uint16_t		dport;
	uint8_t			src[16];
	uint8_t			dst[16];
	uint32_t		uid;
	uint64_t		inode;
	uint32_t		cookie[2];
	uint32_t		rqueue;
	uint32_t		wqueue;
	int			has_info;
	int			has_skmem;
	uint16_t		info_len;
	uint16_t		peer_len;
	struct dlcp_diag_info	info;
	struct dlcp_diag_peer	peers[DLCP_DIAG_MAX_PEERS];
};

static int dlcp_proto(void)
{
	FILE *f = fopen("/sys/module/dlcp/parameters/ipproto", "r");
	int p = IPPROTO_DLCP;

	if (f) {
		if (fscanf(f, "%d", &p) != 1)
			p = IPPROTO_DLCP;
		fclose(f);
	}
	return p;
}

static int diag_socket(void)
{
	return socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
}

/* Fill @e from one answer (struct inet_diag_msg and attributes). */
static int parse(const struct nlmsghdr *nlh, struct ent *e)
{
	const struct inet_diag_msg *r = NLMSG_DATA(nlh);
	size_t len = nlh->nlmsg_len - NLMSG_LENGTH(0), off;
	const uint8_t *p = (const uint8_t *)r;

	memset(e, 0, sizeof(*e));
	if (len < sizeof(*r))
		return -1;
	e->family = r->idiag_family;
	e->state = r->idiag_state;
	e->sport = ntohs(r->id.idiag_sport);
	e->dport = ntohs(r->id.idiag_dport);
	memcpy(e->src, r->id.idiag_src, 16);
	memcpy(e->dst, r->id.idiag_dst, 16);
	e->uid = r->idiag_uid;
	e->inode = r->idiag_inode;
	e->cookie[0] = r->id.idiag_cookie[0];
	e->cookie[1] = r->id.idiag_cookie[1];
	e->rqueue = r->idiag_rqueue;
	e->wqueue = r->idiag_wqueue;
	for (off = NLA_ALIGN(sizeof(*r)); off + NLA_HDRLEN <= len;) {
		const struct nlattr *a = (const void *)(p + off);
		size_t alen = a->nla_len - NLA_HDRLEN;
		const uint8_t *d = p + off + NLA_HDRLEN;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len - off)
			return -1;
		if (a->nla_type == INET_DIAG_SKMEMINFO)
			e->has_skmem = 1;
		if (a->nla_type == INET_DIAG_INFO && alen >= sizeof(e->info)) {
			memcpy(&e->info, d, sizeof(e->info));
			e->has_info = 1;
			e->info_len = e->info.info_len;
			e->peer_len = e->info.peer_len;
			if (e->info.nr_listed > DLCP_DIAG_MAX_PEERS ||
			    e->peer_len < sizeof(e->peers[0]) ||
			    e->info_len + (size_t)e->info.nr_listed *
					  e->peer_len > alen)
				return -1;
			for (size_t i = 0; i < e->info.nr_listed; i++)
				memcpy(&e->peers[i],
				       d + e->info_len + i * e->peer_len,
				       sizeof(e->peers[i]));
		}
		off += NLA_ALIGN(a->nla_len);
	}
	return 0;
}

/*
 * Send a request for @family's DLCP sockets (@flags: NLM_F_DUMP, or 0 for
 * the one of @sport and @cookie) and collect the answers into @e (at most
 * MAX_ENTS). Returns how many, or -errno.
 */
static int diag_request_proto(int nl, int family, int proto, uint16_t flags,
			      uint16_t sport, const uint32_t cookie[2],
			      struct ent *e)
{
	static uint32_t seq;
	struct {
		struct nlmsghdr		nlh;
		struct inet_diag_req_v2	r;
	} req = {
		.nlh = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | flags,
			.nlmsg_seq = ++seq,
		},
		.r = {
			.sdiag_family = (uint8_t)family,
			.sdiag_protocol = (uint8_t)proto,
			.idiag_ext = (1 << (INET_DIAG_INFO - 1)) |
				     (1 << (INET_DIAG_SKMEMINFO - 1)),
			.idiag_states = ~0U,
			.id.idiag_sport = htons(sport),
			.id.idiag_cookie = { INET_DIAG_NOCOOKIE,
					     INET_DIAG_NOCOOKIE },
		},
	};
	static char buf[65536] __attribute__((aligned(8)));
	int n = 0;

	if (cookie) {
		req.r.id.idiag_cookie[0] = cookie[0];
		req.r.id.idiag_cookie[1] = cookie[1];
	}
	if (send(nl, &req, sizeof(req), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(nl, buf, sizeof(buf), 0);
		struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
		int rem = (int)len;

		if (len < 0)
			return -errno;
		for (; NLMSG_OK(nlh, rem); nlh = NLMSG_NEXT(nlh, rem)) {
			int err = 0;

			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
				return err < 0 ? err : n;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
				return err ? err : n;
			}
			if (n == MAX_ENTS || parse(nlh, &e[n]))
				return -EBADMSG;
			n++;
			if (!(flags & NLM_F_DUMP))
				return n;	/* one answer, no DONE */
		}
	}
}

static int diag_request(int nl, int family, uint16_t flags, uint16_t sport,
			const uint32_t cookie[2], struct ent *e)
{
	return diag_request_proto(nl, family, dlcp_proto(), flags, sport,
				  cookie, e);
}

static int diag_dump(int nl, int family, struct ent *e)
{
	return diag_request(nl, family, NLM_F_DUMP, 0, NULL, e);
}

/*
 * Does the kernel have inet_diag (CONFIG_INET_DIAG)? Without it there is
 * no sock_diag for inet sockets at all: a TCP dump fails with ENOENT as a
 * DLCP one does, and dlcp.ko is built without its handler (the debug
 * kernel of make debug-check is such a kernel). The TCP dump is of the
 * test's new namespace: empty.
 */
static bool have_inet_diag(void)
{
	static struct ent e[MAX_ENTS];
	int nl = diag_socket(), n;

	if (nl < 0)
		return false;
	n = diag_request_proto(nl, AF_INET, IPPROTO_TCP, NLM_F_DUMP, 0, NULL,
			       e);
	close(nl);
	return n != -ENOENT;
}

#define REQUIRE_INET_DIAG()						\
	do {								\
		if (!have_inet_diag())					\
			SKIP(return, "kernel without inet_diag "	\
			     "(CONFIG_INET_DIAG)");			\
	} while (0)

static uint64_t ino_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

static const struct ent *find(const struct ent *e, int n, uint64_t ino)
{
	for (int i = 0; i < n; i++)
		if (e[i].inode == ino)
			return &e[i];
	return NULL;
}

static uint16_t local_port(int fd)
{
	struct sockaddr_in6 a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len))
		return 0;
	return ntohs(a.sin6_port);	/* at the same offset in sockaddr_in */
}

/* A DLCP socket bound to 127.0.0.1 (or ::1), port chosen by the kernel. */
static int bound(int family)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(family, SOCK_DLCP, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET ?
	    bind(fd, (struct sockaddr *)&a4, sizeof(a4)) :
	    bind(fd, (struct sockaddr *)&a6, sizeof(a6))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A DLCP socket of @family connected to the loopback address, @port. */
static int connected(int family, uint16_t port)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(family, SOCK_DLCP, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET ?
	    connect(fd, (struct sockaddr *)&a4, sizeof(a4)) :
	    connect(fd, (struct sockaddr *)&a6, sizeof(a6))) {
		close(fd);
		return -1;
	}
	return fd;
}

static const uint8_t lo4[16] = { 127, 0, 0, 1 };	/* idiag_src[0] */
static const uint8_t lo6[16] = { [15] = 1 };
static const uint8_t any[16];

/*
 * Bound and connected sockets of both families: each listed once, under
 * its own family, with its addresses, ports, state, owner and inode.
 */
TEST(lists_bound_and_connected)
{
	static struct ent e4[MAX_ENTS], e6[MAX_ENTS];
	int nl, b4, c4, b6, c6, n4, n6;
	const struct ent *x;

	ASSERT_EQ(0, dlcp_new_netns()) TH_LOG("netns: %s", strerror(errno));
	REQUIRE_INET_DIAG();
	b4 = bound(AF_INET);
	b6 = bound(AF_INET6);
	ASSERT_LE(0, b4);
	ASSERT_LE(0, b6);
	c4 = connected(AF_INET, local_port(b4));
	c6 = connected(AF_INET6, local_port(b6));
	ASSERT_LE(0, c4);
	ASSERT_LE(0, c6);
	nl = diag_socket();
	ASSERT_LE(0, nl);

	n4 = diag_dump(nl, AF_INET, e4);
	ASSERT_EQ(2, n4) TH_LOG("AF_INET dump: %d (%s)", n4,
				n4 < 0 ? strerror(-n4) : "entries");
	n6 = diag_dump(nl, AF_INET6, e6);
	ASSERT_EQ(2, n6) TH_LOG("AF_INET6 dump: %d", n6);

	x = find(e4, n4, ino_of(b4));
	ASSERT_NE(NULL, x);
	EXPECT_EQ(AF_INET, x->family);
	EXPECT_EQ(STATE_CLOSE, x->state);
	EXPECT_EQ(local_port(b4), x->sport);
	EXPECT_EQ(0, x->dport);
	EXPECT_EQ(0, memcmp(x->src, lo4, 16));
	EXPECT_EQ(0, memcmp(x->dst, any, 16));
	EXPECT_EQ(getuid(), x->uid);
	EXPECT_TRUE(x->has_info);
	EXPECT_TRUE(x->has_skmem);
	EXPECT_LE(sizeof(struct dlcp_diag_info), x->info_len);
	EXPECT_EQ(sizeof(struct dlcp_diag_peer), x->peer_len);
	EXPECT_EQ(0, x->info.nr_peers);
	EXPECT_EQ(0, x->info.out_msgs);

	x = find(e4, n4, ino_of(c4));
	ASSERT_NE(NULL, x);
	EXPECT_EQ(STATE_ESTABLISHED, x->state);
	EXPECT_EQ(local_port(c4), x->sport);
	EXPECT_NE(0, x->sport);
	EXPECT_EQ(local_port(b4), x->dport);
	EXPECT_EQ(0, memcmp(x->dst, lo4, 16));

	x = find(e6, n6, ino_of(b6));
	ASSERT_NE(NULL, x);
	EXPECT_EQ(AF_INET6, x->family);
	EXPECT_EQ(STATE_CLOSE, x->state);
	EXPECT_EQ(local_port(b6), x->sport);
	EXPECT_EQ(0, memcmp(x->src, lo6, 16));
	EXPECT_EQ(0, memcmp(x->dst, any, 16));

	x = find(e6, n6, ino_of(c6));
	ASSERT_NE(NULL, x);
	EXPECT_EQ(STATE_ESTABLISHED, x->state);
	EXPECT_EQ(local_port(b6), x->dport);
	EXPECT_EQ(0, memcmp(x->dst, lo6, 16));

	/* each under its own family only */
	EXPECT_EQ(NULL, find(e4, n4, ino_of(b6)));
	EXPECT_EQ(NULL, find(e6, n6, ino_of(b4)));

	close(nl);
	close(c4);
	close(c6);
	close(b4);
	close(b6);
}

/* A request with a port: the kernel filters; a state mask too. */
TEST(filter_by_port_and_state)
{
	static struct ent e[MAX_ENTS];
	int nl, a, b, c, n;

	ASSERT_EQ(0, dlcp_new_netns());
	REQUIRE_INET_DIAG();
	a = bound(AF_INET);
	b = bound(AF_INET);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	c = connected(AF_INET, local_port(a));
	ASSERT_LE(0, c);
	nl = diag_socket();
	ASSERT_LE(0, nl);

	n = diag_request(nl, AF_INET, NLM_F_DUMP, local_port(b), NULL, e);
	ASSERT_EQ(1, n);
	EXPECT_EQ(ino_of(b), e[0].inode);

	n = diag_dump(nl, AF_INET, e);
	ASSERT_EQ(3, n);
	close(nl);
	close(a);
	close(b);
	close(c);
}

/* The sockets of another network namespace are not listed. */
TEST(other_netns_hidden)
{
	static struct ent e[MAX_ENTS];
	int nl_old, nl_new, fd, n;

	ASSERT_EQ(0, dlcp_new_netns());
	REQUIRE_INET_DIAG();
	nl_old = diag_socket();
	ASSERT_LE(0, nl_old);
	ASSERT_EQ(0, dlcp_new_netns());
	fd = bound(AF_INET);
	ASSERT_LE(0, fd);

	n = diag_dump(nl_old, AF_INET, e);
	ASSERT_LE(0, n);
	EXPECT_EQ(NULL, find(e, n, ino_of(fd)));
	EXPECT_EQ(0, n);

	nl_new = diag_socket();
	ASSERT_LE(0, nl_new);
	n = diag_dump(nl_new, AF_INET, e);
	ASSERT_EQ(1, n);
	EXPECT_NE(NULL, find(e, n, ino_of(fd)));
	close(nl_old);
	close(nl_new);
	close(fd);
}

/* One socket by its port and cookie (no NLM_F_DUMP). */
TEST(dump_one_by_port_and_cookie)
{
	static struct ent e[MAX_ENTS], one[MAX_ENTS];
	uint32_t wrong[2];
	int nl, a, b, n;

	ASSERT_EQ(0, dlcp_new_netns());
	REQUIRE_INET_DIAG();
	a = bound(AF_INET6);
	b = bound(AF_INET6);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	nl = diag_socket();
	ASSERT_LE(0, nl);
	n = diag_dump(nl, AF_INET6, e);
	ASSERT_EQ(2, n);
	ASSERT_NE(NULL, find(e, n, ino_of(b)));

	memcpy(one, find(e, n, ino_of(b)), sizeof(one[0]));
	n = diag_request(nl, AF_INET6, 0, local_port(b), one[0].cookie, one);
	ASSERT_EQ(1, n) TH_LOG("exact request: %d", n);
	EXPECT_EQ(ino_of(b), one[0].inode);
	EXPECT_EQ(local_port(b), one[0].sport);
	EXPECT_TRUE(one[0].has_info);

	/* without a cookie */
	n = diag_request(nl, AF_INET6, 0, local_port(b), NULL, one);
	ASSERT_EQ(1, n);
	EXPECT_EQ(ino_of(b), one[0].inode);

	/* another socket's cookie (ESTALE, as for UDP), another family, a
	 * port nobody has
	 */
	memcpy(wrong, find(e, 2, ino_of(a))->cookie, sizeof(wrong));
	EXPECT_EQ(-ESTALE, diag_request(nl, AF_INET6, 0, local_port(b),
					wrong, one));
	EXPECT_EQ(-ENOENT, diag_request(nl, AF_INET, 0, local_port(b), NULL,
					one));
	close(a);
	EXPECT_EQ(-ENOENT, diag_request(nl, AF_INET6, 0, local_port(a), NULL,
					one));
	close(nl);
	close(b);
}

/* A closed socket is gone from the next dump. */
TEST(closed_socket_disappears)
{
	static struct ent e[MAX_ENTS];
	uint64_t ino;
	int nl, fd, keep, n;

	ASSERT_EQ(0, dlcp_new_netns());
	REQUIRE_INET_DIAG();
	fd = bound(AF_INET);
	keep = bound(AF_INET);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, keep);
	ino = ino_of(fd);
	nl = diag_socket();
	ASSERT_LE(0, nl);
	n = diag_dump(nl, AF_INET, e);
	ASSERT_EQ(2, n);
	ASSERT_NE(NULL, find(e, n, ino));

	close(fd);
	n = diag_dump(nl, AF_INET, e);
	ASSERT_EQ(1, n);
	EXPECT_EQ(NULL, find(e, n, ino));
	EXPECT_NE(NULL, find(e, n, ino_of(keep)));
	close(nl);
	close(keep);
}

#define DELAY_MS	50
#define MSG_SIZE	(8 << 20)

/*
 * A message in flight over lo delayed 50 ms each way (netem): the
 * sender's entry shows it (out_msgs, bytes held, segments in flight) and
 * its destination's window and round-trip time; the receiver's shows the
 * message being received.
 */
TEST(in_flight_state)
{
	static struct ent e[MAX_ENTS];
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	const struct ent *s = NULL, *r = NULL;
	const struct dlcp_diag_peer *p;
	char *buf, cmd[128];
	int nl, rx, tx, n = 0, i;

	ASSERT_EQ(0, dlcp_new_netns());
	REQUIRE_INET_DIAG();
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	snprintf(cmd, sizeof(cmd),
		 "tc qdisc add dev lo root netem delay %dms limit 100000 2> /dev/null",
		 DELAY_MS);
	if (system(cmd))
		SKIP(return, "no netem (tc, sch_netem)");
	rx = bound(AF_INET);
	ASSERT_LE(0, rx);
	tx = connected(AF_INET, local_port(rx));
	ASSERT_LE(0, tx);
	ASSERT_EQ(0, setsockopt(tx, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	buf = calloc(1, MSG_SIZE);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(MSG_SIZE, send(tx, buf, MSG_SIZE, 0))
		TH_LOG("send: %s", strerror(errno));
	nl = diag_socket();
	ASSERT_LE(0, nl);

	/* until a round trip measured, with segments in flight */
	for (i = 0; i < 1000; i++) {
		n = diag_dump(nl, AF_INET, e);
		ASSERT_LE(0, n);
		s = find(e, n, ino_of(tx));
		r = find(e, n, ino_of(rx));
		ASSERT_NE(NULL, s);
		ASSERT_NE(NULL, r);
		if (s->info.nr_listed && s->peers[0].srtt_us &&
		    s->info.flight && s->info.out_msgs)
			break;
		usleep(10000);
	}
	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, r);
	TH_LOG("sender: out_msgs %u flight %u/%u cwnd %u srtt %u us snd_mem %llu",
	       s->info.out_msgs, s->info.flight, s->info.flight_cap,
	       s->info.cwnd, s->info.srtt_us,
	       (unsigned long long)s->info.snd_mem);
	EXPECT_EQ(1, s->info.out_msgs);
	EXPECT_LT(0, s->info.flight);
	EXPECT_LE(s->info.flight, s->info.flight_cap);
	EXPECT_LE(MSG_SIZE, s->info.snd_mem);
	EXPECT_EQ(s->wqueue, s->info.snd_mem);
	EXPECT_EQ(1, s->info.nr_peers);
	ASSERT_EQ(1, s->info.nr_listed);
	p = &s->peers[0];
	TH_LOG("peer: msgs %u inflight %u cwnd %u ssthresh %u srtt %u rttvar %u",
	       p->msgs, p->inflight, p->cwnd, p->ssthresh, p->srtt_us,
	       p->rttvar_us);
	TH_LOG("peer: min_rtt %u rto %u reo %u", p->min_rtt_us, p->rto_us,
	       p->reo_us);
	EXPECT_EQ(htonl(0xffff), p->addr[2]);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), p->addr[3]);
	EXPECT_EQ(1, p->msgs);
	EXPECT_LT(0, p->inflight);
	EXPECT_LT(0, p->cwnd);
	/* two 50 ms delays, and whatever the emulator adds */
	EXPECT_LE(2 * DELAY_MS * 1000 * 9 / 10, p->srtt_us);
	EXPECT_GT(5 * 1000 * 1000, p->srtt_us);
	EXPECT_LE(2 * DELAY_MS * 1000 * 9 / 10, p->min_rtt_us);
	EXPECT_LE(p->srtt_us, p->rto_us);
	EXPECT_LT(0, s->info.cwnd);
	EXPECT_LT(0, s->info.srtt_us);

	/* the receiver is reassembling it */
	EXPECT_EQ(1, r->info.in_msgs);
	EXPECT_LT(0, r->info.rcv_mem);
	EXPECT_EQ(r->rqueue, r->info.rcv_mem);

	free(buf);
	close(nl);
	close(tx);
	close(rx);
}

TEST_HARNESS_MAIN
