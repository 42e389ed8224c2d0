// SPDX-License-Identifier: GPL-2.0
/*
 * The DLCP transmit layer: every packet the module sends leaves here.
 *
 * Above it, the sender (dlcp_out.c, dlcp_recovery.c) and the receiver
 * (dlcp_in.c) build DATA and control packets from their own state; this
 * layer routes them, fills the common header, checksums them, adds the
 * UDP header in UDP mode (dlcp_udp.c) and hands them to the family's ops
 * (struct dlcp_af: dlcp_ipv4.c, dlcp_ipv6.c), which add the IP header and
 * send. Each packet carries its class's DSCP, skb->priority and an ECN
 * codepoint by its importance (dlcp_prio.c).
 */
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/ipv6.h>
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
	struct dst_entry *dst;

	dst = dlcp_af_of(daddr)->route(sock_net(sk), sk, saddr, daddr, sport,
				       dport, oif, src, cookie);
	if (IS_ERR(dst))
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_OUT_NO_ROUTE);
	return dst;
}

/*
 * Payload bytes of one DATA packet to @daddr over a path MTU of @mtu, in
 * UDP mode if @udp.
 */
u32 dlcp_xmit_payload(const struct in6_addr *daddr, bool udp, u32 mtu)
{
	const struct dlcp_af *af = dlcp_af_of(daddr);

	mtu = clamp_t(u32, mtu, af->min_mtu, af->max_mtu);
	return mtu - af->net_header_len - DLCP_DATA_HDR_LEN -
	       (udp ? sizeof(struct udphdr) : 0);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_xmit_payload);

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
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_fill_hdr);

struct sk_buff *dlcp_alloc_ctl(u32 hlen, gfp_t gfp)
{
	struct sk_buff *skb;

	skb = alloc_skb(DLCP_MAX_HEADROOM + hlen, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, DLCP_MAX_HEADROOM);
	skb_reset_transport_header(skb);
	memset(skb_put(skb, hlen), 0, hlen);
	return skb;
}

/*
 * Checksum the DLCP packet at skb->data, @len bytes long, sent with IP tos
 * @tos: the device does it (CHECKSUM_PARTIAL, as UDP's: the pseudo-header
 * sum goes in the field, the device or skb_checksum_help() on the way sums
 * the rest), and a veth or loopback leaves it to no one: the receiving
 * side trusts a CHECKSUM_PARTIAL packet. Inside UDP too: the UDP checksum
 * is then derived from it without reading the payload (dlcp_udp_push()).
 * A native super-packet is summed packet by packet where it is cut
 * (dlcp_offload_segment()); @len is then the length of each.
 */
void dlcp_xmit_csum(struct sk_buff *skb, const struct in6_addr *saddr,
		    const struct in6_addr *daddr, u32 len, u8 tos)
{
	struct dlcp_hdr *h = (struct dlcp_hdr *)skb->data;

	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_headroom(skb);
	skb->csum_offset = offsetof(struct dlcp_hdr, check);
	h->check = ~dlcp_csum_magic(saddr, daddr, len, 0);
	trace_dlcp_pkt_send(h, saddr, daddr, tos);
}

/*
 * Send the DLCP packet in @skb (header at data, the payload in the linear
 * part or in page fragments) of message @msg_id, its packet @seg, over
 * @dst (a reference is taken): checksum it, add the UDP header in UDP
 * mode and the IP header. A super-packet (UDP GSO: dlcp_out_send_gso();
 * native: dlcp_offload_xmit()) holds @seg and the packets after it, and is
 * checksummed already.
 * Returns 0, -ENOBUFS if a queue on the way dropped it, or the IP layer's
 * error (-EPERM: netfilter or a cgroup program refused it).
 */
int dlcp_xmit_skb(struct sock *sk, struct sk_buff *skb, struct dst_entry *dst,
		  const struct in6_addr *saddr, const struct in6_addr *daddr,
		  u8 cls, bool droppable, bool udp, u32 msg_id, u32 seg)
{
	const struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	const struct dlcp_af *af = dlcp_af_of(daddr);
	u8 tos = dlcp_pkt_tos(dn, cls, droppable);
	u32 entropy = dlcp_entropy(dn, msg_id, seg);
	u32 nsegs = dlcp_skb_pkts(skb);
	struct net *net = sock_net(sk);
	int err;

	if (!skb_is_gso(skb))
		dlcp_xmit_csum(skb, saddr, daddr, skb->len, tos);
	if (udp) {
		dlcp_udp_push(skb, dn, saddr, daddr, entropy);
		if (skb_is_gso(skb))
			DLCP_INC_STATS(net, DLCP_MIB_UDP_GSO_OUT);
		DLCP_ADD_STATS(net, DLCP_MIB_UDP_OUT_PKTS, nsegs);
	}
	skb->priority = DLCP_MAX_CLASSES - 1 - cls;
	skb->mark = READ_ONCE(sk->sk_mark);
	skb_set_owner_w(skb, sk);

	/* per packet: a direct call where retpolines make indirect ones dear */
	err = INDIRECT_CALL_2(af->xmit, dlcp4_xmit, dlcp6_xmit, sk, skb, dst,
			      saddr, daddr, tos,
			      udp ? IPPROTO_UDP : dlcp_ipproto,
			      entropy, nsegs);
	err = net_xmit_eval(err);
	if (unlikely(err)) {
		DLCP_ADD_STATS(net, DLCP_MIB_OUT_ERRORS, nsegs);
		/* a qdisc's drop is ENOBUFS; an error (EPERM) stays itself */
		return err > 0 ? net_xmit_errno(err) : err;
	}
	DLCP_ADD_STATS(net, DLCP_MIB_OUT_PKTS, nsegs);
	DLCP_ADD_STATS(net, DLCP_MIB_OUT_CLASS0 + cls, nsegs);
	return 0;
}

/*
 * Let go of the route kept for control packets: the socket is closing,
 * or it is about to be replaced.
 */
void dlcp_xmit_ctl_forget(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_ctl_route *rt = &dlcp_sk(sk)->ctl_rt;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	dst_release(rt->dst);
	rt->dst = NULL;
}

/*
 * The route of a control packet from @saddr port @sport to @daddr port
 * @dport, not referenced: valid while the socket's lock is held. The last
 * one is kept, since a receiver answers the messages of one sender with a
 * REPORT and a STOP each, and a lookup per control packet cost as much as
 * building it. The key is all the lookup reads of the packet and of the
 * socket, and the route is checked (dst_check()) before every use, so a
 * routing change is seen at once. A closing socket keeps none.
 */
static struct dst_entry *dlcp_ctl_route(struct sock *sk,
					const struct in6_addr *saddr,
					const struct in6_addr *daddr,
					__be16 sport, __be16 dport,
					struct in6_addr *src)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_ctl_route *rt = &dlcp_sk(sk)->ctl_rt;
	int oif = READ_ONCE(sk->sk_bound_dev_if);
	u32 mark = READ_ONCE(sk->sk_mark);
	u8 tos = dlcp_rt_conn_tos(sk);
	struct dst_entry *dst;
	u32 cookie;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	if (rt->dst && rt->sport == sport && rt->dport == dport &&
	    rt->oif == oif && rt->mark == mark && rt->tos == tos &&
	    ipv6_addr_equal(&rt->daddr, daddr) &&
	    ipv6_addr_equal(&rt->saddr, saddr) &&
	    dlcp_dst_valid(rt->dst, rt->cookie)) {
		*src = rt->src;
		return rt->dst;
	}
	dst = dlcp_route(sk, saddr, daddr, sport, dport, oif, src, &cookie);
	if (IS_ERR(dst))
		return dst;
	dlcp_xmit_ctl_forget(sk);
	if (dlcp_sk(sk)->dead) {
		/* closing: keep none after destroy, the caller drops it */
		return dst;
	}
	*rt = (struct dlcp_ctl_route) {
		.dst = dst, .cookie = cookie, .saddr = *saddr,
		.daddr = *daddr, .src = *src, .sport = sport, .dport = dport,
		.oif = oif, .mark = mark, .tos = tos,
	};
	return dst;
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
	__must_hold(&dlcp_sk(sk)->lock)
{
	const struct dlcp_hdr *h = (const struct dlcp_hdr *)skb->data;
	struct dst_entry *dst;
	struct in6_addr src;
	int err;

	dst = dlcp_ctl_route(sk, saddr, daddr, h->source, h->dest, &src);
	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	err = dlcp_xmit_skb(sk, skb, dst, &src, daddr, cls, false, udp,
			    ntohl(h->msg_id), 0);
	if (dst != dlcp_sk(sk)->ctl_rt.dst)
		dst_release(dst);
	return err;
}

/*
 * May the namespace answer one more packet for a port no socket holds?
 * A token bucket of net.dlcp.noport_rate answers a second, at most
 * DLCP_NOPORT_BURST deep, as icmp_global_allow() bounds ICMP errors.
 */
static bool dlcp_noport_allow(struct dlcp_net *dn)
{
	u32 rate = READ_ONCE(dn->noport_rate), grow;
	u32 burst = min_t(u32, rate, DLCP_NOPORT_BURST);
	unsigned long now = jiffies;
	bool ok;

	if (!rate)
		return false;
	spin_lock_bh(&dn->noport_lock);
	grow = (u64)min_t(unsigned long, now - dn->noport_stamp, HZ) * rate /
	       HZ;
	if (grow)
		dn->noport_stamp = now;
	dn->noport_credit = min(dn->noport_credit + grow, burst);
	ok = dn->noport_credit > 0;
	if (ok)
		dn->noport_credit--;
	spin_unlock_bh(&dn->noport_lock);
	return ok;
}

/*
 * Answer @in, a DATA or PROBE packet for a port no socket holds (native,
 * or inside UDP if @udp), with a STOP flagged NOPORT and FAILED that names
 * its message: the sender fails the message with ECONNREFUSED within a
 * round trip (dlcp_recovery_stop()) instead of after msg_timeout_ms.
 * The STOP goes back to the packet's source and names the message as the
 * packet did; message ids are keyed (dlcp_msg_id_offset()), so a forger
 * off the path must guess one, as a TCP RST's must guess a sequence
 * number in the window. No socket sends it: it goes in the lowest class,
 * no exchange being established, and at most net.dlcp.noport_rate a
 * second per namespace. The STOP is no longer than the packet answered.
 */
void dlcp_xmit_noport(struct net *net, const struct dlcp_af *af,
		      struct sk_buff *in, bool udp)
{
	const struct dlcp_hdr *h = (const struct dlcp_hdr *)in->data;
	const struct dlcp_skb_cb *cb = dlcp_cb(in);
	struct dlcp_net *dn = dlcp_pernet(net);
	u8 type = dlcp_wire_type(h), cls = DLCP_MAX_CLASSES - 1, tos;
	struct dlcp_stop_hdr *st;
	struct dst_entry *dst;
	struct sk_buff *skb;
	struct in6_addr src;
	u32 cookie, entropy;
	__be32 tsval;
	int err;

	if (type == DLCP_T_DATA)
		tsval = ((const struct dlcp_data_hdr *)h)->tsval;
	else if (type == DLCP_T_PROBE)
		tsval = ((const struct dlcp_probe_hdr *)h)->tsval;
	else
		return;		/* control packets to a closed port: silence */
	if (!dlcp_noport_allow(dn)) {
		DLCP_INC_STATS(net, DLCP_MIB_NOPORT_LIMITED);
		return;
	}
	skb = dlcp_alloc_ctl(DLCP_STOP_HDR_LEN, GFP_ATOMIC);
	if (!skb)
		return;
	st = (struct dlcp_stop_hdr *)skb->data;
	dlcp_fill_hdr(&st->common, DLCP_T_STOP, h->dest, h->source,
		      ntohl(h->msg_id), ntohl(h->msg_len), DLCP_STOP_HDR_LEN,
		      DLCP_HF_FAILED | DLCP_HF_NOPORT, 0);
	st->lost = h->msg_len;
	st->tsecr = tsval;
	dst = af->route(net, NULL, &cb->daddr, &cb->saddr, h->dest, h->source,
			0, &src, &cookie);
	if (IS_ERR(dst)) {
		DLCP_INC_STATS(net, DLCP_MIB_OUT_NO_ROUTE);
		kfree_skb(skb);
		return;
	}
	tos = dlcp_pkt_tos(dn, cls, false);
	entropy = dlcp_entropy(dn, ntohl(h->msg_id), 0);
	dlcp_xmit_csum(skb, &src, &cb->saddr, skb->len, tos);
	if (udp) {
		dlcp_udp_push(skb, dn, &src, &cb->saddr, entropy);
		DLCP_INC_STATS(net, DLCP_MIB_UDP_OUT_PKTS);
	}
	skb->priority = DLCP_MAX_CLASSES - 1 - cls;
	/* net_xmit_eval() evaluates its argument twice */
	err = af->xmit(NULL, skb, dst, &src, &cb->saddr, tos,
		       udp ? IPPROTO_UDP : dlcp_ipproto, entropy, 1);
	err = net_xmit_eval(err);
	dst_release(dst);
	if (err) {
		DLCP_INC_STATS(net, DLCP_MIB_OUT_ERRORS);
		return;
	}
	DLCP_INC_STATS(net, DLCP_MIB_OUT_PKTS);
	DLCP_INC_STATS(net, DLCP_MIB_OUT_CLASS0 + cls);
	DLCP_INC_STATS(net, DLCP_MIB_NOPORT_SENT);
}
