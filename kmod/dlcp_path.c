// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP host multipath (DLCP_PATHS): a socket given several output
 * interfaces sprays the data packets of every message over them, packet by
 * packet, weighted round robin. Multi-rail hosts use every rail for one
 * message, and since the receiver places each packet by its offset, paths
 * of different delay cost nothing but their own delay.
 *
 * The source address is the same on every path: the receiver knows a
 * message by its sender's address, port and id. It is the socket's bound
 * address, or the one the ordinary route picks; routing-on-the-host
 * fabrics give the host such an address (on lo or a dummy device) that
 * every rail reaches. Control packets (PROBE, ABORT) and the receiver's
 * replies follow the ordinary routes.
 *
 * A message takes a copy of the socket's paths at sendmsg(), with a route
 * cache per path: later DLCP_PATHS changes apply to later messages. Its
 * segment size fits the smallest MTU of its paths. A path with no route
 * to the destination (interface down, no route via it) is skipped for the
 * packet and counted (DlcpOutPathSkipped), and retried on the next round.
 *
 * Locking: dlcp_sock.paths and the per-message path state are protected by
 * dlcp_sock.lock.
 */
#include <linux/netdevice.h>
#include <net/dst.h>
#include <net/l3mdev.h>
#include <net/route.h>
#include "dlcp_impl.h"

/*
 * May @sk send over interface @ifindex? Any existing one if the socket is
 * bound to no device; else only that device (SO_BINDTODEVICE) or, for a
 * VRF, a device enslaved to it: DLCP_PATHS does not lead out of the
 * socket's device or VRF. -ENODEV: no such device; -EINVAL: not allowed.
 */
static int dlcp_path_allowed(struct sock *sk, int ifindex)
{
	int bound = READ_ONCE(sk->sk_bound_dev_if);
	struct net_device *dev;
	int err = 0;

	rcu_read_lock();
	dev = dev_get_by_index_rcu(sock_net(sk), ifindex);
	if (!dev)
		err = -ENODEV;
	else if (bound && ifindex != bound &&
		 l3mdev_master_ifindex_rcu(dev) != bound)
		err = -EINVAL;
	rcu_read_unlock();
	return err;
}

/* DLCP_PATHS: validate and install an array of struct dlcp_path. */
int dlcp_path_setsockopt(struct sock *sk, sockptr_t optval,
			 unsigned int optlen)
{
	struct dlcp_path paths[DLCP_MAX_PATHS];
	struct dlcp_sock *dsk = dlcp_sk(sk);
	unsigned int i, n = optlen / sizeof(paths[0]);

	if (optlen % sizeof(paths[0]) || n > DLCP_MAX_PATHS)
		return -EINVAL;
	if (copy_from_sockptr(paths, optval, optlen))
		return -EFAULT;
	for (i = 0; i < n; i++) {
		int err;

		if (paths[i].reserved || !paths[i].ifindex ||
		    paths[i].weight > DLCP_PATH_WEIGHT_MAX ||
		    paths[i].ifindex > INT_MAX)
			return -EINVAL;
		if (!paths[i].weight)
			paths[i].weight = 1;
		err = dlcp_path_allowed(sk, paths[i].ifindex);
		if (err)
			return err;
	}
	spin_lock_bh(&dsk->lock);
	memcpy(dsk->paths, paths, optlen);
	dsk->nr_paths = n;
	spin_unlock_bh(&dsk->lock);
	return 0;
}

int dlcp_path_getsockopt(struct sock *sk, char __user *optval,
			 int __user *optlen)
{
	struct dlcp_path paths[DLCP_MAX_PATHS];
	struct dlcp_sock *dsk = dlcp_sk(sk);
	int len, size;

	if (get_user(len, optlen))
		return -EFAULT;
	spin_lock_bh(&dsk->lock);
	size = dsk->nr_paths * sizeof(paths[0]);
	memcpy(paths, dsk->paths, size);
	spin_unlock_bh(&dsk->lock);
	if (len < size)
		return -EINVAL;
	if (put_user(size, optlen) || copy_to_user(optval, paths, size))
		return -EFAULT;
	return 0;
}

/* Route @m over path @p, from the message's source address. */
static struct dst_entry *dlcp_path_route(struct sock *sk,
					 struct dlcp_out_msg *m,
					 struct dlcp_msg_path *p)
{
	struct in6_addr src;
	struct dst_entry *dst;

	if (dlcp_dst_valid(p->dst, p->cookie))
		return p->dst;
	dst_release(p->dst);
	p->dst = NULL;
	dst = dlcp_route(sk, &m->saddr, &m->daddr, inet_sk(sk)->inet_sport,
			 m->dport, p->ifindex, &src, &p->cookie);
	if (IS_ERR(dst))
		return NULL;
	if (!ipv6_addr_equal(&src, &m->saddr)) {
		/* the interface has its own address: not ours to use */
		dst_release(dst);
		return NULL;
	}
	p->dst = dst;
	return dst;
}

/*
 * sendmsg(), @m routed: give @m a copy of the socket's paths, each routed,
 * and cut it for the smallest MTU among them. -EHOSTUNREACH if none has a
 * route to the destination, -EINVAL if the socket was bound to a device
 * that excludes one of them after DLCP_PATHS was set.
 */
int dlcp_path_attach(struct sock *sk, struct dlcp_out_msg *m)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_path paths[DLCP_MAX_PATHS];
	u32 i, n, routed = 0;

	spin_lock_bh(&dsk->lock);
	n = dsk->nr_paths;
	memcpy(paths, dsk->paths, n * sizeof(paths[0]));
	spin_unlock_bh(&dsk->lock);
	if (!n)
		return 0;
	m->paths = kcalloc(n, sizeof(*m->paths), GFP_KERNEL_ACCOUNT);
	if (!m->paths)
		return -ENOMEM;
	m->nr_paths = n;
	for (i = 0; i < n; i++) {
		struct dlcp_msg_path *p = &m->paths[i];
		struct dst_entry *dst;

		if (dlcp_path_allowed(sk, paths[i].ifindex) == -EINVAL)
			return -EINVAL;
		p->ifindex = paths[i].ifindex;
		p->weight = paths[i].weight;
		dst = dlcp_path_route(sk, m, p);
		if (!dst)
			continue;
		routed++;
		m->seg_size = min(m->seg_size,
				  dlcp_xmit_payload(&m->daddr, m->udp, dst_mtu(dst)));
	}
	m->path_left = m->paths[0].weight;
	return routed ? 0 : -EHOSTUNREACH;
}

/*
 * The route for @m's next data packet: the current path while it has
 * packets left this round, then the next one. Paths without a route are
 * skipped; NULL if no path has one now (the guard timer retries).
 */
struct dst_entry *dlcp_path_next(struct sock *sk, struct dlcp_out_msg *m)
	__must_hold(&dlcp_sk(sk)->lock)
{
	u32 tries;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	for (tries = 0; tries < m->nr_paths; tries++) {
		struct dlcp_msg_path *p;
		struct dst_entry *dst;

		if (!m->path_left) {
			m->path_cur = (m->path_cur + 1) % m->nr_paths;
			m->path_left = m->paths[m->path_cur].weight;
		}
		p = &m->paths[m->path_cur];
		dst = dlcp_path_route(sk, m, p);
		if (dst) {
			m->path_left--;
			return dst;
		}
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_OUT_PATH_SKIPPED);
		m->path_left = 0;
	}
	return NULL;
}

/* Drop the cached routes of @m's paths (the next packet routes again). */
void dlcp_path_forget_routes(struct dlcp_out_msg *m)
{
	u32 i;

	for (i = 0; i < m->nr_paths; i++) {
		dst_release(m->paths[i].dst);
		m->paths[i].dst = NULL;
	}
}

void dlcp_path_free(struct dlcp_out_msg *m)
{
	dlcp_path_forget_routes(m);
	kfree(m->paths);
	m->paths = NULL;
	m->nr_paths = 0;
}
