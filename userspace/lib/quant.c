// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp homomorphic quantization helpers (see libdlcp.h): stochastic
 * rounding to b-bit signed integers against a shared scale, integer wire
 * packing (4/8/16/32-bit elements), dequantization of counted integer sums
 * and a randomized block Hadamard rotation.
 *
 * A value x with shared scale s quantizes to q = floor(y + u), y = x * L / s,
 * u uniform in [0, 1), L = 2^(b-1) - 1, so E[q] = y and |q - y| < 1: the
 * decompressed q * s / L is unbiased with error below s / L. Integers from
 * different ranks add exactly; a sum of c contributions lies in [-cL, cL],
 * so with c <= DLCP_GROUP_MAX it fits an int32 (1024 * 127 < 2^31).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "libdlcp.h"

_Static_assert((long long)DLCP_GROUP_MAX * 127 < INT32_MAX,
	       "quantized sums must fit an int32 accumulator");

#define HB_MAX	16384	/* largest Hadamard block (elements) */
#define HB_MIN	16	/* smallest: a shorter tail is zero-padded */

static inline uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t dlcp_quant_seed(uint32_t seed, int rank, uint32_t tag,
			 uint32_t iteration)
{
	uint64_t s = (uint64_t)seed << 32 ^ (uint64_t)(uint32_t)rank;

	s = splitmix64(&s) ^ ((uint64_t)tag << 32 | iteration);
	return splitmix64(&s);
}

int dlcp_quant_levels(int bits)
{
	return (bits == 4 || bits == 8) ? (1 << (bits - 1)) - 1 : 0;
}

int dlcp_quantize(const float *x, int32_t *q, size_t n, float scale, int L,
		  uint64_t seed)
{
	uint64_t st = seed;
	float k;
	size_t i;

	if (L < 1 || L > INT8_MAX || !(scale > 0) || !isfinite(scale) ||
	    (n && (!x || !q)))
		return -EINVAL;
	k = (float)L / scale;
	for (i = 0; i < n; i++) {
		uint64_t r = splitmix64(&st);
		float y = x[i] * k, f;
		int32_t v;

		if (!(y > -L))		/* also NaN */
			y = y == y ? (float)-L : 0;
		else if (y > L)
			y = (float)L;
		f = floorf(y);
		v = (int32_t)f;
		/* up with probability y - f: two 24-bit draws per 64 bits */
		if ((float)(r >> 40) * 0x1p-24f < y - f)
			v++;
		q[i] = v;
	}
	return 0;
}

long dlcp_dequantize(const int32_t *sum, const uint32_t *cnt, float *out,
		     size_t n, float scale, int L, int mode,
		     unsigned int world)
{
	double u;
	long empty = 0;
	size_t i;

	if (L < 1 || L > INT8_MAX || !(scale >= 0) || !world || mode < 0 ||
	    mode >= __DLCP_REDUCE_MAX || (n && (!sum || !cnt || !out)))
		return -EINVAL;
	u = (double)scale / L;
	for (i = 0; i < n; i++) {
		double v = sum[i] * u;

		if (!cnt[i]) {
			out[i] = 0;
			empty++;
			continue;
		}
		switch (mode) {
		case DLCP_REDUCE_MEAN:
			v /= cnt[i];
			break;
		case DLCP_REDUCE_SUM:
			v = v * world / cnt[i];
			break;
		default:
			v /= world;
		}
		out[i] = (float)v;
	}
	return empty;
}

int dlcp_qwidth(const int32_t *v, size_t n)
{
	int32_t lo = 0, hi = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	if (lo >= -8 && hi <= 7)
		return 4;
	if (lo >= INT8_MIN && hi <= INT8_MAX)
		return 8;
	if (lo >= INT16_MIN && hi <= INT16_MAX)
		return 16;
	return 32;
}

size_t dlcp_qwire_bytes(size_t n, int width)
{
	return width == 4 ? (n + 1) / 2 : n * (size_t)(width / 8);
}

void dlcp_qpack(const int32_t *v, size_t n, int width, void *out)
{
	uint8_t *b = out;
	size_t i;

	switch (width) {
	case 4:
		for (i = 0; i + 1 < n; i += 2)
			b[i / 2] = (uint8_t)((v[i] & 0xf) | (v[i + 1] & 0xf) << 4);
		if (n & 1)
			b[n / 2] = (uint8_t)(v[n - 1] & 0xf);
		break;
	case 8:
		for (i = 0; i < n; i++)
			((int8_t *)out)[i] = (int8_t)v[i];
		break;
	case 16:
		for (i = 0; i < n; i++) {
			int16_t s = (int16_t)v[i];

			memcpy(b + 2 * i, &s, 2);
		}
		break;
	default:
		memcpy(out, v, n * 4);
	}
}

/* nibble -> signed value (two's complement in 4 bits) */
static const int8_t nib[16] = { 0, 1, 2, 3, 4, 5, 6, 7,
				-8, -7, -6, -5, -4, -3, -2, -1 };

void dlcp_qunpack(const void *in, size_t n, int width, int32_t *out)
{
	const uint8_t *b = in;
	size_t i;

	switch (width) {
	case 4:
		for (i = 0; i < n; i++)
			out[i] = nib[(b[i / 2] >> (4 * (i & 1))) & 0xf];
		break;
	case 8:
		for (i = 0; i < n; i++)
			out[i] = ((const int8_t *)in)[i];
		break;
	case 16:
		for (i = 0; i < n; i++) {
			int16_t s;

			memcpy(&s, b + 2 * i, 2);
			out[i] = s;
		}
		break;
	default:
		memcpy(out, in, n * 4);
	}
}

static size_t hb_block(size_t left)
{
	size_t b = HB_MAX;

	if (left < HB_MIN)
		return HB_MIN;
	while (b > left)
		b >>= 1;
	return b;
}

size_t dlcp_hadamard_len(size_t n)
{
	size_t off = 0;

	while (off < n)
		off += hb_block(n - off);
	return off;
}

static void fwht(float *x, size_t b)
{
	float norm = 1.0f / sqrtf((float)b);
	size_t h, i, j;

	for (h = 1; h < b; h <<= 1)
		for (i = 0; i < b; i += 2 * h)
			for (j = i; j < i + h; j++) {
				float a = x[j], c = x[j + h];

				x[j] = a + c;
				x[j + h] = a - c;
			}
	for (i = 0; i < b; i++)
		x[i] *= norm;
}

static void signs(float *x, size_t m, uint64_t seed)
{
	uint64_t st = seed, r = 0;
	size_t i;

	for (i = 0; i < m; i++) {
		if (!(i & 63))
			r = splitmix64(&st);
		if (r >> (i & 63) & 1)
			x[i] = -x[i];
	}
}

int dlcp_hadamard(float *x, size_t n, uint64_t seed, int inverse)
{
	size_t m = dlcp_hadamard_len(n), off, b;

	if (n && !x)
		return -EINVAL;
	if (!inverse)
		signs(x, m, seed);
	for (off = 0; off < n; off += b) {
		b = hb_block(n - off);
		fwht(x + off, b);
	}
	if (inverse)
		signs(x, m, seed);
	return 0;
}
