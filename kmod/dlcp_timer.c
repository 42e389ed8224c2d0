// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP timers.
 *
 * guard	one timer_list per socket. While the socket sends it runs every
 *		half retransmission timeout: it presumes long-unresolved
 *		segments lost, probes quiet messages and gives up on silent
 *		ones (dlcp_recovery_timeout()). While the socket holds incoming
 *		messages or zombies it also garbage-collects them
 *		(dlcp_in_timeout()). It stops when there is nothing to watch.
 * pacer	an hrtimer (softirq mode) that resumes transmission when the
 *		pacing rate held it back.
 *
 * Neither timer holds a socket reference: dlcp_destroy_sock() sets
 * dlcp_sock.dead under the lock, which stops them re-arming, then cancels
 * both synchronously before any state is freed.
 */
#include <linux/jiffies.h>
#include "dlcp_impl.h"

static unsigned long dlcp_guard_interval(struct sock *sk)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	unsigned long gc;

	if (!list_empty(&dsk->out_msgs))
		return max(usecs_to_jiffies(dlcp_peer_min_rto_us(sk) / 2), 1UL);
	gc = msecs_to_jiffies(READ_ONCE(dlcp_pernet(sock_net(sk))->msg_timeout_ms)) / 4;
	return clamp(gc, HZ / 50, (unsigned long)HZ);
}

static void dlcp_guard_fire(struct timer_list *t)
{
	struct dlcp_sock *dsk = dlcp_timer_container_of(dsk, t, guard);
	struct sock *sk = &dsk->inet.sk;
	unsigned long now = jiffies;
	LIST_HEAD(reap);
	bool out, in;

	spin_lock_bh(&dsk->lock);
	if (!dsk->dead) {
		out = dlcp_recovery_timeout(sk, now);
		in = dlcp_in_timeout(sk, now);
		if (out || in)
			mod_timer(&dsk->guard, jiffies + dlcp_guard_interval(sk));
	}
	dlcp_out_reap_take(sk, &reap);
	spin_unlock_bh(&dsk->lock);
	dlcp_out_reap(&reap);
}

/*
 * Run the guard timer within @delay jiffies (sooner if already due); called
 * with dsk->lock held.
 */
void dlcp_guard_arm_in(struct sock *sk, unsigned long delay)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	unsigned long when = jiffies + max(delay, 1UL);

	lockdep_assert_held(&dsk->lock);
	if (dsk->dead)
		return;
	if (!timer_pending(&dsk->guard) ||
	    time_before(when, dsk->guard.expires))
		mod_timer(&dsk->guard, when);
}

void dlcp_guard_arm(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock)
{
	lockdep_assert_held(&dlcp_sk(sk)->lock);
	dlcp_guard_arm_in(sk, dlcp_guard_interval(sk));
}

static enum hrtimer_restart dlcp_pacer_fire(struct hrtimer *t)
{
	struct dlcp_sock *dsk = container_of(t, struct dlcp_sock, pacer);

	spin_lock_bh(&dsk->lock);
	if (!dsk->dead && dlcp_out_may_push(&dsk->inet.sk))
		dlcp_out_push(&dsk->inet.sk);
	spin_unlock_bh(&dsk->lock);
	return HRTIMER_NORESTART;
}

/* Resume transmission at @when_ns; called with dsk->lock held. */
void dlcp_pacer_arm(struct sock *sk, u64 when_ns)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);

	lockdep_assert_held(&dsk->lock);
	if (dsk->dead)
		return;
	/* one timer for all peers: the earliest wins */
	if (hrtimer_is_queued(&dsk->pacer) &&
	    ktime_to_ns(hrtimer_get_expires(&dsk->pacer)) <= when_ns)
		return;
	hrtimer_start(&dsk->pacer, ns_to_ktime(when_ns),
		      HRTIMER_MODE_ABS_PINNED_SOFT);
}

void dlcp_timer_init(struct sock *sk)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);

	timer_setup(&dsk->guard, dlcp_guard_fire, 0);
	dlcp_hrtimer_setup(&dsk->pacer, dlcp_pacer_fire, CLOCK_MONOTONIC,
			   HRTIMER_MODE_ABS_PINNED_SOFT);
}

/* Cancel both timers; dsk->dead is set, so they cannot re-arm. */
void dlcp_timer_stop(struct sock *sk)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);

	dlcp_timer_delete_sync(&dsk->guard);
	hrtimer_cancel(&dsk->pacer);
}
