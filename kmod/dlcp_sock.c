// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP socket calls: bind, connect, sendmsg, recvmsg, poll, socket
 * options, control messages and close.
 *
 * DLCP sockets are connectionless message sockets (SOCK_RDM): one
 * sendmsg() is one message, one recvmsg() returns one whole message. The
 * socket lock (lock_sock) serialises bind, connect and setsockopt; the
 * protocol state is under dlcp_sock.lock (see dlcp_impl.h).
 */
#include <linux/bitmap.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/inet_common.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/transp_v6.h>
#include <net/route.h>
#include <net/sock.h>
#include "dlcp_impl.h"
#include "dlcp_trace.h"

/*
 * What the socket may hold of received data: SO_RCVBUF if the application
 * set it (it may lower its own limit as well as raise it), else at least
 * net.dlcp.rmem, so that a 64 MiB tensor needs no tuning.
 */
u32 dlcp_rcvbuf_limit(const struct sock *sk)
{
	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK)
		return READ_ONCE(sk->sk_rcvbuf);
	return max_t(u32, READ_ONCE(sk->sk_rcvbuf),
		     READ_ONCE(dlcp_pernet(sock_net(sk))->rmem));
}

static u64 dlcp_sndbuf_limit(const struct sock *sk)
{
	return max_t(u32, READ_ONCE(sk->sk_sndbuf),
		     READ_ONCE(dlcp_pernet(sock_net(sk))->wmem));
}

/*
 * A socket address from user space, in the family of @sk, as an
 * in6_addr (v4-mapped for IPv4) and a port (not checked here).
 */
static int dlcp_sockaddr(struct sock *sk, const struct sockaddr *uaddr,
			 int len, struct in6_addr *addr, __be16 *port)
{
	if (len < (int)sizeof(sa_family_t))
		return -EINVAL;
	return dlcp_sk_af(sk)->sockaddr(sk, uaddr, len, addr, port);
}

/* Validate a destination address from user space. */
static int dlcp_dest(struct sock *sk, const struct sockaddr *uaddr, int len,
		     struct in6_addr *addr, __be16 *port)
{
	int err = dlcp_sockaddr(sk, uaddr, len, addr, port);

	if (!err && !*port)
		err = -EINVAL;
	return err;
}

/* Is @addr one of ours (or may it be, with IP_FREEBIND)? */
static bool dlcp_local_addr(struct sock *sk, const struct in6_addr *addr)
{
	if (dlcp_inet_freebind(sk) || ipv6_addr_any(addr))
		return true;
	return dlcp_af_of(addr)->local_addr(sock_net(sk), addr);
}

static int dlcp_bind(struct socket *sock, dlcp_ops_sockaddr *ops_addr,
		     int len)
{
	struct sockaddr *uaddr = (struct sockaddr *)ops_addr;
	struct sock *sk = sock->sk;
	struct net *net = sock_net(sk);
	struct in6_addr addr;
	u32 flags = 0;
	__be16 port;
	u16 snum;
	int err;

	if (len < (int)sizeof(sa_family_t))
		return -EINVAL;
	err = dlcp_sk_af(sk)->cgroup_addr(sk, uaddr, len, true, &flags);
	if (err)
		return err;
	err = dlcp_sockaddr(sk, uaddr, len, &addr, &port);
	if (err)
		return err;
	if (!dlcp_sk_af(sk)->bind_ok(sk, &addr))
		return -EINVAL;
	if (!dlcp_local_addr(sk, &addr))
		return -EADDRNOTAVAIL;
	snum = ntohs(port);
	if (snum && inet_port_requires_bind_service(net, snum) &&
	    !(flags & DLCP_BIND_NO_CAP_NET_BIND_SERVICE) &&
	    !ns_capable(net->user_ns, CAP_NET_BIND_SERVICE))
		return -EACCES;

	lock_sock(sk);
	err = -EINVAL;
	if (inet_sk(sk)->inet_num)
		goto out;
	dlcp_sk_af(sk)->set_rcv_saddr(sk, &addr);
	err = dlcp_get_port(sk, snum);
	if (err)
		dlcp_sk_af(sk)->set_rcv_saddr(sk, &in6addr_any);
out:
	release_sock(sk);
	return err;
}

static int dlcp_autobind(struct sock *sk)
{
	int err = 0;

	lock_sock(sk);
	if (!inet_sk(sk)->inet_num)
		err = dlcp_get_port(sk, 0);
	release_sock(sk);
	return err;
}

static int dlcp_connect(struct socket *sock, dlcp_ops_sockaddr *ops_addr,
			int len, int flags)
{
	struct sockaddr *uaddr = (struct sockaddr *)ops_addr;
	struct sock *sk = sock->sk;
	struct in6_addr daddr;
	__be16 dport;
	int err;

	if (len >= (int)sizeof(sa_family_t) && uaddr->sa_family == AF_UNSPEC) {
		lock_sock(sk);
		dlcp_sk_af(sk)->set_daddr(sk, &in6addr_any, 0);
		sk->sk_state = TCP_CLOSE;
		release_sock(sk);
		return 0;
	}
	if (len < (int)sizeof(sa_family_t))
		return -EINVAL;
	err = dlcp_sk_af(sk)->cgroup_addr(sk, uaddr, len, false, NULL);
	if (err)
		return err;
	err = dlcp_dest(sk, uaddr, len, &daddr, &dport);
	if (err)
		return err;
	/* reachable, not broadcast */
	err = dlcp_out_seg_size(sk, &daddr, dport, false);
	if (err < 0)
		return err;
	err = dlcp_autobind(sk);
	if (err)
		return err;
	lock_sock(sk);
	dlcp_sk_af(sk)->set_daddr(sk, &daddr, dport);
	sk->sk_state = TCP_ESTABLISHED;
	release_sock(sk);
	return 0;
}

/* The encapsulation @sk's messages use. */
int dlcp_sock_encap(const struct sock *sk)
{
	int encap = READ_ONCE(dlcp_sk(sk)->encap);

	return encap >= 0 ? encap :
	       READ_ONCE(dlcp_pernet(sock_net(sk))->encap);
}

/* May @sk use class @cls? EINVAL out of range, EPERM without privilege. */
static int dlcp_check_class(struct sock *sk, int cls)
{
	struct net *net = sock_net(sk);
	const struct dlcp_net *dn = dlcp_pernet(net);

	if (cls < 0 || cls >= READ_ONCE(dn->prio_classes))
		return -EINVAL;
	if (cls < READ_ONCE(dn->unpriv_class) &&
	    !ns_capable(net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	return 0;
}

static bool dlcp_send_info_valid(const struct dlcp_send_info *si)
{
	return !(si->flags & ~DLCP_MSG_FLAGS_SEND) && !si->reserved1 &&
	       !si->reserved && si->dtype < __DLCP_DTYPE_MAX &&
	       ((si->flags & DLCP_MSG_HAS_PRIO) || !si->prio) &&
	       (!(si->flags & DLCP_MSG_HAS_DROPPABLE) ?
		!si->droppable_ppm : si->droppable_ppm <= DLCP_PPM_MAX) &&
	       (!(si->flags & DLCP_MSG_HAS_BUDGET) ||
		si->loss_budget_ppm <= DLCP_PPM_MAX) &&
	       (!(si->flags & DLCP_MSG_HAS_DEADLINE) || si->deadline_ms);
}

static int dlcp_parse_crit(struct cmsghdr *cmsg, u32 len,
			   struct dlcp_send_args *args)
{
	size_t bytes = cmsg->cmsg_len - CMSG_LEN(0);
	const struct dlcp_range *r = CMSG_DATA(cmsg);
	u32 i, n = bytes / sizeof(*r);

	if (args->crit || bytes % sizeof(*r) || !n ||
	    n > DLCP_MAX_CRIT_RANGES)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!r[i].len || r[i].offset >= len ||
		    r[i].len > len - r[i].offset)
			return -EINVAL;
	args->crit = r;
	args->nr_crit = n;
	return 0;
}

/* Parse the control messages of a sendmsg() of @len bytes. */
static int dlcp_parse_cmsgs(struct sock *sk, struct msghdr *msg, u32 len,
			    struct dlcp_meta *meta, struct dlcp_send_args *args)
{
	bool have_info = false;
	struct cmsghdr *cmsg;
	int err;

	for_each_cmsghdr(cmsg, msg) {
		struct dlcp_send_info si;

		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_DLCP)
			return -EINVAL;
		switch (cmsg->cmsg_type) {
		case DLCP_CMSG_SEND:
			if (have_info || cmsg->cmsg_len != CMSG_LEN(sizeof(si)))
				return -EINVAL;
			memcpy(&si, CMSG_DATA(cmsg), sizeof(si));
			if (!dlcp_send_info_valid(&si))
				return -EINVAL;
			have_info = true;
			meta->tensor_id = si.tensor_id;
			meta->iteration = si.iteration;
			meta->dtype = si.dtype;
			meta->flags = si.flags;
			if (si.flags & DLCP_MSG_HAS_LAYER)
				meta->layer = si.layer;
			if (si.flags & DLCP_MSG_HAS_BUDGET)
				meta->budget_ppm = si.loss_budget_ppm;
			if (si.flags & DLCP_MSG_HAS_DEADLINE)
				args->deadline_ms = si.deadline_ms;
			if (si.flags & DLCP_MSG_HAS_DROPPABLE)
				args->droppable_ppm = si.droppable_ppm;
			if (si.flags & DLCP_MSG_HAS_PRIO) {
				err = dlcp_check_class(sk, si.prio);
				if (err)
					return err;
				meta->prio = si.prio;
			}
			break;
		case DLCP_CMSG_CRITICAL:
			err = dlcp_parse_crit(cmsg, len, args);
			if (err)
				return err;
			break;
		case DLCP_CMSG_SEG_CLASS:
			if (args->seg_cls || cmsg->cmsg_len <= CMSG_LEN(0))
				return -EINVAL;
			args->seg_cls = CMSG_DATA(cmsg);
			args->nr_seg_cls = cmsg->cmsg_len - CMSG_LEN(0);
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

static void dlcp_write_space(struct sock *sk)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_sync_poll(&wq->wait, EPOLLOUT |
						EPOLLWRNORM | EPOLLWRBAND);
	sk_wake_async(sk, SOCK_WAKE_SPACE, POLL_OUT);
	rcu_read_unlock();
}

static bool dlcp_snd_room(struct sock *sk, u32 len)
{
	u64 used = READ_ONCE(dlcp_sk(sk)->snd_mem);

	return !used || used + dlcp_snd_cost(len) <= dlcp_sndbuf_limit(sk);
}

/*
 * Wait until @len bytes of send memory are free, then reserve them, and
 * count them in the protocol's pages (ENOBUFS at net.dlcp.mem's limit).
 */
static int dlcp_reserve_snd(struct sock *sk, u32 len, bool nonblock)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct dlcp_sock *dsk = dlcp_sk(sk);
	long timeo = sock_sndtimeo(sk, nonblock);
	int err = 0;

	add_wait_queue(sk_sleep(sk), &wait);
	for (;;) {
		spin_lock_bh(&dsk->lock);
		if (dlcp_snd_room(sk, len)) {
			dsk->snd_mem += dlcp_snd_cost(len);
			spin_unlock_bh(&dsk->lock);
			break;
		}
		spin_unlock_bh(&dsk->lock);
		if (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN) {
			err = -EPIPE;
			break;
		}
		if (!timeo) {
			err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(timeo);
			break;
		}
		timeo = wait_woken(&wait, TASK_INTERRUPTIBLE, timeo);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	if (!err && !dlcp_mem_charge_snd(sk, len)) {
		spin_lock_bh(&dsk->lock);
		dsk->snd_mem -= dlcp_snd_cost(len);
		spin_unlock_bh(&dsk->lock);
		err = -ENOBUFS;
	}
	return err;
}

static void dlcp_unreserve_snd(struct sock *sk, u32 len)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);

	spin_lock_bh(&dsk->lock);
	dsk->snd_mem -= dlcp_snd_cost(len);
	spin_unlock_bh(&dsk->lock);
	dlcp_mem_uncharge_snd(sk, len);
	dlcp_write_space(sk);
}

/*
 * The offset of the message ids to @daddr port @dport in epoch @epoch
 * (DLCP_ID_EPOCH_S seconds of boot time), under the socket's @key: a keyed
 * hash of the destination (as TCP's initial sequence numbers are), so that
 * a host that receives from the socket cannot tell the ids it uses towards
 * others, plus a part that moves forward every epoch by
 * 2^DLCP_ID_EPOCH_BITS and a keyed hash of the epoch below that, so that
 * an id seen once (a leak) predicts no later epoch's ids. The offset only
 * grows, by less than 2^(DLCP_ID_EPOCH_BITS + 1) an epoch, so that with
 * the counter a destination's ids only grow and come back to an id only
 * after hours, long after a receiver forgot it (net.dlcp.msg_timeout_ms
 * is at most one): a new message never takes the id of one it remembers.
 */
u32 dlcp_msg_id_offset(const siphash_key_t *key, const struct in6_addr *daddr,
		       __be16 dport, u64 epoch)
{
	const u32 *a = (__force const u32 *)daddr->s6_addr32;
	u64 a01 = (u64)a[0] << 32 | a[1], a23 = (u64)a[2] << 32 | a[3];
	u64 dest = siphash_3u64(a01, a23, (__force u16)dport, key);
	u64 step = siphash_4u64(a01, a23, (__force u16)dport, epoch, key);

	return (u32)dest + ((u32)epoch << DLCP_ID_EPOCH_BITS) +
	       ((u32)step & (BIT(DLCP_ID_EPOCH_BITS) - 1));
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_msg_id_offset);

/*
 * The wire id of a new message to @daddr port @dport: the socket's counter,
 * so that no destination sees an id twice, plus the destination's offset
 * (dlcp_msg_id_offset()). Control packets and DATA forged off-path must
 * guess a 32-bit id. Under dlcp_sock.lock.
 */
static u32 dlcp_next_msg_id(struct dlcp_sock *dsk,
			    const struct in6_addr *daddr, __be16 dport)
	__must_hold(&dsk->lock)
{
	u64 epoch = ktime_get_boottime_seconds() / DLCP_ID_EPOCH_S;

	lockdep_assert_held(&dsk->lock);
	return dsk->next_msg_id++ +
	       dlcp_msg_id_offset(&dsk->id_key, daddr, dport, epoch);
}

static int dlcp_sendmsg(struct socket *sock, struct msghdr *msg, size_t len)
{
	struct sock *sk = sock->sk;
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct inet_sock *inet = inet_sk(sk);
	struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	struct dlcp_send_args args = { .droppable_ppm = -1 };
	struct dlcp_flight *flight = NULL;
	struct dlcp_peer *spare;
	u32 flight_cap = 0;
	struct dlcp_out_msg *m;
	struct in6_addr daddr;
	__be16 dport;
	int err;

	if (msg->msg_flags & ~(MSG_DONTWAIT | MSG_NOSIGNAL | MSG_EOR |
			       MSG_CMSG_COMPAT))
		return -EOPNOTSUPP;
	if (msg->msg_name) {
		err = dlcp_dest(sk, msg->msg_name, msg->msg_namelen, &daddr,
				&dport);
		if (err)
			return err;
	} else {
		if (sk->sk_state != TCP_ESTABLISHED)
			return -EDESTADDRREQ;
		dlcp_sk_af(sk)->peer_addr(sk, &daddr);
		dport = inet->inet_dport;
	}
	if (!len)
		return -EINVAL;
	if (len > READ_ONCE(dn->max_msg_size))
		return -EMSGSIZE;

	m = dlcp_out_msg_alloc(sk, len, &daddr, dport);
	if (!m)
		return -ENOMEM;

	err = dlcp_parse_cmsgs(sk, msg, len, &m->meta, &args);
	if (err)
		goto free_msg;
	if (len % dlcp_wire_dtype_size(m->meta.dtype)) {
		err = -EINVAL;
		goto free_msg;
	}
	if (!inet->inet_num) {
		err = dlcp_autobind(sk);
		if (err)
			goto free_msg;
	}
	args.class0 = !dlcp_check_class(sk, 0);
	err = dlcp_out_build(sk, m, &args);
	if (err)
		goto free_msg;
	err = dlcp_reserve_snd(sk, len, msg->msg_flags & MSG_DONTWAIT);
	if (err)
		goto free_msg;
	err = dlcp_out_fill(sk, m, &msg->msg_iter, &args);
	spare = err ? NULL : dlcp_peer_alloc();
	if (!err && !spare)
		err = -ENOMEM;
	if (!err) {
		flight = dlcp_flight_alloc(sk, &flight_cap);
		if (!flight && !READ_ONCE(dsk->flight))
			err = -ENOMEM;
	}
	if (err) {
		kfree(spare);
		dlcp_unreserve_snd(sk, len);
		goto free_msg;
	}

	spin_lock_bh(&dsk->lock);
	dlcp_flight_install(sk, flight, flight_cap);
	err = dsk->dead ? -EPIPE : 0;
	if (!err) {
		m->peer = dlcp_peer_get(sk, &daddr, &spare);
		if (!m->peer)
			err = -ENOBUFS;	/* DLCP_MAX_PEERS hosts in flight */
	}
	if (err) {
		spin_unlock_bh(&dsk->lock);
		kfree(spare);
		dlcp_unreserve_snd(sk, len);
		goto free_msg;
	}
	m->id = dlcp_next_msg_id(dsk, &daddr, dport);
	if (args.deadline_ms)
		m->deadline = jiffies + msecs_to_jiffies(args.deadline_ms);
	dlcp_out_enqueue(dsk, m);
	DLCP_INC_STATS(sock_net(sk), DLCP_MIB_OUT_MSGS);
	trace_dlcp_msg_send(inet->inet_num, &m->daddr, ntohs(m->dport), m->id,
			    m->len, m->meta.prio, m->meta.budget_ppm, m->nsegs);
	if (dlcp_out_may_push(sk))
		dlcp_out_push(sk);
	dlcp_guard_arm(sk);
	spin_unlock_bh(&dsk->lock);
	kfree(spare);
	return len;

free_msg:
	dlcp_out_release_msg(m);
	return err;
}

static int dlcp_recvmsg(struct sock *sk, struct msghdr *msg, size_t len,
			int flags, int *addr_len)
{
	struct dlcp_delivery *d;
	struct sk_buff *skb;
	u32 copied;
	int err;

	if (flags & MSG_ERRQUEUE)
		return sock_recv_errqueue(sk, msg, len, SOL_DLCP,
					  DLCP_CMSG_COMPLETION);
	if (flags & ~(MSG_DONTWAIT | MSG_PEEK | MSG_TRUNC | MSG_WAITALL |
		      MSG_CMSG_COMPAT))
		return -EOPNOTSUPP;
	if (!inet_sk(sk)->inet_num)
		return -ENOTCONN;

	skb = dlcp_skb_recv_datagram(sk, flags, &err);
	if (!skb)
		return err;
	d = dlcp_skb_delivery(skb);

	copied = min_t(size_t, len, d->info.msg_len);
	if (copied < d->info.msg_len)
		msg->msg_flags |= MSG_TRUNC;
	err = dlcp_buf_to_iter(&d->msg->buf, copied, &msg->msg_iter);
	if (err)
		goto out;

	if (msg->msg_name)
		dlcp_sk_af(sk)->fill_name(msg, &d->msg->key.saddr,
					  d->msg->key.sport, addr_len);
	if (msg->msg_controllen) {
		put_cmsg(msg, SOL_DLCP, DLCP_CMSG_RECV, sizeof(d->info),
			 &d->info);
		if (d->info.nr_lost_ranges)
			dlcp_delivery_put_lost(d, msg);
	}
	err = (flags & MSG_TRUNC) ? d->info.msg_len : copied;
out:
	skb_free_datagram(sk, skb);
	return err;
}

static __poll_t dlcp_poll(struct file *file, struct socket *sock,
			  poll_table *wait)
{
	struct sock *sk = sock->sk;
	__poll_t mask;

	mask = datagram_poll(file, sock, wait);
	mask &= ~(EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND);
	if (dlcp_snd_room(sk, 1))
		mask |= EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND;
	return mask;
}

/* DLCP_PRIORITY: a class, or -1 to derive classes from layers again. */
static int dlcp_set_prio(struct sock *sk, int val)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	int err = dlcp_check_class(sk, val);

	if (val == -1) {
		WRITE_ONCE(dsk->prio_set, false);
		return 0;
	}
	if (err)
		return err;
	spin_lock_bh(&dsk->lock);
	dsk->prio = val;
	dsk->prio_set = true;
	spin_unlock_bh(&dsk->lock);
	return 0;
}

static int dlcp_setsockopt(struct sock *sk, int level, int optname,
			   sockptr_t optval, unsigned int optlen)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	int val;

	if (level != SOL_DLCP)
		return dlcp_sk_af(sk)->setsockopt(sk, level, optname, optval,
						  optlen);
	if (optname == DLCP_PATHS)
		return dlcp_path_setsockopt(sk, optval, optlen);
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;

	switch (optname) {
	case DLCP_LOSS_BUDGET:
		if (val < 0 || val > DLCP_PPM_MAX)
			return -EINVAL;
		WRITE_ONCE(dsk->loss_budget_ppm, val);
		return 0;
	case DLCP_LAYER:
		if (val < 0 || val > U16_MAX)
			return -EINVAL;
		WRITE_ONCE(dsk->layer, val);
		return 0;
	case DLCP_PRIORITY:
		return dlcp_set_prio(sk, val);
	case DLCP_RECVCOMPLETION:
		if (val < 0 || val > 1)
			return -EINVAL;
		WRITE_ONCE(dsk->recv_completion, val);
		return 0;
	case DLCP_ENCAP:
		if (val < -1 || val > DLCP_ENCAP_UDP)
			return -EINVAL;
		if (val == DLCP_ENCAP_UDP) {
			int err = dlcp_udp_select(sock_net(sk));

			if (err)
				return err;
		}
		WRITE_ONCE(dsk->encap, val);
		return 0;
	case DLCP_SEGMENT_SIZE:
	case DLCP_MAX_MSG_SIZE:
	default:
		return -ENOPROTOOPT;
	}
}

/* Segment payload to the connected peer, or over a 1500-byte MTU. */
static int dlcp_segment_size(struct sock *sk)
{
	bool udp = dlcp_sock_encap(sk) == DLCP_ENCAP_UDP;
	struct in6_addr daddr;
	int size;

	dlcp_sk_af(sk)->peer_addr(sk, &daddr);
	if (sk->sk_state == TCP_ESTABLISHED) {
		size = dlcp_out_seg_size(sk, &daddr, inet_sk(sk)->inet_dport,
					 udp);
		if (size > 0)
			return size;
	}
	return 1500 - dlcp_sk_af(sk)->net_header_len - DLCP_DATA_HDR_LEN -
	       (udp ? sizeof(struct udphdr) : 0);
}

static int dlcp_getsockopt(struct sock *sk, int level, int optname,
			   char __user *optval, int __user *optlen)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	int val, len;

	if (level != SOL_DLCP)
		return dlcp_sk_af(sk)->getsockopt(sk, level, optname, optval,
						  optlen);
	if (optname == DLCP_PATHS)
		return dlcp_path_getsockopt(sk, optval, optlen);
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < (int)sizeof(int))
		return -EINVAL;

	switch (optname) {
	case DLCP_LOSS_BUDGET:
		val = READ_ONCE(dsk->loss_budget_ppm);
		break;
	case DLCP_LAYER:
		val = READ_ONCE(dsk->layer);
		break;
	case DLCP_PRIORITY:
		val = READ_ONCE(dsk->prio_set) ? READ_ONCE(dsk->prio) : -1;
		break;
	case DLCP_RECVCOMPLETION:
		val = READ_ONCE(dsk->recv_completion);
		break;
	case DLCP_ENCAP:
		val = READ_ONCE(dsk->encap);
		break;
	case DLCP_SEGMENT_SIZE:
		val = dlcp_segment_size(sk);
		break;
	case DLCP_MAX_MSG_SIZE:
		val = READ_ONCE(dlcp_pernet(sock_net(sk))->max_msg_size);
		break;
	default:
		return -ENOPROTOOPT;
	}
	len = sizeof(int);
	if (put_user(len, optlen) || copy_to_user(optval, &val, len))
		return -EFAULT;
	return 0;
}

static int dlcp_init_sock(struct sock *sk)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	int i;

	sk_sockets_allocated_inc(sk);	/* destroy drops it, also on error */
	spin_lock_init(&dsk->lock);
	INIT_HLIST_NODE(&dsk->port_node);
	INIT_LIST_HEAD(&dsk->out_msgs);
	INIT_LIST_HEAD(&dsk->out_reap);
	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		INIT_HLIST_HEAD(&dsk->peers[i]);
	dsk->next_msg_id = get_random_u32();
	get_random_bytes(&dsk->id_key, sizeof(dsk->id_key));
	dsk->encap = -1;
	dsk->loss_budget_ppm = READ_ONCE(dn->loss_budget_ppm);
	sock_set_flag(sk, SOCK_RCU_FREE);
	sk->sk_write_space = dlcp_write_space;
	dlcp_timer_init(sk);
	return dlcp_intab_init(dsk);
}

/*
 * Called by sk_common_release() on close. Stops the timers, tells the
 * receivers of unfinished messages (ABORT), and frees all state.
 */
static void dlcp_destroy_sock(struct sock *sk)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	LIST_HEAD(reap);

	dlcp_unhash(sk);
	spin_lock_bh(&dsk->lock);
	dsk->dead = true;
	spin_unlock_bh(&dsk->lock);
	dlcp_timer_stop(sk);

	spin_lock_bh(&dsk->lock);
	dlcp_out_purge(sk);
	dlcp_out_reap_take(sk, &reap);
	dlcp_in_purge(sk);
	dlcp_peer_free_all(sk);
	dlcp_xmit_ctl_forget(sk);
	spin_unlock_bh(&dsk->lock);
	dlcp_out_reap(&reap);
	dlcp_intab_destroy(dsk);
	kvfree(dsk->flight);
	dsk->flight = NULL;
	sk_sockets_allocated_dec(sk);
}

/*
 * close(): a message whose sendmsg() succeeded is not discarded by the
 * close() that follows. Wait until every outgoing message is delivered
 * (STOP) or has failed, or a signal arrives, but no longer than
 * net.dlcp.msg_timeout_ms without one of them ending (a receiver that
 * answers but takes a message slowly, one packet at a time, cannot hold
 * close() or the exit of a process); with SO_LINGER wait at most its
 * time (0: abort at once). What is left is aborted: the receivers are
 * told (ABORT) and free it.
 */
static void dlcp_close(struct sock *sk, long timeout)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	long timeo = sock_flag(sk, SOCK_LINGER) ? timeout : MAX_SCHEDULE_TIMEOUT;
	struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	long stall = msecs_to_jiffies(READ_ONCE(dn->msg_timeout_ms));
	struct dlcp_sock *dsk = dlcp_sk(sk);
	u64 mem = READ_ONCE(dsk->snd_mem), left;
	unsigned long since = jiffies;

	add_wait_queue(sk_sleep(sk), &wait);
	while (timeo && (left = READ_ONCE(dsk->snd_mem)) &&
	       !signal_pending(current)) {
		long wait_for, rest;

		if (left < mem) {
			mem = left;
			since = jiffies;
		}
		wait_for = min_t(long, timeo, (long)(since + stall - jiffies));
		if (wait_for <= 0)
			break;
		rest = wait_woken(&wait, TASK_INTERRUPTIBLE, wait_for);
		if (timeo != MAX_SCHEDULE_TIMEOUT)
			timeo -= wait_for - rest;
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	sk_common_release(sk);
}

/* dlcp_recvmsg() with the signature of the kernel's struct proto */
DLCP_PROTO_RECVMSG(dlcp_proto_recvmsg, dlcp_recvmsg)

struct proto dlcp_prot = {
	.name		= "DLCP",
	.owner		= THIS_MODULE,
	.close		= dlcp_close,
	.init		= dlcp_init_sock,
	.destroy	= dlcp_destroy_sock,
	.setsockopt	= dlcp_setsockopt,
	.getsockopt	= dlcp_getsockopt,
	.recvmsg	= dlcp_proto_recvmsg,
	.hash		= dlcp_hash,
	.unhash		= dlcp_unhash,
	.get_port	= dlcp_get_port,
	.memory_allocated = &dlcp_memory_allocated,
	.memory_pressure = &dlcp_memory_pressure,
	.enter_memory_pressure = dlcp_enter_memory_pressure,
	.sockets_allocated = &dlcp_sockets_allocated,
	.sysctl_mem	= dlcp_sysctl_mem,
	.sysctl_rmem	= dlcp_sysctl_rmem,
	.obj_size	= sizeof(struct dlcp_sock),
};

static void dlcp6_destroy_sock(struct sock *sk)
{
	dlcp_destroy_sock(sk);
	dlcp_inet6_destroy_sock(sk);
}

/* AF_INET6: the same calls; inet6_sk() finds struct dlcp6_sock's pinfo */
struct proto dlcpv6_prot = {
	.name		= "DLCPv6",
	.owner		= THIS_MODULE,
	.close		= dlcp_close,
	.init		= dlcp_init_sock,
	.destroy	= dlcp6_destroy_sock,
	.setsockopt	= dlcp_setsockopt,
	.getsockopt	= dlcp_getsockopt,
	.recvmsg	= dlcp_proto_recvmsg,
	.hash		= dlcp_hash,
	.unhash		= dlcp_unhash,
	.get_port	= dlcp_get_port,
	.memory_allocated = &dlcp_memory_allocated,
	.memory_pressure = &dlcp_memory_pressure,
	.enter_memory_pressure = dlcp_enter_memory_pressure,
	.sockets_allocated = &dlcp_sockets_allocated,
	.sysctl_mem	= dlcp_sysctl_mem,
	.sysctl_rmem	= dlcp_sysctl_rmem,
	.obj_size	= sizeof(struct dlcp6_sock),
};

const struct proto_ops dlcp_inet6_ops = {
	.family		= PF_INET6,
	.owner		= THIS_MODULE,
	.release	= inet6_release,
	.bind		= dlcp_bind,
	.connect	= dlcp_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= inet6_getname,
	.poll		= dlcp_poll,
	.ioctl		= inet6_ioctl,
	.gettstamp	= sock_gettstamp,
	.listen		= sock_no_listen,
	.shutdown	= inet_shutdown,
	.setsockopt	= sock_common_setsockopt,
	.getsockopt	= sock_common_getsockopt,
	.sendmsg	= dlcp_sendmsg,
	.recvmsg	= sock_common_recvmsg,
	.mmap		= sock_no_mmap,
};

const struct proto_ops dlcp_inet_ops = {
	.family		= PF_INET,
	.owner		= THIS_MODULE,
	.release	= inet_release,
	.bind		= dlcp_bind,
	.connect	= dlcp_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= inet_getname,
	.poll		= dlcp_poll,
	.ioctl		= inet_ioctl,
	.gettstamp	= sock_gettstamp,
	.listen		= sock_no_listen,
	.shutdown	= inet_shutdown,
	.setsockopt	= sock_common_setsockopt,
	.getsockopt	= sock_common_getsockopt,
	.sendmsg	= dlcp_sendmsg,
	.recvmsg	= sock_common_recvmsg,
	.mmap		= sock_no_mmap,
};
