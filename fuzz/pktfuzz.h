/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcp_pktfuzz: what its parts share. dlcp_pktfuzz.c says what the tool
 * does; the parts are
 *   pktfuzz_target.c   namespaces, counters and /proc readers, the target
 *                      socket (PRNG, clock)
 *   pktfuzz_gen.c      fuzz packets: generation and mutation
 *   pktfuzz_predict.c  what the receiver must do with each fuzz packet,
 *                      and the checks of the counters against it
 *   pktfuzz_attack.c   the attacks: spoofed control packets, fresh-id
 *                      floods, never-finishing messages
 *   pktfuzz_pair.c     the well-behaved pair, the observer and the memory
 *                      sampler (threads)
 */
#ifndef DLCP_PKTFUZZ_H
#define DLCP_PKTFUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/types.h>

#include "dlcp_pkt.h"

#define NR_CTR		256
#define NR_ACTIVE	32
#define NR_KNOWN	64
#define MAX_PKT		1480	/* fits a 1500-byte MTU with the IP header */
#define MAX_PKT_UDP	(MAX_PKT - 8)	/* and with a UDP header */
#define UDP_PCT		75	/* --udp: share of packets inside UDP */

struct pf_opts {
	const char *target_ns, *attacker_ns, *settle_file, *done_file;
	uint32_t src, dst, pair_src, observer;
	uint16_t port, avoid_port, peer_port, udp_port;
	unsigned long count, rate, ranges;
	unsigned long spoof, flood, slow_msgs, slow_rounds, slow_interval_ms;
	uint64_t seed;
	int settle, verbose, udp;
};

extern struct pf_opts o;
extern int ns_self, ns_target, ns_attacker, ns_init;
extern uint32_t max_msg;

/* ------------------------------------------------- pktfuzz_target.c */

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
					       noreturn));
void enter(int fd);
double now(void);
void sleep_until(double t);
void touch_file(const char *path);

uint64_t rnd64(void);
uint32_t rnd(uint32_t n);	/* [0, n) */
uint32_t rnd32(void);
int chance(unsigned int pct);
void rnd_seed(uint64_t seed);

struct snmp {
	int n;
	char name[NR_CTR][48];
	uint64_t val[NR_CTR];
};

/* the counters of each namespace taking part */
enum { NS_SELF, NS_TARGET, NS_ATTACKER, __NS_MAX };

struct snap {
	struct snmp s[__NS_MAX];
	int64_t udp_inerr, udp_csumerr;		/* the target's */
};

void snmp_read(int ns, struct snmp *s);
int64_t snmp_get(const struct snmp *s, const char *name);
void snap_take(struct snap *sn);
/* the same, once no DLCP packet moved for a while (at most 5 s) */
void snap_take_quiet(struct snap *sn);
/* counter @name's growth in namespace @ns between two snapshots */
int64_t dsnap(const struct snap *a, const struct snap *b, int ns,
	      const char *name);
long long sysctl_read(int ns, const char *name);
long long proto_mem_pcpu_rsv(void);
int proto_mem_read(long long mem[3]);
long proto_pages(void);
struct sock_row {
	unsigned long rx_mem, in_msgs;
	int found;
};
void sockets_read(int ns, const uint16_t *ports, struct sock_row *rows,
		  int n);
void udp_snmp_read(int ns, int64_t *inerr, int64_t *csumerr);

int socket_in(int ns, int type, int proto);
int target_open(void);
void target_send(int fd);
void target_drain(int fd);
void raw_drain(int raw, int raw_udp);
int sendto_retry(int fd, const void *buf, size_t len,
		 const struct sockaddr_in *to);
extern unsigned long send_waits;	/* times sendto_retry() waited */

struct target_stats {
	unsigned long sent, recv, lossy, compl, nonzero;
};
extern struct target_stats tgt;

/* ---------------------------------------------------- pktfuzz_gen.c */

enum mutation {
	MUT_NONE, MUT_BITFLIP, MUT_TRUNC, MUT_EXTEND, MUT_FIELD, MUT_BADCSUM,
	MUT_GARBAGE, __MUT_MAX
};

/* --udp: what was done to the UDP layer */
enum udp_mutation {
	UMUT_NONE, UMUT_NOCSUM, UMUT_BADCSUM, UMUT_LONGLEN, UMUT_SHORTLEN,
	__UMUT_MAX
};

extern const char *const mut_name[__MUT_MAX];
extern const char *const umut_name[__UMUT_MAX];

/* One fuzz packet as built: what the predictor needs to know of it. */
struct fuzz_pkt {
	size_t n;		/* bytes of DLCP packet sent */
	size_t n_eff;		/* what DLCP sees (UDP may trim) */
	size_t ulen;		/* UDP length field */
	uint16_t dport;
	unsigned int mut, um;
	int via_udp;
};

void learn(const uint8_t *pkt, ssize_t n);
unsigned int gen_learnt(void);
void fuzz_build(uint8_t *pkt, struct fuzz_pkt *fp);
int udp_send(int raw_udp, const uint8_t *pkt, size_t n, unsigned int um,
	     size_t ulen, const struct sockaddr_in *to);
unsigned long ranges_burst(int raw, const struct sockaddr_in *to);
/* ports that fuzz packets must never be sent to (real sockets) */
void gen_avoid_port(uint16_t port);
int gen_port_avoided(uint16_t port);

/* ------------------------------------------------ pktfuzz_predict.c */

/* What must become of a packet. */
enum outcome {
	OUT_DATA = 0, OUT_REPORT, OUT_STOP, OUT_PROBE, OUT_ABORT,
	OUT_NOSOCKET, OUT_CSUM,
	OUT_UDP_CSUM, OUT_UDP_LEN,	/* dropped by UDP, never reach DLCP */
	OUT_REASON,	/* + enum dlcp_drop_reason */
	__OUT_MAX = OUT_REASON + __DLCP_DROP_PURE_MAX
};

extern const char *const dispatch_ctr[OUT_ABORT + 1];
extern const char *const sent_ctr[OUT_ABORT + 1];

/* packets predicted to reach the target's namespace, by outcome */
extern unsigned long expect[__OUT_MAX];
extern unsigned long mut_count[__MUT_MAX], mut_passed[__MUT_MAX];
extern unsigned long umut_count[__UMUT_MAX], sent_udp, sent_udp_passed;

enum outcome predict(uint8_t *pkt, const struct fuzz_pkt *fp);

/* packets injected into each namespace that DLCP must see */
extern unsigned long injected[__NS_MAX];

int check_fuzz(const struct snap *a, const struct snap *b, int strict_types);
void report_mutations(unsigned long sent);
int check_eq(const char *what, int64_t predicted, int64_t got);
int check_ge(const char *what, int64_t predicted, int64_t got);
int check_le(const char *what, int64_t limit, int64_t got);
int check_range(const char *what, int64_t lo, int64_t hi, int64_t got);

/* ------------------------------------------------- pktfuzz_attack.c */

int attack_open(void);
int attack_active(void);
unsigned long attack_free_left(void);
int attack_slow_due(double t);
double attack_next_due(void);
int attack_step(int slow);
int attack_finish(int tfd);
int attack_check(const struct snap *a, const struct snap *b, int mixed,
		 unsigned long t_limit, unsigned long r_limit);
uint16_t attack_r_port(void);
void attack_close(void);

/* --------------------------------------------------- pktfuzz_pair.c */

/* the lengths the pair's messages have (an attacker may know them) */
extern const uint32_t pair_lens[];
extern const unsigned int nr_pair_lens;

struct pair_info {
	uint16_t s_port, r_port, c_port;
};

int pair_start(struct pair_info *pi);
void pair_stop(void);
int pair_check(unsigned long *done);
/* ids the observer saw from the pair's sender: 0 if none yet */
int pair_observed_id(uint32_t *id);

void sampler_start(const uint16_t *ports, int n);
void sampler_stop(void);
struct mem_peak {
	unsigned long rx_mem[4], in_msgs[4];
	long proto_pages;
	unsigned long samples;
};
void sampler_peak(struct mem_peak *p);

#endif
