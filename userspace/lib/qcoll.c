// SPDX-License-Identifier: GPL-2.0
/*
 * libdlcp quantized (homomorphic) collectives: ring reduce-scatter /
 * all-gather / all-reduce and parameter server on integers (see libdlcp.h).
 *
 * 1. Every rank rotates its tensor (optional randomized Hadamard, seed
 *    shared: derived from the caller's seed, tag and iteration, and checked
 *    through the exchange), then sends its max |x| to every other rank
 *    (K_QMAX, header only, critical); the max of all is the shared scale.
 * 2. Every rank quantizes with stochastic rounding to b bits (values in
 *    [-L, L]); the ring hops (or the server) add the integers of arriving
 *    messages to their own, in int32 accumulators, with per-element counts
 *    as in coll.c; each message goes out at the narrowest width (4, 8, 16 or
 *    32 bits) holding its values, so the wire carries whole elements per
 *    packet (the segment size is a multiple of the element size).
 * 3. The all-gather / pull carries the integer sums and their counts; every
 *    rank decompresses once (sum * scale / L, averaged over the count) and
 *    undoes the rotation.
 *
 * Messages are [struct qhdr][runs][packed integers], the header and runs
 * critical, keyed like coll.c's (tag, kind, step) with kinds of their own.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "libdlcp.h"
#include "frame.h"
#include "group.h"

#define QMAGIC		0x444c4351u	/* "DLCQ" */
#define QVERSION	1
#define QF_HADAMARD	1
#define QF_FIT		2

enum {
	K_QMAX = 8,
	K_QRS = 9,
	K_QAG = 10,
	K_QPUSH = 11,
	K_QPULL = 12,
};

struct qhdr {
	uint32_t magic;
	uint8_t kind;
	uint8_t width;		/* bits per element on the wire */
	uint8_t bits;		/* quantizer */
	uint8_t flags;
	uint8_t reduce;
	uint8_t version;
	uint16_t reserved0;
	uint32_t tag;
	uint32_t iteration;
	uint32_t step;
	uint32_t chunk;
	uint32_t world;
	uint32_t base_count;
	float scale;		/* K_QMAX: the sender's max |x| */
	uint32_t seed;
	uint64_t nelem;		/* caller's element count */
	uint64_t chunk_off;	/* in the (padded) quantized vector */
	uint64_t chunk_len;
	uint32_t nruns;
	uint32_t hdr_len;
	uint32_t reserved1;
	uint32_t reserved2;
};

_Static_assert(sizeof(struct qhdr) % 8 == 0, "qhdr alignment");

struct qrun {
	uint32_t start;
	uint32_t len;
	uint32_t count;
	uint32_t reserved;
};

struct dlcp_qstate {
	int valid;
	size_t n, m;
	int bits, flags, reduce, world, rank;
	uint32_t tag, seed;
	uint64_t rseed;
	float scale;
	int32_t *own;		/* m: this rank's quantized contribution */
	int32_t *sum;		/* chunk rank: integer sums */
	uint32_t *cnt;		/* and their counts */
	size_t off, len;
};

struct qc {
	struct dlcp_group *g;
	const struct dlcp_coll_opts *o;
	struct dlcp_coll_stats *st;
	size_t n, m;
	int bits, levels, flags, reduce, timeout_ms, wide16;
	uint32_t seed;
	float scale;
};

int dlcp_qstate_alloc(struct dlcp_qstate **qs)
{
	if (!qs)
		return -EINVAL;
	*qs = calloc(1, sizeof(**qs));
	return *qs ? 0 : -ENOMEM;
}

static void qstate_reset(struct dlcp_qstate *qs)
{
	free(qs->own);
	free(qs->sum);
	free(qs->cnt);
	memset(qs, 0, sizeof(*qs));
}

void dlcp_qstate_free(struct dlcp_qstate *qs)
{
	if (!qs)
		return;
	qstate_reset(qs);
	free(qs);
}

static int qc_init(struct qc *c, struct dlcp_group *g, size_t n,
		   const struct dlcp_coll_opts *o, int bits, int flags,
		   uint32_t seed)
{
	struct dlcp_ep *ep;

	memset(c, 0, sizeof(*c));
	if (!g || !o || !dlcp_quant_levels(bits) || o->reduce < 0 ||
	    o->reduce >= __DLCP_REDUCE_MAX || o->budget_ppm > DLCP_PPM_MAX ||
	    o->budget2_ppm > DLCP_PPM_MAX || o->timeout_ms < 0)
		return -EINVAL;
	if (n > UINT32_MAX / 8)
		return -EMSGSIZE;
	c->g = g;
	c->o = o;
	c->st = o->stats;
	if (c->st)
		memset(c->st, 0, sizeof(*c->st));
	c->n = n;
	c->m = (flags & QF_HADAMARD) ? dlcp_hadamard_len(n) : n;
	c->bits = bits;
	c->flags = flags;
	c->levels = dlcp_quant_levels(bits);
	if (flags & QF_FIT) {
		c->levels /= dlcp_group_world(g);
		if (c->levels < 1)
			c->levels = 1;
	}
	c->seed = seed;
	c->reduce = o->reduce;
	c->timeout_ms = o->timeout_ms ? o->timeout_ms : g->timeout_ms;
	/* 16-bit elements stay whole in a packet only if segments are even */
	ep = dlcp_group_ep(g);
	c->wide16 = !(dlcp_ep_segment_size(ep) & 1);
	return 0;
}

static int qflags(const struct dlcp_quant_opts *q)
{
	return (q->hadamard ? QF_HADAMARD : 0) | (q->fit ? QF_FIT : 0);
}

static int qfail(struct qc *c, int err)
{
	if (err == -EMSGSIZE || err == -EINVAL || err == -EPROTO || err == -EIO)
		dlcp_frame_send_abort(c->g, c->o->tag, c->o->iteration, c->n, err);
	return err;
}

/*
 * Send @len integers @v (chunk @chunk at @off) to @dst; @cnt (NULL: all
 * @base) per element, elements whose count differs from @base as runs.
 * @len 0: header only, critical.
 */
static int send_q(struct qc *c, int dst, int kind, uint32_t step,
		  uint32_t chunk, const int32_t *v, size_t off, size_t len,
		  const uint32_t *cnt, uint32_t base, uint32_t budget)
{
	struct dlcp_tensor_meta m = { 0 };
	struct dlcp_range crit;
	struct qhdr *h;
	struct qrun *runs;
	struct iovec iov[2];
	size_t i, nruns = 0, hl, dl;
	int width = len ? dlcp_qwidth(v, len) : 8, err;
	char *hbuf, *data;

	if (width == 16 && !c->wide16)
		width = 32;
	if (cnt)
		for (i = 0; i < len; i++)
			if (cnt[i] != base && (i == 0 || cnt[i - 1] != cnt[i]))
				nruns++;
	hl = sizeof(*h) + nruns * sizeof(*runs);
	dl = dlcp_qwire_bytes(len, width);
	hbuf = calloc(1, hl + dl + 1);
	if (!hbuf)
		return -ENOMEM;
	h = (struct qhdr *)hbuf;
	runs = (struct qrun *)(hbuf + sizeof(*h));
	data = hbuf + hl;
	h->magic = QMAGIC;
	h->kind = (uint8_t)kind;
	h->width = (uint8_t)width;
	h->bits = (uint8_t)c->bits;
	h->flags = (uint8_t)c->flags;
	h->reduce = (uint8_t)c->reduce;
	h->version = QVERSION;
	h->tag = c->o->tag;
	h->iteration = c->o->iteration;
	h->step = step;
	h->chunk = chunk;
	h->world = (uint32_t)dlcp_group_world(c->g);
	h->base_count = base;
	h->scale = c->scale;
	h->seed = c->seed;
	h->nelem = c->n;
	h->chunk_off = off;
	h->chunk_len = len;
	h->nruns = (uint32_t)nruns;
	h->hdr_len = (uint32_t)hl;
	if (cnt) {
		size_t k = 0;

		for (i = 0; i < len; i++) {
			if (cnt[i] == base)
				continue;
			if (i && cnt[i - 1] == cnt[i] && k &&
			    runs[k - 1].start + runs[k - 1].len == i) {
				runs[k - 1].len++;
				continue;
			}
			runs[k].start = (uint32_t)i;
			runs[k].len = 1;
			runs[k].count = cnt[i];
			k++;
		}
	}
	if (len)
		dlcp_qpack(v, len, width, data);
	iov[0].iov_base = hbuf;
	iov[0].iov_len = hl;
	iov[1].iov_base = data;
	iov[1].iov_len = dl;
	crit.offset = 0;
	crit.len = (uint32_t)hl;
	m.tensor_id = dlcp_frame_tid(c->o->tag, kind, step);
	m.iteration = c->o->iteration;
	m.layer = c->o->layer;
	m.dtype = width == 32 ? DLCP_DTYPE_INT32 : DLCP_DTYPE_INT8;
	m.loss_budget_ppm = len ? budget : 0;
	if (len) {
		m.crit = &crit;
		m.nr_crit = 1;
	} else {
		m.flags = DLCP_MSG_CRITICAL;
	}
	err = dlcp_group_send(c->g, dst, iov, len ? 2 : 1, &m);
	free(hbuf);
	if (!err && c->st) {
		c->st->msgs_sent++;
		c->st->bytes_sent += hl + dl;
	}
	return err;
}

/*
 * Receive (@src, @kind, @step): @v[0..len) gets the integers (0 where
 * lost), @in_cnt their counts (0 where lost). K_QMAX: *@peer_max gets the
 * sender's max.
 */
static int recv_q(struct qc *c, int src, int kind, uint32_t step,
		  uint32_t chunk, size_t off, size_t len, int32_t *v,
		  uint32_t *in_cnt, float *peer_max)
{
	struct dlcp_group_msg *msg;
	struct dlcp_tensor_info info;
	struct dlcp_range *lost;
	const struct qhdr *h;
	const struct qrun *runs;
	void *buf;
	size_t i, j, wb;
	int err;

	err = dlcp_frame_wait(c->g, src, dlcp_frame_tid(c->o->tag, kind, step),
			      c->o->iteration, c->o->tag, c->timeout_ms, &msg);
	if (err)
		return err;
	buf = msg->buf;
	info = msg->info;
	lost = msg->lost;
	h = buf;
	if (info.msg_len < sizeof(*h) || h->magic != QMAGIC ||
	    h->version != QVERSION || h->kind != kind || h->step != step ||
	    h->hdr_len < sizeof(*h) || h->hdr_len > info.msg_len ||
	    h->hdr_len != sizeof(*h) + (size_t)h->nruns * sizeof(*runs) ||
	    (h->width != 4 && h->width != 8 && h->width != 16 &&
	     h->width != 32)) {
		err = -EPROTO;
		goto out;
	}
	if (h->nelem != c->n) {
		err = -EMSGSIZE;
		goto out;
	}
	if (h->bits != c->bits || h->flags != c->flags ||
	    h->reduce != c->reduce || h->seed != c->seed ||
	    h->world != (uint32_t)dlcp_group_world(c->g)) {
		err = -EINVAL;
		goto out;
	}
	if (h->chunk != chunk || h->chunk_off != off || h->chunk_len != len ||
	    info.msg_len != h->hdr_len + dlcp_qwire_bytes(len, h->width) ||
	    (kind != K_QMAX && h->scale != c->scale)) {
		err = -EPROTO;
		goto out;
	}
	for (i = 0; i < info.nr_lost; i++)
		if (lost[i].offset < h->hdr_len) {	/* critical: can't be */
			err = -EIO;
			goto out;
		}
	if (peer_max)
		*peer_max = h->scale;
	if (!len)
		goto done;
	dlcp_qunpack((const char *)buf + h->hdr_len, len, h->width, v);
	runs = (const struct qrun *)(h + 1);
	for (i = 0; i < len; i++)
		in_cnt[i] = h->base_count;
	for (j = 0; j < h->nruns; j++) {
		if ((size_t)runs[j].start + runs[j].len > len) {
			err = -EPROTO;
			goto out;
		}
		for (i = runs[j].start; i < (size_t)runs[j].start + runs[j].len; i++)
			in_cnt[i] = runs[j].count;
	}
	wb = h->width / 8;
	for (i = 0; i < info.nr_lost; i++) {
		size_t lo = lost[i].offset - h->hdr_len;
		size_t hi = lo + lost[i].len, a, b;

		if (h->width == 4) {
			a = lo * 2;
			b = hi * 2;
		} else {
			a = lo / wb;
			b = (hi + wb - 1) / wb;
		}
		if (b > len)
			b = len;
		for (j = a; j < b; j++) {
			if (c->st && in_cnt[j])
				c->st->elems_lost += in_cnt[j];
			in_cnt[j] = 0;
			v[j] = 0;
		}
	}
	if (c->st)
		c->st->bytes_lost += info.bytes_lost;
done:
	if (c->st)
		c->st->msgs_recv++;
out:
	dlcp_group_msg_free(msg);
	return err;
}

/* Every rank tells every other its max: c->scale becomes the max of all. */
static int scale_exchange(struct qc *c, float mine)
{
	int N = dlcp_group_world(c->g), r = dlcp_group_rank(c->g), i, err;
	float mx = mine, p;

	c->scale = mine;
	for (i = 0; i < N; i++) {
		if (i == r)
			continue;
		err = send_q(c, i, K_QMAX, 0, 0, NULL, 0, 0, NULL, 0, 0);
		if (err)
			return err;
	}
	for (i = 0; i < N; i++) {
		if (i == r)
			continue;
		err = recv_q(c, i, K_QMAX, 0, 0, 0, 0, NULL, NULL, &p);
		if (err)
			return err;
		if (p > mx || p != p)
			mx = p;
	}
	if (!isfinite(mx))
		return -ERANGE;		/* every rank sees the same */
	c->scale = mx > 0 ? mx : 1.0f;
	return 0;
}

static uint64_t rot_seed(const struct qc *c)
{
	return dlcp_quant_seed(c->seed, -1, c->o->tag, c->o->iteration);
}

/* Rotate (optionally) and quantize @src (n floats; NULL: zeros). */
static int prepare(struct qc *c, const float *src, int32_t **own,
		   uint64_t rseed)
{
	float *x, mx = 0;
	size_t i;
	int err;

	x = calloc(c->m ? c->m : 1, sizeof(*x));
	*own = malloc((c->m ? c->m : 1) * sizeof(**own));
	if (!x || !*own) {
		free(x);
		return -ENOMEM;
	}
	if (src)
		memcpy(x, src, c->n * sizeof(*x));
	if (c->flags & QF_HADAMARD)
		dlcp_hadamard(x, c->n, rseed, 0);
	for (i = 0; i < c->m; i++) {
		float a = fabsf(x[i]);

		if (a > mx || a != a)
			mx = a;
	}
	err = scale_exchange(c, mx);
	if (!err)
		err = dlcp_quantize(x, *own, c->m, c->scale, c->levels,
				    dlcp_quant_seed(c->seed, dlcp_group_rank(c->g),
						    c->o->tag, c->o->iteration));
	free(x);
	return err;
}

/*
 * Fill the elements nobody's value reached (@cnt 0) with this rank's own,
 * decompress, undo the rotation and write @out (n floats).
 */
static int finish(struct qc *c, int32_t *sum, uint32_t *cnt, const int32_t *own,
		  float *out, uint64_t rseed)
{
	unsigned int N = (unsigned int)dlcp_group_world(c->g);
	float *y;
	size_t i;
	long k;

	for (i = 0; i < c->m; i++) {
		if (cnt[i])
			continue;
		if (c->st && i < c->n)
			c->st->elems_fallback++;
		if (c->reduce == DLCP_REDUCE_MEAN_ZEROFILL) {
			sum[i] = own[i] * (int32_t)N;	/* keeps own value */
			cnt[i] = N;
		} else {
			sum[i] = own[i];
			cnt[i] = 1;
		}
	}
	y = malloc((c->m ? c->m : 1) * sizeof(*y));
	if (!y)
		return -ENOMEM;
	k = dlcp_dequantize(sum, cnt, y, c->m, c->scale, c->levels, c->reduce, N);
	if (k >= 0 && (c->flags & QF_HADAMARD))
		dlcp_hadamard(y, c->n, rseed, 1);
	if (k >= 0)
		memcpy(out, y, c->n * sizeof(*y));
	free(y);
	return k < 0 ? (int)k : 0;
}

static int rs_q(struct qc *c, float *buf, struct dlcp_qstate *qs)
{
	int N = dlcp_group_world(c->g), r = dlcp_group_rank(c->g), s, err;
	int right = (r + 1) % N, left = (r + N - 1) % N;
	uint32_t *in_cnt = NULL, *tcnt = NULL;
	int32_t *own = NULL, *tmp = NULL, *in = NULL;
	uint64_t rseed = rot_seed(c);
	size_t off, len, i, max;

	qstate_reset(qs);
	err = prepare(c, buf, &own, rseed);
	if (err)
		goto out;
	dlcp_chunk_range(c->m, (unsigned int)N, 0, &off, &max);
	max = max ? max : 1;
	in_cnt = malloc(max * sizeof(*in_cnt));
	tcnt = malloc(max * sizeof(*tcnt));
	tmp = malloc(max * sizeof(*tmp));
	in = malloc(max * sizeof(*in));
	if (!in_cnt || !tcnt || !tmp || !in) {
		err = -ENOMEM;
		goto out;
	}
	for (s = 0; s < N - 1; s++) {
		unsigned int sc = (unsigned int)((r - s - 1 + 2 * N) % N);
		unsigned int rc = (unsigned int)((r - s - 2 + 2 * N) % N);

		dlcp_chunk_range(c->m, (unsigned int)N, sc, &off, &len);
		if (s == 0)
			err = send_q(c, right, K_QRS, 0, sc, own + off, off, len,
				     NULL, 1, c->o->budget_ppm);
		else
			err = send_q(c, right, K_QRS, (uint32_t)s, sc, tmp, off, len,
				     tcnt, (uint32_t)s + 1, c->o->budget_ppm);
		if (err)
			goto out;
		dlcp_chunk_range(c->m, (unsigned int)N, rc, &off, &len);
		err = recv_q(c, left, K_QRS, (uint32_t)s, rc, off, len, in, in_cnt,
			     NULL);
		if (err)
			goto out;
		for (i = 0; i < len; i++) {
			tmp[i] = own[off + i] + in[i];	/* exact: |.| <= N * L */
			tcnt[i] = 1 + in_cnt[i];
		}
	}
	dlcp_chunk_range(c->m, (unsigned int)N, (unsigned int)r, &off, &len);
	if (N == 1) {
		memcpy(tmp, own, len * sizeof(*tmp));
		for (i = 0; i < len; i++)
			tcnt[i] = 1;
	}
	qs->valid = 1;
	qs->n = c->n;
	qs->m = c->m;
	qs->bits = c->bits;
	qs->flags = c->flags;
	qs->reduce = c->reduce;
	qs->world = N;
	qs->rank = r;
	qs->tag = c->o->tag;
	qs->seed = c->seed;
	qs->rseed = rseed;
	qs->scale = c->scale;
	qs->own = own;
	qs->sum = tmp;
	qs->cnt = tcnt;
	qs->off = off;
	qs->len = len;
	own = NULL;
	tmp = NULL;
	tcnt = NULL;
	if (!(c->flags & QF_HADAMARD)) {	/* chunk r of @buf: the result */
		float *y = malloc((len ? len : 1) * sizeof(*y));
		uint32_t *cc = malloc((len ? len : 1) * sizeof(*cc));

		if (!y || !cc) {
			free(y);
			free(cc);
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < len; i++)
			cc[i] = qs->cnt[i] ? qs->cnt[i] : 1;	/* own is there */
		dlcp_dequantize(qs->sum, cc, y, len, c->scale, c->levels, c->reduce,
				(unsigned int)N);
		memcpy(buf + off, y, len * sizeof(*y));
		free(y);
		free(cc);
	}
out:
	free(own);
	free(tmp);
	free(tcnt);
	free(in);
	free(in_cnt);
	return err;
}

static int ag_q(struct qc *c, float *buf, struct dlcp_qstate *qs)
{
	int N = qs->world, r = qs->rank, s, err = 0;
	int right = (r + 1) % N, left = (r + N - 1) % N;
	uint32_t *C;
	int32_t *S;
	size_t off, len;

	S = calloc(c->m ? c->m : 1, sizeof(*S));
	C = calloc(c->m ? c->m : 1, sizeof(*C));
	if (!S || !C) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(S + qs->off, qs->sum, qs->len * sizeof(*S));
	memcpy(C + qs->off, qs->cnt, qs->len * sizeof(*C));
	for (s = 0; s < N - 1; s++) {
		unsigned int sc = (unsigned int)((r - s + N) % N);
		unsigned int rc = (unsigned int)((r - s - 1 + 2 * N) % N);

		dlcp_chunk_range(c->m, (unsigned int)N, sc, &off, &len);
		err = send_q(c, right, K_QAG, (uint32_t)s, sc, S + off, off, len,
			     C + off, (uint32_t)N, c->o->budget2_ppm);
		if (err)
			goto out;
		dlcp_chunk_range(c->m, (unsigned int)N, rc, &off, &len);
		err = recv_q(c, left, K_QAG, (uint32_t)s, rc, off, len, S + off,
			     C + off, NULL);
		if (err)
			goto out;
	}
	err = finish(c, S, C, qs->own, buf, qs->rseed);
out:
	free(S);
	free(C);
	return err;
}

int dlcp_reduce_scatter_q(struct dlcp_group *g, float *buf, size_t n,
			  const struct dlcp_coll_opts *opts,
			  const struct dlcp_quant_opts *q,
			  struct dlcp_qstate *qs)
{
	struct qc c;
	int err;

	if (!q || !qs)
		return -EINVAL;
	err = qc_init(&c, g, n, opts, q->bits, qflags(q), q->seed);
	if (err)
		return err;
	if (n && !buf)
		return -EINVAL;
	err = rs_q(&c, buf, qs);
	return err ? qfail(&c, err) : 0;
}

int dlcp_all_gather_q(struct dlcp_group *g, float *buf, size_t n,
		      const struct dlcp_coll_opts *opts, struct dlcp_qstate *qs)
{
	struct qc c;
	int err;

	if (!qs || !qs->valid || qs->n != n || !g || !opts || qs->tag != opts->tag ||
	    qs->world != dlcp_group_world(g) || qs->rank != dlcp_group_rank(g))
		return -EINVAL;
	err = qc_init(&c, g, n, opts, qs->bits, qs->flags, qs->seed);
	if (err)
		return err;
	if (n && !buf)
		return -EINVAL;
	c.reduce = qs->reduce;
	c.scale = qs->scale;
	err = ag_q(&c, buf, qs);
	return err ? qfail(&c, err) : 0;
}

static void stats_add(struct dlcp_coll_stats *t, const struct dlcp_coll_stats *a)
{
	t->msgs_sent += a->msgs_sent;
	t->msgs_recv += a->msgs_recv;
	t->bytes_sent += a->bytes_sent;
	t->bytes_lost += a->bytes_lost;
	t->elems_lost += a->elems_lost;
	t->elems_fallback += a->elems_fallback;
}

int dlcp_allreduce_q(struct dlcp_group *g, float *buf, size_t n,
		     const struct dlcp_coll_opts *opts,
		     const struct dlcp_quant_opts *q)
{
	struct dlcp_coll_stats st1, st2;
	struct dlcp_coll_opts o;
	struct dlcp_qstate qs = { 0 };
	int err;

	if (!opts)
		return -EINVAL;
	o = *opts;
	o.stats = opts->stats ? &st1 : NULL;
	err = dlcp_reduce_scatter_q(g, buf, n, &o, q, &qs);
	if (!err) {
		o.stats = opts->stats ? &st2 : NULL;
		err = dlcp_all_gather_q(g, buf, n, &o, &qs);
	}
	qstate_reset(&qs);
	if (opts->stats && !err) {
		memset(opts->stats, 0, sizeof(*opts->stats));
		stats_add(opts->stats, &st1);
		stats_add(opts->stats, &st2);
	}
	return err;
}

int dlcp_ps_push_pull_q(struct dlcp_group *g, const float *send, float *recv,
			size_t n, const struct dlcp_coll_opts *opts,
			const struct dlcp_quant_opts *q)
{
	int32_t *own = NULL, *acc = NULL, *in = NULL;
	uint32_t *cnt = NULL, *in_cnt = NULL;
	int S, N, i, contributors, err;
	uint64_t rseed;
	struct qc c;
	size_t j;

	if (!q)
		return -EINVAL;
	err = qc_init(&c, g, n, opts, q->bits, qflags(q), q->seed);
	if (err)
		return err;
	S = opts->server;
	N = dlcp_group_world(g);
	if (S < 0 || S >= N || (opts->dedicated_server && N < 2))
		return -EINVAL;
	contributors = N - (opts->dedicated_server ? 1 : 0);
	if (dlcp_group_rank(g) != S || !opts->dedicated_server) {
		if (n && (!send || !recv))
			return -EINVAL;
	} else {
		send = NULL;
	}
	rseed = rot_seed(&c);
	err = prepare(&c, send, &own, rseed);
	if (err)
		goto out;
	acc = calloc(c.m ? c.m : 1, sizeof(*acc));
	cnt = calloc(c.m ? c.m : 1, sizeof(*cnt));
	if (!acc || !cnt) {
		err = -ENOMEM;
		goto out;
	}
	if (dlcp_group_rank(g) != S) {
		err = send_q(&c, S, K_QPUSH, 0, (uint32_t)dlcp_group_rank(g), own,
			     0, c.m, NULL, 1, opts->budget_ppm);
		if (!err)
			err = recv_q(&c, S, K_QPULL, 0, 0, 0, c.m, acc, cnt, NULL);
		if (!err)
			err = finish(&c, acc, cnt, own, recv, rseed);
		goto out;
	}
	/* the server: integer sums, counted */
	in = malloc((c.m ? c.m : 1) * sizeof(*in));
	in_cnt = malloc((c.m ? c.m : 1) * sizeof(*in_cnt));
	if (!in || !in_cnt) {
		err = -ENOMEM;
		goto out;
	}
	if (!opts->dedicated_server) {
		memcpy(acc, own, c.m * sizeof(*acc));
		for (j = 0; j < c.m; j++)
			cnt[j] = 1;
	}
	for (i = 0; i < N; i++) {
		if (i == S)
			continue;
		err = recv_q(&c, i, K_QPUSH, 0, (uint32_t)i, 0, c.m, in, in_cnt,
			     NULL);
		if (err)
			goto out;
		for (j = 0; j < c.m; j++) {
			acc[j] += in[j];
			cnt[j] += in_cnt[j];
		}
	}
	for (i = 0; i < N; i++) {
		if (i == S)
			continue;
		err = send_q(&c, i, K_QPULL, 0, 0, acc, 0, c.m, cnt,
			     (uint32_t)contributors, opts->budget2_ppm);
		if (err)
			goto out;
	}
	if (!opts->dedicated_server)
		err = finish(&c, acc, cnt, own, recv, rseed);
out:
	free(own);
	free(acc);
	free(cnt);
	free(in);
	free(in_cnt);
	return err ? qfail(&c, err) : 0;
}
