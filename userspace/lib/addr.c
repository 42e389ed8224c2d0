// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp addresses: helpers on sockaddrs of either family (addr.h) and the
 * parsers of "addr:port", "[addr6]:port" and group files (libdlcp.h).
 * No I/O here: unit-tested on the host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <arpa/inet.h>

#include "libdlcp.h"
#include "addr.h"

socklen_t dlcp_addr_len(const struct sockaddr *sa)
{
	if (sa && sa->sa_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (sa && sa->sa_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

int dlcp_addr_same(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return 0;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	return 0;
}

int dlcp_addr_is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return 0;
}

uint16_t dlcp_addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port;
	return 0;
}

void dlcp_addr_set_port(struct sockaddr *sa, uint16_t port_be)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)(void *)sa)->sin_port = port_be;
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)sa)->sin6_port = port_be;
}

void dlcp_addr_unmap(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)(void *)ss;
	struct sockaddr_in s4;

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return;
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	s4.sin_port = s6->sin6_port;
	memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &s4, sizeof(s4));
}

/* "host:port" split; "[host]:port" for IPv6. 0 or -EINVAL. */
static int split_host_port(const char *s, char *host, size_t hsz,
			   unsigned long *port)
{
	const char *colon, *h = s, *he;
	char *end;
	size_t hl;

	colon = strrchr(s, ':');
	if (!colon)
		return -EINVAL;
	he = colon;
	if (*s == '[') {
		h = s + 1;
		if (colon == s || colon[-1] != ']')
			return -EINVAL;
		he = colon - 1;
	}
	hl = (size_t)(he - h);
	if (!hl || hl >= hsz)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	if (!isdigit((unsigned char)colon[1]))
		return -EINVAL;
	errno = 0;
	*port = strtoul(colon + 1, &end, 10);
	if (errno || *end || *port > 65535)
		return -EINVAL;
	return 0;
}

int dlcp_parse_addr(const char *s, struct sockaddr_in *out)
{
	unsigned long port;
	char host[64];

	if (!s || !out || *s == '[' || split_host_port(s, host, sizeof(host), &port))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
		return -EINVAL;
	return 0;
}

int dlcp_parse_addr_sa(const char *s, struct sockaddr_storage *out)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)(void *)out;
	unsigned long port;
	char host[INET6_ADDRSTRLEN + 2];

	if (!s || !out)
		return -EINVAL;
	if (*s != '[') {
		struct sockaddr_in s4;
		int err = dlcp_parse_addr(s, &s4);

		if (!err) {
			memset(out, 0, sizeof(*out));
			memcpy(out, &s4, sizeof(s4));
		}
		return err;
	}
	if (split_host_port(s, host, sizeof(host), &port))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons((uint16_t)port);
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
		return -EINVAL;
	return 0;
}

static int parse_group(const char *text, struct sockaddr_in *a4,
		       struct sockaddr_storage *a6, int max)
{
	int n = 0;

	if (!text || max < 0)
		return -EINVAL;
	while (*text) {
		const char *eol = strchr(text, '\n');
		size_t l = eol ? (size_t)(eol - text) : strlen(text);
		char line[128];
		char *p, *q;

		if (l >= sizeof(line))
			return -EINVAL;
		memcpy(line, text, l);
		line[l] = 0;
		text += l + (eol ? 1 : 0);
		p = strchr(line, '#');
		if (p)
			*p = 0;
		p = line;
		while (isspace((unsigned char)*p))
			p++;
		q = p + strlen(p);
		while (q > p && isspace((unsigned char)q[-1]))
			*--q = 0;
		if (!*p)
			continue;
		if (n >= max)
			return -E2BIG;
		if (a4 ? dlcp_parse_addr(p, &a4[n]) : dlcp_parse_addr_sa(p, &a6[n]))
			return -EINVAL;
		n++;
	}
	return n;
}

int dlcp_parse_group(const char *text, struct sockaddr_in *addrs, int max)
{
	return addrs || !max ? parse_group(text, addrs, NULL, max) : -EINVAL;
}

int dlcp_parse_group_sa(const char *text, struct sockaddr_storage *addrs,
			int max)
{
	return addrs || !max ? parse_group(text, NULL, addrs, max) : -EINVAL;
}
