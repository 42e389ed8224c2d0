// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp barrier: every rank sends rank 0 an exact, empty message, and
 * rank 0 answers each once it has them all.
 */
#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

int dlcp_barrier(struct dlcp_group *g, uint32_t iteration, int timeout_ms)
{
	struct dlcp_coll_opts o = { 0 };
	struct dlcp_coll c;
	struct dlcp_frame_in in;
	uint32_t dummy[1];
	int i, err;

	o.tag = 0xffff;
	o.iteration = iteration;
	o.timeout_ms = timeout_ms;
	err = dlcp_coll_init(&c, g, 0, DLCP_DTYPE_INT32, &o);
	if (err)
		return err;
	if (g->rank == 0) {
		for (i = 1; i < g->world && !err; i++) {
			err = dlcp_frame_recv(&c, i, DLCP_FRAME_BARRIER, 0, 0, 0,
					      0, &in, dummy);
			if (!err)
				dlcp_frame_release(&in);
		}
		for (i = 1; i < g->world && !err; i++)
			err = dlcp_frame_send(&c, i, DLCP_FRAME_BARRIER, 1, 0,
					      NULL, 0, 0, NULL, 1, 0);
	} else {
		err = dlcp_frame_send(&c, 0, DLCP_FRAME_BARRIER, 0, 0, NULL, 0,
				      0, NULL, 1, 0);
		if (!err)
			err = dlcp_frame_recv(&c, 0, DLCP_FRAME_BARRIER, 1, 0, 0,
					      0, &in, dummy);
		if (!err)
			dlcp_frame_release(&in);
	}
	return err;
}
