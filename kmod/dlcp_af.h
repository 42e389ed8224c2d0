/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between IPv4 and IPv6, behind one ops table per family
 * (struct dlcp_af, as net/sctp's struct sctp_af): socket addresses,
 * routes, the IP header, receive checks, ICMP. Every address inside the
 * module is a struct in6_addr, IPv4 ones v4-mapped; dlcp_af_of() picks
 * the ops by a peer's address, dlcp_sk_af() by a socket's family.
 * Implemented in dlcp_ipv4.c and dlcp_ipv6.c.
 */
#ifndef _DLCP_AF_H
#define _DLCP_AF_H

#include <linux/indirect_call_wrapper.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/sockptr.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/sock.h>

extern int dlcp_ipproto;

static inline bool dlcp_addr_is_v4(const struct in6_addr *a)
{
	return ipv6_addr_v4mapped(a);
}

/**
 * struct dlcp_af - what differs between IPv4 and IPv6
 * @family:	AF_INET or AF_INET6
 * @net_header_len: bytes of IP header in front of a DLCP (or UDP) header
 * @min_mtu:	smallest path MTU the family allows
 * @max_mtu:	largest packet the family's length field allows
 * @sockaddr:	a socket address from user space, for a socket of this
 *		family, as an in6_addr (v4-mapped for IPv4) and a port
 * @fill_name:	write a peer's address for recvmsg() in this family's form
 * @local_addr:	is the address (of this family) one of the host's?
 * @route:	route to a destination of this family in @net (see
 *		dlcp_route()); @sk NULL for a packet no socket sends, whose
 *		@saddr is given
 * @dst_unicast: may packets follow the route (not broadcast, multicast)?
 * @xmit:	add the IP header to the packet at skb->data and send it over
 *		the route (a reference is taken); @entropy varies the flow
 *		(IPv6 flow label), @nsegs is the number of packets a GSO
 *		super-packet will become; @sk NULL for a packet no socket
 *		sends (net from the route's device)
 * @peer_addr:	the connected peer of a socket of this family
 * @set_rcv_saddr: bind a socket of this family to an address (any: unbind)
 * @set_daddr:	connect a socket of this family (any, port 0: disconnect)
 * @bind_ok:	may a socket of this family bind this address?
 * @cgroup_addr: run the cgroup BPF bind (@bind) or connect program of the
 *		user address's family on it; 0 for a family the socket does
 *		not take (@sockaddr refuses it)
 * @setsockopt:	the IP-level socket options of the family (SOL_IP, and
 *		SOL_IPV6 for AF_INET6); -ENOPROTOOPT for another level
 * @getsockopt:	the same, to read them
 * @rcv_addrs:	on entry to the receive path, copy a packet's addresses and
 *		DS field from its IP header into its dlcp_skb_cb and give the
 *		interfaces it came in on (@dif, @sdif: the VRF's slave);
 *		false if the family may not use one of the addresses
 * @csum_init:	start checking a received packet's DLCP checksum: its
 *		pseudo-header (skb_checksum_init()); false if it is known bad
 * @policy_check: does the IPsec policy let a received packet reach @sk?
 * @icmp_pmtu:	of an ICMP error (skb->data at the quoted IP header), if
 *		it says a packet was too big for the path: the new path MTU
 *		and the quoted packet's addresses; false for other errors
 */
struct dlcp_af {
	sa_family_t	family;
	u16		net_header_len;
	u32		min_mtu;
	u32		max_mtu;
	int		(*sockaddr)(struct sock *sk,
				    const struct sockaddr *uaddr, int len,
				    struct in6_addr *addr, __be16 *port);
	void		(*fill_name)(struct msghdr *msg,
				     const struct in6_addr *addr, __be16 port,
				     int *addr_len);
	bool		(*local_addr)(struct net *net,
				      const struct in6_addr *addr);
	struct dst_entry *(*route)(struct net *net, struct sock *sk,
				   const struct in6_addr *saddr,
				   const struct in6_addr *daddr, __be16 sport,
				   __be16 dport, int oif, struct in6_addr *src,
				   u32 *cookie);
	bool		(*dst_unicast)(const struct dst_entry *dst);
	int		(*xmit)(struct sock *sk, struct sk_buff *skb,
				struct dst_entry *dst,
				const struct in6_addr *saddr,
				const struct in6_addr *daddr, u8 tos,
				u8 proto, u32 entropy, u32 nsegs);
	void		(*peer_addr)(const struct sock *sk,
				     struct in6_addr *addr);
	void		(*set_rcv_saddr)(struct sock *sk,
					 const struct in6_addr *addr);
	void		(*set_daddr)(struct sock *sk,
				     const struct in6_addr *addr, __be16 port);
	bool		(*bind_ok)(const struct sock *sk,
				   const struct in6_addr *addr);
	int		(*cgroup_addr)(struct sock *sk, struct sockaddr *uaddr,
				       int len, bool bind, u32 *flags);
	int		(*setsockopt)(struct sock *sk, int level, int optname,
				      sockptr_t optval, unsigned int optlen);
	int		(*getsockopt)(struct sock *sk, int level, int optname,
				      char __user *optval, int __user *optlen);
	bool		(*rcv_addrs)(struct sk_buff *skb, int *dif, int *sdif);
	bool		(*csum_init)(struct sk_buff *skb);
	bool		(*policy_check)(struct sock *sk, struct sk_buff *skb);
	bool		(*icmp_pmtu)(struct sk_buff *skb,
				     struct in6_addr *saddr,
				     struct in6_addr *daddr, u32 *mtu);
};

extern const struct dlcp_af dlcp_af_inet;
extern const struct dlcp_af dlcp_af_inet6;

/* The families' xmit, called directly on the transmit path (dlcp_xmit.c) */
INDIRECT_CALLABLE_DECLARE(int dlcp4_xmit(struct sock *sk, struct sk_buff *skb,
					 struct dst_entry *dst,
					 const struct in6_addr *saddr,
					 const struct in6_addr *daddr, u8 tos,
					 u8 proto, u32 entropy, u32 nsegs));
INDIRECT_CALLABLE_DECLARE(int dlcp6_xmit(struct sock *sk, struct sk_buff *skb,
					 struct dst_entry *dst,
					 const struct in6_addr *saddr,
					 const struct in6_addr *daddr, u8 tos,
					 u8 proto, u32 entropy, u32 nsegs));

/* The per-packet receive and UDP ops, called directly where it counts */
INDIRECT_CALLABLE_DECLARE(bool dlcp4_rcv_addrs(struct sk_buff *skb, int *dif,
					       int *sdif));
INDIRECT_CALLABLE_DECLARE(bool dlcp6_rcv_addrs(struct sk_buff *skb, int *dif,
					       int *sdif));
INDIRECT_CALLABLE_DECLARE(bool dlcp4_csum_init(struct sk_buff *skb));
INDIRECT_CALLABLE_DECLARE(bool dlcp6_csum_init(struct sk_buff *skb));
INDIRECT_CALLABLE_DECLARE(bool dlcp4_policy_check(struct sock *sk,
						  struct sk_buff *skb));
INDIRECT_CALLABLE_DECLARE(bool dlcp6_policy_check(struct sock *sk,
						  struct sk_buff *skb));

/* The ops of the family of the peer address @a. */
static inline const struct dlcp_af *dlcp_af_of(const struct in6_addr *a)
{
	return dlcp_addr_is_v4(a) ? &dlcp_af_inet : &dlcp_af_inet6;
}

/* The ops of the family of @sk (its socket addresses, its options). */
static inline const struct dlcp_af *dlcp_sk_af(const struct sock *sk)
{
	return sk->sk_family == AF_INET6 ? &dlcp_af_inet6 : &dlcp_af_inet;
}

/* Is the cached route @dst (IPv6 cookie @cookie) still usable? */
static inline bool dlcp_dst_valid(struct dst_entry *dst, u32 cookie)
{
	return dst && (!dst->obsolete || dst_check(dst, cookie));
}

/* Bytes of IP header in front of a DLCP packet to @daddr. */
static inline u32 dlcp_ip_hdr_len(const struct in6_addr *daddr)
{
	return dlcp_af_of(daddr)->net_header_len;
}

/*
 * UDP payload bytes of a GSO super-packet to @daddr: its IP length field
 * (16 bits) counts the UDP header, and in IPv4 the IP header too.
 */
static inline u32 dlcp_gso_max_bytes(const struct in6_addr *daddr)
{
	return U16_MAX - sizeof(struct udphdr) -
	       (dlcp_addr_is_v4(daddr) ? sizeof(struct iphdr) : 0);
}

/* Room for every header below DLCP's in a packet it sends */
#define DLCP_MAX_HEADROOM	(MAX_HEADER + sizeof(struct ipv6hdr))

/*
 * Room for the headers below DLCP's in a packet to @daddr over @dst, as
 * ip_append_data() sizes UDP's: the device's link-layer reserve, what a
 * transform on the route adds, the IP header and, in UDP mode (@udp), the
 * UDP header. A DATA packet's head sized so (the headers and the
 * skb_shared_info) fits a 512-byte allocation where DLCP_MAX_HEADROOM
 * would take 1024, which init_on_alloc zeroes whole. A later device that
 * wants more (a reroute) gets it from the IP layer's skb_expand_head().
 */
static inline u32 dlcp_headroom(const struct dst_entry *dst,
				const struct in6_addr *daddr, bool udp)
{
	return LL_RESERVED_SPACE(dst->dev) + dst->header_len +
	       dlcp_ip_hdr_len(daddr) + (udp ? sizeof(struct udphdr) : 0);
}

/* The checksum over @csum and the pseudo-header of protocol @proto. */
static inline __sum16 dlcp_csum_magic_proto(const struct in6_addr *saddr,
					    const struct in6_addr *daddr,
					    u32 len, u8 proto, __wsum csum)
{
	if (dlcp_addr_is_v4(daddr))
		return csum_tcpudp_magic(saddr->s6_addr32[3],
					 daddr->s6_addr32[3], len, proto, csum);
	return csum_ipv6_magic(saddr, daddr, len, proto, csum);
}

/* The DLCP checksum's pseudo-header sum (the protocol is always DLCP). */
static inline __sum16 dlcp_csum_magic(const struct in6_addr *saddr,
				      const struct in6_addr *daddr, u32 len,
				      __wsum csum)
{
	return dlcp_csum_magic_proto(saddr, daddr, len, dlcp_ipproto, csum);
}

#endif /* _DLCP_AF_H */
