// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pin_keys CGROUP: attach to the cgroup v2 directory CGROUP programs
 * that allow everything, of the cgroup BPF types the selftests attach
 * (inet4 bind and connect, inet egress), and exit. The programs stay
 * attached while the cgroup exists. It also leaves behind a process that
 * holds a socket asking for receive timestamps (SO_TIMESTAMP, as ping and
 * tcpdump do) until it is killed: the kernel stamps every received packet
 * while one exists.
 *
 * run_vm.sh calls it once, before the first test, with an empty cgroup of
 * its own, so that the kernel's static keys behind those hooks stay on
 * for the whole run and the tests' own programs never switch them
 * (pin_static_keys() there says why that matters under TCG).
 *
 * Exit status 0, or 1 with the reason on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "kselftest.h"
#include "dlcp_util.h"

/*
 * Open a socket with SO_TIMESTAMP on and leave it to a child that keeps
 * it, its standard streams on /dev/null (a caller reading our output is
 * not kept waiting): 0, or 1 with the reason on stderr.
 */
static int hold_timestamps(const char *prog)
{
	int one = 1, fd, null;
	pid_t pid;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &one, sizeof(one))) {
		fprintf(stderr, "%s: SO_TIMESTAMP: %s\n", prog,
			strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
		return 1;
	}
	if (!pid) {
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		for (;;)
			pause();
	}
	close(fd);
	return 0;
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
	for (i = 0; i < ARRAY_SIZE(hooks); i++)
		if (dlcp_cgroup_attach_verdict(cg, hooks[i].type,
					       hooks[i].attach, 1)) {
			fprintf(stderr, "%s: %s program: %s\n", argv[0],
				hooks[i].name, strerror(errno));
			return 1;
		}
	close(cg);
	return hold_timestamps(argv[0]);
}
