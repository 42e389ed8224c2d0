// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the transmit path's pure parts: dlcp_out_resegment(), the
 * re-cut of a message in flight into smaller segments after the path MTU
 * dropped, and the size of a UDP GSO super-packet.
 */
#include <linux/bitmap.h>
#include <linux/net.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

#define RS_LEN		10000
#define RS_OLD		1000
#define RS_NEW		400

/*
 * Old segments of 1000 bytes: 0, 1 and 3 acknowledged, 2 lost, 4 in
 * flight, the rest never sent; 3 critical; 8 and 9 droppable. New ones of
 * 400 bytes: acknowledged where every old segment under them was, never
 * sent where none was, else lost (to resend); critical where any old one
 * was, droppable where all were.
 */
static void dlcp_resegment_test_states(struct kunit *test)
{
	static const u8 want[] = {
		DLCP_SEG_ACKED, DLCP_SEG_ACKED, DLCP_SEG_ACKED,	/* 0-1199 */
		DLCP_SEG_ACKED, DLCP_SEG_ACKED,			/* -1999 */
		DLCP_SEG_LOST, DLCP_SEG_LOST, DLCP_SEG_LOST,	/* -3199 */
		DLCP_SEG_ACKED, DLCP_SEG_ACKED,			/* -3999 */
		DLCP_SEG_LOST, DLCP_SEG_LOST,			/* -4799 */
	};
	struct dlcp_out_msg *m;
	struct socket *sock;
	u32 s;

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, PF_INET, SOCK_DLCP,
					       0, &sock), 0);
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, m);
	m->len = RS_LEN;
	m->crit_len = RS_OLD;
	m->seg_size = RS_OLD;
	m->nsegs = RS_LEN / RS_OLD;
	m->lost_hint = U32_MAX;
	m->crit_hint = U32_MAX;
	m->seg = kvcalloc(m->nsegs, sizeof(*m->seg), GFP_KERNEL);
	m->crit = bitmap_zalloc(m->nsegs, GFP_KERNEL);
	m->droppable = bitmap_zalloc(m->nsegs, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, m->seg && m->crit && m->droppable);
	__set_bit(3, m->crit);
	__set_bit(8, m->droppable);
	__set_bit(9, m->droppable);
	dlcp_seg_set(m, 0, DLCP_SEG_ACKED);
	dlcp_seg_set(m, 1, DLCP_SEG_ACKED);
	dlcp_seg_set(m, 2, DLCP_SEG_LOST);
	dlcp_seg_set(m, 3, DLCP_SEG_ACKED);
	dlcp_seg_set(m, 4, DLCP_SEG_INFLIGHT);
	m->next_new = 5;

	spin_lock_bh(&dlcp_sk(sock->sk)->lock);
	KUNIT_EXPECT_EQ(test, dlcp_out_resegment(sock->sk, m, RS_NEW), 0);
	spin_unlock_bh(&dlcp_sk(sock->sk)->lock);

	KUNIT_EXPECT_EQ(test, m->seg_size, RS_NEW);
	KUNIT_EXPECT_EQ(test, m->nsegs, RS_LEN / RS_NEW);
	for (s = 0; s < m->nsegs; s++)
		KUNIT_EXPECT_EQ(test, m->seg[s],
				s < ARRAY_SIZE(want) ? want[s] : DLCP_SEG_NEW);
	KUNIT_EXPECT_EQ(test, m->next_new, ARRAY_SIZE(want));
	KUNIT_EXPECT_EQ(test, m->nr_acked, 7);
	KUNIT_EXPECT_EQ(test, m->nr_lost, 5);
	KUNIT_EXPECT_EQ(test, m->lost_bytes, 5 * RS_NEW);
	/* old segment 3 lies under new ones 7, 8 and 9; 7 is lost */
	for (s = 0; s < m->nsegs; s++)
		KUNIT_EXPECT_EQ(test, test_bit(s, m->crit), s >= 7 && s <= 9);
	KUNIT_EXPECT_EQ(test, m->nr_lost_crit, 1);
	/* old 8 and 9 cover bytes 8000-9999: new 20-24; 19 reaches into 7 */
	for (s = 0; s < m->nsegs; s++)
		KUNIT_EXPECT_EQ(test, test_bit(s, m->droppable), s >= 20);

	kvfree(m->seg);
	bitmap_free(m->crit);
	bitmap_free(m->droppable);
	kfree(m);
	sock_release(sock);
}

/*
 * A UDP GSO super-packet's length must fit the IP length field: over
 * IPv4 the total length counts the IP and UDP headers, over IPv6 the
 * payload length the UDP header only.
 */
static void dlcp_out_test_gso_max_bytes(struct kunit *test)
{
	struct in6_addr v4, v6 = IN6ADDR_LOOPBACK_INIT;

	ipv6_addr_set_v4mapped(htonl(INADDR_LOOPBACK), &v4);
	KUNIT_EXPECT_EQ(test, dlcp_gso_max_bytes(&v4) + sizeof(struct iphdr) +
			sizeof(struct udphdr), (size_t)U16_MAX);
	KUNIT_EXPECT_EQ(test, dlcp_gso_max_bytes(&v6) + sizeof(struct udphdr),
			(size_t)U16_MAX);
}

static struct kunit_case dlcp_out_test_cases[] = {
	KUNIT_CASE(dlcp_resegment_test_states),
	KUNIT_CASE(dlcp_out_test_gso_max_bytes),
	{}
};

struct kunit_suite dlcp_out_test_suite = {
	.name = "dlcp_out",
	.test_cases = dlcp_out_test_cases,
};
