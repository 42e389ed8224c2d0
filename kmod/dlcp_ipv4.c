// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP over IPv4: the family's ops (socket addresses, routes, the IP
 * header), the IPv4 protocol handler and ICMP "fragmentation needed".
 *
 * Inside the module an IPv4 address is a v4-mapped in6_addr; this file
 * converts at the edges: struct sockaddr_in in and out of the socket
 * calls, the flowi4 of a route, the IPv4 header of a packet.
 */
#include <linux/bpf-cgroup.h>
#include <linux/icmp.h>
#include <net/icmp.h>
#include <net/inet_common.h>
#include <net/ip.h>
#include <net/protocol.h>
#include <net/route.h>
#include <net/xfrm.h>
#include "dlcp_impl.h"

static int dlcp4_sockaddr(struct sock *sk, const struct sockaddr *uaddr,
			  int len, struct in6_addr *addr, __be16 *port)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)uaddr;

	if (uaddr->sa_family != AF_INET)
		return -EAFNOSUPPORT;
	if (len < (int)sizeof(*sin))
		return -EINVAL;
	ipv6_addr_set_v4mapped(sin->sin_addr.s_addr, addr);
	*port = sin->sin_port;
	return 0;
}

static void dlcp4_fill_name(struct msghdr *msg, const struct in6_addr *addr,
			    __be16 port, int *addr_len)
{
	DECLARE_SOCKADDR(struct sockaddr_in *, sin, msg->msg_name);

	sin->sin_family = AF_INET;
	sin->sin_port = port;
	sin->sin_addr.s_addr = addr->s6_addr32[3];
	memset(sin->sin_zero, 0, sizeof(sin->sin_zero));
	*addr_len = sizeof(*sin);
}

static bool dlcp4_local_addr(struct net *net, const struct in6_addr *addr)
{
	return !addr->s6_addr32[3] ||
	       inet_addr_type(net, addr->s6_addr32[3]) == RTN_LOCAL;
}

static struct dst_entry *dlcp4_route(struct net *net, struct sock *sk,
				     const struct in6_addr *saddr,
				     const struct in6_addr *daddr,
				     __be16 sport, __be16 dport, int oif,
				     struct in6_addr *src, u32 *cookie)
{
	__be32 from = saddr ? saddr->s6_addr32[3] : 0;
	struct flowi4 fl4;
	struct rtable *rt;

	if (!from && sk)
		from = inet_sk(sk)->inet_saddr;
	rt = ip_route_output_ports(net, &fl4, sk, daddr->s6_addr32[3],
				   from, dport, sport, dlcp_ipproto,
				   sk ? dlcp_rt_conn_tos(sk) : 0, oif);
	if (IS_ERR(rt))
		return ERR_CAST(rt);
	ipv6_addr_set_v4mapped(fl4.saddr, src);
	*cookie = 0;
	return &rt->dst;
}

static bool dlcp4_dst_unicast(const struct dst_entry *dst)
{
	const struct rtable *rt = container_of(dst, struct rtable, dst);

	return !(rt->rt_flags & (RTCF_BROADCAST | RTCF_MULTICAST));
}

INDIRECT_CALLABLE_SCOPE int
dlcp4_xmit(struct sock *sk, struct sk_buff *skb, struct dst_entry *dst,
	   const struct in6_addr *saddr, const struct in6_addr *daddr, u8 tos,
	   u8 proto, u32 entropy, u32 nsegs)
{
	struct net *net = sk ? sock_net(sk) : dev_net(dst->dev);
	int ttl = sk ? inet_sk(sk)->uc_ttl : -1;
	struct iphdr *iph;

	skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = tos;
	iph->frag_off = htons(IP_DF);
	iph->ttl = ttl < 0 ? ip4_dst_hoplimit(dst) : ttl;
	iph->protocol = proto;
	iph->saddr = saddr->s6_addr32[3];
	iph->daddr = daddr->s6_addr32[3];
	iph->tot_len = htons(skb->len);
	skb->protocol = htons(ETH_P_IP);
	skb_dst_set(skb, dst_clone(dst));
	ip_select_ident_segs(net, skb, NULL, nsegs);
	return ip_local_out(net, sk, skb);
}

/* The connected peer of an AF_INET socket. */
static void dlcp4_peer_addr(const struct sock *sk, struct in6_addr *addr)
{
	ipv6_addr_set_v4mapped(inet_sk(sk)->inet_daddr, addr);
}

/* The IPv4 fields of a bound address (AF_INET6 sockets have them too). */
static void dlcp4_set_rcv_saddr(struct sock *sk, const struct in6_addr *addr)
{
	__be32 v4 = dlcp_addr_is_v4(addr) ? addr->s6_addr32[3] : 0;

	inet_sk(sk)->inet_rcv_saddr = v4;
	inet_sk(sk)->inet_saddr = v4;
}

/* The IPv4 fields of the connected peer (AF_INET6 sockets have them too). */
static void dlcp4_set_daddr(struct sock *sk, const struct in6_addr *addr,
			    __be16 port)
{
	inet_sk(sk)->inet_daddr = dlcp_addr_is_v4(addr) ? addr->s6_addr32[3] : 0;
	inet_sk(sk)->inet_dport = port;
}

/* Any local address: dlcp_local_addr() checks that it is one. */
static bool dlcp4_bind_ok(const struct sock *sk, const struct in6_addr *addr)
{
	return true;
}

/* The cgroup BPF programs of IPv4 on a sockaddr_in (either family's socket) */
static int dlcp4_cgroup_addr(struct sock *sk, struct sockaddr *uaddr, int len,
			     bool bind, u32 *flags)
{
	if (uaddr->sa_family != AF_INET)
		return 0;
	if (len < (int)sizeof(struct sockaddr_in))
		return -EINVAL;
	return bind ? dlcp_cgroup_bind(sk, uaddr, len, CGROUP_INET4_BIND, flags) :
		      dlcp_cgroup_connect4(sk, uaddr, len);
}

static int dlcp4_setsockopt(struct sock *sk, int level, int optname,
			    sockptr_t optval, unsigned int optlen)
{
	if (level != SOL_IP)
		return -ENOPROTOOPT;
	return ip_setsockopt(sk, level, optname, optval, optlen);
}

static int dlcp4_getsockopt(struct sock *sk, int level, int optname,
			    char __user *optval, int __user *optlen)
{
	if (level != SOL_IP)
		return -ENOPROTOOPT;
	return ip_getsockopt(sk, level, optname, optval, optlen);
}

INDIRECT_CALLABLE_SCOPE bool
dlcp4_rcv_addrs(struct sk_buff *skb, int *dif, int *sdif)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct dlcp_skb_cb *cb = dlcp_cb(skb);

	/* IPCB() shares skb->cb with the addresses: read it first */
	*dif = inet_iif(skb);
	*sdif = inet_sdif(skb);
	ipv6_addr_set_v4mapped(iph->saddr, &cb->saddr);
	ipv6_addr_set_v4mapped(iph->daddr, &cb->daddr);
	cb->dsfield = iph->tos;
	return true;
}

INDIRECT_CALLABLE_SCOPE bool
dlcp4_csum_init(struct sk_buff *skb)
{
	return !skb_checksum_init(skb, dlcp_ipproto, inet_compute_pseudo);
}

INDIRECT_CALLABLE_SCOPE bool
dlcp4_policy_check(struct sock *sk, struct sk_buff *skb)
{
	return xfrm4_policy_check(sk, XFRM_POLICY_IN, skb);
}

static bool dlcp4_icmp_pmtu(struct sk_buff *skb, struct in6_addr *saddr,
			    struct in6_addr *daddr, u32 *mtu)
{
	const struct iphdr *iph = (const struct iphdr *)skb->data;

	if (icmp_hdr(skb)->type != ICMP_DEST_UNREACH ||
	    icmp_hdr(skb)->code != ICMP_FRAG_NEEDED)
		return false;
	*mtu = ntohs(icmp_hdr(skb)->un.frag.mtu);
	ipv6_addr_set_v4mapped(iph->saddr, saddr);
	ipv6_addr_set_v4mapped(iph->daddr, daddr);
	return true;
}

const struct dlcp_af dlcp_af_inet = {
	.family		= AF_INET,
	.net_header_len	= sizeof(struct iphdr),
	.min_mtu	= 576,
	.max_mtu	= IP_MAX_MTU,
	.sockaddr	= dlcp4_sockaddr,
	.fill_name	= dlcp4_fill_name,
	.local_addr	= dlcp4_local_addr,
	.route		= dlcp4_route,
	.dst_unicast	= dlcp4_dst_unicast,
	.xmit		= dlcp4_xmit,
	.peer_addr	= dlcp4_peer_addr,
	.set_rcv_saddr	= dlcp4_set_rcv_saddr,
	.set_daddr	= dlcp4_set_daddr,
	.bind_ok	= dlcp4_bind_ok,
	.cgroup_addr	= dlcp4_cgroup_addr,
	.setsockopt	= dlcp4_setsockopt,
	.getsockopt	= dlcp4_getsockopt,
	.rcv_addrs	= dlcp4_rcv_addrs,
	.csum_init	= dlcp4_csum_init,
	.policy_check	= dlcp4_policy_check,
	.icmp_pmtu	= dlcp4_icmp_pmtu,
};

/* IPv4 protocol handler */
static int dlcp4_rcv(struct sk_buff *skb)
{
	return dlcp_rcv_common(skb, &dlcp_af_inet, false);
}

/*
 * ICMP errors about a packet we sent (native mode). "Fragmentation
 * needed" updates the route's path MTU and re-cuts the messages to that
 * destination whose segments no longer fit; other errors are left to the
 * guard timer (a silent peer fails after msg_timeout_ms).
 */
static int dlcp4_err(struct sk_buff *skb, u32 info)
{
	const struct iphdr *iph = (const struct iphdr *)skb->data;
	int type = icmp_hdr(skb)->type, code = icmp_hdr(skb)->code;
	struct net *net = dev_net(skb->dev);
	struct in6_addr saddr, daddr;
	const struct dlcp_hdr *h;
	struct sock *sk;

	if (type != ICMP_DEST_UNREACH || code != ICMP_FRAG_NEEDED)
		return 0;
	/* the quote must hold our common header (RFC 1812 routers quote it) */
	if (!pskb_may_pull(skb, iph->ihl * 4 + DLCP_HDR_LEN)) {
		DLCP_INC_STATS(net, DLCP_MIB_ICMP_IGNORED);
		return 0;
	}
	iph = (const struct iphdr *)skb->data;
	h = (const struct dlcp_hdr *)(skb->data + iph->ihl * 4);
	ipv6_addr_set_v4mapped(iph->saddr, &saddr);
	ipv6_addr_set_v4mapped(iph->daddr, &daddr);
	sk = dlcp_out_err_sock(net, &saddr, &daddr, h, skb->dev->ifindex);
	if (!sk)
		return 0;
	dlcp_ipv4_sk_update_pmtu(skb, sk, info);
	dlcp_out_err_pmtu(sk, &daddr, info);
	return 0;
}

/*
 * Policy is checked per packet by dlcp_rcv_common() (xfrm4_policy_check()
 * once the socket is known), as UDP does.
 */
static struct net_protocol dlcp_protocol = {
	.handler	= dlcp4_rcv,
	.err_handler	= dlcp4_err,
	.no_policy	= 1,
};

static struct inet_protosw dlcp_protosw = {
	.type		= SOCK_DLCP,
	.protocol	= IPPROTO_DLCP,
	.prot		= &dlcp_prot,
	.ops		= &dlcp_inet_ops,
	.flags		= 0,
};

int dlcp_ipv4_init(void)
{
	dlcp_protosw.protocol = dlcp_ipproto;
	dlcp_net_protocol_set_netns_ok(&dlcp_protocol);
	if (inet_add_protocol(&dlcp_protocol, dlcp_ipproto))
		return -EBUSY;
	inet_register_protosw(&dlcp_protosw);
	return 0;
}

/* inet_del_protocol() waits for receivers still in dlcp4_rcv() */
void dlcp_ipv4_exit(void)
{
	inet_unregister_protosw(&dlcp_protosw);
	inet_del_protocol(&dlcp_protocol, dlcp_ipproto);
}
