/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libdlcp frame codec: how a chunk of a collective travels. A message is
 * [header][runs][elements]; the header and the runs are a critical range,
 * so they always arrive. A run (start, len, count) says that @len elements
 * from @start of the chunk carry @count contributions instead of the
 * header's base_count (0 in an all-gather or pull: "missing, use your own
 * value"). Messages are keyed by (sender rank, tensor_id, iteration) with
 *   tensor_id = (tag & 0xffff) << 16 | kind << 12 | step,
 * and whatever arrives ahead of its turn waits in the group's stash. An
 * abort message (kind DLCP_FRAME_ABORT) ends the collective of its tag and
 * iteration on every rank with the sender's error.
 *
 * The layout of the header and the encoding of the elements are a format's
 * (struct dlcp_frame_format): FP32/INT32 elements as they are
 * (dlcp_frame_plain, frame.c), or quantized integers packed to the
 * narrowest width that holds them (dlcp_frame_quant, frame_quant.c).
 */
#ifndef DLCP_FRAME_H
#define DLCP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

struct dlcp_coll;
struct dlcp_group;
struct dlcp_group_msg;

/*
 * Kinds of messages, part of the key. The quantized kinds reuse the
 * numbers of the direct ones (their headers differ): a direct and a
 * quantized collective of the same tag and iteration in flight at once
 * would take each other's messages, as any two collectives would
 * (libdlcp.h: they must differ in one of them).
 */
enum dlcp_frame_kind {
	DLCP_FRAME_RS = 1,
	DLCP_FRAME_AG = 2,
	DLCP_FRAME_PUSH = 3,
	DLCP_FRAME_PULL = 4,
	DLCP_FRAME_BARRIER = 5,
	DLCP_FRAME_REDUCE = 6,	/* a reduced chunk on its way to the root */
	DLCP_FRAME_ABORT = 7,
	DLCP_FRAME_RS_DIRECT = 8,
	DLCP_FRAME_AG_DIRECT = 9,
	DLCP_FRAME_QMAX = 8,	/* a rank's max |x|, header only */
	DLCP_FRAME_QRS = 9,
	DLCP_FRAME_QAG = 10,
	DLCP_FRAME_QPUSH = 11,
	DLCP_FRAME_QPULL = 12,
	DLCP_FRAME_GATHER = 13,	/* parts (part.c): step is the piece */
	DLCP_FRAME_SCATTER = 14,
	DLCP_FRAME_ALLTOALL = 15,
};

/*
 * The fields every chunk header has, whatever its layout, in two groups
 * that each layout embeds whole (on 4- and 8-byte boundaries).
 */
struct dlcp_frame_ids {
	uint32_t tag;
	uint32_t iteration;
	uint32_t step;
	uint32_t chunk;
	uint32_t world;
	uint32_t base_count;
};

struct dlcp_frame_sizes {
	uint64_t nelem;		/* elements of the caller's tensor */
	uint64_t chunk_off;	/* in the vector the algorithm cuts */
	uint64_t chunk_len;
	uint32_t nruns;
	uint32_t hdr_len;	/* header + runs */
};

struct dlcp_frame_hdr {
	uint8_t kind;
	uint8_t width;		/* bits of an element on the wire */
	struct dlcp_frame_ids ids;
	struct dlcp_frame_sizes sizes;
};

struct dlcp_frame_format {
	size_t hdr_size;
	/* the kinds of the algorithms' messages */
	uint8_t kind_rs, kind_ag, kind_push, kind_pull;
	/* bits on the wire of each of the @len elements at @data */
	int (*width)(const struct dlcp_coll *c, const void *data, size_t len);
	/* the dtype of the message, for DLCP: whole elements in a packet */
	uint8_t (*msg_dtype)(const struct dlcp_coll *c, int width);
	/* write @f and the collective's parameters at @wire (zeroed) */
	void (*encode)(const struct dlcp_coll *c, const struct dlcp_frame_hdr *f,
		       void *wire);
	/* read the header at @wire into @f: 0, or -EPROTO */
	int (*decode)(const struct dlcp_coll *c, const void *wire,
		      struct dlcp_frame_hdr *f);
	/* the parameters of the sender's collective against @c's: 0,
	 * -EINVAL (another setup) or -EPROTO */
	int (*match)(const struct dlcp_coll *c, const void *wire,
		     const struct dlcp_frame_hdr *f);
	/* NULL: the elements travel as they are (width 8 * c->esz) */
	void (*pack)(const void *data, size_t len, int width, void *out);
	void (*unpack)(const void *in, size_t len, int width, void *out);
};

extern const struct dlcp_frame_format dlcp_frame_plain;
extern const struct dlcp_frame_format dlcp_frame_quant;

/* A chunk received: its header and its elements (c->esz bytes each, a
 * lost one reads 0), until dlcp_frame_release(). */
struct dlcp_frame_in {
	struct dlcp_group_msg *msg;
	const void *hdr;
	const void *data;
	void *unpacked;		/* data, where the format packs elements */
};

/*
 * Send chunk @chunk ([@off, @off + @len) of c's vector, elements at @data)
 * to rank @dst as message (@kind, @step), loss budget @budget. @cnt (NULL:
 * all @base) gives each element's count; elements whose count differs
 * from @base are described by runs. @len 0: a header alone, critical.
 */
int dlcp_frame_send(struct dlcp_coll *c, int dst, int kind, uint32_t step,
		    uint32_t chunk, const void *data, size_t off, size_t len,
		    const uint32_t *cnt, uint32_t base, uint32_t budget);
/*
 * Receive the message (@src, @kind, @step) and check it against what this
 * rank expects of chunk @chunk at [@off, @off + @len): -EPROTO, -EMSGSIZE
 * (another tensor size), -EINVAL (another dtype, reduction, world or
 * quantizer), -EIO (a critical range lost). On success @in holds it and
 * @in_cnt[0..len) each element's count (0 if lost).
 */
int dlcp_frame_recv(struct dlcp_coll *c, int src, int kind, uint32_t step,
		    uint32_t chunk, size_t off, size_t len,
		    struct dlcp_frame_in *in, uint32_t *in_cnt);
void dlcp_frame_release(struct dlcp_frame_in *in);

/* Tell every other rank that the collective (@tag, @iteration) of @n
 * elements failed with @error. */
void dlcp_frame_send_abort(struct dlcp_group *g, uint32_t tag,
			   uint32_t iteration, size_t n, int error);

/* The scale (a rank's max |x| in a DLCP_FRAME_QMAX) of a quantized
 * chunk. */
float dlcp_frame_quant_scale(const struct dlcp_frame_in *in);

#pragma GCC visibility pop

#endif /* DLCP_FRAME_H */
