// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pktfuzz: the well-behaved pair that must keep working while the
 * attacks run, and the memory sampler that watches the limits.
 *
 * The pair: a sender S in this namespace (--pair-src) sends messages to a
 * receiver R in the target's namespace, at most 4 at a time, and every
 * eighth to the observer O in the attacker's namespace (--observer): the
 * off-path host learns from O the ids S uses towards it, and guesses
 * from them the ids S uses towards R. Every message carries a header
 * (magic, sequence number, length, destination) and bytes that follow
 * from its sequence number; each receiver checks every byte, S checks
 * that every completion is DLCP_DONE_EXACT. Threads: one sends (and reads
 * the completions), one receives for R, one for O.
 *
 * The sampler: a thread that reads rx_mem and in_msgs of the sockets
 * watched (/proc/net/dlcp/sockets of the target's namespace) and DLCP's
 * pages (/proc/net/protocols) every 20 ms, and keeps the largest values.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "pktfuzz.h"

/* tensor sizes are no secret: an attacker may know them all */
const uint32_t pair_lens[] = { 512, 4096, 20000, 65536, 262144 };
const unsigned int nr_pair_lens = sizeof(pair_lens) / sizeof(pair_lens[0]);

#define PAIR_MAGIC	0x444c4350u
#define PAIR_INFLIGHT	4
#define PAIR_MAX	262144
#define DEST_R		0
#define DEST_O		1

struct rx_side {
	int fd, dest;
	pthread_t th;
	unsigned long got, bad, bytes;
};

static struct {
	int s, started, observe;
	struct sockaddr_in to[2];
	pthread_t th;
	atomic_int stop, sender_done;
	unsigned long sent[2], done_exact, done_other, send_err, outstanding;
	double t_start, t_last, max_gap;
	struct rx_side rx[2];
	atomic_uint obs_id;
	atomic_int obs_have;
	uint32_t seq;
} pr;

/* the bytes of message @seq: a stream from its sequence number */
static void fill(uint8_t *b, uint32_t len, uint32_t seq, uint32_t dest)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL * (seq + 1);
	uint32_t i;

	for (i = 16; i < len; i++) {
		if ((i & 7) == 0 || i == 16) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		b[i] = (uint8_t)(x >> ((i & 7) * 8));
	}
	dlcp_put32(b, PAIR_MAGIC);
	dlcp_put32(b + 4, seq);
	dlcp_put32(b + 8, len);
	dlcp_put32(b + 12, dest);
}

/* Is the @len-byte message @b intact (for @dest)? */
static int intact(const uint8_t *b, size_t len, int dest)
{
	static __thread uint8_t *ref;
	uint32_t seq;

	if (len < 16 || dlcp_get32(b) != PAIR_MAGIC ||
	    dlcp_get32(b + 8) != len || dlcp_get32(b + 12) != (uint32_t)dest)
		return 0;
	seq = dlcp_get32(b + 4);
	if (!ref && !(ref = malloc(PAIR_MAX)))
		return 0;
	fill(ref, (uint32_t)len, seq, dest);
	return !memcmp(ref, b, len);
}

static void completions(int timeout_ms)
{
	struct pollfd p = { .fd = pr.s, .events = 0 };
	struct dlcp_completion c;
	char ctl[256];

	if (poll(&p, 1, timeout_ms) <= 0)
		return;
	for (;;) {
		struct iovec iov = { &c, sizeof(c) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		double t;

		if (recvmsg(pr.s, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) !=
		    (ssize_t)sizeof(c))
			break;
		if (pr.outstanding)
			pr.outstanding--;
		if (c.status == DLCP_DONE_EXACT && !c.bytes_lost) {
			pr.done_exact++;
		} else if (pr.done_other++ < 5) {
			fprintf(stderr, "pair: message %u (%u bytes, to %s) "
				"completed with status %u, %u bytes lost\n",
				c.tensor_id, c.msg_len,
				c.iteration == DEST_O ? "the observer" : "R",
				c.status, c.bytes_lost);
		}
		t = now();
		if (t - pr.t_last > pr.max_gap)
			pr.max_gap = t - pr.t_last;
		pr.t_last = t;
	}
}

static int send_one(uint8_t *buf, uint32_t len, int dest)
{
	union {
		char b[CMSG_SPACE(sizeof(struct dlcp_send_info))];
		struct cmsghdr align;
	} ctl;
	struct dlcp_send_info si = { .tensor_id = pr.seq,
				     .iteration = (uint32_t)dest };
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_name = &pr.to[dest],
			     .msg_namelen = sizeof(pr.to[dest]),
			     .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.b,
			     .msg_controllen = sizeof(ctl.b) };
	struct cmsghdr *c;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_DLCP;
	c->cmsg_type = DLCP_CMSG_SEND;
	c->cmsg_len = CMSG_LEN(sizeof(si));
	memcpy(CMSG_DATA(c), &si, sizeof(si));
	return sendmsg(pr.s, &mh, 0) == (ssize_t)len;
}

static void *sender(void *arg)
{
	uint8_t *buf = malloc(PAIR_MAX);
	uint64_t x = o.seed * 0x2545f4914f6cdd1dULL + 1;
	double until;

	(void)arg;
	if (!buf)
		die("malloc");
	pr.t_start = pr.t_last = now();
	while (!atomic_load(&pr.stop)) {
		uint32_t len;
		int dest;

		if (pr.outstanding >= PAIR_INFLIGHT) {
			completions(100);
			continue;
		}
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		len = pair_lens[x % nr_pair_lens];
		pr.seq++;
		dest = pr.observe && pr.seq % 8 == 0 ? DEST_O : DEST_R;
		fill(buf, len, pr.seq, (uint32_t)dest);
		if (send_one(buf, len, dest)) {
			pr.sent[dest]++;
			pr.outstanding++;
		} else if (pr.send_err++ < 5) {
			fprintf(stderr, "pair: sendmsg: %s\n", strerror(errno));
			usleep(10000);
		}
		completions(0);
	}
	/* the messages in flight end, one way or the other */
	until = now() + 3 * sysctl_read(-1, "msg_timeout_ms") / 1000.0 + 5;
	while (pr.outstanding && now() < until)
		completions(100);
	free(buf);
	atomic_store(&pr.sender_done, 1);
	return NULL;
}

static void *receiver(void *arg)
{
	struct rx_side *rx = arg;
	uint8_t *buf = malloc(PAIR_MAX + 1);
	char ctl[CMSG_SPACE(sizeof(struct dlcp_recv_info))];
	double until = 0;

	if (!buf)
		die("malloc");
	for (;;) {
		struct pollfd p = { .fd = rx->fd, .events = POLLIN };
		struct iovec iov = { buf, PAIR_MAX + 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;
		ssize_t n;

		if (atomic_load(&pr.sender_done)) {
			if (rx->got + rx->bad >= pr.sent[rx->dest])
				break;
			if (!until)
				until = now() + 5;
			else if (now() > until)
				break;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recvmsg(rx->fd, &mh, MSG_DONTWAIT);
		if (n < 0)
			continue;
		if (intact(buf, (size_t)n, rx->dest)) {
			rx->got++;
			rx->bytes += (unsigned long)n;
		} else if (rx->bad++ < 5) {
			fprintf(stderr, "pair: a %zd-byte message at %s is not "
				"what was sent\n", n,
				rx->dest == DEST_O ? "the observer" : "R");
		}
		if (rx->dest != DEST_O)
			continue;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			struct dlcp_recv_info ri;

			if (c->cmsg_level != SOL_DLCP ||
			    c->cmsg_type != DLCP_CMSG_RECV)
				continue;
			memcpy(&ri, CMSG_DATA(c), sizeof(ri));
			atomic_store(&pr.obs_id, ri.msg_id);
			atomic_store(&pr.obs_have, 1);
		}
	}
	free(buf);
	return NULL;
}

/* A DLCP socket in @ns bound to @addr, port chosen by the kernel. */
static int bound(int ns, uint32_t addr, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = addr };
	socklen_t len = sizeof(a);
	int fd = socket_in(ns, SOCK_DLCP, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		die("pair socket");
	*port = ntohs(a.sin_port);
	return fd;
}

/*
 * Open S, R (and O with --observer) and start the threads; their ports
 * go to @pi.
 */
int pair_start(struct pair_info *pi)
{
	struct timeval tv = { .tv_sec = 1 };
	int one = 1, i;

	pr.s = bound(ns_self, o.pair_src, &pi->s_port);
	pr.rx[DEST_R].fd = bound(ns_target, o.dst, &pi->r_port);
	pr.rx[DEST_R].dest = DEST_R;
	pr.to[DEST_R] = (struct sockaddr_in){ .sin_family = AF_INET,
					      .sin_port = htons(pi->r_port),
					      .sin_addr.s_addr = o.dst };
	pr.observe = o.observer && ns_attacker >= 0;
	pr.rx[DEST_O].fd = -1;
	pr.rx[DEST_O].dest = DEST_O;
	if (pr.observe) {
		pr.rx[DEST_O].fd = bound(ns_attacker, o.observer,
					 &pi->c_port);
		pr.to[DEST_O] = (struct sockaddr_in){
			.sin_family = AF_INET, .sin_port = htons(pi->c_port),
			.sin_addr.s_addr = o.observer };
	}
	setsockopt(pr.s, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one));
	setsockopt(pr.s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (i = 0; i < 2; i++)
		if (pr.rx[i].fd >= 0 &&
		    pthread_create(&pr.rx[i].th, NULL, receiver, &pr.rx[i]))
			die("pthread_create");
	if (pthread_create(&pr.th, NULL, sender, NULL))
		die("pthread_create");
	pr.started = 1;
	return 0;
}

/* No more new messages: wait for those in flight and the receivers. */
void pair_stop(void)
{
	int i;

	if (!pr.started)
		return;
	atomic_store(&pr.stop, 1);
	pthread_join(pr.th, NULL);
	for (i = 0; i < 2; i++)
		if (pr.rx[i].fd >= 0)
			pthread_join(pr.rx[i].th, NULL);
	pr.started = 0;
}

int pair_observed_id(uint32_t *id)
{
	if (!atomic_load(&pr.obs_have))
		return 0;
	*id = atomic_load(&pr.obs_id);
	return 1;
}

/* The pair kept working: everything sent arrived intact, and in time. */
int pair_check(unsigned long *done)
{
	unsigned long sent = pr.sent[DEST_R] + pr.sent[DEST_O];
	int fails = 0, i;

	printf("pair: %lu messages to R and %lu to the observer; %lu "
	       "completions exact, %lu not; R got %lu intact (%lu bytes), "
	       "%lu not; the observer %lu intact, %lu not; longest wait for "
	       "a completion %.1f s\n", pr.sent[DEST_R], pr.sent[DEST_O],
	       pr.done_exact, pr.done_other, pr.rx[DEST_R].got,
	       pr.rx[DEST_R].bytes, pr.rx[DEST_R].bad, pr.rx[DEST_O].got,
	       pr.rx[DEST_O].bad, pr.max_gap);
	*done = pr.done_exact;
	fails += check_ge("pair: messages completed", 1,
			  (int64_t)pr.done_exact);
	fails += check_eq("pair: completions exact", (int64_t)sent,
			  (int64_t)pr.done_exact);
	for (i = 0; i < 2; i++) {
		if (pr.rx[i].fd < 0)
			continue;
		fails += check_eq(i == DEST_R ? "pair: intact at R" :
				  "pair: intact at the observer",
				  (int64_t)pr.sent[i], (int64_t)pr.rx[i].got);
		close(pr.rx[i].fd);
	}
	close(pr.s);
	return fails;
}

/* ----------------------------------------------------------- sampler */

#define NR_WATCH	4

static struct {
	pthread_t th;
	atomic_int stop;
	uint16_t ports[NR_WATCH];
	int n, started;
	struct mem_peak peak;
} sm;

static void sample(void)
{
	struct sock_row rows[NR_WATCH];
	long pages = proto_pages();
	int i;

	sockets_read(ns_target, sm.ports, rows, sm.n);
	for (i = 0; i < sm.n; i++) {
		if (rows[i].rx_mem > sm.peak.rx_mem[i])
			sm.peak.rx_mem[i] = rows[i].rx_mem;
		if (rows[i].in_msgs > sm.peak.in_msgs[i])
			sm.peak.in_msgs[i] = rows[i].in_msgs;
	}
	if (pages > sm.peak.proto_pages)
		sm.peak.proto_pages = pages;
	sm.peak.samples++;
}

static void *sampler(void *arg)
{
	(void)arg;
	while (!atomic_load(&sm.stop)) {
		sample();
		usleep(20000);
	}
	return NULL;
}

/* Watch the sockets of the target's namespace on @ports. */
void sampler_start(const uint16_t *ports, int n)
{
	sm.n = n < NR_WATCH ? n : NR_WATCH;
	memcpy(sm.ports, ports, sm.n * sizeof(*ports));
	sm.peak.proto_pages = -1;
	if (pthread_create(&sm.th, NULL, sampler, NULL))
		die("pthread_create");
	sm.started = 1;
}

void sampler_stop(void)
{
	if (!sm.started)
		return;
	atomic_store(&sm.stop, 1);
	pthread_join(sm.th, NULL);
	sample();
	sm.started = 0;
}

void sampler_peak(struct mem_peak *p)
{
	*p = sm.peak;
}
