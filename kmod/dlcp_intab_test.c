// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the incoming-message table's count of the bytes its
 * messages still miss (dlcp_sock.in_rest), which bounds how many received
 * packets a socket may keep by reference (dlcp_in_may_keep()).
 */
#include <linux/slab.h>
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

static struct dlcp_in_msg *it_msg(u32 id, u32 len)
{
	struct dlcp_in_msg *m = kzalloc(sizeof(*m), GFP_KERNEL);

	if (m) {
		m->key.saddr.s6_addr32[3] = htonl(0x0a000001);
		m->key.sport = htons(4000);
		m->key.id = id;
		m->len = len;
	}
	return m;
}

/* @m, being received, gets @bytes more */
static void it_got(struct dlcp_sock *dsk, struct dlcp_in_msg *m, u32 bytes)
	__must_hold(&dsk->lock)
{
	m->have.bytes += bytes;
	dlcp_intab_got(dsk, m, bytes);
}

/*
 * Messages added count their length, bytes received come off, and a
 * message taken off the table takes what it still missed with it.
 */
static void dlcp_intab_test_rest(struct kunit *test)
{
	struct dlcp_sock *dsk = kzalloc(sizeof(*dsk), GFP_KERNEL);
	struct dlcp_in_msg *a, *b;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dsk);
	a = it_msg(1, 100000);
	b = it_msg(2, 3000);
	if (!a || !b || dlcp_intab_init(dsk)) {
		kfree(a);
		kfree(b);
		kfree(dsk);
		KUNIT_ASSERT_TRUE(test, false);
	}
	spin_lock_init(&dsk->lock);
	spin_lock_bh(&dsk->lock);
	KUNIT_EXPECT_EQ(test, dlcp_intab_insert(dsk, a), 0);
	KUNIT_EXPECT_EQ(test, dsk->in_rest, 100000);
	KUNIT_EXPECT_EQ(test, dlcp_intab_insert(dsk, b), 0);
	KUNIT_EXPECT_EQ(test, dsk->in_rest, 103000);
	it_got(dsk, a, 1428);
	it_got(dsk, b, 1428);
	it_got(dsk, a, 1428);
	KUNIT_EXPECT_EQ(test, dsk->in_rest, 103000 - 3 * 1428);
	/* b ends (complete or not): its missing 1572 bytes go with it */
	dlcp_intab_remove(dsk, b);
	KUNIT_EXPECT_EQ(test, dsk->in_rest, 100000 - 2 * 1428);
	it_got(dsk, a, 100000 - 2 * 1428);
	KUNIT_EXPECT_EQ(test, dsk->in_rest, 0);
	dlcp_intab_remove(dsk, a);
	KUNIT_EXPECT_EQ(test, dsk->in_rest, 0);
	KUNIT_EXPECT_EQ(test, dsk->nr_in_msgs, 0);
	spin_unlock_bh(&dsk->lock);
	dlcp_intab_destroy(dsk);
	kfree(a);
	kfree(b);
	kfree(dsk);
}

static struct kunit_case dlcp_intab_test_cases[] = {
	KUNIT_CASE(dlcp_intab_test_rest),
	{}
};

struct kunit_suite dlcp_intab_test_suite = {
	.name = "dlcp_intab",
	.test_cases = dlcp_intab_test_cases,
};
