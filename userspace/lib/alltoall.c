// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp all-to-all, equal or uneven parts. Every rank has a part for
 * every other, so a plain "send everything, then receive" would have all
 * N - 1 peers converge on each receiver at once (incast). Instead the
 * parts follow a shifted schedule: at step k (1 <= k < N) rank r sends to
 * rank r + k and receives from rank r - k (mod N), so each step pairs every
 * receiver with one sender; a rank sends step k + 1 before it waits for
 * step k (A2A_WINDOW steps in flight), which keeps the link busy without
 * letting a fast rank run ahead by more than that.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

/* steps sent and not yet received */
#define A2A_WINDOW	2

/*
 * @displs, or where the parts of @counts start packed in rank order when
 * @displs is NULL, into @out; checks that a buffer is there for any
 * element and that every part's bytes can be addressed. 0, -EINVAL.
 */
static int a2a_layout(const size_t *counts, const size_t *displs,
		      const void *buf, int world, size_t esz, size_t *out)
{
	size_t pos = 0;
	int p;

	if (!counts)
		return -EINVAL;
	for (p = 0; p < world; p++) {
		size_t d = displs ? displs[p] : pos;

		if (counts[p] && !buf)
			return -EINVAL;
		if (d > SIZE_MAX / esz || counts[p] > SIZE_MAX / esz - d)
			return -EINVAL;
		out[p] = d;
		pos = d + counts[p];
	}
	return 0;
}

/* The schedule of the file's comment, on checked layouts. */
static int a2a_run(struct dlcp_coll *c, const char *send,
		   const size_t *scounts, const size_t *soff, char *recv,
		   const size_t *rcounts, const size_t *roff)
{
	int N = c->g->world, r = c->g->rank, k, err = 0;

	if (scounts[r] != rcounts[r])
		return -EMSGSIZE;
	if (scounts[r])
		memmove(recv + roff[r] * c->esz, send + soff[r] * c->esz,
			scounts[r] * c->esz);
	for (k = 1; k < N + A2A_WINDOW - 1 && !err; k++) {
		int j = k - (A2A_WINDOW - 1);

		if (k < N) {
			int dst = (r + k) % N;

			err = dlcp_part_send(c, dst, DLCP_FRAME_ALLTOALL,
					     (uint32_t)dst, scounts[dst] ?
					     send + soff[dst] * c->esz : NULL,
					     scounts[dst]);
		}
		if (!err && j >= 1) {
			int src = (r - j + N) % N;

			err = dlcp_part_recv(c, src, DLCP_FRAME_ALLTOALL,
					     (uint32_t)r, rcounts[src] ?
					     recv + roff[src] * c->esz : NULL,
					     rcounts[src]);
		}
	}
	return err;
}

int dlcp_all_to_allv(struct dlcp_group *g, const void *send,
		     const size_t *scounts, const size_t *sdispls, void *recv,
		     const size_t *rcounts, const size_t *rdispls, int dtype,
		     const struct dlcp_coll_opts *opts)
{
	struct dlcp_coll c;
	size_t *off;
	int err = dlcp_coll_init_move(&c, g, dtype, opts);

	if (err)
		return err;
	off = malloc(2 * (size_t)g->world * sizeof(*off));
	if (!off)
		return -ENOMEM;
	err = a2a_layout(scounts, sdispls, send, g->world, c.esz, off);
	if (!err)
		err = a2a_layout(rcounts, rdispls, recv, g->world, c.esz,
				 off + g->world);
	if (err) {
		free(off);
		return err;
	}
	err = a2a_run(&c, send, scounts, off, recv, rcounts, off + g->world);
	free(off);
	return err ? dlcp_coll_fail(&c, err) : 0;
}

int dlcp_all_to_all(struct dlcp_group *g, const void *send, void *recv,
		    size_t n, int dtype, const struct dlcp_coll_opts *opts)
{
	size_t *counts;
	int p, err;

	if (!g)
		return -EINVAL;
	counts = malloc((size_t)g->world * sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	for (p = 0; p < g->world; p++)
		counts[p] = n;
	err = dlcp_all_to_allv(g, send, counts, NULL, recv, counts, NULL,
			       dtype, opts);
	free(counts);
	return err;
}
