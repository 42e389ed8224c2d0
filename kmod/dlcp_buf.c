// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP message buffers and byte-range sets.
 *
 * A message lives in pages indexed by an xarray rather than in one
 * contiguous allocation: a 64 MiB tensor needs no high-order allocation
 * (not even for a page pointer array, which the receive path would have to
 * allocate atomically), and the receiver allocates a page only when data
 * for it arrives. Pages come from dlcp_page.c, which recycles freed ones,
 * and are not zeroed when allocated: the sender fills each one from user
 * memory, and the receiver zeroes only the bytes of its pages that did
 * not arrive, once, when the message is delivered (dlcp_buf_zero()). A
 * page that was never allocated reads as zeros; with that, every lost
 * byte reads as zero, which is the zero-fill a lossy delivery needs, and
 * no byte of an earlier user of a page can reach user memory.
 *
 * A receiver keeps the packets of a message as they are, by reference
 * (dlcp_buf_keep_skb()), in order of offset: the bytes are then copied
 * once, from the packets to user memory by recvmsg(), as TCP's and UDP's
 * are, with no page allocated for them. Only a packet that arrives far
 * out of order (DLCP_BUF_KEEP_BACK), such as a resent one, is copied into
 * the pages on arrival. A byte held by a kept packet is read from it and
 * never from the pages; the bytes between kept packets are read from the
 * pages.
 *
 * A range set records which bytes of a message arrived: a sorted array of
 * disjoint, non-adjacent [start, end) ranges, kept in pages for the same
 * reason (struct dlcp_rangeset). Packets of one message mostly arrive in
 * order, so the set stays short and an insertion touches its tail; the
 * number of ranges is bounded (DLCP_MAX_RANGES) so that a hostile sender
 * cannot make it grow without limit.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/xarray.h>
#include <net/checksum.h>
#include "dlcp_impl.h"

/*
 * The xarray's lock is taken in softirq (receive buffers) and in process
 * context (send buffers): lockdep sees one lock class, so it is BH-safe.
 */
void dlcp_buf_init(struct dlcp_buf *b, u32 len)
{
	xa_init_flags(&b->pages, XA_FLAGS_LOCK_BH);
	__skb_queue_head_init(&b->skbs);
	b->len = len;
	b->nr_alloc = 0;
	b->skb_truesize = 0;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_buf_init);

void dlcp_buf_free(struct dlcp_buf *b)
{
	struct sk_buff *skb;
	struct page *p;
	unsigned long i;

	xa_for_each(&b->pages, i, p)
		dlcp_page_free(p);
	xa_destroy(&b->pages);
	b->nr_alloc = 0;
	while ((skb = __skb_dequeue(&b->skbs)))
		consume_skb(skb);
	b->skb_truesize = 0;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_buf_free);

/*
 * The page holding byte @off, allocated if absent and @gfp. A new page's
 * contents are undefined: the caller writes it or dlcp_buf_zero() clears
 * what was not written before anything reads it.
 */
static struct page *dlcp_buf_page(struct dlcp_buf *b, u32 off, gfp_t gfp)
{
	unsigned long idx = off >> PAGE_SHIFT;
	struct page *p = xa_load(&b->pages, idx);

	if (p || !gfp)
		return p;
	p = dlcp_page_alloc(gfp);
	if (!p)
		return NULL;
	if (xa_err(xa_store_bh(&b->pages, idx, p, gfp))) {
		dlcp_page_free(p);
		return NULL;
	}
	b->nr_alloc++;
	return p;
}

/* Fill the whole buffer from user memory (sendmsg). */
int dlcp_buf_from_iter(struct dlcp_buf *b, struct iov_iter *from)
{
	u32 off;

	for (off = 0; off < b->len; off += PAGE_SIZE) {
		u32 n = min_t(u32, PAGE_SIZE, b->len - off);
		struct page *p = dlcp_buf_page(b, off, GFP_KERNEL_ACCOUNT);

		if (!p)
			return -ENOMEM;
		if (copy_page_from_iter(p, 0, n, from) != n)
			return -EFAULT;
		/* no segment reads past len; the tail is cleared all the same */
		if (n < PAGE_SIZE)
			zero_user_segment(p, n, PAGE_SIZE);
		cond_resched();
	}
	return 0;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_buf_from_iter);

/* Pages of one packet that dlcp_buf_from_skb() looks up only once */
#define DLCP_BUF_PKT_PAGES	4

/*
 * Write @len bytes of @skb at @skb_off into the buffer at @off, allocating
 * pages as needed. Every page is allocated before any byte is written: on
 * failure no byte was recorded as received, so dlcp_buf_zero() clears
 * whatever was written, and a page allocated meanwhile is counted in
 * nr_alloc for the caller's accounting. The pages the first pass found
 * (those of a packet up to a 9000-byte MTU) are not looked up again.
 * Returns the number of pages allocated or a negative errno.
 */
int dlcp_buf_from_skb(struct dlcp_buf *b, u32 off, const struct sk_buff *skb,
		      int skb_off, u32 len, gfp_t gfp)
{
	struct page *pages[DLCP_BUF_PKT_PAGES];
	u32 before = b->nr_alloc, pos, i = 0;

	for (pos = off & PAGE_MASK; pos < off + len; pos += PAGE_SIZE) {
		struct page *p = dlcp_buf_page(b, pos, gfp);

		if (!p)
			return -ENOMEM;
		if (i < ARRAY_SIZE(pages))
			pages[i++] = p;
	}
	for (i = 0; len; i++) {
		u32 poff = offset_in_page(off);
		u32 n = min_t(u32, len, PAGE_SIZE - poff);
		struct page *p;
		void *va;
		int err;

		p = i < ARRAY_SIZE(pages) ? pages[i] : dlcp_buf_page(b, off, gfp);
		if (!p)
			return -ENOMEM;
		va = dlcp_kmap_local_page(p);
		err = skb_copy_bits(skb, skb_off, va + poff, n);
		dlcp_kunmap_local(va);
		if (err)
			return err;
		off += n;
		skb_off += n;
		len -= n;
	}
	return b->nr_alloc - before;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_buf_from_skb);

/*
 * The kept packet after which one at @off goes, NULL for the first place,
 * or an error pointer if that is more than DLCP_BUF_KEEP_BACK places
 * before the last.
 */
static struct sk_buff *dlcp_buf_keep_after(const struct dlcp_buf *b, u32 off)
{
	struct sk_buff *p;
	u32 back = 0;

	skb_queue_reverse_walk(&b->skbs, p) {
		if (dlcp_buf_cb(p)->off < off)
			return p;
		if (++back >= DLCP_BUF_KEEP_BACK)
			return ERR_PTR(-E2BIG);
	}
	return NULL;
}

/*
 * May a packet whose bytes start at @off be kept by dlcp_buf_keep_skb()?
 * Only if it goes at most DLCP_BUF_KEEP_BACK places before the last packet
 * kept; the caller also makes sure that none of its bytes arrived before
 * (dlcp_rs_misses()), so that kept packets never overlap.
 */
bool dlcp_buf_may_keep(const struct dlcp_buf *b, u32 off)
{
	return !IS_ERR(dlcp_buf_keep_after(b, off));
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_buf_may_keep);

/*
 * Keep @skb, whose @len bytes at @skb_off are the message's bytes at
 * @off, none of them held before (dlcp_buf_may_keep()), by reference. It
 * is trimmed to those bytes and detached from the device, the route and
 * its sender, as a packet queued on a socket is; the caller charges its
 * truesize (@b->skb_truesize) and no longer owns it.
 */
void dlcp_buf_keep_skb(struct dlcp_buf *b, struct sk_buff *skb, int skb_off,
		       u32 off, u32 len)
{
	struct sk_buff *prev = dlcp_buf_keep_after(b, off);

	/* the header is in the linear part (dlcp_pull_hdr()) */
	__skb_pull(skb, skb_off);
	WARN_ON_ONCE(skb->len != len);
	skb_orphan(skb);
	skb_dst_drop(skb);
	skb->dev = NULL;
	dlcp_buf_cb(skb)->off = off;
	if (WARN_ON_ONCE(IS_ERR(prev)))
		prev = b->skbs.prev;
	if (prev)
		__skb_queue_after(&b->skbs, prev, skb);
	else
		__skb_queue_head(&b->skbs, skb);
	b->skb_truesize += skb->truesize;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_buf_keep_skb);

/*
 * Attach @len bytes at @off to @skb as page fragments (transmit path; all
 * pages exist), each holding a reference on its page: a send buffer is not
 * written after sendmsg() filled it, so the packet needs no copy of its
 * own, and the pages outlive the message while a packet still holds them.
 * Returns -EMSGSIZE if that takes more than MAX_SKB_FRAGS fragments.
 */
int dlcp_buf_frag_skb(struct dlcp_buf *b, u32 off, u32 len,
		      struct sk_buff *skb)
{
	int i = skb_shinfo(skb)->nr_frags;

	while (len) {
		u32 poff = offset_in_page(off);
		u32 n = min_t(u32, len, PAGE_SIZE - poff);
		struct page *p = dlcp_buf_page(b, off, 0);

		if (i >= MAX_SKB_FRAGS || WARN_ON_ONCE(!p))
			return -EMSGSIZE;
		get_page(p);
		skb_fill_page_desc(skb, i++, p, poff, n);
		skb->len += n;
		skb->data_len += n;
		/*
		 * The bytes, not the page, as tcp_sendmsg() counts a page
		 * fragment: the pages are the message's and are charged
		 * whole in dlcp_sock.snd_mem and net.dlcp.mem until it is
		 * freed; counting them again per packet in sk_wmem_alloc
		 * would charge a page for each packet that shares it.
		 */
		skb->truesize += n;
		off += n;
		len -= n;
	}
	/* the pages are the message's: nothing on the path may write them */
	dlcp_skb_set_shared_frag(skb);
	return 0;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_buf_frag_skb);

/*
 * Zero @len bytes at @off in the pages that are present; absent pages
 * already read as zeros.
 */
void dlcp_buf_zero(struct dlcp_buf *b, u32 off, u32 len)
{
	while (len) {
		struct page *p = dlcp_buf_page(b, off, 0);
		u32 poff = offset_in_page(off);
		u32 n = min_t(u32, len, PAGE_SIZE - poff);

		if (p)
			zero_user_segment(p, poff, poff + n);
		off += n;
		len -= n;
	}
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_buf_zero);

/* Copy @len bytes of the pages at @off to @to; absent pages read as zeros. */
static int dlcp_buf_pages_to_iter(struct dlcp_buf *b, u32 off, u32 len,
				  struct iov_iter *to)
{
	while (len) {
		struct page *p = dlcp_buf_page(b, off, 0);
		u32 poff = offset_in_page(off);
		u32 n = min_t(u32, len, PAGE_SIZE - poff);
		size_t done;

		if (p)
			done = copy_page_to_iter(p, poff, n, to);
		else
			done = iov_iter_zero(n, to);
		if (done != n)
			return -EFAULT;
		off += n;
		len -= n;
		cond_resched();
	}
	return 0;
}

/*
 * Copy the first @len bytes to user memory: each from the packet kept
 * that holds it, else from the pages.
 */
int dlcp_buf_to_iter(struct dlcp_buf *b, u32 len, struct iov_iter *to)
{
	struct sk_buff *skb;
	u32 pos = 0;

	skb_queue_walk(&b->skbs, skb) {
		u32 at = dlcp_buf_cb(skb)->off, n;

		if (at >= len)
			break;
		if (dlcp_buf_pages_to_iter(b, pos, at - pos, to))
			return -EFAULT;
		n = min(len - at, skb->len);
		if (skb_copy_datagram_iter(skb, 0, to, n))
			return -EFAULT;
		pos = at + n;
		cond_resched();
	}
	return dlcp_buf_pages_to_iter(b, pos, len - pos, to);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_buf_to_iter);

/* Index of the first range whose end is >= @pos (ranges can merge there). */
static u32 dlcp_rs_find(const struct dlcp_rangeset *rs, u32 pos)
{
	u32 lo = 0, hi = rs->nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (dlcp_rs_at(rs, mid)->end < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool dlcp_rs_covers(const struct dlcp_rangeset *rs, u32 start, u32 end)
{
	u32 i = dlcp_rs_find(rs, start);

	/* r[i].end >= start; a covering range must also start <= start */
	while (i < rs->nr && dlcp_rs_at(rs, i)->end == start && start != end)
		i++;
	return i < rs->nr && dlcp_rs_at(rs, i)->start <= start &&
	       dlcp_rs_at(rs, i)->end >= end;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_rs_covers);

/* Is no byte of [@start, @end) in the set? */
bool dlcp_rs_misses(const struct dlcp_rangeset *rs, u32 start, u32 end)
{
	u32 i = dlcp_rs_find(rs, start);

	/* r[i].end >= start; one that ends at @start holds none of it */
	if (i < rs->nr && dlcp_rs_at(rs, i)->end == start)
		i++;
	return i == rs->nr || dlcp_rs_at(rs, i)->start >= end;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_rs_misses);

/*
 * Move ranges [@src, @src + @n) to [@dst, @dst + @n) (the areas may
 * overlap), a memmove() for each run that stays within a page on both
 * sides: lowest first when moving down, highest first when moving up.
 */
static void dlcp_rs_move(struct dlcp_rangeset *rs, u32 dst, u32 src, u32 n)
{
	const u32 per = DLCP_RS_PAGE_RANGES;
	u32 c;

	for (; n && dst < src; n -= c, dst += c, src += c) {
		c = min3(n, per - src % per, per - dst % per);
		memmove(dlcp_rs_at(rs, dst), dlcp_rs_at(rs, src),
			c * sizeof(struct dlcp_rs_range));
	}
	for (; n && dst > src; n -= c) {
		c = min3(n, (src + n - 1) % per + 1, (dst + n - 1) % per + 1);
		memmove(dlcp_rs_at(rs, dst + n - c), dlcp_rs_at(rs, src + n - c),
			c * sizeof(struct dlcp_rs_range));
	}
}

/* Room for more ranges: the first array doubled up to a page, or a page. */
static int dlcp_rs_grow(struct dlcp_rangeset *rs, gfp_t gfp)
{
	struct dlcp_rs_range *n;

	if (rs->cap < DLCP_RS_PAGE_RANGES) {
		u32 cap = rs->cap ? rs->cap * 2 : 8;

		n = dlcp_krealloc_array(rs->pg[0], cap, sizeof(*n), gfp);
		if (!n)
			return -ENOMEM;
		rs->pg[0] = n;
		rs->cap = cap;
		return 0;
	}
	n = kmalloc(PAGE_SIZE, gfp);
	if (!n)
		return -ENOMEM;
	rs->pg[rs->cap / DLCP_RS_PAGE_RANGES] = n;
	rs->cap += DLCP_RS_PAGE_RANGES;
	return 0;
}

/*
 * Make sure adding [start, end) to the set cannot fail: room for one more
 * range if it would not merge with one. Returns 0, -ENOMEM, or -E2BIG when
 * the set would exceed DLCP_MAX_RANGES ranges. The receive path calls it
 * before writing a packet's bytes, so that bytes are in the buffer only if
 * they are in the set.
 */
int dlcp_rs_prepare(struct dlcp_rangeset *rs, u32 start, u32 end, gfp_t gfp)
{
	u32 i = dlcp_rs_find(rs, start);

	if (i < rs->nr && dlcp_rs_at(rs, i)->start <= end)
		return 0;		/* touches r[i]: merges */
	if (rs->nr < rs->cap)
		return 0;
	if (rs->nr >= DLCP_MAX_RANGES)
		return -E2BIG;
	return dlcp_rs_grow(rs, gfp);
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_rs_prepare);

/*
 * Add [start, end) to the set. *@added gets the number of bytes that were
 * not in the set before. Returns 0, -ENOMEM, or -E2BIG when the set would
 * exceed DLCP_MAX_RANGES ranges (never after dlcp_rs_prepare()).
 */
int dlcp_rs_add(struct dlcp_rangeset *rs, u32 start, u32 end, gfp_t gfp,
		u32 *added)
{
	u32 i = dlcp_rs_find(rs, start), j, covered = 0;
	struct dlcp_rs_range *r;

	/* ranges i..j-1 touch or overlap [start, end) */
	for (j = i; j < rs->nr && dlcp_rs_at(rs, j)->start <= end; j++) {
		r = dlcp_rs_at(rs, j);
		covered += min(r->end, end) - max(r->start, start);
	}

	if (j == i) {			/* nothing to merge: insert */
		int err = dlcp_rs_prepare(rs, start, end, gfp);

		if (err)
			return err;
		dlcp_rs_move(rs, i + 1, i, rs->nr - i);
		r = dlcp_rs_at(rs, i);
		r->start = start;
		r->end = end;
		rs->nr++;
		*added = end - start;
		rs->bytes += *added;
		return 0;
	}

	/* merge ranges i..j-1 and [start, end) into r[i] */
	r = dlcp_rs_at(rs, i);
	r->start = min(r->start, start);
	r->end = max(dlcp_rs_at(rs, j - 1)->end, end);
	*added = (end - start) - covered;
	rs->bytes += *added;
	dlcp_rs_move(rs, i + 1, j, rs->nr - j);
	rs->nr -= j - i - 1;
	return 0;
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_rs_add);

void dlcp_rs_free(struct dlcp_rangeset *rs)
{
	u32 i;

	for (i = 0; i < DLCP_RS_PAGES; i++)
		kfree(rs->pg[i]);
	memset(rs, 0, sizeof(*rs));
}
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_rs_free);
