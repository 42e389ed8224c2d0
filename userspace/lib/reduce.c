// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp reduce to a root: the reduce-scatter of the caller's algorithm
 * (ring or direct), then every rank sends its reduced chunk straight to the
 * root. Each rank's link carries what an all-reduce's first half and 1/N
 * of its second half do, and the root receives N - 1 chunks of 1/N of the
 * tensor, not N - 1 whole tensors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

/* The reduced chunk of this rank, finalized, into @acc (chunk 0's size). */
static int reduce_own_chunk(struct dlcp_coll *c, const void *buf, void *acc)
{
	int N = c->g->world;
	uint32_t *cnt;
	size_t off, len;
	long k;
	int err;

	dlcp_chunk_range(c->m, (unsigned int)N, 0, &off, &len);
	cnt = malloc((len ? len : 1) * sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	if (c->o->algo == DLCP_ALGO_DIRECT)
		err = dlcp_allreduce_direct_rs(c, buf, acc, cnt);
	else
		err = dlcp_allreduce_ring_rs(c, buf, acc, cnt);
	if (!err) {
		dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)c->g->rank,
				 &off, &len);
		k = dlcp_reduce_finalize(c->dtype, acc, cnt, len, c->reduce,
					 (unsigned int)N, NULL);
		err = k < 0 ? (int)k : 0;
	}
	free(cnt);
	return err;
}

/* The root: its own chunk, then every other rank's, into @buf. */
static int reduce_collect(struct dlcp_coll *c, char *buf, const void *acc)
{
	int N = c->g->world, r = c->g->rank, j, err = 0;
	uint32_t *have, *in_cnt;
	size_t off, len;

	dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)r, &off, &len);
	memcpy(buf + off * c->esz, acc, len * c->esz);
	dlcp_chunk_range(c->m, (unsigned int)N, 0, &off, &len);
	have = malloc((c->n ? c->n : 1) * sizeof(*have));
	in_cnt = malloc((len ? len : 1) * sizeof(*in_cnt));
	if (!have || !in_cnt) {
		err = -ENOMEM;
		goto out;
	}
	c->scale_fallback = c->reduce == DLCP_REDUCE_SUM;
	for (j = 1; j < N && !err; j++) {
		int src = (r + j) % N;

		dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)src, &off,
				 &len);
		err = dlcp_coll_recv_merge(c, src, DLCP_FRAME_REDUCE, 0,
					   (uint32_t)src, off, len, buf, have,
					   in_cnt, dlcp_coll_merge_result);
	}
out:
	free(have);
	free(in_cnt);
	return err;
}

int dlcp_reduce(struct dlcp_group *g, void *buf, size_t n, int dtype,
		int root, const struct dlcp_coll_opts *opts)
{
	struct dlcp_coll c;
	size_t off, len;
	void *acc;
	int err = dlcp_coll_init(&c, g, n, dtype, opts);

	if (err)
		return err;
	if ((n && !buf) || root < 0 || root >= g->world)
		return -EINVAL;
	if (g->world == 1)	/* one contribution: every mode gives it back */
		return 0;
	dlcp_chunk_range(n, (unsigned int)g->world, 0, &off, &len);
	acc = malloc((len ? len : 1) * c.esz);
	if (!acc)
		return -ENOMEM;
	err = reduce_own_chunk(&c, buf, acc);
	if (!err && g->rank == root) {
		err = reduce_collect(&c, buf, acc);
	} else if (!err) {
		dlcp_chunk_range(n, (unsigned int)g->world,
				 (unsigned int)g->rank, &off, &len);
		err = dlcp_frame_send(&c, root, DLCP_FRAME_REDUCE, 0,
				      (uint32_t)g->rank, acc, off, len, NULL, 1,
				      opts->budget2_ppm);
	}
	free(acc);
	return err ? dlcp_coll_fail(&c, err) : 0;
}
