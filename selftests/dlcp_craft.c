// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_craft - write a pcap of crafted DLCP packets for the dissector test
 * (dlcp_dissector.sh): 4 good packets (DATA, REPORT, STOP, PROBE), one of
 * each fault the dissector reports, the first DATA packet again in UDP
 * encapsulation, and a super-packet of 3 DATA packets as a capture on the
 * host that sent it shows one (net.dlcp.gso). The packets are built with the wire format's own builders
 * (userspace/common/dlcp_pkt.h over kmod/dlcp_wire.h), and each is checked
 * against the module's validator, dlcp_wire_check(): a packet the test
 * calls malformed must be one the module drops for that reason.
 *
 *   dlcp_craft FILE.pcap
 *
 * Raw IPv4 link type, 10.0.0.1 -> 10.0.0.2. Prints one line per packet
 * (number, the validator's verdict) and exits 1 if a verdict is not the
 * expected one.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dlcp_pkt.h"

#define MSG_LEN		3000
#define MSG_ID		0x1234
#define SPORT		1000
#define DPORT		7000
#define UDP_PORT	9253
#define PKT_MAX		2048
#define LINKTYPE_RAW	101

struct crafted {
	uint8_t ip[PKT_MAX];
	size_t len;
	uint32_t src, dst;
};

static uint32_t addr_a, addr_b;

/*
 * Put an IPv4 header (DF, TTL 64, @proto) in front of the @dlen bytes at
 * p->ip + 20, from @src to @dst.
 */
static void ipv4(struct crafted *p, uint32_t src, uint32_t dst, size_t dlen,
		 uint8_t proto)
{
	uint8_t *h = p->ip;

	memset(h, 0, 20);
	h[0] = 0x45;
	dlcp_put16(h + 2, (uint16_t)(20 + dlen));
	dlcp_put16(h + 4, 1);
	dlcp_put16(h + 6, 0x4000);
	h[8] = 64;
	h[9] = proto;
	memcpy(h + 12, &src, 4);
	memcpy(h + 16, &dst, 4);
	dlcp_put16(h + 10, dlcp_csum_finish(dlcp_csum_add(0, h, 20)));
	p->len = 20 + dlen;
	p->src = src;
	p->dst = dst;
}

/* The DLCP packet of @p (after its IPv4 header). */
static uint8_t *dl(struct crafted *p)
{
	return p->ip + 20;
}

static const struct dlcp_pkt_info info_ab = {
	.sport = SPORT, .dport = DPORT, .msg_id = MSG_ID, .msg_len = MSG_LEN,
};
static const struct dlcp_pkt_info info_ba = {
	.sport = DPORT, .dport = SPORT, .msg_id = MSG_ID, .msg_len = MSG_LEN,
};

/* Checksum the @dlen-byte DLCP packet of @p and add the IPv4 header. */
static void finish(struct crafted *p, uint32_t src, uint32_t dst, size_t dlen)
{
	dlcp_pkt_finish4(dl(p), dlen, src, dst);
	ipv4(p, src, dst, dlen, IPPROTO_DLCP);
}

/* A DATA packet A -> B of @plen bytes at @off, fields as in @pi. */
static size_t data(struct crafted *p, const struct dlcp_pkt_info *pi,
		   uint32_t off, size_t plen, uint8_t dtype)
{
	const struct dlcp_pkt_data_info di = {
		.offset = off, .tensor_id = 5, .iteration = 9,
		.budget_ppm = 1000, .layer = 3, .dtype = dtype,
		.msg_flags = DLCP_MSG_HAS_BUDGET, .tsval = 123,
	};
	uint8_t payload[PKT_MAX];

	memset(payload, 'x', plen);
	return dlcp_pkt_build_data(dl(p), PKT_MAX - 20, pi, &di, payload, plen);
}

/* A REPORT B -> A of the message with @n gaps. */
static size_t report(struct crafted *p, const struct dlcp_pkt_gap *gaps,
		     size_t n)
{
	const struct dlcp_pkt_report_info ri = { .scan_end = MSG_LEN };

	return dlcp_pkt_build_report(dl(p), PKT_MAX - 20, &info_ba, &ri,
				     gaps, n);
}

static void data_ab(struct crafted *p, const struct dlcp_pkt_info *pi,
		    uint32_t off, size_t plen, uint8_t dtype)
{
	finish(p, addr_a, addr_b, data(p, pi, off, plen, dtype));
}

#define NR_PKTS 16
#define SUPER	16

int main(int argc, char **argv)
{
	static const struct dlcp_pkt_gap good_gap[] = { { 1428, 2856 } };
	static const struct dlcp_pkt_gap bad_gaps[] = { { 50, 60 }, { 40, 70 } };
	static struct crafted pkts[NR_PKTS + 1];
	/* the validator's verdict on each packet; 0: none expected */
	static const enum dlcp_drop_reason want[NR_PKTS + 1] = {
		[6] = DLCP_DROP_VERSION, [7] = DLCP_DROP_TYPE,
		[8] = DLCP_DROP_FLAGS, [9] = DLCP_DROP_OFFSET,
		[10] = DLCP_DROP_GAPS, [11] = DLCP_DROP_HDRLEN,
		[12] = DLCP_DROP_LEN, [13] = DLCP_DROP_MSGLEN,
	};
	struct dlcp_pkt_info pi = info_ab;
	uint32_t hdr[6] = { 0xa1b2c3d4, 2 | (4 << 16), 0, 0, 65535,
			    LINKTYPE_RAW };
	int i, rc = 0;
	size_t n;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE.pcap\n", argv[0]);
		return 2;
	}
	inet_pton(AF_INET, "10.0.0.1", &addr_a);
	inet_pton(AF_INET, "10.0.0.2", &addr_b);

	/* 1-4: good DATA, REPORT, STOP, PROBE */
	data_ab(&pkts[1], &info_ab, 0, 1428, DLCP_DTYPE_FP32);
	finish(&pkts[2], addr_b, addr_a, report(&pkts[2], good_gap, 1));
	finish(&pkts[3], addr_b, addr_a,
	       dlcp_pkt_build_stop(dl(&pkts[3]), PKT_MAX, &info_ba, 0, 1));
	finish(&pkts[4], addr_a, addr_b,
	       dlcp_pkt_build_probe(dl(&pkts[4]), PKT_MAX, &info_ab, MSG_LEN,
				    1));
	/* 5: bad checksum */
	data_ab(&pkts[5], &info_ab, 0, 1428, DLCP_DTYPE_FP32);
	dl(&pkts[5])[10] ^= 0x01;
	dl(&pkts[5])[11] ^= 0x01;
	/* 6: version 2 */
	n = data(&pkts[6], &info_ab, 0, 100, DLCP_DTYPE_FP32);
	dlcp_pkt_set_ver_type(dl(&pkts[6]), 2, DLCP_T_DATA);
	finish(&pkts[6], addr_a, addr_b, n);
	/* 7: unknown type 9 (a PROBE-sized header) */
	n = dlcp_pkt_build_probe(dl(&pkts[7]), PKT_MAX, &info_ab, 0, 0);
	dlcp_pkt_set_ver_type(dl(&pkts[7]), DLCP_VERSION, 9);
	finish(&pkts[7], addr_a, addr_b, n);
	/* 8: an unknown header flag */
	pi.flags = 0x80;
	data_ab(&pkts[8], &pi, 0, 100, DLCP_DTYPE_FP32);
	/* 9: payload past the end of the message */
	data_ab(&pkts[9], &info_ab, MSG_LEN - 10, 100, DLCP_DTYPE_FP32);
	/* 10: report gaps out of order */
	finish(&pkts[10], addr_b, addr_a, report(&pkts[10], bad_gaps, 2));
	/* 11: header words 3 */
	n = data(&pkts[11], &info_ab, 0, 100, DLCP_DTYPE_FP32);
	((struct dlcp_hdr *)dl(&pkts[11]))->doff = 3;
	finish(&pkts[11], addr_a, addr_b, n);
	/* 12: length field 99 */
	n = data(&pkts[12], &info_ab, 0, 100, DLCP_DTYPE_FP32);
	dlcp_put16(&((struct dlcp_hdr *)dl(&pkts[12]))->len, 99);
	finish(&pkts[12], addr_a, addr_b, n);
	/* 13: message length zero */
	pi = info_ab;
	pi.msg_len = 0;
	data_ab(&pkts[13], &pi, 0, 100, DLCP_DTYPE_FP32);
	/* 14: 102 bytes of fp32, not whole elements */
	data_ab(&pkts[14], &info_ab, 0, 102, DLCP_DTYPE_FP32);
	/* 15: packet 1 in UDP (checksum 0), source port 40000 */
	n = pkts[1].len - 20;
	memcpy(dl(&pkts[15]) + 8, dl(&pkts[1]), n);
	dlcp_put16(dl(&pkts[15]), 40000);
	dlcp_put16(dl(&pkts[15]) + 2, UDP_PORT);
	dlcp_put16(dl(&pkts[15]) + 4, (uint16_t)(8 + n));
	dlcp_put16(dl(&pkts[15]) + 6, 0);
	ipv4(&pkts[15], addr_a, addr_b, 8 + n, IPPROTO_UDP);
	/*
	 * 16: a super-packet: the header of a 100-byte packet, the payload of
	 * 3, and in the checksum field that packet's pseudo-header sum, which
	 * the device (or GSO) completes for each packet cut from it
	 */
	n = data(&pkts[SUPER], &info_ab, 0, 300, DLCP_DTYPE_FP32);
	dlcp_put16(&((struct dlcp_hdr *)dl(&pkts[SUPER]))->len,
		   DLCP_DATA_HDR_LEN + 100);
	dlcp_put16(&((struct dlcp_hdr *)dl(&pkts[SUPER]))->check,
		   dlcp_csum_fold(dlcp_csum_pseudo4(addr_a, addr_b, IPPROTO_DLCP,
						    DLCP_DATA_HDR_LEN + 100)));
	ipv4(&pkts[SUPER], addr_a, addr_b, n, IPPROTO_DLCP);

	for (i = 1; i <= NR_PKTS; i++) {
		const struct crafted *p = &pkts[i];
		const uint8_t *d = p->ip + 20 + (i == 15 ? 8 : 0);
		uint32_t dlen = (uint32_t)p->len - (uint32_t)(d - p->ip);
		enum dlcp_drop_reason got;
		int csum_ok;

		if (i == SUPER) {
			printf("packet %d: super-packet of %u\n", i,
			       dlcp_wire_gso_segs(d, dlen));
			if (dlcp_wire_gso_segs(d, dlen) != 3 ||
			    dlcp_wire_check(d, DLCP_DATA_HDR_LEN + 100,
					    UINT32_MAX))
				rc = 1;
			continue;
		}
		got = dlcp_wire_check(d, dlen, UINT32_MAX);
		csum_ok = dlcp_pkt_csum_ok(d, dlen,
					   dlcp_csum_pseudo4(p->src, p->dst,
							     IPPROTO_DLCP,
							     (uint16_t)dlen));
		printf("packet %d: %s, checksum %s\n", i,
		       got ? dlcp_drop_reason_snmp(got) : "well formed",
		       csum_ok ? "good" : "bad");
		if (got != want[i] || csum_ok != (i != 5)) {
			printf("packet %d: expected %s, checksum %s\n", i,
			       want[i] ? dlcp_drop_reason_snmp(want[i]) :
			       "well formed", i != 5 ? "good" : "bad");
			rc = 1;
		}
	}

	f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fwrite(hdr, sizeof(hdr), 1, f);
	for (i = 1; i <= NR_PKTS; i++) {
		uint32_t rec[4] = { 0, 0, (uint32_t)pkts[i].len,
				    (uint32_t)pkts[i].len };

		fwrite(rec, sizeof(rec), 1, f);
		fwrite(pkts[i].ip, pkts[i].len, 1, f);
	}
	if (fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	return rc;
}
