// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of dlcp_in_gaps(): the gaps a receiver's REPORT lists.
 */
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

#define GT_LEN	1000

/* A range set of the @n ranges in @r (pairs of start, end). */
static void gt_set(struct dlcp_rangeset *rs, const u32 *r, u32 n)
{
	u32 i, added;

	for (i = 0; i < n; i++)
		dlcp_rs_add(rs, r[2 * i], r[2 * i + 1], GFP_KERNEL, &added);
}

static void gt_expect(struct kunit *test, const struct dlcp_wire_range *g,
		      const u32 *want, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, ntohl(g[i].start), want[2 * i]);
		KUNIT_EXPECT_EQ(test, ntohl(g[i].end), want[2 * i + 1]);
	}
}

/* Without a PROBE, bytes above the highest received may still come. */
static void dlcp_gaps_test_unprobed(struct kunit *test)
{
	static const u32 have[] = { 100, 200, 300, 400 };
	static const u32 want[] = { 0, 100, 200, 300 };
	struct dlcp_wire_range g[8];
	struct dlcp_rangeset rs = { };
	u32 n, scan_end;

	gt_set(&rs, have, 2);
	n = dlcp_in_gaps(&rs, GT_LEN, false, g, ARRAY_SIZE(g), &scan_end);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, scan_end, 400);
	gt_expect(test, g, want, 2);
	dlcp_rs_free(&rs);
}

/* Answering a PROBE, the tail is missing too. */
static void dlcp_gaps_test_probed(struct kunit *test)
{
	static const u32 have[] = { 0, 200, 300, 400 };
	static const u32 want[] = { 200, 300, 400, GT_LEN };
	struct dlcp_wire_range g[8];
	struct dlcp_rangeset rs = { };
	u32 n, scan_end;

	gt_set(&rs, have, 2);
	n = dlcp_in_gaps(&rs, GT_LEN, true, g, ARRAY_SIZE(g), &scan_end);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, scan_end, GT_LEN);
	gt_expect(test, g, want, 2);
	dlcp_rs_free(&rs);

	/* nothing received: the whole message is one gap */
	n = dlcp_in_gaps(&rs, GT_LEN, true, g, ARRAY_SIZE(g), &scan_end);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, ntohl(g[0].start), 0);
	KUNIT_EXPECT_EQ(test, ntohl(g[0].end), GT_LEN);
}

/* Complete: no gap; the scan covers the whole message. */
static void dlcp_gaps_test_complete(struct kunit *test)
{
	static const u32 have[] = { 0, GT_LEN };
	struct dlcp_wire_range g[2];
	struct dlcp_rangeset rs = { };
	u32 scan_end;

	gt_set(&rs, have, 1);
	KUNIT_EXPECT_EQ(test, dlcp_in_gaps(&rs, GT_LEN, false, g, 2,
					   &scan_end), 0);
	KUNIT_EXPECT_EQ(test, scan_end, GT_LEN);
	KUNIT_EXPECT_EQ(test, dlcp_in_gaps(&rs, GT_LEN, true, g, 2,
					   &scan_end), 0);
	KUNIT_EXPECT_EQ(test, scan_end, GT_LEN);
	dlcp_rs_free(&rs);
}

/* More gaps than fit: the report covers up to the first left out. */
static void dlcp_gaps_test_truncated(struct kunit *test)
{
	static const u32 have[] = { 10, 20, 30, 40, 50, 60, 70, 80 };
	static const u32 want[] = { 0, 10, 20, 30 };
	struct dlcp_wire_range g[2];
	struct dlcp_rangeset rs = { };
	u32 n, scan_end;

	gt_set(&rs, have, 4);
	n = dlcp_in_gaps(&rs, GT_LEN, true, g, ARRAY_SIZE(g), &scan_end);
	KUNIT_EXPECT_EQ(test, n, 2);
	/* the third gap starts at 40: nothing from there on is described */
	KUNIT_EXPECT_EQ(test, scan_end, 40);
	gt_expect(test, g, want, 2);
	dlcp_rs_free(&rs);
}

static struct kunit_case dlcp_gaps_test_cases[] = {
	KUNIT_CASE(dlcp_gaps_test_unprobed),
	KUNIT_CASE(dlcp_gaps_test_probed),
	KUNIT_CASE(dlcp_gaps_test_complete),
	KUNIT_CASE(dlcp_gaps_test_truncated),
	{}
};

struct kunit_suite dlcp_gaps_test_suite = {
	.name = "dlcp_gaps",
	.test_cases = dlcp_gaps_test_cases,
};
