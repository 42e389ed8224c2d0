/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of test_wire share: the packet helpers of test_wire.c and
 * the tests of test_wire_pkt.c (checksum, builders) and test_wire_check.c
 * (dlcp_wire_check() drop reasons), which test_wire.c's main() runs as
 * one group.
 */
#ifndef TEST_WIRE_H
#define TEST_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "dlcp_pkt.h"

#define MAX_MSG		(64u << 20)	/* net.dlcp.max_msg_size default */
#define BUF_SIZE	2048

/* header fields every built test packet starts from */
extern const struct dlcp_pkt_info base_info;
extern const struct dlcp_pkt_data_info base_data;

/* dlcp_wire_check() on an exact-size heap copy of @pkt[0..len). */
enum dlcp_drop_reason check_len(const void *pkt, size_t len, uint32_t max_msg);
/* The same with the default maximum message size, MAX_MSG. */
enum dlcp_drop_reason check(const void *pkt, size_t len);

/* A valid DATA packet: @plen payload bytes at @offset of a @msg_len message. */
size_t mk_data(uint8_t *buf, uint32_t msg_len, uint32_t offset, size_t plen);
/* A valid REPORT packet with @ngaps gaps. */
size_t mk_report(uint8_t *buf, uint32_t msg_len, uint32_t scan_end,
		 const struct dlcp_pkt_gap *gaps, size_t ngaps);

/* test_wire_pkt.c: the checksum and the packet builders */
void test_csum_rfc1071(void **state);
void test_csum_odd_length(void **state);
void test_csum_carry_fold(void **state);
void test_csum_known_answer(void **state);
void test_csum_pseudo6(void **state);
void test_csum_detects_bit_flips(void **state);
void test_csum_zero_not_special(void **state);
void test_csum_fix_at(void **state);
void test_build_data_layout(void **state);
void test_build_report_layout(void **state);
void test_build_small_types_layout(void **state);
void test_build_too_small(void **state);
void test_round_trip_all_types(void **state);
void test_truncations_rejected(void **state);

/* test_wire_check.c: the validator's drop reasons */
void test_drop_short(void **state);
void test_drop_version(void **state);
void test_drop_type(void **state);
void test_drop_hdrlen(void **state);
void test_hdrlen_extension_accepted(void **state);
void test_drop_len(void **state);
void test_gso_segs(void **state);
void test_drop_flags(void **state);
void test_drop_msglen(void **state);
void test_drop_offset(void **state);
void test_drop_field_data(void **state);
void test_drop_field_report(void **state);
void test_drop_field_stop_probe_abort(void **state);
void test_drop_gaps(void **state);
void test_report_precedence(void **state);
void test_check_precedence(void **state);
void test_every_reason_reachable(void **state);
void test_dtype_size(void **state);
void test_random_mutations(void **state);

#endif /* TEST_WIRE_H */
