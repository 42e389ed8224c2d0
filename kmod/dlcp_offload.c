// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP super-packets: a run of DATA packets of one message that goes
 * through IP, the qdiscs and the devices as one skb, as TCP's TSO packets
 * do, and is cut into packets only where it must be.
 *
 * A super-packet is one DATA header, its first packet's, and the payload
 * of all its packets as fragments of the message's pages: no skb per
 * packet is built unless the path cuts it. Its packets are whole segments
 * of the message with the same flags, so each differs from the first only
 * in its offset, and shares its length and pseudo-header sum. gso_size is
 * a packet's length from its DLCP header on, as the path MTU checks want.
 * IP puts one header in front of the whole:
 *
 * - A device that takes SKB_GSO_FRAGLIST (veth, loopback: the software
 *   GSO types) passes it on whole, and the receiving DLCP takes it as one
 *   packet of all its bytes (dlcp_offload_rcv()), with one REPORT.
 * - Everywhere else (a NIC, tbf, an IPsec transform, a path MTU smaller
 *   than its packets) the kernel's GSO cuts it through
 *   dlcp_offload_segment(), registered for DLCP's protocol number with
 *   inet_add_offload() and inet6_add_offload(): skb_segment() copies the
 *   headers in front of each packet's payload, the offset is set here, and
 *   IP's GSO completes the IP headers (length, id, checksum).
 * - A tunnel device of the path (VXLAN, GRE, IP in IP) encapsulates it
 *   whole and adds its own GSO type; where the tunnel's packet is cut, the
 *   tunnel's segmentation calls dlcp_offload_segment() for the DLCP packets
 *   inside, which takes those types (DLCP_GSO_OUTER) beside its own.
 *
 * A module cannot add an SKB_GSO_* type of its own. The protocol number
 * picks the callback; SKB_GSO_FRAGLIST, the type that only software
 * devices take, keeps a NIC's segmentation engine away from it. No UDP or
 * TCP code sees the skb, the only users of that type.
 *
 * In UDP mode the same super-packet travels inside one UDP header, as a
 * UDP tunnel's GSO packet (SKB_GSO_UDP_TUNNEL_CSUM, skb->encapsulation)
 * whose inner protocol is DLCP's and whose inner headers are all the DLCP
 * header. That is the one kind of GSO packet the UDP layer hands to a
 * tunnel socket whole (udp_unexpected_gso(), with udp_allow_gso() on the
 * port's sockets); where the path cuts it, UDP's tunnel segmentation
 * (skb_udp_tunnel_segment()) calls dlcp_offload_segment() for the inner
 * packets and then completes each UDP header, its checksum built on the
 * sum each DLCP packet leaves in SKB_GSO_CB.
 *
 * Path entropy: a super-packet carries its first packet's UDP source port
 * (UDP mode) or IPv6 flow label (native), but the cut gives every packet
 * the one it would have had sent alone (net.dlcp.udp_entropy packets per
 * port or label). Where a super-packet passes whole it stays on the host
 * (a veth to another namespace, loopback natively); where it leaves for a
 * fabric whose ECMP hashes ports and labels, a NIC's driver cannot take
 * the FRAGLIST type and GSO cuts it first. So super-packets and a port per
 * packet go together, and udp_entropy does not limit a super-packet.
 *
 * How many packets go in a super-packet is decided here too:
 * dlcp_offload_segs().
 */
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
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

/* The GSO type of a super-packet, native or inside UDP (@udp) */
static unsigned int dlcp_offload_type(bool udp)
{
	return udp ? SKB_GSO_FRAGLIST | SKB_GSO_UDP_TUNNEL_CSUM :
		     SKB_GSO_FRAGLIST;
}

/*
 * How many packets of @seg_size bytes of payload one super-packet of at
 * most @bytes bytes of DLCP holds: it has one DATA header, the first
 * packet's, and the payload of all of them (dlcp_offload_xmit()).
 */
u32 dlcp_offload_max_segs(u32 bytes, u32 seg_size)
{
	return bytes > DLCP_DATA_HDR_LEN ? (bytes - DLCP_DATA_HDR_LEN) / seg_size
					 : 0;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_offload_max_segs);

/*
 * How many new segments of @m, from @seg on, go out now in one
 * super-packet over @dst (dlcp_offload_xmit()): as many as the window, the
 * flight ring, the pacing (up to two intervals ahead, as for single
 * packets) and 64 KB allow, all with the same flags (the cut gives each
 * its own path entropy, see the top of the file). 1 with DLCP_PATHS (each
 * packet picks its path), with net.dlcp.gso off (net.dlcp.udp_gso in UDP
 * mode), or with a device that may not segment (ethtool's gso off), as TCP
 * builds no GSO packets for one. 0: none now, wait for the window to open
 * further.
 */
u32 dlcp_offload_segs(struct sock *sk, const struct dlcp_out_msg *m,
		      const struct dst_entry *dst, u32 seg, u64 now, u64 interval)
{
	const struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	const struct dlcp_sock *dsk = dlcp_sk(sk);
	const struct dlcp_peer *p = m->peer;
	u32 k, i, bytes, room, want;
	u8 flags;

	if (m->paths)
		return 1;
	if (!(m->udp ? READ_ONCE(dn->udp_gso) : READ_ONCE(dn->gso)) ||
	    !(dst->dev->features & NETIF_F_GSO))
		return 1;
	bytes = min_t(u32, READ_ONCE(dst->dev->gso_max_size),
		      dlcp_gso_max_bytes(&m->daddr));
	k = min3(m->nsegs - seg, p->cwnd - p->inflight,
		 dsk->flight_cap - dsk->flight_live);
	k = min3(k, dlcp_offload_max_segs(bytes, m->seg_size),
		 (u32)DLCP_GSO_MAX_SEGS);
	k = min_t(u32, k, READ_ONCE(dst->dev->gso_max_segs));
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
	/*
	 * The packets share the header, so all their flags (the last of a
	 * message, which asks for a REPORT, goes alone), and the payload
	 * must fit in the skb's page fragments
	 */
	k = min_t(u32, k, max_t(u32, 1, (MAX_SKB_FRAGS * PAGE_SIZE -
		  offset_in_page(seg * m->seg_size)) / m->seg_size));
	flags = dlcp_out_seg_flags(m, seg, false);
	for (i = 1; i < k; i++)
		if (dlcp_out_seg_flags(m, seg + i, false) != flags)
			break;
	return i;
}

/*
 * Send new segments @seg .. @seg + @k - 1 of @m, @k > 1 and all whole,
 * over @dst as one super-packet, checksummed by the device or where it is
 * cut (dlcp_xmit_csum()). In UDP mode it is the payload of a UDP tunnel
 * GSO packet whose inner protocol is DLCP's (see the top of the file).
 * Returns @k or an errno.
 */
int dlcp_offload_xmit(struct sock *sk, struct dlcp_out_msg *m,
		      struct dst_entry *dst, u32 seg, u32 k, u32 now_us)
{
	u8 flags = dlcp_out_seg_flags(m, seg, false);
	bool drop = flags & DLCP_HF_DROPPABLE;
	u8 tos = dlcp_pkt_tos(dlcp_pernet(sock_net(sk)), m->meta.prio, drop);
	u32 pkt_len = DLCP_DATA_HDR_LEN + m->seg_size;
	struct sk_buff *skb;
	int err;

	skb = dlcp_out_seg_skb(sk, m, seg, k, flags, now_us,
			       dlcp_headroom(dst, &m->daddr, m->udp));
	if (IS_ERR(skb))
		return PTR_ERR(skb);
	dlcp_xmit_csum(skb, &m->saddr, &m->daddr, pkt_len, tos);
	skb_shinfo(skb)->gso_type = dlcp_offload_type(m->udp);
	skb_shinfo(skb)->gso_size = pkt_len;
	skb_shinfo(skb)->gso_segs = k;
	if (m->udp) {
		/* the inner headers are all the DLCP header, at skb->data */
		skb_reset_inner_mac_header(skb);
		skb_reset_inner_network_header(skb);
		skb_reset_inner_transport_header(skb);
		skb_set_inner_ipproto(skb, dlcp_ipproto);
		skb->encapsulation = 1;
	}
	/* in UDP mode DLCP_MIB_UDP_GSO_OUT (dlcp_xmit_skb()) */
	if (!m->udp)
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_GSO_OUT);
	err = dlcp_xmit_skb(sk, skb, dst, &m->saddr, &m->daddr, m->meta.prio,
			    drop, m->udp, m->id, seg);
	return err ?: k;
}

/*
 * GSO types that an encapsulation below DLCP adds to a super-packet on its
 * way out (a UDP tunnel such as VXLAN, GRE, IP in IP): the kernel's
 * segmentation of those strips the outer headers and calls
 * dlcp_offload_segment() for the DLCP packets inside, as it calls TCP's
 */
#define DLCP_GSO_OUTER	(SKB_GSO_UDP_TUNNEL | SKB_GSO_UDP_TUNNEL_CSUM | \
			 SKB_GSO_GRE | SKB_GSO_GRE_CSUM | SKB_GSO_IPXIP4 | \
			 SKB_GSO_IPXIP6)

/*
 * @skb (skb->data at the DLCP header) has the shape of a super-packet of
 * dlcp_offload_xmit()'s making: one header and gso_segs whole packets of
 * payload, each to get the first one's length and sum
 */
static bool dlcp_offload_shape(const struct sk_buff *skb)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);

	return !skb_has_frag_list(skb) &&
	       shinfo->gso_size > DLCP_DATA_HDR_LEN &&
	       skb->len == DLCP_DATA_HDR_LEN + (u64)shinfo->gso_segs *
			   (shinfo->gso_size - DLCP_DATA_HDR_LEN);
}

/* ... and is one of UDP mode if @udp, as its type says */
static bool dlcp_offload_ours(const struct sk_buff *skb, bool udp)
{
	return skb_shinfo(skb)->gso_type == dlcp_offload_type(udp) &&
	       dlcp_offload_shape(skb);
}

/*
 * Where the path entropy of the packets being cut from super-packet @skb
 * lives: in UDP mode the UDP header in front of the DLCP header, which is
 * all that UDP's tunnel segmentation pulled (it leaves the network header
 * at the DLCP header, where dlcp_offload_xmit() put every inner header);
 * natively over IPv6 the flow label of DLCP's own IPv6 header (IP's GSO
 * leaves the network header there). Anything else (IPv4, a tunnel's outer
 * header) carries none of DLCP's.
 */
enum dlcp_offload_ent { DLCP_ENT_NONE, DLCP_ENT_UDP, DLCP_ENT_LABEL };

static enum dlcp_offload_ent dlcp_offload_ent_of(const struct sk_buff *skb)
{
	int noff = skb_network_offset(skb);

	if (!noff && skb_shinfo(skb)->gso_type & (SKB_GSO_UDP_TUNNEL |
						  SKB_GSO_UDP_TUNNEL_CSUM))
		return DLCP_ENT_UDP;
	if (noff == -(int)sizeof(struct ipv6hdr) &&
	    ipv6_hdr(skb)->version == 6 &&
	    ipv6_hdr(skb)->nexthdr == dlcp_ipproto)
		return DLCP_ENT_LABEL;
	return DLCP_ENT_NONE;
}

/*
 * Give packet @p, packet @seg of message @msg_id, the path entropy of
 * @dn's sysctls it would have had sent alone (dlcp_xmit_skb()): its UDP
 * source port (@ent DLCP_ENT_UDP, before UDP's segmentation sums its
 * header) or its IPv6 flow label (DLCP_ENT_LABEL)
 */
static void dlcp_offload_entropy(struct sk_buff *p, const struct dlcp_net *dn,
				 enum dlcp_offload_ent ent, u32 msg_id, u32 seg)
{
	struct udphdr *uh;
	__be32 *flow;

	if (ent == DLCP_ENT_UDP) {
		uh = (struct udphdr *)(skb_transport_header(p) - sizeof(*uh));
		uh->source = htons(dlcp_udp_sport(dn, msg_id, seg));
		return;
	}
	flow = (__be32 *)ipv6_hdr(p);
	*flow = (*flow & ~IPV6_FLOWLABEL_MASK) |
		(htonl(dlcp_entropy(dn, msg_id, seg)) & IPV6_FLOWLABEL_MASK);
}

/*
 * The GSO callback of the DLCP protocol number, for IPv4 and IPv6: cut
 * the super-packet @skb (skb->data at its DATA header) into its packets,
 * each with its own path entropy. The device sums each packet if it can
 * sum any protocol (HW_CSUM); otherwise skb_segment() sums the payload as
 * it cuts, and the header is added here. skb_segment() moves the socket's
 * charge to the last packet, as for UDP's. The sysctls of the entropy are
 * the sending socket's namespace's, or the device's where it has none (a
 * super-packet forwarded from another namespace).
 */
struct sk_buff *dlcp_offload_segment(struct sk_buff *skb,
				     netdev_features_t features)
{
	enum dlcp_offload_ent ent = dlcp_offload_ent_of(skb);
	const struct dlcp_net *dn = NULL;
	struct skb_shared_info *shinfo;
	struct dlcp_data_hdr *d;
	struct sk_buff *segs, *p;
	u32 mss, off, seg, msg_id;
	__sum16 sum;

	/* natively or in UDP mode, and maybe inside a tunnel of the path */
	if ((skb_shinfo(skb)->gso_type & ~DLCP_GSO_OUTER) != SKB_GSO_FRAGLIST ||
	    !dlcp_offload_shape(skb) || !pskb_may_pull(skb, DLCP_DATA_HDR_LEN))
		return ERR_PTR(-EINVAL);
	shinfo = skb_shinfo(skb);
	mss = shinfo->gso_size - DLCP_DATA_HDR_LEN;
	d = (struct dlcp_data_hdr *)skb->data;
	off = ntohl(d->offset);
	seg = off / mss;
	msg_id = ntohl(d->common.msg_id);
	if (ent != DLCP_ENT_NONE)
		dn = dlcp_pernet(skb->sk ? sock_net(skb->sk) : dev_net(skb->dev));
	/* IP_CSUM and IPV6_CSUM sum TCP and UDP only */
	if (!(features & NETIF_F_HW_CSUM))
		features &= ~NETIF_F_CSUM_MASK;
	__skb_pull(skb, DLCP_DATA_HDR_LEN);
	shinfo->gso_size = mss;
	segs = skb_segment(skb, features);
	shinfo->gso_size = mss + DLCP_DATA_HDR_LEN;
	__skb_push(skb, DLCP_DATA_HDR_LEN);
	if (IS_ERR(segs))
		return segs;
	for (p = segs; p; p = p->next, off += mss, seg++) {
		d = (struct dlcp_data_hdr *)skb_transport_header(p);
		d->offset = htonl(off);
		if (dn)
			dlcp_offload_entropy(p, dn, ent, msg_id, seg);
		/*
		 * Either way SKB_GSO_CB(p) ends up with the sum of the packet
		 * as it will leave, on which a UDP tunnel's cut builds each
		 * UDP checksum (__skb_udp_tunnel_segment())
		 */
		if (p->ip_summed == CHECKSUM_PARTIAL) {
			gso_reset_checksum(p, csum_unfold(~d->common.check));
			continue;
		}
		sum = gso_make_checksum(p, csum_unfold(~d->common.check));
		d->common.check = sum ?: CSUM_MANGLED_0;
	}
	return segs;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_offload_segment);

/*
 * May the receiver take super-packet @skb (skb->data at the DLCP header),
 * which came inside UDP if @udp, whole? Only as dlcp_offload_xmit() builds
 * them (dlcp_offload_ours()): a DATA header without options whose length
 * is gso_size, its packets all inside the message, to be summed by no one
 * (CHECKSUM_PARTIAL: it never left the host). The rest of the header is
 * checked as a single packet's.
 */
bool dlcp_offload_rcv_ok(struct sk_buff *skb, bool udp)
{
	const struct dlcp_data_hdr *d;
	u32 plen, off, msg_len;

	if (!dlcp_offload_ours(skb, udp) ||
	    skb->ip_summed != CHECKSUM_PARTIAL ||
	    skb_shinfo(skb)->gso_segs < 2 ||
	    !pskb_may_pull(skb, DLCP_DATA_HDR_LEN))
		return false;
	d = (const struct dlcp_data_hdr *)skb->data;
	plen = skb->len - DLCP_DATA_HDR_LEN;
	off = ntohl(d->offset);
	msg_len = ntohl(d->common.msg_len);
	return dlcp_wire_type(&d->common) == DLCP_T_DATA &&
	       d->common.doff * 4 == DLCP_DATA_HDR_LEN &&
	       ntohs(d->common.len) == skb_shinfo(skb)->gso_size &&
	       off < msg_len && plen <= msg_len - off &&
	       !(d->common.flags & DLCP_HF_LAST);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_offload_rcv_ok);

/*
 * Receive a super-packet of @af, as dlcp_rcv_common() found it: a native
 * one of dlcp_offload_xmit()'s is taken whole; any other GSO packet is
 * not DLCP's making and is dropped, counted once for each packet it claims
 * to hold. In UDP mode dlcp_udp_gso_rcv() takes super-packets itself, and
 * none comes here.
 */
int dlcp_offload_rcv(struct sk_buff *skb, const struct dlcp_af *af, bool udp)
{
	struct net *net = dev_net(skb->dev);
	u16 n = skb_shinfo(skb)->gso_segs;

	if (!udp && dlcp_offload_rcv_ok(skb, false)) {
		DLCP_INC_STATS(net, DLCP_MIB_GSO_IN);
		return dlcp_rcv_one(skb, af, udp);
	}
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
