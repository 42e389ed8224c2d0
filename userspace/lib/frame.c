// SPDX-License-Identifier: GPL-2.0
/*
 * libdlcp frame codec (see frame.h): encoding and checking the header and
 * runs of a chunk, the lost ranges as per-element counts, waiting for the
 * message of a key, aborts.
 */
#include <errno.h>
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
	uint32_t tag;
	uint32_t iteration;
	uint32_t step;
	uint32_t chunk;
	uint32_t world;
	uint32_t base_count;
	uint64_t nelem;
	uint64_t chunk_off;
	uint64_t chunk_len;
	uint32_t nruns;
	uint32_t hdr_len;	/* header + runs, multiple of 8 */
	int32_t error;		/* DLCP_FRAME_ABORT: the errno */
	uint32_t reserved;
};

_Static_assert(sizeof(struct coll_hdr) % 8 == 0, "coll_hdr alignment");

struct coll_run {
	uint32_t start;
	uint32_t len;
	uint32_t count;
	uint32_t reserved;
};

uint32_t dlcp_frame_tid(uint32_t tag, int kind, uint32_t step)
{
	return (tag & 0xffffu) << 16 | (uint32_t)kind << 12 | (step & 0xfffu);
}

/* Is @m an abort of the collective (@tag, @iteration)? Returns its error. */
static int abort_error(const struct dlcp_group_msg *m, uint32_t tag,
		       uint32_t iteration)
{
	const struct coll_hdr *h = m->buf;

	if (m->info.tensor_id != dlcp_frame_tid(tag, DLCP_FRAME_ABORT, 0) ||
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
	h.tag = tag;
	h.iteration = iteration;
	h.world = (uint32_t)g->world;
	h.nelem = n;
	h.hdr_len = sizeof(h);
	h.error = error;
	m.tensor_id = dlcp_frame_tid(tag, DLCP_FRAME_ABORT, 0);
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

int dlcp_frame_wait(struct dlcp_group *g, int src, uint32_t tid,
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

int dlcp_frame_send(struct dlcp_coll *c, int dst, int kind, uint32_t step,
		    uint32_t chunk, const void *data, size_t off, size_t len,
		    const uint32_t *cnt, uint32_t base, uint32_t budget)
{
	struct dlcp_tensor_meta m = { 0 };
	struct coll_hdr *h;
	struct coll_run *runs;
	struct dlcp_range crit;
	struct iovec iov[2];
	size_t i, nruns = 0, hl;
	char *hbuf;
	int err;

	if (cnt)
		for (i = 0; i < len; i++)
			if (cnt[i] != base && (i == 0 || cnt[i - 1] != cnt[i]))
				nruns++;
	hl = sizeof(*h) + nruns * sizeof(*runs);
	hbuf = calloc(1, hl);
	if (!hbuf)
		return -ENOMEM;
	h = (struct coll_hdr *)hbuf;
	runs = (struct coll_run *)(hbuf + sizeof(*h));
	h->magic = COLL_MAGIC;
	h->kind = (uint8_t)kind;
	h->dtype = (uint8_t)c->dtype;
	h->reduce = (uint8_t)c->reduce;
	h->version = COLL_VERSION;
	h->tag = c->o->tag;
	h->iteration = c->o->iteration;
	h->step = step;
	h->chunk = chunk;
	h->world = (uint32_t)c->g->world;
	h->base_count = base;
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
	iov[0].iov_base = hbuf;
	iov[0].iov_len = hl;
	iov[1].iov_base = (void *)data;
	iov[1].iov_len = len * c->esz;
	crit.offset = 0;
	crit.len = (uint32_t)hl;
	m.tensor_id = dlcp_frame_tid(c->o->tag, kind, step);
	m.iteration = c->o->iteration;
	m.layer = c->o->layer;
	m.dtype = (uint8_t)c->dtype;
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
		c->st->bytes_sent += hl + len * c->esz;
	}
	return err;
}

int dlcp_frame_recv(struct dlcp_coll *c, int src, int kind, uint32_t step,
		    uint32_t chunk, size_t off, size_t len,
		    struct dlcp_frame_in *in, uint32_t *in_cnt)
{
	const struct coll_hdr *h;
	const struct coll_run *runs;
	struct dlcp_group_msg *s = NULL;
	size_t i, j;
	int err;

	err = dlcp_frame_wait(c->g, src, dlcp_frame_tid(c->o->tag, kind, step),
		       c->o->iteration, c->o->tag, c->timeout_ms, &s);
	if (err)
		return err;
	h = s->buf;
	if (s->info.msg_len < sizeof(*h) || h->magic != COLL_MAGIC ||
	    h->version != COLL_VERSION || h->kind != kind || h->step != step ||
	    h->hdr_len < sizeof(*h) || h->hdr_len > s->info.msg_len ||
	    h->hdr_len != sizeof(*h) + (size_t)h->nruns * sizeof(*runs)) {
		err = -EPROTO;
		goto bad;
	}
	if (h->nelem != c->n) {
		err = -EMSGSIZE;
		goto bad;
	}
	if (h->dtype != c->dtype || h->reduce != c->reduce ||
	    h->world != (uint32_t)c->g->world) {
		err = -EINVAL;
		goto bad;
	}
	if (h->chunk != chunk || h->chunk_off != off || h->chunk_len != len ||
	    s->info.msg_len != h->hdr_len + len * c->esz) {
		err = -EPROTO;
		goto bad;
	}
	for (i = 0; i < s->info.nr_lost; i++)
		if (s->lost[i].offset < h->hdr_len) {	/* critical: can't be */
			err = -EIO;
			goto bad;
		}
	runs = (const struct coll_run *)(h + 1);
	for (i = 0; i < len; i++)
		in_cnt[i] = h->base_count;
	for (j = 0; j < h->nruns; j++) {
		if ((size_t)runs[j].start + runs[j].len > len) {
			err = -EPROTO;
			goto bad;
		}
		for (i = runs[j].start; i < (size_t)runs[j].start + runs[j].len; i++)
			in_cnt[i] = runs[j].count;
	}
	for (i = 0; i < s->info.nr_lost; i++) {
		size_t a = (s->lost[i].offset - h->hdr_len) / c->esz;
		size_t b = (s->lost[i].offset + (size_t)s->lost[i].len -
			    h->hdr_len + c->esz - 1) / c->esz;

		if (b > len)
			b = len;
		for (j = a; j < b; j++) {
			if (c->st && in_cnt[j])
				c->st->elems_lost += in_cnt[j];
			in_cnt[j] = 0;
		}
	}
	if (c->st) {
		c->st->msgs_recv++;
		c->st->bytes_lost += s->info.bytes_lost;
	}
	in->msg = s;
	in->data = (const char *)s->buf + h->hdr_len;
	return 0;
bad:
	dlcp_group_msg_free(s);
	return err;
}

void dlcp_frame_release(struct dlcp_frame_in *in)
{
	dlcp_group_msg_free(in->msg);
	in->msg = NULL;
	in->data = NULL;
}
