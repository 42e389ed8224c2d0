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
 */
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
#include <netinet/in.h>
#include <sys/socket.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "dlcpstat_lib.h"

#define DLCP_SNMP	"/proc/net/dlcp/snmp"
#define DLCP_SOCKETS	"/proc/net/dlcp/sockets"
#define DLCP_PEERS	"/proc/net/dlcp/peers"
#define DLCP_IPPROTO	"/sys/module/dlcp/parameters/ipproto"

/* where -S and -P read the sockets from */
enum source {
	SOURCE_ANY,		/* sock_diag, else /proc */
	SOURCE_NETLINK,		/* --netlink */
	SOURCE_PROC,		/* --proc */
};

enum {
	OPT_NETLINK = 256,
	OPT_PROC,
};

#ifndef DLCP_RELEASE
#define DLCP_RELEASE	"unknown"
#endif

static const char *prog = "dlcpstat";

static struct {
	bool	zeros;		/* -z */
	bool	absolute;	/* -a */
	bool	delta;		/* -d */
	bool	reset;		/* -r */
	bool	no_update;	/* -s */
	bool	no_output;	/* -n */
	bool	json;		/* -j */
	bool	pretty;		/* -p */
	const char *netns;	/* -N */
	const char *input;	/* -f */
	bool	sockets;	/* -S */
	bool	peers;		/* -P */
	int	family;		/* -4, -6: AF_INET, AF_INET6; 0: both */
	enum source source;	/* --netlink, --proc */
	char	**patterns;
	int	nr_patterns;
	double	interval;
	long	count;
} opt;

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
"prints the changes of every interval, COUNT times or until interrupted.\n"
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

/* Print @t; @interval > 0 marks an interval report (with a time stamp). */
static void print_table(const struct dlcpstat_table *t, double interval)
{
	bool first = true;
	size_t i;

	if (opt.no_output)
		return;
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

/* ------------------------------------------------------------ sockets */

struct sock_list {
	struct dlcpstat_sock	*s;
	size_t			nr;
	size_t			cap;
};

struct peer_list {
	struct dlcpstat_peer	*p;
	size_t			nr;
	size_t			cap;
};

/* Room for one more element of @a (@nr of @cap used, each @size bytes). */
static void *grow(void **a, size_t *nr, size_t *cap, size_t size)
{
	if (*nr == *cap) {
		size_t n = *cap ? 2 * *cap : 16;
		void *p = realloc(*a, n * size);

		if (!p)
			return NULL;
		*a = p;
		*cap = n;
	}
	return (char *)*a + (*nr)++ * size;
}

static struct dlcpstat_sock *sock_add(struct sock_list *l)
{
	return grow((void **)&l->s, &l->nr, &l->cap, sizeof(*l->s));
}

static struct dlcpstat_peer *peer_add(struct peer_list *l)
{
	return grow((void **)&l->p, &l->nr, &l->cap, sizeof(*l->p));
}

/* The module's IP protocol number: its parameter, else IPPROTO_DLCP. */
static int dlcp_protocol(void)
{
	FILE *f = fopen(DLCP_IPPROTO, "r");
	int proto = IPPROTO_DLCP;

	if (f) {
		if (fscanf(f, "%d", &proto) != 1 || proto <= 0 || proto > 255)
			proto = IPPROTO_DLCP;
		fclose(f);
	}
	return proto;
}

/*
 * Ask sock_diag for the DLCP sockets of @family (on @fd, a
 * NETLINK_SOCK_DIAG socket) and add them to @l. Returns 0 or -errno:
 * -ENOENT when the kernel has no sock_diag handler for protocol @proto.
 */
static int diag_dump(int fd, int family, int proto, struct sock_list *l)
{
	static uint32_t seq;
	struct {
		struct nlmsghdr		nlh;
		struct inet_diag_req_v2	r;
	} req;
	union {
		struct nlmsghdr	nlh;
		char		buf[65536];
	} u;

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nlh.nlmsg_seq = ++seq;
	req.r.sdiag_family = (uint8_t)family;
	req.r.sdiag_protocol = (uint8_t)proto;
	req.r.idiag_states = ~0U;
	req.r.idiag_ext = 1 << (INET_DIAG_INFO - 1);
	if (send(fd, &req, sizeof(req), 0) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *nlh = &u.nlh;
		ssize_t n = recv(fd, u.buf, sizeof(u.buf), 0);
		int len;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		for (len = (int)n; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
			struct dlcpstat_sock *s;
			int err = 0;

			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				/* a dump that failed at once ends with its errno */
				if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(err)))
					memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
				return err < 0 ? err : 0;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(err)))
					memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
				return err < 0 ? err : -EIO;
			}
			if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
				continue;
			s = sock_add(l);
			if (!s)
				return -ENOMEM;
			if (dlcpstat_diag_parse(NLMSG_DATA(nlh),
						nlh->nlmsg_len - NLMSG_LENGTH(0),
						s)) {
				l->nr--;
				return -EBADMSG;
			}
		}
	}
}

/* Both families (or the one of -4, -6) through sock_diag: 0 or -errno. */
static int read_sockets_netlink(struct sock_list *l)
{
	static const int families[] = { AF_INET, AF_INET6 };
	int fd, err = 0, proto = dlcp_protocol();
	size_t i;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	for (i = 0; i < 2 && !err; i++)
		if (!opt.family || opt.family == families[i])
			err = diag_dump(fd, families[i], proto, l);
	close(fd);
	return err;
}

/*
 * A file of /proc/net/dlcp lines, each parsed by @parse into a new
 * element of a list (@add); 0, or -1 after a message.
 */
static int read_proc(const char *path, void *list,
		     void *(*add)(void *list), void (*drop)(void *list),
		     int (*parse)(const char *line, void *elem))
{
	unsigned int line = 0;
	char buf[512];
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s: %s: %s%s\n", prog, path, strerror(errno),
			errno == ENOENT ? " (is dlcp.ko loaded?)" : "");
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		void *e = add(list);
		int r;

		line++;
		if (!e) {
			fprintf(stderr, "%s: out of memory\n", prog);
			fclose(f);
			return -1;
		}
		r = parse(buf, e);
		if (r)
			drop(list);
		if (r < 0) {
			fprintf(stderr, "%s: %s:%u: malformed line\n", prog,
				path, line);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

static void *sock_add_any(void *l)
{
	return sock_add(l);
}

static void sock_drop_last(void *l)
{
	((struct sock_list *)l)->nr--;
}

static int sock_parse_any(const char *line, void *s)
{
	return dlcpstat_proc_sock_parse(line, s);
}

static void *peer_add_any(void *l)
{
	return peer_add(l);
}

static void peer_drop_last(void *l)
{
	((struct peer_list *)l)->nr--;
}

static int peer_parse_any(const char *line, void *p)
{
	return dlcpstat_proc_peer_parse(line, p);
}

/*
 * The sockets (and with -P their peers, in @pl) from /proc/net/dlcp, or
 * from the file of -f. /proc has no family: -4 and -6 go by the address
 * format (an AF_INET6 socket bound to the wildcard passes -4).
 */
static int read_sockets_proc(struct sock_list *l, struct peer_list *pl)
{
	size_t i, j, k = 0;

	if (!(opt.input && opt.peers) &&
	    read_proc(opt.input ? opt.input : DLCP_SOCKETS, l, sock_add_any,
		      sock_drop_last, sock_parse_any))
		return -1;
	for (i = 0; i < l->nr; i++)
		if (!opt.family || (opt.family == AF_INET6) ==
				   (l->s[i].family == AF_INET6))
			l->s[k++] = l->s[i];
	l->nr = k;
	if (!opt.peers)
		return 0;
	if (read_proc(opt.input ? opt.input : DLCP_PEERS, pl, peer_add_any,
		      peer_drop_last, peer_parse_any))
		return -1;
	/* the socket's address: the peers file has only IPv4 ones */
	for (i = k = 0; i < pl->nr; i++) {
		bool found = false;

		for (j = 0; j < l->nr && !found; j++)
			if (l->s[j].inode == pl->p[i].inode) {
				memcpy(pl->p[i].laddr, l->s[j].laddr, 16);
				found = true;
			}
		if (found || !opt.family || opt.input)
			pl->p[k++] = pl->p[i];
	}
	pl->nr = k;
	return 0;
}

/* Whether sock_diag's failure @err means: no handler, use /proc. */
static bool diag_unsupported(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP ||
	       err == -EPROTONOSUPPORT || err == -EAFNOSUPPORT ||
	       err == -EINVAL;
}

static int read_sockets(struct sock_list *l, struct peer_list *pl,
			const char **source)
{
	size_t i, j;
	int err;

	if (opt.source != SOURCE_PROC && !opt.input) {
		err = read_sockets_netlink(l);
		if (!err) {
			*source = "netlink";
			for (i = 0; opt.peers && i < l->nr; i++)
				for (j = 0; j < l->s[i].nr_listed; j++) {
					struct dlcpstat_peer *p = peer_add(pl);

					if (!p) {
						fprintf(stderr, "%s: out of memory\n",
							prog);
						return -1;
					}
					*p = l->s[i].peers[j];
				}
			return 0;
		}
		if (opt.source == SOURCE_NETLINK || !diag_unsupported(err)) {
			fprintf(stderr, "%s: sock_diag: %s\n", prog,
				strerror(-err));
			return -1;
		}
		l->nr = 0;
	}
	*source = "proc";
	return read_sockets_proc(l, pl);
}

/* Milliseconds, or "-" for 0 (no sample) when @dash. */
static const char *ms(char *buf, size_t len, uint32_t us, bool dash)
{
	if (!us && dash)
		return "-";
	snprintf(buf, len, "%.3f", us / 1000.0);
	return buf;
}

static const char *u32_or_dash(char *buf, size_t len, uint32_t v, bool known)
{
	if (!known)
		return "-";
	snprintf(buf, len, "%u", v);
	return buf;
}

static void print_sockets_text(const struct sock_list *l)
{
	char la[80], ra[80], st[16], fl[16], sr[16], np[16];
	size_t i;

	printf("%-6s %8s %10s %-28s %-28s %5s %5s %6s %5s %9s %5s %6s %s\n",
	       "State", "Recv-Q", "Send-Q", "Local Address:Port",
	       "Peer Address:Port", "Out", "In", "Flight", "Cwnd", "Srtt",
	       "Peers", "Uid", "Inode");
	for (i = 0; i < l->nr; i++) {
		const struct dlcpstat_sock *s = &l->s[i];

		dlcpstat_addr_str(la, sizeof(la), s->laddr, s->lport);
		dlcpstat_addr_str(ra, sizeof(ra), s->raddr, s->rport);
		printf("%-6s %8u %10llu %-28s %-28s %5u %5u %6s %5u %9s %5s %6u %llu\n",
		       dlcpstat_state_name(s->state, st, sizeof(st)),
		       s->rcv_mem, (unsigned long long)s->snd_mem, la, ra,
		       s->out_msgs, s->in_msgs,
		       u32_or_dash(fl, sizeof(fl), s->flight, s->have_info),
		       s->cwnd, ms(sr, sizeof(sr), s->srtt_us, true),
		       u32_or_dash(np, sizeof(np), s->nr_peers, s->have_info),
		       s->uid, (unsigned long long)s->inode);
	}
}

static void print_peers_text(const struct peer_list *pl)
{
	char la[80], ra[80], b[6][16];
	size_t i;

	printf("%-28s %-24s %5s %8s %5s %8s %9s %9s %9s %9s %9s %5s %s\n",
	       "Local Address:Port", "Peer Address", "Msgs", "Inflight",
	       "Cwnd", "Ssthresh", "Srtt", "Rttvar", "MinRtt", "Rto", "Reo",
	       "Alpha", "Inode");
	for (i = 0; i < pl->nr; i++) {
		const struct dlcpstat_peer *p = &pl->p[i];
		bool none = !p->full || p->ssthresh == UINT32_MAX;

		dlcpstat_addr_str(la, sizeof(la), p->laddr, p->lport);
		dlcpstat_addr_str(ra, sizeof(ra), p->addr, -1);
		printf("%-28s %-24s %5u %8u %5u %8s %9s %9s %9s %9s %9s %5u %llu\n",
		       la, ra, p->msgs, p->inflight, p->cwnd,
		       u32_or_dash(b[0], 16, p->ssthresh, !none),
		       ms(b[1], 16, p->srtt_us, true),
		       ms(b[2], 16, p->rttvar_us, !p->srtt_us),
		       p->full ? ms(b[3], 16, p->min_rtt_us, true) : "-",
		       p->full ? ms(b[4], 16, p->rto_us, false) : "-",
		       ms(b[5], 16, p->reo_us, false), p->alpha,
		       (unsigned long long)p->inode);
	}
}

static void print_peer_json(const struct dlcpstat_peer *p, bool with_local)
{
	char a[80];

	putchar('{');
	if (with_local) {
		dlcpstat_addr_str(a, sizeof(a), p->laddr, -1);
		printf("\"local\":\"%s\",\"lport\":%u,\"inode\":%llu,", a,
		       p->lport, (unsigned long long)p->inode);
	}
	dlcpstat_addr_str(a, sizeof(a), p->addr, -1);
	printf("\"peer\":\"%s\",\"msgs\":%u,\"inflight\":%u,\"cwnd\":%u,"
	       "\"srtt_us\":%u,\"rttvar_us\":%u,\"reo_us\":%u,\"alpha\":%u,"
	       "\"rto_shift\":%u", a, p->msgs, p->inflight, p->cwnd,
	       p->srtt_us, p->rttvar_us, p->reo_us, p->alpha, p->rto_shift);
	if (p->full)
		printf(",\"ssthresh\":%u,\"min_rtt_us\":%u,\"rto_us\":%u",
		       p->ssthresh, p->min_rtt_us, p->rto_us);
	putchar('}');
}

static void print_sock_json(const struct dlcpstat_sock *s)
{
	char la[80], ra[80], st[16];
	size_t i;

	dlcpstat_addr_str(la, sizeof(la), s->laddr, -1);
	dlcpstat_addr_str(ra, sizeof(ra), s->raddr, -1);
	printf("{\"family\":\"%s\",\"state\":\"%s\",\"local\":\"%s\",\"lport\":%u,"
	       "\"peer\":\"%s\",\"rport\":%u,\"uid\":%u,\"inode\":%llu,"
	       "\"rcv_mem\":%u,\"snd_mem\":%llu,\"out_msgs\":%u,\"in_msgs\":%u,"
	       "\"cwnd\":%u,\"srtt_us\":%u",
	       s->family == AF_INET ? "inet" :
	       s->family == AF_INET6 ? "inet6" : "",
	       dlcpstat_state_name(s->state, st, sizeof(st)), la, s->lport,
	       ra, s->rport, s->uid, (unsigned long long)s->inode, s->rcv_mem,
	       (unsigned long long)s->snd_mem, s->out_msgs, s->in_msgs,
	       s->cwnd, s->srtt_us);
	if (s->have_info) {
		printf(",\"cookie\":%llu,\"in_delivered\":%u,\"rx_queue\":%u,"
		       "\"flight\":%u,\"flight_cap\":%u,\"in_reo_us\":%u,"
		       "\"loss_budget_ppm\":%u,\"layer\":%u,\"prio\":%u,"
		       "\"flags\":%u,\"drops\":%u,\"nr_peers\":%u,\"peers\":[",
		       (unsigned long long)s->cookie, s->in_delivered,
		       s->rx_queue, s->flight, s->flight_cap, s->in_reo_us,
		       s->loss_budget_ppm, s->layer, s->prio, s->flags,
		       s->drops, s->nr_peers);
		for (i = 0; i < s->nr_listed; i++) {
			if (i)
				putchar(',');
			print_peer_json(&s->peers[i], false);
		}
		putchar(']');
	}
	putchar('}');
}

/* -S, -P: list the sockets or their peers. Returns the exit status. */
static int run_sockets(void)
{
	const char *source = "";
	struct peer_list pl = { 0 };
	struct sock_list l = { 0 };
	size_t i, cut = 0;
	int rc = 0;

	if (read_sockets(&l, &pl, &source)) {
		rc = 1;
		goto out;
	}
	for (i = 0; i < l.nr; i++)
		if (l.s[i].have_info && l.s[i].nr_peers > l.s[i].nr_listed)
			cut++;
	if (opt.json) {
		/* -p: one socket or peer a line */
		const char *nl = opt.pretty ? "\n" : "";
		const char *in = opt.pretty ? "  " : "";
		const char *sp = opt.pretty ? " " : "";
		size_t n = opt.peers ? pl.nr : l.nr;

		printf("{%s%s\"source\":%s\"%s\",%s%s\"%s\":%s[", nl, in, sp,
		       source, nl, in, opt.peers ? "peers" : "sockets", sp);
		for (i = 0; i < n; i++) {
			printf("%s%s%s", i ? "," : "", nl,
			       opt.pretty ? "    " : "");
			if (opt.peers)
				print_peer_json(&pl.p[i], true);
			else
				print_sock_json(&l.s[i]);
		}
		printf("%s%s]%s}\n", n ? nl : "", n ? in : "", nl);
	} else if (opt.peers) {
		print_peers_text(&pl);
	} else {
		print_sockets_text(&l);
	}
	if (opt.peers && cut)
		fprintf(stderr,
			"%s: %zu socket(s) with more than %d peers: the others are in "
			DLCP_PEERS "\n", prog, cut, DLCP_DIAG_MAX_PEERS);
out:
	free(l.s);
	free(pl.p);
	return rc;
}

static bool is_number(const char *s, double *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtod(s, &end);
	return !*end && !errno && *v >= 0;
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
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct dlcpstat_table cur = { 0 }, old = { 0 };
	char path[PATH_MAX];
	int c, i, nr_num = 0, rc = 0;
	double v;

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
		if (!opt.nr_patterns && nr_num < 2 && is_number(argv[i], &v)) {
			if (nr_num++ == 0) {
				if (v <= 0) {
					fprintf(stderr, "%s: bad interval %s\n",
						prog, argv[i]);
					return 2;
				}
				opt.interval = v;
			} else {
				opt.count = (long)v;
			}
			continue;
		}
		opt.patterns[opt.nr_patterns++] = argv[i];
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
