// SPDX-License-Identifier: GPL-2.0
/*
 * libdlcp pure helpers: dtype sizes, magnitude classes, loss-aware
 * accumulation and finalisation, chunking, address parsing.
 * No I/O here: everything is unit-tested on the host.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <arpa/inet.h>

#include "libdlcp.h"
#include "libdlcp_int.h"

size_t dlcp_dtype_size(int dtype)
{
	switch (dtype) {
	case DLCP_DTYPE_BYTES:
	case DLCP_DTYPE_INT8:
		return 1;
	case DLCP_DTYPE_FP16:
	case DLCP_DTYPE_BF16:
		return 2;
	case DLCP_DTYPE_FP32:
	case DLCP_DTYPE_INT32:
		return 4;
	}
	return 0;
}

struct seg_key {
	uint32_t key;
	uint32_t idx;
};

static int seg_key_cmp(const void *a, const void *b)
{
	const struct seg_key *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;	/* larger first */
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

long dlcp_seg_classes(const void *buf, size_t len, int dtype,
		      size_t seg_size, double top_fraction,
		      uint8_t *classes, size_t nr_classes)
{
	size_t esz, nsegs, i, k;
	struct seg_key *keys;

	if (dtype != DLCP_DTYPE_FP32 && dtype != DLCP_DTYPE_FP16 &&
	    dtype != DLCP_DTYPE_BF16)
		return -EINVAL;
	esz = dlcp_dtype_size(dtype);
	seg_size -= seg_size % esz;
	if (!seg_size || len % esz || !(top_fraction >= 0.0 && top_fraction <= 1.0) ||
	    (len && !buf))
		return -EINVAL;
	nsegs = (len + seg_size - 1) / seg_size;
	if (nsegs > nr_classes)
		return -ENOSPC;
	if (!nsegs)
		return 0;
	keys = malloc(nsegs * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < nsegs; i++) {
		size_t off = i * seg_size;
		size_t end = off + seg_size < len ? off + seg_size : len;
		uint32_t max = 0;

		for (; off < end; off += esz) {
			uint32_t v;

			if (esz == 4) {
				memcpy(&v, (const char *)buf + off, 4);
				v &= 0x7fffffffu;
			} else {
				uint16_t h;

				memcpy(&h, (const char *)buf + off, 2);
				v = h & 0x7fffu;
			}
			if (v > max)
				max = v;
		}
		keys[i].key = max;
		keys[i].idx = (uint32_t)i;
	}
	qsort(keys, nsegs, sizeof(*keys), seg_key_cmp);
	k = (size_t)ceil(top_fraction * (double)nsegs);
	if (k > nsegs)
		k = nsegs;
	for (i = 0; i < nsegs; i++)
		classes[keys[i].idx] = i < k ? 0 : 1;
	free(keys);
	return (long)nsegs;
}

/*
 * Mark in @lostmask (n elements, 1 = lost) the elements of a message
 * region starting at byte @data_off that overlap a lost byte range.
 */
static void mark_lost(uint8_t *lostmask, size_t n, size_t esz,
		      const struct dlcp_range *lost, size_t nr_lost,
		      size_t data_off)
{
	size_t data_end = data_off + n * esz, i;

	for (i = 0; i < nr_lost; i++) {
		size_t s = lost[i].offset, e = s + (size_t)lost[i].len, a, b;

		if (e <= data_off || s >= data_end)
			continue;
		if (s < data_off)
			s = data_off;
		if (e > data_end)
			e = data_end;
		a = (s - data_off) / esz;
		b = (e - data_off + esz - 1) / esz;
		memset(lostmask + a, 1, b - a);
	}
}

long dlcp_reduce_accumulate(int dtype, void *acc, uint32_t *cnt,
			    const void *in, const uint32_t *in_cnt, size_t n,
			    const struct dlcp_range *lost, size_t nr_lost,
			    size_t data_off)
{
	uint8_t *mask = NULL;
	long skipped = 0;
	size_t i;

	if ((dtype != DLCP_DTYPE_FP32 && dtype != DLCP_DTYPE_INT32) ||
	    (n && (!acc || !cnt || !in)) || (nr_lost && !lost))
		return -EINVAL;
	if (nr_lost) {
		mask = calloc(n ? n : 1, 1);
		if (!mask)
			return -ENOMEM;
		mark_lost(mask, n, 4, lost, nr_lost, data_off);
	}
	for (i = 0; i < n; i++) {
		uint32_t c = in_cnt ? in_cnt[i] : 1;

		if (mask && mask[i]) {
			skipped++;
			continue;
		}
		if (!c)
			continue;
		if (dtype == DLCP_DTYPE_FP32)
			((float *)acc)[i] += ((const float *)in)[i];
		else
			((int32_t *)acc)[i] = (int32_t)((uint32_t)((int32_t *)acc)[i] +
					(uint32_t)((const int32_t *)in)[i]);
		cnt[i] += c;
	}
	free(mask);
	return skipped;
}

long dlcp_reduce_finalize(int dtype, void *acc, const uint32_t *cnt, size_t n,
			  int mode, unsigned int world, const void *fallback)
{
	long fb = 0;
	size_t i;

	if ((dtype != DLCP_DTYPE_FP32 && dtype != DLCP_DTYPE_INT32) ||
	    mode < 0 || mode >= __DLCP_REDUCE_MAX || !world ||
	    (n && (!acc || !cnt)))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		uint32_t c = cnt[i];

		if (dtype == DLCP_DTYPE_FP32) {
			float *a = acc;

			if (!c) {
				a[i] = fallback ? ((const float *)fallback)[i] : 0.0f;
				fb++;
			} else if (mode == DLCP_REDUCE_MEAN) {
				if (c != 1)
					a[i] /= (float)c;
			} else if (mode == DLCP_REDUCE_SUM) {
				if (c != world)
					a[i] = a[i] * (float)world / (float)c;
			} else {
				a[i] /= (float)world;
			}
		} else {
			int32_t *a = acc;

			if (!c) {
				a[i] = fallback ? ((const int32_t *)fallback)[i] : 0;
				fb++;
			} else if (mode == DLCP_REDUCE_MEAN) {
				a[i] /= (int32_t)c;
			} else if (mode == DLCP_REDUCE_SUM) {
				if (c != world)
					a[i] = (int32_t)((int64_t)a[i] * world / c);
			} else {
				a[i] /= (int32_t)world;
			}
		}
	}
	return fb;
}

void dlcp_chunk_range(size_t n, unsigned int world, unsigned int i,
		      size_t *off, size_t *len)
{
	size_t q = n / world, r = n % world;

	*off = i * q + (i < r ? i : r);
	*len = q + (i < r);
}

socklen_t dlcp__sa_len(const struct sockaddr *sa)
{
	if (sa && sa->sa_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (sa && sa->sa_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

int dlcp__sa_same(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return 0;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	return 0;
}

int dlcp__sa_is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return 0;
}

uint16_t dlcp__sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port;
	return 0;
}

void dlcp__sa_set_port(struct sockaddr *sa, uint16_t port_be)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)(void *)sa)->sin_port = port_be;
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)sa)->sin6_port = port_be;
}

void dlcp__sa_unmap(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)(void *)ss;
	struct sockaddr_in s4;

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return;
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	s4.sin_port = s6->sin6_port;
	memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &s4, sizeof(s4));
}

/* "host:port" split; "[host]:port" for IPv6. 0 or -EINVAL. */
static int split_host_port(const char *s, char *host, size_t hsz,
			   unsigned long *port)
{
	const char *colon, *h = s, *he;
	char *end;
	size_t hl;

	colon = strrchr(s, ':');
	if (!colon)
		return -EINVAL;
	he = colon;
	if (*s == '[') {
		h = s + 1;
		if (colon == s || colon[-1] != ']')
			return -EINVAL;
		he = colon - 1;
	}
	hl = (size_t)(he - h);
	if (!hl || hl >= hsz)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	if (!isdigit((unsigned char)colon[1]))
		return -EINVAL;
	errno = 0;
	*port = strtoul(colon + 1, &end, 10);
	if (errno || *end || *port > 65535)
		return -EINVAL;
	return 0;
}

int dlcp_parse_addr(const char *s, struct sockaddr_in *out)
{
	unsigned long port;
	char host[64];

	if (!s || !out || *s == '[' || split_host_port(s, host, sizeof(host), &port))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
		return -EINVAL;
	return 0;
}

int dlcp_parse_addr_sa(const char *s, struct sockaddr_storage *out)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)(void *)out;
	unsigned long port;
	char host[INET6_ADDRSTRLEN + 2];

	if (!s || !out)
		return -EINVAL;
	if (*s != '[') {
		struct sockaddr_in s4;
		int err = dlcp_parse_addr(s, &s4);

		if (!err) {
			memset(out, 0, sizeof(*out));
			memcpy(out, &s4, sizeof(s4));
		}
		return err;
	}
	if (split_host_port(s, host, sizeof(host), &port))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons((uint16_t)port);
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
		return -EINVAL;
	return 0;
}

static int parse_group(const char *text, struct sockaddr_in *a4,
		       struct sockaddr_storage *a6, int max)
{
	int n = 0;

	if (!text || max < 0)
		return -EINVAL;
	while (*text) {
		const char *eol = strchr(text, '\n');
		size_t l = eol ? (size_t)(eol - text) : strlen(text);
		char line[128];
		char *p, *q;

		if (l >= sizeof(line))
			return -EINVAL;
		memcpy(line, text, l);
		line[l] = 0;
		text += l + (eol ? 1 : 0);
		p = strchr(line, '#');
		if (p)
			*p = 0;
		p = line;
		while (isspace((unsigned char)*p))
			p++;
		q = p + strlen(p);
		while (q > p && isspace((unsigned char)q[-1]))
			*--q = 0;
		if (!*p)
			continue;
		if (n >= max)
			return -E2BIG;
		if (a4 ? dlcp_parse_addr(p, &a4[n]) : dlcp_parse_addr_sa(p, &a6[n]))
			return -EINVAL;
		n++;
	}
	return n;
}

int dlcp_parse_group(const char *text, struct sockaddr_in *addrs, int max)
{
	return addrs || !max ? parse_group(text, addrs, NULL, max) : -EINVAL;
}

int dlcp_parse_group_sa(const char *text, struct sockaddr_storage *addrs,
			int max)
{
	return addrs || !max ? parse_group(text, NULL, addrs, max) : -EINVAL;
}
