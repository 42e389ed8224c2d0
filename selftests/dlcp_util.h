/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the DLCP selftest programs: network namespaces,
 * /proc/net/dlcp/snmp, sysctls, and the deterministic payloads that let a
 * receiver check a message byte for byte without having seen the sender.
 */
#ifndef DLCP_SELFTEST_UTIL_H
#define DLCP_SELFTEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>
#include <linux/dlcp.h>

#define DLCP_SNMP_PATH		"/proc/net/dlcp/snmp"
#define DLCP_SYSCTL_DIR		"/proc/sys/net/dlcp/"
#define DLCP_SNMP_MAX		128

/* The counters the selftests rely on; the module may have more. */
extern const char *const dlcp_snmp_names[];
extern const unsigned int dlcp_snmp_nr_names;

struct dlcp_snmp {
	unsigned int n;
	struct {
		char name[64];
		uint64_t val;
	} c[DLCP_SNMP_MAX];
};

/* Read the calling thread's netns's counters. 0, or -1 with errno set. */
int dlcp_snmp_read(struct dlcp_snmp *s);
/* Value of counter @name, or -1 (as uint64_t: UINT64_MAX) if absent. */
uint64_t dlcp_snmp_get(const struct dlcp_snmp *s, const char *name);
/* Whether counter @name exists. */
int dlcp_snmp_has(const struct dlcp_snmp *s, const char *name);

/*
 * Move the calling process into a new network namespace with lo up.
 * 0, or -1 with errno set.
 */
int dlcp_new_netns(void);
/* Bring interface @ifname up. 0, or -1 with errno set. */
int dlcp_link_up(const char *ifname);
int dlcp_link_mtu(const char *ifname, int mtu);

/* net.dlcp.@name as a number: 0, or -1 with errno set. */
int dlcp_sysctl_read(const char *name, long long *val);
int dlcp_sysctl_write(const char *name, long long val);

/*
 * Attach to the cgroup directory open at @cgfd, at @attach, a program of
 * @type that returns @verdict for everything (0: refuse, 1: allow). It
 * stays attached while the cgroup exists. 0, or -1 with errno set.
 */
int dlcp_cgroup_attach_verdict(int cgfd, enum bpf_prog_type type,
			       enum bpf_attach_type attach, int verdict);

/*
 * Deterministic payloads. A message is identified by (sender id, index);
 * its bytes are a splitmix64 stream seeded from the id, the index and the
 * length, so a message of the wrong length does not verify either.
 */
uint64_t dlcp_payload_seed(uint32_t sender, uint32_t index, size_t len);
void dlcp_payload_fill(void *buf, size_t len, uint64_t seed);
/*
 * Compare @buf with the payload of @seed; returns the offset of the first
 * differing byte, or @len if all match.
 */
size_t dlcp_payload_cmp(const void *buf, size_t len, uint64_t seed);

/* FNV-1a, 64 bit, for short digests in logs. */
uint64_t dlcp_fnv1a64(const void *buf, size_t len);

/* Monotonic time in seconds. */
double dlcp_now(void);

#endif /* DLCP_SELFTEST_UTIL_H */
