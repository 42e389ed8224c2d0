// SPDX-License-Identifier: GPL-2.0
/*
 * dlcpstat - show the DLCP counters of /proc/net/dlcp/snmp, like nstat(8)
 * does for the kernel's SNMP counters.
 *
 *   dlcpstat                 non-zero counters, absolute values
 *   dlcpstat -z              every counter, zeros included
 *   dlcpstat -d              what changed since the last `dlcpstat -d`
 *                            (history file), then remember the current values
 *   dlcpstat -r              reset the history: absolute values, remembered
 *   dlcpstat 1 [COUNT]       every second, what changed during that second
 *   dlcpstat -j [-p] ...     JSON instead of text (-p: indented)
 *   dlcpstat --prometheus    every counter in the Prometheus text format
 *                            (dlcpstat_prom.c)
 *   dlcpstat -N NETNS ...    counters of the named network namespace
 *   dlcpstat ... PATTERN...  only counters matching a shell pattern (with or
 *                            without the "Dlcp" prefix), e.g. 'Drop*'
 *   dlcpstat -S [-4|-6]      the DLCP sockets, one line each, as ss(8) lists
 *                            TCP's: through sock_diag (NETLINK_SOCK_DIAG),
 *                            else from /proc/net/dlcp/sockets
 *   dlcpstat -P [-4|-6]      the destinations of the sockets and the state
 *                            of the path to each (window, RTT)
 *
 * The options nstat(8) has too mean what they mean there (-h, -V, -z, -r,
 * -n, -a, -s, -j, -p), but for -d: nstat's -d runs a daemon, dlcpstat's
 * shows the changes since the last run, which nstat does by default;
 * dlcpstat's default is the absolute values (-a of nstat), so that a look
 * at the counters changes no history file.
 *
 * The history file is $DLCPSTAT_HISTORY, else dlcpstat.history under
 * $XDG_RUNTIME_DIR, else /tmp/.dlcpstat.u<uid>; ".NETNS" is appended for
 * -N NETNS. A counter that went backwards (module reloaded) counts from 0.
 *
 * This file has the command line and the counters view; the listing of
 * -S and -P is in dlcpstat_sock.c.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "dlcp_cli.h"
#include "dlcpstat.h"
#include "dlcpstat_lib.h"
#include "dlcpstat_prom.h"

/* the longest INTERVAL: a day */
#define MAX_INTERVAL	(24 * 3600.0)

enum {
	OPT_NETLINK = 256,
	OPT_PROC,
	OPT_PROMETHEUS,
};

#ifndef DLCP_RELEASE
#define DLCP_RELEASE	"unknown"
#endif

const char *prog = "dlcpstat";

struct dlcpstat_opts opt;

static volatile sig_atomic_t stop;

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [OPTIONS] [INTERVAL [COUNT]] [PATTERN...]\n"
"       %s -S|-P [-4|-6] [-j [-p]] [-N NAME] [--netlink|--proc] [-f FILE]\n"
"Show the DLCP counters of " DLCP_SNMP ", or the DLCP sockets.\n"
"\n"
"  -z, --zeros        show counters that are zero too\n"
"  -d, --delta        show changes since the last -d run (history file)\n"
"  -a, --absolute     with -d: show absolute values (still update history)\n"
"  -r, --reset        reset the history: show absolute values, remember them\n"
"  -s, --no-update    with -d or -r: do not update the history\n"
"  -n, --nooutput     with -d or -r: show nothing, only update the history\n"
"  -j, --json         JSON output\n"
"  -p, --pretty       with -j: indented JSON, one counter (socket) a line\n"
"      --prometheus   every counter (zeros too) in the Prometheus text\n"
"                     format, with a netns label under -N\n"
"  -N, --netns NAME   counters (sockets) of network namespace NAME\n"
"                     (/run/netns/NAME)\n"
"  -f, --file FILE    read counters from FILE instead of " DLCP_SNMP "\n"
"                     (with -S or -P: sockets or peers in the format of\n"
"                     " DLCP_SOCKETS " or " DLCP_PEERS ")\n"
"  -S, --sockets      list the DLCP sockets: state, queues, addresses,\n"
"                     messages, segments in flight, window, RTT, owner\n"
"  -P, --peers        list the destinations of the sockets: messages,\n"
"                     segments in flight, window, RTT, timeouts\n"
"  -4, --ipv4         with -S or -P: only AF_INET sockets\n"
"  -6, --ipv6         with -S or -P: only AF_INET6 sockets\n"
"      --netlink      with -S or -P: through sock_diag only, no fallback\n"
"      --proc         with -S or -P: from " DLCP_SOCKETS " and\n"
"                     " DLCP_PEERS " only\n"
"  -h, --help         this help\n"
"  -V, --version      print the version\n"
"\n"
"Without -d or -r: the absolute values, no history. INTERVAL (seconds)\n"
"prints the changes of every interval, COUNT times or until interrupted;\n"
"they are the first arguments that start with a digit (INTERVAL > 0 and\n"
"at most 86400, COUNT a whole number from 1).\n"
"PATTERNs are shell patterns matched against counter names with or without\n"
"their \"Dlcp\" prefix.\n"
"History file: $DLCPSTAT_HISTORY, else $XDG_RUNTIME_DIR/dlcpstat.history,\n"
"else /tmp/.dlcpstat.u<uid> (\".NETNS\" appended with -N).\n"
"-S and -P ask sock_diag (NETLINK_SOCK_DIAG) for the sockets of protocol\n"
DLCP_IPPROTO " (default 253), and read /proc/net/dlcp\n"
"if the kernel has no sock_diag handler for DLCP. Times are in ms.\n"
"See dlcpstat(8).\n", prog, prog);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int enter_netns(const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	if (setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "%s: setns %s: %s\n", prog, path,
			strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int read_table(const char *path, struct dlcpstat_table *t, bool quiet)
{
	unsigned int bad = 0;
	FILE *f;
	int err;

	f = fopen(path, "r");
	if (!f) {
		if (quiet)
			return -1;
		if (errno == ENOENT && !strcmp(path, DLCP_SNMP))
			fprintf(stderr,
				"%s: %s: not found (is dlcp.ko loaded?)\n",
				prog, path);
		else
			fprintf(stderr, "%s: %s: %s\n", prog, path,
				strerror(errno));
		return -1;
	}
	err = dlcpstat_parse(f, t, &bad);
	fclose(f);
	if (err) {
		if (bad)
			fprintf(stderr, "%s: %s:%u: malformed line\n", prog,
				path, bad);
		else
			fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	return 0;
}

static int read_counters(struct dlcpstat_table *t)
{
	return read_table(opt.input ? opt.input : DLCP_SNMP, t, false);
}

static void history_path(char *buf, size_t len)
{
	const char *env = getenv("DLCPSTAT_HISTORY");
	const char *rt = getenv("XDG_RUNTIME_DIR");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (rt && *rt)
		n = snprintf(buf, len, "%s/dlcpstat.history", rt);
	else
		n = snprintf(buf, len, "/tmp/.dlcpstat.u%u",
			     (unsigned int)getuid());
	if (opt.netns && n >= 0 && (size_t)n < len) {
		const char *base = strrchr(opt.netns, '/');

		snprintf(buf + n, len - (size_t)n, ".%s",
			 base ? base + 1 : opt.netns);
	}
}

/* Write @t to the history file, atomically (temporary file + rename). */
static int write_history(const struct dlcpstat_table *t)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	size_t i;
	FILE *f;
	int fd;

	history_path(path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, tmp, strerror(errno));
		return -1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	fprintf(f, "#dlcpstat history\n");
	for (i = 0; i < t->nr; i++)
		fprintf(f, "%s %llu\n", t->e[i].name,
			(unsigned long long)t->e[i].value);
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static bool selected(const struct dlcpstat_entry *e)
{
	int i;

	if (!opt.zeros && !e->value)
		return false;
	if (!opt.nr_patterns)
		return true;
	for (i = 0; i < opt.nr_patterns; i++) {
		const char *p = opt.patterns[i];

		if (!fnmatch(p, e->name, FNM_CASEFOLD))
			return true;
		if (!strncmp(e->name, "Dlcp", 4) &&
		    !fnmatch(p, e->name + 4, FNM_CASEFOLD))
			return true;
	}
	return false;
}

static void print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* --prometheus: the selected counters, zeros too */
static void print_prometheus(const struct dlcpstat_table *t)
{
	struct dlcpstat_table sel = { 0 };
	const char *netns = NULL;

	if (opt.netns) {
		netns = strrchr(opt.netns, '/');
		netns = netns ? netns + 1 : opt.netns;
	}
	sel.e = malloc((t->nr ? t->nr : 1) * sizeof(*sel.e));
	if (!sel.e) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return;
	}
	opt.zeros = true;
	for (size_t i = 0; i < t->nr; i++)
		if (selected(&t->e[i]))
			sel.e[sel.nr++] = t->e[i];
	dlcpstat_prom_print(stdout, &sel, netns);
	dlcpstat_free(&sel);
}

/* Print @t; @interval > 0 marks an interval report (with a time stamp). */
static void print_table(const struct dlcpstat_table *t, double interval)
{
	bool first = true;
	size_t i;

	if (opt.no_output)
		return;
	if (opt.prometheus) {
		print_prometheus(t);
		return;
	}
	if (opt.json) {
		/* -p: newlines, 2 spaces of indent a level, space after ':' */
		const char *nl = opt.pretty ? "\n" : "";
		const char *in = opt.pretty ? "  " : "";
		const char *sp = opt.pretty ? " " : "";

		if (interval > 0)
			printf("{%s%s\"time\":%s%lld,%s%s\"interval\":%s%g,%s%s\"dlcp\":%s{",
			       nl, in, sp, (long long)time(NULL), nl, in, sp,
			       interval, nl, in, sp);
		else
			printf("{%s%s\"dlcp\":%s{", nl, in, sp);
		for (i = 0; i < t->nr; i++) {
			if (!selected(&t->e[i]))
				continue;
			if (!first)
				putchar(',');
			first = false;
			printf("%s%s", nl, opt.pretty ? "    " : "");
			print_json_string(t->e[i].name);
			printf(":%s%llu", sp, (unsigned long long)t->e[i].value);
		}
		if (opt.pretty)
			printf("\n  }\n}\n");
		else
			printf("}}\n");
	} else {
		if (interval > 0) {
			char ts[32];
			time_t now = time(NULL);
			struct tm tm;

			strftime(ts, sizeof(ts), "%F %T", localtime_r(&now, &tm));
			printf("#dlcpstat %s interval %gs\n", ts, interval);
		}
		for (i = 0; i < t->nr; i++)
			if (selected(&t->e[i]))
				printf("%-32s%llu\n", t->e[i].name,
				       (unsigned long long)t->e[i].value);
	}
	fflush(stdout);
}

static void sleep_interval(double s)
{
	struct timespec ts = {
		.tv_sec = (time_t)s,
		.tv_nsec = (long)((s - (double)(time_t)s) * 1e9),
	};

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int run_interval(void)
{
	struct dlcpstat_table prev = { 0 }, cur = { 0 }, shown = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	long n = 0;
	int rc = 0;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (read_counters(&prev))
		return 1;
	while (!stop && (opt.count <= 0 || n < opt.count)) {
		sleep_interval(opt.interval);
		if (stop)
			break;
		if (read_counters(&cur)) {
			rc = 1;
			break;
		}
		shown.nr = 0;
		for (size_t i = 0; i < cur.nr; i++) {
			if (shown.nr == shown.cap) {
				size_t cap = shown.cap ? 2 * shown.cap : 64;
				struct dlcpstat_entry *e;

				e = realloc(shown.e, cap * sizeof(*e));
				if (!e) {
					rc = 1;
					goto out;
				}
				shown.e = e;
				shown.cap = cap;
			}
			shown.e[shown.nr++] = cur.e[i];
		}
		dlcpstat_diff(&shown, &prev);
		print_table(&shown, opt.interval);
		dlcpstat_free(&prev);
		prev = cur;
		memset(&cur, 0, sizeof(cur));
		n++;
	}
out:
	dlcpstat_free(&prev);
	dlcpstat_free(&cur);
	dlcpstat_free(&shown);
	return rc;
}


/* INTERVAL and COUNT are the first arguments that start with a digit */
static bool is_number(const char *s)
{
	return isdigit((unsigned char)s[0]) ||
	       (s[0] == '.' && isdigit((unsigned char)s[1]));
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "zeros",	no_argument,		NULL, 'z' },
		{ "absolute",	no_argument,		NULL, 'a' },
		{ "ignore",	no_argument,		NULL, 'a' },
		{ "delta",	no_argument,		NULL, 'd' },
		{ "reset",	no_argument,		NULL, 'r' },
		{ "no-update",	no_argument,		NULL, 's' },
		{ "noupdate",	no_argument,		NULL, 's' },
		{ "nooutput",	no_argument,		NULL, 'n' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "pretty",	no_argument,		NULL, 'p' },
		{ "netns",	required_argument,	NULL, 'N' },
		{ "file",	required_argument,	NULL, 'f' },
		{ "sockets",	no_argument,		NULL, 'S' },
		{ "peers",	no_argument,		NULL, 'P' },
		{ "ipv4",	no_argument,		NULL, '4' },
		{ "ipv6",	no_argument,		NULL, '6' },
		{ "netlink",	no_argument,		NULL, OPT_NETLINK },
		{ "proc",	no_argument,		NULL, OPT_PROC },
		{ "prometheus",	no_argument,		NULL, OPT_PROMETHEUS },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct dlcpstat_table cur = { 0 }, old = { 0 };
	char path[PATH_MAX];
	int c, i, nr_num = 0, rc = 0;

	while ((c = getopt_long(argc, argv, "zadrsnjpN:f:SP46hV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'z':
			opt.zeros = true;
			break;
		case 'a':
			opt.absolute = true;
			break;
		case 'd':
			opt.delta = true;
			break;
		case 'r':
			opt.reset = true;
			break;
		case 's':
			opt.no_update = true;
			break;
		case 'n':
			opt.no_output = true;
			break;
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.pretty = true;
			break;
		case 'N':
			opt.netns = optarg;
			break;
		case 'f':
			opt.input = optarg;
			break;
		case 'S':
			opt.sockets = true;
			break;
		case 'P':
			opt.peers = true;
			break;
		case '4':
			opt.family = AF_INET;
			break;
		case '6':
			opt.family = AF_INET6;
			break;
		case OPT_NETLINK:
			opt.source = SOURCE_NETLINK;
			break;
		case OPT_PROC:
			opt.source = SOURCE_PROC;
			break;
		case OPT_PROMETHEUS:
			opt.prometheus = true;
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
	if (opt.sockets && opt.peers) {
		fprintf(stderr, "%s: -S and -P exclude each other\n", prog);
		return 2;
	}
	if ((opt.sockets || opt.peers) && optind < argc) {
		fprintf(stderr, "%s: no INTERVAL or PATTERN with -S or -P\n",
			prog);
		return 2;
	}
	if (!opt.sockets && !opt.peers && (opt.family || opt.source)) {
		fprintf(stderr, "%s: -4, -6, --netlink and --proc go with -S or -P\n",
			prog);
		return 2;
	}
	opt.patterns = calloc((size_t)argc, sizeof(char *));
	if (!opt.patterns)
		return 1;
	for (i = optind; i < argc; i++) {
		if (!opt.nr_patterns && nr_num < 2 && is_number(argv[i])) {
			if (nr_num++ == 0)
				opt.interval = dlcp_cli_positive("INTERVAL",
								 argv[i],
								 MAX_INTERVAL);
			else
				opt.count = (long)dlcp_cli_uint("COUNT", argv[i],
								1, INT32_MAX);
			continue;
		}
		opt.patterns[opt.nr_patterns++] = argv[i];
	}
	if (opt.prometheus &&
	    (opt.json || opt.delta || opt.reset || opt.absolute ||
	     opt.no_update || opt.no_output || opt.interval > 0 ||
	     opt.sockets || opt.peers)) {
		fprintf(stderr,
			"%s: --prometheus prints the absolute values once: no -j, -d, -r, -a, -s, -n, -S, -P or INTERVAL\n",
			prog);
		return 2;
	}
	if (opt.netns && enter_netns(opt.netns))
		return 1;
	if (opt.sockets || opt.peers) {
		rc = run_sockets();
		free(opt.patterns);
		return rc;
	}
	if (opt.interval > 0) {
		rc = run_interval();
		free(opt.patterns);
		return rc;
	}

	if (read_counters(&cur))
		return 1;
	if (opt.delta || opt.reset) {
		struct dlcpstat_table abs = { 0 };

		history_path(path, sizeof(path));
		/*
		 * no or unreadable history: deltas since the counters began;
		 * -r and -a ignore the history (absolute values)
		 */
		if (opt.reset || opt.absolute || read_table(path, &old, true))
			dlcpstat_free(&old);
		if (!opt.no_update) {
			abs.e = malloc((cur.nr ? cur.nr : 1) * sizeof(*abs.e));
			if (!abs.e) {
				rc = 1;
				goto out;
			}
			memcpy(abs.e, cur.e, cur.nr * sizeof(*abs.e));
			abs.nr = abs.cap = cur.nr;
		}
		dlcpstat_diff(&cur, &old);
		print_table(&cur, 0);
		if (!opt.no_update && write_history(&abs))
			rc = 1;
		dlcpstat_free(&abs);
		goto out;
	}
	print_table(&cur, 0);
out:
	dlcpstat_free(&cur);
	dlcpstat_free(&old);
	free(opt.patterns);
	return rc;
}
