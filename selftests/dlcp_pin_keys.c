// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pin_keys CGROUP: attach to the cgroup v2 directory CGROUP programs
 * that allow everything, of the cgroup BPF types the selftests attach
 * (inet4 bind and connect, inet egress), and exit. The programs stay
 * attached while the cgroup exists.
 *
 * run_vm.sh calls it once, before the first test, with an empty cgroup of
 * its own: the kernel's static keys behind those hooks are then on for
 * the whole run, and a test that attaches and detaches its own programs
 * no longer switches them. Switching a key rewrites the kernel's text
 * (text_poke_bp()), and under TCG a vCPU sending or receiving packets
 * meanwhile can run the breakpoint that the rewrite plants after it is
 * gone: "Oops: int3" in ip_finish_output() or in the module, and a
 * panic in softirq.
 *
 * Exit status 0, or 1 with the reason on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest.h"

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Load a program of @type for @attach that returns 1: allow. */
static int load_allow(enum bpf_prog_type type, enum bpf_attach_type attach)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.expected_attach_type = attach;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = ARRAY_SIZE(insns);
	attr.license = (uintptr_t)"GPL";
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

int main(int argc, char **argv)
{
	static const struct {
		enum bpf_prog_type type;
		enum bpf_attach_type attach;
		const char *name;
	} hooks[] = {
		{ BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_BIND, "bind4" },
		{ BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT,
		  "connect4" },
		{ BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, "egress" },
	};
	unsigned int i;
	int cg;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CGROUP_DIR\n", argv[0]);
		return 1;
	}
	cg = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1],
			strerror(errno));
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		int prog = load_allow(hooks[i].type, hooks[i].attach);
		union bpf_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.target_fd = cg;
		attr.attach_bpf_fd = prog;
		attr.attach_type = hooks[i].attach;
		if (prog < 0 || sys_bpf(BPF_PROG_ATTACH, &attr)) {
			fprintf(stderr, "%s: %s program: %s\n", argv[0],
				hooks[i].name, strerror(errno));
			return 1;
		}
		close(prog);
	}
	close(cg);
	return 0;
}
