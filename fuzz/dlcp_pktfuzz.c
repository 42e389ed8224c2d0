// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pktfuzz: inject valid and mutated DLCP packets into a DLCP socket
 * in another network namespace, and check that the receiver accounts for
 * every one of them.
 *
 *   dlcp_pktfuzz --target-ns NS --src A --dst B [--port P] [--avoid-port Q]
 *		  [--count N] [--seed S] [--rate PPS] [--settle-file F]
 *		  [--settle S] [--done-file F2] [--ranges N] [--udp] [-v]
 *
 * Run in the injecting namespace (ip netns exec NS_A). From there it
 * enters NS (setns) to open the target: a DLCP socket bound to B:P, which
 * also sends small messages of its own back to A (so that injected
 * REPORT/STOP packets can name messages that exist), and to read NS's
 * /proc/net/dlcp/snmp before and after.
 *
 * From SEED it builds N packets of every type with dlcp_pkt (DATA,
 * REPORT, STOP, PROBE, ABORT; for messages it keeps alive over several
 * packets, and for the target's own outgoing messages, learnt from a raw
 * socket), mutates most of them (bit flips, truncation, extension, field
 * boundary values: offsets at msg_len, msg_len 0/1/huge, doff 0/255, ngaps
 * mismatches, huge gap counts, unknown flags/version/type, wrong checksums;
 * most mutated packets get a valid checksum again so that they reach the
 * deeper paths) and sends them with a raw IPPROTO_DLCP socket (the kernel
 * writes the IP header), at most PPS packets a second.
 *
 * For every packet it predicts what the receiver must do, with the same
 * dlcp_wire_check() and the checksum: the drop reason, or the socket and
 * type handler it reaches. Packets to port Q (a real transfer's receiver)
 * are only ever ones that must be dropped before the socket lookup.
 *
 * When the injection is over it creates F2 (if given). After the run
 * (and after F exists, if given: the script creates it when
 * its real transfer is over) it waits until NS's DlcpInPkts is still for a
 * second, then checks:
 *   1. for each reason dlcp_wire_check() finds, and DlcpInCsumErrors, the
 *      counter's delta equals the number predicted (real traffic is never
 *      malformed);
 *   2. DlcpDropNoSocket grew by at least the number predicted, and each
 *      type's receive counter by at least the packets predicted to reach it;
 *   3. DlcpInPkts delta == the drops before dispatch (reasons, checksum,
 *      no socket, closed, not host, nomem) + the packets dispatched (DATA,
 *      REPORT, STOP, PROBE, ABORT counters): every packet counted once;
 *   4. DlcpInPkts delta == packets injected + DlcpOutPkts delta of this
 *      namespace (the real transfer's sender lives here): every injected
 *      packet reached the host;
 *   5. every lost range (DLCP_CMSG_LOST) of a message the target delivers
 *      reads as zeros (the payloads injected never hold a zero byte).
 * Prints the counts per mutation and per reason. Exit 0 iff all held.
 *
 * --ranges N: first cut one message into N 1-byte pieces (past the
 * module's limit of ranges per message, 8192, when N > 8192), then
 * complete it by a PROBE: a delivery with thousands of lost ranges.
 *
 * --udp: UDP mode. The target namespace must have its UDP port open
 * (net.dlcp.encap=1; the port is its net.dlcp.udp_port, or --udp-port).
 * Three packets in four then go inside UDP to that port, through a raw
 * IPPROTO_UDP socket that writes the UDP header itself (the rest stay raw
 * IP): UDP checksum zero (allowed in IPv4) or correct, and in a few the
 * UDP layer is broken on purpose: a wrong UDP checksum or a UDP length
 * past the datagram (UDP must drop those: the target's Udp InErrors and
 * InCsumErrors must grow by exactly that many, DLCP must never see them),
 * or a UDP length short of it (UDP trims; DLCP sees the shorter packet).
 * The target's own messages (in UDP, as its namespace is in UDP mode) are
 * learnt from the same raw socket. Further checks:
 *   6. DlcpUdpInPkts delta == packets injected inside UDP that UDP passes
 *      + DlcpUdpOutPkts delta of this namespace;
 *   7. Udp InErrors / InCsumErrors deltas of the target == predicted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dlcp_pkt.h"

#define NR_CTR		256
#define NR_ACTIVE	32
#define NR_KNOWN	64
#define MAX_PKT		1480	/* fits a 1500-byte MTU with the IP header */
#define MAX_PKT_UDP	(MAX_PKT - 8)	/* and with a UDP header */
#define UDP_PCT		75	/* --udp: share of packets inside UDP */

static struct {
	const char *target_ns, *settle_file, *done_file;
	uint32_t src, dst;
	uint16_t port, avoid_port, peer_port, udp_port;
	unsigned long count, rate, ranges;
	uint64_t seed;
	int settle, verbose, udp;
} o = { .port = 7300, .count = 20000, .rate = 2000, .seed = 1,
	.settle = 60 };

static int ns_self = -1, ns_target = -1;
static uint32_t max_msg;

/* ------------------------------------------------------------ PRNG */

static uint64_t rng_state;

static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd(uint32_t n)	/* [0, n) */
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

static uint32_t rnd32(void)
{
	return (uint32_t)rnd64();
}

static int chance(unsigned int pct)
{
	return rnd(100) < pct;
}

/* ----------------------------------------------------------- counters */

struct snmp {
	int n;
	char name[NR_CTR][48];
	uint64_t val[NR_CTR];
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "dlcp_pktfuzz: ");
	vfprintf(stderr, fmt, ap);
	if (errno)
		fprintf(stderr, ": %s", strerror(errno));
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void enter(int fd)
{
	if (setns(fd, CLONE_NEWNET))
		die("setns");
}

static void snmp_read(int ns, struct snmp *s)
{
	char line[256];
	FILE *f;

	enter(ns);
	f = fopen("/proc/net/dlcp/snmp", "r");
	enter(ns_self);
	if (!f)
		die("/proc/net/dlcp/snmp");
	s->n = 0;
	while (s->n < NR_CTR && fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "%47s %llu", s->name[s->n], &v) == 2)
			s->val[s->n++] = v;
	}
	fclose(f);
}

static int64_t snmp_get(const struct snmp *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return (int64_t)s->val[i];
	return -1;
}

static int64_t delta(const struct snmp *a, const struct snmp *b,
		     const char *name)
{
	int64_t x = snmp_get(a, name), y = snmp_get(b, name);

	if (x < 0 || y < 0) {
		fprintf(stderr, "dlcp_pktfuzz: counter %s missing\n", name);
		return -1000000000;
	}
	return y - x;
}

static long long sysctl_read(int ns, const char *name)
{
	char path[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/dlcp/%s", name);
	enter(ns);
	f = fopen(path, "r");
	enter(ns_self);
	if (!f || fscanf(f, "%lld", &v) != 1)
		die("%s", path);
	fclose(f);
	return v;
}

/* ------------------------------------------------------------ outcome */

/* What must become of a packet. */
enum outcome {
	OUT_DATA = 0, OUT_REPORT, OUT_STOP, OUT_PROBE, OUT_ABORT,
	OUT_NOSOCKET, OUT_CSUM,
	OUT_UDP_CSUM, OUT_UDP_LEN,	/* dropped by UDP, never reach DLCP */
	OUT_REASON,	/* + enum dlcp_drop_reason */
	__OUT_MAX = OUT_REASON + __DLCP_DROP_PURE_MAX
};

static const char *const dispatch_ctr[] = {
	[OUT_DATA] = "DlcpInDataPkts", [OUT_REPORT] = "DlcpReportsRcvd",
	[OUT_STOP] = "DlcpStopsRcvd", [OUT_PROBE] = "DlcpProbesRcvd",
	[OUT_ABORT] = "DlcpAbortsRcvd",
};

static unsigned long expect[__OUT_MAX];

enum mutation {
	MUT_NONE, MUT_BITFLIP, MUT_TRUNC, MUT_EXTEND, MUT_FIELD, MUT_BADCSUM,
	MUT_GARBAGE, __MUT_MAX
};

static const char *const mut_name[] = {
	"valid", "bitflip", "truncate", "extend", "field", "bad-csum",
	"garbage",
};

static unsigned long mut_count[__MUT_MAX], mut_passed[__MUT_MAX];

/* --udp: what was done to the UDP layer */
enum udp_mutation {
	UMUT_NONE, UMUT_NOCSUM, UMUT_BADCSUM, UMUT_LONGLEN, UMUT_SHORTLEN,
	__UMUT_MAX
};

static const char *const umut_name[] = {
	"udp-csum-ok", "udp-csum-zero", "udp-csum-bad", "udp-len-long",
	"udp-len-short",
};

static unsigned long umut_count[__UMUT_MAX], sent_udp, sent_udp_passed;

/* ---------------------------------------------------------- messages */

/* Messages the injector sends DATA for (the target reassembles them). */
struct in_msg {
	uint32_t id, len, next, budget;
	uint16_t sport;
	uint8_t dtype;
	int used;
};

/* Messages the target sends (learnt from the raw socket). */
struct out_msg {
	uint32_t id, len;
	uint16_t dport;
	int used;
};

static struct in_msg act[NR_ACTIVE];
static struct out_msg known[NR_KNOWN];
static unsigned int nr_known_seen;

static uint32_t pick_msg_len(void)
{
	switch (rnd(8)) {
	case 0:
		return 1 + rnd(64);
	case 1:
	case 2:
	case 3:
		return 1 + rnd(8192);
	case 4:
		return 1 + rnd(256 << 10);
	case 5:
		return 1 + rnd(8 << 20);
	case 6:
		return max_msg - rnd(2);
	default:
		return 1 + rnd(1 << 20);
	}
}

static struct in_msg *pick_in_msg(void)
{
	struct in_msg *m = &act[rnd(NR_ACTIVE)];

	if (!m->used || chance(3)) {
		m->used = 1;
		m->id = rnd32();
		m->len = pick_msg_len();
		m->next = 0;
		m->sport = (uint16_t)(20000 + rnd(2000));
		m->budget = chance(50) ? 0 : rnd(200000);
		m->dtype = DLCP_DTYPE_BYTES;
	}
	return m;
}

static void learn(const uint8_t *pkt, ssize_t n)
{
	const struct iphdr *ip = (const void *)pkt;
	const uint8_t *d;
	unsigned int type;
	size_t ihl;

	if (n < (ssize_t)sizeof(*ip))
		return;
	ihl = ip->ihl * 4u;
	if (ip->protocol == IPPROTO_UDP) {	/* DLCP inside UDP */
		if (n < (ssize_t)(ihl + 8) ||
		    dlcp_get16(pkt + ihl + 2) != o.udp_port)
			return;
		ihl += 8;
	}
	if (n < (ssize_t)(ihl + DLCP_HDR_LEN) || ip->saddr != o.dst)
		return;
	d = pkt + ihl;
	type = d[4] & 15;
	if (dlcp_get16(d) != o.port ||
	    (type != DLCP_T_DATA && type != DLCP_T_PROBE))
		return;
	known[nr_known_seen % NR_KNOWN] = (struct out_msg){
		.id = dlcp_get32(d + 12), .len = dlcp_get32(d + 16),
		.dport = dlcp_get16(d + 2), .used = 1,
	};
	nr_known_seen++;
}

/* ------------------------------------------------------------ building */

static size_t build_valid(uint8_t *b, unsigned int *typep, uint32_t *msglen)
{
	struct dlcp_pkt_info pi = { .dport = o.port };
	unsigned int type = 1 + rnd(5);
	struct out_msg *km = &known[rnd(NR_KNOWN)];
	size_t n = 0;

	/* REPORT and STOP mostly name the target's own messages */
	if ((type == DLCP_T_REPORT || type == DLCP_T_STOP) && km->used &&
	    chance(80)) {
		pi.sport = km->dport;
		pi.msg_id = km->id;
		pi.msg_len = km->len;
	} else {
		struct in_msg *m = pick_in_msg();

		pi.sport = m->sport;
		pi.msg_id = m->id;
		pi.msg_len = m->len;
		if (type == DLCP_T_DATA) {
			struct dlcp_pkt_data_info di = {
				.tensor_id = rnd32(), .iteration = rnd32(),
				.budget_ppm = m->budget, .tsval = rnd32(),
				.layer = (uint16_t)rnd(64), .dtype = m->dtype,
			};
			static uint8_t payload[MAX_PKT];
			uint32_t plen = 1 + rnd(1400);

			di.offset = chance(70) ? m->next : rnd(m->len);
			if (di.offset >= m->len)
				di.offset = 0;
			if (plen > m->len - di.offset)
				plen = m->len - di.offset;
			m->next = di.offset + plen;
			if (m->next >= m->len) {
				m->next = 0;
				pi.flags |= DLCP_HF_LAST;
			}
			if (chance(20))
				pi.flags |= DLCP_HF_ACKREQ;
			if (chance(10))
				pi.flags |= DLCP_HF_RETRANS;
			if (chance(10)) {
				pi.flags |= DLCP_HF_CRITICAL;
				di.crit_len = rnd(m->len + 1);
			}
			if (chance(5))
				pi.flags |= DLCP_HF_LAST;
			di.msg_flags = (uint16_t)(rnd32() & DLCP_MSG_FLAGS_SEND);
			memset(payload, (int)(rnd32() | 1), plen);
			n = dlcp_pkt_build_data(b, MAX_PKT, &pi, &di, payload,
						plen);
		}
	}
	pi.prio = (uint8_t)rnd(8);
	switch (type) {
	case DLCP_T_REPORT: {
		struct dlcp_pkt_report_info ri = {
			.rcvd = rnd(pi.msg_len + 1), .tsecr = rnd32(),
			.ce_bytes = chance(80) ? 0 : rnd32(),
			.rflags = (uint8_t)rnd(2),
		};
		struct dlcp_pkt_gap g[64];
		uint32_t ng = chance(30) ? 0 : rnd(65), i, pos = 0, step;

		ri.scan_end = chance(50) ? pi.msg_len : rnd(pi.msg_len + 1);
		step = ri.scan_end / (ng + 1);
		for (i = 0; i < ng && step; i++) {
			g[i].start = pos + rnd(step);
			g[i].end = g[i].start + 1 + rnd(step);
			if (g[i].end > ri.scan_end)
				break;
			pos = g[i].end;
		}
		n = dlcp_pkt_build_report(b, MAX_PKT, &pi, &ri, g, i);
		break;
	}
	case DLCP_T_STOP:
		if (chance(20))
			pi.flags |= DLCP_HF_FAILED;
		n = dlcp_pkt_build_stop(b, MAX_PKT, &pi,
					chance(60) ? 0 : rnd(pi.msg_len + 1),
					rnd32());
		break;
	case DLCP_T_PROBE:
		if (chance(25))
			pi.flags |= DLCP_HF_FINAL;
		n = dlcp_pkt_build_probe(b, MAX_PKT, &pi,
					 chance(50) ? pi.msg_len :
					 rnd(pi.msg_len + 1), rnd32());
		break;
	case DLCP_T_ABORT:
		n = dlcp_pkt_build_abort(b, MAX_PKT, &pi, rnd(pi.msg_len + 1),
					 rnd32());
		break;
	}
	*typep = type;
	*msglen = pi.msg_len;
	return n;
}

static uint32_t boundary32(uint32_t msg_len, uint32_t max_msg)
{
	static const uint32_t fixed[] = {
		0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
		1u << 30, (1u << 30) + 1, 4096, 65535, 65536,
	};

	switch (rnd(6)) {
	case 0:
		return msg_len - rnd(3);
	case 1:
		return msg_len + rnd(3);
	case 2:
		return max_msg + rnd(3) - 1;
	default:
		return fixed[rnd(sizeof(fixed) / sizeof(fixed[0]))];
	}
}

/* Mutate a field of a valid packet to an edge value. */
static size_t mutate_field(uint8_t *b, size_t n, unsigned int type,
			   uint32_t msg_len, uint32_t max_msg)
{
	switch (rnd(12)) {
	case 0:		/* msg_len */
		dlcp_put32(b + 16, boundary32(msg_len, max_msg));
		break;
	case 1:		/* doff */
	{
		static const uint8_t d[] = { 0, 1, 4, 5, 6, 7, 10, 12, 13,
					     14, 64, 255 };

		b[6] = d[rnd(sizeof(d))];
		break;
	}
	case 2:		/* length field */
		dlcp_put16(b + 8, (uint16_t)(chance(50) ? n + rnd(3) - 1 :
					     rnd32()));
		break;
	case 3:		/* flags */
		b[5] = (uint8_t)(chance(50) ? 1u << rnd(8) : rnd32());
		break;
	case 4:		/* version/type */
		dlcp_pkt_set_ver_type(b, chance(50) ? DLCP_VERSION : rnd(16),
				      rnd(16));
		break;
	case 5:		/* type-specific 32-bit field at 20 */
		dlcp_put32(b + 20, boundary32(msg_len, max_msg));
		break;
	case 6:		/* REPORT: scan_end; DATA: tensor_id (harmless) */
		dlcp_put32(b + 24, boundary32(msg_len, max_msg));
		break;
	case 7:		/* DATA budget / REPORT tsecr-ce */
		dlcp_put32(b + 32, chance(50) ? DLCP_PPM_MAX + rnd(2) :
			   rnd32());
		break;
	case 8:		/* REPORT ngaps / DATA layer */
		dlcp_put16(b + 36, (uint16_t)(chance(50) ? rnd32() :
					      (n - 40) / 8 + rnd(3) - 1));
		break;
	case 9:		/* DATA dtype,reserved,msg_flags / REPORT rflags */
		b[38 + rnd(4)] = (uint8_t)rnd32();
		break;
	case 10:	/* DATA crit_len, or a gap */
		if (n >= 52)
			dlcp_put32(b + 48 + 4 * rnd((uint32_t)(n - 48) / 4),
				   boundary32(msg_len, max_msg));
		break;
	default:	/* offset near msg_len for DATA */
		if (type == DLCP_T_DATA) {
			uint32_t plen = (uint32_t)n - 52;

			dlcp_put32(b + 20, msg_len - plen + rnd(3) - 1);
		} else {
			dlcp_put32(b + 12, rnd32());	/* unknown msg id */
		}
		break;
	}
	return n;
}

/* ------------------------------------------------------------- main */

static void usage(void)
{
	fprintf(stderr,
		"usage: dlcp_pktfuzz --target-ns NS --src A --dst B [--port P]\n"
		"         [--avoid-port Q] [--count N] [--seed S] [--rate PPS]\n"
		"         [--settle-file F] [--settle SECONDS] [--done-file F2]\n"
		"         [--ranges N] [--udp] [--udp-port P] [-v]\n");
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int target_open(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(o.port),
				   .sin_addr.s_addr = o.dst };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int one = 1, fd;

	enter(ns_target);
	fd = socket(AF_INET, SOCK_DLCP | SOCK_NONBLOCK, 0);
	enter(ns_self);
	if (fd < 0)
		die("DLCP socket in %s", o.target_ns);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind target port %u", o.port);
	/* close() at the end aborts what is left instead of waiting */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	setsockopt(fd, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one));
	return fd;
}

static unsigned long tgt_sent, tgt_recv, tgt_lossy, tgt_compl, tgt_nonzero;

/* The target sends a small message to the injector's host. */
static void target_send(int fd)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(o.peer_port),
				  .sin_addr.s_addr = o.src };
	static uint8_t buf[65536];
	size_t len = 1 + rnd(chance(50) ? 4096 : sizeof(buf) - 1);

	memset(buf, 0x5a, len);
	if (sendto(fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)&to,
		   sizeof(to)) == (ssize_t)len)
		tgt_sent++;
}

/* Drain what injected packets made the target deliver and complete. */
static void target_drain(int fd)
{
	static uint8_t buf[1 << 16];
	static char ctl[CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
			CMSG_SPACE(8200 * sizeof(struct dlcp_range))];
	int i;

	for (i = 0; i < 64; i++) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;
		ssize_t r;

		r = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (r < 0)
			break;
		tgt_recv++;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			const struct dlcp_range *lr = (const void *)CMSG_DATA(c);
			size_t k, nr, b;

			if (c->cmsg_level != SOL_DLCP ||
			    c->cmsg_type != DLCP_CMSG_LOST)
				continue;
			tgt_lossy++;
			/* dlcp(7): lost ranges are zero-filled */
			nr = (c->cmsg_len - CMSG_LEN(0)) / sizeof(*lr);
			for (k = 0; k < nr; k++) {
				for (b = lr[k].offset;
				     b < (size_t)lr[k].offset + lr[k].len &&
				     b < (size_t)r; b++) {
					if (!buf[b])
						continue;
					if (tgt_nonzero++ < 5)
						fprintf(stderr, "lost range "
							"[%u, +%u) of a %zd-byte "
							"message reads 0x%02x at "
							"%zu, not zero\n",
							lr[k].offset, lr[k].len,
							r, buf[b], b);
					break;
				}
			}
		}
	}
	for (i = 0; i < 64; i++) {
		struct iovec iov = { buf, 64 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };

		if (recvmsg(fd, &mh, MSG_DONTWAIT | MSG_ERRQUEUE) < 0)
			break;
		tgt_compl++;
	}
}

/*
 * --ranges N: fragment one message into N disjoint 1-byte pieces (DATA at
 * every other byte, last offset first: the most work for the range set),
 * past the module's limit of ranges per message when N > 8192, then
 * complete it with a PROBE (budget 100%): a delivery with thousands of
 * lost ranges. Returns the packets sent; all count as DATA/PROBE.
 */
static unsigned long ranges_burst(int raw, const struct sockaddr_in *to)
{
	struct dlcp_pkt_info pi = { .sport = 21999, .dport = o.port,
				    .msg_id = rnd32(),
				    .msg_len = (uint32_t)o.ranges * 2 + 2 };
	struct dlcp_pkt_data_info di = { .budget_ppm = DLCP_PPM_MAX,
					 .dtype = DLCP_DTYPE_BYTES };
	uint32_t seed = dlcp_csum_pseudo4(o.src, o.dst, IPPROTO_DLCP, 0);
	unsigned long k, n = 0;
	uint8_t pkt[128], one = 0x77;
	double t0 = now();
	size_t len;

	for (k = o.ranges; k-- > 0;) {
		di.offset = (uint32_t)k * 2;
		len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, &one, 1);
		seed = dlcp_csum_pseudo4(o.src, o.dst, IPPROTO_DLCP,
					 (uint16_t)len);
		dlcp_pkt_set_csum(pkt, len, seed);
		if (sendto(raw, pkt, len, 0, (const void *)to,
			   sizeof(*to)) != (ssize_t)len)
			die("ranges burst: sendto");
		n++;
		expect[OUT_DATA]++;
		if (o.rate && n % 16 == 0)
			while (now() < t0 + (double)n / o.rate)
				usleep(500);
	}
	len = dlcp_pkt_build_probe(pkt, sizeof(pkt), &pi, pi.msg_len, 1);
	dlcp_pkt_set_csum(pkt, len, dlcp_csum_pseudo4(o.src, o.dst,
						       IPPROTO_DLCP,
						       (uint16_t)len));
	if (sendto(raw, pkt, len, 0, (const void *)to, sizeof(*to)) !=
	    (ssize_t)len)
		die("ranges burst: sendto");
	expect[OUT_PROBE]++;
	printf("ranges burst: message of %u bytes cut into %lu pieces, then "
	       "probed\n", pi.msg_len, o.ranges);
	return n + 1;
}

static int raw_udp = -1;	/* --udp: raw IPPROTO_UDP socket */

static void raw_drain(int raw)
{
	uint8_t buf[2048];
	ssize_t n;

	while ((n = recv(raw, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		learn(buf, n);
	while (raw_udp >= 0 &&
	       (n = recv(raw_udp, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		learn(buf, n);
}

/* Udp InErrors and InCsumErrors of a namespace (/proc/net/snmp). */
static void udp_snmp_read(int ns, int64_t *inerr, int64_t *csumerr)
{
	char names[512], vals[512], *np, *vp, *n, *v;
	FILE *f;

	*inerr = *csumerr = -1;
	enter(ns);
	f = fopen("/proc/net/snmp", "r");
	enter(ns_self);
	if (!f)
		die("/proc/net/snmp");
	while (fgets(names, sizeof(names), f)) {
		if (strncmp(names, "Udp: ", 5) || !fgets(vals, sizeof(vals), f))
			continue;
		n = strtok_r(names + 5, " \n", &np);
		v = strtok_r(vals + 5, " \n", &vp);
		for (; n && v; n = strtok_r(NULL, " \n", &np),
		     v = strtok_r(NULL, " \n", &vp)) {
			if (!strcmp(n, "InErrors"))
				*inerr = strtoll(v, NULL, 10);
			else if (!strcmp(n, "InCsumErrors"))
				*csumerr = strtoll(v, NULL, 10);
		}
		break;
	}
	fclose(f);
	if (*inerr < 0 || *csumerr < 0)
		die("no Udp InErrors/InCsumErrors in /proc/net/snmp");
}

/*
 * Send DLCP packet @pkt (@n bytes) inside UDP: @um says what to break,
 * @ulen is the UDP length field. Returns sendto()'s result.
 */
static ssize_t udp_send(const uint8_t *pkt, size_t n, unsigned int um,
			size_t ulen, const struct sockaddr_in *to)
{
	static uint8_t u[MAX_PKT + 64];
	uint16_t c = 0;

	dlcp_put16(u, (uint16_t)(1024 + rnd(64512)));
	dlcp_put16(u + 2, o.udp_port);
	dlcp_put16(u + 4, (uint16_t)ulen);
	dlcp_put16(u + 6, 0);
	memcpy(u + 8, pkt, n);
	if (um != UMUT_NOCSUM && um != UMUT_LONGLEN) {
		/* over the UDP length, as the receiver trims to it */
		uint32_t sum = dlcp_csum_pseudo4(o.src, o.dst, IPPROTO_UDP,
						 (uint16_t)ulen);

		sum = dlcp_csum_add(sum, u, ulen < n + 8 ? ulen : n + 8);
		c = dlcp_csum_finish(sum);
		if (!c)
			c = 0xffff;
		if (um == UMUT_BADCSUM) {
			c ^= (uint16_t)(1 + rnd(0xfffe));
			if (!c)	/* 0 would mean "no checksum" */
				c = 0x1234;
		}
	}
	dlcp_put16(u + 6, c);
	return sendto(raw_udp, u, n + 8, 0, (const void *)to, sizeof(*to));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "target-ns", 1, 0, 'n' }, { "src", 1, 0, 's' },
		{ "dst", 1, 0, 'd' }, { "port", 1, 0, 'p' },
		{ "avoid-port", 1, 0, 'a' }, { "count", 1, 0, 'c' },
		{ "seed", 1, 0, 'S' }, { "rate", 1, 0, 'r' },
		{ "settle-file", 1, 0, 'f' }, { "settle", 1, 0, 'w' },
		{ "done-file", 1, 0, 'D' }, { "ranges", 1, 0, 'g' },
		{ "udp", 0, 0, 'u' }, { "udp-port", 1, 0, 'U' },
		{ "verbose", 0, 0, 'v' },
		{ 0, 0, 0, 0 }
	};
	struct snmp before, after, self_before, self_after, tmp;
	int64_t uerr0 = 0, ucsum0 = 0, uerr1 = 0, ucsum1 = 0;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	static uint8_t pkt[MAX_PKT + 64];
	unsigned long i, sent = 0, send_err = 0;
	char path[256];
	int raw, tfd, c, fails = 0;
	unsigned int r;
	double t0, t_start, t_end;
	int64_t last;

	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 'n': o.target_ns = optarg; break;
		case 's': o.src = inet_addr(optarg); break;
		case 'd': o.dst = inet_addr(optarg); break;
		case 'p': o.port = (uint16_t)atoi(optarg); break;
		case 'a': o.avoid_port = (uint16_t)atoi(optarg); break;
		case 'c': o.count = strtoul(optarg, NULL, 0); break;
		case 'S': o.seed = strtoull(optarg, NULL, 0); break;
		case 'r': o.rate = strtoul(optarg, NULL, 0); break;
		case 'f': o.settle_file = optarg; break;
		case 'D': o.done_file = optarg; break;
		case 'g': o.ranges = strtoul(optarg, NULL, 0); break;
		case 'w': o.settle = atoi(optarg); break;
		case 'u': o.udp = 1; break;
		case 'U': o.udp_port = (uint16_t)atoi(optarg); break;
		case 'v': o.verbose = 1; break;
		default: usage();
		}
	}
	if (!o.target_ns || !o.src || !o.dst)
		usage();
	o.peer_port = o.port + 1;
	rng_state = o.seed;

	ns_self = open("/proc/self/ns/net", O_RDONLY);
	snprintf(path, sizeof(path), "/run/netns/%s", o.target_ns);
	ns_target = open(path, O_RDONLY);
	if (ns_self < 0 || ns_target < 0)
		die("open netns %s", path);
	max_msg = (uint32_t)sysctl_read(ns_target, "max_msg_size");

	raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	if (raw < 0)
		die("raw socket");
	sin.sin_addr.s_addr = o.src;
	if (bind(raw, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind raw socket");
	tfd = target_open();
	if (o.udp) {
		raw_udp = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
		if (raw_udp < 0)
			die("raw UDP socket");
		if (bind(raw_udp, (struct sockaddr *)&sin, sizeof(sin)))
			die("bind raw UDP socket");
		if (!o.udp_port)
			o.udp_port = (uint16_t)sysctl_read(ns_target,
							   "udp_port");
		if (sysctl_read(ns_target, "encap") != 1)
			fprintf(stderr, "dlcp_pktfuzz: warning: net.dlcp.encap"
				" is not 1 in %s\n", o.target_ns);
		printf("UDP mode: %d%% of the packets inside UDP to port %u\n",
		       UDP_PCT, o.udp_port);
	}

	snmp_read(ns_target, &before);
	snmp_read(ns_self, &self_before);
	if (o.udp)
		udp_snmp_read(ns_target, &uerr0, &ucsum0);
	t_start = t0 = now();
	if (o.ranges) {
		sin.sin_addr.s_addr = o.dst;
		sent += ranges_burst(raw, &sin);
		target_drain(tfd);
		t0 = now();
	}

	for (i = 0; i < o.count; i++) {
		unsigned int type, mut, k;
		uint32_t msg_len, seed;
		uint16_t dport = o.port;
		size_t n;
		enum outcome out;
		int resum = 1, via_udp = o.udp && chance(UDP_PCT);
		unsigned int um = UMUT_NONE;
		size_t ulen, n_eff;

		if (i % 64 == 0) {
			raw_drain(raw);
			target_drain(tfd);
			if (chance(40))
				target_send(tfd);
		}
		n = build_valid(pkt, &type, &msg_len);
		if (!n)
			die("build failed (type %u)", type);

		r = rnd(100);
		mut = r < 25 ? MUT_NONE : r < 40 ? MUT_BITFLIP :
		      r < 50 ? MUT_TRUNC : r < 58 ? MUT_EXTEND :
		      r < 88 ? MUT_FIELD : r < 95 ? MUT_BADCSUM : MUT_GARBAGE;
		switch (mut) {
		case MUT_BITFLIP:
			for (k = 1 + rnd(8); k; k--)
				pkt[rnd((uint32_t)n)] ^= (uint8_t)(1u << rnd(8));
			resum = chance(75);
			break;
		case MUT_TRUNC:
			n = chance(30) ? rnd(DLCP_HDR_LEN + 1) : rnd((uint32_t)n);
			if (chance(50) && n >= DLCP_HDR_LEN)
				dlcp_put16(pkt + 8, (uint16_t)n);
			break;
		case MUT_EXTEND:
			k = 1 + rnd(chance(50) ? 16 : MAX_PKT - (uint32_t)n);
			if (n + k > MAX_PKT)
				k = MAX_PKT - (uint32_t)n;
			for (r = 0; r < k; r++)
				pkt[n + r] = (uint8_t)rnd32();
			n += k;
			if (chance(60))
				dlcp_put16(pkt + 8, (uint16_t)n);
			if (chance(30))		/* bigger header, as v2 */
				pkt[6] = (uint8_t)(pkt[6] + rnd(k / 4 + 1));
			break;
		case MUT_FIELD:
			for (k = 1 + (chance(20) ? rnd(3) : 0); k; k--)
				n = mutate_field(pkt, n, type, msg_len, max_msg);
			break;
		case MUT_BADCSUM:
			resum = 0;
			break;
		case MUT_GARBAGE:
			n = rnd(MAX_PKT + 1);
			for (r = 0; r < n; r++)
				pkt[r] = (uint8_t)rnd32();
			if (n >= 8 && chance(50)) {
				dlcp_pkt_set_ver_type(pkt, DLCP_VERSION,
						      1 + rnd(5));
				dlcp_put16(pkt + 8, (uint16_t)n);
			}
			resum = chance(50);
			break;
		}
		mut_count[mut]++;
		if (via_udp && n > MAX_PKT_UDP)
			n = MAX_PKT_UDP;

		/* destination port, and the checksum */
		if (n >= 4) {
			if (chance(4)) {
				do
					dport = (uint16_t)rnd32();
				while (dport == o.port || dport == o.avoid_port ||
				       dport == o.peer_port);
			} else if (o.avoid_port && chance(2)) {
				dport = o.avoid_port;
			}
			dlcp_put16(pkt + 2, dport);
		}
		seed = dlcp_csum_pseudo4(o.src, o.dst, IPPROTO_DLCP,
					 (uint16_t)n);
		if (n >= DLCP_HDR_LEN) {
			dlcp_pkt_set_csum(pkt, n, seed);
			if (!resum)
				dlcp_put16(pkt + 10, dlcp_get16(pkt + 10) ^
					   (uint16_t)(1 + rnd(0xfffe)));
		} else if (n >= 2 && resum) {
			dlcp_pkt_fix_csum_at(pkt, n, seed, (n - 2) & ~1ul);
		}

		/* inside UDP: what UDP does to it first */
		ulen = n + 8;
		n_eff = n;
		if (via_udp) {
			r = rnd(100);
			um = r < 5 ? UMUT_BADCSUM : r < 8 ? UMUT_LONGLEN :
			     r < 14 ? UMUT_SHORTLEN : r < 57 ? UMUT_NOCSUM :
			     UMUT_NONE;
			if (um == UMUT_LONGLEN) {
				/* past the datagram, or below the header */
				ulen = chance(25) ? rnd(8) : n + 9 + rnd(64);
			} else if (um == UMUT_SHORTLEN) {
				if (n) {
					ulen = 8 + rnd((uint32_t)n);
					n_eff = ulen - 8;
				} else {
					um = UMUT_NONE;
				}
			}
			seed = dlcp_csum_pseudo4(o.src, o.dst, IPPROTO_DLCP,
						 (uint16_t)n_eff);
		}

		/* what the receiver must do with it */
		r = dlcp_wire_check(pkt, (uint32_t)n_eff, max_msg);
		if (um == UMUT_BADCSUM)
			out = OUT_UDP_CSUM;
		else if (um == UMUT_LONGLEN)
			out = OUT_UDP_LEN;
		else if (r != DLCP_DROP_NONE)
			out = OUT_REASON + r;
		else if (!dlcp_pkt_csum_ok(pkt, n_eff, seed))
			out = OUT_CSUM;
		else if (dport != o.port) {
			if (dport == o.avoid_port) {
				/* never hand the real transfer a packet */
				dport = o.port;
				dlcp_put16(pkt + 2, dport);
				dlcp_pkt_set_csum(pkt, n_eff, seed);
				out = dlcp_wire_type((void *)pkt) - 1;
			} else {
				out = OUT_NOSOCKET;
			}
		} else {
			out = dlcp_wire_type((void *)pkt) - 1;
		}
		if (out <= OUT_NOSOCKET)
			mut_passed[mut]++;

		sin.sin_addr.s_addr = o.dst;
		if ((via_udp ? udp_send(pkt, n, um, ulen, &sin) :
		     sendto(raw, pkt, n, 0, (struct sockaddr *)&sin,
			    sizeof(sin))) != (ssize_t)(n + (via_udp ? 8 : 0))) {
			if (o.verbose || send_err < 5)
				fprintf(stderr, "sendto %zu bytes: %s\n", n,
					strerror(errno));
			send_err++;
			continue;
		}
		sent++;
		expect[out]++;
		if (via_udp) {
			sent_udp++;
			umut_count[um]++;
			if (out != OUT_UDP_CSUM && out != OUT_UDP_LEN)
				sent_udp_passed++;
		}

		/* rate bound */
		if (o.rate && sent % 16 == 0) {
			double due = t0 + (double)sent / o.rate;

			while (now() < due)
				usleep(500);
		}
	}
	t_end = now();
	printf("injected %lu packets in %.1f s (%.0f/s), %lu send errors\n",
	       sent, t_end - t_start, sent / (t_end - t_start + 1e-9),
	       send_err);

	if (o.done_file) {
		FILE *f = fopen(o.done_file, "w");

		if (f)
			fclose(f);
	}
	/* wait for the script's transfer, then for silence */
	if (o.settle_file) {
		struct stat st;
		double until = now() + o.settle;

		while (stat(o.settle_file, &st) && now() < until) {
			raw_drain(raw);
			target_drain(tfd);
			usleep(50000);
		}
	}
	snmp_read(ns_target, &tmp);
	last = snmp_get(&tmp, "DlcpInPkts");
	for (c = 0; c < o.settle * 10; c++) {
		usleep(100000);
		raw_drain(raw);
		target_drain(tfd);
		snmp_read(ns_target, &tmp);
		if (snmp_get(&tmp, "DlcpInPkts") == last && c >= 10)
			break;
		if (snmp_get(&tmp, "DlcpInPkts") != last)
			c = c < 10 ? c : 0;
		last = snmp_get(&tmp, "DlcpInPkts");
	}
	snmp_read(ns_target, &after);
	snmp_read(ns_self, &self_after);
	if (o.udp)
		udp_snmp_read(ns_target, &uerr1, &ucsum1);

	/* report */
	printf("target: %lu messages sent, %lu received (%lu with lost ranges),"
	       " %lu completions; %u of its messages learnt\n",
	       tgt_sent, tgt_recv, tgt_lossy, tgt_compl, nr_known_seen);
	printf("%-10s %9s %16s\n", "mutation", "packets", "passed checks");
	for (i = 0; i < __MUT_MAX; i++)
		printf("%-10s %9lu %16lu\n", mut_name[i], mut_count[i],
		       mut_passed[i]);
	if (o.udp) {
		printf("inside UDP: %lu packets (%lu passed by UDP), %lu as raw "
		       "IP\n", sent_udp, sent_udp_passed, sent - sent_udp);
		for (i = 0; i < __UMUT_MAX; i++)
			printf("  %-14s %9lu\n", umut_name[i], umut_count[i]);
	}

	printf("%-22s %9s %9s\n", "counter", "predicted", "delta");
	for (r = 1; r < __DLCP_DROP_PURE_MAX; r++) {
		const char *name = dlcp_drop_reason_snmp(r);
		int64_t d = delta(&before, &after, name);
		int ok = d == (int64_t)expect[OUT_REASON + r];

		printf("%-22s %9lu %9lld%s\n", name, expect[OUT_REASON + r],
		       (long long)d, ok ? "" : "  MISMATCH");
		fails += !ok;
	}
	{
		int64_t d = delta(&before, &after, "DlcpInCsumErrors");
		int ok = d == (int64_t)expect[OUT_CSUM];

		printf("%-22s %9lu %9lld%s\n", "DlcpInCsumErrors",
		       expect[OUT_CSUM], (long long)d, ok ? "" : "  MISMATCH");
		fails += !ok;
		d = delta(&before, &after, "DlcpDropNoSocket");
		ok = d >= (int64_t)expect[OUT_NOSOCKET];
		printf("%-22s %9lu %9lld%s\n", "DlcpDropNoSocket",
		       expect[OUT_NOSOCKET], (long long)d,
		       ok ? " (>=)" : "  TOO FEW");
		fails += !ok;
	}
	for (r = OUT_DATA; r <= OUT_ABORT; r++) {
		int64_t d = delta(&before, &after, dispatch_ctr[r]);
		int ok = d >= (int64_t)expect[r];

		printf("%-22s %9lu %9lld%s\n", dispatch_ctr[r], expect[r],
		       (long long)d, ok ? " (>=)" : "  TOO FEW");
		fails += !ok;
	}
	{
		static const char *const pre[] = {
			"DlcpInCsumErrors", "DlcpDropNoSocket",
			"DlcpDropClosed", "DlcpDropNotHost", "DlcpDropNoMem",
		};
		static const char *const deeper[] = {
			"DlcpDropRcvMem", "DlcpDropRanges", "DlcpDropMismatch",
			"DlcpDropUnknownMsg", "DlcpInDupPkts",
			"DlcpInLatePkts", "DlcpInMsgs", "DlcpInMsgsExact",
			"DlcpInMsgsLossy", "DlcpInMsgsFailed",
			"DlcpInMsgsTimeout", "DlcpInMsgsAborted",
			"DlcpOutMsgsDone", "DlcpOutMsgsDeadline",
			"DlcpReportsSent", "DlcpStopsSent",
		};
		int64_t in = delta(&before, &after, "DlcpInPkts");
		int64_t sum = 0, out_self, nomem;
		unsigned int j;

		for (r = 1; r < __DLCP_DROP_PURE_MAX; r++)
			sum += delta(&before, &after, dlcp_drop_reason_snmp(r));
		for (j = 0; j < sizeof(pre) / sizeof(pre[0]); j++)
			sum += delta(&before, &after, pre[j]);
		for (r = OUT_DATA; r <= OUT_ABORT; r++)
			sum += delta(&before, &after, dispatch_ctr[r]);
		nomem = delta(&before, &after, "DlcpDropNoMem");
		printf("deeper paths reached (delta):");
		for (j = 0; j < sizeof(deeper) / sizeof(deeper[0]); j++)
			printf("%s %s %lld", j ? "," : "", deeper[j] + 4,
			       (long long)delta(&before, &after, deeper[j]));
		printf("\n");
		printf("DlcpInPkts delta %lld, drops before dispatch + "
		       "dispatched %lld%s\n", (long long)in, (long long)sum,
		       in == sum ? "" : (nomem ? "  (NoMem counted twice?)" :
					  "  MISMATCH"));
		if (in != sum && !nomem)
			fails++;
		int64_t reach = (int64_t)(sent - expect[OUT_UDP_CSUM] -
					  expect[OUT_UDP_LEN]);

		out_self = delta(&self_before, &self_after, "DlcpOutPkts");
		printf("DlcpInPkts delta %lld == injected %lu - dropped by UDP "
		       "%lu + sent by this namespace %lld: %s\n",
		       (long long)in, sent, sent - (unsigned long)reach,
		       (long long)out_self,
		       in == reach + out_self ? "yes" : "NO");
		if (in != reach + out_self)
			fails++;
	}
	if (o.udp) {
		int64_t uin = delta(&before, &after, "DlcpUdpInPkts");
		int64_t uout = delta(&self_before, &self_after, "DlcpUdpOutPkts");
		int64_t wl = (int64_t)(expect[OUT_UDP_CSUM] +
				       expect[OUT_UDP_LEN]);
		int ok = uin == (int64_t)sent_udp_passed + uout;

		printf("DlcpUdpInPkts delta %lld == injected inside UDP and "
		       "passed by UDP %lu + DlcpUdpOutPkts of this namespace "
		       "%lld: %s\n", (long long)uin, sent_udp_passed,
		       (long long)uout, ok ? "yes" : "NO");
		fails += !ok;
		ok = uerr1 - uerr0 == wl;
		printf("%-22s %9lld %9lld%s\n", "Udp InErrors", (long long)wl,
		       (long long)(uerr1 - uerr0), ok ? "" : "  MISMATCH");
		fails += !ok;
		ok = ucsum1 - ucsum0 == (int64_t)expect[OUT_UDP_CSUM];
		printf("%-22s %9lu %9lld%s\n", "Udp InCsumErrors",
		       expect[OUT_UDP_CSUM], (long long)(ucsum1 - ucsum0),
		       ok ? "" : "  MISMATCH");
		fails += !ok;
	}
	printf("lost ranges of delivered messages that do not read as zeros:"
	       " %lu%s\n", tgt_nonzero, tgt_nonzero ? "  FAIL" : "");
	fails += tgt_nonzero != 0;
	close(tfd);
	close(raw);
	if (raw_udp >= 0)
		close(raw_udp);
	printf("%s\n", fails ? "FAIL: see the lines marked above" :
	       "every injected packet accounted for, lost ranges zero");
	return fails ? 1 : 0;
}
