// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP super-packets in native mode: a run of DATA packets of one message
 * that goes through IP, the qdiscs and the devices as one skb, as TCP's
 * GSO packets do, and is cut into packets only where it must be.
 *
 * The packets stay whole inside it. The first is the skb itself (its
 * header in the linear part, its payload as fragments of the message's
 * pages) and the others hang off its frag_list, each with its own DLCP
 * header and checksum, in the layout UDP's fraglist GRO builds
 * (SKB_GSO_FRAGLIST). IP puts one header in front of the whole:
 *
 * - A device that takes SKB_GSO_FRAGLIST (veth, loopback) passes it on
 *   whole, and the receiving DLCP cuts it (dlcp_offload_rcv()) and takes
 *   its packets one by one, with one REPORT for the run.
 * - Everywhere else (a NIC, tbf, an IPsec transform, a path MTU smaller
 *   than its packets) the kernel's GSO cuts it through
 *   dlcp_offload_segment(), registered for DLCP's protocol number with
 *   inet_add_offload() and inet6_add_offload(): each packet gets a copy of
 *   the IP header, which IP's GSO then completes (length, id, checksum).
 *
 * A module cannot add an SKB_GSO_* type of its own, and needs none: the
 * protocol number picks the callback, and SKB_GSO_FRAGLIST says how to cut.
 *
 * How many packets go in a super-packet, natively or as UDP GSO in UDP
 * mode (dlcp_out.c builds those), is decided here too: dlcp_offload_segs().
 */
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/protocol.h>
#include <net/sock.h>
#include "dlcp_impl.h"

/*
 * Packets in one super-packet at most: UDP's limit (UDP_MAX_SEGMENTS in
 * 6.1), which native super-packets keep too.
 */
#define DLCP_GSO_MAX_SEGS	64
/* Pacing lets a super-packet carry this much of the pacing rate */
#define DLCP_GSO_PACE_NS	(NSEC_PER_SEC / 1000)
/* Of the window, a super-packet waits for room for this many packets */
#define DLCP_GSO_DEFER_SEGS	16

/*
 * How many new segments of @m, from @seg on, go out now in one
 * super-packet over @dst (UDP GSO in UDP mode, dlcp_offload_xmit() in
 * native mode): as many as the window, the flight ring, the pacing (up to two
 * intervals ahead, as for single packets) and 64 KB allow, all of one
 * DSCP (droppable or not) and in UDP mode from one source port
 * (net.dlcp.udp_entropy). 1 with DLCP_PATHS (each packet picks its path),
 * with net.dlcp.udp_gso off in UDP mode, and in native mode with
 * net.dlcp.gso off or a device that may not segment (ethtool's gso off),
 * as TCP builds no GSO packets for one. 0: none now, wait for the window
 * to open further.
 */
u32 dlcp_offload_segs(struct sock *sk, const struct dlcp_out_msg *m,
		      const struct dst_entry *dst, u32 seg, u64 now, u64 interval)
{
	const struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	const struct dlcp_sock *dsk = dlcp_sk(sk);
	const struct dlcp_peer *p = m->peer;
	u32 k, n, i, bytes, room, want;
	u8 drop;

	if (m->paths)
		return 1;
	if (m->udp ? !READ_ONCE(dn->udp_gso) :
		     !READ_ONCE(dn->gso) || !(dst->dev->features & NETIF_F_GSO))
		return 1;
	bytes = min_t(u32, READ_ONCE(dst->dev->gso_max_size),
		      dlcp_gso_max_bytes(&m->daddr));
	k = min3(m->nsegs - seg, p->cwnd - p->inflight,
		 dsk->flight_cap - dsk->flight_live);
	k = min3(k, bytes / (DLCP_DATA_HDR_LEN + m->seg_size),
		 (u32)DLCP_GSO_MAX_SEGS);
	if (m->udp) {
		n = READ_ONCE(dn->udp_entropy);
		if (n)
			k = min(k, n - seg % n);
	} else {
		k = min_t(u32, k, READ_ONCE(dst->dev->gso_max_segs));
	}
	/*
	 * A super-packet may hold up to DLCP_GSO_PACE_NS of the pacing
	 * rate, as tcp_tso_autosize() sizes TCP's: the pacing clock then
	 * moves on by all of its packets (dlcp_out_push())
	 */
	room = dlcp_peer_pace_room(p, now, interval);
	if (room && interval)
		room = max_t(u64, room, div64_u64(DLCP_GSO_PACE_NS, interval));
	k = min(k, room);
	/*
	 * While enough is in flight for the REPORTs that open the window
	 * further, wait for room for a fuller super-packet rather than send
	 * a run of a few, as tcp_tso_should_defer() does: fewer and larger
	 * super-packets, and fewer REPORTs, which come one per super-packet
	 */
	want = min3(m->nsegs - seg, p->cwnd / 4, DLCP_GSO_DEFER_SEGS);
	if (k < want && p->inflight >= want &&
	    k == p->cwnd - p->inflight)
		return 0;
	drop = dlcp_out_seg_flags(m, seg, false) & DLCP_HF_DROPPABLE;
	for (i = 1; i < k; i++)
		if ((dlcp_out_seg_flags(m, seg + i, false) &
		     DLCP_HF_DROPPABLE) != drop)
			break;
	return i;
}

/*
 * Send new segments @seg .. @seg + @k - 1 of @m over @dst as one
 * super-packet, each checksummed by the device (dlcp_xmit_csum()). Fewer
 * go if memory runs short. Returns the number of segments sent or an
 * errno.
 */
int dlcp_offload_xmit(struct sock *sk, struct dlcp_out_msg *m,
		      struct dst_entry *dst, u32 seg, u32 k, u32 now_us)
{
	u8 flags = dlcp_out_seg_flags(m, seg, false);
	bool drop = flags & DLCP_HF_DROPPABLE;
	u8 tos = dlcp_pkt_tos(dlcp_pernet(sock_net(sk)), m->meta.prio, drop);
	struct sk_buff *skb, *p, **tail;
	/*
	 * The packets after the first use theirs only where the GSO layer
	 * cuts the super-packet, for a copy of the IP header in front of the
	 * device's (dlcp_offload_prepare() makes more if there is more to it)
	 */
	u32 i, headroom = dlcp_headroom(dst, &m->daddr, false);
	int err;

	skb = dlcp_out_seg_skb(sk, m, seg, flags, now_us, headroom);
	if (IS_ERR(skb))
		return PTR_ERR(skb);
	dlcp_xmit_csum(skb, &m->saddr, &m->daddr, tos);
	tail = &skb_shinfo(skb)->frag_list;
	for (i = 1; i < k; i++) {
		p = dlcp_out_seg_skb(sk, m, seg + i,
				     dlcp_out_seg_flags(m, seg + i, false),
				     now_us, headroom);
		if (IS_ERR(p))
			break;
		dlcp_xmit_csum(p, &m->saddr, &m->daddr, tos);
		*tail = p;
		tail = &p->next;
		skb->len += p->len;
		skb->data_len += p->len;
		skb->truesize += p->truesize;
	}
	if (i > 1) {
		skb_shinfo(skb)->gso_type = SKB_GSO_FRAGLIST;
		skb_shinfo(skb)->gso_size = DLCP_DATA_HDR_LEN + m->seg_size;
		skb_shinfo(skb)->gso_segs = i;
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_GSO_OUT);
	}
	err = dlcp_xmit_skb(sk, skb, dst, &m->saddr, &m->daddr, m->meta.prio,
			    drop, false, m->id, seg);
	return err ?: i;
}

/* @skb is a super-packet of dlcp_offload_xmit()'s making */
static bool dlcp_offload_ours(const struct sk_buff *skb)
{
	return skb_shinfo(skb)->gso_type == SKB_GSO_FRAGLIST &&
	       skb_has_frag_list(skb);
}

/*
 * Make each packet on the frag_list of @skb (skb->data at the DLCP
 * header) a packet of its own for skb_segment_list(): owned by this skb
 * alone (a clone of the super-packet shares them), with @room bytes of
 * headroom that may be written, and a copy of the IP header in front.
 */
static int dlcp_offload_prepare(struct sk_buff *skb, unsigned int room)
{
	unsigned int nhlen = skb_transport_header(skb) - skb_network_header(skb);
	struct sk_buff **pp = &skb_shinfo(skb)->frag_list, *p, *c;

	while ((p = *pp)) {
		if (skb_shared(p)) {
			c = skb_clone(p, GFP_ATOMIC);
			if (!c)
				return -ENOMEM;
			c->next = p->next;
			*pp = c;
			consume_skb(p);
			p = c;
		}
		if (skb_cow_head(p, room))
			return -ENOMEM;
		skb_reset_transport_header(p);
		skb_set_network_header(p, -(int)nhlen);
		memcpy(skb_network_header(p), skb_network_header(skb), nhlen);
		pp = &p->next;
	}
	return 0;
}

/*
 * The GSO callback of the DLCP protocol number, for IPv4 and IPv6: cut
 * the super-packet @skb (skb->data at the first DLCP header) into its
 * packets. The socket that sent it keeps being charged for every packet,
 * as tcp_gso_segment() does.
 */
static struct sk_buff *dlcp_offload_segment(struct sk_buff *skb,
					    netdev_features_t features)
{
	void (*destructor)(struct sk_buff *skb) = skb->destructor;
	unsigned int truesize = skb->truesize, sum = 0;
	struct sk_buff *segs, *p;
	struct sock *sk = skb->sk;
	int delta;

	if (!dlcp_offload_ours(skb))
		return ERR_PTR(-EINVAL);
	/* skb_segment_list() unhooks the frag_list of the skb's own data */
	if (skb_unclone(skb, GFP_ATOMIC) ||
	    dlcp_offload_prepare(skb, skb_transport_header(skb) -
				 skb_mac_header(skb)))
		return ERR_PTR(-ENOMEM);
	segs = skb_segment_list(skb, features, skb_mac_header_len(skb));
	if (IS_ERR(segs) || destructor != sock_wfree)
		return segs;
	for (p = segs; p; p = p->next) {
		if (p != segs) {
			p->sk = sk;
			p->destructor = sock_wfree;
		}
		sum += p->truesize;
	}
	delta = sum - truesize;
	if (delta > 0)
		refcount_add(delta, &sk->sk_wmem_alloc);
	else if (delta < 0)
		WARN_ON_ONCE(refcount_sub_and_test(-delta, &sk->sk_wmem_alloc));
	return segs;
}

/*
 * Receive a super-packet of @af, as dlcp_rcv_common() found it: cut it
 * (skb_segment_list() keeps the packets, copying only headers) and take
 * its packets one by one, telling each whether more follow. A GSO packet
 * of any other kind is not DLCP's making, and is dropped.
 */
int dlcp_offload_rcv(struct sk_buff *skb, const struct dlcp_af *af, bool udp)
{
	struct net *net = dev_net(skb->dev);
	struct sk_buff *segs, *next;
	u16 n = skb_shinfo(skb)->gso_segs;

	if (udp || !dlcp_offload_ours(skb))
		goto drop;
	/* from the DLCP header back to IP's: the GSO layer starts there */
	__skb_push(skb, -skb_network_offset(skb));
	segs = __skb_gso_segment(skb, NETIF_F_SG, false);
	if (IS_ERR_OR_NULL(segs))
		goto drop;
	consume_skb(skb);
	DLCP_INC_STATS(net, DLCP_MIB_GSO_IN);
	skb_list_walk_safe(segs, skb, next) {
		skb_mark_not_on_list(skb);
		__skb_pull(skb, skb_transport_offset(skb));
		dlcp_rcv_one(skb, af, udp, next);
	}
	return 0;
drop:
	DLCP_ADD_STATS(net, DLCP_MIB_DROP_GSO, max_t(u16, n, 1) - 1);
	return dlcp_drop(net, skb, DLCP_MIB_DROP_GSO);
}

static const struct net_offload dlcp_offload = {
	.callbacks = {
		.gso_segment	= dlcp_offload_segment,
	},
};

int dlcp_offload_init(void)
{
	int err;

	err = inet_add_offload(&dlcp_offload, dlcp_ipproto);
	if (err)
		return err;
#if IS_ENABLED(CONFIG_IPV6)
	err = inet6_add_offload(&dlcp_offload, dlcp_ipproto);
	if (err)
		inet_del_offload(&dlcp_offload, dlcp_ipproto);
#endif
	return err;
}

/* inet_del_offload() waits for the GSO callers still inside (RCU) */
void dlcp_offload_exit(void)
{
#if IS_ENABLED(CONFIG_IPV6)
	inet6_del_offload(&dlcp_offload, dlcp_ipproto);
#endif
	inet_del_offload(&dlcp_offload, dlcp_ipproto);
}
