/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libdlcp frame codec: how a chunk of a collective travels. A message is
 * [header][runs][elements]; the header and the runs are a critical range,
 * so they always arrive. A run (start, len, count) says that @len elements
 * from @start of the chunk carry @count contributions instead of the
 * header's base_count (0 in an all-gather or pull: "missing, use your own
 * value"). Messages are keyed by (sender rank, tensor_id, iteration) with
 *   tensor_id = (tag & 0xffff) << 16 | kind << 12 | step,
 * and whatever arrives ahead of its turn waits in the group's stash. An
 * abort message (kind DLCP_FRAME_ABORT) ends the collective of its tag and
 * iteration on every rank with the sender's error.
 */
#ifndef DLCP_FRAME_H
#define DLCP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

struct dlcp_coll;
struct dlcp_group;
struct dlcp_group_msg;

/* Kinds of messages, part of the key. */
enum dlcp_frame_kind {
	DLCP_FRAME_RS = 1,
	DLCP_FRAME_AG = 2,
	DLCP_FRAME_PUSH = 3,
	DLCP_FRAME_PULL = 4,
	DLCP_FRAME_BARRIER = 5,
	DLCP_FRAME_ABORT = 7,
	DLCP_FRAME_RS_DIRECT = 8,
	DLCP_FRAME_AG_DIRECT = 9,
};

/* A chunk received: its elements at @data until dlcp_frame_release(). */
struct dlcp_frame_in {
	struct dlcp_group_msg *msg;
	const void *data;
};

uint32_t dlcp_frame_tid(uint32_t tag, int kind, uint32_t step);

/*
 * Wait for the message (@src, @tid, @iteration); a message of another key
 * goes to the stash, an abort of the collective (@tag, @iteration) ends
 * the wait with its error. -ETIMEDOUT after @timeout_ms without it.
 */
int dlcp_frame_wait(struct dlcp_group *g, int src, uint32_t tid,
		    uint32_t iteration, uint32_t tag, int timeout_ms,
		    struct dlcp_group_msg **out);

/*
 * Send chunk @chunk ([@off, @off + @len) of the tensor, elements at @data)
 * to rank @dst as message (@kind, @step), loss budget @budget. @cnt (NULL:
 * all @base) gives each element's count; elements whose count differs
 * from @base are described by runs. @len 0: a header alone, critical.
 */
int dlcp_frame_send(struct dlcp_coll *c, int dst, int kind, uint32_t step,
		    uint32_t chunk, const void *data, size_t off, size_t len,
		    const uint32_t *cnt, uint32_t base, uint32_t budget);
/*
 * Receive the message (@src, @kind, @step) and check it against what this
 * rank expects of chunk @chunk at [@off, @off + @len): -EPROTO, -EMSGSIZE
 * (another tensor size), -EINVAL (another dtype, reduction or world), -EIO
 * (a critical range lost). On success @in holds it and @in_cnt[0..len)
 * each element's count (0 if lost).
 */
int dlcp_frame_recv(struct dlcp_coll *c, int src, int kind, uint32_t step,
		    uint32_t chunk, size_t off, size_t len,
		    struct dlcp_frame_in *in, uint32_t *in_cnt);
void dlcp_frame_release(struct dlcp_frame_in *in);

/* Tell every other rank that the collective (@tag, @iteration) of @n
 * elements failed with @error. */
void dlcp_frame_send_abort(struct dlcp_group *g, uint32_t tag,
			   uint32_t iteration, size_t n, int error);

#pragma GCC visibility pop

#endif /* DLCP_FRAME_H */
