// SPDX-License-Identifier: GPL-2.0
/*
 * dlcpstat -S, -P: the DLCP sockets, one line each as ss(8) lists TCP's,
 * or the destinations of the sockets and the state of the path to each
 * (window, RTT). Read through sock_diag (NETLINK_SOCK_DIAG, protocol
 * DLCP_IPPROTO), else, or with --proc, from /proc/net/dlcp/sockets and
 * /proc/net/dlcp/peers (or the file of -f); printed as text or JSON.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "dlcpstat.h"
#include "dlcpstat_lib.h"

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

int run_sockets(void)
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
