/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* libdlcp: the clock that every timeout and deadline is measured on. */
#ifndef DLCP_CLOCK_H
#define DLCP_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC in milliseconds. */
static inline long dlcp_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

#endif /* DLCP_CLOCK_H */
