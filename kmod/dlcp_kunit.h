/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KUnit API for DLCP's tests (dlcp_*_test.c, module dlcp_test.ko).
 *
 * On a kernel with CONFIG_KUNIT this is <kunit/test.h>, and KUnit runs the
 * suites when the module loads. Distribution kernels often lack it
 * (Debian's 6.1 does), so that the tests still run everywhere, the same
 * subset of the API is provided here: suites of cases, the EXPECT and
 * ASSERT checks the tests use, and a runner that prints KUnit's KTAP
 * output to the kernel log when the module loads. A test case may use
 * ASSERT only in its own body: where KUnit aborts the case, the macro
 * returns from it (checkpatch's MACRO_WITH_FLOW_CONTROL is expected).
 */
#ifndef _DLCP_KUNIT_H
#define _DLCP_KUNIT_H

#if IS_ENABLED(CONFIG_KUNIT)
#include <kunit/test.h>
#else
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/types.h>

struct kunit {
	const char	*name;
	bool		failed;
};

struct kunit_case {
	void		(*run_case)(struct kunit *test);
	const char	*name;
};

struct kunit_suite {
	const char		*name;
	struct kunit_case	*test_cases;
};

#define KUNIT_CASE(fn)		{ .run_case = fn, .name = #fn }

/* The suites (struct kunit_suite pointers) dlcp_kunit.c runs at load. */
#define kunit_test_suites(...)						\
	static struct kunit_suite * const dlcp_kunit_suites[] = {	\
		__VA_ARGS__						\
	}

void dlcp_kunit_fail(struct kunit *test, const char *file, int line,
		     const char *cond, long long left, long long right);

#define DLCP_KUNIT_BINARY(test, left, op, right, fatal)			\
	do {								\
		long long __l = (long long)(left);			\
		long long __r = (long long)(right);			\
									\
		if (!(__l op __r)) {					\
			dlcp_kunit_fail(test, __FILE__, __LINE__,	\
					#left " " #op " " #right,	\
					__l, __r);			\
			if (fatal)					\
				return;					\
		}							\
	} while (0)

#define KUNIT_EXPECT_EQ(t, l, r)	DLCP_KUNIT_BINARY(t, l, ==, r, false)
#define KUNIT_EXPECT_NE(t, l, r)	DLCP_KUNIT_BINARY(t, l, !=, r, false)
#define KUNIT_EXPECT_LT(t, l, r)	DLCP_KUNIT_BINARY(t, l, <, r, false)
#define KUNIT_EXPECT_LE(t, l, r)	DLCP_KUNIT_BINARY(t, l, <=, r, false)
#define KUNIT_EXPECT_GT(t, l, r)	DLCP_KUNIT_BINARY(t, l, >, r, false)
#define KUNIT_EXPECT_GE(t, l, r)	DLCP_KUNIT_BINARY(t, l, >=, r, false)
#define KUNIT_EXPECT_TRUE(t, c)		DLCP_KUNIT_BINARY(t, !!(c), ==, 1, false)
#define KUNIT_EXPECT_FALSE(t, c)	DLCP_KUNIT_BINARY(t, !!(c), ==, 0, false)
#define KUNIT_ASSERT_EQ(t, l, r)	DLCP_KUNIT_BINARY(t, l, ==, r, true)
#define KUNIT_ASSERT_TRUE(t, c)		DLCP_KUNIT_BINARY(t, !!(c), ==, 1, true)
#define KUNIT_ASSERT_NOT_ERR_OR_NULL(t, p)				\
	DLCP_KUNIT_BINARY(t, IS_ERR_OR_NULL(p), ==, 0, true)

#endif /* CONFIG_KUNIT */

/* The suites, one per file under test; dlcp_kunit.c runs them all. */
extern struct kunit_suite dlcp_wire_test_suite;
extern struct kunit_suite dlcp_rs_test_suite;
extern struct kunit_suite dlcp_gaps_test_suite;
extern struct kunit_suite dlcp_cc_test_suite;
extern struct kunit_suite dlcp_out_test_suite;
extern struct kunit_suite dlcp_peer_test_suite;
extern struct kunit_suite dlcp_page_test_suite;
extern struct kunit_suite dlcp_intab_test_suite;
extern struct kunit_suite dlcp_offload_test_suite;
extern struct kunit_suite dlcp_sock_test_suite;

#endif /* _DLCP_KUNIT_H */
