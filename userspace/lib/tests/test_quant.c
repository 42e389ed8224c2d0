// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp homomorphic quantization, pure helpers. Prints TAP.
 *
 * Unbiasedness: N ranks quantize fixed vectors with a shared scale; over S
 * seeds the mean error of the decompressed sum, per element, must stay
 * within 5 standard deviations of the rounding noise (each rank's rounding
 * error has variance <= (scale/L)^2 / 4, so the mean over S seeds of the
 * sum of N has sd <= sqrt(N / (4 S)) * scale / L), and the mean over all
 * elements within 5 of its own sd.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "tap.h"


static double urand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*s >> 11) * 0x1p-53;
}

static void unbiased_l(int bits, int hadamard, int L)
{
	enum { N = 4, S = 1000, n = 1000 };
	int r, s;
	size_t m = hadamard ? dlcp_hadamard_len(n) : n, i;
	float *x = calloc((size_t)N * m, sizeof(float)), *y = calloc(m, sizeof(float));
	float *xr = calloc(m, sizeof(float));
	double *err = calloc(n, sizeof(double)), truth, scale = 0, sd, worst = 0, all = 0;
	int32_t *q = calloc(m, sizeof(int32_t)), *sum = calloc(m, sizeof(int32_t));
	uint32_t *cnt = calloc(m, sizeof(uint32_t));
	uint64_t rs = 42;

	for (r = 0; r < N; r++)
		for (i = 0; i < n; i++)
			x[r * m + i] = (float)(urand(&rs) * 2 - 1) * (r + 1);
	for (s = 0; s < S; s++) {
		uint64_t rot = dlcp_quant_seed(7, -1, 3, (uint32_t)s);
		float sc = 0;

		memset(sum, 0, m * sizeof(*sum));
		/* scale: max over ranks after the rotation */
		for (r = 0; r < N; r++) {
			memcpy(xr, x + r * m, m * sizeof(float));
			if (hadamard)
				dlcp_hadamard(xr, n, rot, 0);
			for (i = 0; i < m; i++)
				sc = fmaxf(sc, fabsf(xr[i]));
		}
		for (r = 0; r < N; r++) {
			memcpy(xr, x + r * m, m * sizeof(float));
			if (hadamard)
				dlcp_hadamard(xr, n, rot, 0);
			dlcp_quantize(xr, q, m, sc, L,
				      dlcp_quant_seed((uint32_t)s, r, 3, 9));
			for (i = 0; i < m; i++)
				sum[i] += q[i];
		}
		for (i = 0; i < m; i++)
			cnt[i] = N;
		dlcp_dequantize(sum, cnt, y, m, sc, L, DLCP_REDUCE_SUM, N);
		if (hadamard)
			dlcp_hadamard(y, n, rot, 1);
		for (i = 0; i < n; i++) {
			truth = 0;
			for (r = 0; r < N; r++)
				truth += x[r * m + i];
			err[i] += y[i] - truth;
		}
		if (sc > scale)
			scale = sc;
	}
	/* hadamard: error of an element is a mix of m errors: same bound */
	sd = sqrt(N / (4.0 * S)) * scale / L;
	for (i = 0; i < n; i++) {
		err[i] /= S;
		all += err[i];
		if (fabs(err[i]) > worst)
			worst = fabs(err[i]);
	}
	all /= n;
	report(worst < 5 * sd && fabs(all) < 5 * sd / sqrt(n),
	       "unbiased: %d bits (L=%d)%s, %d ranks, %d seeds: max |mean error| "
	       "%.2e (%.2f sd), mean error over elements %.2e (bound 5 sd = %.2e, "
	       "scale %.2f)", bits, L, hadamard ? " + hadamard" : "", N, S, worst,
	       worst / sd, all, 5 * sd, scale);
	free(x);
	free(y);
	free(xr);
	free(err);
	free(q);
	free(sum);
	free(cnt);
}

static void unbiased(int bits, int hadamard)
{
	unbiased_l(bits, hadamard, dlcp_quant_levels(bits));
}

static void bounded(int bits)
{
	enum { n = 100000 };
	int L = dlcp_quant_levels(bits);
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	int32_t *q = malloc(n * sizeof(int32_t));
	uint32_t *cnt = malloc(n * sizeof(uint32_t));
	double worst = 0;
	uint64_t rs = 1;
	float scale = 3.5f;
	int inrange = 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x[i] = (float)((urand(&rs) * 2 - 1) * scale);
		cnt[i] = 1;
	}
	x[0] = scale;
	x[1] = -scale;
	dlcp_quantize(x, q, n, scale, L, 99);
	dlcp_dequantize(q, cnt, y, n, scale, L, DLCP_REDUCE_SUM, 1);
	for (i = 0; i < n; i++) {
		if (q[i] < -L || q[i] > L)
			inrange = 0;
		if (fabs(y[i] - x[i]) > worst)
			worst = fabs(y[i] - x[i]);
	}
	report(inrange && worst < scale / L * (1 + 1e-5) && q[0] == L && q[1] == -L,
	       "bounded: %d bits: q in [-%d, %d], max |error| %.4f < scale/L = %.4f",
	       bits, L, L, worst, scale / L);
	free(x);
	free(y);
	free(q);
	free(cnt);
}

static void packing(void)
{
	static const int widths[] = { 4, 8, 16, 32 };
	static const long lim[] = { 8, 128, 32768, 2147483647L };
	enum { n = 1001 };
	int32_t v[n], w[n];
	uint8_t buf[n * 4 + 1];
	uint64_t rs = 5;
	int k, ok = 1;
	size_t i;

	for (k = 0; k < 4; k++) {
		long long s1 = 0, s2 = 0;

		for (i = 0; i < n; i++) {
			double u = urand(&rs);

			v[i] = (int32_t)((long long)(u * (2.0 * lim[k])) - lim[k]);
			if (v[i] > lim[k] - 1)
				v[i] = (int32_t)(lim[k] - 1);
			s1 += v[i];
		}
		v[0] = (int32_t)(-lim[k]);
		v[1] = (int32_t)(lim[k] - 1);
		s1 += v[0] + v[1];
		if (dlcp_qwidth(v, n) != widths[k])
			ok = 0;
		memset(buf, 0xa5, sizeof(buf));
		dlcp_qpack(v, n, widths[k], buf);
		dlcp_qunpack(buf, n, widths[k], w);
		for (i = 0; i < n; i++)
			s2 += w[i];
		if (memcmp(v, w, sizeof(v)))
			ok = 0;
		(void)s1;
		(void)s2;
	}
	report(ok && dlcp_qwire_bytes(7, 4) == 4 && dlcp_qwire_bytes(7, 16) == 14,
	       "pack/unpack 4/8/16/32-bit round trip exact, narrowest width chosen");
}

/* integer sums at an aggregator: exact, and no overflow up to the max */
static void aggregate(void)
{
	int bits, ok = 1;

	for (bits = 4; bits <= 8; bits += 4) {
		int L = dlcp_quant_levels(bits), r;
		int32_t acc[3] = { 0, 0, 0 }, in[3], w[3];
		uint8_t wire[12];

		for (r = 0; r < DLCP_GROUP_MAX; r++) {
			in[0] = L;
			in[1] = -L;
			in[2] = (r & 1) ? L : -L;
			/* on the wire at the partial sum's narrowest width */
			acc[0] += in[0];
			acc[1] += in[1];
			acc[2] += in[2];
			dlcp_qpack(acc, 3, dlcp_qwidth(acc, 3), wire);
			dlcp_qunpack(wire, 3, dlcp_qwidth(acc, 3), w);
			if (memcmp(w, acc, sizeof(w)))
				ok = 0;
		}
		if (acc[0] != DLCP_GROUP_MAX * L || acc[1] != -DLCP_GROUP_MAX * L ||
		    acc[2] != 0)
			ok = 0;
	}
	report(ok, "aggregation of %d contributions at +-L: exact int32 sums, "
	       "no overflow (|sum| <= %d)", DLCP_GROUP_MAX, DLCP_GROUP_MAX * 127);
}

static void hadamard(void)
{
	static const size_t ns[] = { 1, 15, 16, 17, 1000, 40000 };
	int ok = 1, k;

	for (k = 0; k < 6; k++) {
		size_t n = ns[k], m = dlcp_hadamard_len(n), i;
		float *x = calloc(m, sizeof(float)), *y = calloc(m, sizeof(float));
		double n1 = 0, n2 = 0, d = 0;
		uint64_t rs = 3;

		for (i = 0; i < n; i++)
			x[i] = y[i] = (float)(urand(&rs) - 0.5);
		dlcp_hadamard(y, n, 1234, 0);
		for (i = 0; i < m; i++) {
			n1 += (double)x[i] * x[i];
			n2 += (double)y[i] * y[i];
		}
		dlcp_hadamard(y, n, 1234, 1);
		for (i = 0; i < m; i++)
			d = fmax(d, fabs(y[i] - x[i]));
		if (m < n || m >= n + 16 || fabs(n1 - n2) > 1e-4 * n1 || d > 1e-5)
			ok = 0;
		free(x);
		free(y);
	}
	report(ok, "hadamard: orthonormal, inverse restores, padding < 16");
}

int main(void)
{
	printf("TAP version 13\n# libdlcp quantization helpers\n");
	report(dlcp_quant_levels(4) == 7 && dlcp_quant_levels(8) == 127 &&
	       !dlcp_quant_levels(5), "levels 4 -> 7, 8 -> 127, others 0");
	bounded(8);
	bounded(4);
	unbiased(8, 0);
	unbiased(4, 0);
	unbiased(8, 1);
	unbiased(4, 1);
	unbiased_l(8, 0, 127 / 4);	/* fit: 4 ranks' sum fits 8 bits */
	packing();
	aggregate();
	hadamard();
	return tap_done();
}
