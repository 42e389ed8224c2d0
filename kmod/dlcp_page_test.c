// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of dlcp_page.c: which freed message pages a CPU keeps, and
 * which allocations take them. Each case stays on one CPU (the stacks are
 * per CPU).
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

/* the default of the module parameter page_cache */
#define DLCP_PAGE_TEST_MAX	256

/* Make room on this CPU's stack for one more page. */
static void dlcp_page_test_room(void)
{
	if (dlcp_page_kept() >= DLCP_PAGE_TEST_MAX)
		put_page(dlcp_page_alloc(GFP_ATOMIC));
}

/*
 * An array of @n new pages (kfree() it), each with a second reference (a
 * packet's) if @held; NULL if one could not be had.
 */
static struct page **dlcp_page_test_pages(unsigned int n, bool held)
{
	struct page **pages = kcalloc(n, sizeof(*pages), GFP_KERNEL);
	unsigned int i;

	for (i = 0; pages && i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i]) {
			while (i--)
				__free_page(pages[i]);
			kfree(pages);
			return NULL;
		}
		if (held)
			get_page(pages[i]);
	}
	return pages;
}

/* A freed page is kept, and the next allocation takes it back. */
static void dlcp_page_test_reuse(struct kunit *test)
{
	struct page *p = alloc_page(GFP_KERNEL), *q;
	unsigned int n;

	KUNIT_ASSERT_TRUE(test, p);
	migrate_disable();
	dlcp_page_test_room();
	n = dlcp_page_kept();
	dlcp_page_free(p);
	KUNIT_EXPECT_EQ(test, dlcp_page_kept(), n + 1);
	q = dlcp_page_alloc(GFP_ATOMIC);
	KUNIT_EXPECT_TRUE(test, q == p);
	KUNIT_EXPECT_EQ(test, dlcp_page_kept(), n);
	migrate_enable();
	dlcp_page_free(q);
}

/*
 * A page a packet still holds waits: no allocation takes it until the
 * packet lets go of it, and then the next one does.
 */
static void dlcp_page_test_held(struct kunit *test)
{
	struct page *p = alloc_page(GFP_KERNEL), *q, *r;
	unsigned int n;

	KUNIT_ASSERT_TRUE(test, p);
	get_page(p);
	migrate_disable();
	dlcp_page_test_room();
	n = dlcp_page_kept();
	dlcp_page_free(p);
	KUNIT_EXPECT_EQ(test, dlcp_page_kept(), n);
	KUNIT_EXPECT_EQ(test, page_ref_count(p), 2);
	q = dlcp_page_alloc(GFP_ATOMIC);
	KUNIT_EXPECT_TRUE(test, q && q != p);
	put_page(p);
	r = dlcp_page_alloc(GFP_ATOMIC);
	KUNIT_EXPECT_TRUE(test, r == p);
	migrate_enable();
	if (q)
		dlcp_page_free(q);
	if (r)
		dlcp_page_free(r);
}

/*
 * The queue of held pages is bounded too: the page_cache + 1st lets go
 * of the oldest, which is then its other holder's alone.
 */
static void dlcp_page_test_held_bound(struct kunit *test)
{
	unsigned int i, n = DLCP_PAGE_TEST_MAX + 1;
	struct page **pages = dlcp_page_test_pages(n, true);

	KUNIT_ASSERT_TRUE(test, pages);
	migrate_disable();
	for (i = 0; i < n; i++)
		dlcp_page_free(pages[i]);
	KUNIT_EXPECT_EQ(test, dlcp_page_waiting(), DLCP_PAGE_TEST_MAX);
	KUNIT_EXPECT_EQ(test, page_ref_count(pages[0]), 1);
	KUNIT_EXPECT_EQ(test, page_ref_count(pages[n - 1]), 2);
	/* the holders let go; allocations take the pages off the queue */
	for (i = 0; i < n; i++)
		put_page(pages[i]);
	for (i = 0; i < n && dlcp_page_waiting(); i++)
		put_page(dlcp_page_alloc(GFP_ATOMIC));
	KUNIT_EXPECT_EQ(test, dlcp_page_waiting(), 0);
	migrate_enable();
	kfree(pages);
}

/*
 * A kernel thread's allocation for a send buffer (__GFP_ACCOUNT) is
 * charged to no memory cgroup: it takes a kept uncharged page, as a
 * receive buffer does.
 */
static void dlcp_page_test_uncharged_account(struct kunit *test)
{
	struct page *p = alloc_page(GFP_KERNEL), *q;
	unsigned int n;

	KUNIT_ASSERT_TRUE(test, p);
	migrate_disable();
	dlcp_page_test_room();
	n = dlcp_page_kept();
	dlcp_page_free(p);
	q = dlcp_page_alloc(GFP_KERNEL_ACCOUNT);
	KUNIT_EXPECT_TRUE(test, q == p);
	KUNIT_EXPECT_EQ(test, dlcp_page_kept(), n);
	migrate_enable();
	if (q)
		dlcp_page_free(q);
}

/* A CPU keeps no more than page_cache pages; the rest are freed. */
static void dlcp_page_test_bound(struct kunit *test)
{
	unsigned int i, n = DLCP_PAGE_TEST_MAX + 8;
	struct page **pages = dlcp_page_test_pages(n, false);

	KUNIT_ASSERT_TRUE(test, pages);
	migrate_disable();
	for (i = 0; i < n; i++)
		dlcp_page_free(pages[i]);
	KUNIT_EXPECT_EQ(test, dlcp_page_kept(), DLCP_PAGE_TEST_MAX);
	migrate_enable();
	kfree(pages);
}

static struct kunit_case dlcp_page_test_cases[] = {
	KUNIT_CASE(dlcp_page_test_reuse),
	KUNIT_CASE(dlcp_page_test_held),
	KUNIT_CASE(dlcp_page_test_held_bound),
	KUNIT_CASE(dlcp_page_test_uncharged_account),
	KUNIT_CASE(dlcp_page_test_bound),
	{}
};

struct kunit_suite dlcp_page_test_suite = {
	.name = "dlcp_page",
	.test_cases = dlcp_page_test_cases,
};
