// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_wire_fuzz: libFuzzer target for the pure DLCP wire validator
 * dlcp_wire_check() (kmod/dlcp_wire.h) and the userspace packet helpers
 * (userspace/common/dlcp_pkt.c).
 *
 * Build with clang -fsanitize=fuzzer,address,undefined (fuzz/Makefile).
 * Every input is copied into a heap buffer of exactly its size, so that
 * AddressSanitizer catches any read past the packet; UBSan catches
 * overflowing shifts and misaligned accesses. On top of "never crashes",
 * the target checks properties and abort()s when one fails:
 *
 *  1. a packet dlcp_wire_check() accepts has consistent lengths:
 *     DLCP_HDR_LEN <= type's header <= doff * 4 <= len, the length field
 *     equals len, 0 < msg_len <= max_msg; a DATA payload is non-empty and
 *     offset + payload <= msg_len; REPORT gaps fill the payload exactly,
 *     are sorted, non-overlapping, non-empty and end within scan_end <=
 *     msg_len; STOP/PROBE/ABORT carry no payload;
 *  2. the verdict only depends on bytes [0, len): the same packet followed
 *     by garbage gives the same verdict (length field check aside, by
 *     giving the same len);
 *  3. acceptance is monotonic in max_msg;
 *  4. dlcp_pkt_set_csum() makes dlcp_pkt_csum_ok() true, a flipped bit
 *     makes it false, and dlcp_pkt_fix_csum_at() verifies too;
 *  5. the builders never write past the size given, return 0 when the
 *     packet does not fit, and build packets that dlcp_wire_check()
 *     accepts whenever the fields given are in range.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlcp_pkt.h"

#define MAX_MSG_HARD	(1u << 30)

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "property failed: %s (%s:%d)\n",\
				#c, __FILE__, __LINE__);		\
			abort();					\
		}							\
	} while (0)

static void check_accepted(const uint8_t *b, uint32_t len, uint32_t max_msg)
{
	const struct dlcp_hdr *h = (const void *)b;
	unsigned int type = dlcp_wire_type(h);
	uint32_t hlen = (uint32_t)h->doff * 4, msg_len, plen, i, ngaps, prev;

	CHECK(len >= DLCP_HDR_LEN);
	CHECK(dlcp_wire_version(h) == DLCP_VERSION);
	CHECK(type >= DLCP_T_DATA && type < __DLCP_T_MAX);
	CHECK(dlcp_wire_min_hdr(type) >= DLCP_HDR_LEN);
	CHECK(hlen >= dlcp_wire_min_hdr(type) && hlen <= len);
	CHECK(dlcp_get16(b + 8) == len);
	CHECK(!(h->flags & ~DLCP_HF_ALL));
	msg_len = dlcp_get32(b + 16);
	CHECK(msg_len > 0 && msg_len <= max_msg);
	plen = len - hlen;

	switch (type) {
	case DLCP_T_DATA: {
		uint64_t off = dlcp_get32(b + 20);

		CHECK(plen > 0);
		CHECK(off < msg_len);
		CHECK(off + plen <= msg_len);	/* 64-bit: no wrap */
		CHECK(b[38] < __DLCP_DTYPE_MAX);
		CHECK(dlcp_get32(b + 32) <= DLCP_PPM_MAX);
		CHECK(dlcp_get32(b + 48) <= msg_len);
		CHECK(!(dlcp_get16(b + 40) & ~DLCP_MSG_FLAGS_SEND));
		break;
	}
	case DLCP_T_REPORT: {
		uint32_t scan_end = dlcp_get32(b + 24);

		CHECK(dlcp_get32(b + 20) <= msg_len);
		CHECK(scan_end <= msg_len);
		ngaps = dlcp_get16(b + 36);
		CHECK((uint64_t)ngaps * DLCP_GAP_LEN == plen);
		prev = 0;
		for (i = 0; i < ngaps; i++) {
			const uint8_t *g = b + hlen + i * DLCP_GAP_LEN;
			uint32_t s = dlcp_get32(g), e = dlcp_get32(g + 4);

			CHECK(hlen + (i + 1) * DLCP_GAP_LEN <= len);
			CHECK(s >= prev && s < e && e <= scan_end);
			prev = e;
		}
		break;
	}
	case DLCP_T_STOP:
		CHECK(plen == 0);
		CHECK(dlcp_get32(b + 20) <= msg_len);
		break;
	default:
		CHECK(plen == 0);
		CHECK(dlcp_get32(b + 20) <= msg_len);
		break;
	}
}

static void fuzz_validator(const uint8_t *data, size_t size)
{
	static const uint32_t limits[] = {
		1, 4096, 64u << 20, MAX_MSG_HARD, UINT32_MAX,
	};
	uint32_t len = size > 0xffffffffu ? 0xffffffffu : (uint32_t)size;
	enum dlcp_drop_reason r[5], r2;
	uint8_t *pkt, *big;
	unsigned int i;

	/* exactly @size bytes on the heap: ASan sees any overread */
	pkt = malloc(size ? size : 1);
	if (!pkt)
		return;
	memcpy(pkt, data, size);
	for (i = 0; i < 5; i++) {
		r[i] = dlcp_wire_check(pkt, len, limits[i]);
		CHECK(r[i] < __DLCP_DROP_PURE_MAX);
		if (r[i] == DLCP_DROP_NONE)
			check_accepted(pkt, len, limits[i]);
		/* a larger limit never rejects what a smaller accepts */
		if (i && r[i - 1] == DLCP_DROP_NONE)
			CHECK(r[i] == DLCP_DROP_NONE);
		/* only the message-length verdict depends on the limit */
		if (i && r[i] != r[i - 1])
			CHECK(r[i - 1] == DLCP_DROP_MSGLEN);
	}
	/* trailing bytes past len are never looked at */
	big = malloc(size + 64);
	if (big) {
		memcpy(big, data, size);
		memset(big + size, 0xa5, 64);
		r2 = dlcp_wire_check(big, len, 64u << 20);
		CHECK(r2 == r[2]);
		free(big);
	}
	if (size >= DLCP_HDR_LEN) {
		uint32_t seed = dlcp_csum_pseudo4(0x0100000a, 0x0200000a,
						  IPPROTO_DLCP, (uint16_t)size);

		dlcp_pkt_set_csum(pkt, size, seed);
		CHECK(dlcp_pkt_csum_ok(pkt, size, seed));
		/* the verdict ignores the checksum */
		CHECK(dlcp_wire_check(pkt, len, 64u << 20) == r[2]);
		pkt[size - 1] ^= 0x01;
		/* one flipped bit: still verifies only if it hits the other
		 * representation of zero, impossible for a single bit */
		CHECK(!dlcp_pkt_csum_ok(pkt, size, seed));
		pkt[size - 1] ^= 0x01;
	}
	if (size >= 2) {
		size_t off = (data[0] % (size / 2 ? size / 2 : 1)) * 2;
		uint32_t seed = dlcp_csum_pseudo4(0, 0, IPPROTO_DLCP,
						  (uint16_t)size);

		if (off + 2 <= size) {
			CHECK(dlcp_pkt_fix_csum_at(pkt, size, seed, off) == 0);
			CHECK(dlcp_pkt_csum_ok(pkt, size, seed));
		}
		CHECK(dlcp_pkt_fix_csum_at(pkt, size, seed, 1) == -1);
		CHECK(dlcp_pkt_fix_csum_at(pkt, size, seed, size) == -1);
	}
	free(pkt);
}

/* A little reader over the fuzz input, yielding zeros once exhausted. */
struct rd {
	const uint8_t *p;
	size_t n;
};

static uint32_t rd32(struct rd *r)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		v <<= 8;
		if (r->n) {
			v |= *r->p++;
			r->n--;
		}
	}
	return v;
}

static uint8_t rd8(struct rd *r)
{
	return (uint8_t)rd32(r);
}

/* Builders: structured fields from the input. */
static void fuzz_builders(const uint8_t *data, size_t size)
{
	struct rd r = { data, size };
	struct dlcp_pkt_info pi;
	struct dlcp_pkt_data_info di;
	struct dlcp_pkt_report_info ri;
	struct dlcp_pkt_gap gaps[80];
	size_t bufsz, n, plen, ngaps, i, want;
	unsigned int type;
	uint8_t *buf, *payload;
	int in_range;

	type = rd8(&r) % 6;
	bufsz = rd32(&r) % 2048;
	memset(&pi, 0, sizeof(pi));
	pi.sport = (uint16_t)rd32(&r);
	pi.dport = (uint16_t)rd32(&r);
	pi.flags = rd8(&r);
	pi.prio = rd8(&r);
	pi.msg_id = rd32(&r);
	pi.msg_len = rd32(&r);
	/* small message lengths more often */
	if (rd8(&r) & 1)
		pi.msg_len %= 5000;
	buf = malloc(bufsz ? bufsz : 1);
	if (!buf)
		return;
	in_range = pi.msg_len && pi.msg_len <= MAX_MSG_HARD &&
		   !(pi.flags & ~DLCP_HF_ALL);

	switch (type) {
	case 0:
	case 5:	/* DATA */
		memset(&di, 0, sizeof(di));
		di.offset = rd32(&r);
		if (rd8(&r) & 1 && pi.msg_len)
			di.offset %= pi.msg_len;
		di.tensor_id = rd32(&r);
		di.iteration = rd32(&r);
		di.budget_ppm = rd32(&r);
		if (rd8(&r) & 1)
			di.budget_ppm %= DLCP_PPM_MAX + 2;
		di.tsval = rd32(&r);
		di.crit_len = rd32(&r);
		if (rd8(&r) & 1 && pi.msg_len)
			di.crit_len %= (uint64_t)pi.msg_len + 1;
		di.layer = (uint16_t)rd32(&r);
		di.msg_flags = (uint16_t)rd32(&r) & (rd8(&r) & 1 ? 0x3f : 0xffff);
		di.dtype = rd8(&r) % 8;
		plen = rd32(&r) % 1600;
		payload = r.n >= plen ? (uint8_t *)r.p : NULL;
		n = dlcp_pkt_build_data(buf, bufsz, &pi, &di, payload, plen);
		want = DLCP_DATA_HDR_LEN + plen;
		CHECK(n == 0 || n == want);
		if (want <= bufsz && want <= 0xffff)
			CHECK(n == want);
		in_range = in_range && plen && di.offset < pi.msg_len &&
			   plen <= pi.msg_len - di.offset &&
			   di.dtype < __DLCP_DTYPE_MAX &&
			   di.budget_ppm <= DLCP_PPM_MAX &&
			   di.crit_len <= pi.msg_len &&
			   !(di.msg_flags & ~DLCP_MSG_FLAGS_SEND);
		if (n && payload)
			CHECK(!memcmp(buf + DLCP_DATA_HDR_LEN, payload, plen));
		break;
	case 1:	/* REPORT */
		memset(&ri, 0, sizeof(ri));
		ri.rcvd = rd32(&r);
		ri.scan_end = rd32(&r);
		if (rd8(&r) & 1 && pi.msg_len) {
			ri.rcvd %= (uint64_t)pi.msg_len + 1;
			ri.scan_end %= (uint64_t)pi.msg_len + 1;
		}
		ri.tsecr = rd32(&r);
		ri.ce_bytes = rd32(&r);
		ri.rflags = rd8(&r) & (rd8(&r) & 1 ? DLCP_RF_ALL : 0xff);
		ngaps = rd8(&r) % 80;
		{
			uint32_t pos = 0;
			uint64_t step = (uint64_t)ri.scan_end / (ngaps + 1) + 1;
			int sorted = rd8(&r) & 1;

			for (i = 0; i < ngaps; i++) {
				if (sorted) {
					gaps[i].start = pos;
					gaps[i].end = (uint32_t)(pos + rd32(&r) % step + 1);
					pos = (uint32_t)(gaps[i].end + rd32(&r) % step);
				} else {
					gaps[i].start = rd32(&r);
					gaps[i].end = rd32(&r);
				}
			}
		}
		n = dlcp_pkt_build_report(buf, bufsz, &pi, &ri, gaps, ngaps);
		want = DLCP_REPORT_HDR_LEN + ngaps * DLCP_GAP_LEN;
		CHECK(n == 0 || n == want);
		if (want <= bufsz)
			CHECK(n == want);
		in_range = in_range && ri.rcvd <= pi.msg_len &&
			   ri.scan_end <= pi.msg_len && !(ri.rflags & ~DLCP_RF_ALL);
		{
			uint32_t prev = 0;

			for (i = 0; i < ngaps && in_range; i++) {
				if (gaps[i].start < prev ||
				    gaps[i].end <= gaps[i].start ||
				    gaps[i].end > ri.scan_end)
					in_range = 0;
				prev = gaps[i].end;
			}
		}
		break;
	case 2:	/* STOP */
		want = DLCP_STOP_HDR_LEN;
		{
			uint32_t lost = rd32(&r);

			n = dlcp_pkt_build_stop(buf, bufsz, &pi, lost, rd32(&r));
			in_range = in_range && lost <= pi.msg_len;
		}
		CHECK(n == (want <= bufsz ? want : 0));
		break;
	default: /* PROBE, ABORT */
		want = DLCP_PROBE_HDR_LEN;
		{
			uint32_t sent = rd32(&r);

			if (type == 3)
				n = dlcp_pkt_build_probe(buf, bufsz, &pi, sent,
							 rd32(&r));
			else
				n = dlcp_pkt_build_abort(buf, bufsz, &pi, sent,
							 rd32(&r));
			in_range = in_range && sent <= pi.msg_len;
		}
		CHECK(n == (want <= bufsz ? want : 0));
		break;
	}
	if (n) {
		enum dlcp_drop_reason why = dlcp_wire_check(buf, n, MAX_MSG_HARD);

		if (in_range && why != DLCP_DROP_NONE) {
			fprintf(stderr, "builder type %u: valid fields rejected: %d\n",
				type, why);
			abort();
		}
		if (!in_range)
			CHECK(why != DLCP_DROP_NONE);
		else
			check_accepted(buf, n, MAX_MSG_HARD);
		dlcp_pkt_finish4(buf, n, 0x0100000a, 0x0200000a);
		CHECK(dlcp_pkt_csum_ok(buf, n,
				       dlcp_csum_pseudo4(0x0100000a, 0x0200000a,
							 IPPROTO_DLCP,
							 (uint16_t)n)));
		/* and mutate the version/type byte */
		dlcp_pkt_set_ver_type(buf, rd8(&r) & 15, rd8(&r) & 15);
		why = dlcp_wire_check(buf, n, MAX_MSG_HARD);
		if (why == DLCP_DROP_NONE)
			check_accepted(buf, n, MAX_MSG_HARD);
	}
	for (i = 0; i < 24; i++) {
		const char *name = dlcp_drop_reason_snmp(i);

		CHECK((i == 0 || i >= __DLCP_DROP_PURE_MAX) || name);
		if (name)
			CHECK(!strncmp(name, "Dlcp", 4));
	}
	CHECK(dlcp_dtype_size(rd8(&r)) <= 4);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the same input drives both: raw bytes, and builder parameters */
	fuzz_validator(data, size);
	fuzz_builders(data, size);
	return 0;
}
