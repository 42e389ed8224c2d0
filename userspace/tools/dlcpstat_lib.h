/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcpstat_lib - parsing and arithmetic of counter tables: the "Name value"
 * lines of /proc/net/dlcp/snmp (and of dlcpstat's history file, which uses
 * the same format), and a protocol's table of /proc/net/snmp; parsing of
 * what describes DLCP sockets: sock_diag's answers and the lines of
 * /proc/net/dlcp/sockets and /proc/net/dlcp/peers. The parsers read a
 * FILE (or a message), so that the host unit test can feed them strings;
 * the readers open the file first. Used by dlcpstat and dlcp-perf.
 */
#ifndef DLCPSTAT_LIB_H
#define DLCPSTAT_LIB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/dlcp.h>

#define DLCPSTAT_NAME_MAX	64

struct dlcpstat_entry {
	char		name[DLCPSTAT_NAME_MAX];
	uint64_t	value;
};

struct dlcpstat_table {
	struct dlcpstat_entry	*e;
	size_t			nr;
	size_t			cap;
};

/*
 * Parse "Name value" lines from @f into @t (appended, in file order).
 * Blank lines and lines starting with '#' are skipped. A name longer than
 * DLCPSTAT_NAME_MAX - 1, a missing or non-decimal value, trailing junk or
 * a duplicated name is an error.
 * Return: 0, or -1 with *@bad_line set to the 1-based offending line
 * (0 for an allocation failure).
 */
int dlcpstat_parse(FILE *f, struct dlcpstat_table *t, unsigned int *bad_line);

/* Same, from a string (uses fmemopen). */
int dlcpstat_parse_str(const char *s, struct dlcpstat_table *t,
		       unsigned int *bad_line);

/*
 * Read the "Name value" file at @path into @t with dlcpstat_parse().
 * Return: 0; -errno when it cannot be opened; -EBADMSG when the parser
 * fails, *@bad_line set as it sets it (0: allocation failure). The lines
 * before a bad one stay in @t.
 */
int dlcpstat_read(const char *path, struct dlcpstat_table *t,
		  unsigned int *bad_line);

/*
 * Parse the table of @proto ("Tcp", "Udp", ...) in the format of
 * /proc/net/snmp, a line "Proto: Name..." followed by a line
 * "Proto: value...", from @f into @t, each name prefixed with @proto
 * ("TcpRetransSegs"). Values are read as strtoull() reads them (Tcp
 * MaxConn's -1 is UINT64_MAX). No such table leaves @t as it was.
 * Return: 0, -EINVAL (a name too long or twice, a values line missing)
 * or -ENOMEM.
 */
int dlcpstat_parse_mib(FILE *f, const char *proto, struct dlcpstat_table *t);

/* The same from the file at @path (/proc/net/snmp): -errno when it cannot
 * be opened. */
int dlcpstat_read_mib(const char *path, const char *proto,
		      struct dlcpstat_table *t);

/* Value of @name in @t; 0 and *@found = 0 when it is not there. */
uint64_t dlcpstat_get(const struct dlcpstat_table *t, const char *name,
		      int *found);

/*
 * Delta of a counter: @cur - @old, or @cur when the counter went backwards
 * (module reloaded, namespace re-created: counters restarted at zero).
 */
uint64_t dlcpstat_delta(uint64_t cur, uint64_t old);

/*
 * Replace every value of @cur by its delta against @old (names missing from
 * @old count from zero).
 */
void dlcpstat_diff(struct dlcpstat_table *cur, const struct dlcpstat_table *old);

void dlcpstat_free(struct dlcpstat_table *t);

/*
 * Sockets. Addresses are IPv6, IPv4 ones v4-mapped (::ffff:a.b.c.d);
 * ports in host order. What /proc/net/dlcp has not is zero, with
 * @have_info (struct dlcpstat_sock) or @full (struct dlcpstat_peer) 0.
 */
struct dlcpstat_peer {
	uint8_t		addr[16];
	uint8_t		laddr[16];	/* the socket's: /proc/net/dlcp/peers */
	uint16_t	lport;		/* the socket's: /proc/net/dlcp/peers */
	uint64_t	inode;		/* the socket's: /proc/net/dlcp/peers */
	uint32_t	msgs;
	uint32_t	inflight;
	uint32_t	cwnd;
	uint32_t	srtt_us;
	uint32_t	rttvar_us;
	uint32_t	reo_us;
	uint32_t	alpha;
	uint32_t	rto_shift;
	int		full;		/* the fields below are known */
	uint32_t	ssthresh;
	uint32_t	min_rtt_us;
	uint32_t	rto_us;
};

struct dlcpstat_sock {
	int		family;		/* AF_INET, AF_INET6; 0 from /proc */
	int		state;		/* 1 connected, 7 bound (TCP_*) */
	uint8_t		laddr[16];
	uint8_t		raddr[16];
	uint16_t	lport;
	uint16_t	rport;
	uint32_t	uid;
	uint64_t	inode;
	uint64_t	cookie;		/* sock_diag's, 0 from /proc */
	uint64_t	snd_mem;
	uint32_t	rcv_mem;
	uint32_t	out_msgs;
	uint32_t	in_msgs;
	uint32_t	cwnd;
	uint32_t	srtt_us;
	int		have_info;	/* the fields below are known */
	uint32_t	in_delivered;
	uint32_t	rx_queue;
	uint32_t	flight;
	uint32_t	flight_cap;
	uint32_t	in_reo_us;
	uint32_t	loss_budget_ppm;
	uint32_t	layer;
	uint32_t	prio;
	uint32_t	flags;		/* DLCP_DIAG_F_* */
	uint32_t	drops;
	uint32_t	nr_peers;
	size_t		nr_listed;	/* entries of @peers */
	struct dlcpstat_peer peers[DLCP_DIAG_MAX_PEERS];
};

/*
 * Parse one answer to a SOCK_DIAG_BY_FAMILY request, the payload of its
 * netlink message (@msg, @len bytes: struct inet_diag_msg, then its
 * attributes). Return: 0, or -1 if it is cut short or malformed.
 */
int dlcpstat_diag_parse(const void *msg, size_t len, struct dlcpstat_sock *s);

/*
 * Parse a line of /proc/net/dlcp/sockets, or of /proc/net/dlcp/peers.
 * Return: 0, 1 for the header line, -1 for a malformed line.
 */
int dlcpstat_proc_sock_parse(const char *line, struct dlcpstat_sock *s);
int dlcpstat_proc_peer_parse(const char *line, struct dlcpstat_peer *p);

/*
 * "10.0.0.1:7300", "[fe80::1]:7300", "*:7300" (the wildcard address),
 * "*" for port 0; without ":port" if @port is negative. @len >= 64.
 */
void dlcpstat_addr_str(char *buf, size_t len, const uint8_t addr[16],
		       int port);

/* "ESTAB" (connected), "UNCONN" (bound), else the number. */
const char *dlcpstat_state_name(int state, char *buf, size_t len);

#endif /* DLCPSTAT_LIB_H */
