// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_loss: sender and checking receiver for the loss-budget selftests.
 *
 *   dlcp_loss recv --port P --count N --size BYTES --budget PPM
 *		    [--crit OFF:LEN]... [--expect exact|lossy|any]
 *		    [--timeout S] [--ready FILE]
 *   dlcp_loss send --to ADDR --port P --count N --size BYTES --budget PPM
 *		    [--crit OFF:LEN]... [--deadline MS] [--window W]
 *		    [--expect-completion exact|lossy|any|etime|etimedout|
 *		     econnrefused]
 *		    [--from ADDR] [--sport PORT] [--paths DEV[:W],...]
 *
 * --size and --budget take a comma-separated list (sizes with a k or m
 * suffix): message i has the (i mod n)th of each, on both sides. With
 * --window, the sender keeps at most W messages unfinished, sending the
 * next one as a completion comes (it needs --expect-completion).
 *
 * Payloads are pseudo-random, seeded by the message index carried in
 * tensor_id, and never contain a zero byte, so that the receiver can check
 * every invariant of a lossy delivery:
 *   - every message arrives; bytes_lost <= floor(size * budget / 10^6);
 *   - DLCP_CMSG_LOST ranges are sorted, disjoint, add up to bytes_lost,
 *     and read as zeros; every byte outside them is what was sent;
 *   - critical ranges are never in a lost range;
 *   - the status agrees (EXACT iff nothing lost), and with --expect.
 * The sender, with --expect-completion, reads one completion per message
 * from the error queue and checks it. Exit status 0 iff all held.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>
#include "linux/dlcp.h"

#define MAX_CRIT	8
#define MAX_LIST	16

static struct {
	const char *mode, *to, *expect, *ready, *from, *paths;
	int port, sport, count, timeout, window;
	size_t sizes[MAX_LIST];
	unsigned int budgets[MAX_LIST];
	int nsizes, nbudgets;
	unsigned int deadline;
	struct dlcp_range crit[MAX_CRIT];
	int ncrit;
} o = { .port = 7100, .count = 1, .sizes = { 1 << 20 }, .nsizes = 1,
	.nbudgets = 1, .timeout = 120, .expect = "any" };

/* The size and loss budget of message @i. */
static size_t msg_size(uint32_t i)
{
	return o.sizes[i % o.nsizes];
}

static unsigned int msg_budget(uint32_t i)
{
	return o.budgets[i % o.nbudgets];
}

/* The largest message. */
static size_t max_size(void)
{
	size_t m = 0;
	int i;

	for (i = 0; i < o.nsizes; i++)
		if (o.sizes[i] > m)
			m = o.sizes[i];
	return m;
}

/* Parse a comma-separated list of @n at most numbers (k, m: KiB, MiB). */
static int parse_list(const char *v, unsigned long long *out, int n)
{
	int k = 0;

	while (*v && k < n) {
		char *end;
		unsigned long long x = strtoull(v, &end, 0);

		if (end == v)
			return 0;
		if (*end == 'k' || *end == 'm')
			x <<= *end++ == 'k' ? 10 : 20;
		out[k++] = x;
		if (*end != ',' && *end)
			return 0;
		v = *end ? end + 1 : end;
	}
	return *v ? 0 : k;
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)(x | 1);	/* never zero */
	}
}

static int fail(const char *what)
{
	fprintf(stderr, "dlcp_loss %s: %s: %s\n", o.mode, what, strerror(errno));
	return 1;
}

/* DLCP_FAMILY=6 in the environment: AF_INET6 sockets and addresses. */
static int family(void)
{
	const char *f = getenv("DLCP_FAMILY");

	return f && !strcmp(f, "6") ? AF_INET6 : AF_INET;
}

/* @ss := @host (NULL: the wildcard) and @port in family(); its length. */
static socklen_t make_sa(struct sockaddr_storage *ss, const char *host,
			 int port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family() == AF_INET6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		if (host && inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			return 0;
		return sizeof(*sin6);
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (host && inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		return 0;
	return sizeof(*sin);
}

static int sock_bound(int port)
{
	struct sockaddr_storage a;
	socklen_t alen = make_sa(&a, NULL, port);
	struct timeval tv = { .tv_sec = o.timeout };
	int s = socket(family(), SOCK_DLCP, 0);

	if (s < 0)
		return -1;
	if (port && bind(s, (struct sockaddr *)&a, alen))
		return -1;
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -1;
	return s;
}

/*
 * Read the next completion on @s and check it against --expect-completion:
 * 0 if it holds, 1 if not, -1 if none came or it was malformed.
 */
static int check_completion(int s)
{
	char cbuf[256];
	struct dlcp_completion c;
	struct iovec iov = { &c, sizeof(c) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct sock_extended_err *ee = NULL;
	struct pollfd pfd = { .fd = s, .events = 0 };
	const char *what = o.expect;
	struct cmsghdr *cm;
	size_t size;

	if (poll(&pfd, 1, o.timeout * 1000) != 1 ||
	    !(pfd.revents & POLLERR)) {
		fprintf(stderr, "completion: none in %d s\n", o.timeout);
		return -1;
	}
	if (recvmsg(s, &mh, MSG_ERRQUEUE) != sizeof(c)) {
		fail("recvmsg(MSG_ERRQUEUE)");
		return -1;
	}
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_DLCP &&
		    cm->cmsg_type == DLCP_CMSG_COMPLETION)
			ee = (void *)CMSG_DATA(cm);
	size = msg_size(c.tensor_id);
	if (!ee || ee->ee_origin != SO_EE_ORIGIN_LOCAL ||
	    ee->ee_info != c.msg_id || ee->ee_data != c.bytes_lost ||
	    c.msg_len != size) {
		fprintf(stderr, "completion of tensor %u: malformed\n",
			c.tensor_id);
		return -1;
	}
	printf("completion tensor %u status %u lost %u errno %u\n",
	       c.tensor_id, c.status, c.bytes_lost, ee->ee_errno);
	if (!strcmp(what, "etime"))
		return ee->ee_errno != ETIME || c.status != DLCP_DONE_DEADLINE;
	if (!strcmp(what, "etimedout"))
		return ee->ee_errno != ETIMEDOUT ||
		       c.status != DLCP_DONE_TIMEOUT;
	if (!strcmp(what, "econnrefused"))
		return ee->ee_errno != ECONNREFUSED ||
		       c.status != DLCP_DONE_TIMEOUT;
	if (!strcmp(what, "exact"))
		return ee->ee_errno || c.status != DLCP_DONE_EXACT;
	if (!strcmp(what, "lossy"))
		return ee->ee_errno || c.status != DLCP_DONE_LOSSY;
	return ee->ee_errno || (uint64_t)c.bytes_lost * DLCP_PPM_MAX >
			       (uint64_t)msg_budget(c.tensor_id) * size;
}

/* --paths IF[:WEIGHT][,IF[:WEIGHT]...]: DLCP_PATHS on @s */
static int set_paths(int s, const char *spec)
{
	struct dlcp_path p[DLCP_MAX_PATHS] = { 0 };
	char *copy = strdup(spec), *tok, *save = NULL;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok && n < DLCP_MAX_PATHS;
	     tok = strtok_r(NULL, ",", &save)) {
		char *w = strchr(tok, ':');

		if (w) {
			*w++ = 0;
			p[n].weight = (uint16_t)atoi(w);
		}
		p[n].ifindex = if_nametoindex(tok);
		if (!p[n].ifindex) {
			free(copy);
			return -1;
		}
		n++;
	}
	free(copy);
	return setsockopt(s, SOL_DLCP, DLCP_PATHS, p, n * sizeof(p[0]));
}

static int do_send(void)
{
	struct sockaddr_storage to, from;
	socklen_t tolen = make_sa(&to, o.to, o.port);
	bool check = o.expect[0] && strcmp(o.expect, "none");
	uint8_t *buf = malloc(max_size());
	int one = 1, s = sock_bound(0), i, pending = 0, bad = 0, r;

	if (s < 0)
		return fail("socket");
	if (!tolen)
		return fail("address");
	if ((o.from || o.sport) &&
	    bind(s, (struct sockaddr *)&from, make_sa(&from, o.from, o.sport)))
		return fail("bind --from/--sport");
	if (o.paths && set_paths(s, o.paths))
		return fail("DLCP_PATHS");
	if (setsockopt(s, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one)))
		return fail("DLCP_RECVCOMPLETION");
	for (i = 0; i < o.count; i++) {
		char cbuf[CMSG_SPACE(sizeof(struct dlcp_send_info)) +
			  CMSG_SPACE(sizeof(o.crit))] = { 0 };
		struct dlcp_send_info si = {
			.tensor_id = i, .iteration = 1, .layer = 0,
			.flags = DLCP_MSG_HAS_BUDGET,
			.loss_budget_ppm = msg_budget(i),
		};
		size_t size = msg_size(i);
		struct iovec iov = { buf, size };
		struct msghdr mh = { .msg_name = &to, .msg_namelen = tolen,
				     .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf };
		struct cmsghdr *c;

		if (o.deadline) {
			si.flags |= DLCP_MSG_HAS_DEADLINE;
			si.deadline_ms = o.deadline;
		}
		mh.msg_controllen = CMSG_SPACE(sizeof(si));
		if (o.ncrit)
			mh.msg_controllen += CMSG_SPACE(o.ncrit *
							sizeof(o.crit[0]));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEND;
		c->cmsg_len = CMSG_LEN(sizeof(si));
		memcpy(CMSG_DATA(c), &si, sizeof(si));
		if (o.ncrit) {
			c = CMSG_NXTHDR(&mh, c);
			c->cmsg_level = SOL_DLCP;
			c->cmsg_type = DLCP_CMSG_CRITICAL;
			c->cmsg_len = CMSG_LEN(o.ncrit * sizeof(o.crit[0]));
			memcpy(CMSG_DATA(c), o.crit, o.ncrit * sizeof(o.crit[0]));
		}
		/* a window: wait for a message to end before the next */
		for (; check && o.window && pending >= o.window; pending--) {
			r = check_completion(s);
			if (r < 0)
				return 1;
			bad += r;
		}
		fill(buf, size, i);
		if (sendmsg(s, &mh, 0) != (ssize_t)size)
			return fail("sendmsg");
		pending++;
	}
	for (; check && pending; pending--) {
		r = check_completion(s);
		if (r < 0)
			return 1;
		bad += r;
	}
	close(s);
	free(buf);
	return bad != 0;
}

static int check_msg(const uint8_t *buf, size_t n, const struct dlcp_recv_info *ri,
		     const struct dlcp_range *lost, int nlost)
{
	size_t size = msg_size(ri->tensor_id), b;
	unsigned int budget = msg_budget(ri->tensor_id);
	uint64_t sum = 0, pos = 0;
	int i, bad = 0;
	uint8_t *want;

	if (n != size || ri->msg_len != size)
		return 1;
	want = malloc(size);
	fill(want, size, ri->tensor_id);
	for (i = 0; i < nlost; i++) {
		if (lost[i].offset < pos || !lost[i].len ||
		    lost[i].offset + (uint64_t)lost[i].len > size)
			bad++;
		for (b = lost[i].offset; b < lost[i].offset + lost[i].len &&
		     b < size; b++)
			if (buf[b])
				bad++;
		for (b = pos; b < lost[i].offset && b < size; b++)
			if (buf[b] != want[b])
				bad++;
		pos = lost[i].offset + (uint64_t)lost[i].len;
		sum += lost[i].len;
	}
	for (b = pos; b < size; b++)
		if (buf[b] != want[b])
			bad++;
	if (sum != ri->bytes_lost || (int)ri->nr_lost_ranges != nlost ||
	    sum * DLCP_PPM_MAX > (uint64_t)ri->loss_budget_ppm * size ||
	    ri->loss_budget_ppm != budget ||
	    (ri->status == DLCP_RECV_EXACT) != (sum == 0))
		bad++;
	for (i = 0; i < o.ncrit; i++)
		for (b = o.crit[i].offset; b < o.crit[i].offset + o.crit[i].len;
		     b++)
			if (!buf[b])
				bad++;
	if (!strcmp(o.expect, "exact") && ri->status != DLCP_RECV_EXACT)
		bad++;
	if (!strcmp(o.expect, "lossy") && ri->status != DLCP_RECV_LOSSY)
		bad++;
	free(want);
	return bad;
}

static int do_recv(void)
{
	/* room for a lost range per 1 KiB: more than any budget allows */
	size_t max = max_size();
	size_t cbsz = CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
		      CMSG_SPACE((max / 1024 + 8) * sizeof(struct dlcp_range));
	uint8_t *buf = malloc(max + 1), *cbuf = malloc(cbsz);
	int s = sock_bound(o.port), i, bad = 0, lossy = 0;
	uint64_t lost_total = 0, bytes = 0;
	FILE *f;

	if (s < 0)
		return fail("socket");
	if (o.ready) {
		f = fopen(o.ready, "w");
		if (f)
			fclose(f);
	}
	for (i = 0; i < o.count; i++) {
		struct iovec iov = { buf, max + 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf,
				     .msg_controllen = cbsz };
		struct dlcp_recv_info ri = { 0 };
		struct dlcp_range *lost = NULL;
		struct cmsghdr *c;
		int nlost = 0, e;
		ssize_t n = recvmsg(s, &mh, 0);

		if (n < 0)
			return fail("recvmsg");
		if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
			fprintf(stderr, "message %d truncated\n", i);
			return 1;
		}
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_DLCP)
				continue;
			if (c->cmsg_type == DLCP_CMSG_RECV)
				memcpy(&ri, CMSG_DATA(c), sizeof(ri));
			if (c->cmsg_type == DLCP_CMSG_LOST) {
				lost = (void *)CMSG_DATA(c);
				nlost = (c->cmsg_len - CMSG_LEN(0)) /
					sizeof(*lost);
			}
		}
		e = check_msg(buf, n, &ri, lost, nlost);
		if (e)
			fprintf(stderr, "message %u: %d violations\n",
				ri.tensor_id, e);
		bad += e != 0;
		lossy += ri.status == DLCP_RECV_LOSSY;
		lost_total += ri.bytes_lost;
		bytes += n;
	}
	/* the sender of the last message may still be missing its STOP */
	usleep(500 * 1000);
	printf("received %d messages, %llu bytes: %d lossy, %llu bytes lost (%.3f%%), %d bad\n",
	       o.count, (unsigned long long)bytes, lossy,
	       (unsigned long long)lost_total,
	       bytes ? 100.0 * lost_total / bytes : 0.0, bad);
	close(s);
	return bad != 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: dlcp_loss recv|send [options] (see source)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long list[MAX_LIST];
	int i, k, n;

	if (argc < 2)
		usage();
	o.mode = argv[1];
	if (!strcmp(o.mode, "send"))
		o.expect = "none";
	for (i = 2; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];

		if (!strcmp(a, "--to"))
			o.to = v;
		else if (!strcmp(a, "--port"))
			o.port = atoi(v);
		else if (!strcmp(a, "--count"))
			o.count = atoi(v);
		else if (!strcmp(a, "--size") &&
			 (n = parse_list(v, list, MAX_LIST)))
			for (o.nsizes = n, k = 0; k < n; k++)
				o.sizes[k] = list[k];
		else if (!strcmp(a, "--budget") &&
			 (n = parse_list(v, list, MAX_LIST)))
			for (o.nbudgets = n, k = 0; k < n; k++)
				o.budgets[k] = (unsigned int)list[k];
		else if (!strcmp(a, "--window"))
			o.window = atoi(v);
		else if (!strcmp(a, "--deadline"))
			o.deadline = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--timeout"))
			o.timeout = atoi(v);
		else if (!strcmp(a, "--from"))
			o.from = v;
		else if (!strcmp(a, "--sport"))
			o.sport = atoi(v);
		else if (!strcmp(a, "--paths"))
			o.paths = v;
		else if (!strcmp(a, "--ready"))
			o.ready = v;
		else if (!strcmp(a, "--expect") ||
			 !strcmp(a, "--expect-completion"))
			o.expect = v;
		else if (!strcmp(a, "--crit") && o.ncrit < MAX_CRIT &&
			 sscanf(v, "%u:%u", &o.crit[o.ncrit].offset,
				&o.crit[o.ncrit].len) == 2)
			o.ncrit++;
		else
			usage();
	}
	for (k = 0; k < o.nsizes; k++)
		if (!o.sizes[k])
			usage();
	if (i != argc || o.count < 1 || o.window < 0)
		usage();
	if (!strcmp(o.mode, "send") && o.to)
		return do_send();
	if (!strcmp(o.mode, "recv"))
		return do_recv();
	usage();
	return 2;
}
