// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_prio: sender, receiver and checkers for the priority and selective
 * dropping selftests (dlcp_prio.sh).
 *
 *   dlcp_prio segsize --to ADDR
 *	print DLCP_SEGMENT_SIZE towards ADDR
 *   dlcp_prio recv --port P [--count N] [--seconds S] [--seg BYTES]
 *		    [--timeout S] [--ready FILE]
 *	receive N messages (or for S seconds); one line per message, in
 *	arrival order:
 *	  msg tensor=T layer=L prio=C len=N status=S lost=B ranges=R
 *	      t_ms=MS lost_imp=B lost_drop=B bad=B
 *	With --seg, payloads are checked against the "half" pattern (below):
 *	lost_imp/lost_drop split the lost bytes between important (even)
 *	and droppable (odd) segments, bad counts bytes that are neither
 *	what was sent nor zero-filled lost bytes. Ends with a summary line
 *	  total msgs=N bytes=B lost=B lost_imp=B lost_drop=B bad=B secs=S
 *   dlcp_prio send --to ADDR --port P [--sockprio C] [--seconds S]
 *		    [--outstanding K] --msg SPEC [--msg SPEC]...
 *	send the messages in order on one socket and wait for their
 *	completions; SPEC is a comma list of size=BYTES, layer=L, prio=C,
 *	budget=PPM, droppable=PPM, tensor=T, count=N, gap=MS (sleep before),
 *	crit (DLCP_MSG_CRITICAL),
 *	half (fp32 "half" pattern: odd segments near zero), segclass
 *	(DLCP_CMSG_SEG_CLASS marking the odd segments droppable; needs
 *	seg=BYTES), seg=BYTES. With --seconds, the specs are repeated until
 *	S seconds passed, at most K (default 4) messages outstanding.
 *   dlcp_prio errors --to ADDR [--unpriv]
 *	the bad-input checks; prints ok/not ok lines, exit 1 if one failed
 *   dlcp_prio pcap FILE
 *	tally the DLCP packets of a capture:
 *	  pkt type=DATA class=C dscp=D ecn=E droppable=0|1 rtx=0|1 crit=0|1 n=N
 *   dlcp_prio tcp-recv --port P --seconds S [--ready FILE]
 *   dlcp_prio tcp-send --to ADDR --port P --seconds S
 *	a plain TCP flow; the receiver prints "tcp bytes=B secs=S mbit=M"
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "linux/dlcp.h"
#include "dlcp_wire.h"

#define MAX_MSGS	16
#define MAX_RANGES	65536

struct spec {
	uint32_t size, layer, prio, budget, droppable, tensor, count, gap_ms;
	uint32_t seg;
	int has_layer, has_prio, has_budget, has_droppable, half, segclass;
	int crit;
};

static struct {
	const char *mode, *to, *ready, *file;
	int port, count, timeout, sockprio, outstanding, unpriv;
	double seconds;
	uint32_t seg;
	struct spec msg[MAX_MSGS];
	int nmsg;
} o = { .port = 7200, .timeout = 60, .sockprio = -2, .outstanding = 4 };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(const char *what)
{
	fprintf(stderr, "dlcp_prio %s: %s: %s\n", o.mode, what,
		strerror(errno));
	return 1;
}

/* The "half" pattern: fp32, odd segments near zero, never a zero byte. */
static void half_fill(uint8_t *b, uint32_t len, uint32_t seg, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		uint32_t k = i / 4 + seed * 7919;
		float f;

		if ((i / seg) % 2)
			f = 1.0e-7f * (1.0f + (k % 7) / 8.0f);
		else
			f = 1.0f + (k % 13) / 16.0f;
		if (k % 2)
			f = -f;
		memcpy(b + i, &f, 4);
	}
	for (; i < len; i++)
		b[i] = 0x5a;
}

static void plain_fill(uint8_t *b, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)((i * 31 + seed) | 1);
}

static int parse_spec(char *s, struct spec *sp)
{
	char *tok, *save = NULL;

	memset(sp, 0, sizeof(*sp));
	sp->size = 65536;
	sp->count = 1;
	sp->seg = o.seg;
	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint32_t v = eq ? strtoul(eq + 1, NULL, 0) : 0;

		if (eq)
			*eq = 0;
		if (!strcmp(tok, "size"))
			sp->size = v;
		else if (!strcmp(tok, "layer"))
			sp->layer = v, sp->has_layer = 1;
		else if (!strcmp(tok, "prio"))
			sp->prio = v, sp->has_prio = 1;
		else if (!strcmp(tok, "budget"))
			sp->budget = v, sp->has_budget = 1;
		else if (!strcmp(tok, "droppable"))
			sp->droppable = v, sp->has_droppable = 1;
		else if (!strcmp(tok, "tensor"))
			sp->tensor = v;
		else if (!strcmp(tok, "count"))
			sp->count = v;
		else if (!strcmp(tok, "gap"))
			sp->gap_ms = v;
		else if (!strcmp(tok, "seg"))
			sp->seg = v;
		else if (!strcmp(tok, "half"))
			sp->half = 1;
		else if (!strcmp(tok, "segclass"))
			sp->segclass = 1;
		else if (!strcmp(tok, "crit"))
			sp->crit = 1;
		else
			return -1;
	}
	return 0;
}

static int dlcp_socket(void)
{
	int s = socket(AF_INET, SOCK_DLCP, 0);
	struct timeval tv = { .tv_sec = o.timeout };

	if (s >= 0)
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return s;
}

static int addr_of(const char *a, int port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return inet_pton(AF_INET, a, &sin->sin_addr) == 1 ? 0 : -1;
}

static int do_segsize(void)
{
	struct sockaddr_in to;
	int s = dlcp_socket(), v = 0;
	socklen_t l = sizeof(v);

	if (s < 0 || addr_of(o.to, o.port, &to))
		return fail("socket/address");
	if (connect(s, (struct sockaddr *)&to, sizeof(to)))
		return fail("connect");
	if (getsockopt(s, SOL_DLCP, DLCP_SEGMENT_SIZE, &v, &l))
		return fail("DLCP_SEGMENT_SIZE");
	printf("%d\n", v);
	return 0;
}

/* ------------------------------------------------------------ sending */

/* sendmsg() of one message of @sp; returns 0 or an errno. */
static int send_one(int s, const struct spec *sp, uint32_t tensor,
		    uint8_t *buf, const uint8_t *cls, uint32_t ncls)
{
	size_t clen = CMSG_SPACE(sizeof(struct dlcp_send_info)) +
		      CMSG_SPACE(ncls);
	char *cbuf = calloc(1, clen);
	struct dlcp_send_info si = {
		.tensor_id = tensor, .iteration = 1,
		.dtype = sp->half ? DLCP_DTYPE_FP32 : DLCP_DTYPE_BYTES,
	};
	struct iovec iov = { buf, sp->size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf };
	struct cmsghdr *c;
	ssize_t n;

	if (sp->crit)
		si.flags |= DLCP_MSG_CRITICAL;
	if (sp->has_layer)
		si.layer = sp->layer, si.flags |= DLCP_MSG_HAS_LAYER;
	if (sp->has_prio)
		si.prio = sp->prio, si.flags |= DLCP_MSG_HAS_PRIO;
	if (sp->has_budget)
		si.loss_budget_ppm = sp->budget,
		si.flags |= DLCP_MSG_HAS_BUDGET;
	if (sp->has_droppable)
		si.droppable_ppm = sp->droppable,
		si.flags |= DLCP_MSG_HAS_DROPPABLE;
	mh.msg_controllen = CMSG_SPACE(sizeof(si)) + (ncls ? CMSG_SPACE(ncls) : 0);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_DLCP;
	c->cmsg_type = DLCP_CMSG_SEND;
	c->cmsg_len = CMSG_LEN(sizeof(si));
	memcpy(CMSG_DATA(c), &si, sizeof(si));
	if (ncls) {
		c = CMSG_NXTHDR(&mh, c);
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEG_CLASS;
		c->cmsg_len = CMSG_LEN(ncls);
		memcpy(CMSG_DATA(c), cls, ncls);
	}
	n = sendmsg(s, &mh, 0);
	free(cbuf);
	if (n < 0)
		return errno;
	return n == (ssize_t)sp->size ? 0 : EIO;
}

/* Wait for one completion; returns its status or -1. */
static int wait_completion(int s, int tmo_ms)
{
	char cbuf[256];
	struct dlcp_completion c;
	struct iovec iov = { &c, sizeof(c) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct pollfd pfd = { .fd = s, .events = 0 };

	if (poll(&pfd, 1, tmo_ms) != 1 || !(pfd.revents & POLLERR))
		return -1;
	if (recvmsg(s, &mh, MSG_ERRQUEUE) != sizeof(c))
		return -1;
	printf("completion tensor=%u status=%u lost=%u\n", c.tensor_id,
	       c.status, c.bytes_lost);
	return (int)c.status;
}

static int do_send(void)
{
	struct sockaddr_in to;
	int s = dlcp_socket(), one = 1, i, err, outstanding = 0, bad = 0;
	uint32_t maxsize = 0, k, sent = 0;
	uint8_t *buf, *cls = NULL;
	double t0 = now_s();

	if (s < 0 || addr_of(o.to, o.port, &to))
		return fail("socket/address");
	if (connect(s, (struct sockaddr *)&to, sizeof(to)))
		return fail("connect");
	if (setsockopt(s, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one)))
		return fail("DLCP_RECVCOMPLETION");
	if (o.sockprio != -2 &&
	    setsockopt(s, SOL_DLCP, DLCP_PRIORITY, &o.sockprio,
		       sizeof(o.sockprio)))
		return fail("DLCP_PRIORITY");
	for (i = 0; i < o.nmsg; i++)
		if (o.msg[i].size > maxsize)
			maxsize = o.msg[i].size;
	buf = malloc(maxsize);
	if (!buf)
		return fail("malloc");
	do {
		for (i = 0; i < o.nmsg; i++) {
			struct spec *sp = &o.msg[i];
			uint32_t ncls = 0;

			if (sp->segclass) {
				ncls = (sp->size + sp->seg - 1) / sp->seg;
				free(cls);
				cls = malloc(ncls);
				for (k = 0; k < ncls; k++)
					cls[k] = k % 2 ? DLCP_SEG_DROPPABLE :
							 DLCP_SEG_IMPORTANT;
			}
			for (k = 0; k < sp->count; k++) {
				uint32_t tensor = sp->tensor + k + sent;

				if (sp->gap_ms)
					usleep(sp->gap_ms * 1000);
				if (sp->half)
					half_fill(buf, sp->size, sp->seg, tensor);
				else
					plain_fill(buf, sp->size, tensor);
				while (o.seconds && outstanding >= o.outstanding) {
					if (wait_completion(s, o.timeout * 1000) < 0)
						return fail("completion");
					outstanding--;
				}
				err = send_one(s, sp, tensor, buf, cls, ncls);
				if (err) {
					errno = err;
					return fail("sendmsg");
				}
				printf("sent tensor=%u t_ms=%.1f\n", tensor,
				       (now_s() - t0) * 1e3);
				fflush(stdout);
				outstanding++;
			}
		}
		sent += 1000;
	} while (o.seconds && now_s() - t0 < o.seconds);
	while (outstanding--) {
		int st = wait_completion(s, o.timeout * 1000);

		if (st < 0)
			return fail("completion");
		bad += st != DLCP_DONE_EXACT && st != DLCP_DONE_LOSSY;
	}
	printf("send done secs=%.2f\n", now_s() - t0);
	close(s);
	free(buf);
	free(cls);
	return bad != 0;
}

/* ---------------------------------------------------------- receiving */

static int do_recv(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(o.port) };
	size_t bufsz = 64 << 20, csz = CMSG_SPACE(sizeof(struct dlcp_recv_info)) +
		       CMSG_SPACE(MAX_RANGES * sizeof(struct dlcp_range));
	uint8_t *buf = malloc(bufsz), *want = malloc(bufsz);
	char *cbuf = malloc(csz);
	uint64_t tbytes = 0, tlost = 0, timp = 0, tdrop = 0, tbad = 0, first = 0;
	double t0 = 0, tend = 0, tfirst = 0, tlast = 0;
	int s = dlcp_socket(), n = 0;

	if (s < 0 || !buf || !want || !cbuf)
		return fail("socket");
	if (bind(s, (struct sockaddr *)&a, sizeof(a)))
		return fail("bind");
	if (o.ready) {
		FILE *f = fopen(o.ready, "w");

		if (f)
			fclose(f);
	}
	t0 = now_s();
	if (o.seconds)
		tend = t0 + o.seconds;
	while (o.count ? n < o.count : now_s() < tend) {
		struct iovec iov = { buf, bufsz };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf,
				     .msg_controllen = csz };
		struct dlcp_recv_info *ri = NULL;
		struct dlcp_range *lost = NULL;
		uint32_t nlost = 0, r, imp = 0, drop = 0, bad = 0, b;
		struct cmsghdr *c;
		ssize_t len;

		if (o.seconds) {
			struct pollfd pfd = { .fd = s, .events = POLLIN };
			int ms = (int)((tend - now_s()) * 1000);

			if (ms <= 0 || poll(&pfd, 1, ms) != 1)
				break;
		}
		len = recvmsg(s, &mh, 0);
		if (len < 0)
			return fail("recvmsg");
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_DLCP)
				continue;
			if (c->cmsg_type == DLCP_CMSG_RECV)
				ri = (void *)CMSG_DATA(c);
			if (c->cmsg_type == DLCP_CMSG_LOST) {
				lost = (void *)CMSG_DATA(c);
				nlost = (c->cmsg_len - CMSG_LEN(0)) /
					sizeof(*lost);
			}
		}
		if (!ri) {
			fprintf(stderr, "no DLCP_CMSG_RECV\n");
			return 1;
		}
		if (!n) {
			tfirst = now_s();
			first = len;
		}
		tlast = now_s();
		if (o.seg && ri->dtype == DLCP_DTYPE_FP32) {
			half_fill(want, len, o.seg, ri->tensor_id);
			for (r = 0; r < nlost; r++)
				for (b = lost[r].offset;
				     b < lost[r].offset + lost[r].len && b < len; b++) {
					if ((b / o.seg) % 2)
						drop++;
					else
						imp++;
					bad += buf[b] != 0;
					want[b] = 0;
				}
			for (b = 0; b < len; b++)
				bad += buf[b] != want[b];
		}
		printf("msg tensor=%u layer=%u prio=%u len=%zd status=%u lost=%u ranges=%u t_ms=%.1f lost_imp=%u lost_drop=%u bad=%u\n",
		       ri->tensor_id, ri->layer, ri->prio, len, ri->status,
		       ri->bytes_lost, ri->nr_lost_ranges,
		       (now_s() - t0) * 1e3, imp, drop, bad);
		fflush(stdout);
		n++;
		tbytes += len;
		tlost += ri->bytes_lost;
		timp += imp;
		tdrop += drop;
		tbad += bad;
	}
	/* goodput between the first and the last message */
	printf("total msgs=%d bytes=%llu lost=%llu lost_imp=%llu lost_drop=%llu bad=%llu secs=%.2f mbit=%.2f\n",
	       n, (unsigned long long)tbytes, (unsigned long long)tlost,
	       (unsigned long long)timp, (unsigned long long)tdrop,
	       (unsigned long long)tbad, tlast - tfirst,
	       n > 1 ? (tbytes - first) * 8 / 1e6 / (tlast - tfirst) : 0.0);
	return o.count && n < o.count;
}

/* ------------------------------------------------------------- errors */

static int nr_check, nr_bad;

static void expect(const char *what, int got, int want)
{
	nr_check++;
	if (got == want) {
		printf("ok %s: %s\n", what, want ? strerror(want) : "success");
	} else {
		nr_bad++;
		printf("not ok %s: got %s, want %s\n", what,
		       got ? strerror(got) : "success",
		       want ? strerror(want) : "success");
	}
}

static int read_int(const char *path, int dflt)
{
	FILE *f = fopen(path, "r");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

static int has_cap_net_admin(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long eff = 0;
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	return !!(eff & (1ULL << 12));	/* CAP_NET_ADMIN */
}

static int setprio(int s, int v)
{
	return setsockopt(s, SOL_DLCP, DLCP_PRIORITY, &v, sizeof(v)) ? errno : 0;
}

static int do_errors(void)
{
	int classes = read_int("/proc/sys/net/dlcp/prio_classes", 8);
	int unpriv = read_int("/proc/sys/net/dlcp/unpriv_class", 1);
	struct spec sp = { .size = 0 };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sockaddr_in to;
	int s = dlcp_socket(), seg = 0, v;
	socklen_t l = sizeof(seg);
	uint8_t *buf, cls[64];
	uint32_t nseg;

	if (s < 0 || addr_of(o.to, o.port, &to) ||
	    connect(s, (struct sockaddr *)&to, sizeof(to)) ||
	    getsockopt(s, SOL_DLCP, DLCP_SEGMENT_SIZE, &seg, &l))
		return fail("socket");
	printf("# prio_classes %d unpriv_class %d segment %d CAP_NET_ADMIN %d\n",
	       classes, unpriv, seg, has_cap_net_admin());
	nseg = 10;
	sp.size = nseg * seg;
	buf = calloc(1, sp.size);
	memset(cls, 0, sizeof(cls));
	if (o.unpriv) {
		if (has_cap_net_admin()) {
			printf("not ok still has CAP_NET_ADMIN\n");
			return 1;
		}
		if (unpriv == 0) {
			printf("# unpriv_class 0: every class is unprivileged\n");
			return 0;
		}
		expect("DLCP_PRIORITY 0 unprivileged", setprio(s, 0), EPERM);
		expect("DLCP_PRIORITY unpriv_class-1 unprivileged",
		       setprio(s, unpriv - 1), EPERM);
		expect("DLCP_PRIORITY unpriv_class unprivileged",
		       setprio(s, unpriv), 0);
		expect("DLCP_PRIORITY -1 unprivileged", setprio(s, -1), 0);
		sp.has_prio = 1;
		sp.prio = 0;
		expect("DLCP_MSG_HAS_PRIO 0 unprivileged",
		       send_one(s, &sp, 1, buf, NULL, 0), EPERM);
		sp.prio = unpriv;
		expect("DLCP_MSG_HAS_PRIO unpriv_class unprivileged",
		       send_one(s, &sp, 2, buf, NULL, 0), 0);
	} else {
		expect("SEG_CLASS one entry short",
		       send_one(s, &sp, 1, buf, cls, nseg - 1), EINVAL);
		expect("SEG_CLASS one entry long",
		       send_one(s, &sp, 2, buf, cls, nseg + 1), EINVAL);
		cls[3] = 2;
		expect("SEG_CLASS value 2", send_one(s, &sp, 3, buf, cls, nseg),
		       EINVAL);
		cls[3] = DLCP_SEG_DROPPABLE;
		expect("SEG_CLASS right length",
		       send_one(s, &sp, 4, buf, cls, nseg), 0);
		sp.has_prio = 1;
		sp.prio = classes;
		expect("DLCP_MSG_HAS_PRIO prio_classes",
		       send_one(s, &sp, 5, buf, NULL, 0), EINVAL);
		sp.prio = 255;
		expect("DLCP_MSG_HAS_PRIO 255", send_one(s, &sp, 6, buf, NULL, 0),
		       EINVAL);
		sp.has_prio = 0;
		sp.prio = 0;
		expect("DLCP_PRIORITY prio_classes", setprio(s, classes), EINVAL);
		expect("DLCP_PRIORITY -2", setprio(s, -2), EINVAL);
		expect("DLCP_PRIORITY 0 with CAP_NET_ADMIN", setprio(s, 0),
		       has_cap_net_admin() ? 0 : EPERM);
		l = sizeof(v);
		v = -5;
		getsockopt(s, SOL_DLCP, DLCP_PRIORITY, &v, &l);
		expect("DLCP_PRIORITY reads back 0", v == 0 ? 0 : EINVAL, 0);
		expect("DLCP_PRIORITY -1", setprio(s, -1), 0);
		v = -5;
		getsockopt(s, SOL_DLCP, DLCP_PRIORITY, &v, &l);
		expect("DLCP_PRIORITY reads back -1", v == -1 ? 0 : EINVAL, 0);
	}
	free(buf);
	/* the messages sent have no receiver: do not wait for them */
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s);
	printf("# %d checks, %d failed\n", nr_check, nr_bad);
	return nr_bad != 0;
}

/* --------------------------------------------------------------- pcap */

struct tally {
	unsigned int type, cls, tos, drop, rtx, crit;
	unsigned long n;
};

static int do_pcap(void)
{
	static const char *const tname[] = { "?", "DATA", "REPORT", "STOP",
					     "PROBE", "ABORT" };
	static const char *const ecn[] = { "NotECT", "ECT1", "ECT0", "CE" };
	static struct tally t[4096];
	FILE *f = fopen(o.file, "rb");
	uint32_t gh[6], rh[4];
	int nt = 0, i, swap, off;
	uint8_t pkt[65536];
	int proto = read_int("/sys/module/dlcp/parameters/ipproto", 253);

	if (!f || fread(gh, 4, 6, f) != 6)
		return fail("pcap header");
	swap = gh[0] == 0xd4c3b2a1 || gh[0] == 0x4d3cb2a1;
	if (swap)
		gh[5] = __builtin_bswap32(gh[5]);
	switch (gh[5]) {
	case 1: off = 14; break;	/* Ethernet */
	case 113: off = 16; break;	/* Linux cooked */
	case 276: off = 20; break;	/* Linux cooked v2 */
	case 101: off = 0; break;	/* raw IP */
	default:
		fprintf(stderr, "linktype %u\n", gh[5]);
		return 1;
	}
	while (fread(rh, 4, 4, f) == 4) {
		uint32_t cap = swap ? __builtin_bswap32(rh[2]) : rh[2];
		const uint8_t *ip = pkt + off, *d;
		struct tally k = { 0 };
		uint32_t segs;

		if (cap > sizeof(pkt) || fread(pkt, 1, cap, f) != cap)
			break;
		if (cap < (uint32_t)off + 20 + DLCP_HDR_LEN || (ip[0] >> 4) != 4 ||
		    ip[9] != proto)
			continue;
		d = ip + (ip[0] & 15) * 4;
		if (d + DLCP_HDR_LEN > pkt + cap)
			continue;
		k.type = d[4] & 15;
		k.cls = d[7];
		k.tos = ip[1];
		k.drop = !!(d[5] & DLCP_HF_DROPPABLE);
		k.rtx = !!(d[5] & DLCP_HF_RETRANS);
		k.crit = !!(d[5] & DLCP_HF_CRITICAL);
		/* a super-packet counts as the packets it stands for */
		segs = dlcp_wire_get16(ip + 2);
		segs = segs > (uint32_t)(d - ip) ?
		       dlcp_wire_gso_segs(d, segs - (uint32_t)(d - ip)) : 0;
		for (i = 0; i < nt; i++)
			if (t[i].type == k.type && t[i].cls == k.cls &&
			    t[i].tos == k.tos && t[i].drop == k.drop &&
			    t[i].rtx == k.rtx && t[i].crit == k.crit)
				break;
		if (i == nt) {
			if (nt == 4096)
				continue;
			t[nt++] = k;
		}
		t[i].n += segs ? segs : 1;
	}
	for (i = 0; i < nt; i++)
		printf("pkt type=%s class=%u dscp=%u ecn=%s droppable=%u rtx=%u crit=%u n=%lu\n",
		       t[i].type < 6 ? tname[t[i].type] : "?", t[i].cls,
		       t[i].tos >> 2, ecn[t[i].tos & 3], t[i].drop, t[i].rtx,
		       t[i].crit, t[i].n);
	fclose(f);
	return 0;
}

/* ---------------------------------------------------------------- TCP */

static int do_tcp_recv(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(o.port) };
	int l = socket(AF_INET, SOCK_STREAM, 0), c, one = 1;
	static char buf[1 << 16];
	double t0, tend;
	uint64_t bytes = 0;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		return fail("listen");
	if (o.ready) {
		FILE *f = fopen(o.ready, "w");

		if (f)
			fclose(f);
	}
	c = accept(l, NULL, NULL);
	if (c < 0)
		return fail("accept");
	t0 = now_s();
	tend = t0 + o.seconds;
	while (now_s() < tend) {
		struct pollfd pfd = { .fd = c, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, (int)((tend - now_s()) * 1000) + 1) != 1)
			break;
		n = read(c, buf, sizeof(buf));
		if (n <= 0)
			break;
		bytes += n;
	}
	printf("tcp bytes=%llu secs=%.2f mbit=%.2f\n", (unsigned long long)bytes,
	       now_s() - t0, bytes * 8 / 1e6 / (now_s() - t0));
	close(c);
	close(l);
	return 0;
}

static int do_tcp_send(void)
{
	struct sockaddr_in to;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	static char buf[1 << 16];
	double t0 = now_s();

	if (s < 0 || addr_of(o.to, o.port, &to) ||
	    connect(s, (struct sockaddr *)&to, sizeof(to)))
		return fail("connect");
	memset(buf, 'x', sizeof(buf));
	while (now_s() - t0 < o.seconds)
		if (write(s, buf, sizeof(buf)) < 0)
			break;
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2)
		goto usage;
	o.mode = argv[1];
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--unpriv")) {
			o.unpriv = 1;
			continue;
		}
		if (!v && strcmp(o.mode, "pcap"))
			goto usage;
		if (!strcmp(a, "--to"))
			o.to = v;
		else if (!strcmp(a, "--port"))
			o.port = atoi(v);
		else if (!strcmp(a, "--count"))
			o.count = atoi(v);
		else if (!strcmp(a, "--seconds"))
			o.seconds = atof(v);
		else if (!strcmp(a, "--timeout"))
			o.timeout = atoi(v);
		else if (!strcmp(a, "--ready"))
			o.ready = v;
		else if (!strcmp(a, "--seg"))
			o.seg = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--sockprio"))
			o.sockprio = atoi(v);
		else if (!strcmp(a, "--outstanding"))
			o.outstanding = atoi(v);
		else if (!strcmp(a, "--msg")) {
			char *dup = strdup(v);

			if (o.nmsg == MAX_MSGS || parse_spec(dup, &o.msg[o.nmsg]))
				goto usage;
			if ((o.msg[o.nmsg].half || o.msg[o.nmsg].segclass) &&
			    !o.msg[o.nmsg].seg)
				goto usage;
			o.nmsg++;
			free(dup);
		} else if (!strcmp(o.mode, "pcap") && !o.file) {
			o.file = a;
			continue;
		} else {
			goto usage;
		}
		i++;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(o.mode, "segsize") && o.to)
		return do_segsize();
	if (!strcmp(o.mode, "send") && o.to && o.nmsg)
		return do_send();
	if (!strcmp(o.mode, "recv"))
		return do_recv();
	if (!strcmp(o.mode, "errors") && o.to)
		return do_errors();
	if (!strcmp(o.mode, "pcap") && o.file)
		return do_pcap();
	if (!strcmp(o.mode, "tcp-recv") && o.seconds)
		return do_tcp_recv();
	if (!strcmp(o.mode, "tcp-send") && o.to && o.seconds)
		return do_tcp_send();
usage:
	fprintf(stderr, "usage: see the comment at the top of dlcp_prio.c\n");
	return 2;
}
