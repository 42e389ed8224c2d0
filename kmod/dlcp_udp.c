// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP over UDP.
 *
 * A bare IP protocol number gets no ECMP spreading from switches and no
 * RSS spreading from NICs, and some clouds drop it. In UDP mode a DLCP
 * packet travels as the payload of a UDP datagram to net.dlcp.udp_port
 * (default 9253). The source port carries entropy: it changes every
 * net.dlcp.udp_entropy packets of a message (default 1: every packet),
 * within [udp_sport_min, udp_sport_max], so that 5-tuple hashing spreads
 * one message over every path and queue; udp_entropy 0 keeps one port per
 * message for fabrics that want flows. The DLCP header and checksum are
 * the same as in native mode (the checksum's pseudo-header still names the
 * DLCP protocol), and there is a UDP checksum in both families. Neither is
 * summed by the sender's CPU: the device fills in DLCP's (CHECKSUM_PARTIAL,
 * as natively), and UDP's follows from it without reading the payload,
 * since a packet with a correct DLCP checksum sums to the complement of
 * DLCP's pseudo-header (local checksum offload, as UDP tunnels do:
 * lco_csum()). A receiver's UDP layer verifies UDP's, which covers the
 * whole DLCP packet, before handing it over; DLCP's is then not summed
 * again. A datagram without one (zero, as IPv4 allows) has DLCP's
 * verified. With net.dlcp.udp_gso, runs of packets leave as one
 * super-packet inside one UDP header, typed as a UDP tunnel's GSO packet
 * whose inner protocol is DLCP (dlcp_offload.c): a receiver across a veth
 * takes it whole, and anywhere else (loopback too, which takes no
 * encapsulated GSO packet) the UDP tunnel's GSO cuts it with DLCP's, each
 * packet with its UDP header, its own source port and both checksums.
 *
 * Each network namespace that uses UDP mode owns kernel UDP sockets on
 * udp_port (IPv4, and IPv6-only when IPv6 is available), set up with the
 * kernel's UDP tunnel API, whose encap_rcv hands the payload to the DLCP
 * receive path. They are created when net.dlcp.encap
 * is set to 1 or a socket of a process with CAP_NET_ADMIN over the
 * namespace selects DLCP_ENCAP_UDP (an error there, e.g. EADDRINUSE when
 * the port is taken, is returned to that write; without the capability,
 * EPERM), and released with the namespace. A message uses the mode of its socket
 * (DLCP_ENCAP, else the sysctl); replies use the mode the data came in.
 *
 * Path MTU: ICMP "fragmentation needed" and ICMPv6 "packet too big" about
 * a packet sent inside UDP reach the UDP socket of the port; the UDP
 * layer updates the route's path MTU and hands the error to
 * encap_err_rcv, which re-cuts the sending DLCP socket's messages.
 */
#include <linux/udp.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>
#include "dlcp_impl.h"

/*
 * A DLCP packet inside UDP names its sender's DLCP port in its own header,
 * which any process that can send a UDP datagram could write: natively,
 * writing DLCP headers takes CAP_NET_RAW. So a host sends its DLCP
 * datagrams from source ports below PROT_SOCK, which only a privileged
 * process may bind, and with net.dlcp.udp_sport_priv (the default) a
 * receiver takes no other: an unprivileged user, on this host or on a
 * sender's, cannot speak for another user's DLCP port (as rsh and NFS
 * trust a reserved port). Ports are not an authentication: on a host
 * whose net.ipv4.ip_unprivileged_port_start is below 1024 any user may
 * send from them.
 */
static bool dlcp_udp_sport_ok(struct sock *sk, const struct sk_buff *skb)
{
	return ntohs(udp_hdr(skb)->source) < PROT_SOCK ||
	       !READ_ONCE(dlcp_pernet(sock_net(sk))->udp_sport_priv);
}

/* A datagram to the port, at its UDP header */
static int dlcp_udp_rcv_pkt(struct sock *sk, struct sk_buff *skb)
{
	if (!pskb_may_pull(skb, sizeof(struct udphdr)))
		return dlcp_drop(sock_net(sk), skb, DLCP_MIB_DROP_SHORT);
	if (!dlcp_udp_sport_ok(sk, skb))
		return dlcp_drop(sock_net(sk), skb, DLCP_MIB_DROP_UDP_SPORT);
	/*
	 * The UDP layer verified a UDP checksum before calling here, and it
	 * covers the DLCP packet: DLCP's is verified only in a datagram
	 * without one
	 */
	skb->ip_summed = udp_hdr(skb)->check ? CHECKSUM_UNNECESSARY :
					       CHECKSUM_NONE;
	skb->csum_level = 0;
	__skb_pull(skb, sizeof(struct udphdr));
	skb_reset_transport_header(skb);
	DLCP_INC_STATS(sock_net(sk), DLCP_MIB_UDP_IN_PKTS);
	return dlcp_rcv_common(skb, dlcp_sk_af(sk), true);
}

/*
 * A GSO packet to the port, which its sockets take whole (udp_allow_gso()):
 * the UDP layer lets only a UDP tunnel's through, which only this host
 * builds. A super-packet of dlcp_offload_xmit()'s is taken whole, with its
 * one header; any other is cut into its datagrams here, as the UDP layer
 * would have cut it.
 */
static int dlcp_udp_gso_rcv(struct sock *sk, struct sk_buff *skb)
{
	const u32 uhlen = sizeof(struct udphdr);
	struct net *net = sock_net(sk);
	struct sk_buff *segs, *next;

	if (pskb_may_pull(skb, uhlen) && dlcp_udp_sport_ok(sk, skb)) {
		__skb_pull(skb, uhlen);
		skb_reset_transport_header(skb);
		if (dlcp_offload_rcv_ok(skb, true)) {
			DLCP_ADD_STATS(net, DLCP_MIB_UDP_IN_PKTS,
				       skb_shinfo(skb)->gso_segs);
			DLCP_INC_STATS(net, DLCP_MIB_UDP_GSO_IN);
			return dlcp_rcv_one(skb, dlcp_sk_af(sk), true);
		}
		__skb_push(skb, uhlen);
	}
	DLCP_INC_STATS(net, DLCP_MIB_UDP_GSO_CUT);
	__skb_push(skb, -skb_mac_offset(skb));
	segs = udp_rcv_segment(sk, skb, sk->sk_family == AF_INET);
	skb_list_walk_safe(segs, skb, next) {
		__skb_pull(skb, skb_transport_offset(skb));
		dlcp_udp_post_segment_fix_csum(skb);
		dlcp_udp_rcv_pkt(sk, skb);
	}
	return 0;
}

static int dlcp_udp_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	if (unlikely(skb_is_gso(skb)))
		return dlcp_udp_gso_rcv(sk, skb);
	return dlcp_udp_rcv_pkt(sk, skb);
}

/* ICMP errors on the port concern packets we sent: always ours. */
static int dlcp_udp_err_lookup(struct sock *usk, struct sk_buff *skb)
{
	return 0;
}

/*
 * An ICMP error about a packet we sent inside UDP, after the UDP layer
 * updated the route's path MTU from "fragmentation needed" or "packet too
 * big": re-cut the sending socket's messages, as dlcp4_err() and
 * dlcp6_err() do in native mode. @skb->data is the quoted IP header, the
 * UDP header is at @udp_offset and the DLCP header follows it (the quote
 * must hold its ports: routers quote as much as fits, beyond the 8 bytes
 * RFC 792 asks for). Other errors are left to the guard timer.
 */
static void dlcp_udp_err(struct sock *usk, struct sk_buff *skb,
			 unsigned int udp_offset)
{
	unsigned int off = udp_offset + sizeof(struct udphdr);
	const struct dlcp_hdr *h;
	struct in6_addr saddr, daddr;
	struct sock *sk;
	u32 mtu;

	if (!dlcp_sk_af(usk)->icmp_pmtu(skb, &saddr, &daddr, &mtu))
		return;
	if (!pskb_may_pull(skb, off + DLCP_HDR_LEN)) {
		DLCP_INC_STATS(sock_net(usk), DLCP_MIB_ICMP_IGNORED);
		return;
	}
	h = (const struct dlcp_hdr *)(skb->data + off);
	sk = dlcp_out_err_sock(sock_net(usk), &saddr, &daddr, h,
			       skb->dev->ifindex);
	if (sk)
		dlcp_out_err_pmtu(sk, &daddr, mtu);
}

DLCP_ENCAP_ERR_RCV(dlcp_udp_err_rcv, dlcp_udp_err)

/* Open (or move to a new udp_port) the namespace's UDP socket. */
int dlcp_udp_enable(struct net *net)
{
	struct dlcp_net *dn = dlcp_pernet(net);
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type	= 1,
		.encap_rcv	= dlcp_udp_encap_rcv,
		.encap_err_lookup = dlcp_udp_err_lookup,
	};
	struct udp_port_cfg cfg = {
		.family		= AF_INET,
		.local_ip.s_addr = htonl(INADDR_ANY),
	};
	struct udp_port_cfg cfg6 = {
		.family		= AF_INET6,
		.local_ip6	= IN6ADDR_ANY_INIT,
		.ipv6_v6only	= 1,
		.use_udp6_rx_checksums = 1,
	};
	struct socket *sock, *sock6 = NULL, *old = NULL, *old6 = NULL;
	int port, err = 0;

	mutex_lock(&dn->udp_lock);
	port = READ_ONCE(dn->udp_port);
	if (dn->udp_sock && dn->udp_sock_port == port)
		goto out;
	cfg.local_udp_port = htons(port);
	err = udp_sock_create4(net, &cfg, &sock);
	if (err)
		goto out;
	cfg6.local_udp_port = htons(port);
	err = udp_sock_create6(net, &cfg6, &sock6);
	if (err == -EAFNOSUPPORT) {	/* IPv6 disabled: IPv4 only */
		sock6 = NULL;
	} else if (err) {
		udp_tunnel_sock_release(dlcp_udp_tunnel_sock(sock));
		goto out;
	}
	err = 0;
	dlcp_set_encap_err_rcv(&tcfg, dlcp_udp_err_rcv);
	setup_udp_tunnel_sock(net, dlcp_udp_tunnel_sock(sock), &tcfg);
	dlcp_udp_allow_gso(sock->sk);
	if (sock6) {
		setup_udp_tunnel_sock(net, dlcp_udp_tunnel_sock(sock6), &tcfg);
		dlcp_udp_allow_gso(sock6->sk);
	}
	old = dn->udp_sock;
	old6 = dn->udp6_sock;
	WRITE_ONCE(dn->udp_sock, sock);
	WRITE_ONCE(dn->udp6_sock, sock6);
	WRITE_ONCE(dn->udp_sock_port, port);
out:
	mutex_unlock(&dn->udp_lock);
	if (old)
		udp_tunnel_sock_release(dlcp_udp_tunnel_sock(old));
	if (old6)
		udp_tunnel_sock_release(dlcp_udp_tunnel_sock(old6));
	return err;
}

/*
 * A socket selects UDP mode (DLCP_ENCAP). The UDP port belongs to the
 * namespace, not to a socket: its administrator opens it (net.dlcp.encap),
 * or a socket whose owner holds CAP_NET_ADMIN over the namespace; any
 * other gets EPERM until it is open on net.dlcp.udp_port.
 */
int dlcp_udp_select(struct net *net)
{
	struct dlcp_net *dn = dlcp_pernet(net);

	if (READ_ONCE(dn->udp_sock) &&
	    READ_ONCE(dn->udp_sock_port) == READ_ONCE(dn->udp_port))
		return 0;
	if (!ns_capable(net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	return dlcp_udp_enable(net);
}

void dlcp_udp_disable(struct net *net)
{
	struct dlcp_net *dn = dlcp_pernet(net);

	if (dn->udp_sock)
		udp_tunnel_sock_release(dlcp_udp_tunnel_sock(dn->udp_sock));
	if (dn->udp6_sock)
		udp_tunnel_sock_release(dlcp_udp_tunnel_sock(dn->udp6_sock));
	dn->udp_sock = NULL;
	dn->udp6_sock = NULL;
}

/*
 * The path entropy of packet @seg of message @msg_id: it changes every
 * net.dlcp.udp_entropy packets (never with 0). It picks the UDP source
 * port, and the IPv6 flow label, which any observer of headers sees (flow
 * logs): keyed per namespace, so that they do not give the message id
 * away.
 */
u32 dlcp_entropy(const struct dlcp_net *dn, u32 msg_id, u32 seg)
{
	u32 n = READ_ONCE(dn->udp_entropy);

	return hsiphash_2u32(msg_id, n ? seg / n : 0, &dn->entropy_key);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_entropy);

/* The UDP source port of a packet of path entropy @entropy. */
static u16 dlcp_udp_sport_of(const struct dlcp_net *dn, u32 entropy)
{
	u32 lo = READ_ONCE(dn->udp_sport_min), hi = READ_ONCE(dn->udp_sport_max);

	if (hi < lo)
		return lo;
	return lo + reciprocal_scale(entropy, hi - lo + 1);
}

/* The UDP source port of packet @seg of message @msg_id. */
u16 dlcp_udp_sport(const struct dlcp_net *dn, u32 msg_id, u32 seg)
{
	return dlcp_udp_sport_of(dn, dlcp_entropy(dn, msg_id, seg));
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_udp_sport);

/*
 * Put a UDP header in front of the DLCP packet at skb->data, from @saddr
 * to @daddr, from the source port of path entropy @entropy (dlcp_entropy(),
 * which the caller has for the IP header too), with its checksum, summed
 * without reading the payload. Of a
 * single packet, whose DLCP checksum is left to the device
 * (dlcp_xmit_csum()), it is derived from that (lco_csum()). A super-packet
 * (dlcp_offload_xmit()) gets the pseudo-header sum of the whole, as a UDP
 * tunnel's GSO packet does (udp_set_csum()): the cut into packets fills in
 * each packet's UDP length and checksum.
 */
void dlcp_udp_push(struct sk_buff *skb, const struct dlcp_net *dn,
		   const struct in6_addr *saddr, const struct in6_addr *daddr,
		   u32 entropy)
{
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(dlcp_udp_sport_of(dn, entropy));
	uh->dest = htons(READ_ONCE(dn->udp_port));
	uh->len = htons(skb->len);
	uh->check = 0;
	if (skb_is_gso(skb)) {
		uh->check = ~dlcp_csum_magic_proto(saddr, daddr, skb->len,
						   IPPROTO_UDP, 0);
		return;
	}
	uh->check = dlcp_csum_magic_proto(saddr, daddr, skb->len, IPPROTO_UDP,
					  lco_csum(skb)) ?: CSUM_MANGLED_0;
}
