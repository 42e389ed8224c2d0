// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp pure helpers: dtype sizes, magnitude classes, loss-aware
 * accumulation and finalisation, chunking.
 * No I/O here: everything is unit-tested on the host.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"

size_t dlcp_dtype_size(int dtype)
{
	static const unsigned char size[__DLCP_DTYPE_MAX] = {
		[DLCP_DTYPE_BYTES] = 1, [DLCP_DTYPE_INT8] = 1,
		[DLCP_DTYPE_FP16] = 2, [DLCP_DTYPE_BF16] = 2,
		[DLCP_DTYPE_FP32] = 4, [DLCP_DTYPE_INT32] = 4,
	};

	return dtype >= 0 && dtype < __DLCP_DTYPE_MAX ? size[dtype] : 0;
}

struct seg_key {
	uint32_t key;
	uint32_t idx;
};

static int seg_key_cmp(const void *a, const void *b)
{
	const struct seg_key *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;	/* larger first */
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

long dlcp_seg_classes(const void *buf, size_t len, int dtype,
		      size_t seg_size, double top_fraction,
		      uint8_t *classes, size_t nr_classes)
{
	size_t esz, nsegs, i, k;
	struct seg_key *keys;

	if (dtype != DLCP_DTYPE_FP32 && dtype != DLCP_DTYPE_FP16 &&
	    dtype != DLCP_DTYPE_BF16)
		return -EINVAL;
	esz = dlcp_dtype_size(dtype);
	seg_size -= seg_size % esz;
	if (!seg_size || len % esz || !(top_fraction >= 0.0 && top_fraction <= 1.0) ||
	    (len && !buf))
		return -EINVAL;
	nsegs = (len + seg_size - 1) / seg_size;
	if (nsegs > nr_classes)
		return -ENOSPC;
	if (!nsegs)
		return 0;
	keys = malloc(nsegs * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < nsegs; i++) {
		size_t off = i * seg_size;
		size_t end = off + seg_size < len ? off + seg_size : len;
		uint32_t max = 0;

		for (; off < end; off += esz) {
			uint32_t v;

			if (esz == 4) {
				memcpy(&v, (const char *)buf + off, 4);
				v &= 0x7fffffffu;
			} else {
				uint16_t h;

				memcpy(&h, (const char *)buf + off, 2);
				v = h & 0x7fffu;
			}
			if (v > max)
				max = v;
		}
		keys[i].key = max;
		keys[i].idx = (uint32_t)i;
	}
	qsort(keys, nsegs, sizeof(*keys), seg_key_cmp);
	k = (size_t)ceil(top_fraction * (double)nsegs);
	if (k > nsegs)
		k = nsegs;
	for (i = 0; i < nsegs; i++)
		classes[keys[i].idx] = i < k ? 0 : 1;
	free(keys);
	return (long)nsegs;
}

/*
 * Mark in @lostmask (n elements, 1 = lost) the elements of a message
 * region starting at byte @data_off that overlap a lost byte range.
 */
static void mark_lost(uint8_t *lostmask, size_t n, size_t esz,
		      const struct dlcp_range *lost, size_t nr_lost,
		      size_t data_off)
{
	size_t data_end = data_off + n * esz, i;

	for (i = 0; i < nr_lost; i++) {
		size_t s = lost[i].offset, e = s + (size_t)lost[i].len, a, b;

		if (e <= data_off || s >= data_end)
			continue;
		if (s < data_off)
			s = data_off;
		if (e > data_end)
			e = data_end;
		a = (s - data_off) / esz;
		b = (e - data_off + esz - 1) / esz;
		memset(lostmask + a, 1, b - a);
	}
}

long dlcp_reduce_accumulate(int dtype, void *acc, uint32_t *cnt,
			    const void *in, const uint32_t *in_cnt, size_t n,
			    const struct dlcp_range *lost, size_t nr_lost,
			    size_t data_off)
{
	uint8_t *mask = NULL;
	long skipped = 0;
	size_t i;

	if ((dtype != DLCP_DTYPE_FP32 && dtype != DLCP_DTYPE_INT32) ||
	    (n && (!acc || !cnt || !in)) || (nr_lost && !lost))
		return -EINVAL;
	if (nr_lost) {
		mask = calloc(n ? n : 1, 1);
		if (!mask)
			return -ENOMEM;
		mark_lost(mask, n, 4, lost, nr_lost, data_off);
	}
	for (i = 0; i < n; i++) {
		uint32_t c = in_cnt ? in_cnt[i] : 1;

		if (mask && mask[i]) {
			skipped++;
			continue;
		}
		if (!c)
			continue;
		if (dtype == DLCP_DTYPE_FP32)
			((float *)acc)[i] += ((const float *)in)[i];
		else
			((int32_t *)acc)[i] = (int32_t)((uint32_t)((int32_t *)acc)[i] +
					(uint32_t)((const int32_t *)in)[i]);
		cnt[i] += c;
	}
	free(mask);
	return skipped;
}

long dlcp_reduce_finalize(int dtype, void *acc, const uint32_t *cnt, size_t n,
			  int mode, unsigned int world, const void *fallback)
{
	long fb = 0;
	size_t i;

	if ((dtype != DLCP_DTYPE_FP32 && dtype != DLCP_DTYPE_INT32) ||
	    mode < 0 || mode >= __DLCP_REDUCE_MAX || !world ||
	    (n && (!acc || !cnt)))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		uint32_t c = cnt[i];

		if (dtype == DLCP_DTYPE_FP32) {
			float *a = acc;

			if (!c) {
				a[i] = fallback ? ((const float *)fallback)[i] : 0.0f;
				fb++;
			} else if (mode == DLCP_REDUCE_MEAN) {
				if (c != 1)
					a[i] /= (float)c;
			} else if (mode == DLCP_REDUCE_SUM) {
				if (c != world)
					a[i] = a[i] * (float)world / (float)c;
			} else {
				a[i] /= (float)world;
			}
		} else {
			int32_t *a = acc;

			if (!c) {
				a[i] = fallback ? ((const int32_t *)fallback)[i] : 0;
				fb++;
			} else if (mode == DLCP_REDUCE_MEAN) {
				a[i] /= (int32_t)c;
			} else if (mode == DLCP_REDUCE_SUM) {
				if (c != world)
					a[i] = (int32_t)((int64_t)a[i] * world / c);
			} else {
				a[i] /= (int32_t)world;
			}
		}
	}
	return fb;
}

void dlcp_chunk_range(size_t n, unsigned int world, unsigned int i,
		      size_t *off, size_t *len)
{
	size_t q = n / world, r = n % world;

	*off = i * q + (i < r ? i : r);
	*len = q + (i < r);
}
