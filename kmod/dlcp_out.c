// SPDX-License-Identifier: GPL-2.0
/*
 * The DLCP sender: segmentation, transmission, the window and pacing, and
 * the reaction to the receiver's REPORT and STOP packets.
 *
 * A message is cut into segments of seg_size payload bytes (whole elements,
 * fitting the route MTU); each segment is a self-describing DATA packet.
 * Every transmitted segment gets an entry in the socket's flight ring until
 * a REPORT resolves it: acknowledged (outside every gap of the report), or
 * lost (inside a gap, and sent more than the reordering window before the
 * packet whose arrival triggered the report: RACK's rule, RFC 8985, with
 * the echoed transmit time; the window adapts, dlcp_cc_reorder_us()). A
 * packet merely overtaken on another path is not resent at once, and a
 * retransmission is not presumed lost again by reports that left the
 * receiver before it could have arrived.
 * Lost segments are retransmitted before new ones, but only while the
 * bytes known lost exceed the message's loss budget; critical segments
 * always. A message with a budget sends a PROBE right after its last new
 * segment, so that the receiver learns at once that everything was sent
 * and can complete within budget without waiting for a timeout. The guard
 * timer (dlcp_timer.c) presumes entries older than the retransmission
 * timeout lost when their message's reports have stopped too (a segment
 * merely queued behind others is not), PROBEs a message whose reports
 * stopped coming, enforces deadlines, and gives up on a receiver that went
 * silent. The timeout doubles with every expiry until a new RTT sample.
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

/*
 * Route from @saddr (any: the socket's bound address, or what the route
 * picks) to @daddr over interface @oif (0: any). The source address used
 * goes to @src, the IPv6 route cookie (for dst_check()) to @cookie.
 */
struct dst_entry *dlcp_route(struct sock *sk, const struct in6_addr *saddr,
			     const struct in6_addr *daddr, __be16 sport,
			     __be16 dport, int oif, struct in6_addr *src,
			     u32 *cookie)
{
	__be32 from = saddr->s6_addr32[3];
	struct flowi4 fl4;
	struct rtable *rt;

	if (!dlcp_addr_is_v4(daddr))
		return dlcp6_route(sk, saddr, daddr, sport, dport, oif, src,
				   cookie);
	if (!from)
		from = inet_sk(sk)->inet_saddr;
	rt = ip_route_output_ports(sock_net(sk), &fl4, sk, daddr->s6_addr32[3],
				   from, dport, sport, dlcp_ipproto,
				   RT_CONN_FLAGS(sk), oif);
	if (IS_ERR(rt)) {
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_OUT_NO_ROUTE);
		return ERR_CAST(rt);
	}
	ipv6_addr_set_v4mapped(fl4.saddr, src);
	*cookie = 0;
	return &rt->dst;
}

/* Payload bytes of one DATA packet of @m over a path MTU of @mtu. */
u32 dlcp_mtu_seg_size(const struct dlcp_out_msg *m, u32 mtu)
{
	bool v4 = dlcp_addr_is_v4(&m->daddr);

	mtu = clamp_t(u32, mtu, v4 ? 576 : IPV6_MIN_MTU,
		      v4 ? IP_MAX_MTU : IP6_MAX_MTU);
	return mtu - dlcp_ip_hdr_len(&m->daddr) - DLCP_DATA_HDR_LEN -
	       (m->udp ? sizeof(struct udphdr) : 0);
}

/* Route @m to its destination: sets saddr, dst and seg_size. */
int dlcp_out_route(struct sock *sk, struct dlcp_out_msg *m)
{
	struct dst_entry *dst;

	if (ipv6_addr_is_multicast(&m->daddr))
		return -EACCES;
	dst = dlcp_route(sk, &in6addr_any, &m->daddr, inet_sk(sk)->inet_sport,
			 m->dport, sk->sk_bound_dev_if, &m->saddr,
			 &m->dst_cookie);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	if (dlcp_addr_is_v4(&m->daddr) &&
	    (((struct rtable *)dst)->rt_flags & (RTCF_BROADCAST |
						 RTCF_MULTICAST))) {
		dst_release(dst);
		return -EACCES;
	}
	m->dst = dst;
	m->seg_size = dlcp_mtu_seg_size(m, dst_mtu(dst));
	return 0;
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

void dlcp_fill_hdr(struct dlcp_hdr *h, unsigned int type, __be16 sport,
		   __be16 dport, u32 msg_id, u32 msg_len, u32 len, u8 flags,
		   u8 prio)
{
	h->source = sport;
	h->dest = dport;
	h->ver_type = (DLCP_VERSION << 4) | type;
	h->flags = flags;
	h->doff = dlcp_wire_min_hdr(type) / 4;
	h->prio = prio;
	h->len = htons(len);
	h->check = 0;
	h->msg_id = htonl(msg_id);
	h->msg_len = htonl(msg_len);
}

struct sk_buff *dlcp_alloc_ctl(u32 hlen, gfp_t gfp)
{
	struct sk_buff *skb;

	skb = alloc_skb(MAX_HEADER + sizeof(struct ipv6hdr) + hlen, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, MAX_HEADER + sizeof(struct ipv6hdr));
	skb_reset_transport_header(skb);
	memset(skb_put(skb, hlen), 0, hlen);
	return skb;
}

/*
 * Checksum the DLCP packet in @skb (linear, transport header at data),
 * add the IP header and send it over @dst (a reference is taken).
 */
static int dlcp_xmit_skb(struct sock *sk, struct sk_buff *skb,
			 struct dst_entry *dst, const struct in6_addr *saddr,
			 const struct in6_addr *daddr, u8 cls, bool droppable,
			 bool udp, u32 seg)
{
	const struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	u8 tos = dlcp_pkt_tos(dn, cls, droppable);
	struct net *net = sock_net(sk);
	struct dlcp_hdr *h = (struct dlcp_hdr *)skb->data;
	u32 msg_id = ntohl(h->msg_id);
	struct inet_sock *inet = inet_sk(sk);
	struct iphdr *iph;
	int ttl, err;

	h->check = dlcp_csum_magic(saddr, daddr, skb->len,
				   csum_partial(skb->data, skb->len, 0));
	trace_dlcp_pkt_send(h, saddr, daddr, tos);
	if (udp) {
		dlcp_udp_push(skb, dn, msg_id, seg);
		DLCP_INC_STATS(net, DLCP_MIB_UDP_OUT_PKTS);
	}
	skb->priority = DLCP_MAX_CLASSES - 1 - cls;
	skb->mark = READ_ONCE(sk->sk_mark);
	skb_set_owner_w(skb, sk);

	if (!dlcp_addr_is_v4(daddr)) {
		if (udp)
			dlcp_udp6_csum(skb, saddr, daddr);
		err = dlcp6_xmit(sk, skb, dst, saddr, daddr, tos,
				 udp ? IPPROTO_UDP : dlcp_ipproto,
				 dlcp_entropy(dn, msg_id, seg));
		goto sent;
	}
	skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = tos;
	iph->frag_off = htons(IP_DF);
	ttl = inet->uc_ttl;
	iph->ttl = ttl < 0 ? ip4_dst_hoplimit(dst) : ttl;
	iph->protocol = udp ? IPPROTO_UDP : dlcp_ipproto;
	iph->saddr = saddr->s6_addr32[3];
	iph->daddr = daddr->s6_addr32[3];
	iph->tot_len = htons(skb->len);
	skb->protocol = htons(ETH_P_IP);
	skb_dst_set(skb, dst_clone(dst));
	ip_select_ident(net, skb, NULL);
	err = ip_local_out(net, sk, skb);
sent:
	if (unlikely(net_xmit_eval(err))) {
		DLCP_INC_STATS(net, DLCP_MIB_OUT_ERRORS);
		return net_xmit_errno(err);
	}
	DLCP_INC_STATS(net, DLCP_MIB_OUT_PKTS);
	DLCP_INC_STATS(net, DLCP_MIB_OUT_CLASS0 + cls);
	return 0;
}

/*
 * Send a control packet from @saddr in class @cls: REPORT and STOP go in
 * class 0; PROBE and ABORT in their message's class, behind its data, so
 * that a PROBE saying "all was sent" does not overtake the data it speaks
 * of in a strict-priority queue.
 */
int dlcp_xmit_ctl(struct sock *sk, struct sk_buff *skb,
		  const struct in6_addr *saddr, const struct in6_addr *daddr,
		  bool udp, u8 cls)
{
	const struct dlcp_hdr *h = (const struct dlcp_hdr *)skb->data;
	struct dst_entry *dst;
	struct in6_addr src;
	u32 cookie;
	int err;

	dst = dlcp_route(sk, saddr, daddr, h->source, h->dest,
			 sk->sk_bound_dev_if, &src, &cookie);
	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	err = dlcp_xmit_skb(sk, skb, dst, &src, daddr, cls, false, udp, 0);
	dst_release(dst);
	return err;
}

/* Send PROBE or ABORT for @m. */
static void dlcp_out_send_probe(struct sock *sk, struct dlcp_out_msg *m,
				unsigned int type)
{
	struct dlcp_probe_hdr *p;
	struct sk_buff *skb;

	skb = dlcp_alloc_ctl(DLCP_PROBE_HDR_LEN, GFP_ATOMIC);
	if (!skb)
		return;
	p = (struct dlcp_probe_hdr *)skb->data;
	dlcp_fill_hdr(&p->common, type, inet_sk(sk)->inet_sport, m->dport,
		      m->id, m->len, DLCP_PROBE_HDR_LEN,
		      type == DLCP_T_PROBE && m->final ? DLCP_HF_FINAL : 0, 0);
	p->sent = htonl(min_t(u64, (u64)m->next_new * m->seg_size, m->len));
	p->tsval = htonl(dlcp_now_us());
	dlcp_xmit_ctl(sk, skb, &m->saddr, &m->daddr, m->udp, m->meta.prio);
	DLCP_INC_STATS(sock_net(sk), type == DLCP_T_PROBE ?
		       DLCP_MIB_PROBES_SENT : DLCP_MIB_ABORTS_SENT);
}

static u32 dlcp_seg_len(const struct dlcp_out_msg *m, u32 seg)
{
	u32 off = seg * m->seg_size;

	return min(m->seg_size, m->len - off);
}

/* Build and send segment @seg of @m. */
static int dlcp_out_send_seg(struct sock *sk, struct dlcp_out_msg *m, u32 seg,
			     u8 flags)
{
	u32 off = seg * m->seg_size, plen = dlcp_seg_len(m, seg);
	u32 len = DLCP_DATA_HDR_LEN + plen;
	bool crit = flags & DLCP_HF_CRITICAL;
	bool droppable = flags & DLCP_HF_DROPPABLE;
	struct dst_entry *dst;
	struct dlcp_data_hdr *d;
	struct sk_buff *skb;
	u8 cls;

	if (m->paths)
		dst = dlcp_path_next(sk, m);
	else
		dst = dlcp_out_dst_ok(sk, m) ? m->dst : NULL;
	if (!dst)
		return -EHOSTUNREACH;
	skb = alloc_skb(MAX_HEADER + sizeof(struct ipv6hdr) + len, GFP_ATOMIC);
	if (!skb)
		return -ENOBUFS;
	skb_reserve(skb, MAX_HEADER + sizeof(struct ipv6hdr));
	skb_reset_transport_header(skb);
	d = skb_put(skb, len);
	dlcp_fill_hdr(&d->common, DLCP_T_DATA, inet_sk(sk)->inet_sport,
		      m->dport, m->id, m->len, len, flags, m->meta.prio);
	d->offset = htonl(off);
	d->tensor_id = htonl(m->meta.tensor_id);
	d->iteration = htonl(m->meta.iteration);
	d->budget_ppm = htonl(m->meta.budget_ppm);
	d->layer = htons(m->meta.layer);
	d->dtype = m->meta.dtype;
	d->reserved = 0;
	d->msg_flags = htons(m->meta.flags);
	d->reserved2 = 0;
	d->tsval = htonl(dlcp_now_us());
	d->crit_len = htonl(m->crit_len);
	dlcp_buf_to_skb(&m->buf, off, plen, d + 1);
	/* retransmissions of critical data go in the highest class */
	cls = crit && (flags & DLCP_HF_RETRANS) ? 0 : m->meta.prio;
	return dlcp_xmit_skb(sk, skb, dst, &m->saddr, &m->daddr, cls,
			     droppable, m->udp, seg);
}

static struct dlcp_flight *dlcp_flight_at(struct dlcp_sock *dsk, u32 i)
{
	return &dsk->flight[(dsk->flight_head + i) % dsk->flight_cap];
}

/* Drop resolved entries from the head; compact the ring when it is full. */
static void dlcp_flight_tidy(struct dlcp_sock *dsk)
{
	u32 i, n = 0;

	while (dsk->flight_len && !dlcp_flight_at(dsk, 0)->msg) {
		dsk->flight_head = (dsk->flight_head + 1) % dsk->flight_cap;
		dsk->flight_len--;
	}
	if (dsk->flight_len < dsk->flight_cap)
		return;
	for (i = 0; i < dsk->flight_len; i++) {
		struct dlcp_flight *f = dlcp_flight_at(dsk, i);

		if (f->msg)
			*dlcp_flight_at(dsk, n++) = *f;
	}
	dsk->flight_len = n;
}

static void dlcp_flight_resolve(struct dlcp_sock *dsk, struct dlcp_flight *f)
{
	f->msg->inflight--;
	f->msg->peer->inflight--;
	f->msg = NULL;
	dsk->flight_live--;
}

static void dlcp_seg_set(struct dlcp_out_msg *m, u32 seg, u8 state)
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

/*
 * Is there a lost segment of @m worth resending? Any, while the bytes
 * known lost exceed the budget; else only critical ones; none after the
 * deadline.
 */
static bool dlcp_out_want_rtx(const struct dlcp_out_msg *m, bool *any)
{
	*any = m->lost_bytes > m->budget_bytes;
	return !m->final && (*any ? m->nr_lost : m->nr_lost_crit);
}

/* Next segment of @m to send: a lost one worth resending, then a new one. */
static bool dlcp_out_next_seg(struct dlcp_out_msg *m, u32 *seg, bool *rtx)
{
	bool any;

	if (dlcp_out_want_rtx(m, &any)) {
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

static u64 dlcp_pace_interval_ns(const struct dlcp_peer *p)
{
	if (!p->srtt_us)
		return 0;
	return div_u64((u64)p->srtt_us * NSEC_PER_USEC, 2 * p->cwnd);
}

/*
 * Transmit what the window and the pacing allow. Called with dsk->lock
 * held, from sendmsg, the receive path and the timers.
 */
void dlcp_out_push(struct sock *sk)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct net *net = sock_net(sk);
	u64 pace_at = U64_MAX;
	struct dlcp_out_msg *m;

	if (dsk->dead || list_empty(&dsk->out_msgs))
		return;
	if (!dsk->flight) {
		u32 cap = READ_ONCE(dlcp_pernet(net)->max_cwnd);

		dsk->flight = kvcalloc(cap, sizeof(*dsk->flight), GFP_ATOMIC);
		if (!dsk->flight)
			return;		/* the guard timer retries */
		dsk->flight_cap = cap;
	}

	list_for_each_entry(m, &dsk->out_msgs, node) {
		struct dlcp_peer *p = m->peer;
		u64 interval = dlcp_pace_interval_ns(p);
		u32 seg;
		bool rtx;

		while (dsk->flight_live < dsk->flight_cap &&
		       p->inflight < p->cwnd &&
		       dlcp_out_next_seg(m, &seg, &rtx)) {
			u64 now = ktime_get_ns();
			struct dlcp_flight *f;
			u8 flags = 0;

			if (interval && p->next_xmit_ns > now + 2 * interval) {
				pace_at = min(pace_at, p->next_xmit_ns);
				break;
			}
			dlcp_flight_tidy(dsk);
			if (rtx)
				flags |= DLCP_HF_RETRANS;
			if (dlcp_seg_crit(m, seg))
				flags |= DLCP_HF_CRITICAL;
			else if (m->droppable && test_bit(seg, m->droppable))
				flags |= DLCP_HF_DROPPABLE;
			if (seg == m->nsegs - 1)
				flags |= DLCP_HF_ACKREQ | (rtx ? 0 : DLCP_HF_LAST);
			if (dlcp_out_send_seg(sk, m, seg, flags))
				break;	/* no route or memory: the guard retries */
			DLCP_INC_STATS(net, DLCP_MIB_OUT_DATA_PKTS);
			if (rtx) {
				DLCP_INC_STATS(net, DLCP_MIB_RETRANS_PKTS);
				trace_dlcp_retransmit(inet_sk(sk)->inet_num,
						      m->id, seg,
						      seg * m->seg_size);
			} else if (!m->next_new++) {
				m->last_heard = jiffies;
			}
			/* tell the receiver at once that all was sent */
			if (!rtx && m->next_new == m->nsegs && m->budget_bytes)
				dlcp_out_send_probe(sk, m, DLCP_T_PROBE);
			dlcp_seg_set(m, seg, DLCP_SEG_INFLIGHT);
			f = dlcp_flight_at(dsk, dsk->flight_len++);
			f->msg = m;
			f->seg = seg;
			f->sent_us = dlcp_now_us();
			m->inflight++;
			p->inflight++;
			dsk->flight_live++;
			p->next_xmit_ns = max(p->next_xmit_ns, now) + interval;
		}
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
{
	struct dlcp_out_msg *pos;

	list_for_each_entry(pos, &dsk->out_msgs, node)
		if (pos->meta.prio > m->meta.prio)
			break;
	list_add_tail(&m->node, &pos->node);
	dsk->nr_out_msgs++;
}

/* Free @m, which must be off every list but dsk->out_msgs. */
void dlcp_out_free_msg(struct sock *sk, struct dlcp_out_msg *m)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	u32 i;

	for (i = 0; m->inflight && i < dsk->flight_len; i++) {
		struct dlcp_flight *f = dlcp_flight_at(dsk, i);

		if (f->msg == m)
			dlcp_flight_resolve(dsk, f);
	}
	dlcp_flight_tidy(dsk);
	list_del(&m->node);
	dsk->nr_out_msgs--;
	dsk->snd_mem -= m->len;
	dlcp_peer_put(m->peer);
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
static void dlcp_out_complete(struct sock *sk, struct dlcp_out_msg *m,
			      u32 status, u32 lost, int err)
{
	struct sock_exterr_skb *serr;
	struct dlcp_completion *c;
	struct sk_buff *skb;

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
	skb_set_owner_r(skb, sk);
	skb_queue_tail(&sk->sk_error_queue, skb);
	sk_error_report(sk);
}

static struct dlcp_out_msg *dlcp_out_find(struct dlcp_sock *dsk,
					  const struct dlcp_hdr *h,
					  const struct in6_addr *saddr)
{
	u32 id = ntohl(h->msg_id);
	struct dlcp_out_msg *m;

	list_for_each_entry(m, &dsk->out_msgs, node)
		if (m->id == id && m->dport == h->source &&
		    ipv6_addr_equal(&m->daddr, saddr) &&
		    m->len == ntohl(h->msg_len))
			return m;
	return NULL;
}

/*
 * RFC 6298's timeout for @p (NULL: a peer with no RTT sample yet), doubled
 * per timeout since the last RTT sample.
 */
u32 dlcp_out_rto_us(const struct sock *sk, const struct dlcp_peer *p)
{
	u32 rto_min = READ_ONCE(dlcp_pernet(sock_net(sk))->rto_min_ms) *
		      USEC_PER_MSEC;
	u32 rto;

	if (!p || !p->srtt_us)
		rto = max_t(u32, rto_min, 200 * USEC_PER_MSEC);
	else
		rto = max(rto_min, p->srtt_us + 4 * p->rttvar_us);
	return min_t(u32, rto << (p ? p->rto_shift : 0), DLCP_RTO_MAX_US);
}

static void dlcp_rtt_sample(struct dlcp_peer *p, u32 tsecr)
{
	s32 rtt = (s32)(dlcp_now_us() - tsecr);

	if (!tsecr || rtt <= 0 || rtt > 60 * USEC_PER_SEC)
		return;
	p->rto_shift = 0;
	dlcp_cc_on_rtt(p, rtt);
	if (!p->srtt_us) {
		p->srtt_us = rtt;
		p->rttvar_us = rtt / 2;
	} else {
		s32 err = rtt - (s32)p->srtt_us;

		p->srtt_us += err / 8;
		p->rttvar_us += (abs(err) - (s32)p->rttvar_us) / 4;
	}
	p->srtt_us = max_t(u32, p->srtt_us, 1);
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
static void dlcp_out_resync(struct dlcp_out_msg *m,
			    const struct dlcp_wire_range *g, u32 n,
			    u32 scan_end)
{
	u32 seg;

	for (seg = 0; seg < m->nsegs; seg++) {
		u32 s = seg * m->seg_size, e = s + dlcp_seg_len(m, seg);

		if (e > scan_end)
			break;
		if (m->seg[seg] == DLCP_SEG_INFLIGHT)
			continue;
		if (m->seg[seg] == DLCP_SEG_NEW)
			continue;
		dlcp_seg_set(m, seg, dlcp_gaps_miss(g, n, s, e) ?
			     DLCP_SEG_ACKED : DLCP_SEG_LOST);
	}
}

/* A REPORT arrived for one of our messages (skb is linear, validated). */
void dlcp_out_report(struct sock *sk, struct sk_buff *skb)
{
	const struct dlcp_report_hdr *r = (const void *)skb->data;
	const struct dlcp_wire_range *g = (const void *)(skb->data +
							 r->common.doff * 4);
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct net *net = sock_net(sk);
	u32 n = ntohs(r->ngaps), scan_end = ntohl(r->scan_end);
	u32 i, acked = 0, acked_bytes = 0, lost = 0, ce;
	u32 tsecr = ntohl(r->tsecr), reorder;
	struct dlcp_out_msg *m;

	m = dlcp_out_find(dsk, &r->common, &dlcp_cb(skb)->saddr);
	if (!m) {
		dlcp_count_drop(net, DLCP_MIB_DROP_UNKNOWN_MSG, skb->len);
		return;
	}
	dlcp_rtt_sample(m->peer, tsecr);
	m->last_heard = jiffies;
	m->probes = 0;
	if (r->rflags & DLCP_RF_DUP) {
		DLCP_INC_STATS(net, DLCP_MIB_DUP_REPORTS);
		dlcp_cc_on_dup(m->peer);
	}
	reorder = dlcp_cc_reorder_us(sk, m->peer);

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
		} else if ((s32)(tsecr - f->sent_us) > (s32)reorder) {
			dlcp_seg_set(m, f->seg, DLCP_SEG_LOST);
			DLCP_INC_STATS(net, DLCP_MIB_RETRANS_REPORTED);
			lost++;
		} else {
			continue;
		}
		dlcp_flight_resolve(dsk, f);
	}
	dlcp_flight_tidy(dsk);
	if (r->rflags & DLCP_RF_PROBED)
		dlcp_out_resync(m, g, n, scan_end);
	ce = ntohl(r->ce_bytes);
	ce = ce > m->ce_seen ? ce - m->ce_seen : 0;
	m->ce_seen += ce;
	dlcp_cc_on_report(sk, m->peer, acked, acked_bytes, lost, ce);
	dlcp_out_push(sk);
}

/* A STOP arrived: the receiver delivered the message. */
void dlcp_out_stop(struct sock *sk, struct sk_buff *skb)
{
	const struct dlcp_stop_hdr *st = (const void *)skb->data;
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct net *net = sock_net(sk);
	struct dlcp_out_msg *m;
	u32 lost;

	m = dlcp_out_find(dsk, &st->common, &dlcp_cb(skb)->saddr);
	if (!m) {
		dlcp_count_drop(net, DLCP_MIB_DROP_UNKNOWN_MSG, skb->len);
		return;
	}
	trace_dlcp_stop(1, m->id, ntohl(st->lost),
			st->common.flags & DLCP_HF_FAILED);
	dlcp_rtt_sample(m->peer, ntohl(st->tsecr));
	lost = ntohl(st->lost);
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
	dlcp_out_free_msg(sk, m);
	sk->sk_write_space(sk);
	dlcp_out_push(sk);
}

/*
 * Guard timer work for the sender: presume entries older than the RTO
 * lost, probe messages that went quiet, give up on silent ones. Returns
 * true while outgoing messages remain.
 */
bool dlcp_out_timeout(struct sock *sk, unsigned long now)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct net *net = sock_net(sk);
	u32 now_us = dlcp_now_us(), i;
	struct dlcp_net *dn = dlcp_pernet(net);
	unsigned long give_up = msecs_to_jiffies(READ_ONCE(dn->msg_timeout_ms));
	u64 probe_max = jiffies_to_usecs(give_up) / 5;
	struct dlcp_out_msg *m, *tmp;

	for (i = 0; i < dsk->flight_len; i++) {
		struct dlcp_flight *f = dlcp_flight_at(dsk, i);
		struct dlcp_peer *p;
		u32 rto;

		if (!f->msg)
			continue;
		p = f->msg->peer;
		rto = dlcp_out_rto_us(sk, p);
		if ((s32)(now_us - f->sent_us) < (s32)rto)
			continue;
		/*
		 * Reports for its message still come: the segment is queued
		 * on the path, not lost; a later report will tell.
		 */
		if (jiffies_to_usecs(now - f->msg->last_heard) < rto)
			continue;
		dlcp_seg_set(f->msg, f->seg, DLCP_SEG_LOST);
		DLCP_INC_STATS(net, DLCP_MIB_RETRANS_TIMEOUT);
		dlcp_flight_resolve(dsk, f);
		/* back off once a timer run, not once a segment */
		if (p->rto_run != now) {
			p->rto_run = now;
			p->rto_shift = min_t(u8, p->rto_shift + 1, 6);
			dlcp_cc_on_timeout(sk, p);
		}
	}
	dlcp_flight_tidy(dsk);

	list_for_each_entry_safe(m, tmp, &dsk->out_msgs, node) {
		unsigned long quiet = now - m->last_heard;
		u32 rto = dlcp_out_rto_us(sk, m->peer);
		bool any;
		u64 wait;

		if (m->next_new && time_after_eq(now, m->last_heard + give_up)) {
			DLCP_INC_STATS(net, DLCP_MIB_OUT_MSGS_FAILED);
			dlcp_out_complete(sk, m, DLCP_DONE_TIMEOUT, 0, ETIMEDOUT);
			dlcp_out_send_probe(sk, m, DLCP_T_ABORT);
			dlcp_out_free_msg(sk, m);
			sk->sk_write_space(sk);
			continue;
		}
		if ((m->meta.flags & DLCP_MSG_HAS_DEADLINE) && !m->final &&
		    time_after_eq(now, m->deadline)) {
			/* stop resending; the receiver finishes or drops it */
			m->final = true;
			m->probes = 0;
			dlcp_out_send_probe(sk, m, DLCP_T_PROBE);
			continue;
		}
		/*
		 * Tail loss probe (RFC 8985, section 7): reports stopped for
		 * two round trips while segments are in flight: the last of
		 * them, or the reports, were lost. The answer echoes the
		 * PROBE's timestamp, so every segment sent a reordering
		 * window before it and still missing is found lost (RACK)
		 * without waiting out the RTO and its back-off. One per
		 * quiet period: a REPORT resets @probes.
		 */
		if (m->inflight && !m->probes && m->peer->srtt_us &&
		    jiffies_to_usecs(quiet) >= 2 * m->peer->srtt_us &&
		    jiffies_to_usecs(quiet) < rto) {
			dlcp_out_send_probe(sk, m, DLCP_T_PROBE);
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
			dlcp_out_send_probe(sk, m, DLCP_T_PROBE);
			m->probes++;
			m->last_probe = now;
		}
	}
	dlcp_out_push(sk);
	return !list_empty(&dsk->out_msgs);
}

/*
 * Re-cut @m into segments of @seg_size bytes (smaller than before). A new
 * segment is acknowledged if every old one it overlaps was, never sent if
 * none of them was, else lost (resent). Importance maps the same way;
 * crit_len, already announced to the receiver, stays (a conservative
 * bound: the receiver then waits for every byte rather than complete
 * lossy early). Flight entries of @m are forgotten.
 */
static int dlcp_out_resegment(struct sock *sk, struct dlcp_out_msg *m,
			      u32 seg_size)
{
	u32 nsegs = DIV_ROUND_UP(m->len, seg_size), s, o;
	unsigned long *crit = NULL, *drop = NULL;
	u8 *seg;

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
	m->lost_hint = 0;
	m->crit_hint = 0;
	return 0;
}

/* The path MTU to @daddr dropped to @mtu: re-route, re-cut what is too big. */
void dlcp_out_pmtu(struct sock *sk, const struct in6_addr *daddr, u32 mtu)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_out_msg *m;

	list_for_each_entry(m, &dsk->out_msgs, node) {
		u32 max;

		if (!ipv6_addr_equal(&m->daddr, daddr))
			continue;
		dst_release(m->dst);	/* the next send picks the new MTU */
		m->dst = NULL;
		dlcp_path_forget_routes(m);
		max = rounddown(dlcp_mtu_seg_size(m, mtu),
				dlcp_wire_dtype_size(m->meta.dtype));
		if (max < m->seg_size && !dlcp_out_resegment(sk, m, max))
			DLCP_INC_STATS(sock_net(sk), DLCP_MIB_RESEGMENTED);
	}
	dlcp_out_push(sk);
}

/* Socket closing: abort unfinished messages, free everything. */
void dlcp_out_purge(struct sock *sk)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_out_msg *m, *tmp;

	list_for_each_entry_safe(m, tmp, &dsk->out_msgs, node) {
		dlcp_out_send_probe(sk, m, DLCP_T_ABORT);
		dlcp_out_free_msg(sk, m);
	}
}
