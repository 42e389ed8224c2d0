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
#include <linux/netdevice.h>
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
	return kvcalloc(*cap, sizeof(struct dlcp_flight), GFP_KERNEL_ACCOUNT);
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

/*
 * May @f still be queued on this host, in the backlog of the CPU that sent
 * it? A device that hands packets to the receiving stack through the
 * backlog of the sending CPU (veth, loopback; dlcp_out.c: "Which CPU
 * transmits") holds them there while that CPU does not run its softirq:
 * a host that did not schedule the CPU, or its ksoftirqd, for a slice.
 * A REPORT or PROBE answered through another CPU meanwhile shows @f
 * missing, and the reordering window and the timeout, sized for a round
 * trip of tens of microseconds, pass long before it arrives; the CPU's
 * own timers, when it runs again, come before its backlog. So while that
 * backlog holds packets, @f is not found lost; the guard timer looks
 * again. Any packet there holds @f up, not only those queued before it:
 * once the CPU has handed @f on, the REPORT about it waits in the same
 * backlog, behind it. The wait is bounded by DLCP_REO_MAX_US from the
 * transmission: a backlog that never empties (RPS on a busy host, or a
 * NIC's NAPI instance that stays on the CPU's poll list) must not stop
 * loss detection. Counted once an entry (DlcpLossHeld).
 */
bool dlcp_flight_held(struct sock *sk, struct dlcp_flight *f, u32 now_us)
	__must_hold(&dlcp_sk(sk)->lock)
{
	const struct softnet_data *sd;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	if (!cpu_online(f->cpu) ||
	    (s32)(now_us - f->sent_us) >= DLCP_REO_MAX_US)
		return false;
	sd = per_cpu_ptr(&softnet_data, f->cpu);
	/*
	 * Receive work waiting on that CPU: its backlog, or a device's NAPI
	 * instance (veth's own ring with GRO on), on its poll list.
	 */
	if (!skb_queue_len_lockless(&sd->input_pkt_queue) &&
	    /* the owner's, read without its lock: a hint, as the count is */
	    !data_race(skb_queue_len(&sd->process_queue)) &&
	    /* as is the poll list */
	    data_race(list_empty(&sd->poll_list)))
		return false;
	if (!f->held) {
		f->held = true;
		DLCP_INC_STATS(sock_net(sk), DLCP_MIB_LOSS_HELD);
	}
	return true;
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
