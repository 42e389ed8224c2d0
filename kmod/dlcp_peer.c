// SPDX-License-Identifier: GPL-2.0
/*
 * The destinations of a DLCP socket.
 *
 * Congestion state belongs to a path, not to a socket: a parameter server
 * sends its pulls to every worker from one socket, and a window shared by
 * all of them would let one congested link slow every transfer. Each
 * destination host a socket sends to gets a struct dlcp_peer with its own
 * window, pacing clock and round-trip estimate. Messages hold a count on
 * their peer; a peer outlives its messages, so that the next iteration
 * starts from what the last one learned, until the table is full
 * (DLCP_MAX_PEERS) and an unused one is reclaimed, or the socket closes.
 *
 * All changes happen under dlcp_sock.lock; /proc/net/dlcp/peers reads the
 * table under RCU.
 */
#include <linux/hash.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include "dlcp_impl.h"

static struct hlist_head *dlcp_peer_bucket(struct dlcp_sock *dsk,
					   const struct in6_addr *daddr)
{
	return &dsk->peers[hash_32(ipv6_addr_hash(daddr), DLCP_PEER_HASH_BITS)];
}

/* A peer for dlcp_peer_get(), allocated before the socket lock is taken. */
struct dlcp_peer *dlcp_peer_alloc(void)
{
	return kzalloc(sizeof(struct dlcp_peer), GFP_KERNEL);
}

static void dlcp_peer_unlink(struct dlcp_sock *dsk, struct dlcp_peer *p)
{
	hlist_del_rcu(&p->node);
	dsk->nr_peers--;
	kfree_rcu(p, rcu);
}

/* Free one peer no message uses; false if there is none. */
static bool dlcp_peer_reclaim(struct dlcp_sock *dsk)
{
	struct dlcp_peer *p;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		hlist_for_each_entry(p, &dsk->peers[i], node)
			if (!p->nr_msgs) {
				dlcp_peer_unlink(dsk, p);
				return true;
			}
	return false;
}

/*
 * The peer for @daddr, counted for one more message; a new one is made
 * from *@spare (which is then NULL: the caller frees what is left). NULL
 * if the socket has DLCP_MAX_PEERS destinations with messages in flight.
 * Called with dsk->lock held.
 */
struct dlcp_peer *dlcp_peer_get(struct sock *sk,
				const struct in6_addr *daddr,
				struct dlcp_peer **spare)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct hlist_head *head = dlcp_peer_bucket(dsk, daddr);
	struct dlcp_peer *p;

	hlist_for_each_entry(p, head, node)
		if (ipv6_addr_equal(&p->daddr, daddr))
			goto found;
	if (dsk->nr_peers >= DLCP_MAX_PEERS && !dlcp_peer_reclaim(dsk))
		return NULL;
	p = *spare;
	*spare = NULL;
	p->daddr = *daddr;
	p->last_heard = jiffies;
	dlcp_cc_init(sk, p);
	hlist_add_head_rcu(&p->node, head);
	dsk->nr_peers++;
found:
	p->nr_msgs++;
	return p;
}

/* A message of @p is gone. */
void dlcp_peer_put(struct dlcp_peer *p)
{
	p->nr_msgs--;
}

/* Socket destruction: every message is gone. */
void dlcp_peer_free_all(struct sock *sk)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct hlist_node *tmp;
	struct dlcp_peer *p;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		hlist_for_each_entry_safe(p, tmp, &dsk->peers[i], node) {
			WARN_ON_ONCE(p->nr_msgs);
			dlcp_peer_unlink(dsk, p);
		}
}

/* The shortest retransmission timeout of the peers that have messages. */
u32 dlcp_peer_min_rto_us(const struct sock *sk)
{
	const struct dlcp_sock *dsk = dlcp_sk(sk);
	const struct dlcp_peer *p;
	u32 i, rto = U32_MAX;

	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		hlist_for_each_entry(p, &dsk->peers[i], node)
			if (p->nr_msgs)
				rto = min(rto, dlcp_out_rto_us(sk, p));
	return rto == U32_MAX ? dlcp_out_rto_us(sk, NULL) : rto;
}
