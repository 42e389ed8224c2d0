// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP socket API selftests, control messages: the per-message metadata
 * of DLCP_CMSG_SEND and DLCP_CMSG_RECV and the checks of what a sender
 * passes, critical ranges, segment classes, truncated control data, and
 * the send completions of the error queue.
 *
 * Every test runs in a network namespace of its own (the harness forks one
 * child per test, and the fixture unshares its netns), on 127.0.0.1, so
 * ports and counters start from a clean slate. Needs root (CAP_SYS_ADMIN
 * for unshare(CLONE_NEWNET)) and the dlcp module loaded. The fixture and
 * helpers are in dlcp_api.h.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <linux/errqueue.h>

#include "dlcp_api.h"

/* ------------------------------------------------------------------ */
/* Control messages                                                     */
/* ------------------------------------------------------------------ */

TEST_F(dlcp, cmsg_metadata_round_trip)
{
	struct dlcp_send_info si = good_info();
	uint8_t buf[4096], in[4096];
	struct rx r;

	dlcp_payload_fill(buf, sizeof(buf), 3);
	ASSERT_EQ(4096, send_info(self->tx, &self->to, buf, 4096, &si))
		TH_LOG("sendmsg with DLCP_CMSG_SEND: %s", strerror(errno));
	ASSERT_EQ(4096, recv_full(self->rx, in, sizeof(in), 0, &r));
	EXPECT_EQ(0, memcmp(buf, in, 4096));
	EXPECT_EQ(0, r.flags & MSG_CTRUNC);
	ASSERT_TRUE(r.have_info) TH_LOG("no DLCP_CMSG_RECV");
	EXPECT_EQ(si.tensor_id, r.info.tensor_id);
	EXPECT_EQ(si.iteration, r.info.iteration);
	EXPECT_EQ(si.layer, r.info.layer);
	EXPECT_EQ(si.dtype, r.info.dtype);
	EXPECT_EQ(si.flags, r.info.flags);
	EXPECT_EQ(DLCP_RECV_EXACT, r.info.status);
	EXPECT_EQ(4096, r.info.msg_len);
	EXPECT_EQ(0, r.info.bytes_lost);
	EXPECT_EQ(0, r.info.nr_lost_ranges);
	EXPECT_EQ(0, r.info.loss_budget_ppm);
	EXPECT_EQ(0, r.info.reserved0);
	EXPECT_EQ(0, r.info.reserved[0]);
	EXPECT_EQ(0, r.info.reserved[1]);
	EXPECT_FALSE(r.have_lost);
}

/* Without DLCP_CMSG_SEND, the socket defaults go with the message. */
TEST_F(dlcp, cmsg_socket_defaults)
{
	int layer = 9, budget = 250000;
	uint8_t buf[64];
	struct rx r;

	ASSERT_EQ(0, setsockopt(self->tx, SOL_DLCP, DLCP_LAYER, &layer,
				sizeof(layer)));
	ASSERT_EQ(0, setsockopt(self->tx, SOL_DLCP, DLCP_LOSS_BUDGET, &budget,
				sizeof(budget)));
	ASSERT_EQ(10, sendto(self->tx, "0123456789", 10, 0,
			     (struct sockaddr *)&self->to, sizeof(self->to)));
	ASSERT_EQ(10, recv_full(self->rx, buf, sizeof(buf), 0, &r));
	ASSERT_TRUE(r.have_info);
	EXPECT_EQ(9, r.info.layer);
	EXPECT_EQ(DLCP_DTYPE_BYTES, r.info.dtype);
	EXPECT_EQ(250000, r.info.loss_budget_ppm);
	EXPECT_EQ(10, r.info.msg_len);
	/* Nothing is lost on loopback, whatever the budget. */
	EXPECT_EQ(DLCP_RECV_EXACT, r.info.status);
	EXPECT_EQ(0, r.info.bytes_lost);
}

/* Two messages, two sets of metadata: each arrives with its own. */
TEST_F(dlcp, cmsg_metadata_per_message)
{
	struct dlcp_send_info a = good_info(), b = good_info();
	uint8_t buf[64];
	struct rx r;
	int i, seen = 0;

	a.tensor_id = 1;
	b.tensor_id = 2;
	b.dtype = DLCP_DTYPE_INT8;
	b.layer = 3;
	ASSERT_EQ(8, send_info(self->tx, &self->to, "aaaaaaaa", 8, &a));
	ASSERT_EQ(3, send_info(self->tx, &self->to, "bbb", 3, &b));
	for (i = 0; i < 2; i++) {
		ASSERT_LT(0, recv_full(self->rx, buf, sizeof(buf), 0, &r));
		ASSERT_TRUE(r.have_info);
		if (r.n == 8) {
			EXPECT_EQ(1, r.info.tensor_id);
			EXPECT_EQ(DLCP_DTYPE_FP32, r.info.dtype);
			EXPECT_EQ(42, r.info.layer);
			EXPECT_EQ('a', buf[0]);
			seen |= 1;
		} else {
			EXPECT_EQ(3, r.n);
			EXPECT_EQ(2, r.info.tensor_id);
			EXPECT_EQ(DLCP_DTYPE_INT8, r.info.dtype);
			EXPECT_EQ(3, r.info.layer);
			EXPECT_EQ('b', buf[0]);
			seen |= 2;
		}
	}
	EXPECT_EQ(3, seen);
}

TEST_F(dlcp, cmsg_bad_length)
{
	struct {
		struct dlcp_send_info si;
		uint8_t pad[8];
	} big = { .si = good_info() };
	struct dlcp_send_info si = good_info();
	uint8_t buf[16] = { 0 };

	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP,
				DLCP_CMSG_SEND, &si, sizeof(si),
				CMSG_LEN(sizeof(si) - 4)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP,
				DLCP_CMSG_SEND, &big, sizeof(big),
				CMSG_LEN(sizeof(si) + 4)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP,
				DLCP_CMSG_SEND, &si, sizeof(si), CMSG_LEN(0)));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, cmsg_unknown_flags)
{
	struct dlcp_send_info si;
	uint8_t buf[16] = { 0 };
	unsigned int bit;

	for (bit = 0; bit < 16; bit++) {
		if ((1u << bit) & DLCP_MSG_FLAGS_SEND)
			continue;
		si = good_info();
		si.flags |= (uint16_t)(1u << bit);
		EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si))
			TH_LOG("flag 0x%x accepted", 1u << bit);
		EXPECT_EQ(EINVAL, errno);
	}
	assert_empty(_metadata, self->rx);
}

/* Reserved fields, and fields whose flag is not set, must be zero. */
TEST_F(dlcp, cmsg_reserved_nonzero)
{
	struct dlcp_send_info si;
	uint8_t buf[16] = { 0 };
	int i;

	for (i = 0; i < 4; i++) {
		si = good_info();
		switch (i) {
		case 0:
			si.reserved1 = 0x8000;
			break;
		case 1:
			si.reserved = 1;
			break;
		case 2:
			si.prio = 1;		/* without DLCP_MSG_HAS_PRIO */
			break;
		case 3:
			si.droppable_ppm = 1;	/* without HAS_DROPPABLE */
			break;
		}
		EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si))
			TH_LOG("case %d not checked", i);
		EXPECT_EQ(EINVAL, errno);
	}
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, cmsg_bad_dtype)
{
	struct dlcp_send_info si = good_info();
	uint8_t buf[16] = { 0 };

	si.dtype = __DLCP_DTYPE_MAX;
	EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si));
	EXPECT_EQ(EINVAL, errno);
	si.dtype = 255;
	EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, cmsg_loss_budget_range)
{
	struct dlcp_send_info si = good_info();
	uint8_t buf[16] = { 0 };
	struct rx r;

	si.flags |= DLCP_MSG_HAS_BUDGET;
	si.loss_budget_ppm = DLCP_PPM_MAX + 1;
	EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si));
	EXPECT_EQ(EINVAL, errno);
	si.loss_budget_ppm = 0xffffffff;
	EXPECT_EQ(-1, send_info(self->tx, &self->to, buf, 16, &si));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);

	si.loss_budget_ppm = DLCP_PPM_MAX;
	ASSERT_EQ(16, send_info(self->tx, &self->to, buf, 16, &si))
		TH_LOG("budget %u refused: %s", DLCP_PPM_MAX, strerror(errno));
	ASSERT_EQ(16, recv_full(self->rx, buf, sizeof(buf), 0, &r));
	ASSERT_TRUE(r.have_info);
	EXPECT_EQ(DLCP_PPM_MAX, r.info.loss_budget_ppm);
	EXPECT_EQ(si.flags, r.info.flags);
}

/* The message length must be a whole number of elements. */
TEST_F(dlcp, cmsg_dtype_alignment)
{
	static const struct {
		uint8_t dtype;
		size_t len;
		int ok;
	} cases[] = {
		{ DLCP_DTYPE_BYTES, 3, 1 },
		{ DLCP_DTYPE_INT8, 3, 1 },
		{ DLCP_DTYPE_FP32, 4, 1 },
		{ DLCP_DTYPE_FP32, 6, 0 },
		{ DLCP_DTYPE_FP32, 1, 0 },
		{ DLCP_DTYPE_FP32, 4099, 0 },
		{ DLCP_DTYPE_FP32, 4100, 1 },
		{ DLCP_DTYPE_FP16, 3, 0 },
		{ DLCP_DTYPE_FP16, 2, 1 },
		{ DLCP_DTYPE_BF16, 5, 0 },
		{ DLCP_DTYPE_BF16, 6, 1 },
		{ DLCP_DTYPE_INT32, 2, 0 },
		{ DLCP_DTYPE_INT32, 8, 1 },
	};
	uint8_t buf[4100], in[4100];
	unsigned int i, nok = 0;
	struct dlcp_send_info si;
	struct rx r;

	memset(buf, 0x33, sizeof(buf));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ssize_t n;

		si = good_info();
		si.dtype = cases[i].dtype;
		n = send_info(self->tx, &self->to, buf, cases[i].len, &si);
		if (cases[i].ok) {
			EXPECT_EQ(cases[i].len, n)
				TH_LOG("dtype %u len %zu: %s", cases[i].dtype,
				       cases[i].len, strerror(errno));
			nok++;
		} else {
			EXPECT_EQ(-1, n)
				TH_LOG("dtype %u len %zu accepted",
				       cases[i].dtype, cases[i].len);
			EXPECT_EQ(EINVAL, errno);
		}
	}
	for (i = 0; i < nok; i++) {
		ASSERT_LT(0, recv_full(self->rx, in, sizeof(in), 0, &r));
		ASSERT_TRUE(r.have_info);
		EXPECT_EQ(0, r.n % dlcp_dtype_size(r.info.dtype));
	}
	assert_empty(_metadata, self->rx);
}

TEST_F(dlcp, cmsg_unknown_type)
{
	uint32_t v = 0;
	uint8_t buf[16] = { 0 };

	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP, 99,
				&v, sizeof(v), CMSG_LEN(sizeof(v))));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 16, SOL_DLCP, 0,
				&v, sizeof(v), CMSG_LEN(sizeof(v))));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

static ssize_t send_crit(int fd, const struct sockaddr_in *to,
			 const void *buf, size_t len,
			 const struct dlcp_range *r, size_t n)
{
	return send_cmsg(fd, to, buf, len, SOL_DLCP, DLCP_CMSG_CRITICAL, r,
			 n * sizeof(*r), CMSG_LEN(n * sizeof(*r)));
}

/* Critical ranges: each non-empty, inside the message, a bounded number. */
TEST_F(dlcp, cmsg_critical_ranges)
{
	static struct dlcp_range many[DLCP_MAX_CRIT_RANGES + 1];
	struct dlcp_range r[2] = { { 0, 10 }, { 100, 50 } };
	uint8_t buf[2048], in[2048];
	unsigned int i;
	struct rx rx;

	dlcp_payload_fill(buf, sizeof(buf), 11);
	ASSERT_EQ(1000, send_crit(self->tx, &self->to, buf, 1000, r, 2))
		TH_LOG("valid critical ranges: %s", strerror(errno));
	ASSERT_EQ(1000, recv_full(self->rx, in, sizeof(in), 0, &rx));
	EXPECT_EQ(0, memcmp(buf, in, 1000));
	ASSERT_TRUE(rx.have_info);
	EXPECT_EQ(DLCP_RECV_EXACT, rx.info.status);

	/* the last byte is inside, one more is not */
	r[0] = (struct dlcp_range){ 990, 10 };
	EXPECT_EQ(1000, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(1000, recv(self->rx, in, sizeof(in), 0));
	r[0] = (struct dlcp_range){ 990, 11 };
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(EINVAL, errno);
	r[0] = (struct dlcp_range){ 1000, 1 };
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(EINVAL, errno);
	r[0] = (struct dlcp_range){ 0xfffffff0u, 0x20 };	/* wraps */
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(EINVAL, errno);
	r[0] = (struct dlcp_range){ 5, 0 };			/* empty */
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 1000, r, 1));
	EXPECT_EQ(EINVAL, errno);
	/* not a whole number of ranges */
	EXPECT_EQ(-1, send_cmsg(self->tx, &self->to, buf, 1000, SOL_DLCP,
				DLCP_CMSG_CRITICAL, r, sizeof(r),
				CMSG_LEN(sizeof(r[0]) + 4)));
	EXPECT_EQ(EINVAL, errno);

	/* DLCP_MAX_CRIT_RANGES ranges pass, one more does not */
	for (i = 0; i <= DLCP_MAX_CRIT_RANGES; i++)
		many[i] = (struct dlcp_range){ i, 1 };
	EXPECT_EQ(2048, send_crit(self->tx, &self->to, buf, 2048, many,
				  DLCP_MAX_CRIT_RANGES))
		TH_LOG("%u ranges: %s", DLCP_MAX_CRIT_RANGES, strerror(errno));
	EXPECT_EQ(2048, recv(self->rx, in, sizeof(in), 0));
	EXPECT_EQ(-1, send_crit(self->tx, &self->to, buf, 2048, many,
				DLCP_MAX_CRIT_RANGES + 1));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
}

/* Segment classes: exactly one valid class per segment. */
TEST_F(dlcp, cmsg_seg_class)
{
	uint8_t cls[8] = { DLCP_SEG_IMPORTANT, DLCP_SEG_DROPPABLE,
			   DLCP_SEG_IMPORTANT, DLCP_SEG_DROPPABLE,
			   DLCP_SEG_IMPORTANT };
	size_t len;
	uint8_t *buf;
	int seg;

	ASSERT_EQ(0, connect(self->tx, (struct sockaddr *)&self->to,
			     sizeof(self->to)));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_SEGMENT_SIZE, &seg));
	ASSERT_LT(0, seg);
	len = 3 * (size_t)seg + 1;		/* 4 segments */
	buf = xmalloc(_metadata, len);
	dlcp_payload_fill(buf, len, 12);

	EXPECT_EQ(len, send_cmsg(self->tx, NULL, buf, len, SOL_DLCP,
				 DLCP_CMSG_SEG_CLASS, cls, 4, CMSG_LEN(4)))
		TH_LOG("4 classes for 4 segments of %d: %s", seg,
		       strerror(errno));
	EXPECT_EQ(len, recv(self->rx, buf, len, 0));
	EXPECT_EQ(len, dlcp_payload_cmp(buf, len, 12));
	EXPECT_EQ(-1, send_cmsg(self->tx, NULL, buf, len, SOL_DLCP,
				DLCP_CMSG_SEG_CLASS, cls, 3, CMSG_LEN(3)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, send_cmsg(self->tx, NULL, buf, len, SOL_DLCP,
				DLCP_CMSG_SEG_CLASS, cls, 5, CMSG_LEN(5)));
	EXPECT_EQ(EINVAL, errno);
	cls[2] = 2;				/* no such class */
	EXPECT_EQ(-1, send_cmsg(self->tx, NULL, buf, len, SOL_DLCP,
				DLCP_CMSG_SEG_CLASS, cls, 4, CMSG_LEN(4)));
	EXPECT_EQ(EINVAL, errno);
	assert_empty(_metadata, self->rx);
	free(buf);
}

/* No room for DLCP_CMSG_RECV: the data still comes, with MSG_CTRUNC. */
TEST_F(dlcp, cmsg_recv_ctrunc)
{
	union {
		char buf[CMSG_LEN(4)];
		struct cmsghdr align;
	} ctl;
	char buf[16];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};

	ASSERT_EQ(5, sendto(self->tx, "hello", 5, 0,
			    (struct sockaddr *)&self->to, sizeof(self->to)));
	ASSERT_EQ(5, recvmsg(self->rx, &msg, 0));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	EXPECT_TRUE(msg.msg_flags & MSG_CTRUNC);
}

/* ------------------------------------------------------------------ */
/* Completions                                                          */
/* ------------------------------------------------------------------ */

struct completion {
	ssize_t n;
	struct dlcp_completion c;
	int have_ee;
	struct sock_extended_err ee;
	int other_level;	/* another control message, for the log */
	int other_type;
};

/* Wait up to @ms for the error queue of @fd, then read one completion. */
static ssize_t recv_completion(int fd, int ms, struct completion *r)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sock_extended_err) + 64)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = &r->c, .iov_len = sizeof(r->c) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct pollfd pfd = { .fd = fd, .events = 0 };
	struct cmsghdr *cm;

	memset(r, 0, sizeof(*r));
	poll(&pfd, 1, ms);	/* POLLERR is always reported */
	r->n = recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
	if (r->n < 0)
		return r->n;
	r->other_level = -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_DLCP &&
		    cm->cmsg_type == DLCP_CMSG_COMPLETION &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(r->ee))) {
			memcpy(&r->ee, CMSG_DATA(cm), sizeof(r->ee));
			r->have_ee = 1;
		} else {
			r->other_level = cm->cmsg_level;
			r->other_type = cm->cmsg_type;
		}
	}
	return r->n;
}

TEST_F(dlcp, completion_delivered)
{
	struct dlcp_send_info si = good_info();
	struct pollfd pfd = { .fd = self->tx, .events = 0 };
	uint8_t buf[5000];
	struct completion cp;
	struct rx r;
	int val;

	ASSERT_EQ(0, getopt_int(self->tx, DLCP_RECVCOMPLETION, &val));
	EXPECT_EQ(0, val);
	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1))
		TH_LOG("DLCP_RECVCOMPLETION: %s", strerror(errno));
	ASSERT_EQ(0, getopt_int(self->tx, DLCP_RECVCOMPLETION, &val));
	EXPECT_EQ(1, val);
	EXPECT_EQ(-1, setopt_int(self->tx, DLCP_RECVCOMPLETION, 2));
	EXPECT_EQ(EINVAL, errno);

	memset(buf, 0x42, sizeof(buf));
	si.tensor_id = 0x77;
	si.iteration = 5;
	ASSERT_EQ(5000, send_info(self->tx, &self->to, buf, 5000, &si));
	ASSERT_EQ(5000, recv_full(self->rx, buf, sizeof(buf), 0, &r));
	ASSERT_TRUE(r.have_info);

	ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 5000, &cp))
		TH_LOG("no completion: %s", strerror(errno));
	EXPECT_EQ(r.info.msg_id, cp.c.msg_id);
	EXPECT_EQ(0x77, cp.c.tensor_id);
	EXPECT_EQ(5, cp.c.iteration);
	EXPECT_EQ(DLCP_DONE_EXACT, cp.c.status);
	EXPECT_EQ(5000, cp.c.msg_len);
	EXPECT_EQ(0, cp.c.bytes_lost);
	ASSERT_TRUE(cp.have_ee)
		TH_LOG("no SOL_DLCP/DLCP_CMSG_COMPLETION (got level %d type %d)",
		       cp.other_level, cp.other_type);
	EXPECT_EQ(SO_EE_ORIGIN_LOCAL, cp.ee.ee_origin);
	EXPECT_EQ(0, cp.ee.ee_errno);
	EXPECT_EQ(r.info.msg_id, cp.ee.ee_info);
	EXPECT_EQ(0, cp.ee.ee_data);

	/* One completion per message, and the error queue is empty again. */
	EXPECT_EQ(-1, recv_completion(self->tx, 0, &cp));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

/* Each message of several gets its own completion. */
TEST_F(dlcp, completion_per_message)
{
	struct dlcp_send_info si = good_info();
	unsigned int i, seen = 0;
	struct completion cp;
	uint8_t buf[64];

	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1));
	memset(buf, 1, sizeof(buf));
	for (i = 0; i < 4; i++) {
		si.iteration = i;
		ASSERT_EQ(64, send_info(self->tx, &self->to, buf, 64, &si));
	}
	for (i = 0; i < 4; i++)
		ASSERT_EQ(64, recv(self->rx, buf, sizeof(buf), 0));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 5000, &cp))
			TH_LOG("completion %u: %s", i, strerror(errno));
		ASSERT_GT(4, cp.c.iteration);
		EXPECT_EQ(DLCP_DONE_EXACT, cp.c.status);
		seen |= 1u << cp.c.iteration;
	}
	EXPECT_EQ(0xf, seen);
}

/* Without DLCP_RECVCOMPLETION nothing is queued. */
TEST_F(dlcp, completion_off_by_default)
{
	struct completion cp;
	char buf[8];

	ASSERT_EQ(3, sendto(self->tx, "abc", 3, 0,
			    (struct sockaddr *)&self->to, sizeof(self->to)));
	ASSERT_EQ(3, recv(self->rx, buf, sizeof(buf), 0));
	usleep(200 * 1000);
	EXPECT_EQ(-1, recv_completion(self->tx, 0, &cp));
	EXPECT_EQ(EAGAIN, errno);
}

/*
 * A receiver that never answers (its host sends no STOP for a port nobody
 * holds: net.dlcp.noport_rate 0): after net.dlcp.msg_timeout_ms the sender
 * gives up.
 */
TEST_F(dlcp, completion_timeout)
{
	struct sockaddr_in nobody = lo_addr(9);
	struct dlcp_snmp snmp;
	struct completion cp;
	uint8_t buf[100] = { 0 };
	double t0, dt;

	ASSERT_EQ(0, dlcp_sysctl_read("msg_timeout_ms", &self->saved_timeout))
		TH_LOG("net.dlcp.msg_timeout_ms: %s", strerror(errno));
	ASSERT_EQ(0, dlcp_sysctl_write("msg_timeout_ms", 1000));
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1));
	t0 = dlcp_now();
	ASSERT_EQ(100, sendto(self->tx, buf, 100, 0,
			      (struct sockaddr *)&nobody, sizeof(nobody)));
	ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 15000, &cp))
		TH_LOG("no completion: %s", strerror(errno));
	dt = dlcp_now() - t0;
	EXPECT_EQ(DLCP_DONE_TIMEOUT, cp.c.status);
	EXPECT_EQ(100, cp.c.msg_len);
	ASSERT_TRUE(cp.have_ee)
		TH_LOG("no SOL_DLCP/DLCP_CMSG_COMPLETION (got level %d type %d)",
		       cp.other_level, cp.other_type);
	EXPECT_EQ(ETIMEDOUT, cp.ee.ee_errno);
	EXPECT_EQ(SO_EE_ORIGIN_LOCAL, cp.ee.ee_origin);
	EXPECT_LE(0.8, dt) TH_LOG("gave up after %.2f s", dt);
	EXPECT_GE(10.0, dt) TH_LOG("gave up after %.2f s", dt);
	ASSERT_EQ(0, dlcp_snmp_read(&snmp));
	EXPECT_EQ(0, dlcp_snmp_get(&snmp, "DlcpNoPortSent"));
	EXPECT_LE(1, dlcp_snmp_get(&snmp, "DlcpNoPortLimited"));
}

/*
 * No socket holds the port: the receiving host answers with a STOP flagged
 * NOPORT, and the message fails with ECONNREFUSED within a round trip,
 * not after net.dlcp.msg_timeout_ms.
 */
TEST_F(dlcp, completion_port_unreachable)
{
	struct sockaddr_in nobody = lo_addr(9);
	static uint8_t buf[64 * 1024];
	struct dlcp_snmp snmp;
	struct completion cp;
	double t0, dt;

	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1));
	t0 = dlcp_now();
	ASSERT_EQ(sizeof(buf), sendto(self->tx, buf, sizeof(buf), 0,
				      (struct sockaddr *)&nobody,
				      sizeof(nobody)));
	ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 15000, &cp))
		TH_LOG("no completion: %s", strerror(errno));
	dt = dlcp_now() - t0;
	EXPECT_EQ(DLCP_DONE_TIMEOUT, cp.c.status);
	EXPECT_EQ(sizeof(buf), cp.c.msg_len);
	ASSERT_TRUE(cp.have_ee);
	EXPECT_EQ(ECONNREFUSED, cp.ee.ee_errno)
		TH_LOG("completed with %s", strerror(cp.ee.ee_errno));
	/* msg_timeout_ms is 10 s: a second is a round trip on any kernel */
	EXPECT_GE(1.0, dt) TH_LOG("refused after %.2f s", dt);
	ASSERT_EQ(0, dlcp_snmp_read(&snmp));
	EXPECT_LE(1, dlcp_snmp_get(&snmp, "DlcpNoPortSent"));
	EXPECT_EQ(1, dlcp_snmp_get(&snmp, "DlcpNoPortRcvd"));
	EXPECT_EQ(1, dlcp_snmp_get(&snmp, "DlcpOutMsgsFailed"));
	EXPECT_EQ(0, dlcp_snmp_get(&snmp, "DlcpOutMsgsDone"));
}

/*
 * The answers to packets for closed ports are rate-limited per namespace
 * (net.dlcp.noport_rate, a burst of at most that many): a flood of them
 * draws no more STOPs than the limit allows.
 */
TEST_F(dlcp, port_unreachable_rate_limited)
{
	struct sockaddr_in nobody = lo_addr(9);
	long long sent, limited;
	struct dlcp_snmp snmp;
	uint8_t buf[1] = { 0 };
	unsigned int i;
	double t0, dt;

	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 10));
	t0 = dlcp_now();
	for (i = 0; i < 200; i++)
		ASSERT_EQ(1, sendto(self->tx, buf, 1, 0,
				    (struct sockaddr *)&nobody,
				    sizeof(nobody)));
	usleep(300 * 1000);
	ASSERT_EQ(0, dlcp_snmp_read(&snmp));
	dt = dlcp_now() - t0;
	sent = dlcp_snmp_get(&snmp, "DlcpNoPortSent");
	limited = dlcp_snmp_get(&snmp, "DlcpNoPortLimited");
	/* a burst of 10, then 10 a second (one more for a tick's rounding) */
	EXPECT_GE(10 + 10 * dt + 1, sent)
		TH_LOG("%lld STOPs in %.2f s at 10 a second", sent, dt);
	EXPECT_LE(10, sent) TH_LOG("not even the burst: %lld", sent);
	/* the sender's window lets more than the limit through */
	EXPECT_LE(1, limited)
		TH_LOG("%lld answered, %lld limited", sent, limited);
}

/*
 * Messages queued behind others to a silent receiver fail with the first
 * one, not one msg_timeout_ms after another; close() then returns within
 * about one timeout too.
 */
TEST_F(dlcp, completion_timeout_queued)
{
	struct sockaddr_in nobody = lo_addr(9);
	static uint8_t buf[256 * 1024];
	struct completion cp;
	double t0, dt, last = 0;
	unsigned int i;
	int fd;

	ASSERT_EQ(0, dlcp_sysctl_read("msg_timeout_ms", &self->saved_timeout))
		TH_LOG("net.dlcp.msg_timeout_ms: %s", strerror(errno));
	ASSERT_EQ(0, dlcp_sysctl_write("msg_timeout_ms", 1000));
	/* a silent receiver: no STOP for the port nobody holds */
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	/* 180 segments a message: only the first fits the initial window */
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1));
	t0 = dlcp_now();
	for (i = 0; i < 4; i++)
		ASSERT_EQ(sizeof(buf),
			  sendto(self->tx, buf, sizeof(buf), 0,
				 (struct sockaddr *)&nobody, sizeof(nobody)))
			TH_LOG("message %u: %s", i, strerror(errno));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 15000, &cp))
			TH_LOG("completion %u: %s", i, strerror(errno));
		EXPECT_EQ(DLCP_DONE_TIMEOUT, cp.c.status);
		EXPECT_EQ(ETIMEDOUT, cp.ee.ee_errno);
		last = dlcp_now() - t0;
	}
	EXPECT_LE(0.8, last) TH_LOG("the last gave up after %.2f s", last);
	EXPECT_GE(2.5, last) TH_LOG("the last gave up after %.2f s", last);

	fd = dlcp_socket(_metadata);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(sizeof(buf),
			  sendto(fd, buf, sizeof(buf), 0,
				 (struct sockaddr *)&nobody, sizeof(nobody)));
	t0 = dlcp_now();
	close(fd);
	dt = dlcp_now() - t0;
	EXPECT_GE(2.5, dt) TH_LOG("close() took %.2f s", dt);
}

/*
 * A message queued while its route existed, whose route then vanished
 * before it could start, fails with EHOSTUNREACH about msg_timeout_ms
 * after its first attempt, instead of waiting for a route for ever (and
 * close() with it).
 */
TEST_F(dlcp, completion_no_route)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct sockaddr_in b = a;
	static uint8_t buf[256 * 1024];
	struct dlcp_snmp snmp;
	struct completion cp;
	double t0, dt;

	a.sin_addr.s_addr = inet_addr("10.201.0.2");
	b.sin_addr.s_addr = a.sin_addr.s_addr;
	b.sin_port = htons(10);
	ASSERT_EQ(0, dlcp_sysctl_read("msg_timeout_ms", &self->saved_timeout));
	ASSERT_EQ(0, dlcp_sysctl_write("msg_timeout_ms", 1000));
	/*
	 * a's window must not time out (and let b start while the route is
	 * still there) before ip(8) has deleted the route: 500 ms, not the
	 * 200 ms before a first RTT sample, leaves a slow kernel the time
	 */
	ASSERT_EQ(0, dlcp_sysctl_write("rto_min_ms", 500));
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	/* nobody there: lo hands the packets to IP, which drops them */
	ASSERT_EQ(0, system("ip route add 10.201.0.0/24 dev lo"));
	ASSERT_EQ(0, setopt_int(self->tx, DLCP_RECVCOMPLETION, 1));
	t0 = dlcp_now();
	/* a fills the peer's initial window; b (another port) waits */
	ASSERT_EQ(sizeof(buf), sendto(self->tx, buf, sizeof(buf), 0,
				      (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(sizeof(buf), sendto(self->tx, buf, sizeof(buf), 0,
				      (struct sockaddr *)&b, sizeof(b)));
	ASSERT_EQ(0, system("ip route del 10.201.0.0/24 dev lo"));
	/* the new routing table: a cannot reach it either */
	EXPECT_EQ(-1, sendto(self->tx, buf, 1, 0, (struct sockaddr *)&a,
			     sizeof(a)));
	EXPECT_EQ(ENETUNREACH, errno);

	/* a started: it timed out, its last resends found no route */
	ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 5000, &cp));
	EXPECT_EQ(DLCP_DONE_TIMEOUT, cp.c.status);
	EXPECT_TRUE(cp.ee.ee_errno == ETIMEDOUT ||
		    cp.ee.ee_errno == EHOSTUNREACH)
		TH_LOG("a: %s", strerror(cp.ee.ee_errno));
	ASSERT_EQ(sizeof(cp.c), recv_completion(self->tx, 5000, &cp))
		TH_LOG("b never gave up: %s", strerror(errno));
	EXPECT_EQ(DLCP_DONE_TIMEOUT, cp.c.status);
	EXPECT_EQ(EHOSTUNREACH, cp.ee.ee_errno);
	EXPECT_EQ(0, cp.c.bytes_lost);
	dt = dlcp_now() - t0;
	/*
	 * b's clock starts at its first attempt: when a's window times out
	 * (500 ms) or a gives up (1 s); one msg_timeout later b gives up,
	 * noticed by a guard timer that runs every 250 ms
	 */
	EXPECT_LE(1.1, dt) TH_LOG("b gave up after %.2f s", dt);
	EXPECT_GE(3.0, dt) TH_LOG("b gave up after %.2f s", dt);
	ASSERT_EQ(0, dlcp_snmp_read(&snmp));
	EXPECT_EQ(2, dlcp_snmp_get(&snmp, "DlcpOutMsgsFailed"));
}

TEST_HARNESS_MAIN
