// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp-cat - send and receive DLCP messages from the command line, for
 * smoke tests, packet captures and scripts (a netcat for DLCP).
 *
 *   dlcp-cat -l -p PORT [-b ADDR] [-c COUNT] [-t SEC] [-o FILE]
 *	receive COUNT messages (default 1; 0 = until timeout or signal) and
 *	print one "recv key=value..." line per message on stdout (on stderr
 *	with -o -); -o FILE appends the payloads to FILE ("-" = stdout).
 *
 *   dlcp-cat [-s SIZE] [-c COUNT] [-B PPM] [-D MS] [-T TENSOR] [-I ITER]
 *	    [-L LAYER] [-y DTYPE] [-C OFF:LEN]... [-P SPORT] [-w] [-t SEC]
 *	    HOST PORT
 *	send COUNT messages (default 1) of SIZE bytes of a test pattern, or
 *	the whole of stdin without -s; -w asks for completions and prints one
 *	"done key=value..." line per message. Exit status 0 only if every
 *	message was delivered (with -w) or accepted (without).
 *
 * See dlcp(7).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/dlcp.h>

#include "dlcp_cli.h"

#define MAX_CRIT	64
/* the longest -t: a week */
#define MAX_TIMEOUT	(7 * 24 * 3600.0)
/* the largest message the module takes (net.dlcp.max_msg_size's limit) */
#define MAX_SIZE	(1ULL << 30)

#ifndef DLCP_RELEASE
#define DLCP_RELEASE	"unknown"
#endif

static const char *prog = "dlcp-cat";

static const char *const dtype_names[] = {
	[DLCP_DTYPE_BYTES] = "bytes", [DLCP_DTYPE_FP32] = "fp32",
	[DLCP_DTYPE_FP16] = "fp16", [DLCP_DTYPE_BF16] = "bf16",
	[DLCP_DTYPE_INT8] = "int8", [DLCP_DTYPE_INT32] = "int32",
};

static struct {
	bool		listen;
	const char	*bind_addr;
	unsigned int	port;		/* -p: listening port */
	unsigned int	sport;		/* -P: sender's local port */
	long		count;
	double		timeout;
	const char	*out;
	long long	size;		/* -s, -1: stdin */
	long		budget;		/* -B, -1: socket default */
	uint32_t	deadline;	/* -D, 0: none */
	uint32_t	tensor, iteration;
	long		layer;		/* -L, -1: socket default */
	unsigned int	dtype;
	bool		critical;	/* -C all */
	struct dlcp_range crit[MAX_CRIT];
	unsigned int	nr_crit;
	bool		wait;
	bool		verbose;
} opt = {
	.count = 1, .timeout = 10, .size = -1, .budget = -1, .layer = -1,
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s -l -p PORT [-b ADDR] [-c COUNT] [-t SEC] [-o FILE]\n"
"       %s [-s SIZE] [-c COUNT] [-B PPM] [-D MS] [-T TENSOR] [-I ITER]\n"
"          [-L LAYER] [-y DTYPE] [-C OFF:LEN|all]... [-P SPORT] [-w] [-t SEC]\n"
"          HOST PORT\n"
"\n"
"  -l          receive (default: send)\n"
"  -p PORT     port to receive on\n"
"  -b ADDR     local address to bind (default any)\n"
"  -c COUNT    messages to send or receive (receive: 0 = until timeout)\n"
"  -t SEC      give up after SEC seconds without progress (default 10)\n"
"  -o FILE     receive: append payloads to FILE (- = stdout)\n"
"  -s SIZE     send SIZE bytes of a test pattern (suffix k, m, g); else stdin\n"
"  -B PPM      loss budget, parts per million\n"
"  -D MS       deadline in milliseconds\n"
"  -T, -I, -L  tensor id, iteration, layer of the messages\n"
"  -y DTYPE    bytes, fp32, fp16, bf16, int8, int32\n"
"  -C OFF:LEN  critical byte range (repeatable); -C all: whole message\n"
"  -P SPORT    sender's local port\n"
"  -w          wait for the completions and print them\n"
"  -v          verbose\n"
"  -h, --help  this help\n"
"  -V, --version  print the version\n"
"See dlcp-cat(1).\n", prog, prog);
}

static int resolve(const char *host, unsigned int port, struct sockaddr_in *sin)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *ai;
	int err;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	if (!host || !*host)
		return 0;
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1)
		return 0;
	err = getaddrinfo(host, NULL, &hints, &ai);
	if (err) {
		fprintf(stderr, "%s: %s: %s\n", prog, host, gai_strerror(err));
		return -1;
	}
	sin->sin_addr = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
	freeaddrinfo(ai);
	return 0;
}

static int open_socket(void)
{
	int fd = socket(AF_INET, SOCK_DLCP, 0);

	if (fd < 0)
		fprintf(stderr, "%s: socket(AF_INET, SOCK_DLCP): %s%s\n", prog,
			strerror(errno),
			errno == ESOCKTNOSUPPORT || errno == EPROTONOSUPPORT ?
			" (is dlcp.ko loaded?)" : "");
	return fd;
}

static void set_timeout(int fd, double sec)
{
	struct timeval tv = {
		.tv_sec = (time_t)sec,
		.tv_usec = (suseconds_t)((sec - (double)(time_t)sec) * 1e6),
	};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static const char *recv_status(unsigned int s)
{
	return s == DLCP_RECV_EXACT ? "exact" :
	       s == DLCP_RECV_LOSSY ? "lossy" : "unknown";
}

static int do_recv(void)
{
	struct sockaddr_in sin, from;
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
			 CMSG_SPACE(256 * sizeof(struct dlcp_range))];
		struct cmsghdr align;
	} ctl;
	FILE *out = NULL, *info_f = stdout;
	size_t bufsz;
	int fd, maxsz = 0;
	socklen_t sl = sizeof(maxsz);
	long n = 0;
	char *buf;

	if (resolve(opt.bind_addr, opt.port, &sin))
		return 1;
	fd = open_socket();
	if (fd < 0)
		return 1;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		fprintf(stderr, "%s: bind: %s\n", prog, strerror(errno));
		return 1;
	}
	if (getsockopt(fd, SOL_DLCP, DLCP_MAX_MSG_SIZE, &maxsz, &sl) ||
	    maxsz <= 0)
		maxsz = 64 << 20;
	bufsz = (size_t)maxsz;
	buf = malloc(bufsz);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	if (opt.out) {
		if (!strcmp(opt.out, "-")) {
			out = stdout;
			info_f = stderr;
		} else {
			out = fopen(opt.out, "a");
			if (!out) {
				fprintf(stderr, "%s: %s: %s\n", prog, opt.out,
					strerror(errno));
				return 1;
			}
		}
	}
	set_timeout(fd, opt.timeout);
	if (opt.verbose)
		fprintf(stderr, "%s: listening on port %u\n", prog, opt.port);

	while (!opt.count || n < opt.count) {
		struct iovec iov = { .iov_base = buf, .iov_len = bufsz };
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
		};
		struct dlcp_recv_info ri;
		bool have_ri = false;
		struct cmsghdr *c;
		char addr[INET_ADDRSTRLEN];
		ssize_t len;

		len = recvmsg(fd, &msg, 0);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && !opt.count)
				break;	/* receive until timeout: done */
			fprintf(stderr, "%s: recvmsg: %s (after %ld messages)\n",
				prog, errno == EAGAIN ? "timed out" :
				strerror(errno), n);
			return 1;
		}
		memset(&ri, 0, sizeof(ri));
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
			if (c->cmsg_level == SOL_DLCP &&
			    c->cmsg_type == DLCP_CMSG_RECV &&
			    c->cmsg_len >= CMSG_LEN(sizeof(ri))) {
				memcpy(&ri, CMSG_DATA(c), sizeof(ri));
				have_ri = true;
			}
		inet_ntop(AF_INET, &from.sin_addr, addr, sizeof(addr));
		fprintf(info_f, "recv from=%s:%u len=%zd", addr,
			ntohs(from.sin_port), len);
		if (have_ri)
			fprintf(info_f,
				" msg_id=%u msg_len=%u status=%s lost=%u ranges=%u"
				" tensor=%u iter=%u layer=%u dtype=%s prio=%u"
				" budget=%u flags=0x%x",
				ri.msg_id, ri.msg_len, recv_status(ri.status),
				ri.bytes_lost, ri.nr_lost_ranges, ri.tensor_id,
				ri.iteration, ri.layer,
				ri.dtype < __DLCP_DTYPE_MAX ?
				dtype_names[ri.dtype] : "?", ri.prio,
				ri.loss_budget_ppm, ri.flags);
		if (msg.msg_flags & MSG_TRUNC)
			fprintf(info_f, " truncated");
		if (msg.msg_flags & MSG_CTRUNC)
			fprintf(info_f, " ctruncated");
		fputc('\n', info_f);
		fflush(info_f);
		if (out && fwrite(buf, 1, (size_t)len, out) != (size_t)len) {
			fprintf(stderr, "%s: write: %s\n", prog,
				strerror(errno));
			return 1;
		}
		n++;
	}
	if (out && out != stdout)
		fclose(out);
	free(buf);
	close(fd);
	return 0;
}

static char *read_stdin(size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	while (buf) {
		if (n == cap) {
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(STDIN_FILENO, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

static const char *done_status(unsigned int s)
{
	switch (s) {
	case DLCP_DONE_EXACT:
		return "exact";
	case DLCP_DONE_LOSSY:
		return "lossy";
	case DLCP_DONE_DEADLINE:
		return "deadline";
	case DLCP_DONE_TIMEOUT:
		return "timeout";
	}
	return "unknown";
}

/* Read @want completions from the error queue; return how many failed. */
static long wait_completions(int fd, long want)
{
	long got = 0, failed = 0;

	while (got < want) {
		struct pollfd pfd = { .fd = fd, .events = 0 };
		struct dlcp_completion c;
		char ctl[256];
		struct iovec iov = { .iov_base = &c, .iov_len = sizeof(c) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl, .msg_controllen = sizeof(ctl),
		};
		ssize_t len;
		int r;

		r = poll(&pfd, 1, (int)(opt.timeout * 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "%s: %ld of %ld completions missing\n",
				prog, want - got, want);
			return failed + want - got;
		}
		len = recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fprintf(stderr, "%s: recvmsg(MSG_ERRQUEUE): %s\n",
				prog, strerror(errno));
			return failed + want - got;
		}
		if ((size_t)len < sizeof(c))
			continue;
		printf("done msg_id=%u len=%u status=%s lost=%u tensor=%u iter=%u\n",
		       c.msg_id, c.msg_len, done_status(c.status), c.bytes_lost,
		       c.tensor_id, c.iteration);
		fflush(stdout);
		if (c.status != DLCP_DONE_EXACT && c.status != DLCP_DONE_LOSSY)
			failed++;
		got++;
	}
	return failed;
}

static int do_send(const char *host, unsigned int port)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_send_info)) +
			 CMSG_SPACE(MAX_CRIT * sizeof(struct dlcp_range))];
		struct cmsghdr align;
	} ctl;
	struct sockaddr_in dst, src;
	struct dlcp_send_info si;
	size_t len, i;
	char *buf;
	long n, failed = 0;
	int fd, one = 1;

	if (resolve(host, port, &dst))
		return 1;
	if (opt.size >= 0) {
		len = (size_t)opt.size;
		buf = malloc(len ? len : 1);
		if (buf)
			for (i = 0; i < len; i++)
				buf[i] = (char)(i * 7 + (i >> 8));
	} else {
		buf = read_stdin(&len);
	}
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	fd = open_socket();
	if (fd < 0)
		return 1;
	if (opt.sport) {
		resolve(NULL, opt.sport, &src);
		if (bind(fd, (struct sockaddr *)&src, sizeof(src))) {
			fprintf(stderr, "%s: bind: %s\n", prog, strerror(errno));
			return 1;
		}
	}
	if (opt.wait &&
	    setsockopt(fd, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one))) {
		fprintf(stderr, "%s: DLCP_RECVCOMPLETION: %s\n", prog,
			strerror(errno));
		return 1;
	}

	memset(&si, 0, sizeof(si));
	si.tensor_id = opt.tensor;
	si.iteration = opt.iteration;
	si.dtype = (uint8_t)opt.dtype;
	if (opt.layer >= 0) {
		si.layer = (uint16_t)opt.layer;
		si.flags |= DLCP_MSG_HAS_LAYER;
	}
	if (opt.budget >= 0) {
		si.loss_budget_ppm = (uint32_t)opt.budget;
		si.flags |= DLCP_MSG_HAS_BUDGET;
	}
	if (opt.deadline > 0) {
		si.deadline_ms = opt.deadline;
		si.flags |= DLCP_MSG_HAS_DEADLINE;
	}
	if (opt.critical)
		si.flags |= DLCP_MSG_CRITICAL;

	for (n = 0; n < opt.count; n++) {
		struct iovec iov = { .iov_base = buf, .iov_len = len };
		struct msghdr msg = {
			.msg_name = &dst, .msg_namelen = sizeof(dst),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl.buf,
		};
		struct cmsghdr *c;
		size_t clen = CMSG_SPACE(sizeof(si));

		if (opt.nr_crit)
			clen += CMSG_SPACE(opt.nr_crit * sizeof(opt.crit[0]));
		memset(ctl.buf, 0, sizeof(ctl.buf));
		msg.msg_controllen = clen;
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEND;
		c->cmsg_len = CMSG_LEN(sizeof(si));
		memcpy(CMSG_DATA(c), &si, sizeof(si));
		if (opt.nr_crit) {
			c = CMSG_NXTHDR(&msg, c);
			c->cmsg_level = SOL_DLCP;
			c->cmsg_type = DLCP_CMSG_CRITICAL;
			c->cmsg_len = CMSG_LEN(opt.nr_crit * sizeof(opt.crit[0]));
			memcpy(CMSG_DATA(c), opt.crit,
			       opt.nr_crit * sizeof(opt.crit[0]));
		}
		if (sendmsg(fd, &msg, 0) < 0) {
			fprintf(stderr, "%s: sendmsg: %s\n", prog,
				strerror(errno));
			return 1;
		}
		if (opt.verbose)
			fprintf(stderr, "%s: sent %zu bytes\n", prog, len);
		si.iteration++;
	}
	if (opt.wait)
		failed = wait_completions(fd, opt.count);
	/* close() waits until every message is delivered or has failed */
	close(fd);
	free(buf);
	return failed ? 1 : 0;
}

static int parse_crit(const char *s)
{
	unsigned long long off, l;
	const char *colon = strchr(s, ':');
	char off_s[32];

	if (!strcmp(s, "all")) {
		opt.critical = true;
		return 0;
	}
	if (!colon ||
	    (size_t)(colon - s) >= sizeof(off_s))
		return -1;
	memcpy(off_s, s, (size_t)(colon - s));
	off_s[colon - s] = '\0';
	if (dlcp_parse_uint(off_s, 0, UINT32_MAX, &off) ||
	    dlcp_parse_uint(colon + 1, 1, UINT32_MAX, &l))
		return -1;
	opt.crit[opt.nr_crit].offset = (uint32_t)off;
	opt.crit[opt.nr_crit].len = (uint32_t)l;
	opt.nr_crit++;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help",	no_argument,	NULL, 'h' },
		{ "version",	no_argument,	NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned int i;
	int c;

	while ((c = getopt_long(argc, argv, "lb:p:P:c:t:o:s:B:D:T:I:L:y:C:wvhV",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			opt.listen = true;
			break;
		case 'b':
			opt.bind_addr = optarg;
			break;
		case 'p':
			opt.port = (unsigned int)dlcp_cli_uint("-p", optarg, 1,
							       65535);
			break;
		case 'P':
			opt.sport = (unsigned int)dlcp_cli_uint("-P", optarg, 1,
								65535);
			break;
		case 'c':
			opt.count = (long)dlcp_cli_uint("-c", optarg, 0,
							INT32_MAX);
			break;
		case 't':
			opt.timeout = dlcp_cli_positive("-t", optarg,
							MAX_TIMEOUT);
			break;
		case 'o':
			opt.out = optarg;
			break;
		case 's':
			opt.size = (long long)dlcp_cli_size("-s", optarg, 0,
							    MAX_SIZE);
			break;
		case 'B':
			opt.budget = (long)dlcp_cli_uint("-B", optarg, 0,
							 DLCP_PPM_MAX);
			break;
		case 'D':
			opt.deadline = (uint32_t)dlcp_cli_uint("-D", optarg, 0,
							       UINT32_MAX);
			break;
		case 'T':
			opt.tensor = (uint32_t)dlcp_cli_uint("-T", optarg, 0,
							     UINT32_MAX);
			break;
		case 'I':
			opt.iteration = (uint32_t)dlcp_cli_uint("-I", optarg, 0,
								UINT32_MAX);
			break;
		case 'L':
			opt.layer = (long)dlcp_cli_uint("-L", optarg, 0,
							UINT16_MAX);
			break;
		case 'y':
			for (i = 0; i < __DLCP_DTYPE_MAX; i++)
				if (!strcmp(optarg, dtype_names[i]))
					break;
			if (i == __DLCP_DTYPE_MAX) {
				fprintf(stderr, "%s: unknown dtype %s\n", prog,
					optarg);
				return 2;
			}
			opt.dtype = i;
			break;
		case 'C':
			if (opt.nr_crit == MAX_CRIT) {
				fprintf(stderr, "%s: -C: at most %d ranges\n",
					prog, MAX_CRIT);
				return 2;
			}
			if (parse_crit(optarg)) {
				fprintf(stderr,
					"%s: -C: '%s' is not OFF:LEN (offset 0..%u, length 1..%u) or all\n",
					prog, optarg, UINT32_MAX, UINT32_MAX);
				return 2;
			}
			break;
		case 'w':
			opt.wait = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s (DLCP) %s\n", prog, DLCP_RELEASE);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (opt.listen) {
		if (!opt.port || opt.port > 65535 || optind != argc) {
			usage(stderr);
			return 2;
		}
		return do_recv();
	}
	if (opt.count < 1) {
		fprintf(stderr,
			"%s: -c: '%ld' is not a whole number in 1..%d (a sender sends a message at least)\n",
			prog, opt.count, INT32_MAX);
		return 2;
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	return do_send(argv[optind],
		       (unsigned int)dlcp_cli_uint("PORT", argv[optind + 1], 1,
						   65535));
}
