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
 *
 * This file has the options, the socket helpers and control messages
 * that the receiver (dlcp_xfer_recv.c) and the senders
 * (dlcp_xfer_send.c) share, and the small commands mss, hold and hdrlen.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <linux/dlcp.h>
#include "dlcp_wire.h"

#include "dlcp_util.h"
#include "dlcp_xfer.h"

struct xfer_opts opt = {
	.family = AF_INET,
	.repeat = 1,
	.senders = 1,
	.timeout = 60,
	.linger = 3,
};

static const char *prog = "dlcp_xfer";

void msg(const char *fmt, ...)
{
	va_list ap;

	if (opt.quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
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

unsigned int per_sender(void)
{
	return opt.nsizes * opt.repeat;
}

/* ------------------------------------------------------------------ */
/* Sockets and addresses                                                */
/* ------------------------------------------------------------------ */

void make_addr(struct addr *a, const char *host, uint16_t port)
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

int dlcp_socket(void)
{
	int fd = socket(opt.family, SOCK_DLCP, 0);

	if (fd < 0)
		die("socket(%s, SOCK_DLCP): %s",
		    opt.family == AF_INET ? "AF_INET" : "AF_INET6",
		    strerror(errno));
	return fd;
}

void set_buf(int fd, int force_opt, int opt_name, int bytes)
{
	if (bytes <= 0)
		return;
	if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) &&
	    setsockopt(fd, SOL_SOCKET, opt_name, &bytes, sizeof(bytes)))
		die("setting buffer size %d: %s", bytes, strerror(errno));
}

void touch_ready(void)
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
ssize_t send_meta(int fd, const struct addr *to, const void *buf,
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

ssize_t send_ctl(int fd, const struct sockaddr_storage *to,
		 socklen_t tolen, uint32_t type, uint32_t sender,
		 uint32_t status)
{
	struct ctl_msg c = { CTL_MAGIC, type, sender, status };
	struct addr a = { .len = tolen };

	memcpy(&a.ss, to, sizeof(*to));
	return send_meta(fd, &a, &c, sizeof(c), CTL_TENSOR, type, false);
}

/* Wait up to @secs for @fd to be readable: 1 yes, 0 timeout. */
int wait_readable(int fd, double secs)
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
	sigset_t block, old;
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
	/*
	 * The signals stay blocked but while sigsuspend() waits: one that
	 * came between the test of stop_hold and a pause() would be lost,
	 * and the holder would never exit.
	 */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	touch_ready();
	while (!stop_hold)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
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
