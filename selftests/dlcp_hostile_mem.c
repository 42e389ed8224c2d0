// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP on a shared node: floods and memory. They check that:
 *  - a flood of fresh message ids from forged sources stays within the
 *    socket's limits (net.dlcp.max_in_msgs, net.dlcp.rmem) and the
 *    protocol's (net.dlcp.mem) while a well-behaved pair keeps working;
 *  - outgoing messages count in net.dlcp.mem too, and above its first
 *    value the protocol is watched, not limited;
 *  - UDP GSO super-packets are built only in page fragments with room for
 *    them (order-0 pages, MTU 9000), and transfers stay byte-exact.
 *
 * Each test runs in a network namespace of its own (the harness forks a
 * child per test). Needs root and the dlcp module loaded; the helpers
 * are in dlcp_hostile.h.
 */
#define _GNU_SOURCE
#include <fcntl.h>

#include "dlcp_hostile.h"

/* ------------------------------------------------------------------ */
/* Memory: floods of fresh ids                                          */
/* ------------------------------------------------------------------ */

#define DLCP_MEM "/proc/sys/net/dlcp/mem"

/*
 * Open the global sysctl @path read-write (before leaving the initial
 * network namespace, where alone it is seen) and read its value into
 * @old. The fd, or -1.
 */
static int open_global(const char *path, char *old, size_t size)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, old, size - 1);
	if (n <= 0) {
		close(fd);
		return -1;
	}
	old[n] = 0;
	return fd;
}

/* The protocol's pages in use (/proc/net/protocols), or -1. */
static long proto_pages(void)
{
	char line[512], name[32];
	long pages = -1;
	FILE *f = fopen("/proc/net/protocols", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int size, socks;
		long mem;

		if (sscanf(line, "%31s %u %u %ld", name, &size, &socks,
			   &mem) == 4 && !strcmp(name, "DLCP"))
			pages = mem;
	}
	fclose(f);
	return pages;
}

/*
 * Set net.dlcp.mem (@fd, open_global()) to @min, @pressure and @max pages
 * above @before, the pages in use. 0, or -1.
 */
static int mem_above(int fd, long before, long min, long pressure, long max)
{
	char lim[64];
	int n;

	n = snprintf(lim, sizeof(lim), "%ld %ld %ld\n", before + min,
		     before + pressure, before + max);
	return pwrite(fd, lim, n, 0) == n ? 0 : -1;
}

/*
 * Enter a new network namespace and bind two sockets to 127.0.0.1 in it:
 * 0, or -1.
 */
static int netns_two_sockets(int *a, int *b)
{
	if (dlcp_new_netns())
		return -1;
	*a = bound4("127.0.0.1");
	*b = bound4("127.0.0.1");
	return *a < 0 || *b < 0 ? -1 : 0;
}

/* Bytes of receive memory of the socket on local port @port, or -1. */
static long sock_rmem(uint16_t port)
{
	char line[512];
	long rmem = -1;
	FILE *f = fopen("/proc/net/dlcp/sockets", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int sl, lport, tx, rx;
		char laddr[40], raddr[64];

		if (sscanf(line, " %u: %39[0-9A-F]:%x %63s %*x %x:%x", &sl, laddr,
			   &lport, raddr, &tx, &rx) == 6 && lport == port)
			rmem = rx;
	}
	fclose(f);
	return rmem;
}

/*
 * @n DATA packets to 127.0.0.1 port @dport, each the first kilobyte of a
 * 64 KiB message with a fresh id, from forged sources 127.1.x.y (all from
 * 127.1.0.1 if @one_host).
 */
static int flood(uint16_t dport, unsigned int n, int one_host)
{
	static uint8_t payload[1000];
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct dlcp_pkt_info pi = {
			.sport = 1000 + i % 50000, .dport = dport,
			.msg_id = 0x10000 + i, .msg_len = 65536,
		};
		struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
		uint8_t pkt[1200];
		char src[32];
		uint32_t sa, da = htonl(INADDR_LOOPBACK);
		size_t len;

		snprintf(src, sizeof(src), "127.1.%u.%u",
			 one_host ? 0 : (i >> 8) & 0xff,
			 one_host ? 1 : (i & 0xff) | 1);
		inet_pton(AF_INET, src, &sa);
		len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, payload,
					  sizeof(payload));
		if (!len)
			return -1;
		dlcp_pkt_finish4(pkt, len, sa, da);
		if (raw_send4(src, "127.0.0.1", pkt, len))
			return -1;
	}
	return 0;
}

/* S sends @n messages of 10 KB to R; how many arrived byte-exact. */
static int good_pair(int s, int r, int n)
{
	static uint8_t out[10000], in[10000];
	int i, ok = 0;

	for (i = 0; i < n; i++) {
		uint64_t seed = dlcp_payload_seed(2, i, sizeof(out));

		dlcp_payload_fill(out, sizeof(out), seed);
		if (send_to(s, "127.0.0.1", port_of(r), out, sizeof(out), 0) !=
		    sizeof(out))
			continue;
		if (recv_within(r, in, sizeof(in), NULL, WAIT_MS) ==
		    sizeof(in) &&
		    dlcp_payload_cmp(in, sizeof(in), seed) == sizeof(in))
			ok++;
	}
	return ok;
}

/*
 * A flood at one socket: it keeps at most net.dlcp.max_in_msgs messages
 * and net.dlcp.rmem bytes; another socket's transfers are unharmed.
 */
TEST(fresh_id_flood_per_socket)
{
	uint64_t inmsgs, rcvmem;
	int victim, s, r;
	long rmem;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	ASSERT_EQ(0, dlcp_sysctl_write("max_in_msgs", 256));
	ASSERT_EQ(0, dlcp_sysctl_write("rmem", 1 << 20));
	victim = bound4("127.0.0.1");
	s = bound4("127.0.0.1");
	r = bound4("127.0.0.1");
	ASSERT_LE(0, victim);
	ASSERT_LE(0, s);
	ASSERT_LE(0, r);
	inmsgs = snmp("DlcpDropInMsgs");
	rcvmem = snmp("DlcpDropRcvMem");
	ASSERT_EQ(0, flood(port_of(victim), 3000, 0));
	rmem = sock_rmem(port_of(victim));
	TH_LOG("after 3000 fresh ids: %ld bytes held, dropped %llu (messages) %llu (memory)",
	       rmem, (unsigned long long)(snmp("DlcpDropInMsgs") - inmsgs),
	       (unsigned long long)(snmp("DlcpDropRcvMem") - rcvmem));
	EXPECT_LT(0, rmem);
	EXPECT_GE(1 << 20, rmem);
	EXPECT_LT(inmsgs + rcvmem, snmp("DlcpDropInMsgs") +
		  snmp("DlcpDropRcvMem"));
	EXPECT_EQ(20, good_pair(s, r, 20));
	close(victim);
	close(s);
	close(r);
}

/*
 * A partial message holds memory at its receiver only while its sender
 * brings new bytes: duplicates and PROBEs do not put off its
 * msg_timeout_ms, so that a packet now and then cannot keep what many
 * sparse packets made the receiver hold (DlcpInMsgsTimeout counts the
 * message freed). A duplicate that comes after that starts the message
 * anew, holding its own packet only.
 */
TEST(duplicates_and_probes_do_not_hold_memory)
{
	static uint8_t payload[1000];
	struct dlcp_pkt_info pi = {
		.sport = 4000, .msg_id = 0x5151, .msg_len = 1 << 20,
	};
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
	uint32_t lo = htonl(INADDR_LOOPBACK);
	uint8_t data[1200], probe[64];
	size_t dlen, plen;
	uint64_t timeouts;
	long held, after;
	int r, i;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_sysctl_write("msg_timeout_ms", 1000));
	r = bound4("127.0.0.1");
	ASSERT_LE(0, r);
	pi.dport = port_of(r);
	timeouts = snmp("DlcpInMsgsTimeout");
	/* 32 packets, a page apart, each kept or copied into a page */
	for (i = 31; i >= 0; i--) {
		di.offset = (uint32_t)i * 8192;
		dlen = dlcp_pkt_build_data(data, sizeof(data), &pi, &di,
					   payload, sizeof(payload));
		ASSERT_LT(0, dlen);
		dlcp_pkt_finish4(data, dlen, lo, lo);
		ASSERT_EQ(0, raw_send4("127.0.0.1", "127.0.0.1", data, dlen));
	}
	plen = dlcp_pkt_build_probe(probe, sizeof(probe), &pi, 1000, 1);
	ASSERT_LT(0, plen);
	dlcp_pkt_finish4(probe, plen, lo, lo);
	usleep(200 * 1000);
	held = sock_rmem(port_of(r));
	EXPECT_LE(32 * (long)sizeof(payload), held);

	/* the first packet again and a PROBE, every 200 ms for 3 timeouts */
	for (i = 0; i < 15; i++) {
		ASSERT_EQ(0, raw_send4("127.0.0.1", "127.0.0.1", data, dlen));
		ASSERT_EQ(0, raw_send4("127.0.0.1", "127.0.0.1", probe, plen));
		usleep(200 * 1000);
	}
	after = sock_rmem(port_of(r));
	TH_LOG("held %ld bytes, %ld after 3 s of duplicates and probes, %llu timed out",
	       held, after,
	       (unsigned long long)(snmp("DlcpInMsgsTimeout") - timeouts));
	EXPECT_LT(timeouts, snmp("DlcpInMsgsTimeout"));
	EXPECT_GT(held / 8, after);
	close(r);
}

/*
 * An application that sets SO_RCVBUF makes that its socket's limit, lower
 * than net.dlcp.rmem too: a flood of fresh ids then holds no more.
 */
TEST(so_rcvbuf_lowers_the_limit)
{
	int r, val = 65536, got;
	socklen_t len = sizeof(got);
	uint64_t rcvmem;
	long rmem;

	ASSERT_EQ(0, dlcp_new_netns());
	r = bound4("127.0.0.1");
	ASSERT_LE(0, r);
	ASSERT_EQ(0, setsockopt(r, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)));
	ASSERT_EQ(0, getsockopt(r, SOL_SOCKET, SO_RCVBUF, &got, &len));
	rcvmem = snmp("DlcpDropRcvMem");
	ASSERT_EQ(0, flood(port_of(r), 400, 0));
	rmem = sock_rmem(port_of(r));
	TH_LOG("SO_RCVBUF %d: %ld bytes held after 400 fresh ids, %llu dropped",
	       got, rmem,
	       (unsigned long long)(snmp("DlcpDropRcvMem") - rcvmem));
	EXPECT_LT(0, rmem);
	EXPECT_GE(got, rmem);
	EXPECT_LT(rcvmem, snmp("DlcpDropRcvMem"));
	close(r);
}

/*
 * One host opens as many messages as it can at a socket: it gets
 * net.dlcp.max_in_msgs_peer of them, and another host's messages to the
 * same socket still start and arrive. Two addresses share a count when
 * they hash to the same of 256 buckets (a new seed per socket): then the
 * case tries once more, with a new socket.
 */
TEST(one_host_cannot_take_a_socket)
{
	int victim, s, try, ok = 0;
	uint64_t peer;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	ASSERT_EQ(0, dlcp_sysctl_write("max_in_msgs", 256));
	ASSERT_EQ(0, dlcp_sysctl_write("max_in_msgs_peer", 64));
	s = bound4("127.0.0.2");
	ASSERT_LE(0, s);
	for (try = 0; try < 2 && ok != 20; try++) {
		victim = bound4("127.0.0.1");
		ASSERT_LE(0, victim);
		peer = snmp("DlcpDropPeerMsgs");
		ASSERT_EQ(0, flood(port_of(victim), 1000, 1));
		TH_LOG("one host, 1000 fresh ids: %llu dropped",
		       (unsigned long long)(snmp("DlcpDropPeerMsgs") - peer));
		EXPECT_EQ(peer + 1000 - 64, snmp("DlcpDropPeerMsgs"));
		ok = good_pair(s, victim, 20);
		close(victim);
	}
	EXPECT_EQ(20, ok);
	close(s);
}

/*
 * A flood at a socket with room to spare: net.dlcp.mem bounds the
 * protocol's pages (give or take each CPU's reserve of 1 MiB that the
 * core keeps before it counts), and they all come back at close().
 */
TEST(fresh_id_flood_protocol_limit)
{
	char old[64] = "", lim[] = "100 200 300\n";
	uint64_t protomem;
	long peak, after;
	int fd, victim;
	ssize_t n;

	fd = open_global(DLCP_MEM, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	ASSERT_EQ(0, dlcp_sysctl_write("max_in_msgs", 100000));
	victim = bound4("127.0.0.1");
	ASSERT_LE(0, victim);
	protomem = snmp("DlcpDropProtoMem");
	ASSERT_EQ(strlen(lim), pwrite(fd, lim, strlen(lim), 0));
	n = flood(port_of(victim), 3000, 0);
	peak = proto_pages();
	ASSERT_EQ(strlen(old), pwrite(fd, old, strlen(old), 0));
	close(fd);
	ASSERT_EQ(0, n);
	TH_LOG("net.dlcp.mem 300 pages: %ld in use, %llu dropped", peak,
	       (unsigned long long)(snmp("DlcpDropProtoMem") - protomem));
	EXPECT_LT(protomem, snmp("DlcpDropProtoMem"));
	EXPECT_GE(300 + 2 * 256 + 16, peak);
	close(victim);
	usleep(100000);
	after = proto_pages();
	TH_LOG("after close: %ld pages", after);
	EXPECT_GE(2 * 256, after);	/* per-CPU reserves may stay */
}

/*
 * Outgoing messages count in net.dlcp.mem too: at its hard limit sendmsg()
 * fails with ENOBUFS (DlcpOutProtoMem) instead of taking more pages, and
 * the pages come back when the messages end. The messages go to a port
 * with no socket, so they stay until the socket closes.
 *
 * The count in /proc/net/protocols is the core's memory_allocated, which
 * lags what receive memory took or gave back by up to a per-CPU reserve
 * (SK_MEMORY_PCPU_RESERVE, 256 pages a CPU; net.core.mem_pcpu_rsv on 6.9
 * and later) and is shown as 0 while below it. Sockets of an earlier case
 * still being freed with their namespace move it too. So the case does
 * not compare page counts to the page: with the limit 1300 pages above the
 * count, one message of 1024 pages fits and a second does not, whichever
 * way the count is off by up to two CPUs' reserves, and the limit only
 * refuses the second if the first one was counted.
 */
TEST(send_memory_protocol_limit)
{
	char old[64] = "";
	static char msg[4 << 20];
	uint64_t refused;
	long before, held, after;
	int fd, s, sent, err;
	ssize_t n;

	fd = open_global(DLCP_MEM, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlcp_new_netns());
	/* a receiver that never answers, not even for its closed port */
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	s = bound4("127.0.0.1");
	ASSERT_LE(0, s);
	memset(msg, 0x5a, sizeof(msg));
	before = proto_pages();
	ASSERT_LE(0, before);
	refused = snmp("DlcpOutProtoMem");
	/* 1300 pages more than in use: 1024 fit; a second message does not */
	ASSERT_EQ(0, mem_above(fd, before, 400, 800, 1300));
	for (sent = 0, err = 0; sent < 4 && !err; )
		if (send_to(s, "127.0.0.1", 9, msg, sizeof(msg), 0) < 0)
			err = errno;
		else
			sent++;
	held = proto_pages();
	ASSERT_EQ(strlen(old), pwrite(fd, old, strlen(old), 0));
	close(fd);
	TH_LOG("net.dlcp.mem %ld pages more: %d sent (%ld pages held), then errno %d",
	       1300L, sent, held - before, err);
	EXPECT_EQ(1, sent);
	EXPECT_EQ(ENOBUFS, err);
	EXPECT_EQ(refused + 1, snmp("DlcpOutProtoMem"));
	EXPECT_GE(before + 1300, held);
	/* with room again, sending works */
	n = send_to(s, "127.0.0.1", 9, msg, sizeof(msg), 0);
	EXPECT_EQ((ssize_t)sizeof(msg), n);
	close_now(s);
	usleep(100000);
	after = proto_pages();
	TH_LOG("after close: %ld pages", after);
	EXPECT_GE(before + 8, after);
}

/* The messages of the other socket in the share tests: 256 pages each */
static char share_msg[1 << 20];

/*
 * With net.dlcp.mem (@fd, open_global(), its old value @old) set from
 * @before, socket @hog sends messages of @len bytes to a port with no
 * socket until one fails (its errno in @err) or @max went; then another
 * socket sends 4 messages of 1 MiB. net.dlcp.mem gets @old back. Returns
 * the hog's messages; the other's in @other_sent, the pages the hog took
 * in @hog_pages.
 */
static int share_hog(int fd, const char *old, long before, int hog,
		     const char *buf, size_t len, int max, int *err,
		     int *other_sent, long *hog_pages)
{
	int sent, i, other;

	*err = 0;
	for (sent = 0; sent < max; sent++) {
		if (send_to(hog, "127.0.0.1", 9, buf, len, 0) < 0) {
			*err = errno;
			break;
		}
	}
	*hog_pages = proto_pages() - before;
	other = bound4("127.0.0.1");
	for (i = 0; other >= 0 && i < 4; i++)
		if (send_to(other, "127.0.0.1", 9, share_msg,
			    sizeof(share_msg), 0) < 0)
			break;
	*other_sent = i;
	if (pwrite(fd, old, strlen(old), 0) != (ssize_t)strlen(old))
		*other_sent = -1;
	close(fd);
	if (other >= 0)
		close_now(other);
	return sent;
}

/*
 * Under pressure (above the second value of net.dlcp.mem) a socket holding
 * more than its share of the hard limit (the third value divided by the
 * number of DLCP sockets and one) may not send more, so that one socket
 * whose messages stay (here: to a port with no socket; in the field, to a
 * receiver that answers but never finishes them) cannot take every page
 * and fail every other socket's sendmsg(), also one opened after it. The
 * hog, alone, stops with ENOBUFS near half the hard limit; a socket opened
 * then still sends.
 */
TEST(send_memory_share_under_pressure)
{
	char old[64] = "";
	int fd, hog, sent, other, err;
	long before, hog_pages;
	uint64_t refused;

	fd = open_global(DLCP_MEM, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlcp_new_netns());
	/* a receiver that never answers, not even for its closed port */
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	hog = bound4("127.0.0.1");
	ASSERT_LE(0, hog);
	memset(share_msg, 0x3c, sizeof(share_msg));
	before = proto_pages();
	ASSERT_LE(0, before);
	refused = snmp("DlcpOutProtoMem");
	/* 256 pages a message: pressure from the 4th, hard limit at the 16th */
	ASSERT_EQ(0, mem_above(fd, before, 100, 1000, 4000));
	sent = share_hog(fd, old, before, hog, share_msg, sizeof(share_msg), 16,
			 &err, &other, &hog_pages);
	TH_LOG("hog: %d messages (%ld pages), then errno %d; the other socket: %d of 4",
	       sent, hog_pages, err, other);
	EXPECT_EQ(ENOBUFS, err);
	EXPECT_LE(3, sent);
	EXPECT_GE(9, sent);
	EXPECT_EQ(4, other);
	EXPECT_LE(refused + 1, snmp("DlcpOutProtoMem"));
	close_now(hog);
}

/*
 * The share counts what messages hold, a page at least, not their bytes:
 * a socket sending 1-byte messages under pressure is refused at its share
 * of net.dlcp.mem's pages, not at the hard limit, and another socket can
 * still send.
 */
TEST(send_memory_share_small_messages)
{
	char old[64] = "";
	int fd, hog, sent, other, err;
	long before, hog_pages;

	fd = open_global(DLCP_MEM, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlcp_new_netns());
	/* a receiver that never answers, not even for its closed port */
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	hog = bound4("127.0.0.1");
	ASSERT_LE(0, hog);
	before = proto_pages();
	ASSERT_LE(0, before);
	/* a page a message: pressure from the 1000th, hard limit at 4000 */
	ASSERT_EQ(0, mem_above(fd, before, 100, 1000, 4000));
	sent = share_hog(fd, old, before, hog, "x", 1, 5000, &err, &other,
			 &hog_pages);
	TH_LOG("hog: %d messages of 1 byte (%ld pages), then errno %d; the other socket: %d of 4",
	       sent, hog_pages, err, other);
	EXPECT_EQ(ENOBUFS, err);
	EXPECT_GT(3000, sent);
	EXPECT_EQ(4, other);
	close_now(hog);
}

/* ------------------------------------------------------------------ */
/* Memory safety: UDP GSO from small page fragments                     */
/* ------------------------------------------------------------------ */

#define HIGH_ORDER "/proc/sys/net/core/high_order_alloc_disable"
#define BIG_MSG		(4 << 20)
#define NR_BIG		6

/* Send NR_BIG messages of BIG_MSG bytes @tx -> @rx; 0 if all arrive exact */
static int big_transfers(struct __test_metadata *_metadata, int tx, int rx)
{
	uint8_t *out = malloc(BIG_MSG), *in = malloc(BIG_MSG);
	int i, bad = 0;

	ASSERT_TRUE(out && in);
	for (i = 0; i < NR_BIG; i++) {
		uint64_t seed = dlcp_payload_seed(7, i, BIG_MSG);
		ssize_t n;

		dlcp_payload_fill(out, BIG_MSG, seed);
		ASSERT_EQ(BIG_MSG, send_to(tx, "127.0.0.1", port_of(rx), out,
					   BIG_MSG, 0));
		n = recv_within(rx, in, BIG_MSG, NULL, 30000);
		ASSERT_EQ(BIG_MSG, n);
		if (dlcp_payload_cmp(in, BIG_MSG, seed) != BIG_MSG)
			bad++;
	}
	free(out);
	free(in);
	return bad;
}

/*
 * Super-packets in UDP mode over loopback at MTU 9000, with
 * net.core.high_order_alloc_disable (every allocation of the path in
 * order-0 pages) and without: the transfers stay exact, and super-packets
 * are built (from the message's pages, whatever their order).
 */
FIXTURE(big) {
};

FIXTURE_SETUP(big)
{
}

FIXTURE_TEARDOWN(big)
{
}

TEST_F_TIMEOUT(big, gso_small_page_frags, 240)
{
	char old[16] = "0";
	uint64_t gso0, gso1;
	int fd, tx, rx;
	ssize_t n;

	fd = open_global(HIGH_ORDER, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 9000));
	ASSERT_EQ(0, dlcp_sysctl_write("encap", 1));
	ASSERT_EQ(0, dlcp_sysctl_write("udp_gso", 1));
	ASSERT_EQ(0, dlcp_sysctl_write("udp_entropy", 0));
	tx = bound4("127.0.0.1");
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, tx);
	ASSERT_LE(0, rx);

	ASSERT_EQ(1, pwrite(fd, "1", 1, 0));
	n = big_transfers(_metadata, tx, rx);
	ASSERT_EQ(strlen(old), pwrite(fd, old, strlen(old), 0));
	close(fd);
	EXPECT_EQ(0, n);

	gso0 = snmp("DlcpUdpGsoOutPkts");
	EXPECT_EQ(0, big_transfers(_metadata, tx, rx));
	gso1 = snmp("DlcpUdpGsoOutPkts");
	TH_LOG("super-packets: %llu",
	       (unsigned long long)(gso1 - gso0));
	EXPECT_LT(gso0, gso1);
	close(tx);
	close(rx);
}

/*
 * Above the first value of net.dlcp.mem the protocol is watched, not
 * limited: with the protocol's pages between the first and the second
 * value, a socket still takes what a transfer needs (4 MiB messages) and
 * no DATA is dropped for the protocol's sake.
 */
TEST_F_TIMEOUT(big, protocol_mem_first_value_is_no_limit, 120)
{
	char old[64] = "";
	uint64_t protomem;
	long before;
	int fd, tx, rx, n;

	fd = open_global(DLCP_MEM, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, netns_two_sockets(&tx, &rx));
	before = proto_pages();
	ASSERT_LE(0, before);
	protomem = snmp("DlcpDropProtoMem");
	ASSERT_EQ(0, mem_above(fd, before, 16, 100000, 200000));
	n = big_transfers(_metadata, tx, rx);
	ASSERT_EQ(strlen(old), pwrite(fd, old, strlen(old), 0));
	close(fd);
	TH_LOG("DlcpDropProtoMem +%llu",
	       (unsigned long long)(snmp("DlcpDropProtoMem") - protomem));
	EXPECT_EQ(0, n);
	EXPECT_EQ(protomem, snmp("DlcpDropProtoMem"));
	close(tx);
	close(rx);
}

TEST_HARNESS_MAIN
