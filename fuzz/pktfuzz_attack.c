// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pktfuzz: the attacks of an off-path host, sent from a raw socket
 * in its namespace (--attacker-ns) that writes the IP header itself, so
 * that the source address is whatever the attack wants.
 *
 * --spoof N: control packets forged with the addresses and ports of the
 * pair (pktfuzz_pair.c): REPORT and STOP "from R" to S, PROBE (some
 * FINAL) and ABORT "from S" to R, DATA "from S" to R (the first bytes of
 * a message that never finishes, as many as leave room under
 * net.dlcp.max_in_msgs_peer), and ICMP "fragmentation needed" to S's host
 * quoting a packet S would send to R. The ids are guessed: mostly near
 * the last id the observer got from S (were the ids a per-socket
 * counter, those towards R would be there), else at random; the lengths
 * are the pair's (an attacker may know the tensor sizes). None may take
 * effect: each must reach S or R and match no message.
 *
 * --flood N: DATA packets, each the first of a new message (a fresh id)
 * from forged sources in 10.79.0.0/16 (the target's namespace routes them
 * nowhere) to the target socket, in three phases that take turns, each
 * for twice net.dlcp.msg_timeout_ms: 1400-byte pieces over two pages of
 * 1 MiB messages from many hosts (the socket's memory limit), single
 * bytes from many hosts (net.dlcp.max_in_msgs), single bytes from one
 * host (net.dlcp.max_in_msgs_peer).
 *
 * --slow N: N messages to the target socket that never finish, from many
 * ports of 16 forged hosts (half of them from one host, the others from
 * the other 15): one packet each, a page further, every --slow-interval
 * ms (default half of net.dlcp.msg_timeout_ms, so that they do not time
 * out), for --slow-rounds rounds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>

#include "pktfuzz.h"

#define FLOOD_NET	0x0a4f0000u	/* 10.79.0.0/16, host order */
#define FLOOD_ONE_HOST	(FLOOD_NET | 0xff01)
#define SLOW_HOSTS	16
#define SLOW_NET	(FLOOD_NET | 0xfe00)
#define NR_DATA_IDS	4096

enum { SP_REPORT, SP_STOP, SP_ICMP, SP_PROBE, SP_FINAL, SP_ABORT, SP_DATA,
       __SP_MAX };
static const char *const sp_name[__SP_MAX] = {
	"REPORT to S", "STOP to S", "ICMP too big to S", "PROBE to R",
	"FINAL PROBE to R", "ABORT to R", "DATA to R",
};
static const unsigned int sp_weight[__SP_MAX] = { 18, 18, 10, 14, 6, 18, 16 };

enum { FL_BIG, FL_TINY, FL_ONE, __FL_MAX };
static const char *const fl_name[__FL_MAX] = {
	"1400 bytes over 2 pages, many hosts", "1 byte, many hosts",
	"1 byte, one host",
};

struct slow_msg {
	uint32_t src, id;
	uint16_t sport;
};

static struct {
	int raw;
	struct pair_info pi;
	/* limits of the target's namespace */
	long long rmem, max_in, max_in_peer, timeout_ms;
	unsigned long spoof_left, flood_left, slow_left;
	/* spoof */
	unsigned long sp[__SP_MAX], sp_near;
	uint32_t data_ids[NR_DATA_IDS];
	unsigned int nr_data_ids;
	double t0;
	/* flood */
	unsigned long fl[__FL_MAX];
	double fl_time[__FL_MAX], fl_last;
	int fl_phase;
	double fl_phase_start;
	unsigned long fl_full[__FL_MAX];	/* in phases that ran whole */
	double fl_full_time[__FL_MAX];
	unsigned long fl_phase_pkts;
	/* slowloris */
	struct slow_msg *slow;
	unsigned long slow_sent, slow_k;
	double slow_t0, slow_t1, slow_ival;	/* t1: the last one sent */
} at = { .raw = -1 };

/* ---------------------------------------------------------- sending */

/* Send @len bytes of protocol @proto from @src to @dst (network order). */
static int raw4(uint32_t src, uint32_t dst, uint8_t proto, const void *p,
		size_t len)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_addr.s_addr = dst };
	uint8_t b[MAX_PKT + 64];

	if (len + 20 > sizeof(b))
		die("attack packet too long");
	memset(b, 0, 20);
	b[0] = 0x45;
	dlcp_put16(b + 2, (uint16_t)(len + 20));
	b[8] = 64;
	b[9] = proto;
	memcpy(b + 12, &src, 4);
	memcpy(b + 16, &dst, 4);
	memcpy(b + 20, p, len);
	return sendto_retry(at.raw, b, len + 20, &to);
}

/* A DLCP packet: checksummed, checked valid, sent. */
static int send_dlcp(uint32_t src, uint32_t dst, uint8_t *pkt, size_t len)
{
	if (!len || dlcp_wire_check(pkt, (uint32_t)len, max_msg) !=
	    DLCP_DROP_NONE)
		die("attack packet of %zu bytes not valid", len);
	dlcp_pkt_finish4(pkt, len, src, dst);
	return raw4(src, dst, IPPROTO_DLCP, pkt, len);
}

/* ------------------------------------------------------------ spoof */

static uint32_t guess_id(void)
{
	uint32_t seen;

	if (pair_observed_id(&seen) && chance(70)) {
		at.sp_near++;
		return seen - 32 + rnd(160);
	}
	return rnd32();
}

static int is_data_id(uint32_t id)
{
	unsigned int i;

	for (i = 0; i < at.nr_data_ids; i++)
		if (at.data_ids[i] == id)
			return 1;
	return 0;
}

/*
 * Was @id the id of a forged packet to R (PROBE, ABORT, DATA)? With @add,
 * it is from now on. A DATA takes no id of those: a PROBE sent before a
 * DATA of its id can still arrive after it (the attacker's packets enter
 * the backlog of whichever CPU sent them) and would meet the forged
 * message with another length. An open-addressing set, at most half full.
 */
static int r_id_used(uint32_t id, int add)
{
	static uint64_t *slot;
	static size_t mask;
	size_t i;

	if (!slot) {
		size_t n = 1024;

		while (n < 2 * (size_t)o.spoof)
			n <<= 1;
		slot = calloc(n, sizeof(*slot));
		if (!slot)
			die("out of memory for %zu spoofed ids", n);
		mask = n - 1;
	}
	for (i = (id * 2654435761u) & mask; slot[i]; i = (i + 1) & mask)
		if ((uint32_t)slot[i] == id)
			return 1;
	if (add)
		slot[i] = (uint64_t)1 << 32 | id;
	return 0;
}

/*
 * Forged DATA from S's address may take as many of the messages R
 * receives from that address as it likes (the module cannot tell it from
 * S): the attacker keeps to a quarter of net.dlcp.max_in_msgs_peer per
 * message timeout, so that S still gets its own.
 */
static int data_allowed(void)
{
	double per_s = at.max_in_peer / 4.0 / (at.timeout_ms / 1000.0);

	return at.nr_data_ids < NR_DATA_IDS &&
	       at.sp[SP_DATA] + 1 <= (now() - at.t0) * per_s + 1;
}

/* ICMP "fragmentation needed" to S's host quoting S -> R, message @id */
static int spoof_icmp(uint32_t id, uint32_t len)
{
	struct dlcp_pkt_info pi = { .sport = at.pi.s_port,
				    .dport = at.pi.r_port, .msg_id = id,
				    .msg_len = len };
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
	uint8_t icmp[8 + 20 + 128], q[128];
	size_t qlen = dlcp_pkt_build_data(q, sizeof(q), &pi, &di, NULL, 16);
	uint16_t mtu = (uint16_t)(576 + rnd(800));

	memset(icmp, 0, 28);
	icmp[0] = ICMP_DEST_UNREACH;
	icmp[1] = ICMP_FRAG_NEEDED;
	dlcp_put16(icmp + 6, mtu);
	/* the quoted packet: as S would have sent it, cut short */
	icmp[8] = 0x45;
	dlcp_put16(icmp + 10, (uint16_t)(20 + qlen + 1400));
	icmp[16] = 64;
	icmp[17] = IPPROTO_DLCP;
	memcpy(icmp + 20, &o.pair_src, 4);
	memcpy(icmp + 24, &o.dst, 4);
	dlcp_put16(icmp + 18, dlcp_csum_finish(dlcp_csum_add(0, icmp + 8,
							     20)));
	dlcp_pkt_finish4(q, qlen, o.pair_src, o.dst);
	memcpy(icmp + 28, q, qlen);
	dlcp_put16(icmp + 2, dlcp_csum_finish(dlcp_csum_add(0, icmp,
							    28 + qlen)));
	return raw4(o.observer, o.pair_src, IPPROTO_ICMP, icmp, 28 + qlen);
}

static int spoof_one(void)
{
	unsigned int w = 0, i, k, r;
	uint8_t pkt[MAX_PKT];
	struct dlcp_pkt_info pi = { 0 };
	uint32_t id, len, plen;
	size_t n = 0;
	int to_s, rc;

	for (i = 0; i < __SP_MAX; i++)
		w += sp_weight[i];
	do {
		r = rnd(w);
		for (k = 0; r >= sp_weight[k]; k++)
			r -= sp_weight[k];
	} while ((k == SP_DATA && !data_allowed()) ||
		 (k == SP_ICMP && !o.observer));
	len = chance(85) ? pair_lens[rnd(nr_pair_lens)] : 2 + rnd(1 << 20);
	do
		id = guess_id();
	while ((k != SP_REPORT && k != SP_STOP && k != SP_ICMP &&
		is_data_id(id)) || (k == SP_DATA && r_id_used(id, 0)));
	if (k == SP_ICMP) {
		rc = spoof_icmp(id, len);
		if (!rc)
			at.sp[k]++;
		return !rc;
	}
	to_s = k == SP_REPORT || k == SP_STOP;
	pi.sport = to_s ? at.pi.r_port : at.pi.s_port;
	pi.dport = to_s ? at.pi.s_port : at.pi.r_port;
	pi.msg_id = id;
	pi.msg_len = len;
	switch (k) {
	case SP_REPORT: {
		/* "all of it arrived" */
		struct dlcp_pkt_report_info ri = { .rcvd = len,
						   .scan_end = len,
						   .tsecr = rnd32() };

		n = dlcp_pkt_build_report(pkt, sizeof(pkt), &pi, &ri, NULL, 0);
		break;
	}
	case SP_STOP:
		if (chance(20))
			pi.flags = DLCP_HF_FAILED;
		n = dlcp_pkt_build_stop(pkt, sizeof(pkt), &pi, 0, rnd32());
		break;
	case SP_PROBE:
	case SP_FINAL:
		if (k == SP_FINAL)
			pi.flags = DLCP_HF_FINAL;
		n = dlcp_pkt_build_probe(pkt, sizeof(pkt), &pi, len, rnd32());
		break;
	case SP_ABORT:
		n = dlcp_pkt_build_abort(pkt, sizeof(pkt), &pi, len, rnd32());
		break;
	case SP_DATA: {
		struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES,
						 .tsval = rnd32() };
		static uint8_t poison[1000];

		memset(poison, 0xee, sizeof(poison));
		plen = 1 + rnd(sizeof(poison));
		if (plen >= len)
			plen = len - 1;
		n = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, poison,
					plen);
		break;
	}
	}
	if (send_dlcp(to_s ? o.dst : o.pair_src, to_s ? o.pair_src : o.dst,
		      pkt, n))
		return 0;
	at.sp[k]++;
	if (to_s) {
		injected[NS_SELF]++;
	} else {
		r_id_used(id, 1);
		injected[NS_TARGET]++;
		expect[k == SP_DATA ? OUT_DATA : k == SP_ABORT ? OUT_ABORT :
		       OUT_PROBE]++;
	}
	if (k == SP_DATA)
		at.data_ids[at.nr_data_ids++] = id;
	return 1;
}

/* ------------------------------------------------------------ flood */

/* a forged host of 10.79.0.0/16, not .0 or .255 (network order) */
static uint32_t flood_host(void)
{
	return htonl(FLOOD_NET | (1 + rnd(254)) << 8 | (1 + rnd(254)));
}

static int flood_one(void)
{
	static uint8_t payload[1400];
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES,
					 .tsval = rnd32() };
	struct dlcp_pkt_info pi = { .sport = (uint16_t)(1024 + rnd(64512)),
				    .dport = o.port, .msg_id = rnd32() };
	double t = now(), phase_len = 2.0 * at.timeout_ms / 1000.0;
	uint8_t pkt[MAX_PKT];
	uint32_t src, plen = 1;
	int k;

	if (!at.fl_phase_start)
		at.fl_phase_start = at.fl_last = t;
	if (t - at.fl_phase_start >= phase_len) {
		/* a phase that ran whole: what it sent in that time */
		at.fl_full[at.fl_phase] += at.fl_phase_pkts;
		at.fl_full_time[at.fl_phase] += t - at.fl_phase_start;
		at.fl_phase = (at.fl_phase + 1) % __FL_MAX;
		at.fl_phase_start = t;
		at.fl_phase_pkts = 0;
	}
	k = at.fl_phase;
	memset(payload, 0x5f, sizeof(payload));
	src = k == FL_ONE ? htonl(FLOOD_ONE_HOST) : flood_host();
	if (k == FL_BIG) {
		pi.msg_len = 1 << 20;
		di.offset = 4096 * (1 + rnd(255)) - 700;
		plen = sizeof(payload);
	} else {
		pi.msg_len = 2 + rnd(1 << 20);
		di.offset = rnd(pi.msg_len - 1);
	}
	if (pi.msg_len > max_msg)
		pi.msg_len = max_msg;
	if (send_dlcp(src, o.dst, pkt,
		      dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, payload,
					  plen)))
		return 0;
	at.fl[k]++;
	at.fl_phase_pkts++;
	at.fl_time[k] += t - at.fl_last;
	at.fl_last = t;
	injected[NS_TARGET]++;
	expect[OUT_DATA]++;
	return 1;
}

/* ------------------------------------------------------------- slow */

/* When the next slowloris packet is due (0: none left). */
double attack_next_due(void)
{
	if (!at.slow_left)
		return 0;
	return at.slow_t0 + at.slow_k * at.slow_ival / o.slow_msgs;
}

int attack_slow_due(double t)
{
	return at.slow_left && t >= attack_next_due();
}

static int slow_one(void)
{
	unsigned long j = at.slow_k % o.slow_msgs, round = at.slow_k / o.slow_msgs;
	struct slow_msg *m = &at.slow[j];
	struct dlcp_pkt_info pi = { .sport = m->sport, .dport = o.port,
				    .msg_id = m->id, .msg_len = 4 << 20 };
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES,
					 .offset = (uint32_t)(round % 1000) *
						   4096 };
	static uint8_t payload[1400];
	uint8_t pkt[MAX_PKT];

	at.slow_k++;
	if (!--at.slow_left)
		at.slow_t1 = now();
	memset(payload, 0x3c, sizeof(payload));
	if (send_dlcp(m->src, o.dst, pkt,
		      dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, payload,
					  1 + rnd(sizeof(payload)))))
		return 0;
	at.slow_sent++;
	injected[NS_TARGET]++;
	expect[OUT_DATA]++;
	return 1;
}

/* ------------------------------------------------------------ common */

/*
 * The raw socket in the attacker's namespace, the pair, the limits of the
 * target's namespace. Returns 0, or -1 if there is no attack to run.
 */
int attack_open(void)
{
	unsigned long i;

	if (!attack_active())
		return -1;
	if (ns_attacker < 0)
		die("the attacks need --attacker-ns");
	at.raw = socket_in(ns_attacker, SOCK_RAW, IPPROTO_RAW);
	if (at.raw < 0)
		die("raw socket in %s", o.attacker_ns);
	at.rmem = sysctl_read(ns_target, "rmem");
	at.max_in = sysctl_read(ns_target, "max_in_msgs");
	at.max_in_peer = sysctl_read(ns_target, "max_in_msgs_peer");
	at.timeout_ms = sysctl_read(ns_target, "msg_timeout_ms");
	pair_start(&at.pi);
	gen_avoid_port(at.pi.r_port);
	at.spoof_left = o.spoof;
	at.flood_left = o.flood;
	at.slow_left = o.slow_msgs * o.slow_rounds;
	if (o.slow_msgs) {
		at.slow = calloc(o.slow_msgs, sizeof(*at.slow));
		if (!at.slow)
			die("calloc");
		for (i = 0; i < o.slow_msgs; i++)
			at.slow[i] = (struct slow_msg){
				.src = htonl(SLOW_NET | (i % 2 ? 2 + i / 2 %
							 (SLOW_HOSTS - 1) : 1)),
				.sport = (uint16_t)(1024 + rnd(64512)),
				.id = rnd32() };
		at.slow_ival = o.slow_interval_ms ? o.slow_interval_ms / 1000.0 :
			       at.timeout_ms / 2000.0;
	}
	at.t0 = at.slow_t0 = now();
	printf("pair: S %s:%u", inet_ntoa((struct in_addr){ o.pair_src }),
	       at.pi.s_port);
	printf(" -> R %s:%u", inet_ntoa((struct in_addr){ o.dst }),
	       at.pi.r_port);
	if (at.pi.c_port)
		printf(", observer %s:%u",
		       inet_ntoa((struct in_addr){ o.observer }), at.pi.c_port);
	printf("; target limits: rmem %lld, max_in_msgs %lld, "
	       "max_in_msgs_peer %lld, msg_timeout_ms %lld\n", at.rmem,
	       at.max_in, at.max_in_peer, at.timeout_ms);
	return 0;
}

int attack_active(void)
{
	return o.spoof || o.flood || (o.slow_msgs && o.slow_rounds);
}

/* packets of the attacks that go as fast as the rate lets them */
unsigned long attack_free_left(void)
{
	return at.spoof_left + at.flood_left;
}

/*
 * Send the next attack packet: a slowloris one if @slow, else a spoofed
 * or a flood one (in proportion to what is left of each). Returns 1 if a
 * packet went, 0 if it could not be sent.
 */
int attack_step(int slow)
{
	if (slow)
		return slow_one();
	if (rnd((uint32_t)(at.spoof_left + at.flood_left)) < at.spoof_left) {
		at.spoof_left--;
		return spoof_one();
	}
	at.flood_left--;
	return flood_one();
}

void attack_close(void)
{
	pair_stop();
	if (at.raw >= 0)
		close(at.raw);
	free(at.slow);
}


/* ------------------------------------------------------------ checks */

/*
 * What a message costs the socket at its first packet (dlcp_in_data()'s
 * estimate: its pages, with an xarray node each, one node more, the
 * range array and the state; the state is 128 to 1024 bytes here), for
 * a piece within one page (tiny) or over two (big).
 */
#define XA_NODE		576
#define COST_TINY_MAX	(4096 + 2 * XA_NODE + 64 + 1024)
#define COST_BIG_MIN	(2 * (4096 + XA_NODE) + XA_NODE + 64 + 128)

/* Must drop counter @what have grown? Printed with the reasoning. */
static int must_grow(const struct snap *a, const struct snap *b,
		     const char *what, int predicted, const char *why)
{
	int64_t d = dsnap(a, b, NS_TARGET, what);

	if (!predicted) {
		printf("%-34s %20s %10lld  (%s)\n", what, "not predicted",
		       (long long)d, why);
		return 0;
	}
	printf("  %s must grow: %s\n", what, why);
	return check_ge(what, 1, d);
}

/*
 * Wait until the target socket and R hold nothing: no leak. What the
 * fuzz packets made the target deliver is read meanwhile (@tfd).
 */
static int drained(int tfd)
{
	uint16_t ports[2] = { o.port, at.pi.r_port };
	double until = now() + 3 * at.timeout_ms / 1000.0 + 10;
	struct sock_row rows[2];

	for (;;) {
		sockets_read(ns_target, ports, rows, 2);
		if (!rows[0].in_msgs && !rows[0].rx_mem && !rows[1].in_msgs &&
		    !rows[1].rx_mem)
			return 0;
		if (now() > until)
			break;
		target_drain(tfd);
		usleep(100000);
	}
	printf("the target still holds %lu messages and %lu bytes, R %lu "
	       "messages and %lu bytes, %.0f s after the attacks\n",
	       rows[0].in_msgs, rows[0].rx_mem, rows[1].in_msgs,
	       rows[1].rx_mem, 3 * at.timeout_ms / 1000.0 + 10);
	return 1;
}

/* The attacks are over: the pair finishes, the sockets empty. */
int attack_finish(int tfd)
{
	double t = now();
	int fails;

	pair_stop();
	fails = drained(tfd);
	printf("pair finished and the sockets emptied in %.1f s\n", now() - t);
	return fails;
}

static int check_spoof(const struct snap *a, const struct snap *b, int pure)
{
	const int S = NS_SELF, T = NS_TARGET, A = NS_ATTACKER;
	int64_t rs = (int64_t)(at.sp[SP_REPORT] + at.sp[SP_STOP]);
	int64_t answered = (int64_t)(at.sp[SP_PROBE] + at.sp[SP_FINAL] +
				     at.sp[SP_DATA]);
	int64_t nosock = dsnap(a, b, S, "DlcpDropNoSocket"), z, hi;
	int fails = 0, i;

	printf("spoofed: %lu packets, %lu with an id near one the observer "
	       "saw:", at.sp[0] + at.sp[1] + at.sp[2] + at.sp[3] + at.sp[4] +
	       at.sp[5] + at.sp[6], at.sp_near);
	for (i = 0; i < __SP_MAX; i++)
		printf("%s %lu %s", i ? "," : "", at.sp[i], sp_name[i]);
	printf("\n");
	/*
	 * S gets the forged REPORT/STOP, and R's answers to the forged
	 * PROBEs (REPORT, or STOP for a FINAL one) and to the first packet
	 * of each forged message (REPORT): none names a message of S. The
	 * others S may not know: STOPs repeated by remembered delivered
	 * messages (for a late packet or probe), and REPORTs overtaken by
	 * their message's STOP (sent from another CPU): a few in a thousand
	 */
	z = dsnap(a, b, T, "DlcpStopsSent") - dsnap(a, b, T, "DlcpInMsgs") -
	    dsnap(a, b, T, "DlcpInMsgsFailed") - (int64_t)at.sp[SP_FINAL] +
	    dsnap(a, b, A, "DlcpStopsSent") - dsnap(a, b, A, "DlcpInMsgs") +
	    16 + (dsnap(a, b, T, "DlcpReportsSent") +
		  dsnap(a, b, A, "DlcpReportsSent")) / 200;
	if (pure)
		fails += check_range("DlcpDropUnknownMsg at S's host",
				     rs + answered, rs + answered + z,
				     dsnap(a, b, S, "DlcpDropUnknownMsg"));
	else
		fails += check_ge("DlcpDropUnknownMsg at S's host",
				  rs + answered,
				  dsnap(a, b, S, "DlcpDropUnknownMsg"));
	/* what reached S's host: the forged ones and what R, O sent it */
	hi = (int64_t)at.sp[SP_REPORT] + dsnap(a, b, T, "DlcpReportsSent") +
	     dsnap(a, b, A, "DlcpReportsSent");
	fails += check_range("DlcpReportsRcvd at S's host", hi - nosock, hi,
			     dsnap(a, b, S, "DlcpReportsRcvd"));
	hi = (int64_t)at.sp[SP_STOP] + dsnap(a, b, T, "DlcpStopsSent") +
	     dsnap(a, b, A, "DlcpStopsSent");
	fails += check_range("DlcpStopsRcvd at S's host", hi - nosock, hi,
			     dsnap(a, b, S, "DlcpStopsRcvd"));
	fails += check_eq("DlcpIcmpIgnored at S's host",
			  (int64_t)at.sp[SP_ICMP],
			  dsnap(a, b, S, "DlcpIcmpIgnored"));
	fails += check_eq("DlcpPmtuUpdates at S's host", 0,
			  dsnap(a, b, S, "DlcpPmtuUpdates"));
	/* every message of S's host delivered whole, and only once */
	fails += check_eq("DlcpOutMsgsFailed at S's host", 0,
			  dsnap(a, b, S, "DlcpOutMsgsFailed"));
	fails += check_eq("DlcpOutMsgsLossy at S's host", 0,
			  dsnap(a, b, S, "DlcpOutMsgsLossy"));
	fails += check_eq("DlcpOutMsgsDeadline at S's host", 0,
			  dsnap(a, b, S, "DlcpOutMsgsDeadline"));
	if (!pure)
		return fails;
	fails += check_eq("DlcpOutMsgsDone at S's host",
			  dsnap(a, b, T, "DlcpInMsgs") +
			  dsnap(a, b, A, "DlcpInMsgs"),
			  dsnap(a, b, S, "DlcpOutMsgsDone"));
	/* R: no forged packet met a message of S */
	fails += check_eq("DlcpInMsgsAborted at R's host", 0,
			  dsnap(a, b, T, "DlcpInMsgsAborted"));
	fails += check_eq("DlcpInMsgsFailed at R's host", 0,
			  dsnap(a, b, T, "DlcpInMsgsFailed"));
	fails += check_eq("DlcpDropMismatch at R's host", 0,
			  dsnap(a, b, T, "DlcpDropMismatch"));
	/*
	 * and the forged messages ended by timing out, all of them (a
	 * retransmission that comes after its delivered message was
	 * forgotten starts one more, rarely)
	 */
	fails += check_ge("DlcpInMsgsTimeout at R's host",
			  (int64_t)at.sp[SP_DATA],
			  dsnap(a, b, T, "DlcpInMsgsTimeout"));
	return fails;
}

static const char *const drops[] = {
	"DlcpDropInMsgs", "DlcpDropPeerMsgs", "DlcpDropRcvMem",
	"DlcpDropProtoMem", "DlcpDropNoMem",
};

static int64_t sum_drops(const struct snap *a, const struct snap *b)
{
	int64_t sum = 0;
	unsigned int i;

	for (i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
		sum += dsnap(a, b, NS_TARGET, drops[i]);
	return sum;
}

/* messages of kind @k the flood started within one message timeout */
static double flood_window(int k)
{
	if (at.fl_full_time[k] < 2.0 * at.timeout_ms / 1000.0 * 0.9)
		return 0;
	return at.fl_full[k] / at.fl_full_time[k] * at.timeout_ms / 1000.0;
}

static int check_flood(const struct snap *a, const struct snap *b, int pure)
{
	int64_t n = (int64_t)(at.fl[0] + at.fl[1] + at.fl[2]);
	double w;
	char why[160];
	int fails = 0, k;

	printf("flood: %lld packets:", (long long)n);
	for (k = 0; k < __FL_MAX; k++)
		printf("%s %lu %s (%.0f in a timeout)", k ? "," : "", at.fl[k],
		       fl_name[k], flood_window(k));
	printf("\n");
	w = flood_window(FL_BIG);
	snprintf(why, sizeof(why), "%.0f big pieces in a timeout, room for "
		 "%lld", w, at.rmem / COST_BIG_MIN);
	fails += must_grow(a, b, "DlcpDropRcvMem",
			   w > 1.2 * at.rmem / COST_BIG_MIN &&
			   at.rmem / COST_BIG_MIN < 0.95 * at.max_in, why);
	w = flood_window(FL_TINY);
	snprintf(why, sizeof(why), "%.0f bytes from many hosts in a "
		 "timeout, room for %lld", w, at.max_in);
	fails += must_grow(a, b, "DlcpDropInMsgs",
			   w > 1.2 * at.max_in &&
			   at.max_in * COST_TINY_MAX < 0.95 * at.rmem, why);
	w = flood_window(FL_ONE);
	snprintf(why, sizeof(why), "%.0f bytes from one host in a timeout, "
		 "room for %lld", w, at.max_in_peer);
	fails += must_grow(a, b, "DlcpDropPeerMsgs",
			   w > 1.2 * at.max_in_peer &&
			   at.max_in_peer < at.max_in &&
			   at.max_in_peer * COST_TINY_MAX < 0.95 * at.rmem,
			   why);
	if (!pure)
		return fails;
	/*
	 * each packet started a message, answered with a REPORT that found
	 * no route back, or was dropped for a limit; every message started
	 * timed out (and the odd late retransmission of a legitimate
	 * message may have started one more). R shares the namespace and its
	 * limits: a packet of the pair that R dropped (a super-packet counts
	 * once) is one S resent.
	 */
	fails += check_range("flood: started (no route) + dropped", n,
			     n + dsnap(a, b, NS_SELF, "DlcpRetransPkts"),
			     dsnap(a, b, NS_TARGET, "DlcpOutNoRoute") +
			     sum_drops(a, b));
	fails += check_ge("flood: DlcpInMsgsTimeout",
			  dsnap(a, b, NS_TARGET, "DlcpOutNoRoute"),
			  dsnap(a, b, NS_TARGET, "DlcpInMsgsTimeout"));
	return fails;
}

/*
 * The slowloris messages alive at once: all of them if a round (a packet
 * to each) took less than a message timeout; else, the injector being
 * slower than planned (a debug kernel), those one timeout's packets
 * reached, each holding only its last packet.
 */
static int64_t slow_alive(unsigned long *rounds)
{
	double round = (at.slow_t1 - at.slow_t0) / o.slow_rounds;
	double t = at.timeout_ms / 1000.0;

	*rounds = o.slow_rounds;
	if (round < 0.9 * t)
		return (int64_t)o.slow_msgs;
	*rounds = 1;
	return (int64_t)(o.slow_msgs * t / round);
}

static int check_slow(const struct snap *a, const struct snap *b, int pure,
		      const struct mem_peak *pk)
{
	unsigned long rounds;
	int64_t n = slow_alive(&rounds), heavy = (n + 1) / 2, light = n / 2;
	int64_t room = n < at.max_in ? n : at.max_in;
	int64_t pages = 5312 + (int64_t)(rounds - 1) * (4096 + XA_NODE);
	char why[160];
	int fails = 0;

	printf("slowloris: %lu messages, %lu packets (%lu rounds, one every "
	       "%.2f s per message, %.1f s a round); %lld alive at once\n",
	       o.slow_msgs, at.slow_sent, o.slow_rounds, at.slow_ival,
	       (at.slow_t1 - at.slow_t0) / o.slow_rounds, (long long)n);
	snprintf(why, sizeof(why), "%lld messages from one host, room for "
		 "%lld", (long long)heavy, at.max_in_peer);
	fails += must_grow(a, b, "DlcpDropPeerMsgs",
			   heavy > 1.2 * at.max_in_peer, why);
	snprintf(why, sizeof(why), "%lld messages from 15 hosts, room for "
		 "%lld beside the one host's", (long long)light,
		 at.max_in - at.max_in_peer);
	fails += must_grow(a, b, "DlcpDropInMsgs",
			   light > 1.2 * (at.max_in - at.max_in_peer) &&
			   15 * at.max_in_peer > 1.2 * (at.max_in -
							at.max_in_peer), why);
	snprintf(why, sizeof(why), "%lld messages of %lu pages each at "
		 "most, %lld bytes", (long long)room, rounds, at.rmem);
	fails += must_grow(a, b, "DlcpDropRcvMem",
			   room * pages > 1.3 * at.rmem, why);
	/* the table was full: the attack took what it could */
	fails += check_ge("slowloris: peak messages held",
			  (int64_t)(0.8 * room), (int64_t)pk->in_msgs[0]);
	if (pure)
		fails += check_le("slowloris: started + dropped",
				  (int64_t)at.slow_sent,
				  dsnap(a, b, NS_TARGET, "DlcpInMsgsTimeout") +
				  sum_drops(a, b));
	return fails;
}

/*
 * The checks of the attacks between snapshots @a and @b. @mixed: the
 * fuzz packets ran too (the exact balances then do not hold). @t_limit
 * is the target's receive memory limit, @r_limit R's.
 */
int attack_check(const struct snap *a, const struct snap *b, int mixed,
		 unsigned long t_limit, unsigned long r_limit)
{
	int pure_spoof = !mixed && !o.flood && !o.slow_msgs;
	int pure_flood = !mixed && !o.spoof && !o.slow_msgs;
	int pure_slow = !mixed && !o.spoof && !o.flood;
	long long mem[3] = { 0, 0, 0 };
	unsigned long done = 0;
	struct mem_peak pk;
	int fails = 0;

	sampler_peak(&pk);
	printf("memory, peak of %lu samples: target socket %lu bytes, %lu "
	       "messages; R %lu bytes, %lu messages; DLCP %ld pages\n",
	       pk.samples, pk.rx_mem[0], pk.in_msgs[0], pk.rx_mem[1],
	       pk.in_msgs[1], pk.proto_pages);
	/* a delivery or completion not yet read may add a little (fuzz) */
	fails += check_le("peak rx_mem of the target socket",
			  (int64_t)t_limit + (mixed ? 65536 : 0),
			  (int64_t)pk.rx_mem[0]);
	fails += check_le("peak rx_mem of R", (int64_t)r_limit,
			  (int64_t)pk.rx_mem[1]);
	/* delivered messages are remembered (up to 4 x) besides */
	fails += check_le("peak in_msgs of the target socket",
			  at.max_in * (mixed ? 5 : 1), (int64_t)pk.in_msgs[0]);
	/*
	 * The count shown is the core's memory_allocated: receive memory
	 * reaches it through a per-CPU reserve (net.core.mem_pcpu_rsv, 256
	 * pages) a CPU, and the core compares the count without the
	 * reserves to the limit, then takes a refused charge back from the
	 * reserve, not the count. So the count can stand above the limit
	 * by up to a reserve a CPU, as TCP's and UDP's do; 64 pages more
	 * for charges being given back.
	 */
	if (!proto_mem_read(mem))
		fails += check_le("peak DLCP pages (net.dlcp.mem max)",
				  mem[2] + 64 + proto_mem_pcpu_rsv() *
				  sysconf(_SC_NPROCESSORS_CONF),
				  pk.proto_pages);
	else
		printf("net.dlcp.mem not readable here: not checked\n");
	if (o.spoof)
		fails += check_spoof(a, b, pure_spoof);
	if (o.flood)
		fails += check_flood(a, b, pure_flood);
	if (o.slow_msgs && o.slow_rounds)
		fails += check_slow(a, b, pure_slow, &pk);
	fails += pair_check(&done);
	printf("summary: %lu attack packets (%lu spoofed, %lu flood, %lu "
	       "slowloris); peak memory: target %lu of %lu bytes, DLCP %ld "
	       "of %lld pages; the pair completed %lu messages\n",
	       at.sp[0] + at.sp[1] + at.sp[2] + at.sp[3] + at.sp[4] +
	       at.sp[5] + at.sp[6] + at.fl[0] + at.fl[1] + at.fl[2] +
	       at.slow_sent,
	       at.sp[0] + at.sp[1] + at.sp[2] + at.sp[3] + at.sp[4] +
	       at.sp[5] + at.sp[6], at.fl[0] + at.fl[1] + at.fl[2],
	       at.slow_sent, pk.rx_mem[0], t_limit, pk.proto_pages, mem[2],
	       done);
	return fails;
}

/* R's port (for the sampler) */
uint16_t attack_r_port(void)
{
	return at.pi.r_port;
}
