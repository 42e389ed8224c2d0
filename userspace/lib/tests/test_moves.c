// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp reduce to a root, gather, scatter and all-to-all, end to end:
 * ranks are threads, each with its own endpoint on 127.0.0.1 and its own
 * port. Prints TAP.
 *
 *   test_moves [tcp|dlcp] [--loss]
 *
 * Without --loss: every result must equal a direct computation exactly
 * (reduce: integer-valued data, so float sums are exact), for several
 * world sizes, roots, dtypes and sizes (parts of several messages, empty
 * parts, uneven all-to-all splits at displacements with gaps), plus
 * mismatched sizes and dtypes, a dead rank and bad arguments.
 * With --loss (DLCP over a lossy link): a gather and an all-to-all without
 * a budget are still exact; with one, every element is either right or
 * keeps the buffer's previous value, and loss must actually have happened;
 * a reduce with a budget, every rank contributing the same values, gives
 * the exact mean.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libdlcp.h"
#include "tap.h"
#include "ranks.h"

enum op { OP_REDUCE, OP_GATHER, OP_SCATTER, OP_A2A, OP_A2AV };

#define SENTINEL	0xee	/* every byte of a receive buffer before */

struct job {
	struct rank_job b;
	enum op op;
	int reduce, algo, root;
	uint32_t budget;
	int same_values;	/* reduce: all ranks contribute the same */
	/* results */
	long bad;		/* wrong elements */
	long kept;		/* elements that kept the buffer's value */
	struct dlcp_coll_stats st;
};

/* Byte @b of element @i of the part rank @s has for rank @d. */
static uint8_t pat(int s, int d, size_t i, size_t b)
{
	return (uint8_t)(i * 7 + (size_t)s * 31 + (size_t)d * 17 + b * 3 + 1);
}

/* Elements of the OP_A2AV part from rank @s to rank @d: uneven, some 0,
 * one of several messages. */
static size_t a2av_count(const struct job *j, int s, int d)
{
	if (s == 0 && d == j->b.world - 1)
		return j->b.n;
	return (size_t)((s + 2 * d) % 3) * 5 + (s == d);
}

/* Displacements: send parts in reverse rank order, receive parts in rank
 * order with a gap of 3 elements before each. Returns the buffer's size. */
static size_t a2av_layout(const struct job *j, int sending, size_t *counts,
			  size_t *displs)
{
	size_t pos = 0;
	int k;

	for (k = 0; k < j->b.world; k++) {
		int p = sending ? j->b.world - 1 - k : k;

		counts[p] = sending ? a2av_count(j, j->b.rank, p) :
				      a2av_count(j, p, j->b.rank);
		if (!sending)
			pos += 3;
		displs[p] = pos;
		pos += counts[p];
	}
	return pos;
}

static double reduce_expect(const struct job *j, size_t i)
{
	double s = 0;
	int r;

	for (r = 0; r < j->b.world; r++)
		s += val(r, i, j->same_values);
	if (j->reduce == DLCP_REDUCE_SUM)
		return s;
	if (j->b.dtype == DLCP_DTYPE_INT32)
		return (double)((int32_t)s / j->b.world);
	return (double)((float)s / (float)j->b.world);
}

/* Compare @len elements at @got with the part (@s -> @d). */
static void check_part(struct job *j, const uint8_t *got, size_t len, int s,
		       int d)
{
	size_t esz = dlcp_dtype_size(j->b.dtype), i, b;

	for (i = 0; i < len; i++) {
		int right = 1, kept = 1;

		for (b = 0; b < esz; b++) {
			right &= got[i * esz + b] == pat(s, d, i, b);
			kept &= got[i * esz + b] == SENTINEL;
		}
		if (right)
			continue;
		if (kept && j->budget) {
			j->kept++;
			continue;
		}
		if (j->bad < 3)
			fprintf(stderr, "# rank %d: element %zu of the part %d -> %d wrong\n",
				j->b.rank, i, s, d);
		j->bad++;
	}
}

static void check_bytes(struct job *j, const uint8_t *p, size_t len, int v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)v) {
			j->bad++;
			return;
		}
}

static void fill_part(uint8_t *dst, size_t len, size_t esz, int s, int d)
{
	size_t i, b;

	for (i = 0; i < len; i++)
		for (b = 0; b < esz; b++)
			dst[i * esz + b] = pat(s, d, i, b);
}

static void do_reduce(struct job *j, struct dlcp_group *g,
		      struct dlcp_coll_opts *o, size_t n, int dtype)
{
	void *buf = malloc((n ? n : 1) * 4);
	size_t i;

	fill_vals(buf, n, dtype, j->b.rank, j->same_values);
	j->b.err = dlcp_reduce(g, buf, n, dtype, j->root, o);
	for (i = 0; i < n && !j->b.err; i++) {
		double got = dtype == DLCP_DTYPE_FP32 ? ((float *)buf)[i] :
							((int32_t *)buf)[i];
		double want = j->b.rank == j->root ? reduce_expect(j, i) :
			      val(j->b.rank, i, j->same_values);

		if (got != want && j->bad++ < 3)
			fprintf(stderr, "# rank %d elem %zu: got %g want %g\n",
				j->b.rank, i, got, want);
	}
	free(buf);
}

static void do_rooted(struct job *j, struct dlcp_group *g,
		      struct dlcp_coll_opts *o, size_t n, int dtype)
{
	size_t esz = dlcp_dtype_size(j->b.dtype), part = n * esz;
	size_t whole = part * (size_t)j->b.world;
	int root = j->b.rank == j->root, r;
	uint8_t *mine = malloc(part ? part : 1);
	uint8_t *all = root ? malloc(whole ? whole : 1) : NULL;

	if (j->op == OP_GATHER) {
		fill_part(mine, n, esz, j->b.rank, j->root);
		if (all)
			memset(all, SENTINEL, whole);
		j->b.err = dlcp_gather(g, mine, all, n, dtype, j->root, o);
	} else {
		memset(mine, SENTINEL, part);
		for (r = 0; all && r < j->b.world; r++)
			fill_part(all + (size_t)r * part, n, esz, j->root, r);
		j->b.err = dlcp_scatter(g, all, mine, n, dtype, j->root, o);
	}
	if (!j->b.err && j->op == OP_GATHER && all)
		for (r = 0; r < j->b.world; r++)
			check_part(j, all + (size_t)r * part, n, r, j->root);
	if (!j->b.err && j->op == OP_SCATTER)
		check_part(j, mine, n, j->root, j->b.rank);
	free(mine);
	free(all);
}

static void do_a2a(struct job *j, struct dlcp_group *g,
		   struct dlcp_coll_opts *o, size_t n, int dtype)
{
	size_t esz = dlcp_dtype_size(j->b.dtype), W = (size_t)j->b.world;
	size_t *sc = calloc(W, sizeof(*sc)), *sd = calloc(W, sizeof(*sd));
	size_t *rc = calloc(W, sizeof(*rc)), *rd = calloc(W, sizeof(*rd));
	size_t slen, rlen, p;
	uint8_t *sb, *rb;

	if (j->op == OP_A2AV) {
		slen = a2av_layout(j, 1, sc, sd);
		rlen = a2av_layout(j, 0, rc, rd);
		if (j->b.n_override && (size_t)j->b.rank == W - 1)
			rc[0] = j->b.n_override;	/* expects another size */
	} else {
		for (p = 0; p < W; p++) {
			sc[p] = rc[p] = n;
			sd[p] = rd[p] = p * n;
		}
		slen = rlen = W * n;
	}
	sb = malloc(slen * esz + 1);
	rb = malloc((rlen + 1) * esz + 1);	/* room for a mismatch */
	for (p = 0; p < W; p++)
		fill_part(sb + sd[p] * esz, sc[p], esz, j->b.rank, (int)p);
	memset(rb, SENTINEL, rlen * esz);
	if (j->op == OP_A2A)
		j->b.err = dlcp_all_to_all(g, sb, rb, n, dtype, o);
	else
		j->b.err = dlcp_all_to_allv(g, sb, sc, sd, rb, rc, rd, dtype, o);
	for (p = 0; p < W && !j->b.err; p++) {
		check_part(j, rb + rd[p] * esz, rc[p], (int)p, j->b.rank);
		if (j->op == OP_A2AV)	/* the gap before the part */
			check_bytes(j, rb + (rd[p] - 3) * esz, 3 * esz, SENTINEL);
	}
	free(sb);
	free(rb);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
}

static void *rank_main(void *arg)
{
	struct job *j = arg;
	struct dlcp_group *g;
	struct dlcp_coll_opts o = { 0 };
	size_t n = j->b.n_override && j->op != OP_A2AV ? j->b.n_override : j->b.n;
	int dtype = j->b.dtype_override ? j->b.dtype_override : j->b.dtype, it;

	if (rank_open(&j->b, &g))
		return NULL;
	o.reduce = j->reduce;
	o.algo = j->algo;
	o.budget_ppm = j->budget;
	o.budget2_ppm = j->budget;
	o.tag = 9;
	o.layer = 1;
	for (it = 0; it < j->b.iters && !j->b.err; it++) {
		struct dlcp_coll_stats st;

		o.iteration = (uint32_t)it;
		o.stats = &st;
		if (j->op == OP_REDUCE)
			do_reduce(j, g, &o, n, dtype);
		else if (j->op == OP_GATHER || j->op == OP_SCATTER)
			do_rooted(j, g, &o, n, dtype);
		else
			do_a2a(j, g, &o, n, dtype);
		if (!j->b.err) {
			j->st.bytes_lost += st.bytes_lost;
			j->st.elems_fallback += st.elems_fallback;
			j->st.msgs_sent += st.msgs_sent;
		}
	}
	rank_close(&j->b, g);
	return NULL;
}

static const char *opname(enum op op)
{
	static const char *const n[] = { "reduce", "gather", "scatter",
		"all_to_all", "all_to_allv" };
	return n[op];
}

static const char *dname(int dtype)
{
	static const char *const n[] = { "bytes", "fp32", "fp16", "bf16",
		"int8", "int32" };
	return n[dtype];
}

/*
 * Run @p on @world ranks: 1 if every rank ended without an error and no
 * wrong element; the sums of their results into *@t.
 */
static int run_case(const struct job *p, int world, struct job *t)
{
	struct job *jobs = run_ranks(p, sizeof(*p), world, NULL, rank_main);
	int r, ok = 1;

	memset(t, 0, sizeof(*t));
	for (r = 0; r < world; r++) {
		if (jobs[r].b.err)
			t->b.err = jobs[r].b.err;
		ok &= !jobs[r].b.err && !jobs[r].bad;
		t->bad += jobs[r].bad;
		t->kept += jobs[r].kept;
		t->st.bytes_lost += jobs[r].st.bytes_lost;
		t->st.elems_fallback += jobs[r].st.elems_fallback;
		t->st.msgs_sent += jobs[r].st.msgs_sent;
	}
	free(jobs);
	return ok;
}

static void exact_case(enum op op, int world, size_t n, int dtype, int root,
		       int reduce, int algo)
{
	/* twice (the second call must not take the first one's messages),
	 * but the large cases, whose parts take several messages */
	struct job t, p = { .b = { .n = n, .dtype = dtype,
				   .iters = n > 100000 ? 1 : 2 },
			    .op = op, .root = root, .reduce = reduce,
			    .algo = algo };
	int ok = run_case(&p, world, &t);

	report(ok, "%s world=%d n=%zu %s root=%d%s%s exact (err=%d bad=%ld msgs=%llu)",
	       opname(op), world, n, dname(dtype), root,
	       op == OP_REDUCE ? (reduce == DLCP_REDUCE_SUM ? " sum" :
				  reduce == DLCP_REDUCE_MEAN ? " mean" :
				  " mean_zerofill") : "",
	       op == OP_REDUCE && algo == DLCP_ALGO_DIRECT ? " direct" : "",
	       t.b.err, t.bad, (unsigned long long)t.st.msgs_sent);
}

/* The last rank expects another length from rank 0 in an all_to_allv. */
static void tweak_a2av(struct rank_job *j, int r)
{
	(void)r;
	j->n_override = j->n + 1;
}

static void mismatch_cases(void)
{
	struct job p = { 0 }, *jobs;
	double t0;
	int r, ok;

	p.b.n = 100;
	p.b.dtype = DLCP_DTYPE_FP32;
	p.b.timeout_ms = 3000;

	p.op = OP_GATHER;
	jobs = run_ranks(&p, sizeof(p), 3, tweak_size, rank_main);
	report(jobs[0].b.err == -EMSGSIZE && !jobs[2].b.err,
	       "gather: a part of another size -> -EMSGSIZE at the root (%d, %d, %d)",
	       jobs[0].b.err, jobs[1].b.err, jobs[2].b.err);
	free(jobs);

	p.op = OP_SCATTER;
	jobs = run_ranks(&p, sizeof(p), 2, tweak_size, rank_main);
	report(jobs[1].b.err == -EMSGSIZE,
	       "scatter: a part of another size -> -EMSGSIZE at the receiver (%d)",
	       jobs[1].b.err);
	free(jobs);

	p.op = OP_A2A;
	jobs = run_ranks(&p, sizeof(p), 2, tweak_dtype, rank_main);
	report(jobs[0].b.err == -EINVAL && jobs[1].b.err == -EINVAL,
	       "all_to_all: another dtype -> -EINVAL on both ranks (%d, %d)",
	       jobs[0].b.err, jobs[1].b.err);
	free(jobs);

	p.op = OP_A2AV;
	p.b.n = 1000;
	jobs = run_ranks(&p, sizeof(p), 3, tweak_a2av, rank_main);
	ok = jobs[2].b.err == -EMSGSIZE;
	for (r = 0; r < 2; r++)
		ok &= !jobs[r].b.err || jobs[r].b.err == -EMSGSIZE;
	report(ok, "all_to_allv: counts that disagree -> -EMSGSIZE, no hang (%d, %d, %d)",
	       jobs[0].b.err, jobs[1].b.err, jobs[2].b.err);
	free(jobs);

	p.op = OP_REDUCE;
	p.b.n = 1000;
	jobs = run_ranks(&p, sizeof(p), 3, tweak_size, rank_main);
	ok = 1;
	for (r = 0; r < 3; r++)
		ok &= jobs[r].b.err == -EMSGSIZE;
	report(ok, "reduce: size mismatch -> -EMSGSIZE everywhere (%d, %d, %d)",
	       jobs[0].b.err, jobs[1].b.err, jobs[2].b.err);
	free(jobs);

	p.b.timeout_ms = 1000;
	for (r = OP_REDUCE; r <= OP_A2A; r++) {
		if (r == OP_SCATTER)	/* sends only: nothing to wait for */
			continue;
		p.op = (enum op)r;
		t0 = now();
		jobs = run_ranks(&p, sizeof(p), 3, tweak_dead, rank_main);
		ok = jobs[0].b.err == -ETIMEDOUT &&
		     (jobs[1].b.err == -ETIMEDOUT || r == OP_GATHER);
		report(ok && now() - t0 < 15,
		       "%s: a dead rank -> -ETIMEDOUT, no hang (%d, %d, %.1f s)",
		       opname(p.op), jobs[0].b.err, jobs[1].b.err, now() - t0);
		free(jobs);
	}
}

static void arg_cases(void)
{
	struct dlcp_ep *ep;
	struct sockaddr_storage a;
	struct dlcp_group *g;
	struct dlcp_coll_opts o = { 0 };
	size_t cnt[1] = { 4 };
	float f[8] = { 0 }, h[8] = { 0 };

	if (open_eps(1, AF_INET, transport, &ep, &a) ||
	    dlcp_group_open_ep(&g, ep, 0, 1, &a, 1000)) {
		report(0, "group of one rank");
		return;
	}
	report(dlcp_reduce(g, f, 4, DLCP_DTYPE_FP32, 1, &o) == -EINVAL &&
	       dlcp_gather(g, f, h, 4, DLCP_DTYPE_FP32, -1, &o) == -EINVAL &&
	       dlcp_scatter(g, f, h, 4, DLCP_DTYPE_FP32, 1, &o) == -EINVAL,
	       "reduce/gather/scatter: root outside the group -> -EINVAL");
	report(dlcp_reduce(g, f, 4, DLCP_DTYPE_FP16, 0, &o) == -EINVAL &&
	       dlcp_gather(g, f, h, 4, __DLCP_DTYPE_MAX, 0, &o) == -EINVAL &&
	       dlcp_all_to_all(g, f, h, 4, -1, &o) == -EINVAL,
	       "unknown or unreducible dtype -> -EINVAL");
	report(dlcp_gather(g, NULL, h, 4, DLCP_DTYPE_FP32, 0, &o) == -EINVAL &&
	       dlcp_gather(g, f, NULL, 4, DLCP_DTYPE_FP32, 0, &o) == -EINVAL &&
	       dlcp_scatter(g, f, NULL, 4, DLCP_DTYPE_FP32, 0, &o) == -EINVAL &&
	       dlcp_all_to_allv(g, f, cnt, NULL, NULL, cnt, NULL,
				DLCP_DTYPE_FP32, &o) == -EINVAL &&
	       dlcp_all_to_allv(g, f, NULL, NULL, h, cnt, NULL,
				DLCP_DTYPE_FP32, &o) == -EINVAL,
	       "NULL buffer or counts -> -EINVAL");
	o.budget_ppm = DLCP_PPM_MAX + 1;
	report(dlcp_all_to_all(g, f, h, 4, DLCP_DTYPE_FP32, &o) == -EINVAL,
	       "all_to_all budget > 1e6 ppm -> -EINVAL");
	o.budget_ppm = 0;
	f[0] = 5;
	f[1] = 6;
	report(!dlcp_all_to_all(g, f, h, 2, DLCP_DTYPE_FP32, &o) && h[0] == 5 &&
	       h[1] == 6 && !dlcp_gather(g, NULL, NULL, 0, DLCP_DTYPE_BYTES, 0, &o),
	       "world 1: all_to_all copies, an empty gather is fine");
	dlcp_group_close(g, 0);
}

static void loss_case(enum op op, int world, size_t n, uint32_t budget)
{
	struct job t, p = { .b = { .n = n, .dtype = DLCP_DTYPE_FP32, .iters = 2 },
			    .op = op, .budget = budget, .same_values = 1,
			    .reduce = DLCP_REDUCE_MEAN };
	int ok = run_case(&p, world, &t) && (!budget || t.st.bytes_lost > 0);

	report(ok, "loss: %s world=%d n=%zu budget=%u ppm: %s (err=%d bad=%ld "
	       "kept=%ld bytes_lost=%llu fallback=%llu)", opname(op), world, n,
	       budget, budget ? "every element right or kept" : "exact", t.b.err,
	       t.bad, t.kept, (unsigned long long)t.st.bytes_lost,
	       (unsigned long long)t.st.elems_fallback);
}

int main(int argc, char **argv)
{
	static const int dtypes[] = { DLCP_DTYPE_BYTES, DLCP_DTYPE_FP16,
		DLCP_DTYPE_INT32 };
	int loss = 0, w, k;

	eps_args(argc, argv, "reduce, gather, scatter, all-to-all", &transport,
		 &loss);
	if (loss) {
		loss_case(OP_GATHER, 4, 300000, 0);
		loss_case(OP_A2AV, 3, 300000, 0);
		loss_case(OP_A2A, 4, 100000, 100000);
		loss_case(OP_REDUCE, 4, 100000, 100000);
		return tap_done();
	}
	for (w = 1; w <= 4; w++) {
		exact_case(OP_REDUCE, w, 1001, DLCP_DTYPE_FP32, w - 1,
			   DLCP_REDUCE_SUM, DLCP_ALGO_RING);
		exact_case(OP_GATHER, w, 7, DLCP_DTYPE_BYTES, w / 2, 0, 0);
		exact_case(OP_SCATTER, w, 7, DLCP_DTYPE_BYTES, w - 1, 0, 0);
		exact_case(OP_A2A, w, 5, DLCP_DTYPE_INT32, 0, 0, 0);
		exact_case(OP_A2AV, w, 40, DLCP_DTYPE_FP16, 0, 0, 0);
	}
	for (w = 2; w <= 4; w++) {
		exact_case(OP_REDUCE, w, 1000, DLCP_DTYPE_INT32, 1,
			   DLCP_REDUCE_SUM, DLCP_ALGO_RING);
		exact_case(OP_REDUCE, w, 1001, DLCP_DTYPE_FP32, 0,
			   DLCP_REDUCE_MEAN, DLCP_ALGO_DIRECT);
		exact_case(OP_REDUCE, w, 1, DLCP_DTYPE_FP32, w - 1,
			   DLCP_REDUCE_MEAN_ZEROFILL, DLCP_ALGO_RING);
		exact_case(OP_REDUCE, w, 1000, DLCP_DTYPE_INT32, w - 1,
			   DLCP_REDUCE_MEAN, DLCP_ALGO_DIRECT);
	}
	for (k = 0; k < 3; k++) {
		exact_case(OP_GATHER, 3, 0, dtypes[k], 1, 0, 0);
		exact_case(OP_SCATTER, 3, 1, dtypes[k], 2, 0, 0);
		exact_case(OP_A2A, 3, 0, dtypes[k], 0, 0, 0);
	}
	/* parts of several messages (1 MiB each) */
	exact_case(OP_GATHER, 3, 300001, DLCP_DTYPE_INT32, 2, 0, 0);
	exact_case(OP_SCATTER, 3, 1100000, DLCP_DTYPE_BYTES, 1, 0, 0);
	exact_case(OP_A2A, 3, 270001, DLCP_DTYPE_FP32, 0, 0, 0);
	exact_case(OP_A2AV, 3, 600000, DLCP_DTYPE_BF16, 0, 0, 0);
	exact_case(OP_REDUCE, 3, 300001, DLCP_DTYPE_FP32, 2, DLCP_REDUCE_SUM,
		   DLCP_ALGO_RING);
	mismatch_cases();
	arg_cases();
	return tap_done();
}
