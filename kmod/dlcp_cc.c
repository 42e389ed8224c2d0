// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP congestion control.
 *
 * The algorithm, per destination of a socket (struct dlcp_peer: messages
 * to different hosts have their own window, pacing and RTT):
 *
 *  - The window cwnd counts unresolved segments (the flight ring). It
 *    starts at net.dlcp.init_cwnd in slow start (RFC 5681): one segment
 *    more per segment acknowledged, doubling per round trip, until the
 *    first congestion signal below sets ssthresh to the reduced window,
 *    or until a queue shows (HyStart++, RFC 9406, against the base RTT):
 *    once a round has DLCP_SS_SAMPLES samples and even its smallest
 *    exceeds the base RTT by clamp(base / 8, 4 ms, 16 ms), ssthresh is
 *    set to cwnd, without a cut. Doubling until the drop-tail queue
 *    overflows loses a large part of a window at once, and the timeouts
 *    that follow cost seconds on a long path.
 *    From then on (and above ssthresh) it grows by one segment per window
 *    of segments acknowledged (additive increase), up to net.dlcp.max_cwnd.
 *    Without slow start a path whose bandwidth-delay product is several
 *    times init_cwnd (20 Mbit/s at 40 ms is 70 segments) takes tens of
 *    round trips to fill.
 *  - Time is cut into rounds of one smoothed round-trip time. In each
 *    round the sender adds up the payload bytes acknowledged, the bytes the
 *    receiver saw ECN CE-marked (echoed in every REPORT as a per-message
 *    cumulative count), and the segments acknowledged and found lost.
 *  - ECN, as DCTCP: at the end of a round, F = CE bytes / bytes acked and
 *    alpha <- (1 - g) alpha + g F with g = 1/16; if the round saw any CE
 *    mark, cwnd <- cwnd (1 - max(alpha, 1/2) / 2). The floor of a quarter
 *    is ours: DCTCP's alpha is made for queues that mark every packet
 *    above a threshold, while a RED queue marks few and early-drops the
 *    Not-ECT packets of TCP flows, which halve; without it a TCP flow
 *    sharing a RED/ECN bottleneck got under a fifth of it.
 *  - Queueing delay, for paths without ECN (as MLT's delay-based
 *    control): if even the smallest round-trip time sampled in a round
 *    exceeds the path's base (minimum) round-trip time by more than
 *    max(base, DLCP_QDELAY_TARGET_US, 2 rttvar), a queue is building:
 *    cwnd <- 7/8 cwnd. The rttvar term tolerates jitter that is not
 *    queueing (a loaded or virtualised host delaying reports by tens of
 *    ms): a queue that builds up is a shift of every sample, not noise.
 *  - Loss is expected and budgeted, so it must not collapse the rate:
 *    random losses below 1/8 of a round's segments do not reduce the
 *    window. Above that (a drop-tail queue overflowing), the round halves
 *    cwnd once, if it lost at least DLCP_LOSS_MIN_SEGS: one random loss
 *    in the last few segments of a message (a round of 4 segments, say)
 *    is not a fraction to act on. A retransmission timeout halves it too,
 *    unless the first report after it shows that it was spurious (a
 *    report delayed, not a segment lost; see dlcp_cc_on_rtt()): then the
 *    window comes back.
 *  - cwnd never falls below DLCP_CWND_MIN. Transmissions are paced at
 *    twice cwnd per smoothed round trip (dlcp_out.c).
 *
 * Important packets are sent ECN-capable (ECT(0)) and droppable ones
 * Not-ECT (dlcp_prio.c): a RED queue with ECN marks the former and drops
 * the latter, so congestion costs droppable gradients first and the marks
 * slow the sender down before queues overflow.
 */
#include "dlcp_impl.h"
#include "dlcp_trace.h"

#define DLCP_CWND_MIN		4
#define DLCP_ALPHA_ONE		1024	/* fixed-point 1.0 for alpha */
#define DLCP_ALPHA_G_SHIFT	4	/* g = 1/16 */
#define DLCP_QDELAY_TARGET_US	1000	/* tolerated queueing delay */
#define DLCP_LOSS_MIN_SEGS	2	/* losses in a round that can mean a queue */
#define DLCP_SS_SAMPLES		8	/* RTT samples before HyStart judges */
#define DLCP_SS_DELAY_MIN_US	4000	/* HyStart's delay threshold bounds */
#define DLCP_SS_DELAY_MAX_US	16000

void dlcp_cc_init(struct sock *sk, struct dlcp_peer *p)
{
	p->cwnd = READ_ONCE(dlcp_pernet(sock_net(sk))->init_cwnd);
	p->cc.ssthresh = U32_MAX;
	p->cc.alpha = DLCP_ALPHA_ONE;
	p->cc.base_rtt_us = U32_MAX;
	p->cc.round_rtt_us = U32_MAX;
	p->cc.round_start_us = dlcp_now_us();
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_cc_init);

/*
 * A round-trip time sample, taken before it updates srtt/rttvar. After a
 * timeout, it also judges that timeout (Eifel, RFC 3522, with the echoed
 * transmit time as the timestamp): if the first sample to tell echoes a
 * packet sent before the timeout, and took longer than the smoothed RTT
 * then was, the path was slow, not lossy: the window is restored at the
 * next report, and the caller makes the timer less eager
 * (dlcp_peer_rtt_sample()). A sample that echoes a packet sent after the
 * timeout confirms it. Returns true if this sample proved a timeout
 * spurious.
 */
bool dlcp_cc_on_rtt(struct dlcp_peer *p, u32 rtt_us)
{
	struct dlcp_cc *cc = &p->cc;

	cc->base_rtt_us = min(cc->base_rtt_us, rtt_us);
	cc->round_rtt_us = min(cc->round_rtt_us, rtt_us);
	cc->round_samples++;
	if (!cc->undo_cwnd || cc->undo)
		return false;
	if (ktime_get_ns() - (u64)rtt_us * NSEC_PER_USEC >= cc->undo_ns) {
		cc->undo_cwnd = 0;
		return false;
	}
	if (rtt_us <= cc->undo_srtt_us)
		return false;
	cc->undo = true;
	return true;
}

static u32 dlcp_cwnd_max(const struct sock *sk)
{
	u32 max = READ_ONCE(dlcp_pernet(sock_net(sk))->max_cwnd);
	u32 cap = dlcp_sk(sk)->flight_cap;

	return cap ? min(max, cap) : max;
}

static void dlcp_cc_set(struct sock *sk, struct dlcp_peer *p, u32 cwnd,
			const char *why)
{
	u32 old = p->cwnd;

	p->cwnd = clamp_t(u32, cwnd, DLCP_CWND_MIN, dlcp_cwnd_max(sk));
	p->cc.cwnd_cnt = 0;
	trace_dlcp_cwnd(inet_sk(sk)->inet_num, &p->daddr, old, p->cwnd, why,
			p->srtt_us, p->cc.alpha);
}

/*
 * A congestion signal: reduce the window to @cwnd and leave slow start,
 * once per smoothed round trip: a loss-cut round and the timeouts of the
 * same overflowing queue are one congestion event, not several (without
 * this, a slow-start overshoot halved the window two or three times).
 */
static bool dlcp_cc_cut(struct sock *sk, struct dlcp_peer *p, u32 cwnd,
			const char *why)
{
	u64 now = ktime_get_ns();

	if (p->cc.cut_ns &&
	    now - p->cc.cut_ns < max_t(u64, p->srtt_us, 1) * NSEC_PER_USEC)
		return false;
	p->cc.cut_ns = now;
	dlcp_cc_set(sk, p, cwnd, why);
	p->cc.ssthresh = p->cwnd;
	return true;
}

/* Close the current round: apply the ECN and loss reactions. */
static void dlcp_cc_round_end(struct sock *sk, struct dlcp_peer *p,
			      u32 now_us)
{
	struct dlcp_cc *cc = &p->cc;
	bool cut = true;
	u32 f = 0;

	if (cc->acked_bytes)
		f = div_u64((u64)min(cc->ce_bytes, cc->acked_bytes) *
			    DLCP_ALPHA_ONE, cc->acked_bytes);
	cc->alpha = cc->alpha - (cc->alpha >> DLCP_ALPHA_G_SHIFT) +
		    (f >> DLCP_ALPHA_G_SHIFT);
	if (cc->ce_bytes)
		cut = dlcp_cc_cut(sk, p, p->cwnd -
				  (u32)div_u64((u64)p->cwnd *
					       max_t(u32, cc->alpha,
						     DLCP_ALPHA_ONE / 2),
					       2 * DLCP_ALPHA_ONE), "ecn");
	else if (cc->lost_segs >= DLCP_LOSS_MIN_SEGS &&
		 cc->lost_segs * 8 > cc->lost_segs + cc->acked_segs)
		cut = dlcp_cc_cut(sk, p, p->cwnd / 2, "loss");
	else if (cc->round_rtt_us != U32_MAX &&
		 cc->round_rtt_us - cc->base_rtt_us >
		 max3(cc->base_rtt_us, (u32)DLCP_QDELAY_TARGET_US,
		      2 * p->rttvar_us))
		cut = dlcp_cc_cut(sk, p, p->cwnd - p->cwnd / 8, "delay");
	else
		cut = false;
	if (cut) {
		/* congestion since: a timeout is no longer undone */
		cc->undo_cwnd = 0;
		cc->undo = false;
	}
	dlcp_peer_reorder_round(p);
	cc->round_rtt_us = U32_MAX;
	cc->round_samples = 0;
	cc->ce_bytes = 0;
	cc->acked_bytes = 0;
	cc->acked_segs = 0;
	cc->lost_segs = 0;
	cc->round_start_us = now_us;
}

/* Has this round's RTT risen enough over the base to leave slow start? */
static bool dlcp_cc_ss_exit(const struct dlcp_cc *cc)
{
	u32 thresh;

	if (cc->round_samples < DLCP_SS_SAMPLES ||
	    cc->base_rtt_us == U32_MAX)
		return false;
	thresh = clamp_t(u32, cc->base_rtt_us / 8, DLCP_SS_DELAY_MIN_US,
			 DLCP_SS_DELAY_MAX_US);
	return cc->round_rtt_us - cc->base_rtt_us > thresh;
}

/*
 * A REPORT from @p resolved @acked segments (@acked_bytes of payload) and
 * found @lost segments lost; @ce_bytes more bytes arrived CE-marked.
 */
void dlcp_cc_on_report(struct sock *sk, struct dlcp_peer *p, u32 acked,
		       u32 acked_bytes, u32 lost, u32 ce_bytes)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_cc *cc = &p->cc;
	u32 now = dlcp_now_us(), ss_end;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	if (cc->undo) {
		cc->undo = false;
		if (cc->undo_cwnd > p->cwnd)
			dlcp_cc_set(sk, p, cc->undo_cwnd, "undo");
		cc->ssthresh = max(cc->ssthresh, cc->undo_ssthresh);
		cc->undo_cwnd = 0;
	}
	cc->acked_segs += acked;
	cc->acked_bytes += acked_bytes;
	cc->lost_segs += lost;
	cc->ce_bytes += ce_bytes;

	if (p->cwnd < cc->ssthresh && dlcp_cc_ss_exit(cc)) {
		cc->ssthresh = p->cwnd;
		trace_dlcp_cwnd(inet_sk(sk)->inet_num, &p->daddr, p->cwnd,
				p->cwnd, "hystart", p->srtt_us, cc->alpha);
	}
	ss_end = min(cc->ssthresh, dlcp_cwnd_max(sk));
	if (acked && p->cwnd < ss_end) {
		u32 grow = min(acked, ss_end - p->cwnd);

		dlcp_cc_set(sk, p, p->cwnd + grow, "slowstart");
		acked -= grow;
	}
	cc->cwnd_cnt += acked;
	if (cc->cwnd_cnt >= p->cwnd) {
		u32 rest = cc->cwnd_cnt - p->cwnd;

		if (p->cwnd < dlcp_cwnd_max(sk))
			dlcp_cc_set(sk, p, p->cwnd + 1, "increase");
		cc->cwnd_cnt = rest;
	}
	/* unsigned: a round left open by a long idle period still ends */
	if (p->srtt_us && now - cc->round_start_us >= p->srtt_us)
		dlcp_cc_round_end(sk, p, now);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_cc_on_report);

/*
 * The guard timer presumed segments to @p lost: halve (at most once a
 * round, dlcp_cc_cut()), and only for the first timeout of a series
 * (@p->rto_shift is 1): as TCP does not lower ssthresh again while backing
 * off, the later timeouts of one outage are the same event; halving on
 * each took the window from 216 to 4 in one slow-start overshoot.
 * Remember the window from before the series, for dlcp_cc_on_rtt() to
 * restore if it proves spurious.
 */
void dlcp_cc_on_timeout(struct sock *sk, struct dlcp_peer *p)
	__must_hold(&dlcp_sk(sk)->lock)
{
	u32 cwnd = p->cwnd, ssthresh = p->cc.ssthresh;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	if (p->rto_shift > 1 || !dlcp_cc_cut(sk, p, p->cwnd / 2, "timeout"))
		return;
	if (!p->cc.undo_cwnd) {
		p->cc.undo_cwnd = cwnd;
		p->cc.undo_ssthresh = ssthresh;
		p->cc.undo_ns = ktime_get_ns();
		p->cc.undo_srtt_us = p->srtt_us;
	}
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_cc_on_timeout);
