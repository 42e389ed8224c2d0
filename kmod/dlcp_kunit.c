// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_test.ko: the KUnit suites of DLCP's pure parts (wire validation,
 * range sets, gap reports, the congestion window, re-segmentation, the
 * reordering window and pacing clock of a destination, the recycling
 * of message pages, the cut of native super-packets, message ids and
 * path entropy).
 * Loading the module runs them; the results go to the kernel log in
 * KUnit's KTAP format, under KUnit itself where the kernel has it
 * (dlcp_kunit.h). The suites call internal functions of dlcp.ko, which
 * exports them (namespace DLCP_INTERNAL) only in the build made for the
 * tests.
 */
#include "dlcp_compat.h"
#include "dlcp_kunit.h"

kunit_test_suites(&dlcp_wire_test_suite, &dlcp_rs_test_suite,
		  &dlcp_gaps_test_suite, &dlcp_cc_test_suite,
		  &dlcp_out_test_suite, &dlcp_peer_test_suite,
		  &dlcp_page_test_suite, &dlcp_intab_test_suite,
		  &dlcp_offload_test_suite, &dlcp_sock_test_suite);

#if !IS_ENABLED(CONFIG_KUNIT)
void dlcp_kunit_fail(struct kunit *test, const char *file, int line,
		     const char *cond, long long left, long long right)
{
	test->failed = true;
	pr_info("        # %s: EXPECTATION FAILED at %s:%d\n", test->name,
		file, line);
	pr_info("        Expected %s, but left == %lld, right == %lld\n",
		cond, left, right);
}

/*
 * Run every case of every suite; print KTAP as KUnit does: a plan of
 * suites, then each suite as a subtest with a result per case. Returns 0:
 * the results are in the log, and a module that loads can be unloaded.
 */
static int __init dlcp_kunit_init(void)
{
	struct kunit_suite * const *suites = dlcp_kunit_suites;
	unsigned int i, n = ARRAY_SIZE(dlcp_kunit_suites);

	pr_info("KTAP version 1\n");
	pr_info("1..%u\n", n);
	for (i = 0; i < n; i++) {
		const struct kunit_suite *s = suites[i];
		struct kunit_case *c;
		unsigned int nr = 0, k = 0;
		bool failed = false;

		for (c = s->test_cases; c->run_case; c++)
			nr++;
		pr_info("    KTAP version 1\n");
		pr_info("    # Subtest: %s\n", s->name);
		pr_info("    1..%u\n", nr);
		for (c = s->test_cases; c->run_case; c++) {
			struct kunit test = { .name = c->name };

			c->run_case(&test);
			failed |= test.failed;
			pr_info("    %s %u %s\n", test.failed ? "not ok" : "ok",
				++k, c->name);
		}
		pr_info("%s %u %s\n", failed ? "not ok" : "ok", i + 1, s->name);
	}
	return 0;
}

static void __exit dlcp_kunit_exit(void)
{
}

module_init(dlcp_kunit_init);
module_exit(dlcp_kunit_exit);
#endif

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests of DLCP");
MODULE_IMPORT_NS(DLCP_NS(DLCP_INTERNAL));
