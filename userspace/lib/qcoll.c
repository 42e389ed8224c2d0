// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp quantized (homomorphic) collectives: ring reduce-scatter /
 * all-gather / all-reduce and parameter server on integers (see libdlcp.h).
 *
 * 1. Every rank rotates its tensor (optional randomized Hadamard, seed
 *    shared: derived from the caller's seed, tag and iteration, and checked
 *    through the exchange), then sends its max |x| to every other rank
 *    (DLCP_FRAME_QMAX, header only, critical); the max of all is the shared
 *    scale.
 * 2. Every rank quantizes with stochastic rounding to b bits (values in
 *    [-L, L]); the ring (allreduce_ring.c) or the server (ps.c) adds the
 *    integers of arriving messages to its own, in int32 accumulators, with
 *    per-element counts as for FP32; the messages travel in the quantized
 *    frame format (frame_quant.c), each at the narrowest width holding its
 *    values.
 * 3. The all-gather / pull carries the integer sums and their counts; every
 *    rank decompresses once (sum * scale / L, averaged over the count) and
 *    undoes the rotation.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"
#include "qcoll.h"

struct dlcp_qstate {
	int valid;
	size_t n, m;
	int bits, flags, reduce, world, rank;
	uint32_t tag, seed;
	uint64_t rseed;
	float scale;
	int32_t *own;		/* m: this rank's quantized contribution */
	int32_t *sum;		/* chunk rank: integer sums */
	uint32_t *cnt;		/* and their counts */
	size_t off, len;
};

int dlcp_qstate_alloc(struct dlcp_qstate **qs)
{
	if (!qs)
		return -EINVAL;
	*qs = calloc(1, sizeof(**qs));
	return *qs ? 0 : -ENOMEM;
}

static void qstate_reset(struct dlcp_qstate *qs)
{
	free(qs->own);
	free(qs->sum);
	free(qs->cnt);
	memset(qs, 0, sizeof(*qs));
}

void dlcp_qstate_free(struct dlcp_qstate *qs)
{
	if (!qs)
		return;
	qstate_reset(qs);
	free(qs);
}

static int qinit(struct dlcp_qcoll *q, struct dlcp_group *g, size_t n,
		 const struct dlcp_coll_opts *o, int bits, int flags,
		 uint32_t seed)
{
	size_t m;

	memset(q, 0, sizeof(*q));
	if (!dlcp_quant_levels(bits) || dlcp_coll_check(g, o))
		return -EINVAL;
	if (n > UINT32_MAX / 8)
		return -EMSGSIZE;
	m = (flags & DLCP_QCOLL_HADAMARD) ? dlcp_hadamard_len(n) : n;
	dlcp_coll_setup(&q->c, g, o, &dlcp_frame_quant, n, m, DLCP_DTYPE_INT32);
	q->bits = bits;
	q->flags = flags;
	q->levels = dlcp_quant_levels(bits);
	if (flags & DLCP_QCOLL_FIT) {
		q->levels /= g->world;
		if (q->levels < 1)
			q->levels = 1;
	}
	q->seed = seed;
	/* 16-bit elements stay whole in a packet only if segments are even */
	q->wide16 = !(dlcp_ep_segment_size(g->ep) & 1);
	return 0;
}

static int qflags(const struct dlcp_quant_opts *q)
{
	return (q->hadamard ? DLCP_QCOLL_HADAMARD : 0) |
	       (q->fit ? DLCP_QCOLL_FIT : 0);
}

/* Every rank tells every other its max: q->scale becomes the max of all. */
static int scale_exchange(struct dlcp_qcoll *q, float mine)
{
	struct dlcp_group *g = q->c.g;
	int i, err;
	float mx = mine;

	q->scale = mine;
	for (i = 0; i < g->world; i++) {
		if (i == g->rank)
			continue;
		err = dlcp_frame_send(&q->c, i, DLCP_FRAME_QMAX, 0, 0, NULL, 0, 0,
				      NULL, 0, 0);
		if (err)
			return err;
	}
	for (i = 0; i < g->world; i++) {
		struct dlcp_frame_in in;
		float p;

		if (i == g->rank)
			continue;
		err = dlcp_frame_recv(&q->c, i, DLCP_FRAME_QMAX, 0, 0, 0, 0, &in,
				      NULL);
		if (err)
			return err;
		p = dlcp_frame_quant_scale(&in);
		dlcp_frame_release(&in);
		if (p > mx || p != p)
			mx = p;
	}
	if (!isfinite(mx))
		return -ERANGE;		/* every rank sees the same */
	q->scale = mx > 0 ? mx : 1.0f;
	return 0;
}

static uint64_t rot_seed(const struct dlcp_qcoll *q)
{
	return dlcp_quant_seed(q->seed, -1, q->c.o->tag, q->c.o->iteration);
}

/* Rotate (optionally) and quantize @src (n floats; NULL: zeros). */
static int prepare(struct dlcp_qcoll *q, const float *src, int32_t **own,
		   uint64_t rseed)
{
	const struct dlcp_coll *c = &q->c;
	float *x, mx = 0;
	size_t i;
	int err;

	x = calloc(c->m ? c->m : 1, sizeof(*x));
	*own = malloc((c->m ? c->m : 1) * sizeof(**own));
	if (!x || !*own) {
		free(x);
		return -ENOMEM;
	}
	if (src)
		memcpy(x, src, c->n * sizeof(*x));
	if (q->flags & DLCP_QCOLL_HADAMARD)
		dlcp_hadamard(x, c->n, rseed, 0);
	for (i = 0; i < c->m; i++) {
		float a = fabsf(x[i]);

		if (a > mx || a != a)
			mx = a;
	}
	err = scale_exchange(q, mx);
	if (!err)
		err = dlcp_quantize(x, *own, c->m, q->scale, q->levels,
				    dlcp_quant_seed(q->seed, c->g->rank,
						    c->o->tag, c->o->iteration));
	free(x);
	return err;
}

/*
 * Fill the elements nobody's value reached (@cnt 0) with this rank's own,
 * decompress, undo the rotation and write @out (n floats).
 */
static int finish(struct dlcp_qcoll *q, int32_t *sum, uint32_t *cnt,
		  const int32_t *own, float *out, uint64_t rseed)
{
	const struct dlcp_coll *c = &q->c;
	unsigned int N = (unsigned int)c->g->world;
	float *y;
	size_t i;
	long k;

	for (i = 0; i < c->m; i++) {
		if (cnt[i])
			continue;
		if (c->st && i < c->n)
			c->st->elems_fallback++;
		if (c->reduce == DLCP_REDUCE_MEAN_ZEROFILL) {
			sum[i] = own[i] * (int32_t)N;	/* keeps own value */
			cnt[i] = N;
		} else {
			sum[i] = own[i];
			cnt[i] = 1;
		}
	}
	y = malloc((c->m ? c->m : 1) * sizeof(*y));
	if (!y)
		return -ENOMEM;
	k = dlcp_dequantize(sum, cnt, y, c->m, q->scale, q->levels, c->reduce,
			    N);
	if (k >= 0 && (q->flags & DLCP_QCOLL_HADAMARD))
		dlcp_hadamard(y, c->n, rseed, 1);
	if (k >= 0)
		memcpy(out, y, c->n * sizeof(*y));
	free(y);
	return k < 0 ? (int)k : 0;
}

static int rs_q(struct dlcp_qcoll *q, float *buf, struct dlcp_qstate *qs)
{
	struct dlcp_coll *c = &q->c;
	int N = c->g->world, r = c->g->rank, err;
	uint32_t *tcnt = NULL;
	int32_t *own = NULL, *tmp = NULL;
	uint64_t rseed = rot_seed(q);
	size_t off, len, i;

	qstate_reset(qs);
	err = prepare(q, buf, &own, rseed);
	if (err)
		goto out;
	dlcp_chunk_range(c->m, (unsigned int)N, 0, &off, &len);
	tcnt = malloc((len ? len : 1) * sizeof(*tcnt));
	tmp = malloc((len ? len : 1) * sizeof(*tmp));
	if (!tcnt || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	err = dlcp_allreduce_ring_rs(c, own, tmp, tcnt);
	if (err)
		goto out;
	dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)r, &off, &len);
	qs->valid = 1;
	qs->n = c->n;
	qs->m = c->m;
	qs->bits = q->bits;
	qs->flags = q->flags;
	qs->reduce = c->reduce;
	qs->world = N;
	qs->rank = r;
	qs->tag = c->o->tag;
	qs->seed = q->seed;
	qs->rseed = rseed;
	qs->scale = q->scale;
	qs->own = own;
	qs->sum = tmp;
	qs->cnt = tcnt;
	qs->off = off;
	qs->len = len;
	own = NULL;
	tmp = NULL;
	tcnt = NULL;
	if (!(q->flags & DLCP_QCOLL_HADAMARD)) {	/* chunk r of @buf: the result */
		float *y = malloc((len ? len : 1) * sizeof(*y));
		uint32_t *cc = malloc((len ? len : 1) * sizeof(*cc));

		if (!y || !cc) {
			free(y);
			free(cc);
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < len; i++)
			cc[i] = qs->cnt[i] ? qs->cnt[i] : 1;	/* own is there */
		dlcp_dequantize(qs->sum, cc, y, len, q->scale, q->levels,
				c->reduce, (unsigned int)N);
		memcpy(buf + off, y, len * sizeof(*y));
		free(y);
		free(cc);
	}
out:
	free(own);
	free(tmp);
	free(tcnt);
	return err;
}

/* All-gather merge: the sums and counts of a chunk as they came (a lost
 * element: sum 0, count 0, for finish()). */
static void ag_merge_q(struct dlcp_coll *c, void *vec, uint32_t *cnt,
		       size_t off, size_t len, const void *data,
		       const uint32_t *in_cnt)
{
	memcpy((int32_t *)vec + off, data, len * c->esz);
	memcpy(cnt + off, in_cnt, len * sizeof(*cnt));
}

static int ag_q(struct dlcp_qcoll *q, float *buf, struct dlcp_qstate *qs)
{
	size_t m = q->c.m;
	uint32_t *C;
	int32_t *S;
	int err;

	S = calloc(m ? m : 1, sizeof(*S));
	C = calloc(m ? m : 1, sizeof(*C));
	if (!S || !C) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(S + qs->off, qs->sum, qs->len * sizeof(*S));
	memcpy(C + qs->off, qs->cnt, qs->len * sizeof(*C));
	err = dlcp_allreduce_ring_ag(&q->c, S, C, (uint32_t)qs->world,
				     ag_merge_q);
	if (!err)
		err = finish(q, S, C, qs->own, buf, qs->rseed);
out:
	free(S);
	free(C);
	return err;
}

int dlcp_reduce_scatter_q(struct dlcp_group *g, float *buf, size_t n,
			  const struct dlcp_coll_opts *opts,
			  const struct dlcp_quant_opts *q,
			  struct dlcp_qstate *qs)
{
	struct dlcp_qcoll qc;
	int err;

	if (!q || !qs)
		return -EINVAL;
	err = qinit(&qc, g, n, opts, q->bits, qflags(q), q->seed);
	if (err)
		return err;
	if (n && !buf)
		return -EINVAL;
	err = rs_q(&qc, buf, qs);
	return err ? dlcp_coll_fail(&qc.c, err) : 0;
}

int dlcp_all_gather_q(struct dlcp_group *g, float *buf, size_t n,
		      const struct dlcp_coll_opts *opts, struct dlcp_qstate *qs)
{
	struct dlcp_qcoll qc;
	int err;

	if (!qs || !qs->valid || qs->n != n || !g || !opts || qs->tag != opts->tag ||
	    qs->world != dlcp_group_world(g) || qs->rank != dlcp_group_rank(g))
		return -EINVAL;
	err = qinit(&qc, g, n, opts, qs->bits, qs->flags, qs->seed);
	if (err)
		return err;
	if (n && !buf)
		return -EINVAL;
	qc.c.reduce = qs->reduce;
	qc.scale = qs->scale;
	err = ag_q(&qc, buf, qs);
	return err ? dlcp_coll_fail(&qc.c, err) : 0;
}

int dlcp_allreduce_q(struct dlcp_group *g, float *buf, size_t n,
		     const struct dlcp_coll_opts *opts,
		     const struct dlcp_quant_opts *q)
{
	struct dlcp_coll_stats st1, st2;
	struct dlcp_coll_opts o;
	struct dlcp_qstate qs = { 0 };
	int err;

	if (!opts)
		return -EINVAL;
	o = *opts;
	o.stats = opts->stats ? &st1 : NULL;
	err = dlcp_reduce_scatter_q(g, buf, n, &o, q, &qs);
	if (!err) {
		o.stats = opts->stats ? &st2 : NULL;
		err = dlcp_all_gather_q(g, buf, n, &o, &qs);
	}
	qstate_reset(&qs);
	if (opts->stats && !err)
		dlcp_coll_stats_sum(opts->stats, &st1, &st2);
	return err;
}

/*
 * The server sends the integer sums with their counts (base: every
 * contributor's), and every rank decompresses them itself.
 */
int dlcp_ps_push_pull_q(struct dlcp_group *g, const float *send, float *recv,
			size_t n, const struct dlcp_coll_opts *opts,
			const struct dlcp_quant_opts *q)
{
	int32_t *own = NULL, *acc = NULL;
	uint32_t *cnt = NULL;
	int contributors, err;
	struct dlcp_qcoll qc;
	struct dlcp_coll *c = &qc.c;
	uint64_t rseed;
	size_t j;

	if (!q)
		return -EINVAL;
	err = qinit(&qc, g, n, opts, q->bits, qflags(q), q->seed);
	if (err)
		return err;
	err = dlcp_ps_setup(c, send, recv, &contributors);
	if (err)
		return err;
	if (g->rank == opts->server && opts->dedicated_server)
		send = NULL;
	rseed = rot_seed(&qc);
	err = prepare(&qc, send, &own, rseed);
	if (err)
		goto out;
	acc = calloc(c->m ? c->m : 1, sizeof(*acc));
	cnt = calloc(c->m ? c->m : 1, sizeof(*cnt));
	if (!acc || !cnt) {
		err = -ENOMEM;
		goto out;
	}
	if (g->rank != opts->server) {
		struct dlcp_frame_in in;

		err = dlcp_ps_client(c, own, &in, cnt);
		if (err)
			goto out;
		memcpy(acc, in.data, c->m * sizeof(*acc));
		dlcp_frame_release(&in);
		err = finish(&qc, acc, cnt, own, recv, rseed);
		goto out;
	}
	/* the server: integer sums, counted */
	if (!opts->dedicated_server) {
		memcpy(acc, own, c->m * sizeof(*acc));
		for (j = 0; j < c->m; j++)
			cnt[j] = 1;
	}
	err = dlcp_ps_gather(c, acc, cnt);
	if (!err)
		err = dlcp_ps_scatter(c, acc, cnt, (uint32_t)contributors);
	if (!err && !opts->dedicated_server)
		err = finish(&qc, acc, cnt, own, recv, rseed);
out:
	free(own);
	free(acc);
	free(cnt);
	return err ? dlcp_coll_fail(c, err) : 0;
}
