// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_xfer recv: receive the messages of the senders, check each byte for
 * byte (or, with a loss budget, its lost ranges), answer each sender with
 * DONE and wait for its BYE. The exit status says whether every expected
 * message arrived exactly once, intact and with the right metadata.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <linux/dlcp.h>

#include "dlcp_util.h"
#include "dlcp_xfer.h"

#define MAX_LOST	8192		/* DLCP_CMSG_LOST ranges we take */

/* ------------------------------------------------------------------ */
/* Receiver                                                             */
/* ------------------------------------------------------------------ */

struct peer {
	bool known;
	bool bye;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	unsigned int got;	/* messages received from this sender */
	unsigned int bad;
};

struct rstats {
	unsigned long long bytes;
	unsigned long long lost;
	unsigned int lossy;
	unsigned int got;
	unsigned int bad;
	unsigned int dups;
	unsigned int unexpected;
};

static const char *addr_str(const struct sockaddr_storage *ss, char *buf,
			    size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		port = ntohs(sin6->sin6_port);
	}
	snprintf(buf, size, "%s:%u", host, port);
	return buf;
}

static bool same_addr(const struct sockaddr_storage *a,
		      const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a;
		const struct sockaddr_in *y = (const void *)b;

		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a;
		const struct sockaddr_in6 *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, 16);
	}
	return false;
}

/* --count mode: the largest message index accepted from a sender. */
#define COUNT_MAX_INDEX	(1u << 16)

/* Slot of message (sender - id_base, index) in the seen[] array. */
static size_t slot(uint32_t soff, uint32_t idx)
{
	return (size_t)soff * (opt.nsizes ? per_sender() : COUNT_MAX_INDEX) +
	       idx;
}

static uint8_t *expect_buf;	/* --budget: a message as sent */

/*
 * A message delivered within its loss budget: the lost bytes are listed
 * exactly, within the budget, clear of the critical range, and zero; the
 * others are as sent.
 */
static bool check_lossy(uint32_t sender, uint32_t idx, const uint8_t *buf,
			size_t len, const struct dlcp_recv_info *info,
			const struct dlcp_range *lost, unsigned int nlost)
{
	uint64_t budget = (uint64_t)len * opt.budget / DLCP_PPM_MAX;
	size_t crit = opt.critical < len ? opt.critical : len;
	uint64_t sum = 0, pos = 0;
	unsigned int i;
	size_t j;

	if (info->status != DLCP_RECV_LOSSY || info->bytes_lost > budget ||
	    info->nr_lost_ranges != nlost) {
		msg("# sender %u message %u: status %u, %u bytes lost (budget %llu) in %u ranges (%u listed)\n",
		    sender, idx, info->status, info->bytes_lost,
		    (unsigned long long)budget, info->nr_lost_ranges, nlost);
		return false;
	}
	dlcp_payload_fill(expect_buf, len, dlcp_payload_seed(sender, idx, len));
	for (i = 0; i <= nlost; i++) {
		uint64_t start = i < nlost ? lost[i].offset : len;
		uint64_t end = i < nlost ? start + lost[i].len : len;

		if (start < pos || end > len || (i < nlost && !lost[i].len)) {
			msg("# sender %u message %u: bad lost range %u [%llu, %llu)\n",
			    sender, idx, i, (unsigned long long)start,
			    (unsigned long long)end);
			return false;
		}
		if (memcmp(buf + pos, expect_buf + pos, start - pos)) {
			msg("# sender %u message %u: received bytes in [%llu, %llu) differ\n",
			    sender, idx, (unsigned long long)pos,
			    (unsigned long long)start);
			return false;
		}
		if (i == nlost)
			break;
		if (start < crit) {
			msg("# sender %u message %u: critical bytes lost at %llu\n",
			    sender, idx, (unsigned long long)start);
			return false;
		}
		for (j = start; j < end; j++)
			if (buf[j]) {
				msg("# sender %u message %u: lost byte %zu is not zero\n",
				    sender, idx, j);
				return false;
			}
		sum += end - start;
		pos = end;
	}
	if (sum != info->bytes_lost) {
		msg("# sender %u message %u: lost ranges sum to %llu, bytes_lost %u\n",
		    sender, idx, (unsigned long long)sum, info->bytes_lost);
		return false;
	}
	if (opt.verbose)
		msg("# sender %u message %u: %u bytes lost in %u ranges\n",
		    sender, idx, info->bytes_lost, nlost);
	return true;
}

/* Receive one message and check it. Returns false on a socket error. */
static bool recv_one(int fd, uint8_t *buf, size_t bufsize, uint8_t *seen,
		     struct peer *peers, struct rstats *st)
{
	static union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
			 CMSG_SPACE(MAX_LOST * sizeof(struct dlcp_range))];
		struct cmsghdr align;
	} ctl;
	static struct dlcp_range lost[MAX_LOST];
	unsigned int nlost = 0;
	struct sockaddr_storage from;
	struct iovec iov = { .iov_base = buf, .iov_len = bufsize };
	struct msghdr m = {
		.msg_name = &from,
		.msg_namelen = sizeof(from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct dlcp_recv_info info;
	bool have_info = false;
	struct cmsghdr *cm;
	uint32_t sender, idx;
	char as[80];
	size_t len, expect_len = 0, bad_off;
	struct peer *p;
	ssize_t n;
	bool ok = true;

	n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	len = (size_t)n;
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_level != SOL_DLCP)
			continue;
		if (cm->cmsg_type == DLCP_CMSG_RECV &&
		    cm->cmsg_len == CMSG_LEN(sizeof(info))) {
			memcpy(&info, CMSG_DATA(cm), sizeof(info));
			have_info = true;
		} else if (cm->cmsg_type == DLCP_CMSG_LOST) {
			nlost = (unsigned int)((cm->cmsg_len - CMSG_LEN(0)) /
					       sizeof(lost[0]));
			memcpy(lost, CMSG_DATA(cm), nlost * sizeof(lost[0]));
		}
	}
	addr_str(&from, as, sizeof(as));
	if (!have_info) {
		msg("# from %s: %zu bytes without DLCP_CMSG_RECV\n", as, len);
		st->unexpected++;
		return true;
	}
	sender = info.tensor_id;
	idx = info.iteration;

	if (sender == CTL_TENSOR) {
		const struct ctl_msg *c = (const void *)buf;
		unsigned int s;

		if (len == sizeof(*c) && c->magic == CTL_MAGIC &&
		    c->type == CTL_BYE) {
			for (s = 0; s < MAX_SENDERS; s++)
				if (peers[s].known &&
				    same_addr(&peers[s].addr, &from))
					peers[s].bye = true;
		}
		return true;
	}

	if (sender < opt.id_base || sender - opt.id_base >= MAX_SENDERS ||
	    (opt.nsizes && sender - opt.id_base >= opt.senders) ||
	    (opt.nsizes && idx >= per_sender()) ||
	    (!opt.nsizes && idx >= COUNT_MAX_INDEX)) {
		msg("# from %s: unexpected message sender %u index %u (%zu bytes)\n",
		    as, sender, idx, len);
		st->unexpected++;
		return true;
	}
	p = &peers[sender - opt.id_base];
	if (!p->known) {
		p->known = true;
		memcpy(&p->addr, &from, sizeof(from));
		p->addrlen = m.msg_namelen;
	} else if (!same_addr(&p->addr, &from)) {
		char as2[80];

		msg("# sender %u message %u from %s, earlier ones from %s\n",
		    sender, idx, as, addr_str(&p->addr, as2, sizeof(as2)));
		ok = false;
	}

	/* Whole message, metadata as sent, nothing lost. */
	if (opt.nsizes)
		expect_len = opt.sizes[idx % opt.nsizes];
	if (m.msg_flags & MSG_TRUNC || len > bufsize) {
		msg("# sender %u message %u: %zu bytes, more than the %zu-byte buffer\n",
		    sender, idx, len, bufsize);
		ok = false;
		len = bufsize;
	}
	if (opt.nsizes && len != expect_len) {
		msg("# sender %u message %u: %zu bytes, expected %zu\n",
		    sender, idx, len, expect_len);
		ok = false;
	}
	if (info.msg_len != (uint32_t)n || info.dtype != DLCP_DTYPE_BYTES ||
	    info.layer != (idx & 0xff) ||
	    info.flags != (DLCP_MSG_HAS_LAYER |
			   (opt.budget_set ? DLCP_MSG_HAS_BUDGET : 0)) ||
	    (opt.budget_set && info.loss_budget_ppm != opt.budget)) {
		msg("# sender %u message %u: recv_info msg_len %u dtype %u layer %u flags 0x%x budget %u\n",
		    sender, idx, info.msg_len, info.dtype, info.layer,
		    info.flags, info.loss_budget_ppm);
		ok = false;
	}
	if (m.msg_flags & MSG_CTRUNC) {
		msg("# sender %u message %u: control data truncated\n",
		    sender, idx);
		ok = false;
	}
	if (!opt.budget_set || (!info.bytes_lost && !nlost)) {
		/* Exact: every byte as sent. */
		if (info.status != DLCP_RECV_EXACT || info.bytes_lost ||
		    info.nr_lost_ranges || nlost) {
			msg("# sender %u message %u: status %u, %u bytes lost in %u ranges\n",
			    sender, idx, info.status, info.bytes_lost,
			    info.nr_lost_ranges);
			ok = false;
		}
		bad_off = dlcp_payload_cmp(buf, len,
					   dlcp_payload_seed(sender, idx,
							     (size_t)n));
		if (bad_off != len) {
			msg("# sender %u message %u (%zd bytes): content differs at byte %zu\n",
			    sender, idx, n, bad_off);
			ok = false;
		}
	} else if (!check_lossy(sender, idx, buf, len, &info, lost, nlost)) {
		ok = false;
	} else {
		st->lossy++;
		st->lost += info.bytes_lost;
	}

	if (seen[slot(sender - opt.id_base, idx)]++) {
		msg("# sender %u message %u delivered again\n", sender, idx);
		st->dups++;
		return true;
	}
	if (opt.verbose)
		msg("# sender %u message %u: %zd bytes from %s, fnv1a %016" PRIx64 "%s\n",
		    sender, idx, n, as, dlcp_fnv1a64(buf, len),
		    ok ? "" : " BAD");
	st->bytes += (size_t)n;
	st->got++;
	p->got++;
	if (!ok) {
		st->bad++;
		p->bad++;
	}
	return true;
}

int do_recv(void)
{
	struct peer peers[MAX_SENDERS];
	struct rstats st = { 0 };
	unsigned int expected, s, i, nacks = 0;
	size_t bufsize = 0, nseen;
	uint8_t *buf, *seen;
	struct addr local;
	double t0, t_end, t_done;
	char as[80];
	int fd;

	if (opt.nsizes) {
		expected = opt.senders * per_sender();
		for (i = 0; i < opt.nsizes; i++)
			if (opt.sizes[i] > bufsize)
				bufsize = opt.sizes[i];
		nseen = (size_t)opt.senders * per_sender();
	} else if (opt.count) {
		long long max = 64 << 20;

		dlcp_sysctl_read("max_msg_size", &max);
		expected = opt.count;
		bufsize = (size_t)max;
		opt.senders = MAX_SENDERS;
		nseen = slot(MAX_SENDERS, 0);
	} else {
		die("recv needs --sizes or --count");
	}
	if (!opt.port)
		die("recv needs --port");
	buf = malloc(bufsize + 1);
	seen = calloc(nseen, 1);
	if (opt.budget_set)
		expect_buf = malloc(bufsize + 1);
	if (!buf || !seen || (opt.budget_set && !expect_buf))
		die("out of memory");
	memset(peers, 0, sizeof(peers));

	fd = dlcp_socket();
	set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, opt.rcvbuf);
	make_addr(&local, opt.bind_addr, opt.port);
	if (bind(fd, (struct sockaddr *)&local.ss, local.len))
		die("bind %s: %s", addr_str(&local.ss, as, sizeof(as)),
		    strerror(errno));
	touch_ready();

	t0 = dlcp_now();
	t_end = t0 + opt.timeout;
	while (st.got < expected) {
		double left = t_end - dlcp_now();

		if (left <= 0)
			break;
		if (!wait_readable(fd, left))
			continue;
		if (!recv_one(fd, buf, bufsize, seen, peers, &st))
			die("recvmsg: %s", strerror(errno));
	}
	t_done = dlcp_now();

	/* Let the senders go, and wait (a little) until they have heard. */
	if (!opt.no_ack) {
		for (s = 0; s < MAX_SENDERS; s++) {
			if (!peers[s].known)
				continue;
			/* Status: this sender's messages missing or bad. */
			uint32_t status = peers[s].bad +
				(opt.nsizes ? per_sender() - peers[s].got : 0);

			if (send_ctl(fd, &peers[s].addr, peers[s].addrlen,
				     CTL_DONE, opt.id_base + s, status) < 0)
				msg("# DONE to sender %u: %s\n",
				    opt.id_base + s, strerror(errno));
			else
				nacks++;
		}
		t_end = dlcp_now() + opt.linger;
		for (;;) {
			unsigned int byes = 0;
			double left = t_end - dlcp_now();

			for (s = 0; s < MAX_SENDERS; s++)
				byes += peers[s].bye;
			if (byes >= nacks || left <= 0)
				break;
			if (wait_readable(fd, left) &&
			    !recv_one(fd, buf, bufsize, seen, peers, &st))
				break;
		}
	}

	if (st.got < expected && opt.nsizes) {
		unsigned int shown = 0;

		for (s = 0; s < opt.senders; s++)
			for (i = 0; i < per_sender(); i++)
				if (!seen[slot(s, i)] &&
				    shown++ < 20)
					msg("# missing: sender %u message %u (%zu bytes)\n",
					    opt.id_base + s, i,
					    opt.sizes[i % opt.nsizes]);
	}
	printf("# recv: %u/%u messages, %llu bytes in %.2f s (%.1f MB/s), %u bad, %u duplicate, %u unexpected\n",
	       st.got, expected, st.bytes, t_done - t0,
	       st.bytes / 1e6 / (t_done - t0 > 1e-6 ? t_done - t0 : 1e-6),
	       st.bad, st.dups, st.unexpected);
	if (opt.budget_set)
		printf("# recv: %u messages lossy, %llu bytes lost (budget %u ppm)\n",
		       st.lossy, st.lost, opt.budget);
	if (st.lossy < opt.min_lossy)
		printf("# recv: fewer lossy messages than --min-lossy %u\n",
		       opt.min_lossy);
	fflush(stdout);
	close(fd);
	free(buf);
	free(seen);
	free(expect_buf);
	return st.got == expected && !st.bad && !st.dups && !st.unexpected &&
	       st.lossy >= opt.min_lossy ? 0 : 1;
}
