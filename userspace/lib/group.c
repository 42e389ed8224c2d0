// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp groups (see group.h): opening rank r of a group on an endpoint,
 * the group's accessors, and moving messages between its ranks. Finding
 * the other ranks' addresses (group files, the environment) is in
 * rendezvous.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "addr.h"
#include "clock.h"
#include "group.h"

/* Messages kept ahead of their turn, at most. */
#define STASH_MAX	(2 * DLCP_GROUP_MAX)

/* The group's default timeout: @timeout_ms, else $DLCP_TIMEOUT seconds. */
static int group_timeout(int timeout_ms)
{
	const char *s = getenv("DLCP_TIMEOUT");
	char *end;
	double v;

	if (timeout_ms)
		return timeout_ms;
	if (s && *s) {
		errno = 0;
		v = strtod(s, &end);
		if (!errno && !*end && v > 0 && v * 1000 < 2e9)
			return v * 1000 < 1 ? 1 : (int)(v * 1000);
	}
	return 30000;
}

int dlcp_group_open_ep(struct dlcp_group **gp, struct dlcp_ep *ep, int rank,
		       int world, const struct sockaddr_storage *addrs,
		       int timeout_ms)
{
	struct sockaddr_storage me;
	struct dlcp_group *g;
	int i, err;

	if (!gp || !ep || !addrs || world < 1 || world > DLCP_GROUP_MAX ||
	    rank < 0 || rank >= world || timeout_ms < 0)
		return -EINVAL;
	err = dlcp_ep_addr_sa(ep, &me);
	if (err)
		return err;
	for (i = 0; i < world; i++)
		if (i != rank && addrs[i].ss_family != me.ss_family)
			return -EAFNOSUPPORT;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->addrs = malloc((size_t)world * sizeof(*addrs));
	if (!g->addrs) {
		free(g);
		return -ENOMEM;
	}
	memcpy(g->addrs, addrs, (size_t)world * sizeof(*addrs));
	/* this rank's entry is where it is bound (the port may have been 0) */
	if (!dlcp_addr_is_any((const struct sockaddr *)&me) ||
	    g->addrs[rank].ss_family != me.ss_family)
		g->addrs[rank] = me;
	else
		dlcp_addr_set_port((struct sockaddr *)&g->addrs[rank],
				   dlcp_addr_port((const struct sockaddr *)&me));
	g->rank = rank;
	g->world = world;
	g->timeout_ms = group_timeout(timeout_ms);
	err = dlcp_ep_set_send_timeout(ep, g->timeout_ms);
	if (err) {
		free(g->addrs);
		free(g);
		return err;
	}
	g->ep = ep;
	*gp = g;
	return 0;
}

int dlcp_group_open_sa(struct dlcp_group **gp, int rank, int world,
		       const struct sockaddr_storage *addrs, int transport,
		       int timeout_ms)
{
	struct dlcp_ep *ep;
	int err;

	if (!gp || !addrs || world < 1 || world > DLCP_GROUP_MAX ||
	    rank < 0 || rank >= world || timeout_ms < 0)
		return -EINVAL;
	err = dlcp_ep_open_sa(&ep, (const struct sockaddr *)&addrs[rank],
			      sizeof(addrs[rank]), transport);
	if (err)
		return err;
	err = dlcp_group_open_ep(gp, ep, rank, world, addrs, timeout_ms);
	if (err)
		dlcp_ep_close(ep, 0);
	return err;
}

int dlcp_group_open(struct dlcp_group **gp, int rank, int world,
		    const struct sockaddr_in *addrs, int transport,
		    int timeout_ms)
{
	struct sockaddr_storage *ss;
	int i, err;

	if (!gp || !addrs || world < 1 || world > DLCP_GROUP_MAX ||
	    rank < 0 || rank >= world || timeout_ms < 0)
		return -EINVAL;
	ss = calloc((size_t)world, sizeof(*ss));
	if (!ss)
		return -ENOMEM;
	for (i = 0; i < world; i++)
		memcpy(&ss[i], &addrs[i], sizeof(addrs[i]));
	err = dlcp_group_open_sa(gp, rank, world, ss, transport, timeout_ms);
	free(ss);
	return err;
}

void dlcp_group_msg_free(struct dlcp_group_msg *m)
{
	free(m->buf);
	free(m->lost);
	free(m);
}

int dlcp_group_close(struct dlcp_group *g, int linger_ms)
{
	int err;

	if (!g)
		return -EINVAL;
	err = dlcp_ep_close(g->ep, linger_ms);
	while (g->stash) {
		struct dlcp_group_msg *m = g->stash;

		g->stash = m->next;
		dlcp_group_msg_free(m);
	}
	free(g->addrs);
	free(g);
	return err;
}

int dlcp_group_rank(const struct dlcp_group *g)
{
	return g ? g->rank : -EINVAL;
}

int dlcp_group_world(const struct dlcp_group *g)
{
	return g ? g->world : -EINVAL;
}

struct dlcp_ep *dlcp_group_ep(struct dlcp_group *g)
{
	return g ? g->ep : NULL;
}

int dlcp_group_addr(const struct dlcp_group *g, int r,
		    struct sockaddr_storage *addr)
{
	if (!g || !addr || r < 0 || r >= g->world)
		return -EINVAL;
	*addr = g->addrs[r];
	return 0;
}

int dlcp_group_send(struct dlcp_group *g, int dst, const struct iovec *iov,
		    int iovcnt, const struct dlcp_tensor_meta *meta)
{
	return dlcp_send_tensorv_sa(g->ep,
				    (const struct sockaddr *)&g->addrs[dst],
				    sizeof(g->addrs[dst]), iov, iovcnt, meta);
}

/* The rank at @a, or -1. */
static int rank_of(const struct dlcp_group *g, const struct sockaddr_storage *a)
{
	const struct sockaddr *sa = (const struct sockaddr *)a;
	uint16_t port = dlcp_addr_port(sa);
	int i;

	for (i = 0; i < g->world; i++) {
		const struct sockaddr *x = (const struct sockaddr *)&g->addrs[i];

		if (dlcp_addr_port(x) != port || x->sa_family != sa->sa_family)
			continue;
		if (dlcp_addr_same(x, sa) || dlcp_addr_is_any(x))
			return i;
	}
	return -1;
}

int dlcp_group_recv_any(struct dlcp_group *g, long deadline,
			struct dlcp_group_msg **out)
{
	for (;;) {
		long left = deadline - dlcp_clock_ms();
		struct dlcp_group_msg *m;
		long r;

		if (left < 0)
			return -ETIMEDOUT;
		m = calloc(1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		r = dlcp_recv_tensor_sa(g->ep, &m->buf, &m->info, &m->lost,
					(int)left, &m->from);
		if (r < 0) {
			free(m);
			return (int)r;
		}
		if (m->from.ss_family == AF_INET)
			memcpy(&m->info.src, &m->from, sizeof(m->info.src));
		m->src = rank_of(g, &m->from);
		if (m->src < 0) {	/* not from this group */
			dlcp_group_msg_free(m);
			continue;
		}
		*out = m;
		return 0;
	}
}

int dlcp_group_unstash(struct dlcp_group *g,
		       int (*pick)(const struct dlcp_group_msg *m, void *arg),
		       void *arg, struct dlcp_group_msg **out)
{
	struct dlcp_group_msg **pp, *m;

	for (pp = &g->stash; (m = *pp); pp = &m->next) {
		int r = pick(m, arg);

		if (!r)
			continue;
		*pp = m->next;
		g->nr_stash--;
		if (r < 0) {
			dlcp_group_msg_free(m);
			return r;
		}
		*out = m;
		return 1;
	}
	return 0;
}

void dlcp_group_stash(struct dlcp_group *g, struct dlcp_group_msg *m)
{
	/* full: the message stashed last makes room (the head of the list) */
	if (g->nr_stash >= STASH_MAX) {
		struct dlcp_group_msg *o = g->stash;

		g->stash = o->next;
		g->nr_stash--;
		dlcp_group_msg_free(o);
	}
	m->next = g->stash;
	g->stash = m;
	g->nr_stash++;
}
