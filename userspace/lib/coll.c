// SPDX-License-Identifier: GPL-2.0
/*
 * libdlcp groups and collectives: ring reduce-scatter / all-gather /
 * all-reduce and a parameter server, loss-aware (see libdlcp.h).
 *
 * Every message of a collective is [struct coll_hdr][runs][data]; the
 * header and runs are a critical range, so they always arrive. A run
 * (start, len, count) says that @len elements from @start of the chunk
 * carry @count contributions instead of the header's base_count (0 in an
 * all-gather or pull: "missing, use your own value"). Messages are keyed
 * by (sender rank, tensor_id, iteration) with
 *   tensor_id = (tag & 0xffff) << 16 | kind << 12 | step,
 * and whatever arrives ahead of its turn is kept in a stash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/uio.h>

#include "libdlcp.h"
#include "addr.h"
#include "clock.h"
#include "libdlcp_int.h"

#define COLL_MAGIC	0x444c4343u	/* "DLCC" */
#define COLL_VERSION	1
#define STASH_MAX	(2 * DLCP_GROUP_MAX)

enum coll_kind {
	K_RS = 1,
	K_AG = 2,
	K_PUSH = 3,
	K_PULL = 4,
	K_BARRIER = 5,
	K_ABORT = 7,
	K_RS_DIRECT = 8,
	K_AG_DIRECT = 9,
};

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
	int32_t error;		/* K_ABORT: the errno */
	uint32_t reserved;
};

_Static_assert(sizeof(struct coll_hdr) % 8 == 0, "coll_hdr alignment");

struct coll_run {
	uint32_t start;
	uint32_t len;
	uint32_t count;
	uint32_t reserved;
};

struct stash {
	struct stash *next;
	int src;
	struct sockaddr_storage from;
	struct dlcp_tensor_info info;
	void *buf;
	struct dlcp_range *lost;
};

struct dlcp_group {
	int rank;
	int world;
	int transport;
	int timeout_ms;
	struct sockaddr_storage *addrs;
	struct dlcp_ep *ep;
	struct stash *stash;
	int nr_stash;
};

static uint32_t mk_tid(uint32_t tag, int kind, uint32_t step)
{
	return (tag & 0xffffu) << 16 | (uint32_t)kind << 12 | (step & 0xfffu);
}

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

int dlcp_group_open_file(struct dlcp_group **gp, const char *path, int rank,
			 int transport, int timeout_ms)
{
	struct sockaddr_storage *addrs;
	char *text;
	FILE *f;
	long sz;
	int n, err;

	if (!path)
		return -EINVAL;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	text = calloc(1, (size_t)sz + 1);
	addrs = calloc(DLCP_GROUP_MAX, sizeof(*addrs));
	if (!text || !addrs) {
		fclose(f);
		free(text);
		free(addrs);
		return -ENOMEM;
	}
	if (fread(text, 1, (size_t)sz, f) != (size_t)sz) {
		err = -EIO;
		goto out;
	}
	n = dlcp_parse_group_sa(text, addrs, DLCP_GROUP_MAX);
	if (n < 0) {
		err = n;
		goto out;
	}
	err = dlcp_group_open_sa(gp, rank, n, addrs, transport, timeout_ms);
out:
	fclose(f);
	free(text);
	free(addrs);
	return err;
}

static int env_int(const char *name, long *v)
{
	const char *s = getenv(name);
	char *end;

	if (!s || !*s)
		return -ENOENT;
	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

int dlcp_group_open_env(struct dlcp_group **gp, int base_port, int transport,
			int timeout_ms)
{
	struct sockaddr_in *addrs;
	const char *file = getenv("DLCP_GROUP_FILE");
	const char *same = getenv("DLCP_SAME_HOST");
	const char *tr = getenv("DLCP_TRANSPORT");
	const char *plan = getenv("DLCP_ADDR_PLAN");
	int same_host = same && !strcmp(same, "1");
	long rank, world, bp;
	int i, err;

	if (env_int("RANK", &rank) || env_int("WORLD_SIZE", &world))
		return -EINVAL;
	if (transport < 0)
		transport = (tr && !strcmp(tr, "tcp")) ? DLCP_TRANSPORT_TCP :
							 DLCP_TRANSPORT_DLCP;
	if (file && *file)
		return dlcp_group_open_file(gp, file, (int)rank, transport,
					    timeout_ms);
	/* no address plan unless asked for: ranks on other hosts find
	 * each other through a group file or a rendezvous (dlcp.py) */
	if (!same_host && !(plan && !strcmp(plan, "10.77")))
		return -EDESTADDRREQ;
	if (world < 1 || world > DLCP_GROUP_MAX || rank < 0 || rank >= world ||
	    (!same_host && world > 254))
		return -EINVAL;
	if (!base_port) {
		if (env_int("DLCP_BASE_PORT", &bp))
			bp = 29600;
		base_port = (int)bp;
	}
	if (base_port <= 0 || base_port + (same_host ? world : 0) > 65535)
		return -EINVAL;
	addrs = calloc((size_t)world, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	for (i = 0; i < world; i++) {
		addrs[i].sin_family = AF_INET;
		if (same_host) {
			addrs[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			addrs[i].sin_port = htons((uint16_t)(base_port + i));
		} else {
			addrs[i].sin_addr.s_addr = htonl(0x0a4d0000u | (uint32_t)(i + 1));
			addrs[i].sin_port = htons((uint16_t)base_port);
		}
	}
	err = dlcp_group_open(gp, (int)rank, (int)world, addrs, transport,
			      timeout_ms);
	free(addrs);
	return err;
}

static void stash_free(struct stash *s)
{
	free(s->buf);
	free(s->lost);
	free(s);
}

int dlcp_group_close(struct dlcp_group *g, int linger_ms)
{
	int err;

	if (!g)
		return -EINVAL;
	err = dlcp_ep_close(g->ep, linger_ms);
	while (g->stash) {
		struct stash *s = g->stash;

		g->stash = s->next;
		stash_free(s);
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

/* Is @s an abort of the collective (@tag, @iteration)? Returns its error. */
static int is_abort(const struct stash *s, uint32_t tag, uint32_t iteration)
{
	const struct coll_hdr *h = s->buf;

	if (s->info.tensor_id != mk_tid(tag, K_ABORT, 0) ||
	    s->info.iteration != iteration || s->info.msg_len < sizeof(*h) ||
	    h->magic != COLL_MAGIC || h->kind != K_ABORT)
		return 0;
	return h->error < 0 ? h->error : -EIO;
}

/*
 * Wait for the message (@src, @tid, @iteration); a message of another key
 * goes to the stash. -ETIMEDOUT after @timeout_ms without it.
 */
static int recv_match(struct dlcp_group *g, int src, uint32_t tid,
		      uint32_t iteration, uint32_t tag, int timeout_ms,
		      struct stash **out)
{
	long deadline = dlcp_clock_ms() + timeout_ms;
	struct stash **pp, *s;

	for (pp = &g->stash; (s = *pp); pp = &s->next) {
		int e = is_abort(s, tag, iteration);

		if (e) {
			*pp = s->next;
			g->nr_stash--;
			stash_free(s);
			return e;
		}
		if (s->src == src && s->info.tensor_id == tid &&
		    s->info.iteration == iteration) {
			*pp = s->next;
			g->nr_stash--;
			*out = s;
			return 0;
		}
	}
	for (;;) {
		long left = deadline - dlcp_clock_ms();
		long r;
		int e;

		if (left < 0)
			return -ETIMEDOUT;
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		r = dlcp_recv_tensor_sa(g->ep, &s->buf, &s->info, &s->lost,
					(int)left, &s->from);
		if (r < 0) {
			free(s);
			return (int)r;
		}
		if (s->from.ss_family == AF_INET)
			memcpy(&s->info.src, &s->from, sizeof(s->info.src));
		s->src = rank_of(g, &s->from);
		if (s->src < 0) {	/* not from this group */
			stash_free(s);
			continue;
		}
		e = is_abort(s, tag, iteration);
		if (e) {
			stash_free(s);
			return e;
		}
		if (s->src == src && s->info.tensor_id == tid &&
		    s->info.iteration == iteration) {
			*out = s;
			return 0;
		}
		if (g->nr_stash >= STASH_MAX) {	/* drop the oldest */
			struct stash *o = g->stash;

			g->stash = o->next;
			g->nr_stash--;
			stash_free(o);
		}
		s->next = g->stash;
		g->stash = s;
		g->nr_stash++;
	}
}

struct coll {
	struct dlcp_group *g;
	const struct dlcp_coll_opts *o;
	struct dlcp_coll_stats *st;
	size_t n;
	size_t esz;
	int dtype;
	int reduce;
	int timeout_ms;
};

static void send_one(struct dlcp_group *g, int dst, const void *p, size_t len,
		     const struct dlcp_tensor_meta *m)
{
	struct iovec iov = { .iov_base = (void *)p, .iov_len = len };

	dlcp_send_tensorv_sa(g->ep, (const struct sockaddr *)&g->addrs[dst],
			     sizeof(g->addrs[dst]), &iov, 1, m);
}

static void send_abort(struct coll *c, int error)
{
	struct dlcp_tensor_meta m = { 0 };
	struct coll_hdr h = { 0 };
	int i;

	h.magic = COLL_MAGIC;
	h.kind = K_ABORT;
	h.version = COLL_VERSION;
	h.tag = c->o->tag;
	h.iteration = c->o->iteration;
	h.world = (uint32_t)c->g->world;
	h.nelem = c->n;
	h.hdr_len = sizeof(h);
	h.error = error;
	m.tensor_id = mk_tid(c->o->tag, K_ABORT, 0);
	m.iteration = c->o->iteration;
	m.flags = DLCP_MSG_CRITICAL;
	for (i = 0; i < c->g->world; i++)
		if (i != c->g->rank)
			send_one(c->g, i, &h, sizeof(h), &m);
}

/*
 * Send chunk @chunk ([off, off+len) of the tensor, data at @data) to @dst.
 * @cnt (may be NULL: all @base) gives each element's count; elements whose
 * count differs from @base are described by runs.
 */
static int send_chunk(struct coll *c, int dst, int kind, uint32_t step,
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
	m.tensor_id = mk_tid(c->o->tag, kind, step);
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
	err = dlcp_send_tensorv_sa(c->g->ep, (const struct sockaddr *)&c->g->addrs[dst],
				   sizeof(c->g->addrs[dst]), iov, len ? 2 : 1, &m);
	free(hbuf);
	if (!err && c->st) {
		c->st->msgs_sent++;
		c->st->bytes_sent += hl + len * c->esz;
	}
	return err;
}

/*
 * Receive the chunk message (@src, @kind, @step) and check it against what
 * this rank expects. On success *@sp holds it, *@data points at its
 * elements and @in_cnt[0..len) holds each element's count (0 if lost).
 */
static int recv_chunk(struct coll *c, int src, int kind, uint32_t step,
		      uint32_t chunk, size_t off, size_t len,
		      struct stash **sp, const void **data, uint32_t *in_cnt)
{
	const struct coll_hdr *h;
	const struct coll_run *runs;
	struct stash *s = NULL;
	size_t i, j;
	int err;

	err = recv_match(c->g, src, mk_tid(c->o->tag, kind, step),
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
	*data = (const char *)s->buf + h->hdr_len;
	*sp = s;
	return 0;
bad:
	stash_free(s);
	return err;
}

static int coll_init(struct coll *c, struct dlcp_group *g, size_t n, int dtype,
		     const struct dlcp_coll_opts *o)
{
	memset(c, 0, sizeof(*c));
	if (!g || !o || (dtype != DLCP_DTYPE_FP32 && dtype != DLCP_DTYPE_INT32) ||
	    o->reduce < 0 || o->reduce >= __DLCP_REDUCE_MAX ||
	    o->budget_ppm > DLCP_PPM_MAX || o->budget2_ppm > DLCP_PPM_MAX ||
	    o->timeout_ms < 0 || o->algo < 0 || o->algo >= __DLCP_ALGO_MAX)
		return -EINVAL;
	c->g = g;
	c->o = o;
	c->st = o->stats;
	if (c->st)
		memset(c->st, 0, sizeof(*c->st));
	c->n = n;
	c->dtype = dtype;
	c->esz = 4;
	c->reduce = o->reduce;
	c->timeout_ms = o->timeout_ms ? o->timeout_ms : g->timeout_ms;
	if (n > UINT32_MAX / 4)
		return -EMSGSIZE;
	return 0;
}

static int fail(struct coll *c, int err)
{
	/* tell the others why, so they don't wait for a timeout */
	if (err == -EMSGSIZE || err == -EINVAL || err == -EPROTO || err == -EIO)
		send_abort(c, err);
	return err;
}

/*
 * Ring reduce-scatter. Partial sums travel in @tmp (with counts in @tcnt);
 * only the finished chunk r is written into @buf, so the other chunks keep
 * this rank's own contribution (the all-gather's fallback).
 */
static int rs_impl(struct coll *c, char *buf)
{
	int N = c->g->world, r = c->g->rank, s, err = 0;
	int right = (r + 1) % N, left = (r + N - 1) % N;
	uint32_t *in_cnt = NULL, *tcnt = NULL;
	char *tmp = NULL;
	size_t off, len, i, max;
	long k;

	dlcp_chunk_range(c->n, (unsigned int)N, 0, &off, &max);
	in_cnt = malloc((max ? max : 1) * sizeof(*in_cnt));
	tcnt = malloc((max ? max : 1) * sizeof(*tcnt));
	tmp = malloc((max ? max : 1) * c->esz);
	if (!in_cnt || !tcnt || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	for (s = 0; s < N - 1; s++) {
		unsigned int sc = (unsigned int)((r - s - 1 + 2 * N) % N);
		unsigned int rc = (unsigned int)((r - s - 2 + 2 * N) % N);
		struct stash *m;
		const void *data;

		dlcp_chunk_range(c->n, (unsigned int)N, sc, &off, &len);
		if (s == 0)
			err = send_chunk(c, right, K_RS, 0, sc, buf + off * c->esz,
					 off, len, NULL, 1, c->o->budget_ppm);
		else
			err = send_chunk(c, right, K_RS, (uint32_t)s, sc, tmp, off,
					 len, tcnt, (uint32_t)s + 1,
					 c->o->budget_ppm);
		if (err)
			goto out;
		dlcp_chunk_range(c->n, (unsigned int)N, rc, &off, &len);
		err = recv_chunk(c, left, K_RS, (uint32_t)s, rc, off, len, &m,
				 &data, in_cnt);
		if (err)
			goto out;
		memcpy(tmp, buf + off * c->esz, len * c->esz);
		for (i = 0; i < len; i++)
			tcnt[i] = 1;
		k = dlcp_reduce_accumulate(c->dtype, tmp, tcnt, data, in_cnt, len,
					   NULL, 0, 0);
		stash_free(m);
		if (k < 0) {
			err = (int)k;
			goto out;
		}
	}
	dlcp_chunk_range(c->n, (unsigned int)N, (unsigned int)r, &off, &len);
	if (N > 1) {
		k = dlcp_reduce_finalize(c->dtype, tmp, tcnt, len, c->reduce,
					 (unsigned int)N, NULL);
		memcpy(buf + off * c->esz, tmp, len * c->esz);
	} else {
		k = 0;	/* one contribution: every mode gives it back */
	}
	err = k < 0 ? (int)k : 0;
out:
	free(in_cnt);
	free(tcnt);
	free(tmp);
	return err;
}

/*
 * Take the all-gather chunk [@off, @off + @len) that arrived as @data with
 * counts @in_cnt into @buf: arrived elements are copied and marked in
 * @have; lost ones keep @buf's value (times N with @scale_fallback).
 */
static void ag_merge(struct coll *c, char *buf, uint32_t *have,
		     int scale_fallback, size_t off, size_t len,
		     const void *data, const uint32_t *in_cnt)
{
	int N = c->g->world;
	size_t i;

	for (i = 0; i < len; i++) {
		char *dst = buf + (off + i) * c->esz;

		if (in_cnt[i]) {
			memcpy(dst, (const char *)data + i * c->esz, c->esz);
			have[off + i] = 1;
			continue;
		}
		have[off + i] = 0;
		if (c->st)
			c->st->elems_fallback++;
		if (scale_fallback) {
			if (c->dtype == DLCP_DTYPE_FP32)
				*(float *)dst *= (float)N;
			else
				*(int32_t *)dst *= N;
		}
	}
}

/*
 * All-gather; @have[i] is 1 where this rank's value of element i is
 * authoritative. With @scale_fallback, elements that stay missing are
 * multiplied by N (own contribution as an estimate of a sum).
 */
static int ag_impl(struct coll *c, char *buf, uint32_t *have, int scale_fallback)
{
	int N = c->g->world, r = c->g->rank, s, err = 0;
	int right = (r + 1) % N, left = (r + N - 1) % N;
	uint32_t *in_cnt = NULL;
	size_t off, len;

	if (N > 1) {
		dlcp_chunk_range(c->n, (unsigned int)N, 0, &off, &len);
		in_cnt = malloc((len ? len : 1) * sizeof(*in_cnt));
		if (!in_cnt)
			return -ENOMEM;
	}
	for (s = 0; s < N - 1; s++) {
		unsigned int sc = (unsigned int)((r - s + N) % N);
		unsigned int rc = (unsigned int)((r - s - 1 + 2 * N) % N);
		struct stash *m;
		const void *data;

		dlcp_chunk_range(c->n, (unsigned int)N, sc, &off, &len);
		err = send_chunk(c, right, K_AG, (uint32_t)s, sc, buf + off * c->esz,
				 off, len, have + off, 1, c->o->budget2_ppm);
		if (err)
			goto out;
		dlcp_chunk_range(c->n, (unsigned int)N, rc, &off, &len);
		err = recv_chunk(c, left, K_AG, (uint32_t)s, rc, off, len, &m,
				 &data, in_cnt);
		if (err)
			goto out;
		ag_merge(c, buf, have, scale_fallback, off, len, data, in_cnt);
		stash_free(m);
	}
out:
	free(in_cnt);
	return err;
}

/*
 * Direct reduce-scatter: every rank sends chunk j of its contribution
 * straight to rank j, which sums the N - 1 chunks it receives. The same
 * bytes leave and enter each rank as in the ring, but in one round instead
 * of N - 1, and a lost segment delays its own message, not every later
 * step of the ring. Chunks other than this rank's keep its contribution.
 */
static int rs_direct(struct coll *c, char *buf)
{
	int N = c->g->world, r = c->g->rank, j, err = 0;
	uint32_t *in_cnt = NULL, *tcnt = NULL;
	char *tmp = NULL;
	size_t off, len, i;
	long k;

	if (N == 1)
		return 0;
	for (j = 1; j < N; j++) {
		int dst = (r + j) % N;

		dlcp_chunk_range(c->n, (unsigned int)N, (unsigned int)dst, &off, &len);
		err = send_chunk(c, dst, K_RS_DIRECT, 0, (uint32_t)dst,
				 buf + off * c->esz, off, len, NULL, 1,
				 c->o->budget_ppm);
		if (err)
			return err;
	}
	dlcp_chunk_range(c->n, (unsigned int)N, (unsigned int)r, &off, &len);
	in_cnt = malloc((len ? len : 1) * sizeof(*in_cnt));
	tcnt = malloc((len ? len : 1) * sizeof(*tcnt));
	tmp = malloc((len ? len : 1) * c->esz);
	if (!in_cnt || !tcnt || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(tmp, buf + off * c->esz, len * c->esz);
	for (i = 0; i < len; i++)
		tcnt[i] = 1;
	for (j = 1; j < N; j++) {
		struct stash *m;
		const void *data;

		err = recv_chunk(c, (r + N - j) % N, K_RS_DIRECT, 0, (uint32_t)r,
				 off, len, &m, &data, in_cnt);
		if (err)
			goto out;
		k = dlcp_reduce_accumulate(c->dtype, tmp, tcnt, data, in_cnt, len,
					   NULL, 0, 0);
		stash_free(m);
		if (k < 0) {
			err = (int)k;
			goto out;
		}
	}
	k = dlcp_reduce_finalize(c->dtype, tmp, tcnt, len, c->reduce,
				 (unsigned int)N, NULL);
	memcpy(buf + off * c->esz, tmp, len * c->esz);
	err = k < 0 ? (int)k : 0;
out:
	free(in_cnt);
	free(tcnt);
	free(tmp);
	return err;
}

/* Direct all-gather: each rank sends its chunk straight to every other. */
static int ag_direct(struct coll *c, char *buf, uint32_t *have,
		     int scale_fallback)
{
	int N = c->g->world, r = c->g->rank, j, err = 0;
	uint32_t *in_cnt = NULL;
	size_t off, len;

	if (N == 1)
		return 0;
	dlcp_chunk_range(c->n, (unsigned int)N, (unsigned int)r, &off, &len);
	for (j = 1; j < N; j++) {
		err = send_chunk(c, (r + j) % N, K_AG_DIRECT, 0, (uint32_t)r,
				 buf + off * c->esz, off, len, have + off, 1,
				 c->o->budget2_ppm);
		if (err)
			return err;
	}
	dlcp_chunk_range(c->n, (unsigned int)N, 0, &off, &len);
	in_cnt = malloc((len ? len : 1) * sizeof(*in_cnt));
	if (!in_cnt)
		return -ENOMEM;
	for (j = 1; j < N; j++) {
		int src = (r + N - j) % N;
		struct stash *m;
		const void *data;

		dlcp_chunk_range(c->n, (unsigned int)N, (unsigned int)src, &off, &len);
		err = recv_chunk(c, src, K_AG_DIRECT, 0, (uint32_t)src, off, len,
				 &m, &data, in_cnt);
		if (err)
			break;
		ag_merge(c, buf, have, scale_fallback, off, len, data, in_cnt);
		stash_free(m);
	}
	free(in_cnt);
	return err;
}

static int rs_run(struct coll *c, char *buf)
{
	return c->o->algo == DLCP_ALGO_DIRECT ? rs_direct(c, buf) :
						 rs_impl(c, buf);
}

static int ag_run(struct coll *c, char *buf, uint32_t *have, int scale_fallback)
{
	return c->o->algo == DLCP_ALGO_DIRECT ?
		ag_direct(c, buf, have, scale_fallback) :
		ag_impl(c, buf, have, scale_fallback);
}

int dlcp_reduce_scatter(struct dlcp_group *g, void *buf, size_t n, int dtype,
			const struct dlcp_coll_opts *opts)
{
	struct coll c;
	int err = coll_init(&c, g, n, dtype, opts);

	if (err)
		return err;
	if (n && !buf)
		return -EINVAL;
	err = rs_run(&c, buf);
	return err ? fail(&c, err) : 0;
}

int dlcp_all_gather(struct dlcp_group *g, void *buf, size_t n, int dtype,
		    const struct dlcp_coll_opts *opts)
{
	struct coll c;
	uint32_t *have;
	size_t i;
	int err = coll_init(&c, g, n, dtype, opts);

	if (err)
		return err;
	if (n && !buf)
		return -EINVAL;
	have = malloc((n ? n : 1) * sizeof(*have));
	if (!have)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		have[i] = 1;
	err = ag_run(&c, buf, have, 0);
	free(have);
	return err ? fail(&c, err) : 0;
}

int dlcp_allreduce(struct dlcp_group *g, void *buf, size_t n, int dtype,
		   const struct dlcp_coll_opts *opts)
{
	struct dlcp_coll_stats st1, st2;
	struct dlcp_coll_opts o;
	struct coll c;
	uint32_t *cnt;
	size_t i;
	int err = coll_init(&c, g, n, dtype, opts);

	if (err)
		return err;
	if (n && !buf)
		return -EINVAL;
	o = *opts;
	o.stats = opts->stats ? &st1 : NULL;
	cnt = malloc((n ? n : 1) * sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	coll_init(&c, g, n, dtype, &o);
	err = rs_run(&c, buf);
	if (!err) {
		for (i = 0; i < n; i++)
			cnt[i] = 1;
		o.stats = opts->stats ? &st2 : NULL;
		coll_init(&c, g, n, dtype, &o);
		err = ag_run(&c, buf, cnt, o.reduce == DLCP_REDUCE_SUM);
	}
	free(cnt);
	if (opts->stats && !err) {
		struct dlcp_coll_stats *t = opts->stats;

		t->msgs_sent = st1.msgs_sent + st2.msgs_sent;
		t->msgs_recv = st1.msgs_recv + st2.msgs_recv;
		t->bytes_sent = st1.bytes_sent + st2.bytes_sent;
		t->bytes_lost = st1.bytes_lost + st2.bytes_lost;
		t->elems_lost = st1.elems_lost + st2.elems_lost;
		t->elems_fallback = st1.elems_fallback + st2.elems_fallback;
	}
	return err ? fail(&c, err) : 0;
}

int dlcp_ps_push_pull(struct dlcp_group *g, const void *send, void *recv,
		      size_t n, int dtype, const struct dlcp_coll_opts *opts)
{
	struct coll c;
	uint32_t *cnt = NULL, *in_cnt = NULL;
	char *acc = NULL;
	int err = coll_init(&c, g, n, dtype, opts);
	int S, N, i, contributors;
	size_t j;

	if (err)
		return err;
	S = opts->server;
	N = g->world;
	if (S < 0 || S >= N || (opts->dedicated_server && N < 2))
		return -EINVAL;
	contributors = N - (opts->dedicated_server ? 1 : 0);
	if (g->rank != S || !opts->dedicated_server)
		if (n && (!send || !recv))
			return -EINVAL;
	in_cnt = malloc((n ? n : 1) * sizeof(*in_cnt));
	if (!in_cnt)
		return -ENOMEM;

	if (g->rank != S) {
		struct stash *m;
		const void *data;

		err = send_chunk(&c, S, K_PUSH, 0, (uint32_t)g->rank, send, 0, n,
				 NULL, 1, opts->budget_ppm);
		if (!err)
			err = recv_chunk(&c, S, K_PULL, 0, 0, 0, n, &m, &data, in_cnt);
		if (!err) {
			for (j = 0; j < n; j++) {
				if (in_cnt[j])
					memcpy((char *)recv + j * c.esz,
					       (const char *)data + j * c.esz, c.esz);
				else if (c.st)
					c.st->elems_fallback++;
			}
			stash_free(m);
		}
		goto out;
	}

	/* the server */
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
	for (i = 0; i < N; i++) {
		struct stash *m;
		const void *data;
		long k;

		if (i == S)
			continue;
		err = recv_chunk(&c, i, K_PUSH, 0, (uint32_t)i, 0, n, &m, &data,
				 in_cnt);
		if (err)
			goto out;
		k = dlcp_reduce_accumulate(dtype, acc, cnt, data, in_cnt, n,
					   NULL, 0, 0);
		stash_free(m);
		if (k < 0) {
			err = (int)k;
			goto out;
		}
	}
	dlcp_reduce_finalize(dtype, acc, cnt, n, c.reduce,
			     (unsigned int)contributors, NULL);
	for (j = 0; j < n; j++)
		cnt[j] = cnt[j] ? 1 : 0;	/* 0: nobody's value arrived */
	for (i = 0; i < N; i++) {
		if (i == S)
			continue;
		err = send_chunk(&c, i, K_PULL, 0, 0, acc, 0, n, cnt, 1,
				 opts->budget2_ppm);
		if (err)
			goto out;
	}
	if (!opts->dedicated_server)
		for (j = 0; j < n; j++)
			if (cnt[j])
				memcpy((char *)recv + j * c.esz, acc + j * c.esz, c.esz);
out:
	free(acc);
	free(cnt);
	free(in_cnt);
	return err ? fail(&c, err) : 0;
}

int dlcp_barrier(struct dlcp_group *g, uint32_t iteration, int timeout_ms)
{
	struct dlcp_coll_opts o = { 0 };
	struct coll c;
	uint32_t dummy[1];
	int i, err;

	o.tag = 0xffff;
	o.iteration = iteration;
	o.timeout_ms = timeout_ms;
	err = coll_init(&c, g, 0, DLCP_DTYPE_INT32, &o);
	if (err)
		return err;
	if (g->rank == 0) {
		for (i = 1; i < g->world && !err; i++) {
			struct stash *m;
			const void *d;

			err = recv_chunk(&c, i, K_BARRIER, 0, 0, 0, 0, &m, &d, dummy);
			if (!err)
				stash_free(m);
		}
		for (i = 1; i < g->world && !err; i++)
			err = send_chunk(&c, i, K_BARRIER, 1, 0, NULL, 0, 0, NULL, 1, 0);
	} else {
		struct stash *m;
		const void *d;

		err = send_chunk(&c, 0, K_BARRIER, 0, 0, NULL, 0, 0, NULL, 1, 0);
		if (!err)
			err = recv_chunk(&c, 0, K_BARRIER, 1, 0, 0, 0, &m, &d, dummy);
		if (!err)
			stash_free(m);
	}
	return err;
}

/* Internals for qcoll.c (see libdlcp_int.h). */
int dlcp__recv_msg(struct dlcp_group *g, int src, uint32_t tid,
		   uint32_t iteration, uint32_t tag, int timeout_ms, void **buf,
		   struct dlcp_tensor_info *info, struct dlcp_range **lost)
{
	struct stash *s;
	int err = recv_match(g, src, tid, iteration, tag, timeout_ms, &s);

	if (err)
		return err;
	*buf = s->buf;
	*info = s->info;
	*lost = s->lost;
	free(s);
	return 0;
}

const struct sockaddr *dlcp__group_addr(const struct dlcp_group *g, int r,
				       socklen_t *len)
{
	*len = sizeof(g->addrs[r]);
	return (const struct sockaddr *)&g->addrs[r];
}

int dlcp__group_timeout(const struct dlcp_group *g)
{
	return g->timeout_ms;
}

uint32_t dlcp__mk_tid(uint32_t tag, int kind, uint32_t step)
{
	return mk_tid(tag, kind, step);
}

void dlcp__send_abort(struct dlcp_group *g, uint32_t tag, uint32_t iteration,
		      size_t n, int error)
{
	struct dlcp_coll_opts o = { 0 };
	struct coll c = { 0 };

	o.tag = tag;
	o.iteration = iteration;
	c.g = g;
	c.o = &o;
	c.n = n;
	send_abort(&c, error);
}
