// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp endpoints: one message per tensor over a DLCP socket, or over TCP
 * with the same semantics (asynchronous send, whole-message receive from
 * any sender, metadata preserved, never lossy). The public calls check
 * their arguments here and go to the endpoint's transport (transport.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "libdlcp.h"
#include "addr.h"
#include "transport.h"

int dlcp_ep_bind(struct dlcp_ep *ep, const struct sockaddr *addr, int type,
		 int reuseaddr)
{
	socklen_t sl = sizeof(ep->addr);
	int one = 1, err;

	ep->fd = socket(addr->sa_family, type | SOCK_CLOEXEC, 0);
	if (ep->fd < 0)
		return -errno;
	if (reuseaddr)
		setsockopt(ep->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ep->fd, addr, dlcp_addr_len(addr)) ||
	    getsockname(ep->fd, (struct sockaddr *)&ep->addr, &sl)) {
		err = -errno;
		close(ep->fd);
		return err;
	}
	return 0;
}

int dlcp_ep_open(struct dlcp_ep **epp, const struct sockaddr_in *addr,
		 int transport)
{
	return dlcp_ep_open_sa(epp, (const struct sockaddr *)addr,
			       sizeof(*addr), transport);
}

int dlcp_ep_open_sa(struct dlcp_ep **epp, const struct sockaddr *addr,
		    socklen_t addrlen, int transport)
{
	const struct dlcp_transport_ops *ops;
	struct dlcp_ep *ep;
	int err;

	if (transport == DLCP_TRANSPORT_DLCP)
		ops = &dlcp_transport_dlcp;
	else if (transport == DLCP_TRANSPORT_TCP)
		ops = &dlcp_transport_tcp;
	else
		ops = NULL;
	if (!epp || !addr || !ops)
		return -EINVAL;
	if (!dlcp_addr_len(addr))
		return -EAFNOSUPPORT;
	if (addrlen < dlcp_addr_len(addr))
		return -EINVAL;
	err = ops->open(&ep, addr);
	if (err)
		return err;
	ep->ops = ops;
	*epp = ep;
	return 0;
}

int dlcp_ep_close(struct dlcp_ep *ep, int linger_ms)
{
	if (!ep)
		return -EINVAL;
	return ep->ops->close(ep, linger_ms);
}

int dlcp_ep_fd(const struct dlcp_ep *ep)
{
	return ep ? ep->fd : -EINVAL;
}

int dlcp_ep_addr(const struct dlcp_ep *ep, struct sockaddr_in *addr)
{
	if (!ep || !addr)
		return -EINVAL;
	if (ep->addr.ss_family != AF_INET)
		return -EAFNOSUPPORT;
	memcpy(addr, &ep->addr, sizeof(*addr));
	return 0;
}

int dlcp_ep_addr_sa(const struct dlcp_ep *ep, struct sockaddr_storage *addr)
{
	if (!ep || !addr)
		return -EINVAL;
	*addr = ep->addr;
	return 0;
}

int dlcp_ep_set_send_timeout(struct dlcp_ep *ep, int timeout_ms)
{
	if (!ep || timeout_ms < 0)
		return -EINVAL;
	ep->send_timeout_ms = timeout_ms;
	return ep->ops->set_send_timeout ? ep->ops->set_send_timeout(ep) : 0;
}

int dlcp_ep_segment_size(const struct dlcp_ep *ep)
{
	if (!ep)
		return -EINVAL;
	return ep->ops->segment_size(ep);
}

int dlcp_send_tensor(struct dlcp_ep *ep, const struct sockaddr_in *dst,
		     const void *buf, size_t len,
		     const struct dlcp_tensor_meta *meta)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return dlcp_send_tensorv(ep, dst, &iov, 1, meta);
}

int dlcp_send_tensorv(struct dlcp_ep *ep, const struct sockaddr_in *dst,
		      const struct iovec *iov, int iovcnt,
		      const struct dlcp_tensor_meta *meta)
{
	return dlcp_send_tensorv_sa(ep, (const struct sockaddr *)dst,
				    sizeof(*dst), iov, iovcnt, meta);
}

int dlcp_send_tensorv_sa(struct dlcp_ep *ep, const struct sockaddr *dst,
			 socklen_t dstlen, const struct iovec *iov, int iovcnt,
			 const struct dlcp_tensor_meta *meta)
{
	struct sockaddr_storage d;
	size_t len = 0;
	int i;

	if (!ep || !dst || (iovcnt && !iov) || iovcnt < 0)
		return -EINVAL;
	if (!dlcp_addr_len(dst) || dstlen < dlcp_addr_len(dst))
		return -EINVAL;
	if (dst->sa_family != ep->addr.ss_family)
		return -EAFNOSUPPORT;
	memset(&d, 0, sizeof(d));
	memcpy(&d, dst, dlcp_addr_len(dst));
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (!len)
		return -EINVAL;
	if (meta && (meta->flags & ~(DLCP_MSG_CRITICAL | DLCP_MSG_HAS_DEADLINE |
				     DLCP_MSG_HAS_BUDGET | DLCP_MSG_HAS_LAYER)))
		return -EINVAL;
	if (meta && (meta->loss_budget_ppm > DLCP_PPM_MAX ||
		     !dlcp_dtype_size(meta->dtype) ||
		     len % dlcp_dtype_size(meta->dtype)))
		return -EINVAL;
	return ep->ops->send(ep, &d, dlcp_addr_len(dst), iov, iovcnt, len,
			     meta);
}

long dlcp_recv_tensor(struct dlcp_ep *ep, void **bufp,
		      struct dlcp_tensor_info *info, struct dlcp_range **lostp,
		      int timeout_ms)
{
	struct sockaddr_storage src;
	long r = dlcp_recv_tensor_sa(ep, bufp, info, lostp, timeout_ms, &src);

	if (r >= 0) {
		memset(&info->src, 0, sizeof(info->src));
		if (src.ss_family == AF_INET)
			memcpy(&info->src, &src, sizeof(info->src));
		else	/* see dlcp_recv_tensor_sa() */
			info->src.sin_family = src.ss_family;
	}
	return r;
}

long dlcp_recv_tensor_sa(struct dlcp_ep *ep, void **bufp,
			 struct dlcp_tensor_info *info,
			 struct dlcp_range **lostp, int timeout_ms,
			 struct sockaddr_storage *srcp)
{
	struct sockaddr_storage dummy;

	if (!ep || !bufp || !info)
		return -EINVAL;
	if (!srcp)
		srcp = &dummy;
	*bufp = NULL;
	if (lostp)
		*lostp = NULL;
	return ep->ops->recv(ep, bufp, info, lostp, timeout_ms, srcp);
}
