// SPDX-License-Identifier: GPL-2.0
/*
 * The destinations of a DLCP socket, and the state of the path to each:
 * the round-trip estimate and retransmission timeout (RFC 6298), the
 * reordering window (RACK, RFC 8985) and the pacing interval. The window
 * itself is the congestion controller's (dlcp_cc.c).
 *
 * Path state belongs to a path, not to a socket: a parameter server
 * sends its pulls to every worker from one socket, and a window shared by
 * all of them would let one congested link slow every transfer. Each
 * destination host a socket sends to gets a struct dlcp_peer with its own
 * window, pacing clock and round-trip estimate. Messages hold a count on
 * their peer; a peer outlives its messages, so that the next iteration
 * starts from what the last one learned, until the table is full
 * (DLCP_MAX_PEERS) and an unused one is reclaimed, or the socket closes.
 *
 * All changes happen under dlcp_sock.lock; /proc/net/dlcp/peers reads the
 * table under RCU.
 */
#include <linux/hash.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include "dlcp_impl.h"

#define DLCP_REO_MULT_MAX	8	/* reordering window up to 2 srtt */
#define DLCP_REO_CALM_ROUNDS	16	/* rounds without DUP to shrink it */

static struct hlist_head *dlcp_peer_bucket(struct dlcp_sock *dsk,
					   const struct in6_addr *daddr)
{
	return &dsk->peers[hash_32(ipv6_addr_hash(daddr), DLCP_PEER_HASH_BITS)];
}

/* A peer for dlcp_peer_get(), allocated before the socket lock is taken. */
struct dlcp_peer *dlcp_peer_alloc(void)
{
	struct dlcp_peer *p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);

	if (p)
		p->reo_mult = 1;
	return p;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_peer_alloc);

static void dlcp_peer_unlink(struct dlcp_sock *dsk, struct dlcp_peer *p)
{
	hlist_del_rcu(&p->node);
	dsk->nr_peers--;
	kfree_rcu(p, rcu);
}

/* Free one peer no message uses; false if there is none. */
static bool dlcp_peer_reclaim(struct dlcp_sock *dsk)
{
	struct dlcp_peer *p;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		hlist_for_each_entry(p, &dsk->peers[i], node)
			if (!p->nr_msgs) {
				dlcp_peer_unlink(dsk, p);
				return true;
			}
	return false;
}

/*
 * The peer for @daddr, counted for one more message; a new one is made
 * from *@spare (which is then NULL: the caller frees what is left). NULL
 * if the socket has DLCP_MAX_PEERS destinations with messages in flight.
 * Called with dsk->lock held.
 */
struct dlcp_peer *dlcp_peer_get(struct sock *sk,
				const struct in6_addr *daddr,
				struct dlcp_peer **spare)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct hlist_head *head = dlcp_peer_bucket(dsk, daddr);
	struct dlcp_peer *p;

	lockdep_assert_held(&dsk->lock);
	hlist_for_each_entry(p, head, node)
		if (ipv6_addr_equal(&p->daddr, daddr))
			goto found;
	if (dsk->nr_peers >= DLCP_MAX_PEERS && !dlcp_peer_reclaim(dsk))
		return NULL;
	p = *spare;
	*spare = NULL;
	p->daddr = *daddr;
	p->last_heard = jiffies;
	dlcp_cc_init(sk, p);
	hlist_add_head_rcu(&p->node, head);
	dsk->nr_peers++;
found:
	p->nr_msgs++;
	return p;
}

/* A message of @p is gone. */
void dlcp_peer_put(struct dlcp_peer *p)
{
	p->nr_msgs--;
}

/* Socket destruction: every message is gone. */
void dlcp_peer_free_all(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct hlist_node *tmp;
	struct dlcp_peer *p;
	u32 i;

	lockdep_assert_held(&dsk->lock);
	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		hlist_for_each_entry_safe(p, tmp, &dsk->peers[i], node) {
			WARN_ON_ONCE(p->nr_msgs);
			dlcp_peer_unlink(dsk, p);
		}
}

/*
 * RFC 6298's timeout for @p (NULL: a peer with no RTT sample yet), doubled
 * per timeout since the last RTT sample. The back-off stops at
 * DLCP_RTO_MAX_US, or sooner at 1/DLCP_GIVE_UP_TRIES of msg_timeout_ms:
 * a message gives up after msg_timeout_ms without a word from its
 * receiver, and a live receiver must have had that many transmissions to
 * answer by then, however slowly they go. Loss comes in bursts that span
 * packets, not time (a queue that overflows, a link that flaps): two
 * transmissions two seconds apart can both fall into one burst.
 */
u32 dlcp_peer_rto_us(const struct sock *sk, const struct dlcp_peer *p)
{
	const struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	u32 rto_min = READ_ONCE(dn->rto_min_ms) * USEC_PER_MSEC;
	u64 rto_max = (u64)READ_ONCE(dn->msg_timeout_ms) * USEC_PER_MSEC /
		      DLCP_GIVE_UP_TRIES;
	u32 rto;

	if (!p || !p->srtt_us)
		rto = max_t(u32, rto_min, 200 * USEC_PER_MSEC);
	else
		rto = max3(rto_min, p->srtt_us + 4 * p->rttvar_us,
			   2 * minmax_get(&p->late_us));
	/* clamped before the back-off, which could shift bits out */
	rto = min_t(u32, rto, DLCP_RTO_MAX_US);
	rto_max = clamp_t(u64, rto_max, rto, DLCP_RTO_MAX_US);
	return min_t(u64, (u64)rto << (p ? p->rto_shift : 0), rto_max);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_peer_rto_us);

/*
 * Fold the RTT of a packet stamped @tsecr into @p's estimate: srtt and the
 * mean deviation as RFC 6298, but the timeout's variation (@rttvar_us)
 * follows the largest deviation of each round trip and shrinks by at
 * most a quarter once a round trip, as tcp_rtt_estimator() does. A
 * REPORT every few packets gives many samples a round trip, and RFC 6298's
 * per-sample decay would forget a stall (a busy receiving CPU) within a
 * few of them, so that the next one timed out segments that were only
 * late. A sample below srtt moves the deviation eight times less: a
 * falling RTT is no reason to wait longer.
 */
void dlcp_peer_rtt_sample(struct dlcp_peer *p, u32 tsecr)
{
	u32 now = dlcp_now_us();
	s32 rtt = (s32)(now - tsecr), err, m;

	if (!tsecr || rtt <= 0 || rtt > DLCP_RTT_MAX_US)
		return;
	p->rto_shift = 0;
	/*
	 * A sample that proves a timeout spurious (the path was slow: a
	 * stalled receiver) keeps the timeout above twice it for
	 * DLCP_LATE_WIN_US, as RFC 4015 adapts it to the late sample: a
	 * busy host stalls again, and each spurious timeout resends a whole
	 * window. Every other sample ages the window.
	 */
	minmax_running_max(&p->late_us, DLCP_LATE_WIN_US, now,
			   dlcp_cc_on_rtt(p, rtt) ? rtt : 0);
	if (!p->srtt_us) {
		p->srtt_us = rtt;
		p->mdev_us = rtt / 2;
		p->mdev_max_us = p->mdev_us;
		p->rttvar_us = p->mdev_us;
		p->rttvar_stamp_us = now;
		return;
	}
	err = rtt - (s32)p->srtt_us;
	p->srtt_us = max_t(s32, (s32)p->srtt_us + err / 8, 1);
	m = abs(err) - (s32)p->mdev_us;
	if (err < 0 && m > 0)
		m /= 8;
	p->mdev_us += m / 4;
	p->mdev_max_us = max(p->mdev_max_us, p->mdev_us);
	p->rttvar_us = max(p->rttvar_us, p->mdev_max_us);
	if (now - p->rttvar_stamp_us >= p->srtt_us) {
		p->rttvar_us -= (p->rttvar_us - p->mdev_max_us) / 4;
		p->mdev_max_us = p->mdev_us;
		p->rttvar_stamp_us = now;
	}
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_peer_rtt_sample);

/*
 * The reordering window for @p (RACK, RFC 8985, section 6.2): reo_mult
 * quarters of the smoothed RTT, or the reordering that made a resend
 * needless in the last DLCP_LATE_WIN_US if that is more, plus
 * net.dlcp.reorder_us. A segment reported missing is lost once a packet
 * sent this much after it has arrived.
 */
u32 dlcp_peer_reorder_us(const struct sock *sk, const struct dlcp_peer *p)
{
	/* also read locklessly, for /proc/net/dlcp/peers */
	u32 w = READ_ONCE(p->reo_mult) * READ_ONCE(p->srtt_us) / 4;

	return max(w, READ_ONCE(p->reo_late_us.s[0].v)) +
	       READ_ONCE(dlcp_pernet(sock_net(sk))->reorder_us);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_peer_reorder_us);

/*
 * A REPORT said a resent segment had already arrived (DLCP_RF_DUP, as a
 * DSACK): it was overtaken, not lost, so the reordering window was too
 * short for this path (packets sprayed over paths of different delay).
 * Widen it by a quarter srtt, at most once a smoothed RTT;
 * DLCP_REO_CALM_ROUNDS rounds without one narrow it again
 * (dlcp_peer_reorder_round()).
 *
 * A quarter srtt a round trip is too slow for reordering that lasts many
 * round trips: a busy host whose CPUs hand a socket's packets to the
 * device through different per-CPU queues (veth, loopback) holds one
 * queue back for a scheduling slice, milliseconds, while the round trip
 * takes tens of microseconds. @rack_age_us, the largest age at which RACK
 * found the message's segments lost, bounds how late the original was: it
 * arrived before the resend did. For DLCP_LATE_WIN_US the reordering
 * window stays above it, as the timeout stays above a late RTT sample
 * (dlcp_peer_rtt_sample()). A needless resend after a timeout teaches the
 * timeout nothing here: a path that duplicates packets (netem) makes DUP
 * reports too, and an age learnt from a backed-off timeout would keep the
 * timeout at seconds; the timeout learns from RTT samples alone.
 */
void dlcp_peer_dup_report(struct dlcp_peer *p, u32 rack_age_us)
{
	u32 now = dlcp_now_us();

	p->reo_calm = 0;
	if (rack_age_us)
		minmax_running_max(&p->reo_late_us, DLCP_LATE_WIN_US, now,
				   min_t(u32, rack_age_us, DLCP_REO_MAX_US));

	if (p->reo_mult >= DLCP_REO_MULT_MAX ||
	    now - p->reo_stamp_us < p->srtt_us)
		return;
	p->reo_mult++;
	p->reo_stamp_us = now;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_peer_dup_report);

/* A round of @p ended (dlcp_cc.c): a calm one narrows the window. */
void dlcp_peer_reorder_round(struct dlcp_peer *p)
{
	/* ages the windowed max: an old late sample expires */
	minmax_running_max(&p->reo_late_us, DLCP_LATE_WIN_US, dlcp_now_us(),
			   0);
	if (p->reo_mult > 1 && ++p->reo_calm >= DLCP_REO_CALM_ROUNDS) {
		p->reo_mult--;
		p->reo_calm = 0;
	}
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_peer_reorder_round);

/* Time between two packets to @p: twice its window per smoothed RTT. */
u64 dlcp_peer_pace_ns(const struct dlcp_peer *p)
{
	if (!p->srtt_us)
		return 0;
	return div_u64((u64)p->srtt_us * NSEC_PER_USEC, 2 * p->cwnd);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_peer_pace_ns);

/*
 * Pacing allows a burst of two intervals: how many packets @p may be sent
 * at @now, one @interval (dlcp_peer_pace_ns()) apart, 0 if it must wait;
 * U32_MAX if @p is not paced.
 */
u32 dlcp_peer_pace_room(const struct dlcp_peer *p, u64 now, u64 interval)
{
	u64 ahead;

	if (!interval)
		return U32_MAX;
	if (dlcp_peer_pace_wait(p, now, interval))
		return 0;
	ahead = now + 2 * interval - max(p->next_xmit_ns, now);
	return min_t(u64, div64_u64(ahead, interval) + 1, U32_MAX - 1);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_peer_pace_room);

/* The shortest retransmission timeout of the peers that have messages. */
u32 dlcp_peer_min_rto_us(const struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock)
{
	const struct dlcp_sock *dsk = dlcp_sk(sk);
	const struct dlcp_peer *p;
	u32 i, rto = U32_MAX;

	lockdep_assert_held(&dsk->lock);
	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		hlist_for_each_entry(p, &dsk->peers[i], node)
			if (p->nr_msgs)
				rto = min(rto, dlcp_peer_rto_us(sk, p));
	return rto == U32_MAX ? dlcp_peer_rto_us(sk, NULL) : rto;
}
