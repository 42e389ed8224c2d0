// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the DLCP selftest programs. See dlcp_util.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dlcp_util.h"

const char *const dlcp_snmp_names[] = {
	"DlcpInMsgs", "DlcpOutMsgs", "DlcpInPkts", "DlcpOutPkts",
	"DlcpRetransPkts", "DlcpInCsumErrors", "DlcpDropShort",
	"DlcpDropVersion", "DlcpDropType", "DlcpDropHdrLen", "DlcpDropLen",
	"DlcpDropFlags", "DlcpDropMsgLen", "DlcpDropOffset", "DlcpDropGaps",
	"DlcpDropField", "DlcpDropNoSocket", "DlcpDropRcvMem",
};
const unsigned int dlcp_snmp_nr_names =
	sizeof(dlcp_snmp_names) / sizeof(dlcp_snmp_names[0]);

int dlcp_snmp_read(struct dlcp_snmp *s)
{
	char line[256], name[64];
	unsigned long long v;
	FILE *f;

	s->n = 0;
	f = fopen(DLCP_SNMP_PATH, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		if (s->n == DLCP_SNMP_MAX)
			break;
		snprintf(s->c[s->n].name, sizeof(s->c[s->n].name), "%s", name);
		s->c[s->n].val = v;
		s->n++;
	}
	fclose(f);
	return 0;
}

int dlcp_snmp_has(const struct dlcp_snmp *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].name, name))
			return 1;
	return 0;
}

uint64_t dlcp_snmp_get(const struct dlcp_snmp *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].name, name))
			return s->c[i].val;
	return UINT64_MAX;
}

int dlcp_link_up(const char *ifname)
{
	struct ifreq ifr;
	int fd, ret = -1;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return ret;
}

int dlcp_link_mtu(const char *ifname, int mtu)
{
	struct ifreq ifr;
	int fd, ret;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_mtu = mtu;
	ret = ioctl(fd, SIOCSIFMTU, &ifr);
	close(fd);
	return ret;
}

int dlcp_new_netns(void)
{
	if (unshare(CLONE_NEWNET))
		return -1;
	return dlcp_link_up("lo");
}

int dlcp_sysctl_read(const char *name, long long *val)
{
	char path[256], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), DLCP_SYSCTL_DIR "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		errno = n ? errno : EIO;
		return -1;
	}
	buf[n] = 0;
	*val = strtoll(buf, NULL, 10);
	return 0;
}

int dlcp_sysctl_write(const char *name, long long val)
{
	char path[256], buf[64];
	int fd, len;
	ssize_t n;

	snprintf(path, sizeof(path), DLCP_SYSCTL_DIR "%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%lld\n", val);
	n = write(fd, buf, (size_t)len);
	close(fd);
	return n == len ? 0 : -1;
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t dlcp_payload_seed(uint32_t sender, uint32_t index, size_t len)
{
	uint64_t s = ((uint64_t)sender << 32 | index) ^
		     ((uint64_t)len * 0xd1b54a32d192ed03ull);

	return splitmix64(&s);
}

void dlcp_payload_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *b = buf;
	uint64_t v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		v = splitmix64(&seed);
		memcpy(b + i, &v, 8);
	}
	if (i < len) {
		v = splitmix64(&seed);
		memcpy(b + i, &v, len - i);
	}
}

size_t dlcp_payload_cmp(const void *buf, size_t len, uint64_t seed)
{
	const uint8_t *b = buf;
	uint8_t chunk[8];
	uint64_t v;
	size_t i, j;

	for (i = 0; i < len; i += 8) {
		size_t n = len - i < 8 ? len - i : 8;

		v = splitmix64(&seed);
		memcpy(chunk, &v, 8);
		if (memcmp(b + i, chunk, n)) {
			for (j = 0; j < n; j++)
				if (b[i + j] != chunk[j])
					return i + j;
		}
	}
	return len;
}

uint64_t dlcp_fnv1a64(const void *buf, size_t len)
{
	const uint8_t *b = buf;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int dlcp_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int dlcp_cgroup_attach_verdict(int cgfd, enum bpf_prog_type type,
			       enum bpf_attach_type attach, int verdict)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = verdict },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	int prog, err, saved;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.expected_attach_type = attach;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (uintptr_t)"GPL";
	prog = dlcp_bpf(BPF_PROG_LOAD, &attr);
	if (prog < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = cgfd;
	attr.attach_bpf_fd = prog;
	attr.attach_type = attach;
	err = dlcp_bpf(BPF_PROG_ATTACH, &attr);
	saved = errno;
	close(prog);
	errno = saved;
	return err ? -1 : 0;
}

double dlcp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
