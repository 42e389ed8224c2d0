// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp parts: a run of elements that one rank sends another in a
 * gather, a scatter or an all-to-all, cut into messages of at most
 * DLCP_PART_PIECE bytes (so that a large part neither meets the module's
 * largest message nor holds a whole part in one buffer on either side).
 * Piece i travels as step i of the collective's kind; the header's nelem is
 * the part's length, so both sides must agree on it (-EMSGSIZE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libdlcp.h"
#include "coll.h"
#include "frame.h"

/* steps are 12 bits of the message key */
#define PART_MAX_PIECES	4096u
/* a piece never exceeds this, whatever the part */
#define PART_PIECE_MAX	(32u << 20)

/* Elements of one piece of a part of @len elements: 0 if too large. */
static size_t piece_len(const struct dlcp_coll *c, size_t len)
{
	size_t p = DLCP_PART_PIECE / c->esz;
	size_t min = len / PART_MAX_PIECES + (len % PART_MAX_PIECES != 0);

	if (min > p)
		p = min;
	return p > PART_PIECE_MAX / c->esz ? 0 : p;
}

int dlcp_part_send(struct dlcp_coll *c, int dst, int kind, uint32_t chunk,
		   const void *data, size_t len)
{
	size_t pl = piece_len(c, len), off = 0;
	uint32_t step = 0;
	int err;

	if (!pl)
		return -EMSGSIZE;
	c->n = len;
	do {
		size_t k = len - off < pl ? len - off : pl;
		const char *p = k ? (const char *)data + off * c->esz : NULL;

		err = dlcp_frame_send(c, dst, kind, step++, chunk, p, off, k,
				      NULL, 1, c->o->budget_ppm);
		off += k;
	} while (!err && off < len);
	return err;
}

/* @dst <- the elements of @src whose count is not 0. Returns how many were. */
static size_t copy_arrived(char *dst, const char *src, const uint32_t *cnt,
			   size_t len, size_t esz)
{
	size_t i = 0, copied = 0;

	while (i < len) {
		size_t j = i;

		while (j < len && cnt[j])
			j++;
		memcpy(dst + i * esz, src + i * esz, (j - i) * esz);
		copied += j - i;
		while (j < len && !cnt[j])
			j++;
		i = j;
	}
	return copied;
}

int dlcp_part_recv(struct dlcp_coll *c, int src, int kind, uint32_t chunk,
		   void *data, size_t len)
{
	size_t pl = piece_len(c, len), off = 0;
	struct dlcp_frame_in in;
	uint32_t step = 0, *in_cnt;
	int err;

	if (!pl)
		return -EMSGSIZE;
	c->n = len;
	in_cnt = malloc((len < pl ? (len ? len : 1) : pl) * sizeof(*in_cnt));
	if (!in_cnt)
		return -ENOMEM;
	do {
		size_t k = len - off < pl ? len - off : pl, got;

		err = dlcp_frame_recv(c, src, kind, step++, chunk, off, k, &in,
				      in_cnt);
		if (err)
			break;
		got = k ? copy_arrived((char *)data + off * c->esz, in.data,
				       in_cnt, k, c->esz) : 0;
		if (c->st)
			c->st->elems_fallback += k - got;
		dlcp_frame_release(&in);
		off += k;
	} while (off < len);
	free(in_cnt);
	return err;
}
