// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of dlcp_buf.c: the byte-range sets, the receiver's record
 * of what has arrived of a message, and the message buffer it fills.
 */
#include <linux/slab.h>
#include <linux/uio.h>
#include <net/checksum.h>
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
 * every byte lands where its offset says.
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
	/* read back through the packets' view of the pages */
	skb = alloc_skb(0, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, skb);
	KUNIT_EXPECT_EQ(test, dlcp_buf_frag_skb(&b, 0, len, skb), 0);
	KUNIT_EXPECT_EQ(test, skb_copy_bits(skb, 0, got, len), 0);
	kfree_skb(skb);
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

/* Which spans hold no byte of the set: the test dlcp_buf_may_keep() needs */
static void dlcp_rs_test_misses(struct kunit *test)
{
	struct dlcp_rangeset rs = { };
	u32 added;

	KUNIT_EXPECT_TRUE(test, dlcp_rs_misses(&rs, 0, 100));
	dlcp_rs_add(&rs, 10, 20, GFP_KERNEL, &added);
	dlcp_rs_add(&rs, 30, 40, GFP_KERNEL, &added);
	KUNIT_EXPECT_TRUE(test, dlcp_rs_misses(&rs, 0, 10));
	KUNIT_EXPECT_FALSE(test, dlcp_rs_misses(&rs, 0, 11));
	KUNIT_EXPECT_TRUE(test, dlcp_rs_misses(&rs, 20, 30));
	KUNIT_EXPECT_FALSE(test, dlcp_rs_misses(&rs, 19, 21));
	KUNIT_EXPECT_FALSE(test, dlcp_rs_misses(&rs, 25, 35));
	KUNIT_EXPECT_FALSE(test, dlcp_rs_misses(&rs, 12, 15));
	KUNIT_EXPECT_FALSE(test, dlcp_rs_misses(&rs, 0, 100));
	KUNIT_EXPECT_TRUE(test, dlcp_rs_misses(&rs, 40, 100));
	dlcp_rs_free(&rs);
}

/*
 * A DATA packet of @len bytes at @off: @hlen bytes of header that must not
 * reach the message, then the byte pattern of its offsets, the first
 * @linear bytes in the linear part and the rest in a page fragment.
 */
static struct sk_buff *bt_pkt(u32 hlen, u32 off, u32 len, u32 linear)
{
	struct sk_buff *skb = alloc_skb(hlen + linear, GFP_KERNEL);
	struct page *p;
	u8 *va;
	u32 j;

	if (!skb)
		return NULL;
	memset(skb_put(skb, hlen), 0xee, hlen);
	for (j = 0; j < linear; j++)
		*(u8 *)skb_put(skb, 1) = (u8)(off + j) | 1;
	if (len == linear)
		return skb;
	p = alloc_page(GFP_KERNEL);
	if (!p) {
		kfree_skb(skb);
		return NULL;
	}
	va = page_address(p);
	for (j = linear; j < len; j++)
		va[j - linear] = (u8)(off + j) | 1;
	skb_fill_page_desc(skb, 0, p, 0, len - linear);
	skb->len += len - linear;
	skb->data_len += len - linear;
	skb->truesize += PAGE_SIZE;
	return skb;
}

/* Packet @i of a message of 1428-byte packets, behind 8 bytes of header */
static struct sk_buff *bt_seg(u32 i)
{
	return bt_pkt(8, i * 1428, 1428, i % 2 ? 100 : 1428);
}

/*
 * Packets kept by reference and packets copied into pages make one
 * message. Packets 0-2 and 4-11 are kept in order; packet 3 would go
 * eight places before the last and is copied; 13 is kept, then 12 one
 * place before it; 14 and the 100-byte tail are lost, 15 is copied.
 * recvmsg's copy (dlcp_buf_to_iter()) reads every byte from where it is,
 * the lost ones zeroed; a copy of fewer bytes stops inside a packet.
 */
static void dlcp_buf_test_keep(struct kunit *test)
{
	static const u8 kept[] = { 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 13, 12 };
	const u32 len = 16 * 1428 + 100;
	struct kvec kv;
	struct iov_iter it;
	struct sk_buff *skb;
	struct dlcp_buf b;
	u32 i, off, truesize = 0, wrong = 0;
	u8 *got, want;

	got = kvzalloc(len, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, got);
	memset(got, 0x55, len);
	dlcp_buf_init(&b, len);
	for (i = 0; i < ARRAY_SIZE(kept); i++) {
		KUNIT_EXPECT_TRUE(test, dlcp_buf_may_keep(&b, kept[i] * 1428));
		skb = bt_seg(kept[i]);
		KUNIT_ASSERT_TRUE(test, skb);
		truesize += skb->truesize;
		dlcp_buf_keep_skb(&b, skb, 8, kept[i] * 1428, 1428);
		if (kept[i] == 11)
			KUNIT_EXPECT_FALSE(test, dlcp_buf_may_keep(&b, 3 * 1428));
	}
	KUNIT_EXPECT_EQ(test, skb_queue_len(&b.skbs), ARRAY_SIZE(kept));
	KUNIT_EXPECT_EQ(test, b.skb_truesize, truesize);
	for (i = 3; i <= 15; i += 12) {
		skb = bt_seg(i);
		KUNIT_ASSERT_TRUE(test, skb);
		KUNIT_EXPECT_GE(test, dlcp_buf_from_skb(&b, i * 1428, skb, 8,
							1428, GFP_KERNEL), 0);
		kfree_skb(skb);
	}
	/* the receiver zeroes what did not arrive, at delivery */
	dlcp_buf_zero(&b, 14 * 1428, 1428);
	dlcp_buf_zero(&b, 16 * 1428, 100);

	kv.iov_base = got;
	kv.iov_len = len;
	iov_iter_kvec(&it, ITER_DEST, &kv, 1, len);
	KUNIT_EXPECT_EQ(test, dlcp_buf_to_iter(&b, len, &it), 0);
	KUNIT_EXPECT_EQ(test, iov_iter_count(&it), 0);
	for (off = 0; off < len; off++) {
		want = off / 1428 == 14 || off >= 16 * 1428 ? 0 : (u8)off | 1;
		if (got[off] != want)
			wrong++;
	}
	KUNIT_EXPECT_EQ(test, wrong, 0);

	/* truncated inside packet 1 (kept, partly in a fragment) */
	memset(got, 0x55, len);
	iov_iter_kvec(&it, ITER_DEST, &kv, 1, len);
	KUNIT_EXPECT_EQ(test, dlcp_buf_to_iter(&b, 2000, &it), 0);
	KUNIT_EXPECT_EQ(test, iov_iter_count(&it), len - 2000);
	KUNIT_EXPECT_EQ(test, got[1999], (u8)1999 | 1);
	KUNIT_EXPECT_EQ(test, got[2000], 0x55);

	dlcp_buf_free(&b);
	KUNIT_EXPECT_TRUE(test, skb_queue_empty(&b.skbs));
	KUNIT_EXPECT_EQ(test, b.skb_truesize, 0);
	kvfree(got);
}

static struct kunit_case dlcp_rs_test_cases[] = {
	KUNIT_CASE(dlcp_rs_test_insert),
	KUNIT_CASE(dlcp_rs_test_merge),
	KUNIT_CASE(dlcp_rs_test_covers),
	KUNIT_CASE(dlcp_rs_test_limit),
	KUNIT_CASE(dlcp_rs_test_pages),
	KUNIT_CASE(dlcp_rs_test_misses),
	KUNIT_CASE(dlcp_buf_test_from_skb),
	KUNIT_CASE(dlcp_buf_test_keep),
	{}
};

struct kunit_suite dlcp_rs_test_suite = {
	.name = "dlcp_rs",
	.test_cases = dlcp_rs_test_cases,
};
