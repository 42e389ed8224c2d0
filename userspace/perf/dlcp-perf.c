// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp-perf - message-oriented benchmark for DLCP, with TCP for comparison.
 *
 *   dlcp-perf server [--port P] [--proto dlcp|tcp] [--encap native|udp] [--json]
 *   dlcp-perf client HOST [--port P] --proto dlcp|tcp
 *                    (--size BYTES | --sizes A,B,C) (--count N | --duration S)
 *                    (--count N --duration S: stop at whichever comes first)
 *                    [--concurrency K] [--layer L] [--budget PPM] [--prio C]
 *                    [--encap native|udp] [--senders N] [--id N]
 *                    [--timeout S] [--json] [--samples]
 *
 * --encap sets DLCP_ENCAP on the socket (the server's creates the
 * namespace's UDP port); --senders N runs N clients at once (incast),
 * each its own process and socket with ids id .. id + N - 1, and prints
 * their reports one after the other.
 *
 * The unit of work is a message. For DLCP one sendmsg() is one message; for
 * TCP a message is a 24-byte frame header (magic, type, client id, sequence
 * number, length) followed by the payload, on one TCP_NODELAY connection per
 * client, so that both protocols carry the same payload bytes with the same
 * number of messages in flight.
 *
 * For every data message the server sends back a small ACK (a DLCP message
 * to the sender's address, or a frame on the TCP connection) holding the
 * CLOCK_MONOTONIC time at which its recvmsg()/last read() of the message
 * returned, plus the bytes the receiver got as zeros (DLCP loss budget).
 *
 * Message completion time (CT) = receiver's recvmsg() return of the message
 * minus the sender's clock just before its sendmsg() call. Both clocks are
 * CLOCK_MONOTONIC; this is valid ("oneway" mode) only when client and server
 * run under the same kernel, e.g. in two network namespaces of one (virtual)
 * machine: the ACK carries the server's boot id and the client checks it.
 * When boot ids differ, CT falls back to "echo" mode: send start to ACK
 * arrival (one extra one-way trip of a small message).
 *
 * For DLCP the client also enables DLCP_RECVCOMPLETION and reports the
 * sender-side completion time (sendmsg() start to the completion on the
 * error queue, i.e. the receiver's STOP arriving) as sender_ct.
 *
 * The client keeps at most --concurrency messages unacknowledged; with
 * --concurrency 1 every message is alone on the path.
 *
 * Counters: the client reads /proc/net/dlcp/snmp (DLCP) or /proc/net/snmp
 * (Tcp RetransSegs) of its own network namespace before and after the run
 * and reports the deltas (namespace-wide: concurrent clients in the same
 * namespace see each other's packets). CPU: getrusage() of the client and
 * the machine-wide busy time from /proc/stat (both ends, softirqs included,
 * when client and server share the machine).
 *
 * Exit status: 0 success, 1 run-time failure, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <linux/dlcp.h>

#include "dlcpstat_lib.h"

#define PERF_MAGIC	0x444c5046u	/* "DLPF" */
#define T_DATA		1
#define T_ACK		2
#define DEFAULT_PORT	5301
#define MAX_SIZES	64
#define MAX_MSG		(1u << 30)
#define ACK_TENSOR	0xfffffff0u

/* TCP frame header, network byte order */
struct frame {
	uint32_t magic;
	uint32_t type;
	uint32_t client;
	uint32_t seq;
	uint64_t len;
} __attribute__((packed));

/* ACK, server -> client, host byte order (same kind of machine) */
struct ack {
	uint32_t magic;
	uint32_t type;
	uint32_t client;
	uint32_t seq;
	uint64_t recv_ns;
	uint64_t boot;		/* first 8 bytes of the server's boot id */
	uint32_t len;
	uint32_t bytes_lost;
	uint32_t status;	/* DLCP_RECV_* */
	uint32_t pad;
};

enum proto { P_DLCP, P_TCP };

static struct {
	enum proto proto;
	bool proto_set;
	const char *host;
	uint16_t port;
	uint64_t sizes[MAX_SIZES];
	unsigned int nsizes;
	uint64_t count;
	double duration;
	unsigned int concurrency;
	int layer;
	long budget;
	int prio;
	int encap;		/* -1: the namespace's net.dlcp.encap */
	unsigned int senders;
	uint32_t id;
	double timeout;
	bool json;
	bool samples;
	bool verbose;
} opt = {
	.proto = P_DLCP,
	.port = DEFAULT_PORT,
	.concurrency = 1,
	.layer = -1,
	.budget = -1,
	.prio = -1,
	.encap = -1,
	.senders = 1,
	.timeout = 60,
};

#ifndef DLCP_RELEASE
#define DLCP_RELEASE	"unknown"
#endif

static const char *prog = "dlcp-perf";
static volatile sig_atomic_t stop_flag;

/* to stdout with status 0 for --help, else to stderr with status 2 */
static void usage_exit(FILE *f, int status)
{
	fprintf(f,
"usage: %s server [--port P] [--proto dlcp|tcp] [--encap native|udp] [--json]\n"
"                 [--verbose]\n"
"       %s client HOST [--port P] --proto dlcp|tcp\n"
"                 (--size BYTES | --sizes A,B,...) (--count N | --duration S | both)\n"
"                 [--concurrency K] [--layer L] [--budget PPM] [--prio C]\n"
"                 [--encap native|udp] [--senders N] [--id N] [--timeout S]\n"
"                 [--json] [--samples]\n"
"sizes take k/m suffixes (KiB/MiB); default port %d; --timeout (default 60 s)\n"
"bounds the wait for any ACK. Message completion time = receiver recvmsg()\n"
"return - sender sendmsg() start, CLOCK_MONOTONIC (same machine).\n"
"       %s -h|--help | -V|--version\n"
"See dlcp-perf(1).\n",
		prog, prog, DEFAULT_PORT, prog);
	exit(status);
}

static void usage(void)
{
	usage_exit(stderr, 2);
}

static void version(void)
{
	printf("%s (DLCP) %s\n", prog, DLCP_RELEASE);
	exit(0);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void bad_opt(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage();
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t boot_id(void)
{
	char buf[64] = "";
	uint64_t h = 1469598103934665603ull;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	size_t i;

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	for (i = 0; buf[i]; i++)
		h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
	return h;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

static uint64_t parse_size(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		bad_opt("bad size '%s'", s);
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
	if (*end || !v || v > MAX_MSG)
		bad_opt("bad size '%s' (1 byte .. 1 GiB)", s);
	return v;
}

static void parse_sizes(const char *list)
{
	char *dup = strdup(list), *tok, *save = NULL;

	if (!dup)
		die("out of memory");
	opt.nsizes = 0;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (opt.nsizes == MAX_SIZES)
			bad_opt("at most %d sizes", MAX_SIZES);
		opt.sizes[opt.nsizes++] = parse_size(tok);
	}
	free(dup);
	if (!opt.nsizes)
		bad_opt("empty --sizes");
}

static double parse_double(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v <= 0)
		bad_opt("bad %s '%s'", what, s);
	return v;
}

static long parse_long(const char *s, const char *what, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		bad_opt("bad %s '%s' (%ld..%ld)", what, s, lo, hi);
	return v;
}

static void parse_opts(int argc, char **argv, bool client)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "proto", required_argument, NULL, 'P' },
		{ "size", required_argument, NULL, 's' },
		{ "sizes", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 't' },
		{ "concurrency", required_argument, NULL, 'k' },
		{ "layer", required_argument, NULL, 'l' },
		{ "budget", required_argument, NULL, 'b' },
		{ "prio", required_argument, NULL, 'c' },
		{ "id", required_argument, NULL, 'i' },
		{ "encap", required_argument, NULL, 'e' },
		{ "senders", required_argument, NULL, 'N' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "samples", no_argument, NULL, 'A' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:P:s:S:n:t:k:l:b:c:i:e:N:T:jAvhV",
				longopts, NULL)) != -1) {
		if (!client && c > 0 && strchr("sSntklbciNTA", c)) {
			const struct option *o = longopts;

			while (o->name && o->val != c)
				o++;
			bad_opt("option --%s is for the client only",
				o->name ? o->name : "?");
		}
		switch (c) {
		case 'p':
			opt.port = parse_long(optarg, "port", 1, 65535);
			break;
		case 'P':
			if (!strcmp(optarg, "dlcp"))
				opt.proto = P_DLCP;
			else if (!strcmp(optarg, "tcp"))
				opt.proto = P_TCP;
			else
				bad_opt("bad --proto '%s' (dlcp or tcp)",
					optarg);
			opt.proto_set = true;
			break;
		case 's':
			opt.nsizes = 1;
			opt.sizes[0] = parse_size(optarg);
			break;
		case 'S':
			parse_sizes(optarg);
			break;
		case 'n':
			opt.count = parse_long(optarg, "count", 1, 100000000);
			break;
		case 't':
			opt.duration = parse_double(optarg, "duration");
			break;
		case 'k':
			opt.concurrency = parse_long(optarg, "concurrency", 1,
						     1024);
			break;
		case 'l':
			opt.layer = parse_long(optarg, "layer", 0, 65535);
			break;
		case 'b':
			opt.budget = parse_long(optarg, "budget", 0,
						DLCP_PPM_MAX);
			break;
		case 'c':
			opt.prio = parse_long(optarg, "prio", 0, 7);
			break;
		case 'i':
			opt.id = parse_long(optarg, "id", 0, 0x7fffffff);
			break;
		case 'e':
			if (!strcmp(optarg, "native"))
				opt.encap = DLCP_ENCAP_NATIVE;
			else if (!strcmp(optarg, "udp"))
				opt.encap = DLCP_ENCAP_UDP;
			else
				bad_opt("bad --encap '%s' (native or udp)",
					optarg);
			break;
		case 'N':
			opt.senders = parse_long(optarg, "senders", 1, 256);
			break;
		case 'T':
			opt.timeout = parse_double(optarg, "timeout");
			break;
		case 'j':
			opt.json = true;
			break;
		case 'A':
			opt.samples = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'h':
			usage_exit(stdout, 0);
			break;
		case 'V':
			version();
			break;
		default:
			usage();
		}
	}
	if (client) {
		if (optind != argc - 1)
			bad_opt("client needs exactly one HOST");
		opt.host = argv[optind];
		if (!opt.proto_set)
			bad_opt("client needs --proto dlcp|tcp");
		if (!opt.nsizes)
			bad_opt("client needs --size or --sizes");
		if (!opt.count && !(opt.duration > 0))
			bad_opt("client needs --count or --duration (or both: whichever ends first)");
		if (opt.proto == P_TCP &&
		    (opt.budget >= 0 || opt.layer >= 0 || opt.prio >= 0 ||
		     opt.encap >= 0))
			bad_opt("--budget, --layer, --prio and --encap are DLCP options");
#ifndef DLCP_MSG_HAS_PRIO
		if (opt.prio >= 0)
			bad_opt("--prio: this uapi header has no DLCP_MSG_HAS_PRIO");
#endif
	} else if (optind != argc) {
		bad_opt("unexpected argument '%s'", argv[optind]);
	} else if (opt.proto == P_TCP && opt.encap >= 0) {
		bad_opt("--encap is a DLCP option");
	}
}

/* ------------------------------------------------------------------ */
/* Sockets                                                             */
/* ------------------------------------------------------------------ */

static int dlcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_DLCP, 0);

	if (fd < 0) {
		if (errno == EPROTONOSUPPORT || errno == ESOCKTNOSUPPORT ||
		    errno == EAFNOSUPPORT || errno == EINVAL)
			die("socket(AF_INET, SOCK_DLCP): %s: dlcp.ko is not loaded (insmod kmod/dlcp.ko)",
			    strerror(errno));
		die("socket(AF_INET, SOCK_DLCP): %s", strerror(errno));
	}
	if (opt.encap >= 0 &&
	    setsockopt(fd, SOL_DLCP, DLCP_ENCAP, &opt.encap,
		       sizeof(opt.encap)))
		die("setsockopt(DLCP_ENCAP, %s): %s%s",
		    opt.encap == DLCP_ENCAP_UDP ? "udp" : "native",
		    strerror(errno), errno == EADDRINUSE ?
		    " (net.dlcp.udp_port is taken by another socket)" : "");
	return fd;
}

static void resolve(const char *host, uint16_t port, struct sockaddr_in *sin)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *res;
	int err;

	err = getaddrinfo(host, NULL, &hints, &res);
	if (err)
		die("cannot resolve '%s': %s", host, gai_strerror(err));
	*sin = *(struct sockaddr_in *)res->ai_addr;
	sin->sin_port = htons(port);
	freeaddrinfo(res);
}

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Server                                                              */
/* ------------------------------------------------------------------ */

static uint64_t srv_msgs, srv_bytes, srv_lost;
static uint64_t srv_boot;
static pthread_mutex_t srv_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void server_summary(void)
{
	pthread_mutex_lock(&srv_lock);
	if (opt.json)
		printf("{\"role\":\"server\",\"proto\":\"%s\",\"messages\":%" PRIu64
		       ",\"bytes\":%" PRIu64 ",\"bytes_lost\":%" PRIu64 "}\n",
		       opt.proto == P_DLCP ? "dlcp" : "tcp", srv_msgs,
		       srv_bytes, srv_lost);
	else
		printf("server: %" PRIu64 " messages, %" PRIu64
		       " bytes, %" PRIu64 " bytes lost within budget\n",
		       srv_msgs, srv_bytes, srv_lost);
	fflush(stdout);
	pthread_mutex_unlock(&srv_lock);
}

static void dlcp_server(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(opt.port) };
	size_t bufsz = 64u << 20;
	int fd = dlcp_socket(), one_max = 0;
	socklen_t olen = sizeof(one_max);
	char *buf;

	if (!getsockopt(fd, SOL_DLCP, DLCP_MAX_MSG_SIZE, &one_max, &olen) &&
	    one_max > 0)
		bufsz = one_max;
	buf = malloc(bufsz);
	if (!buf)
		die("out of memory (%zu byte buffer)", bufsz);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind port %u: %s", opt.port, strerror(errno));
	if (opt.verbose)
		fprintf(stderr, "dlcp server on port %u\n", opt.port);

	while (!stop_flag) {
		char cbuf[CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
			  CMSG_SPACE(64 * sizeof(struct dlcp_range))];
		struct dlcp_recv_info ri = { 0 };
		struct sockaddr_in peer;
		struct iovec iov = { buf, bufsz };
		struct msghdr mh = {
			.msg_name = &peer, .msg_namelen = sizeof(peer),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *cm;
		struct ack a;
		bool have_ri = false;
		ssize_t n;

		n = recvmsg(fd, &mh, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("recvmsg: %s", strerror(errno));
		}
		a.recv_ns = now_ns();
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_DLCP &&
			    cm->cmsg_type == DLCP_CMSG_RECV) {
				memcpy(&ri, CMSG_DATA(cm), sizeof(ri));
				have_ri = true;
			}
		if (!have_ri) {
			fprintf(stderr, "%s: message without DLCP_CMSG_RECV\n",
				prog);
			continue;
		}
		if (ri.tensor_id == ACK_TENSOR)
			continue;
		srv_msgs++;
		srv_bytes += n;
		srv_lost += ri.bytes_lost;
		a.magic = PERF_MAGIC;
		a.type = T_ACK;
		a.client = ri.tensor_id;
		a.seq = ri.iteration;
		a.boot = srv_boot;
		a.len = ri.msg_len;
		a.bytes_lost = ri.bytes_lost;
		a.status = ri.status;
		a.pad = 0;
		{
			struct dlcp_send_info si = {
				.tensor_id = ACK_TENSOR,
				.flags = DLCP_MSG_HAS_BUDGET,
				.loss_budget_ppm = 0,
			};
			char sbuf[CMSG_SPACE(sizeof(si))] = { 0 };
			struct iovec aiov = { &a, sizeof(a) };
			struct msghdr am = {
				.msg_name = &peer, .msg_namelen = sizeof(peer),
				.msg_iov = &aiov, .msg_iovlen = 1,
				.msg_control = sbuf,
				.msg_controllen = sizeof(sbuf),
			};
			struct cmsghdr *c = CMSG_FIRSTHDR(&am);

			c->cmsg_level = SOL_DLCP;
			c->cmsg_type = DLCP_CMSG_SEND;
			c->cmsg_len = CMSG_LEN(sizeof(si));
			memcpy(CMSG_DATA(c), &si, sizeof(si));
			if (sendmsg(fd, &am, 0) < 0 && errno != EINTR)
				fprintf(stderr, "%s: ack to %s:%u: %s\n", prog,
					inet_ntoa(peer.sin_addr),
					ntohs(peer.sin_port), strerror(errno));
		}
	}
	free(buf);
	close(fd);
}

static void *tcp_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	size_t cap = 1u << 20;
	char *buf = malloc(cap);

	if (!buf)
		die("out of memory");
	for (;;) {
		struct frame f;
		struct ack a;
		uint64_t len, left;
		int r = read_full(fd, &f, sizeof(f));

		if (r <= 0)
			break;
		if (ntohl(f.magic) != PERF_MAGIC || ntohl(f.type) != T_DATA) {
			fprintf(stderr, "%s: bad frame from a TCP client\n",
				prog);
			break;
		}
		len = be64toh(f.len);
		for (left = len; left; ) {
			size_t chunk = left < cap ? left : cap;

			r = read_full(fd, buf, chunk);
			if (r <= 0)
				goto out;
			left -= chunk;
		}
		a.recv_ns = now_ns();
		a.magic = PERF_MAGIC;
		a.type = T_ACK;
		a.client = ntohl(f.client);
		a.seq = ntohl(f.seq);
		a.boot = srv_boot;
		a.len = (uint32_t)len;
		a.bytes_lost = 0;
		a.status = 0;
		a.pad = 0;
		pthread_mutex_lock(&srv_lock);
		srv_msgs++;
		srv_bytes += len;
		pthread_mutex_unlock(&srv_lock);
		if (write_full(fd, &a, sizeof(a)))
			break;
	}
out:
	free(buf);
	close(fd);
	return NULL;
}

static void tcp_server(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(opt.port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind port %u: %s", opt.port, strerror(errno));
	if (listen(fd, 128))
		die("listen: %s", strerror(errno));
	while (!stop_flag) {
		int c = accept(fd, NULL, NULL);
		pthread_t t;

		if (c < 0) {
			if (errno == EINTR)
				continue;
			die("accept: %s", strerror(errno));
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (pthread_create(&t, NULL, tcp_conn, (void *)(intptr_t)c))
			die("pthread_create failed");
		pthread_detach(t);
	}
	close(fd);
}

static int run_server(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	srv_boot = boot_id();
	if (opt.proto == P_DLCP)
		dlcp_server();
	else
		tcp_server();
	server_summary();
	return 0;
}

/* ------------------------------------------------------------------ */
/* Counters and CPU                                                    */
/* ------------------------------------------------------------------ */

/*
 * The namespace's counters of the protocol under test: /proc/net/dlcp/snmp,
 * or the Tcp table of /proc/net/snmp. Those of a file that cannot be read
 * (no module) are simply not there.
 */
static void read_counters(struct dlcpstat_table *t)
{
	unsigned int bad;

	if (opt.proto == P_DLCP)
		dlcpstat_read("/proc/net/dlcp/snmp", t, &bad);
	else
		dlcpstat_read_mib("/proc/net/snmp", "Tcp", t);
}

static uint64_t ctr_get(const struct dlcpstat_table *t, const char *name)
{
	return dlcpstat_get(t, name, NULL);
}

struct cpustat {
	double busy, total;	/* seconds, all CPUs */
};

static void read_cpustat(struct cpustat *c)
{
	unsigned long long v[10] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int i;

	c->busy = c->total = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) >= 4) {
		for (i = 0; i < 8; i++)
			c->total += v[i];
		c->busy = c->total - v[3] - v[4];	/* minus idle, iowait */
		c->busy /= hz;
		c->total /= hz;
	}
	fclose(f);
}

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

struct rec {
	uint64_t send_ns;	/* before sendmsg() */
	uint64_t recv_ns;	/* receiver's recvmsg() return */
	uint64_t ack_ns;	/* ACK arrival at the client */
	uint64_t done_ns;	/* DLCP completion on the error queue */
	uint64_t len;
	uint32_t lost;
	uint8_t status;
	bool acked;
};

static struct rec *recs;
static uint64_t nrecs, cap_recs;
static uint64_t boot_mismatch;
static uint64_t completions_failed;

static struct rec *rec_new(void)
{
	if (nrecs == cap_recs) {
		cap_recs = cap_recs ? 2 * cap_recs : 1024;
		recs = realloc(recs, cap_recs * sizeof(*recs));
		if (!recs)
			die("out of memory");
	}
	memset(&recs[nrecs], 0, sizeof(*recs));
	return &recs[nrecs++];
}

static void on_ack(const struct ack *a, uint64_t my_boot)
{
	struct rec *r;

	if (a->magic != PERF_MAGIC || a->type != T_ACK || a->client != opt.id ||
	    a->seq >= nrecs)
		die("bad ACK from the server (seq %u, client %u)", a->seq,
		    a->client);
	r = &recs[a->seq];
	if (r->acked)
		die("duplicate ACK for message %u", a->seq);
	r->acked = true;
	r->recv_ns = a->recv_ns;
	r->ack_ns = now_ns();
	r->lost = a->bytes_lost;
	r->status = a->status;
	if (a->boot != my_boot)
		boot_mismatch++;
}

static void drain_errqueue(int fd)
{
	for (;;) {
		struct dlcp_completion c;
		char cbuf[256];
		struct iovec iov = { &c, sizeof(c) };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		ssize_t n = recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			die("recvmsg(MSG_ERRQUEUE): %s", strerror(errno));
		}
		if (n < (ssize_t)sizeof(c))
			continue;
		if (c.tensor_id != opt.id || c.iteration >= nrecs)
			continue;
		recs[c.iteration].done_ns = now_ns();
		if (c.status == DLCP_DONE_TIMEOUT ||
		    c.status == DLCP_DONE_DEADLINE) {
			completions_failed++;
			fprintf(stderr, "%s: message %u %s\n", prog,
				c.iteration,
				c.status == DLCP_DONE_TIMEOUT ?
				"timed out: the receiver did not answer (is 'dlcp-perf server --proto dlcp' running?)" :
				"missed its deadline");
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of a sorted array */
static double pct(const uint64_t *v, uint64_t n, double p)
{
	uint64_t k;

	if (!n)
		return 0;
	k = (uint64_t)(p / 100.0 * n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1] / 1e6;
}

static void print_pcts(FILE *o, const char *key, uint64_t *v, uint64_t n)
{
	double sum = 0;
	uint64_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		sum += v[i];
	if (opt.json)
		fprintf(o, "\"%s\":{\"n\":%" PRIu64 ",\"mean\":%.3f,\"p50\":%.3f,"
			"\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f,"
			"\"min\":%.3f}",
			key, n, n ? sum / n / 1e6 : 0, pct(v, n, 50),
			pct(v, n, 90), pct(v, n, 99), pct(v, n, 99.9),
			n ? v[n - 1] / 1e6 : 0, n ? v[0] / 1e6 : 0);
	else
		fprintf(o, "%-10s n=%" PRIu64 " ms: p50 %.2f p90 %.2f p99 %.2f "
			"p99.9 %.2f max %.2f\n", key, n, pct(v, n, 50),
			pct(v, n, 90), pct(v, n, 99), pct(v, n, 99.9),
			n ? v[n - 1] / 1e6 : 0);
}

static int tcp_connect(const struct sockaddr_in *sin)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin))) {
		if (errno == ECONNREFUSED)
			die("connection to %s:%u refused: is 'dlcp-perf server --proto tcp' running there?",
			    opt.host, opt.port);
		die("connect to %s:%u: %s", opt.host, opt.port,
		    strerror(errno));
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void send_one(int fd, const struct sockaddr_in *sin, char *payload,
		     uint64_t seq, uint64_t len)
{
	if (opt.proto == P_TCP) {
		struct frame f = {
			.magic = htonl(PERF_MAGIC), .type = htonl(T_DATA),
			.client = htonl(opt.id), .seq = htonl((uint32_t)seq),
			.len = htobe64(len),
		};
		struct iovec iov[2] = { { &f, sizeof(f) }, { payload, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		uint64_t left = sizeof(f) + len;

		while (left) {
			ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);

			if (n < 0) {
				if (errno == EINTR)
					continue;
				die("send: %s", strerror(errno));
			}
			left -= n;
			while (n > 0) {
				if ((size_t)n >= mh.msg_iov[0].iov_len) {
					n -= mh.msg_iov[0].iov_len;
					mh.msg_iov++;
					mh.msg_iovlen--;
				} else {
					mh.msg_iov[0].iov_base =
						(char *)mh.msg_iov[0].iov_base + n;
					mh.msg_iov[0].iov_len -= n;
					n = 0;
				}
			}
		}
	} else {
		struct dlcp_send_info si = {
			.tensor_id = opt.id,
			.iteration = (uint32_t)seq,
			.dtype = DLCP_DTYPE_BYTES,
		};
		char cbuf[CMSG_SPACE(sizeof(si))] = { 0 };
		struct iovec iov = { payload, len };
		struct msghdr mh = {
			.msg_name = (void *)sin, .msg_namelen = sizeof(*sin),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		if (opt.layer >= 0) {
			si.layer = opt.layer;
			si.flags |= DLCP_MSG_HAS_LAYER;
		}
		if (opt.budget >= 0) {
			si.loss_budget_ppm = opt.budget;
			si.flags |= DLCP_MSG_HAS_BUDGET;
		}
#ifdef DLCP_MSG_HAS_PRIO
		if (opt.prio >= 0) {
			si.prio = opt.prio;
			si.flags |= DLCP_MSG_HAS_PRIO;
		}
#endif
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEND;
		c->cmsg_len = CMSG_LEN(sizeof(si));
		memcpy(CMSG_DATA(c), &si, sizeof(si));
		while (sendmsg(fd, &mh, 0) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EINVAL && opt.prio >= 0)
				die("sendmsg: %s (--prio %d refused: a module without priority classes, or not below net.dlcp.prio_classes?)",
				    strerror(errno), opt.prio);
			if (errno == EMSGSIZE)
				die("sendmsg of %" PRIu64 " bytes: message too long (sysctl net.dlcp.max_msg_size)",
				    len);
			die("sendmsg: %s", strerror(errno));
		}
	}
}

/* Wait for one ACK (or DLCP completions); returns false on timeout. */
static bool wait_ack(int fd, uint64_t my_boot)
{
	uint64_t deadline = now_ns() + (uint64_t)(opt.timeout * 1e9);

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = (int64_t)(deadline - now_ns());
		int r;

		if (left <= 0)
			return false;
		r = poll(&p, 1, (int)(left / 1000000 + 1));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (r == 0)
			continue;
		if (opt.proto == P_DLCP && (p.revents & POLLERR))
			drain_errqueue(fd);
		if (p.revents & POLLIN) {
			struct ack a;

			if (opt.proto == P_TCP) {
				int rr = read_full(fd, &a, sizeof(a));

				if (rr < 0)
					die("read: %s", strerror(errno));
				if (rr == 0)
					die("the server closed the connection");
			} else {
				ssize_t n = recv(fd, &a, sizeof(a),
						 MSG_DONTWAIT);

				if (n < 0) {
					if (errno == EAGAIN || errno == EINTR)
						continue;
					die("recv: %s", strerror(errno));
				}
				if (n != sizeof(a))
					die("short ACK (%zd bytes)", n);
			}
			on_ack(&a, my_boot);
			return true;
		} else if (p.revents & (POLLHUP | POLLNVAL)) {
			die("connection closed");
		}
	}
}

static void json_ctrs(FILE *o, const struct dlcpstat_table *a,
		      const struct dlcpstat_table *b)
{
	size_t i;

	fputc('{', o);
	for (i = 0; i < b->nr; i++)
		fprintf(o, "%s\"%s\":%" PRId64, i ? "," : "", b->e[i].name,
			(int64_t)(b->e[i].value - ctr_get(a, b->e[i].name)));
	fputc('}', o);
}

static int run_client(void)
{
	struct sockaddr_in sin;
	struct dlcpstat_table c0 = { 0 }, c1 = { 0 };
	struct cpustat s0, s1;
	struct rusage ru0, ru1;
	uint64_t my_boot = boot_id(), maxlen = 0, sent = 0, acked = 0;
	uint64_t t0, t_end, first_send = 0, last_recv = 0, i;
	uint64_t bytes = 0, lost = 0, lossy = 0, *ct, *sct, nsct = 0;
	bool echo;
	char *payload;
	int fd, one = 1;
	FILE *o = stdout;

	signal(SIGPIPE, SIG_IGN);
	if (!opt.id)
		opt.id = (uint32_t)getpid();
	resolve(opt.host, opt.port, &sin);
	for (i = 0; i < opt.nsizes; i++)
		if (opt.sizes[i] > maxlen)
			maxlen = opt.sizes[i];
	payload = malloc(maxlen);
	if (!payload)
		die("out of memory");
	for (i = 0; i < maxlen; i++)
		payload[i] = (char)(i * 131 + 7);

	if (opt.proto == P_DLCP) {
		int mx = 0;
		socklen_t ol = sizeof(mx);

		fd = dlcp_socket();
		if (!getsockopt(fd, SOL_DLCP, DLCP_MAX_MSG_SIZE, &mx, &ol) &&
		    mx > 0 && maxlen > (uint64_t)mx)
			die("--size %" PRIu64 " exceeds net.dlcp.max_msg_size %d",
			    maxlen, mx);
		if (setsockopt(fd, SOL_DLCP, DLCP_RECVCOMPLETION, &one,
			       sizeof(one)))
			die("setsockopt(DLCP_RECVCOMPLETION): %s",
			    strerror(errno));
	} else {
		fd = tcp_connect(&sin);
	}
	read_counters(&c0);
	read_cpustat(&s0);
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_ns();
	t_end = opt.duration > 0 ? t0 + (uint64_t)(opt.duration * 1e9) : 0;

	for (;;) {
		while (sent - acked < opt.concurrency &&
		       (!opt.count || sent < opt.count) &&
		       (!t_end || now_ns() < t_end)) {
			struct rec *r = rec_new();

			r->len = opt.sizes[sent % opt.nsizes];
			r->send_ns = now_ns();
			if (!first_send)
				first_send = r->send_ns;
			send_one(fd, &sin, payload, sent, r->len);
			sent++;
		}
		if (acked == sent)
			break;
		if (!wait_ack(fd, my_boot))
			die("no ACK from %s:%u for %.0f s (%" PRIu64 " of %" PRIu64
			    " messages acknowledged): is 'dlcp-perf server --proto %s' running there?",
			    opt.host, opt.port, opt.timeout, acked, sent,
			    opt.proto == P_DLCP ? "dlcp" : "tcp");
		acked++;
	}
	/* DLCP: collect the remaining completions (STOPs) briefly */
	if (opt.proto == P_DLCP) {
		uint64_t until = now_ns() + 2000000000ull;

		for (;;) {
			bool all = true;

			drain_errqueue(fd);
			for (i = 0; i < nrecs && all; i++)
				all = recs[i].done_ns != 0;
			if (all || now_ns() > until)
				break;
			usleep(1000);
		}
	}
	getrusage(RUSAGE_SELF, &ru1);
	read_cpustat(&s1);
	read_counters(&c1);
	close(fd);	/* DLCP: waits for unfinished messages (none) */

	echo = boot_mismatch != 0;
	ct = calloc(nrecs + 1, sizeof(*ct));
	sct = calloc(nrecs + 1, sizeof(*sct));
	if (!ct || !sct)
		die("out of memory");
	for (i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];
		uint64_t end = echo ? r->ack_ns : r->recv_ns;

		ct[i] = end > r->send_ns ? end - r->send_ns : 0;
		if (r->done_ns)
			sct[nsct++] = r->done_ns - r->send_ns;
		bytes += r->len;
		lost += r->lost;
		lossy += r->status == DLCP_RECV_LOSSY;
		if (end > last_recv)
			last_recv = end;
	}
	{
		double secs = (last_recv - first_send) / 1e9;
		double goodput = secs > 0 ? (bytes - lost) * 8 / secs / 1e6 : 0;
		double cu = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
		double cs = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
		double busy = s1.busy - s0.busy;
		uint64_t retrans = opt.proto == P_DLCP ?
			ctr_get(&c1, "DlcpRetransPkts") -
			ctr_get(&c0, "DlcpRetransPkts") :
			ctr_get(&c1, "TcpRetransSegs") -
			ctr_get(&c0, "TcpRetransSegs");
		uint64_t datapkts = opt.proto == P_DLCP ?
			ctr_get(&c1, "DlcpOutDataPkts") -
			ctr_get(&c0, "DlcpOutDataPkts") :
			ctr_get(&c1, "TcpOutSegs") - ctr_get(&c0, "TcpOutSegs");
		uint64_t *samples = NULL;

		if (opt.samples) {
			samples = malloc((nrecs + 1) * sizeof(*samples));
			if (!samples)
				die("out of memory");
			memcpy(samples, ct, nrecs * sizeof(*ct));
		}
		if (opt.json) {
			fprintf(o, "{\"role\":\"client\",\"proto\":\"%s\","
				"\"id\":%u,\"ct_mode\":\"%s\",\"sizes\":[",
				opt.proto == P_DLCP ? "dlcp" : "tcp", opt.id,
				echo ? "echo" : "oneway");
			for (i = 0; i < opt.nsizes; i++)
				fprintf(o, "%s%" PRIu64, i ? "," : "",
					opt.sizes[i]);
			fprintf(o, "],\"concurrency\":%u,\"prio\":%d,\"budget_ppm\":%ld,"
				"\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64
				",\"bytes_lost\":%" PRIu64 ",\"lossy_msgs\":%"
				PRIu64 ",\"elapsed_s\":%.6f,\"goodput_mbps\":%.3f,"
				"\"retrans\":%" PRIu64 ",\"out_data_pkts\":%" PRIu64
				",\"failed_msgs\":%" PRIu64 ",\"t_first_ns\":%"
				PRIu64 ",\"t_last_ns\":%" PRIu64 ",",
				opt.concurrency, opt.prio, opt.proto == P_DLCP ?
				(opt.budget >= 0 ? opt.budget : -1) : 0,
				nrecs, bytes, lost, lossy, secs, goodput,
				retrans, datapkts, completions_failed,
				first_send, last_recv);
			fprintf(o, "\"cpu\":{\"client_user_s\":%.4f,"
				"\"client_sys_s\":%.4f,\"machine_busy_s\":%.4f},",
				cu, cs, busy);
			print_pcts(o, "ct_ms", ct, nrecs);
			if (opt.proto == P_DLCP) {
				fputc(',', o);
				print_pcts(o, "sender_ct_ms", sct, nsct);
			}
			if (opt.nsizes > 1) {
				unsigned int s;

				fprintf(o, ",\"per_size\":{");
				for (s = 0; s < opt.nsizes; s++) {
					uint64_t m = 0;
					char key[32];

					for (i = 0; i < nrecs; i++)
						if (recs[i].len == opt.sizes[s] &&
						    (i % opt.nsizes) == s) {
							uint64_t e = echo ?
								recs[i].ack_ns :
								recs[i].recv_ns;

							ct[m++] = e - recs[i].send_ns;
						}
					snprintf(key, sizeof(key), "%" PRIu64,
						 opt.sizes[s]);
					if (s)
						fputc(',', o);
					print_pcts(o, key, ct, m);
				}
				fputc('}', o);
			}
			fprintf(o, ",\"counters\":");
			json_ctrs(o, &c0, &c1);
			if (samples) {
				fprintf(o, ",\"samples_ms\":[");
				for (i = 0; i < nrecs; i++)
					fprintf(o, "%s%.3f", i ? "," : "",
						samples[i] / 1e6);
				fputc(']', o);
			}
			fprintf(o, "}\n");
		} else {
			fprintf(o, "%s: %" PRIu64 " messages, %" PRIu64
				" bytes in %.3f s: goodput %.2f Mbit/s\n",
				opt.proto == P_DLCP ? "dlcp" : "tcp", nrecs,
				bytes, secs, goodput);
			fprintf(o, "completion time (%s):\n",
				echo ? "echo: send to ACK arrival" :
				"one-way: sendmsg start to receiver recvmsg return");
			print_pcts(o, "ct", ct, nrecs);
			if (opt.proto == P_DLCP)
				print_pcts(o, "sender_ct", sct, nsct);
			fprintf(o, "lost within budget: %" PRIu64 " bytes in %" PRIu64
				" messages; retransmitted packets: %" PRIu64
				" of %" PRIu64 "\n", lost, lossy, retrans,
				datapkts);
			fprintf(o, "cpu: client %.3f s user %.3f s sys; machine busy %.3f s\n",
				cu, cs, busy);
		}
		free(samples);
	}
	free(ct);
	free(sct);
	dlcpstat_free(&c0);
	dlcpstat_free(&c1);
	free(payload);
	return completions_failed ? 1 : 0;
}

/*
 * --senders N: incast, N clients at once (ids id .. id + N - 1), each a
 * process with its own socket. Their reports (one JSON line each with
 * --json) are printed whole, in id order: each child writes to a pipe
 * that the parent copies to its stdout. Exit status: the worst of theirs.
 */
static int run_senders(void)
{
	unsigned int i, started = 0;
	int fds[256], rc = 0, status;
	char buf[65536];
	ssize_t n;
	pid_t pid;

	fflush(NULL);
	for (i = 0; i < opt.senders; i++) {
		int p[2];

		if (pipe(p)) {
			fprintf(stderr, "%s: pipe: %s\n", prog, strerror(errno));
			rc = 1;
			break;
		}
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
			close(p[0]);
			close(p[1]);
			rc = 1;
			break;
		}
		if (!pid) {
			while (i--)
				close(fds[i]);
			close(p[0]);
			if (dup2(p[1], STDOUT_FILENO) < 0)
				_exit(1);
			close(p[1]);
			opt.id += started;
			exit(run_client());
		}
		close(p[1]);
		fds[started++] = p[0];
	}
	for (i = 0; i < started; i++) {
		while ((n = read(fds[i], buf, sizeof(buf))) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 || fwrite(buf, 1, n, stdout) != (size_t)n) {
				rc = 1;
				break;
			}
		}
		close(fds[i]);
	}
	fflush(stdout);
	while (started && wait(&status) > 0) {
		int r = WIFEXITED(status) ? WEXITSTATUS(status) : 1;

		started--;
		if (r > rc)
			rc = r;
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		usage_exit(stdout, 0);
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		version();
	if (!strcmp(argv[1], "server")) {
		parse_opts(argc - 1, argv + 1, false);
		return run_server();
	}
	if (!strcmp(argv[1], "client")) {
		parse_opts(argc - 1, argv + 1, true);
		return opt.senders > 1 ? run_senders() : run_client();
	}
	bad_opt("unknown mode '%s' (server or client)", argv[1]);
	return 2;
}
