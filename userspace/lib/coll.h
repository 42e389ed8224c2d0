/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libdlcp collectives: the state of one collective call, shared by the
 * algorithms (allreduce_ring.c, allreduce_direct.c, ps.c, barrier.c,
 * reduce.c; gather.c, scatter.c and alltoall.c, which move parts with
 * part.c) and the frame codec (frame.c) that carries their chunks. The algorithms work
 * on a vector of c->m elements of c->dtype that add up with
 * dlcp_reduce_accumulate(): the caller's FP32/INT32 tensor itself
 * (coll.c, ps.c), or its quantized integers (qcoll.c), which travel in a
 * format of their own (c->fmt).
 */
#ifndef DLCP_COLL_H
#define DLCP_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "libdlcp.h"

#pragma GCC visibility push(hidden)

struct dlcp_frame_format;

struct dlcp_coll {
	struct dlcp_group *g;
	const struct dlcp_coll_opts *o;
	struct dlcp_coll_stats *st;	/* o->stats, zeroed; may be NULL */
	const struct dlcp_frame_format *fmt;
	size_t n;		/* elements of the caller's tensor */
	size_t m;		/* elements of the vector the algorithms cut */
	size_t esz;		/* bytes of one of them */
	int dtype;		/* theirs: FP32 or INT32 */
	int reduce;		/* enum dlcp_reduce */
	int timeout_ms;		/* of every wait */
	/* all-gather: an element that stays missing keeps this rank's own
	 * contribution, times N (an estimate of a sum) */
	int scale_fallback;
};

/*
 * All-gather: take the chunk [@off, @off + @len) that arrived as @data,
 * with counts @in_cnt (0: lost), into @vec and its counts @cnt.
 */
typedef void dlcp_coll_merge_fn(struct dlcp_coll *c, void *vec, uint32_t *cnt,
				size_t off, size_t len, const void *data,
				const uint32_t *in_cnt);

/* The options every collective checks: 0 or -EINVAL. */
int dlcp_coll_check(const struct dlcp_group *g, const struct dlcp_coll_opts *o);
/* Set @c up for a vector of @m elements of @dtype carried in @fmt, for a
 * tensor of @n elements; o->stats zeroed. */
void dlcp_coll_setup(struct dlcp_coll *c, struct dlcp_group *g,
		     const struct dlcp_coll_opts *o,
		     const struct dlcp_frame_format *fmt, size_t n, size_t m,
		     int dtype);
/* Check the arguments of a collective on @n elements of @dtype (FP32 or
 * INT32, plain format) and set @c up. 0, -EINVAL or -EMSGSIZE. */
int dlcp_coll_init(struct dlcp_coll *c, struct dlcp_group *g, size_t n,
		   int dtype, const struct dlcp_coll_opts *o);
/*
 * The same for a collective that moves elements of any @dtype (only its
 * size matters) without reducing them: 0 or -EINVAL. c->n is set per part
 * (part.c).
 */
int dlcp_coll_init_move(struct dlcp_coll *c, struct dlcp_group *g, int dtype,
			const struct dlcp_coll_opts *o);
/*
 * dlcp_coll_init_move() for a gather or scatter of @n elements per rank
 * with @root: this rank's part @mine and, at the root, the @all of every
 * rank must be there. 0, -EINVAL or -EMSGSIZE.
 */
int dlcp_coll_init_rooted(struct dlcp_coll *c, struct dlcp_group *g, int dtype,
			  int root, size_t n, const void *mine,
			  const void *all, const struct dlcp_coll_opts *o);
/* End a collective with @err: errors the other ranks cannot see for
 * themselves are sent to them (an abort), so they don't wait for a
 * timeout. Returns @err. */
int dlcp_coll_fail(struct dlcp_coll *c, int err);
/*
 * Receive chunk @chunk ([@off, @off + @len)) as message (@kind, @step)
 * from @src and add it into @acc, its contributions into @cnt. @in_cnt:
 * room for @len counts.
 */
int dlcp_coll_recv_add(struct dlcp_coll *c, int src, int kind, uint32_t step,
		       uint32_t chunk, size_t off, size_t len, void *acc,
		       uint32_t *cnt, uint32_t *in_cnt);
/* The same, taken into @vec and @cnt by @merge. */
int dlcp_coll_recv_merge(struct dlcp_coll *c, int src, int kind,
			 uint32_t step, uint32_t chunk, size_t off, size_t len,
			 void *vec, uint32_t *cnt, uint32_t *in_cnt,
			 dlcp_coll_merge_fn *merge);
/*
 * The merge of a result's chunk (all-gather, reduce): an element that
 * arrived is copied and marked 1 in @have, a lost one keeps @vec's value
 * (times N with c->scale_fallback) and is marked 0.
 */
dlcp_coll_merge_fn dlcp_coll_merge_result;
/* *@t = *@a + *@b */
void dlcp_coll_stats_sum(struct dlcp_coll_stats *t,
			 const struct dlcp_coll_stats *a,
			 const struct dlcp_coll_stats *b);

/*
 * Reduce-scatter of @vec (c->m elements): afterwards @acc and @cnt hold
 * the sums and the contributions counted of chunk rank (dlcp_chunk_range())
 * (N = 1: this rank's chunk, count 1); they must hold chunk 0, the
 * largest. @vec is only read.
 */
int dlcp_allreduce_ring_rs(struct dlcp_coll *c, const void *vec, void *acc,
			   uint32_t *cnt);
int dlcp_allreduce_direct_rs(struct dlcp_coll *c, const void *vec, void *acc,
			     uint32_t *cnt);
/*
 * All-gather: rank r sends chunk r of @vec with the counts @cnt (elements
 * whose count is not @base as runs); every chunk received goes through
 * @merge.
 */
int dlcp_allreduce_ring_ag(struct dlcp_coll *c, void *vec, uint32_t *cnt,
			   uint32_t base, dlcp_coll_merge_fn *merge);
int dlcp_allreduce_direct_ag(struct dlcp_coll *c, void *vec, uint32_t *cnt,
			     uint32_t base, dlcp_coll_merge_fn *merge);

/*
 * Parts (part.c): @len elements between two ranks, in messages (@kind,
 * step = piece index) of at most DLCP_PART_PIECE bytes each, at least one
 * (a header alone for an empty part, which the receiver checks too). The
 * loss budget is o->budget_ppm; an element lost keeps @data's previous
 * value on the receiver (counted in elems_fallback). A part of another
 * length on the two sides: -EMSGSIZE.
 */
#define DLCP_PART_PIECE		(1u << 20)
int dlcp_part_send(struct dlcp_coll *c, int dst, int kind, uint32_t chunk,
		   const void *data, size_t len);
int dlcp_part_recv(struct dlcp_coll *c, int src, int kind, uint32_t chunk,
		   void *data, size_t len);

/*
 * Parameter server steps (ps.c). Setup checks the server and the buffers
 * (-EINVAL) and counts the contributing ranks; a client pushes @vec and
 * receives the pull into @in and @in_cnt; the server adds every other
 * rank's push into @acc and @cnt (gather), then sends @acc with counts
 * @cnt to every other rank (scatter).
 */
struct dlcp_frame_in;
int dlcp_ps_setup(struct dlcp_coll *c, const void *send, const void *recv,
		  int *contributors);
int dlcp_ps_client(struct dlcp_coll *c, const void *vec,
		   struct dlcp_frame_in *in, uint32_t *in_cnt);
int dlcp_ps_gather(struct dlcp_coll *c, void *acc, uint32_t *cnt);
int dlcp_ps_scatter(struct dlcp_coll *c, const void *acc, const uint32_t *cnt,
		    uint32_t base);

#pragma GCC visibility pop

#endif /* DLCP_COLL_H */
