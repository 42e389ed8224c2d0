// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_stress: load generators for selftests/dlcp_stress.sh.
 *
 *   dlcp_stress sink --port P [--read] [--time S] [--ready F]
 *	A DLCP socket bound to P that never reads (or, with --read, reads
 *	and discards) for S seconds (default: until SIGTERM). Samples its
 *	rx_mem in /proc/net/dlcp/sockets every 10 ms and prints the largest
 *	value at the end ("rx_mem max N bytes").
 *   dlcp_stress blast --to ADDR --port P --count N --size BYTES
 *		       [--time S] [--completions]
 *	Sends N messages (0: until killed or S seconds) with blocking
 *	sendmsg; with --completions reads one completion per message from
 *	the error queue and prints how many ended exact/lossy/deadline/
 *	timeout, and exits 1 unless every message got one. Prints the
 *	largest tx_mem of its socket seen after each sendmsg().
 *   dlcp_stress halfopen --src A --to ADDR --port P --count N
 *			  [--msg-len L] [--rate PPS] [--udp-port U]
 *	Raw-injects N DATA packets (valid, checksummed), each for a new
 *	message id of L bytes (default 64 MiB), at a random page-aligned
 *	offset: messages that are opened and never finished. With
 *	--udp-port, sends them inside UDP to port U (UDP mode) from a UDP
 *	socket, which, unlike a DLCP socket, does not hold the module.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dlcp_pkt.h"

static struct {
	const char *to, *src, *ready;
	int port, time, read, completions, udp_port;
	unsigned long count, rate;
	size_t size;
	uint32_t msg_len;
} o = { .size = 1 << 20, .msg_len = 64u << 20, .rate = 5000 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* rx_mem (or tx_mem) of our port in /proc/net/dlcp/sockets, or -1 */
static long mem_of(int port, int tx_mem)
{
	char line[512];
	long v = -1;
	FILE *f = fopen("/proc/net/dlcp/sockets", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int sl, la, lp, ra, rp, st, rx;
		unsigned long long tx;

		if (sscanf(line, " %u: %x:%x %x:%x %x %llx:%x", &sl, &la, &lp,
			   &ra, &rp, &st, &tx, &rx) == 8 && (int)lp == port) {
			v = tx_mem ? (long)tx : (long)rx;
			break;
		}
	}
	fclose(f);
	return v;
}

static int sink(void)
{
	long max_rx = 0, samples = 0;
	struct sigaction sa = { .sa_handler = on_term };
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(o.port) };
	static uint8_t buf[1 << 20];
	unsigned long n = 0;
	double end = o.time ? now() + o.time : 1e18;
	int fd = socket(AF_INET, SOCK_DLCP, 0);

	if (fd < 0 || bind(fd, (void *)&sin, sizeof(sin))) {
		perror("sink");
		return 1;
	}
	if (o.ready) {
		FILE *f = fopen(o.ready, "w");

		if (f)
			fclose(f);
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (now() < end && !stop) {
		struct pollfd p = { fd, POLLIN, 0 };
		long rx = mem_of(o.port, 0);

		if (rx >= 0) {
			samples++;
			if (rx > max_rx)
				max_rx = rx;
		}
		if (!o.read) {
			usleep(10000);
			continue;
		}
		if (poll(&p, 1, 100) > 0 &&
		    recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
			n++;
	}
	printf("sink: %lu messages read; rx_mem max %ld bytes over %ld "
	       "samples\n", n, max_rx, samples);
	return 0;
}

static int blast(void)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(o.port) };
	unsigned long sent = 0, got = 0, st[4] = { 0 };
	struct sockaddr_in me;
	socklen_t mlen = sizeof(me);
	long tx, max_tx = 0;
	int myport = 0;
	double end = o.time ? now() + o.time : 1e18;
	uint8_t *buf = malloc(o.size);
	int one = 1, fd = socket(AF_INET, SOCK_DLCP, 0);

	if (!buf || fd < 0 || inet_pton(AF_INET, o.to, &to.sin_addr) != 1) {
		perror("blast");
		return 1;
	}
	memset(buf, 0x42, o.size);
	if (o.completions)
		setsockopt(fd, SOL_DLCP, DLCP_RECVCOMPLETION, &one,
			   sizeof(one));
	while ((!o.count || sent < o.count) && now() < end) {
		if (sendto(fd, buf, o.size, 0, (void *)&to, sizeof(to)) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == ENETUNREACH || errno == EHOSTUNREACH) {
				usleep(10000);	/* link gone: teardown */
				continue;
			}
			perror("blast: sendto");
			return 1;
		}
		sent++;
		if (!myport && !getsockname(fd, (void *)&me, &mlen))
			myport = ntohs(me.sin_port);
		tx = mem_of(myport, 1);
		if (tx > max_tx)
			max_tx = tx;
		/* collect what completed meanwhile */
		while (o.completions) {
			struct dlcp_completion c;
			char ctl[256];
			struct iovec iov = { &c, sizeof(c) };
			struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
					     .msg_control = ctl,
					     .msg_controllen = sizeof(ctl) };

			if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
				break;
			st[c.status & 3]++;
			got++;
		}
	}
	while (o.completions && got < sent && now() < end + 60) {
		struct dlcp_completion c;
		char ctl[256];
		struct iovec iov = { &c, sizeof(c) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		struct pollfd p = { fd, POLLERR, 0 };

		poll(&p, 1, 200);
		tx = mem_of(myport, 1);
		if (tx > max_tx)
			max_tx = tx;
		if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			continue;
		st[c.status & 3]++;
		got++;
	}
	printf("blast: %lu messages of %zu bytes sent, %lu completions: "
	       "%lu exact, %lu lossy, %lu deadline, %lu timeout; "
	       "tx_mem max %ld bytes\n",
	       sent, o.size, got, st[0], st[1], st[2], st[3], max_tx);
	close(fd);
	return o.completions && got != sent;
}

/*
 * Bind @fd to @sin's address; with @priv, from a free UDP source port of
 * 512-1023, the only ones a receiver takes DLCP datagrams from
 * (net.dlcp.udp_sport_priv).
 */
static int halfopen_bind(int fd, struct sockaddr_in *sin, bool priv)
{
	unsigned int i, first = 512 + (unsigned int)getpid() % 512;

	if (!priv)
		return bind(fd, (void *)sin, sizeof(*sin));
	for (i = 0; i < 512; i++) {
		sin->sin_port = htons((uint16_t)(512 + (first - 512 + i) % 512));
		if (!bind(fd, (void *)sin, sizeof(*sin)))
			return 0;
		if (errno != EADDRINUSE)
			return -1;
	}
	return -1;
}

static int halfopen(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct dlcp_pkt_info pi = { .sport = 33333, .dport = (uint16_t)o.port,
				    .msg_len = o.msg_len };
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
	uint8_t pkt[1500], payload[1400];
	uint32_t saddr, daddr, id;
	unsigned long i;
	double t0 = now();
	int raw = o.udp_port ? socket(AF_INET, SOCK_DGRAM, 0) :
			       socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);

	if (raw < 0 || inet_pton(AF_INET, o.src, &saddr) != 1 ||
	    inet_pton(AF_INET, o.to, &daddr) != 1) {
		perror("halfopen");
		return 1;
	}
	sin.sin_addr.s_addr = saddr;
	if (halfopen_bind(raw, &sin, o.udp_port != 0)) {
		perror("halfopen: bind");
		return 1;
	}
	sin.sin_addr.s_addr = daddr;
	sin.sin_port = htons((uint16_t)o.udp_port);
	memset(payload, 0x11, sizeof(payload));
	srand((unsigned int)getpid());
	id = (uint32_t)rand() << 8;
	for (i = 0; i < o.count; i++) {
		size_t n;

		pi.msg_id = id + (uint32_t)i;
		di.offset = ((uint32_t)rand() % (o.msg_len / 4096)) * 4096;
		if (di.offset + sizeof(payload) > o.msg_len)
			di.offset = 0;
		n = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, payload,
					o.msg_len < sizeof(payload) ?
					o.msg_len : sizeof(payload));
		dlcp_pkt_finish4(pkt, n, saddr, daddr);
		/* the link may go away under us (teardown tests) */
		if (sendto(raw, pkt, n, 0, (void *)&sin, sizeof(sin)) < 0 &&
		    errno != ENOBUFS && errno != ENETUNREACH &&
		    errno != EINVAL && errno != EADDRNOTAVAIL) {
			perror("halfopen: sendto");
			return 1;
		}
		while (o.rate && now() < t0 + (double)(i + 1) / o.rate)
			usleep(200);
	}
	printf("halfopen: %lu messages opened (%u bytes each) in %.1f s\n",
	       o.count, o.msg_len, now() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to", 1, 0, 't' }, { "src", 1, 0, 's' },
		{ "port", 1, 0, 'p' }, { "count", 1, 0, 'c' },
		{ "size", 1, 0, 'z' }, { "time", 1, 0, 'T' },
		{ "read", 0, 0, 'r' }, { "completions", 0, 0, 'C' },
		{ "ready", 1, 0, 'R' }, { "msg-len", 1, 0, 'm' },
		{ "rate", 1, 0, 'a' }, { "udp-port", 1, 0, 'u' },
		{ 0, 0, 0, 0 }
	};
	const char *mode;
	int c;

	if (argc < 2)
		goto usage;
	mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': o.to = optarg; break;
		case 's': o.src = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 'c': o.count = strtoul(optarg, NULL, 0); break;
		case 'z': o.size = strtoul(optarg, NULL, 0); break;
		case 'T': o.time = atoi(optarg); break;
		case 'r': o.read = 1; break;
		case 'C': o.completions = 1; break;
		case 'R': o.ready = optarg; break;
		case 'm': o.msg_len = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'a': o.rate = strtoul(optarg, NULL, 0); break;
		case 'u': o.udp_port = atoi(optarg); break;
		default: goto usage;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "sink") && o.port)
		return sink();
	if (!strcmp(mode, "blast") && o.to && o.port && o.size)
		return blast();
	if (!strcmp(mode, "halfopen") && o.to && o.src && o.port &&
	    o.msg_len >= 4096)
		return halfopen();
usage:
	fprintf(stderr, "usage: dlcp_stress sink|blast|halfopen ... "
		"(see the source)\n");
	return 2;
}
