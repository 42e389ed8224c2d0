// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp collectives, end to end: ranks are threads, each with its own
 * endpoint on 127.0.0.1 and its own port. Prints TAP.
 *
 *   test_coll [tcp|dlcp] [--loss]
 *
 * Without --loss: every collective with budget 0 must equal a local
 * reduction exactly (integer-valued data, so float sums are exact), for
 * several sizes and world sizes, plus bad-input cases (size/dtype mismatch,
 * a dead rank, bad arguments).
 * With --loss (DLCP over a lossy link, e.g. netem on lo in a netns): every
 * rank contributes the same values, so the mean over *any* non-empty
 * subset of contributions is exactly that value: an element averaged over
 * the contributions that arrived is exact, one that counted a lost (zero)
 * contribution is not. Loss must actually have happened (bytes_lost > 0).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "libdlcp.h"
#include "tap.h"
#include "ranks.h"

enum op { OP_ALLREDUCE, OP_RS, OP_AG, OP_PS, OP_PS_DEDICATED, OP_BARRIER };

struct job {
	struct rank_job b;
	enum op op;
	int reduce;
	int algo;		/* enum dlcp_algo */
	uint32_t budget;
	int same_values;	/* loss test: all ranks contribute the same */
	/* results */
	long bad_elems;
	struct dlcp_coll_stats st;
	double secs;
};

static double expect(const struct job *j, size_t i, int rank)
{
	double s = 0;
	int r, contributors = j->b.world;

	if (j->op == OP_PS_DEDICATED)
		contributors = j->b.world - 1;
	for (r = 0; r < j->b.world; r++) {
		if (j->op == OP_PS_DEDICATED && r == 0)
			continue;
		s += val(r, i, j->same_values);
	}
	(void)rank;
	if (j->reduce == DLCP_REDUCE_SUM)
		return s;
	if (j->b.dtype == DLCP_DTYPE_INT32)
		return (double)((int32_t)s / contributors);
	return (double)((float)s / (float)contributors);
}

static void *rank_main(void *arg)
{
	struct job *j = arg;
	struct dlcp_group *g;
	struct dlcp_coll_opts o = { 0 };
	size_t n = j->b.n_override ? j->b.n_override : j->b.n, i;
	int dtype = j->b.dtype_override ? j->b.dtype_override : j->b.dtype;
	void *buf;
	double t0;
	int it;

	if (rank_open(&j->b, &g))
		return NULL;
	buf = malloc((n ? n : 1) * 4);
	o.reduce = j->reduce;
	o.algo = j->algo;
	o.budget_ppm = j->budget;
	o.budget2_ppm = j->budget / 2;
	o.stats = &j->st;
	t0 = now();
	for (it = 0; it < j->b.iters && !j->b.err; it++) {
		struct dlcp_coll_stats st;

		o.iteration = (uint32_t)it;
		o.tag = 5;
		o.layer = 1;
		o.stats = &st;
		fill_vals(buf, n, dtype, j->b.rank, j->same_values);
		switch (j->op) {
		case OP_ALLREDUCE:
			j->b.err = dlcp_allreduce(g, buf, n, dtype, &o);
			break;
		case OP_RS:
			j->b.err = dlcp_reduce_scatter(g, buf, n, dtype, &o);
			break;
		case OP_AG:
			j->b.err = dlcp_all_gather(g, buf, n, dtype, &o);
			break;
		case OP_PS:
			j->b.err = dlcp_ps_push_pull(g, buf, buf, n, dtype, &o);
			break;
		case OP_PS_DEDICATED:
			o.dedicated_server = 1;
			j->b.err = dlcp_ps_push_pull(g, j->b.rank ? buf : NULL,
						   j->b.rank ? buf : NULL, n, dtype, &o);
			break;
		case OP_BARRIER:
			j->b.err = dlcp_barrier(g, (uint32_t)it, j->b.timeout_ms);
			break;
		}
		j->st.bytes_lost += st.bytes_lost;
		j->st.elems_lost += st.elems_lost;
		j->st.elems_fallback += st.elems_fallback;
		j->st.msgs_sent += st.msgs_sent;
		if (j->b.err || j->op == OP_BARRIER)
			continue;
		if (j->op == OP_PS_DEDICATED && j->b.rank == 0)
			continue;
		for (i = 0; i < n; i++) {
			size_t off, len;
			double want, got;

			if (j->op == OP_RS) {
				dlcp_chunk_range(n, (unsigned int)j->b.world,
						 (unsigned int)j->b.rank, &off, &len);
				want = (i >= off && i < off + len) ?
					expect(j, i, j->b.rank) :
					val(j->b.rank, i, j->same_values);
			} else if (j->op == OP_AG) {
				unsigned int owner = 0, w;

				for (w = 0; w < (unsigned int)j->b.world; w++) {
					dlcp_chunk_range(n, (unsigned int)j->b.world, w,
							 &off, &len);
					if (i >= off && i < off + len)
						owner = w;
				}
				want = val((int)owner, i, j->same_values);
			} else {
				want = expect(j, i, j->b.rank);
			}
			got = dtype == DLCP_DTYPE_FP32 ? ((float *)buf)[i] :
							 ((int32_t *)buf)[i];
			if (got != want) {
				if (j->bad_elems < 3)
					fprintf(stderr, "# rank %d elem %zu: got %g want %g\n",
						j->b.rank, i, got, want);
				j->bad_elems++;
			}
		}
	}
	j->secs = now() - t0;
	free(buf);
	rank_close(&j->b, g);
	return NULL;
}

static const char *opname(enum op op)
{
	static const char *const n[] = { "allreduce", "reduce_scatter",
		"all_gather", "ps", "ps_dedicated", "barrier" };
	return n[op];
}

static const char *rname(int r)
{
	static const char *const n[] = { "mean", "sum", "mean_zerofill" };
	return n[r];
}

static const char *aname(int algo)
{
	return algo == DLCP_ALGO_DIRECT ? " direct" : "";
}

static void exact_case_algo(enum op op, int world, size_t n, int dtype,
			    int reduce, int algo)
{
	struct job p = { 0 }, *jobs;
	int r, ok = 1, err = 0;
	long bad = 0;

	p.op = op;
	p.algo = algo;
	p.b.n = n;
	p.b.dtype = dtype;
	p.reduce = reduce;
	p.b.iters = 2;
	jobs = run_ranks(&p, sizeof(p), world, NULL, rank_main);
	for (r = 0; r < world; r++) {
		if (jobs[r].b.err)
			err = jobs[r].b.err;
		bad += jobs[r].bad_elems;
	}
	ok = !err && !bad;
	report(ok, "%s%s %s world=%d n=%zu %s exact%s (err=%d bad=%ld)",
	       opname(op), aname(algo), dtype == DLCP_DTYPE_FP32 ? "fp32" : "int32",
	       world, n, rname(reduce), family == AF_INET6 ? " over ::1" : "",
	       err, bad);
	free(jobs);
}

static void exact_case(enum op op, int world, size_t n, int dtype, int reduce)
{
	exact_case_algo(op, world, n, dtype, reduce, DLCP_ALGO_RING);
}

static void bad_cases(void)
{
	struct job p = { 0 }, *jobs;
	struct dlcp_group *g;
	struct sockaddr_in a[2];
	struct dlcp_coll_opts o = { 0 };
	float f[4] = { 0 };
	double t0;
	int r, ok, err;

	p.op = OP_ALLREDUCE;
	p.b.n = 1000;
	p.b.dtype = DLCP_DTYPE_FP32;
	p.b.timeout_ms = 3000;

	jobs = run_ranks(&p, sizeof(p), 2, tweak_size, rank_main);
	report(jobs[0].b.err == -EMSGSIZE && jobs[1].b.err == -EMSGSIZE,
	       "size mismatch -> -EMSGSIZE on both ranks (%d, %d)",
	       jobs[0].b.err, jobs[1].b.err);
	free(jobs);

	jobs = run_ranks(&p, sizeof(p), 3, tweak_size, rank_main);
	ok = 1;
	for (r = 0; r < 3; r++)
		ok &= jobs[r].b.err == -EMSGSIZE;
	report(ok, "size mismatch world=3 -> -EMSGSIZE everywhere (%d, %d, %d)",
	       jobs[0].b.err, jobs[1].b.err, jobs[2].b.err);
	free(jobs);

	jobs = run_ranks(&p, sizeof(p), 2, tweak_dtype, rank_main);
	report(jobs[0].b.err == -EINVAL && jobs[1].b.err == -EINVAL,
	       "dtype mismatch -> -EINVAL on both ranks (%d, %d)",
	       jobs[0].b.err, jobs[1].b.err);
	free(jobs);

	p.op = OP_PS;
	jobs = run_ranks(&p, sizeof(p), 3, tweak_size, rank_main);
	report(jobs[0].b.err == -EMSGSIZE, "ps size mismatch -> -EMSGSIZE at the server (%d)",
	       jobs[0].b.err);
	free(jobs);

	p.op = OP_ALLREDUCE;
	p.b.timeout_ms = 1500;
	t0 = now();
	jobs = run_ranks(&p, sizeof(p), 3, tweak_dead, rank_main);
	ok = jobs[0].b.err == -ETIMEDOUT && jobs[1].b.err == -ETIMEDOUT;
	report(ok && now() - t0 < 15, "dead rank -> -ETIMEDOUT, no hang (%d, %d, %.1f s)",
	       jobs[0].b.err, jobs[1].b.err, now() - t0);
	free(jobs);

	p.op = OP_PS;
	t0 = now();
	jobs = run_ranks(&p, sizeof(p), 3, tweak_dead, rank_main);
	ok = jobs[0].b.err == -ETIMEDOUT && jobs[1].b.err == -ETIMEDOUT;
	report(ok && now() - t0 < 15, "ps dead worker -> -ETIMEDOUT (%d, %d, %.1f s)",
	       jobs[0].b.err, jobs[1].b.err, now() - t0);
	free(jobs);

	/* argument checks */
	a[0].sin_family = a[1].sin_family = AF_INET;
	a[0].sin_addr.s_addr = a[1].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a[0].sin_port = a[1].sin_port = 0;	/* any free port */
	report(dlcp_group_open(&g, 2, 2, a, transport, 0) == -EINVAL,
	       "group_open rank >= world -> -EINVAL");
	report(dlcp_group_open(&g, 0, 0, a, transport, 0) == -EINVAL,
	       "group_open world 0 -> -EINVAL");
	/* no address plan unless asked for */
	unsetenv("DLCP_GROUP_FILE");
	unsetenv("DLCP_SAME_HOST");
	unsetenv("DLCP_ADDR_PLAN");
	setenv("RANK", "0", 1);
	setenv("WORLD_SIZE", "2", 1);
	report(dlcp_group_open_env(&g, 0, transport, 0) == -EDESTADDRREQ,
	       "group_open_env without a group file or plan -> -EDESTADDRREQ");
	setenv("DLCP_ADDR_PLAN", "10.77", 1);
	setenv("WORLD_SIZE", "255", 1);
	report(dlcp_group_open_env(&g, 0, transport, 0) == -EINVAL,
	       "group_open_env DLCP_ADDR_PLAN=10.77 with 255 ranks -> -EINVAL");
	unsetenv("DLCP_ADDR_PLAN");
	/* same host: ranks on base_port .. base_port + world - 1 */
	setenv("DLCP_SAME_HOST", "1", 1);
	setenv("WORLD_SIZE", "2", 1);
	err = dlcp_group_open_env(&g, 65534, transport, 1000);
	if (!err)
		dlcp_group_close(g, 0);
	report(err != -EINVAL,
	       "group_open_env DLCP_SAME_HOST=1 on ports 65534-65535 is valid (%d)",
	       err);
	report(dlcp_group_open_env(&g, 65535, transport, 0) == -EINVAL,
	       "group_open_env DLCP_SAME_HOST=1 past port 65535 -> -EINVAL");
	unsetenv("DLCP_SAME_HOST");
	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
	if (dlcp_group_open(&g, 0, 1, a, transport, 1000) == 0) {
		o.reduce = 9;
		report(dlcp_allreduce(g, f, 4, DLCP_DTYPE_FP32, &o) == -EINVAL,
		       "allreduce bad reduce mode -> -EINVAL");
		o.reduce = 0;
		o.algo = __DLCP_ALGO_MAX;
		report(dlcp_allreduce(g, f, 4, DLCP_DTYPE_FP32, &o) == -EINVAL,
		       "allreduce bad algorithm -> -EINVAL");
		o.algo = -1;
		report(dlcp_reduce_scatter(g, f, 4, DLCP_DTYPE_FP32, &o) == -EINVAL,
		       "reduce_scatter bad algorithm -> -EINVAL");
		o.algo = DLCP_ALGO_RING;
		report(dlcp_allreduce(g, f, 4, DLCP_DTYPE_BF16, &o) == -EINVAL,
		       "allreduce unsupported dtype -> -EINVAL");
		report(dlcp_allreduce(g, NULL, 4, DLCP_DTYPE_FP32, &o) == -EINVAL,
		       "allreduce NULL buffer -> -EINVAL");
		o.budget_ppm = DLCP_PPM_MAX + 1;
		report(dlcp_allreduce(g, f, 4, DLCP_DTYPE_FP32, &o) == -EINVAL,
		       "allreduce budget > 1e6 ppm -> -EINVAL");
		o.budget_ppm = 0;
		o.server = 3;
		report(dlcp_ps_push_pull(g, f, f, 4, DLCP_DTYPE_FP32, &o) == -EINVAL,
		       "ps server out of range -> -EINVAL");
		report(dlcp_send_tensor(dlcp_group_ep(g), &a[0], f, 0, NULL) == -EINVAL,
		       "send empty tensor -> -EINVAL");
		{
			struct dlcp_tensor_meta m = { 0 };

			m.dtype = DLCP_DTYPE_FP32;
			report(dlcp_send_tensor(dlcp_group_ep(g), &a[0], f, 6, &m) == -EINVAL,
			       "send length not a multiple of the dtype -> -EINVAL");
		}
		dlcp_group_close(g, 0);
	} else {
		report(0, "group_open world 1");
	}
}

static void tweak_same(struct rank_job *j, int r)
{
	(void)r;
	((struct job *)j)->same_values = 1;
}

static void loss_case(enum op op, int world, size_t n, int reduce, uint32_t budget,
		      int algo)
{
	struct job p = { 0 }, *jobs;
	uint64_t lost = 0, elost = 0, fb = 0;
	int r, err = 0;
	long bad = 0;

	p.op = op;
	p.algo = algo;
	p.b.n = n;
	p.b.dtype = DLCP_DTYPE_FP32;
	p.reduce = reduce;
	p.budget = budget;
	p.b.iters = 5;
	jobs = run_ranks(&p, sizeof(p), world, tweak_same, rank_main);
	for (r = 0; r < world; r++) {
		if (jobs[r].b.err)
			err = jobs[r].b.err;
		bad += jobs[r].bad_elems;
		lost += jobs[r].st.bytes_lost;
		elost += jobs[r].st.elems_lost;
		fb += jobs[r].st.elems_fallback;
	}
	report(!err && !bad && lost > 0,
	       "loss: %s%s world=%d n=%zu %s budget=%u ppm: every element exact "
	       "(err=%d bad=%ld bytes_lost=%llu contributions_lost=%llu fallback=%llu)",
	       opname(op), aname(algo), world, n, rname(reduce), budget, err, bad,
	       (unsigned long long)lost, (unsigned long long)elost,
	       (unsigned long long)fb);
	free(jobs);
}

/* The same collectives between endpoints on ::1 (skipped without IPv6). */
static void ipv6_cases(void)
{
	struct sockaddr_storage ss, back;
	struct dlcp_ep *ep;
	char txt[64];

	report(!dlcp_parse_addr_sa("[::1]:7", &ss) && ss.ss_family == AF_INET6 &&
	       ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) == 7 &&
	       !dlcp_parse_addr_sa("127.0.0.1:8", &ss) && ss.ss_family == AF_INET &&
	       dlcp_parse_addr_sa("[::1:7", &ss) == -EINVAL &&
	       dlcp_parse_addr_sa("[nope]:7", &ss) == -EINVAL,
	       "parse_addr_sa: IPv4 and [IPv6]:port");
	if (open_eps(1, AF_INET6, transport, &ep, &ss)) {
		printf("ok %d - ipv6 # SKIP no ::1 here\n", ++ntest);
		return;
	}
	report(dlcp_ep_addr(ep, (struct sockaddr_in *)&back) == -EAFNOSUPPORT &&
	       inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, txt,
			 sizeof(txt)) && !strcmp(txt, "::1") &&
	       ((struct sockaddr_in6 *)&ss)->sin6_port != 0,
	       "ipv6 endpoint bound to ::1, a port of its own (%s)", txt);
	dlcp_ep_close(ep, 0);
	family = AF_INET6;
	exact_case(OP_ALLREDUCE, 3, 1001, DLCP_DTYPE_FP32, DLCP_REDUCE_SUM);
	exact_case_algo(OP_ALLREDUCE, 4, 1001, DLCP_DTYPE_FP32, DLCP_REDUCE_MEAN,
			DLCP_ALGO_DIRECT);
	exact_case(OP_PS, 3, 1000, DLCP_DTYPE_FP32, DLCP_REDUCE_SUM);
	family = AF_INET;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1, 3, 1000, 65537, 1000003 };
	static const int worlds[] = { 1, 2, 3, 4 };
	int loss = 0, i, k, w;

	eps_args(argc, argv, "collectives", &transport, &loss);
	if (loss) {
		loss_case(OP_ALLREDUCE, 4, 300000, DLCP_REDUCE_MEAN, 100000,
			  DLCP_ALGO_RING);
		loss_case(OP_ALLREDUCE, 3, 300000, DLCP_REDUCE_SUM, 100000,
			  DLCP_ALGO_RING);
		loss_case(OP_PS, 4, 300000, DLCP_REDUCE_MEAN, 100000, DLCP_ALGO_RING);
		loss_case(OP_RS, 4, 300000, DLCP_REDUCE_MEAN, 100000, DLCP_ALGO_RING);
		loss_case(OP_ALLREDUCE, 4, 300000, DLCP_REDUCE_MEAN, 100000,
			  DLCP_ALGO_DIRECT);
		loss_case(OP_ALLREDUCE, 3, 300000, DLCP_REDUCE_SUM, 100000,
			  DLCP_ALGO_DIRECT);
		loss_case(OP_RS, 4, 300000, DLCP_REDUCE_MEAN, 100000, DLCP_ALGO_DIRECT);
	} else {
		for (k = 0; k < 4; k++)
			for (i = 0; i < 5; i++)
				exact_case(OP_ALLREDUCE, worlds[k], sizes[i],
					   DLCP_DTYPE_FP32, DLCP_REDUCE_SUM);
		for (w = 2; w <= 4; w++) {
			exact_case(OP_ALLREDUCE, w, 1000, DLCP_DTYPE_INT32, DLCP_REDUCE_SUM);
			exact_case(OP_ALLREDUCE, w, 1000, DLCP_DTYPE_FP32, DLCP_REDUCE_MEAN);
			exact_case(OP_ALLREDUCE, w, 1001, DLCP_DTYPE_FP32,
				   DLCP_REDUCE_MEAN_ZEROFILL);
			exact_case(OP_RS, w, 1001, DLCP_DTYPE_FP32, DLCP_REDUCE_SUM);
			exact_case(OP_AG, w, 1001, DLCP_DTYPE_INT32, DLCP_REDUCE_SUM);
			exact_case(OP_PS, w, 65537, DLCP_DTYPE_FP32, DLCP_REDUCE_SUM);
			exact_case(OP_PS, w, 1000, DLCP_DTYPE_FP32, DLCP_REDUCE_MEAN);
			exact_case(OP_PS_DEDICATED, w, 1000, DLCP_DTYPE_FP32,
				   DLCP_REDUCE_MEAN);
			exact_case(OP_BARRIER, w, 0, DLCP_DTYPE_FP32, DLCP_REDUCE_SUM);
		}
		for (k = 0; k < 4; k++)
			for (i = 1; i < 5; i += 2)
				exact_case_algo(OP_ALLREDUCE, worlds[k], sizes[i],
						DLCP_DTYPE_FP32, DLCP_REDUCE_SUM,
						DLCP_ALGO_DIRECT);
		for (w = 2; w <= 4; w++) {
			exact_case_algo(OP_ALLREDUCE, w, 1001, DLCP_DTYPE_FP32,
					DLCP_REDUCE_MEAN, DLCP_ALGO_DIRECT);
			exact_case_algo(OP_ALLREDUCE, w, 1000, DLCP_DTYPE_INT32,
					DLCP_REDUCE_MEAN_ZEROFILL, DLCP_ALGO_DIRECT);
			exact_case_algo(OP_RS, w, 1001, DLCP_DTYPE_FP32,
					DLCP_REDUCE_SUM, DLCP_ALGO_DIRECT);
			exact_case_algo(OP_AG, w, 1001, DLCP_DTYPE_INT32,
					DLCP_REDUCE_SUM, DLCP_ALGO_DIRECT);
		}
		bad_cases();
		ipv6_cases();
	}
	return tap_done();
}
