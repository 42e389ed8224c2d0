/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that differ between the kernels DLCP builds
 * against: Linux 5.10 up to 7.2. Each difference has one macro or inline
 * here, named after what it does, keyed on the release that changed the
 * interface upstream or, where the interface itself tells, on the
 * interface (its type, a macro it defines); the other files call these and
 * do not test the kernel's version themselves. Built and tested on Debian's
 * 5.10 (11), 6.1 and 6.12 (12) and unstable's newest (7.2); the releases
 * in between are covered by the same tests of the version, not built here
 * (dkms.conf's BUILD_EXCLUSIVE_KERNEL, packaging/README.md).
 */
#ifndef _DLCP_COMPAT_H
#define _DLCP_COMPAT_H

#include <linux/version.h>
#include <linux/bpf-cgroup.h>
#include <linux/highmem.h>
#include <linux/hrtimer.h>
#include <linux/inet_diag.h>
#include <linux/memcontrol.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/timer.h>
#include <linux/udp.h>
#include <net/inet_sock.h>
#include <net/ip6_route.h>
#include <net/protocol.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <net/sock.h>
#include <net/transp_v6.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

/* The kernel is release @major.@minor or later. */
#define DLCP_LINUX_AT_LEAST(major, minor) \
	(KERNEL_VERSION(major, minor, 0) <= LINUX_VERSION_CODE)

/* The GSO entry points (__skb_gso_segment()) have their header since 6.4 */
#if DLCP_LINUX_AT_LEAST(6, 4)
#include <net/gso.h>
#endif

/* sk_under_memory_pressure() and its kin have their header since 6.10 */
#if DLCP_LINUX_AT_LEAST(6, 10)
#include <net/proto_memory.h>
#endif

/*
 * Trace events: __assign_str() takes the field alone since 6.10 (the
 * source is the one __string() names); before, the field and the source.
 */
#if DLCP_LINUX_AT_LEAST(6, 10)
#define dlcp_assign_str(field, src)	__assign_str(field)
#else
#define dlcp_assign_str(field, src)	__assign_str(field, src)
#endif

/*
 * sysctl: proc handlers get a const struct ctl_table since 6.11;
 * dlcp_ctl_table is the table type of their first argument.
 */
#if DLCP_LINUX_AT_LEAST(6, 11)
#define dlcp_ctl_table	const struct ctl_table
#else
#define dlcp_ctl_table	struct ctl_table
#endif

/*
 * Register the first @n entries of @table under @path in @net. Since 6.6
 * their number is passed (register_net_sysctl_sz()); before, the table
 * ends at an entry with no procname, which @table must have at @n.
 */
static inline struct ctl_table_header *
dlcp_register_net_sysctl(struct net *net, const char *path,
			 struct ctl_table *table, size_t n)
{
#if DLCP_LINUX_AT_LEAST(6, 6)
	return register_net_sysctl_sz(net, path, table, n);
#else
	WARN_ON_ONCE(table[n].procname);
	return register_net_sysctl(net, path, table);
#endif
}

/*
 * AF_INET6 sockets: the ipv6_pinfo's offset in the protocol's socket is
 * given in struct proto since 6.6; before, it is the last member of the
 * socket (obj_size minus its size), which struct dlcp6_sock keeps it as.
 */
static inline void dlcp_proto_set_ipv6_pinfo(struct proto *prot,
					     unsigned int offset)
{
#if DLCP_LINUX_AT_LEAST(6, 6)
	prot->ipv6_pinfo_offset = offset;
#else
	WARN_ON(offset != prot->obj_size - sizeof(struct ipv6_pinfo));
#endif
}

/*
 * AF_INET6 sockets' IPv6 state (options, flow labels, multicast): freed by
 * the protocol's destroy up to 6.2, by the socket's destructor
 * (inet6_sock_destruct(), which inet6_create() installs) since 6.3.
 * 6.1's stable releases free it in the destructor too and keep
 * inet6_destroy_sock(), which may run twice.
 */
static inline void dlcp_inet6_destroy_sock(struct sock *sk)
{
#if !DLCP_LINUX_AT_LEAST(6, 3)
	inet6_destroy_sock(sk);
#endif
}

/*
 * IPv4 protocol handlers: before 5.16, inet_add_protocol() takes only
 * those that say they handle every network namespace (netns_ok); since,
 * all do.
 */
static inline void dlcp_net_protocol_set_netns_ok(struct net_protocol *prot)
{
#if !DLCP_LINUX_AT_LEAST(5, 16)
	prot->netns_ok = 1;
#endif
}

/* IP_FREEBIND: a bit of inet_sock.inet_flags since 6.6, a bitfield before */
static inline bool dlcp_inet_freebind(const struct sock *sk)
{
#if DLCP_LINUX_AT_LEAST(6, 6)
	return inet_test_bit(FREEBIND, sk);
#else
	return inet_sk(sk)->freebind;
#endif
}

/*
 * The TOS of an IPv4 route lookup for @sk: RT_CONN_FLAGS() while the
 * kernel has it (the socket's TOS, with SOCK_LOCALROUTE as RTO_ONLINK);
 * the kernels without it (6.12) take the scope from the socket in
 * ip_route_output_ports() (ip_sock_rt_scope()) and get the TOS alone.
 */
#ifdef RT_CONN_FLAGS
#define dlcp_rt_conn_tos(sk)	RT_CONN_FLAGS(sk)
#else
#define dlcp_rt_conn_tos(sk)	ip_sock_rt_tos(sk)
#endif

/*
 * The cgroup BPF bind and connect programs on a socket address of @len
 * bytes: since 6.7 they get the address's length (a pointer: they may
 * change it); before, the address alone. @type is the program's
 * CGROUP_INET4_BIND or CGROUP_INET6_BIND, named BPF_CGROUP_INET*_BIND
 * before 5.15. Before 5.12 a bind program cannot let a socket bind a
 * privileged port (@flags, BIND_NO_CAP_NET_BIND_SERVICE, stays 0).
 */
#if DLCP_LINUX_AT_LEAST(6, 7)
#define dlcp_cgroup_bind(sk, uaddr, len, type, flags)			\
	BPF_CGROUP_RUN_PROG_INET_BIND_LOCK(sk, uaddr, &(len), type, flags)
#define dlcp_cgroup_connect4(sk, uaddr, len)				\
	BPF_CGROUP_RUN_PROG_INET4_CONNECT_LOCK(sk, uaddr, &(len))
#define dlcp_cgroup_connect6(sk, uaddr, len)				\
	BPF_CGROUP_RUN_PROG_INET6_CONNECT_LOCK(sk, uaddr, &(len))
#else
#if DLCP_LINUX_AT_LEAST(5, 15)
#define dlcp_cgroup_bind(sk, uaddr, len, type, flags)			\
	BPF_CGROUP_RUN_PROG_INET_BIND_LOCK(sk, uaddr, type, flags)
#elif DLCP_LINUX_AT_LEAST(5, 12)
#define dlcp_cgroup_bind(sk, uaddr, len, type, flags)			\
	BPF_CGROUP_RUN_PROG_INET_BIND_LOCK(sk, uaddr, BPF_##type, flags)
#else
#define dlcp_cgroup_bind(sk, uaddr, len, type, flags)			\
	BPF_CGROUP_RUN_SA_PROG_LOCK(sk, uaddr, BPF_##type, NULL)
#endif
#define dlcp_cgroup_connect4(sk, uaddr, len)				\
	BPF_CGROUP_RUN_PROG_INET4_CONNECT_LOCK(sk, uaddr)
#define dlcp_cgroup_connect6(sk, uaddr, len)				\
	BPF_CGROUP_RUN_PROG_INET6_CONNECT_LOCK(sk, uaddr)
#endif

/* A bind program's leave to bind a privileged port: a flag since 5.12 */
#ifdef BIND_NO_CAP_NET_BIND_SERVICE
#define DLCP_BIND_NO_CAP_NET_BIND_SERVICE	BIND_NO_CAP_NET_BIND_SERVICE
#else
#define DLCP_BIND_NO_CAP_NET_BIND_SERVICE	0
#endif

/*
 * The ICMP error callback of a UDP tunnel socket (encap_err_rcv), since
 * 6.0 (before, a tunnel learns of no ICMP error: dlcp_set_encap_err_rcv()
 * sets nothing and name() is not called): up to 6.1 it gets the offset of
 * the quoted UDP header in skb->data; since 6.2 the error, the
 * destination port, the ICMP info and a pointer to what follows the quoted
 * UDP header. DLCP_ENCAP_ERR_RCV(name, fn) defines
 * name() with the kernel's signature, calling
 * fn(struct sock *sk, struct sk_buff *skb, unsigned int udp_offset).
 */
#if DLCP_LINUX_AT_LEAST(6, 2)
#define DLCP_ENCAP_ERR_RCV(name, fn)					\
static void name(struct sock *sk, struct sk_buff *skb, int err,		\
		 __be16 port, u32 info, u8 *payload)			\
{									\
	fn(sk, skb, payload - skb->data - sizeof(struct udphdr));	\
}
#else
#define DLCP_ENCAP_ERR_RCV(name, fn)					\
static void __maybe_unused name(struct sock *sk, struct sk_buff *skb,	\
				unsigned int udp_offset)		\
{									\
	fn(sk, skb, udp_offset);					\
}
#endif

#if DLCP_LINUX_AT_LEAST(6, 0)
#define dlcp_set_encap_err_rcv(cfg, fn)	((cfg)->encap_err_rcv = (fn))
#else
#define dlcp_set_encap_err_rcv(cfg, fn)	do { } while (0)
#endif

/*
 * inet_diag: since 6.9 a dump runs without inet_diag's handler mutex and
 * holds the handler's module (struct inet_diag_handler's .owner) instead,
 * so a handler in a module names it; before, the mutex that
 * inet_diag_unregister() takes kept the module.
 */
static inline void dlcp_inet_diag_set_owner(struct inet_diag_handler *h,
					    struct module *owner)
{
#if DLCP_LINUX_AT_LEAST(6, 9)
	h->owner = owner;
#endif
}

/*
 * Symbol namespaces: EXPORT_SYMBOL_NS_GPL() and MODULE_IMPORT_NS() take a
 * string literal since 6.13 and stringify an identifier before.
 * DLCP_NS(ns) gives either; @ns must not be a macro.
 */
#if DLCP_LINUX_AT_LEAST(6, 13)
#define DLCP_NS(ns)	#ns
#else
#define DLCP_NS(ns)	ns
#endif

/*
 * The proto's recvmsg: up to 5.18 with a noblock argument besides the
 * flags (MSG_DONTWAIT); since 7.0 without the address length, which it
 * sets in msg->msg_namelen itself. DLCP_PROTO_RECVMSG(name, fn) defines
 * name() with the kernel's signature, calling
 * fn(sk, msg, len, flags, int *addr_len) with MSG_DONTWAIT in the flags.
 */
#if DLCP_LINUX_AT_LEAST(7, 0)
#define DLCP_PROTO_RECVMSG(name, fn)					\
static int name(struct sock *sk, struct msghdr *msg, size_t len,	\
		int flags)						\
{									\
	int addr_len = 0, ret = fn(sk, msg, len, flags, &addr_len);	\
									\
	if (ret >= 0)							\
		msg->msg_namelen = addr_len;				\
	return ret;							\
}
#elif DLCP_LINUX_AT_LEAST(5, 19)
#define DLCP_PROTO_RECVMSG(name, fn)					\
static int name(struct sock *sk, struct msghdr *msg, size_t len,	\
		int flags, int *addr_len)				\
{									\
	return fn(sk, msg, len, flags, addr_len);			\
}
#else
#define DLCP_PROTO_RECVMSG(name, fn)					\
static int name(struct sock *sk, struct msghdr *msg, size_t len,	\
		int noblock, int flags, int *addr_len)			\
{									\
	return fn(sk, msg, len, flags | (noblock ? MSG_DONTWAIT : 0),	\
		  addr_len);						\
}
#endif

/* A datagram off @sk's receive queue; up to 5.18 noblock apart */
static inline struct sk_buff *dlcp_skb_recv_datagram(struct sock *sk,
						     unsigned int flags,
						     int *err)
{
#if DLCP_LINUX_AT_LEAST(5, 19)
	return skb_recv_datagram(sk, flags, err);
#else
	return skb_recv_datagram(sk, flags & ~MSG_DONTWAIT,
				 flags & MSG_DONTWAIT, err);
#endif
}

/*
 * The socket address of the proto_ops' bind and connect: struct
 * sockaddr_unsized since 6.19, struct sockaddr before.
 */
#if DLCP_LINUX_AT_LEAST(6, 19)
#define dlcp_ops_sockaddr	struct sockaddr_unsized
#else
#define dlcp_ops_sockaddr	struct sockaddr
#endif

/*
 * The proto's per-CPU cache of forward-allocated memory
 * (per_cpu_fw_alloc), since 6.0; before, the protocol's memory_allocated
 * is updated at once.
 */
static inline void dlcp_proto_set_per_cpu_fw_alloc(struct proto *prot,
						   int __percpu *fw_alloc)
{
#if DLCP_LINUX_AT_LEAST(6, 0)
	prot->per_cpu_fw_alloc = fw_alloc;
#endif
}

/*
 * The kernel's drop reasons of a freed packet (skb:kfree_skb): all that
 * DLCP names exist since 6.0; before, packets are freed as dropped with
 * none. DLCP_DROP_REASON(NAME) is SKB_DROP_REASON_NAME, or 0.
 */
#if DLCP_LINUX_AT_LEAST(6, 0)
#define dlcp_skb_reason		enum skb_drop_reason
#define DLCP_DROP_REASON(name)		SKB_DROP_REASON_##name
#else
#define dlcp_skb_reason		int
#define DLCP_DROP_REASON(name)		0
#endif

static inline void dlcp_kfree_skb_reason(struct sk_buff *skb,
					 dlcp_skb_reason reason)
{
#if DLCP_LINUX_AT_LEAST(6, 0)
	kfree_skb_reason(skb, reason);
#else
	kfree_skb(skb);
#endif
}

/* Report an error of @sk (its error queue): sk_error_report() since 5.12 */
static inline void dlcp_sk_error_report(struct sock *sk)
{
#if DLCP_LINUX_AT_LEAST(5, 12)
	sk_error_report(sk);
#else
	sk->sk_error_report(sk);
#endif
}

/* The socket's forward-allocated memory, as inet_diag reports it */
static inline int dlcp_sk_forward_alloc(const struct sock *sk)
{
	return READ_ONCE(sk->sk_forward_alloc);
}

/* The socket's owner: sk->sk_uid, which sock_i_uid() read up to 6.15 */
static inline kuid_t dlcp_sk_uid(const struct sock *sk)
{
	return READ_ONCE(sk->sk_uid);
}

/* The kernel's function @fn has the type @type (an interface's version) */
#define DLCP_FN_HAS_TYPE(fn, type)	__builtin_types_compatible_p(typeof(fn), type)

/*
 * inet_diag's bytecode filter: given the dump's data since it has
 * (inet_diag_bc_sk() takes struct inet_diag_dump_data), its bytecode
 * before; told apart by inet_diag_bc_sk()'s type.
 */
static inline int
dlcp_inet_diag_bc_sk(const struct inet_diag_dump_data *data, struct sock *sk)
{
	const void *bc = data;

	if (DLCP_FN_HAS_TYPE(inet_diag_bc_sk,
			     int (const struct nlattr *, struct sock *)))
		bc = data->inet_diag_nla_bc;
	return inet_diag_bc_sk(bc, sk);
}

/*
 * What the UDP tunnel calls take of the UDP socket: its struct sock, or
 * before (up to 6.18) its struct socket; told apart by
 * setup_udp_tunnel_sock()'s type.
 */
static inline void *dlcp_udp_tunnel_sock(struct socket *sock)
{
	if (DLCP_FN_HAS_TYPE(setup_udp_tunnel_sock,
			     void (struct net *, struct socket *,
				   struct udp_tunnel_sock_cfg *)))
		return sock;
	return sock->sk;
}

/*
 * A Packet Too Big for @sk's flow (the ICMP error's quoted IP header in
 * skb->data) lowers the route's PMTU. The socket's variants,
 * ipv4_sk_update_pmtu() and ip6_sk_update_pmtu(), are not exported after
 * 6.12; the flow's (ipv4_update_pmtu(), ip6_update_pmtu()) are, with the
 * socket's device, mark and owner: the route exception they make marks
 * the socket's cached route stale too.
 */
static inline void dlcp_ipv4_sk_update_pmtu(struct sk_buff *skb,
					    struct sock *sk, u32 mtu)
{
#if DLCP_LINUX_AT_LEAST(6, 13)
	const struct iphdr *iph = (const struct iphdr *)skb->data;

	ipv4_update_pmtu(skb, sock_net(sk), mtu,
			 READ_ONCE(sk->sk_bound_dev_if), iph->protocol);
#else
	ipv4_sk_update_pmtu(skb, sk, mtu);
#endif
}

static inline void dlcp_ip6_sk_update_pmtu(struct sk_buff *skb,
					   struct sock *sk, __be32 mtu)
{
#if DLCP_LINUX_AT_LEAST(6, 13)
	ip6_update_pmtu(skb, sock_net(sk), mtu,
			READ_ONCE(sk->sk_bound_dev_if),
			READ_ONCE(sk->sk_mark), dlcp_sk_uid(sk));
#else
	ip6_sk_update_pmtu(skb, sk, mtu);
#endif
}

/*
 * The UDP layer hands a UDP tunnel socket GSO packets whole when asked
 * (udp_allow_gso(), since 5.14): before, it cuts them first.
 */
static inline void dlcp_udp_allow_gso(struct sock *sk)
{
#if DLCP_LINUX_AT_LEAST(5, 14)
	udp_allow_gso(sk);
#endif
}

/*
 * The checksum state of a datagram cut from a GSO packet for a UDP
 * socket (udp_post_segment_fix_csum(), since 5.14; before, the UDP layer
 * left it as it was).
 */
static inline void dlcp_udp_post_segment_fix_csum(struct sk_buff *skb)
{
#if DLCP_LINUX_AT_LEAST(5, 14)
	udp_post_segment_fix_csum(skb);
#endif
}

/* The shared info's flags: SKBFL_SHARED_FRAG since 5.13, in tx_flags before */
static inline void dlcp_skb_set_shared_frag(struct sk_buff *skb)
{
#if DLCP_LINUX_AT_LEAST(5, 13)
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
#else
	skb_shinfo(skb)->tx_flags |= SKBTX_SHARED_FRAG;
#endif
}

/*
 * A page mapped for a short access by this thread: kmap_local_page()
 * since 5.11; before, the 64-bit kernels that DLCP runs on map all memory
 * (no HIGHMEM): the page's address.
 */
#if DLCP_LINUX_AT_LEAST(5, 11)
#define dlcp_kmap_local_page(page)	kmap_local_page(page)
#define dlcp_kunmap_local(va)		kunmap_local(va)
#elif !defined(CONFIG_HIGHMEM)
#define dlcp_kmap_local_page(page)	page_address(page)
#define dlcp_kunmap_local(va)		((void)(va))
#else
#error "DLCP needs kmap_local_page() (Linux 5.11) on a kernel with HIGHMEM"
#endif

/* krealloc() of an array of @n elements of @size bytes (krealloc_array(), 5.12) */
static inline void *dlcp_krealloc_array(void *p, size_t n, size_t size,
					gfp_t gfp)
{
	size_t bytes;

	if (unlikely(check_mul_overflow(n, size, &bytes)))
		return NULL;
	return krealloc(p, bytes, gfp);
}

/* A random number below @ceil: get_random_u32_below() since 6.2 */
static inline u32 dlcp_random_below(u32 ceil)
{
#if DLCP_LINUX_AT_LEAST(6, 2)
	return get_random_u32_below(ceil);
#else
	return (u32)(((u64)get_random_u32() * ceil) >> 32);
#endif
}

/*
 * The memory cgroup a page is charged to, or NULL: page_memcg_check()
 * since 5.11, page->mem_cgroup before.
 */
static inline struct mem_cgroup *dlcp_page_memcg_of(struct page *page)
{
#if DLCP_LINUX_AT_LEAST(5, 11)
	return page_memcg_check(page);
#elif defined(CONFIG_MEMCG)
	return READ_ONCE(page->mem_cgroup);
#else
	return NULL;
#endif
}

/*
 * Timers: timer_container_of() (from_timer() before 6.16) finds a timer's
 * structure; timer_delete_sync() is del_timer_sync() before 6.2;
 * hrtimer_setup() (6.13) initializes an hrtimer with its function.
 */
#ifdef timer_container_of
#define dlcp_timer_container_of(var, timer, field)			\
	timer_container_of(var, timer, field)
#else
#define dlcp_timer_container_of(var, timer, field)			\
	from_timer(var, timer, field)
#endif

static inline int dlcp_timer_delete_sync(struct timer_list *timer)
{
#if DLCP_LINUX_AT_LEAST(6, 2)
	return timer_delete_sync(timer);
#else
	return del_timer_sync(timer);
#endif
}

static inline void
dlcp_hrtimer_setup(struct hrtimer *timer,
		   enum hrtimer_restart (*fn)(struct hrtimer *),
		   clockid_t clock, enum hrtimer_mode mode)
{
#if DLCP_LINUX_AT_LEAST(6, 13)
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

#endif /* _DLCP_COMPAT_H */
