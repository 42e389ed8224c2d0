// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP packet tagging: priority classes and importance.
 *
 * Class. Every message has a priority class, 0 (highest) to
 * net.dlcp.prio_classes - 1. It is given explicitly (DLCP_PRIORITY, or
 * DLCP_MSG_HAS_PRIO in DLCP_CMSG_SEND), or derived from the message's
 * layer: class = net.dlcp.unpriv_class + layer / net.dlcp.layer_width,
 * capped at the lowest class, so that the layers the next forward pass
 * needs first (layer 0 is the input side) go first. Class 0 is for control
 * packets (REPORT, STOP, PROBE, ABORT) and retransmissions of critical
 * data; classes below net.dlcp.unpriv_class need CAP_NET_ADMIN, as
 * SO_PRIORITY above 6 does. A packet of class c gets skb->priority 7 - c
 * (so class 0 is TC_PRIO_CONTROL) and the DSCP net.dlcp.class_dscp[c]
 * (default CS7 - c).
 *
 * Importance. A data segment is important or droppable. The sender can
 * say which per segment (DLCP_CMSG_SEG_CLASS), or have the module choose
 * the net.dlcp.droppable_ppm (or per message droppable_ppm) fraction of
 * the segments with the smallest gradient magnitude: for fp32, fp16 and
 * bf16 the order of absolute values is the order of the bit patterns with
 * the sign bit cleared, so no floating point is needed. Critical segments
 * are never droppable. Important packets go out ECN-capable (ECT(0)),
 * droppable ones Not-ECT with DLCP_HF_DROPPABLE, so that RED with ECN drops
 * them first.
 */
#include <linux/bitmap.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <net/inet_ecn.h>
#include "dlcp_impl.h"

u8 dlcp_layer_class(const struct dlcp_net *dn, u32 layer)
{
	u32 k = READ_ONCE(dn->prio_classes);
	u32 c = READ_ONCE(dn->unpriv_class) +
		layer / READ_ONCE(dn->layer_width);

	return min(c, k - 1);
}

/* TOS byte of a packet: the class's DSCP and the ECN codepoint. */
u8 dlcp_pkt_tos(const struct dlcp_net *dn, u8 cls, bool droppable)
{
	u8 ecn = INET_ECN_NOT_ECT;

	if (!droppable && READ_ONCE(dn->ecn))
		ecn = INET_ECN_ECT_0;
	return (READ_ONCE(dn->class_dscp[cls]) << 2) | ecn;
}

/* Magnitude of element @i of a page, as an unsigned bit pattern. */
static u32 dlcp_elem_mag(const void *va, u32 i, u8 dtype)
{
	if (dtype == DLCP_DTYPE_FP32)
		return ((const u32 *)va)[i] & 0x7fffffff;
	return ((const u16 *)va)[i] & 0x7fff;	/* fp16, bf16 */
}

static int dlcp_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Mark droppable the @ppm fraction of the segments of @m with the smallest
 * largest-magnitude element. Called in sendmsg(), after the data is in.
 */
int dlcp_mark_droppable(struct dlcp_out_msg *m, u32 ppm)
{
	u32 esize = m->meta.dtype == DLCP_DTYPE_FP32 ? 4 : 2;
	u32 seg, ndrop, *mag, *sorted, thresh;
	unsigned long idx;
	struct page *p;

	ndrop = div_u64((u64)m->nsegs * ppm, DLCP_PPM_MAX);
	if (!ndrop || (m->meta.dtype != DLCP_DTYPE_FP32 &&
		       m->meta.dtype != DLCP_DTYPE_FP16 &&
		       m->meta.dtype != DLCP_DTYPE_BF16))
		return 0;
	mag = kvcalloc(m->nsegs, sizeof(*mag), GFP_KERNEL);
	sorted = kvmalloc_array(m->nsegs, sizeof(*sorted), GFP_KERNEL);
	m->droppable = bitmap_zalloc(m->nsegs, GFP_KERNEL_ACCOUNT);
	if (!mag || !sorted || !m->droppable) {
		kvfree(mag);
		kvfree(sorted);
		return -ENOMEM;
	}
	xa_for_each(&m->buf.pages, idx, p) {
		u32 base = idx << PAGE_SHIFT;
		u32 n = min_t(u32, PAGE_SIZE, m->len - base) / esize, i;
		void *va = dlcp_kmap_local_page(p);

		for (i = 0; i < n; i++) {
			u32 s = (base + i * esize) / m->seg_size;

			mag[s] = max(mag[s], dlcp_elem_mag(va, i, m->meta.dtype));
		}
		dlcp_kunmap_local(va);
		cond_resched();
	}
	memcpy(sorted, mag, m->nsegs * sizeof(*mag));
	sort(sorted, m->nsegs, sizeof(*sorted), dlcp_cmp_u32, NULL);
	thresh = sorted[min(ndrop, m->nsegs - 1)];
	for (seg = 0; seg < m->nsegs; seg++)
		if (mag[seg] < thresh && !dlcp_seg_crit(m, seg))
			__set_bit(seg, m->droppable);
	kvfree(mag);
	kvfree(sorted);
	return 0;
}

/* Importance per segment from DLCP_CMSG_SEG_CLASS: 0 important, 1 not. */
int dlcp_set_seg_classes(struct dlcp_out_msg *m, const u8 *cls, u32 n)
{
	u32 seg;

	if (n != m->nsegs)
		return -EINVAL;
	for (seg = 0; seg < n; seg++)
		if (cls[seg] > DLCP_SEG_DROPPABLE)
			return -EINVAL;
	m->droppable = bitmap_zalloc(m->nsegs, GFP_KERNEL_ACCOUNT);
	if (!m->droppable)
		return -ENOMEM;
	for (seg = 0; seg < n; seg++)
		if (cls[seg] == DLCP_SEG_DROPPABLE && !dlcp_seg_crit(m, seg))
			__set_bit(seg, m->droppable);
	return 0;
}
