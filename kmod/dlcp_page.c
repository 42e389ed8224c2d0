// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP message pages: allocation with per-CPU recycling.
 *
 * A message's bytes live in order-0 pages (dlcp_buf.c). A receiver
 * allocates a page for about every third 1428-byte packet and frees a
 * message's worth at once when the application has read it; a sender
 * frees a message's worth when the receiver has all of it. Where the
 * kernel zeroes every page it allocates (init_on_alloc=1, the default of
 * Debian's and Ubuntu's kernels), each allocation costs a pass over the
 * page on top of the copy that then fills it. So a freed page that nothing
 * else holds is kept on a stack of the CPU that freed it, and the next
 * allocation on that CPU takes it, as page_pool does for a NIC's receive
 * ring.
 *
 * A kept page still holds its last user's bytes. That is safe for the
 * same reason a page from an allocator that does not zero is:
 * dlcp_buf.c fills every byte of a page it sends from user memory, and a
 * receiver zeroes every byte that did not arrive before the message is
 * delivered, so no byte of a page's earlier use reaches user memory.
 *
 * Kept are only pages that carry no memory-cgroup charge (receive buffers,
 * allocated in softirq, and send buffers of tasks in the root cgroup);
 * charged pages go back to the allocator, and an allocation that must be
 * charged (__GFP_ACCOUNT, a send buffer) never takes a kept page, so
 * every page a cgroup's task asks for is charged to it. Neither kept is a
 * page a packet still holds (a transmitted fragment), one from the
 * emergency reserves, or one of another NUMA node.
 *
 * The stacks hold at most the module parameter page_cache pages per CPU
 * (default 256, 1 MiB with 4 KiB pages; 0 keeps none), outside the
 * protocol's memory limits (net.dlcp.mem counts pages in messages); they
 * are emptied when the module is unloaded (a CPU taken offline keeps its
 * stack until then). Each stack is touched only with bottom halves
 * disabled on its own CPU: the allocations and frees come from softirq and
 * from system calls.
 */
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include "dlcp_impl.h"

/* the most pages a CPU's stack can be set to hold */
#define DLCP_PAGE_CACHE_MAX	1024

static unsigned int dlcp_page_cache_max = 256;
module_param_named(page_cache, dlcp_page_cache_max, uint, 0644);
MODULE_PARM_DESC(page_cache,
		 "freed message pages kept for reuse, per CPU (0 to 1024)");

/**
 * struct dlcp_page_cache - the freed pages one CPU keeps
 * @nr:		pages on the stack
 * @pages:	the stack, @nr entries
 */
struct dlcp_page_cache {
	unsigned int	nr;
	struct page	*pages[DLCP_PAGE_CACHE_MAX];
};

static struct dlcp_page_cache __percpu *dlcp_page_caches;

/*
 * An order-0 page for a message buffer: a kept one if @gfp needs no
 * charge, else a new one. Its contents are undefined.
 */
struct page *dlcp_page_alloc(gfp_t gfp)
{
	struct dlcp_page_cache *pc;
	struct page *p = NULL;

	if (!(gfp & __GFP_ACCOUNT)) {
		local_bh_disable();
		pc = this_cpu_ptr(dlcp_page_caches);
		if (pc->nr)
			p = pc->pages[--pc->nr];
		local_bh_enable();
		if (p)
			return p;
	}
	return alloc_page(gfp);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_page_alloc);

/* Can @p be kept by this CPU (bottom halves disabled)? */
static bool dlcp_page_keepable(struct page *p)
{
	return page_ref_count(p) == 1 && !page_is_pfmemalloc(p) &&
	       page_to_nid(p) == numa_mem_id() && !page_memcg_check(p);
}

/* Let go of a message buffer's page @p: kept for reuse if it can be. */
void dlcp_page_free(struct page *p)
{
	unsigned int max = min_t(unsigned int, READ_ONCE(dlcp_page_cache_max),
				 DLCP_PAGE_CACHE_MAX);
	struct dlcp_page_cache *pc;

	if (irqs_disabled()) {
		put_page(p);
		return;
	}
	local_bh_disable();
	pc = this_cpu_ptr(dlcp_page_caches);
	if (pc->nr < max && dlcp_page_keepable(p))
		pc->pages[pc->nr++] = p;
	else
		put_page(p);
	local_bh_enable();
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_page_free);

/* Pages this CPU keeps, for the tests. */
unsigned int dlcp_page_kept(void)
{
	unsigned int nr;

	local_bh_disable();
	nr = this_cpu_ptr(dlcp_page_caches)->nr;
	local_bh_enable();
	return nr;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_page_kept);

int dlcp_page_init(void)
{
	dlcp_page_caches = alloc_percpu(struct dlcp_page_cache);
	return dlcp_page_caches ? 0 : -ENOMEM;
}

/* After the last message is freed: give every kept page back. */
void dlcp_page_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct dlcp_page_cache *pc = per_cpu_ptr(dlcp_page_caches, cpu);

		while (pc->nr)
			put_page(pc->pages[--pc->nr]);
	}
	free_percpu(dlcp_page_caches);
}
