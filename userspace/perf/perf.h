/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcp-perf: what its parts share. dlcp-perf.c: options and main;
 * common.c: errors, clocks, sockets; server.c; client.c (the measurement,
 * --senders); report.c (counters, CPU, completion-time percentiles, the
 * client's report). See dlcp-perf.c for what the tool measures.
 */
#ifndef DLCP_PERF_H
#define DLCP_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include "dlcpstat_lib.h"
#include "../lib/io.h"

#define PERF_MAGIC	0x444c5046u	/* "DLPF" */
#define T_DATA		1
#define T_ACK		2
#define DEFAULT_PORT	5301
#define MAX_SIZES	64
#define MAX_MSG		(1u << 30)
#define ACK_TENSOR	0xfffffff0u

/* TCP frame header, network byte order */
struct frame {
	uint32_t magic;
	uint32_t type;
	uint32_t client;
	uint32_t seq;
	uint64_t len;
} __attribute__((packed));

/* ACK, server -> client, host byte order (same kind of machine) */
struct ack {
	uint32_t magic;
	uint32_t type;
	uint32_t client;
	uint32_t seq;
	uint64_t recv_ns;
	uint64_t boot;		/* first 8 bytes of the server's boot id */
	uint32_t len;
	uint32_t bytes_lost;
	uint32_t status;	/* DLCP_RECV_* */
	uint32_t pad;
};

enum proto { P_DLCP, P_TCP };

struct perf_opts {
	enum proto proto;
	bool proto_set;
	const char *host;
	uint16_t port;
	uint64_t sizes[MAX_SIZES];
	unsigned int nsizes;
	uint64_t count;
	double duration;
	unsigned int concurrency;
	int layer;
	long budget;
	int prio;
	int encap;		/* -1: the namespace's net.dlcp.encap */
	unsigned int senders;
	uint32_t id;
	double timeout;
	bool json;
	bool samples;
	bool verbose;
	unsigned int threads;	/* server: DLCP receiving threads */
	bool no_ack;		/* DLCP: no ACK messages; completions count */
};

extern struct perf_opts opt;
extern const char *prog;

/* One data message of the client. */
struct rec {
	uint64_t send_ns;	/* before sendmsg() */
	uint64_t recv_ns;	/* receiver's recvmsg() return */
	uint64_t ack_ns;	/* ACK arrival at the client */
	uint64_t done_ns;	/* DLCP completion on the error queue */
	uint64_t len;
	uint32_t lost;
	uint8_t status;
	bool acked;
};

/* client.c: the client's messages, and what went wrong with them */
extern struct rec *recs;
extern uint64_t nrecs;
extern uint64_t boot_mismatch;
extern uint64_t completions_failed;

struct cpustat {
	double busy, total;	/* seconds, all CPUs */
};

/* The client's counters and CPU, before and after its run. */
struct client_usage {
	struct dlcpstat_table ctr0, ctr1;
	struct cpustat cpu0, cpu1;
	struct rusage ru0, ru1;
};

/* dlcp-perf.c: the usage on stderr, exit 2 */
void usage(void);

/* common.c */
/* "dlcp-perf: message", exit 1 */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* the same, then usage() (exit 2) */
void bad_opt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t now_ns(void);
uint64_t boot_id(void);
int dlcp_socket(void);
void resolve(const char *host, uint16_t port, struct sockaddr_in *sin);

/* server.c */
int run_server(void);

/* client.c */
int run_client(void);
int run_senders(void);

/* report.c */
void read_counters(struct dlcpstat_table *t);
void read_cpustat(struct cpustat *c);
void report_client(FILE *o, struct client_usage *u, uint64_t first_send);

#endif /* DLCP_PERF_H */
