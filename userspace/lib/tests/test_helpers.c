// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Host unit tests (cmocka) of libdlcp's pure helpers: magnitude classes,
 * loss-aware accumulation/finalisation, chunking, address parsing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "libdlcp.h"

static void test_dtype_size(void **state)
{
	(void)state;
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_FP32), 4);
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_BF16), 2);
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_FP16), 2);
	assert_int_equal(dlcp_dtype_size(DLCP_DTYPE_INT8), 1);
	assert_int_equal(dlcp_dtype_size(99), 0);
}

static void test_classes_fp32(void **state)
{
	float v[12] = { 1, -2, 0.5f,	/* seg 0: max 2 */
			-100, 3, 4,	/* seg 1: max 100 (sign ignored) */
			0, 0, 0,	/* seg 2: 0 */
			7, -7, 6 };	/* seg 3: 7 */
	uint8_t cl[4];

	(void)state;
	assert_int_equal(dlcp_seg_classes(v, sizeof(v), DLCP_DTYPE_FP32, 12,
					  0.5, cl, 4), 4);
	assert_int_equal(cl[0], 1);
	assert_int_equal(cl[1], 0);
	assert_int_equal(cl[2], 1);
	assert_int_equal(cl[3], 0);
	/* fraction 0: all droppable; 1: all important; 0.25 -> 1 segment */
	assert_int_equal(dlcp_seg_classes(v, sizeof(v), DLCP_DTYPE_FP32, 12, 0.0, cl, 4), 4);
	assert_memory_equal(cl, ((uint8_t[]){ 1, 1, 1, 1 }), 4);
	assert_int_equal(dlcp_seg_classes(v, sizeof(v), DLCP_DTYPE_FP32, 12, 1.0, cl, 4), 4);
	assert_memory_equal(cl, ((uint8_t[]){ 0, 0, 0, 0 }), 4);
	assert_int_equal(dlcp_seg_classes(v, sizeof(v), DLCP_DTYPE_FP32, 12, 0.25, cl, 4), 4);
	assert_memory_equal(cl, ((uint8_t[]){ 1, 0, 1, 1 }), 4);
	/* segment size rounded down to whole elements: 14 -> 12 */
	assert_int_equal(dlcp_seg_classes(v, sizeof(v), DLCP_DTYPE_FP32, 14, 0.25, cl, 4), 4);
	/* 48 bytes in segments of 16: 3 segs, maxima 100, 4, 7 */
	assert_int_equal(dlcp_seg_classes(v, sizeof(v), DLCP_DTYPE_FP32, 16, 0.3, cl, 4), 3);
	assert_memory_equal(cl, ((uint8_t[]){ 0, 1, 1 }), 3);
}

static void test_classes_half(void **state)
{
	/* bf16 of 1.0 = 0x3f80, -4.0 = 0xc080, 0.5 = 0x3f00; fp16 same idea */
	uint16_t v[6] = { 0x3f80, 0x3f00, 0xc080, 0x3f00, 0x0000, 0x8000 };
	uint8_t cl[3];

	(void)state;
	assert_int_equal(dlcp_seg_classes(v, sizeof(v), DLCP_DTYPE_BF16, 4,
					  0.3, cl, 3), 3);
	assert_memory_equal(cl, ((uint8_t[]){ 1, 0, 1 }), 3);
	/* -0 counts as 0; ties keep the earlier segment */
	assert_int_equal(dlcp_seg_classes(v + 4, 4, DLCP_DTYPE_FP16, 2, 0.5, cl, 2), 2);
	assert_memory_equal(cl, ((uint8_t[]){ 0, 1 }), 2);
}

static void test_classes_bad(void **state)
{
	float v[4] = { 0 };
	uint8_t cl[4];

	(void)state;
	assert_int_equal(dlcp_seg_classes(v, 16, DLCP_DTYPE_INT32, 8, 0.5, cl, 4), -EINVAL);
	assert_int_equal(dlcp_seg_classes(v, 16, DLCP_DTYPE_FP32, 3, 0.5, cl, 4), -EINVAL);
	assert_int_equal(dlcp_seg_classes(v, 15, DLCP_DTYPE_FP32, 8, 0.5, cl, 4), -EINVAL);
	assert_int_equal(dlcp_seg_classes(v, 16, DLCP_DTYPE_FP32, 8, 1.5, cl, 4), -EINVAL);
	assert_int_equal(dlcp_seg_classes(v, 16, DLCP_DTYPE_FP32, 8, NAN, cl, 4), -EINVAL);
	assert_int_equal(dlcp_seg_classes(v, 16, DLCP_DTYPE_FP32, 4, 0.5, cl, 3), -ENOSPC);
	assert_int_equal(dlcp_seg_classes(v, 0, DLCP_DTYPE_FP32, 4, 0.5, cl, 0), 0);
}

/*
 * Three contributions of 8 floats; message data starts at byte 16 (after a
 * header). Contribution 1 lost bytes [16+8, 16+16) = elements 2,3;
 * contribution 2 lost [0, 20) (header region + element 0, a partial
 * element: element 0 counts as lost) and [44, 48) = element 7.
 */
static void test_accumulate_lost(void **state)
{
	float own[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	float c1[8] = { 10, 20, 0, 0, 50, 60, 70, 80 };
	float c2[8] = { 0, 200, 300, 400, 500, 600, 700, 0 };
	struct dlcp_range l1[] = { { 24, 8 } };
	struct dlcp_range l2[] = { { 0, 20 }, { 44, 4 } };
	float acc[8];
	uint32_t cnt[8];
	float want[8];
	int i;

	(void)state;
	memcpy(acc, own, sizeof(acc));
	for (i = 0; i < 8; i++)
		cnt[i] = 1;
	assert_int_equal(dlcp_reduce_accumulate(DLCP_DTYPE_FP32, acc, cnt, c1,
						NULL, 8, l1, 1, 16), 2);
	assert_int_equal(dlcp_reduce_accumulate(DLCP_DTYPE_FP32, acc, cnt, c2,
						NULL, 8, l2, 2, 16), 2);
	assert_memory_equal(cnt, ((uint32_t[]){ 2, 3, 2, 2, 3, 3, 3, 2 }),
			    sizeof(cnt));
	/* MEAN: over the contributions that arrived, element by element */
	want[0] = (1 + 10) / 2.0f;
	want[1] = (2 + 20 + 200) / 3.0f;
	want[2] = (3 + 300) / 2.0f;
	want[3] = (4 + 400) / 2.0f;
	want[4] = (5 + 50 + 500) / 3.0f;
	want[5] = (6 + 60 + 600) / 3.0f;
	want[6] = (7 + 70 + 700) / 3.0f;
	want[7] = (8 + 80) / 2.0f;
	{
		float m[8];

		memcpy(m, acc, sizeof(m));
		assert_int_equal(dlcp_reduce_finalize(DLCP_DTYPE_FP32, m, cnt, 8,
						      DLCP_REDUCE_MEAN, 3, NULL), 0);
		for (i = 0; i < 8; i++)
			assert_float_equal(m[i], want[i], 1e-4);
	}
	{	/* ZEROFILL: divide by N */
		float m[8];

		memcpy(m, acc, sizeof(m));
		dlcp_reduce_finalize(DLCP_DTYPE_FP32, m, cnt, 8,
				     DLCP_REDUCE_MEAN_ZEROFILL, 3, NULL);
		assert_float_equal(m[0], 11 / 3.0f, 1e-4);
		assert_float_equal(m[1], 222 / 3.0f, 1e-4);
	}
	{	/* SUM: scaled by N/arrived */
		float m[8];

		memcpy(m, acc, sizeof(m));
		dlcp_reduce_finalize(DLCP_DTYPE_FP32, m, cnt, 8, DLCP_REDUCE_SUM, 3, NULL);
		assert_float_equal(m[0], 11 * 1.5f, 1e-4);
		assert_float_equal(m[1], 222, 1e-4);
	}
}

static void test_accumulate_counts(void **state)
{
	/* an incoming partial sum carrying per-element counts */
	int32_t acc[4] = { 1, 1, 1, 1 };
	uint32_t cnt[4] = { 1, 1, 1, 1 };
	int32_t in[4] = { 6, 4, 0, 2 };
	uint32_t in_cnt[4] = { 3, 2, 0, 1 };
	int32_t fb[4] = { -1, -2, -3, -4 };

	(void)state;
	assert_int_equal(dlcp_reduce_accumulate(DLCP_DTYPE_INT32, acc, cnt, in,
						in_cnt, 4, NULL, 0, 0), 0);
	assert_memory_equal(acc, ((int32_t[]){ 7, 5, 1, 3 }), sizeof(acc));
	assert_memory_equal(cnt, ((uint32_t[]){ 4, 3, 1, 2 }), sizeof(cnt));
	cnt[2] = 0;	/* nobody's value: fallback */
	assert_int_equal(dlcp_reduce_finalize(DLCP_DTYPE_INT32, acc, cnt, 4,
					      DLCP_REDUCE_SUM, 4, fb), 1);
	assert_memory_equal(acc, ((int32_t[]){ 7, 6, -3, 6 }), sizeof(acc));
}

static void test_accumulate_bad(void **state)
{
	float a[2] = { 0 }, b[2] = { 0 };
	uint32_t c[2] = { 0 };

	(void)state;
	assert_int_equal(dlcp_reduce_accumulate(DLCP_DTYPE_FP16, a, c, b, NULL, 2,
						NULL, 0, 0), -EINVAL);
	assert_int_equal(dlcp_reduce_accumulate(DLCP_DTYPE_FP32, NULL, c, b, NULL, 2,
						NULL, 0, 0), -EINVAL);
	assert_int_equal(dlcp_reduce_accumulate(DLCP_DTYPE_FP32, a, c, b, NULL, 2,
						NULL, 1, 0), -EINVAL);
	assert_int_equal(dlcp_reduce_finalize(DLCP_DTYPE_FP32, a, c, 2, 7, 2, NULL),
			 -EINVAL);
	assert_int_equal(dlcp_reduce_finalize(DLCP_DTYPE_FP32, a, c, 2,
					      DLCP_REDUCE_MEAN, 0, NULL), -EINVAL);
	/* lost range past the data: ignored; zero-length data: nothing */
	assert_int_equal(dlcp_reduce_accumulate(DLCP_DTYPE_FP32, a, c, b, NULL, 2,
			 (struct dlcp_range[]){ { 100, 4 } }, 1, 0), 0);
	assert_int_equal(dlcp_reduce_accumulate(DLCP_DTYPE_FP32, a, c, b, NULL, 0,
						NULL, 0, 0), 0);
}

static void test_chunks(void **state)
{
	size_t off, len, total, n, w, i;

	(void)state;
	for (n = 0; n < 40; n++)
		for (w = 1; w < 9; w++) {
			total = 0;
			for (i = 0; i < w; i++) {
				dlcp_chunk_range(n, (unsigned int)w, (unsigned int)i,
						 &off, &len);
				assert_int_equal(off, total);
				assert_true(len == n / w || len == n / w + 1);
				total += len;
			}
			assert_int_equal(total, n);
		}
}

static void test_parse_addr(void **state)
{
	struct sockaddr_in a;

	(void)state;
	assert_int_equal(dlcp_parse_addr("10.77.0.3:29600", &a), 0);
	assert_int_equal(ntohs(a.sin_port), 29600);
	assert_int_equal(ntohl(a.sin_addr.s_addr), 0x0a4d0003);
	assert_int_equal(dlcp_parse_addr("127.0.0.1:0", &a), 0);
	assert_int_equal(dlcp_parse_addr("127.0.0.1", &a), -EINVAL);
	assert_int_equal(dlcp_parse_addr("127.0.0.1:", &a), -EINVAL);
	assert_int_equal(dlcp_parse_addr("127.0.0.1:65536", &a), -EINVAL);
	assert_int_equal(dlcp_parse_addr("127.0.0.1:-1", &a), -EINVAL);
	assert_int_equal(dlcp_parse_addr("127.0.0.1:12x", &a), -EINVAL);
	assert_int_equal(dlcp_parse_addr("host.example:80", &a), -EINVAL);
	assert_int_equal(dlcp_parse_addr(":80", &a), -EINVAL);
	assert_int_equal(dlcp_parse_addr(NULL, &a), -EINVAL);
}

static void test_parse_group(void **state)
{
	struct sockaddr_in a[4];

	(void)state;
	assert_int_equal(dlcp_parse_group("# ranks\n10.77.0.1:1\n\n  10.77.0.2:2  # two\n"
					  "10.77.0.3:3", a, 4), 3);
	assert_int_equal(ntohs(a[1].sin_port), 2);
	assert_int_equal(ntohl(a[2].sin_addr.s_addr), 0x0a4d0003);
	assert_int_equal(dlcp_parse_group("", a, 4), 0);
	assert_int_equal(dlcp_parse_group("1.2.3.4:1\n1.2.3.4:2\n", a, 1), -E2BIG);
	assert_int_equal(dlcp_parse_group("1.2.3.4:1\nbogus\n", a, 4), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dtype_size),
		cmocka_unit_test(test_classes_fp32),
		cmocka_unit_test(test_classes_half),
		cmocka_unit_test(test_classes_bad),
		cmocka_unit_test(test_accumulate_lost),
		cmocka_unit_test(test_accumulate_counts),
		cmocka_unit_test(test_accumulate_bad),
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_parse_addr),
		cmocka_unit_test(test_parse_group),
	};

	return cmocka_run_group_tests_name("libdlcp_helpers", tests, NULL, NULL);
}
