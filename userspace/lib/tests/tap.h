/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Tests: TAP on stdout, one line a check, the plan at the end.
 */
#ifndef DLCP_TEST_TAP_H
#define DLCP_TEST_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int ntest, nfail;

static inline void report(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void report(int ok, const char *fmt, ...)
{
	va_list ap;

	ntest++;
	if (!ok)
		nfail++;
	printf("%sok %d - ", ok ? "" : "not ", ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* The plan and a summary; the exit status. */
static inline int tap_done(void)
{
	printf("1..%d\n# %d passed, %d failed\n", ntest, ntest - nfail, nfail);
	return nfail ? 1 : 0;
}

#endif /* DLCP_TEST_TAP_H */
