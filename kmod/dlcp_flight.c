// SPDX-License-Identifier: GPL-2.0
/*
 * The flight ring of a DLCP socket: one entry per transmitted data
 * segment not yet resolved (reported received or lost, or timed out), in
 * transmission order, for RACK's loss detection (dlcp_recovery.c). Each
 * entry names its message and segment and the time it was sent; a
 * resolved entry keeps its slot (msg NULL) until it reaches the head or
 * the ring fills and is compacted. The ring has net.dlcp.max_cwnd slots
 * for the whole socket; each peer's share is limited by its window.
 *
 * Everything here runs under dlcp_sock.lock, but the allocation, which
 * sendmsg() makes before taking it.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include "dlcp_impl.h"

/*
 * The socket's flight ring, net.dlcp.max_cwnd entries, allocated by the
 * first sendmsg() in process context (it may take several pages, which
 * GFP_ATOMIC under the socket lock could not count on) and installed
 * with dlcp_flight_install(). NULL if the socket has one.
 */
struct dlcp_flight *dlcp_flight_alloc(struct sock *sk, u32 *cap)
{
	if (READ_ONCE(dlcp_sk(sk)->flight))
		return NULL;
	*cap = READ_ONCE(dlcp_pernet(sock_net(sk))->max_cwnd);
	return kvcalloc(*cap, sizeof(struct dlcp_flight), GFP_KERNEL);
}

/* Install @flight of @cap entries unless the socket has a ring: then free it */
void dlcp_flight_install(struct sock *sk, struct dlcp_flight *flight, u32 cap)
	__must_hold(&dlcp_sk(sk)->lock)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);

	lockdep_assert_held(&dsk->lock);
	if (!flight)
		return;
	if (dsk->flight) {
		kvfree(flight);
		return;
	}
	dsk->flight = flight;
	dsk->flight_cap = cap;
}

/* Drop resolved entries from the head; compact the ring when it is full. */
void dlcp_flight_tidy(struct dlcp_sock *dsk)
	__must_hold(&dsk->lock)
{
	u32 i, n = 0;

	lockdep_assert_held(&dsk->lock);
	while (dsk->flight_len && !dlcp_flight_at(dsk, 0)->msg) {
		dsk->flight_head = (dsk->flight_head + 1) % dsk->flight_cap;
		dsk->flight_len--;
	}
	if (dsk->flight_len < dsk->flight_cap)
		return;
	for (i = 0; i < dsk->flight_len; i++) {
		struct dlcp_flight *f = dlcp_flight_at(dsk, i);

		if (f->msg)
			*dlcp_flight_at(dsk, n++) = *f;
	}
	dsk->flight_len = n;
}

void dlcp_flight_resolve(struct dlcp_sock *dsk, struct dlcp_flight *f)
	__must_hold(&dsk->lock)
{
	lockdep_assert_held(&dsk->lock);
	f->msg->inflight--;
	f->msg->peer->inflight--;
	f->msg = NULL;
	dsk->flight_live--;
}
