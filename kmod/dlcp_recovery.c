// SPDX-License-Identifier: GPL-2.0
/*
 * Loss recovery for the DLCP sender: the receiver's REPORT and STOP
 * packets, loss detection, and the guard timer's work on outgoing
 * messages (as net/ipv4/tcp_recovery.c and tcp_timer.c are to TCP).
 *
 * A REPORT resolves the flight-ring entries of its message below its scan
 * end: acknowledged (outside every gap of the report), or lost (inside a
 * gap, and sent more than the reordering window before the packet whose
 * arrival triggered the report: RACK's rule, RFC 8985, with the echoed
 * transmit time; the window adapts, dlcp_peer_reorder_us()). A packet merely
 * overtaken on another path is not resent at once, and a retransmission
 * is not presumed lost again by reports that left the receiver before it
 * could have arrived. A missing segment that a later packet overtook by
 * less than the window is lost when the window passes with no word
 * (RACK's timer, dlcp_recovery_rack_expired()). Neither rule, nor the
 * timeout below, finds a segment lost that may still wait in the backlog
 * of the CPU that sent it (dlcp_flight_held()).
 *
 * The guard timer (dlcp_timer.c) also presumes entries older than the
 * retransmission timeout lost when their message's reports have stopped
 * too (a segment merely queued behind others is not), but resends only the
 * oldest of them until the receiver answers, as TCP resends the head of
 * its queue: the REPORT that resend asks for acknowledges the others if
 * only the reports were late (a receiver's or sender's CPU that the host
 * did not run for longer than the timeout), and leaves them lost if they
 * were (dlcp_recovery_undo_lost()). It also sends a tail loss
 * probe when reports stop for two round trips (or an RTO, if sooner)
 * with segments in flight, before any timeout of the message, PROBEs a
 * message whose reports stopped coming, enforces deadlines, and
 * gives up on a receiver that went silent. The timeout doubles with every
 * expiry until a new RTT sample.
 */
#include <linux/bitmap.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include "dlcp_impl.h"
#include "dlcp_trace.h"

/*
 * RACK's reordering timer (RFC 8985, section 6.2): @f was reported missing
 * while a packet sent after it had arrived; with no word since, it is lost
 * once a round trip plus the reordering window has passed since it was
 * sent. Without this, a loss among the last segments of a message (sent
 * within one window of the end) waited for a probe or the RTO.
 */
static bool dlcp_recovery_rack_expired(struct sock *sk,
				       struct dlcp_flight *f, u32 now_us)
	__must_hold(&dlcp_sk(sk)->lock)
{
	const struct dlcp_out_msg *m = f->msg;

	return f->rack_wait &&
	       (s32)(now_us - f->sent_us) >=
	       (s32)(m->rack_rtt_us + dlcp_peer_reorder_us(sk, m->peer)) &&
	       !dlcp_flight_held(sk, f, now_us);
}

/*
 * Does @tsecr echo a resend of a timeout's hold? While the hold lasts,
 * @m resends only the segment the timeout chose, and again if the timeout
 * fires again before the receiver answers: a DUP report echoing a time in
 * that span answers one of those resends, however late it comes.
 */
static bool dlcp_recovery_echoes_hold(const struct dlcp_out_msg *m, u32 tsecr)
{
	return m->rto_held && (s32)(tsecr - m->rto_hold_us) >= 0 &&
	       (s32)(m->rto_rtx_us - tsecr) >= 0;
}

/* Is byte range [s, e) disjoint from every gap in @g[0..n)? */
static bool dlcp_gaps_miss(const struct dlcp_wire_range *g, u32 n, u32 s,
			   u32 e)
{
	u32 lo = 0, hi = n;

	/* first gap whose end is > s */
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (ntohl(g[mid].end) <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == n || ntohl(g[lo].start) >= e;
}

/*
 * A PROBE was answered: the report is authoritative for every segment
 * below scan_end, including ones resolved before (the receiver may have
 * freed a message it could not complete).
 */
static void dlcp_recovery_resync(struct net *net, struct dlcp_out_msg *m,
				 const struct dlcp_wire_range *g, u32 n,
				 u32 scan_end)
{
	u32 seg, lost = 0;

	for (seg = 0; seg < m->nsegs; seg++) {
		u32 s = seg * m->seg_size, e = s + dlcp_seg_len(m, seg);

		if (e > scan_end)
			break;
		if (m->seg[seg] == DLCP_SEG_INFLIGHT)
			continue;
		if (m->seg[seg] == DLCP_SEG_NEW)
			continue;
		if (dlcp_gaps_miss(g, n, s, e)) {
			dlcp_seg_set(m, seg, DLCP_SEG_ACKED);
		} else if (m->seg[seg] != DLCP_SEG_LOST) {
			dlcp_seg_set(m, seg, DLCP_SEG_LOST);
			lost++;
		}
	}
	DLCP_ADD_STATS(net, DLCP_MIB_RETRANS_REPORTED, lost);
}

/*
 * Segments of @m found lost and about to be resent that the report shows
 * arrived after all (late: a stalled queue, a timeout that fired first)
 * are not resent. Only the segments dlcp_out_next_seg() would resend are
 * looked at, and the walk ends at the last of them: lost bytes the budget
 * covers stay lost without a walk of the message on every REPORT.
 */
static void dlcp_recovery_undo_lost(struct net *net, struct dlcp_out_msg *m,
				    const struct dlcp_wire_range *g, u32 n,
				    u32 scan_end)
{
	u32 seg, left, undone = 0;
	bool any;

	if (!dlcp_out_want_rtx(m, &any))
		return;
	left = any ? m->nr_lost : m->nr_lost_crit;
	for (seg = any ? m->lost_hint : m->crit_hint;
	     left && seg < m->nsegs; seg++) {
		u32 s = seg * m->seg_size, e = s + dlcp_seg_len(m, seg);

		if (m->seg[seg] != DLCP_SEG_LOST ||
		    (!any && !dlcp_seg_crit(m, seg)))
			continue;
		if (e > scan_end)
			break;
		left--;
		if (dlcp_gaps_miss(g, n, s, e)) {
			dlcp_seg_set(m, seg, DLCP_SEG_ACKED);
			undone++;
		}
	}
	DLCP_ADD_STATS(net, DLCP_MIB_RETRANS_UNDONE, undone);
}

/*
 * A REPORT arrived for one of our messages (skb is linear, validated).
 * Returns the counter of the drop if the packet was refused, else
 * DLCP_MIB_NONE.
 */
enum dlcp_mib_field dlcp_recovery_report(struct sock *sk, struct sk_buff *skb)
	__must_hold(&dlcp_sk(sk)->lock)
{
	const struct dlcp_report_hdr *r = (const void *)skb->data;
	const struct dlcp_wire_range *g = (const void *)(skb->data +
							 r->common.doff * 4);
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct net *net = sock_net(sk);
	u32 n = ntohs(r->ngaps), scan_end = ntohl(r->scan_end);
	u32 i, acked = 0, acked_bytes = 0, lost = 0, ce, wait = U32_MAX;
	u32 tsecr = ntohl(r->tsecr), now = dlcp_now_us(), reorder;
	s32 rtt = (s32)(now - tsecr);
	struct dlcp_out_msg *m;
	bool latest;

	lockdep_assert_held(&dsk->lock);
	m = dlcp_out_find(dsk, &r->common, &dlcp_cb(skb)->saddr);
	if (!m)
		return DLCP_MIB_DROP_UNKNOWN_MSG;
	dlcp_peer_rtt_sample(m->peer, tsecr);
	if (tsecr && rtt > 0 && rtt <= DLCP_RTT_MAX_US)
		m->rack_rtt_us = rtt;
	m->last_heard = jiffies;
	m->peer->last_heard = jiffies;
	latest = !m->heard || (s32)(tsecr - m->tsecr_max) >= 0;
	if (latest)
		m->tsecr_max = tsecr;
	m->heard = true;
	/*
	 * The receiver answered the latest resend after a timeout, or a
	 * packet sent after it: the other segments presumed lost are resent
	 * if this report shows them missing. A report sent before that was
	 * held up with the rest and does not know; one that answers an
	 * earlier resend of the hold does not know of the segments sent
	 * after it that a later timeout presumed lost.
	 */
	if (m->rto_hold && m->rto_rtx_sent &&
	    (s32)(tsecr - m->rto_rtx_us) >= 0)
		m->rto_hold = false;
	m->probes = 0;
	if (r->rflags & DLCP_RF_DUP) {
		DLCP_INC_STATS(net, DLCP_MIB_DUP_REPORTS);
		/*
		 * The segment a timeout resent had arrived: the timeout fired
		 * while it was queued or its report was late, which says
		 * nothing about reordering (RTT samples teach the timeout).
		 * Learning RACK's ages from it would widen the window by a
		 * round trip with every early timeout of a long path.
		 */
		if (dlcp_recovery_echoes_hold(m, tsecr)) {
			DLCP_INC_STATS(net, DLCP_MIB_SPURIOUS_TIMEOUTS);
		} else {
			dlcp_peer_dup_report(m->peer, m->rack_age_us);
			m->rack_age_us = 0;
		}
	}
	reorder = dlcp_peer_reorder_us(sk, m->peer);

	for (i = 0; m->inflight && i < dsk->flight_len; i++) {
		struct dlcp_flight *f = dlcp_flight_at(dsk, i);
		u32 s, e;

		if (f->msg != m)
			continue;
		s = f->seg * m->seg_size;
		e = s + dlcp_seg_len(m, f->seg);
		if (e > scan_end)
			continue;
		if (dlcp_gaps_miss(g, n, s, e)) {
			dlcp_seg_set(m, f->seg, DLCP_SEG_ACKED);
			acked++;
			acked_bytes += e - s;
		} else if ((s32)(tsecr - f->sent_us) > (s32)reorder &&
			   /*
			    * this CPU's backlog, if it held @f, handed it
			    * on before this report, which came after it
			    */
			   (f->cpu == smp_processor_id() ||
			    !dlcp_flight_held(sk, f, now))) {
			m->rack_age_us = max(m->rack_age_us, now - f->sent_us);
			dlcp_seg_set(m, f->seg, DLCP_SEG_LOST);
			DLCP_INC_STATS(net, DLCP_MIB_RETRANS_REPORTED);
			lost++;
		} else {
			/*
			 * Missing, and a packet sent after it arrived: lost
			 * if nothing says otherwise within the window
			 * (dlcp_recovery_rack_expired(); no later packet may come,
			 * at the end of a message).
			 */
			if ((s32)(tsecr - f->sent_us) > 0) {
				s32 left = f->sent_us + m->rack_rtt_us +
					   reorder - now;

				f->rack_wait = true;
				wait = min_t(u32, wait, max(left, 0));
			}
			continue;
		}
		dlcp_flight_resolve(dsk, f);
	}
	dlcp_flight_tidy(dsk);
	if (wait != U32_MAX)
		dlcp_guard_arm_in(sk, usecs_to_jiffies(wait) + 1);
	/*
	 * An answer to a PROBE that reports about later packets overtook
	 * (a CPU's backlog held it) knows less than they did, and would
	 * have segments that they acknowledged resent.
	 */
	if ((r->rflags & DLCP_RF_PROBED) && latest)
		dlcp_recovery_resync(net, m, g, n, scan_end);
	else
		dlcp_recovery_undo_lost(net, m, g, n, scan_end);
	ce = ntohl(r->ce_bytes);
	ce = ce > m->ce_seen ? ce - m->ce_seen : 0;
	m->ce_seen += ce;
	if (m->nr_acked > m->acked_max) {
		m->acked_max = m->nr_acked;
		m->progress_at = jiffies;
	}
	dlcp_cc_on_report(sk, m->peer, acked, acked_bytes, lost, ce);
	dlcp_out_push_clocked(sk);
	return DLCP_MIB_NONE;
}

/*
 * A STOP arrived: the receiver delivered the message, dropped it
 * (FAILED), or holds no socket on its port (NOPORT, dlcp_xmit_noport()):
 * the message then fails with ECONNREFUSED. Returns the counter of the
 * drop if the packet was refused, else DLCP_MIB_NONE.
 */
enum dlcp_mib_field dlcp_recovery_stop(struct sock *sk, struct sk_buff *skb)
	__must_hold(&dlcp_sk(sk)->lock)
{
	const struct dlcp_stop_hdr *st = (const void *)skb->data;
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct net *net = sock_net(sk);
	struct dlcp_out_msg *m;
	u32 lost;

	lockdep_assert_held(&dsk->lock);
	m = dlcp_out_find(dsk, &st->common, &dlcp_cb(skb)->saddr);
	if (!m)
		return DLCP_MIB_DROP_UNKNOWN_MSG;
	trace_dlcp_stop(1, m->id, ntohl(st->lost),
			st->common.flags & DLCP_HF_FAILED);
	m->peer->last_heard = jiffies;
	dlcp_peer_rtt_sample(m->peer, ntohl(st->tsecr));
	lost = ntohl(st->lost);
	if ((st->common.flags & (DLCP_HF_FAILED | DLCP_HF_NOPORT)) ==
	    (DLCP_HF_FAILED | DLCP_HF_NOPORT)) {
		DLCP_INC_STATS(net, DLCP_MIB_NOPORT_RCVD);
		DLCP_INC_STATS(net, DLCP_MIB_OUT_MSGS_FAILED);
		dlcp_out_complete(sk, m, DLCP_DONE_TIMEOUT, 0, ECONNREFUSED);
		goto done;
	}
	DLCP_INC_STATS(net, DLCP_MIB_OUT_MSGS_DONE);
	DLCP_ADD_STATS(net, DLCP_MIB_RETRANS_AVOIDED, m->nr_lost);
	if (st->common.flags & DLCP_HF_FAILED) {
		DLCP_INC_STATS(net, DLCP_MIB_OUT_MSGS_DEADLINE);
		dlcp_out_complete(sk, m, DLCP_DONE_DEADLINE, lost, ETIME);
	} else if (lost) {
		DLCP_INC_STATS(net, DLCP_MIB_OUT_MSGS_LOSSY);
		DLCP_ADD_STATS(net, DLCP_MIB_OUT_BYTES_GIVEN_UP, lost);
		dlcp_out_complete(sk, m, DLCP_DONE_LOSSY, lost, 0);
	} else {
		dlcp_out_complete(sk, m, DLCP_DONE_EXACT, 0, 0);
	}
done:
	dlcp_out_free_msg(sk, m);
	sk->sk_write_space(sk);
	dlcp_out_push_clocked(sk);
	return DLCP_MIB_NONE;
}

/*
 * Has @m's destination said nothing since @silent (a message to it that
 * timed out) last heard from it? Then @m fails with it: a message still
 * queued, or sent after the destination went quiet, would otherwise start
 * its own msg_timeout only when the one before it gave up, and a close()
 * waiting for k messages to a dead receiver would take k timeouts.
 */
static bool dlcp_recovery_same_silence(const struct dlcp_out_msg *m,
				       const struct dlcp_out_msg *silent)
{
	if (m->peer != silent->peer || m->dport != silent->dport)
		return false;
	return !m->next_new || !m->heard ||
	       !time_after(m->last_heard, silent->last_heard);
}

/*
 * Has @m waited @give_up for its receiver? A message that was sent: for a
 * word from its destination (a REPORT or STOP for it or for another
 * message to the same host) since its first transmission or the last
 * word: a receiver that answers is not silent, however many of this
 * message's packets a burst of loss takes. Or it stalled: no segment of
 * it acknowledged for DLCP_STALL_MULT x @give_up while it could send, as
 * from a receiver that answers but never takes it. One that never
 * started: since the first of the failed attempts to send it, one after
 * the other (no route: an interface or route vanished after sendmsg()
 * found one; a netfilter verdict; no buffer space).
 */
static bool dlcp_recovery_silent(const struct dlcp_out_msg *m, unsigned long now,
				 unsigned long give_up)
{
	unsigned long heard = m->last_heard;

	if (!m->next_new)
		return m->xmit_err &&
		       time_after_eq(now, m->xmit_err_since + give_up);
	if (time_after(m->peer->last_heard, heard))
		heard = m->peer->last_heard;
	return time_after_eq(now, heard + give_up) ||
	       time_after_eq(now, m->progress_at + DLCP_STALL_MULT * give_up);
}

/*
 * The error a message that gives up completes with, negative: why it
 * never started (-EHOSTUNREACH, -EPERM, -ENOBUFS, ...), -EHOSTUNREACH if
 * its last attempt found no route, else -ETIMEDOUT.
 */
static int dlcp_recovery_give_up_err(const struct dlcp_out_msg *m)
{
	if (m->xmit_err && (!m->next_new || m->xmit_err == EHOSTUNREACH))
		return -m->xmit_err;
	return -ETIMEDOUT;
}

/*
 * Give up on every message whose receiver has been silent for @give_up,
 * and on the messages to the same destination that heard nothing later:
 * each fails with ETIMEDOUT (EHOSTUNREACH if its last attempt found no
 * route), counted in DlcpOutMsgsFailed; one that was sent is ABORTed, so
 * that the receiver frees what it holds of it at once if it is alive
 * after all.
 */
static void dlcp_recovery_give_up(struct sock *sk, unsigned long now,
				  unsigned long give_up)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_out_msg *m, *tmp, *d;
	LIST_HEAD(silent);
	LIST_HEAD(with);

	lockdep_assert_held(&dsk->lock);
	list_for_each_entry_safe(m, tmp, &dsk->out_msgs, node)
		if (dlcp_recovery_silent(m, now, give_up))
			list_move_tail(&m->node, &silent);
	if (list_empty(&silent))
		return;
	list_for_each_entry_safe(m, tmp, &dsk->out_msgs, node) {
		list_for_each_entry(d, &silent, node) {
			if (dlcp_recovery_same_silence(m, d)) {
				list_move_tail(&m->node, &with);
				break;
			}
		}
	}
	list_splice_tail(&with, &silent);
	list_for_each_entry_safe(m, tmp, &silent, node) {
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_OUT_MSGS_FAILED);
		dlcp_out_complete(sk, m, DLCP_DONE_TIMEOUT, 0,
				  -dlcp_recovery_give_up_err(m));
		if (m->next_new)
			dlcp_out_send_ctl(sk, m, DLCP_T_ABORT);
		dlcp_out_free_msg(sk, m);
	}
	sk->sk_write_space(sk);
}

/*
 * Guard timer work for the sender: presume entries older than the RTO
 * lost, probe messages that went quiet, give up on silent ones. Returns
 * true while outgoing messages remain.
 */
bool dlcp_recovery_timeout(struct sock *sk, unsigned long now)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct net *net = sock_net(sk);
	u32 now_us = dlcp_now_us(), i;
	struct dlcp_net *dn = dlcp_pernet(net);
	unsigned long give_up = msecs_to_jiffies(READ_ONCE(dn->msg_timeout_ms));
	u64 probe_max = jiffies_to_usecs(give_up) / DLCP_GIVE_UP_TRIES;
	struct dlcp_out_msg *m, *tmp;

	lockdep_assert_held(&dsk->lock);
	for (i = 0; i < dsk->flight_len; i++) {
		struct dlcp_flight *f = dlcp_flight_at(dsk, i);
		struct dlcp_peer *p;
		u32 rto;

		if (!f->msg)
			continue;
		p = f->msg->peer;
		if (dlcp_recovery_rack_expired(sk, f, now_us)) {
			f->msg->rack_age_us = max(f->msg->rack_age_us,
						  now_us - f->sent_us);
			dlcp_seg_set(f->msg, f->seg, DLCP_SEG_LOST);
			DLCP_INC_STATS(net, DLCP_MIB_RETRANS_REPORTED);
			dlcp_flight_resolve(dsk, f);
			dlcp_cc_on_report(sk, p, 0, 0, 1, 0);
			continue;
		}
		/*
		 * The timeout this run started with: backing off below must
		 * not spare the rest of a window sent at the same time, which
		 * would then time out one segment per doubled RTO while the
		 * window stays full.
		 */
		rto = p->rto_run == now && p->rto_run_us ? p->rto_run_us :
							 dlcp_peer_rto_us(sk, p);
		if ((s32)(now_us - f->sent_us) < (s32)rto)
			continue;
		/*
		 * Reports for its message still come: the segment is queued
		 * on the path, not lost; a later report will tell.
		 */
		if (jiffies_to_usecs(now - f->msg->last_heard) < rto)
			continue;
		/*
		 * A tail loss probe goes first (below), and the timeout waits
		 * a whole RTO after it, as TCP re-arms its RTO after a probe:
		 * on a long path the RTO (srtt + 4 rttvar) comes before
		 * 2 srtt, and a timeout there cuts the window and resends
		 * what may only be queued, where the probe's answer tells.
		 */
		if (p->srtt_us && (!f->msg->probes ||
				   jiffies_to_usecs(now - f->msg->last_probe) < rto))
			continue;
		if (dlcp_flight_held(sk, f, now_us))
			continue;
		dlcp_seg_set(f->msg, f->seg, DLCP_SEG_LOST);
		/* one of them is resent until the receiver answers */
		if (!f->msg->rto_hold) {
			f->msg->rto_hold = true;
			f->msg->rto_held = true;
			f->msg->rto_hold_us = now_us;
			f->msg->rto_rtx_us = now_us - 1;
		}
		f->msg->rto_rtx_sent = false;
		DLCP_INC_STATS(net, DLCP_MIB_RETRANS_TIMEOUT);
		dlcp_flight_resolve(dsk, f);
		/* back off once a timer run, not once a segment */
		if (p->rto_run != now) {
			p->rto_run = now;
			p->rto_run_us = rto;
			p->rto_shift = min_t(u8, p->rto_shift + 1, 6);
			dlcp_cc_on_timeout(sk, p);
		}
	}
	dlcp_flight_tidy(dsk);
	dlcp_recovery_give_up(sk, now, give_up);

	list_for_each_entry_safe(m, tmp, &dsk->out_msgs, node) {
		unsigned long quiet = now - m->last_heard;
		u32 rto = dlcp_peer_rto_us(sk, m->peer);
		bool any;
		u64 wait;

		if ((m->meta.flags & DLCP_MSG_HAS_DEADLINE) && !m->final &&
		    time_after_eq(now, m->deadline)) {
			/* stop resending; the receiver finishes or drops it */
			m->final = true;
			m->probes = 0;
			dlcp_out_send_ctl(sk, m, DLCP_T_PROBE);
			continue;
		}
		/*
		 * Tail loss probe (RFC 8985, section 7): reports stopped for
		 * two round trips, or an RTO if that is sooner, while
		 * segments are in flight: the last of them, or the reports,
		 * were lost. The answer echoes the PROBE's timestamp, so
		 * every segment sent a reordering window before it and still
		 * missing is found lost (RACK) without waiting out the RTO
		 * and its back-off. One per quiet period: a REPORT resets
		 * @probes.
		 */
		if (m->inflight && !m->probes && m->peer->srtt_us &&
		    jiffies_to_usecs(quiet) >= min(2 * m->peer->srtt_us, rto)) {
			dlcp_out_send_ctl(sk, m, DLCP_T_PROBE);
			DLCP_INC_STATS(net, DLCP_MIB_TLP_PROBES);
			m->probes++;
			m->last_probe = now;
			continue;
		}
		/*
		 * Quiet for an RTO, backing off: ask what arrived. The wait
		 * is capped so that several PROBEs go out before the message
		 * gives up: a lost PROBE or REPORT must not cost it.
		 */
		wait = min3((u64)rto << min(m->probes, 6U),
			    (u64)DLCP_RTO_MAX_US, probe_max);
		if (m->probes)
			quiet = now - m->last_probe;
		if ((m->next_new == m->nsegs || m->final) && !m->inflight &&
		    !dlcp_out_want_rtx(m, &any) &&
		    jiffies_to_usecs(quiet) >= wait) {
			dlcp_out_send_ctl(sk, m, DLCP_T_PROBE);
			m->probes++;
			m->last_probe = now;
		}
	}
	dlcp_out_push(sk);
	return !list_empty(&dsk->out_msgs);
}
