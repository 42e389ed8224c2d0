/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libdlcp quantized collectives: the state of a call, shared by qcoll.c
 * and the format of its chunks (frame_quant.c).
 */
#ifndef DLCP_QCOLL_H
#define DLCP_QCOLL_H

#include <stdint.h>

#include "coll.h"

#pragma GCC visibility push(hidden)

/* dlcp_qcoll.flags, in every header */
#define DLCP_QCOLL_HADAMARD	1
#define DLCP_QCOLL_FIT		2

struct dlcp_qcoll {
	struct dlcp_coll c;	/* a vector of c.m INT32 */
	int bits;		/* of the quantizer */
	int levels;		/* L: values in [-L, L] */
	int flags;		/* DLCP_QCOLL_* */
	int wide16;		/* 16-bit elements stay whole in a packet */
	uint32_t seed;
	float scale;		/* shared by all ranks once exchanged */
};

static inline const struct dlcp_qcoll *dlcp_qcoll_of(const struct dlcp_coll *c)
{
	return (const struct dlcp_qcoll *)c;
}

#pragma GCC visibility pop

#endif /* DLCP_QCOLL_H */
