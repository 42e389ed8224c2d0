// SPDX-License-Identifier: GPL-2.0
/*
 * The DLCP sender: segmentation, transmission, the window and pacing.
 *
 * A message is cut into segments of seg_size payload bytes (whole elements,
 * fitting the route MTU); each segment is a self-describing DATA packet.
 * Every transmitted segment gets an entry in the socket's flight ring until
 * a REPORT resolves it, acknowledged or lost (dlcp_recovery.c: loss
 * detection, timeouts and probes). Lost segments are retransmitted before
 * new ones, but only while the bytes known lost exceed the message's loss
 * budget; critical segments always. A message with a budget sends a PROBE
 * right after its last new segment, so that the receiver learns at once
 * that everything was sent and can complete within budget without waiting
 * for a timeout.
 *
 * Window: the unresolved segments sent to one destination are limited by
 * its peer's cwnd (dlcp_peer.c, dlcp_cc.c), and transmissions to it are
 * paced at twice cwnd per smoothed round trip; the flight ring bounds the
 * socket's total. Every packet is tagged with its class's DSCP and
 * skb->priority and an ECN codepoint by its importance (dlcp_prio.c).
 */
#include <linux/bitmap.h>
#include <linux/errqueue.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/sock.h>
#include "dlcp_impl.h"
#include "dlcp_trace.h"

/* The outgoing message of @h's id and length to @daddr port @dport. */
static struct dlcp_out_msg *dlcp_out_lookup(struct dlcp_sock *dsk,
					    const struct dlcp_hdr *h,
					    const struct in6_addr *daddr,
					    __be16 dport)
	__must_hold(&dsk->lock)
{
	u32 id = ntohl(h->msg_id);
	struct dlcp_out_msg *m;

	lockdep_assert_held(&dsk->lock);
	list_for_each_entry(m, &dsk->out_msgs, node)
		if (m->id == id && m->dport == dport &&
		    ipv6_addr_equal(&m->daddr, daddr) &&
		    m->len == ntohl(h->msg_len))
			return m;
	return NULL;
}

/* The message a control packet @h from @saddr (its receiver) is about. */
struct dlcp_out_msg *dlcp_out_find(struct dlcp_sock *dsk,
				   const struct dlcp_hdr *h,
				   const struct in6_addr *saddr)
	__must_hold(&dsk->lock)
{
	lockdep_assert_held(&dsk->lock);
	return dlcp_out_lookup(dsk, h, saddr, h->source);
}

/*
 * Does @h, the header of a packet we sent to @daddr that an ICMP error
 * quotes, name a message of ours in flight (id, destination port,
 * length)?
 */
bool dlcp_out_quoted(struct dlcp_sock *dsk, const struct dlcp_hdr *h,
		     const struct in6_addr *daddr)
	__must_hold(&dsk->lock)
{
	lockdep_assert_held(&dsk->lock);
	return dlcp_out_lookup(dsk, h, daddr, h->dest);
}

/*
 * Route from @sk to @daddr port @dport: the route (referenced), the source
 * address it picks and its cookie. Multicast and broadcast destinations
 * are refused (-EACCES).
 */
static struct dst_entry *dlcp_out_route_to(struct sock *sk,
					   const struct in6_addr *daddr,
					   __be16 dport, struct in6_addr *saddr,
					   u32 *cookie)
{
	struct dst_entry *dst;

	if (ipv6_addr_is_multicast(daddr))
		return ERR_PTR(-EACCES);
	dst = dlcp_route(sk, &in6addr_any, daddr, inet_sk(sk)->inet_sport,
			 dport, sk->sk_bound_dev_if, saddr, cookie);
	if (IS_ERR(dst))
		return dst;
	if (!dlcp_af_of(daddr)->dst_unicast(dst)) {
		dst_release(dst);
		return ERR_PTR(-EACCES);
	}
	return dst;
}

/* Route @m to its destination: sets saddr, dst and seg_size. */
int dlcp_out_route(struct sock *sk, struct dlcp_out_msg *m)
{
	struct dst_entry *dst;

	dst = dlcp_out_route_to(sk, &m->daddr, m->dport, &m->saddr,
				&m->dst_cookie);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	m->dst = dst;
	m->seg_size = dlcp_xmit_payload(&m->daddr, m->udp, dst_mtu(dst));
	return 0;
}

/*
 * Payload bytes of a DATA packet to @daddr port @dport as the route stands
 * now (connect() checks the destination with it, DLCP_SEGMENT_SIZE reports
 * it), or the routing error.
 */
int dlcp_out_seg_size(struct sock *sk, const struct in6_addr *daddr,
		      __be16 dport, bool udp)
{
	struct dst_entry *dst;
	struct in6_addr saddr;
	u32 cookie, size;

	dst = dlcp_out_route_to(sk, daddr, dport, &saddr, &cookie);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	size = dlcp_xmit_payload(daddr, udp, dst_mtu(dst));
	dst_release(dst);
	return size;
}

/*
 * A new message of @len bytes from @sk to @daddr port @dport, with the
 * socket's defaults, not yet routed, cut or filled.
 */
struct dlcp_out_msg *dlcp_out_msg_alloc(struct sock *sk, size_t len,
					const struct in6_addr *daddr,
					__be16 dport)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_out_msg *m;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return NULL;
	INIT_LIST_HEAD(&m->node);
	dlcp_buf_init(&m->buf, len);
	m->len = len;
	m->udp = dlcp_sock_encap(sk) == DLCP_ENCAP_UDP;
	m->daddr = *daddr;
	m->dport = dport;
	spin_lock_bh(&dsk->lock);
	m->meta.budget_ppm = dsk->loss_budget_ppm;
	m->meta.layer = dsk->layer;
	m->meta.prio = dsk->prio;
	spin_unlock_bh(&dsk->lock);
	return m;
}

/* Mark the segments of @m that overlap a critical range. */
static int dlcp_out_mark_crit(struct dlcp_out_msg *m,
			      const struct dlcp_send_args *args)
{
	unsigned int seg;
	u32 i;

	if (m->meta.flags & DLCP_MSG_CRITICAL) {
		m->crit_len = m->len;
		return 0;
	}
	if (!args->nr_crit)
		return 0;
	m->crit = bitmap_zalloc(m->nsegs, GFP_KERNEL_ACCOUNT);
	if (!m->crit)
		return -ENOMEM;
	for (i = 0; i < args->nr_crit; i++) {
		u32 first = args->crit[i].offset / m->seg_size;
		u32 last = (args->crit[i].offset + args->crit[i].len - 1) /
			   m->seg_size;

		bitmap_set(m->crit, first, last - first + 1);
	}
	for_each_set_bit(seg, m->crit, m->nsegs)
		m->crit_len += min(m->seg_size, m->len - seg * m->seg_size);
	return 0;
}

/*
 * Cut routed message @m into segments: whole elements of its type that
 * fit the route, their states, and which are critical (@args->crit, or
 * the whole message) or droppable by the sender's own classes
 * (@args->seg_cls). Droppable segments by magnitude are marked once the
 * payload is in (dlcp_mark_droppable()).
 */
static int dlcp_out_cut(struct dlcp_out_msg *m,
			const struct dlcp_send_args *args)
{
	int err;

	m->seg_size = rounddown(m->seg_size, dlcp_wire_dtype_size(m->meta.dtype));
	m->nsegs = DIV_ROUND_UP(m->len, m->seg_size);
	m->seg = kvcalloc(m->nsegs, sizeof(*m->seg), GFP_KERNEL_ACCOUNT);
	if (!m->seg)
		return -ENOMEM;
	err = dlcp_out_mark_crit(m, args);
	if (err || !args->seg_cls)
		return err;
	return dlcp_set_seg_classes(m, args->seg_cls, args->nr_seg_cls);
}

/*
 * Make @m, a message of @sk's with its metadata parsed, ready to send:
 * route it, attach its paths (DLCP_PATHS), cut it into segments, and set
 * its class (its layer's unless the sender chose one), the class of its
 * critical retransmissions (0 for a sender that may use it) and its loss
 * budget in bytes.
 */
int dlcp_out_build(struct sock *sk, struct dlcp_out_msg *m,
		   const struct dlcp_send_args *args)
{
	const struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	int err;

	err = dlcp_out_route(sk, m);
	if (!err)
		err = dlcp_path_attach(sk, m);
	if (!err)
		err = dlcp_out_cut(m, args);
	if (err)
		return err;
	if (!dlcp_sk(sk)->prio_set && !(m->meta.flags & DLCP_MSG_HAS_PRIO))
		m->meta.prio = dlcp_layer_class(dn, m->meta.layer);
	m->rtx_class = args->class0 ? 0 :
		       min_t(u8, m->meta.prio, READ_ONCE(dn->unpriv_class));
	m->budget_bytes = dlcp_budget_bytes(m->len, m->meta.budget_ppm);
	return 0;
}

/*
 * Copy the payload of @m from @from (the one copy on send), then, unless
 * the sender gave the segments' classes, make the share of them that
 * @args or net.dlcp.droppable_ppm says droppable, by magnitude.
 */
int dlcp_out_fill(struct sock *sk, struct dlcp_out_msg *m,
		  struct iov_iter *from, const struct dlcp_send_args *args)
{
	s32 ppm = args->droppable_ppm;
	int err;

	err = dlcp_buf_from_iter(&m->buf, from);
	if (err || args->seg_cls)
		return err;
	if (ppm < 0)
		ppm = READ_ONCE(dlcp_pernet(sock_net(sk))->droppable_ppm);
	return dlcp_mark_droppable(m, ppm);
}

/* Revalidate a message's cached route; false if none can be had now. */
static bool dlcp_out_dst_ok(struct sock *sk, struct dlcp_out_msg *m)
{
	struct dst_entry *dst = m->dst;
	u32 seg_size = m->seg_size;

	if (dlcp_dst_valid(dst, m->dst_cookie))
		return true;
	dst_release(dst);
	m->dst = NULL;
	if (dlcp_out_route(sk, m)) {
		m->dst = NULL;
		return false;
	}
	/* segment boundaries change only by dlcp_out_resegment() */
	m->seg_size = seg_size;
	return true;
}

/* Send PROBE or ABORT for @m. */
void dlcp_out_send_ctl(struct sock *sk, struct dlcp_out_msg *m,
		       unsigned int type)
	__must_hold(&dlcp_sk(sk)->lock)
{
	u32 len = type == DLCP_T_PROBE ? DLCP_PROBE_PAD_LEN : DLCP_PROBE_HDR_LEN;
	struct dlcp_probe_hdr *p;
	struct sk_buff *skb;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	/* a PROBE is as long as the REPORT it asks for (DLCP_PROBE_PAD_LEN) */
	skb = dlcp_alloc_ctl(len, GFP_ATOMIC);
	if (!skb)
		return;
	p = (struct dlcp_probe_hdr *)skb->data;
	dlcp_fill_hdr(&p->common, type, inet_sk(sk)->inet_sport, m->dport,
		      m->id, m->len, len,
		      type == DLCP_T_PROBE && m->final ? DLCP_HF_FINAL : 0, 0);
	p->common.doff = len / 4;
	p->sent = htonl(min_t(u64, (u64)m->next_new * m->seg_size, m->len));
	p->tsval = htonl(dlcp_now_us());
	if (!dlcp_xmit_ctl(sk, skb, &m->saddr, &m->daddr, m->udp,
			   m->meta.prio))
		DLCP_INC_STATS(sock_net(sk), type == DLCP_T_PROBE ?
			       DLCP_MIB_PROBES_SENT : DLCP_MIB_ABORTS_SENT);
}

/*
 * The header flags of segment @seg of @m, resent if @rtx. After a timeout
 * with no word from the receiver since (@m's peer is backing off), every
 * packet asks to be answered at once: a report per few packets is then a
 * report per timeout, and under burst loss a live receiver whose reports
 * are lost would look silent after a few of them.
 */
u8 dlcp_out_seg_flags(const struct dlcp_out_msg *m, u32 seg, bool rtx)
{
	u8 flags = rtx ? DLCP_HF_RETRANS : 0;

	if (m->peer->rto_shift)
		flags |= DLCP_HF_ACKREQ;

	if (dlcp_seg_crit(m, seg))
		flags |= DLCP_HF_CRITICAL;
	else if (m->droppable && test_bit(seg, m->droppable))
		flags |= DLCP_HF_DROPPABLE;
	if (seg == m->nsegs - 1)
		flags |= DLCP_HF_ACKREQ | (rtx ? 0 : DLCP_HF_LAST);
	return flags;
}

/* Fill @d, the DATA header of segment @seg of @m, stamped @now_us. */
static void dlcp_out_data_hdr(struct sock *sk, const struct dlcp_out_msg *m,
			      u32 seg, u8 flags, u32 now_us,
			      struct dlcp_data_hdr *d)
{
	dlcp_fill_hdr(&d->common, DLCP_T_DATA, inet_sk(sk)->inet_sport,
		      m->dport, m->id, m->len,
		      DLCP_DATA_HDR_LEN + dlcp_seg_len(m, seg), flags,
		      m->meta.prio);
	d->offset = htonl(seg * m->seg_size);
	d->tensor_id = htonl(m->meta.tensor_id);
	d->iteration = htonl(m->meta.iteration);
	d->budget_ppm = htonl(m->meta.budget_ppm);
	d->layer = htons(m->meta.layer);
	d->dtype = m->meta.dtype;
	d->reserved = 0;
	d->msg_flags = htons(m->meta.flags);
	d->reserved2 = 0;
	d->tsval = htonl(now_us);
	d->crit_len = htonl(m->crit_len);
}

/*
 * Segments @seg .. @seg + @k - 1 of @m as one DATA packet, with @headroom
 * bytes for the headers below: the header of @seg in the linear part, the
 * payload of all @k as fragments of the message's pages. With @k > 1 it is
 * a native super-packet (dlcp_offload_xmit()), all of whose segments are
 * whole. Returns the skb or an ERR_PTR().
 */
struct sk_buff *dlcp_out_seg_skb(struct sock *sk, struct dlcp_out_msg *m,
				 u32 seg, u32 k, u8 flags, u32 now_us,
				 u32 headroom)
{
	u32 off = seg * m->seg_size;
	struct sk_buff *skb;

	skb = alloc_skb(headroom + DLCP_DATA_HDR_LEN, GFP_ATOMIC);
	if (!skb)
		return ERR_PTR(-ENOBUFS);
	skb_reserve(skb, headroom);
	skb_reset_transport_header(skb);
	dlcp_out_data_hdr(sk, m, seg, flags, now_us,
			  skb_put(skb, DLCP_DATA_HDR_LEN));
	if (dlcp_buf_frag_skb(&m->buf, off,
			      min(k * m->seg_size, m->len - off), skb)) {
		kfree_skb(skb);
		return ERR_PTR(-EMSGSIZE);
	}
	return skb;
}

/* Build and send segment @seg of @m over @dst. */
static int dlcp_out_send_seg(struct sock *sk, struct dlcp_out_msg *m,
			     struct dst_entry *dst, u32 seg, u8 flags,
			     u32 now_us)
{
	bool crit = flags & DLCP_HF_CRITICAL;
	struct sk_buff *skb;
	u8 cls;

	skb = dlcp_out_seg_skb(sk, m, seg, 1, flags, now_us,
			       dlcp_headroom(dst, &m->daddr, m->udp));
	if (IS_ERR(skb))
		return PTR_ERR(skb);
	/* retransmissions of critical data go in the highest class allowed */
	cls = crit && (flags & DLCP_HF_RETRANS) ? m->rtx_class : m->meta.prio;
	return dlcp_xmit_skb(sk, skb, dst, &m->saddr, &m->daddr, cls,
			     flags & DLCP_HF_DROPPABLE, m->udp, m->id, seg);
}

/*
 * Send segment @seg of @m (a retransmission if @rtx), and the new ones
 * after it that may go with it in a super-packet. Returns the number of
 * segments sent (0: none, the window is to open further first), or an
 * errno: -EHOSTUNREACH without a route.
 */
static int dlcp_out_send(struct sock *sk, struct dlcp_out_msg *m, u32 seg,
			 bool rtx, u64 now, u64 interval)
{
	u32 now_us = dlcp_clock_us(now), k = 1;
	struct dst_entry *dst;
	int err;

	if (m->paths)
		dst = dlcp_path_next(sk, m);
	else
		dst = dlcp_out_dst_ok(sk, m) ? m->dst : NULL;
	if (!dst)
		return -EHOSTUNREACH;
	if (!rtx)
		k = dlcp_offload_segs(sk, m, dst, seg, now, interval);
	if (!k)
		return 0;
	if (k > 1)
		return dlcp_offload_xmit(sk, m, dst, seg, k, now_us);
	err = dlcp_out_send_seg(sk, m, dst, seg,
				dlcp_out_seg_flags(m, seg, rtx), now_us);
	return err ?: 1;
}

void dlcp_seg_set(struct dlcp_out_msg *m, u32 seg, u8 state)
{
	u8 old = m->seg[seg];
	bool crit;

	if (old == state)
		return;
	crit = dlcp_seg_crit(m, seg);
	if (old == DLCP_SEG_LOST) {
		m->nr_lost--;
		m->lost_bytes -= dlcp_seg_len(m, seg);
		m->nr_lost_crit -= crit;
	} else if (old == DLCP_SEG_ACKED) {
		m->nr_acked--;
	}
	if (state == DLCP_SEG_LOST) {
		m->nr_lost++;
		m->lost_bytes += dlcp_seg_len(m, seg);
		m->lost_hint = min(m->lost_hint, seg);
		if (crit) {
			m->nr_lost_crit++;
			m->crit_hint = min(m->crit_hint, seg);
		}
	} else if (state == DLCP_SEG_ACKED) {
		m->nr_acked++;
	}
	m->seg[seg] = state;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_seg_set);

/*
 * Is there a lost segment of @m worth resending? Any, while the bytes
 * known lost exceed the budget; else only critical ones; none after the
 * deadline.
 */
bool dlcp_out_want_rtx(const struct dlcp_out_msg *m, bool *any)
{
	*any = m->lost_bytes > m->budget_bytes;
	return !m->final && (*any ? m->nr_lost : m->nr_lost_crit);
}

/*
 * Next segment of @m to send: a lost one worth resending, then a new one.
 * After a timeout, one resend until the receiver answers (@rto_hold).
 */
static bool dlcp_out_next_seg(struct dlcp_out_msg *m, u32 *seg, bool *rtx)
{
	bool any;

	if (dlcp_out_want_rtx(m, &any) &&
	    !(m->rto_hold && m->rto_rtx_sent)) {
		u32 *hint = any ? &m->lost_hint : &m->crit_hint;

		while (*hint < m->nsegs &&
		       (m->seg[*hint] != DLCP_SEG_LOST ||
			(!any && !dlcp_seg_crit(m, *hint))))
			(*hint)++;
		if (!WARN_ON_ONCE(*hint >= m->nsegs)) {
			*seg = *hint;
			*rtx = true;
			return true;
		}
	}
	if (m->next_new < m->nsegs && !m->final) {
		*seg = m->next_new;
		*rtx = false;
		return true;
	}
	return false;
}

/*
 * Which CPU transmits
 * -------------------
 * A socket transmits from the softirq that processes a REPORT or STOP
 * (the ack clock), from sendmsg() and from the pacer. A device that hands
 * packets to the receiving stack through the backlog of the CPU that sent
 * them (veth, loopback) keeps each CPU's packets in order, but not those
 * of two CPUs: a CPU busy with an application defers its softirq work by
 * up to a scheduling slice, milliseconds, and packets of the other CPU
 * sent meanwhile arrive first. The receiver reports the gap, and after
 * the reordering window the sender resends what was only late. Two CPUs
 * clocking one socket, each from the REPORTs its own packets draw, keep
 * that going for as long as the transfer runs.
 *
 * So while packets are in flight, sendmsg() and the pacer transmit only
 * on the CPU that processed the last REPORT or STOP: elsewhere they leave
 * it to the next REPORT, a fraction of a round trip away, which sends
 * what they would have (dlcp_out_push() serves every message). Packets in
 * flight always draw a REPORT, or the guard timer finds them lost; the
 * guard timer, which acts when REPORTs stopped, transmits from any CPU,
 * and so does the pacer once nothing is in flight: it looks again every
 * DLCP_TX_RETRY_US while it is held back. Whatever CPU sent a packet, it
 * is not found lost while that CPU's backlog holds packets
 * (dlcp_flight_held()): a stalled CPU holds its timers too, and when it
 * runs again they come before its backlog.
 */
#define DLCP_TX_RETRY_US	1000

/*
 * May sendmsg() or the pacer transmit now, on this CPU? If not, the pacer
 * is armed to look again.
 */
bool dlcp_out_may_push(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);

	lockdep_assert_held(&dsk->lock);
	if (!dsk->flight_live || dsk->tx_cpu == smp_processor_id())
		return true;
	dlcp_pacer_arm(sk, ktime_get_ns() + DLCP_TX_RETRY_US * NSEC_PER_USEC);
	return false;
}

/* A REPORT or STOP was processed on this CPU: transmit from here. */
void dlcp_out_push_clocked(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);

	lockdep_assert_held(&dsk->lock);
	dsk->tx_cpu = smp_processor_id();
	dlcp_out_push(sk);
}

/*
 * Transmit what the window and the pacing allow. Called with dsk->lock
 * held, from sendmsg, the receive path and the timers.
 */
void dlcp_out_push(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct net *net = sock_net(sk);
	u64 pace_at = U64_MAX;
	struct dlcp_out_msg *m;

	lockdep_assert_held(&dsk->lock);
	/* the flight ring comes with the first message (dlcp_flight_alloc) */
	if (dsk->dead || list_empty(&dsk->out_msgs) || !dsk->flight)
		return;

	list_for_each_entry(m, &dsk->out_msgs, node) {
		struct dlcp_peer *p = m->peer;
		u64 interval = dlcp_peer_pace_ns(p);
		bool rtx, defer = false;
		u32 seg;

		while (dsk->flight_live < dsk->flight_cap &&
		       p->inflight < p->cwnd &&
		       dlcp_out_next_seg(m, &seg, &rtx)) {
			u64 now = ktime_get_ns();
			u32 now_us = dlcp_clock_us(now), i;
			int n;

			if (dlcp_peer_pace_wait(p, now, interval)) {
				pace_at = min(pace_at, dlcp_peer_pace_next(p));
				break;
			}
			n = dlcp_out_send(sk, m, seg, rtx, now, interval);
			if (!n) {
				defer = true;
				break;
			}
			if (n < 0) {
				/*
				 * No route or memory, a netfilter verdict:
				 * the guard retries, and gives up on a
				 * message that never started if it lasts
				 */
				if (!m->xmit_err)
					m->xmit_err_since = jiffies;
				m->xmit_err = -n;
				break;
			}
			m->xmit_err = 0;
			DLCP_ADD_STATS(net, DLCP_MIB_OUT_DATA_PKTS, n);
			if (rtx) {
				if (m->rto_hold) {
					m->rto_rtx_sent = true;
					m->rto_rtx_us = now_us;
				}
				DLCP_INC_STATS(net, DLCP_MIB_RETRANS_PKTS);
				trace_dlcp_retransmit(inet_sk(sk)->inet_num,
						      m->id, seg,
						      seg * m->seg_size);
			} else {
				if (!m->next_new) {
					m->last_heard = jiffies;
					m->progress_at = jiffies;
				}
				m->next_new += n;
			}
			/* tell the receiver at once that all was sent */
			if (!rtx && m->next_new == m->nsegs && m->budget_bytes)
				dlcp_out_send_ctl(sk, m, DLCP_T_PROBE);
			for (i = seg; i < seg + n; i++) {
				struct dlcp_flight *f;

				dlcp_flight_tidy(dsk);
				dlcp_seg_set(m, i, DLCP_SEG_INFLIGHT);
				f = dlcp_flight_at(dsk, dsk->flight_len++);
				f->msg = m;
				f->seg = i;
				f->sent_us = now_us;
				f->rack_wait = false;
				f->held = false;
				f->cpu = smp_processor_id();
				m->inflight++;
				p->inflight++;
				dsk->flight_live++;
				dlcp_peer_pace_sent(p, now, interval);
			}
		}
		/* waiting for the window is not a stall of this message */
		if (m->next_new && !m->inflight &&
		    (defer || dsk->flight_live >= dsk->flight_cap ||
		     p->inflight >= p->cwnd))
			m->progress_at = jiffies;
	}
	if (pace_at != U64_MAX)
		dlcp_pacer_arm(sk, pace_at);
}

/*
 * Queue @m for transmission: after every message of its class or a higher
 * one (a smaller number), before those of lower classes, so that a
 * front-layer gradient sent after a bulk one overtakes it on its socket.
 */
void dlcp_out_enqueue(struct dlcp_sock *dsk, struct dlcp_out_msg *m)
	__must_hold(&dsk->lock)
{
	struct dlcp_out_msg *pos;

	lockdep_assert_held(&dsk->lock);
	list_for_each_entry(pos, &dsk->out_msgs, node)
		if (pos->meta.prio > m->meta.prio)
			break;
	list_add_tail(&m->node, &pos->node);
	dsk->nr_out_msgs++;
}

/*
 * Free @m, which must be off every list but dsk->out_msgs: its accounting
 * now, its pages, routes and maps once the lock is dropped. A message's
 * pages are hundreds, and the softirq that frees it on STOP would hold the
 * lock that sendmsg() and the other CPU's softirq wait for while it lets
 * go of each; the holder of the lock takes them (dlcp_out_reap_take())
 * and releases them after it (dlcp_out_reap()).
 */
void dlcp_out_free_msg(struct sock *sk, struct dlcp_out_msg *m)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	u32 i;

	lockdep_assert_held(&dsk->lock);
	for (i = 0; m->inflight && i < dsk->flight_len; i++) {
		struct dlcp_flight *f = dlcp_flight_at(dsk, i);

		if (f->msg == m)
			dlcp_flight_resolve(dsk, f);
	}
	dlcp_flight_tidy(dsk);
	list_del(&m->node);
	dsk->nr_out_msgs--;
	dsk->snd_mem -= dlcp_snd_cost(m->len);
	dlcp_mem_uncharge_snd(sk, m->len);
	dlcp_peer_put(m->peer);
	m->peer = NULL;
	list_add_tail(&m->node, &dsk->out_reap);
}

/* Move the messages dlcp_out_free_msg() set aside to @reap. */
void dlcp_out_reap_take(struct sock *sk, struct list_head *reap)
	__must_hold(&dlcp_sk(sk)->lock)
{
	lockdep_assert_held(&dlcp_sk(sk)->lock);
	list_splice_tail_init(&dlcp_sk(sk)->out_reap, reap);
}

/* Release the messages on @reap (no lock held). */
void dlcp_out_reap(struct list_head *reap)
{
	struct dlcp_out_msg *m, *tmp;

	list_for_each_entry_safe(m, tmp, reap, node)
		dlcp_out_release_msg(m);
}

/* Free @m and what it holds: routes, bytes, maps (no list, no peer). */
void dlcp_out_release_msg(struct dlcp_out_msg *m)
{
	dst_release(m->dst);
	dlcp_path_free(m);
	dlcp_buf_free(&m->buf);
	bitmap_free(m->crit);
	bitmap_free(m->droppable);
	kvfree(m->seg);
	kfree(m);
}

/* Queue the outcome of @m on the error queue, if the socket asked for it. */
void dlcp_out_complete(struct sock *sk, struct dlcp_out_msg *m, u32 status,
		       u32 lost, int err)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct sock_exterr_skb *serr;
	struct dlcp_completion *c;
	struct sk_buff *skb;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	trace_dlcp_msg_done(inet_sk(sk)->inet_num, m->id, status, lost);
	if (!dlcp_sk(sk)->recv_completion)
		return;
	skb = NULL;
	if (skb_queue_len(&sk->sk_error_queue) < DLCP_MAX_COMPLETIONS)
		skb = alloc_skb(sizeof(*c), GFP_ATOMIC);
	if (!skb) {
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_COMPLETIONS_DROPPED);
		return;
	}
	c = skb_put_zero(skb, sizeof(*c));
	c->msg_id = m->id;
	c->tensor_id = m->meta.tensor_id;
	c->iteration = m->meta.iteration;
	c->status = status;
	c->msg_len = m->len;
	c->bytes_lost = lost;
	serr = SKB_EXT_ERR(skb);
	memset(serr, 0, sizeof(*serr));
	serr->ee.ee_errno = err;
	serr->ee.ee_origin = SO_EE_ORIGIN_LOCAL;
	serr->ee.ee_info = m->id;
	serr->ee.ee_data = lost;
	dlcp_mem_errq_owner(skb, sk);
	skb_queue_tail(&sk->sk_error_queue, skb);
	dlcp_sk_error_report(sk);
}

/*
 * The socket that sent the packet an ICMP(v6) "too big" quotes, from
 * @saddr to @daddr with the DLCP header @h (whole: the caller pulled
 * DLCP_HDR_LEN bytes of the quote), referenced and counted, or NULL. The
 * quote must name a message the socket is sending to @daddr (id, port,
 * length): an off-path host that forges the error must guess the id, as
 * for any control packet. Others are ignored (DlcpIcmpIgnored).
 */
struct sock *dlcp_out_err_sock(struct net *net, const struct in6_addr *saddr,
			       const struct in6_addr *daddr,
			       const struct dlcp_hdr *h, int dif)
{
	struct dlcp_sock *dsk;
	struct sock *sk;
	bool ok;

	rcu_read_lock();
	sk = dlcp_lookup(net, saddr, h->source, dif, 0);
	rcu_read_unlock();
	if (!sk)
		return NULL;
	dsk = dlcp_sk(sk);
	spin_lock_bh(&dsk->lock);
	ok = !dsk->dead && dlcp_out_quoted(dsk, h, daddr);
	spin_unlock_bh(&dsk->lock);
	if (!ok) {
		DLCP_INC_STATS(net, DLCP_MIB_ICMP_IGNORED);
		sock_put(sk);
		return NULL;
	}
	DLCP_INC_STATS(net, DLCP_MIB_PMTU_UPDATES);
	return sk;
}

/*
 * The route to @daddr was updated to @mtu: re-cut @sk's messages that no
 * longer fit; drops the reference of dlcp_out_err_sock().
 */
void dlcp_out_err_pmtu(struct sock *sk, const struct in6_addr *daddr, u32 mtu)
{
	spin_lock_bh(&dlcp_sk(sk)->lock);
	if (!dlcp_sk(sk)->dead)
		dlcp_out_pmtu(sk, daddr, mtu);
	spin_unlock_bh(&dlcp_sk(sk)->lock);
	sock_put(sk);
}

/*
 * Re-cut @m into segments of @seg_size bytes (smaller than before). A new
 * segment is acknowledged if every old one it overlaps was, never sent if
 * none of them was, else lost (resent). Importance maps the same way;
 * crit_len, already announced to the receiver, stays (a conservative
 * bound: the receiver then waits for every byte rather than complete
 * lossy early). Flight entries of @m are forgotten.
 */
int dlcp_out_resegment(struct sock *sk, struct dlcp_out_msg *m, u32 seg_size)
	__must_hold(&dlcp_sk(sk)->lock)
{
	u32 nsegs = DIV_ROUND_UP(m->len, seg_size), s, o;
	unsigned long *crit = NULL, *drop = NULL;
	u8 *seg;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	seg = kvcalloc(nsegs, sizeof(*seg), GFP_ATOMIC);
	if (m->crit)
		crit = bitmap_zalloc(nsegs, GFP_ATOMIC);
	if (m->droppable)
		drop = bitmap_zalloc(nsegs, GFP_ATOMIC);
	if (!seg || (m->crit && !crit) || (m->droppable && !drop)) {
		kvfree(seg);
		bitmap_free(crit);
		bitmap_free(drop);
		return -ENOMEM;
	}
	for (s = 0; s < nsegs; s++) {
		u32 first = s * seg_size / m->seg_size;
		u32 last = (min(m->len, (s + 1) * seg_size) - 1) / m->seg_size;
		bool acked = true, sent = true, dropall = true;

		for (o = first; o <= last; o++) {
			acked &= m->seg[o] == DLCP_SEG_ACKED;
			sent &= m->seg[o] != DLCP_SEG_NEW;
			if (crit && test_bit(o, m->crit))
				__set_bit(s, crit);
			dropall &= m->droppable && test_bit(o, m->droppable);
		}
		seg[s] = acked ? DLCP_SEG_ACKED : sent ? DLCP_SEG_LOST :
			 DLCP_SEG_NEW;
		if (drop && dropall)
			__set_bit(s, drop);
	}
	for (s = 0; m->inflight && s < dlcp_sk(sk)->flight_len; s++) {
		struct dlcp_flight *f = dlcp_flight_at(dlcp_sk(sk), s);

		if (f->msg == m)
			dlcp_flight_resolve(dlcp_sk(sk), f);
	}
	dlcp_flight_tidy(dlcp_sk(sk));
	kvfree(m->seg);
	bitmap_free(m->crit);
	bitmap_free(m->droppable);
	m->seg = seg;
	m->crit = crit;
	m->droppable = drop;
	m->seg_size = seg_size;
	m->nsegs = nsegs;
	m->nr_lost = 0;
	m->nr_acked = 0;
	m->lost_bytes = 0;
	m->nr_lost_crit = 0;
	m->next_new = nsegs;
	for (s = nsegs; s-- > 0;) {
		u8 state = seg[s];

		if (state == DLCP_SEG_NEW)
			m->next_new = s;
		seg[s] = DLCP_SEG_NEW;
		dlcp_seg_set(m, s, state);
	}
	m->acked_max = m->nr_acked;
	m->lost_hint = 0;
	m->crit_hint = 0;
	return 0;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_out_resegment);

/* The path MTU to @daddr dropped to @mtu: re-route, re-cut what is too big. */
void dlcp_out_pmtu(struct sock *sk, const struct in6_addr *daddr, u32 mtu)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_out_msg *m;

	lockdep_assert_held(&dsk->lock);
	list_for_each_entry(m, &dsk->out_msgs, node) {
		u32 max;

		if (!ipv6_addr_equal(&m->daddr, daddr))
			continue;
		dst_release(m->dst);	/* the next send picks the new MTU */
		m->dst = NULL;
		dlcp_path_forget_routes(m);
		max = rounddown(dlcp_xmit_payload(&m->daddr, m->udp, mtu),
				dlcp_wire_dtype_size(m->meta.dtype));
		if (max < m->seg_size && !dlcp_out_resegment(sk, m, max))
			DLCP_INC_STATS(sock_net(sk), DLCP_MIB_RESEGMENTED);
	}
	dlcp_out_push(sk);
}

/* Socket closing: abort unfinished messages, free everything. */
void dlcp_out_purge(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_out_msg *m, *tmp;

	lockdep_assert_held(&dsk->lock);
	list_for_each_entry_safe(m, tmp, &dsk->out_msgs, node) {
		dlcp_out_send_ctl(sk, m, DLCP_T_ABORT);
		dlcp_out_free_msg(sk, m);
	}
}
