// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the userspace packet builder dlcp_pkt: the Internet
 * checksum helpers, and the builders of every packet type (layouts pinned
 * byte by byte, round trips through dlcp_wire_check(), truncations).
 * Run by test_wire.c's main().
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_wire.h"

/* Network byte order addresses 10.77.0.1 and 10.77.0.2, host independent. */
static uint32_t addr4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint8_t v[4] = { a, b, c, d };
	uint32_t r;

	memcpy(&r, v, 4);
	return r;
}

/* ------------------------------------------------------------------ */
/* Checksum                                                             */
/* ------------------------------------------------------------------ */

/* RFC 1071 section 3 example: words 0001 f203 f4f5 f6f7 sum to ddf2. */
void test_csum_rfc1071(void **state)
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

void test_csum_odd_length(void **state)
{
	static const uint8_t v[] = { 0x01, 0x02, 0x03 };

	(void)state;
	/* 0x0102 + 0x0300 (odd byte padded with zero) = 0x0402 */
	assert_int_equal(dlcp_csum_fold(dlcp_csum_add(0, v, 3)), 0x0402);
	assert_int_equal(dlcp_csum_finish(dlcp_csum_add(0, v, 3)), 0xfbfd);
	assert_int_equal(dlcp_csum_fold(dlcp_csum_add(0, v, 0)), 0);
}

void test_csum_carry_fold(void **state)
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
void test_csum_known_answer(void **state)
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

void test_csum_pseudo6(void **state)
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
void test_csum_detects_bit_flips(void **state)
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
void test_csum_zero_not_special(void **state)
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

void test_csum_fix_at(void **state)
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
void test_build_data_layout(void **state)
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

void test_build_report_layout(void **state)
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

void test_build_small_types_layout(void **state)
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

void test_build_too_small(void **state)
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
void test_round_trip_all_types(void **state)
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
void test_truncations_rejected(void **state)
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
