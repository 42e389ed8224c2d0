// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp frame codec (see frame.h): encoding and checking the header and
 * runs of a chunk in any format, the lost ranges as per-element counts,
 * waiting for the message of a key, aborts; and the plain format, whose
 * header (struct coll_hdr) aborts use too.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "libdlcp.h"
#include "clock.h"
#include "coll.h"
#include "frame.h"
#include "group.h"

#define COLL_MAGIC	0x444c4343u	/* "DLCC" */
#define COLL_VERSION	1

struct coll_hdr {
	uint32_t magic;
	uint8_t kind;
	uint8_t dtype;
	uint8_t reduce;
	uint8_t version;
	struct dlcp_frame_ids ids;
	struct dlcp_frame_sizes sizes;	/* hdr_len: a multiple of 8 */
	int32_t error;		/* DLCP_FRAME_ABORT: the errno */
	uint32_t reserved;
};

_Static_assert(sizeof(struct coll_hdr) % 8 == 0, "coll_hdr alignment");
_Static_assert(offsetof(struct coll_hdr, ids) == 8 &&
	       offsetof(struct coll_hdr, sizes) == 32 &&
	       sizeof(struct coll_hdr) == 72, "coll_hdr layout");

struct frame_run {
	uint32_t start;
	uint32_t len;
	uint32_t count;
	uint32_t reserved;
};

/* The tensor_id of message (@kind, @step) of the collective @tag. */
static uint32_t frame_tid(uint32_t tag, int kind, uint32_t step)
{
	return (tag & 0xffffu) << 16 | (uint32_t)kind << 12 | (step & 0xfffu);
}

/* Is @m an abort of the collective (@tag, @iteration)? Returns its error. */
static int abort_error(const struct dlcp_group_msg *m, uint32_t tag,
		       uint32_t iteration)
{
	const struct coll_hdr *h = m->buf;

	if (m->info.tensor_id != frame_tid(tag, DLCP_FRAME_ABORT, 0) ||
	    m->info.iteration != iteration || m->info.msg_len < sizeof(*h) ||
	    h->magic != COLL_MAGIC || h->kind != DLCP_FRAME_ABORT)
		return 0;
	return h->error < 0 ? h->error : -EIO;
}

void dlcp_frame_send_abort(struct dlcp_group *g, uint32_t tag,
			   uint32_t iteration, size_t n, int error)
{
	struct dlcp_tensor_meta m = { 0 };
	struct coll_hdr h = { 0 };
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	int i;

	h.magic = COLL_MAGIC;
	h.kind = DLCP_FRAME_ABORT;
	h.version = COLL_VERSION;
	h.ids.tag = tag;
	h.ids.iteration = iteration;
	h.ids.world = (uint32_t)g->world;
	h.sizes.nelem = n;
	h.sizes.hdr_len = sizeof(h);
	h.error = error;
	m.tensor_id = frame_tid(tag, DLCP_FRAME_ABORT, 0);
	m.iteration = iteration;
	m.flags = DLCP_MSG_CRITICAL;
	for (i = 0; i < g->world; i++)
		if (i != g->rank)
			dlcp_group_send(g, i, &iov, 1, &m);
}

struct key {
	int src;
	uint32_t tid, iteration, tag;
};

static int pick(const struct dlcp_group_msg *m, void *arg)
{
	const struct key *k = arg;
	int e = abort_error(m, k->tag, k->iteration);

	if (e)
		return e;
	return m->src == k->src && m->info.tensor_id == k->tid &&
	       m->info.iteration == k->iteration;
}

/*
 * Wait for the message (@src, @tid, @iteration); a message of another key
 * goes to the stash, an abort of the collective (@tag, @iteration) ends
 * the wait with its error. -ETIMEDOUT after @timeout_ms without it.
 */
static int wait_msg(struct dlcp_group *g, int src, uint32_t tid,
		    uint32_t iteration, uint32_t tag, int timeout_ms,
		    struct dlcp_group_msg **out)
{
	long deadline = dlcp_clock_ms() + timeout_ms;
	struct key k = { src, tid, iteration, tag };
	int r = dlcp_group_unstash(g, pick, &k, out);

	if (r)
		return r < 0 ? r : 0;
	for (;;) {
		struct dlcp_group_msg *m;

		r = dlcp_group_recv_any(g, deadline, &m);
		if (r)
			return r;
		r = pick(m, &k);
		if (r < 0) {
			dlcp_group_msg_free(m);
			return r;
		}
		if (r) {
			*out = m;
			return 0;
		}
		dlcp_group_stash(g, m);
	}
}

/* Bytes of @len elements of @width bits. */
static size_t wire_bytes(size_t len, int width)
{
	return (len * (size_t)width + 7) / 8;
}

/* Runs describing the elements whose count in @cnt is not @base. */
static size_t count_runs(const uint32_t *cnt, size_t len, uint32_t base)
{
	size_t i, nruns = 0;

	if (cnt)
		for (i = 0; i < len; i++)
			if (cnt[i] != base && (i == 0 || cnt[i - 1] != cnt[i]))
				nruns++;
	return nruns;
}

static void write_runs(struct frame_run *runs, const uint32_t *cnt,
		       size_t len, uint32_t base)
{
	size_t i, k = 0;

	if (!cnt)
		return;
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

/* @in_cnt[0..len): @base, or a run's count. -EPROTO: a run past @len. */
static int read_runs(const struct frame_run *runs, size_t nruns,
		     uint32_t base, uint32_t *in_cnt, size_t len)
{
	size_t i, j;

	for (i = 0; i < len; i++)
		in_cnt[i] = base;
	for (j = 0; j < nruns; j++) {
		if ((size_t)runs[j].start + runs[j].len > len)
			return -EPROTO;
		for (i = runs[j].start; i < (size_t)runs[j].start + runs[j].len; i++)
			in_cnt[i] = runs[j].count;
	}
	return 0;
}

int dlcp_frame_send(struct dlcp_coll *c, int dst, int kind, uint32_t step,
		    uint32_t chunk, const void *data, size_t off, size_t len,
		    const uint32_t *cnt, uint32_t base, uint32_t budget)
{
	const struct dlcp_frame_format *fmt = c->fmt;
	struct dlcp_tensor_meta m = { 0 };
	struct dlcp_frame_hdr f = { 0 };
	struct dlcp_range crit;
	struct iovec iov[2];
	int width = fmt->width(c, data, len), err;
	size_t nruns = count_runs(cnt, len, base);
	size_t hl = fmt->hdr_size + nruns * sizeof(struct frame_run);
	size_t dl = wire_bytes(len, width);
	char *hbuf;

	hbuf = calloc(1, hl + (fmt->pack ? dl : 0));
	if (!hbuf)
		return -ENOMEM;
	f.kind = (uint8_t)kind;
	f.width = (uint8_t)width;
	f.ids.tag = c->o->tag;
	f.ids.iteration = c->o->iteration;
	f.ids.step = step;
	f.ids.chunk = chunk;
	f.ids.world = (uint32_t)c->g->world;
	f.ids.base_count = base;
	f.sizes.nelem = c->n;
	f.sizes.chunk_off = off;
	f.sizes.chunk_len = len;
	f.sizes.nruns = (uint32_t)nruns;
	f.sizes.hdr_len = (uint32_t)hl;
	fmt->encode(c, &f, hbuf);
	write_runs((struct frame_run *)(hbuf + fmt->hdr_size), cnt, len, base);
	iov[0].iov_base = hbuf;
	iov[0].iov_len = hl;
	if (fmt->pack && len) {
		fmt->pack(data, len, width, hbuf + hl);
		iov[1].iov_base = hbuf + hl;
	} else {
		iov[1].iov_base = (void *)data;
	}
	iov[1].iov_len = dl;
	crit.offset = 0;
	crit.len = (uint32_t)hl;
	m.tensor_id = frame_tid(c->o->tag, kind, step);
	m.iteration = c->o->iteration;
	m.layer = c->o->layer;
	m.dtype = fmt->msg_dtype(c, width);
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

/* The header of message @s against what this rank expects. */
static int check_hdr(struct dlcp_coll *c, const struct dlcp_group_msg *s,
		     int kind, uint32_t step, uint32_t chunk, size_t off,
		     size_t len, struct dlcp_frame_hdr *f)
{
	const struct dlcp_frame_format *fmt = c->fmt;
	const struct dlcp_frame_sizes *z = &f->sizes;
	size_t i;
	int err;

	if (s->info.msg_len < fmt->hdr_size || fmt->decode(c, s->buf, f) ||
	    f->kind != kind || f->ids.step != step ||
	    z->hdr_len < fmt->hdr_size || z->hdr_len > s->info.msg_len ||
	    z->hdr_len != fmt->hdr_size +
			  (size_t)z->nruns * sizeof(struct frame_run))
		return -EPROTO;
	if (z->nelem != c->n)
		return -EMSGSIZE;
	if (f->ids.world != (uint32_t)c->g->world)
		return -EINVAL;
	err = fmt->match(c, s->buf, f);
	if (err)
		return err;
	if (f->ids.chunk != chunk || z->chunk_off != off ||
	    z->chunk_len != len ||
	    s->info.msg_len != z->hdr_len + wire_bytes(len, f->width))
		return -EPROTO;
	for (i = 0; i < s->info.nr_lost; i++)
		if (s->lost[i].offset < z->hdr_len)	/* critical: can't be */
			return -EIO;
	return 0;
}

int dlcp_frame_recv(struct dlcp_coll *c, int src, int kind, uint32_t step,
		    uint32_t chunk, size_t off, size_t len,
		    struct dlcp_frame_in *in, uint32_t *in_cnt)
{
	const struct dlcp_frame_format *fmt = c->fmt;
	struct dlcp_frame_hdr f;
	struct dlcp_group_msg *s;
	char *data;
	size_t i, j;
	int err;

	memset(in, 0, sizeof(*in));
	err = wait_msg(c->g, src, frame_tid(c->o->tag, kind, step),
		       c->o->iteration, c->o->tag, c->timeout_ms, &s);
	if (err)
		return err;
	in->msg = s;
	in->hdr = s->buf;
	err = check_hdr(c, s, kind, step, chunk, off, len, &f);
	if (!err)
		err = read_runs((const struct frame_run *)((const char *)s->buf +
							   fmt->hdr_size),
				f.sizes.nruns, f.ids.base_count, in_cnt, len);
	if (err)
		goto bad;
	data = (char *)s->buf + f.sizes.hdr_len;
	if (fmt->unpack) {
		in->unpacked = malloc((len ? len : 1) * c->esz);
		if (!in->unpacked) {
			err = -ENOMEM;
			goto bad;
		}
		fmt->unpack(data, len, f.width, in->unpacked);
		data = in->unpacked;
	}
	/* lost byte ranges to elements: any element they touch is lost */
	for (i = 0; i < s->info.nr_lost; i++) {
		size_t lo = s->lost[i].offset - f.sizes.hdr_len;
		size_t hi = lo + s->lost[i].len;
		size_t a = lo * 8 / f.width, b = (hi * 8 + f.width - 1) / f.width;

		if (b > len)
			b = len;
		for (j = a; j < b; j++) {
			if (c->st && in_cnt[j])
				c->st->elems_lost += in_cnt[j];
			in_cnt[j] = 0;
			memset(data + j * c->esz, 0, c->esz);
		}
	}
	if (c->st) {
		c->st->msgs_recv++;
		c->st->bytes_lost += s->info.bytes_lost;
	}
	in->data = data;
	return 0;
bad:
	dlcp_frame_release(in);
	return err;
}

void dlcp_frame_release(struct dlcp_frame_in *in)
{
	if (in->msg)
		dlcp_group_msg_free(in->msg);
	free(in->unpacked);
	memset(in, 0, sizeof(*in));
}

/* The plain format: struct coll_hdr, elements as they are. */

static int plain_width(const struct dlcp_coll *c, const void *data, size_t len)
{
	(void)data;
	(void)len;
	return (int)(8 * c->esz);
}

static uint8_t plain_msg_dtype(const struct dlcp_coll *c, int width)
{
	(void)width;
	return (uint8_t)c->dtype;
}

static void plain_encode(const struct dlcp_coll *c,
			 const struct dlcp_frame_hdr *f, void *wire)
{
	struct coll_hdr *h = wire;

	h->magic = COLL_MAGIC;
	h->kind = f->kind;
	h->dtype = (uint8_t)c->dtype;
	h->reduce = (uint8_t)c->reduce;
	h->version = COLL_VERSION;
	h->ids = f->ids;
	h->sizes = f->sizes;
}

static int plain_decode(const struct dlcp_coll *c, const void *wire,
			struct dlcp_frame_hdr *f)
{
	const struct coll_hdr *h = wire;

	if (h->magic != COLL_MAGIC || h->version != COLL_VERSION)
		return -EPROTO;
	f->kind = h->kind;
	f->width = (uint8_t)(8 * c->esz);
	f->ids = h->ids;
	f->sizes = h->sizes;
	return 0;
}

static int plain_match(const struct dlcp_coll *c, const void *wire,
		       const struct dlcp_frame_hdr *f)
{
	const struct coll_hdr *h = wire;

	(void)f;
	return h->dtype != c->dtype || h->reduce != c->reduce ? -EINVAL : 0;
}

const struct dlcp_frame_format dlcp_frame_plain = {
	.hdr_size	= sizeof(struct coll_hdr),
	.kind_rs	= DLCP_FRAME_RS,
	.kind_ag	= DLCP_FRAME_AG,
	.kind_push	= DLCP_FRAME_PUSH,
	.kind_pull	= DLCP_FRAME_PULL,
	.width		= plain_width,
	.msg_dtype	= plain_msg_dtype,
	.encode		= plain_encode,
	.decode		= plain_decode,
	.match		= plain_match,
};
