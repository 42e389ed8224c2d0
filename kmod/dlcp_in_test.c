// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of dlcp_in_gaps(): the gaps a receiver's REPORT lists.
 */
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

#define GT_LEN	1000

/**
 * struct gt_case - ranges received, and the report they make
 * @have:	ranges received (pairs of start, end), @nhave of them
 * @nhave:	number of ranges in @have
 * @probed:	answering a PROBE
 * @max_gaps:	room in the report
 * @want:	the gaps expected (pairs), @nwant of them
 * @nwant:	number of gaps expected
 * @scan_end:	the end of what the report describes
 */
struct gt_case {
	u32	have[8];
	u32	nhave;
	bool	probed;
	u32	max_gaps;
	u32	want[8];
	u32	nwant;
	u32	scan_end;
};

static void gt_run(struct kunit *test, const struct gt_case *c)
{
	struct dlcp_wire_range g[8];
	struct dlcp_rangeset rs = { };
	u32 i, n, added, scan_end;

	for (i = 0; i < c->nhave; i++)
		dlcp_rs_add(&rs, c->have[2 * i], c->have[2 * i + 1],
			    GFP_KERNEL, &added);
	n = dlcp_in_gaps(&rs, GT_LEN, c->probed, g, c->max_gaps, &scan_end);
	KUNIT_EXPECT_EQ(test, n, c->nwant);
	KUNIT_EXPECT_EQ(test, scan_end, c->scan_end);
	for (i = 0; i < n && i < c->nwant; i++) {
		KUNIT_EXPECT_EQ(test, ntohl(g[i].start), c->want[2 * i]);
		KUNIT_EXPECT_EQ(test, ntohl(g[i].end), c->want[2 * i + 1]);
	}
	dlcp_rs_free(&rs);
}

/* Without a PROBE, bytes above the highest received may still come. */
static void dlcp_gaps_test_unprobed(struct kunit *test)
{
	static const struct gt_case c = {
		.have = { 100, 200, 300, 400 }, .nhave = 2, .max_gaps = 8,
		.want = { 0, 100, 200, 300 }, .nwant = 2, .scan_end = 400,
	};

	gt_run(test, &c);
}

/* Answering a PROBE, the tail is missing too; with nothing, all of it. */
static void dlcp_gaps_test_probed(struct kunit *test)
{
	static const struct gt_case c = {
		.have = { 0, 200, 300, 400 }, .nhave = 2, .probed = true,
		.max_gaps = 8, .want = { 200, 300, 400, GT_LEN }, .nwant = 2,
		.scan_end = GT_LEN,
	};
	static const struct gt_case none = {
		.probed = true, .max_gaps = 8, .want = { 0, GT_LEN },
		.nwant = 1, .scan_end = GT_LEN,
	};

	gt_run(test, &c);
	gt_run(test, &none);
}

/* Complete: no gap; the scan covers the whole message. */
static void dlcp_gaps_test_complete(struct kunit *test)
{
	static const struct gt_case c = {
		.have = { 0, GT_LEN }, .nhave = 1, .max_gaps = 2,
		.scan_end = GT_LEN,
	};
	struct gt_case probed = c;

	gt_run(test, &c);
	probed.probed = true;
	gt_run(test, &probed);
}

/*
 * More gaps than fit: the report covers up to the first left out (the
 * third gap starts at 40: nothing from there on is described).
 */
static void dlcp_gaps_test_truncated(struct kunit *test)
{
	static const struct gt_case c = {
		.have = { 10, 20, 30, 40, 50, 60, 70, 80 }, .nhave = 4,
		.probed = true, .max_gaps = 2, .want = { 0, 10, 20, 30 },
		.nwant = 2, .scan_end = 40,
	};

	gt_run(test, &c);
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
