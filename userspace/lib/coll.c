// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp collectives on FP32 / INT32 tensors, loss-aware (see libdlcp.h):
 * the state of a call, and reduce-scatter, all-gather and all-reduce on
 * top of the algorithm the caller chose (allreduce_ring.c,
 * allreduce_direct.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

int dlcp_coll_check(const struct dlcp_group *g, const struct dlcp_coll_opts *o)
{
	if (!g || !o || o->reduce < 0 || o->reduce >= __DLCP_REDUCE_MAX ||
	    o->budget_ppm > DLCP_PPM_MAX || o->budget2_ppm > DLCP_PPM_MAX ||
	    o->timeout_ms < 0)
		return -EINVAL;
	return 0;
}

void dlcp_coll_setup(struct dlcp_coll *c, struct dlcp_group *g,
		     const struct dlcp_coll_opts *o,
		     const struct dlcp_frame_format *fmt, size_t n, size_t m,
		     int dtype)
{
	c->g = g;
	c->o = o;
	c->st = o->stats;
	if (c->st)
		memset(c->st, 0, sizeof(*c->st));
	c->fmt = fmt;
	c->n = n;
	c->m = m;
	c->dtype = dtype;
	c->esz = 4;
	c->reduce = o->reduce;
	c->timeout_ms = o->timeout_ms ? o->timeout_ms : g->timeout_ms;
}

int dlcp_coll_init(struct dlcp_coll *c, struct dlcp_group *g, size_t n,
		   int dtype, const struct dlcp_coll_opts *o)
{
	memset(c, 0, sizeof(*c));
	if ((dtype != DLCP_DTYPE_FP32 && dtype != DLCP_DTYPE_INT32) ||
	    dlcp_coll_check(g, o) || o->algo < 0 || o->algo >= __DLCP_ALGO_MAX)
		return -EINVAL;
	dlcp_coll_setup(c, g, o, &dlcp_frame_plain, n, n, dtype);
	if (n > UINT32_MAX / 4)
		return -EMSGSIZE;
	return 0;
}

int dlcp_coll_init_move(struct dlcp_coll *c, struct dlcp_group *g, int dtype,
			const struct dlcp_coll_opts *o)
{
	size_t esz = dlcp_dtype_size(dtype);

	memset(c, 0, sizeof(*c));
	if (!esz || dlcp_coll_check(g, o))
		return -EINVAL;
	dlcp_coll_setup(c, g, o, &dlcp_frame_plain, 0, 0, dtype);
	c->esz = esz;
	c->reduce = 0;		/* no reduction: any mode matches */
	return 0;
}

int dlcp_coll_init_rooted(struct dlcp_coll *c, struct dlcp_group *g, int dtype,
			  int root, size_t n, const void *mine,
			  const void *all, const struct dlcp_coll_opts *o)
{
	int err = dlcp_coll_init_move(c, g, dtype, o);

	if (err)
		return err;
	if (root < 0 || root >= g->world || (n && !mine) ||
	    (n && g->rank == root && !all))
		return -EINVAL;
	return n > SIZE_MAX / c->esz / (size_t)g->world ? -EMSGSIZE : 0;
}

int dlcp_coll_fail(struct dlcp_coll *c, int err)
{
	/*
	 * ECONNREFUSED: a peer's socket is gone (its process died); the
	 * ranks that send nothing to it would wait for it until the timeout
	 */
	if (err == -EMSGSIZE || err == -EINVAL || err == -EPROTO ||
	    err == -EIO || err == -ECONNREFUSED)
		dlcp_frame_send_abort(c->g, c->o->tag, c->o->iteration, c->n,
				      err);
	return err;
}

int dlcp_coll_recv_add(struct dlcp_coll *c, int src, int kind, uint32_t step,
		       uint32_t chunk, size_t off, size_t len, void *acc,
		       uint32_t *cnt, uint32_t *in_cnt)
{
	struct dlcp_frame_in in;
	long k;
	int err;

	err = dlcp_frame_recv(c, src, kind, step, chunk, off, len, &in, in_cnt);
	if (err)
		return err;
	k = dlcp_reduce_accumulate(c->dtype, acc, cnt, in.data, in_cnt, len,
				   NULL, 0, 0);
	dlcp_frame_release(&in);
	return k < 0 ? (int)k : 0;
}

int dlcp_coll_recv_merge(struct dlcp_coll *c, int src, int kind,
			 uint32_t step, uint32_t chunk, size_t off, size_t len,
			 void *vec, uint32_t *cnt, uint32_t *in_cnt,
			 dlcp_coll_merge_fn *merge)
{
	struct dlcp_frame_in in;
	int err;

	err = dlcp_frame_recv(c, src, kind, step, chunk, off, len, &in, in_cnt);
	if (err)
		return err;
	merge(c, vec, cnt, off, len, in.data, in_cnt);
	dlcp_frame_release(&in);
	return 0;
}

void dlcp_coll_stats_sum(struct dlcp_coll_stats *t,
			 const struct dlcp_coll_stats *a,
			 const struct dlcp_coll_stats *b)
{
	t->msgs_sent = a->msgs_sent + b->msgs_sent;
	t->msgs_recv = a->msgs_recv + b->msgs_recv;
	t->bytes_sent = a->bytes_sent + b->bytes_sent;
	t->bytes_lost = a->bytes_lost + b->bytes_lost;
	t->elems_lost = a->elems_lost + b->elems_lost;
	t->elems_fallback = a->elems_fallback + b->elems_fallback;
}

/*
 * Reduce-scatter: only the finished chunk r is written into @buf, so the
 * other chunks keep this rank's own contribution (the all-gather's
 * fallback).
 */
static int rs_run(struct dlcp_coll *c, char *buf)
{
	int N = c->g->world;
	uint32_t *tcnt = NULL;
	char *tmp = NULL;
	size_t off, len;
	long k;
	int err;

	dlcp_chunk_range(c->m, (unsigned int)N, 0, &off, &len);
	tcnt = malloc((len ? len : 1) * sizeof(*tcnt));
	tmp = malloc((len ? len : 1) * c->esz);
	if (!tcnt || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	if (c->o->algo == DLCP_ALGO_DIRECT)
		err = dlcp_allreduce_direct_rs(c, buf, tmp, tcnt);
	else
		err = dlcp_allreduce_ring_rs(c, buf, tmp, tcnt);
	if (err || N == 1)	/* one contribution: every mode gives it back */
		goto out;
	dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)c->g->rank, &off,
			 &len);
	k = dlcp_reduce_finalize(c->dtype, tmp, tcnt, len, c->reduce,
				 (unsigned int)N, NULL);
	memcpy(buf + off * c->esz, tmp, len * c->esz);
	err = k < 0 ? (int)k : 0;
out:
	free(tcnt);
	free(tmp);
	return err;
}

void dlcp_coll_merge_result(struct dlcp_coll *c, void *vec, uint32_t *have,
			    size_t off, size_t len, const void *data,
			    const uint32_t *in_cnt)
{
	int N = c->g->world;
	char *buf = vec;
	size_t i;

	for (i = 0; i < len; i++) {
		char *dst = buf + (off + i) * c->esz;

		if (in_cnt[i]) {
			memcpy(dst, (const char *)data + i * c->esz, c->esz);
			have[off + i] = 1;
			continue;
		}
		have[off + i] = 0;
		if (c->st)
			c->st->elems_fallback++;
		if (c->scale_fallback) {
			if (c->dtype == DLCP_DTYPE_FP32)
				*(float *)dst *= (float)N;
			else
				*(int32_t *)dst *= N;
		}
	}
}

/* @have[i] is 1 where this rank's value of element i is authoritative. */
static int ag_run(struct dlcp_coll *c, char *buf, uint32_t *have)
{
	if (c->o->algo == DLCP_ALGO_DIRECT)
		return dlcp_allreduce_direct_ag(c, buf, have, 1,
						dlcp_coll_merge_result);
	return dlcp_allreduce_ring_ag(c, buf, have, 1, dlcp_coll_merge_result);
}

/* dlcp_coll_init(), and a buffer where there are elements. */
static int coll_begin(struct dlcp_coll *c, struct dlcp_group *g,
		      const void *buf, size_t n, int dtype,
		      const struct dlcp_coll_opts *o)
{
	int err = dlcp_coll_init(c, g, n, dtype, o);

	if (err)
		return err;
	return n && !buf ? -EINVAL : 0;
}

/* @n counts of 1, or NULL */
static uint32_t *ones(size_t n)
{
	uint32_t *v = malloc((n ? n : 1) * sizeof(*v));
	size_t i;

	for (i = 0; v && i < n; i++)
		v[i] = 1;
	return v;
}

int dlcp_reduce_scatter(struct dlcp_group *g, void *buf, size_t n, int dtype,
			const struct dlcp_coll_opts *opts)
{
	struct dlcp_coll c;
	int err = coll_begin(&c, g, buf, n, dtype, opts);

	if (err)
		return err;
	err = rs_run(&c, buf);
	return err ? dlcp_coll_fail(&c, err) : 0;
}

int dlcp_all_gather(struct dlcp_group *g, void *buf, size_t n, int dtype,
		    const struct dlcp_coll_opts *opts)
{
	struct dlcp_coll c;
	uint32_t *have;
	int err = coll_begin(&c, g, buf, n, dtype, opts);

	if (err)
		return err;
	have = ones(n);
	if (!have)
		return -ENOMEM;
	err = ag_run(&c, buf, have);
	free(have);
	return err ? dlcp_coll_fail(&c, err) : 0;
}

int dlcp_allreduce(struct dlcp_group *g, void *buf, size_t n, int dtype,
		   const struct dlcp_coll_opts *opts)
{
	struct dlcp_coll_stats st1, st2;
	struct dlcp_coll_opts o;
	struct dlcp_coll c;
	uint32_t *cnt;
	int err = coll_begin(&c, g, buf, n, dtype, opts);

	if (err)
		return err;
	o = *opts;
	o.stats = opts->stats ? &st1 : NULL;
	cnt = ones(n);
	if (!cnt)
		return -ENOMEM;
	dlcp_coll_init(&c, g, n, dtype, &o);
	err = rs_run(&c, buf);
	if (!err) {
		o.stats = opts->stats ? &st2 : NULL;
		dlcp_coll_init(&c, g, n, dtype, &o);
		c.scale_fallback = o.reduce == DLCP_REDUCE_SUM;
		err = ag_run(&c, buf, cnt);
	}
	free(cnt);
	if (opts->stats && !err)
		dlcp_coll_stats_sum(opts->stats, &st1, &st2);
	return err ? dlcp_coll_fail(&c, err) : 0;
}
