// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the DLCP wire validator, dlcp_wire_check() from
 * <linux/dlcp.h>: every drop reason one by one, their precedence, that
 * each is reachable and named, dlcp_dtype_size(), and random mutations of
 * valid packets. Run by test_wire.c's main().
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_wire.h"

/* The highest header flag bit the protocol does not define. */
#define HF_UNKNOWN \
	(0x80 & ~DLCP_HF_ALL ? 0x80 : 0x40 & ~DLCP_HF_ALL ? 0x40 : 0)
_Static_assert(HF_UNKNOWN, "no unknown header flag left to test with");

/* ------------------------------------------------------------------ */
/* Drop reasons, one by one                                             */
/* ------------------------------------------------------------------ */

void test_drop_short(void **state)
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

void test_drop_version(void **state)
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

void test_drop_type(void **state)
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

void test_drop_hdrlen(void **state)
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
void test_hdrlen_extension_accepted(void **state)
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

void test_drop_len(void **state)
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

/*
 * dlcp_wire_gso_segs(): a header whose length field is the packet's stands
 * for one packet; a DATA header followed by whole payloads of its packet's
 * size for a super-packet of that many; anything else for none.
 */
void test_gso_segs(void **state)
{
	uint8_t buf[BUF_SIZE];
	uint32_t one;

	(void)state;
	one = (uint32_t)mk_data(buf, 10000, 0, 100);
	assert_int_equal(dlcp_wire_gso_segs(buf, one), 1);
	assert_int_equal(dlcp_wire_gso_segs(buf, DLCP_DATA_HDR_LEN + 200), 2);
	assert_int_equal(dlcp_wire_gso_segs(buf, DLCP_DATA_HDR_LEN + 4400), 44);
	/* a payload that is not whole packets, or less than two */
	assert_int_equal(dlcp_wire_gso_segs(buf, DLCP_DATA_HDR_LEN + 250), 0);
	assert_int_equal(dlcp_wire_gso_segs(buf, one - 1), 0);
	assert_int_equal(dlcp_wire_gso_segs(buf, DLCP_DATA_HDR_LEN), 0);
	/* a length field of a header alone (no payload to repeat) */
	dlcp_put16(buf + 8, DLCP_DATA_HDR_LEN);
	assert_int_equal(dlcp_wire_gso_segs(buf, DLCP_DATA_HDR_LEN), 1);
	assert_int_equal(dlcp_wire_gso_segs(buf, DLCP_DATA_HDR_LEN + 100), 0);
	/* other types are never super-packets */
	dlcp_put16(buf + 8, (uint16_t)one);
	buf[4] = (uint8_t)((DLCP_VERSION << 4) | DLCP_T_REPORT);
	assert_int_equal(dlcp_wire_gso_segs(buf, one), 1);
	assert_int_equal(dlcp_wire_gso_segs(buf, DLCP_DATA_HDR_LEN + 200), 0);
}

void test_drop_flags(void **state)
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

void test_drop_msglen(void **state)
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

void test_drop_offset(void **state)
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

void test_drop_field_data(void **state)
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

void test_drop_field_report(void **state)
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

void test_drop_field_stop_probe_abort(void **state)
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

void test_drop_gaps(void **state)
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
void test_report_precedence(void **state)
{
	uint8_t buf[BUF_SIZE];
	size_t len;

	(void)state;
	len = mk_report(buf, 1000, 1001,
			(struct dlcp_pkt_gap[2]){ { 50, 60 }, { 10, 20 } }, 2);
	assert_int_equal(check(buf, len), DLCP_DROP_FIELD);
}

/* Order of the generic checks: short, version, type, hdrlen, len, flags. */
void test_check_precedence(void **state)
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
void test_every_reason_reachable(void **state)
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

void test_dtype_size(void **state)
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

void test_random_mutations(void **state)
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
