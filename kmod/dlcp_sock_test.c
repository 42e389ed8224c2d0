// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of message ids (dlcp_sock.c): each destination's ids are
 * offset by a keyed hash of it, and the offset moves forward every epoch
 * by an amount no earlier id predicts, never back onto ids a receiver
 * may still remember.
 */
#include <linux/siphash.h>
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

#define IT_EPOCHS	128

static void it_addr(struct in6_addr *a, u32 v4)
{
	ipv6_addr_set_v4mapped(cpu_to_be32(v4), a);
}

/*
 * Every epoch the offset grows by more than 0 and less than twice
 * 2^DLCP_ID_EPOCH_BITS, so ids only grow; the steps differ (a secret part),
 * and in IT_EPOCHS epochs the offset moves about IT_EPOCHS times
 * 2^DLCP_ID_EPOCH_BITS, half its range: far from where it was.
 */
static void dlcp_sock_test_id_epochs(struct kunit *test)
{
	siphash_key_t key = { { 0x0123456789abcdefULL, 0xfedcba9876543210ULL } };
	u32 prev, off, step, first_step = 0;
	u64 total = 0;
	bool steps_differ = false;
	struct in6_addr a;
	u64 e;

	it_addr(&a, 0x0a000002);
	prev = dlcp_msg_id_offset(&key, &a, htons(7000), 1000);
	for (e = 1001; e < 1000 + IT_EPOCHS; e++) {
		off = dlcp_msg_id_offset(&key, &a, htons(7000), e);
		step = off - prev;
		KUNIT_EXPECT_GT(test, step, 0);
		KUNIT_EXPECT_LT(test, step, 2 * BIT(DLCP_ID_EPOCH_BITS));
		if (!first_step)
			first_step = step;
		steps_differ |= step != first_step;
		total += step;
		prev = off;
	}
	KUNIT_EXPECT_TRUE(test, steps_differ);
	KUNIT_EXPECT_GT(test, total,
			(u64)(IT_EPOCHS - 3) * BIT(DLCP_ID_EPOCH_BITS));
	KUNIT_EXPECT_LT(test, total, (u64)(IT_EPOCHS + 1) * BIT(DLCP_ID_EPOCH_BITS));
}

/* Destinations, ports and sockets (keys) get unrelated offsets. */
static void dlcp_sock_test_id_keyed(struct kunit *test)
{
	siphash_key_t k1 = { { 1, 2 } }, k2 = { { 3, 4 } };
	struct in6_addr a, b;
	u32 o;

	it_addr(&a, 0x0a000002);
	it_addr(&b, 0x0a000003);
	o = dlcp_msg_id_offset(&k1, &a, htons(7000), 5);
	KUNIT_EXPECT_EQ(test, o, dlcp_msg_id_offset(&k1, &a, htons(7000), 5));
	KUNIT_EXPECT_NE(test, o, dlcp_msg_id_offset(&k2, &a, htons(7000), 5));
	KUNIT_EXPECT_NE(test, o, dlcp_msg_id_offset(&k1, &b, htons(7000), 5));
	KUNIT_EXPECT_NE(test, o, dlcp_msg_id_offset(&k1, &a, htons(7001), 5));
}

static struct kunit_case dlcp_sock_test_cases[] = {
	KUNIT_CASE(dlcp_sock_test_id_epochs),
	KUNIT_CASE(dlcp_sock_test_id_keyed),
	{}
};

struct kunit_suite dlcp_sock_test_suite = {
	.name = "dlcp_sock",
	.test_cases = dlcp_sock_test_cases,
};
