// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the DLCP wire validator, dlcp_wire_check() from
 * <linux/dlcp.h>, and of the userspace packet builder dlcp_pkt: the packet
 * helpers the tests share, and main(), which runs them as one group. The
 * tests are in test_wire_pkt.c (checksum, builders) and test_wire_check.c
 * (drop reasons).
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

#include "test_wire.h"

/* dlcp_wire_check() on an exact-size heap copy of @pkt[0..len). */
enum dlcp_drop_reason check_len(const void *pkt, size_t len,
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

enum dlcp_drop_reason check(const void *pkt, size_t len)
{
	return check_len(pkt, len, MAX_MSG);
}

const struct dlcp_pkt_info base_info = {
	.sport = 4000,
	.dport = 5000,
	.flags = DLCP_HF_ACKREQ,
	.prio = 3,
	.msg_id = 77,
	.msg_len = 1000,
};

const struct dlcp_pkt_data_info base_data = {
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
size_t mk_data(uint8_t *buf, uint32_t msg_len, uint32_t offset, size_t plen)
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

size_t mk_report(uint8_t *buf, uint32_t msg_len, uint32_t scan_end,
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
		cmocka_unit_test(test_gso_segs),
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
