// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp ring reduce-scatter and all-gather, the two halves of a ring
 * all-reduce: N - 1 steps, in each of which every rank sends one chunk to
 * the next rank and receives one from the previous. Partial sums travel
 * with their per-element counts, so every rank knows how many
 * contributions reached each element despite losses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

/*
 * At step s rank r sends the partial sum of chunk r - s - 1 (its own
 * contribution alone at step 0) and receives that of chunk r - s - 2, to
 * which it adds its own; after N - 1 steps that is chunk r, complete.
 */
int dlcp_allreduce_ring_rs(struct dlcp_coll *c, const void *vec, void *acc,
			   uint32_t *cnt)
{
	int N = c->g->world, r = c->g->rank, s, err = 0;
	int right = (r + 1) % N, left = (r + N - 1) % N;
	const char *own = vec;
	uint32_t *in_cnt;
	size_t off, len, i;

	dlcp_chunk_range(c->m, (unsigned int)N, 0, &off, &len);
	in_cnt = malloc((len ? len : 1) * sizeof(*in_cnt));
	if (!in_cnt)
		return -ENOMEM;
	if (N == 1) {
		memcpy(acc, own, len * c->esz);
		for (i = 0; i < len; i++)
			cnt[i] = 1;
	}
	for (s = 0; s < N - 1; s++) {
		unsigned int sc = (unsigned int)((r - s - 1 + 2 * N) % N);
		unsigned int rc = (unsigned int)((r - s - 2 + 2 * N) % N);

		dlcp_chunk_range(c->m, (unsigned int)N, sc, &off, &len);
		if (s == 0)
			err = dlcp_frame_send(c, right, c->fmt->kind_rs, 0, sc,
					      own + off * c->esz, off, len, NULL,
					      1, c->o->budget_ppm);
		else
			err = dlcp_frame_send(c, right, c->fmt->kind_rs,
					      (uint32_t)s, sc, acc, off, len,
					      cnt, (uint32_t)s + 1,
					      c->o->budget_ppm);
		if (err)
			break;
		dlcp_chunk_range(c->m, (unsigned int)N, rc, &off, &len);
		memcpy(acc, own + off * c->esz, len * c->esz);
		for (i = 0; i < len; i++)
			cnt[i] = 1;
		err = dlcp_coll_recv_add(c, left, c->fmt->kind_rs, (uint32_t)s,
					 rc, off, len, acc, cnt, in_cnt);
		if (err)
			break;
	}
	free(in_cnt);
	return err;
}

/*
 * At step s rank r passes on chunk r - s (its own at step 0) and receives
 * chunk r - s - 1.
 */
int dlcp_allreduce_ring_ag(struct dlcp_coll *c, void *vec, uint32_t *cnt,
			   uint32_t base, dlcp_coll_merge_fn *merge)
{
	int N = c->g->world, r = c->g->rank, s, err = 0;
	int right = (r + 1) % N, left = (r + N - 1) % N;
	char *buf = vec;
	uint32_t *in_cnt = NULL;
	size_t off, len;

	if (N > 1) {
		dlcp_chunk_range(c->m, (unsigned int)N, 0, &off, &len);
		in_cnt = malloc((len ? len : 1) * sizeof(*in_cnt));
		if (!in_cnt)
			return -ENOMEM;
	}
	for (s = 0; s < N - 1; s++) {
		unsigned int sc = (unsigned int)((r - s + N) % N);
		unsigned int rc = (unsigned int)((r - s - 1 + 2 * N) % N);

		dlcp_chunk_range(c->m, (unsigned int)N, sc, &off, &len);
		err = dlcp_frame_send(c, right, c->fmt->kind_ag, (uint32_t)s, sc,
				      buf + off * c->esz, off, len, cnt + off,
				      base, c->o->budget2_ppm);
		if (err)
			break;
		dlcp_chunk_range(c->m, (unsigned int)N, rc, &off, &len);
		err = dlcp_coll_recv_merge(c, left, c->fmt->kind_ag, (uint32_t)s,
					   rc, off, len, buf, cnt, in_cnt,
					   merge);
		if (err)
			break;
	}
	free(in_cnt);
	return err;
}
