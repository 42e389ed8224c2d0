// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp direct reduce-scatter and all-gather: every rank sends chunk j
 * straight to rank j (reduce-scatter), or its own chunk straight to every
 * other rank (all-gather). The same bytes leave and enter each rank as in
 * the ring, but in one round instead of N - 1, and a lost segment delays
 * its own message, not every later step of the ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

int dlcp_allreduce_direct_rs(struct dlcp_coll *c, const void *vec, void *acc,
			     uint32_t *cnt)
{
	int N = c->g->world, r = c->g->rank, j, err = 0;
	const char *own = vec;
	uint32_t *in_cnt;
	size_t off, len, i;

	for (j = 1; j < N; j++) {
		int dst = (r + j) % N;

		dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)dst, &off,
				 &len);
		err = dlcp_frame_send(c, dst, DLCP_FRAME_RS_DIRECT, 0,
				      (uint32_t)dst, own + off * c->esz, off,
				      len, NULL, 1, c->o->budget_ppm);
		if (err)
			return err;
	}
	dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)r, &off, &len);
	in_cnt = malloc((len ? len : 1) * sizeof(*in_cnt));
	if (!in_cnt)
		return -ENOMEM;
	memcpy(acc, own + off * c->esz, len * c->esz);
	for (i = 0; i < len; i++)
		cnt[i] = 1;
	for (j = 1; j < N && !err; j++)
		err = dlcp_coll_recv_add(c, (r + N - j) % N,
					 DLCP_FRAME_RS_DIRECT, 0, (uint32_t)r,
					 off, len, acc, cnt, in_cnt);
	free(in_cnt);
	return err;
}

int dlcp_allreduce_direct_ag(struct dlcp_coll *c, void *vec, uint32_t *cnt,
			     uint32_t base, dlcp_coll_merge_fn *merge)
{
	int N = c->g->world, r = c->g->rank, j, err = 0;
	char *buf = vec;
	uint32_t *in_cnt;
	size_t off, len;

	if (N == 1)
		return 0;
	dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)r, &off, &len);
	for (j = 1; j < N; j++) {
		err = dlcp_frame_send(c, (r + j) % N, DLCP_FRAME_AG_DIRECT, 0,
				      (uint32_t)r, buf + off * c->esz, off, len,
				      cnt + off, base, c->o->budget2_ppm);
		if (err)
			return err;
	}
	dlcp_chunk_range(c->m, (unsigned int)N, 0, &off, &len);
	in_cnt = malloc((len ? len : 1) * sizeof(*in_cnt));
	if (!in_cnt)
		return -ENOMEM;
	for (j = 1; j < N && !err; j++) {
		int src = (r + N - j) % N;

		dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)src, &off,
				 &len);
		err = dlcp_coll_recv_merge(c, src, DLCP_FRAME_AG_DIRECT, 0,
					   (uint32_t)src, off, len, buf, cnt,
					   in_cnt, merge);
	}
	free(in_cnt);
	return err;
}
