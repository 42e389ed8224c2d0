// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the congestion window arithmetic of dlcp_cc.c and the
 * timeout of dlcp_peer.c, on a peer of a kernel DLCP socket.
 */
#include <linux/delay.h>
#include <linux/net.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

#define CT_SRTT_US	USEC_PER_SEC	/* rounds far longer than a test */

struct ct_ctx {
	struct socket	*sock;
	struct sock	*sk;
	struct dlcp_peer *p;
};

static int ct_open(struct ct_ctx *c)
{
	int err;

	err = sock_create_kern(&init_net, PF_INET, SOCK_DLCP, 0, &c->sock);
	if (err)
		return err;
	c->sk = c->sock->sk;
	c->p = dlcp_peer_alloc();
	if (!c->p) {
		sock_release(c->sock);
		return -ENOMEM;
	}
	dlcp_cc_init(c->sk, c->p);
	c->p->srtt_us = CT_SRTT_US;
	return 0;
}

static void ct_close(struct ct_ctx *c)
{
	kfree(c->p);
	sock_release(c->sock);
}

/* A REPORT; with @round_end the round it belongs to is over. */
static void ct_report(struct ct_ctx *c, u32 acked, u32 lost, u32 ce_bytes,
		      bool round_end)
{
	struct dlcp_sock *dsk = dlcp_sk(c->sk);

	spin_lock_bh(&dsk->lock);
	c->p->cc.round_start_us = dlcp_now_us() -
				  (round_end ? 2 * CT_SRTT_US : 0);
	dlcp_cc_on_report(c->sk, c->p, acked, acked * 1000, lost, ce_bytes);
	spin_unlock_bh(&dsk->lock);
}

/* As ct_open(), in congestion avoidance (ssthresh = cwnd): the window. */
static int ct_open_ca(struct ct_ctx *c, u32 *cwnd)
{
	int err = ct_open(c);

	if (!err) {
		*cwnd = c->p->cwnd;
		c->p->cc.ssthresh = *cwnd;
	}
	return err;
}

static u32 ct_max_cwnd(void)
{
	return READ_ONCE(dlcp_pernet(&init_net)->max_cwnd);
}

/* Slow start: one segment more per segment acknowledged. */
static void dlcp_cc_test_slow_start(struct kunit *test)
{
	struct ct_ctx c;
	u32 cwnd;

	KUNIT_ASSERT_EQ(test, ct_open(&c), 0);
	cwnd = c.p->cwnd;
	KUNIT_EXPECT_EQ(test, cwnd,
			READ_ONCE(dlcp_pernet(&init_net)->init_cwnd));
	ct_report(&c, 10, 0, 0, false);
	KUNIT_EXPECT_EQ(test, c.p->cwnd, cwnd + 10);
	/* never past net.dlcp.max_cwnd */
	ct_report(&c, 10 * ct_max_cwnd(), 0, 0, false);
	KUNIT_EXPECT_EQ(test, c.p->cwnd, ct_max_cwnd());
	ct_close(&c);
}

/* Above ssthresh: one segment more per window acknowledged. */
static void dlcp_cc_test_additive(struct kunit *test)
{
	struct ct_ctx c;
	u32 cwnd;

	KUNIT_ASSERT_EQ(test, ct_open_ca(&c, &cwnd), 0);
	ct_report(&c, cwnd - 1, 0, 0, false);
	KUNIT_EXPECT_EQ(test, c.p->cwnd, cwnd);
	ct_report(&c, 1, 0, 0, false);
	KUNIT_EXPECT_EQ(test, c.p->cwnd, cwnd + 1);
	ct_close(&c);
}

/*
 * A round that lost more than an eighth of its segments halves the window,
 * once per round trip; sparse random losses do not.
 */
static void dlcp_cc_test_loss(struct kunit *test)
{
	struct ct_ctx c;
	u32 cwnd;

	KUNIT_ASSERT_EQ(test, ct_open_ca(&c, &cwnd), 0);
	ct_report(&c, 14, 2, 0, true);		/* 2 of 16: random */
	KUNIT_EXPECT_EQ(test, c.p->cwnd, cwnd);
	ct_report(&c, 8, 4, 0, true);		/* 4 of 12: a queue */
	KUNIT_EXPECT_EQ(test, c.p->cwnd, cwnd / 2);
	KUNIT_EXPECT_EQ(test, c.p->cc.ssthresh, cwnd / 2);
	ct_report(&c, 8, 4, 0, true);		/* same round trip */
	KUNIT_EXPECT_EQ(test, c.p->cwnd, cwnd / 2);
	ct_close(&c);
}

/* ECN as DCTCP: a round all CE-marked halves the window (alpha = 1). */
static void dlcp_cc_test_ecn(struct kunit *test)
{
	struct ct_ctx c;
	u32 cwnd;

	KUNIT_ASSERT_EQ(test, ct_open_ca(&c, &cwnd), 0);
	ct_report(&c, 10, 0, 10 * 1000, true);
	KUNIT_EXPECT_EQ(test, c.p->cwnd, cwnd - cwnd / 2);
	ct_close(&c);
}

/* The window never falls below its floor. */
static void dlcp_cc_test_floor(struct kunit *test)
{
	struct ct_ctx c;

	KUNIT_ASSERT_EQ(test, ct_open(&c), 0);
	c.p->cwnd = 5;
	c.p->cc.ssthresh = 5;
	ct_report(&c, 2, 3, 0, true);
	KUNIT_EXPECT_EQ(test, c.p->cwnd, 4);
	ct_close(&c);
}

/* A timeout halves the window; the later ones of a series do not. */
static void dlcp_cc_test_timeout(struct kunit *test)
{
	struct dlcp_sock *dsk;
	struct ct_ctx c;
	u32 cwnd;

	KUNIT_ASSERT_EQ(test, ct_open(&c), 0);
	dsk = dlcp_sk(c.sk);
	cwnd = c.p->cwnd;
	spin_lock_bh(&dsk->lock);
	c.p->rto_shift = 2;
	dlcp_cc_on_timeout(c.sk, c.p);
	KUNIT_EXPECT_EQ(test, c.p->cwnd, cwnd);
	c.p->rto_shift = 1;
	dlcp_cc_on_timeout(c.sk, c.p);
	KUNIT_EXPECT_EQ(test, c.p->cwnd, cwnd / 2);
	KUNIT_EXPECT_EQ(test, c.p->cc.undo_cwnd, cwnd);
	spin_unlock_bh(&dsk->lock);
	ct_close(&c);
}

/* RFC 6298's timeout, doubled per back-off, within its bounds. */
static void dlcp_cc_test_rto(struct kunit *test)
{
	struct dlcp_net *dn = dlcp_pernet(&init_net);
	u32 rto_min = READ_ONCE(dn->rto_min_ms) * USEC_PER_MSEC;
	int msg_timeout_ms = READ_ONCE(dn->msg_timeout_ms);
	struct ct_ctx c;

	KUNIT_ASSERT_EQ(test, ct_open(&c), 0);
	KUNIT_EXPECT_EQ(test, dlcp_peer_rto_us(c.sk, NULL),
			max_t(u32, rto_min, 200 * USEC_PER_MSEC));
	c.p->srtt_us = 100 * USEC_PER_MSEC;
	c.p->rttvar_us = 10 * USEC_PER_MSEC;
	KUNIT_EXPECT_EQ(test, dlcp_peer_rto_us(c.sk, c.p),
			max_t(u32, rto_min, 140 * USEC_PER_MSEC));
	c.p->rto_shift = 1;
	KUNIT_EXPECT_EQ(test, dlcp_peer_rto_us(c.sk, c.p),
			2 * max_t(u32, rto_min, 140 * USEC_PER_MSEC));
	/* a huge sample or back-off stays at the cap, never wraps */
	c.p->srtt_us = DLCP_RTT_MAX_US;
	c.p->rto_shift = 31;
	KUNIT_EXPECT_EQ(test, dlcp_peer_rto_us(c.sk, c.p), DLCP_RTO_MAX_US);
	/*
	 * A short msg_timeout_ms stops the back-off at a fifth of it, so
	 * that several transmissions go out before a message gives up, but
	 * never below the RTO itself.
	 */
	c.p->srtt_us = 100 * USEC_PER_MSEC;
	WRITE_ONCE(dn->msg_timeout_ms, 4000);
	KUNIT_EXPECT_EQ(test, dlcp_peer_rto_us(c.sk, c.p),
			4000 * USEC_PER_MSEC / DLCP_GIVE_UP_TRIES);
	WRITE_ONCE(dn->msg_timeout_ms, 1);
	KUNIT_EXPECT_EQ(test, dlcp_peer_rto_us(c.sk, c.p),
			max_t(u32, rto_min, 140 * USEC_PER_MSEC));
	WRITE_ONCE(dn->msg_timeout_ms, msg_timeout_ms);
	ct_close(&c);
}

/* An RTT sample of a packet sent @rtt_us ago. */
static void ct_rtt(struct ct_ctx *c, u32 rtt_us)
{
	dlcp_peer_rtt_sample(c->p, dlcp_now_us() - rtt_us);
}

/*
 * The timeout's variation keeps the largest deviation of a round trip:
 * many samples a round trip (a REPORT every few packets) do not wear it
 * down at once, as RFC 6298's per-sample filter did; once a round trip
 * it shrinks by at most a quarter.
 */
static void dlcp_cc_test_rttvar_round(struct kunit *test)
{
	struct ct_ctx c;
	u32 var, i;

	KUNIT_ASSERT_EQ(test, ct_open(&c), 0);
	c.p->mdev_us = 1000;
	c.p->mdev_max_us = 1000;
	c.p->rttvar_us = 1000;
	c.p->rttvar_stamp_us = dlcp_now_us();
	ct_rtt(&c, CT_SRTT_US + CT_SRTT_US / 5);	/* a late one */
	var = c.p->rttvar_us;
	KUNIT_EXPECT_GT(test, var, CT_SRTT_US / 25);
	for (i = 0; i < 20; i++)
		ct_rtt(&c, CT_SRTT_US);
	KUNIT_EXPECT_EQ(test, c.p->rttvar_us, var);
	KUNIT_EXPECT_LT(test, c.p->mdev_us, var);
	/* the round that saw it ends: it still counts; the next one decays */
	c.p->rttvar_stamp_us = dlcp_now_us() - 2 * CT_SRTT_US;
	ct_rtt(&c, CT_SRTT_US);
	KUNIT_EXPECT_EQ(test, c.p->rttvar_us, var);
	c.p->rttvar_stamp_us = dlcp_now_us() - 2 * CT_SRTT_US;
	ct_rtt(&c, CT_SRTT_US);
	KUNIT_EXPECT_LT(test, c.p->rttvar_us, var);
	KUNIT_EXPECT_GE(test, c.p->rttvar_us, var - var / 4);
	ct_close(&c);
}

/*
 * A timeout that a late sample proves spurious (Eifel) keeps the timeout
 * above twice that sample; a sample of a packet sent after the timeout
 * confirms it and changes nothing.
 */
static void dlcp_cc_test_spurious_timeout(struct kunit *test)
{
	u32 rto_min = READ_ONCE(dlcp_pernet(&init_net)->rto_min_ms) *
		      USEC_PER_MSEC;
	u32 late = 3 * rto_min;
	struct dlcp_sock *dsk;
	struct ct_ctx c;
	bool confirm;

	for (confirm = false; ; confirm = true) {
		KUNIT_ASSERT_EQ(test, ct_open(&c), 0);
		dsk = dlcp_sk(c.sk);
		c.p->srtt_us = 1000;
		c.p->rttvar_us = 100;
		c.p->rttvar_stamp_us = dlcp_now_us();
		KUNIT_EXPECT_EQ(test, dlcp_peer_rto_us(c.sk, c.p), rto_min);
		spin_lock_bh(&dsk->lock);
		c.p->rto_shift = 1;
		dlcp_cc_on_timeout(c.sk, c.p);
		spin_unlock_bh(&dsk->lock);
		KUNIT_ASSERT_TRUE(test, c.p->cc.undo_cwnd);
		if (confirm) {
			usleep_range(10, 20);
			ct_rtt(&c, 1);
			KUNIT_EXPECT_FALSE(test, c.p->cc.undo);
			KUNIT_EXPECT_EQ(test, dlcp_peer_rto_us(c.sk, c.p),
					rto_min);
			ct_close(&c);
			break;
		}
		ct_rtt(&c, late);
		KUNIT_EXPECT_TRUE(test, c.p->cc.undo);
		KUNIT_EXPECT_EQ(test, c.p->rto_shift, 0);
		KUNIT_EXPECT_GE(test, dlcp_peer_rto_us(c.sk, c.p), 2 * late);
		/* later, ordinary samples do not lower it within the window */
		ct_rtt(&c, 1000);
		ct_rtt(&c, 1000);
		KUNIT_EXPECT_GE(test, dlcp_peer_rto_us(c.sk, c.p), 2 * late);
		ct_close(&c);
	}
}

static struct kunit_case dlcp_cc_test_cases[] = {
	KUNIT_CASE(dlcp_cc_test_slow_start),
	KUNIT_CASE(dlcp_cc_test_additive),
	KUNIT_CASE(dlcp_cc_test_loss),
	KUNIT_CASE(dlcp_cc_test_ecn),
	KUNIT_CASE(dlcp_cc_test_floor),
	KUNIT_CASE(dlcp_cc_test_timeout),
	KUNIT_CASE(dlcp_cc_test_rto),
	KUNIT_CASE(dlcp_cc_test_rttvar_round),
	KUNIT_CASE(dlcp_cc_test_spurious_timeout),
	{}
};

struct kunit_suite dlcp_cc_test_suite = {
	.name = "dlcp_cc",
	.test_cases = dlcp_cc_test_cases,
};
