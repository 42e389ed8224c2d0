/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DLCP wire format: the packet headers, their flags and lengths, and the
 * pure validator that decides whether a packet is well formed.
 *
 * This header is private to the protocol: it is not part of the socket
 * API (<linux/dlcp.h>) and may change with the version field. It depends
 * on nothing but <linux/types.h> and the socket API's constants, so that
 * the module, the userspace tests, the fuzzers and the tools include the
 * same definitions (by path, from kmod/).
 */
#ifndef _DLCP_WIRE_H
#define _DLCP_WIRE_H

#include <linux/types.h>
#include "../uapi/linux/dlcp.h"

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
 *		receiver state. Padded with zero header words to
 *		DLCP_PROBE_PAD_LEN, so that the answer may be as long.
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
#define DLCP_HF_NOPORT		0x01	/* STOP, with FAILED: no socket holds
					 * the port (the bit is DATA's ACKREQ)
					 */
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
 * @tsecr:	tsval of the packet that triggered the report: DATA or PROBE
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
 * @tsecr:	tsval of the packet answered: the one that completed the
 *		message, or the late DATA or PROBE a STOP is sent again for
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
 * No packet is answered with a longer one, so that a forged source address
 * gains no amplification: a REPORT holds at most the gaps that fit in the
 * length of the packet it answers (dlcp_wire_answer_gaps()). A PROBE,
 * which asks for a whole report, is padded with header words of zeros to
 * the longest header there is (255 words).
 */
#define DLCP_PROBE_PAD_LEN	1020

/* The gaps a REPORT may carry that answers a packet of @len bytes. */
static inline __u32 dlcp_wire_answer_gaps(__u32 len)
{
	return len > DLCP_REPORT_HDR_LEN ?
	       (len - DLCP_REPORT_HDR_LEN) / DLCP_GAP_LEN : 0;
}

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

/**
 * dlcp_wire_gso_segs() - packets that a DATA header of @len bytes stands for
 * @pkt:	the DLCP header, at least DLCP_HDR_LEN bytes
 * @len:	the DLCP header and what follows (the IP or UDP payload length)
 *
 * A super-packet (dlcp_offload.c) carries the header of its first packet,
 * whose length field is that packet's, then the payload of all its packets,
 * of that one size: a capture on the host that sent it, or past a veth,
 * sees it whole. Pure, for tools that read captures.
 *
 * Return: 1 for a packet whose length field is @len; for a super-packet, the
 * number of packets (2 or more); 0 for anything else.
 */
static inline __u32 dlcp_wire_gso_segs(const void *pkt, __u32 len)
{
	const struct dlcp_hdr *h = (const struct dlcp_hdr *)pkt;
	__u32 one = dlcp_wire_get16(&h->len);

	if (one == len)
		return 1;
	if (dlcp_wire_type(h) != DLCP_T_DATA || one <= DLCP_DATA_HDR_LEN ||
	    len < 2 * one - DLCP_DATA_HDR_LEN ||
	    (len - DLCP_DATA_HDR_LEN) % (one - DLCP_DATA_HDR_LEN))
		return 0;
	return (len - DLCP_DATA_HDR_LEN) / (one - DLCP_DATA_HDR_LEN);
}

#endif /* _DLCP_WIRE_H */
