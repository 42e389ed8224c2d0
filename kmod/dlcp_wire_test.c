// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of dlcp_wire_check(), the validator of dlcp_wire.h: a
 * well-formed packet of each type passes, and each malformation is found
 * with its own reason.
 */
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

#define WT_MAX_MSG	BIT(20)
#define WT_PAYLOAD	100

/* A DATA packet of a 1000-byte message: @WT_PAYLOAD bytes at offset 200. */
static u32 wt_data(u8 *buf)
{
	struct dlcp_data_hdr *d = (struct dlcp_data_hdr *)buf;
	u32 len = DLCP_DATA_HDR_LEN + WT_PAYLOAD;

	memset(buf, 0, len);
	dlcp_fill_hdr(&d->common, DLCP_T_DATA, htons(1), htons(2), 7, 1000,
		      len, 0, 0);
	d->offset = htonl(200);
	d->dtype = DLCP_DTYPE_BYTES;
	return len;
}

/* A REPORT of a 1000-byte message with @ngaps gaps of 10 bytes. */
static u32 wt_report(u8 *buf, u32 ngaps)
{
	struct dlcp_report_hdr *r = (struct dlcp_report_hdr *)buf;
	struct dlcp_wire_range *g = (struct dlcp_wire_range *)(r + 1);
	u32 len = DLCP_REPORT_HDR_LEN + ngaps * DLCP_GAP_LEN, i;

	memset(buf, 0, len);
	dlcp_fill_hdr(&r->common, DLCP_T_REPORT, htons(1), htons(2), 7, 1000,
		      len, 0, 0);
	for (i = 0; i < ngaps; i++) {
		g[i].start = htonl(100 * i);
		g[i].end = htonl(100 * i + 10);
	}
	r->ngaps = htons(ngaps);
	r->scan_end = htonl(1000);
	r->rcvd = htonl(1000 - 10 * ngaps);
	return len;
}

static void dlcp_wire_test_valid(struct kunit *test)
{
	u8 buf[256];
	u32 len;

	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, wt_data(buf), WT_MAX_MSG),
			DLCP_DROP_NONE);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, wt_report(buf, 3),
					      WT_MAX_MSG), DLCP_DROP_NONE);
	for (len = DLCP_T_STOP; len <= DLCP_T_ABORT; len++) {
		u32 hlen = dlcp_wire_min_hdr(len);

		memset(buf, 0, hlen);
		dlcp_fill_hdr((struct dlcp_hdr *)buf, len, htons(1), htons(2),
			      7, 1000, hlen, 0, 0);
		KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, hlen, WT_MAX_MSG),
				DLCP_DROP_NONE);
	}
}

static void dlcp_wire_test_header(struct kunit *test)
{
	struct dlcp_hdr *h;
	u8 buf[256];
	u32 len;

	len = wt_data(buf);
	h = (struct dlcp_hdr *)buf;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, DLCP_HDR_LEN - 1,
					      WT_MAX_MSG), DLCP_DROP_SHORT);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, DLCP_DATA_HDR_LEN - 1,
					      WT_MAX_MSG), DLCP_DROP_SHORT);
	h->ver_type = ((DLCP_VERSION + 1) << 4) | DLCP_T_DATA;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_VERSION);
	h->ver_type = (DLCP_VERSION << 4) | __DLCP_T_MAX;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_TYPE);
	h->ver_type = (DLCP_VERSION << 4) | DLCP_T_DATA;
	h->doff = DLCP_DATA_HDR_LEN / 4 - 1;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_HDRLEN);
	h->doff = len / 4 + 1;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_HDRLEN);
	h->doff = DLCP_DATA_HDR_LEN / 4;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len - 1, WT_MAX_MSG),
			DLCP_DROP_LEN);
	h->flags = DLCP_HF_ALL + 1;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_FLAGS);
	h->flags = 0;
	h->msg_len = 0;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_MSGLEN);
	h->msg_len = htonl(WT_MAX_MSG + 1);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_MSGLEN);
}

static void dlcp_wire_test_data(struct kunit *test)
{
	struct dlcp_data_hdr *d;
	u8 buf[256];
	u32 len;

	len = wt_data(buf);
	d = (struct dlcp_data_hdr *)buf;
	d->offset = htonl(1000 - WT_PAYLOAD + 1);	/* past the end */
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_OFFSET);
	d->offset = htonl(1000 - WT_PAYLOAD);		/* the last bytes */
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_NONE);
	d->budget_ppm = htonl(DLCP_PPM_MAX + 1);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_FIELD);
	d->budget_ppm = 0;
	d->dtype = __DLCP_DTYPE_MAX;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_FIELD);
	d->dtype = DLCP_DTYPE_BYTES;
	d->crit_len = htonl(1001);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_FIELD);
	d->crit_len = 0;
	d->msg_flags = htons(DLCP_MSG_FLAGS_SEND + 1);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_FIELD);
	/* a DATA packet without payload */
	d->msg_flags = 0;
	d->common.len = htons(DLCP_DATA_HDR_LEN);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, DLCP_DATA_HDR_LEN,
					      WT_MAX_MSG), DLCP_DROP_OFFSET);
}

static void dlcp_wire_test_report(struct kunit *test)
{
	struct dlcp_report_hdr *r;
	struct dlcp_wire_range *g;
	u8 buf[256];
	u32 len;

	len = wt_report(buf, 3);
	r = (struct dlcp_report_hdr *)buf;
	g = (struct dlcp_wire_range *)(r + 1);
	r->ngaps = htons(4);				/* one more than sent */
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_GAPS);
	r->ngaps = htons(3);
	g[1].start = htonl(5);				/* overlaps gap 0 */
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_GAPS);
	g[1].start = htonl(100);
	g[2].end = g[2].start;				/* empty */
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_GAPS);
	g[2].end = htonl(210);
	r->scan_end = htonl(205);			/* gap past scan end */
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_GAPS);
	r->scan_end = htonl(1001);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_FIELD);
	r->scan_end = htonl(1000);
	r->rflags = DLCP_RF_ALL + 1;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_FIELD);
	r->rflags = 0;
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, len, WT_MAX_MSG),
			DLCP_DROP_NONE);
}

static void dlcp_wire_test_control(struct kunit *test)
{
	struct dlcp_probe_hdr *p;
	struct dlcp_stop_hdr *st;
	u8 buf[64];

	memset(buf, 0, sizeof(buf));
	st = (struct dlcp_stop_hdr *)buf;
	dlcp_fill_hdr(&st->common, DLCP_T_STOP, htons(1), htons(2), 7, 1000,
		      DLCP_STOP_HDR_LEN, 0, 0);
	st->lost = htonl(1001);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, DLCP_STOP_HDR_LEN,
					      WT_MAX_MSG), DLCP_DROP_FIELD);
	/* control packets carry no payload */
	st->lost = 0;
	st->common.len = htons(DLCP_STOP_HDR_LEN + 4);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, DLCP_STOP_HDR_LEN + 4,
					      WT_MAX_MSG), DLCP_DROP_FIELD);
	memset(buf, 0, sizeof(buf));
	p = (struct dlcp_probe_hdr *)buf;
	dlcp_fill_hdr(&p->common, DLCP_T_PROBE, htons(1), htons(2), 7, 1000,
		      DLCP_PROBE_HDR_LEN, DLCP_HF_FINAL, 0);
	p->sent = htonl(1000);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, DLCP_PROBE_HDR_LEN,
					      WT_MAX_MSG), DLCP_DROP_NONE);
	p->sent = htonl(1001);
	KUNIT_EXPECT_EQ(test, dlcp_wire_check(buf, DLCP_PROBE_HDR_LEN,
					      WT_MAX_MSG), DLCP_DROP_FIELD);
}

static struct kunit_case dlcp_wire_test_cases[] = {
	KUNIT_CASE(dlcp_wire_test_valid),
	KUNIT_CASE(dlcp_wire_test_header),
	KUNIT_CASE(dlcp_wire_test_data),
	KUNIT_CASE(dlcp_wire_test_report),
	KUNIT_CASE(dlcp_wire_test_control),
	{}
};

struct kunit_suite dlcp_wire_test_suite = {
	.name = "dlcp_wire",
	.test_cases = dlcp_wire_test_cases,
};
