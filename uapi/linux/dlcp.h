/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * DLCP: a loss-tolerant, order-independent message transport for the
 * gradient traffic of distributed deep-learning training.
 *
 * This header is the whole user-visible contract of the protocol:
 *
 *   1. the socket API (socket type, protocol number, socket options,
 *      control messages), and
 *   2. the wire format, with pure validation helpers that the kernel
 *      module, the userspace tests, the fuzzers and the tools all share.
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
 * ENOBUFS (a queue or filter dropped it).
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

/* ------------------------------------------------------------------ */
/* Wire format                                                         */
/* ------------------------------------------------------------------ */

/*
 * Every DLCP packet starts with the 20-byte common header, in network byte
 * order, directly after the IP header (native mode) or after a UDP header
 * (UDP encapsulation):
 *
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+-------------------------------+
 *  |          Source port          |       Destination port        |
 *  +-------+-------+---------------+---------------+---------------+
 *  |Version| Type  |     Flags     |  Header words |  Prio class   |
 *  +-------+-------+---------------+---------------+---------------+
 *  |            Length             |           Checksum            |
 *  +-------------------------------+-------------------------------+
 *  |                          Message id                           |
 *  +---------------------------------------------------------------+
 *  |                        Message length                         |
 *  +---------------------------------------------------------------+
 *
 * Header words is the length of the whole DLCP header (common part plus
 * the type's own part) in 32-bit words, so that a receiver can skip fields
 * added by later versions. Length is the length of header plus payload, as
 * in UDP; it must equal what the IP header says. Checksum is the Internet
 * checksum over an IP pseudo-header (as for UDP, with the DLCP protocol
 * number), the DLCP header and the payload; it is mandatory.
 *
 * Types:
 *  DATA	payload of the message at the given offset. Carries the
 *		message's metadata, so that any packet can start reassembly.
 *  REPORT	receiver -> sender: what has arrived of a message (a list of
 *		missing byte ranges, "gaps"). Drives selective retransmission.
 *  STOP	receiver -> sender: the message was delivered; stop sending.
 *		Carries the number of bytes the receiver gave up on.
 *  PROBE	sender -> receiver: "what do you have?" when reports stop
 *		coming; answered by a REPORT (or a STOP). Never creates
 *		receiver state.
 *  ABORT	sender -> receiver: the sender gave up on the message; free it.
 */
#define DLCP_VERSION		1

enum dlcp_pkt_type {
	DLCP_T_DATA = 1,
	DLCP_T_REPORT = 2,
	DLCP_T_STOP = 3,
	DLCP_T_PROBE = 4,
	DLCP_T_ABORT = 5,
	__DLCP_T_MAX
};

/* Common header flags. */
#define DLCP_HF_ACKREQ		0x01	/* DATA: report now, don't delay */
#define DLCP_HF_RETRANS		0x02	/* DATA: a retransmission */
#define DLCP_HF_CRITICAL	0x04	/* DATA: segment must be delivered */
#define DLCP_HF_DROPPABLE	0x08	/* DATA: low magnitude, may be dropped */
#define DLCP_HF_LAST		0x10	/* DATA: last segment of the first pass */
#define DLCP_HF_FINAL		0x20	/* PROBE: deadline passed, finish now */
#define DLCP_HF_FAILED		0x40	/* STOP: the message was dropped */
#define DLCP_HF_ALL		0x7f

/**
 * struct dlcp_hdr - common header of every DLCP packet
 * @source:	source port
 * @dest:	destination port
 * @ver_type:	version (high nibble) and packet type (low nibble)
 * @flags:	DLCP_HF_*
 * @doff:	header length in 32-bit words (common + type-specific)
 * @prio:	DATA: the message's priority class; 0 in control packets
 *		(their DSCP: REPORT and STOP class 0, PROBE and ABORT
 *		their message's class)
 * @len:	header + payload length in bytes
 * @check:	Internet checksum with pseudo-header
 * @msg_id:	sender's message id, unique per sender socket
 * @msg_len:	total length of the message in bytes
 */
struct dlcp_hdr {
	__be16	source;
	__be16	dest;
	__u8	ver_type;
	__u8	flags;
	__u8	doff;
	__u8	prio;
	__be16	len;
	__sum16	check;
	__be32	msg_id;
	__be32	msg_len;
};

/**
 * struct dlcp_data_hdr - DATA packet header; the payload follows
 * @common:	common header
 * @offset:	byte offset of the payload within the message
 * @tensor_id:	metadata as sent (struct dlcp_send_info)
 * @iteration:	metadata as sent
 * @budget_ppm:	loss budget of the message, ppm
 * @layer:	metadata as sent
 * @dtype:	element type of the payload (enum dlcp_dtype)
 * @reserved:	zero on send, ignored on receive
 * @msg_flags:	DLCP_MSG_* flags of the message
 * @tsval:	sender timestamp (microseconds, any origin, wrapping; 0: none),
 *		echoed in reports
 * @crit_len:	bytes of the message in critical segments; the receiver
 *		completes a message only when it has received that many
 *		bytes from packets flagged DLCP_HF_CRITICAL
 */
struct dlcp_data_hdr {
	struct dlcp_hdr	common;
	__be32	offset;
	__be32	tensor_id;
	__be32	iteration;
	__be32	budget_ppm;
	__be16	layer;
	__u8	dtype;
	__u8	reserved;
	__be16	msg_flags;
	__be16	reserved2;
	__be32	tsval;
	__be32	crit_len;
};

/* Report flags. */
#define DLCP_RF_PROBED		0x01	/* answers a PROBE */
#define DLCP_RF_DUP		0x02	/* sent for a resent segment that had
					 * already arrived (as TCP's DSACK)
					 */
#define DLCP_RF_ALL		0x03

/**
 * struct dlcp_report_hdr - REPORT header; @ngaps struct dlcp_wire_range follow
 * @common:	common header (msg_id and msg_len name the message)
 * @rcvd:	bytes of the message received so far
 * @scan_end:	the report covers [0, scan_end): every byte below it that is
 *		not in a gap has arrived; nothing is said about bytes above
 * @tsecr:	tsval of the data packet that triggered the report
 * @ce_bytes:	payload bytes received with ECN CE, cumulative for the message
 * @ngaps:	number of gaps that follow
 * @rflags:	DLCP_RF_*
 * @reserved:	zero on send, ignored on receive
 */
struct dlcp_report_hdr {
	struct dlcp_hdr	common;
	__be32	rcvd;
	__be32	scan_end;
	__be32	tsecr;
	__be32	ce_bytes;
	__be16	ngaps;
	__u8	rflags;
	__u8	reserved;
};

/**
 * struct dlcp_wire_range - a gap in a REPORT: [start, end) is missing
 * @start:	first missing byte
 * @end:	first byte after the gap
 */
struct dlcp_wire_range {
	__be32	start;
	__be32	end;
};

/**
 * struct dlcp_stop_hdr - STOP header
 * @common:	common header
 * @lost:	bytes the receiver gave up on (zero-filled on delivery)
 * @tsecr:	tsval of the packet that completed the message
 */
struct dlcp_stop_hdr {
	struct dlcp_hdr	common;
	__be32	lost;
	__be32	tsecr;
};

/**
 * struct dlcp_probe_hdr - PROBE and ABORT header
 * @common:	common header
 * @sent:	bytes the sender has transmitted at least once
 * @tsval:	sender timestamp (microseconds)
 */
struct dlcp_probe_hdr {
	struct dlcp_hdr	common;
	__be32	sent;
	__be32	tsval;
};

#define DLCP_HDR_LEN		20
#define DLCP_DATA_HDR_LEN	52
#define DLCP_REPORT_HDR_LEN	40
#define DLCP_STOP_HDR_LEN	28
#define DLCP_PROBE_HDR_LEN	28
#define DLCP_GAP_LEN		8

/*
 * Reasons a packet is dropped; the validation helper returns one, the
 * module counts each under its own name in /proc/net/dlcp/snmp.
 */
enum dlcp_drop_reason {
	DLCP_DROP_NONE = 0,
	DLCP_DROP_SHORT,	/* shorter than its header */
	DLCP_DROP_VERSION,	/* unknown version */
	DLCP_DROP_TYPE,		/* unknown packet type */
	DLCP_DROP_HDRLEN,	/* header words too small or past the packet */
	DLCP_DROP_LEN,		/* length field disagrees with the packet */
	DLCP_DROP_FLAGS,	/* unknown header flags */
	DLCP_DROP_MSGLEN,	/* message length zero or over the limit */
	DLCP_DROP_OFFSET,	/* payload past the end of the message */
	DLCP_DROP_GAPS,		/* report gaps malformed */
	DLCP_DROP_FIELD,	/* a metadata field out of range */
	__DLCP_DROP_PURE_MAX,	/* reasons above are found by the pure helper */
};

static inline __u16 dlcp_wire_get16(const void *p)
{
	const __u8 *b = (const __u8 *)p;

	return (__u16)((b[0] << 8) | b[1]);
}

static inline __u32 dlcp_wire_get32(const void *p)
{
	const __u8 *b = (const __u8 *)p;

	return ((__u32)b[0] << 24) | ((__u32)b[1] << 16) |
	       ((__u32)b[2] << 8) | (__u32)b[3];
}

static inline unsigned int dlcp_wire_version(const struct dlcp_hdr *h)
{
	return h->ver_type >> 4;
}

static inline unsigned int dlcp_wire_type(const struct dlcp_hdr *h)
{
	return h->ver_type & 0x0f;
}

/* Bytes per element of an enum dlcp_dtype, 0 for an unknown type. */
static inline unsigned int dlcp_wire_dtype_size(unsigned int dtype)
{
	switch (dtype) {
	case DLCP_DTYPE_BYTES:
	case DLCP_DTYPE_INT8:
		return 1;
	case DLCP_DTYPE_FP16:
	case DLCP_DTYPE_BF16:
		return 2;
	case DLCP_DTYPE_FP32:
	case DLCP_DTYPE_INT32:
		return 4;
	}
	return 0;
}

/* Fixed header length of each packet type, 0 for an unknown type. */
static inline unsigned int dlcp_wire_min_hdr(unsigned int type)
{
	switch (type) {
	case DLCP_T_DATA:
		return DLCP_DATA_HDR_LEN;
	case DLCP_T_REPORT:
		return DLCP_REPORT_HDR_LEN;
	case DLCP_T_STOP:
		return DLCP_STOP_HDR_LEN;
	case DLCP_T_PROBE:
	case DLCP_T_ABORT:
		return DLCP_PROBE_HDR_LEN;
	}
	return 0;
}

/**
 * dlcp_wire_check() - validate a DLCP packet, checksum aside
 * @pkt:	the DLCP header and what follows, contiguous
 * @len:	bytes available at @pkt (the IP payload length)
 * @max_msg:	largest acceptable message length
 *
 * Pure: reads only @pkt[0..len), trusts nothing in it, and may be used on
 * any buffer, by the kernel and by userspace tools and fuzzers alike.
 *
 * Return: DLCP_DROP_NONE if the packet is well formed, else the reason.
 */
static inline enum dlcp_drop_reason
dlcp_wire_check(const void *pkt, __u32 len, __u32 max_msg)
{
	const struct dlcp_hdr *h = (const struct dlcp_hdr *)pkt;
	const __u8 *b = (const __u8 *)pkt;
	__u32 hlen, msg_len, off, plen, i, ngaps, prev;
	unsigned int type;

	if (len < DLCP_HDR_LEN)
		return DLCP_DROP_SHORT;
	if (dlcp_wire_version(h) != DLCP_VERSION)
		return DLCP_DROP_VERSION;
	type = dlcp_wire_type(h);
	if (!dlcp_wire_min_hdr(type))
		return DLCP_DROP_TYPE;
	if (len < dlcp_wire_min_hdr(type))
		return DLCP_DROP_SHORT;
	hlen = (__u32)h->doff * 4;
	if (hlen < dlcp_wire_min_hdr(type) || hlen > len)
		return DLCP_DROP_HDRLEN;
	if (dlcp_wire_get16(&h->len) != len)
		return DLCP_DROP_LEN;
	if (h->flags & ~DLCP_HF_ALL)
		return DLCP_DROP_FLAGS;
	msg_len = dlcp_wire_get32(&h->msg_len);
	if (msg_len == 0 || msg_len > max_msg)
		return DLCP_DROP_MSGLEN;
	plen = len - hlen;

	switch (type) {
	case DLCP_T_DATA: {
		const struct dlcp_data_hdr *d = (const struct dlcp_data_hdr *)pkt;

		off = dlcp_wire_get32(&d->offset);
		if (plen == 0 || off >= msg_len || plen > msg_len - off)
			return DLCP_DROP_OFFSET;
		if (d->dtype >= __DLCP_DTYPE_MAX ||
		    dlcp_wire_get32(&d->budget_ppm) > DLCP_PPM_MAX ||
		    dlcp_wire_get32(&d->crit_len) > msg_len ||
		    (dlcp_wire_get16(&d->msg_flags) & ~DLCP_MSG_FLAGS_SEND))
			return DLCP_DROP_FIELD;
		break;
	}
	case DLCP_T_REPORT: {
		const struct dlcp_report_hdr *r =
			(const struct dlcp_report_hdr *)pkt;
		const struct dlcp_wire_range *g =
			(const struct dlcp_wire_range *)(b + hlen);
		__u32 scan_end = dlcp_wire_get32(&r->scan_end);

		if (dlcp_wire_get32(&r->rcvd) > msg_len || scan_end > msg_len ||
		    (r->rflags & ~DLCP_RF_ALL))
			return DLCP_DROP_FIELD;
		ngaps = dlcp_wire_get16(&r->ngaps);
		if (plen != ngaps * DLCP_GAP_LEN)
			return DLCP_DROP_GAPS;
		prev = 0;
		for (i = 0; i < ngaps; i++) {
			__u32 s = dlcp_wire_get32(&g[i].start);
			__u32 e = dlcp_wire_get32(&g[i].end);

			if (s < prev || e <= s || e > scan_end)
				return DLCP_DROP_GAPS;
			prev = e;
		}
		break;
	}
	case DLCP_T_STOP: {
		const struct dlcp_stop_hdr *st = (const struct dlcp_stop_hdr *)pkt;

		if (plen || dlcp_wire_get32(&st->lost) > msg_len)
			return DLCP_DROP_FIELD;
		break;
	}
	default: {	/* PROBE, ABORT */
		const struct dlcp_probe_hdr *pr =
			(const struct dlcp_probe_hdr *)pkt;

		if (plen || dlcp_wire_get32(&pr->sent) > msg_len)
			return DLCP_DROP_FIELD;
		break;
	}
	}
	return DLCP_DROP_NONE;
}

#endif /* _UAPI_LINUX_DLCP_H */
