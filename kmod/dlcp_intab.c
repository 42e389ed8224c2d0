// SPDX-License-Identifier: GPL-2.0
/*
 * The table of a socket's incoming messages: messages being received and
 * zombies (delivered messages remembered without their data), by sender
 * address, port and message id.
 *
 * Any host can make entries here (one packet with a fresh id makes one),
 * so the table must scale and its upkeep must not be a walk over all of
 * it: a resizable hash (rhashtable, seeded per table) finds a message;
 * messages being received and zombies are also kept in order of their
 * last packet (in two lists), so that the guard timer frees
 * the expired ones from the front of those lists, touching no other. A
 * socket holds at most net.dlcp.max_in_msgs messages being received (a
 * new one beyond that is dropped, DlcpDropInMsgs), at most
 * net.dlcp.max_in_msgs_peer of them from one sender address (counted in
 * 256 buckets by a keyed hash of the address, so that one host cannot
 * take the whole socket from the others: DlcpDropPeerMsgs; addresses
 * that share a bucket share its count), and four times as many zombies
 * (the one quiet longest goes first, DlcpInZombiesEvicted).
 *
 * The table keeps each entry's last_active, the order of those lists.
 *
 * Locking: all of it under dlcp_sock.lock (asserted); lookups take RCU
 * inside rhashtable_lookup_fast() but never run without the lock, so an
 * entry removed under it may be freed at once.
 */
#include <linux/jhash.h>
#include <linux/rhashtable.h>
#include "dlcp_impl.h"

static const struct rhashtable_params dlcp_intab_params = {
	.head_offset		= offsetof(struct dlcp_in_msg, node),
	.key_offset		= offsetof(struct dlcp_in_msg, key),
	.key_len		= sizeof(struct dlcp_in_key),
	.automatic_shrinking	= true,
};

/* The in_peer_msgs bucket of sender address @saddr */
static u16 *dlcp_intab_peer(struct dlcp_sock *dsk, const struct in6_addr *saddr)
{
	u32 h = jhash2((const u32 *)saddr, 4, dsk->in_peer_seed);

	return &dsk->in_peer_msgs[hash_32(h, DLCP_IN_PEER_BITS)];
}

int dlcp_intab_init(struct dlcp_sock *dsk)
{
	dsk->in_peer_seed = get_random_u32();
	INIT_LIST_HEAD(&dsk->in_active);
	INIT_LIST_HEAD(&dsk->in_zombies);
	INIT_LIST_HEAD(&dsk->in_settle);
	return rhashtable_init(&dsk->in_table, &dlcp_intab_params);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_intab_init);

/* The socket is gone and its table empty (may sleep). */
void dlcp_intab_destroy(struct dlcp_sock *dsk)
{
	WARN_ON_ONCE(dsk->nr_in_msgs);
	if (rcu_access_pointer(dsk->in_table.tbl))	/* init succeeded */
		rhashtable_destroy(&dsk->in_table);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_intab_destroy);

struct dlcp_in_msg *dlcp_intab_find(struct dlcp_sock *dsk,
				    const struct in6_addr *saddr,
				    __be16 sport, u32 id)
	__must_hold(&dsk->lock)
{
	struct dlcp_in_key key = { .saddr = *saddr, .id = id, .sport = sport };

	lockdep_assert_held(&dsk->lock);
	return rhashtable_lookup_fast(&dsk->in_table, &key, dlcp_intab_params);
}

/*
 * Room for one more message being received from @saddr: the drop reason
 * if the socket holds net.dlcp.max_in_msgs of them already, or
 * net.dlcp.max_in_msgs_peer from that address; else 0.
 */
enum dlcp_mib_field dlcp_intab_room(struct sock *sk,
				    const struct in6_addr *saddr)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_net *dn = dlcp_pernet(sock_net(sk));
	struct dlcp_sock *dsk = dlcp_sk(sk);

	lockdep_assert_held(&dsk->lock);
	if (dsk->nr_in_msgs - dsk->nr_zombies >= READ_ONCE(dn->max_in_msgs))
		return DLCP_MIB_DROP_INMSGS;
	if (*dlcp_intab_peer(dsk, saddr) >= READ_ONCE(dn->max_in_msgs_peer))
		return DLCP_MIB_DROP_PEERMSGS;
	return 0;
}

/* Add @m, a message being received: 0 or an errno (no memory). */
int dlcp_intab_insert(struct dlcp_sock *dsk, struct dlcp_in_msg *m)
	__must_hold(&dsk->lock)
{
	int err;

	lockdep_assert_held(&dsk->lock);
	err = rhashtable_insert_fast(&dsk->in_table, &m->node,
				     dlcp_intab_params);
	if (err)
		return err;
	m->last_active = jiffies;
	list_add_tail(&m->lru, &dsk->in_active);
	INIT_LIST_HEAD(&m->settle);
	dsk->nr_in_msgs++;
	dsk->in_rest += m->len - m->have.bytes;
	(*dlcp_intab_peer(dsk, &m->key.saddr))++;
	return 0;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_intab_insert);

/* A packet of @m arrived now: it goes to the back of the expiry order. */
void dlcp_intab_touch(struct dlcp_sock *dsk, struct dlcp_in_msg *m)
	__must_hold(&dsk->lock)
{
	lockdep_assert_held(&dsk->lock);
	m->last_active = jiffies;
	list_move_tail(&m->lru, m->delivered ? &dsk->in_zombies :
					       &dsk->in_active);
}

/* @m waits for late segments before it completes (dlcp_in_ready()). */
void dlcp_intab_settle(struct dlcp_sock *dsk, struct dlcp_in_msg *m)
	__must_hold(&dsk->lock)
{
	lockdep_assert_held(&dsk->lock);
	if (list_empty(&m->settle))
		list_add_tail(&m->settle, &dsk->in_settle);
}

/* @m, being received, has @bytes fewer missing. */
void dlcp_intab_got(struct dlcp_sock *dsk, const struct dlcp_in_msg *m,
		    u32 bytes)
	__must_hold(&dsk->lock)
{
	lockdep_assert_held(&dsk->lock);
	if (WARN_ON_ONCE(m->delivered || dsk->in_rest < bytes))
		bytes = min_t(u64, bytes, dsk->in_rest);
	dsk->in_rest -= bytes;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_intab_got);

/* Take @m off its lists and out of the counts of its kind. */
static void dlcp_intab_unlist(struct dlcp_sock *dsk, struct dlcp_in_msg *m)
{
	list_del(&m->lru);
	list_del_init(&m->settle);
	if (m->delivered) {
		dsk->nr_zombies--;
	} else {
		(*dlcp_intab_peer(dsk, &m->key.saddr))--;
		dlcp_intab_got(dsk, m, m->len - m->have.bytes);
	}
}

/* Take @m off the table and its lists. */
void dlcp_intab_remove(struct dlcp_sock *dsk, struct dlcp_in_msg *m)
	__must_hold(&dsk->lock)
{
	lockdep_assert_held(&dsk->lock);
	rhashtable_remove_fast(&dsk->in_table, &m->node, dlcp_intab_params);
	dlcp_intab_unlist(dsk, m);
	dsk->nr_in_msgs--;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_intab_remove);

/*
 * The zombie @z takes @m's place (same key); @m is then off the table
 * and its lists. If the socket holds four times net.dlcp.max_in_msgs
 * zombies, the one quiet longest is returned for the caller to free,
 * else NULL.
 */
struct dlcp_in_msg *dlcp_intab_zombify(struct sock *sk, struct dlcp_in_msg *m,
				       struct dlcp_in_msg *z)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	u32 max = READ_ONCE(dlcp_pernet(sock_net(sk))->max_in_msgs);

	lockdep_assert_held(&dsk->lock);
	WARN_ON_ONCE(rhashtable_replace_fast(&dsk->in_table, &m->node,
					     &z->node, dlcp_intab_params));
	dlcp_intab_unlist(dsk, m);
	INIT_LIST_HEAD(&z->settle);
	z->last_active = jiffies;
	list_add_tail(&z->lru, &dsk->in_zombies);
	dsk->nr_zombies++;
	if (dsk->nr_zombies <= 4ULL * max)
		return NULL;
	DLCP_INC_STATS(sock_net(sk), DLCP_MIB_IN_ZOMBIES_EVICTED);
	return list_first_entry(&dsk->in_zombies, struct dlcp_in_msg, lru);
}
