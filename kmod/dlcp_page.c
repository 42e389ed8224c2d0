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
 * A page allocated for a send buffer (__GFP_ACCOUNT) is charged to the
 * memory cgroup of the task that sends, where the kernel charges one
 * (kernel memory accounting, a cgroup below the root). Such a page is
 * kept apart, on a second stack, and still charged: only an allocation
 * that would be charged to the same cgroup takes it, so that every page
 * a cgroup's task holds is charged to it. An allocation that finds a page
 * of another cgroup on top frees that page and takes a new one: a stack
 * does not stay filled with the pages of a cgroup that no longer sends.
 * Pages that carry no charge (receive buffers, allocated in softirq, and
 * send buffers of tasks charged nothing: the root cgroup, kernel threads)
 * go on the first stack, which uncharged allocations take from. Never
 * kept is a page from the emergency reserves or of another NUMA node.
 *
 * A page that something else still holds when the message lets go of it
 * cannot be given out yet: a packet being transmitted holds the sender's
 * page (a fragment), and a receiver on the same host that keeps packets
 * by reference (loopback, veth; rx_keep) holds it until it reads them.
 * Such a page waits, with the message's reference, on a queue of its CPU
 * in the order freed; once the other holders have let go (its reference
 * count is 1: nothing but the queue knows it) it moves to its stack.
 * Allocations and frees move the released pages at the head of the queue
 * to their stacks, a few at a time. A full queue lets go of its oldest
 * page, which its other holders free.
 *
 * The stacks and the queue hold at most the module parameter page_cache
 * pages each per CPU (default 256, 1 MiB with 4 KiB pages; 0 keeps none),
 * outside the protocol's memory limits (net.dlcp.mem counts pages in
 * messages); a cgroup stays charged for the pages of its own that a CPU
 * keeps. They are emptied when the module is unloaded (a CPU taken offline
 * keeps its pages until then). They are touched only with bottom halves
 * disabled on their own CPU: the allocations and frees come from softirq
 * and from system calls.
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
		 "freed message pages kept for reuse, per CPU and stack (0 to 1024)");

/* The stacks of a CPU: pages charged to no memory cgroup, and charged ones */
enum {
	DLCP_PAGE_FREE,
	DLCP_PAGE_CHARGED,
	DLCP_PAGE_STACKS
};

/* released pages a free or an allocation moves from the queue at most */
#define DLCP_PAGE_SETTLE	4

/**
 * struct dlcp_page_cache - the freed pages one CPU keeps
 * @nr:		pages on each stack
 * @wait_head:	the oldest entry of @wait
 * @wait_nr:	pages on the queue
 * @pages:	the stacks, @nr entries each
 * @wait:	the queue of pages still held elsewhere, a ring
 */
struct dlcp_page_cache {
	unsigned int	nr[DLCP_PAGE_STACKS];
	unsigned int	wait_head;
	unsigned int	wait_nr;
	struct page	*pages[DLCP_PAGE_STACKS][DLCP_PAGE_CACHE_MAX];
	struct page	*wait[DLCP_PAGE_CACHE_MAX];
};

static struct dlcp_page_cache __percpu *dlcp_page_caches;

/*
 * The memory cgroup that an allocation with __GFP_ACCOUNT by the current
 * task is charged to, as the kernel chooses it, or NULL where it charges
 * none: no memory controller, a kernel thread, a task of the root cgroup
 * (whose memory is not counted). Where kernel memory accounting is off
 * (cgroup.memory=nokmem) the pages carry no charge while this names a
 * cgroup: a send buffer then finds no kept page, which costs time only.
 */
#ifdef CONFIG_MEMCG
static struct mem_cgroup *dlcp_page_memcg(void)
	__must_hold(RCU)
{
	struct mem_cgroup *memcg;

	if (mem_cgroup_disabled())
		return NULL;
	memcg = current->active_memcg;
	if (!memcg) {
		if (!in_task() || !current->mm ||
		    (current->flags & PF_KTHREAD))
			return NULL;
		memcg = mem_cgroup_from_task(current);
	}
	return memcg && memcg->css.parent ? memcg : NULL;
}
#else
static struct mem_cgroup *dlcp_page_memcg(void)
	__must_hold(RCU)
{
	return NULL;
}
#endif

/*
 * A kept page of the stack @s for an allocation charged to @memcg (NULL:
 * none), or NULL. A charged page of another cgroup on top is freed.
 */
static struct page *dlcp_page_take(struct dlcp_page_cache *pc, int s,
				   struct mem_cgroup *memcg)
{
	struct page *p;

	if (!pc->nr[s])
		return NULL;
	p = pc->pages[s][--pc->nr[s]];
	if (s == DLCP_PAGE_CHARGED && dlcp_page_memcg_of(p) != memcg) {
		put_page(p);
		return NULL;
	}
	return p;
}

/* The most pages a stack or the queue holds now */
static unsigned int dlcp_page_max(void)
{
	return min_t(unsigned int, READ_ONCE(dlcp_page_cache_max),
		     DLCP_PAGE_CACHE_MAX);
}

/* Put @p, which nothing else holds, on its stack, or free it. */
static void dlcp_page_stack(struct dlcp_page_cache *pc, struct page *p,
			    unsigned int max)
	__must_hold(RCU)
{
	int s = dlcp_page_memcg_of(p) ? DLCP_PAGE_CHARGED : DLCP_PAGE_FREE;

	if (pc->nr[s] < max)
		pc->pages[s][pc->nr[s]++] = p;
	else
		put_page(p);
}

/* Take the oldest page off the queue, which must not be empty. */
static struct page *dlcp_page_wait_pop(struct dlcp_page_cache *pc)
{
	struct page *p = pc->wait[pc->wait_head];

	pc->wait_head = (pc->wait_head + 1) % DLCP_PAGE_CACHE_MAX;
	pc->wait_nr--;
	return p;
}

/*
 * Move up to DLCP_PAGE_SETTLE pages from the head of the queue that
 * nothing else holds any more to their stacks.
 */
static void dlcp_page_settle(struct dlcp_page_cache *pc, unsigned int max)
	__must_hold(RCU)
{
	unsigned int i;

	for (i = 0; i < DLCP_PAGE_SETTLE && pc->wait_nr; i++) {
		if (page_ref_count(pc->wait[pc->wait_head]) != 1)
			break;
		dlcp_page_stack(pc, dlcp_page_wait_pop(pc), max);
	}
}

/*
 * An order-0 page for a message buffer: a kept one charged as @gfp and
 * the task ask for, else a new one. Its contents are undefined.
 */
struct page *dlcp_page_alloc(gfp_t gfp)
{
	struct mem_cgroup *memcg = NULL;
	struct dlcp_page_cache *pc;
	struct page *p;

	rcu_read_lock();
	if (gfp & __GFP_ACCOUNT)
		memcg = dlcp_page_memcg();
	local_bh_disable();
	pc = this_cpu_ptr(dlcp_page_caches);
	dlcp_page_settle(pc, dlcp_page_max());
	p = dlcp_page_take(pc, memcg ? DLCP_PAGE_CHARGED : DLCP_PAGE_FREE,
			   memcg);
	local_bh_enable();
	rcu_read_unlock();
	return p ?: alloc_page(gfp);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_page_alloc);

/* Let go of a message buffer's page @p: kept for reuse if it can be. */
void dlcp_page_free(struct page *p)
{
	unsigned int max = dlcp_page_max();
	struct dlcp_page_cache *pc;

	if (irqs_disabled() || page_is_pfmemalloc(p) ||
	    page_to_nid(p) != numa_mem_id()) {
		put_page(p);
		return;
	}
	rcu_read_lock();
	local_bh_disable();
	pc = this_cpu_ptr(dlcp_page_caches);
	dlcp_page_settle(pc, max);
	if (page_ref_count(p) == 1) {
		dlcp_page_stack(pc, p, max);
	} else if (max) {
		if (pc->wait_nr >= max)
			put_page(dlcp_page_wait_pop(pc));
		pc->wait[(pc->wait_head + pc->wait_nr++) %
			 DLCP_PAGE_CACHE_MAX] = p;
	} else {
		put_page(p);
	}
	local_bh_enable();
	rcu_read_unlock();
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_page_free);

/* Uncharged pages this CPU keeps, for the tests. */
unsigned int dlcp_page_kept(void)
{
	unsigned int nr;

	local_bh_disable();
	nr = this_cpu_ptr(dlcp_page_caches)->nr[DLCP_PAGE_FREE];
	local_bh_enable();
	return nr;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_page_kept);

/* Pages on this CPU's queue, for the tests. */
unsigned int dlcp_page_waiting(void)
{
	unsigned int nr;

	local_bh_disable();
	nr = this_cpu_ptr(dlcp_page_caches)->wait_nr;
	local_bh_enable();
	return nr;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_page_waiting);

int dlcp_page_init(void)
{
	dlcp_page_caches = alloc_percpu(struct dlcp_page_cache);
	return dlcp_page_caches ? 0 : -ENOMEM;
}

/* After the last message is freed: give every kept page back. */
void dlcp_page_exit(void)
{
	int cpu, s;

	for_each_possible_cpu(cpu) {
		struct dlcp_page_cache *pc = per_cpu_ptr(dlcp_page_caches, cpu);

		for (s = 0; s < DLCP_PAGE_STACKS; s++)
			while (pc->nr[s])
				put_page(pc->pages[s][--pc->nr[s]]);
		while (pc->wait_nr)
			put_page(dlcp_page_wait_pop(pc));
	}
	free_percpu(dlcp_page_caches);
}
