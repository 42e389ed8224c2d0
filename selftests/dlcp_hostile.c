// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP on a shared node: hostile peers. They check that:
 *  - a host that receives from a socket cannot predict the message ids
 *    that socket uses towards another host, so DATA forged off-path does
 *    not pre-write (poison) a message it sends there;
 *  - an IPv6 packet with a v4-mapped source is dropped, not taken for
 *    IPv4;
 *  - every message ends: one whose transmissions all fail, one whose
 *    receiver answers but never takes it; and close() is bounded;
 *  - an ICMP "fragmentation needed" counts only if it quotes the id of a
 *    message in flight;
 *  - a message is delivered once while its sender keeps asking after the
 *    receiver's timeout;
 *  - an answer to a PROBE that REPORTs about later packets overtook has
 *    nothing resend that they acknowledged;
 *  - in UDP mode, a datagram without a UDP checksum has its DLCP
 *    checksum verified;
 *  - peeking (MSG_PEEK) twice sees the same message, and reading then
 *    takes it.
 * Hostile users of the node are in dlcp_hostile_users.c, floods and
 * memory limits in dlcp_hostile_mem.c.
 *
 * Each test runs in a network namespace of its own (the harness forks a
 * child per test). Needs root and the dlcp module loaded; the helpers
 * are in dlcp_hostile.h.
 */
#define _GNU_SOURCE
#include <signal.h>

#include "dlcp_hostile.h"

/* ------------------------------------------------------------------ */
/* Off-path spoofing: message ids                                       */
/* ------------------------------------------------------------------ */

#define VICTIM_LEN	3000
#define FORGED_IDS	64

/*
 * S (127.0.0.1) sends to C (127.0.0.2), which learns the id of that
 * message. C then forges, from S's address and port, the first segment of
 * a VICTIM_LEN-byte message to R (127.0.0.3) for each of the next
 * FORGED_IDS ids, before S sends its real message to R. R must receive
 * S's bytes: ids towards R must not follow from the ids C saw.
 */
TEST(forged_data_needs_unguessable_id)
{
	uint8_t pkt[1500], out[VICTIM_LEN], in[VICTIM_LEN], poison[1000];
	struct dlcp_recv_info ri = { 0 };
	uint64_t seed = dlcp_payload_seed(1, 1, VICTIM_LEN);
	uint32_t seen, id;
	int s, c, r;

	ASSERT_EQ(0, dlcp_new_netns());
	s = bound4("127.0.0.1");
	c = bound4("127.0.0.2");
	r = bound4("127.0.0.3");
	ASSERT_LE(0, s);
	ASSERT_LE(0, c);
	ASSERT_LE(0, r);

	memset(out, 0, sizeof(out));
	ASSERT_EQ(100, send_to(s, "127.0.0.2", port_of(c), out, 100, 0));
	ASSERT_EQ(100, recv_within(c, in, sizeof(in), &ri, WAIT_MS));
	seen = ri.msg_id;

	memset(poison, 0xee, sizeof(poison));
	for (id = seen + 1; id <= seen + FORGED_IDS; id++) {
		struct dlcp_pkt_info pi = {
			.sport = port_of(s), .dport = port_of(r),
			.msg_id = id, .msg_len = VICTIM_LEN,
		};
		struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
		size_t len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di,
						 poison, sizeof(poison));
		uint32_t sa = htonl(0x7f000001), da = htonl(0x7f000003);

		ASSERT_LT(0, len);
		dlcp_pkt_finish4(pkt, len, sa, da);
		ASSERT_EQ(0, raw_send4("127.0.0.1", "127.0.0.3", pkt, len));
	}

	dlcp_payload_fill(out, VICTIM_LEN, seed);
	ASSERT_EQ(VICTIM_LEN, send_to(s, "127.0.0.3", port_of(r), out,
				      VICTIM_LEN, 0));
	ASSERT_EQ(VICTIM_LEN, recv_within(r, in, sizeof(in), &ri, WAIT_MS));
	TH_LOG("id seen by C %u, id of the message to R %u", seen, ri.msg_id);
	EXPECT_EQ(VICTIM_LEN, dlcp_payload_cmp(in, VICTIM_LEN, seed));
	EXPECT_FALSE(ri.msg_id - seen >= 1 && ri.msg_id - seen <= FORGED_IDS);
	close(s);
	close(c);
	close(r);
}

/* ------------------------------------------------------------------ */
/* Addresses: v4-mapped IPv6 sources                                    */
/* ------------------------------------------------------------------ */

TEST(ipv6_v4mapped_source)
{
	uint8_t pkt[256], ip6[300] = { 0 };
	struct in6_addr src, dst = IN6ADDR_LOOPBACK_INIT;
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	struct dlcp_pkt_info pi = { .msg_id = 77, .msg_len = 5,
				    .flags = DLCP_HF_LAST };
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
	uint64_t dropped;
	char buf[16];
	size_t len;
	int rx, raw;

	ASSERT_EQ(0, dlcp_new_netns());
	rx = socket(AF_INET6, SOCK_DLCP, 0);
	ASSERT_LE(0, rx);
	ASSERT_EQ(0, bind(rx, (struct sockaddr *)&a, sizeof(a)));
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &src);
	pi.sport = 4242;
	pi.dport = port_of(rx);
	len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, "spoof", 5);
	ASSERT_LT(0, len);
	dlcp_pkt_set_csum(pkt, len, dlcp_csum_pseudo6(&src, &dst,
						       IPPROTO_DLCP, len));
	ip6[0] = 0x60;
	dlcp_put16(ip6 + 4, (uint16_t)len);
	ip6[6] = IPPROTO_DLCP;
	ip6[7] = 64;
	memcpy(ip6 + 8, &src, 16);
	memcpy(ip6 + 24, &dst, 16);
	memcpy(ip6 + 40, pkt, len);
	raw = socket(AF_INET6, SOCK_RAW, IPPROTO_RAW);
	ASSERT_LE(0, raw);
	a.sin6_addr = dst;
	dropped = snmp("DlcpDropAddr");
	ASSERT_EQ(40 + len, sendto(raw, ip6, 40 + len, 0, (struct sockaddr *)&a,
				   sizeof(a)));
	EXPECT_EQ(-1, recv_within(rx, buf, sizeof(buf), NULL, QUIET_MS));
	EXPECT_EQ(dropped + 1, snmp("DlcpDropAddr"));
	close(raw);
	close(rx);
}

/* ------------------------------------------------------------------ */
/* Liveness: every message ends                                         */
/* ------------------------------------------------------------------ */

/*
 * Every transmission fails (a tc filter drops each packet on lo: ENOBUFS):
 * the message never starts, and fails msg_timeout_ms later with the error.
 */
TEST(message_that_never_starts_ends)
{
	uint32_t status = 0;
	int fd, rx, err = 0;
	double t0;

	ASSERT_EQ(0, dlcp_new_netns());
	if (sh("tc qdisc add dev lo clsact && "
	       "tc filter add dev lo egress matchall action drop"))
		SKIP(return, "no tc matchall");
	fd = quick_sender(1000);
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, fd);
	ASSERT_LE(0, rx);
	t0 = dlcp_now();
	ASSERT_EQ(10, send_to(fd, "127.0.0.1", port_of(rx), "0123456789",
			      10, 0));
	ASSERT_EQ(0, completion(fd, 8000, &status, &err));
	TH_LOG("ended after %.1f s: status %u, %s", dlcp_now() - t0, status,
	       strerror(err));
	EXPECT_EQ(DLCP_DONE_TIMEOUT, status);
	EXPECT_EQ(ENOBUFS, err);
	close(fd);
	close(rx);
}

/*
 * Wait up to 100 ms for a packet to @port on the raw DLCP socket @raw, of
 * at least @min bytes after the IP header, into @in: its DLCP header in
 * @h, its length (from the IP header) in @n, and @pi filled in for a
 * reply from @port. Returns its type, or -1 if none came.
 */
static int raw_next(int raw, uint16_t port, uint8_t *in, size_t size,
		    size_t min, const uint8_t **h, ssize_t *n,
		    struct dlcp_pkt_info *pi)
{
	struct pollfd p = { .fd = raw, .events = POLLIN };

	if (poll(&p, 1, 100) != 1)
		return -1;
	*n = recv(raw, in, size, 0);
	if (*n < (ssize_t)(20 + min))
		return -1;
	*h = in + (in[0] & 0xf) * 4;
	if (dlcp_get16(*h + 2) != port)
		return -1;
	memset(pi, 0, sizeof(*pi));
	pi->sport = port;
	pi->dport = dlcp_get16(*h);
	pi->msg_id = dlcp_get32(*h + 12);
	pi->msg_len = dlcp_get32(*h + 16);
	return (*h)[4] & 0xf;
}

/* Send the DLCP packet @out of @len bytes on @raw, 127.0.0.1 to itself. */
static void raw_reply(int raw, uint8_t *out, size_t len)
{
	struct sockaddr_in to = sin4("127.0.0.1", 0);
	uint32_t lo = htonl(INADDR_LOOPBACK);

	dlcp_pkt_finish4(out, len, lo, lo);
	sendto(raw, out, len, 0, (struct sockaddr *)&to, sizeof(to));
}

/*
 * The receiver's port answers every DATA and PROBE with a REPORT that says
 * nothing arrived, and never STOPs: a raw socket plays it for @secs. The
 * message must fail (DLCP_STALL_MULT msg_timeout_ms after its last
 * progress) and close() return, though its receiver never goes silent.
 */
static void hostile_reporter(uint16_t port, double secs)
{
	int raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	double end = dlcp_now() + secs;

	if (raw < 0)
		_exit(1);
	while (dlcp_now() < end) {
		uint8_t in[2048], out[256];
		const uint8_t *h;
		struct dlcp_pkt_info pi;
		struct dlcp_pkt_report_info ri = { 0 };
		struct dlcp_pkt_gap gap;
		ssize_t n;
		size_t len;
		int type;

		type = raw_next(raw, port, in, sizeof(in), DLCP_DATA_HDR_LEN,
				&h, &n, &pi);
		if (type != DLCP_T_DATA && type != DLCP_T_PROBE)
			continue;
		ri.scan_end = pi.msg_len;
		ri.rflags = type == DLCP_T_PROBE ? DLCP_RF_PROBED : 0;
		gap.start = 0;
		gap.end = pi.msg_len;
		len = dlcp_pkt_build_report(out, sizeof(out), &pi, &ri, &gap, 1);
		if (len)
			raw_reply(raw, out, len);
	}
	_exit(0);
}

TEST(answering_receiver_that_never_takes_it)
{
	uint8_t buf[20000] = { 0 };
	uint32_t status = 0;
	int fd, err = 0, st;
	uint16_t port = 20000 + getpid() % 10000;	/* not ephemeral */
	double t0, t1;
	pid_t pid;

	ASSERT_EQ(0, dlcp_new_netns());
	/* a raw socket plays the receiver: no STOP from the host for its port */
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	/* first: the child must not hold the sender's socket open */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		hostile_reporter(port, 20);
	fd = quick_sender(1000);
	ASSERT_LE(0, fd);
	usleep(200000);
	t0 = dlcp_now();
	ASSERT_EQ(sizeof(buf), send_to(fd, "127.0.0.1", port, buf, sizeof(buf),
				       0));
	ASSERT_EQ(0, completion(fd, 12000, &status, &err));
	t1 = dlcp_now();
	TH_LOG("ended after %.1f s: status %u, %s", t1 - t0, status,
	       strerror(err));
	EXPECT_EQ(DLCP_DONE_TIMEOUT, status);
	EXPECT_EQ(ETIMEDOUT, err);

	/* close() with a message in the same state: bounded by the timeout */
	ASSERT_EQ(sizeof(buf), send_to(fd, "127.0.0.1", port, buf, sizeof(buf),
				       0));
	t0 = dlcp_now();
	close(fd);
	t1 = dlcp_now();
	TH_LOG("close() took %.1f s", t1 - t0);
	EXPECT_GT(3.0, t1 - t0);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* ------------------------------------------------------------------ */
/* ICMP: a "fragmentation needed" must quote a message of ours          */
/* ------------------------------------------------------------------ */

/* Send ICMP frag-needed (MTU @mtu) quoting the DLCP header @dlcp. */
static int icmp_frag_needed(const uint8_t *dlcp, uint16_t mtu)
{
	struct sockaddr_in to = sin4("127.0.0.1", 0);
	uint8_t p[8 + 20 + DLCP_HDR_LEN] = { 3, 4 };
	int fd, rc;

	dlcp_put16(p + 6, mtu);
	p[8] = 0x45;
	dlcp_put16(p + 10, 1500);
	p[16] = 64;
	p[17] = IPPROTO_DLCP;
	inet_pton(AF_INET, "127.0.0.1", p + 20);
	inet_pton(AF_INET, "127.0.0.1", p + 24);
	memcpy(p + 28, dlcp, DLCP_HDR_LEN);
	dlcp_put16(p + 2, dlcp_csum_finish(dlcp_csum_add(0, p, sizeof(p))));
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0)
		return -1;
	rc = sendto(fd, p, sizeof(p), 0, (struct sockaddr *)&to, sizeof(to));
	close(fd);
	return rc == sizeof(p) ? 0 : -1;
}

/*
 * A message is in flight to a port nobody answers on; an ICMP error that
 * quotes another id is ignored, one that quotes the message re-cuts it.
 */
TEST(icmp_too_big_must_quote_a_message)
{
	uint8_t out[20000] = { 0 }, hdr[DLCP_HDR_LEN];
	uint16_t dport = 20000 + getpid() % 10000;
	uint64_t upd, ign;
	int tx, raw, found = 0;
	double end;

	ASSERT_EQ(0, dlcp_new_netns());
	/* a raw socket plays the receiver: no STOP from the host for its port */
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	tx = bound4("127.0.0.1");
	ASSERT_LE(0, raw);
	ASSERT_LE(0, tx);
	ASSERT_EQ(sizeof(out), send_to(tx, "127.0.0.1", dport, out,
				       sizeof(out), 0));
	for (end = dlcp_now() + 5; !found && dlcp_now() < end;) {
		uint8_t p[2048];
		struct pollfd pf = { .fd = raw, .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 200) != 1)
			continue;
		n = recv(raw, p, sizeof(p), 0);
		if (n >= 20 + DLCP_HDR_LEN && dlcp_get16(p + 22) == dport) {
			memcpy(hdr, p + 20, DLCP_HDR_LEN);
			found = 1;
		}
	}
	ASSERT_TRUE(found);

	/* a raw socket would take the error too and lower the route's MTU */
	close(raw);
	upd = snmp("DlcpPmtuUpdates");
	ign = snmp("DlcpIcmpIgnored");
	dlcp_put32(hdr + 12, dlcp_get32(hdr + 12) ^ 0x5a5a5a5a);
	ASSERT_EQ(0, icmp_frag_needed(hdr, 1200));
	usleep(200000);
	EXPECT_EQ(upd, snmp("DlcpPmtuUpdates"));
	EXPECT_EQ(ign + 1, snmp("DlcpIcmpIgnored"));

	dlcp_put32(hdr + 12, dlcp_get32(hdr + 12) ^ 0x5a5a5a5a);
	ASSERT_EQ(0, icmp_frag_needed(hdr, 1200));
	usleep(200000);
	/* and more, if a packet cut before now meets the new MTU on lo */
	EXPECT_LT(upd, snmp("DlcpPmtuUpdates"));
	close_now(tx);
}

/* ------------------------------------------------------------------ */
/* Exactly once: a sender that keeps asking after the receiver's timeout */
/* ------------------------------------------------------------------ */

/* Build and send from 127.0.0.1 port @sport a DATA (whole) or PROBE. */
static int send_forged(int type, uint16_t sport, uint16_t dport, uint32_t id,
		       uint8_t flags)
{
	struct dlcp_pkt_info pi = {
		.sport = sport, .dport = dport, .msg_id = id, .msg_len = 5,
		.flags = flags,
	};
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
	uint32_t lo = htonl(INADDR_LOOPBACK);
	uint8_t pkt[256];
	size_t len;

	len = type == DLCP_T_DATA ?
	      dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, "once!", 5) :
	      dlcp_pkt_build_probe(pkt, sizeof(pkt), &pi, 5, 0);
	if (!len)
		return -1;
	dlcp_pkt_finish4(pkt, len, lo, lo);
	return raw_send4("127.0.0.1", "127.0.0.1", pkt, len);
}

/*
 * The receiver's msg_timeout_ms is 1 s; its sender (a raw socket here)
 * misses every STOP and keeps probing every 0.4 s for 3 s, then resends
 * the data. The receiver must remember the message while it is asked
 * about, and deliver it once.
 */
TEST(delivered_once_while_the_sender_asks)
{
	uint16_t sport = 20000 + getpid() % 10000;
	char buf[16];
	int rx, i;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_sysctl_write("msg_timeout_ms", 1000));
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, rx);
	ASSERT_EQ(0, send_forged(DLCP_T_DATA, sport, port_of(rx), 42,
				 DLCP_HF_LAST));
	ASSERT_EQ(5, recv_within(rx, buf, sizeof(buf), NULL, WAIT_MS));
	for (i = 0; i < 8; i++) {
		usleep(400000);
		ASSERT_EQ(0, send_forged(DLCP_T_PROBE, sport, port_of(rx), 42,
					 0));
	}
	ASSERT_EQ(0, send_forged(DLCP_T_DATA, sport, port_of(rx), 42,
				 DLCP_HF_LAST | DLCP_HF_RETRANS));
	EXPECT_EQ(-1, recv_within(rx, buf, sizeof(buf), NULL, QUIET_MS));
	close(rx);
}

/* ------------------------------------------------------------------ */
/* No amplification                                                     */
/* ------------------------------------------------------------------ */

#define AMP_PKTS	64
#define AMP_PLEN	600

/*
 * The longest REPORT to port @port that raw socket @raw holds (DLCP
 * bytes), and how many there were in @n; -1 if none.
 */
static long longest_report(int raw, uint16_t port, unsigned int *n)
{
	uint8_t in[2048];
	const uint8_t *h;
	struct dlcp_pkt_info pi;
	long longest = -1;
	ssize_t got;

	*n = 0;
	for (;;) {
		int type;

		got = 0;
		type = raw_next(raw, port, in, sizeof(in), DLCP_HDR_LEN, &h,
				&got, &pi);
		if (type == -1 && !got)
			break;
		if (type != DLCP_T_REPORT)
			continue;
		(*n)++;
		if (dlcp_get16(h + 8) > longest)
			longest = dlcp_get16(h + 8);
	}
	return longest;
}

/* PROBE @id of @len bytes (padded with zero header words) to @dport. */
static int send_probe(uint16_t sport, uint16_t dport, uint32_t id,
		      uint32_t msg_len, size_t len)
{
	struct dlcp_pkt_info pi = {
		.sport = sport, .dport = dport, .msg_id = id, .msg_len = msg_len,
	};
	uint32_t lo = htonl(INADDR_LOOPBACK);
	uint8_t pkt[DLCP_PROBE_PAD_LEN] = { 0 };

	if (!dlcp_pkt_build_probe(pkt, sizeof(pkt), &pi, msg_len, 1))
		return -1;
	pkt[6] = (uint8_t)(len / 4);
	dlcp_put16(pkt + 8, (uint16_t)len);
	dlcp_pkt_finish4(pkt, len, lo, lo);
	return raw_send4("127.0.0.1", "127.0.0.1", pkt, len);
}

/*
 * A forged sender cannot make a receiver send more than it sent: a REPORT
 * holds no more gaps than fit in the packet it answers. A message of
 * AMP_PKTS ranges, each of a short DATA packet: the REPORTs they draw are
 * no longer than they; a 28-byte PROBE draws one of just the header; the
 * PROBE DLCP itself sends, padded to DLCP_PROBE_PAD_LEN, draws every gap
 * (AMP_PKTS: one after each range, as the sender has sent all).
 */
TEST(no_amplification)
{
	uint16_t sport = 20000 + getpid() % 10000;
	static uint8_t payload[AMP_PLEN];
	struct dlcp_pkt_info pi = {
		.sport = sport, .msg_id = 77, .msg_len = AMP_PKTS * 2000,
	};
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
	uint32_t lo = htonl(INADDR_LOOPBACK);
	unsigned int n, i;
	uint8_t pkt[1024];
	int rx, raw;
	long longest;
	size_t len;

	ASSERT_EQ(0, dlcp_new_netns());
	rx = bound4("127.0.0.1");
	raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	ASSERT_LE(0, rx);
	ASSERT_LE(0, raw);
	pi.dport = port_of(rx);
	for (i = 0; i < AMP_PKTS; i++) {
		di.offset = i * 2000;
		len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, payload,
					  sizeof(payload));
		ASSERT_LT(0, len);
		dlcp_pkt_finish4(pkt, len, lo, lo);
		ASSERT_EQ(0, raw_send4("127.0.0.1", "127.0.0.1", pkt, len));
	}
	longest = longest_report(raw, sport, &n);
	TH_LOG("%u DATA of %zu bytes: %u REPORTs, the longest %ld bytes",
	       AMP_PKTS, len, n, longest);
	EXPECT_LT(0, n);
	EXPECT_GE((long)len, longest);

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, send_probe(sport, port_of(rx), 77, pi.msg_len,
					DLCP_PROBE_HDR_LEN));
	longest = longest_report(raw, sport, &n);
	TH_LOG("3 PROBEs of %d bytes: %u REPORTs, the longest %ld bytes",
	       DLCP_PROBE_HDR_LEN, n, longest);
	EXPECT_EQ(3, n);
	EXPECT_EQ(DLCP_REPORT_HDR_LEN, longest);

	ASSERT_EQ(0, send_probe(sport, port_of(rx), 77, pi.msg_len,
				DLCP_PROBE_PAD_LEN));
	longest = longest_report(raw, sport, &n);
	TH_LOG("a PROBE of %d bytes: %u REPORT of %ld bytes",
	       DLCP_PROBE_PAD_LEN, n, longest);
	EXPECT_EQ(1, n);
	EXPECT_EQ(DLCP_REPORT_HDR_LEN + AMP_PKTS * DLCP_GAP_LEN, longest);
	close(raw);
	close(rx);
}

/* ------------------------------------------------------------------ */
/* An answer to a PROBE that later reports overtook                     */
/* ------------------------------------------------------------------ */

/*
 * A receiver played by a raw socket on @port: once all of a message's
 * bytes came, one REPORT acknowledges them all, echoing the time of the
 * DATA packet that completed it; the first PROBE after that gets a REPORT
 * that says nothing arrived, echoing the first DATA packet's time if
 * @stale (an answer sent before the data came and delivered after the
 * report: a CPU's backlog held it) or the PROBE's own (the receiver lost
 * the message); later PROBEs get a STOP.
 */
static void probe_answerer(uint16_t port, int stale)
{
	int raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	uint32_t got = 0, t_first = 0;
	double end = dlcp_now() + 10;
	int answered = 0;

	if (raw < 0)
		_exit(1);
	while (dlcp_now() < end) {
		uint8_t in[70000], out[256];
		struct dlcp_pkt_info pi;
		struct dlcp_pkt_report_info ri = { 0 };
		struct dlcp_pkt_gap gap;
		const uint8_t *h;
		size_t len = 0;
		ssize_t n;
		int type;

		type = raw_next(raw, port, in, sizeof(in), DLCP_PROBE_HDR_LEN,
				&h, &n, &pi);
		if (type < 0)
			continue;
		ri.scan_end = pi.msg_len;
		if (type == DLCP_T_DATA && n >= 20 + DLCP_DATA_HDR_LEN &&
		    got < pi.msg_len) {
			if (!got)
				t_first = dlcp_get32(h + 44);
			got += n - (h - in) - h[6] * 4;
			if (got < pi.msg_len)
				continue;
			/* all came: acknowledged, echoing the last one's time */
			ri.rcvd = pi.msg_len;
			ri.tsecr = dlcp_get32(h + 44);
			len = dlcp_pkt_build_report(out, sizeof(out), &pi, &ri,
						    NULL, 0);
		} else if (type == DLCP_T_PROBE && got >= pi.msg_len &&
			   !answered++) {
			ri.tsecr = stale ? t_first : dlcp_get32(h + 24);
			ri.rflags = DLCP_RF_PROBED;
			gap.start = 0;
			gap.end = pi.msg_len;
			len = dlcp_pkt_build_report(out, sizeof(out), &pi, &ri,
						    &gap, 1);
		} else if (type == DLCP_T_PROBE && answered) {
			len = dlcp_pkt_build_stop(out, sizeof(out), &pi, 0,
						  dlcp_get32(h + 24));
		}
		if (len)
			raw_reply(raw, out, len);
	}
	_exit(0);
}

/*
 * The answer to a PROBE is authoritative for what it covers (a receiver
 * may have dropped a message it could not complete), unless a REPORT
 * about later packets came first: then it knows less than they did, and
 * the segments they acknowledged are not resent. The same answer
 * echoing the PROBE's time has the message resent, as it should.
 */
TEST(overtaken_probe_answer_resends_nothing)
{
	uint16_t port = 20000 + getpid() % 10000;	/* not ephemeral */
	uint8_t buf[20000] = { 0 };
	int stale, fd, err, st;
	uint64_t before;
	uint32_t status;
	pid_t pid;

	ASSERT_EQ(0, dlcp_new_netns());
	/* a raw socket plays the receiver: no STOP from the host for its port */
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	for (stale = 1; stale >= 0; stale--) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			probe_answerer(port, stale);
		fd = quick_sender(5000);
		ASSERT_LE(0, fd);
		usleep(200000);
		before = snmp("DlcpRetransPkts");
		ASSERT_EQ(sizeof(buf), send_to(fd, "127.0.0.1", port, buf,
					       sizeof(buf), 0));
		status = err = 0;
		ASSERT_EQ(0, completion(fd, WAIT_MS, &status, &err));
		EXPECT_EQ(DLCP_DONE_EXACT, status);
		TH_LOG("answer echoing %s: %llu packets resent",
		       stale ? "the first DATA" : "the PROBE",
		       (unsigned long long)(snmp("DlcpRetransPkts") - before));
		if (stale) {
			EXPECT_EQ(0, snmp("DlcpRetransPkts") - before);
		} else {
			EXPECT_LE(sizeof(buf) / 1500,
				  snmp("DlcpRetransPkts") - before);
		}
		close(fd);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		port++;
	}
}

/* ------------------------------------------------------------------ */
/* UDP mode: which checksum is verified                                 */
/* ------------------------------------------------------------------ */

/*
 * Send a whole 5-byte DATA message @id to 127.0.0.1 port @dport in a UDP
 * datagram to DLCP's UDP port, from a UDP socket @u (its UDP checksum on
 * or off by SO_NO_CHECK), with its DLCP checksum right or, if @bad, off by
 * one.
 */
static int send_udp_data(int u, uint16_t dport, uint32_t id, int bad)
{
	struct dlcp_pkt_info pi = {
		.sport = 4242, .dport = dport, .msg_id = id, .msg_len = 5,
		.flags = DLCP_HF_LAST,
	};
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
	struct sockaddr_in a = sin4("127.0.0.1", 9253);
	uint32_t lo = htonl(INADDR_LOOPBACK);
	uint8_t pkt[256];
	size_t len;

	len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, "udp!!", 5);
	if (!len)
		return -1;
	dlcp_pkt_finish4(pkt, len, lo, lo);
	if (bad)
		pkt[11] ^= 1;
	return sendto(u, pkt, len, 0, (struct sockaddr *)&a, sizeof(a)) ==
	       (ssize_t)len ? 0 : -1;
}

/*
 * A UDP socket on 127.0.0.1 whose source port is @port: below 1024 one
 * that DLCP takes datagrams from (net.dlcp.udp_sport_priv), as only a
 * privileged process may bind it; 0 an ephemeral one, which any user has.
 */
static int udp_from(uint16_t port)
{
	struct sockaddr_in a = sin4("127.0.0.1", port);
	int u = socket(AF_INET, SOCK_DGRAM, 0);

	if (u >= 0 && bind(u, (struct sockaddr *)&a, sizeof(a))) {
		close(u);
		return -1;
	}
	return u;
}

/*
 * In UDP mode the UDP checksum covers the DLCP packet. A datagram without
 * one (zero, as IPv4 allows) has its DLCP checksum verified: a bad one is
 * dropped and counted. One with a UDP checksum, which the UDP layer
 * verified, is not summed a second time: its DLCP checksum is not read.
 */
TEST(udp_checksum_covers_dlcp)
{
	int rx, u, off = 0, on = 1;
	uint64_t errs;
	char buf[16];

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_sysctl_write("encap", 1));
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, rx);
	u = udp_from(1000);
	ASSERT_LE(0, u);

	/* no UDP checksum: DLCP's decides */
	ASSERT_EQ(0, setsockopt(u, SOL_SOCKET, SO_NO_CHECK, &on, sizeof(on)));
	errs = snmp("DlcpInCsumErrors");
	ASSERT_EQ(0, send_udp_data(u, port_of(rx), 1, 0));
	EXPECT_EQ(5, recv_within(rx, buf, sizeof(buf), NULL, WAIT_MS));
	ASSERT_EQ(0, send_udp_data(u, port_of(rx), 2, 1));
	EXPECT_EQ(-1, recv_within(rx, buf, sizeof(buf), NULL, QUIET_MS));
	EXPECT_EQ(errs + 1, snmp("DlcpInCsumErrors"));

	/* a UDP checksum: DLCP's is not summed again */
	ASSERT_EQ(0, setsockopt(u, SOL_SOCKET, SO_NO_CHECK, &off, sizeof(off)));
	ASSERT_EQ(0, send_udp_data(u, port_of(rx), 3, 1));
	EXPECT_EQ(5, recv_within(rx, buf, sizeof(buf), NULL, WAIT_MS));
	EXPECT_EQ(errs + 1, snmp("DlcpInCsumErrors"));
	close(u);
	close(rx);
}

/*
 * A DLCP packet inside UDP names its sender's DLCP port itself, so any
 * user's UDP socket could write one under another user's port. Only
 * datagrams from a source port below 1024, which an unprivileged process
 * cannot bind, are taken (DlcpDropUdpSport counts the others), unless
 * net.dlcp.udp_sport_priv is 0; DLCP's own come from there
 * (net.dlcp.udp_sport_min .. udp_sport_max).
 */
TEST(udp_unprivileged_source_port)
{
	long long lo, hi;
	uint64_t drops;
	int rx, tx, u;
	char buf[16];

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_sysctl_write("encap", 1));
	ASSERT_EQ(0, dlcp_sysctl_read("udp_sport_min", &lo));
	ASSERT_EQ(0, dlcp_sysctl_read("udp_sport_max", &hi));
	EXPECT_LE(1, lo);
	EXPECT_GE(1023, hi);
	rx = bound4("127.0.0.1");
	tx = bound4("127.0.0.1");
	ASSERT_LE(0, rx);
	ASSERT_LE(0, tx);
	u = udp_from(0);
	ASSERT_LE(0, u);
	ASSERT_LE(1024, port_of(u));

	drops = snmp("DlcpDropUdpSport");
	ASSERT_EQ(0, send_udp_data(u, port_of(rx), 1, 0));
	EXPECT_EQ(-1, recv_within(rx, buf, sizeof(buf), NULL, QUIET_MS));
	EXPECT_EQ(drops + 1, snmp("DlcpDropUdpSport"));

	/* DLCP's own datagrams pass */
	ASSERT_EQ(5, send_to(tx, "127.0.0.1", port_of(rx), "dlcp!", 5, 0));
	EXPECT_EQ(5, recv_within(rx, buf, sizeof(buf), NULL, WAIT_MS));
	EXPECT_EQ(0, memcmp(buf, "dlcp!", 5));

	/* and any source port once the check is off */
	ASSERT_EQ(0, dlcp_sysctl_write("udp_sport_priv", 0));
	ASSERT_EQ(0, send_udp_data(u, port_of(rx), 2, 0));
	EXPECT_EQ(5, recv_within(rx, buf, sizeof(buf), NULL, WAIT_MS));
	EXPECT_EQ(drops + 1, snmp("DlcpDropUdpSport"));
	close(u);
	close(tx);
	close(rx);
}

/* ------------------------------------------------------------------ */
/* Receive queue: MSG_PEEK                                              */
/* ------------------------------------------------------------------ */

/* Peeking twice sees the same message; reading then takes it. */
TEST(msg_peek_twice)
{
	char buf[16];
	int tx, rx;

	ASSERT_EQ(0, dlcp_new_netns());
	tx = bound4("127.0.0.1");
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, tx);
	ASSERT_LE(0, rx);
	ASSERT_EQ(5, send_to(tx, "127.0.0.1", port_of(rx), "first", 5, 0));
	ASSERT_EQ(6, send_to(tx, "127.0.0.1", port_of(rx), "second", 6, 0));
	usleep(300000);
	ASSERT_EQ(5, recv(rx, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
	ASSERT_EQ(5, recv(rx, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
	EXPECT_EQ(0, memcmp(buf, "first", 5));
	ASSERT_EQ(5, recv(rx, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(0, memcmp(buf, "first", 5));
	ASSERT_EQ(6, recv(rx, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
	ASSERT_EQ(6, recv(rx, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(0, memcmp(buf, "second", 6));
	close(tx);
	close(rx);
}

TEST_HARNESS_MAIN
