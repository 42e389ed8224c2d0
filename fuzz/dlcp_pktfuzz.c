// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pktfuzz: inject valid and mutated DLCP packets into a DLCP socket
 * in another network namespace, and check that the receiver accounts for
 * every one of them; and, from a third namespace, the attacks of an
 * off-path host, while a well-behaved pair must keep working.
 *
 *   dlcp_pktfuzz --target-ns NS --src A --dst B [--port P] [--avoid-port Q]
 *		  [--count N] [--seed S] [--rate PPS] [--settle-file F]
 *		  [--settle S] [--done-file F2] [--ranges N] [--udp] [-v]
 *		  [--attacker-ns NS_C [--observer O] [--pair-src S]
 *		   [--spoof N] [--flood N] [--slow N [--slow-rounds R]
 *		   [--slow-interval MS]]]
 *
 * Run in the injecting namespace (ip netns exec NS_A). From there it
 * enters NS (setns) to open the target: a DLCP socket bound to B:P, which
 * also sends small messages of its own back to A (so that injected
 * REPORT/STOP packets can name messages that exist), and to read NS's
 * /proc/net/dlcp/snmp before and after.
 *
 * From SEED it builds N packets of every type with dlcp_pkt (DATA,
 * REPORT, STOP, PROBE, ABORT; for messages it keeps alive over several
 * packets, and for the target's own outgoing messages, learnt from a raw
 * socket), mutates most of them (bit flips, truncation, extension, field
 * boundary values: offsets at msg_len, msg_len 0/1/huge, doff 0/255, ngaps
 * mismatches, huge gap counts, unknown flags/version/type, wrong checksums;
 * most mutated packets get a valid checksum again so that they reach the
 * deeper paths) and sends them with a raw IPPROTO_DLCP socket (the kernel
 * writes the IP header), at most PPS packets a second.
 *
 * For every packet it predicts what the receiver must do, with the same
 * dlcp_wire_check() and the checksum: the drop reason, or the socket and
 * type handler it reaches. Packets to port Q (a real transfer's receiver)
 * are only ever ones that must be dropped before the socket lookup.
 *
 * When the injection is over it creates F2 (if given). After the run
 * (and after F exists, if given: the script creates it when
 * its real transfer is over) it waits until NS's DlcpInPkts is still for a
 * second, then checks:
 *   1. for each reason dlcp_wire_check() finds, and DlcpInCsumErrors, the
 *      counter's delta equals the number predicted (real traffic is never
 *      malformed);
 *   2. DlcpDropNoSocket grew by at least the number predicted, and each
 *      type's receive counter by at least the packets predicted to reach
 *      it, and at most by those and the packets of that type this
 *      namespace's sockets sent (less those the attacker's namespace got);
 *   3. DlcpInPkts delta == the drops before dispatch (reasons, checksum,
 *      no socket, closed, not host, nomem) + the packets dispatched (DATA,
 *      REPORT, STOP, PROBE, ABORT counters): every packet counted once;
 *   4. DlcpInPkts delta == packets injected + DlcpOutPkts delta of this
 *      namespace (the real transfer's sender lives here): every injected
 *      packet reached the host; and this namespace's DlcpInPkts delta ==
 *      the target namespace's DlcpOutPkts delta;
 *   5. every lost range (DLCP_CMSG_LOST) of a message the target delivers
 *      reads as zeros (the payloads injected never hold a zero byte).
 * Prints the counts per mutation and per reason. Exit 0 iff all held.
 *
 * --ranges N: first cut one message into N 1-byte pieces (past the
 * module's limit of ranges per message, 8192, when N > 8192), then
 * complete it by a PROBE: a delivery with thousands of lost ranges.
 *
 * --attacker-ns NS_C with --spoof, --flood or --slow: the attacks
 * (pktfuzz_attack.c says what each sends), from a raw socket in NS_C
 * that writes the IP header (forged sources), interleaved with the N
 * fuzz packets (--count 0: the attacks alone). Alongside, a well-behaved
 * pair (pktfuzz_pair.c): S (this namespace, address --pair-src, default
 * A) sends messages to R (in NS, address B) and to the observer O (in
 * NS_C, address --observer), each checked byte by byte; a thread samples
 * rx_mem and in_msgs of the target socket and R (/proc/net/dlcp/sockets)
 * and DLCP's pages (/proc/net/protocols). When the attacks are over the
 * pair finishes its messages and the target socket and R must free all
 * they hold (within three message timeouts). More checks:
 *   8. the peaks: the target socket's and R's rx_mem within their limit
 *      (max(SO_RCVBUF, net.dlcp.rmem)), the target's in_msgs within
 *      net.dlcp.max_in_msgs (five times that with the fuzz packets: the
 *      delivered ones are remembered besides), DLCP's pages within the
 *      third value of net.dlcp.mem;
 *   9. forged packets: each reached S or R and met no message:
 *      DlcpDropUnknownMsg of S's namespace grew by at least the forged
 *      REPORT/STOP and R's answers to the forged PROBE and DATA, and by
 *      at most that and what legitimate traffic can leave unknown; the
 *      REPORT/STOP S's namespace received are those forged and those R
 *      and O sent (less what found no socket); DlcpIcmpIgnored grew by
 *      the forged ICMP errors, DlcpPmtuUpdates not at all; no message of
 *      S's namespace failed, was lossy or dropped at its deadline; alone
 *      (no fuzz, flood, slowloris) also: DlcpOutMsgsDone == messages
 *      delivered by R's and O's namespaces, R's namespace aborted,
 *      failed and mismatched nothing, and timed out (at least) the
 *      forged messages;
 *  10. the flood: each limit's drop counter (DlcpDropRcvMem, InMsgs,
 *      PeerMsgs) grew where its phase sent more than the limit lets in
 *      within a message timeout; alone also: every flood packet started
 *      a message, answered with a REPORT that found no route back, or
 *      was dropped (DlcpOutNoRoute + the drops == the packets), and the
 *      messages started all timed out (DlcpInMsgsTimeout at least
 *      DlcpOutNoRoute);
 *  11. the slowloris messages: the limits' drop counters grew where
 *      predicted, the target held at least 80% of the messages it may
 *      hold at some moment; alone also: started + dropped <= packets;
 *  12. the pair: every message arrived intact, once, and completed
 *      DLCP_DONE_EXACT.
 *
 * --udp: UDP mode. The target namespace must have its UDP port open
 * (net.dlcp.encap=1; the port is its net.dlcp.udp_port, or --udp-port).
 * Three packets in four then go inside UDP to that port, through a raw
 * IPPROTO_UDP socket that writes the UDP header itself (the rest stay raw
 * IP): UDP checksum zero (allowed in IPv4) or correct, and in a few the
 * UDP layer is broken on purpose: a wrong UDP checksum or a UDP length
 * past the datagram (UDP must drop those: the target's Udp InErrors and
 * InCsumErrors must grow by exactly that many, DLCP must never see them),
 * or a UDP length short of it (UDP trims; DLCP sees the shorter packet).
 * A datagram with a correct UDP checksum has its DLCP checksum taken as
 * verified; one without has it checked. The target's own messages (in UDP, as its namespace is in UDP mode) are
 * learnt from the same raw socket. Further checks:
 *   6. DlcpUdpInPkts delta == packets injected inside UDP that UDP passes
 *      + DlcpUdpOutPkts delta of this namespace;
 *   7. Udp InErrors / InCsumErrors deltas of the target == predicted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pktfuzz.h"

struct pf_opts o = { .port = 7300, .count = 20000, .rate = 2000, .seed = 1,
		     .settle = 60, .slow_rounds = 5 };
int ns_self = -1, ns_target = -1, ns_attacker = -1, ns_init = -1;
uint32_t max_msg;

static int raw = -1, raw_udp = -1, tfd = -1;

static void usage(void)
{
	fprintf(stderr,
		"usage: dlcp_pktfuzz --target-ns NS --src A --dst B [--port P]\n"
		"         [--avoid-port Q] [--count N] [--seed S] [--rate PPS]\n"
		"         [--settle-file F] [--settle SECONDS] [--done-file F2]\n"
		"         [--ranges N] [--udp] [--udp-port P] [-v]\n"
		"         [--attacker-ns NS_C [--observer C] [--pair-src S]\n"
		"          [--spoof N] [--flood N] [--slow N [--slow-rounds R]\n"
		"          [--slow-interval MS]]]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "target-ns", 1, 0, 'n' }, { "src", 1, 0, 's' },
		{ "dst", 1, 0, 'd' }, { "port", 1, 0, 'p' },
		{ "avoid-port", 1, 0, 'a' }, { "count", 1, 0, 'c' },
		{ "seed", 1, 0, 'S' }, { "rate", 1, 0, 'r' },
		{ "settle-file", 1, 0, 'f' }, { "settle", 1, 0, 'w' },
		{ "done-file", 1, 0, 'D' }, { "ranges", 1, 0, 'g' },
		{ "udp", 0, 0, 'u' }, { "udp-port", 1, 0, 'U' },
		{ "verbose", 0, 0, 'v' },
		{ "attacker-ns", 1, 0, 'A' }, { "observer", 1, 0, 'O' },
		{ "pair-src", 1, 0, 'P' }, { "spoof", 1, 0, 'x' },
		{ "flood", 1, 0, 'F' }, { "slow", 1, 0, 'l' },
		{ "slow-rounds", 1, 0, 'L' }, { "slow-interval", 1, 0, 'I' },
		{ 0, 0, 0, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 'n': o.target_ns = optarg; break;
		case 's': o.src = inet_addr(optarg); break;
		case 'd': o.dst = inet_addr(optarg); break;
		case 'p': o.port = (uint16_t)atoi(optarg); break;
		case 'a': o.avoid_port = (uint16_t)atoi(optarg); break;
		case 'c': o.count = strtoul(optarg, NULL, 0); break;
		case 'S': o.seed = strtoull(optarg, NULL, 0); break;
		case 'r': o.rate = strtoul(optarg, NULL, 0); break;
		case 'f': o.settle_file = optarg; break;
		case 'D': o.done_file = optarg; break;
		case 'g': o.ranges = strtoul(optarg, NULL, 0); break;
		case 'w': o.settle = atoi(optarg); break;
		case 'u': o.udp = 1; break;
		case 'U': o.udp_port = (uint16_t)atoi(optarg); break;
		case 'v': o.verbose = 1; break;
		case 'A': o.attacker_ns = optarg; break;
		case 'O': o.observer = inet_addr(optarg); break;
		case 'P': o.pair_src = inet_addr(optarg); break;
		case 'x': o.spoof = strtoul(optarg, NULL, 0); break;
		case 'F': o.flood = strtoul(optarg, NULL, 0); break;
		case 'l': o.slow_msgs = strtoul(optarg, NULL, 0); break;
		case 'L': o.slow_rounds = strtoul(optarg, NULL, 0); break;
		case 'I': o.slow_interval_ms = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!o.target_ns || !o.src || !o.dst)
		usage();
	o.peer_port = o.port + 1;
	if (!o.pair_src)
		o.pair_src = o.src;
}

static int open_ns(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open netns %s", path);
	return fd;
}

/*
 * The target socket, and the raw sockets of the fuzz packets (not
 * without them: a raw IPPROTO_DLCP socket takes ICMP errors about DLCP
 * packets, and lowers the route's path MTU for forged ones too).
 */
static void open_sockets(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = o.src };

	tfd = target_open();
	if (!o.count && !o.ranges)
		return;
	raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	if (raw < 0)
		die("raw socket");
	if (bind(raw, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind raw socket");
	if (!o.udp)
		return;
	raw_udp = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
	if (raw_udp < 0)
		die("raw UDP socket");
	if (bind(raw_udp, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind raw UDP socket");
	if (!o.udp_port)
		o.udp_port = (uint16_t)sysctl_read(ns_target, "udp_port");
	if (sysctl_read(ns_target, "encap") != 1)
		fprintf(stderr, "dlcp_pktfuzz: warning: net.dlcp.encap"
			" is not 1 in %s\n", o.target_ns);
	printf("UDP mode: %d%% of the packets inside UDP to port %u\n",
	       UDP_PCT, o.udp_port);
}

/* One fuzz packet: 1 if it was sent. */
static int fuzz_one(unsigned long i)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = o.dst };
	static uint8_t pkt[MAX_PKT + 64];
	static unsigned long send_err;
	struct fuzz_pkt fp = { .via_udp = o.udp && chance(UDP_PCT) };
	enum outcome out;
	int rc;

	if (i % 64 == 0) {
		raw_drain(raw, raw_udp);
		target_drain(tfd);
		if (chance(40))
			target_send(tfd);
	}
	fuzz_build(pkt, &fp);
	out = predict(pkt, &fp);
	rc = fp.via_udp ? udp_send(raw_udp, pkt, fp.n, fp.um, fp.ulen, &sin) :
	     sendto_retry(raw, pkt, fp.n, &sin);
	if (rc) {
		if (o.verbose || send_err < 5)
			fprintf(stderr, "sendto %zu bytes: %s\n", fp.n,
				strerror(errno));
		send_err++;
		return 0;
	}
	expect[out]++;
	injected[NS_TARGET]++;
	if (fp.via_udp) {
		sent_udp++;
		umut_count[fp.um]++;
		if (out != OUT_UDP_CSUM && out != OUT_UDP_LEN)
			sent_udp_passed++;
	}
	return 1;
}

/* Wait for the script's transfer (--settle-file), then for silence. */
static void settle(void)
{
	struct snmp tmp;
	int64_t last;
	int c;

	if (o.settle_file) {
		struct stat st;
		double until = now() + o.settle;

		while (stat(o.settle_file, &st) && now() < until) {
			raw_drain(raw, raw_udp);
			target_drain(tfd);
			usleep(50000);
		}
	}
	snmp_read(ns_target, &tmp);
	last = snmp_get(&tmp, "DlcpInPkts");
	for (c = 0; c < o.settle * 10; c++) {
		usleep(100000);
		raw_drain(raw, raw_udp);
		target_drain(tfd);
		snmp_read(ns_target, &tmp);
		if (snmp_get(&tmp, "DlcpInPkts") == last && c >= 10)
			break;
		if (snmp_get(&tmp, "DlcpInPkts") != last)
			c = c < 10 ? c : 0;
		last = snmp_get(&tmp, "DlcpInPkts");
	}
}

/* Wait until @due, or until a slowloris packet is due. */
static void pace(double due)
{
	double t;

	while ((t = now()) < due && !attack_slow_due(t))
		usleep(due - t > 0.001 ? 1000 : (useconds_t)((due - t) * 1e6) + 1);
}

/*
 * Inject the fuzz packets and the attacks' (in proportion to what is
 * left of each; slowloris packets when they are due), at most --rate
 * packets a second (slowloris packets aside). Returns the packets sent.
 */
static unsigned long inject(void)
{
	unsigned long fuzz_left = o.count, i = 0, sent = 0, paced = 0;
	double t0 = now(), due;
	int ok;

	for (;;) {
		unsigned long free_left = fuzz_left + attack_free_left();

		if (attack_slow_due(now())) {
			sent += attack_step(1);
			continue;
		}
		if (!free_left) {
			due = attack_next_due();
			if (!due)
				break;
			sleep_until(due);
			continue;
		}
		if (fuzz_left && (!attack_free_left() ||
				  rnd((uint32_t)free_left) < fuzz_left)) {
			fuzz_left--;
			ok = fuzz_one(i++);
		} else {
			ok = attack_step(0);
		}
		if (!ok)
			continue;
		sent++;
		/* rate bound */
		if (o.rate && ++paced % 16 == 0)
			pace(t0 + (double)paced / o.rate);
	}
	return sent;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	unsigned long sent = 0, t_limit = 0;
	struct snap before, after;
	double t_start, t_end;
	int fails, attacks;
	socklen_t sl = sizeof(int);
	int rcvbuf = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	rnd_seed(o.seed);
	ns_self = open("/proc/self/ns/net", O_RDONLY);
	if (ns_self < 0)
		die("open /proc/self/ns/net");
	ns_target = open_ns(o.target_ns);
	if (o.attacker_ns)
		ns_attacker = open_ns(o.attacker_ns);
	ns_init = open("/proc/1/ns/net", O_RDONLY);
	max_msg = (uint32_t)sysctl_read(ns_target, "max_msg_size");
	open_sockets();
	getsockopt(tfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &sl);
	t_limit = (unsigned long)sysctl_read(ns_target, "rmem");
	if ((unsigned long)rcvbuf > t_limit)
		t_limit = (unsigned long)rcvbuf;

	snap_take(&before);
	attacks = !attack_open();
	if (attacks) {
		uint16_t ports[2] = { o.port, attack_r_port() };

		sampler_start(ports, 2);
	}
	t_start = now();
	if (o.ranges) {
		sin.sin_addr.s_addr = o.dst;
		sent += ranges_burst(raw, &sin);
		injected[NS_TARGET] += sent;
		target_drain(tfd);
	}
	sent += inject();
	t_end = now();
	printf("injected %lu packets in %.1f s (%.0f/s); waited %lu times for "
	       "a full device queue\n", sent, t_end - t_start,
	       sent / (t_end - t_start + 1e-9), send_waits);
	if (o.done_file)
		touch_file(o.done_file);
	fails = attacks ? attack_finish(tfd) : 0;
	settle();
	sampler_stop();
	snap_take_quiet(&after);

	printf("target: %lu messages sent, %lu received (%lu with lost ranges),"
	       " %lu completions; %u of its messages learnt\n",
	       tgt.sent, tgt.recv, tgt.lossy, tgt.compl, gen_learnt());
	report_mutations(sent);
	fails += check_fuzz(&before, &after, 1);
	if (attacks)
		fails += attack_check(&before, &after, o.count > 0, t_limit,
				      t_limit);
	attack_close();
	close(tfd);
	if (raw >= 0)
		close(raw);
	if (raw_udp >= 0)
		close(raw_udp);
	printf("%s\n", fails ? "FAIL: see the lines marked above" :
	       attacks ? "every injected packet accounted for, no attack "
	       "took effect, the limits held, the pair kept working" :
	       "every injected packet accounted for, lost ranges zero");
	return fails ? 1 : 0;
}
