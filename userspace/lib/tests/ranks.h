/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Tests: a group of ranks as threads of one process, each with its own
 * endpoint (eps.h). A test's job structure starts with a struct rank_job;
 * run_ranks() copies a prototype job to every rank, lets a tweak change
 * some ranks' (a mismatch, a rank that stays away) and runs them.
 */
#ifndef DLCP_TEST_RANKS_H
#define DLCP_TEST_RANKS_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libdlcp.h"
#include "eps.h"

/* what run_ranks() opens: the test's arguments (eps_args()) */
static int transport = DLCP_TRANSPORT_TCP;
static int family = AF_INET;

struct rank_job {
	int rank, world;
	size_t n;		/* elements */
	int dtype;
	int iters;		/* 0: 1 */
	int timeout_ms;		/* 0: 20 s */
	int absent;		/* this rank does not take part */
	size_t n_override;	/* this rank uses another size (mismatch) */
	int dtype_override;	/* ... or another dtype */
	struct sockaddr_storage *addrs;
	struct dlcp_ep *ep;	/* opened on port 0 by run_ranks() */
	/* the ranks taking part meet here before they close their groups,
	 * so that an abort finds every peer still listening */
	pthread_barrier_t *done;
	int err;		/* the result */
};

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A rank's group, on its endpoint: 0, or the error (in j->err too). */
static inline int rank_open(struct rank_job *j, struct dlcp_group **g)
{
	j->err = dlcp_group_open_ep(g, j->ep, j->rank, j->world, j->addrs,
				    j->timeout_ms);
	if (j->err) {
		pthread_barrier_wait(j->done);
		return j->err;
	}
	j->ep = NULL;	/* the group's now */
	return 0;
}

/* Once every rank taking part is done: close the group. */
static inline void rank_close(struct rank_job *j, struct dlcp_group *g)
{
	pthread_barrier_wait(j->done);
	dlcp_group_close(g, j->err ? 2000 : -1);
}

/*
 * Run @world ranks of jobs of @size bytes copied from @proto, after
 * @tweak (may be NULL) of each, on endpoints of family and transport:
 * @body(job) on a thread per rank that is not absent. Returns the jobs
 * (the caller frees them).
 */
static inline void *run_ranks(const void *proto, size_t size, int world,
			      void (*tweak)(struct rank_job *, int),
			      void *(*body)(void *))
{
	struct sockaddr_storage *addrs = calloc((size_t)world, sizeof(*addrs));
	struct dlcp_ep **eps = calloc((size_t)world, sizeof(*eps));
	char *jobs = calloc((size_t)world, size);
	pthread_t *thr = calloc((size_t)world, sizeof(*thr));
	pthread_barrier_t done;
	int r, err, present = 0;

	err = open_eps(world, family, transport, eps, addrs);
	for (r = 0; r < world; r++) {
		struct rank_job *j = (struct rank_job *)(jobs + (size_t)r * size);

		memcpy(j, proto, size);
		j->rank = r;
		j->world = world;
		j->addrs = addrs;
		j->ep = err ? NULL : eps[r];
		j->err = err;
		j->done = &done;
		if (!j->iters)
			j->iters = 1;
		if (!j->timeout_ms)
			j->timeout_ms = 20000;
		if (tweak && !err)
			tweak(j, r);
		present += !j->absent;
	}
	pthread_barrier_init(&done, NULL, (unsigned int)(present ? present : 1));
	for (r = 0; r < world && !err; r++)
		if (!((struct rank_job *)(jobs + (size_t)r * size))->absent)
			pthread_create(&thr[r], NULL, body, jobs + (size_t)r * size);
	for (r = 0; r < world && !err; r++)
		if (!((struct rank_job *)(jobs + (size_t)r * size))->absent)
			pthread_join(thr[r], NULL);
	pthread_barrier_destroy(&done);
	for (r = 0; r < world; r++) {	/* absent ranks' endpoints */
		struct rank_job *j = (struct rank_job *)(jobs + (size_t)r * size);

		if (j->ep)
			dlcp_ep_close(j->ep, 0);
		j->addrs = NULL;
		j->done = NULL;
	}
	free(thr);
	free(eps);
	free(addrs);
	return jobs;
}

/* Element @i of rank @rank's input of a reduction (@same: every rank's
 * the same), an integer so that float sums are exact. */
static inline int32_t val(int rank, size_t i, int same)
{
	if (same)
		return (int32_t)(i % 50) + 1;
	return (int32_t)((i * 7 + (size_t)rank * 13 + 3) % 101) - 50;
}

/* @buf[0..@n) <- rank @rank's input, as FP32 or INT32 (@dtype). */
static inline void fill_vals(void *buf, size_t n, int dtype, int rank, int same)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int32_t v = val(rank, i, same);

		if (dtype == DLCP_DTYPE_FP32)
			((float *)buf)[i] = (float)v;
		else
			((int32_t *)buf)[i] = v;
	}
}

/* Tweaks: rank 1 with another size or dtype; the last rank stays away. */
static inline void tweak_size(struct rank_job *j, int r)
{
	if (r == 1)
		j->n_override = j->n + 200;
}

static inline void tweak_dtype(struct rank_job *j, int r)
{
	if (r == 1)
		j->dtype_override = DLCP_DTYPE_INT32;
}

static inline void tweak_dead(struct rank_job *j, int r)
{
	if (r == j->world - 1)
		j->absent = 1;
}

#endif /* DLCP_TEST_RANKS_H */
