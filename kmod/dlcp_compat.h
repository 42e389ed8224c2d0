/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that differ between the kernels DLCP builds
 * against: Linux 6.1 (Debian 12) and 6.12 (Debian 12's second kernel).
 * Each difference has one macro or inline here, named after what it does,
 * tested on the release that changed the interface (upstream's; or on the
 * interface itself); the other files call these and do not test the
 * kernel's version themselves. Only 6.1 and 6.12 are built and tested
 * (dkms.conf's BUILD_EXCLUSIVE_KERNEL).
 */
#ifndef _DLCP_COMPAT_H
#define _DLCP_COMPAT_H

#include <linux/version.h>
#include <linux/bpf-cgroup.h>
#include <linux/inet_diag.h>
#include <linux/sysctl.h>
#include <net/inet_sock.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <net/sock.h>
#include <net/transp_v6.h>

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
 * change it); before, the address alone.
 */
#if DLCP_LINUX_AT_LEAST(6, 7)
#define dlcp_cgroup_bind(sk, uaddr, len, type, flags)			\
	BPF_CGROUP_RUN_PROG_INET_BIND_LOCK(sk, uaddr, &(len), type, flags)
#define dlcp_cgroup_connect4(sk, uaddr, len)				\
	BPF_CGROUP_RUN_PROG_INET4_CONNECT_LOCK(sk, uaddr, &(len))
#define dlcp_cgroup_connect6(sk, uaddr, len)				\
	BPF_CGROUP_RUN_PROG_INET6_CONNECT_LOCK(sk, uaddr, &(len))
#else
#define dlcp_cgroup_bind(sk, uaddr, len, type, flags)			\
	BPF_CGROUP_RUN_PROG_INET_BIND_LOCK(sk, uaddr, type, flags)
#define dlcp_cgroup_connect4(sk, uaddr, len)				\
	BPF_CGROUP_RUN_PROG_INET4_CONNECT_LOCK(sk, uaddr)
#define dlcp_cgroup_connect6(sk, uaddr, len)				\
	BPF_CGROUP_RUN_PROG_INET6_CONNECT_LOCK(sk, uaddr)
#endif

/*
 * The ICMP error callback of a UDP tunnel socket (encap_err_rcv): up to
 * 6.1 it gets the offset of the quoted UDP header in skb->data; since 6.2
 * the error, the destination port, the ICMP info and a pointer to what
 * follows the quoted UDP header. DLCP_ENCAP_ERR_RCV(name, fn) defines
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
static void name(struct sock *sk, struct sk_buff *skb,			\
		 unsigned int udp_offset)				\
{									\
	fn(sk, skb, udp_offset);					\
}
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

#endif /* _DLCP_COMPAT_H */
