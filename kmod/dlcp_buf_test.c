// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of dlcp_buf.c: the byte-range sets, the receiver's record
 * of what has arrived of a message, and the message buffer it fills.
 */
#include <linux/slab.h>
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

/* Does @rs hold exactly the @n ranges of @want (pairs of start, end)? */
static void rt_expect(struct kunit *test, const struct dlcp_rangeset *rs,
		      const u32 *want, u32 n)
{
	u32 i, bytes = 0;

	KUNIT_EXPECT_EQ(test, rs->nr, n);
	for (i = 0; i < n && i < rs->nr; i++) {
		KUNIT_EXPECT_EQ(test, dlcp_rs_at(rs, i)->start, want[2 * i]);
		KUNIT_EXPECT_EQ(test, dlcp_rs_at(rs, i)->end, want[2 * i + 1]);
		bytes += want[2 * i + 1] - want[2 * i];
	}
	KUNIT_EXPECT_EQ(test, rs->bytes, bytes);
}

static void dlcp_rs_test_insert(struct kunit *test)
{
	static const u32 want[] = { 0, 10, 20, 30, 40, 50 };
	struct dlcp_rangeset rs = { };
	u32 added;

	KUNIT_ASSERT_EQ(test, dlcp_rs_add(&rs, 40, 50, GFP_KERNEL, &added), 0);
	KUNIT_EXPECT_EQ(test, added, 10);
	KUNIT_ASSERT_EQ(test, dlcp_rs_add(&rs, 0, 10, GFP_KERNEL, &added), 0);
	KUNIT_ASSERT_EQ(test, dlcp_rs_add(&rs, 20, 30, GFP_KERNEL, &added), 0);
	rt_expect(test, &rs, want, 3);
	dlcp_rs_free(&rs);
	KUNIT_EXPECT_EQ(test, rs.nr, 0);
	KUNIT_EXPECT_EQ(test, rs.bytes, 0);
}

static void dlcp_rs_test_merge(struct kunit *test)
{
	static const u32 adjacent[] = { 0, 30 };
	static const u32 spanning[] = { 0, 100 };
	struct dlcp_rangeset rs = { };
	u32 added;

	dlcp_rs_add(&rs, 0, 10, GFP_KERNEL, &added);
	dlcp_rs_add(&rs, 20, 30, GFP_KERNEL, &added);
	/* [10, 20) touches both neighbours: one range */
	KUNIT_ASSERT_EQ(test, dlcp_rs_add(&rs, 10, 20, GFP_KERNEL, &added), 0);
	KUNIT_EXPECT_EQ(test, added, 10);
	rt_expect(test, &rs, adjacent, 1);
	/* overlapping and covering: only new bytes are counted */
	dlcp_rs_add(&rs, 50, 60, GFP_KERNEL, &added);
	KUNIT_ASSERT_EQ(test, dlcp_rs_add(&rs, 5, 100, GFP_KERNEL, &added), 0);
	KUNIT_EXPECT_EQ(test, added, 100 - 30 - 10);
	rt_expect(test, &rs, spanning, 1);
	/* a duplicate adds nothing */
	KUNIT_ASSERT_EQ(test, dlcp_rs_add(&rs, 40, 60, GFP_KERNEL, &added), 0);
	KUNIT_EXPECT_EQ(test, added, 0);
	rt_expect(test, &rs, spanning, 1);
	dlcp_rs_free(&rs);
}

static void dlcp_rs_test_covers(struct kunit *test)
{
	struct dlcp_rangeset rs = { };
	u32 added;

	dlcp_rs_add(&rs, 10, 20, GFP_KERNEL, &added);
	dlcp_rs_add(&rs, 30, 40, GFP_KERNEL, &added);
	KUNIT_EXPECT_TRUE(test, dlcp_rs_covers(&rs, 10, 20));
	KUNIT_EXPECT_TRUE(test, dlcp_rs_covers(&rs, 12, 18));
	KUNIT_EXPECT_TRUE(test, dlcp_rs_covers(&rs, 30, 30));
	KUNIT_EXPECT_FALSE(test, dlcp_rs_covers(&rs, 15, 35));
	KUNIT_EXPECT_FALSE(test, dlcp_rs_covers(&rs, 5, 15));
	KUNIT_EXPECT_FALSE(test, dlcp_rs_covers(&rs, 20, 30));
	KUNIT_EXPECT_FALSE(test, dlcp_rs_covers(&rs, 40, 41));
	dlcp_rs_free(&rs);
}

/* At DLCP_MAX_RANGES ranges a new disjoint one is refused; merging is not. */
static void dlcp_rs_test_limit(struct kunit *test)
{
	struct dlcp_rangeset rs = { };
	u32 i, added;

	for (i = 0; i < DLCP_MAX_RANGES; i++)
		KUNIT_ASSERT_EQ(test, dlcp_rs_add(&rs, 2 * i, 2 * i + 1,
						  GFP_KERNEL, &added), 0);
	KUNIT_EXPECT_EQ(test, rs.nr, DLCP_MAX_RANGES);
	KUNIT_EXPECT_EQ(test, dlcp_rs_prepare(&rs, 2 * i, 2 * i + 1,
					      GFP_KERNEL), -E2BIG);
	KUNIT_EXPECT_EQ(test, dlcp_rs_add(&rs, 2 * i + 1, 2 * i + 2,
					  GFP_KERNEL, &added), -E2BIG);
	/* fills the hole between the first two: one range fewer */
	KUNIT_EXPECT_EQ(test, dlcp_rs_prepare(&rs, 1, 2, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, dlcp_rs_add(&rs, 1, 2, GFP_KERNEL, &added), 0);
	KUNIT_EXPECT_EQ(test, rs.nr, DLCP_MAX_RANGES - 1);
	KUNIT_EXPECT_EQ(test, rs.bytes, DLCP_MAX_RANGES + 1);
	dlcp_rs_free(&rs);
}

/*
 * Ranges over several pages, inserted out of order, then merged across
 * page boundaries: the set stays sorted and exact, and no allocation of
 * it is larger than a page (the receive path grows it with GFP_ATOMIC).
 */
static void dlcp_rs_test_pages(struct kunit *test)
{
	const u32 n = 3 * DLCP_RS_PAGE_RANGES + 5;
	struct dlcp_rangeset rs = { };
	u32 i, k, added;

	/* [4k, 4k + 2) for every k < n, in the order k = 7i mod n */
	for (i = 0; i < n; i++) {
		k = (7 * i) % n;
		KUNIT_ASSERT_EQ(test, dlcp_rs_add(&rs, 4 * k, 4 * k + 2,
						  GFP_KERNEL, &added), 0);
	}
	KUNIT_ASSERT_EQ(test, rs.nr, n);
	KUNIT_EXPECT_EQ(test, rs.bytes, 2 * n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, dlcp_rs_at(&rs, i)->start, 4 * i);
		KUNIT_EXPECT_EQ(test, dlcp_rs_at(&rs, i)->end, 4 * i + 2);
	}
	for (i = 0; i < DLCP_RS_PAGES; i++)
		if (rs.pg[i])
			KUNIT_EXPECT_LE(test, ksize(rs.pg[i]), PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, dlcp_rs_covers(&rs, 4 * (n - 1), 4 * n - 2));

	/* fill the holes from the end: each merges two ranges into one */
	for (k = n - 1; k > 0; k--)
		KUNIT_ASSERT_EQ(test, dlcp_rs_add(&rs, 4 * k - 2, 4 * k,
						  GFP_KERNEL, &added), 0);
	KUNIT_EXPECT_EQ(test, rs.nr, 1);
	KUNIT_EXPECT_EQ(test, rs.bytes, 4 * n - 2);
	KUNIT_EXPECT_TRUE(test, dlcp_rs_covers(&rs, 0, 4 * n - 2));
	dlcp_rs_free(&rs);
	KUNIT_EXPECT_EQ(test, rs.cap, 0);
}

/*
 * Packets written into a message buffer at offsets that cross pages, one
 * over more pages than dlcp_buf_from_skb() keeps from its first pass:
 * every byte lands where its offset says, and the bytes between the
 * packets read as zeros.
 */
static void dlcp_buf_test_from_skb(struct kunit *test)
{
	static const u32 pkts[][2] = {
		{ 100, 1428 },			/* within page 0 */
		{ 4000, 1428 },			/* across pages 0 and 1 */
		{ 3 * 4096 - 7, 5 * 4096 + 20 },	/* over 7 pages */
	};
	const u32 len = 9 * 4096;
	struct dlcp_buf b;
	struct sk_buff *skb;
	u8 *got, want;
	u32 i, j, off, wrong = 0;
	int n;

	got = kvzalloc(len, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, got);
	dlcp_buf_init(&b, len);
	for (i = 0; i < ARRAY_SIZE(pkts); i++) {
		skb = alloc_skb(8 + pkts[i][1], GFP_KERNEL);
		if (!skb)
			break;
		/* 8 bytes of header that must not be copied */
		memset(skb_put(skb, 8), 0xee, 8);
		for (j = 0; j < pkts[i][1]; j++)
			*(u8 *)skb_put(skb, 1) = (u8)(pkts[i][0] + j) | 1;
		n = dlcp_buf_from_skb(&b, pkts[i][0], skb, 8, pkts[i][1],
				      GFP_KERNEL);
		kfree_skb(skb);
		KUNIT_EXPECT_GE(test, n, 0);
	}
	KUNIT_EXPECT_EQ(test, i, ARRAY_SIZE(pkts));
	KUNIT_EXPECT_EQ(test, b.nr_alloc, 9);
	dlcp_buf_copy(&b, 0, len, got);
	for (off = 0; off < len; off++) {
		want = 0;
		for (i = 0; i < ARRAY_SIZE(pkts); i++)
			if (off >= pkts[i][0] && off < pkts[i][0] + pkts[i][1])
				want = (u8)off | 1;
		/* bytes no packet wrote are cleared only at delivery */
		if (!want)
			continue;
		if (got[off] != want)
			wrong++;
	}
	KUNIT_EXPECT_EQ(test, wrong, 0);
	dlcp_buf_free(&b);
	kvfree(got);
}

static struct kunit_case dlcp_rs_test_cases[] = {
	KUNIT_CASE(dlcp_rs_test_insert),
	KUNIT_CASE(dlcp_rs_test_merge),
	KUNIT_CASE(dlcp_rs_test_covers),
	KUNIT_CASE(dlcp_rs_test_limit),
	KUNIT_CASE(dlcp_rs_test_pages),
	KUNIT_CASE(dlcp_buf_test_from_skb),
	{}
};

struct kunit_suite dlcp_rs_test_suite = {
	.name = "dlcp_rs",
	.test_cases = dlcp_rs_test_cases,
};
