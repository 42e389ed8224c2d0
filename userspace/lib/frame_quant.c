// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp frame format of quantized collectives (see frame.h): struct
 * qhdr, which carries the quantizer's parameters and the shared scale, and
 * integer elements packed to the narrowest width that holds every one of
 * a message (4, 8, 16 or 32 bits), so that a packet carries whole elements
 * (the segment size is a multiple of the element size).
 */
#include <errno.h>
#include <stddef.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "qcoll.h"

#define QMAGIC		0x444c4351u	/* "DLCQ" */
#define QVERSION	1

struct qhdr {
	uint32_t magic;
	uint8_t kind;
	uint8_t width;		/* bits per element on the wire */
	uint8_t bits;		/* quantizer */
	uint8_t flags;
	uint8_t reduce;
	uint8_t version;
	uint16_t reserved0;
	struct dlcp_frame_ids ids;
	float scale;		/* DLCP_FRAME_QMAX: the sender's max |x| */
	uint32_t seed;
	/* (4 bytes of padding, zero) chunk_off, chunk_len: in the quantized
	 * vector, padded for the rotation */
	struct dlcp_frame_sizes sizes;
	uint32_t reserved1;
	uint32_t reserved2;
};

_Static_assert(sizeof(struct qhdr) % 8 == 0, "qhdr alignment");
_Static_assert(offsetof(struct qhdr, ids) == 12 &&
	       offsetof(struct qhdr, scale) == 36 &&
	       offsetof(struct qhdr, sizes) == 48 &&
	       sizeof(struct qhdr) == 88, "qhdr layout");

static int quant_width(const struct dlcp_coll *c, const void *data, size_t len)
{
	int width = len ? dlcp_qwidth(data, len) : 8;

	if (width == 16 && !dlcp_qcoll_of(c)->wide16)
		width = 32;
	return width;
}

static uint8_t quant_msg_dtype(const struct dlcp_coll *c, int width)
{
	(void)c;
	return width == 32 ? DLCP_DTYPE_INT32 : DLCP_DTYPE_INT8;
}

static void quant_encode(const struct dlcp_coll *c,
			 const struct dlcp_frame_hdr *f, void *wire)
{
	const struct dlcp_qcoll *q = dlcp_qcoll_of(c);
	struct qhdr *h = wire;

	h->magic = QMAGIC;
	h->kind = f->kind;
	h->width = f->width;
	h->bits = (uint8_t)q->bits;
	h->flags = (uint8_t)q->flags;
	h->reduce = (uint8_t)c->reduce;
	h->version = QVERSION;
	h->ids = f->ids;
	h->scale = q->scale;
	h->seed = q->seed;
	h->sizes = f->sizes;
}

static int quant_decode(const struct dlcp_coll *c, const void *wire,
			struct dlcp_frame_hdr *f)
{
	const struct qhdr *h = wire;

	(void)c;
	if (h->magic != QMAGIC || h->version != QVERSION ||
	    (h->width != 4 && h->width != 8 && h->width != 16 &&
	     h->width != 32))
		return -EPROTO;
	f->kind = h->kind;
	f->width = h->width;
	f->ids = h->ids;
	f->sizes = h->sizes;
	return 0;
}

/* Every rank quantizes alike (-EINVAL otherwise) with the same scale
 * (-EPROTO: a scale exchange went wrong). */
static int quant_match(const struct dlcp_coll *c, const void *wire,
		       const struct dlcp_frame_hdr *f)
{
	const struct dlcp_qcoll *q = dlcp_qcoll_of(c);
	const struct qhdr *h = wire;

	if (h->bits != q->bits || h->flags != q->flags ||
	    h->reduce != c->reduce || h->seed != q->seed)
		return -EINVAL;
	if (f->kind != DLCP_FRAME_QMAX && h->scale != q->scale)
		return -EPROTO;
	return 0;
}

static void quant_pack(const void *data, size_t len, int width, void *out)
{
	dlcp_qpack(data, len, width, out);
}

static void quant_unpack(const void *in, size_t len, int width, void *out)
{
	dlcp_qunpack(in, len, width, out);
}

float dlcp_frame_quant_scale(const struct dlcp_frame_in *in)
{
	return ((const struct qhdr *)in->hdr)->scale;
}

const struct dlcp_frame_format dlcp_frame_quant = {
	.hdr_size	= sizeof(struct qhdr),
	.kind_rs	= DLCP_FRAME_QRS,
	.kind_ag	= DLCP_FRAME_QAG,
	.kind_push	= DLCP_FRAME_QPUSH,
	.kind_pull	= DLCP_FRAME_QPULL,
	.width		= quant_width,
	.msg_dtype	= quant_msg_dtype,
	.encode		= quant_encode,
	.decode		= quant_decode,
	.match		= quant_match,
	.pack		= quant_pack,
	.unpack		= quant_unpack,
};
