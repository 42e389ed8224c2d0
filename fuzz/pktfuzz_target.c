// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pktfuzz: namespaces, the counters and /proc files read in them,
 * and the target socket (what the injected packets reach).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "pktfuzz.h"

/* ------------------------------------------------------------ misc */

void die(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "dlcp_pktfuzz: ");
	vfprintf(stderr, fmt, ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

void enter(int fd)
{
	if (setns(fd, CLONE_NEWNET))
		die("setns");
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void sleep_until(double t)
{
	double d;

	while ((d = t - now()) > 0)
		usleep(d > 0.01 ? 10000 : (useconds_t)(d * 1e6) + 1);
}

void touch_file(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f)
		fclose(f);
}

/* ------------------------------------------------------------ PRNG */

static uint64_t rng_state;

void rnd_seed(uint64_t seed)
{
	rng_state = seed;
}

uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

uint32_t rnd32(void)
{
	return (uint32_t)rnd64();
}

int chance(unsigned int pct)
{
	return rnd(100) < pct;
}

/* ----------------------------------------------------------- counters */

/*
 * Open @path in namespace @ns (-1: this one). /proc/net is the main
 * thread's namespace; /proc/thread-self/net, the calling thread's.
 */
static FILE *fopen_in(int ns, const char *path)
{
	FILE *f;

	if (ns < 0)
		return fopen(path, "r");
	enter(ns);
	f = fopen(path, "r");
	enter(ns_self);
	return f;
}

void snmp_read(int ns, struct snmp *s)
{
	char line[256];
	FILE *f = fopen_in(ns, "/proc/thread-self/net/dlcp/snmp");

	if (!f)
		die("/proc/thread-self/net/dlcp/snmp");
	s->n = 0;
	while (s->n < NR_CTR && fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "%47s %llu", s->name[s->n], &v) == 2)
			s->val[s->n++] = v;
	}
	fclose(f);
}

int64_t snmp_get(const struct snmp *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return (int64_t)s->val[i];
	return -1;
}

void snap_take(struct snap *sn)
{
	snmp_read(ns_self, &sn->s[NS_SELF]);
	snmp_read(ns_target, &sn->s[NS_TARGET]);
	if (ns_attacker >= 0)
		snmp_read(ns_attacker, &sn->s[NS_ATTACKER]);
	else
		sn->s[NS_ATTACKER].n = 0;
	if (o.udp)
		udp_snmp_read(ns_target, &sn->udp_inerr, &sn->udp_csumerr);
}

/* whether no namespace sent or received a DLCP packet between @a and @b */
static int snap_same(const struct snap *a, const struct snap *b)
{
	static const char *const ctr[] = { "DlcpInPkts", "DlcpOutPkts" };
	unsigned int i, j;

	for (i = 0; i < __NS_MAX; i++)
		for (j = 0; j < sizeof(ctr) / sizeof(ctr[0]); j++)
			if (snmp_get(&a->s[i], ctr[j]) !=
			    snmp_get(&b->s[i], ctr[j]))
				return 0;
	return 1;
}

/*
 * The namespaces are read one after the other, so a packet one of them
 * sends between two reads is counted out and not in. A timer (a message
 * timing out, a probe) may send one after the traffic has settled: take
 * the snapshot when no counter moved for 100 ms around it, trying for up
 * to 5 s.
 */
void snap_take_quiet(struct snap *sn)
{
	struct snap prev;
	int i;

	snap_take(&prev);
	for (i = 0; i < 50; i++) {
		usleep(100000);
		snap_take(sn);
		if (snap_same(&prev, sn))
			return;
		prev = *sn;
	}
}

int64_t dsnap(const struct snap *a, const struct snap *b, int ns,
	      const char *name)
{
	int64_t x, y;

	if (ns == NS_ATTACKER && ns_attacker < 0)
		return 0;
	x = snmp_get(&a->s[ns], name);
	y = snmp_get(&b->s[ns], name);
	if (x < 0 || y < 0) {
		fprintf(stderr, "dlcp_pktfuzz: counter %s missing\n", name);
		return -1000000000;
	}
	return y - x;
}

long long sysctl_read(int ns, const char *name)
{
	char path[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/dlcp/%s", name);
	f = fopen_in(ns, path);
	if (!f || fscanf(f, "%lld", &v) != 1)
		die("%s", path);
	fclose(f);
	return v;
}

/*
 * The core's per-CPU reserve in front of a protocol's memory_allocated,
 * in pages: net.core.mem_pcpu_rsv where the kernel has it, else its
 * fixed SK_MEMORY_PCPU_RESERVE (1 MiB).
 */
long long proto_mem_pcpu_rsv(void)
{
	FILE *f = fopen_in(ns_init, "/proc/sys/net/core/mem_pcpu_rsv");
	long long v;

	if (!f)
		return 256;
	if (fscanf(f, "%lld", &v) != 1)
		v = 256;
	fclose(f);
	return v;
}

/* net.dlcp.mem (pages; the initial namespace's): 0, or -1 if unreadable */
int proto_mem_read(long long mem[3])
{
	FILE *f = fopen_in(ns_init, "/proc/sys/net/dlcp/mem");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%lld %lld %lld", &mem[0], &mem[1], &mem[2]);
	fclose(f);
	return n == 3 ? 0 : -1;
}

/* DLCP's pages in use (/proc/net/protocols, all namespaces), or -1 */
long proto_pages(void)
{
	char line[512], name[32];
	long pages = -1;
	FILE *f = fopen("/proc/net/protocols", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int size, socks;
		long mem;

		if (sscanf(line, "%31s %u %u %ld", name, &size, &socks,
			   &mem) == 4 && !strncmp(name, "DLCP", 4) &&
		    mem > pages)
			pages = mem;
	}
	fclose(f);
	return pages;
}

/*
 * rx_mem and in_msgs of the sockets of namespace @ns bound to local
 * @ports (/proc/net/dlcp/sockets).
 */
void sockets_read(int ns, const uint16_t *ports, struct sock_row *rows,
		  int n)
{
	char line[512];
	FILE *f = fopen_in(ns, "/proc/thread-self/net/dlcp/sockets");
	int i;

	for (i = 0; i < n; i++)
		rows[i] = (struct sock_row){ 0 };
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned int sl, lport, st, out;
		unsigned long long tx;
		unsigned long rx, in;
		char laddr[40], raddr[64];

		if (sscanf(line, " %u: %39[0-9A-F]:%x %63s %x %llx:%lx %u %lu",
			   &sl, laddr, &lport, raddr, &st, &tx, &rx, &out,
			   &in) != 9)
			continue;
		for (i = 0; i < n; i++)
			if (ports[i] == lport) {
				rows[i].rx_mem = rx;
				rows[i].in_msgs = in;
				rows[i].found = 1;
			}
	}
	fclose(f);
}

/* Udp InErrors and InCsumErrors of a namespace (/proc/net/snmp). */
void udp_snmp_read(int ns, int64_t *inerr, int64_t *csumerr)
{
	char names[512], vals[512], *np, *vp, *n, *v;
	FILE *f = fopen_in(ns, "/proc/thread-self/net/snmp");

	*inerr = *csumerr = -1;
	if (!f)
		die("/proc/net/snmp");
	while (fgets(names, sizeof(names), f)) {
		if (strncmp(names, "Udp: ", 5) || !fgets(vals, sizeof(vals), f))
			continue;
		n = strtok_r(names + 5, " \n", &np);
		v = strtok_r(vals + 5, " \n", &vp);
		for (; n && v; n = strtok_r(NULL, " \n", &np),
		     v = strtok_r(NULL, " \n", &vp)) {
			if (!strcmp(n, "InErrors"))
				*inerr = strtoll(v, NULL, 10);
			else if (!strcmp(n, "InCsumErrors"))
				*csumerr = strtoll(v, NULL, 10);
		}
		break;
	}
	fclose(f);
	if (*inerr < 0 || *csumerr < 0)
		die("no Udp InErrors/InCsumErrors in /proc/net/snmp");
}

/* A socket created in namespace @ns. */
int socket_in(int ns, int type, int proto)
{
	int fd;

	enter(ns);
	fd = socket(AF_INET, type, proto);
	enter(ns_self);
	return fd;
}

/*
 * sendto() that waits out a full queue: a veth whose peer's backlog is
 * full (the emulator's softirq fell behind) drops the packet and says
 * ENOBUFS. Returns 0, or -1 with errno for another error.
 */
unsigned long send_waits;

int sendto_retry(int fd, const void *buf, size_t len,
		 const struct sockaddr_in *to)
{
	int tries;

	for (tries = 0; tries < 1000; tries++) {
		if (sendto(fd, buf, len, 0, (const struct sockaddr *)to,
			   sizeof(*to)) == (ssize_t)len)
			return 0;
		if (errno != ENOBUFS && errno != EAGAIN)
			return -1;
		send_waits++;
		usleep(1000);
	}
	return -1;
}

/* ------------------------------------------------------------ target */

struct target_stats tgt;

int target_open(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(o.port),
				   .sin_addr.s_addr = o.dst };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int one = 1, fd;

	fd = socket_in(ns_target, SOCK_DLCP | SOCK_NONBLOCK, 0);
	if (fd < 0)
		die("DLCP socket in %s", o.target_ns);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind target port %u", o.port);
	/* close() at the end aborts what is left instead of waiting */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	setsockopt(fd, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one));
	return fd;
}

/* The target sends a small message to the injector's host. */
void target_send(int fd)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(o.peer_port),
				  .sin_addr.s_addr = o.src };
	static uint8_t buf[65536];
	size_t len = 1 + rnd(chance(50) ? 4096 : sizeof(buf) - 1);

	memset(buf, 0x5a, len);
	if (sendto(fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)&to,
		   sizeof(to)) == (ssize_t)len)
		tgt.sent++;
}

/* Does lost range @lr of a @r-byte message in @buf read as zeros? */
static void check_lost_zero(const uint8_t *buf, ssize_t r,
			    const struct dlcp_range *lr)
{
	size_t b;

	for (b = lr->offset; b < (size_t)lr->offset + lr->len &&
	     b < (size_t)r; b++) {
		if (!buf[b])
			continue;
		if (tgt.nonzero++ < 5)
			fprintf(stderr, "lost range [%u, +%u) of a %zd-byte "
				"message reads 0x%02x at %zu, not zero\n",
				lr->offset, lr->len, r, buf[b], b);
		break;
	}
}

/* Drain what injected packets made the target deliver and complete. */
void target_drain(int fd)
{
	static uint8_t buf[1 << 16];
	static char ctl[CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
			CMSG_SPACE(8200 * sizeof(struct dlcp_range))];
	int i;

	for (i = 0; i < 64; i++) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;
		ssize_t r;

		r = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (r < 0)
			break;
		tgt.recv++;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			const struct dlcp_range *lr = (const void *)CMSG_DATA(c);
			size_t k, nr;

			if (c->cmsg_level != SOL_DLCP ||
			    c->cmsg_type != DLCP_CMSG_LOST)
				continue;
			tgt.lossy++;
			/* dlcp(7): lost ranges are zero-filled */
			nr = (c->cmsg_len - CMSG_LEN(0)) / sizeof(*lr);
			for (k = 0; k < nr; k++)
				check_lost_zero(buf, r, &lr[k]);
		}
	}
	for (i = 0; i < 64; i++) {
		struct iovec iov = { buf, 64 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };

		if (recvmsg(fd, &mh, MSG_DONTWAIT | MSG_ERRQUEUE) < 0)
			break;
		tgt.compl++;
	}
}

/* What the raw sockets saw of the target's own messages. */
void raw_drain(int raw, int raw_udp)
{
	uint8_t buf[2048];
	ssize_t n;

	while (raw >= 0 && (n = recv(raw, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		learn(buf, n);
	while (raw_udp >= 0 &&
	       (n = recv(raw_udp, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		learn(buf, n);
}
