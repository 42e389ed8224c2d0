// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp quantized collectives, end to end: ranks are threads on
 * 127.0.0.1. Prints TAP.
 *
 *   test_qcoll [tcp|dlcp] [--loss]
 *
 * Exactness: inputs are integers in [-L, L] and rank 0 holds an element at
 * L, so the shared scale is L, every value quantizes exactly and the result
 * must equal the true sum / mean exactly: this checks the scale exchange,
 * the integer sums at every hop, the widths on the wire and the counts.
 * With a rotation the result is checked against the error bound instead.
 * --loss (DLCP, lossy link): every rank has the same integer values, so the
 * mean over any subset of contributions is exact; loss must have happened.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "libdlcp.h"
#include "tap.h"
#include "eps.h"

static int transport = DLCP_TRANSPORT_TCP;

enum op { OP_AR, OP_RSAG, OP_PS, OP_PSD, OP_RAW };

struct job {
	int rank, world;
	enum op op;
	size_t n;
	int reduce;
	struct dlcp_quant_opts q;
	uint32_t budget;
	int same;
	int bits_override;	/* rank 1 uses other bits (mismatch) */
	struct sockaddr_storage *addrs;
	struct dlcp_ep *ep;	/* opened on port 0 by run() */
	int err;
	float *out;
	struct dlcp_coll_stats st;
};

static float val(const struct job *j, int rank, size_t i)
{
	int L = dlcp_quant_levels(j->q.bits ? j->q.bits : 8);

	if (j->q.fit && L / j->world)
		L /= j->world;
	else if (j->q.fit)
		L = 1;

	if (j->same)
		return (float)((int)(i % (size_t)(2 * L + 1)) - L);
	if (rank == 0 && i == 0)
		return (float)L;
	return (float)((int)((i * 7 + (size_t)rank * 13 + 3) % (size_t)(2 * L + 1)) - L);
}

static void *rank_main(void *arg)
{
	struct job *j = arg;
	struct dlcp_coll_opts o = { 0 };
	struct dlcp_quant_opts q = j->q;
	struct dlcp_group *g;
	float *buf;
	size_t i;
	int it;

	j->err = dlcp_group_open_ep(&g, j->ep, j->rank, j->world, j->addrs,
				    10000);
	if (j->err)
		return NULL;
	j->ep = NULL;	/* the group's now */
	buf = malloc((j->n ? j->n : 1) * sizeof(*buf));
	j->out = buf;
	o.tag = 5;
	o.reduce = j->reduce;
	o.budget_ppm = j->budget;
	o.budget2_ppm = j->budget;
	o.stats = &j->st;
	if (j->bits_override && j->rank == 1)
		q.bits = j->bits_override;
	for (it = 0; it < (j->same ? 5 : 1) && !j->err; it++) {
		for (i = 0; i < j->n; i++)
			buf[i] = val(j, j->rank, i);
		o.iteration = (uint32_t)it * 2;
		switch (j->op) {
		case OP_AR:
			j->err = dlcp_allreduce_q(g, buf, j->n, &o, &q);
			break;
		case OP_RSAG: {
			struct dlcp_qstate *qs;

			dlcp_qstate_alloc(&qs);
			j->err = dlcp_reduce_scatter_q(g, buf, j->n, &o, &q, qs);
			o.iteration++;
			if (!j->err)
				j->err = dlcp_all_gather_q(g, buf, j->n, &o, qs);
			dlcp_qstate_free(qs);
			break;
		}
		case OP_PS:
		case OP_PSD:
			o.server = 0;
			o.dedicated_server = j->op == OP_PSD;
			j->err = dlcp_ps_push_pull_q(g, buf, buf, j->n, &o, &q);
			break;
		case OP_RAW:
			j->err = dlcp_allreduce(g, buf, j->n, DLCP_DTYPE_FP32, &o);
			break;
		}
	}
	dlcp_group_close(g, 2000);
	return NULL;
}

static struct job *run(const struct job *p)
{
	struct job *jobs = calloc((size_t)p->world, sizeof(*jobs));
	struct sockaddr_storage *addrs = calloc((size_t)p->world, sizeof(*addrs));
	struct dlcp_ep **eps = calloc((size_t)p->world, sizeof(*eps));
	pthread_t *t = calloc((size_t)p->world, sizeof(*t));
	int r, err;

	err = open_eps(p->world, AF_INET, transport, eps, addrs);
	for (r = 0; r < p->world; r++) {
		jobs[r] = *p;
		jobs[r].rank = r;
		jobs[r].addrs = addrs;
		jobs[r].ep = err ? NULL : eps[r];
		jobs[r].err = err;
		if (!err)
			pthread_create(&t[r], NULL, rank_main, &jobs[r]);
	}
	for (r = 0; r < p->world; r++)
		if (!err)
			pthread_join(t[r], NULL);
	for (r = 0; r < p->world; r++)
		if (jobs[r].ep)
			dlcp_ep_close(jobs[r].ep, 0);
	free(eps);
	free(t);
	return jobs;	/* addrs leaked into jobs[0].addrs: freed by done() */
}

static void done(struct job *jobs)
{
	int r;

	for (r = 0; r < jobs[0].world; r++)
		free(jobs[r].out);
	free(jobs[0].addrs);
	free(jobs);
}

static const char *opname(enum op op)
{
	static const char *const names[] = { "allreduce_q", "reduce_scatter_q+all_gather_q",
					     "ps_push_pull_q", "ps_push_pull_q(dedicated)",
					     "allreduce(fp32)" };
	return names[op];
}

/* the exact result of element i on any rank */
static float want(const struct job *j, size_t i)
{
	double s = 0;
	int r, c = 0;

	for (r = 0; r < j->world; r++) {
		if (j->op == OP_PSD && r == 0)
			continue;
		s += val(j, r, i);
		c++;
	}
	if (j->reduce == DLCP_REDUCE_MEAN)
		return (float)(s / c);
	if (j->reduce == DLCP_REDUCE_SUM)
		return (float)(s * j->world / c);
	return (float)(s / j->world);
}

static void exact_case_fit(enum op op, int world, size_t n, int bits, int reduce,
			   int fit)
{
	struct job p = { 0 }, *jobs;
	long bad = 0;
	int r, err = 0;
	size_t i;

	p.op = op;
	p.world = world;
	p.n = n;
	p.reduce = reduce;
	p.q.bits = bits;
	p.q.fit = fit;
	jobs = run(&p);
	for (r = 0; r < world; r++) {
		if (jobs[r].err)
			err = jobs[r].err;
		else if (!(op == OP_PSD && r == 0))
			for (i = 0; i < n; i++)
				if (jobs[r].out[i] != want(&p, i))
					bad++;
	}
	report(!err && !bad, "%s %d bits%s world=%d n=%zu %s: exact integer sums "
	       "(err=%d bad=%ld)", opname(op), bits, fit ? " fit" : "", world, n,
	       reduce == DLCP_REDUCE_SUM ? "sum" : "mean", err, bad);
	done(jobs);
}

static void exact_case(enum op op, int world, size_t n, int bits, int reduce)
{
	exact_case_fit(op, world, n, bits, reduce, 0);
}

static void rotated_case(int bits, int world, size_t n)
{
	struct job p = { 0 }, *jobs;
	double worst = 0, l2 = 0, l2x = 0;
	int r, err = 0, L = dlcp_quant_levels(bits);
	size_t i;

	p.op = OP_AR;
	p.world = world;
	p.n = n;
	p.reduce = DLCP_REDUCE_MEAN;
	p.q.bits = bits;
	p.q.hadamard = 1;
	p.q.seed = 77;
	jobs = run(&p);
	for (r = 0; r < world; r++) {
		if (jobs[r].err)
			err = jobs[r].err;
		else
			for (i = 0; i < n; i++) {
				double d = jobs[r].out[i] - want(&p, i);

				worst = fmax(worst, fabs(d));
				l2 += d * d;
				l2x += (double)want(&p, i) * want(&p, i);
				if (r && jobs[r].out[i] != jobs[0].out[i])
					err = -EDOM;	/* ranks must agree */
			}
	}
	/* rotated values are bounded by ||x||, error per element < scale/L */
	report(!err && sqrt(l2 / l2x) < 2.0 / L,
	       "allreduce_q %d bits + hadamard world=%d n=%zu: ranks agree, "
	       "relative L2 error %.4f < 2/L, max |error| %.3f (err=%d)", bits,
	       world, n, sqrt(l2 / l2x), worst, err);
	done(jobs);
}

static uint64_t bytes_of(enum op op, int bits, int hadamard, int fit, int world,
			 size_t n)
{
	struct job p = { 0 }, *jobs;
	uint64_t b = 0;
	int r;

	p.op = op;
	p.world = world;
	p.n = n;
	p.q.bits = bits;
	p.q.hadamard = hadamard;
	p.q.fit = fit;
	jobs = run(&p);
	for (r = 0; r < world; r++)
		b += jobs[r].err ? 0 : jobs[r].st.bytes_sent;
	done(jobs);
	return b;
}

static void wire_case(int world, size_t n)
{
	uint64_t raw = bytes_of(OP_RAW, 0, 0, 0, world, n);
	uint64_t b8 = bytes_of(OP_AR, 8, 0, 0, world, n);
	uint64_t b4 = bytes_of(OP_AR, 4, 0, 0, world, n);
	uint64_t b8h = bytes_of(OP_AR, 8, 1, 0, world, n);
	uint64_t b8f = bytes_of(OP_AR, 8, 0, 1, world, n);
	uint64_t b4f = bytes_of(OP_AR, 4, 0, 1, world, n);

	report(b8 && b4 && b8f && b4f && b8 < raw / 2 && b4 < b8 &&
	       b8f < raw / 3.9 && b4f < raw / 7.8,
	       "bytes on the wire, allreduce world=%d n=%zu: fp32 %llu, 8-bit %llu "
	       "(%.2fx), 8-bit+hadamard %llu, 4-bit %llu (%.2fx), 8-bit fit %llu "
	       "(%.2fx), 4-bit fit %llu (%.2fx)", world, n,
	       (unsigned long long)raw, (unsigned long long)b8,
	       (double)raw / (double)b8, (unsigned long long)b8h,
	       (unsigned long long)b4, (double)raw / (double)b4,
	       (unsigned long long)b8f, (double)raw / (double)b8f,
	       (unsigned long long)b4f, (double)raw / (double)b4f);
}

static void mismatch_case(void)
{
	struct job p = { 0 }, *jobs;
	int r, ok = 1;

	p.op = OP_AR;
	p.world = 2;
	p.n = 100;
	p.q.bits = 8;
	p.bits_override = 4;
	jobs = run(&p);
	for (r = 0; r < 2; r++)
		if (jobs[r].err != -EINVAL)
			ok = 0;
	report(ok, "bits mismatch: -EINVAL on every rank (%d, %d)", jobs[0].err,
	       jobs[1].err);
	done(jobs);
}

static void loss_case(enum op op, int world, size_t n, int bits)
{
	struct job p = { 0 }, *jobs;
	uint64_t lost = 0, el = 0, fb = 0;
	long bad = 0;
	int r, err = 0;
	size_t i;

	p.op = op;
	p.world = world;
	p.n = n;
	p.reduce = DLCP_REDUCE_MEAN;
	p.q.bits = bits;
	p.budget = 100000;
	p.same = 1;
	jobs = run(&p);
	for (r = 0; r < world; r++) {
		if (jobs[r].err)
			err = jobs[r].err;
		else
			for (i = 0; i < n; i++)
				if (jobs[r].out[i] != val(&p, 0, i))
					bad++;
		lost += jobs[r].st.bytes_lost;
		el += jobs[r].st.elems_lost;
		fb += jobs[r].st.elems_fallback;
	}
	report(!err && !bad && lost > 0,
	       "loss: %s %d bits world=%d n=%zu mean: every element exact "
	       "(err=%d bad=%ld bytes_lost=%llu contributions_lost=%llu "
	       "fallback=%llu)", opname(op), bits, world, n, err, bad,
	       (unsigned long long)lost, (unsigned long long)el,
	       (unsigned long long)fb);
	done(jobs);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1, 3, 1000, 65537 };
	int loss = 0, w, k;

	eps_args(argc, argv, "quantized collectives", &transport, &loss);
	if (loss) {
		loss_case(OP_AR, 4, 300000, 8);
		loss_case(OP_AR, 3, 300000, 4);
		loss_case(OP_PS, 4, 300000, 8);
	} else {
		for (w = 1; w <= 4; w++)
			for (k = 0; k < 4; k++) {
				exact_case(OP_AR, w, sizes[k], 8, DLCP_REDUCE_SUM);
				exact_case(OP_AR, w, sizes[k], 4, DLCP_REDUCE_MEAN);
			}
		exact_case(OP_RSAG, 3, 1001, 8, DLCP_REDUCE_MEAN);
		exact_case(OP_RSAG, 4, 65537, 4, DLCP_REDUCE_SUM);
		exact_case(OP_PS, 3, 5000, 8, DLCP_REDUCE_MEAN);
		exact_case(OP_PS, 4, 5000, 4, DLCP_REDUCE_SUM);
		exact_case(OP_PSD, 4, 5000, 8, DLCP_REDUCE_MEAN);
		exact_case_fit(OP_AR, 4, 65537, 8, DLCP_REDUCE_MEAN, 1);
		exact_case_fit(OP_AR, 3, 1000, 4, DLCP_REDUCE_SUM, 1);
		exact_case_fit(OP_PS, 3, 5000, 8, DLCP_REDUCE_MEAN, 1);
		exact_case_fit(OP_RSAG, 2, 5000, 4, DLCP_REDUCE_MEAN, 1);
		rotated_case(8, 4, 100000);
		rotated_case(4, 3, 1000);
		wire_case(4, 262144);
		mismatch_case();
	}
	return tap_done();
}
