/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DLCP's message state: the buffers and range sets that hold a message's
 * bytes (dlcp_buf.c), an outgoing message with its segments and flight
 * ring (dlcp_out.c, dlcp_recovery.c), an incoming message and its
 * delivery to recvmsg (dlcp_in.c, dlcp_intab.c). The locks that protect
 * them are described in dlcp_impl.h.
 */
#ifndef _DLCP_MSG_H
#define _DLCP_MSG_H

#include <linux/list.h>
#include <linux/rhashtable-types.h>
#include <linux/skbuff.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <linux/in6.h>
#include "../uapi/linux/dlcp.h"
#include "dlcp_wire.h"

struct dlcp_peer;
struct dst_entry;
struct sock;

/* ---------------------------------------------------------------- */
/* Buffers and range sets (dlcp_buf.c)                               */
/* ---------------------------------------------------------------- */

/**
 * struct dlcp_buf - a message's bytes, held in pages and received packets
 * @pages:	pages by index; absent where nothing was written (reads as 0)
 * @skbs:	received packets held by reference (dlcp_buf_keep_skb()),
 *		each trimmed to its payload, in increasing order of offset;
 *		the bytes they hold are read from them, the others from
 *		@pages
 * @len:	message length in bytes
 * @nr_alloc:	pages allocated, for memory accounting
 * @skb_truesize: the truesize of @skbs, for memory accounting
 */
struct dlcp_buf {
	struct xarray		pages;
	struct sk_buff_head	skbs;
	u32			len;
	u32			nr_alloc;
	u32			skb_truesize;
};

/*
 * A packet is kept only this many places before the last one kept: a
 * little reordering (two CPUs' backlogs, spraying) costs no copy, a hole
 * filled late (a resent packet) or a sender going backwards is copied
 * into the pages, and placing a packet walks no further.
 */
#define DLCP_BUF_KEEP_BACK	8

/**
 * struct dlcp_buf_skb_cb - a kept packet's place (skb->cb)
 * @off:	offset in the message of its first byte
 */
struct dlcp_buf_skb_cb {
	u32	off;
};

static inline struct dlcp_buf_skb_cb *dlcp_buf_cb(const struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct dlcp_buf_skb_cb) > sizeof(skb->cb));
	return (struct dlcp_buf_skb_cb *)skb->cb;
}

/* Message pages, recycled per CPU (dlcp_page.c) */
struct page *dlcp_page_alloc(gfp_t gfp);
void dlcp_page_free(struct page *p);
unsigned int dlcp_page_kept(void);
unsigned int dlcp_page_waiting(void);
int dlcp_page_init(void);
void dlcp_page_exit(void);

void dlcp_buf_init(struct dlcp_buf *b, u32 len);
void dlcp_buf_free(struct dlcp_buf *b);
int dlcp_buf_from_iter(struct dlcp_buf *b, struct iov_iter *from);
int dlcp_buf_from_skb(struct dlcp_buf *b, u32 off, const struct sk_buff *skb,
		      int skb_off, u32 len, gfp_t gfp);
bool dlcp_buf_may_keep(const struct dlcp_buf *b, u32 off);
void dlcp_buf_keep_skb(struct dlcp_buf *b, struct sk_buff *skb, int skb_off,
		       u32 off, u32 len);
int dlcp_buf_frag_skb(struct dlcp_buf *b, u32 off, u32 len,
		      struct sk_buff *skb);
int dlcp_buf_to_iter(struct dlcp_buf *b, u32 len, struct iov_iter *to);
void dlcp_buf_zero(struct dlcp_buf *b, u32 off, u32 len);

#define DLCP_MAX_RANGES		8192		/* disjoint ranges per message */

/**
 * struct dlcp_rs_range - the byte range [@start, @end) of a message
 * @start:	first byte
 * @end:	one past the last byte
 */
struct dlcp_rs_range {
	u32	start;
	u32	end;
};

/* ranges to a page of a range set, and pages of a full one */
#define DLCP_RS_PAGE_RANGES	(PAGE_SIZE / sizeof(struct dlcp_rs_range))
#define DLCP_RS_PAGES		DIV_ROUND_UP(DLCP_MAX_RANGES, DLCP_RS_PAGE_RANGES)

/**
 * struct dlcp_rangeset - sorted, disjoint, non-adjacent byte ranges
 * @pg:		the ranges, increasing, DLCP_RS_PAGE_RANGES to a page:
 *		range i is dlcp_rs_at(i). The first array grows by doubling
 *		up to a page, then whole pages are added, so that no
 *		allocation is larger than a page: the receive path grows
 *		the set in softirq, where a larger atomic allocation fails
 *		once memory is fragmented.
 * @nr:		ranges in use
 * @cap:	ranges allocated
 * @bytes:	sum of the range lengths
 */
struct dlcp_rangeset {
	struct dlcp_rs_range	*pg[DLCP_RS_PAGES];
	u32			nr;
	u32			cap;
	u32			bytes;
};

/* Range @i of @rs (i < @rs->cap). */
static inline struct dlcp_rs_range *dlcp_rs_at(const struct dlcp_rangeset *rs,
					       u32 i)
{
	return &rs->pg[i / DLCP_RS_PAGE_RANGES][i % DLCP_RS_PAGE_RANGES];
}

int dlcp_rs_prepare(struct dlcp_rangeset *rs, u32 start, u32 end, gfp_t gfp);
int dlcp_rs_add(struct dlcp_rangeset *rs, u32 start, u32 end, gfp_t gfp,
		u32 *added);
bool dlcp_rs_covers(const struct dlcp_rangeset *rs, u32 start, u32 end);
bool dlcp_rs_misses(const struct dlcp_rangeset *rs, u32 start, u32 end);
void dlcp_rs_free(struct dlcp_rangeset *rs);

/* ---------------------------------------------------------------- */
/* Messages                                                          */
/* ---------------------------------------------------------------- */

/**
 * struct dlcp_meta - metadata a message carries from sendmsg to recvmsg
 * @tensor_id:	opaque, from struct dlcp_send_info
 * @iteration:	opaque
 * @budget_ppm:	loss budget in ppm
 * @layer:	layer index
 * @flags:	DLCP_MSG_*
 * @dtype:	enum dlcp_dtype
 * @prio:	priority class
 */
struct dlcp_meta {
	u32	tensor_id;
	u32	iteration;
	u32	budget_ppm;
	u16	layer;
	u16	flags;
	u8	dtype;
	u8	prio;
};

/* Per-segment state of an outgoing message. */
enum dlcp_seg_state {
	DLCP_SEG_NEW = 0,	/* never sent */
	DLCP_SEG_INFLIGHT,	/* sent, fate unknown */
	DLCP_SEG_LOST,		/* known or presumed lost, to retransmit */
	DLCP_SEG_ACKED,		/* the receiver has it */
};

/**
 * struct dlcp_msg_path - one output path of a message (DLCP_PATHS)
 * @dst:	cached route over the path (holds a reference), or NULL
 * @cookie:	IPv6 route cookie for dst_check()
 * @ifindex:	output interface
 * @weight:	data packets per round
 */
struct dlcp_msg_path {
	struct dst_entry	*dst;
	u32			cookie;
	int			ifindex;
	u16			weight;
};

/**
 * struct dlcp_out_msg - a message being sent
 * @node:	in dlcp_sock.out_msgs, in send order
 * @id:		message id on the wire
 * @len:	length in bytes
 * @seg_size:	payload bytes per segment (whole elements)
 * @nsegs:	number of segments
 * @daddr:	destination address
 * @saddr:	source address chosen by the route
 * @dport:	destination port
 * @dst:	cached route (holds a reference), revalidated before use
 * @dst_cookie:	IPv6 route cookie for dst_check()
 * @peer:	congestion state of @daddr (counted in its @nr_msgs)
 * @meta:	metadata carried by every data packet
 * @buf:	the bytes
 * @seg:	per-segment enum dlcp_seg_state
 * @next_new:	first segment never sent
 * @nr_lost:	segments in DLCP_SEG_LOST
 * @lost_hint:	no segment below this index is DLCP_SEG_LOST
 * @nr_acked:	segments in DLCP_SEG_ACKED
 * @acked_max:	the most segments in DLCP_SEG_ACKED at one time
 * @inflight:	entries of this message in the socket's flight ring
 * @last_heard:	jiffies of the last REPORT for this message, or of its
 *		first transmission
 * @heard:	a REPORT for this message arrived
 * @xmit_err:	errno of the last attempt to send a segment, 0 if it went
 *		out (EHOSTUNREACH: no route)
 * @xmit_err_since: jiffies of the first failed attempt in a row; a message
 *		that never started gives up msg_timeout_ms after it
 * @progress_at: jiffies of the message's last progress: its first
 *		transmission, a REPORT that took @nr_acked above
 *		@acked_max (a receiver that forgot the message and takes
 *		it again does not progress), or a moment it waited for
 *		window room with nothing in flight; a message that stalls
 *		DLCP_STALL_MULT x msg_timeout_ms fails even if its receiver
 *		answers
 * @rto_hold:	a timeout presumed segments of this message lost, and no
 *		REPORT has answered a packet sent since: of those, only the
 *		oldest is resent (dlcp_recovery_timeout())
 * @rto_held:	a timeout held this message once: @rto_hold_us and
 *		@rto_rtx_us are set
 * @rto_rtx_sent: the hold's resend went out since the timeout last fired
 * @rto_hold_us: when the hold began
 * @rto_rtx_us:	when the hold's latest resend went out; a REPORT that
 *		echoes this or a later time ends the hold, an earlier one left
 *		the receiver before it could tell. A DUP report that echoes a
 *		time in [@rto_hold_us, @rto_rtx_us] answers one of the hold's
 *		resends, the only ones sent in that time (a timeout that fires
 *		again while the hold lasts resends once more)
 * @probes:	PROBEs sent since the last REPORT
 * @last_probe:	jiffies of the last of them
 * @rack_rtt_us: round-trip time of the packet whose arrival triggered the
 *		latest REPORT (RACK.rtt): a segment sent before it and
 *		still missing is lost rack_rtt_us + the reordering window
 *		after it was sent (dlcp_recovery.c)
 * @rack_age_us: the largest age at which RACK found a segment of this
 *		message lost since the last DUP report (how late an original
 *		was, when a DUP report says it arrived after all)
 * @tsecr_max:	the latest transmit time a REPORT of it echoed: an answer
 *		to a PROBE that echoes an earlier one was overtaken
 * @crit:	bitmap of critical segments, NULL if none (or all: the
 *		DLCP_MSG_CRITICAL flag)
 * @crit_len:	bytes in critical segments (sent in every DATA packet)
 * @budget_bytes: bytes the receiver may deliver without
 * @lost_bytes:	bytes in DLCP_SEG_LOST segments
 * @nr_lost_crit: critical segments in DLCP_SEG_LOST
 * @crit_hint:	no critical segment below this index is DLCP_SEG_LOST
 * @deadline:	jiffies when the message must finish, 0 for none
 * @final:	the deadline passed: nothing is resent, PROBEs say FINAL
 * @droppable:	bitmap of droppable (low-magnitude) segments, or NULL
 * @ce_seen:	CE-marked bytes the receiver reported so far
 * @udp:	sent inside UDP
 * @rtx_class:	class of retransmitted critical segments: 0 if the sender
 *		may use it (CAP_NET_ADMIN), else the highest class it may use
 * @paths:	DLCP_PATHS of the socket when it was sent, or NULL
 * @nr_paths:	entries in @paths
 * @path_cur:	path of the next data packet
 * @path_left:	data packets @path_cur may still send this round
 */
struct dlcp_out_msg {
	struct list_head	node;
	u32			id;
	u32			len;
	u32			seg_size;
	u32			nsegs;
	struct in6_addr		daddr;
	struct in6_addr		saddr;
	__be16			dport;
	struct dst_entry	*dst;
	u32			dst_cookie;
	struct dlcp_peer	*peer;
	struct dlcp_meta	meta;
	struct dlcp_buf		buf;
	u8			*seg;
	u32			next_new;
	u32			nr_lost;
	u32			lost_hint;
	u32			nr_acked;
	u32			acked_max;
	u32			inflight;
	unsigned long		last_heard;
	bool			heard;
	int			xmit_err;
	unsigned long		xmit_err_since;
	unsigned long		progress_at;
	bool			rto_hold;
	bool			rto_held;
	bool			rto_rtx_sent;
	u32			rto_hold_us;
	u32			rto_rtx_us;
	u32			probes;
	unsigned long		last_probe;
	u32			rack_rtt_us;
	u32			rack_age_us;
	u32			tsecr_max;
	unsigned long		*crit;
	u32			crit_len;
	u32			budget_bytes;
	u32			lost_bytes;
	u32			nr_lost_crit;
	u32			crit_hint;
	unsigned long		deadline;
	bool			final;
	unsigned long		*droppable;
	u32			ce_seen;
	bool			udp;
	u8			rtx_class;
	struct dlcp_msg_path	*paths;
	u8			nr_paths;
	u8			path_cur;
	u16			path_left;
};

static inline bool dlcp_seg_crit(const struct dlcp_out_msg *m, u32 seg)
{
	return (m->meta.flags & DLCP_MSG_CRITICAL) ||
	       (m->crit && test_bit(seg, m->crit));
}

/**
 * struct dlcp_flight - one transmitted, unresolved segment
 * @msg:	its message (entries are purged before a message is freed)
 * @seg:	segment index
 * @sent_us:	transmit time, dlcp_now_us()
 * @rack_wait:	reported missing while a packet sent after it arrived:
 *		lost when its reordering window passes (the RACK timer)
 * @held:	a loss decision waited for its CPU's backlog (counted once)
 * @cpu:	the CPU that transmitted it (dlcp_flight_held())
 */
struct dlcp_flight {
	struct dlcp_out_msg	*msg;
	u32			seg;
	u32			sent_us;
	bool			rack_wait;
	bool			held;
	u16			cpu;
};

static inline u32 dlcp_seg_len(const struct dlcp_out_msg *m, u32 seg)
{
	return min(m->seg_size, m->len - seg * m->seg_size);
}

/**
 * struct dlcp_in_key - what identifies an incoming message
 * @saddr:	sender's address
 * @id:		sender's message id
 * @sport:	sender's port
 * @pad:	0 (the key is hashed and compared as bytes)
 */
struct dlcp_in_key {
	struct in6_addr	saddr;
	u32		id;
	__be16		sport;
	u16		pad;
};

/**
 * struct dlcp_in_msg - a message being received, or a delivered one kept
 *	to answer late packets (a "zombie": @buf and @have are empty)
 * @node:	in dlcp_sock.in_table
 * @key:	what the table finds it by: sender's address, port and
 *		message id
 * @lru:	in dlcp_sock.in_active or .in_zombies, in expiry order
 * @settle:	in dlcp_sock.in_settle while @settle_at is set, or empty
 * @charged:	bytes charged to the socket for it (dlcp_mem.c)
 * @daddr:	our address the sender used (replies come from it)
 * @len:	message length
 * @meta:	metadata from the data packets
 * @buf:	the bytes received so far
 * @have:	byte ranges received
 * @pkts_unreported: data packets since the last report
 * @tsval:	latest sender timestamp seen, echoed in reports
 * @max_tsval:	newest sender timestamp seen: a packet sent before it that
 *		arrives later measures the path's reordering
 * @ce_bytes:	payload bytes that arrived CE-marked
 * @max_pkt:	longest DATA packet received (DLCP bytes): the path back
 *		is presumed to carry a REPORT that long
 * @last_active: jiffies of the last packet
 * @lost:	bytes given up (zombies: for repeated STOPs)
 * @budget_bytes: bytes the message may be delivered without
 * @crit_len:	bytes in critical segments, from the DATA header
 * @crit_rcvd:	bytes received from DLCP_HF_CRITICAL packets
 * @settle_at:	jiffies when @m may complete within budget, bytes still
 *		missing: the socket's reordering (dlcp_sock.in_reo_us) after
 *		the sender said all was sent; 0 until then
 * @sent_all:	the sender has sent every byte once (LAST or PROBE seen)
 * @delivered:	this is a zombie
 * @failed:	zombie of a message dropped at its deadline
 * @udp:	arrived inside UDP: replies go the same way
 * @stranger:	a stand-in for a message the socket does not hold, to
 *		answer a PROBE about it (dlcp_in_ctl_class())
 */
struct dlcp_in_msg {
	struct rhash_head	node;
	struct dlcp_in_key	key;
	struct list_head	lru;
	struct list_head	settle;
	u32			charged;
	struct in6_addr		daddr;
	u32			len;
	struct dlcp_meta	meta;
	struct dlcp_buf		buf;
	struct dlcp_rangeset	have;
	u32			pkts_unreported;
	u32			tsval;
	u32			max_tsval;
	u32			ce_bytes;
	u32			max_pkt;
	unsigned long		last_active;
	unsigned long		settle_at;
	u32			lost;
	u32			budget_bytes;
	u32			crit_len;
	u32			crit_rcvd;
	bool			sent_all;
	bool			delivered;
	bool			failed;
	bool			udp;
	bool			stranger;
};

/**
 * struct dlcp_delivery - a complete message queued for recvmsg; an skb on
 *	sk_receive_queue carries a pointer to it (dlcp_skb_delivery())
 * @msg:	the message, off the socket's table; its pages are still
 *		charged to sk_rmem_alloc
 * @info:	what recvmsg reports in DLCP_CMSG_RECV; the lost ranges
 *		are listed from @msg's range set by recvmsg itself
 * @sk:		owning socket, for uncharging
 */
struct dlcp_delivery {
	struct dlcp_in_msg	*msg;
	struct dlcp_recv_info	info;
	struct sock		*sk;
};

static inline struct dlcp_delivery *dlcp_skb_delivery(struct sk_buff *skb)
{
	return *(struct dlcp_delivery **)skb->cb;
}

#endif /* _DLCP_MSG_H */
