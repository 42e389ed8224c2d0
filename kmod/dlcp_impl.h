/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DLCP internal definitions shared by the files of the module.
 *
 * Files and their concerns:
 *   dlcp_main.c	module init/exit, protocol registration, per-netns state
 *   dlcp_sysctl.c	net.dlcp.* sysctls
 *   dlcp_proc.c	/proc/net/dlcp/{snmp,sockets,peers}; what they and
 *			sock_diag report of a socket
 *   dlcp_diag.c	sock_diag: the inet_diag handler that lists sockets
 *			over NETLINK_SOCK_DIAG
 *   dlcp_sock.c	socket calls, control messages
 *   dlcp_port.c	the port table and the receive path's socket lookup
 *   dlcp_out.c		the sender: messages, segmentation, what to send
 *			next under window and pacing, PMTU
 *   dlcp_flight.c	the flight ring: transmitted segments not resolved
 *   dlcp_recovery.c	the sender's loss recovery: REPORT and STOP, RACK
 *			loss detection, timeouts and probes
 *   dlcp_in.c		packet validation and demultiplexing, the receiver:
 *			reassembly, reports, completion and delivery
 *   dlcp_intab.c	the table of a socket's incoming messages
 *   dlcp_mem.c		receive memory accounting (net.dlcp.mem)
 *   dlcp_timer.c	guard (retransmission/probe) timer, garbage collection
 *   dlcp_buf.c		message buffers (page arrays) and byte-range sets
 *   dlcp_page.c	their pages, freed ones kept per CPU for reuse
 *   dlcp_prio.c	priority classes, DSCP/ECN, segment importance
 *   dlcp_peer.c	destinations of a socket and their path state: RTT,
 *			timeout, reordering window, pacing
 *   dlcp_cc.c		congestion control: the window of each destination
 *   dlcp_xmit.c	the transmit layer: routes, DLCP headers, checksums,
 *			the IP (or UDP) header through the family's ops;
 *			every packet leaves through it
 *   dlcp_udp.c		UDP encapsulation, below the transmit layer
 *   dlcp_offload.c	super-packets: their size (both modes); native
 *			ones built, cut by the kernel's GSO (net_offload)
 *			and received whole
 *   dlcp_ipv4.c	IPv4: the family's ops, input and ICMP
 *   dlcp_ipv6.c	IPv6: the family's ops, input and ICMPv6
 *
 * Headers: dlcp_wire.h the wire format, dlcp_mib.h the counters,
 * dlcp_msg.h the state of a message (buffers, outgoing and incoming
 * messages), dlcp_af.h the families' ops, dlcp_compat.h what differs
 * between the kernels, and this one: per-netns state, destinations,
 * sockets and the functions the files share.
 *
 * Addresses: every address inside the module is a struct in6_addr; IPv4
 * addresses are held v4-mapped (::ffff:a.b.c.d), so one code path serves
 * both families and an AF_INET6 socket can talk to IPv4 peers. What does
 * differ (socket addresses, routes, the IP header, ICMP) sits behind
 * struct dlcp_af, one instance per family: dlcp_af_of() picks it by a
 * peer's address, dlcp_sk_af() by a socket's family.
 *
 * Locking
 * -------
 * dlcp_port_lock (dlcp_port.c)
 *	protects the port hash table for writers; readers (packet receive)
 *	use RCU. Sockets are SOCK_RCU_FREE, so a socket found under RCU stays
 *	valid; the receive path takes a reference with refcount_inc_not_zero().
 * dlcp_sock.lock
 *	a BH-safe spinlock protecting all protocol state of one socket: the
 *	outgoing message list, the flight ring, the congestion state, the
 *	incoming message table and the socket defaults. Taken in softirq by
 *	the receive path and the timers and with spin_lock_bh() by system
 *	calls. Never held across a sleep or a copy from/to user memory.
 *	The socket's peers (dlcp_peer) are added and removed under it too;
 *	/proc and sock_diag read them under RCU (they are freed with
 *	kfree_rcu()).
 *	Packets are transmitted with it held, as TCP transmits under its
 *	socket spinlock; loopback and veth queue to the backlog, so the
 *	receive path is never entered recursively (for the same reason it
 *	matters which CPU transmits: dlcp_out.c).
 *	A message's memory is let go of after it: a finished outgoing
 *	message is uncharged and unlinked under the lock and set aside
 *	(dlcp_sock.out_reap), and whoever drops the lock releases its pages
 *	after; a read incoming message likewise (dlcp_delivery_free()).
 *	The functions that must be called with it held say so with
 *	__must_hold() and check it with lockdep_assert_held().
 * Order: dlcp_port_lock is never taken with dlcp_sock.lock held, nor the
 * other way round.
 *
 * Memory
 * ------
 * A message is held in a page array (struct dlcp_buf). The sender copies
 * the message in sendmsg() and charges it to dlcp_sock.snd_mem, bounded by
 * max(SO_SNDBUF, net.dlcp.wmem), and its pages to the protocol, bounded
 * by net.dlcp.mem (dlcp_mem.c). The receiver allocates pages as data
 * arrives (so a hostile length field costs nothing until data comes),
 * zeroes the bytes of them that did not arrive when the message is
 * delivered (never the whole page on allocation) and charges them, with
 * all the state of incoming messages, to sk_rmem_alloc, bounded by max(SO_RCVBUF,
 * net.dlcp.rmem) (a 64 MiB tensor passes with default settings and no
 * privileged tuning), and to the protocol's pages, bounded by
 * net.dlcp.mem (dlcp_mem.c). Incomplete messages with no progress for
 * net.dlcp.msg_timeout_ms are freed. Freed pages are kept per CPU for the
 * next buffer charged to the same memory cgroup (or none), outside these
 * limits and bounded on their own (dlcp_page.c).
 */
#ifndef _DLCP_IMPL_H
#define _DLCP_IMPL_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/export.h>
#include <linux/indirect_call_wrapper.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/win_minmax.h>
#include <linux/hrtimer.h>
#include <linux/skbuff.h>
#include <linux/xarray.h>
#include <linux/rhashtable-types.h>
#include <linux/ip.h>
#include <linux/siphash.h>
#include <linux/udp.h>
#include <net/inet_sock.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/netns/generic.h>
#include "../uapi/linux/dlcp.h"
#include "dlcp_compat.h"
#include "dlcp_wire.h"

#include "dlcp_mib.h"

/* ---------------------------------------------------------------- */
/* Per network namespace                                             */
/* ---------------------------------------------------------------- */

#define DLCP_MAX_CLASSES	8		/* priority classes */

/**
 * struct dlcp_net - DLCP state of one network namespace
 * @mib:		per-CPU counters
 * @sysctl_hdr:		registered net.dlcp table
 * @max_msg_size:	net.dlcp.max_msg_size, bytes
 * @loss_budget_ppm:	net.dlcp.loss_budget_ppm, default budget of sockets
 * @rmem:		net.dlcp.rmem, bytes of receive memory per socket
 * @wmem:		net.dlcp.wmem, bytes of send memory per socket
 * @rto_min_ms:		net.dlcp.rto_min_ms, lower bound of the guard timer
 * @msg_timeout_ms:	net.dlcp.msg_timeout_ms, give-up time of a message
 * @init_cwnd:		net.dlcp.init_cwnd, initial window in segments
 * @max_cwnd:		net.dlcp.max_cwnd, largest window in segments
 * @ack_every:		net.dlcp.ack_every, data packets per report
 * @reorder_us:		net.dlcp.reorder_us, the reordering window: a missing
 *			segment is lost once a packet sent this much (plus
 *			srtt/4) after it has arrived
 * @prio_classes:	net.dlcp.prio_classes, number of priority classes
 * @unpriv_class:	net.dlcp.unpriv_class, highest class without
 *			CAP_NET_ADMIN
 * @layer_width:	net.dlcp.layer_width, layers per class
 * @class_dscp:		net.dlcp.class_dscp, DSCP of each class
 * @ecn:		net.dlcp.ecn, send important packets ECT(0)
 * @droppable_ppm:	net.dlcp.droppable_ppm, default fraction of the
 *			segments of fp messages marked droppable
 * @encap:		net.dlcp.encap, default encapsulation (DLCP_ENCAP_*)
 * @udp_port:		net.dlcp.udp_port, UDP port of DLCP in UDP mode
 * @udp_sport_min:	net.dlcp.udp_sport_min, source port range start
 * @udp_sport_max:	net.dlcp.udp_sport_max, source port range end
 * @udp_sport_priv:	net.dlcp.udp_sport_priv, take only datagrams from
 *			source ports below PROT_SOCK (default on)
 * @entropy_key:	secret of the path entropy (dlcp_entropy()), so that
 *			the UDP source port and IPv6 flow label, which flow
 *			logs record, say nothing of message ids
 * @udp_entropy:	net.dlcp.udp_entropy, packets per source port (0: one
 *			port per message)
 * @udp_gso:		net.dlcp.udp_gso, send runs of packets that share a
 *			source port as one UDP GSO super-packet (default on)
 * @gso:		net.dlcp.gso, native mode: send runs of packets as one
 *			super-packet (dlcp_offload.c; default on)
 * @rx_keep:		net.dlcp.rx_keep, keep received DATA packets that
 *			extend their message in order rather than copy them
 *			(dlcp_buf.c; default on)
 * @max_in_msgs:	net.dlcp.max_in_msgs, messages being received per
 *			socket
 * @max_in_msgs_peer:	net.dlcp.max_in_msgs_peer, of them from one address
 * @noport_rate:	net.dlcp.noport_rate, answers a second to packets for
 *			ports no socket holds (0: none)
 * @noport_lock:	serialises @noport_credit and @noport_stamp
 * @noport_credit:	answers the namespace may still send now
 * @noport_stamp:	jiffies when @noport_credit last grew
 * @net:		the namespace (for sysctl handlers)
 * @udp_lock:		serialises opening and moving @udp_sock
 * @udp_sock:		the namespace's UDP encapsulation socket, or NULL
 * @udp6_sock:		its IPv6 twin, or NULL (IPv6 disabled)
 * @udp_sock_port:	the port @udp_sock is bound to
 */
struct dlcp_net {
	struct dlcp_mib __percpu	*mib;
	struct ctl_table_header		*sysctl_hdr;
	int	max_msg_size;
	int	loss_budget_ppm;
	int	rmem;
	int	wmem;
	int	rto_min_ms;
	int	msg_timeout_ms;
	int	init_cwnd;
	int	max_cwnd;
	int	ack_every;
	int	reorder_us;
	int	prio_classes;
	int	unpriv_class;
	int	layer_width;
	int	class_dscp[DLCP_MAX_CLASSES];
	int	ecn;
	int	droppable_ppm;
	int	encap;
	int	udp_port;
	int	udp_sport_min;
	int	udp_sport_max;
	int	udp_sport_priv;
	hsiphash_key_t	entropy_key;
	int	udp_entropy;
	int	udp_gso;
	int	gso;
	int	rx_keep;
	int	max_in_msgs;
	int	max_in_msgs_peer;
	int	noport_rate;
	spinlock_t	noport_lock;	/* see @noport_lock above */
	u32		noport_credit;
	unsigned long	noport_stamp;
	struct net	*net;
	struct mutex	udp_lock;	/* see @udp_lock above */
	struct socket	*udp_sock;
	struct socket	*udp6_sock;
	int		udp_sock_port;
};

extern unsigned int dlcp_net_id;

static inline struct dlcp_net *dlcp_pernet(const struct net *net)
{
	return net_generic(net, dlcp_net_id);
}

#define DLCP_INC_STATS(net, field) \
	this_cpu_inc(dlcp_pernet(net)->mib->mibs[field])
#define DLCP_ADD_STATS(net, field, val) \
	this_cpu_add(dlcp_pernet(net)->mib->mibs[field], val)

/*
 * The default UDP source ports (net.dlcp.udp_sport_min .. PROT_SOCK - 1):
 * ports only a privileged process may bind, so that a receiver can tell a
 * datagram of a host's DLCP from one of an unprivileged user's UDP socket
 * (net.dlcp.udp_sport_priv), and 512 of them, entropy enough for ECMP and
 * RSS hashing.
 */
#define DLCP_UDP_SPORT_MIN	512

/* Answers to packets for closed ports sent at once (dlcp_xmit_noport()) */
#define DLCP_NOPORT_BURST	50

/*
 * Message ids (dlcp_msg_id_offset()): each destination's offset moves on
 * every DLCP_ID_EPOCH_S seconds, by 2^DLCP_ID_EPOCH_BITS and a secret
 * below that.
 */
#define DLCP_ID_EPOCH_S		64
#define DLCP_ID_EPOCH_BITS	24

/*
 * What an outgoing message of @len bytes counts in dlcp_sock.snd_mem: the
 * pages it holds, so that many small messages count as what they cost
 * against SO_SNDBUF and the socket's share of net.dlcp.mem.
 */
static inline u64 dlcp_snd_cost(u32 len)
{
	return round_up((u64)len, PAGE_SIZE);
}

/* Hard limits, independent of sysctls. */
#define DLCP_MAX_MSG_HARD	BIT(30)		/* largest max_msg_size */
#define DLCP_CWND_HARD		4096		/* largest max_cwnd */
/*
 * Gaps in one report: at most DLCP_MAX_GAPS (a 1064-byte REPORT), and no
 * longer than the message's longest DATA packet, but at least
 * DLCP_MIN_GAPS. A message with a loss budget keeps the gaps it gave up
 * on, so 64 could all be taken below the bytes in flight.
 */
#define DLCP_MAX_GAPS		128
#define DLCP_MIN_GAPS		32
#define DLCP_RTO_MAX_US		(2 * USEC_PER_SEC)	/* backed-off RTO cap */
#define DLCP_LATE_WIN_US	(10 * USEC_PER_SEC)	/* memory of a spurious RTO */
#define DLCP_RTT_MAX_US		(60 * USEC_PER_SEC)	/* larger: not an RTT */
#define DLCP_REO_MAX_US		(200 * USEC_PER_MSEC)	/* receiver's wait cap */
#define DLCP_PEER_HASH_BITS	4
#define DLCP_MAX_PEERS		1024		/* destinations per socket */
#define DLCP_STALL_MULT		4		/* msg_timeouts without progress */
#define DLCP_GIVE_UP_TRIES	5		/* RTOs or PROBEs per msg_timeout */
#define DLCP_IN_PEER_BITS	8		/* buckets of in_peer_msgs */

#include "dlcp_msg.h"

/* ---------------------------------------------------------------- */
/* Sockets                                                           */
/* ---------------------------------------------------------------- */

/**
 * struct dlcp_cc - congestion control state of a peer (dlcp_cc.c)
 * @alpha:		DCTCP's estimate of the marked fraction, 1024 = 1.0
 * @cwnd_cnt:		segments acknowledged since cwnd last grew
 * @ssthresh:		slow start while cwnd is below it; U32_MAX until the
 *			first congestion signal
 * @round_start_us:	start of the current round
 * @acked_segs:		segments acknowledged this round
 * @acked_bytes:	payload bytes acknowledged this round
 * @lost_segs:		segments found lost this round
 * @ce_bytes:		bytes reported CE-marked this round
 * @cut_ns:		time of the last window reduction (ktime), 0: none
 * @base_rtt_us:	smallest round-trip time seen: the path without queue
 * @round_rtt_us:	smallest round-trip time seen this round
 * @round_samples:	round-trip time samples this round
 * @undo_cwnd:		cwnd before the first timeout not yet judged, 0: none
 * @undo_ssthresh:	ssthresh before that timeout
 * @undo_ns:		ktime_get_ns() of that timeout (64 bits: a peer may stay
 *			silent after it for longer than dlcp_now_us() can tell)
 * @undo_srtt_us:	smoothed round-trip time at that timeout
 * @undo:		that timeout was spurious: restore @undo_cwnd
 */
struct dlcp_cc {
	u32	alpha;
	u32	cwnd_cnt;
	u32	ssthresh;
	u32	round_start_us;
	u32	acked_segs;
	u32	acked_bytes;
	u32	lost_segs;
	u32	ce_bytes;
	u64	cut_ns;
	u32	base_rtt_us;
	u32	round_rtt_us;
	u32	round_samples;
	u32	undo_cwnd;
	u32	undo_ssthresh;
	u32	undo_srtt_us;
	u64	undo_ns;
	bool	undo;
};

/**
 * struct dlcp_peer - one destination host of a socket: the window, pacing
 *	and round-trip state of the path to it (dlcp_peer.c). Messages to
 *	different hosts do not share a window, so a parameter server's pull
 *	to a slow worker does not hold back the others. Kept while messages
 *	use it and after (the RTT and window carry over to the next
 *	iteration), up to DLCP_MAX_PEERS per socket; unused ones are
 *	reclaimed when the table is full.
 * @node:	in dlcp_sock.peers (RCU for /proc readers)
 * @rcu:	for kfree_rcu()
 * @daddr:	the destination address
 * @nr_msgs:	outgoing messages to it (dlcp_out_msg.peer)
 * @inflight:	unresolved segments sent to it: what @cwnd limits
 * @cwnd:	congestion window in segments
 * @cc:		congestion control state
 * @last_heard:	jiffies of the last REPORT or STOP from it: messages to a
 *		destination that answers are not given up for silence
 * @rto_shift:	timeouts since the last RTT sample (RTO backoff)
 * @rto_run:	jiffies of the guard timer run that last backed off
 * @rto_run_us:	the retransmission timeout that run started with
 * @srtt_us:	smoothed round-trip time, 0 before the first sample
 * @rttvar_us:	round-trip time variation the timeout uses: the largest
 *		@mdev_us of the last round trip, decaying once a round trip
 * @mdev_us:	mean deviation of the RTT samples (RFC 6298's RTTVAR)
 * @mdev_max_us: largest @mdev_us since @rttvar_stamp_us
 * @rttvar_stamp_us: dlcp_now_us() when the current round trip began
 * @late_us:	the largest RTT sample that proved a timeout spurious in
 *		the last DLCP_LATE_WIN_US (windowed max): the timeout stays
 *		above twice it
 * @reo_mult:	reordering window in quarters of srtt (1..DLCP_REO_MULT_MAX)
 * @reo_late_us: the largest reordering that made a resend needless in the
 *		last DLCP_LATE_WIN_US (windowed max): the window stays above
 *		it
 * @reo_calm:	rounds since a REPORT last flagged a needless resend
 * @reo_stamp_us: dlcp_now_us() of the last @reo_mult increase
 * @next_xmit_ns: pacing: earliest time of the next transmission
 */
struct dlcp_peer {
	struct hlist_node	node;
	struct rcu_head		rcu;
	struct in6_addr		daddr;
	u32			nr_msgs;
	u32			inflight;
	u32			cwnd;
	struct dlcp_cc		cc;
	unsigned long		last_heard;
	u8			rto_shift;
	unsigned long		rto_run;
	u32			rto_run_us;
	u32			srtt_us;
	u32			rttvar_us;
	u32			mdev_us;
	u32			mdev_max_us;
	u32			rttvar_stamp_us;
	struct minmax		late_us;
	struct minmax		reo_late_us;
	u8			reo_mult;
	u8			reo_calm;
	u32			reo_stamp_us;
	u64			next_xmit_ns;
};

/**
 * struct dlcp_ctl_route - the route of a socket's last control packet
 * @dst:	the route (a reference), NULL if none is kept
 * @cookie:	IPv6 route cookie for dst_check()
 * @saddr:	the source address asked for
 * @daddr:	the destination
 * @src:	the source address the route gave
 * @sport:	source port
 * @dport:	destination port
 * @oif:	the socket's bound device when it was looked up
 * @mark:	the socket's mark then
 * @tos:	the socket's routing TOS then
 */
struct dlcp_ctl_route {
	struct dst_entry	*dst;
	u32			cookie;
	struct in6_addr		saddr;
	struct in6_addr		daddr;
	struct in6_addr		src;
	__be16			sport;
	__be16			dport;
	int			oif;
	u32			mark;
	u8			tos;
};

/**
 * struct dlcp_sock - a DLCP socket
 * @inet:		inet socket, must be first
 * @lock:		protects the fields below (see Locking above)
 * @port_node:		in the port hash (dlcp_port_lock)
 * @out_msgs:		outgoing messages by class (0 first), in send order
 *			within a class: the order they are transmitted in
 * @nr_out_msgs:	entries in @out_msgs
 * @out_reap:		messages done with, whose pages, routes and maps are
 *			released after @lock (dlcp_out_reap())
 * @next_msg_id:	counter of the message ids (dlcp_next_msg_id())
 * @id_key:		secret that offsets the ids per destination
 * @snd_mem:		bytes of outgoing messages held, in whole pages
 *			(dlcp_snd_cost())
 * @flight:		ring of unresolved transmitted segments
 * @flight_head:	index of the oldest entry of @flight
 * @flight_len:		slots in use in @flight, resolved ones included
 * @flight_live:	unresolved entries in @flight: at most @flight_cap
 *			for the socket, each peer's share limited by its cwnd
 * @flight_cap:		size of @flight (net.dlcp.max_cwnd at first send)
 * @tx_cpu:		CPU that processed the last REPORT or STOP: the one
 *			that transmits while packets are in flight
 *			(dlcp_out_may_push())
 * @peers:		destinations, by address (struct dlcp_peer)
 * @nr_peers:		entries in @peers
 * @pacer:		pacing timer
 * @guard:		retransmission, probe and garbage-collection timer
 * @in_table:		incoming messages and zombies (dlcp_intab.c)
 * @in_active:		messages being received, by their last packet
 * @in_zombies:		zombies, by the last packet of theirs
 * @in_settle:		messages waiting for late segments (settle_at)
 * @nr_in_msgs:		entries in @in_table
 * @nr_zombies:		zombies among them
 * @in_rest:		bytes the messages being received still miss, all
 *			together (zombies have none): what they need in
 *			pages at most (dlcp_in_may_keep())
 * @in_peer_msgs:	messages being received, by a keyed hash of their
 *			sender's address (dlcp_intab.c)
 * @in_peer_seed:	the key of that hash
 * @in_reo_us:		the longest reordering seen by this receiver (sender
 *			clock, microseconds): how long a message that could
 *			complete within budget waits for late segments
 * @loss_budget_ppm:	DLCP_LOSS_BUDGET
 * @layer:		DLCP_LAYER
 * @prio:		DLCP_PRIORITY
 * @prio_set:		DLCP_PRIORITY was set; else classes follow layers
 * @recv_completion:	DLCP_RECVCOMPLETION
 * @encap:		DLCP_ENCAP, -1: follow net.dlcp.encap
 * @paths:		DLCP_PATHS, copied into each message at sendmsg()
 * @nr_paths:		entries in @paths
 * @ctl_rt:		route of the last control packet (dlcp_xmit_ctl())
 * @dead:		closing: timers must not re-arm, packets are dropped
 */
struct dlcp_sock {
	struct inet_sock	inet;
	spinlock_t		lock;		/* protocol state, see Locking */
	struct hlist_node	port_node;

	struct list_head	out_msgs;
	u32			nr_out_msgs;
	struct list_head	out_reap;
	u32			next_msg_id;
	siphash_key_t		id_key;
	u64			snd_mem;
	struct dlcp_flight	*flight;
	u32			flight_head;
	u32			flight_len;
	u32			flight_live;
	u32			flight_cap;
	int			tx_cpu;
	struct hlist_head	peers[1 << DLCP_PEER_HASH_BITS];
	u32			nr_peers;
	struct hrtimer		pacer;
	struct timer_list	guard;

	struct rhashtable	in_table;
	struct list_head	in_active;
	struct list_head	in_zombies;
	struct list_head	in_settle;
	u32			nr_in_msgs;
	u32			nr_zombies;
	u64			in_rest;
	u16			in_peer_msgs[1 << DLCP_IN_PEER_BITS];
	u32			in_peer_seed;
	u32			in_reo_us;

	u32			loss_budget_ppm;
	u16			layer;
	u8			prio;
	bool			prio_set;
	bool			recv_completion;
	s8			encap;
	u8			nr_paths;
	struct dlcp_path	paths[DLCP_MAX_PATHS];
	struct dlcp_ctl_route	ctl_rt;
	bool			dead;
};

static inline struct dlcp_sock *dlcp_sk(const struct sock *sk)
{
	return (struct dlcp_sock *)sk;
}

/* Entry @i of the flight ring, counting from its head. */
static inline struct dlcp_flight *dlcp_flight_at(struct dlcp_sock *dsk, u32 i)
{
	return &dsk->flight[(dsk->flight_head + i) % dsk->flight_cap];
}

/*
 * An AF_INET6 socket: inet6_sk() finds the ipv6_pinfo at the end of the
 * object (proto.obj_size), so it must be the last member.
 */
struct dlcp6_sock {
	struct dlcp_sock	dlcp;
	struct ipv6_pinfo	inet6;
};

/**
 * struct dlcp_skb_cb - addresses of a received packet, set on entry to the
 *	receive path for both families (skb->cb; incoming skbs only)
 * @saddr:	source address (v4-mapped for IPv4)
 * @daddr:	destination address
 * @dsfield:	IPv4 TOS or IPv6 traffic class (DSCP and ECN)
 */
struct dlcp_skb_cb {
	struct in6_addr	saddr;
	struct in6_addr	daddr;
	u8		dsfield;
};

/*
 * DLCP packets in @skb, and the length of each from its DLCP header on: a
 * super-packet (native, or UDP GSO on the way out) holds gso_segs of
 * gso_size bytes
 */
static inline u32 dlcp_skb_pkts(const struct sk_buff *skb)
{
	return skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
}

static inline u32 dlcp_skb_pkt_len(const struct sk_buff *skb)
{
	return skb_is_gso(skb) ? skb_shinfo(skb)->gso_size : skb->len;
}

static inline struct dlcp_skb_cb *dlcp_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct dlcp_skb_cb) > sizeof(skb->cb));
	return (struct dlcp_skb_cb *)skb->cb;
}

#include "dlcp_af.h"

/* Bytes of a @len-byte message that a budget of @ppm may leave out. */
static inline u32 dlcp_budget_bytes(u32 len, u32 ppm)
{
	return div_u64((u64)len * ppm, DLCP_PPM_MAX);
}

/*
 * DLCP's clock for round-trip times and transmit stamps, in microseconds.
 * It is 32 bits (the width of the wire's timestamps), so it wraps every
 * 71.6 minutes, and two stamps compared as (s32)(a - b) must be less than
 * 35.8 minutes apart; a stamp left at 0 is not "long ago". As
 * INITIAL_JIFFIES does for jiffies, the clock starts five minutes before
 * its wrap: code that forgets either fails in the first minutes after
 * boot, in every test run, not only in the runs that last half an hour.
 */
#define DLCP_CLOCK_START_US	((u32)(-300 * USEC_PER_SEC))

/* DLCP's clock at @ns, a ktime_get_ns() value */
static inline u32 dlcp_clock_us(u64 ns)
{
	return (u32)div_u64(ns, NSEC_PER_USEC) + DLCP_CLOCK_START_US;
}

static inline u32 dlcp_now_us(void)
{
	return dlcp_clock_us(ktime_get_ns());
}

/* dlcp_main.c */
extern struct proto dlcp_prot;

/**
 * struct dlcp_send_args - what the control messages of one sendmsg() say
 * @crit:	critical ranges (in the kernel copy of the control buffer)
 * @nr_crit:	number of @crit ranges
 * @deadline_ms: delivery deadline, with DLCP_MSG_HAS_DEADLINE
 * @seg_cls:	per-segment importance classes, or NULL
 * @nr_seg_cls:	number of @seg_cls entries
 * @droppable_ppm: fraction of segments to make droppable, or -1: sysctl
 * @class0:	critical retransmissions may go in class 0 (CAP_NET_ADMIN)
 */
struct dlcp_send_args {
	const struct dlcp_range	*crit;
	u32			nr_crit;
	u32			deadline_ms;
	const u8		*seg_cls;
	u32			nr_seg_cls;
	s32			droppable_ppm;
	bool			class0;
};

/*
 * Internal functions the KUnit tests (dlcp_test.ko, the *_test.c files)
 * call: exported in the DLCP_INTERNAL namespace only by the build that
 * makes the tests (make kunit-module, which defines DLCP_KUNIT), as
 * EXPORT_SYMBOL_IF_KUNIT() does (6.2 and later) for kernels built with
 * KUnit.
 */
#ifdef DLCP_KUNIT
#define EXPORT_SYMBOL_IF_DLCP_KUNIT(sym) \
	EXPORT_SYMBOL_NS_GPL(sym, DLCP_NS(DLCP_INTERNAL))
#else
#define EXPORT_SYMBOL_IF_DLCP_KUNIT(sym)
#endif

/* dlcp_sysctl.c */
int dlcp_sysctl_register(struct net *net);
void dlcp_sysctl_unregister(struct net *net);

/* dlcp_proc.c */
int dlcp_proc_init(struct net *net);
void dlcp_proc_exit(struct net *net);
void dlcp_sock_info(struct sock *sk, struct dlcp_diag_info *info);
void dlcp_peer_info(const struct sock *sk, const struct dlcp_peer *p,
		    struct dlcp_diag_peer *dp);

/* dlcp_diag.c */
#if IS_ENABLED(CONFIG_INET_DIAG)
int dlcp_diag_init(void);
void dlcp_diag_exit(void);
#else
static inline int dlcp_diag_init(void)
{
	return 0;
}

static inline void dlcp_diag_exit(void)
{
}
#endif

/* dlcp_port.c */
int dlcp_get_port(struct sock *sk, unsigned short snum);
int dlcp_hash(struct sock *sk);
void dlcp_unhash(struct sock *sk);
struct sock *dlcp_lookup(struct net *net, const struct in6_addr *daddr,
			 __be16 dport, int dif, int sdif);
struct sock *dlcp_port_sock(struct net *net, __be16 port);
int dlcp_walk_socks(struct net *net, long *pos,
		    int (*fn)(struct sock *sk, void *arg), void *arg);

/* dlcp_sock.c */
extern const struct proto_ops dlcp_inet_ops;
extern struct proto dlcpv6_prot;
extern const struct proto_ops dlcp_inet6_ops;
u32 dlcp_rcvbuf_limit(const struct sock *sk);
int dlcp_sock_encap(const struct sock *sk);

/* dlcp_xmit.c */
struct dst_entry *dlcp_route(struct sock *sk, const struct in6_addr *saddr,
			     const struct in6_addr *daddr, __be16 sport,
			     __be16 dport, int oif, struct in6_addr *src,
			     u32 *cookie);
u32 dlcp_xmit_payload(const struct in6_addr *daddr, bool udp, u32 mtu);
void dlcp_fill_hdr(struct dlcp_hdr *h, unsigned int type, __be16 sport,
		   __be16 dport, u32 msg_id, u32 msg_len, u32 len, u8 flags,
		   u8 prio);
struct sk_buff *dlcp_alloc_ctl(u32 hlen, gfp_t gfp);
void dlcp_xmit_csum(struct sk_buff *skb, const struct in6_addr *saddr,
		    const struct in6_addr *daddr, u32 len, u8 tos);
int dlcp_xmit_skb(struct sock *sk, struct sk_buff *skb, struct dst_entry *dst,
		  const struct in6_addr *saddr, const struct in6_addr *daddr,
		  u8 cls, bool droppable, bool udp, u32 msg_id, u32 seg);
void dlcp_xmit_noport(struct net *net, const struct dlcp_af *af,
		      struct sk_buff *in, bool udp);
int dlcp_xmit_ctl(struct sock *sk, struct sk_buff *skb,
		  const struct in6_addr *saddr, const struct in6_addr *daddr,
		  bool udp, u8 cls);
void dlcp_xmit_ctl_forget(struct sock *sk);

/* dlcp_out.c */
struct dlcp_out_msg *dlcp_out_msg_alloc(struct sock *sk, size_t len,
					const struct in6_addr *daddr,
					__be16 dport);
int dlcp_out_route(struct sock *sk, struct dlcp_out_msg *m);
int dlcp_out_seg_size(struct sock *sk, const struct in6_addr *daddr,
		      __be16 dport, bool udp);
int dlcp_out_build(struct sock *sk, struct dlcp_out_msg *m,
		   const struct dlcp_send_args *args);
int dlcp_out_fill(struct sock *sk, struct dlcp_out_msg *m,
		  struct iov_iter *from, const struct dlcp_send_args *args);
void dlcp_out_release_msg(struct dlcp_out_msg *m);
u8 dlcp_out_seg_flags(const struct dlcp_out_msg *m, u32 seg, bool rtx);
struct sk_buff *dlcp_out_seg_skb(struct sock *sk, struct dlcp_out_msg *m,
				 u32 seg, u32 k, u8 flags, u32 now_us,
				 u32 headroom);
void dlcp_out_push(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock);
bool dlcp_out_may_push(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_out_push_clocked(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_out_enqueue(struct dlcp_sock *dsk, struct dlcp_out_msg *m)
	__must_hold(&dsk->lock);
void dlcp_out_free_msg(struct sock *sk, struct dlcp_out_msg *m)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_out_purge(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_out_reap_take(struct sock *sk, struct list_head *reap)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_out_reap(struct list_head *reap);
struct sock *dlcp_out_err_sock(struct net *net, const struct in6_addr *saddr,
			       const struct in6_addr *daddr,
			       const struct dlcp_hdr *h, int dif);
void dlcp_out_err_pmtu(struct sock *sk, const struct in6_addr *daddr, u32 mtu);
void dlcp_out_pmtu(struct sock *sk, const struct in6_addr *daddr, u32 mtu)
	__must_hold(&dlcp_sk(sk)->lock);
struct dlcp_out_msg *dlcp_out_find(struct dlcp_sock *dsk,
				   const struct dlcp_hdr *h,
				   const struct in6_addr *saddr)
	__must_hold(&dsk->lock);
bool dlcp_out_quoted(struct dlcp_sock *dsk, const struct dlcp_hdr *h,
		     const struct in6_addr *daddr)
	__must_hold(&dsk->lock);
void dlcp_out_send_ctl(struct sock *sk, struct dlcp_out_msg *m,
		       unsigned int type)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_out_complete(struct sock *sk, struct dlcp_out_msg *m, u32 status,
		       u32 lost, int err)
	__must_hold(&dlcp_sk(sk)->lock);
int dlcp_out_resegment(struct sock *sk, struct dlcp_out_msg *m, u32 seg_size)
	__must_hold(&dlcp_sk(sk)->lock);
bool dlcp_out_want_rtx(const struct dlcp_out_msg *m, bool *any);
void dlcp_seg_set(struct dlcp_out_msg *m, u32 seg, u8 state);

/* dlcp_flight.c */
struct dlcp_flight *dlcp_flight_alloc(struct sock *sk, u32 *cap);
void dlcp_flight_install(struct sock *sk, struct dlcp_flight *flight, u32 cap)
	__must_hold(&dlcp_sk(sk)->lock);
bool dlcp_flight_held(struct sock *sk, struct dlcp_flight *f, u32 now_us)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_flight_resolve(struct dlcp_sock *dsk, struct dlcp_flight *f)
	__must_hold(&dsk->lock);
void dlcp_flight_tidy(struct dlcp_sock *dsk)
	__must_hold(&dsk->lock);

/* dlcp_recovery.c */
enum dlcp_mib_field dlcp_recovery_report(struct sock *sk, struct sk_buff *skb)
	__must_hold(&dlcp_sk(sk)->lock);
enum dlcp_mib_field dlcp_recovery_stop(struct sock *sk, struct sk_buff *skb)
	__must_hold(&dlcp_sk(sk)->lock);
bool dlcp_recovery_timeout(struct sock *sk, unsigned long now)
	__must_hold(&dlcp_sk(sk)->lock);

/* dlcp_in.c */
int dlcp_drop(struct net *net, struct sk_buff *skb, enum dlcp_mib_field why);
int dlcp_rcv_common(struct sk_buff *skb, const struct dlcp_af *af, bool udp);
int dlcp_rcv_one(struct sk_buff *skb, const struct dlcp_af *af, bool udp);
u32 dlcp_in_gaps(const struct dlcp_rangeset *rs, u32 len, bool probed,
		 struct dlcp_wire_range *g, u32 max_gaps, u32 *scan_end);
bool dlcp_in_timeout(struct sock *sk, unsigned long now)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_in_purge(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_delivery_free(struct dlcp_delivery *d);
void dlcp_delivery_put_lost(const struct dlcp_delivery *d, struct msghdr *msg);

/* dlcp_mem.c */
extern atomic_long_t dlcp_memory_allocated;
DECLARE_PER_CPU(int, dlcp_memory_per_cpu_fw_alloc);
extern long dlcp_sysctl_mem[3];
extern int dlcp_sysctl_rmem[3];
extern unsigned long dlcp_memory_pressure;
extern struct percpu_counter dlcp_sockets_allocated;
void dlcp_enter_memory_pressure(struct sock *sk);
int dlcp_mem_init(void);
void dlcp_mem_exit(void);
enum dlcp_mib_field dlcp_mem_schedule(struct sock *sk, u32 bytes)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_mem_charge(struct sock *sk, u32 bytes)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_mem_uncharge(struct sock *sk, u32 bytes)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_mem_errq_owner(struct sk_buff *skb, struct sock *sk);
bool dlcp_mem_charge_snd(struct sock *sk, u32 bytes);
void dlcp_mem_uncharge_snd(struct sock *sk, u32 bytes);

/* dlcp_intab.c */
int dlcp_intab_init(struct dlcp_sock *dsk);
void dlcp_intab_destroy(struct dlcp_sock *dsk);
struct dlcp_in_msg *dlcp_intab_find(struct dlcp_sock *dsk,
				    const struct in6_addr *saddr,
				    __be16 sport, u32 id)
	__must_hold(&dsk->lock);
enum dlcp_mib_field dlcp_intab_room(struct sock *sk,
				    const struct in6_addr *saddr)
	__must_hold(&dlcp_sk(sk)->lock);
int dlcp_intab_insert(struct dlcp_sock *dsk, struct dlcp_in_msg *m)
	__must_hold(&dsk->lock);
void dlcp_intab_touch(struct dlcp_sock *dsk, struct dlcp_in_msg *m)
	__must_hold(&dsk->lock);
void dlcp_intab_got(struct dlcp_sock *dsk, const struct dlcp_in_msg *m,
		    u32 bytes)
	__must_hold(&dsk->lock);
void dlcp_intab_settle(struct dlcp_sock *dsk, struct dlcp_in_msg *m)
	__must_hold(&dsk->lock);
void dlcp_intab_remove(struct dlcp_sock *dsk, struct dlcp_in_msg *m)
	__must_hold(&dsk->lock);
struct dlcp_in_msg *dlcp_intab_zombify(struct sock *sk, struct dlcp_in_msg *m,
				       struct dlcp_in_msg *z)
	__must_hold(&dlcp_sk(sk)->lock);

/* dlcp_peer.c */
struct dlcp_peer *dlcp_peer_alloc(void);
struct dlcp_peer *dlcp_peer_get(struct sock *sk,
				const struct in6_addr *daddr,
				struct dlcp_peer **spare)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_peer_put(struct dlcp_peer *p);
void dlcp_peer_free_all(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock);
u32 dlcp_peer_min_rto_us(const struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock);
u32 dlcp_peer_rto_us(const struct sock *sk, const struct dlcp_peer *p);
void dlcp_peer_rtt_sample(struct dlcp_peer *p, u32 tsecr);
u32 dlcp_peer_reorder_us(const struct sock *sk, const struct dlcp_peer *p);
void dlcp_peer_dup_report(struct dlcp_peer *p, u32 rack_age_us);
void dlcp_peer_reorder_round(struct dlcp_peer *p);
u64 dlcp_peer_pace_ns(const struct dlcp_peer *p);
u32 dlcp_peer_pace_room(const struct dlcp_peer *p, u64 now, u64 interval);

/*
 * The pacing clock on the per-packet path (dlcp_out_push()), inline: must
 * a packet to @p wait at @now (more than two @intervals booked ahead)?
 */
static inline bool dlcp_peer_pace_wait(const struct dlcp_peer *p, u64 now,
				       u64 interval)
{
	return interval && p->next_xmit_ns > now + 2 * interval;
}

/* A packet went to @p at @now: the pacing clock moves on by @interval. */
static inline void dlcp_peer_pace_sent(struct dlcp_peer *p, u64 now,
				       u64 interval)
{
	p->next_xmit_ns = max(p->next_xmit_ns, now) + interval;
}

/* When @p may be sent to next, for the pacing timer. */
static inline u64 dlcp_peer_pace_next(const struct dlcp_peer *p)
{
	return p->next_xmit_ns;
}

/* dlcp_cc.c */
void dlcp_cc_init(struct sock *sk, struct dlcp_peer *p);
void dlcp_cc_on_report(struct sock *sk, struct dlcp_peer *p, u32 acked,
		       u32 acked_bytes, u32 lost, u32 ce_bytes)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_cc_on_timeout(struct sock *sk, struct dlcp_peer *p)
	__must_hold(&dlcp_sk(sk)->lock);
bool dlcp_cc_on_rtt(struct dlcp_peer *p, u32 rtt_us);

/* dlcp_prio.c */
u8 dlcp_layer_class(const struct dlcp_net *dn, u32 layer);
u8 dlcp_pkt_tos(const struct dlcp_net *dn, u8 cls, bool droppable);
int dlcp_mark_droppable(struct dlcp_out_msg *m, u32 ppm);
int dlcp_set_seg_classes(struct dlcp_out_msg *m, const u8 *cls, u32 n);

/* dlcp_offload.c */
u32 dlcp_offload_max_segs(u32 bytes, u32 seg_size);
u32 dlcp_offload_segs(struct sock *sk, const struct dlcp_out_msg *m,
		      const struct dst_entry *dst, u32 seg, u64 now, u64 interval);
int dlcp_offload_xmit(struct sock *sk, struct dlcp_out_msg *m,
		      struct dst_entry *dst, u32 seg, u32 k, u32 now_us);
struct sk_buff *dlcp_offload_segment(struct sk_buff *skb,
				     netdev_features_t features);
bool dlcp_offload_rcv_ok(struct sk_buff *skb, bool udp);
int dlcp_offload_rcv(struct sk_buff *skb, const struct dlcp_af *af, bool udp);
int dlcp_offload_init(void);
void dlcp_offload_exit(void);

/* dlcp_udp.c */
int dlcp_udp_enable(struct net *net);
int dlcp_udp_select(struct net *net);
void dlcp_udp_disable(struct net *net);
void dlcp_udp_push(struct sk_buff *skb, const struct dlcp_net *dn,
		   const struct in6_addr *saddr, const struct in6_addr *daddr,
		   u32 entropy);
u32 dlcp_entropy(const struct dlcp_net *dn, u32 msg_id, u32 seg);
u32 dlcp_msg_id_offset(const siphash_key_t *key, const struct in6_addr *daddr,
		       __be16 dport, u64 epoch);
u16 dlcp_udp_sport(const struct dlcp_net *dn, u32 msg_id, u32 seg);

/* dlcp_ipv4.c */
int dlcp_ipv4_init(void);
void dlcp_ipv4_exit(void);

/* dlcp_ipv6.c */
int dlcp_ipv6_init(void);
void dlcp_ipv6_exit(void);

/* dlcp_path.c */
int dlcp_path_setsockopt(struct sock *sk, sockptr_t optval,
			 unsigned int optlen);
int dlcp_path_getsockopt(struct sock *sk, char __user *optval,
			 int __user *optlen);
int dlcp_path_attach(struct sock *sk, struct dlcp_out_msg *m);
struct dst_entry *dlcp_path_next(struct sock *sk, struct dlcp_out_msg *m)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_path_forget_routes(struct dlcp_out_msg *m);
void dlcp_path_free(struct dlcp_out_msg *m);

/* dlcp_timer.c */
void dlcp_timer_init(struct sock *sk);
void dlcp_timer_stop(struct sock *sk);
void dlcp_guard_arm(struct sock *sk)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_guard_arm_in(struct sock *sk, unsigned long delay)
	__must_hold(&dlcp_sk(sk)->lock);
void dlcp_pacer_arm(struct sock *sk, u64 when_ns)
	__must_hold(&dlcp_sk(sk)->lock);

#endif /* _DLCP_IMPL_H */
