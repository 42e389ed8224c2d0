// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_xfer - send and receive verifiable DLCP messages, for the selftests.
 *
 *   dlcp_xfer recv --port P (--sizes LIST [--repeat R] [--senders K] |
 *                            --count N) [options]
 *   dlcp_xfer send --to ADDR --port P --sizes LIST [--repeat R]
 *                  [--senders K] [--id B] [options]
 *   dlcp_xfer mss  --to ADDR [--port P]
 *   dlcp_xfer hold [--port P] [--ready-file F] [--no-wait]
 *   dlcp_xfer hdrlen             (DLCP_DATA_HDR_LEN, for scripts)
 *
 * A sender with id S sends, for i = 0, 1, ..., messages i of length
 * sizes[i % nsizes], R times over the list. Message (S, i) carries
 * tensor_id S and iteration i in DLCP_CMSG_SEND, and its bytes are a
 * pseudo-random stream seeded from (S, i, length), so the receiver
 * regenerates and compares every byte whatever order messages arrive in.
 * With --senders K a send process runs K sender threads, each with its own
 * socket and id B..B+K-1; the receiver's --senders K --id B expects them.
 *
 * DLCP aborts unfinished messages when a socket closes, so a sender stays
 * until the receiver has everything: the receiver answers each sender with
 * a DONE message when it is finished, and the sender answers with BYE
 * before it closes. The receiver exits 0 only if every expected message
 * arrived exactly once, intact and with the right metadata, before the
 * timeout; a sender exits 0 only if every send succeeded and DONE came.
 *
 * With --budget PPM (given to both sides) messages are sent with that loss
 * budget and may arrive lossy: the receiver then checks that the bytes
 * lost are within the budget, that DLCP_CMSG_LOST lists them exactly and
 * that they read as zeros, every other byte being intact; with --critical
 * N the first N bytes of each message are sent critical (DLCP_CMSG_CRITICAL)
 * and must never be lost.
 *
 * --family 4|6 selects the address family; only AF_INET exists today.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <linux/dlcp.h>
#include "dlcp_wire.h"

#include "dlcp_util.h"

#define MAX_SIZES	64
#define MAX_SENDERS	64
#define CTL_MAGIC	0x444c4350u	/* "DLCP" */
#define CTL_DONE	1
#define CTL_BYE		2
#define CTL_TENSOR	0xffffffffu	/* tensor_id of control messages */
#define MAX_LOST	8192		/* DLCP_CMSG_LOST ranges we take */

/* A control message between receiver and sender. */
struct ctl_msg {
	uint32_t magic;
	uint32_t type;
	uint32_t sender;
	uint32_t status;	/* DONE: 0 if all of this sender's arrived */
};

struct addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

static struct {
	int family;
	const char *to;
	const char *bind_addr;
	uint16_t port;
	size_t sizes[MAX_SIZES];
	unsigned int nsizes;
	unsigned int repeat;
	unsigned int senders;
	uint32_t id_base;
	unsigned int count;
	double timeout;
	double linger;
	const char *ready_file;
	int rcvbuf;
	int sndbuf;
	bool no_ack;
	bool no_wait;
	bool quiet;
	bool verbose;
	bool budget_set;
	uint32_t budget;	/* --budget: loss budget, ppm */
	size_t critical;	/* --critical: bytes [0, N) are critical */
	unsigned int min_lossy;	/* --min-lossy: at least N lossy messages */
} opt = {
	.family = AF_INET,
	.repeat = 1,
	.senders = 1,
	.timeout = 60,
	.linger = 3,
};

static const char *prog = "dlcp_xfer";

static void msg(const char *fmt, ...)
{
	va_list ap;

	if (opt.quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void usage(void)
{
	fprintf(stderr,
"usage: %s recv --port P (--sizes LIST [--repeat R] [--senders K] [--id B] |\n"
"                         --count N) [--bind ADDR] [--timeout S] [--linger S]\n"
"                         [--ready-file F] [--rcvbuf BYTES] [--no-ack]\n"
"       %s send --to ADDR --port P --sizes LIST [--repeat R] [--senders K]\n"
"                         [--id B] [--timeout S] [--sndbuf BYTES] [--no-ack]\n"
"       %s mss  --to ADDR [--port P]\n"
"       %s hold [--port P] [--ready-file F] [--no-wait]\n"
"       %s hdrlen\n"
"common: [--family 4|6] [--quiet] [--verbose]\n"
"loss budgets (send and recv): [--budget PPM] [--critical BYTES];\n"
"       recv: [--min-lossy N] (fail unless N messages came lossy)\n"
"LIST: comma-separated sizes, with optional k/m suffix (1,1431,64k,16m)\n",
		prog, prog, prog, prog, prog);
	exit(2);
}

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

static unsigned long long parse_size(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		die("bad size '%s'", s);
	switch (*end) {
	case 'k': case 'K':
		v <<= 10;
		end++;
		break;
	case 'm': case 'M':
		v <<= 20;
		end++;
		break;
	}
	if (*end)
		die("bad size '%s'", s);
	return v;
}

static void parse_sizes(const char *list)
{
	char *dup = strdup(list), *tok, *save = NULL;

	if (!dup)
		die("out of memory");
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (opt.nsizes == MAX_SIZES)
			die("at most %d sizes", MAX_SIZES);
		opt.sizes[opt.nsizes] = parse_size(tok);
		if (!opt.sizes[opt.nsizes])
			die("size 0 in --sizes");
		opt.nsizes++;
	}
	free(dup);
}

static void parse_opts(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "family", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "bind", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "sizes", required_argument, NULL, 's' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "senders", required_argument, NULL, 'k' },
		{ "id", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "linger", required_argument, NULL, 'L' },
		{ "ready-file", required_argument, NULL, 'R' },
		{ "rcvbuf", required_argument, NULL, 'B' },
		{ "sndbuf", required_argument, NULL, 'S' },
		{ "no-ack", no_argument, NULL, 'A' },
		{ "budget", required_argument, NULL, 'G' },
		{ "critical", required_argument, NULL, 'C' },
		{ "min-lossy", required_argument, NULL, 'M' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "f:t:b:p:s:r:k:i:n:T:L:R:qvh",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "4"))
				opt.family = AF_INET;
			else if (!strcmp(optarg, "6"))
				opt.family = AF_INET6;
			else
				die("--family 4 or 6");
			break;
		case 't':
			opt.to = optarg;
			break;
		case 'b':
			opt.bind_addr = optarg;
			break;
		case 'p':
			opt.port = (uint16_t)parse_size(optarg);
			break;
		case 's':
			parse_sizes(optarg);
			break;
		case 'r':
			opt.repeat = (unsigned int)parse_size(optarg);
			break;
		case 'k':
			opt.senders = (unsigned int)parse_size(optarg);
			if (!opt.senders || opt.senders > MAX_SENDERS)
				die("--senders 1..%d", MAX_SENDERS);
			break;
		case 'i':
			opt.id_base = (uint32_t)parse_size(optarg);
			break;
		case 'n':
			opt.count = (unsigned int)parse_size(optarg);
			break;
		case 'T':
			opt.timeout = atof(optarg);
			break;
		case 'L':
			opt.linger = atof(optarg);
			break;
		case 'R':
			opt.ready_file = optarg;
			break;
		case 'B':
			opt.rcvbuf = (int)parse_size(optarg);
			break;
		case 'S':
			opt.sndbuf = (int)parse_size(optarg);
			break;
		case 'A':
			opt.no_ack = true;
			break;
		case 'G':
			opt.budget = (uint32_t)parse_size(optarg);
			opt.budget_set = true;
			if (opt.budget > DLCP_PPM_MAX)
				die("--budget 0..%u", DLCP_PPM_MAX);
			break;
		case 'C':
			opt.critical = parse_size(optarg);
			break;
		case 'M':
			opt.min_lossy = (unsigned int)parse_size(optarg);
			break;
		case 'W':
			opt.no_wait = true;
			break;
		case 'q':
			opt.quiet = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
}

/* ------------------------------------------------------------------ */
/* Sockets and addresses                                                */
/* ------------------------------------------------------------------ */

static void make_addr(struct addr *a, const char *host, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	if (opt.family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&a->ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		if (host && inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			die("bad IPv4 address '%s'", host);
		a->len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&a->ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		if (host && inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			die("bad IPv6 address '%s'", host);
		a->len = sizeof(*sin6);
	}
}

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

static int dlcp_socket(void)
{
	int fd = socket(opt.family, SOCK_DLCP, 0);

	if (fd < 0)
		die("socket(%s, SOCK_DLCP): %s",
		    opt.family == AF_INET ? "AF_INET" : "AF_INET6",
		    strerror(errno));
	return fd;
}

static void set_buf(int fd, int force_opt, int opt_name, int bytes)
{
	if (bytes <= 0)
		return;
	if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) &&
	    setsockopt(fd, SOL_SOCKET, opt_name, &bytes, sizeof(bytes)))
		die("setting buffer size %d: %s", bytes, strerror(errno));
}

static void touch_ready(void)
{
	int fd;

	if (!opt.ready_file)
		return;
	fd = open(opt.ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		  0644);
	if (fd < 0)
		die("%s: %s", opt.ready_file, strerror(errno));
	close(fd);
}

/*
 * One message with its metadata; a @data message also carries the loss
 * budget and critical range of the options (control messages are exact).
 */
static ssize_t send_meta(int fd, const struct addr *to, const void *buf,
			 size_t len, uint32_t tensor, uint32_t iter, bool data)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_send_info)) +
			 CMSG_SPACE(sizeof(struct dlcp_range))];
		struct cmsghdr align;
	} ctl;
	struct dlcp_send_info si = {
		.tensor_id = tensor,
		.iteration = iter,
		.layer = (uint16_t)(iter & 0xff),
		.dtype = DLCP_DTYPE_BYTES,
		.flags = DLCP_MSG_HAS_LAYER,
	};
	struct dlcp_range crit = {
		.offset = 0,
		.len = (uint32_t)(opt.critical < len ? opt.critical : len),
	};
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = {
		.msg_name = (void *)&to->ss,
		.msg_namelen = to->len,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = CMSG_SPACE(sizeof(si)),
	};
	struct cmsghdr *cm;
	ssize_t n;

	if (data && opt.budget_set) {
		si.flags |= DLCP_MSG_HAS_BUDGET;
		si.loss_budget_ppm = opt.budget;
	}
	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_DLCP;
	cm->cmsg_type = DLCP_CMSG_SEND;
	cm->cmsg_len = CMSG_LEN(sizeof(si));
	memcpy(CMSG_DATA(cm), &si, sizeof(si));
	if (data && opt.critical) {
		m.msg_controllen += CMSG_SPACE(sizeof(crit));
		cm = CMSG_NXTHDR(&m, cm);
		cm->cmsg_level = SOL_DLCP;
		cm->cmsg_type = DLCP_CMSG_CRITICAL;
		cm->cmsg_len = CMSG_LEN(sizeof(crit));
		memcpy(CMSG_DATA(cm), &crit, sizeof(crit));
	}
	do {
		n = sendmsg(fd, &m, 0);
	} while (n < 0 && errno == EINTR);
	return n;
}

static ssize_t send_ctl(int fd, const struct sockaddr_storage *to,
			socklen_t tolen, uint32_t type, uint32_t sender,
			uint32_t status)
{
	struct ctl_msg c = { CTL_MAGIC, type, sender, status };
	struct addr a = { .len = tolen };

	memcpy(&a.ss, to, sizeof(*to));
	return send_meta(fd, &a, &c, sizeof(c), CTL_TENSOR, type, false);
}

/* Wait up to @secs for @fd to be readable: 1 yes, 0 timeout. */
static int wait_readable(int fd, double secs)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ms = secs <= 0 ? 0 : (int)(secs * 1000) + 1;
	int r;

	do {
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		die("poll: %s", strerror(errno));
	return r;
}

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

static unsigned int per_sender(void)
{
	return opt.nsizes * opt.repeat;
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

static int do_recv(void)
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

/* ------------------------------------------------------------------ */
/* Sender                                                               */
/* ------------------------------------------------------------------ */

struct sender {
	pthread_t thread;
	uint32_t id;
	int fd;
	int rc;
	unsigned int sent;
	unsigned long long bytes;
	double elapsed;
	bool done;
	uint32_t status;
};

static struct addr dest;

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	size_t max = 0;
	uint8_t *buf;
	unsigned int i;
	double t0 = dlcp_now(), t_end = t0 + opt.timeout;

	for (i = 0; i < opt.nsizes; i++)
		if (opt.sizes[i] > max)
			max = opt.sizes[i];
	buf = malloc(max > sizeof(struct ctl_msg) ? max :
		     sizeof(struct ctl_msg));
	if (!buf) {
		s->rc = 2;
		return NULL;
	}
	s->fd = dlcp_socket();
	set_buf(s->fd, SO_SNDBUFFORCE, SO_SNDBUF, opt.sndbuf);

	for (i = 0; i < per_sender(); i++) {
		size_t len = opt.sizes[i % opt.nsizes];
		ssize_t n;

		dlcp_payload_fill(buf, len, dlcp_payload_seed(s->id, i, len));
		n = send_meta(s->fd, &dest, buf, len, s->id, i, true);
		if (n != (ssize_t)len) {
			fprintf(stderr, "# sender %u message %u (%zu bytes): %s\n",
				s->id, i, len,
				n < 0 ? strerror(errno) : "short send");
			s->rc = 1;
			break;
		}
		s->sent++;
		s->bytes += len;
	}

	/* Stay until the receiver says it is done: close aborts. */
	while (!opt.no_ack && !s->done) {
		struct ctl_msg c;
		double left = t_end - dlcp_now();
		ssize_t n;

		if (left <= 0 || !wait_readable(s->fd, left))
			break;
		n = recv(s->fd, &c, sizeof(c), MSG_DONTWAIT);
		if (n == sizeof(c) && c.magic == CTL_MAGIC &&
		    c.type == CTL_DONE) {
			s->done = true;
			s->status = c.status;
		}
	}
	s->elapsed = dlcp_now() - t0;
	if (!opt.no_ack) {
		if (!s->done) {
			fprintf(stderr, "# sender %u: no DONE from the receiver within %.0f s\n",
				s->id, opt.timeout);
			s->rc = s->rc ? s->rc : 1;
		} else {
			send_ctl(s->fd, &dest.ss, dest.len, CTL_BYE, s->id,
				 0);
			/* Give BYE its first transmission before close. */
			usleep(20 * 1000);
		}
	}
	close(s->fd);
	free(buf);
	return NULL;
}

static int do_send(void)
{
	struct sender *snd;
	unsigned int i;
	int rc = 0;

	if (!opt.to || !opt.port || !opt.nsizes)
		die("send needs --to, --port and --sizes");
	make_addr(&dest, opt.to, opt.port);
	snd = calloc(opt.senders, sizeof(*snd));
	if (!snd)
		die("out of memory");
	for (i = 0; i < opt.senders; i++) {
		snd[i].id = opt.id_base + i;
		if (pthread_create(&snd[i].thread, NULL, sender_main, &snd[i]))
			die("pthread_create failed");
	}
	for (i = 0; i < opt.senders; i++) {
		pthread_join(snd[i].thread, NULL);
		printf("# send: sender %u: %u/%u messages, %llu bytes, %s in %.2f s\n",
		       snd[i].id, snd[i].sent, per_sender(), snd[i].bytes,
		       opt.no_ack ? "no ack asked" :
		       snd[i].done ? (snd[i].status ? "receiver reports errors" :
				      "receiver done") : "NO ACK",
		       snd[i].elapsed);
		if (snd[i].done && snd[i].status && !snd[i].rc)
			snd[i].rc = 1;
		if (snd[i].rc)
			rc = snd[i].rc;
	}
	fflush(stdout);
	free(snd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* mss, hold                                                            */
/* ------------------------------------------------------------------ */

static int do_mss(void)
{
	struct addr a;
	socklen_t len;
	int fd, val;

	if (!opt.to)
		die("mss needs --to");
	make_addr(&a, opt.to, opt.port ? opt.port : 9);
	fd = dlcp_socket();
	if (connect(fd, (struct sockaddr *)&a.ss, a.len))
		die("connect %s: %s", opt.to, strerror(errno));
	len = sizeof(val);
	if (getsockopt(fd, SOL_DLCP, DLCP_SEGMENT_SIZE, &val, &len))
		die("getsockopt(DLCP_SEGMENT_SIZE): %s", strerror(errno));
	printf("%d\n", val);
	close(fd);
	return 0;
}

static volatile sig_atomic_t stop_hold;

static void on_signal(int sig)
{
	(void)sig;
	stop_hold = 1;
}

static int do_hold(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct addr a;
	int fd;

	fd = socket(opt.family, SOCK_DLCP, 0);
	if (fd < 0) {
		fprintf(stderr, "%s: socket: %s\n", prog, strerror(errno));
		return 1;
	}
	make_addr(&a, opt.bind_addr, opt.port);
	if (bind(fd, (struct sockaddr *)&a.ss, a.len)) {
		fprintf(stderr, "%s: bind: %s\n", prog, strerror(errno));
		return 1;
	}
	if (opt.no_wait) {
		close(fd);
		return 0;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	touch_ready();
	while (!stop_hold)
		pause();
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	cmd = argv[1];
	parse_opts(argc - 1, argv + 1);
	if (!strcmp(cmd, "recv"))
		return do_recv();
	if (!strcmp(cmd, "send"))
		return do_send();
	if (!strcmp(cmd, "mss"))
		return do_mss();
	if (!strcmp(cmd, "hold"))
		return do_hold();
	if (!strcmp(cmd, "hdrlen")) {
		printf("%d\n", DLCP_DATA_HDR_LEN);
		return 0;
	}
	usage();
	return 2;
}
