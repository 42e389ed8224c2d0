// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the DLCP wire validator, dlcp_wire_check() from
 * <linux/dlcp.h>, and of the userspace packet builder dlcp_pkt.
 *
 * Every buffer handed to dlcp_wire_check() is a heap copy of exactly the
 * length passed, so that an out-of-bounds read shows up under AddressSanitizer
 * (the Makefile builds with -fsanitize=address,undefined by default).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dlcp_pkt.h"

#define MAX_MSG		(64u << 20)	/* net.dlcp.max_msg_size default */
#define BUF_SIZE	2048

/* The highest header flag bit the protocol does not define. */
#define HF_UNKNOWN \
	(0x80 & ~DLCP_HF_ALL ? 0x80 : 0x40 & ~DLCP_HF_ALL ? 0x40 : 0)
_Static_assert(HF_UNKNOWN, "no unknown header flag left to test with");

/* Network byte order addresses 10.77.0.1 and 10.77.0.2, host independent. */
static uint32_t addr4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint8_t v[4] = { a, b, c, d };
	uint32_t r;

	memcpy(&r, v, 4);
	return r;
}

/* dlcp_wire_check() on an exact-size heap copy of @pkt[0..len). */
static enum dlcp_drop_reason check_len(const void *pkt, size_t len,
				       uint32_t max_msg)
{
	enum dlcp_drop_reason r;
	void *copy = malloc(len ? len : 1);

	assert_non_null(copy);
	memcpy(copy, pkt, len);
	r = dlcp_wire_check(copy, (uint32_t)len, max_msg);
	free(copy);
	return r;
}

static enum dlcp_drop_reason check(const void *pkt, size_t len)
{
	return check_len(pkt, len, MAX_MSG);
}

static const struct dlcp_pkt_info base_info = {
	.sport = 4000,
	.dport = 5000,
	.flags = DLCP_HF_ACKREQ,
	.prio = 3,
	.msg_id = 77,
	.msg_len = 1000,
};

static const struct dlcp_pkt_data_info base_data = {
	.offset = 0,
	.tensor_id = 0xdeadbeef,
	.iteration = 42,
	.budget_ppm = 0,
	.tsval = 123456,
	.layer = 7,
	.msg_flags = DLCP_MSG_HAS_LAYER,
	.dtype = DLCP_DTYPE_FP32,
};

/* A valid DATA packet: 100 payload bytes at @offset of a @msg_len message. */
static size_t mk_data(uint8_t *buf, uint32_t msg_len, uint32_t offset,
		      size_t plen)
{
	struct dlcp_pkt_info pi = base_info;
	struct dlcp_pkt_data_info di = base_data;
	uint8_t payload[BUF_SIZE];
	size_t i, len;

	for (i = 0; i < plen && i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	pi.msg_len = msg_len;
	di.offset = offset;
	len = dlcp_pkt_build_data(buf, BUF_SIZE, &pi, &di, payload, plen);
	assert_int_equal(len, DLCP_DATA_HDR_LEN + plen);
	return len;
}

static size_t mk_report(uint8_t *buf, uint32_t msg_len, uint32_t scan_end,
			const struct dlcp_pkt_gap *gaps, size_t ngaps)
{
	struct dlcp_pkt_info pi = base_info;
	struct dlcp_pkt_report_info ri = {
		.rcvd = 0, .scan_end = scan_end, .tsecr = 5, .ce_bytes = 0,
	};
	size_t len;

	pi.msg_len = msg_len;
	len = dlcp_pkt_build_report(buf, BUF_SIZE, &pi, &ri, gaps, ngaps);
	assert_int_equal(len, DLCP_REPORT_HDR_LEN + ngaps * DLCP_GAP_LEN);
	return len;
}

/* ------------------------------------------------------------------ */
/* Checksum                                                             */
/* ------------------------------------------------------------------ */

/* RFC 1071 section 3 example: words 0001 f203 f4f5 f6f7 sum to ddf2. */
static void test_csum_rfc1071(void **state)
{
	static const uint8_t v[] = { 0x00, 0x01, 0xf2, 0x03,
				     0xf4, 0xf5, 0xf6, 0xf7 };

	(void)state;
	assert_int_equal(dlcp_csum_fold(dlcp_csum_add(0, v, sizeof(v))),
			 0xddf2);
	assert_int_equal(dlcp_csum_finish(dlcp_csum_add(0, v, sizeof(v))),
			 0x220d);
	/* The sum is independent of how the (even) pieces are split. */
	assert_int_equal(dlcp_csum_fold(dlcp_csum_add(dlcp_csum_add(0, v, 2),
						      v + 2, 6)), 0xddf2);
}

static void test_csum_odd_length(void **state)
{
	static const uint8_t v[] = { 0x01, 0x02, 0x03 };

	(void)state;
	/* 0x0102 + 0x0300 (odd byte padded with zero) = 0x0402 */
	assert_int_equal(dlcp_csum_fold(dlcp_csum_add(0, v, 3)), 0x0402);
	assert_int_equal(dlcp_csum_finish(dlcp_csum_add(0, v, 3)), 0xfbfd);
	assert_int_equal(dlcp_csum_fold(dlcp_csum_add(0, v, 0)), 0);
}

static void test_csum_carry_fold(void **state)
{
	uint8_t v[4096];
	uint32_t sum;

	(void)state;
	/* 2048 words of 0xffff: one's complement sum stays 0xffff. */
	memset(v, 0xff, sizeof(v));
	sum = dlcp_csum_add(0, v, sizeof(v));
	assert_int_equal(dlcp_csum_fold(sum), 0xffff);
	assert_int_equal(dlcp_csum_finish(sum), 0);
	/* 0x8000 + 0x8000 = 0x10000 -> folds to 0x0001. */
	v[0] = 0x80; v[1] = 0; v[2] = 0x80; v[3] = 0;
	assert_int_equal(dlcp_csum_fold(dlcp_csum_add(0, v, 4)), 0x0001);
}

/*
 * Known answer, computed by hand:
 *   PROBE 10.77.0.1:0x1234 -> 10.77.0.2:0x5678, msg_id 1, msg_len 16,
 *   sent 16, tsval 0, 28 bytes.
 *   header words: 1234 5678 1400 0700 001c 0000 0000 0001 0000 0010
 *                 0000 0010 0000 0000              sum = 83e9
 *   pseudo-header: 0a4d 0001 0a4d 0002 00fd 001c    sum = 15b6
 *   total 999f, checksum ~999f = 6660.
 */
static void test_csum_known_answer(void **state)
{
	static const uint8_t expect[28] = {
		0x12, 0x34, 0x56, 0x78, 0x14, 0x00, 0x07, 0x00,
		0x00, 0x1c, 0x66, 0x60, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x10,
		0x00, 0x00, 0x00, 0x00,
	};
	struct dlcp_pkt_info pi = {
		.sport = 0x1234, .dport = 0x5678, .msg_id = 1, .msg_len = 16,
	};
	uint32_t sa = addr4(10, 77, 0, 1), da = addr4(10, 77, 0, 2);
	uint8_t buf[64];
	size_t len;

	(void)state;
	assert_int_equal(dlcp_csum_pseudo4(sa, da, IPPROTO_DLCP, 28), 0x15b6);
	len = dlcp_pkt_build_probe(buf, sizeof(buf), &pi, 16, 0);
	assert_int_equal(len, 28);
	dlcp_pkt_finish4(buf, len, sa, da);
	assert_memory_equal(buf, expect, sizeof(expect));
	assert_true(dlcp_pkt_csum_ok(buf, len,
				     dlcp_csum_pseudo4(sa, da, IPPROTO_DLCP,
						       28)));
	/* Swapping the addresses keeps the sum (addition commutes)... */
	assert_true(dlcp_pkt_csum_ok(buf, len,
				     dlcp_csum_pseudo4(da, sa, IPPROTO_DLCP,
						       28)));
	/* ...another address, protocol or length does not. */
	assert_false(dlcp_pkt_csum_ok(buf, len,
				      dlcp_csum_pseudo4(sa, addr4(10, 77, 0, 3),
							IPPROTO_DLCP, 28)));
	assert_false(dlcp_pkt_csum_ok(buf, len,
				      dlcp_csum_pseudo4(sa, da, 17, 28)));
	assert_false(dlcp_pkt_csum_ok(buf, len,
				      dlcp_csum_pseudo4(sa, da, IPPROTO_DLCP,
							29)));
}

static void test_csum_pseudo6(void **state)
{
	uint8_t sa[16] = { 0xfd, 0x00, [15] = 1 };
	uint8_t da[16] = { 0xfd, 0x00, [14] = 0x12, [15] = 2 };
	uint8_t ph[40] = { 0 };

	(void)state;
	/* RFC 8200 section 8.1 pseudo-header, laid out explicitly. */
	memcpy(ph, sa, 16);
	memcpy(ph + 16, da, 16);
	dlcp_put32(ph + 32, 70000);
	ph[39] = IPPROTO_DLCP;
	assert_int_equal(dlcp_csum_pseudo6(sa, da, IPPROTO_DLCP, 70000),
			 dlcp_csum_add(0, ph, sizeof(ph)));
	/*
	 * By hand: fd00 + 0001 (saddr) + fd00 + 1202 (daddr)
	 *	    + 0001 + 1170 (length 70000) + 00fd (next header)
	 *	    = 2_1e71 -> folds to 1e73.
	 */
	assert_int_equal(dlcp_csum_fold(dlcp_csum_pseudo6(sa, da, IPPROTO_DLCP,
							  70000)), 0x1e73);
}

/* Every single-bit flip of a checksummed packet is detected. */
static void test_csum_detects_bit_flips(void **state)
{
	uint32_t seed = dlcp_csum_pseudo4(addr4(127, 0, 0, 1),
					  addr4(127, 0, 0, 1), IPPROTO_DLCP,
					  DLCP_DATA_HDR_LEN + 64);
	uint8_t buf[BUF_SIZE];
	size_t len, bit;

	(void)state;
	len = mk_data(buf, 1000, 0, 64);
	dlcp_pkt_set_csum(buf, len, seed);
	assert_true(dlcp_pkt_csum_ok(buf, len, seed));
	for (bit = 0; bit < len * 8; bit++) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_false(dlcp_pkt_csum_ok(buf, len, seed));
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	assert_true(dlcp_pkt_csum_ok(buf, len, seed));
}

/* A zero checksum field is not special: it fails unless the sum says so. */
static void test_csum_zero_not_special(void **state)
{
	uint32_t seed = dlcp_csum_pseudo4(addr4(127, 0, 0, 1),
					  addr4(127, 0, 0, 1), IPPROTO_DLCP,
					  DLCP_DATA_HDR_LEN + 16);
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_data(buf, 1000, 0, 16);
	dlcp_pkt_set_csum(buf, len, seed);
	assert_int_not_equal(dlcp_get16(buf + 10), 0);
	dlcp_put16(buf + 10, 0);
	assert_false(dlcp_pkt_csum_ok(buf, len, seed));
}

static void test_csum_fix_at(void **state)
{
	uint32_t seed = dlcp_csum_pseudo4(addr4(127, 0, 0, 1),
					  addr4(127, 0, 0, 1), IPPROTO_DLCP, 11);
	uint8_t buf[11] = { 0x10, 0x20, 0x30, 0x40, 0x14, 0, 0, 0, 0, 11, 7 };

	(void)state;
	assert_int_equal(dlcp_pkt_fix_csum_at(buf, sizeof(buf), seed, 3), -1);
	assert_int_equal(dlcp_pkt_fix_csum_at(buf, sizeof(buf), seed, 10), -1);
	assert_int_equal(dlcp_pkt_fix_csum_at(buf, sizeof(buf), seed, 8), 0);
	assert_true(dlcp_pkt_csum_ok(buf, sizeof(buf), seed));
	assert_int_equal(buf[10], 7);	/* odd tail untouched */
}

/* ------------------------------------------------------------------ */
/* Builders                                                             */
/* ------------------------------------------------------------------ */

/* The DATA layout, pinned byte by byte: a uapi change must show here. */
static void test_build_data_layout(void **state)
{
	static const uint8_t expect_hdr[DLCP_DATA_HDR_LEN] = {
		0x0f, 0xa0, 0x13, 0x88,		/* ports 4000, 5000 */
		0x11, 0x01, 13, 3,		/* v1 DATA, ACKREQ, doff, prio */
		0x00, 0x38, 0x00, 0x00,		/* len 56, check 0 */
		0x00, 0x00, 0x00, 77,		/* msg_id */
		0x00, 0x00, 0x03, 0xe8,		/* msg_len 1000 */
		0x00, 0x00, 0x00, 0x08,		/* offset */
		0xde, 0xad, 0xbe, 0xef,		/* tensor_id */
		0x00, 0x00, 0x00, 42,		/* iteration */
		0x00, 0x00, 0x00, 0x00,		/* budget */
		0x00, 0x07, 0x01, 0x00,		/* layer, dtype FP32, rsvd */
		0x00, 0x04, 0x00, 0x00,		/* msg_flags HAS_LAYER, rsvd */
		0x00, 0x01, 0xe2, 0x40,		/* tsval 123456 */
		0x00, 0x00, 0x01, 0x2c,		/* crit_len 300 */
	};
	struct dlcp_pkt_info pi = base_info;
	struct dlcp_pkt_data_info di = base_data;
	static const uint8_t payload[4] = { 1, 8, 15, 22 };
	const struct dlcp_data_hdr *d;
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	di.offset = 8;
	di.crit_len = 300;
	len = dlcp_pkt_build_data(buf, sizeof(buf), &pi, &di, payload, 4);
	assert_int_equal(len, 56);
	assert_memory_equal(buf, expect_hdr, sizeof(expect_hdr));
	assert_memory_equal(buf + DLCP_DATA_HDR_LEN, payload, 4);
	/* And the uapi struct sees the same fields. */
	d = (const struct dlcp_data_hdr *)buf;
	assert_int_equal(dlcp_wire_version(&d->common), DLCP_VERSION);
	assert_int_equal(dlcp_wire_type(&d->common), DLCP_T_DATA);
	assert_int_equal(dlcp_wire_get32(&d->offset), 8);
	assert_int_equal(dlcp_wire_get16(&d->layer), 7);
	assert_int_equal(d->dtype, DLCP_DTYPE_FP32);
	assert_int_equal(dlcp_wire_get32(&d->crit_len), 300);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
}

static void test_build_report_layout(void **state)
{
	static const struct dlcp_pkt_gap gaps[2] = {
		{ 100, 200 }, { 300, 0x01020304 },
	};
	const struct dlcp_report_hdr *r;
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_report(buf, 0x02000000, 0x01020304, gaps, 2);
	assert_int_equal(len, 56);
	r = (const struct dlcp_report_hdr *)buf;
	assert_int_equal(dlcp_wire_type(&r->common), DLCP_T_REPORT);
	assert_int_equal(r->common.doff, 10);
	assert_int_equal(dlcp_wire_get16(&r->ngaps), 2);
	assert_int_equal(dlcp_wire_get32(&r->scan_end), 0x01020304);
	assert_int_equal(dlcp_get32(buf + 40), 100);
	assert_int_equal(dlcp_get32(buf + 44), 200);
	assert_int_equal(dlcp_get32(buf + 48), 300);
	assert_int_equal(buf[52], 0x01);
	assert_int_equal(buf[55], 0x04);
}

static void test_build_small_types_layout(void **state)
{
	struct dlcp_pkt_info pi = base_info;
	uint8_t buf[BUF_SIZE];

	(void)state;
	assert_int_equal(dlcp_pkt_build_stop(buf, sizeof(buf), &pi, 9, 10), 28);
	assert_int_equal(buf[4], 0x13);
	assert_int_equal(buf[6], 7);
	assert_int_equal(dlcp_get32(buf + 20), 9);
	assert_int_equal(dlcp_get32(buf + 24), 10);
	assert_int_equal(dlcp_pkt_build_probe(buf, sizeof(buf), &pi, 11, 12),
			 28);
	assert_int_equal(buf[4], 0x14);
	assert_int_equal(dlcp_get32(buf + 20), 11);
	assert_int_equal(dlcp_pkt_build_abort(buf, sizeof(buf), &pi, 13, 14),
			 28);
	assert_int_equal(buf[4], 0x15);
	assert_int_equal(dlcp_get32(buf + 24), 14);
	assert_int_equal(dlcp_get16(buf + 8), 28);
}

static void test_build_too_small(void **state)
{
	struct dlcp_pkt_info pi = base_info;
	struct dlcp_pkt_data_info di = base_data;
	uint8_t buf[BUF_SIZE];
	uint8_t *big;

	(void)state;
	assert_int_equal(dlcp_pkt_build_data(buf, DLCP_DATA_HDR_LEN + 9, &pi,
					     &di, NULL, 10), 0);
	assert_int_equal(dlcp_pkt_build_data(buf, DLCP_DATA_HDR_LEN + 10, &pi,
					     &di, NULL, 10),
			 DLCP_DATA_HDR_LEN + 10);
	assert_int_equal(dlcp_pkt_build_probe(buf, 27, &pi, 0, 0), 0);
	assert_int_equal(dlcp_pkt_build_stop(buf, 27, &pi, 0, 0), 0);
	assert_int_equal(dlcp_pkt_build_abort(buf, 27, &pi, 0, 0), 0);
	assert_int_equal(dlcp_pkt_build_report(buf, 40 + 7, &pi,
					       &(struct dlcp_pkt_report_info){ 0 },
					       (struct dlcp_pkt_gap[1]){ { 0, 1 } },
					       1), 0);
	/* The 16-bit length field caps a packet at 65535 bytes. */
	big = calloc(1, 70000);
	assert_non_null(big);
	assert_int_equal(dlcp_pkt_build_data(big, 70000, &pi, &di, NULL,
					     65535 - DLCP_DATA_HDR_LEN), 65535);
	assert_int_equal(dlcp_pkt_build_data(big, 70000, &pi, &di, NULL,
					     65536 - DLCP_DATA_HDR_LEN), 0);
	free(big);
}

/* Build -> checksum -> validate, for every packet type. */
static void test_round_trip_all_types(void **state)
{
	uint32_t sa = addr4(10, 77, 0, 1), da = addr4(10, 77, 0, 2);
	static const struct dlcp_pkt_gap gaps[3] = {
		{ 0, 10 }, { 10, 20 }, { 500, 1000 },
	};
	struct dlcp_pkt_info pi = base_info;
	uint8_t buf[BUF_SIZE];
	size_t len;
	int type;

	(void)state;
	for (type = DLCP_T_DATA; type < __DLCP_T_MAX; type++) {
		switch (type) {
		case DLCP_T_DATA:
			len = mk_data(buf, 1000, 900, 100);
			break;
		case DLCP_T_REPORT:
			len = mk_report(buf, 1000, 1000, gaps, 3);
			break;
		case DLCP_T_STOP:
			len = dlcp_pkt_build_stop(buf, sizeof(buf), &pi, 0, 1);
			break;
		case DLCP_T_PROBE:
			len = dlcp_pkt_build_probe(buf, sizeof(buf), &pi,
						   1000, 1);
			break;
		default:
			len = dlcp_pkt_build_abort(buf, sizeof(buf), &pi,
						   1000, 1);
			break;
		}
		assert_int_not_equal(len, 0);
		assert_int_equal(dlcp_wire_type((struct dlcp_hdr *)buf), type);
		assert_int_equal(buf[6] * 4, dlcp_wire_min_hdr(type));
		assert_int_equal(dlcp_get16(buf + 8), len);
		dlcp_pkt_finish4(buf, len, sa, da);
		assert_true(dlcp_pkt_csum_ok(buf, len,
					     dlcp_csum_pseudo4(sa, da,
							       IPPROTO_DLCP,
							       (uint16_t)len)));
		assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	}
}

/* Any proper prefix of a valid packet is rejected (never read past len). */
static void test_truncations_rejected(void **state)
{
	static const struct dlcp_pkt_gap gaps[2] = { { 0, 10 }, { 20, 30 } };
	uint8_t buf[BUF_SIZE];
	size_t len, cut;
	int which;

	(void)state;
	for (which = 0; which < 2; which++) {
		len = which ? mk_report(buf, 1000, 100, gaps, 2) :
			      mk_data(buf, 1000, 0, 30);
		assert_int_equal(check(buf, len), DLCP_DROP_NONE);
		for (cut = 0; cut < len; cut++) {
			enum dlcp_drop_reason r = check(buf, cut);

			assert_int_not_equal(r, DLCP_DROP_NONE);
			if (cut < DLCP_HDR_LEN ||
			    cut < dlcp_wire_min_hdr(buf[4] & 0xf))
				assert_int_equal(r, DLCP_DROP_SHORT);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Drop reasons, one by one                                             */
/* ------------------------------------------------------------------ */

static void test_drop_short(void **state)
{
	uint8_t buf[BUF_SIZE];
	unsigned int type;
	struct dlcp_pkt_info pi = base_info;

	(void)state;
	mk_data(buf, 1000, 0, 100);
	assert_int_equal(check(buf, 0), DLCP_DROP_SHORT);
	assert_int_equal(check(buf, 1), DLCP_DROP_SHORT);
	assert_int_equal(check(buf, DLCP_HDR_LEN - 1), DLCP_DROP_SHORT);
	/* 20..47 bytes: a full common header but not a DATA header. */
	dlcp_put16(buf + 8, DLCP_HDR_LEN);
	assert_int_equal(check(buf, DLCP_HDR_LEN), DLCP_DROP_SHORT);
	dlcp_put16(buf + 8, DLCP_DATA_HDR_LEN - 1);
	assert_int_equal(check(buf, DLCP_DATA_HDR_LEN - 1), DLCP_DROP_SHORT);

	/* Every type's header minus one byte is short, exactly is not. */
	for (type = DLCP_T_DATA; type < __DLCP_T_MAX; type++) {
		unsigned int min = dlcp_wire_min_hdr(type);

		memset(buf, 0, sizeof(buf));
		assert_int_equal(dlcp_pkt_build_probe(buf, sizeof(buf), &pi,
						      0, 0), DLCP_PROBE_HDR_LEN);
		dlcp_pkt_set_ver_type(buf, DLCP_VERSION, type);
		buf[6] = (uint8_t)(min / 4);
		dlcp_put16(buf + 8, (uint16_t)(min - 1));
		assert_int_equal(check(buf, min - 1), DLCP_DROP_SHORT);
		dlcp_put16(buf + 8, (uint16_t)min);
		assert_int_not_equal(check(buf, min), DLCP_DROP_SHORT);
	}
}

static void test_drop_version(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;
	unsigned int v;

	(void)state;
	len = mk_data(buf, 1000, 0, 100);
	for (v = 0; v < 16; v++) {
		dlcp_pkt_set_ver_type(buf, v, DLCP_T_DATA);
		assert_int_equal(check(buf, len), v == DLCP_VERSION ?
				 DLCP_DROP_NONE : DLCP_DROP_VERSION);
	}
	/* Version is checked before type and before the type's length. */
	dlcp_pkt_set_ver_type(buf, 2, 0);
	assert_int_equal(check(buf, len), DLCP_DROP_VERSION);
	assert_int_equal(check(buf, DLCP_HDR_LEN), DLCP_DROP_VERSION);
}

static void test_drop_type(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;
	unsigned int t;

	(void)state;
	len = mk_data(buf, 1000, 0, 100);
	for (t = __DLCP_T_MAX; t < 16; t++) {
		dlcp_pkt_set_ver_type(buf, DLCP_VERSION, t);
		assert_int_equal(check(buf, len), DLCP_DROP_TYPE);
	}
	dlcp_pkt_set_ver_type(buf, DLCP_VERSION, 0);
	assert_int_equal(check(buf, len), DLCP_DROP_TYPE);
	/* An unknown type needs only the common header to be recognised. */
	dlcp_put16(buf + 8, DLCP_HDR_LEN);
	assert_int_equal(check(buf, DLCP_HDR_LEN), DLCP_DROP_TYPE);
}

#define DATA_DOFF	(DLCP_DATA_HDR_LEN / 4)

static void test_drop_hdrlen(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_data(buf, 1000, 0, 100);	/* 100 bytes of payload */
	assert_int_equal(len % 4, 0);
	buf[6] = DATA_DOFF - 1;			/* too small */
	assert_int_equal(check(buf, len), DLCP_DROP_HDRLEN);
	buf[6] = 0;
	assert_int_equal(check(buf, len), DLCP_DROP_HDRLEN);
	buf[6] = DLCP_HDR_LEN / 4;		/* common header only */
	assert_int_equal(check(buf, len), DLCP_DROP_HDRLEN);
	buf[6] = (uint8_t)(len / 4);		/* all header: no payload */
	assert_int_equal(check(buf, len), DLCP_DROP_OFFSET);
	buf[6] = (uint8_t)(len / 4 + 1);	/* past the packet */
	assert_int_equal(check(buf, len), DLCP_DROP_HDRLEN);
	buf[6] = 255;
	assert_int_equal(check(buf, len), DLCP_DROP_HDRLEN);
	buf[6] = DATA_DOFF;
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
}

/* A longer header (fields of a later version) is skipped over. */
static void test_hdrlen_extension_accepted(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_data(buf, 1000, 996, 100);	/* payload past the end... */
	assert_int_equal(check(buf, len), DLCP_DROP_OFFSET);
	buf[6] = DATA_DOFF + 24;		/* ...unless 96 bytes are hdr */
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	buf[6] = DATA_DOFF + 25;		/* then no payload at all */
	assert_int_equal(check(buf, len), DLCP_DROP_OFFSET);
}

static void test_drop_len(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_data(buf, 1000, 0, 100);
	dlcp_put16(buf + 8, (uint16_t)(len + 1));
	assert_int_equal(check(buf, len), DLCP_DROP_LEN);
	dlcp_put16(buf + 8, (uint16_t)(len - 1));
	assert_int_equal(check(buf, len), DLCP_DROP_LEN);
	dlcp_put16(buf + 8, 0);
	assert_int_equal(check(buf, len), DLCP_DROP_LEN);
	dlcp_put16(buf + 8, 0xffff);
	assert_int_equal(check(buf, len), DLCP_DROP_LEN);
	/* The field is right but the IP payload is one byte longer. */
	dlcp_put16(buf + 8, (uint16_t)len);
	assert_int_equal(check(buf, len + 1), DLCP_DROP_LEN);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
}

static void test_drop_flags(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;
	unsigned int bit;

	(void)state;
	len = mk_data(buf, 1000, 0, 100);
	buf[5] = DLCP_HF_ALL;
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	for (bit = 0; bit < 8; bit++) {
		buf[5] = (uint8_t)(1u << bit);
		assert_int_equal(check(buf, len), (1u << bit) & DLCP_HF_ALL ?
				 DLCP_DROP_NONE : DLCP_DROP_FLAGS);
	}
}

static void test_drop_msglen(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_data(buf, 1000, 0, 100);
	dlcp_put32(buf + 16, 0);
	assert_int_equal(check(buf, len), DLCP_DROP_MSGLEN);
	/* max_msg boundary */
	dlcp_put32(buf + 16, MAX_MSG);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	dlcp_put32(buf + 16, MAX_MSG + 1);
	assert_int_equal(check(buf, len), DLCP_DROP_MSGLEN);
	dlcp_put32(buf + 16, 0xffffffff);
	assert_int_equal(check(buf, len), DLCP_DROP_MSGLEN);
	assert_int_equal(check_len(buf, len, 0xffffffff), DLCP_DROP_NONE);
	/* A small limit. */
	dlcp_put32(buf + 16, 100);
	assert_int_equal(check_len(buf, len, 100), DLCP_DROP_NONE);
	assert_int_equal(check_len(buf, len, 99), DLCP_DROP_MSGLEN);
	assert_int_equal(check_len(buf, len, 0), DLCP_DROP_MSGLEN);
	/* Applies to every type, not only DATA. */
	len = mk_report(buf, 0, 0, NULL, 0);
	assert_int_equal(check(buf, len), DLCP_DROP_MSGLEN);
}

static void test_drop_offset(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	/* offset + plen == msg_len: the last segment, accepted */
	len = mk_data(buf, 1000, 900, 100);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	/* one byte past the end */
	len = mk_data(buf, 1000, 901, 100);
	assert_int_equal(check(buf, len), DLCP_DROP_OFFSET);
	len = mk_data(buf, 1000, 0, 1001);
	assert_int_equal(check(buf, len), DLCP_DROP_OFFSET);
	/* offset at or past msg_len */
	len = mk_data(buf, 1000, 1000, 1);
	assert_int_equal(check(buf, len), DLCP_DROP_OFFSET);
	len = mk_data(buf, 1000, 999, 1);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	/* offset + plen wraps around 2^32 */
	len = mk_data(buf, 1000, 0xffffff9c, 100);
	assert_int_equal(check(buf, len), DLCP_DROP_OFFSET);
	len = mk_data(buf, 0xffffffff, 0xffffff9c, 100);
	assert_int_equal(check_len(buf, len, 0xffffffff), DLCP_DROP_OFFSET);
	len = mk_data(buf, 0xffffffff, 0xffffff9b, 100);
	assert_int_equal(check_len(buf, len, 0xffffffff), DLCP_DROP_NONE);
	/* DATA without payload */
	len = mk_data(buf, 1000, 0, 0);
	assert_int_equal(check(buf, len), DLCP_DROP_OFFSET);
	/* one-byte message */
	len = mk_data(buf, 1, 0, 1);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	len = mk_data(buf, 1, 0, 2);
	assert_int_equal(check(buf, len), DLCP_DROP_OFFSET);
}

static void test_drop_field_data(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;
	unsigned int i;

	(void)state;
	len = mk_data(buf, 1000, 0, 100);
	for (i = 0; i < 256; i++) {
		buf[38] = (uint8_t)i;
		assert_int_equal(check(buf, len), i < __DLCP_DTYPE_MAX ?
				 DLCP_DROP_NONE : DLCP_DROP_FIELD);
	}
	buf[38] = DLCP_DTYPE_BYTES;
	dlcp_put32(buf + 32, DLCP_PPM_MAX);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	dlcp_put32(buf + 32, DLCP_PPM_MAX + 1);
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
	dlcp_put32(buf + 32, 0xffffffff);
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
	dlcp_put32(buf + 32, 0);
	for (i = 0; i < 16; i++) {
		dlcp_put16(buf + 40, (uint16_t)(1u << i));
		assert_int_equal(check(buf, len),
				 (1u << i) & DLCP_MSG_FLAGS_SEND ?
				 DLCP_DROP_NONE : DLCP_DROP_FIELD);
	}
	dlcp_put16(buf + 40, DLCP_MSG_FLAGS_SEND);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	/* crit_len: at most the message length */
	dlcp_put32(buf + offsetof(struct dlcp_data_hdr, crit_len), 1000);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	dlcp_put32(buf + offsetof(struct dlcp_data_hdr, crit_len), 1001);
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
	dlcp_put32(buf + offsetof(struct dlcp_data_hdr, crit_len), 0xffffffff);
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
	dlcp_put32(buf + offsetof(struct dlcp_data_hdr, crit_len), 0);
	/* Reserved fields are ignored on receive. */
	buf[39] = 0xff;
	dlcp_put16(buf + 42, 0xffff);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
}

static void test_drop_field_report(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_report(buf, 1000, 1000, NULL, 0);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	dlcp_put32(buf + 20, 1000);		/* rcvd == msg_len */
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	dlcp_put32(buf + 20, 1001);
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
	dlcp_put32(buf + 20, 0);
	dlcp_put32(buf + 24, 1001);		/* scan_end > msg_len */
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
	dlcp_put32(buf + 24, 0);		/* empty scan */
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	buf[38] = DLCP_RF_PROBED;
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	buf[38] = DLCP_RF_DUP;
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	buf[38] = DLCP_RF_PROBED | DLCP_RF_DUP;
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
	buf[38] = 0x04;
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
	buf[38] = 0x80;
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
	buf[38] = 0;
	buf[39] = 0xff;				/* reserved: ignored */
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);
}

static void test_drop_field_stop_probe_abort(void **state)
{
	struct dlcp_pkt_info pi = base_info;	/* msg_len 1000 */
	uint8_t buf[BUF_SIZE];
	size_t len;
	int which;

	(void)state;
	for (which = 0; which < 3; which++) {
		size_t (*build)(void *, size_t, const struct dlcp_pkt_info *,
				uint32_t, uint32_t) =
			which == 0 ? dlcp_pkt_build_stop :
			which == 1 ? dlcp_pkt_build_probe :
				     dlcp_pkt_build_abort;

		len = build(buf, sizeof(buf), &pi, 1000, 0);
		assert_int_equal(check(buf, len), DLCP_DROP_NONE);
		len = build(buf, sizeof(buf), &pi, 1001, 0);
		assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
		len = build(buf, sizeof(buf), &pi, 0xffffffff, 0);
		assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
		/* No payload allowed: 4 trailing bytes... */
		len = build(buf, sizeof(buf), &pi, 0, 0);
		memset(buf + len, 0, 4);
		dlcp_put16(buf + 8, (uint16_t)(len + 4));
		assert_int_equal(check(buf, len + 4), DLCP_DROP_FIELD);
		/* ...unless they are header words. */
		buf[6] = 8;
		assert_int_equal(check(buf, len + 4), DLCP_DROP_NONE);
	}
}

static void test_drop_gaps(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;

	/* valid: sorted, adjacent, last gap ending exactly at scan_end */
	len = mk_report(buf, 1000, 600,
			(struct dlcp_pkt_gap[3]){ { 0, 10 }, { 10, 20 },
						  { 500, 600 } }, 3);
	assert_int_equal(check(buf, len), DLCP_DROP_NONE);

	/* past scan_end by one byte */
	len = mk_report(buf, 1000, 600,
			(struct dlcp_pkt_gap[2]){ { 0, 10 }, { 500, 601 } }, 2);
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);

	/* past scan_end, but scan_end < msg_len */
	len = mk_report(buf, 1000, 0,
			(struct dlcp_pkt_gap[1]){ { 0, 1 } }, 1);
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);

	/* overlapping */
	len = mk_report(buf, 1000, 1000,
			(struct dlcp_pkt_gap[2]){ { 0, 11 }, { 10, 20 } }, 2);
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);

	/* unsorted */
	len = mk_report(buf, 1000, 1000,
			(struct dlcp_pkt_gap[2]){ { 50, 60 }, { 10, 20 } }, 2);
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);

	/* empty gap */
	len = mk_report(buf, 1000, 1000,
			(struct dlcp_pkt_gap[1]){ { 10, 10 } }, 1);
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);

	/* inverted gap */
	len = mk_report(buf, 1000, 1000,
			(struct dlcp_pkt_gap[1]){ { 20, 10 } }, 1);
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);

	/* duplicate gap */
	len = mk_report(buf, 1000, 1000,
			(struct dlcp_pkt_gap[2]){ { 10, 20 }, { 10, 20 } }, 2);
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);

	/* ngaps says 2, payload holds 1 gap */
	len = mk_report(buf, 1000, 1000,
			(struct dlcp_pkt_gap[1]){ { 10, 20 } }, 1);
	dlcp_put16(buf + 36, 2);
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);
	dlcp_put16(buf + 36, 0);		/* says 0, holds 1 */
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);
	dlcp_put16(buf + 36, 0xffff);
	assert_int_equal(check(buf, len), DLCP_DROP_GAPS);

	/* payload not a multiple of the gap size */
	len = mk_report(buf, 1000, 1000,
			(struct dlcp_pkt_gap[1]){ { 10, 20 } }, 1);
	buf[len] = 0;
	dlcp_put16(buf + 8, (uint16_t)(len + 1));
	assert_int_equal(check(buf, len + 1), DLCP_DROP_GAPS);
	dlcp_put16(buf + 8, (uint16_t)(len - 1));
	assert_int_equal(check(buf, len - 1), DLCP_DROP_GAPS);
}

/* Gap checks come after field checks. */
static void test_report_precedence(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_report(buf, 1000, 1001,
			(struct dlcp_pkt_gap[2]){ { 50, 60 }, { 10, 20 } }, 2);
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
}

/* Order of the generic checks: short, version, type, hdrlen, len, flags. */
static void test_check_precedence(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_data(buf, 1000, 0, 100);
	buf[5] = HF_UNKNOWN;				/* bad flags */
	assert_int_equal(check(buf, len), DLCP_DROP_FLAGS);
	dlcp_put16(buf + 8, 1);			/* + bad len */
	assert_int_equal(check(buf, len), DLCP_DROP_LEN);
	buf[6] = 1;				/* + bad doff */
	assert_int_equal(check(buf, len), DLCP_DROP_HDRLEN);
	dlcp_put32(buf + 16, 0);		/* msg_len 0 comes later */
	assert_int_equal(check(buf, len), DLCP_DROP_HDRLEN);
	dlcp_pkt_set_ver_type(buf, DLCP_VERSION, 9);
	assert_int_equal(check(buf, len), DLCP_DROP_TYPE);
	dlcp_pkt_set_ver_type(buf, 3, 9);
	assert_int_equal(check(buf, len), DLCP_DROP_VERSION);
	assert_int_equal(check(buf, 19), DLCP_DROP_SHORT);
}

/* Every pure drop reason is reachable and named in /proc/net/dlcp/snmp. */
static void test_every_reason_reachable(void **state)
{
	static const char *const names[__DLCP_DROP_PURE_MAX] = {
		[DLCP_DROP_SHORT] = "DlcpDropShort",
		[DLCP_DROP_VERSION] = "DlcpDropVersion",
		[DLCP_DROP_TYPE] = "DlcpDropType",
		[DLCP_DROP_HDRLEN] = "DlcpDropHdrLen",
		[DLCP_DROP_LEN] = "DlcpDropLen",
		[DLCP_DROP_FLAGS] = "DlcpDropFlags",
		[DLCP_DROP_MSGLEN] = "DlcpDropMsgLen",
		[DLCP_DROP_OFFSET] = "DlcpDropOffset",
		[DLCP_DROP_GAPS] = "DlcpDropGaps",
		[DLCP_DROP_FIELD] = "DlcpDropField",
	};
	int seen[__DLCP_DROP_PURE_MAX] = { 0 };
	uint8_t buf[BUF_SIZE];
	size_t len;
	unsigned int r;

	(void)state;
	len = mk_data(buf, 1000, 0, 100);
	seen[check(buf, 10)]++;
	dlcp_pkt_set_ver_type(buf, 0, DLCP_T_DATA);
	seen[check(buf, len)]++;
	dlcp_pkt_set_ver_type(buf, DLCP_VERSION, 15);
	seen[check(buf, len)]++;
	dlcp_pkt_set_ver_type(buf, DLCP_VERSION, DLCP_T_DATA);
	buf[6] = 2;
	seen[check(buf, len)]++;
	buf[6] = DATA_DOFF;
	seen[check(buf, len - 1)]++;
	buf[5] = HF_UNKNOWN;
	seen[check(buf, len)]++;
	buf[5] = 0;
	seen[check_len(buf, len, 999)]++;
	dlcp_put32(buf + 20, 950);
	seen[check(buf, len)]++;
	dlcp_put32(buf + 20, 0);
	buf[38] = 200;
	seen[check(buf, len)]++;
	len = mk_report(buf, 1000, 10,
			(struct dlcp_pkt_gap[1]){ { 0, 11 } }, 1);
	seen[check(buf, len)]++;

	assert_int_equal(seen[DLCP_DROP_NONE], 0);
	for (r = DLCP_DROP_SHORT; r < __DLCP_DROP_PURE_MAX; r++) {
		assert_int_equal(seen[r], 1);
		assert_string_equal(dlcp_drop_reason_snmp(r), names[r]);
	}
	assert_null(dlcp_drop_reason_snmp(DLCP_DROP_NONE));
	assert_null(dlcp_drop_reason_snmp(__DLCP_DROP_PURE_MAX));
}

static void test_dtype_size(void **state)
{
	(void)state;
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_BYTES), 1);
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_FP32), 4);
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_FP16), 2);
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_BF16), 2);
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_INT8), 1);
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_INT32), 4);
	assert_int_equal(dlcp_dtype_size(__DLCP_DTYPE_MAX), 0);
}

/*
 * Random buffers and random mutations of valid packets: the validator
 * returns a known reason, never reads past the buffer (ASan), and accepts
 * only packets whose length field matches.
 */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void test_random_mutations(void **state)
{
	uint8_t buf[BUF_SIZE];
	unsigned int iter, accepted = 0;

	(void)state;
	for (iter = 0; iter < 20000; iter++) {
		enum dlcp_drop_reason r;
		size_t len, n, i;

		if (iter & 1)
			len = mk_data(buf, 1000, (uint32_t)(rng() % 1000),
				      rng() % 200);
		else
			len = mk_report(buf, 1000, 1000,
					(struct dlcp_pkt_gap[2]){ { 5, 9 },
								  { 700, 900 } },
					2);
		n = rng() % 4;
		for (i = 0; i < n; i++)
			buf[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
		if (rng() % 8 == 0)
			len = rng() % (len + 1);
		r = check(buf, len);
		assert_true(r < __DLCP_DROP_PURE_MAX);
		if (r == DLCP_DROP_NONE) {
			accepted++;
			assert_int_equal(dlcp_get16(buf + 8), len);
			assert_true(len >= dlcp_wire_min_hdr(buf[4] & 0xf));
		}
	}
	/* Some mutations hit payload or benign fields. */
	assert_true(accepted > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum_rfc1071),
		cmocka_unit_test(test_csum_odd_length),
		cmocka_unit_test(test_csum_carry_fold),
		cmocka_unit_test(test_csum_known_answer),
		cmocka_unit_test(test_csum_pseudo6),
		cmocka_unit_test(test_csum_detects_bit_flips),
		cmocka_unit_test(test_csum_zero_not_special),
		cmocka_unit_test(test_csum_fix_at),
		cmocka_unit_test(test_build_data_layout),
		cmocka_unit_test(test_build_report_layout),
		cmocka_unit_test(test_build_small_types_layout),
		cmocka_unit_test(test_build_too_small),
		cmocka_unit_test(test_round_trip_all_types),
		cmocka_unit_test(test_truncations_rejected),
		cmocka_unit_test(test_drop_short),
		cmocka_unit_test(test_drop_version),
		cmocka_unit_test(test_drop_type),
		cmocka_unit_test(test_drop_hdrlen),
		cmocka_unit_test(test_hdrlen_extension_accepted),
		cmocka_unit_test(test_drop_len),
		cmocka_unit_test(test_drop_flags),
		cmocka_unit_test(test_drop_msglen),
		cmocka_unit_test(test_drop_offset),
		cmocka_unit_test(test_drop_field_data),
		cmocka_unit_test(test_drop_field_report),
		cmocka_unit_test(test_drop_field_stop_probe_abort),
		cmocka_unit_test(test_drop_gaps),
		cmocka_unit_test(test_report_precedence),
		cmocka_unit_test(test_check_precedence),
		cmocka_unit_test(test_every_reason_reachable),
		cmocka_unit_test(test_dtype_size),
		cmocka_unit_test(test_random_mutations),
	};

	return cmocka_run_group_tests_name("dlcp_wire", tests, NULL, NULL);
}
