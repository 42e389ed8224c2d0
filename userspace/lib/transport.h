/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libdlcp transports. An endpoint (struct dlcp_ep) is one socket that sends
 * and receives whole messages with their metadata. ep.c checks the
 * arguments of the public calls and goes through ep->ops; each transport
 * implements the ops in a file of its own (transport_dlcp.c: a DLCP socket;
 * transport_tcp.c: the same semantics over TCP connections, never lossy)
 * and keeps its state in a structure that embeds struct dlcp_ep.
 */
#ifndef DLCP_TRANSPORT_H
#define DLCP_TRANSPORT_H

#include <stddef.h>
#include <sys/socket.h>

#include "libdlcp.h"

struct iovec;

#pragma GCC visibility push(hidden)

struct dlcp_transport_ops {
	/* Allocate an endpoint bound to @addr (a checked AF_INET/AF_INET6
	 * address) into *@epp. 0 or -errno. */
	int (*open)(struct dlcp_ep **epp, const struct sockaddr *addr);
	/* Wait for unfinished sends per @linger_ms (<0: the transport's own
	 * rule), close and free. Returns the first send error, or 0. */
	int (*close)(struct dlcp_ep *ep, int linger_ms);
	/* Apply ep->send_timeout_ms; NULL where the transport reads it when
	 * it needs it. */
	int (*set_send_timeout)(struct dlcp_ep *ep);
	int (*segment_size)(const struct dlcp_ep *ep);
	/* One message of @len bytes (> 0) from @iov to @dst (@dstlen bytes,
	 * the endpoint's family). @meta (may be NULL) is checked. */
	int (*send)(struct dlcp_ep *ep, const struct sockaddr_storage *dst,
		    socklen_t dstlen, const struct iovec *iov, int iovcnt,
		    size_t len, const struct dlcp_tensor_meta *meta);
	/* One whole message, as dlcp_recv_tensor_sa(): *@buf (and *@lost,
	 * where @lost is not NULL) are NULL on entry; @src is not NULL. */
	long (*recv)(struct dlcp_ep *ep, void **buf,
		     struct dlcp_tensor_info *info, struct dlcp_range **lost,
		     int timeout_ms, struct sockaddr_storage *src);
};

struct dlcp_ep {
	const struct dlcp_transport_ops *ops;
	int fd;				/* DLCP socket, or TCP listener */
	struct sockaddr_storage addr;	/* where it is bound */
	int send_timeout_ms;		/* 0: none */
};

extern const struct dlcp_transport_ops dlcp_transport_dlcp;
extern const struct dlcp_transport_ops dlcp_transport_tcp;

/*
 * For the transports' open: a socket of @type in @addr's family (with
 * SO_REUSEADDR if @reuseaddr), bound to @addr; ep->fd and ep->addr (the
 * bound address) set. 0, or -errno with nothing left open.
 */
int dlcp_ep_bind(struct dlcp_ep *ep, const struct sockaddr *addr, int type,
		 int reuseaddr);

#pragma GCC visibility pop

#endif /* DLCP_TRANSPORT_H */
