// SPDX-License-Identifier: GPL-2.0
/*
 * The DLCP port table: bound sockets by (network namespace, port), the
 * receive path's socket lookup (address, port, device) and port
 * allocation for bind() and autobind. IPv4 and IPv6 sockets share one
 * port space, as UDP's do.
 *
 * Writers hold dlcp_port_lock; the receive path looks up under RCU
 * (sockets are SOCK_RCU_FREE) and takes a reference.
 */
#include <linux/hash.h>
#include <linux/random.h>
#include <net/inet_hashtables.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include "dlcp_impl.h"

#define DLCP_PORT_HASH_BITS	8

/* Bound sockets by (netns, port); writers hold dlcp_port_lock, readers RCU */
static struct hlist_head dlcp_port_hash[1 << DLCP_PORT_HASH_BITS];
static DEFINE_SPINLOCK(dlcp_port_lock);

static struct hlist_head *dlcp_port_bucket(const struct net *net, u16 port)
{
	return &dlcp_port_hash[hash_32(net_hash_mix(net) ^ port,
				       DLCP_PORT_HASH_BITS)];
}

static bool dlcp_port_used(const struct net *net, u16 port)
	__must_hold(&dlcp_port_lock)
{
	struct dlcp_sock *dsk;

	lockdep_assert_held(&dlcp_port_lock);
	hlist_for_each_entry(dsk, dlcp_port_bucket(net, port), port_node)
		if (net_eq(sock_net(&dsk->inet.sk), net) &&
		    dsk->inet.inet_num == port)
			return true;
	return false;
}

/* Bind @sk to @snum, or to a free ephemeral port if @snum is 0. */
int dlcp_get_port(struct sock *sk, unsigned short snum)
{
	struct net *net = sock_net(sk);
	int low, high, remaining, err = 0;
	u16 port;

	spin_lock_bh(&dlcp_port_lock);
	if (snum) {
		if (dlcp_port_used(net, snum)) {
			err = -EADDRINUSE;
			goto out;
		}
		port = snum;
	} else {
		inet_get_local_port_range(net, &low, &high);
		remaining = high - low + 1;
		port = low + dlcp_random_below(remaining);
		while (dlcp_port_used(net, port) ||
		       inet_is_local_reserved_port(net, port)) {
			if (--remaining <= 0) {
				err = -EADDRINUSE;
				goto out;
			}
			port = port >= high ? low : port + 1;
		}
	}
	inet_sk(sk)->inet_num = port;
	inet_sk(sk)->inet_sport = htons(port);
	hlist_add_head_rcu(&dlcp_sk(sk)->port_node, dlcp_port_bucket(net, port));
	sock_prot_inuse_add(net, sk->sk_prot, 1);
out:
	spin_unlock_bh(&dlcp_port_lock);
	return err;
}

void dlcp_unhash(struct sock *sk)
{
	spin_lock_bh(&dlcp_port_lock);
	if (!hlist_unhashed(&dlcp_sk(sk)->port_node)) {
		hlist_del_init_rcu(&dlcp_sk(sk)->port_node);
		sock_prot_inuse_add(sock_net(sk), sk->sk_prot, -1);
	}
	spin_unlock_bh(&dlcp_port_lock);
}

int dlcp_hash(struct sock *sk)
{
	return 0;	/* sockets are hashed by dlcp_get_port() */
}

/*
 * May a packet to @daddr reach @sk? An AF_INET socket takes IPv4 only; an
 * AF_INET6 one takes IPv6, and IPv4 (v4-mapped) unless IPV6_V6ONLY. Both
 * take any address when bound to the wildcard.
 */
static bool dlcp_addr_match(const struct sock *sk, const struct in6_addr *daddr)
{
	if (sk->sk_family == AF_INET) {
		__be32 bound = inet_sk(sk)->inet_rcv_saddr;

		return dlcp_addr_is_v4(daddr) &&
		       (!bound || bound == daddr->s6_addr32[3]);
	}
	if (dlcp_addr_is_v4(daddr) && sk->sk_ipv6only)
		return false;
	return ipv6_addr_any(&sk->sk_v6_rcv_saddr) ||
	       ipv6_addr_equal(&sk->sk_v6_rcv_saddr, daddr);
}

/*
 * May a packet that arrived on interface @dif (@sdif: its VRF slave, or 0)
 * reach @sk? A socket bound to a device (SO_BINDTODEVICE, a VRF) takes
 * only what arrives there; an unbound one takes what arrives in a VRF only
 * with net.ipv4.udp_l3mdev_accept, as UDP sockets do.
 */
static bool dlcp_dev_match(struct net *net, const struct sock *sk, int dif,
			   int sdif)
{
	bool l3mdev_accept = true;

#if IS_ENABLED(CONFIG_NET_L3_MASTER_DEV)
	l3mdev_accept = READ_ONCE(net->ipv4.sysctl_udp_l3mdev_accept);
#endif
	return inet_bound_dev_eq(l3mdev_accept,
				 READ_ONCE(sk->sk_bound_dev_if), dif, sdif);
}

/*
 * Find the socket bound to @dport and @daddr (or the wildcard address),
 * and to interface @dif or @sdif if bound to one (dlcp_dev_match()). The
 * port space is shared by both families. Called under RCU; returns a
 * referenced socket or NULL.
 */
struct sock *dlcp_lookup(struct net *net, const struct in6_addr *daddr,
			 __be16 dport, int dif, int sdif)
{
	u16 port = ntohs(dport);
	struct dlcp_sock *dsk;

	hlist_for_each_entry_rcu(dsk, dlcp_port_bucket(net, port), port_node) {
		struct sock *sk = &dsk->inet.sk;

		if (!net_eq(sock_net(sk), net) || dsk->inet.inet_num != port)
			continue;
		if (!dlcp_addr_match(sk, daddr) ||
		    !dlcp_dev_match(net, sk, dif, sdif))
			continue;
		return refcount_inc_not_zero(&sk->sk_refcnt) ? sk : NULL;
	}
	return NULL;
}

/* The socket of @net bound to @port (any address), referenced, or NULL. */
struct sock *dlcp_port_sock(struct net *net, __be16 port)
{
	u16 num = ntohs(port);
	struct dlcp_sock *dsk;
	struct sock *sk = NULL;

	rcu_read_lock();
	hlist_for_each_entry_rcu(dsk, dlcp_port_bucket(net, num), port_node) {
		if (net_eq(sock_net(&dsk->inet.sk), net) &&
		    dsk->inet.inet_num == num) {
			if (refcount_inc_not_zero(&dsk->inet.sk.sk_refcnt))
				sk = &dsk->inet.sk;
			break;
		}
	}
	rcu_read_unlock();
	return sk;
}

/*
 * Call @fn for every socket of @net bound to a port, under dlcp_port_lock
 * (@fn must not sleep, nor take dlcp_sock.lock). With @pos, the walk goes
 * on from where an earlier one stopped: pos[0] is a bucket of the port
 * table, pos[1] the sockets of @net in it already seen (both 0 at first).
 * When @fn returns non-zero the walk stops and @pos is left at that
 * socket, so that a later call (the next part of a netlink dump) begins
 * with it. Returns what @fn returned, or 0 at the end of the table.
 */
int dlcp_walk_socks(struct net *net, long *pos,
		    int (*fn)(struct sock *sk, void *arg), void *arg)
{
	unsigned long bucket = pos ? pos[0] : 0, skip = pos ? pos[1] : 0;
	unsigned long num = 0;
	struct dlcp_sock *dsk;
	int ret = 0;

	spin_lock_bh(&dlcp_port_lock);
	for (; bucket < ARRAY_SIZE(dlcp_port_hash); bucket++, skip = 0) {
		num = 0;
		hlist_for_each_entry(dsk, &dlcp_port_hash[bucket], port_node) {
			if (!net_eq(sock_net(&dsk->inet.sk), net))
				continue;
			if (num < skip) {
				num++;
				continue;
			}
			ret = fn(&dsk->inet.sk, arg);
			if (ret)
				goto out;
			num++;
		}
	}
out:
	spin_unlock_bh(&dlcp_port_lock);
	if (pos) {
		pos[0] = bucket;
		pos[1] = num;
	}
	return ret;
}
