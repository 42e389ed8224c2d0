/* SPDX-License-Identifier: GPL-2.0 */
/* libdlcp internals shared between its source files. */
#ifndef LIBDLCP_INT_H
#define LIBDLCP_INT_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#pragma GCC visibility push(hidden)

/* coll.c, for qcoll.c: message keys, the stash, aborts */
struct dlcp_group;
struct dlcp_tensor_info;
struct dlcp_range;
struct sockaddr_in;
int dlcp__recv_msg(struct dlcp_group *g, int src, uint32_t tid,
		   uint32_t iteration, uint32_t tag, int timeout_ms, void **buf,
		   struct dlcp_tensor_info *info, struct dlcp_range **lost);
const struct sockaddr *dlcp__group_addr(const struct dlcp_group *g, int r,
				       socklen_t *len);
int dlcp__group_timeout(const struct dlcp_group *g);
uint32_t dlcp__mk_tid(uint32_t tag, int kind, uint32_t step);
void dlcp__send_abort(struct dlcp_group *g, uint32_t tag, uint32_t iteration,
		      size_t n, int error);

#pragma GCC visibility pop

#endif
