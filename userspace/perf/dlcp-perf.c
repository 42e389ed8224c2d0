// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp-perf - message-oriented benchmark for DLCP, with TCP for comparison.
 *
 *   dlcp-perf server [--port P] [--proto dlcp|tcp] [--encap native|udp] [--json]
 *                    [--threads N] [--no-ack]
 *   dlcp-perf client HOST [--port P] --proto dlcp|tcp
 *                    (--size BYTES | --sizes A,B,C) (--count N | --duration S)
 *                    (--count N --duration S: stop at whichever comes first)
 *                    [--concurrency K] [--layer L] [--budget PPM] [--prio C]
 *                    [--encap native|udp] [--senders N] [--id N]
 *                    [--timeout S] [--no-ack] [--json] [--samples]
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
 * error queue, i.e. the receiver's STOP arriving) as sender_ct. With
 * --no-ack (client and server) the server sends no ACKs and the client
 * counts a message acknowledged at its completion, as a DLCP application
 * learns of delivery; CT is then the sender-side one ("completion").
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
 *
 * This file: the options and main; the rest is in server.c, client.c,
 * report.c and common.c (perf.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dlcp.h>

#include "dlcp_cli.h"
#include "perf.h"

/* the longest --duration and --timeout: a day */
#define MAX_SECONDS	(24 * 3600.0)

struct perf_opts opt = {
	.proto = P_DLCP,
	.port = DEFAULT_PORT,
	.concurrency = 1,
	.layer = -1,
	.budget = -1,
	.prio = -1,
	.encap = -1,
	.senders = 1,
	.timeout = 60,
	.threads = 1,
};

#ifndef DLCP_RELEASE
#define DLCP_RELEASE	"unknown"
#endif

const char *prog = "dlcp-perf";

/* to stdout with status 0 for --help, else to stderr with status 2 */
static void usage_exit(FILE *f, int status)
{
	fprintf(f,
"usage: %s server [--port P] [--proto dlcp|tcp] [--encap native|udp] [--json]\n"
"                 [--threads N] [--no-ack] [--verbose]\n"
"       %s client HOST [--port P] --proto dlcp|tcp\n"
"                 (--size BYTES | --sizes A,B,...) (--count N | --duration S | both)\n"
"                 [--concurrency K] [--layer L] [--budget PPM] [--prio C]\n"
"                 [--encap native|udp] [--senders N] [--id N] [--timeout S]\n"
"                 [--no-ack] [--json] [--samples]\n"
"sizes take k/m/g suffixes (KiB/MiB/GiB); default port %d; --timeout (default 60 s)\n"
"bounds the wait for any ACK. Message completion time = receiver recvmsg()\n"
"return - sender sendmsg() start, CLOCK_MONOTONIC (same machine).\n"
"       %s -h|--help | -V|--version\n"
"See dlcp-perf(1).\n",
		prog, prog, DEFAULT_PORT, prog);
	exit(status);
}

void usage(void)
{
	usage_exit(stderr, 2);
}

static void version(void)
{
	printf("%s (DLCP) %s\n", prog, DLCP_RELEASE);
	exit(0);
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

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
		opt.sizes[opt.nsizes++] = dlcp_cli_size("--sizes", tok, 1,
							 MAX_MSG);
	}
	free(dup);
	if (!opt.nsizes)
		bad_opt("empty --sizes");
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
		{ "threads", required_argument, NULL, 'r' },
		{ "no-ack", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:P:s:S:n:t:k:l:b:c:i:e:N:T:r:ajAvhV",
				longopts, NULL)) != -1) {
		if (c > 0 && strchr(client ? "r" : "sSntklbciNTA", c)) {
			const struct option *o = longopts;

			while (o->name && o->val != c)
				o++;
			bad_opt("option --%s is for the %s only",
				o->name ? o->name : "?",
				client ? "server" : "client");
		}
		switch (c) {
		case 'p':
			opt.port = (uint16_t)dlcp_cli_uint("--port", optarg, 1, 65535);
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
			opt.sizes[0] = dlcp_cli_size("--size", optarg, 1,
						     MAX_MSG);
			break;
		case 'S':
			parse_sizes(optarg);
			break;
		case 'n':
			opt.count = dlcp_cli_uint("--count", optarg, 1, 100000000);
			break;
		case 't':
			opt.duration = dlcp_cli_positive("--duration", optarg,
							 MAX_SECONDS);
			break;
		case 'k':
			opt.concurrency = (unsigned int)dlcp_cli_uint("--concurrency",
							     optarg, 1, 1024);
			break;
		case 'l':
			opt.layer = (int)dlcp_cli_uint("--layer", optarg, 0,
						       65535);
			break;
		case 'b':
			opt.budget = (long)dlcp_cli_uint("--budget", optarg, 0,
							 DLCP_PPM_MAX);
			break;
		case 'c':
			opt.prio = (int)dlcp_cli_uint("--prio", optarg, 0, 7);
			break;
		case 'i':
			opt.id = (uint32_t)dlcp_cli_uint("--id", optarg, 0,
							 0x7fffffff);
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
			opt.senders = (unsigned int)dlcp_cli_uint("--senders",
								  optarg, 1, 256);
			break;
		case 'T':
			opt.timeout = dlcp_cli_positive("--timeout", optarg,
							MAX_SECONDS);
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
		case 'a':
			opt.no_ack = true;
			break;
		case 'r':
			opt.threads = (unsigned int)dlcp_cli_uint("--threads",
								  optarg, 1, 256);
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
		     opt.encap >= 0 || opt.no_ack))
			bad_opt("--budget, --layer, --prio, --encap and --no-ack are DLCP options");
#ifndef DLCP_MSG_HAS_PRIO
		if (opt.prio >= 0)
			bad_opt("--prio: this uapi header has no DLCP_MSG_HAS_PRIO");
#endif
	} else if (optind != argc) {
		bad_opt("unexpected argument '%s'", argv[optind]);
	} else if (opt.proto == P_TCP &&
		   (opt.encap >= 0 || opt.threads > 1 || opt.no_ack)) {
		bad_opt("--encap, --threads and --no-ack are DLCP options");
	}
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
