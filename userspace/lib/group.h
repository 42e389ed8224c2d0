/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libdlcp groups: the ranks of a collective, their addresses, the endpoint
 * this rank sends and receives on, and the messages that arrived ahead of
 * their turn (the stash). Which message a collective waits for is the
 * frame layer's business (frame.h); the group only moves messages between
 * ranks.
 */
#ifndef DLCP_GROUP_H
#define DLCP_GROUP_H

#include <stdint.h>
#include <sys/socket.h>

#include "libdlcp.h"

struct iovec;

#pragma GCC visibility push(hidden)

/* A message received from a rank of the group. */
struct dlcp_group_msg {
	struct dlcp_group_msg *next;	/* in the stash */
	int src;			/* the sender's rank */
	struct sockaddr_storage from;
	struct dlcp_tensor_info info;
	void *buf;
	struct dlcp_range *lost;
};

struct dlcp_group {
	int rank;
	int world;
	int timeout_ms;
	struct sockaddr_storage *addrs;
	struct dlcp_ep *ep;
	struct dlcp_group_msg *stash;	/* newest first */
	int nr_stash;
};

void dlcp_group_msg_free(struct dlcp_group_msg *m);

/* Send one message to rank @dst. */
int dlcp_group_send(struct dlcp_group *g, int dst, const struct iovec *iov,
		    int iovcnt, const struct dlcp_tensor_meta *meta);

/*
 * Receive the next message from a rank of the group (messages from other
 * senders are dropped) into *@out, before @deadline (dlcp_clock_ms()):
 * 0, -ETIMEDOUT or the endpoint's error.
 */
int dlcp_group_recv_any(struct dlcp_group *g, long deadline,
			struct dlcp_group_msg **out);

/*
 * Offer the stashed messages, newest first, to @pick: 1 takes the message
 * (removed, in *@out, returns 1), a negative errno ends the search (the
 * message removed and freed, returns that error), 0 passes. 0: none taken.
 */
int dlcp_group_unstash(struct dlcp_group *g,
		       int (*pick)(const struct dlcp_group_msg *m, void *arg),
		       void *arg, struct dlcp_group_msg **out);

/* Keep @m for later; when the stash is full, the message stashed last is
 * dropped to make room. */
void dlcp_group_stash(struct dlcp_group *g, struct dlcp_group_msg *m);

#pragma GCC visibility pop

#endif /* DLCP_GROUP_H */
