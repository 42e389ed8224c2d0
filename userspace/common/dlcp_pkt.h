/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcp_pkt - build DLCP packets in userspace.
 *
 * Pure helpers, no I/O: they write well-formed DLCP packets (DATA, REPORT,
 * STOP, PROBE, ABORT) into a caller's buffer, with the length and header
 * words fields filled in, and compute or verify the mandatory Internet
 * checksum. Used by the unit tests, the selftests, and later by fuzzers and
 * tools, which build a valid packet, mutate it, and (re)checksum it.
 *
 * All fields passed in are host byte order; packets are written in network
 * byte order as described in <linux/dlcp.h>.
 *
 * Checksums
 * ---------
 * A checksum is computed over an IP pseudo-header, then the DLCP header and
 * payload. The pseudo-header's contribution is the "seed": a partial sum
 * from dlcp_csum_pseudo4() (IPv4) or dlcp_csum_pseudo6() (IPv6), made with
 * the DLCP length the receiver will see (the IP payload length). Every
 * checksum function takes a seed, so nothing here depends on the IP
 * version.
 *
 * Partial sums are 32-bit values holding a one's complement sum of 16-bit
 * big-endian words, not yet folded: feed them back into dlcp_csum_add(),
 * fold them with dlcp_csum_fold().
 */
#ifndef DLCP_PKT_H
#define DLCP_PKT_H

#include <stddef.h>
#include <stdint.h>

#include <linux/dlcp.h>
#include "dlcp_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Internet checksum (RFC 1071)                                         */
/* ------------------------------------------------------------------ */

/*
 * dlcp_csum_add() - add @len bytes at @buf to the partial sum @sum.
 * Bytes are taken as big-endian 16-bit words; an odd last byte is padded
 * with a zero byte. When a sum is built from several pieces, every piece
 * but the last must have an even length.
 */
uint32_t dlcp_csum_add(uint32_t sum, const void *buf, size_t len);

/* Fold a partial sum to 16 bits (one's complement sum, not inverted). */
uint16_t dlcp_csum_fold(uint32_t sum);

/* The checksum field value for a partial sum: ~fold(sum). */
uint16_t dlcp_csum_finish(uint32_t sum);

/*
 * Seeds: partial sums of an IP pseudo-header. Addresses are in network
 * byte order (an IPv4 address as in struct in_addr's s_addr; an IPv6
 * address as 16 bytes). @len is the DLCP length (header + payload), i.e.
 * the IP payload length, and @proto the IP protocol number (IPPROTO_DLCP).
 */
uint32_t dlcp_csum_pseudo4(uint32_t saddr, uint32_t daddr, uint8_t proto,
			   uint16_t len);
uint32_t dlcp_csum_pseudo6(const void *saddr, const void *daddr,
			   uint8_t proto, uint32_t len);

/* ------------------------------------------------------------------ */
/* Byte order helpers                                                   */
/* ------------------------------------------------------------------ */

void dlcp_put16(void *p, uint16_t v);
void dlcp_put32(void *p, uint32_t v);
uint16_t dlcp_get16(const void *p);
uint32_t dlcp_get32(const void *p);

/* ------------------------------------------------------------------ */
/* Packet builders                                                      */
/* ------------------------------------------------------------------ */

/* Fields of the common header, host byte order. */
struct dlcp_pkt_info {
	uint16_t sport;
	uint16_t dport;
	uint8_t flags;		/* DLCP_HF_* */
	uint8_t prio;
	uint32_t msg_id;
	uint32_t msg_len;
};

/* DATA-specific fields. */
struct dlcp_pkt_data_info {
	uint32_t offset;
	uint32_t tensor_id;
	uint32_t iteration;
	uint32_t budget_ppm;
	uint32_t tsval;
	uint32_t crit_len;	/* bytes in DLCP_HF_CRITICAL segments */
	uint16_t layer;
	uint16_t msg_flags;	/* DLCP_MSG_* */
	uint8_t dtype;		/* enum dlcp_dtype */
};

/* REPORT-specific fields. */
struct dlcp_pkt_report_info {
	uint32_t rcvd;
	uint32_t scan_end;
	uint32_t tsecr;
	uint32_t ce_bytes;
	uint8_t rflags;		/* DLCP_RF_* */
};

/* A gap of a REPORT: bytes [start, end) are missing. */
struct dlcp_pkt_gap {
	uint32_t start;
	uint32_t end;
};

/*
 * Each builder writes one packet at @buf (at most @size bytes) and returns
 * its length, or 0 if it does not fit in @size or in the 16-bit length
 * field. The header words field is the type's fixed header length, the
 * length field is the packet length, the checksum field is zero: call
 * dlcp_pkt_set_csum() once the packet is final. A NULL @payload stands for
 * @plen zero bytes.
 */
size_t dlcp_pkt_build_data(void *buf, size_t size,
			   const struct dlcp_pkt_info *pi,
			   const struct dlcp_pkt_data_info *di,
			   const void *payload, size_t plen);
size_t dlcp_pkt_build_report(void *buf, size_t size,
			     const struct dlcp_pkt_info *pi,
			     const struct dlcp_pkt_report_info *ri,
			     const struct dlcp_pkt_gap *gaps, size_t ngaps);
size_t dlcp_pkt_build_stop(void *buf, size_t size,
			   const struct dlcp_pkt_info *pi,
			   uint32_t lost, uint32_t tsecr);
size_t dlcp_pkt_build_probe(void *buf, size_t size,
			    const struct dlcp_pkt_info *pi,
			    uint32_t sent, uint32_t tsval);
size_t dlcp_pkt_build_abort(void *buf, size_t size,
			    const struct dlcp_pkt_info *pi,
			    uint32_t sent, uint32_t tsval);

/* Rewrite the version/type byte of a built packet (for mutation). */
void dlcp_pkt_set_ver_type(void *pkt, unsigned int version,
			   unsigned int type);

/*
 * dlcp_pkt_set_csum() - fill in the checksum field of the @len-byte packet
 * at @pkt (len >= DLCP_HDR_LEN) for the pseudo-header sum @seed.
 */
void dlcp_pkt_set_csum(void *pkt, size_t len, uint32_t seed);

/*
 * dlcp_pkt_fix_csum_at() - make the checksum of @pkt verify by writing the
 * 16-bit word at the even offset @off (@off + 2 <= @len). For packets too
 * short to hold a checksum field, so that a receiver rejects them for
 * their length whatever order it checks things in. Returns -1 if @off is
 * odd or out of range, else 0.
 */
int dlcp_pkt_fix_csum_at(void *pkt, size_t len, uint32_t seed, size_t off);

/* Whether the checksum of the @len-byte packet @pkt verifies. */
int dlcp_pkt_csum_ok(const void *pkt, size_t len, uint32_t seed);

/* Convenience for IPv4: seed from addresses and @len, then set_csum. */
void dlcp_pkt_finish4(void *pkt, size_t len, uint32_t saddr, uint32_t daddr);

/* ------------------------------------------------------------------ */
/* Names                                                                */
/* ------------------------------------------------------------------ */

/*
 * The /proc/net/dlcp/snmp counter a drop reason is counted under
 * ("DlcpDropShort", ...), NULL for DLCP_DROP_NONE or an unknown value.
 */
const char *dlcp_drop_reason_snmp(unsigned int reason);

/* Element size in bytes of a dtype, 0 for an unknown one. */
unsigned int dlcp_dtype_size(unsigned int dtype);

#ifdef __cplusplus
}
#endif

#endif /* DLCP_PKT_H */
