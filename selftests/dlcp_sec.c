// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_sec: the checks of selftests/dlcp_security.sh. Each subcommand
 * prints what it saw and exits 0 if every check held, 1 otherwise.
 *
 *   dlcp_sec deliver
 *	In the current netns (lo up): sockets bound to 127.0.0.1:P,
 *	127.0.0.1:P+1, 127.0.0.2:P (or, if the module refuses a second
 *	address on one port, none) and INADDR_ANY:P+2 each get exactly the
 *	messages sent to their own address and port, and nothing else; a
 *	message to an address or port nobody bound reaches nobody.
 *
 *   dlcp_sec nsiso NS1 NS2
 *	A receiver on 127.0.0.1:7900 in each of /run/netns/NS1 and NS2 and
 *	a sender in each: every receiver gets only its own namespace's
 *	message; a raw IPPROTO_DLCP socket in NS2 sees only NS2's packets;
 *	/proc/net/dlcp/sockets of a namespace lists only its own sockets;
 *	/proc/net/dlcp/snmp counts only its own traffic.
 *
 *   dlcp_sec wire [--udp] [--lossy]
 *	Captures (raw IPPROTO_DLCP, or IPPROTO_UDP with --udp) every packet
 *	of: a transfer (DATA, REPORT, STOP; under loss REPORTs with gaps,
 *	retransmissions), a message to a port nobody bound (PROBEs), closed
 *	with SO_LINGER 0 (ABORT). Every packet must be exactly as long as
 *	its header says, with a valid checksum (natively, or the pseudo-header
 *	sum that checksum offload leaves for the device), known
 *	version/type/flags,
 *	the header length of its type, reserved fields zero, a UDP
 *	checksum (--udp) that holds once the device has completed the DLCP
 *	one and, for DATA, the payload the application sent:
 *	nothing uninitialised reaches the wire.
 *
 *   dlcp_sec user
 *	Every buffer handed to the kernel is pre-filled with 0xAA:
 *	recvmsg() data past the message, msg_name (sin_zero zero, nothing
 *	past the sockaddr_in), DLCP_CMSG_RECV (reserved fields zero),
 *	DLCP_CMSG_LOST (sorted, zero-filled), the control buffer past
 *	msg_controllen and the cmsg padding (untouched); MSG_ERRQUEUE
 *	completions (struct dlcp_completion, then sock_extended_err with
 *	ee_type/ee_code/ee_pad zero); getsockopt() of every SOL_DLCP option
 *	(nothing past optlen); getsockname()/getpeername() (sin_zero zero).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dlcp_pkt.h"

#define FILL		0xAA
#define PORT		7800
#define MAXMSG		(1 << 20)

static int fails;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	fails++;
	if (fails > 40)
		return;
	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static void die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sockaddr_in sa(const char *ip, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

static int dlcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_DLCP, 0);

	if (fd < 0)
		die("socket(SOCK_DLCP)");
	return fd;
}

static int bound(const char *ip, int port)
{
	struct sockaddr_in s = sa(ip, port);
	int fd = dlcp_socket();

	if (bind(fd, (void *)&s, sizeof(s)))
		die("bind");
	return fd;
}

static int all_fill(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != FILL)
			return 0;
	return 1;
}

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static void send_tag(int fd, const char *ip, int port, const char *tag)
{
	struct sockaddr_in to = sa(ip, port);

	if (sendto(fd, tag, strlen(tag), 0, (void *)&to, sizeof(to)) !=
	    (ssize_t)strlen(tag))
		die("sendto");
}

/* Receive for @secs; appends every tag received, space-separated. */
static void collect(int fd, char *out, size_t size, double secs)
{
	double end = now() + secs;
	char buf[256];

	*out = 0;
	while (now() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0)
			continue;
		buf[n] = 0;
		if (strlen(out) + (size_t)n + 2 < size) {
			strcat(out, *out ? " " : "");
			strcat(out, buf);
		}
	}
}

/* ------------------------------------------------------------ deliver */

static int cmd_deliver(void)
{
	struct { const char *ip; int port; const char *tag; int fd; } r[] = {
		{ "127.0.0.1", PORT, "to-1:P", -1 },
		{ "127.0.0.1", PORT + 1, "to-1:P+1", -1 },
		{ "127.0.0.2", PORT, "to-2:P", -1 },
		{ "0.0.0.0", PORT + 2, "to-any:P+2", -1 },
	};
	struct sockaddr_in s = sa("127.0.0.2", PORT);
	char got[1024];
	int snd, i, n = sizeof(r) / sizeof(r[0]);

	for (i = 0; i < n; i++) {
		if (i == 2) {	/* a second address on port P */
			r[i].fd = dlcp_socket();
			if (bind(r[i].fd, (void *)&s, sizeof(s))) {
				printf("bind 127.0.0.2:%d next to 127.0.0.1:%d:"
				       " %s (a port is per host, then)\n",
				       PORT, PORT, strerror(errno));
				close(r[i].fd);
				r[i].fd = -1;
			}
			continue;
		}
		r[i].fd = bound(r[i].ip, r[i].port);
	}
	snd = dlcp_socket();
	for (i = 0; i < n; i++)
		send_tag(snd, i == 3 ? "127.0.0.3" : r[i].ip, r[i].port,
			 r[i].tag);
	/* nobody: an unbound port, and a bound port at another address */
	send_tag(snd, "127.0.0.1", PORT + 3, "to-nobody:P+3");
	send_tag(snd, "127.0.0.3", PORT + 1, "to-3:P+1");
	for (i = 0; i < n; i++) {
		const char *want = r[i].tag;

		if (r[i].fd < 0)
			continue;
		collect(r[i].fd, got, sizeof(got), i ? 0.3 : 1.5);
		printf("socket %s:%d got [%s]\n", r[i].ip, r[i].port, got);
		check(!strcmp(got, want), "socket %s:%d got [%s], want [%s]",
		      r[i].ip, r[i].port, got, want);
	}
	return fails ? 1 : 0;
}

/* -------------------------------------------------------------- nsiso */

static int ns_open(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	return fd;
}

static void ns_enter(int fd)
{
	if (setns(fd, CLONE_NEWNET))
		die("setns");
}

static unsigned long ino_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		die("fstat");
	return (unsigned long)st.st_ino;
}

/* Whether /proc/net/dlcp/sockets (of the current netns) lists @ino. */
static int sockets_has(unsigned long ino)
{
	char line[512], word[64];
	FILE *f = fopen("/proc/net/dlcp/sockets", "r");
	int found = 0;

	if (!f)
		die("/proc/net/dlcp/sockets");
	snprintf(word, sizeof(word), " %lu", ino);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, word);

		if (p && (p[strlen(word)] == ' ' || p[strlen(word)] == '\n' ||
			  !p[strlen(word)]))
			found = 1;
	}
	fclose(f);
	return found;
}

static long long snmp_val(const char *name)
{
	char line[256], n[64];
	unsigned long long v;
	FILE *f = fopen("/proc/net/dlcp/snmp", "r");
	long long r = -1;

	if (!f)
		die("/proc/net/dlcp/snmp");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %llu", n, &v) == 2 && !strcmp(n, name))
			r = (long long)v;
	fclose(f);
	return r;
}

static int cmd_nsiso(const char *n1, const char *n2)
{
	int self = open("/proc/self/ns/net", O_RDONLY);
	int ns[2] = { ns_open(n1), ns_open(n2) };
	int rcv[2], snd[2], raw, k;
	long long in0[2], in1[2];
	char got[1024];
	static const char *const tag[2] = { "from-ns1", "from-ns2" };
	uint8_t pkt[2048];
	unsigned long seen = 0, foreign = 0;
	double end;

	for (k = 0; k < 2; k++) {
		ns_enter(ns[k]);
		rcv[k] = bound("127.0.0.1", 7900);
		snd[k] = bound("127.0.0.1", 7901);
		in0[k] = snmp_val("DlcpInMsgs");
	}
	/* ns2: a raw socket sees every DLCP packet on ns2's hosts */
	raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	if (raw < 0)
		die("raw socket in ns2");
	for (k = 0; k < 2; k++) {
		ns_enter(ns[k]);
		/* it lists bound sockets */
		check(sockets_has(ino_of(rcv[k])) && sockets_has(ino_of(snd[k])),
		      "ns%d: /proc/net/dlcp/sockets misses its own sockets",
		      k + 1);
		check(!sockets_has(ino_of(rcv[!k])) &&
		      !sockets_has(ino_of(snd[!k])),
		      "ns%d: /proc/net/dlcp/sockets lists the other netns's "
		      "sockets", k + 1);
	}
	ns_enter(self);
	/* the sockets keep their netns whatever the thread's is now */
	send_tag(snd[0], "127.0.0.1", 7900, tag[0]);
	send_tag(snd[1], "127.0.0.1", 7900, tag[1]);
	for (k = 0; k < 2; k++) {
		collect(rcv[k], got, sizeof(got), 1.0);
		printf("ns%d receiver got [%s]\n", k + 1, got);
		check(!strcmp(got, tag[k]), "ns%d receiver got [%s], want [%s]",
		      k + 1, got, tag[k]);
	}
	end = now() + 0.5;
	while (now() < end) {
		ssize_t n = recv(raw, pkt, sizeof(pkt), MSG_DONTWAIT);

		if (n < 0) {
			usleep(20000);
			continue;
		}
		seen++;
		if (memmem(pkt, (size_t)n, tag[0], strlen(tag[0])))
			foreign++;
	}
	printf("raw socket in ns2: %lu packets, %lu carrying ns1's message\n",
	       seen, foreign);
	check(seen > 0, "the raw socket in ns2 saw none of ns2's packets");
	check(!foreign, "the raw socket in ns2 saw ns1's message");
	for (k = 0; k < 2; k++) {
		ns_enter(ns[k]);
		in1[k] = snmp_val("DlcpInMsgs");
		printf("ns%d DlcpInMsgs +%lld\n", k + 1, in1[k] - in0[k]);
		check(in1[k] - in0[k] == 1, "ns%d: DlcpInMsgs +%lld, want +1",
		      k + 1, in1[k] - in0[k]);
	}
	ns_enter(self);
	return fails ? 1 : 0;
}

/* --------------------------------------------------------------- wire */

static int udp_mode, lossy_link;
static unsigned long nr_type[8], nr_gaps, nr_bad_payload, nr_super;

static uint8_t pattern_byte(uint32_t tensor, uint32_t off)
{
	return (uint8_t)((off * 131 + tensor * 7 + (off >> 8)) | 1);
}

/*
 * Whether the UDP checksum of the datagram @u holds for its DLCP packet
 * @d (@dl bytes, DLCP pseudo-header sum @pseudo) once the DLCP checksum is
 * filled in, as the device (or nobody, on loopback) completes it: the UDP
 * one is derived from it before it is (local checksum offload).
 */
static int udp_csum_ok(const struct iphdr *ip, const uint8_t *u,
		       const uint8_t *d, size_t dl, uint32_t pseudo)
{
	static uint8_t pkt[65536];
	uint32_t sum;

	memcpy(pkt, d, dl);
	dlcp_pkt_set_csum(pkt, dl, pseudo);
	sum = dlcp_csum_pseudo4(ip->saddr, ip->daddr, IPPROTO_UDP,
				(uint16_t)(dl + 8));
	sum = dlcp_csum_add(sum, u, 8);
	sum = dlcp_csum_add(sum, pkt, dl);
	return dlcp_csum_fold(sum) == 0xffff;
}

static void check_packet(const uint8_t *p, ssize_t n)
{
	const struct iphdr *ip = (const void *)p;
	const uint8_t *d, *u = NULL;
	size_t ihl, dl, one;
	uint32_t pseudo, segs;
	unsigned int type, hl;
	int summed;
	/* a PROBE is padded to the REPORT it asks for, with zeros */
	static const unsigned int hdr_len[] = {
		0, DLCP_DATA_HDR_LEN, DLCP_REPORT_HDR_LEN, DLCP_STOP_HDR_LEN,
		DLCP_PROBE_PAD_LEN, DLCP_PROBE_HDR_LEN,
	};

	if (n < (ssize_t)sizeof(*ip))
		return;
	ihl = ip->ihl * 4u;
	check(ntohs(ip->tot_len) == n, "IP length %u, captured %zd",
	      ntohs(ip->tot_len), n);
	if (udp_mode) {
		u = p + ihl;
		if (ip->protocol != IPPROTO_UDP || n < (ssize_t)ihl + 8 ||
		    dlcp_get16(u + 2) != DLCP_UDP_PORT)
			return;
		check(dlcp_get16(u + 4) == n - ihl, "UDP length %u, packet %zu",
		      dlcp_get16(u + 4), n - ihl);
		check(dlcp_get16(u + 6) != 0, "UDP checksum zero");
		ihl += 8;
	} else if (ip->protocol != IPPROTO_DLCP) {
		return;
	}
	d = p + ihl;
	dl = (size_t)n - ihl;
	if (dl < DLCP_HDR_LEN) {
		check(0, "DLCP packet of %zu bytes", dl);
		return;
	}
	type = d[4] & 15;
	check((d[4] >> 4) == DLCP_VERSION, "version %u", d[4] >> 4);
	check(type >= 1 && type <= 5, "type %u", type);
	if (type < 1 || type > 5)
		return;
	nr_type[type]++;
	check(!(d[5] & ~DLCP_HF_ALL), "type %u: unknown flags %#x", type, d[5]);
	/*
	 * A super-packet (net.dlcp.gso, udp_gso) passes loopback whole: the
	 * header of its first packet, then the payload of all of them
	 */
	segs = dlcp_wire_gso_segs(d, (uint32_t)dl);
	check(segs, "type %u: length field %u, packet %zu", type,
	      dlcp_get16(d + 8), dl);
	nr_super += segs > 1;
	one = segs > 1 ? dlcp_get16(d + 8) : dl;
	hl = hdr_len[type];
	check(d[6] * 4u == hl, "type %u: header words %u, want %u", type,
	      d[6], hl / 4);
	pseudo = dlcp_csum_pseudo4(ip->saddr, ip->daddr, IPPROTO_DLCP,
				   (uint16_t)one);
	/*
	 * Packets sent on this host leave with the checksum offloaded, native
	 * or inside UDP: a raw socket here sees the pseudo-header sum that
	 * the device completes (loopback needs none), as a capture sees
	 * TCP's; a super-packet's is its first packet's, for each packet cut
	 * from it.
	 */
	summed = segs == 1 && dlcp_pkt_csum_ok(d, dl, pseudo);
	check(summed || dlcp_get16(d + 10) == dlcp_csum_fold(pseudo),
	      "type %u: bad checksum %#x", type, dlcp_get16(d + 10));
	/*
	 * Inside UDP, a super-packet's UDP sum is the pseudo-header sum of
	 * the whole datagram. So is that of a packet cut from one where the
	 * device sums UDP's: loopback takes no encapsulated GSO packet, so it
	 * cuts UDP mode's super-packets, and sums their DLCP packets in
	 * software. A packet sent alone has UDP's derived from DLCP's.
	 */
	if (u)
		check((segs == 1 && udp_csum_ok(ip, u, d, dl, pseudo)) ||
		      ((segs > 1 || summed) && dlcp_get16(u + 6) ==
		      dlcp_csum_fold(dlcp_csum_pseudo4(ip->saddr, ip->daddr,
						       IPPROTO_UDP,
						       (uint16_t)(dl + 8)))),
		      "type %u: UDP checksum %#x wrong (%u packets)", type,
		      dlcp_get16(u + 6), segs);
	if (dl < hl) {
		check(0, "type %u: %zu bytes, shorter than its header", type, dl);
		return;
	}
	switch (type) {
	case DLCP_T_DATA: {
		uint32_t off = dlcp_get32(d + 20), tensor = dlcp_get32(d + 24);
		size_t i;

		check(d[39] == 0, "DATA reserved %#x", d[39]);
		check(dlcp_get16(d + 42) == 0, "DATA reserved2 %#x",
		      dlcp_get16(d + 42));
		check(!(dlcp_get16(d + 40) & ~DLCP_MSG_FLAGS_SEND),
		      "DATA msg_flags %#x", dlcp_get16(d + 40));
		check(dl > hl, "DATA without payload");
		/* the tensors of this test carry pattern_byte() */
		if (tensor >= 100 && tensor < 200) {
			for (i = hl; i < dl; i++) {
				if (d[i] == pattern_byte(tensor,
							 off + (uint32_t)(i - hl)))
					continue;
				if (nr_bad_payload++ < 3)
					check(0, "DATA tensor %u: byte %zu of "
					      "the message is %#x, want %#x",
					      tensor, off + i - hl, d[i],
					      pattern_byte(tensor, off +
							   (uint32_t)(i - hl)));
				else
					fails++;
				break;
			}
		}
		break;
	}
	case DLCP_T_REPORT: {
		uint32_t ng = dlcp_get16(d + 36), scan_end = dlcp_get32(d + 24);
		uint32_t i, prev = 0;

		check(d[39] == 0, "REPORT reserved %#x", d[39]);
		check(!(d[38] & ~DLCP_RF_ALL), "REPORT rflags %#x", d[38]);
		check(dl == hl + ng * 8u, "REPORT of %zu bytes with %u gaps",
		      dl, ng);
		for (i = 0; i < ng && hl + i * 8u + 8 <= dl; i++) {
			uint32_t s = dlcp_get32(d + hl + i * 8),
				 e = dlcp_get32(d + hl + i * 8 + 4);

			check(s >= prev && s < e && e <= scan_end,
			      "REPORT gap %u [%u, %u) (previous end %u, "
			      "scan_end %u)", i, s, e, prev, scan_end);
			prev = e;
		}
		nr_gaps += ng;
		break;
	}
	case DLCP_T_PROBE:
		check(dl == hl, "PROBE: %zu bytes, want %u", dl, hl);
		check(all_zero(d + DLCP_PROBE_HDR_LEN, hl - DLCP_PROBE_HDR_LEN),
		      "PROBE padding not zero");
		break;
	default:	/* STOP, ABORT: no payload */
		check(dl == hl, "type %u: %zu bytes, want %u", type, dl, hl);
		break;
	}
}

static void raw_drain(int raw)
{
	static uint8_t buf[65536 + 1024];
	ssize_t n;

	while ((n = recv(raw, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		check_packet(buf, n);
}

static int cmd_wire(void)
{
	struct sockaddr_in to = sa("127.0.0.1", PORT);
	struct linger lg = { 1, 0 };
	int raw, rcv, snd, snd2, i, one = 1, enc = DLCP_ENCAP_UDP;
	static uint8_t buf[MAXMSG];
	double end;
	char ctl[256];

	raw = socket(AF_INET, SOCK_RAW, udp_mode ? IPPROTO_UDP : IPPROTO_DLCP);
	if (raw < 0)
		die("raw socket");
	/* room for every packet of a message (root: past rmem_max) */
	setsockopt(raw, SOL_SOCKET, SO_RCVBUFFORCE, &(int){ 64 << 20 },
		   sizeof(int));
	rcv = bound("127.0.0.1", PORT);
	snd = dlcp_socket();
	snd2 = dlcp_socket();
	if (udp_mode &&
	    (setsockopt(snd, SOL_DLCP, DLCP_ENCAP, &enc, sizeof(enc)) ||
	     setsockopt(snd2, SOL_DLCP, DLCP_ENCAP, &enc, sizeof(enc))))
		die("DLCP_ENCAP UDP");
	setsockopt(snd, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one));

	/* transfers: 8 messages of up to 1 MiB, each byte checkable */
	for (i = 0; i < 8; i++) {
		struct dlcp_send_info si = { .tensor_id = 100 + (uint32_t)i,
					     .iteration = 1, .layer = 2 };
		size_t len = i == 0 ? 1 : (size_t)(MAXMSG >> (i & 3)) - 3 * i;
		struct iovec iov = { buf, len };
		struct msghdr mh = { .msg_name = &to,
				     .msg_namelen = sizeof(to),
				     .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl };
		struct cmsghdr *c;
		size_t k;

		for (k = 0; k < len; k++)
			buf[k] = pattern_byte(si.tensor_id, (uint32_t)k);
		memset(ctl, 0, sizeof(ctl));
		mh.msg_controllen = CMSG_SPACE(sizeof(si));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEND;
		c->cmsg_len = CMSG_LEN(sizeof(si));
		memcpy(CMSG_DATA(c), &si, sizeof(si));
		if (sendmsg(snd, &mh, 0) != (ssize_t)len)
			die("sendmsg");
		end = now() + 30;
		while (now() < end) {
			struct pollfd p = { .fd = rcv, .events = POLLIN };

			raw_drain(raw);
			if (poll(&p, 1, 20) > 0 &&
			    recv(rcv, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
				break;
		}
		check(now() < end, "message %d (%zu bytes) not received", i, len);
	}
	/*
	 * A message to a port nobody bound: retransmissions, maybe PROBEs,
	 * then ABORT when it gives up (msg_timeout_ms) or on close. An ABORT
	 * is sent once and a lossy link may drop it: try a few messages.
	 */
	for (i = 0; i < 4 && !nr_type[DLCP_T_ABORT]; i++) {
		if (i) {
			snd2 = dlcp_socket();
			if (udp_mode && setsockopt(snd2, SOL_DLCP, DLCP_ENCAP,
						   &enc, sizeof(enc)))
				die("DLCP_ENCAP UDP");
		}
		send_tag(snd2, "127.0.0.1", PORT + 9, "probe me");
		end = now() + 5;
		while (now() < end && !nr_type[DLCP_T_ABORT]) {
			raw_drain(raw);
			usleep(20000);
		}
		setsockopt(snd2, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(snd2);
		end = now() + 2;
		while (now() < end && !nr_type[DLCP_T_ABORT]) {
			raw_drain(raw);
			usleep(20000);
		}
	}
	usleep(200000);
	raw_drain(raw);
	printf("%s: DATA %lu (%lu super-packets), REPORT %lu (%lu gaps), "
	       "STOP %lu, PROBE %lu, ABORT %lu packets checked\n",
	       udp_mode ? "UDP" : "native", nr_type[1], nr_super, nr_type[2],
	       nr_gaps, nr_type[3], nr_type[4], nr_type[5]);
	/* REPORTs come with loss (gaps); PROBEs only when reports stop */
	for (i = 1; i <= 5; i++)
		if (i != DLCP_T_PROBE && (i != DLCP_T_REPORT || lossy_link))
			check(nr_type[i] > 0, "no packet of type %d seen", i);
	if (lossy_link)
		check(nr_gaps > 0, "no REPORT with gaps under loss");
	close(snd);
	close(rcv);
	close(raw);
	return fails ? 1 : 0;
}

/* --------------------------------------------------------------- user */

/* Check the cmsgs of a recvmsg() whose control buffer was 0xAA. */
static void check_cmsgs(struct msghdr *mh, const uint8_t *ctl, size_t ctlsize,
			const uint8_t *data, ssize_t n, int *lossy)
{
	struct cmsghdr *c;
	size_t used = 0;
	uint32_t nr_lost = 0, ranges = 0;

	check(!(mh->msg_flags & MSG_CTRUNC), "MSG_CTRUNC with %zu bytes of "
	      "control buffer", ctlsize);
	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t dlen = c->cmsg_len - CMSG_LEN(0);
		const uint8_t *pad = (const uint8_t *)c + c->cmsg_len;
		size_t padlen = CMSG_SPACE(dlen) - CMSG_LEN(dlen);

		used = (size_t)((const uint8_t *)c - ctl) + CMSG_SPACE(dlen);
		check(c->cmsg_level == SOL_DLCP, "cmsg level %d", c->cmsg_level);
		/* put_cmsg() leaves the alignment padding as it was */
		if ((size_t)(pad - ctl) + padlen <= mh->msg_controllen)
			check(all_fill(pad, padlen), "cmsg type %d: padding "
			      "after %zu bytes changed", c->cmsg_type, dlen);
		if (c->cmsg_type == DLCP_CMSG_RECV) {
			struct dlcp_recv_info ri;

			check(dlen == sizeof(ri), "DLCP_CMSG_RECV of %zu bytes",
			      dlen);
			memcpy(&ri, CMSG_DATA(c), sizeof(ri));
			check(ri.reserved0 == 0 && ri.reserved[0] == 0 &&
			      ri.reserved[1] == 0, "DLCP_CMSG_RECV reserved "
			      "%#x %#x %#x", ri.reserved0, ri.reserved[0],
			      ri.reserved[1]);
			check(ri.msg_len == (uint32_t)n, "recv info msg_len %u, "
			      "got %zd", ri.msg_len, n);
			check(ri.status <= DLCP_RECV_LOSSY, "status %u",
			      ri.status);
			check(ri.tensor_id == 42 && ri.iteration == 7 &&
			      ri.layer == 3, "metadata %u/%u/%u, sent 42/7/3",
			      ri.tensor_id, ri.iteration, ri.layer);
			nr_lost = ri.nr_lost_ranges;
			*lossy += ri.status == DLCP_RECV_LOSSY;
		} else if (c->cmsg_type == DLCP_CMSG_LOST) {
			const uint8_t *p = CMSG_DATA(c);
			uint32_t i, prev = 0;

			check(dlen % sizeof(struct dlcp_range) == 0,
			      "DLCP_CMSG_LOST of %zu bytes", dlen);
			ranges = (uint32_t)(dlen / sizeof(struct dlcp_range));
			for (i = 0; i < ranges; i++) {
				struct dlcp_range r;

				memcpy(&r, p + i * sizeof(r), sizeof(r));
				check(r.len && r.offset >= prev &&
				      r.offset + r.len <= (uint32_t)n,
				      "lost range %u [%u, +%u)", i, r.offset,
				      r.len);
				if (r.len && r.offset + r.len <= (uint32_t)n)
					check(all_zero(data + r.offset, r.len),
					      "lost range [%u, +%u) not zero",
					      r.offset, r.len);
				prev = r.offset + r.len;
			}
		} else {
			check(0, "unexpected cmsg type %d", c->cmsg_type);
		}
	}
	check(ranges == nr_lost, "%u lost ranges in DLCP_CMSG_LOST, recv info "
	      "says %u", ranges, nr_lost);
	check(all_fill(ctl + mh->msg_controllen, ctlsize - mh->msg_controllen),
	      "control buffer written past msg_controllen %zu",
	      (size_t)mh->msg_controllen);
	check(used <= mh->msg_controllen || !used, "cmsgs end at %zu, "
	      "msg_controllen %zu", used, (size_t)mh->msg_controllen);
}

static void check_name(const void *p, socklen_t len, const char *what)
{
	const struct sockaddr_in *s = p;

	check(len == sizeof(*s), "%s: length %u", what, len);
	check(s->sin_family == AF_INET, "%s: family %u", what, s->sin_family);
	check(all_zero(s->sin_zero, sizeof(s->sin_zero)), "%s: sin_zero not "
	      "zero", what);
	check(all_fill((const uint8_t *)p + sizeof(*s), 128 - sizeof(*s)),
	      "%s: written past the sockaddr_in", what);
}

static int cmd_user(void)
{
	struct sockaddr_in to = sa("127.0.0.1", PORT);
	static uint8_t buf[MAXMSG + 4096], ctl[65536];
	uint8_t name[128], opt[64];
	int rcv, snd, i, one = 1, lossy = 0, nmsg = 24, got = 0, compl = 0;
	int failed = 0;
	socklen_t l;
	double end;

	rcv = bound("127.0.0.1", PORT);
	snd = dlcp_socket();
	setsockopt(snd, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one));
	if (connect(snd, (void *)&to, sizeof(to)))
		die("connect");

	for (i = 0; i < nmsg; i++) {
		struct dlcp_send_info si = {
			.tensor_id = 42, .iteration = 7, .layer = 3,
			.flags = DLCP_MSG_HAS_BUDGET | DLCP_MSG_HAS_LAYER,
			.loss_budget_ppm = i % 2 ? 200000 : 0,
		};
		size_t len = 1 + (size_t)(i * 37813) % (256 << 10);
		struct iovec iov = { buf, len };
		uint8_t sctl[CMSG_SPACE(sizeof(si))];
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = sctl,
				     .msg_controllen = sizeof(sctl) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		memset(buf, 0x5a, len);
		memset(sctl, 0, sizeof(sctl));
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEND;
		c->cmsg_len = CMSG_LEN(sizeof(si));
		memcpy(CMSG_DATA(c), &si, sizeof(si));
		if (sendmsg(snd, &mh, 0) != (ssize_t)len)
			die("sendmsg");
	}
	end = now() + 60;
	while ((got < nmsg - failed || compl < nmsg) && now() < end) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_name = name,
				     .msg_namelen = sizeof(name),
				     .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		struct pollfd p[2] = { { .fd = rcv, .events = POLLIN },
				       { .fd = snd, .events = 0 } };
		ssize_t n;

		poll(p, 2, 50);
		memset(buf, FILL, sizeof(buf));
		memset(ctl, FILL, sizeof(ctl));
		memset(name, FILL, sizeof(name));
		n = recvmsg(rcv, &mh, MSG_DONTWAIT);
		if (n >= 0) {
			got++;
			check_name(name, mh.msg_namelen, "recvmsg msg_name");
			check(all_fill(buf + n, sizeof(buf) - (size_t)n),
			      "recvmsg wrote past the %zd-byte message", n);
			check_cmsgs(&mh, ctl, sizeof(ctl), buf, n, &lossy);
		}
		/* completions on the sender's error queue */
		memset(buf, FILL, 256);
		memset(ctl, FILL, 4096);
		mh = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = ctl,
				      .msg_controllen = 4096 };
		iov.iov_len = 256;
		n = recvmsg(snd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
		if (n >= 0) {
			struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
			struct sock_extended_err ee;

			compl++;
			check(n == sizeof(struct dlcp_completion),
			      "completion of %zd bytes", n);
			if (n == sizeof(struct dlcp_completion)) {
				struct dlcp_completion dc;

				memcpy(&dc, buf, sizeof(dc));
				check(dc.status <= DLCP_DONE_TIMEOUT,
				      "completion status %u", dc.status);
				/* never delivered: the receiver gave up */
				failed += dc.status >= DLCP_DONE_DEADLINE;
			}
			check(all_fill(buf + n, 256 - (size_t)n),
			      "completion: written past %zd bytes", n);
			check(c && c->cmsg_level == SOL_DLCP &&
			      c->cmsg_type == DLCP_CMSG_COMPLETION,
			      "completion without DLCP_CMSG_COMPLETION");
			if (!c)
				continue;
			check(c->cmsg_len >= CMSG_LEN(sizeof(ee)),
			      "DLCP_CMSG_COMPLETION of %zu bytes",
			      (size_t)c->cmsg_len);
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			check(ee.ee_origin == SO_EE_ORIGIN_LOCAL && !ee.ee_type &&
			      !ee.ee_code && !ee.ee_pad, "sock_extended_err "
			      "origin %u type %u code %u pad %u", ee.ee_origin,
			      ee.ee_type, ee.ee_code, ee.ee_pad);
			if (c->cmsg_len > CMSG_LEN(sizeof(ee))) {
				/* an offender address, as IP_RECVERR has */
				size_t extra = c->cmsg_len - CMSG_LEN(sizeof(ee));

				printf("DLCP_CMSG_COMPLETION has %zu bytes after "
				       "the sock_extended_err\n", extra);
				if (extra >= sizeof(struct sockaddr_in))
					check(all_zero(((struct sockaddr_in *)
							(CMSG_DATA(c) + sizeof(ee)))->sin_zero,
						       8), "offender sin_zero");
			}
			check(all_fill(ctl + mh.msg_controllen,
				       4096 - mh.msg_controllen),
			      "error queue: control written past "
			      "msg_controllen");
		}
	}
	printf("%d messages received (%d lossy), %d completions (%d failed)\n",
	       got, lossy, compl, failed);
	/*
	 * A loaded host can time a message out (msg_timeout_ms): its sender
	 * learns it failed and its receiver never delivers it. Every other
	 * message must be received, and most must get through.
	 */
	check(compl == nmsg && got == nmsg - failed && failed < nmsg / 2,
	      "%d of %d messages, %d completions, %d failed", got, nmsg,
	      compl, failed);

	/* getsockopt: nothing past optlen */
	for (i = 1; i <= DLCP_ENCAP; i++) {
		memset(opt, FILL, sizeof(opt));
		l = sizeof(opt);
		if (getsockopt(snd, SOL_DLCP, i, opt, &l)) {
			printf("getsockopt(SOL_DLCP, %d): %s\n", i,
			       strerror(errno));
			continue;
		}
		check(l == sizeof(int), "getsockopt(SOL_DLCP, %d): optlen %u",
		      i, l);
		check(all_fill(opt + l, sizeof(opt) - l),
		      "getsockopt(SOL_DLCP, %d) wrote past optlen %u", i, l);
	}
	memset(name, FILL, sizeof(name));
	l = sizeof(name);
	if (getsockname(snd, (void *)name, &l))
		die("getsockname");
	check_name(name, l, "getsockname");
	memset(name, FILL, sizeof(name));
	l = sizeof(name);
	if (getpeername(snd, (void *)name, &l))
		die("getpeername");
	check_name(name, l, "getpeername");
	memset(name, FILL, sizeof(name));
	l = sizeof(name);
	if (getsockname(rcv, (void *)name, &l))
		die("getsockname");
	check_name(name, l, "getsockname (bound)");
	close(snd);
	close(rcv);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "deliver"))
		rc = cmd_deliver();
	else if (argc >= 4 && !strcmp(argv[1], "nsiso"))
		rc = cmd_nsiso(argv[2], argv[3]);
	else if (argc >= 2 && !strcmp(argv[1], "wire")) {
		for (int k = 2; k < argc; k++) {
			udp_mode |= !strcmp(argv[k], "--udp");
			lossy_link |= !strcmp(argv[k], "--lossy");
		}
		rc = cmd_wire();
	} else if (argc >= 2 && !strcmp(argv[1], "user"))
		rc = cmd_user();
	else {
		fprintf(stderr, "usage: dlcp_sec deliver | nsiso NS1 NS2 | "
			"wire [--udp] [--lossy] | user\n");
		return 2;
	}
	if (fails)
		printf("%d check(s) failed\n", fails);
	return rc;
}
