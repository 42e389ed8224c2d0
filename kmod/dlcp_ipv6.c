// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP over IPv6: the family's ops (socket addresses, routes, the IPv6
 * header), AF_INET6 sockets, the IPv6 protocol handler and ICMPv6 "packet
 * too big".
 *
 * The protocol is the same in both families: the DLCP header names no
 * address, and every address inside the module is an in6_addr (IPv4 ones
 * v4-mapped). An AF_INET6 socket reaches IPv4 peers through v4-mapped
 * addresses unless IPV6_V6ONLY is set, as UDP's do; both families share
 * one port space. The checksum covers the IPv6 pseudo-header with the DLCP
 * protocol number, in native and UDP mode alike.
 *
 * Per-packet entropy: in native mode the flow label changes with the
 * packet (net.dlcp.udp_entropy packets per label, as the UDP source port
 * in UDP mode), so that flow-label ECMP hashing spreads one message over
 * every path; where a super-packet is cut, each packet gets its own
 * (dlcp_offload.c).
 */
#include <linux/bpf-cgroup.h>
#include <linux/icmpv6.h>
#include <net/addrconf.h>
#include <net/dsfield.h>
#include <net/inet_common.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/protocol.h>
#include <net/transp_v6.h>
#include <net/xfrm.h>
#include "dlcp_impl.h"

/*
 * A destination (or bind) address from user space for an AF_INET6 socket:
 * a sockaddr_in6, v4-mapped for an IPv4 peer.
 */
static int dlcp6_sockaddr(struct sock *sk, const struct sockaddr *uaddr, int len,
			  struct in6_addr *addr, __be16 *port)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)uaddr;

	if (uaddr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (len < SIN6_LEN_RFC2133)
		return -EINVAL;
	if (ipv6_addr_v4mapped(&sin6->sin6_addr) && sk->sk_ipv6only)
		return -ENETUNREACH;
	*addr = sin6->sin6_addr;
	*port = sin6->sin6_port;
	return 0;
}

/* The sender's address for recvmsg() on an AF_INET6 socket. */
static void dlcp6_fill_name(struct msghdr *msg, const struct in6_addr *addr,
			    __be16 port, int *addr_len)
{
	DECLARE_SOCKADDR(struct sockaddr_in6 *, sin6, msg->msg_name);

	memset(sin6, 0, sizeof(*sin6));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = port;
	sin6->sin6_addr = *addr;
	*addr_len = sizeof(*sin6);
}

/*
 * dlcp_route() for an IPv6 destination: from @saddr (the socket's bound
 * address if NULL or any) over interface @oif (0: any); the source address
 * the route picks goes to @src_out.
 */
static struct dst_entry *dlcp6_route(struct net *net, struct sock *sk,
				     const struct in6_addr *saddr,
				     const struct in6_addr *daddr,
				     __be16 sport, __be16 dport, int oif,
				     struct in6_addr *src_out, u32 *cookie)
{
	struct flowi6 fl6 = {
		.flowi6_proto	= dlcp_ipproto,
		.flowi6_oif	= oif,
		.flowi6_mark	= sk ? READ_ONCE(sk->sk_mark) : 0,
		.flowi6_uid	= sock_net_uid(net, sk),
		.daddr		= *daddr,
		.fl6_sport	= sport,
		.fl6_dport	= dport,
	};
	struct dst_entry *dst;

	if (saddr && !ipv6_addr_any(saddr))
		fl6.saddr = *saddr;
	else if (sk && sk->sk_family == AF_INET6)
		fl6.saddr = sk->sk_v6_rcv_saddr;
	dst = ip6_dst_lookup_flow(net, sk, &fl6, NULL);
	if (IS_ERR(dst))
		return dst;
	*src_out = fl6.saddr;
	*cookie = rt6_get_cookie((struct rt6_info *)dst);
	return dst;
}

static bool dlcp6_local_addr(struct net *net, const struct in6_addr *addr)
{
	return ipv6_chk_addr(net, addr, NULL, 0);
}

/* multicast destinations are refused before routing (dlcp_out_route()) */
static bool dlcp6_dst_unicast(const struct dst_entry *dst)
{
	return true;
}

/* The flow label varies with @flowlabel, the packet's entropy. */
INDIRECT_CALLABLE_SCOPE int
dlcp6_xmit(struct sock *sk, struct sk_buff *skb, struct dst_entry *dst,
	   const struct in6_addr *saddr, const struct in6_addr *daddr,
	   u8 tclass, u8 nexthdr, u32 flowlabel, u32 nsegs)
{
	int hlimit = sk && sk->sk_family == AF_INET6 ?
		     inet6_sk(sk)->hop_limit : -1;
	struct net *net = sk ? sock_net(sk) : dev_net(dst->dev);
	struct ipv6hdr *hdr;

	skb_push(skb, sizeof(*hdr));
	skb_reset_network_header(skb);
	hdr = ipv6_hdr(skb);
	ip6_flow_hdr(hdr, tclass, htonl(flowlabel) & IPV6_FLOWLABEL_MASK);
	hdr->payload_len = htons(skb->len - sizeof(*hdr));
	hdr->nexthdr = nexthdr;
	hdr->hop_limit = hlimit < 0 ? ip6_dst_hoplimit(dst) : hlimit;
	hdr->saddr = *saddr;
	hdr->daddr = *daddr;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	skb_dst_set(skb, dst_clone(dst));
	return ip6_local_out(net, sk, skb);
}

/* The connected peer of an AF_INET6 socket (v4-mapped for IPv4). */
static void dlcp6_peer_addr(const struct sock *sk, struct in6_addr *addr)
{
	*addr = sk->sk_v6_daddr;
}

/* Bind an AF_INET6 socket: the IPv4 fields too, for a v4-mapped address. */
static void dlcp6_set_rcv_saddr(struct sock *sk, const struct in6_addr *addr)
{
	dlcp_af_inet.set_rcv_saddr(sk, addr);
	sk->sk_v6_rcv_saddr = *addr;
	inet6_sk(sk)->saddr = dlcp_addr_is_v4(addr) ? in6addr_any : *addr;
}

static void dlcp6_set_daddr(struct sock *sk, const struct in6_addr *addr,
			    __be16 port)
{
	dlcp_af_inet.set_daddr(sk, addr, port);
	sk->sk_v6_daddr = *addr;
}

/* Not a multicast address, nor a v4-mapped one with IPV6_V6ONLY. */
static bool dlcp6_bind_ok(const struct sock *sk, const struct in6_addr *addr)
{
	return !ipv6_addr_is_multicast(addr) &&
	       !(dlcp_addr_is_v4(addr) && sk->sk_ipv6only);
}

/* The cgroup BPF programs of the user address's family (IPv4 or IPv6). */
static int dlcp6_cgroup_addr(struct sock *sk, struct sockaddr *uaddr, int len,
			     bool bind, u32 *flags)
{
	if (uaddr->sa_family != AF_INET6)
		return dlcp_af_inet.cgroup_addr(sk, uaddr, len, bind, flags);
	if (len < SIN6_LEN_RFC2133)
		return -EINVAL;
	return bind ? dlcp_cgroup_bind(sk, uaddr, len, CGROUP_INET6_BIND, flags) :
		      dlcp_cgroup_connect6(sk, uaddr, len);
}

/* SOL_IPV6, and SOL_IP as an AF_INET socket (IPv4 peers) */
static int dlcp6_setsockopt(struct sock *sk, int level, int optname,
			    sockptr_t optval, unsigned int optlen)
{
	if (level != SOL_IPV6)
		return dlcp_af_inet.setsockopt(sk, level, optname, optval,
					       optlen);
	return ipv6_setsockopt(sk, level, optname, optval, optlen);
}

static int dlcp6_getsockopt(struct sock *sk, int level, int optname,
			    char __user *optval, int __user *optlen)
{
	if (level != SOL_IPV6)
		return dlcp_af_inet.getsockopt(sk, level, optname, optval,
					       optlen);
	return ipv6_getsockopt(sk, level, optname, optval, optlen);
}

INDIRECT_CALLABLE_SCOPE bool
dlcp6_rcv_addrs(struct sk_buff *skb, int *dif, int *sdif)
{
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct dlcp_skb_cb *cb = dlcp_cb(skb);

	/* IP6CB() shares skb->cb with the addresses: read it first */
	*dif = inet6_iif(skb);
	*sdif = inet6_sdif(skb);
	cb->saddr = ip6h->saddr;
	cb->daddr = ip6h->daddr;
	cb->dsfield = ipv6_get_dsfield(ip6h);
	/*
	 * Inside the module an IPv4 address is v4-mapped: an IPv6 packet
	 * from or to such an address would pass for IPv4 (TCP drops them).
	 */
	return !ipv6_addr_v4mapped(&cb->saddr) &&
	       !ipv6_addr_v4mapped(&cb->daddr);
}

INDIRECT_CALLABLE_SCOPE bool
dlcp6_csum_init(struct sk_buff *skb)
{
	return !skb_checksum_init(skb, dlcp_ipproto, ip6_compute_pseudo);
}

INDIRECT_CALLABLE_SCOPE bool
dlcp6_policy_check(struct sock *sk, struct sk_buff *skb)
{
	return xfrm6_policy_check(sk, XFRM_POLICY_IN, skb);
}

static bool dlcp6_icmp_pmtu(struct sk_buff *skb, struct in6_addr *saddr,
			    struct in6_addr *daddr, u32 *mtu)
{
	const struct ipv6hdr *ip6h = (const struct ipv6hdr *)skb->data;

	if (icmp6_hdr(skb)->icmp6_type != ICMPV6_PKT_TOOBIG)
		return false;
	*mtu = ntohl(icmp6_hdr(skb)->icmp6_mtu);
	*saddr = ip6h->saddr;
	*daddr = ip6h->daddr;
	return true;
}

const struct dlcp_af dlcp_af_inet6 = {
	.family		= AF_INET6,
	.net_header_len	= sizeof(struct ipv6hdr),
	.min_mtu	= IPV6_MIN_MTU,
	.max_mtu	= IP6_MAX_MTU,
	.sockaddr	= dlcp6_sockaddr,
	.fill_name	= dlcp6_fill_name,
	.local_addr	= dlcp6_local_addr,
	.route		= dlcp6_route,
	.dst_unicast	= dlcp6_dst_unicast,
	.xmit		= dlcp6_xmit,
	.peer_addr	= dlcp6_peer_addr,
	.set_rcv_saddr	= dlcp6_set_rcv_saddr,
	.set_daddr	= dlcp6_set_daddr,
	.bind_ok	= dlcp6_bind_ok,
	.cgroup_addr	= dlcp6_cgroup_addr,
	.setsockopt	= dlcp6_setsockopt,
	.getsockopt	= dlcp6_getsockopt,
	.rcv_addrs	= dlcp6_rcv_addrs,
	.csum_init	= dlcp6_csum_init,
	.policy_check	= dlcp6_policy_check,
	.icmp_pmtu	= dlcp6_icmp_pmtu,
};

/* IPv6 protocol handler */
static int dlcp6_rcv(struct sk_buff *skb)
{
	return dlcp_rcv_common(skb, &dlcp_af_inet6, false);
}

/*
 * ICMPv6 errors about a packet we sent (native mode): "packet too big"
 * updates the path MTU and re-cuts the messages to that destination, as
 * dlcp4_err() does for IPv4.
 */
static int dlcp6_err(struct sk_buff *skb, struct inet6_skb_parm *opt,
		     u8 type, u8 code, int offset, __be32 info)
{
	const struct ipv6hdr *ip6h;
	struct net *net = dev_net(skb->dev);
	const struct dlcp_hdr *h;
	struct sock *sk;

	if (type != ICMPV6_PKT_TOOBIG)
		return 0;
	/* the quote must hold our common header */
	if (!pskb_may_pull(skb, offset + DLCP_HDR_LEN)) {
		DLCP_INC_STATS(net, DLCP_MIB_ICMP_IGNORED);
		return 0;
	}
	ip6h = (const struct ipv6hdr *)skb->data;
	h = (const struct dlcp_hdr *)(skb->data + offset);
	sk = dlcp_out_err_sock(net, &ip6h->saddr, &ip6h->daddr, h,
			       skb->dev->ifindex);
	if (!sk)
		return 0;
	dlcp_ip6_sk_update_pmtu(skb, sk, info);
	dlcp_out_err_pmtu(sk, &ip6h->daddr, ntohl(info));
	return 0;
}

static struct inet6_protocol dlcpv6_protocol = {
	.handler	= dlcp6_rcv,
	.err_handler	= dlcp6_err,
	.flags		= INET6_PROTO_NOPOLICY | INET6_PROTO_FINAL,
};

static struct inet_protosw dlcpv6_protosw = {
	.type		= SOCK_DLCP,
	.protocol	= IPPROTO_DLCP,
	.prot		= &dlcpv6_prot,
	.ops		= &dlcp_inet6_ops,
	.flags		= 0,
};

int dlcp_ipv6_init(void)
{
	int err;

	dlcpv6_protosw.protocol = dlcp_ipproto;
	dlcp_proto_set_ipv6_pinfo(&dlcpv6_prot,
				  offsetof(struct dlcp6_sock, inet6));
	dlcp_proto_set_per_cpu_fw_alloc(&dlcpv6_prot,
					&dlcp_memory_per_cpu_fw_alloc);
	err = proto_register(&dlcpv6_prot, 1);
	if (err)
		return err;
	err = inet6_add_protocol(&dlcpv6_protocol, dlcp_ipproto);
	if (err) {
		proto_unregister(&dlcpv6_prot);
		return -EBUSY;
	}
	err = inet6_register_protosw(&dlcpv6_protosw);
	if (err) {
		inet6_del_protocol(&dlcpv6_protocol, dlcp_ipproto);
		proto_unregister(&dlcpv6_prot);
	}
	return err;
}

void dlcp_ipv6_exit(void)
{
	inet6_unregister_protosw(&dlcpv6_protosw);
	inet6_del_protocol(&dlcpv6_protocol, dlcp_ipproto);
	proto_unregister(&dlcpv6_prot);
}
