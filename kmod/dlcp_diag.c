// SPDX-License-Identifier: GPL-2.0
/*
 * sock_diag for DLCP: an inet_diag handler for the module's protocol
 * number, so that NETLINK_SOCK_DIAG lists DLCP sockets as it lists TCP,
 * UDP and SCTP ones (uapi/linux/dlcp.h, "Monitoring"). inet_diag hands
 * requests of both families, AF_INET and AF_INET6, to the handler of the
 * request's protocol.
 *
 * A dump walks the port table (dlcp_walk_socks(), under dlcp_port_lock),
 * resuming where the previous part of the dump stopped (cb->args), and
 * writes one message per socket of the requester's namespace that the
 * request's family, states, ports and bytecode select. A request for one
 * socket finds it by its local port and checks its cookie. inet_diag's
 * own message filler, inet_sk_diag_fill(), writes INET_DIAG_INFO only for
 * connection sockets (inet_connection_sock), which DLCP's are not: the
 * messages are filled here, as sctp_diag fills its own, from
 * inet_diag_msg_common_fill() and inet_diag_msg_attrs_fill(). The values
 * come from the helpers of /proc/net/dlcp (dlcp_sock_info(),
 * dlcp_peer_info()): a snapshot read without the socket's lock, peers
 * under RCU.
 */
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <net/netlink.h>
#include <net/sock.h>
#include "dlcp_impl.h"

/* Bytes of the INET_DIAG_INFO payload with @n peers. */
static size_t dlcp_diag_info_size(u32 n)
{
	return sizeof(struct dlcp_diag_info) + n * sizeof(struct dlcp_diag_peer);
}

/* The largest message of one socket. */
static size_t dlcp_diag_msg_size(void)
{
	return nla_total_size(sizeof(struct inet_diag_msg)) +
	       inet_diag_msg_attrs_size() +
	       nla_total_size(sizeof(struct inet_diag_meminfo)) +
	       nla_total_size(SK_MEMINFO_VARS * sizeof(u32)) +
	       nla_total_size_64bit(dlcp_diag_info_size(DLCP_DIAG_MAX_PEERS)) +
	       64;
}

/*
 * The inet_diag_msg fields of the protocol, and the INET_DIAG_INFO
 * structure if @info: the handler's idiag_get_info(), which inet_diag
 * also calls for the socket-destroy notification of sock_diag.
 */
static void dlcp_diag_get_info(struct sock *sk, struct inet_diag_msg *r,
			       void *info)
{
	struct dlcp_diag_info tmp, *di = info ?: &tmp;

	dlcp_sock_info(sk, di);
	r->idiag_rqueue = di->rcv_mem;
	r->idiag_wqueue = min_t(u64, di->snd_mem, U32_MAX);
}

/*
 * INET_DIAG_INFO: a struct dlcp_diag_info and the socket's peers, at most
 * DLCP_DIAG_MAX_PEERS of them.
 */
static int dlcp_diag_put_info(struct sock *sk, struct sk_buff *skb,
			      struct inet_diag_msg *r)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_diag_peer *dp;
	struct dlcp_diag_info *di;
	struct dlcp_peer *p;
	struct nlattr *attr;
	u32 i, room, n = 0;

	room = min_t(u32, READ_ONCE(dsk->nr_peers), DLCP_DIAG_MAX_PEERS);
	attr = nla_reserve_64bit(skb, INET_DIAG_INFO, dlcp_diag_info_size(room),
				 INET_DIAG_PAD);
	if (!attr)
		return -EMSGSIZE;
	di = nla_data(attr);
	dp = (struct dlcp_diag_peer *)(di + 1);
	/* entries left over if peers went away meanwhile read as zeros */
	memset(dp, 0, room * sizeof(*dp));
	dlcp_diag_get_info(sk, r, di);

	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		hlist_for_each_entry_rcu(p, &dsk->peers[i], node) {
			if (n == room)
				break;
			dlcp_peer_info(sk, p, &dp[n++]);
		}
	rcu_read_unlock();
	di->nr_listed = n;
	return 0;
}

/* One socket's message; -EMSGSIZE if @skb has no room for it. */
static int dlcp_diag_fill(struct sock *sk, struct sk_buff *skb,
			  struct netlink_callback *cb,
			  const struct inet_diag_req_v2 *req, u16 nlmsg_flags,
			  bool net_admin)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	int ext = req->idiag_ext;
	struct inet_diag_msg *r;
	struct nlmsghdr *nlh;

	nlh = nlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			cb->nlh->nlmsg_type, sizeof(*r), nlmsg_flags);
	if (!nlh)
		return -EMSGSIZE;
	r = nlmsg_data(nlh);
	inet_diag_msg_common_fill(r, sk);
	r->idiag_state = sk->sk_state;
	r->idiag_timer = 0;
	r->idiag_retrans = 0;
	r->idiag_expires = 0;
	if (timer_pending(&dsk->guard)) {
		r->idiag_timer = 1;
		r->idiag_expires =
			jiffies_delta_to_msecs(READ_ONCE(dsk->guard.expires) -
					       jiffies);
	}
	if (inet_diag_msg_attrs_fill(sk, skb, r, ext,
				     sk_user_ns(NETLINK_CB(cb->skb).sk),
				     net_admin))
		goto cancel;

	if (ext & (1 << (INET_DIAG_MEMINFO - 1))) {
		struct inet_diag_meminfo minfo = {
			.idiag_rmem = sk_rmem_alloc_get(sk),
			.idiag_wmem = min_t(u64, READ_ONCE(dsk->snd_mem),
					    U32_MAX),
			.idiag_fmem = dlcp_sk_forward_alloc(sk),
			.idiag_tmem = sk_wmem_alloc_get(sk),
		};

		if (nla_put(skb, INET_DIAG_MEMINFO, sizeof(minfo), &minfo))
			goto cancel;
	}
	if ((ext & (1 << (INET_DIAG_SKMEMINFO - 1))) &&
	    sock_diag_put_meminfo(sk, skb, INET_DIAG_SKMEMINFO))
		goto cancel;
	if (ext & (1 << (INET_DIAG_INFO - 1))) {
		if (dlcp_diag_put_info(sk, skb, r))
			goto cancel;
	} else {
		dlcp_diag_get_info(sk, r, NULL);
	}
	nlmsg_end(skb, nlh);
	return 0;

cancel:
	nlmsg_cancel(skb, nlh);
	return -EMSGSIZE;
}

struct dlcp_diag_dump {
	struct sk_buff			*skb;
	struct netlink_callback		*cb;
	const struct inet_diag_req_v2	*req;
	const struct inet_diag_dump_data	*cb_data;
	bool				net_admin;
};

/* dlcp_walk_socks() callback: non-zero stops the walk (@skb is full). */
static int dlcp_diag_dump_sk(struct sock *sk, void *arg)
{
	struct dlcp_diag_dump *d = arg;
	const struct inet_diag_req_v2 *r = d->req;
	struct inet_sock *inet = inet_sk(sk);

	if (!(r->idiag_states & (1 << sk->sk_state)))
		return 0;
	if (r->sdiag_family != AF_UNSPEC && sk->sk_family != r->sdiag_family)
		return 0;
	if (r->id.idiag_sport && r->id.idiag_sport != inet->inet_sport)
		return 0;
	if (r->id.idiag_dport && r->id.idiag_dport != inet->inet_dport)
		return 0;
	if (!dlcp_inet_diag_bc_sk(d->cb_data, sk))
		return 0;
	return dlcp_diag_fill(sk, d->skb, d->cb, r, NLM_F_MULTI,
			      d->net_admin) < 0;
}

static void dlcp_diag_dump(struct sk_buff *skb, struct netlink_callback *cb,
			   const struct inet_diag_req_v2 *req)
{
	struct inet_diag_dump_data *cb_data = cb->data;
	struct dlcp_diag_dump d = {
		.skb		= skb,
		.cb		= cb,
		.req		= req,
		.cb_data	= cb_data,
		.net_admin	= netlink_net_capable(cb->skb, CAP_NET_ADMIN),
	};

	dlcp_walk_socks(sock_net(skb->sk), cb->args, dlcp_diag_dump_sk, &d);
}

static int dlcp_diag_dump_one(struct netlink_callback *cb,
			      const struct inet_diag_req_v2 *req)
{
	struct sk_buff *in_skb = cb->skb;
	struct net *net = sock_net(in_skb->sk);
	struct sk_buff *rep;
	struct sock *sk;
	int err;

	sk = dlcp_port_sock(net, req->id.idiag_sport);
	if (!sk)
		return -ENOENT;
	err = -ENOENT;
	if (sk->sk_family != req->sdiag_family)
		goto out;
	err = sock_diag_check_cookie(sk, req->id.idiag_cookie);
	if (err)
		goto out;
	err = -ENOMEM;
	rep = nlmsg_new(dlcp_diag_msg_size(), GFP_KERNEL);
	if (!rep)
		goto out;
	err = dlcp_diag_fill(sk, rep, cb, req, 0,
			     netlink_net_capable(in_skb, CAP_NET_ADMIN));
	if (err < 0) {
		WARN_ON(err == -EMSGSIZE);
		kfree_skb(rep);
		goto out;
	}
	err = nlmsg_unicast(net->diag_nlsk, rep, NETLINK_CB(in_skb).portid);
out:
	sock_put(sk);
	return err;
}

/* not const: the protocol number is the module's parameter */
static struct inet_diag_handler dlcp_diag_handler = {
	.dump		 = dlcp_diag_dump,
	.dump_one	 = dlcp_diag_dump_one,
	.idiag_get_info	 = dlcp_diag_get_info,
	.idiag_info_size = sizeof(struct dlcp_diag_info),
};

static bool dlcp_diag_registered;

int dlcp_diag_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct dlcp_diag_info) % 8);
	BUILD_BUG_ON(sizeof(struct dlcp_diag_peer) % 4);
	dlcp_diag_handler.idiag_type = dlcp_ipproto;
	dlcp_inet_diag_set_owner(&dlcp_diag_handler, THIS_MODULE);
	err = inet_diag_register(&dlcp_diag_handler);
	dlcp_diag_registered = !err;
	return err;
}

void dlcp_diag_exit(void)
{
	/* inet_diag_unregister() clears the slot whoever holds it */
	if (dlcp_diag_registered)
		inet_diag_unregister(&dlcp_diag_handler);
	dlcp_diag_registered = false;
}
