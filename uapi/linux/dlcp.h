/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * DLCP: a loss-tolerant, order-independent message transport for the
 * gradient traffic of distributed deep-learning training.
 *
 * This header is what applications use: the socket type, the protocol
 * number, socket options, control messages and completions. The wire
 * format is private to the module (kmod/dlcp_wire.h).
 *
 * It depends on nothing but <linux/types.h>, so that it can be included by
 * the kernel and by userspace alike.
 *
 * Socket type
 * -----------
 * SOCK_DLCP is SOCK_RDM, "reliably-delivered messages, no ordering
 * guaranteed". That is exactly DLCP's contract: one sendmsg() is one
 * message, messages are delivered whole (or within their loss budget) and
 * in no particular order. No other inet protocol registers SOCK_RDM, so
 * socket(AF_INET, SOCK_DLCP, 0) is unambiguous, and
 * socket(AF_INET, SOCK_DLCP, IPPROTO_DLCP) works as well.
 *
 * Protocol number
 * ---------------
 * IPPROTO_DLCP is 253, reserved for experimentation by RFC 3692. The
 * module parameter "ipproto" overrides it on a node where 253 is in use;
 * sockets are then still created with protocol 0 or IPPROTO_DLCP.
 */
#ifndef _UAPI_LINUX_DLCP_H
#define _UAPI_LINUX_DLCP_H

#include <linux/types.h>

#define IPPROTO_DLCP		253
#define SOL_DLCP		IPPROTO_DLCP
#define SOCK_DLCP		4	/* == SOCK_RDM */

/* ------------------------------------------------------------------ */
/* Socket API                                                          */
/* ------------------------------------------------------------------ */

/*
 * Socket options at level SOL_DLCP (int-valued unless stated).
 *
 * DLCP_LOSS_BUDGET	default loss budget of messages sent on this socket,
 *			in parts per million of the message length
 *			(0..DLCP_PPM_MAX). Initialised from the sysctl
 *			net.dlcp.loss_budget_ppm.
 * DLCP_SEGMENT_SIZE	(get only) payload bytes carried by one data packet
 *			to the connected peer (or, unconnected, over the
 *			largest route MTU the module assumes). Per-segment
 *			class arrays have one entry per segment of this size.
 * DLCP_LAYER		default layer of messages sent on this socket.
 * DLCP_PRIORITY	default priority class (0 = highest). Classes below
 *			net.dlcp.unpriv_class need CAP_NET_ADMIN.
 * DLCP_MAX_MSG_SIZE	(get only) the largest message this socket may send
 *			(sysctl net.dlcp.max_msg_size).
 * DLCP_RECVCOMPLETION	0 or 1: report the outcome of every message this
 *			socket sends on its error queue (see "Completions").
 * DLCP_ENCAP		DLCP_ENCAP_NATIVE (IP protocol 253) or DLCP_ENCAP_UDP
 *			(inside UDP to net.dlcp.udp_port, with a source port
 *			that varies per packet for ECMP and RSS), or -1 to
 *			follow net.dlcp.encap (the default). Selecting UDP
 *			opens the namespace's UDP port: EADDRINUSE if taken.
 * DLCP_PATHS		host multipath: an array of struct dlcp_path (at
 *			most DLCP_MAX_PATHS; optlen 0 clears it). The data
 *			packets of every message sent afterwards are sprayed
 *			over these output interfaces, packet by packet, in
 *			proportion to their weights; a path with no route to
 *			the destination is skipped. The source address is the
 *			same on every path (the bound address, or the one the
 *			route over the first path picks), so give multi-rail
 *			hosts an address every rail reaches. Control packets
 *			follow the ordinary route. getsockopt() returns the
 *			array (optlen: its size in bytes). EINVAL for a bad
 *			length, weight or non-zero reserved field, ENODEV for
 *			an interface not in the socket's namespace.
 */
#define DLCP_LOSS_BUDGET	1
#define DLCP_SEGMENT_SIZE	2
#define DLCP_LAYER		3
#define DLCP_PRIORITY		4
#define DLCP_MAX_MSG_SIZE	5
#define DLCP_RECVCOMPLETION	6
#define DLCP_ENCAP		7
#define DLCP_PATHS		8

#define DLCP_ENCAP_NATIVE	0
#define DLCP_ENCAP_UDP		1
#define DLCP_UDP_PORT		9253	/* default net.dlcp.udp_port */

#define DLCP_PPM_MAX		1000000U

#define DLCP_MAX_PATHS		16
#define DLCP_PATH_WEIGHT_MAX	255

/**
 * struct dlcp_path - one output path of DLCP_PATHS
 * @ifindex:	output interface, in the socket's network namespace
 * @weight:	consecutive data packets sent on this path per round,
 *		1..DLCP_PATH_WEIGHT_MAX (0 on set means 1)
 * @reserved:	must be zero
 */
struct dlcp_path {
	__u32	ifindex;
	__u16	weight;
	__u16	reserved;
};

/*
 * Control messages (cmsg_level SOL_DLCP).
 *
 * DLCP_CMSG_SEND	on sendmsg(): struct dlcp_send_info, the message's
 *			metadata. Optional; without it the socket defaults
 *			apply.
 * DLCP_CMSG_RECV	on recvmsg(): struct dlcp_recv_info, the metadata the
 *			sender gave plus what happened to the message.
 *			Always delivered when the caller passes room for it.
 * DLCP_CMSG_LOST	on recvmsg(): array of struct dlcp_range, the byte
 *			ranges of the message that were lost and zero-filled,
 *			in increasing order. Present only when bytes were lost.
 * DLCP_CMSG_CRITICAL	on sendmsg(): array of struct dlcp_range (at most
 *			DLCP_MAX_CRIT_RANGES, each non-empty and inside the
 *			message) that must be delivered whatever the loss
 *			budget. A segment that overlaps a critical range is
 *			critical as a whole.
 * DLCP_CMSG_COMPLETION	on recvmsg(MSG_ERRQUEUE): struct sock_extended_err,
 *			see "Completions".
 * DLCP_CMSG_SEG_CLASS	on sendmsg(): array of __u8, one importance class per
 *			segment (DLCP_SEG_IMPORTANT or DLCP_SEG_DROPPABLE),
 *			exactly one per segment of DLCP_SEGMENT_SIZE bytes
 *			(rounded down to whole elements of the dtype).
 *			Droppable segments go out Not-ECT so that a RED/ECN
 *			queue drops them first; critical ones never are.
 */
#define DLCP_CMSG_SEND		1
#define DLCP_CMSG_RECV		2
#define DLCP_CMSG_LOST		3
#define DLCP_CMSG_CRITICAL	4
#define DLCP_CMSG_SEG_CLASS	5
#define DLCP_CMSG_COMPLETION	6

#define DLCP_MAX_CRIT_RANGES	1024

/* Per-segment importance classes (DLCP_CMSG_SEG_CLASS). */
#define DLCP_SEG_IMPORTANT	0
#define DLCP_SEG_DROPPABLE	1

/* Element types of a message's payload: segments hold whole elements. */
enum dlcp_dtype {
	DLCP_DTYPE_BYTES = 0,	/* opaque bytes, element size 1 */
	DLCP_DTYPE_FP32 = 1,
	DLCP_DTYPE_FP16 = 2,
	DLCP_DTYPE_BF16 = 3,
	DLCP_DTYPE_INT8 = 4,
	DLCP_DTYPE_INT32 = 5,
	__DLCP_DTYPE_MAX
};

/* Flags of struct dlcp_send_info / dlcp_recv_info (msg_flags). */
#define DLCP_MSG_CRITICAL	0x0001	/* whole message is critical */
#define DLCP_MSG_HAS_BUDGET	0x0002	/* loss_budget_ppm overrides socket */
#define DLCP_MSG_HAS_LAYER	0x0004	/* layer overrides socket default */
#define DLCP_MSG_HAS_DEADLINE	0x0008	/* deadline_ms is valid */
#define DLCP_MSG_HAS_PRIO	0x0010	/* prio overrides socket and layer */
#define DLCP_MSG_HAS_DROPPABLE	0x0020	/* droppable_ppm overrides sysctl */
#define DLCP_MSG_FLAGS_SEND	0x003f	/* flags a sender may set */

/**
 * struct dlcp_send_info - DLCP_CMSG_SEND payload
 * @tensor_id:		application's tensor or bucket identifier (opaque)
 * @iteration:		training iteration (opaque)
 * @layer:		layer index; selects the priority class (layer 0, the
 *			input side, first) unless a class is given
 * @dtype:		enum dlcp_dtype of the payload
 * @prio:		priority class, with DLCP_MSG_HAS_PRIO (else zero);
 *			classes below net.dlcp.unpriv_class need
 *			CAP_NET_ADMIN (EPERM)
 * @flags:		DLCP_MSG_* flags
 * @reserved1:		must be zero
 * @loss_budget_ppm:	loss budget, with DLCP_MSG_HAS_BUDGET
 * @deadline_ms:	delivery deadline, with DLCP_MSG_HAS_DEADLINE (> 0)
 * @droppable_ppm:	with DLCP_MSG_HAS_DROPPABLE (else zero): fraction of
 *			the segments of an fp32/fp16/bf16 message, those with
 *			the smallest magnitudes, to send droppable
 * @reserved:		must be zero
 */
struct dlcp_send_info {
	__u32	tensor_id;
	__u32	iteration;
	__u16	layer;
	__u8	dtype;
	__u8	prio;
	__u16	flags;
	__u16	reserved1;
	__u32	loss_budget_ppm;
	__u32	deadline_ms;
	__u32	droppable_ppm;
	__u32	reserved;
};

/* Outcome of a received message (dlcp_recv_info.status). */
#define DLCP_RECV_EXACT		0	/* every byte arrived */
#define DLCP_RECV_LOSSY		1	/* completed within its loss budget */

/**
 * struct dlcp_recv_info - DLCP_CMSG_RECV payload
 * @tensor_id:		as sent
 * @iteration:		as sent
 * @layer:		as sent
 * @dtype:		as sent
 * @status:		DLCP_RECV_*
 * @flags:		as sent (DLCP_MSG_*)
 * @prio:		priority class the packets carried
 * @reserved0:		zero
 * @msg_id:		the sender's message id
 * @msg_len:		message length in bytes
 * @bytes_lost:		bytes zero-filled (sum of the DLCP_CMSG_LOST ranges)
 * @loss_budget_ppm:	the budget the message was sent with
 * @nr_lost_ranges:	number of lost ranges (DLCP_CMSG_LOST may be cut
 *			short by a small control buffer: MSG_CTRUNC)
 * @reserved:		zero
 */
struct dlcp_recv_info {
	__u32	tensor_id;
	__u32	iteration;
	__u16	layer;
	__u8	dtype;
	__u8	status;
	__u16	flags;
	__u8	prio;
	__u8	reserved0;
	__u32	msg_id;
	__u32	msg_len;
	__u32	bytes_lost;
	__u32	loss_budget_ppm;
	__u32	nr_lost_ranges;
	__u32	reserved[2];
};

/**
 * struct dlcp_range - a byte range [offset, offset + len) of a message
 * @offset:	first byte
 * @len:	length in bytes
 */
struct dlcp_range {
	__u32	offset;
	__u32	len;
};

/*
 * Loss budgets
 * ------------
 * A message's loss budget is the largest part of it, in parts per million
 * of its length, that may be missing when it is delivered: budget bytes =
 * floor(len * ppm / 1000000). The receiver delivers a message when every
 * byte arrived, or when the sender has sent every byte once and the bytes
 * still missing are within the budget and every critical byte arrived.
 * Missing bytes read as zeros; DLCP_CMSG_RECV says how many
 * (bytes_lost, status DLCP_RECV_LOSSY) and DLCP_CMSG_LOST exactly which.
 * The sender retransmits lost bytes only while they exceed the budget, and
 * critical bytes always. Budget 0 (the default) is exact, reliable delivery.
 *
 * Deadlines: with DLCP_MSG_HAS_DEADLINE, deadline_ms after sendmsg() the
 * sender stops retransmitting and asks the receiver to finish: the message
 * is delivered with what arrived if that is within its budget (and has
 * every critical byte), otherwise the receiver drops it and the sender's
 * completion reports ETIME.
 *
 * Completions
 * -----------
 * With DLCP_RECVCOMPLETION set, the outcome of every message sent is queued
 * on the socket's error queue (at most DLCP_MAX_COMPLETIONS waiting; more
 * are counted and dropped). recvmsg(MSG_ERRQUEUE) returns a struct
 * dlcp_completion as data and a DLCP_CMSG_COMPLETION control message
 * holding a struct sock_extended_err with ee_origin SO_EE_ORIGIN_LOCAL,
 * ee_info the message id, ee_data the bytes the receiver gave up on, and
 * ee_errno 0 (delivered), ETIME (deadline passed over budget), ETIMEDOUT
 * (no answer from the receiver within net.dlcp.msg_timeout_ms, or no
 * progress for four times that) or, with status DLCP_DONE_TIMEOUT too,
 * why every attempt to send it failed for net.dlcp.msg_timeout_ms:
 * EHOSTUNREACH (the route to the receiver vanished), EPERM (netfilter),
 * ENOBUFS (a queue or filter dropped it); or ECONNREFUSED: the receiving
 * host has no socket on the port (net.dlcp.noport_rate).
 */
#define DLCP_MAX_COMPLETIONS	4096

/* dlcp_completion.status */
#define DLCP_DONE_EXACT		0	/* delivered whole */
#define DLCP_DONE_LOSSY		1	/* delivered within its loss budget */
#define DLCP_DONE_DEADLINE	2	/* dropped: deadline passed over budget */
#define DLCP_DONE_TIMEOUT	3	/* the receiver stopped answering */

/**
 * struct dlcp_completion - outcome of a sent message (error queue data)
 * @msg_id:	the message's id (also in recv info at the receiver)
 * @tensor_id:	as sent
 * @iteration:	as sent
 * @status:	DLCP_DONE_*
 * @msg_len:	length in bytes
 * @bytes_lost:	bytes the receiver delivered as zeros
 */
struct dlcp_completion {
	__u32	msg_id;
	__u32	tensor_id;
	__u32	iteration;
	__u32	status;
	__u32	msg_len;
	__u32	bytes_lost;
};

/*
 * Monitoring (sock_diag)
 * ----------------------
 * The bound DLCP sockets of a network namespace are listed by the
 * inet_diag interface of NETLINK_SOCK_DIAG, as TCP's, UDP's and SCTP's
 * are: a SOCK_DIAG_BY_FAMILY request (struct inet_diag_req_v2) with
 * sdiag_family AF_INET or AF_INET6 and sdiag_protocol the protocol number
 * of the module (IPPROTO_DLCP unless its parameter "ipproto" says
 * otherwise: /sys/module/dlcp/parameters/ipproto). With NLM_F_DUMP every
 * socket of that family in the requester's namespace that matches
 * idiag_states, the ports in id (0: any) and the bytecode filter is one
 * struct inet_diag_msg; without, the one socket whose local port is
 * id.idiag_sport (DLCP ports are unique in a namespace, whatever the
 * address) and whose cookie is id.idiag_cookie (or INET_DIAG_NOCOOKIE).
 *
 * In struct inet_diag_msg: the bound and the connected address and port,
 * idiag_state TCP_CLOSE (1 << 7 in idiag_states) for a bound socket and
 * TCP_ESTABLISHED (1 << 1) for a connected one, idiag_uid, idiag_inode,
 * the cookie, idiag_rqueue the receive memory charged (messages being
 * received and queued), idiag_wqueue the bytes of outgoing messages held,
 * and idiag_timer 1 while the socket's guard timer (retransmission,
 * probes, expiry of incoming messages) is armed, idiag_expires its due
 * time in milliseconds. Attributes, by the bits of idiag_ext:
 * INET_DIAG_MEMINFO (idiag_wmem: outgoing message bytes held),
 * INET_DIAG_SKMEMINFO, and INET_DIAG_INFO: a struct dlcp_diag_info, then
 * dlcp_diag_info.nr_listed struct dlcp_diag_peer, one per destination of
 * the socket, at most DLCP_DIAG_MAX_PEERS (/proc/net/dlcp/peers lists
 * them all). Read the peers from offset info_len of the attribute, each
 * peer_len bytes long: later versions may append fields to either
 * structure. Values are a snapshot read without stopping the socket.
 */
#define DLCP_DIAG_MAX_PEERS	32

/* dlcp_diag_info.flags */
#define DLCP_DIAG_F_PRIO_SET	0x01	/* DLCP_PRIORITY set: classes fixed */
#define DLCP_DIAG_F_COMPLETION	0x02	/* DLCP_RECVCOMPLETION on */
#define DLCP_DIAG_F_UDP		0x04	/* messages go inside UDP */

/**
 * struct dlcp_diag_info - INET_DIAG_INFO of a DLCP socket
 * @info_len:		bytes of this structure: the peers begin there
 * @peer_len:		bytes of one struct dlcp_diag_peer
 * @nr_peers:		destinations the socket keeps state for
 * @nr_listed:		struct dlcp_diag_peer that follow (nr_peers, at most
 *			DLCP_DIAG_MAX_PEERS)
 * @snd_mem:		bytes of outgoing messages held
 * @out_msgs:		outgoing messages held (being sent, or waiting for
 *			the receiver's STOP)
 * @in_msgs:		incoming messages held: being received, and
 *			delivered ones remembered to answer late packets
 * @in_delivered:	of @in_msgs, the delivered ones
 * @rx_queue:		complete messages waiting for recvmsg()
 * @flight:		segments sent whose fate is unknown
 * @flight_cap:		the most segments the socket may have in flight
 *			(0 until its first message)
 * @cwnd:		sum of the congestion windows of the destinations,
 *			in segments
 * @srtt_us:		the largest smoothed round-trip time among them
 * @in_reo_us:		the longest reordering the receiver has seen lately
 *			(how long an incomplete message waits for late
 *			segments)
 * @loss_budget_ppm:	DLCP_LOSS_BUDGET
 * @layer:		DLCP_LAYER
 * @prio:		DLCP_PRIORITY
 * @flags:		DLCP_DIAG_F_*
 * @rcv_mem:		receive memory charged, bytes
 * @drops:		packets dropped for this socket (sk_drops)
 * @reserved:		zero
 */
struct dlcp_diag_info {
	__u16	info_len;
	__u16	peer_len;
	__u16	nr_peers;
	__u16	nr_listed;
	__u64	snd_mem;
	__u32	out_msgs;
	__u32	in_msgs;
	__u32	in_delivered;
	__u32	rx_queue;
	__u32	flight;
	__u32	flight_cap;
	__u32	cwnd;
	__u32	srtt_us;
	__u32	in_reo_us;
	__u32	loss_budget_ppm;
	__u16	layer;
	__u8	prio;
	__u8	flags;
	__u32	rcv_mem;
	__u32	drops;
	__u32	reserved;
};

/**
 * struct dlcp_diag_peer - state of the path to one destination
 * @addr:	its address; an IPv4 address as ::ffff:a.b.c.d
 * @msgs:	outgoing messages to it
 * @inflight:	segments in flight to it
 * @cwnd:	congestion window, segments
 * @ssthresh:	slow start threshold, segments (0xffffffff: none yet)
 * @srtt_us:	smoothed round-trip time (0: no sample yet)
 * @rttvar_us:	round-trip time variation
 * @min_rtt_us:	smallest round-trip time seen
 * @rto_us:	retransmission timeout, backed off
 * @reo_us:	reordering window: how late a segment may be before it is
 *		lost
 * @alpha:	DCTCP's estimate of the CE-marked fraction, 1024 = 1.0
 * @rto_shift:	timeouts since the last round-trip sample
 * @reserved:	zero
 */
struct dlcp_diag_peer {
	__be32	addr[4];
	__u32	msgs;
	__u32	inflight;
	__u32	cwnd;
	__u32	ssthresh;
	__u32	srtt_us;
	__u32	rttvar_us;
	__u32	min_rtt_us;
	__u32	rto_us;
	__u32	reo_us;
	__u16	alpha;
	__u8	rto_shift;
	__u8	reserved;
};

#endif /* _UAPI_LINUX_DLCP_H */
