/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DLCP trace events (TRACE_SYSTEM dlcp): messages sent and completed,
 * packets sent and received, retransmissions, drops with their reason,
 * STOPs, and congestion window changes. Enable with
 *   echo 1 > /sys/kernel/tracing/events/dlcp/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dlcp

#if !defined(_DLCP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DLCP_TRACE_H

#include <linux/tracepoint.h>
#include "dlcp_compat.h"

TRACE_EVENT(dlcp_msg_send,
	TP_PROTO(u16 sport, const struct in6_addr *daddr, u16 dport, u32 id, u32 len, u8 prio,
		 u32 budget_ppm, u32 nsegs),
	TP_ARGS(sport, daddr, dport, id, len, prio, budget_ppm, nsegs),
	TP_STRUCT__entry(
		__field(u16, sport)
		__array(u8, daddr, 16)
		__field(u16, dport)
		__field(u32, id)
		__field(u32, len)
		__field(u8, prio)
		__field(u32, budget_ppm)
		__field(u32, nsegs)
	),
	TP_fast_assign(
		__entry->sport = sport;
		memcpy(__entry->daddr, daddr, 16);
		__entry->dport = dport;
		__entry->id = id;
		__entry->len = len;
		__entry->prio = prio;
		__entry->budget_ppm = budget_ppm;
		__entry->nsegs = nsegs;
	),
	TP_printk("sport=%u daddr=%pI6c dport=%u id=%u len=%u class=%u budget_ppm=%u segs=%u",
		  __entry->sport, __entry->daddr, __entry->dport, __entry->id,
		  __entry->len, __entry->prio, __entry->budget_ppm,
		  __entry->nsegs)
);

/* The receiver delivered a message (status: 0 exact, 1 lossy). */
TRACE_EVENT(dlcp_msg_complete,
	TP_PROTO(u16 port, const struct in6_addr *saddr, u16 sport, u32 id, u32 len, u32 lost),
	TP_ARGS(port, saddr, sport, id, len, lost),
	TP_STRUCT__entry(
		__field(u16, port)
		__array(u8, saddr, 16)
		__field(u16, sport)
		__field(u32, id)
		__field(u32, len)
		__field(u32, lost)
	),
	TP_fast_assign(
		__entry->port = port;
		memcpy(__entry->saddr, saddr, 16);
		__entry->sport = sport;
		__entry->id = id;
		__entry->len = len;
		__entry->lost = lost;
	),
	TP_printk("port=%u saddr=%pI6c sport=%u id=%u len=%u lost=%u",
		  __entry->port, __entry->saddr, __entry->sport, __entry->id,
		  __entry->len, __entry->lost)
);

/* The sender learnt a message's outcome (DLCP_DONE_*). */
TRACE_EVENT(dlcp_msg_done,
	TP_PROTO(u16 sport, u32 id, u32 status, u32 lost),
	TP_ARGS(sport, id, status, lost),
	TP_STRUCT__entry(
		__field(u16, sport)
		__field(u32, id)
		__field(u32, status)
		__field(u32, lost)
	),
	TP_fast_assign(
		__entry->sport = sport;
		__entry->id = id;
		__entry->status = status;
		__entry->lost = lost;
	),
	TP_printk("sport=%u id=%u status=%s lost=%u", __entry->sport,
		  __entry->id,
		  __print_symbolic(__entry->status,
				   { DLCP_DONE_EXACT, "exact" },
				   { DLCP_DONE_LOSSY, "lossy" },
				   { DLCP_DONE_DEADLINE, "deadline" },
				   { DLCP_DONE_TIMEOUT, "timeout" }),
		  __entry->lost)
);

DECLARE_EVENT_CLASS(dlcp_pkt,
	TP_PROTO(const struct dlcp_hdr *h, const struct in6_addr *saddr, const struct in6_addr *daddr, u8 tos),
	TP_ARGS(h, saddr, daddr, tos),
	TP_STRUCT__entry(
		__field(u8, type)
		__field(u8, flags)
		__field(u8, tos)
		__array(u8, saddr, 16)
		__array(u8, daddr, 16)
		__field(u16, sport)
		__field(u16, dport)
		__field(u32, id)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->type = dlcp_wire_type(h);
		__entry->flags = h->flags;
		__entry->tos = tos;
		memcpy(__entry->saddr, saddr, 16);
		memcpy(__entry->daddr, daddr, 16);
		__entry->sport = ntohs(h->source);
		__entry->dport = ntohs(h->dest);
		__entry->id = ntohl(h->msg_id);
		__entry->len = ntohs(h->len);
	),
	TP_printk("%pI6c:%u > %pI6c:%u type=%s flags=%#x tos=%#x id=%u len=%u",
		  __entry->saddr, __entry->sport, __entry->daddr,
		  __entry->dport,
		  __print_symbolic(__entry->type,
				   { DLCP_T_DATA, "DATA" },
				   { DLCP_T_REPORT, "REPORT" },
				   { DLCP_T_STOP, "STOP" },
				   { DLCP_T_PROBE, "PROBE" },
				   { DLCP_T_ABORT, "ABORT" }),
		  __entry->flags, __entry->tos, __entry->id, __entry->len)
);

DEFINE_EVENT(dlcp_pkt, dlcp_pkt_send,
	TP_PROTO(const struct dlcp_hdr *h, const struct in6_addr *saddr, const struct in6_addr *daddr, u8 tos),
	TP_ARGS(h, saddr, daddr, tos)
);

DEFINE_EVENT(dlcp_pkt, dlcp_pkt_recv,
	TP_PROTO(const struct dlcp_hdr *h, const struct in6_addr *saddr, const struct in6_addr *daddr, u8 tos),
	TP_ARGS(h, saddr, daddr, tos)
);

TRACE_EVENT(dlcp_retransmit,
	TP_PROTO(u16 sport, u32 id, u32 seg, u32 offset),
	TP_ARGS(sport, id, seg, offset),
	TP_STRUCT__entry(
		__field(u16, sport)
		__field(u32, id)
		__field(u32, seg)
		__field(u32, offset)
	),
	TP_fast_assign(
		__entry->sport = sport;
		__entry->id = id;
		__entry->seg = seg;
		__entry->offset = offset;
	),
	TP_printk("sport=%u id=%u seg=%u offset=%u", __entry->sport,
		  __entry->id, __entry->seg, __entry->offset)
);

/* A packet was dropped; @reason is its counter's name. */
TRACE_EVENT(dlcp_drop,
	TP_PROTO(const char *reason, u32 len),
	TP_ARGS(reason, len),
	TP_STRUCT__entry(
		__string(reason, reason)
		__field(u32, len)
	),
	TP_fast_assign(
		dlcp_assign_str(reason, reason);
		__entry->len = len;
	),
	TP_printk("reason=%s len=%u", __get_str(reason), __entry->len)
);

/* A STOP was sent (dir=0) or received (dir=1). */
TRACE_EVENT(dlcp_stop,
	TP_PROTO(int dir, u32 id, u32 lost, bool failed),
	TP_ARGS(dir, id, lost, failed),
	TP_STRUCT__entry(
		__field(int, dir)
		__field(u32, id)
		__field(u32, lost)
		__field(bool, failed)
	),
	TP_fast_assign(
		__entry->dir = dir;
		__entry->id = id;
		__entry->lost = lost;
		__entry->failed = failed;
	),
	TP_printk("%s id=%u lost=%u%s", __entry->dir ? "rcvd" : "sent",
		  __entry->id, __entry->lost,
		  __entry->failed ? " FAILED" : "")
);

TRACE_EVENT(dlcp_cwnd,
	TP_PROTO(u16 sport, const struct in6_addr *daddr, u32 old, u32 cwnd, const char *why,
		 u32 srtt_us, u32 alpha),
	TP_ARGS(sport, daddr, old, cwnd, why, srtt_us, alpha),
	TP_STRUCT__entry(
		__field(u16, sport)
		__array(u8, daddr, 16)
		__field(u32, old)
		__field(u32, cwnd)
		__string(why, why)
		__field(u32, srtt_us)
		__field(u32, alpha)
	),
	TP_fast_assign(
		__entry->sport = sport;
		memcpy(__entry->daddr, daddr, 16);
		__entry->old = old;
		__entry->cwnd = cwnd;
		dlcp_assign_str(why, why);
		__entry->srtt_us = srtt_us;
		__entry->alpha = alpha;
	),
	TP_printk("sport=%u daddr=%pI6c cwnd=%u->%u why=%s srtt_us=%u alpha=%u/1024",
		  __entry->sport, __entry->daddr, __entry->old, __entry->cwnd, __get_str(why),
		  __entry->srtt_us, __entry->alpha)
);

#endif /* _DLCP_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dlcp_trace
#include <trace/define_trace.h>
