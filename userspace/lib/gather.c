// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp gather: every rank sends its part straight to the root, which
 * takes them in rank order (parts that arrive ahead of their turn wait in
 * the group's stash). Exact unless the caller gives a loss budget.
 */
#include <errno.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

int dlcp_gather(struct dlcp_group *g, const void *send, void *recv, size_t n,
		int dtype, int root, const struct dlcp_coll_opts *opts)
{
	struct dlcp_coll c;
	int err, j;
	char *out = recv;

	err = dlcp_coll_init_rooted(&c, g, dtype, root, n, send, recv, opts);
	if (err)
		return err;
	if (g->rank != root) {
		err = dlcp_part_send(&c, root, DLCP_FRAME_GATHER,
				     (uint32_t)g->rank, send, n);
		return err ? dlcp_coll_fail(&c, err) : 0;
	}
	if (n && out + (size_t)root * n * c.esz != send)
		memmove(out + (size_t)root * n * c.esz, send, n * c.esz);
	for (j = 1; j < g->world && !err; j++) {
		int src = (root + j) % g->world;

		err = dlcp_part_recv(&c, src, DLCP_FRAME_GATHER, (uint32_t)src,
				     n ? out + (size_t)src * n * c.esz : NULL, n);
	}
	return err ? dlcp_coll_fail(&c, err) : 0;
}
