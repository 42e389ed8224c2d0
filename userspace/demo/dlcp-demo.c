// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp-demo: a parameter-server gradient exchange over DLCP.
 *
 *   dlcp-demo ps --port P --workers N --iters I [--pull-budget PPM]
 *   dlcp-demo worker --ps ADDR --port P --rank R --iters I
 *		      [--push-budget PPM] [--sizes BYTES,...]
 *
 * Each iteration every worker pushes one fp32 "gradient" message per
 * tensor (tensor_id = index, iteration = i) to the server, which averages
 * each element over the workers whose bytes actually arrived (lost ranges
 * are known exactly from DLCP_CMSG_LOST) and sends the average back to
 * every worker. Rank r (1..N) pushes the value r, so every element a
 * worker pulls that is not reported lost must lie in [1, N]: the demo
 * checks that, end to end. The first 4 KiB of each tensor are marked critical. Workers
 * print their iteration times and what was lost.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "linux/dlcp.h"

#include "dlcp_cli.h"

#define MAX_TENSORS	16
#define MAX_WORKERS	64
#define MAX_ITERS	1000000

struct opts {
	const char *ps;
	int port, workers, iters, rank;
	unsigned int push_ppm, pull_ppm;
	size_t sizes[MAX_TENSORS];
	int ntensors;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "dlcp-demo: %s: %s\n", what, strerror(errno));
	if (errno == ESOCKTNOSUPPORT || errno == EPROTONOSUPPORT)
		fprintf(stderr, "dlcp-demo: is dlcp.ko loaded?\n");
	exit(1);
}

static int dlcp_socket(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 60 };
	int s = socket(AF_INET, SOCK_DLCP, 0);

	if (s < 0)
		die("socket");
	if (bind(s, (struct sockaddr *)&a, sizeof(a)))
		die("bind");
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("setsockopt");
	return s;
}

static void send_tensor(int s, const struct sockaddr_in *to, const float *v,
			size_t bytes, int tensor, int iter, unsigned int ppm)
{
	char cbuf[CMSG_SPACE(sizeof(struct dlcp_send_info)) +
		  CMSG_SPACE(sizeof(struct dlcp_range))] = { 0 };
	struct dlcp_send_info si = {
		.tensor_id = tensor, .iteration = iter, .layer = tensor,
		.dtype = DLCP_DTYPE_FP32, .loss_budget_ppm = ppm,
		.flags = DLCP_MSG_HAS_BUDGET | DLCP_MSG_HAS_LAYER,
	};
	struct dlcp_range crit = { 0, bytes < 4096 ? bytes : 4096 };
	struct iovec iov = { (void *)v, bytes };
	struct msghdr mh = {
		.msg_name = (void *)to, .msg_namelen = sizeof(*to),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_DLCP;
	c->cmsg_type = DLCP_CMSG_SEND;
	c->cmsg_len = CMSG_LEN(sizeof(si));
	memcpy(CMSG_DATA(c), &si, sizeof(si));
	c = CMSG_NXTHDR(&mh, c);
	c->cmsg_level = SOL_DLCP;
	c->cmsg_type = DLCP_CMSG_CRITICAL;
	c->cmsg_len = CMSG_LEN(sizeof(crit));
	memcpy(CMSG_DATA(c), &crit, sizeof(crit));
	if (sendmsg(s, &mh, 0) != (ssize_t)bytes)
		die("sendmsg");
}

/* Receive one message; returns its info and marks lost bytes in @lost. */
static ssize_t recv_tensor(int s, void *buf, size_t len,
			   struct dlcp_recv_info *ri, uint8_t *lost,
			   struct sockaddr_in *from)
{
	static char cbuf[CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
			 CMSG_SPACE(64 * 1024)];
	struct iovec iov = { buf, len };
	struct msghdr mh = {
		.msg_name = from, .msg_namelen = sizeof(*from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	ssize_t n = recvmsg(s, &mh, 0);

	if (n < 0)
		die("recvmsg");
	memset(lost, 0, len / 4);
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_DLCP)
			continue;
		if (c->cmsg_type == DLCP_CMSG_RECV) {
			memcpy(ri, CMSG_DATA(c), sizeof(*ri));
		} else if (c->cmsg_type == DLCP_CMSG_LOST) {
			const struct dlcp_range *r = (void *)CMSG_DATA(c);
			size_t i, k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(*r);

			for (i = 0; i < k; i++) {
				size_t e = r[i].offset / 4;
				size_t end = (r[i].offset + r[i].len + 3) / 4;

				for (; e < end && e < len / 4; e++)
					lost[e] = 1;
			}
		}
	}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int run_ps(const struct opts *o)
{
	int s = dlcp_socket(o->port), w, t, it;
	struct sockaddr_in peers[MAX_WORKERS] = { 0 };
	size_t max = 0;
	float *sum[MAX_TENSORS], *buf;
	uint32_t *cnt[MAX_TENSORS];
	uint8_t *lost;
	long long lost_bytes = 0, lossy = 0, msgs = 0;

	for (t = 0; t < o->ntensors; t++)
		if (o->sizes[t] > max)
			max = o->sizes[t];
	buf = malloc(max);
	lost = malloc(max / 4 + 1);
	for (t = 0; t < o->ntensors; t++) {
		sum[t] = malloc(o->sizes[t]);
		cnt[t] = malloc(o->sizes[t]);
	}
	for (it = 0; it < o->iters; it++) {
		int got = 0, need = o->workers * o->ntensors;

		for (t = 0; t < o->ntensors; t++) {
			memset(sum[t], 0, o->sizes[t]);
			memset(cnt[t], 0, o->sizes[t]);
		}
		/* messages of one iteration arrive in any order */
		while (got < need) {
			struct dlcp_recv_info ri = { 0 };
			struct sockaddr_in from;
			size_t e, n;

			recv_tensor(s, buf, max, &ri, lost, &from);
			t = ri.tensor_id;
			if (t >= o->ntensors || (int)ri.iteration != it ||
			    ri.msg_len != o->sizes[t]) {
				fprintf(stderr, "ps: unexpected message\n");
				return 1;
			}
			w = ntohl(from.sin_addr.s_addr) & 0xff;
			if (w < MAX_WORKERS)
				peers[w] = from;
			n = o->sizes[t] / 4;
			for (e = 0; e < n; e++) {
				if (lost[e])
					continue;
				sum[t][e] += buf[e];
				cnt[t][e]++;
			}
			lost_bytes += ri.bytes_lost;
			lossy += ri.status == DLCP_RECV_LOSSY;
			msgs++;
			got++;
		}
		/* unbiased: average over the contributions that arrived */
		for (t = 0; t < o->ntensors; t++) {
			size_t e, n = o->sizes[t] / 4;

			for (e = 0; e < n; e++)
				sum[t][e] = cnt[t][e] ? sum[t][e] / cnt[t][e] : 0;
		}
		for (w = 0; w < MAX_WORKERS; w++) {
			if (!peers[w].sin_port)
				continue;
			for (t = 0; t < o->ntensors; t++)
				send_tensor(s, &peers[w], sum[t], o->sizes[t],
					    t, it, o->pull_ppm);
		}
	}
	printf("ps: %lld messages aggregated, %lld delivered within budget, %lld bytes lost (%.3f%%)\n",
	       msgs, lossy, lost_bytes,
	       100.0 * lost_bytes / ((double)o->iters * o->workers *
				     (double)(max ? max : 1) * o->ntensors));
	close(s);
	return 0;
}

static int run_worker(const struct opts *o)
{
	struct sockaddr_in ps = { .sin_family = AF_INET,
				  .sin_port = htons(o->port) };
	int s = dlcp_socket(o->port), t, it, bad = 0;
	double *times = calloc(o->iters, sizeof(double)), total = 0;
	float *grad[MAX_TENSORS], *buf;
	long long lost_bytes = 0;
	size_t max = 0;
	uint8_t *lost;

	if (inet_pton(AF_INET, o->ps, &ps.sin_addr) != 1) {
		fprintf(stderr, "dlcp-demo: bad address %s\n", o->ps);
		return 2;
	}
	for (t = 0; t < o->ntensors; t++) {
		size_t e;

		grad[t] = malloc(o->sizes[t]);
		if (o->sizes[t] > max)
			max = o->sizes[t];
		for (e = 0; e < o->sizes[t] / 4; e++)
			grad[t][e] = (float)o->rank;
	}
	buf = malloc(max);
	lost = malloc(max / 4 + 1);
	for (it = 0; it < o->iters; it++) {
		double t0 = now();
		int got = 0;

		for (t = 0; t < o->ntensors; t++)
			send_tensor(s, &ps, grad[t], o->sizes[t], t, it,
				    o->push_ppm);
		while (got < o->ntensors) {
			struct dlcp_recv_info ri = { 0 };
			struct sockaddr_in from;
			size_t e;

			recv_tensor(s, buf, max, &ri, lost, &from);
			if ((int)ri.iteration != it)
				continue;
			/*
			 * rank r pushes r (1..N): an average over any subset of
			 * the contributions lies in [1, N]; zeros are lost bytes
			 */
			for (e = 0; e < ri.msg_len / 4; e++)
				if (!lost[e] &&
				    (buf[e] < 1.0f || buf[e] > (float)o->workers))
					bad++;
			lost_bytes += ri.bytes_lost;
			got++;
		}
		times[it] = now() - t0;
		total += times[it];
	}
	qsort(times, o->iters, sizeof(double), cmp_double);
	printf("worker %d: %d iterations, iteration time p50 %.0f ms p99 %.0f ms mean %.0f ms, pull bytes lost %lld, wrong elements %d\n",
	       o->rank, o->iters, 1e3 * times[o->iters / 2],
	       1e3 * times[(o->iters * 99) / 100], 1e3 * total / o->iters,
	       lost_bytes, bad);
	close(s);
	return bad ? 1 : 0;
}

#ifndef DLCP_RELEASE
#define DLCP_RELEASE	"unknown"
#endif

/* to stdout with status 0 for --help, else to stderr with status 2 */
static void usage_exit(FILE *f, int status)
{
	fprintf(f,
		"usage: dlcp-demo ps --port P --workers N --iters I [--pull-budget PPM] [--sizes B,...]\n"
		"       dlcp-demo worker --ps ADDR --port P --rank R --workers N --iters I\n"
		"                        [--push-budget PPM] [--sizes B,...]\n"
		"       dlcp-demo -h|--help | -V|--version\n"
		"A parameter server and N workers exchange fp32 gradients over DLCP;\n"
		"workers print iteration times and what was lost.\n");
	exit(status);
}

static void usage(void)
{
	usage_exit(stderr, 2);
}

/* --sizes B,...: fp32 tensors, 4 bytes to 1 GiB each, a multiple of 4 */
static void parse_sizes(struct opts *o, const char *list)
{
	const char *p = list;

	for (o->ntensors = 0; ; p++) {
		size_t len = strcspn(p, ",");
		char tok[32];

		if (o->ntensors == MAX_TENSORS || len >= sizeof(tok)) {
			fprintf(stderr, "dlcp-demo: --sizes: '%s' is not at most %d sizes\n",
				list, MAX_TENSORS);
			exit(2);
		}
		memcpy(tok, p, len);
		tok[len] = '\0';
		o->sizes[o->ntensors] = dlcp_cli_size("--sizes", tok, 4, 1 << 30);
		if (o->sizes[o->ntensors++] % 4) {
			fprintf(stderr, "dlcp-demo: --sizes: '%s' is not a multiple of 4 (fp32)\n",
				tok);
			exit(2);
		}
		p += len;
		if (!*p)
			break;
	}
}

int main(int argc, char **argv)
{
	struct opts o = { .port = 7000, .workers = 1, .iters = 10,
			  .sizes = { 1 << 20, 256 << 10, 64 << 10 },
			  .ntensors = 3 };
	int i;

	if (argc < 2)
		usage();
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			usage_exit(stdout, 0);
		if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			printf("dlcp-demo (DLCP) %s\n", DLCP_RELEASE);
			return 0;
		}
	}
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--ps"))
			o.ps = v;
		else if (!strcmp(a, "--port"))
			o.port = (int)dlcp_cli_uint(a, v, 1, 65535);
		else if (!strcmp(a, "--workers"))
			o.workers = (int)dlcp_cli_uint(a, v, 1, MAX_WORKERS);
		else if (!strcmp(a, "--iters"))
			o.iters = (int)dlcp_cli_uint(a, v, 1, MAX_ITERS);
		else if (!strcmp(a, "--rank"))
			o.rank = (int)dlcp_cli_uint(a, v, 1, MAX_WORKERS);
		else if (!strcmp(a, "--push-budget"))
			o.push_ppm = (unsigned int)dlcp_cli_uint(a, v, 0,
								 DLCP_PPM_MAX);
		else if (!strcmp(a, "--pull-budget"))
			o.pull_ppm = (unsigned int)dlcp_cli_uint(a, v, 0,
								 DLCP_PPM_MAX);
		else if (!strcmp(a, "--sizes"))
			parse_sizes(&o, v);
		else
			usage();
	}
	if (!strcmp(argv[1], "worker") && (!o.rank || o.rank > o.workers)) {
		fprintf(stderr,
			"dlcp-demo: --rank: '%d' is not a whole number in 1..%d (--workers)\n",
			o.rank, o.workers);
		return 2;
	}
	if (!strcmp(argv[1], "ps"))
		return run_ps(&o);
	if (!strcmp(argv[1], "worker") && o.ps)
		return run_worker(&o);
	usage();
	return 2;
}
