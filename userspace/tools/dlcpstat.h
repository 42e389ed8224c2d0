/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcpstat.h - what the parts of dlcpstat share: the files it reads, its
 * parsed command line, and the entry point of the socket listing.
 * dlcpstat.c has the command line and the counters view (-d, -r,
 * INTERVAL, PATTERN), dlcpstat_sock.c the listing of the sockets and of
 * their peers (-S, -P). The pure parsers are in dlcpstat_lib.h.
 */
#ifndef DLCPSTAT_H
#define DLCPSTAT_H

#include <stdbool.h>

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

struct dlcpstat_opts {
	bool	zeros;		/* -z */
	bool	absolute;	/* -a */
	bool	delta;		/* -d */
	bool	reset;		/* -r */
	bool	no_update;	/* -s */
	bool	no_output;	/* -n */
	bool	json;		/* -j */
	bool	pretty;		/* -p */
	bool	prometheus;	/* --prometheus */
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
};

/* the command line, as main() parsed it (dlcpstat.c) */
extern struct dlcpstat_opts opt;
/* the name in messages */
extern const char *prog;

/* -S, -P: list the sockets or their peers. Returns the exit status. */
int run_sockets(void);

#endif /* DLCPSTAT_H */
