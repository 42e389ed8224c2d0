// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp parameter server: every contributing rank pushes its tensor to
 * the server rank, which adds them up, counting per element the
 * contributions that arrived, and sends the result back to every rank
 * (the pull).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

int dlcp_ps_setup(struct dlcp_coll *c, const void *send, const void *recv,
		  int *contributors)
{
	const struct dlcp_coll_opts *o = c->o;
	int N = c->g->world;

	if (o->server < 0 || o->server >= N || (o->dedicated_server && N < 2))
		return -EINVAL;
	*contributors = N - (o->dedicated_server ? 1 : 0);
	if (c->g->rank != o->server || !o->dedicated_server)
		if (c->n && (!send || !recv))
			return -EINVAL;
	return 0;
}

int dlcp_ps_client(struct dlcp_coll *c, const void *vec,
		   struct dlcp_frame_in *in, uint32_t *in_cnt)
{
	int S = c->o->server;
	int err;

	err = dlcp_frame_send(c, S, c->fmt->kind_push, 0, (uint32_t)c->g->rank,
			      vec, 0, c->m, NULL, 1, c->o->budget_ppm);
	if (!err)
		err = dlcp_frame_recv(c, S, c->fmt->kind_pull, 0, 0, 0, c->m, in,
				      in_cnt);
	return err;
}

int dlcp_ps_gather(struct dlcp_coll *c, void *acc, uint32_t *cnt)
{
	uint32_t *in_cnt = malloc((c->m ? c->m : 1) * sizeof(*in_cnt));
	int i, err = 0;

	if (!in_cnt)
		return -ENOMEM;
	for (i = 0; i < c->g->world && !err; i++)
		if (i != c->o->server)
			err = dlcp_coll_recv_add(c, i, c->fmt->kind_push, 0,
						 (uint32_t)i, 0, c->m, acc, cnt,
						 in_cnt);
	free(in_cnt);
	return err;
}

int dlcp_ps_scatter(struct dlcp_coll *c, const void *acc, const uint32_t *cnt,
		    uint32_t base)
{
	int i, err;

	for (i = 0; i < c->g->world; i++) {
		if (i == c->o->server)
			continue;
		err = dlcp_frame_send(c, i, c->fmt->kind_pull, 0, 0, acc, 0, c->m,
				      cnt, base, c->o->budget2_ppm);
		if (err)
			return err;
	}
	return 0;
}

/* The server sends the result, with a 0/1 count per element: 0 where
 * nobody's value arrived. */
int dlcp_ps_push_pull(struct dlcp_group *g, const void *send, void *recv,
		      size_t n, int dtype, const struct dlcp_coll_opts *opts)
{
	struct dlcp_coll c;
	uint32_t *cnt = NULL;
	char *acc = NULL;
	int err = dlcp_coll_init(&c, g, n, dtype, opts);
	int contributors;
	size_t j;

	if (err)
		return err;
	err = dlcp_ps_setup(&c, send, recv, &contributors);
	if (err)
		return err;
	if (g->rank != opts->server) {
		struct dlcp_frame_in in;

		cnt = malloc((n ? n : 1) * sizeof(*cnt));
		if (!cnt) {
			err = -ENOMEM;
			goto out;
		}
		err = dlcp_ps_client(&c, send, &in, cnt);
		if (err)
			goto out;
		for (j = 0; j < n; j++) {
			if (cnt[j])
				memcpy((char *)recv + j * c.esz,
				       (const char *)in.data + j * c.esz, c.esz);
			else if (c.st)
				c.st->elems_fallback++;
		}
		dlcp_frame_release(&in);
		goto out;
	}

	acc = calloc(n ? n : 1, c.esz);
	cnt = calloc(n ? n : 1, sizeof(*cnt));
	if (!acc || !cnt) {
		err = -ENOMEM;
		goto out;
	}
	if (!opts->dedicated_server) {
		memcpy(acc, send, n * c.esz);
		for (j = 0; j < n; j++)
			cnt[j] = 1;
	}
	err = dlcp_ps_gather(&c, acc, cnt);
	if (err)
		goto out;
	dlcp_reduce_finalize(dtype, acc, cnt, n, c.reduce,
			     (unsigned int)contributors, NULL);
	for (j = 0; j < n; j++)
		cnt[j] = cnt[j] ? 1 : 0;
	err = dlcp_ps_scatter(&c, acc, cnt, 1);
	if (err)
		goto out;
	if (!opts->dedicated_server)
		for (j = 0; j < n; j++)
			if (cnt[j])
				memcpy((char *)recv + j * c.esz, acc + j * c.esz,
				       c.esz);
out:
	free(acc);
	free(cnt);
	return err ? dlcp_coll_fail(&c, err) : 0;
}
