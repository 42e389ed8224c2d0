// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pktfuzz: fuzz packets. Valid packets of every type (for messages
 * kept alive over several packets, and for the target's own outgoing
 * messages, learnt from a raw socket), then mutated: bit flips,
 * truncation, extension, field edge values, wrong checksums, garbage;
 * and, in UDP mode, the UDP layer around them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/ip.h>
#include <sys/socket.h>

#include "pktfuzz.h"

const char *const mut_name[__MUT_MAX] = {
	"valid", "bitflip", "truncate", "extend", "field", "bad-csum",
	"garbage",
};

const char *const umut_name[__UMUT_MAX] = {
	"udp-csum-ok", "udp-csum-zero", "udp-csum-bad", "udp-len-long",
	"udp-len-short",
};

/* ports of real sockets in the target's namespace, never fuzzed */
static uint16_t avoided[8];
static unsigned int nr_avoided;

void gen_avoid_port(uint16_t port)
{
	if (nr_avoided < sizeof(avoided) / sizeof(avoided[0]))
		avoided[nr_avoided++] = port;
}

int gen_port_avoided(uint16_t port)
{
	unsigned int i;

	for (i = 0; i < nr_avoided; i++)
		if (avoided[i] == port)
			return 1;
	return 0;
}

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

void learn(const uint8_t *pkt, ssize_t n)
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

/*
 * Build fuzz packet @pkt: a valid one, mutated (or not), to a port
 * (mostly the target's), checksummed (mostly correctly); inside UDP
 * (@fp->via_udp, set by the caller) with its UDP layer mutated too.
 */
void fuzz_build(uint8_t *pkt, struct fuzz_pkt *fp)
{
	unsigned int type, mut, k, r;
	uint32_t msg_len, seed;
	uint16_t dport = o.port;
	int resum = 1;
	size_t n;

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
			dlcp_pkt_set_ver_type(pkt, DLCP_VERSION, 1 + rnd(5));
			dlcp_put16(pkt + 8, (uint16_t)n);
		}
		resum = chance(50);
		break;
	}
	mut_count[mut]++;
	if (fp->via_udp && n > MAX_PKT_UDP)
		n = MAX_PKT_UDP;

	/* destination port, and the checksum */
	if (n >= 4) {
		if (chance(4)) {
			do
				dport = (uint16_t)rnd32();
			while (dport == o.port || dport == o.avoid_port ||
			       dport == o.peer_port || gen_port_avoided(dport));
		} else if (o.avoid_port && chance(2)) {
			dport = o.avoid_port;
		}
		dlcp_put16(pkt + 2, dport);
	}
	seed = dlcp_csum_pseudo4(o.src, o.dst, IPPROTO_DLCP, (uint16_t)n);
	if (n >= DLCP_HDR_LEN) {
		dlcp_pkt_set_csum(pkt, n, seed);
		if (!resum)
			dlcp_put16(pkt + 10, dlcp_get16(pkt + 10) ^
				   (uint16_t)(1 + rnd(0xfffe)));
	} else if (n >= 2 && resum) {
		dlcp_pkt_fix_csum_at(pkt, n, seed, (n - 2) & ~1ul);
	}

	/* inside UDP: what UDP does to it first */
	fp->um = UMUT_NONE;
	fp->ulen = n + 8;
	fp->n_eff = n;
	if (fp->via_udp) {
		r = rnd(100);
		fp->um = r < 5 ? UMUT_BADCSUM : r < 8 ? UMUT_LONGLEN :
			 r < 14 ? UMUT_SHORTLEN : r < 57 ? UMUT_NOCSUM :
			 UMUT_NONE;
		if (fp->um == UMUT_LONGLEN) {
			/* past the datagram, or below the header */
			fp->ulen = chance(25) ? rnd(8) : n + 9 + rnd(64);
		} else if (fp->um == UMUT_SHORTLEN) {
			if (n) {
				fp->ulen = 8 + rnd((uint32_t)n);
				fp->n_eff = fp->ulen - 8;
			} else {
				fp->um = UMUT_NONE;
			}
		}
	}
	fp->n = n;
	fp->dport = dport;
	fp->mut = mut;
}

/*
 * Send DLCP packet @pkt (@n bytes) inside UDP: @um says what to break,
 * @ulen is the UDP length field. Returns sendto_retry()'s result.
 */
int udp_send(int raw_udp, const uint8_t *pkt, size_t n, unsigned int um,
	     size_t ulen, const struct sockaddr_in *to)
{
	static uint8_t u[MAX_PKT + 64];
	uint16_t c = 0;

	/* a privileged source port: DLCP takes no other (udp_sport_priv) */
	dlcp_put16(u, (uint16_t)(1 + rnd(1023)));
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
	return sendto_retry(raw_udp, u, n + 8, to);
}

/*
 * --ranges N: fragment one message into N disjoint 1-byte pieces (DATA at
 * every other byte, last offset first: the most work for the range set),
 * past the module's limit of ranges per message when N > 8192, then
 * complete it with a PROBE (budget 100%): a delivery with thousands of
 * lost ranges. Returns the packets sent; all count as DATA/PROBE.
 */
unsigned long ranges_burst(int raw, const struct sockaddr_in *to)
{
	struct dlcp_pkt_info pi = { .sport = 21999, .dport = o.port,
				    .msg_id = rnd32(),
				    .msg_len = (uint32_t)o.ranges * 2 + 2 };
	struct dlcp_pkt_data_info di = { .budget_ppm = DLCP_PPM_MAX,
					 .dtype = DLCP_DTYPE_BYTES };
	unsigned long k, n = 0;
	uint8_t pkt[128], one = 0x77;
	double t0 = now();
	size_t len;

	for (k = o.ranges; k-- > 0;) {
		di.offset = (uint32_t)k * 2;
		len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, &one, 1);
		dlcp_pkt_set_csum(pkt, len,
				  dlcp_csum_pseudo4(o.src, o.dst, IPPROTO_DLCP,
						    (uint16_t)len));
		if (sendto_retry(raw, pkt, len, to))
			die("ranges burst: sendto");
		n++;
		expect[OUT_DATA]++;
		if (o.rate && n % 16 == 0)
			sleep_until(t0 + (double)n / o.rate);
	}
	len = dlcp_pkt_build_probe(pkt, sizeof(pkt), &pi, pi.msg_len, 1);
	dlcp_pkt_set_csum(pkt, len, dlcp_csum_pseudo4(o.src, o.dst,
						       IPPROTO_DLCP,
						       (uint16_t)len));
	if (sendto_retry(raw, pkt, len, to))
		die("ranges burst: sendto");
	expect[OUT_PROBE]++;
	printf("ranges burst: message of %u bytes cut into %lu pieces, then "
	       "probed\n", pi.msg_len, o.ranges);
	return n + 1;
}

/* How many of the target's messages the raw sockets saw. */
unsigned int gen_learnt(void)
{
	return nr_known_seen;
}
