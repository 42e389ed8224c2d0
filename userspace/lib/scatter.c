// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp scatter: the root sends each rank its part straight, one rank
 * after the other. Exact unless the caller gives a loss budget.
 */
#include <errno.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

int dlcp_scatter(struct dlcp_group *g, const void *send, void *recv, size_t n,
		 int dtype, int root, const struct dlcp_coll_opts *opts)
{
	struct dlcp_coll c;
	int err, j;
	const char *in = send;

	err = dlcp_coll_init_rooted(&c, g, dtype, root, n, recv, send, opts);
	if (err)
		return err;
	if (g->rank != root) {
		err = dlcp_part_recv(&c, root, DLCP_FRAME_SCATTER,
				     (uint32_t)g->rank, recv, n);
		return err ? dlcp_coll_fail(&c, err) : 0;
	}
	for (j = 1; j < g->world && !err; j++) {
		int dst = (root + j) % g->world;

		err = dlcp_part_send(&c, dst, DLCP_FRAME_SCATTER, (uint32_t)dst,
				     n ? in + (size_t)dst * n * c.esz : NULL, n);
	}
	if (!err && n && in + (size_t)root * n * c.esz != recv)
		memmove(recv, in + (size_t)root * n * c.esz, n * c.esz);
	return err ? dlcp_coll_fail(&c, err) : 0;
}
