/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libdlcp socket addresses of either family (AF_INET, AF_INET6), for the
 * transports and the group. The parsers of "addr:port" and of group files
 * (addr.c too) are public: libdlcp.h.
 */
#ifndef DLCP_ADDR_H
#define DLCP_ADDR_H

#include <stdint.h>
#include <sys/socket.h>

#pragma GCC visibility push(hidden)

/* Size of @sa's family's sockaddr; 0 for another family (or NULL). */
socklen_t dlcp_addr_len(const struct sockaddr *sa);
/* Same family, address and port. */
int dlcp_addr_same(const struct sockaddr *a, const struct sockaddr *b);
/* The wildcard address of its family. */
int dlcp_addr_is_any(const struct sockaddr *sa);
/* The port, network byte order (0 for another family). */
uint16_t dlcp_addr_port(const struct sockaddr *sa);
void dlcp_addr_set_port(struct sockaddr *sa, uint16_t port_be);
/* An IPv4-mapped IPv6 address becomes the plain IPv4 one. */
void dlcp_addr_unmap(struct sockaddr_storage *ss);

#pragma GCC visibility pop

#endif /* DLCP_ADDR_H */
