// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP receive path: packet validation and demultiplexing, and the
 * receiver: reassembly, reports, completion and delivery.
 *
 * Every packet is validated by the pure dlcp_wire_check() (shared with
 * userspace), then its checksum, before anything in it is trusted; each
 * drop is counted under its reason, and freed with the closest drop reason
 * of the kernel (dlcp_drop()); a drop after the socket was found counts in
 * its sk_drops too. A DATA packet names its message and
 * offset, so it is written at its place whatever order packets arrive in;
 * a duplicate is harmless. The first packet of a message (any of its
 * packets) creates the message's state. The receiver answers that first
 * packet, every net.dlcp.ack_every data packets, every packet asking for
 * it (ACKREQ) and every PROBE with a REPORT listing the gaps. It
 * completes a message when every byte is there, or when the sender has
 * sent everything once (the LAST flag, or a PROBE) and the bytes
 * missing are within the message's loss budget and every critical byte
 * arrived, after waiting, if this
 * receiver has seen packets arrive out of order, that long for segments
 * still on their way (dlcp_in_ready()): it then queues the message
 * for recvmsg() with the lost ranges zero-filled and reported, and sends
 * STOP. A FINAL probe (the sender's deadline passed) completes the message
 * if it can, or drops it and answers STOP with the FAILED flag. A delivered message is
 * remembered (without its data) for msg_timeout_ms after the last packet
 * of it, so that late packets and probes are answered with STOP instead of
 * starting it again, however long its sender keeps asking.
 */
#include <linux/filter.h>
#include <linux/slab.h>
#include <net/checksum.h>
#include <net/icmp.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/sock.h>
#include "dlcp_impl.h"
#include "dlcp_trace.h"

/*
 * What @m holds, in bytes, for the socket's accounting (dlcp_mem.c): its
 * state, its range array, its pages and the xarray nodes that index them
 * (at most one leaf per 64 pages of the message, or per page held), and
 * the packets it keeps (their truesize).
 */
static u32 dlcp_in_cost(const struct dlcp_in_msg *m)
{
	u32 leaves = DIV_ROUND_UP(m->len, PAGE_SIZE * XA_CHUNK_SIZE);
	u32 nodes = m->buf.nr_alloc ? min(m->buf.nr_alloc, leaves) + 1 : 0;

	return sizeof(*m) + m->have.cap * sizeof(struct dlcp_rs_range) +
	       m->buf.nr_alloc * PAGE_SIZE + nodes * sizeof(struct xa_node) +
	       m->buf.skb_truesize;
}

/* Bring @m's charge up to what it holds (scheduled before it grew). */
static void dlcp_in_recharge(struct sock *sk, struct dlcp_in_msg *m)
{
	u32 cost = dlcp_in_cost(m);

	if (cost > m->charged) {
		dlcp_mem_charge(sk, cost - m->charged);
		m->charged = cost;
	}
}

/* Free @m, which nothing refers to any more. */
static void dlcp_in_msg_free(struct dlcp_in_msg *m)
{
	dlcp_buf_free(&m->buf);
	dlcp_rs_free(&m->have);
	kfree(m);
}

/* Free @m, which is off the table. */
static void dlcp_in_release(struct sock *sk, struct dlcp_in_msg *m)
{
	dlcp_mem_uncharge(sk, m->charged);
	dlcp_in_msg_free(m);
}

static void dlcp_in_free(struct sock *sk, struct dlcp_in_msg *m)
{
	dlcp_intab_remove(dlcp_sk(sk), m);
	dlcp_in_release(sk, m);
}

/*
 * A delivery read or purged: its message's memory goes back. Only the
 * uncharge needs the lock; the message is off the table, so its pages and
 * packets (hundreds for a large message) are freed after it, where the
 * receive path does not wait for them.
 */
void dlcp_delivery_free(struct dlcp_delivery *d)
{
	struct dlcp_sock *dsk = dlcp_sk(d->sk);

	spin_lock_bh(&dsk->lock);
	dlcp_mem_uncharge(d->sk, d->msg->charged);
	spin_unlock_bh(&dsk->lock);
	dlcp_in_msg_free(d->msg);
	kfree(d);
}

static void dlcp_delivery_destructor(struct sk_buff *skb)
{
	dlcp_delivery_free(dlcp_skb_delivery(skb));
}

/* Reply to the sender of @m with a control packet of @hlen bytes. */
static struct sk_buff *dlcp_in_ctl(struct sock *sk, struct dlcp_in_msg *m,
				   unsigned int type, u32 hlen)
{
	struct sk_buff *skb = dlcp_alloc_ctl(hlen, GFP_ATOMIC);

	if (skb)
		dlcp_fill_hdr((struct dlcp_hdr *)skb->data, type,
			      inet_sk(sk)->inet_sport, m->key.sport, m->key.id,
			      m->len, hlen, 0, 0);
	return skb;
}

/*
 * The class of a receiver's control packet about @m: class 0 for a
 * message this socket holds (data arrived), the lowest for the answer to
 * a PROBE about one it does not, which anybody may send.
 */
static u8 dlcp_in_ctl_class(const struct dlcp_in_msg *m)
{
	return m->stranger ? DLCP_MAX_CLASSES - 1 : 0;
}

static void dlcp_in_send_stop(struct sock *sk, struct dlcp_in_msg *m)
{
	struct dlcp_stop_hdr *st;
	struct sk_buff *skb;

	skb = dlcp_in_ctl(sk, m, DLCP_T_STOP, DLCP_STOP_HDR_LEN);
	if (!skb)
		return;
	st = (struct dlcp_stop_hdr *)skb->data;
	if (m->failed)
		st->common.flags |= DLCP_HF_FAILED;
	st->lost = htonl(m->lost);
	st->tsecr = htonl(m->tsval);
	if (!dlcp_xmit_ctl(sk, skb, &m->daddr, &m->key.saddr, m->udp,
			   dlcp_in_ctl_class(m)))
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_STOPS_SENT);
	trace_dlcp_stop(0, m->key.id, m->lost, m->failed);
}

/**
 * dlcp_in_gaps() - the gaps of a REPORT, in wire format
 * @rs:		the bytes received of a message
 * @len:	the message's length
 * @probed:	answering a PROBE: the bytes after the last range received
 *		are missing too (otherwise they may still be on their way)
 * @g:		room for @max_gaps gaps
 * @max_gaps:	at most this many gaps are written
 * @scan_end:	set to the end of what the gaps describe: the message's end
 *		(@probed) or that of the last range received, or the start
 *		of the first gap that did not fit
 *
 * Pure: @rs must hold at least one range unless @probed.
 *
 * Return: the number of gaps written.
 */
u32 dlcp_in_gaps(const struct dlcp_rangeset *rs, u32 len, bool probed,
		 struct dlcp_wire_range *g, u32 max_gaps, u32 *scan_end)
{
	u32 i, n = 0, pos = 0, last = probed ? rs->nr : rs->nr - 1;

	*scan_end = probed ? len : dlcp_rs_at(rs, rs->nr - 1)->end;
	for (i = 0; i <= last; i++) {
		u32 start = i < rs->nr ? dlcp_rs_at(rs, i)->start : len;

		if (start > pos) {
			if (n == max_gaps) {
				*scan_end = pos;
				break;
			}
			g[n].start = htonl(pos);
			g[n].end = htonl(start);
			n++;
		}
		if (i < rs->nr)
			pos = dlcp_rs_at(rs, i)->end;
	}
	return n;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_in_gaps);

/*
 * Send a REPORT, in answer to a packet of @answered bytes: the gaps of @m,
 * as many as fit in a packet as long as the longest DATA of the message
 * (within [DLCP_MIN_GAPS, DLCP_MAX_GAPS]) and no longer than the packet
 * answered (dlcp_wire_answer_gaps(): no amplification); a report with
 * more covers only up to the last gap listed. Bytes above the highest one
 * received are not reported missing (they may be on their way), except in
 * the answer to a PROBE: the sender has sent everything.
 */
static void dlcp_in_send_report(struct sock *sk, struct dlcp_in_msg *m,
				u8 rflags, u32 answered)
{
	const struct dlcp_rangeset *rs = &m->have;
	u32 n, scan_end, max_gaps = DLCP_MIN_GAPS;
	struct dlcp_report_hdr *r;
	struct sk_buff *skb;

	if (!rs->nr && !(rflags & DLCP_RF_PROBED))
		return;		/* nothing to say yet */
	if (m->max_pkt > DLCP_REPORT_HDR_LEN)
		max_gaps = clamp_t(u32, (m->max_pkt - DLCP_REPORT_HDR_LEN) /
				   DLCP_GAP_LEN, DLCP_MIN_GAPS, DLCP_MAX_GAPS);
	/* a gap before each range, and one after them when probed */
	max_gaps = min3(max_gaps, rs->nr + 1, dlcp_wire_answer_gaps(answered));
	skb = dlcp_in_ctl(sk, m, DLCP_T_REPORT,
			  DLCP_REPORT_HDR_LEN + max_gaps * DLCP_GAP_LEN);
	if (!skb)
		return;
	r = (struct dlcp_report_hdr *)skb->data;
	n = dlcp_in_gaps(rs, m->len, rflags & DLCP_RF_PROBED,
			 (struct dlcp_wire_range *)(r + 1), max_gaps, &scan_end);
	skb_trim(skb, DLCP_REPORT_HDR_LEN + n * DLCP_GAP_LEN);
	r->common.len = htons(skb->len);
	r->rcvd = htonl(rs->bytes);
	r->scan_end = htonl(scan_end);
	r->tsecr = htonl(m->tsval);
	r->ce_bytes = htonl(m->ce_bytes);
	r->ngaps = htons(n);
	r->rflags = rflags;
	m->pkts_unreported = 0;
	if (!dlcp_xmit_ctl(sk, skb, &m->daddr, &m->key.saddr, m->udp,
			   dlcp_in_ctl_class(m)))
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_REPORTS_SENT);
}

/*
 * Put a zombie in @m's place in the table: it answers late packets and
 * probes with STOP for msg_timeout_ms. @m is then off the table. NULL if
 * there is no memory for it (charged as @m's state was).
 */
static struct dlcp_in_msg *dlcp_in_zombify(struct sock *sk,
					   struct dlcp_in_msg *m, u32 lost,
					   bool failed)
{
	struct dlcp_in_msg *z, *old;

	if (dlcp_mem_schedule(sk, sizeof(*z)))
		return NULL;
	z = kzalloc(sizeof(*z), GFP_ATOMIC);
	if (!z)
		return NULL;
	z->charged = sizeof(*z);
	dlcp_mem_charge(sk, z->charged);
	z->key = m->key;
	z->daddr = m->daddr;
	z->len = m->len;
	z->meta = m->meta;
	z->tsval = m->tsval;
	z->lost = lost;
	z->delivered = true;
	z->failed = failed;
	z->udp = m->udp;
	dlcp_buf_init(&z->buf, z->len);
	old = dlcp_intab_zombify(sk, m, z);
	if (old)
		dlcp_in_free(sk, old);
	return z;
}

/*
 * The byte ranges of @m that did not arrive, in increasing order: the
 * first @max of them are written to @out, and their bytes are zeroed in
 * @zero (@m's buffer, or NULL); returns how many there are.
 */
static u32 dlcp_in_lost_ranges(const struct dlcp_in_msg *m,
			       struct dlcp_range *out, u32 max,
			       struct dlcp_buf *zero)
{
	const struct dlcp_rangeset *rs = &m->have;
	u32 i, n = 0, pos = 0;

	for (i = 0; i <= rs->nr; i++) {
		u32 start = i < rs->nr ? dlcp_rs_at(rs, i)->start : m->len;

		if (start > pos) {
			if (n < max) {
				out[n].offset = pos;
				out[n].len = start - pos;
			}
			if (zero)
				dlcp_buf_zero(zero, pos, start - pos);
			n++;
		}
		if (i < rs->nr)
			pos = dlcp_rs_at(rs, i)->end;
	}
	return n;
}

/*
 * DLCP_CMSG_LOST for recvmsg(): @d's lost ranges, listed from its message's
 * range set here in process context (a lossy message may have thousands),
 * as many as the control buffer holds; put_cmsg() sets MSG_CTRUNC when that
 * is fewer than all, and so does a failed allocation. The message is off
 * the table: nothing else changes it.
 */
void dlcp_delivery_put_lost(const struct dlcp_delivery *d, struct msghdr *msg)
{
	u32 nr = d->info.nr_lost_ranges;
	u32 fit = min_t(size_t, nr, DIV_ROUND_UP(msg->msg_controllen,
						 sizeof(struct dlcp_range)));
	struct dlcp_range *lost;

	lost = kvmalloc_array(max(fit, 1U), sizeof(*lost), GFP_KERNEL);
	if (!lost) {
		msg->msg_flags |= MSG_CTRUNC;
		return;
	}
	dlcp_in_lost_ranges(d->msg, lost, fit, NULL);
	/* put_cmsg() copies no more than the buffer holds: @fit ranges */
	put_cmsg(msg, SOL_DLCP, DLCP_CMSG_LOST, nr * sizeof(*lost), lost);
	kvfree(lost);
}

/* Can @m be delivered now: whole, or within budget once all was sent? */
static bool dlcp_in_can_complete(const struct dlcp_in_msg *m)
{
	u32 missing = m->len - m->have.bytes;

	return !missing || (m->sent_all && missing <= m->budget_bytes &&
			    m->crit_rcvd >= m->crit_len);
}

/* A packet sent @us before the newest one of its message arrived after it. */
static void dlcp_in_reordered(struct dlcp_sock *dsk, u32 us)
{
	dsk->in_reo_us = max(dsk->in_reo_us, min_t(u32, us, DLCP_REO_MAX_US));
}

/*
 * Deliver @m now? Whole, yes. Within budget with bytes missing, only once
 * the reordering this receiver has seen has passed since the sender said
 * that all was sent (LAST, PROBE): a segment sent before that may still be
 * on a slower path, or in another CPU's backlog, and is not lost yet. With
 * no reordering seen, at once. Arms the guard timer for the wait.
 */
static bool dlcp_in_ready(struct sock *sk, struct dlcp_in_msg *m)
{
	u32 reo = dlcp_sk(sk)->in_reo_us;
	unsigned long wait;

	if (!dlcp_in_can_complete(m))
		return false;
	if (m->have.bytes == m->len || !reo)
		return true;
	if (m->settle_at)
		return time_after_eq(jiffies, m->settle_at);
	wait = usecs_to_jiffies(reo) + 1;
	m->settle_at = (jiffies + wait) ?: 1;
	dlcp_intab_settle(dlcp_sk(sk), m);
	dlcp_guard_arm_in(sk, wait);
	return false;
}

/*
 * @m can complete: hand it to the socket's receive queue, zero-filled
 * where bytes are missing, and leave a zombie in its place.
 */
static void dlcp_in_complete(struct sock *sk, struct dlcp_in_msg *m)
{
	u32 lost_bytes = m->len - m->have.bytes, extra;
	struct net *net = sock_net(sk);
	struct dlcp_delivery *d;
	struct dlcp_in_msg *z;
	struct sk_buff *skb;

	/* the delivery is charged as part of @m until recvmsg() frees it */
	extra = sizeof(*d) + SKB_TRUESIZE(1);
	if (dlcp_mem_schedule(sk, extra))
		goto nomem;
	d = kzalloc(sizeof(*d), GFP_ATOMIC);
	skb = alloc_skb(1, GFP_ATOMIC);
	if (!d || !skb)
		goto nomem;
	dlcp_mem_charge(sk, extra);
	m->charged += extra;
	z = dlcp_in_zombify(sk, m, lost_bytes, false);
	if (!z)
		goto nomem;	/* m keeps the charge until it is freed */

	d->sk = sk;
	d->msg = m;
	d->info.tensor_id = m->meta.tensor_id;
	d->info.iteration = m->meta.iteration;
	d->info.layer = m->meta.layer;
	d->info.dtype = m->meta.dtype;
	d->info.flags = m->meta.flags;
	d->info.prio = m->meta.prio;
	d->info.msg_id = m->key.id;
	d->info.msg_len = m->len;
	d->info.loss_budget_ppm = m->meta.budget_ppm;
	d->info.status = lost_bytes ? DLCP_RECV_LOSSY : DLCP_RECV_EXACT;
	d->info.bytes_lost = lost_bytes;
	/* the bytes that did not arrive read as zeros (dlcp_buf.c) */
	d->info.nr_lost_ranges = lost_bytes ?
		dlcp_in_lost_ranges(m, NULL, 0, &m->buf) : 0;

	/* reordering seen long ago fades: 1/16 per delivered message */
	dlcp_sk(sk)->in_reo_us -= dlcp_sk(sk)->in_reo_us >> 4;

	/* once queued, recvmsg() may free @m and @d at any moment */
	trace_dlcp_msg_complete(inet_sk(sk)->inet_num, &m->key.saddr,
				ntohs(m->key.sport), m->key.id, m->len,
				lost_bytes);
	/*
	 * The skb only carries @d, but it holds a byte: the datagram core
	 * skips a zero-length skb that was peeked before (a second MSG_PEEK
	 * would miss the message) and clones a shared one, which would lose
	 * the destructor.
	 */
	skb_put_zero(skb, 1);
	*(struct dlcp_delivery **)skb->cb = d;
	skb->destructor = dlcp_delivery_destructor;
	skb_queue_tail(&sk->sk_receive_queue, skb);
	sk->sk_data_ready(sk);

	DLCP_INC_STATS(net, DLCP_MIB_IN_MSGS);
	if (lost_bytes) {
		DLCP_INC_STATS(net, DLCP_MIB_IN_MSGS_LOSSY);
		DLCP_ADD_STATS(net, DLCP_MIB_IN_BYTES_LOST, lost_bytes);
	} else {
		DLCP_INC_STATS(net, DLCP_MIB_IN_MSGS_EXACT);
	}
	dlcp_in_send_stop(sk, z);
	return;

nomem:
	/* retried on the next packet or probe of the message */
	kfree(d);
	dlcp_kfree_skb_reason(skb, DLCP_DROP_REASON(NOMEM));
	DLCP_INC_STATS(net, DLCP_MIB_DROP_NOMEM);
}

/* The deadline passed over budget: drop @m, tell the sender. */
static void dlcp_in_fail(struct sock *sk, struct dlcp_in_msg *m)
{
	struct dlcp_in_msg *z = dlcp_in_zombify(sk, m, m->len - m->have.bytes,
						 true);

	if (!z)
		return;		/* the sender probes again */
	DLCP_INC_STATS(sock_net(sk), DLCP_MIB_IN_MSGS_FAILED);
	dlcp_in_release(sk, m);
	dlcp_in_send_stop(sk, z);
}

static struct dlcp_in_msg *dlcp_in_new(struct sock *sk, struct sk_buff *skb,
				       bool udp)
{
	const struct dlcp_data_hdr *d = (const void *)skb->data;
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_in_msg *m;

	m = kzalloc(sizeof(*m), GFP_ATOMIC);
	if (!m)
		return NULL;
	m->key.saddr = dlcp_cb(skb)->saddr;
	m->daddr = dlcp_cb(skb)->daddr;
	m->key.sport = d->common.source;
	m->key.id = ntohl(d->common.msg_id);
	m->len = ntohl(d->common.msg_len);
	m->meta.tensor_id = ntohl(d->tensor_id);
	m->meta.iteration = ntohl(d->iteration);
	m->meta.budget_ppm = ntohl(d->budget_ppm);
	m->meta.layer = ntohs(d->layer);
	m->meta.flags = ntohs(d->msg_flags);
	m->meta.dtype = d->dtype;
	m->meta.prio = d->common.prio;
	m->budget_bytes = dlcp_budget_bytes(m->len, m->meta.budget_ppm);
	m->crit_len = ntohl(d->crit_len);
	m->udp = udp;
	dlcp_buf_init(&m->buf, m->len);
	if (dlcp_intab_insert(dsk, m)) {
		kfree(m);
		return NULL;
	}
	m->charged = sizeof(*m);
	dlcp_mem_charge(sk, m->charged);
	dlcp_guard_arm(sk);
	return m;
}

/*
 * Keep the DATA packet @skb, @plen new bytes at @off of a message of @len
 * bytes (@m, or none yet), by reference rather than copy it into pages
 * (dlcp_buf.c)? Only if net.dlcp.rx_keep allows, if all its bytes are new
 * and it lands among the last packets the message keeps, and if after
 * it the socket still has room in pages for the rest of every message
 * it is receiving: a packet's truesize may be twice its payload, and
 * messages that fit the socket's limit in pages must not be stranded
 * below it, or lose packets at it, because of the packets they keep.
 * Under the protocol's memory pressure, pages, the denser, only.
 */
static bool dlcp_in_may_keep(struct sock *sk, const struct dlcp_in_msg *m,
			     const struct sk_buff *skb, u32 len, u32 off,
			     u32 plen)
	__must_hold(&dlcp_sk(sk)->lock)
{
	u64 rest;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	if (!READ_ONCE(dlcp_pernet(sock_net(sk))->rx_keep) ||
	    sk_under_memory_pressure(sk))
		return false;
	if (m && (!dlcp_rs_misses(&m->have, off, off + plen) ||
		  !dlcp_buf_may_keep(&m->buf, off)))
		return false;
	/* @plen is new: in the message's rest, or in @len for a new one */
	rest = dlcp_sk(sk)->in_rest + (m ? 0 : len) - plen;
	return atomic_read(&sk->sk_rmem_alloc) + skb->truesize + rest +
	       rest / 16 + 2 * PAGE_SIZE <= dlcp_rcvbuf_limit(sk);
}

/*
 * DATA: add the bytes to their message, copied into its pages or, with
 * *@kept set, by keeping @skb. A native super-packet (dlcp_offload_rcv())
 * is taken as one packet of all its segments' bytes, and counts for as
 * many packets as it holds. Returns the counter of the drop if the packet
 * was refused, else DLCP_MIB_NONE.
 */
static enum dlcp_mib_field dlcp_in_data(struct sock *sk, struct sk_buff *skb,
					bool udp, bool *kept)
	__must_hold(&dlcp_sk(sk)->lock)
{
	const struct dlcp_data_hdr *d = (const void *)skb->data;
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct net *net = sock_net(sk);
	u32 hlen = d->common.doff * 4, plen = skb->len - hlen;
	u32 pkts = dlcp_skb_pkts(skb), pkt_len = dlcp_skb_pkt_len(skb);
	u32 off = ntohl(d->offset), added, need;
	bool dup = false, first = false, keep, ce;
	enum dlcp_mib_field why;
	struct dlcp_in_msg *m;
	u8 rflags = 0;
	int n;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	DLCP_ADD_STATS(net, DLCP_MIB_IN_DATA_PKTS, pkts);
	m = dlcp_intab_find(dsk, &dlcp_cb(skb)->saddr, d->common.source,
			    ntohl(d->common.msg_id));
	if (m && m->len != ntohl(d->common.msg_len))
		return DLCP_MIB_DROP_MISMATCH;
	if (m && m->delivered) {
		DLCP_ADD_STATS(net, DLCP_MIB_IN_LATE_PKTS, pkts);
		/* kept while its sender still sends: it missed the STOP */
		dlcp_intab_touch(dsk, m);
		/*
		 * The STOP echoes this packet. The stamp of the last one
		 * before delivery would make the time since then a round
		 * trip of the sender's, as long as its timeouts took to
		 * resend, and the timeout that resent look spurious: its
		 * RTO would stay at twice that (dlcp_peer_rtt_sample()).
		 */
		m->tsval = ntohl(d->tsval);
		if (d->common.flags & (DLCP_HF_ACKREQ | DLCP_HF_RETRANS))
			dlcp_in_send_stop(sk, m);
		return DLCP_MIB_NONE;
	}
	if (m && dlcp_rs_covers(&m->have, off, off + plen)) {
		/* a resent duplicate: the sender missed our reports */
		dup = true;
		DLCP_ADD_STATS(net, DLCP_MIB_IN_DUP_PKTS, pkts);
		if (d->common.flags & DLCP_HF_RETRANS) {
			m->pkts_unreported = U32_MAX;
			rflags = DLCP_RF_DUP;
		}
		goto report;
	}
	/*
	 * What the packet may add to dlcp_in_cost(): itself if kept, else
	 * the pages it touches and an xarray node for each (and one more);
	 * the range array doubling, and the message's state if it is new
	 */
	keep = dlcp_in_may_keep(sk, m, skb, ntohl(d->common.msg_len), off,
				plen);
	if (keep)
		need = skb->truesize;
	else
		need = DIV_ROUND_UP(offset_in_page(off) + plen, PAGE_SIZE) *
		       (PAGE_SIZE + sizeof(struct xa_node)) +
		       sizeof(struct xa_node);
	need += clamp_t(u32, m ? m->have.cap : 0, 8, DLCP_RS_PAGE_RANGES) *
	       sizeof(struct dlcp_rs_range) +
	       (m ? 0 : sizeof(*m));
	why = dlcp_mem_schedule(sk, need);
	if (!why && !m)
		why = dlcp_intab_room(sk, &dlcp_cb(skb)->saddr);
	if (why)
		return why;
	if (!m) {
		m = dlcp_in_new(sk, skb, udp);
		if (!m)
			return DLCP_MIB_DROP_NOMEM;
		first = true;
	}
	/* bytes go in the buffer only if the range set can record them */
	n = dlcp_rs_prepare(&m->have, off, off + plen, GFP_ATOMIC);
	if (n)
		return n == -E2BIG ? DLCP_MIB_DROP_RANGES : DLCP_MIB_DROP_NOMEM;
	ce = INET_ECN_is_ce(dlcp_cb(skb)->dsfield);
	if (keep) {
		/* @skb is the message's now: only its header is read on */
		dlcp_buf_keep_skb(&m->buf, skb, hlen, off, plen);
		*kept = true;
		DLCP_ADD_STATS(net, DLCP_MIB_IN_DATA_KEPT, pkts);
		n = 0;
	} else {
		n = dlcp_buf_from_skb(&m->buf, off, skb, hlen, plen,
				      GFP_ATOMIC);
	}
	/*
	 * charge what was kept or allocated (and the range array grown
	 * above), even if a later page failed
	 */
	dlcp_in_recharge(sk, m);
	if (n < 0)
		return DLCP_MIB_DROP_NOMEM;
	WARN_ON_ONCE(dlcp_rs_add(&m->have, off, off + plen, GFP_ATOMIC,
				 &added));
	dlcp_intab_got(dsk, m, added);
	/*
	 * only new bytes put off the message's timeout: duplicates and
	 * probes, which cost a sender nothing, must not hold what the
	 * message holds here for ever
	 */
	if (added)
		dlcp_intab_touch(dsk, m);
	if (ce)
		m->ce_bytes += plen;
	if (d->common.flags & DLCP_HF_CRITICAL)
		m->crit_rcvd += added;
	m->pkts_unreported += pkts;
report:
	if (d->common.flags & DLCP_HF_LAST)
		m->sent_all = true;
	m->tsval = ntohl(d->tsval);
	/*
	 * Only a packet that brings new bytes measures reordering: an
	 * original arriving after its retransmission (a duplicate) was late
	 * by a whole timeout, which is no reason to hold every message.
	 */
	if (!m->max_tsval || (s32)(m->tsval - m->max_tsval) > 0)
		m->max_tsval = m->tsval;
	else if (!dup)
		dlcp_in_reordered(dsk, m->max_tsval - m->tsval);
	m->max_pkt = max(m->max_pkt, pkt_len);
	if (dlcp_in_ready(sk, m)) {
		dlcp_in_complete(sk, m);
		return DLCP_MIB_NONE;
	}
	/*
	 * The first packet of a message is answered at once: it gives the
	 * sender a round-trip sample (a fresh socket has none) even if the
	 * rest of its first window is lost, as a full queue at an incast
	 * does, so that RACK and the tail loss probe find the losses instead
	 * of the 200 ms initial timeout.
	 */
	if ((d->common.flags & DLCP_HF_ACKREQ) || first ||
	    m->pkts_unreported >= READ_ONCE(dlcp_pernet(net)->ack_every))
		dlcp_in_send_report(sk, m, rflags, pkt_len);
	return DLCP_MIB_NONE;
}

/*
 * PROBE: answer with STOP or a REPORT; never creates state. Returns the
 * counter of the drop if the packet was refused, else DLCP_MIB_NONE.
 */
static enum dlcp_mib_field dlcp_in_probe(struct sock *sk, struct sk_buff *skb,
					 bool udp)
	__must_hold(&dlcp_sk(sk)->lock)
{
	const struct dlcp_probe_hdr *p = (const void *)skb->data;
	struct dlcp_in_msg *m, tmp = { };

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	m = dlcp_intab_find(dlcp_sk(sk), &dlcp_cb(skb)->saddr,
			    p->common.source, ntohl(p->common.msg_id));
	if (m && m->len != ntohl(p->common.msg_len))
		return DLCP_MIB_DROP_MISMATCH;
	if (!m) {
		/* unknown: nothing of it is here */
		tmp.key.saddr = dlcp_cb(skb)->saddr;
		tmp.daddr = dlcp_cb(skb)->daddr;
		tmp.key.sport = p->common.source;
		tmp.key.id = ntohl(p->common.msg_id);
		tmp.len = ntohl(p->common.msg_len);
		tmp.udp = udp;
		tmp.stranger = true;
		m = &tmp;
	}
	m->tsval = ntohl(p->tsval);
	if (m->delivered) {
		dlcp_intab_touch(dlcp_sk(sk), m);
		dlcp_in_send_stop(sk, m);
		return DLCP_MIB_NONE;
	}
	if (m != &tmp) {
		if (ntohl(p->sent) == m->len || (p->common.flags & DLCP_HF_FINAL))
			m->sent_all = true;
		/* past the deadline there is no waiting for late segments */
		if ((p->common.flags & DLCP_HF_FINAL) ? dlcp_in_can_complete(m) :
		    dlcp_in_ready(sk, m)) {
			dlcp_in_complete(sk, m);
			return DLCP_MIB_NONE;
		}
		if (p->common.flags & DLCP_HF_FINAL) {
			dlcp_in_fail(sk, m);
			return DLCP_MIB_NONE;
		}
	} else if (p->common.flags & DLCP_HF_FINAL) {
		/* nothing arrived before the deadline */
		tmp.failed = true;
		tmp.lost = tmp.len;
		dlcp_in_send_stop(sk, &tmp);
		return DLCP_MIB_NONE;
	}
	dlcp_in_send_report(sk, m, DLCP_RF_PROBED, skb->len);
	return DLCP_MIB_NONE;
}

static void dlcp_in_abort(struct sock *sk, struct sk_buff *skb)
	__must_hold(&dlcp_sk(sk)->lock)
{
	const struct dlcp_hdr *h = (const void *)skb->data;
	struct dlcp_in_msg *m;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	m = dlcp_intab_find(dlcp_sk(sk), &dlcp_cb(skb)->saddr, h->source,
			    ntohl(h->msg_id));
	if (!m || m->len != ntohl(h->msg_len))
		return;
	if (!m->delivered)
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_IN_MSGS_ABORTED);
	dlcp_in_free(sk, m);
}

/* Bring the header (all of a control packet) into the linear area. */
static bool dlcp_pull_hdr(struct sk_buff *skb)
{
	const struct dlcp_hdr *h;
	u32 need;

	if (!pskb_may_pull(skb, DLCP_HDR_LEN))
		return false;
	h = (const struct dlcp_hdr *)skb->data;
	if (dlcp_wire_type(h) != DLCP_T_DATA)
		return !skb_linearize(skb);
	need = max_t(u32, h->doff * 4, DLCP_DATA_HDR_LEN);
	return pskb_may_pull(skb, min(need, skb->len));
}

/*
 * The kernel's drop reason (skb:kfree_skb, dropwatch) of each drop
 * counter: the closest that Linux 6.1 defines. Counters left out have
 * none that fits (malformed DLCP headers, disagreement with a message's
 * state, DLCP's own limits): SKB_DROP_REASON_NOT_SPECIFIED. DLCP's
 * checksum is UDP's, over a pseudo-header that names DLCP.
 */
static const dlcp_skb_reason dlcp_drop_reasons[__DLCP_MIB_MAX] = {
	[DLCP_MIB_DROP_SHORT]		= DLCP_DROP_REASON(PKT_TOO_SMALL),
	[DLCP_MIB_DROP_VERSION]		= DLCP_DROP_REASON(UNHANDLED_PROTO),
	[DLCP_MIB_DROP_TYPE]		= DLCP_DROP_REASON(UNHANDLED_PROTO),
	[DLCP_MIB_CSUM_ERRORS]		= DLCP_DROP_REASON(UDP_CSUM),
	[DLCP_MIB_DROP_NOSOCKET]	= DLCP_DROP_REASON(NO_SOCKET),
	[DLCP_MIB_DROP_RCVMEM]		= DLCP_DROP_REASON(SOCKET_RCVBUFF),
	[DLCP_MIB_DROP_NOMEM]		= DLCP_DROP_REASON(NOMEM),
	[DLCP_MIB_DROP_CLOSED]		= DLCP_DROP_REASON(NO_SOCKET),
	[DLCP_MIB_DROP_NOT_HOST]	= DLCP_DROP_REASON(OTHERHOST),
	[DLCP_MIB_DROP_POLICY]		= DLCP_DROP_REASON(XFRM_POLICY),
	[DLCP_MIB_DROP_FILTER]		= DLCP_DROP_REASON(SOCKET_FILTER),
	[DLCP_MIB_DROP_ADDR]		= DLCP_DROP_REASON(IP_INHDR),
	[DLCP_MIB_DROP_PROTOMEM]	= DLCP_DROP_REASON(PROTO_MEM),
};

/* The kernel's drop reason of a packet counted under @why. */
static dlcp_skb_reason dlcp_skb_drop_reason(enum dlcp_mib_field why)
{
	dlcp_skb_reason reason = 0;

	if (why < ARRAY_SIZE(dlcp_drop_reasons))
		reason = dlcp_drop_reasons[why];
	return reason ?: DLCP_DROP_REASON(NOT_SPECIFIED);
}

/*
 * Drop a received packet: count it under @why, trace it (dlcp_drop) and
 * free it with the kernel's drop reason (skb:kfree_skb).
 */
int dlcp_drop(struct net *net, struct sk_buff *skb, enum dlcp_mib_field why)
{
	DLCP_INC_STATS(net, why);
	trace_dlcp_drop(dlcp_mib_names[why], skb->len);
	dlcp_kfree_skb_reason(skb, dlcp_skb_drop_reason(why));
	return 0;
}

/*
 * The kernel's policy on a packet for @sk: IPsec (a packet that a policy
 * wants protected must have been), then the socket's filter
 * (SO_ATTACH_FILTER), cgroup BPF ingress programs and the LSM
 * (sk_filter()). A filter may only take or drop a DLCP packet whole: its
 * header gives its length. Returns the drop reason, or 0.
 */
static enum dlcp_mib_field dlcp_rcv_policy(struct sock *sk,
					   const struct dlcp_af *af,
					   struct sk_buff *skb)
{
	if (!INDIRECT_CALL_2(af->policy_check, dlcp4_policy_check,
			     dlcp6_policy_check, sk, skb))
		return DLCP_MIB_DROP_POLICY;
	nf_reset_ct(skb);
	if (sk_filter_trim_cap(sk, skb, skb->len))
		return DLCP_MIB_DROP_FILTER;
	return 0;
}

/*
 * Receive a DLCP packet of family @af (skb->data at the DLCP header),
 * native (@udp false) or from the UDP encapsulation socket, or a native
 * super-packet that dlcp_offload_rcv() checked. Softirq context.
 */
int dlcp_rcv_one(struct sk_buff *skb, const struct dlcp_af *af, bool udp)
{
	struct dlcp_skb_cb *cb = dlcp_cb(skb);
	struct net *net = dev_net(skb->dev);
	enum dlcp_drop_reason reason;
	const struct dlcp_hdr *h;
	enum dlcp_mib_field why;
	struct dlcp_sock *dsk;
	struct sock *sk;
	LIST_HEAD(reap);
	int dif, sdif;
	bool addrs_ok, kept = false;

	DLCP_ADD_STATS(net, DLCP_MIB_IN_PKTS, dlcp_skb_pkts(skb));
	/* the IP layer is done with skb->cb: the addresses go there */
	addrs_ok = INDIRECT_CALL_2(af->rcv_addrs, dlcp4_rcv_addrs,
				   dlcp6_rcv_addrs, skb, &dif, &sdif);
	if (skb->pkt_type != PACKET_HOST)
		return dlcp_drop(net, skb, DLCP_MIB_DROP_NOT_HOST);
	if (!addrs_ok)
		return dlcp_drop(net, skb, DLCP_MIB_DROP_ADDR);
	if (skb->len < DLCP_HDR_LEN)
		return dlcp_drop(net, skb, DLCP_MIB_DROP_SHORT);
	if (!dlcp_pull_hdr(skb))
		return dlcp_drop(net, skb, DLCP_MIB_DROP_NOMEM);
	/*
	 * a super-packet's header is its first segment's: checked as that
	 * packet (of a DATA packet only the header is read)
	 */
	reason = dlcp_wire_check(skb->data, dlcp_skb_pkt_len(skb),
				 READ_ONCE(dlcp_pernet(net)->max_msg_size));
	if (reason != DLCP_DROP_NONE)
		return dlcp_drop(net, skb, (enum dlcp_mib_field)reason);
	if (!INDIRECT_CALL_2(af->csum_init, dlcp4_csum_init, dlcp6_csum_init,
			     skb) ||
	    skb_checksum_complete(skb))
		return dlcp_drop(net, skb, DLCP_MIB_CSUM_ERRORS);

	h = (const struct dlcp_hdr *)skb->data;
	rcu_read_lock();
	sk = dlcp_lookup(net, &cb->daddr, h->dest, dif, sdif);
	rcu_read_unlock();
	if (!sk) {
		dlcp_xmit_noport(net, af, skb, udp);
		return dlcp_drop(net, skb, DLCP_MIB_DROP_NOSOCKET);
	}
	why = dlcp_rcv_policy(sk, af, skb);
	if (why) {
		atomic_inc(&sk->sk_drops);
		sock_put(sk);
		return dlcp_drop(net, skb, why);
	}

	dsk = dlcp_sk(sk);
	spin_lock(&dsk->lock);
	if (dsk->dead) {
		why = DLCP_MIB_DROP_CLOSED;
		goto unlock;
	}
	trace_dlcp_pkt_recv(h, &cb->saddr, &cb->daddr, cb->dsfield);
	switch (dlcp_wire_type(h)) {
	case DLCP_T_DATA:
		why = dlcp_in_data(sk, skb, udp, &kept);
		break;
	case DLCP_T_REPORT:
		DLCP_INC_STATS(net, DLCP_MIB_REPORTS_RCVD);
		why = dlcp_recovery_report(sk, skb);
		break;
	case DLCP_T_STOP:
		DLCP_INC_STATS(net, DLCP_MIB_STOPS_RCVD);
		why = dlcp_recovery_stop(sk, skb);
		break;
	case DLCP_T_PROBE:
		DLCP_INC_STATS(net, DLCP_MIB_PROBES_RCVD);
		why = dlcp_in_probe(sk, skb, udp);
		break;
	case DLCP_T_ABORT:
		DLCP_INC_STATS(net, DLCP_MIB_ABORTS_RCVD);
		dlcp_in_abort(sk, skb);
		break;
	}
unlock:
	dlcp_out_reap_take(sk, &reap);
	spin_unlock(&dsk->lock);
	dlcp_out_reap(&reap);
	if (why)
		atomic_inc(&sk->sk_drops);
	sock_put(sk);
	if (why)
		return dlcp_drop(net, skb, why);
	if (!kept)
		consume_skb(skb);
	return 0;
}

/* Receive what the IP layer or the UDP socket hands DLCP: one packet or many. */
int dlcp_rcv_common(struct sk_buff *skb, const struct dlcp_af *af, bool udp)
{
	if (unlikely(skb_is_gso(skb)))
		return dlcp_offload_rcv(skb, af, udp);
	return dlcp_rcv_one(skb, af, udp);
}

/*
 * Guard timer work for the receiver: free messages without progress and
 * zombies older than msg_timeout_ms. Returns true while any remain.
 */
bool dlcp_in_timeout(struct sock *sk, unsigned long now)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	unsigned long timeout = msecs_to_jiffies(READ_ONCE(dn->msg_timeout_ms));
	struct dlcp_in_msg *m, *tmp;

	lockdep_assert_held(&dsk->lock);
	/* waited for late segments long enough */
	list_for_each_entry_safe(m, tmp, &dsk->in_settle, settle)
		if (dlcp_in_ready(sk, m))
			dlcp_in_complete(sk, m);
	/* the lists are in expiry order: stop at the first one to keep */
	list_for_each_entry_safe(m, tmp, &dsk->in_active, lru) {
		if (time_before(now, m->last_active + timeout))
			break;
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_IN_MSGS_TIMEOUT);
		dlcp_in_free(sk, m);
	}
	list_for_each_entry_safe(m, tmp, &dsk->in_zombies, lru) {
		if (time_before(now, m->last_active + timeout))
			break;
		dlcp_in_free(sk, m);
	}
	return dsk->nr_in_msgs;
}

/*
 * Socket closing. A delivered message's STOP may have been lost, and with
 * the socket its zombie goes, which would have answered the sender's
 * probes: repeat the STOP of every message delivered in the last
 * msg_timeout_ms once more, so that its sender is not left probing a
 * closed port until it gives up.
 */
void dlcp_in_purge(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_in_msg *m, *tmp;

	lockdep_assert_held(&dsk->lock);
	list_for_each_entry_safe(m, tmp, &dsk->in_active, lru)
		dlcp_in_free(sk, m);
	list_for_each_entry_safe(m, tmp, &dsk->in_zombies, lru) {
		dlcp_in_send_stop(sk, m);
		dlcp_in_free(sk, m);
	}
}
