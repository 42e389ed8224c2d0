// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP on a shared node: hostile users. They check that:
 *  - critical retransmissions of an unprivileged sender do not go out in
 *    class 0, which only CAP_NET_ADMIN may use;
 *  - the UDP port of UDP mode is the namespace's: a socket without
 *    CAP_NET_ADMIN cannot open it;
 *  - a socket bound to a device receives only what arrives there, and
 *    DLCP_PATHS cannot lead out of it;
 *  - socket filters, IPsec policies and cgroup BPF bind, connect and
 *    egress programs apply to DLCP as to UDP.
 *
 * Each test runs in a network namespace of its own (the harness forks a
 * child per test). Needs root and the dlcp module loaded; the helpers
 * are in dlcp_hostile.h.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <net/if.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "dlcp_hostile.h"

/* ------------------------------------------------------------------ */
/* Privilege: the class of critical retransmissions                     */
/* ------------------------------------------------------------------ */

#define CRIT_MSGS	20
#define CRIT_LEN	20000

/*
 * Read what raw socket @raw holds: count the retransmitted DATA packets in
 * @rtx, and in @in_class0 those of them with DSCP @dscp0
 */
static void count_retransmissions(int raw, long long dscp0, unsigned int *rtx,
				  unsigned int *in_class0)
{
	for (;;) {
		uint8_t p[2048];
		ssize_t n = recv(raw, p, sizeof(p), MSG_DONTWAIT);
		const uint8_t *h = p + (p[0] & 0xf) * 4;

		if (n < 0)
			break;
		if (n < (p[0] & 0xf) * 4 + DLCP_HDR_LEN ||
		    (h[4] & 0xf) != DLCP_T_DATA || !(h[5] & DLCP_HF_RETRANS))
			continue;
		(*rtx)++;
		*in_class0 += (p[1] >> 2) == dscp0;
	}
}

/*
 * An unprivileged sender's critical segments, resent over a lossy link,
 * must not take class 0 (net.dlcp.unpriv_class is 1 by default). A raw
 * socket sees every DATA packet that survives the loss and reads its DSCP.
 * It is read after each message: a super-packet passes loopback whole,
 * charged to the raw socket's receive buffer for all its pages, and a few
 * would fill it, so that the resends of later messages found it full.
 */
TEST(unprivileged_critical_retransmissions)
{
	long long dscp0;
	static uint8_t buf[CRIT_LEN];
	unsigned int rtx = 0, in_class0 = 0;
	int tx, rx, raw, i;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	ASSERT_EQ(0, dlcp_sysctl_read("class_dscp", &dscp0));
	if (sh("tc qdisc add dev lo root netem loss 20% 2>/dev/null"))
		SKIP(return, "no netem");
	raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	tx = bound4("127.0.0.1");
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, raw);
	ASSERT_LE(0, tx);
	ASSERT_LE(0, rx);
	/* drop every capability: become nobody */
	ASSERT_EQ(0, setresgid(65534, 65534, 65534));
	ASSERT_EQ(0, setresuid(65534, 65534, 65534));

	for (i = 0; i < CRIT_MSGS; i++) {
		ASSERT_EQ(CRIT_LEN, send_to(tx, "127.0.0.1", port_of(rx), buf,
					    CRIT_LEN, DLCP_MSG_CRITICAL));
		ASSERT_EQ(CRIT_LEN, recv_within(rx, buf, CRIT_LEN, NULL,
						WAIT_MS));
		count_retransmissions(raw, dscp0, &rtx, &in_class0);
	}
	TH_LOG("critical retransmissions seen: %u, in class 0: %u", rtx,
	       in_class0);
	EXPECT_LT(0, rtx);
	EXPECT_EQ(0, in_class0);
	/* the last STOP may be lost: close() would wait for it */
	close_now(tx);
	close(rx);
	close(raw);
}

/* Raise or lower CAP_NET_ADMIN in the effective set; it stays permitted. */
static int net_admin_effective(int on)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	uint32_t bit = 1u << (CAP_NET_ADMIN % 32);

	if (syscall(SYS_capget, &h, d))
		return -1;
	if (on)
		d[CAP_NET_ADMIN / 32].effective |= bit;
	else
		d[CAP_NET_ADMIN / 32].effective &= ~bit;
	return syscall(SYS_capset, &h, d);
}

/* Whether UDP port @port of the namespace is taken (by DLCP's socket). */
static int udp_port_taken(uint16_t port)
{
	struct sockaddr_in a = sin4("0.0.0.0", port);
	int u = socket(AF_INET, SOCK_DGRAM, 0), taken;

	if (u < 0)
		return -1;
	taken = bind(u, (struct sockaddr *)&a, sizeof(a)) && errno == EADDRINUSE;
	close(u);
	return taken;
}

/*
 * The UDP port of UDP mode belongs to the namespace: a socket selecting
 * DLCP_ENCAP_UDP without CAP_NET_ADMIN over it gets EPERM and opens
 * nothing; once the administrator opened it (net.dlcp.encap), any socket
 * may use it; a socket with the capability opens it itself.
 */
TEST(udp_port_belongs_to_the_namespace)
{
	int s, udp = DLCP_ENCAP_UDP;

	ASSERT_EQ(0, dlcp_new_netns());
	s = socket(AF_INET, SOCK_DLCP, 0);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, net_admin_effective(0));
	EXPECT_EQ(-1, setsockopt(s, SOL_DLCP, DLCP_ENCAP, &udp, sizeof(udp)));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(0, udp_port_taken(DLCP_UDP_PORT));

	ASSERT_EQ(0, net_admin_effective(1));
	ASSERT_EQ(0, dlcp_sysctl_write("encap", 1));
	ASSERT_EQ(0, net_admin_effective(0));
	EXPECT_EQ(0, setsockopt(s, SOL_DLCP, DLCP_ENCAP, &udp, sizeof(udp)));
	ASSERT_EQ(0, net_admin_effective(1));
	close(s);

	ASSERT_EQ(0, dlcp_new_netns());
	s = socket(AF_INET, SOCK_DLCP, 0);
	ASSERT_LE(0, s);
	EXPECT_EQ(0, setsockopt(s, SOL_DLCP, DLCP_ENCAP, &udp, sizeof(udp)));
	EXPECT_EQ(1, udp_port_taken(DLCP_UDP_PORT));
	close(s);
}

/* ------------------------------------------------------------------ */
/* Isolation: devices                                                   */
/* ------------------------------------------------------------------ */

static int add_dummy(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd),
		 "modprobe -q dummy; ip link add %s type dummy && ip link set %s up",
		 name, name);
	return sh(cmd);
}

/* A socket bound to a device takes nothing that arrives elsewhere (lo). */
TEST(bound_device_receive)
{
	const char dev[] = "dlcpdum0";
	char buf[64];
	int tx, rx, plain;
	uint64_t nosock;

	ASSERT_EQ(0, dlcp_new_netns());
	if (add_dummy(dev))
		SKIP(return, "no dummy device");
	tx = bound4("127.0.0.1");
	rx = socket(AF_INET, SOCK_DLCP, 0);
	ASSERT_LE(0, tx);
	ASSERT_LE(0, rx);
	ASSERT_EQ(0, setsockopt(rx, SOL_SOCKET, SO_BINDTODEVICE, dev,
				sizeof(dev)));
	{
		struct sockaddr_in a = sin4("0.0.0.0", 0);

		ASSERT_EQ(0, bind(rx, (struct sockaddr *)&a, sizeof(a)));
	}
	nosock = snmp("DlcpDropNoSocket");
	ASSERT_EQ(5, send_to(tx, "127.0.0.1", port_of(rx), "hello", 5, 0));
	EXPECT_EQ(-1, recv_within(rx, buf, sizeof(buf), NULL, QUIET_MS));
	EXPECT_LT(nosock, snmp("DlcpDropNoSocket"));

	/* the same port unbound from the device (a control) */
	plain = bound4("127.0.0.1");
	ASSERT_LE(0, plain);
	ASSERT_EQ(5, send_to(tx, "127.0.0.1", port_of(plain), "hello", 5, 0));
	EXPECT_EQ(5, recv_within(plain, buf, sizeof(buf), NULL, WAIT_MS));
	close_now(tx);
	close(rx);
	close(plain);
}

/* DLCP_PATHS cannot name an interface outside the socket's device. */
TEST(bound_device_paths)
{
	const char dev[] = "dlcpdum1";
	struct dlcp_path p = { .weight = 1 };
	int fd;

	ASSERT_EQ(0, dlcp_new_netns());
	if (add_dummy(dev))
		SKIP(return, "no dummy device");
	fd = socket(AF_INET, SOCK_DLCP, 0);
	ASSERT_LE(0, fd);
	p.ifindex = if_nametoindex(dev);
	ASSERT_LT(0, p.ifindex);
	/* unbound: any interface */
	EXPECT_EQ(0, setsockopt(fd, SOL_DLCP, DLCP_PATHS, &p, sizeof(p)));
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3));
	EXPECT_EQ(-1, setsockopt(fd, SOL_DLCP, DLCP_PATHS, &p, sizeof(p)));
	EXPECT_EQ(EINVAL, errno);
	/* set before the binding: sendmsg() refuses it */
	EXPECT_EQ(-1, send_to(fd, "127.0.0.1", 9, "x", 1, 0));
	EXPECT_EQ(EINVAL, errno);
	p.ifindex = if_nametoindex("lo");
	EXPECT_EQ(0, setsockopt(fd, SOL_DLCP, DLCP_PATHS, &p, sizeof(p)));
	close_now(fd);
}

/* ------------------------------------------------------------------ */
/* Kernel policy: socket filters, IPsec, cgroup BPF                     */
/* ------------------------------------------------------------------ */

TEST(socket_filter)
{
	struct sock_filter drop_all = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { .len = 1, .filter = &drop_all };
	uint64_t filtered;
	int tx, rx, zero = 0;
	char buf[64];

	ASSERT_EQ(0, dlcp_new_netns());
	tx = bound4("127.0.0.1");
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, tx);
	ASSERT_LE(0, rx);
	ASSERT_EQ(0, setsockopt(rx, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
				sizeof(prog)));
	filtered = snmp("DlcpDropFilter");
	ASSERT_EQ(5, send_to(tx, "127.0.0.1", port_of(rx), "first", 5, 0));
	EXPECT_EQ(-1, recv_within(rx, buf, sizeof(buf), NULL, QUIET_MS));
	EXPECT_LT(filtered, snmp("DlcpDropFilter"));

	ASSERT_EQ(0, setsockopt(rx, SOL_SOCKET, SO_DETACH_FILTER, &zero,
				sizeof(zero)));
	ASSERT_EQ(6, send_to(tx, "127.0.0.1", port_of(rx), "second", 6, 0));
	EXPECT_EQ(6, recv_within(rx, buf, sizeof(buf), NULL, WAIT_MS));
	close_now(tx);
	close(rx);
}

/* An inbound policy that requires ESP for protocol 253: plaintext is dropped */
TEST(ipsec_policy_required)
{
	char buf[64];
	int tx, rx;

	ASSERT_EQ(0, dlcp_new_netns());
	sh("modprobe -q xfrm_user");
	if (sh("ip xfrm policy add src 127.0.0.1/32 dst 127.0.0.1/32 proto 253 "
	       "dir in tmpl proto esp mode transport level required"))
		SKIP(return, "no ip xfrm");
	tx = bound4("127.0.0.1");
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, tx);
	ASSERT_LE(0, rx);
	ASSERT_EQ(5, send_to(tx, "127.0.0.1", port_of(rx), "plain", 5, 0));
	EXPECT_EQ(-1, recv_within(rx, buf, sizeof(buf), NULL, QUIET_MS));
	EXPECT_LT(0, snmp("DlcpDropPolicy"));

	ASSERT_EQ(0, sh("ip xfrm policy flush"));
	ASSERT_EQ(5, send_to(tx, "127.0.0.1", port_of(rx), "again", 5, 0));
	EXPECT_EQ(5, recv_within(rx, buf, sizeof(buf), NULL, WAIT_MS));
	close_now(tx);
	close(rx);
}

/* Write @val to the file @path (a sysctl outside net.dlcp). */
static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* A cgroup2 hierarchy mounted at a temporary directory, and a child. */
struct cgroup_test {
	char root[32];
	char cg[300];
};

/*
 * Mount cgroup2 at @t's root, in a mount namespace of the test's own.
 * 0, or a negative errno to skip for.
 */
static int cgroup_mount(struct cgroup_test *t)
{
	int err;

	strcpy(t->root, "/tmp/dlcp-cg-XXXXXX");
	t->cg[0] = '\0';
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    !mkdtemp(t->root))
		return -errno;
	if (mount("none", t->root, "cgroup2", 0, NULL)) {
		err = -errno;
		rmdir(t->root);
		return err;
	}
	return 0;
}

/*
 * Mount cgroup2 (cgroup_mount()), make a child cgroup in it and attach
 * to it, for each of the @n types, a program of @prog_type that refuses
 * everything. 0, or a negative errno to skip for.
 */
static int cgroup_refusing(struct cgroup_test *t, enum bpf_prog_type prog_type,
			   const enum bpf_attach_type *types, int n)
{
	int cgfd, i, err;

	err = cgroup_mount(t);
	if (err)
		return err;
	snprintf(t->cg, sizeof(t->cg), "%s/dlcp-test-%d", t->root, getpid());
	cgfd = mkdir(t->cg, 0755) ? -1 : open(t->cg, O_RDONLY | O_DIRECTORY);
	for (i = 0; cgfd >= 0 && i < n && !err; i++)
		if (dlcp_cgroup_attach_verdict(cgfd, prog_type, types[i], 0))
			err = -errno;
	if (cgfd < 0)
		err = -errno;
	else
		close(cgfd);
	return err;
}

static void cgroup_remove(struct cgroup_test *t)
{
	rmdir(t->cg);
	umount(t->root);
	rmdir(t->root);
}

/*
 * Run @fn in a child process moved into a cgroup to which programs of
 * @prog_type that refuse everything are attached, one for each of the @n
 * @types: the number of checks @fn found failed, 0xff if the programs do
 * not apply (skip), or a negative errno if they could not be set up.
 */
static int cgroup_refused(enum bpf_prog_type prog_type,
			  const enum bpf_attach_type *types, int n,
			  int (*fn)(void))
{
	struct cgroup_test t;
	char path[340];
	int status, rc;
	pid_t pid;

	rc = cgroup_refusing(&t, prog_type, types, n);
	snprintf(path, sizeof(path), "%s/cgroup.procs", t.cg);
	pid = rc ? -1 : fork();
	if (!pid)
		_exit(write_file(path, "0") ? 0xff : fn() & 0xff);
	if (!rc)
		rc = pid < 0 || waitpid(pid, &status, 0) != pid ||
		     !WIFEXITED(status) ? 1 : WEXITSTATUS(status);
	cgroup_remove(&t);
	return rc;
}

/* Skip for what cgroup_refused() says, or expect it to find no failure. */
#define EXPECT_CGROUP_REFUSED(rc)					\
	do {								\
		if ((rc) < 0)						\
			SKIP(return, "no cgroup programs: %s",		\
			     strerror(-(rc)));				\
		if ((rc) == 0xff)					\
			SKIP(return, "cgroup programs do not apply here"); \
		EXPECT_EQ(0, rc);					\
	} while (0)

/*
 * bind() and connect() of a DLCP socket fail with EPERM, as for UDP,
 * where the cgroup's bind4 and connect4 programs refuse everything.
 */
static int bind_connect_refused(void)
{
	struct sockaddr_in a = sin4("127.0.0.1", 0);
	int fails = 0, fd, udp;

	fd = socket(AF_INET, SOCK_DLCP, 0);
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || udp < 0)
		return 1;
	/* UDP first: if the programs do not stop it, skip */
	if (!bind(udp, (struct sockaddr *)&a, sizeof(a)))
		return 0xff;
	fails += !(bind(fd, (struct sockaddr *)&a, sizeof(a)) && errno == EPERM);
	a.sin_port = htons(9);
	fails += !(connect(fd, (struct sockaddr *)&a, sizeof(a)) &&
		   errno == EPERM);
	return fails;
}

TEST(cgroup_bpf_bind_connect)
{
	const enum bpf_attach_type types[] = {
		BPF_CGROUP_INET4_BIND, BPF_CGROUP_INET4_CONNECT,
	};
	int rc;

	ASSERT_EQ(0, dlcp_new_netns());
	rc = cgroup_refused(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, types, 2,
			    bind_connect_refused);
	EXPECT_CGROUP_REFUSED(rc);
}

/*
 * A message none of whose packets may leave (the cgroup's egress program
 * drops each: the IP layer says EPERM, as to UDP) fails msg_timeout_ms
 * after its first attempt, and its completion says EPERM, not ENOBUFS (a
 * queue's drop).
 */
static int egress_refused(void)
{
	struct sockaddr_in a = sin4("127.0.0.1", 9);
	uint32_t status = 0;
	int fd, udp, err = 0;
	double t0;

	udp = socket(AF_INET, SOCK_DGRAM, 0);
	if (udp < 0)
		return 1;
	/* UDP first: if the program does not stop it, skip */
	if (sendto(udp, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) == 1)
		return 0xff;
	if (errno != EPERM)
		return 1;
	fd = quick_sender(1000);
	if (fd < 0 || send_to(fd, "127.0.0.1", 9, "0123456789", 10, 0) != 10)
		return 1;
	t0 = dlcp_now();
	if (completion(fd, 8000, &status, &err))
		return 1;
	printf("# ended after %.1f s: status %u, %s\n", dlcp_now() - t0,
	       status, strerror(err));
	return (status != DLCP_DONE_TIMEOUT) + (err != EPERM);
}

TEST(cgroup_bpf_egress_ends_message)
{
	const enum bpf_attach_type type = BPF_CGROUP_INET_EGRESS;
	int rc;

	ASSERT_EQ(0, dlcp_new_netns());
	rc = cgroup_refused(BPF_PROG_TYPE_CGROUP_SKB, &type, 1, egress_refused);
	EXPECT_CGROUP_REFUSED(rc);
}

/*
 * The messages of send_pages_charged_to_own_cgroup: 256 pages each, as
 * many as a CPU keeps by default
 */
#define CHARGE_MSG	(1024 * 1024)
#define CHARGE_MSGS	4

/*
 * A cgroup's memory file @name in bytes (memory.peak), or with @key the
 * value of that line of it (memory.stat); -1 if there is none.
 */
static long long cgroup_mem(const char *cg, const char *name, const char *key)
{
	char path[340], line[128];
	size_t klen = key ? strlen(key) : 0;
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg, name);
	f = fopen(path, "r");
	while (f && v < 0 && fgets(line, sizeof(line), f))
		if (!key)
			v = atoll(line);
		else if (!strncmp(line, key, klen) && line[klen] == ' ')
			v = atoll(line + klen + 1);
	if (f)
		fclose(f);
	return v;
}

/*
 * In a child moved into @cg and pinned to CPU 0, send @n messages of
 * @buf (CHARGE_MSG bytes) to 127.0.0.1:@port, one at a time, each to its
 * completion. 0 if all were delivered.
 */
static int charge_send(const char *cg, uint16_t port, const char *buf, int n)
{
	char path[340];
	cpu_set_t cpus;
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	pid = fork();
	if (!pid) {
		uint32_t st;
		int fd, err, i;

		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		if (write_file(path, "0") ||
		    sched_setaffinity(0, sizeof(cpus), &cpus))
			_exit(1);
		fd = quick_sender(10000);
		for (i = 0; i < n; i++)
			if (fd < 0 ||
			    send_to(fd, "127.0.0.1", port, buf, CHARGE_MSG, 0) !=
			    CHARGE_MSG ||
			    completion(fd, WAIT_MS, &st, &err) ||
			    st != DLCP_DONE_EXACT)
				_exit(1);
		_exit(0);
	}
	return pid < 0 || waitpid(pid, &status, 0) != pid ||
	       !WIFEXITED(status) ? 1 : WEXITSTATUS(status);
}

/*
 * The pages of a message being sent are charged to the memory cgroup of
 * the task that sends it. Freed message pages are kept for reuse: those
 * of cgroup A's messages stay charged to A (its kernel memory, read once
 * the kernel's periodic flush of the statistics, every 2 s, has counted
 * them), and a task of cgroup B that sends on the same CPU next gets new
 * pages, charged to B, not A's.
 */
TEST(send_pages_charged_to_own_cgroup)
{
	char cg_a[300], path[340], *buf;
	long long a_done, b_peak;
	struct cgroup_test t;
	int r, err;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_up("lo"));
	/* the buffer's pages belong to this process, in no test cgroup */
	buf = malloc(CHARGE_MSG);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, CHARGE_MSG);
	r = bound4("127.0.0.1");
	ASSERT_LE(0, r);
	err = cgroup_mount(&t);
	if (err)
		SKIP(return, "no cgroup2: %s", strerror(-err));
	snprintf(cg_a, sizeof(cg_a), "%s/dlcp-mem-a-%d", t.root, getpid());
	/* B is t.cg, which cgroup_remove() removes */
	snprintf(t.cg, sizeof(t.cg), "%s/dlcp-mem-b-%d", t.root, getpid());
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", t.root);
	if (write_file(path, "+memory") || mkdir(cg_a, 0755) ||
	    mkdir(t.cg, 0755) || cgroup_mem(t.cg, "memory.peak", NULL) < 0) {
		rmdir(cg_a);
		cgroup_remove(&t);
		SKIP(return, "no memory controller with memory.peak");
	}

	if (fork() == 0) {
		/* the receiver, in the test's own cgroup */
		static char in[CHARGE_MSG];
		int i;

		for (i = 0; i < CHARGE_MSGS + 1; i++)
			if (recv_within(r, in, sizeof(in), NULL, WAIT_MS) !=
			    CHARGE_MSG)
				_exit(1);
		_exit(0);
	}
	EXPECT_EQ(0, charge_send(cg_a, port_of(r), buf, CHARGE_MSGS));
	sleep(3);
	a_done = cgroup_mem(cg_a, "memory.stat", "kernel");
	EXPECT_EQ(0, charge_send(t.cg, port_of(r), buf, 1));
	b_peak = cgroup_mem(t.cg, "memory.peak", NULL);
	printf("# A's kernel memory after its messages: %lld KiB; B's peak: %lld KiB\n",
	       a_done >> 10, b_peak >> 10);
	/* the pages of A's messages are kept, and stay charged to A */
	EXPECT_LE(CHARGE_MSG * 3 / 4, a_done);
	/* B was charged for all of its message's pages */
	EXPECT_LE(CHARGE_MSG, b_peak);
	wait(NULL);
	rmdir(cg_a);
	cgroup_remove(&t);
	free(buf);
}

#define STATE_DESTS	300

/*
 * The state a socket keeps for what it sends (a message's own, its
 * segment map, a destination's path state, the flight ring) is charged to
 * the memory cgroup of the task that sends, as its pages are: a child in
 * a cgroup sends a byte to each of STATE_DESTS destinations that never
 * answer, and holds them; the cgroup's slab memory grows by at least
 * 512 bytes a destination.
 */
TEST(send_state_charged_to_own_cgroup)
{
	char path[340], go;
	long long before, held;
	struct cgroup_test t;
	int up[2], down[2], i, err;
	pid_t pid;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_up("lo"));
	/* destinations that never answer, not even for their closed port */
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	err = cgroup_mount(&t);
	if (err)
		SKIP(return, "no cgroup2: %s", strerror(-err));
	snprintf(t.cg, sizeof(t.cg), "%s/dlcp-state-%d", t.root, getpid());
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", t.root);
	if (write_file(path, "+memory") || mkdir(t.cg, 0755) ||
	    cgroup_mem(t.cg, "memory.stat", "slab") < 0) {
		cgroup_remove(&t);
		SKIP(return, "no memory controller with slab statistics");
	}
	/* the child says "held" up, the parent "done" down */
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	snprintf(path, sizeof(path), "%s/cgroup.procs", t.cg);
	sleep(3);
	before = cgroup_mem(t.cg, "memory.stat", "slab");
	pid = fork();
	if (!pid) {
		char to[32];
		int fd;

		close(up[0]);
		close(down[1]);
		fd = quick_sender(60000);
		if (fd < 0 || write_file(path, "0")) {
			printf("# child: no socket or cgroup: %s\n",
			       strerror(errno));
			_exit(1);
		}
		for (i = 0; i < STATE_DESTS; i++) {
			snprintf(to, sizeof(to), "127.2.%d.%d", i / 250,
				 i % 250 + 1);
			if (send_to(fd, to, 9, "x", 1, 0) != 1) {
				printf("# child: send to %s: %s\n", to,
				       strerror(errno));
				_exit(1);
			}
		}
		/* held until the parent has read the statistics */
		if (write(up[1], "", 1) != 1 || read(down[0], &go, 1) != 1)
			_exit(1);
		close_now(fd);
		_exit(0);
	}
	ASSERT_LT(0, pid);
	close(up[1]);
	close(down[0]);
	/* EOF: the child failed before it held them */
	ASSERT_EQ(1, read(up[0], &go, 1));
	/* the statistics are flushed every 2 s */
	sleep(3);
	held = cgroup_mem(t.cg, "memory.stat", "slab");
	ASSERT_EQ(1, write(down[1], "", 1));
	waitpid(pid, NULL, 0);
	printf("# slab of the sender's cgroup: %lld KiB before, %lld KiB with %d destinations\n",
	       before >> 10, held >> 10, STATE_DESTS);
	EXPECT_LE(before + STATE_DESTS * 512LL, held);
	cgroup_remove(&t);
}

TEST_HARNESS_MAIN
