// SPDX-License-Identifier: GPL-2.0
/*
 * dlcpstat_lib - see dlcpstat_lib.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>

#include "dlcpstat_lib.h"

static int table_add(struct dlcpstat_table *t, const char *name, size_t nlen,
		     uint64_t value)
{
	struct dlcpstat_entry *e;
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (strlen(t->e[i].name) == nlen &&
		    !memcmp(t->e[i].name, name, nlen))
			return -1;	/* duplicate */
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;

		e = realloc(t->e, cap * sizeof(*e));
		if (!e)
			return -2;
		t->e = e;
		t->cap = cap;
	}
	e = &t->e[t->nr++];
	memcpy(e->name, name, nlen);
	e->name[nlen] = '\0';
	e->value = value;
	return 0;
}

static int parse_line(const char *s, struct dlcpstat_table *t)
{
	const char *name, *v;
	uint64_t value = 0;
	size_t nlen;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '\n' || *s == '#')
		return 0;
	name = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	nlen = (size_t)(s - name);
	if (nlen >= DLCPSTAT_NAME_MAX)
		return -1;
	while (*s == ' ' || *s == '\t')
		s++;
	v = s;
	while (*s >= '0' && *s <= '9') {
		unsigned int d = (unsigned int)(*s - '0');

		if (value > (UINT64_MAX - d) / 10)
			return -1;	/* overflow */
		value = value * 10 + d;
		s++;
	}
	if (s == v)
		return -1;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (*s)
		return -1;
	return table_add(t, name, nlen, value);
}

int dlcpstat_parse(FILE *f, struct dlcpstat_table *t, unsigned int *bad_line)
{
	char buf[256];
	unsigned int line = 0;
	int err;

	while (fgets(buf, sizeof(buf), f)) {
		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			*bad_line = line;	/* line too long */
			return -1;
		}
		err = parse_line(buf, t);
		if (err) {
			*bad_line = err == -2 ? 0 : line;
			return -1;
		}
	}
	if (ferror(f)) {
		*bad_line = line + 1;
		return -1;
	}
	return 0;
}

int dlcpstat_parse_str(const char *s, struct dlcpstat_table *t,
		       unsigned int *bad_line)
{
	FILE *f;
	int err;

	if (!*s)
		return 0;	/* fmemopen() refuses a zero-sized buffer */
	f = fmemopen((void *)s, strlen(s), "r");
	if (!f) {
		*bad_line = 0;
		return -1;
	}
	err = dlcpstat_parse(f, t, bad_line);
	fclose(f);
	return err;
}

int dlcpstat_read(const char *path, struct dlcpstat_table *t,
		  unsigned int *bad_line)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f)
		return -errno;
	err = dlcpstat_parse(f, t, bad_line);
	fclose(f);
	return err ? -EBADMSG : 0;
}

/* Add "@proto@name" = @value to @t: 0, -EINVAL or -ENOMEM. */
static int mib_add(struct dlcpstat_table *t, const char *proto,
		   const char *name, uint64_t value)
{
	char full[DLCPSTAT_NAME_MAX];
	int n = snprintf(full, sizeof(full), "%s%s", proto, name);

	if (n < 0 || (size_t)n >= sizeof(full))
		return -EINVAL;
	switch (table_add(t, full, (size_t)n, value)) {
	case 0:
		return 0;
	case -1:
		return -EINVAL;
	default:
		return -ENOMEM;
	}
}

int dlcpstat_parse_mib(FILE *f, const char *proto, struct dlcpstat_table *t)
{
	size_t plen = strlen(proto), cap = 0, vcap = 0;
	char *names = NULL, *vals = NULL;
	int err = 0;

	while (getline(&names, &cap, f) > 0) {
		char *sn, *sv, *tn, *tv;

		if (strncmp(names, proto, plen) || names[plen] != ':')
			continue;
		if (getline(&vals, &vcap, f) <= 0 ||
		    strncmp(vals, names, plen + 1)) {
			err = -EINVAL;
			break;
		}
		tn = strtok_r(names + plen + 1, " \n", &sn);
		tv = strtok_r(vals + plen + 1, " \n", &sv);
		while (tn && tv && !err) {
			err = mib_add(t, proto, tn, strtoull(tv, NULL, 10));
			tn = strtok_r(NULL, " \n", &sn);
			tv = strtok_r(NULL, " \n", &sv);
		}
		break;
	}
	free(names);
	free(vals);
	return err;
}

int dlcpstat_read_mib(const char *path, const char *proto,
		      struct dlcpstat_table *t)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f)
		return -errno;
	err = dlcpstat_parse_mib(f, proto, t);
	fclose(f);
	return err;
}

uint64_t dlcpstat_get(const struct dlcpstat_table *t, const char *name,
		      int *found)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		if (!strcmp(t->e[i].name, name)) {
			if (found)
				*found = 1;
			return t->e[i].value;
		}
	}
	if (found)
		*found = 0;
	return 0;
}

uint64_t dlcpstat_delta(uint64_t cur, uint64_t old)
{
	return cur >= old ? cur - old : cur;
}

void dlcpstat_diff(struct dlcpstat_table *cur, const struct dlcpstat_table *old)
{
	size_t i;

	for (i = 0; i < cur->nr; i++)
		cur->e[i].value = dlcpstat_delta(cur->e[i].value,
						 dlcpstat_get(old, cur->e[i].name,
							      NULL));
}

void dlcpstat_free(struct dlcpstat_table *t)
{
	free(t->e);
	t->e = NULL;
	t->nr = t->cap = 0;
}

/* ------------------------------------------------------------ sockets */

static void v4mapped(uint8_t addr[16], const void *v4)
{
	memset(addr, 0, 10);
	addr[10] = 0xff;
	addr[11] = 0xff;
	memcpy(addr + 12, v4, 4);
}

static int is_v4mapped(const uint8_t addr[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(addr, prefix, sizeof(prefix));
}

/* INET_DIAG_INFO: struct dlcp_diag_info, then the peers. */
static int parse_info(const uint8_t *p, size_t len, struct dlcpstat_sock *s)
{
	struct dlcp_diag_info di = { 0 };
	size_t i, ilen, plen;

	if (len < 8)
		return -1;
	memcpy(&di, p, len < sizeof(di) ? len : sizeof(di));
	ilen = di.info_len;
	plen = di.peer_len;
	if (ilen < 8 || ilen > len || di.nr_listed > DLCP_DIAG_MAX_PEERS ||
	    (di.nr_listed && (plen < 16 ||
			      (len - ilen) / plen < di.nr_listed)))
		return -1;
	if (ilen < sizeof(di))
		memset((uint8_t *)&di + ilen, 0, sizeof(di) - ilen);
	s->have_info = 1;
	s->snd_mem = di.snd_mem;
	s->out_msgs = di.out_msgs;
	s->in_msgs = di.in_msgs;
	s->in_delivered = di.in_delivered;
	s->rx_queue = di.rx_queue;
	s->flight = di.flight;
	s->flight_cap = di.flight_cap;
	s->cwnd = di.cwnd;
	s->srtt_us = di.srtt_us;
	s->in_reo_us = di.in_reo_us;
	s->loss_budget_ppm = di.loss_budget_ppm;
	s->layer = di.layer;
	s->prio = di.prio;
	s->flags = di.flags;
	s->rcv_mem = di.rcv_mem;
	s->drops = di.drops;
	s->nr_peers = di.nr_peers;
	s->nr_listed = di.nr_listed;
	for (i = 0; i < di.nr_listed; i++) {
		struct dlcp_diag_peer dp = { 0 };
		struct dlcpstat_peer *q = &s->peers[i];

		memcpy(&dp, p + ilen + i * plen,
		       plen < sizeof(dp) ? plen : sizeof(dp));
		memset(q, 0, sizeof(*q));
		memcpy(q->addr, dp.addr, 16);
		memcpy(q->laddr, s->laddr, 16);
		q->lport = s->lport;
		q->inode = s->inode;
		q->msgs = dp.msgs;
		q->inflight = dp.inflight;
		q->cwnd = dp.cwnd;
		q->srtt_us = dp.srtt_us;
		q->rttvar_us = dp.rttvar_us;
		q->reo_us = dp.reo_us;
		q->alpha = dp.alpha;
		q->rto_shift = dp.rto_shift;
		q->full = 1;
		q->ssthresh = dp.ssthresh;
		q->min_rtt_us = dp.min_rtt_us;
		q->rto_us = dp.rto_us;
	}
	return 0;
}

int dlcpstat_diag_parse(const void *msg, size_t len, struct dlcpstat_sock *s)
{
	const struct inet_diag_msg *r = msg;
	const uint8_t *p = msg;
	size_t off;

	memset(s, 0, sizeof(*s));
	if (len < sizeof(*r))
		return -1;
	s->family = r->idiag_family;
	s->state = r->idiag_state;
	if (s->family == AF_INET) {
		v4mapped(s->laddr, &r->id.idiag_src[0]);
		v4mapped(s->raddr, &r->id.idiag_dst[0]);
	} else if (s->family == AF_INET6) {
		memcpy(s->laddr, r->id.idiag_src, 16);
		memcpy(s->raddr, r->id.idiag_dst, 16);
	} else {
		return -1;
	}
	s->lport = ntohs(r->id.idiag_sport);
	s->rport = ntohs(r->id.idiag_dport);
	s->uid = r->idiag_uid;
	s->inode = r->idiag_inode;
	s->cookie = (uint64_t)r->id.idiag_cookie[1] << 32 |
		    r->id.idiag_cookie[0];
	s->rcv_mem = r->idiag_rqueue;
	s->snd_mem = r->idiag_wqueue;
	/* attributes: struct nlattr, each NLA_ALIGN()ed */
	for (off = NLA_ALIGN(sizeof(*r)); off + NLA_HDRLEN <= len;) {
		struct nlattr a;

		memcpy(&a, p + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len - off)
			return -1;
		if ((a.nla_type & NLA_TYPE_MASK) == INET_DIAG_INFO &&
		    parse_info(p + off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN, s))
			return -1;
		off += NLA_ALIGN(a.nla_len);
	}
	return 0;
}

/*
 * An address of /proc/net/dlcp: 8 hex digits (IPv4, or the wildcard) or
 * 32 (IPv6), each group of 8 a 32-bit word in network order printed as a
 * number of this host.
 */
static int proc_addr(const char *hex, uint8_t addr[16])
{
	size_t n = strlen(hex), i;
	uint32_t w[4];

	if (n != 8 && n != 32)
		return -1;
	for (i = 0; i < n / 8; i++) {
		char word[9];

		memcpy(word, hex + 8 * i, 8);
		word[8] = '\0';
		w[i] = (uint32_t)strtoul(word, NULL, 16);
	}
	if (n == 8)
		v4mapped(addr, &w[0]);
	else
		memcpy(addr, w, 16);
	return 0;
}

int dlcpstat_proc_sock_parse(const char *line, struct dlcpstat_sock *s)
{
	char la[33], ra[33];
	unsigned int lport, rport, st, rx, out, in, cwnd, srtt, uid;
	unsigned long long tx, ino;
	char end;

	memset(s, 0, sizeof(*s));
	while (*line == ' ')
		line++;
	if (!strncmp(line, "sl ", 3))
		return 1;
	if (sscanf(line, "%*u: %32[0-9A-Fa-f]:%x %32[0-9A-Fa-f]:%x %x %llx:%x %u %u %u %u %u %llu %c",
		   la, &lport, ra, &rport, &st, &tx, &rx, &out, &in, &cwnd,
		   &srtt, &uid, &ino, &end) != 13)
		return -1;
	if (proc_addr(la, s->laddr) || proc_addr(ra, s->raddr) ||
	    lport > 0xffff || rport > 0xffff)
		return -1;
	if (strlen(la) == 32 || strlen(ra) == 32)
		s->family = AF_INET6;
	s->lport = (uint16_t)lport;
	s->rport = (uint16_t)rport;
	s->state = (int)st;
	s->snd_mem = tx;
	s->rcv_mem = rx;
	s->out_msgs = out;
	s->in_msgs = in;
	s->cwnd = cwnd;
	s->srtt_us = srtt;
	s->uid = uid;
	s->inode = ino;
	return 0;
}

int dlcpstat_proc_peer_parse(const char *line, struct dlcpstat_peer *p)
{
	unsigned int lport, msgs, inflight, cwnd, srtt, rttvar, alpha, shift;
	unsigned int reo;
	unsigned long long ino;
	char la[33], ra[33];
	char end;

	memset(p, 0, sizeof(*p));
	while (*line == ' ')
		line++;
	if (!strncmp(line, "sl ", 3))
		return 1;
	if (sscanf(line, "%*u: %32[0-9A-Fa-f]:%x %32[0-9A-Fa-f] %u %u %u %u %u %u %u %u %llu %c",
		   la, &lport, ra, &msgs, &inflight, &cwnd, &srtt, &rttvar,
		   &alpha, &shift, &reo, &ino, &end) != 12)
		return -1;
	if (proc_addr(la, p->laddr) || proc_addr(ra, p->addr) ||
	    lport > 0xffff)
		return -1;
	p->lport = (uint16_t)lport;
	p->msgs = msgs;
	p->inflight = inflight;
	p->cwnd = cwnd;
	p->srtt_us = srtt;
	p->rttvar_us = rttvar;
	p->alpha = alpha;
	p->rto_shift = shift;
	p->reo_us = reo;
	p->inode = ino;
	return 0;
}

void dlcpstat_addr_str(char *buf, size_t len, const uint8_t addr[16],
		       int port)
{
	static const uint8_t any[16];
	char a[INET6_ADDRSTRLEN] = "*", pstr[16] = "";
	int v6 = 0;

	if (is_v4mapped(addr)) {
		if (memcmp(addr + 12, any, 4))
			inet_ntop(AF_INET, addr + 12, a, sizeof(a));
	} else if (memcmp(addr, any, 16)) {
		inet_ntop(AF_INET6, addr, a, sizeof(a));
		v6 = 1;
	}
	if (port > 0)
		snprintf(pstr, sizeof(pstr), ":%d", port);
	else if (!port)
		strcpy(pstr, ":*");
	snprintf(buf, len, v6 && port >= 0 ? "[%s]%s" : "%s%s", a, pstr);
}

const char *dlcpstat_state_name(int state, char *buf, size_t len)
{
	if (state == 1)
		return "ESTAB";
	if (state == 7)
		return "UNCONN";
	snprintf(buf, len, "%d", state);
	return buf;
}
