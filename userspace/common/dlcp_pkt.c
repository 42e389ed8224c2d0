// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pkt - build DLCP packets in userspace. See dlcp_pkt.h.
 */
#include <stddef.h>
#include <string.h>

#include "dlcp_pkt.h"

/* ------------------------------------------------------------------ */
/* Internet checksum                                                    */
/* ------------------------------------------------------------------ */

static uint32_t fold32(uint64_t sum)
{
	while (sum >> 32)
		sum = (sum & 0xffffffffu) + (sum >> 32);
	return (uint32_t)sum;
}

uint32_t dlcp_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	uint64_t acc = sum;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		acc += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		acc += (uint32_t)b[len - 1] << 8;
	return fold32(acc);
}

uint16_t dlcp_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t dlcp_csum_finish(uint32_t sum)
{
	return (uint16_t)~dlcp_csum_fold(sum);
}

uint32_t dlcp_csum_pseudo4(uint32_t saddr, uint32_t daddr, uint8_t proto,
			   uint16_t len)
{
	uint8_t ph[12];

	memcpy(ph, &saddr, 4);		/* already network byte order */
	memcpy(ph + 4, &daddr, 4);
	ph[8] = 0;
	ph[9] = proto;
	dlcp_put16(ph + 10, len);
	return dlcp_csum_add(0, ph, sizeof(ph));
}

uint32_t dlcp_csum_pseudo6(const void *saddr, const void *daddr,
			   uint8_t proto, uint32_t len)
{
	uint8_t ph[40];

	memcpy(ph, saddr, 16);
	memcpy(ph + 16, daddr, 16);
	dlcp_put32(ph + 32, len);
	ph[36] = 0;
	ph[37] = 0;
	ph[38] = 0;
	ph[39] = proto;
	return dlcp_csum_add(0, ph, sizeof(ph));
}

/* ------------------------------------------------------------------ */
/* Byte order                                                           */
/* ------------------------------------------------------------------ */

void dlcp_put16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

void dlcp_put32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

uint16_t dlcp_get16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] << 8 | b[1]);
}

uint32_t dlcp_get32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

/* ------------------------------------------------------------------ */
/* Builders                                                             */
/* ------------------------------------------------------------------ */

/* Field offsets, from the uapi structures. */
#define OFF(type, field)	offsetof(struct type, field)
#define OFF_SOURCE	OFF(dlcp_hdr, source)
#define OFF_DEST	OFF(dlcp_hdr, dest)
#define OFF_VER_TYPE	OFF(dlcp_hdr, ver_type)
#define OFF_FLAGS	OFF(dlcp_hdr, flags)
#define OFF_DOFF	OFF(dlcp_hdr, doff)
#define OFF_PRIO	OFF(dlcp_hdr, prio)
#define OFF_LEN		OFF(dlcp_hdr, len)
#define OFF_CHECK	OFF(dlcp_hdr, check)
#define OFF_MSG_ID	OFF(dlcp_hdr, msg_id)
#define OFF_MSG_LEN	OFF(dlcp_hdr, msg_len)

_Static_assert(sizeof(struct dlcp_hdr) == DLCP_HDR_LEN, "common header");
_Static_assert(sizeof(struct dlcp_data_hdr) == DLCP_DATA_HDR_LEN, "DATA");
_Static_assert(sizeof(struct dlcp_report_hdr) == DLCP_REPORT_HDR_LEN,
	       "REPORT");
_Static_assert(sizeof(struct dlcp_stop_hdr) == DLCP_STOP_HDR_LEN, "STOP");
_Static_assert(sizeof(struct dlcp_probe_hdr) == DLCP_PROBE_HDR_LEN, "PROBE");
_Static_assert(sizeof(struct dlcp_wire_range) == DLCP_GAP_LEN, "gap");

/*
 * Write the common header of a @type packet whose fixed header is @hlen
 * bytes and whose payload is @plen bytes. Returns the packet length, or 0
 * if it does not fit.
 */
static size_t put_common(uint8_t *b, size_t size, unsigned int type,
			 size_t hlen, size_t plen,
			 const struct dlcp_pkt_info *pi)
{
	size_t len = hlen + plen;

	if (plen > 0xffff || len > 0xffff || len > size)
		return 0;
	memset(b, 0, hlen);
	dlcp_put16(b + OFF_SOURCE, pi->sport);
	dlcp_put16(b + OFF_DEST, pi->dport);
	b[OFF_VER_TYPE] = (uint8_t)(DLCP_VERSION << 4 | (type & 0x0f));
	b[OFF_FLAGS] = pi->flags;
	b[OFF_DOFF] = (uint8_t)(hlen / 4);
	b[OFF_PRIO] = pi->prio;
	dlcp_put16(b + OFF_LEN, (uint16_t)len);
	dlcp_put16(b + OFF_CHECK, 0);
	dlcp_put32(b + OFF_MSG_ID, pi->msg_id);
	dlcp_put32(b + OFF_MSG_LEN, pi->msg_len);
	return len;
}

size_t dlcp_pkt_build_data(void *buf, size_t size,
			   const struct dlcp_pkt_info *pi,
			   const struct dlcp_pkt_data_info *di,
			   const void *payload, size_t plen)
{
	uint8_t *b = buf;
	size_t len;

	len = put_common(b, size, DLCP_T_DATA, DLCP_DATA_HDR_LEN, plen, pi);
	if (!len)
		return 0;
	dlcp_put32(b + OFF(dlcp_data_hdr, offset), di->offset);
	dlcp_put32(b + OFF(dlcp_data_hdr, tensor_id), di->tensor_id);
	dlcp_put32(b + OFF(dlcp_data_hdr, iteration), di->iteration);
	dlcp_put32(b + OFF(dlcp_data_hdr, budget_ppm), di->budget_ppm);
	dlcp_put16(b + OFF(dlcp_data_hdr, layer), di->layer);
	b[OFF(dlcp_data_hdr, dtype)] = di->dtype;
	dlcp_put16(b + OFF(dlcp_data_hdr, msg_flags), di->msg_flags);
	dlcp_put32(b + OFF(dlcp_data_hdr, tsval), di->tsval);
	dlcp_put32(b + OFF(dlcp_data_hdr, crit_len), di->crit_len);
	if (payload)
		memcpy(b + DLCP_DATA_HDR_LEN, payload, plen);
	else
		memset(b + DLCP_DATA_HDR_LEN, 0, plen);
	return len;
}

size_t dlcp_pkt_build_report(void *buf, size_t size,
			     const struct dlcp_pkt_info *pi,
			     const struct dlcp_pkt_report_info *ri,
			     const struct dlcp_pkt_gap *gaps, size_t ngaps)
{
	uint8_t *b = buf;
	size_t len, i;

	if (ngaps > 0xffff)
		return 0;
	len = put_common(b, size, DLCP_T_REPORT, DLCP_REPORT_HDR_LEN,
			 ngaps * DLCP_GAP_LEN, pi);
	if (!len)
		return 0;
	dlcp_put32(b + OFF(dlcp_report_hdr, rcvd), ri->rcvd);
	dlcp_put32(b + OFF(dlcp_report_hdr, scan_end), ri->scan_end);
	dlcp_put32(b + OFF(dlcp_report_hdr, tsecr), ri->tsecr);
	dlcp_put32(b + OFF(dlcp_report_hdr, ce_bytes), ri->ce_bytes);
	dlcp_put16(b + OFF(dlcp_report_hdr, ngaps), (uint16_t)ngaps);
	b[OFF(dlcp_report_hdr, rflags)] = ri->rflags;
	for (i = 0; i < ngaps; i++) {
		uint8_t *g = b + DLCP_REPORT_HDR_LEN + i * DLCP_GAP_LEN;

		dlcp_put32(g, gaps[i].start);
		dlcp_put32(g + 4, gaps[i].end);
	}
	return len;
}

static size_t build_two_words(void *buf, size_t size, unsigned int type,
			      const struct dlcp_pkt_info *pi,
			      uint32_t w0, uint32_t w1)
{
	uint8_t *b = buf;
	size_t len;

	/* STOP, PROBE and ABORT: the common header and two words. */
	_Static_assert(OFF(dlcp_stop_hdr, lost) == OFF(dlcp_probe_hdr, sent) &&
		       OFF(dlcp_stop_hdr, tsecr) ==
		       OFF(dlcp_probe_hdr, tsval) &&
		       DLCP_STOP_HDR_LEN == DLCP_PROBE_HDR_LEN,
		       "STOP and PROBE/ABORT share a layout");
	len = put_common(b, size, type, dlcp_wire_min_hdr(type), 0, pi);
	if (!len)
		return 0;
	dlcp_put32(b + OFF(dlcp_probe_hdr, sent), w0);
	dlcp_put32(b + OFF(dlcp_probe_hdr, tsval), w1);
	return len;
}

size_t dlcp_pkt_build_stop(void *buf, size_t size,
			   const struct dlcp_pkt_info *pi,
			   uint32_t lost, uint32_t tsecr)
{
	return build_two_words(buf, size, DLCP_T_STOP, pi, lost, tsecr);
}

size_t dlcp_pkt_build_probe(void *buf, size_t size,
			    const struct dlcp_pkt_info *pi,
			    uint32_t sent, uint32_t tsval)
{
	return build_two_words(buf, size, DLCP_T_PROBE, pi, sent, tsval);
}

size_t dlcp_pkt_build_abort(void *buf, size_t size,
			    const struct dlcp_pkt_info *pi,
			    uint32_t sent, uint32_t tsval)
{
	return build_two_words(buf, size, DLCP_T_ABORT, pi, sent, tsval);
}

void dlcp_pkt_set_ver_type(void *pkt, unsigned int version, unsigned int type)
{
	uint8_t *b = pkt;

	b[OFF_VER_TYPE] = (uint8_t)((version & 0x0f) << 4 | (type & 0x0f));
}

int dlcp_pkt_fix_csum_at(void *pkt, size_t len, uint32_t seed, size_t off)
{
	uint8_t *b = pkt;

	if ((off & 1) || off + 2 > len)
		return -1;
	dlcp_put16(b + off, 0);
	dlcp_put16(b + off, dlcp_csum_finish(dlcp_csum_add(seed, b, len)));
	return 0;
}

void dlcp_pkt_set_csum(void *pkt, size_t len, uint32_t seed)
{
	dlcp_pkt_fix_csum_at(pkt, len, seed, OFF_CHECK);
}

int dlcp_pkt_csum_ok(const void *pkt, size_t len, uint32_t seed)
{
	return dlcp_csum_fold(dlcp_csum_add(seed, pkt, len)) == 0xffff;
}

void dlcp_pkt_finish4(void *pkt, size_t len, uint32_t saddr, uint32_t daddr)
{
	dlcp_pkt_set_csum(pkt, len,
			  dlcp_csum_pseudo4(saddr, daddr, IPPROTO_DLCP,
					    (uint16_t)len));
}

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

const char *dlcp_drop_reason_snmp(unsigned int reason)
{
	switch (reason) {
	case DLCP_DROP_SHORT:
		return "DlcpDropShort";
	case DLCP_DROP_VERSION:
		return "DlcpDropVersion";
	case DLCP_DROP_TYPE:
		return "DlcpDropType";
	case DLCP_DROP_HDRLEN:
		return "DlcpDropHdrLen";
	case DLCP_DROP_LEN:
		return "DlcpDropLen";
	case DLCP_DROP_FLAGS:
		return "DlcpDropFlags";
	case DLCP_DROP_MSGLEN:
		return "DlcpDropMsgLen";
	case DLCP_DROP_OFFSET:
		return "DlcpDropOffset";
	case DLCP_DROP_GAPS:
		return "DlcpDropGaps";
	case DLCP_DROP_FIELD:
		return "DlcpDropField";
	}
	return NULL;
}

unsigned int dlcp_dtype_size(unsigned int dtype)
{
	return dlcp_wire_dtype_size(dtype);
}
