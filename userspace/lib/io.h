/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libdlcp: whole reads and writes on a stream socket (the TCP transport,
 * and dlcp-perf's TCP mode, which includes this header by path).
 */
#ifndef DLCP_IO_H
#define DLCP_IO_H

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/*
 * Send all @n bytes at @p on @fd (no SIGPIPE). Returns 0, -ETIMEDOUT
 * when the socket's SO_SNDTIMEO ran out, or another -errno.
 */
static inline int dlcp_io_write_full(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t r = send(fd, b, n, MSG_NOSIGNAL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -ETIMEDOUT;
			return -errno;
		}
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * Receive exactly @n bytes into @p from @fd. Returns 0, -ECONNRESET when
 * the peer closed first, or another -errno.
 */
static inline int dlcp_io_read_full(int fd, void *p, size_t n)
{
	char *b = p;

	while (n) {
		ssize_t r = recv(fd, b, n, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ECONNRESET;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

#endif /* DLCP_IO_H */
