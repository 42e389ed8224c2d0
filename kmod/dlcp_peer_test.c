// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the path state of dlcp_peer.c: the reordering window
 * (widened by a needless resend, narrowed by calm rounds), the memory of
 * how late a needlessly resent original was, and the pacing clock.
 */
#include <linux/net.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

#define PT_SRTT_US	40000

/* A needless resend widens the window by a quarter srtt, once an srtt. */
static void dlcp_peer_test_reorder_widen(struct kunit *test)
{
	struct dlcp_peer *p = dlcp_peer_alloc();
	struct socket *sock;
	u32 base, i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	if (sock_create_kern(&init_net, PF_INET, SOCK_DLCP, 0, &sock)) {
		kfree(p);
		KUNIT_ASSERT_TRUE(test, false);
	}
	p->srtt_us = PT_SRTT_US;
	base = READ_ONCE(dlcp_pernet(&init_net)->reorder_us);
	KUNIT_EXPECT_EQ(test, p->reo_mult, 1);
	KUNIT_EXPECT_EQ(test, dlcp_peer_reorder_us(sock->sk, p),
			PT_SRTT_US / 4 + base);

	p->reo_stamp_us = dlcp_now_us() - PT_SRTT_US;
	dlcp_peer_dup_report(p, 0);
	KUNIT_EXPECT_EQ(test, p->reo_mult, 2);
	/* a second one within the same srtt changes nothing */
	dlcp_peer_dup_report(p, 0);
	KUNIT_EXPECT_EQ(test, p->reo_mult, 2);
	KUNIT_EXPECT_EQ(test, dlcp_peer_reorder_us(sock->sk, p),
			2 * PT_SRTT_US / 4 + base);

	/* one an srtt: up to two srtt, no further */
	for (i = 0; i < 20; i++) {
		p->reo_stamp_us = dlcp_now_us() - PT_SRTT_US;
		dlcp_peer_dup_report(p, 0);
	}
	KUNIT_EXPECT_EQ(test, p->reo_mult, 8);
	KUNIT_EXPECT_EQ(test, dlcp_peer_reorder_us(sock->sk, p),
			2 * PT_SRTT_US + base);

	sock_release(sock);
	kfree(p);
}

/* 16 rounds without a needless resend narrow the window by a quarter. */
static void dlcp_peer_test_reorder_calm(struct kunit *test)
{
	struct dlcp_peer *p = dlcp_peer_alloc();
	u32 i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	p->srtt_us = PT_SRTT_US;
	p->reo_mult = 3;
	for (i = 0; i < 15; i++)
		dlcp_peer_reorder_round(p);
	KUNIT_EXPECT_EQ(test, p->reo_mult, 3);
	/* a resend flagged needless starts the count again */
	p->reo_stamp_us = dlcp_now_us();
	dlcp_peer_dup_report(p, 0);
	KUNIT_EXPECT_EQ(test, p->reo_mult, 3);
	for (i = 0; i < 15; i++)
		dlcp_peer_reorder_round(p);
	KUNIT_EXPECT_EQ(test, p->reo_mult, 3);
	dlcp_peer_reorder_round(p);
	KUNIT_EXPECT_EQ(test, p->reo_mult, 2);
	for (i = 0; i < 100; i++)
		dlcp_peer_reorder_round(p);
	KUNIT_EXPECT_EQ(test, p->reo_mult, 1);
	kfree(p);
}

/*
 * A needless resend after RACK found its original lost at age A keeps the
 * window at A or more for DLCP_LATE_WIN_US (a stalled per-CPU queue
 * reorders by far more than srtt); the timeout does not change.
 */
static void dlcp_peer_test_dup_report_ages(struct kunit *test)
{
	struct dlcp_peer *p = dlcp_peer_alloc();
	struct socket *sock;
	u32 base;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	if (sock_create_kern(&init_net, PF_INET, SOCK_DLCP, 0, &sock)) {
		kfree(p);
		KUNIT_ASSERT_TRUE(test, false);
	}
	p->srtt_us = 100;
	p->rttvar_us = 50;
	base = READ_ONCE(dlcp_pernet(&init_net)->reorder_us);
	KUNIT_EXPECT_EQ(test, dlcp_peer_reorder_us(sock->sk, p), 25 + base);

	dlcp_peer_dup_report(p, 30000);
	KUNIT_EXPECT_EQ(test, dlcp_peer_reorder_us(sock->sk, p),
			30000 + base);
	/* a smaller age later does not narrow it */
	dlcp_peer_dup_report(p, 5000);
	KUNIT_EXPECT_EQ(test, dlcp_peer_reorder_us(sock->sk, p),
			30000 + base);
	/* nor do rounds within the window; the cap holds */
	dlcp_peer_reorder_round(p);
	KUNIT_EXPECT_EQ(test, dlcp_peer_reorder_us(sock->sk, p),
			30000 + base);
	dlcp_peer_dup_report(p, 10 * USEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, dlcp_peer_reorder_us(sock->sk, p),
			DLCP_REO_MAX_US + base);

	/* the window expires: rounds age the sample away */
	p->reo_late_us.s[0].t -= DLCP_LATE_WIN_US + 1;
	p->reo_late_us.s[1] = p->reo_late_us.s[0];
	p->reo_late_us.s[2] = p->reo_late_us.s[0];
	dlcp_peer_reorder_round(p);
	KUNIT_EXPECT_LE(test, dlcp_peer_reorder_us(sock->sk, p),
			p->reo_mult * 25 + base);

	/* the timeout is not the reordering window's business */
	KUNIT_EXPECT_LT(test, dlcp_peer_rto_us(sock->sk, p), 40000U);

	sock_release(sock);
	kfree(p);
}

/* Pacing: a burst of two intervals, then one packet an interval. */
static void dlcp_peer_test_pacing(struct kunit *test)
{
	struct dlcp_peer *p = dlcp_peer_alloc();
	const u64 iv = 10000, now = 1000000000ULL;
	u32 i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_ns(p), 0);
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_room(p, now, 0), U32_MAX);
	/* twice the window per srtt */
	p->srtt_us = 100;
	p->cwnd = 10;
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_ns(p), 5000);

	/* an idle peer: a clock in the past counts from now */
	p->next_xmit_ns = now - 100 * iv;
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_room(p, now, iv), 3);
	for (i = 0; i < 3; i++)
		dlcp_peer_pace_sent(p, now, iv);
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_next(p), now + 3 * iv);
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_room(p, now, iv), 0);
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_room(p, now + iv - 1, iv), 0);
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_room(p, now + iv, iv), 1);
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_room(p, now + 2 * iv, iv), 2);
	dlcp_peer_pace_sent(p, now + iv, iv);
	KUNIT_EXPECT_EQ(test, dlcp_peer_pace_next(p), now + 4 * iv);
	kfree(p);
}

static struct kunit_case dlcp_peer_test_cases[] = {
	KUNIT_CASE(dlcp_peer_test_reorder_widen),
	KUNIT_CASE(dlcp_peer_test_dup_report_ages),
	KUNIT_CASE(dlcp_peer_test_reorder_calm),
	KUNIT_CASE(dlcp_peer_test_pacing),
	{}
};

struct kunit_suite dlcp_peer_test_suite = {
	.name = "dlcp_peer",
	.test_cases = dlcp_peer_test_cases,
};
