// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP on a shared node: hostile peers and users.
 *
 * Each test runs in a network namespace of its own (the harness forks a
 * child per test). They check that:
 *  - UDP GSO super-packets are built only in page fragments with room for
 *    them (order-0 pages, MTU 9000), and transfers stay byte-exact;
 *  - a host that receives from a socket cannot predict the message ids
 *    that socket uses towards another host, so DATA forged off-path does
 *    not pre-write (poison) a message it sends there;
 *  - critical retransmissions of an unprivileged sender do not go out in
 *    class 0, which only CAP_NET_ADMIN may use;
 *  - a socket bound to a device receives only what arrives there, and
 *    DLCP_PATHS cannot lead out of it;
 *  - socket filters, IPsec policies and cgroup BPF bind/connect programs
 *    apply to DLCP as to UDP;
 *  - an IPv6 packet with a v4-mapped source is dropped, not taken for
 *    IPv4;
 *  - every message ends: one whose transmissions all fail, one whose
 *    receiver answers but never takes it; and close() is bounded;
 *  - a flood of fresh message ids from forged sources stays within the
 *    socket's limits (net.dlcp.max_in_msgs, net.dlcp.rmem) and the
 *    protocol's (net.dlcp.mem) while a well-behaved pair keeps working.
 * Needs root and the dlcp module loaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/errqueue.h>

#include <linux/dlcp.h>

/* the harness's TEST() has a parameter a plain test does not use */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "dlcp_pkt.h"
#include "dlcp_util.h"

#define WAIT_MS		10000
#define QUIET_MS	1500

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

static struct sockaddr_in sin4(const char *ip, uint16_t port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* A DLCP socket bound to @ip, port chosen by the kernel; -1 on error. */
static int bound4(const char *ip)
{
	struct sockaddr_in a = sin4(ip, 0);
	int fd = socket(AF_INET, SOCK_DLCP, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static uint16_t port_of(int fd)
{
	struct sockaddr_in6 a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len))
		return 0;
	return ntohs(a.sin6_port);	/* same offset in sockaddr_in */
}

/* Send @len bytes to @ip:@port as one message with DLCP_CMSG_SEND @flags. */
static ssize_t send_to(int fd, const char *ip, uint16_t port,
		       const void *buf, size_t len, uint16_t flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_send_info))];
		struct cmsghdr align;
	} ctl;
	struct dlcp_send_info si = { .flags = flags };
	struct sockaddr_in to = sin4(ip, port);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	struct cmsghdr *c;

	if (flags) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_DLCP;
		c->cmsg_type = DLCP_CMSG_SEND;
		c->cmsg_len = CMSG_LEN(sizeof(si));
		memcpy(CMSG_DATA(c), &si, sizeof(si));
	}
	return sendmsg(fd, &mh, 0);
}

/*
 * Receive one message within @ms into @buf, its DLCP_CMSG_RECV into @ri
 * (if not NULL). Returns its length, or -1 (errno ETIMEDOUT on time out).
 */
static ssize_t recv_within(int fd, void *buf, size_t len,
			   struct dlcp_recv_info *ri, int ms)
{
	char ctl[CMSG_SPACE(sizeof(struct dlcp_recv_info)) + 4096];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;

	if (poll(&p, 1, ms) != 1) {
		errno = ETIMEDOUT;
		return -1;
	}
	n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < 0 || !ri)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_DLCP && c->cmsg_type == DLCP_CMSG_RECV)
			memcpy(ri, CMSG_DATA(c), sizeof(*ri));
	return n;
}

static uint64_t snmp(const char *name)
{
	struct dlcp_snmp s;

	if (dlcp_snmp_read(&s))
		return UINT64_MAX;
	return dlcp_snmp_get(&s, name);
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

/* Close @fd at once: what it has not delivered is aborted (SO_LINGER 0). */
static void close_now(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

/*
 * Open the global sysctl @path read-write (before leaving the initial
 * network namespace, where alone it is seen) and read its value into
 * @old. The fd, or -1.
 */
static int open_global(const char *path, char *old, size_t size)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, old, size - 1);
	if (n <= 0) {
		close(fd);
		return -1;
	}
	old[n] = 0;
	return fd;
}

static int sh(const char *cmd)
{
	int rc = system(cmd);

	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/*
 * Send the DLCP packet @pkt from @saddr (any address: a raw IPv4 socket
 * writes the IP header itself) to @daddr.
 */
static int raw_send4(const char *saddr, const char *daddr, const void *pkt,
		     size_t len)
{
	uint8_t buf[2048] = { 0 };
	struct sockaddr_in to = sin4(daddr, 0);
	uint32_t s, d;
	int fd, rc;

	if (len + 20 > sizeof(buf))
		return -1;
	inet_pton(AF_INET, saddr, &s);
	inet_pton(AF_INET, daddr, &d);
	buf[0] = 0x45;
	dlcp_put16(buf + 2, (uint16_t)(len + 20));
	buf[8] = 64;
	buf[9] = IPPROTO_DLCP;
	memcpy(buf + 12, &s, 4);
	memcpy(buf + 16, &d, 4);
	memcpy(buf + 20, pkt, len);
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0)
		return -1;
	rc = sendto(fd, buf, len + 20, 0, (struct sockaddr *)&to, sizeof(to));
	close(fd);
	return rc == (int)(len + 20) ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Off-path spoofing: message ids                                       */
/* ------------------------------------------------------------------ */

#define VICTIM_LEN	3000
#define FORGED_IDS	64

/*
 * S (127.0.0.1) sends to C (127.0.0.2), which learns the id of that
 * message. C then forges, from S's address and port, the first segment of
 * a VICTIM_LEN-byte message to R (127.0.0.3) for each of the next
 * FORGED_IDS ids, before S sends its real message to R. R must receive
 * S's bytes: ids towards R must not follow from the ids C saw.
 */
TEST(forged_data_needs_unguessable_id)
{
	uint8_t pkt[1500], out[VICTIM_LEN], in[VICTIM_LEN], poison[1000];
	struct dlcp_recv_info ri = { 0 };
	uint64_t seed = dlcp_payload_seed(1, 1, VICTIM_LEN);
	uint32_t seen, id;
	int s, c, r;

	ASSERT_EQ(0, dlcp_new_netns());
	s = bound4("127.0.0.1");
	c = bound4("127.0.0.2");
	r = bound4("127.0.0.3");
	ASSERT_LE(0, s);
	ASSERT_LE(0, c);
	ASSERT_LE(0, r);

	memset(out, 0, sizeof(out));
	ASSERT_EQ(100, send_to(s, "127.0.0.2", port_of(c), out, 100, 0));
	ASSERT_EQ(100, recv_within(c, in, sizeof(in), &ri, WAIT_MS));
	seen = ri.msg_id;

	memset(poison, 0xee, sizeof(poison));
	for (id = seen + 1; id <= seen + FORGED_IDS; id++) {
		struct dlcp_pkt_info pi = {
			.sport = port_of(s), .dport = port_of(r),
			.msg_id = id, .msg_len = VICTIM_LEN,
		};
		struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
		size_t len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di,
						 poison, sizeof(poison));
		uint32_t sa = htonl(0x7f000001), da = htonl(0x7f000003);

		ASSERT_LT(0, len);
		dlcp_pkt_finish4(pkt, len, sa, da);
		ASSERT_EQ(0, raw_send4("127.0.0.1", "127.0.0.3", pkt, len));
	}

	dlcp_payload_fill(out, VICTIM_LEN, seed);
	ASSERT_EQ(VICTIM_LEN, send_to(s, "127.0.0.3", port_of(r), out,
				      VICTIM_LEN, 0));
	ASSERT_EQ(VICTIM_LEN, recv_within(r, in, sizeof(in), &ri, WAIT_MS));
	TH_LOG("id seen by C %u, id of the message to R %u", seen, ri.msg_id);
	EXPECT_EQ(VICTIM_LEN, dlcp_payload_cmp(in, VICTIM_LEN, seed));
	EXPECT_FALSE(ri.msg_id - seen >= 1 && ri.msg_id - seen <= FORGED_IDS);
	close(s);
	close(c);
	close(r);
}

/* ------------------------------------------------------------------ */
/* Privilege: the class of critical retransmissions                     */
/* ------------------------------------------------------------------ */

#define CRIT_MSGS	20
#define CRIT_LEN	20000

/*
 * An unprivileged sender's critical segments, resent over a lossy link,
 * must not take class 0 (net.dlcp.unpriv_class is 1 by default). A raw
 * socket sees every DATA packet that survives the loss and reads its DSCP.
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
	}
	for (;;) {
		uint8_t p[2048];
		ssize_t n = recv(raw, p, sizeof(p), MSG_DONTWAIT);
		const uint8_t *h = p + (p[0] & 0xf) * 4;

		if (n < 0)
			break;
		if (n < (p[0] & 0xf) * 4 + DLCP_HDR_LEN ||
		    (h[4] & 0xf) != DLCP_T_DATA || !(h[5] & DLCP_HF_RETRANS))
			continue;
		rtx++;
		in_class0 += (p[1] >> 2) == dscp0;
	}
	TH_LOG("critical retransmissions seen: %u, in class 0: %u", rtx,
	       in_class0);
	EXPECT_LT(0, rtx);
	EXPECT_EQ(0, in_class0);
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

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* A cgroup/sock_addr program of @type that refuses every address. */
static int bpf_refuse(enum bpf_attach_type type)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_SOCK_ADDR;
	attr.expected_attach_type = type;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uintptr_t)"GPL";
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

/*
 * In a child cgroup whose bind4 and connect4 programs refuse everything,
 * bind() and connect() of a DLCP socket fail with EPERM, as for UDP.
 * Returns the number of failed checks, or -1 to skip.
 */
static int cgroup_child(const char *cg)
{
	struct sockaddr_in a = sin4("127.0.0.1", 0);
	char path[400];
	int fails = 0, fd, udp;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	if (write_file(path, "0"))
		return -1;
	fd = socket(AF_INET, SOCK_DLCP, 0);
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || udp < 0)
		return 1;
	/* UDP first: if the programs do not stop it, skip */
	if (!bind(udp, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	fails += !(bind(fd, (struct sockaddr *)&a, sizeof(a)) && errno == EPERM);
	a.sin_port = htons(9);
	fails += !(connect(fd, (struct sockaddr *)&a, sizeof(a)) &&
		   errno == EPERM);
	return fails;
}

TEST(cgroup_bpf_bind_connect)
{
	char root[] = "/tmp/dlcp-cg-XXXXXX", cg[300];
	enum bpf_attach_type types[] = {
		BPF_CGROUP_INET4_BIND, BPF_CGROUP_INET4_CONNECT,
	};
	int cgfd, status, i;
	pid_t pid;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, unshare(CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	ASSERT_NE(NULL, mkdtemp(root));
	if (mount("none", root, "cgroup2", 0, NULL)) {
		rmdir(root);
		SKIP(return, "no cgroup2");
	}
	snprintf(cg, sizeof(cg), "%s/dlcp-test-%d", root, getpid());
	ASSERT_EQ(0, mkdir(cg, 0755));
	cgfd = open(cg, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, cgfd);
	for (i = 0; i < 2; i++) {
		union bpf_attr attr;
		int prog = bpf_refuse(types[i]);

		if (prog < 0) {
			rmdir(cg);
			umount(root);
			rmdir(root);
			SKIP(return, "cannot load BPF: %s", strerror(errno));
		}
		memset(&attr, 0, sizeof(attr));
		attr.target_fd = cgfd;
		attr.attach_bpf_fd = prog;
		attr.attach_type = types[i];
		ASSERT_EQ(0, sys_bpf(BPF_PROG_ATTACH, &attr));
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(cgroup_child(cg) & 0xff);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	rmdir(cg);
	umount(root);
	rmdir(root);
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 0xff)
		SKIP(return, "cgroup programs do not apply here");
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* ------------------------------------------------------------------ */
/* Addresses: v4-mapped IPv6 sources                                    */
/* ------------------------------------------------------------------ */

TEST(ipv6_v4mapped_source)
{
	uint8_t pkt[256], ip6[300] = { 0 };
	struct in6_addr src, dst = IN6ADDR_LOOPBACK_INIT;
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	struct dlcp_pkt_info pi = { .msg_id = 77, .msg_len = 5,
				    .flags = DLCP_HF_LAST };
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
	uint64_t dropped;
	char buf[16];
	size_t len;
	int rx, raw;

	ASSERT_EQ(0, dlcp_new_netns());
	rx = socket(AF_INET6, SOCK_DLCP, 0);
	ASSERT_LE(0, rx);
	ASSERT_EQ(0, bind(rx, (struct sockaddr *)&a, sizeof(a)));
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &src);
	pi.sport = 4242;
	pi.dport = port_of(rx);
	len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, "spoof", 5);
	ASSERT_LT(0, len);
	dlcp_pkt_set_csum(pkt, len, dlcp_csum_pseudo6(&src, &dst,
						       IPPROTO_DLCP, len));
	ip6[0] = 0x60;
	dlcp_put16(ip6 + 4, (uint16_t)len);
	ip6[6] = IPPROTO_DLCP;
	ip6[7] = 64;
	memcpy(ip6 + 8, &src, 16);
	memcpy(ip6 + 24, &dst, 16);
	memcpy(ip6 + 40, pkt, len);
	raw = socket(AF_INET6, SOCK_RAW, IPPROTO_RAW);
	ASSERT_LE(0, raw);
	a.sin6_addr = dst;
	dropped = snmp("DlcpDropAddr");
	ASSERT_EQ(40 + len, sendto(raw, ip6, 40 + len, 0, (struct sockaddr *)&a,
				   sizeof(a)));
	EXPECT_EQ(-1, recv_within(rx, buf, sizeof(buf), NULL, QUIET_MS));
	EXPECT_EQ(dropped + 1, snmp("DlcpDropAddr"));
	close(raw);
	close(rx);
}

/* ------------------------------------------------------------------ */
/* Liveness: every message ends                                         */
/* ------------------------------------------------------------------ */

/*
 * Wait up to @ms for a completion on @fd's error queue; its status in
 * @status and errno in @err. 0, or -1 if none came.
 */
static int completion(int fd, int ms, uint32_t *status, int *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sock_extended_err) + 64)];
		struct cmsghdr align;
	} ctl;
	struct dlcp_completion c;
	struct iovec iov = { .iov_base = &c, .iov_len = sizeof(c) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct pollfd p = { .fd = fd };
	struct cmsghdr *cm;

	poll(&p, 1, ms);	/* POLLERR is always reported */
	if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) != sizeof(c))
		return -1;
	*status = c.status;
	*err = 0;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_DLCP &&
		    cm->cmsg_type == DLCP_CMSG_COMPLETION)
			*err = ((struct sock_extended_err *)CMSG_DATA(cm))->ee_errno;
	return 0;
}

/* A sender on 127.0.0.1 with completions on and msg_timeout_ms @ms. */
static int quick_sender(int ms)
{
	int fd, one = 1;

	if (dlcp_sysctl_write("msg_timeout_ms", ms))
		return -1;
	fd = bound4("127.0.0.1");
	if (fd >= 0 &&
	    setsockopt(fd, SOL_DLCP, DLCP_RECVCOMPLETION, &one, sizeof(one))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Every transmission fails (a tc filter drops each packet on lo: ENOBUFS):
 * the message never starts, and fails msg_timeout_ms later with the error.
 */
TEST(message_that_never_starts_ends)
{
	uint32_t status = 0;
	int fd, rx, err = 0;
	double t0;

	ASSERT_EQ(0, dlcp_new_netns());
	if (sh("tc qdisc add dev lo clsact && "
	       "tc filter add dev lo egress matchall action drop"))
		SKIP(return, "no tc matchall");
	fd = quick_sender(1000);
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, fd);
	ASSERT_LE(0, rx);
	t0 = dlcp_now();
	ASSERT_EQ(10, send_to(fd, "127.0.0.1", port_of(rx), "0123456789",
			      10, 0));
	ASSERT_EQ(0, completion(fd, 8000, &status, &err));
	TH_LOG("ended after %.1f s: status %u, %s", dlcp_now() - t0, status,
	       strerror(err));
	EXPECT_EQ(DLCP_DONE_TIMEOUT, status);
	EXPECT_EQ(ENOBUFS, err);
	close(fd);
	close(rx);
}

/*
 * The receiver's port answers every DATA and PROBE with a REPORT that says
 * nothing arrived, and never STOPs: a raw socket plays it for @secs. The
 * message must fail (DLCP_STALL_MULT msg_timeout_ms after its last
 * progress) and close() return, though its receiver never goes silent.
 */
static void hostile_reporter(uint16_t port, double secs)
{
	int raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	uint32_t lo = htonl(INADDR_LOOPBACK);
	double end = dlcp_now() + secs;

	if (raw < 0)
		_exit(1);
	while (dlcp_now() < end) {
		uint8_t in[2048], out[256];
		struct pollfd p = { .fd = raw, .events = POLLIN };
		const uint8_t *h;
		struct dlcp_pkt_info pi = { 0 };
		struct dlcp_pkt_report_info ri = { 0 };
		struct dlcp_pkt_gap gap;
		ssize_t n;
		size_t len;
		int type;

		if (poll(&p, 1, 100) != 1)
			continue;
		n = recv(raw, in, sizeof(in), 0);
		if (n < 20 + DLCP_DATA_HDR_LEN)
			continue;
		h = in + (in[0] & 0xf) * 4;
		type = h[4] & 0xf;
		if (dlcp_get16(h + 2) != port ||
		    (type != DLCP_T_DATA && type != DLCP_T_PROBE))
			continue;
		pi.sport = port;
		pi.dport = dlcp_get16(h);
		pi.msg_id = dlcp_get32(h + 12);
		pi.msg_len = dlcp_get32(h + 16);
		ri.scan_end = pi.msg_len;
		ri.rflags = type == DLCP_T_PROBE ? DLCP_RF_PROBED : 0;
		gap.start = 0;
		gap.end = pi.msg_len;
		len = dlcp_pkt_build_report(out, sizeof(out), &pi, &ri, &gap, 1);
		if (!len)
			continue;
		dlcp_pkt_finish4(out, len, lo, lo);
		{
			struct sockaddr_in to = sin4("127.0.0.1", 0);

			sendto(raw, out, len, 0, (struct sockaddr *)&to,
			       sizeof(to));
		}
	}
	_exit(0);
}

TEST(answering_receiver_that_never_takes_it)
{
	uint8_t buf[20000] = { 0 };
	uint32_t status = 0;
	int fd, err = 0, st;
	uint16_t port = 20000 + getpid() % 10000;	/* not ephemeral */
	double t0, t1;
	pid_t pid;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	/* first: the child must not hold the sender's socket open */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		hostile_reporter(port, 20);
	fd = quick_sender(1000);
	ASSERT_LE(0, fd);
	usleep(200000);
	t0 = dlcp_now();
	ASSERT_EQ(sizeof(buf), send_to(fd, "127.0.0.1", port, buf, sizeof(buf),
				       0));
	ASSERT_EQ(0, completion(fd, 12000, &status, &err));
	t1 = dlcp_now();
	TH_LOG("ended after %.1f s: status %u, %s", t1 - t0, status,
	       strerror(err));
	EXPECT_EQ(DLCP_DONE_TIMEOUT, status);
	EXPECT_EQ(ETIMEDOUT, err);

	/* close() with a message in the same state: bounded by the timeout */
	ASSERT_EQ(sizeof(buf), send_to(fd, "127.0.0.1", port, buf, sizeof(buf),
				       0));
	t0 = dlcp_now();
	close(fd);
	t1 = dlcp_now();
	TH_LOG("close() took %.1f s", t1 - t0);
	EXPECT_GT(3.0, t1 - t0);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* ------------------------------------------------------------------ */
/* ICMP: a "fragmentation needed" must quote a message of ours          */
/* ------------------------------------------------------------------ */

/* Send ICMP frag-needed (MTU @mtu) quoting the DLCP header @dlcp. */
static int icmp_frag_needed(const uint8_t *dlcp, uint16_t mtu)
{
	struct sockaddr_in to = sin4("127.0.0.1", 0);
	uint8_t p[8 + 20 + DLCP_HDR_LEN] = { 3, 4 };
	int fd, rc;

	dlcp_put16(p + 6, mtu);
	p[8] = 0x45;
	dlcp_put16(p + 10, 1500);
	p[16] = 64;
	p[17] = IPPROTO_DLCP;
	inet_pton(AF_INET, "127.0.0.1", p + 20);
	inet_pton(AF_INET, "127.0.0.1", p + 24);
	memcpy(p + 28, dlcp, DLCP_HDR_LEN);
	dlcp_put16(p + 2, dlcp_csum_finish(dlcp_csum_add(0, p, sizeof(p))));
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0)
		return -1;
	rc = sendto(fd, p, sizeof(p), 0, (struct sockaddr *)&to, sizeof(to));
	close(fd);
	return rc == sizeof(p) ? 0 : -1;
}

/*
 * A message is in flight to a port nobody answers on; an ICMP error that
 * quotes another id is ignored, one that quotes the message re-cuts it.
 */
TEST(icmp_too_big_must_quote_a_message)
{
	uint8_t out[20000] = { 0 }, hdr[DLCP_HDR_LEN];
	uint16_t dport = 20000 + getpid() % 10000;
	uint64_t upd, ign;
	int tx, raw, found = 0;
	double end;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	tx = bound4("127.0.0.1");
	ASSERT_LE(0, raw);
	ASSERT_LE(0, tx);
	ASSERT_EQ(sizeof(out), send_to(tx, "127.0.0.1", dport, out,
				       sizeof(out), 0));
	for (end = dlcp_now() + 5; !found && dlcp_now() < end;) {
		uint8_t p[2048];
		struct pollfd pf = { .fd = raw, .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 200) != 1)
			continue;
		n = recv(raw, p, sizeof(p), 0);
		if (n >= 20 + DLCP_HDR_LEN && dlcp_get16(p + 22) == dport) {
			memcpy(hdr, p + 20, DLCP_HDR_LEN);
			found = 1;
		}
	}
	ASSERT_TRUE(found);

	/* a raw socket would take the error too and lower the route's MTU */
	close(raw);
	upd = snmp("DlcpPmtuUpdates");
	ign = snmp("DlcpIcmpIgnored");
	dlcp_put32(hdr + 12, dlcp_get32(hdr + 12) ^ 0x5a5a5a5a);
	ASSERT_EQ(0, icmp_frag_needed(hdr, 1200));
	usleep(200000);
	EXPECT_EQ(upd, snmp("DlcpPmtuUpdates"));
	EXPECT_EQ(ign + 1, snmp("DlcpIcmpIgnored"));

	dlcp_put32(hdr + 12, dlcp_get32(hdr + 12) ^ 0x5a5a5a5a);
	ASSERT_EQ(0, icmp_frag_needed(hdr, 1200));
	usleep(200000);
	/* and more, if a packet cut before now meets the new MTU on lo */
	EXPECT_LT(upd, snmp("DlcpPmtuUpdates"));
	close_now(tx);
}

/* ------------------------------------------------------------------ */
/* Exactly once: a sender that keeps asking after the receiver's timeout */
/* ------------------------------------------------------------------ */

/* Build and send from 127.0.0.1 port @sport a DATA (whole) or PROBE. */
static int send_forged(int type, uint16_t sport, uint16_t dport, uint32_t id,
		       uint8_t flags)
{
	struct dlcp_pkt_info pi = {
		.sport = sport, .dport = dport, .msg_id = id, .msg_len = 5,
		.flags = flags,
	};
	struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
	uint32_t lo = htonl(INADDR_LOOPBACK);
	uint8_t pkt[256];
	size_t len;

	len = type == DLCP_T_DATA ?
	      dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, "once!", 5) :
	      dlcp_pkt_build_probe(pkt, sizeof(pkt), &pi, 5, 0);
	if (!len)
		return -1;
	dlcp_pkt_finish4(pkt, len, lo, lo);
	return raw_send4("127.0.0.1", "127.0.0.1", pkt, len);
}

/*
 * The receiver's msg_timeout_ms is 1 s; its sender (a raw socket here)
 * misses every STOP and keeps probing every 0.4 s for 3 s, then resends
 * the data. The receiver must remember the message while it is asked
 * about, and deliver it once.
 */
TEST(delivered_once_while_the_sender_asks)
{
	uint16_t sport = 20000 + getpid() % 10000;
	char buf[16];
	int rx, i;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_sysctl_write("msg_timeout_ms", 1000));
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, rx);
	ASSERT_EQ(0, send_forged(DLCP_T_DATA, sport, port_of(rx), 42,
				 DLCP_HF_LAST));
	ASSERT_EQ(5, recv_within(rx, buf, sizeof(buf), NULL, WAIT_MS));
	for (i = 0; i < 8; i++) {
		usleep(400000);
		ASSERT_EQ(0, send_forged(DLCP_T_PROBE, sport, port_of(rx), 42,
					 0));
	}
	ASSERT_EQ(0, send_forged(DLCP_T_DATA, sport, port_of(rx), 42,
				 DLCP_HF_LAST | DLCP_HF_RETRANS));
	EXPECT_EQ(-1, recv_within(rx, buf, sizeof(buf), NULL, QUIET_MS));
	close(rx);
}

/* ------------------------------------------------------------------ */
/* Receive queue: MSG_PEEK                                              */
/* ------------------------------------------------------------------ */

/* Peeking twice sees the same message; reading then takes it. */
TEST(msg_peek_twice)
{
	char buf[16];
	int tx, rx;

	ASSERT_EQ(0, dlcp_new_netns());
	tx = bound4("127.0.0.1");
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, tx);
	ASSERT_LE(0, rx);
	ASSERT_EQ(5, send_to(tx, "127.0.0.1", port_of(rx), "first", 5, 0));
	ASSERT_EQ(6, send_to(tx, "127.0.0.1", port_of(rx), "second", 6, 0));
	usleep(300000);
	ASSERT_EQ(5, recv(rx, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
	ASSERT_EQ(5, recv(rx, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
	EXPECT_EQ(0, memcmp(buf, "first", 5));
	ASSERT_EQ(5, recv(rx, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(0, memcmp(buf, "first", 5));
	ASSERT_EQ(6, recv(rx, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
	ASSERT_EQ(6, recv(rx, buf, sizeof(buf), MSG_DONTWAIT));
	EXPECT_EQ(0, memcmp(buf, "second", 6));
	close(tx);
	close(rx);
}

/* ------------------------------------------------------------------ */
/* Memory: floods of fresh ids                                          */
/* ------------------------------------------------------------------ */

#define DLCP_MEM "/proc/sys/net/dlcp/mem"

/* The protocol's pages in use (/proc/net/protocols), or -1. */
static long proto_pages(void)
{
	char line[512], name[32];
	long pages = -1;
	FILE *f = fopen("/proc/net/protocols", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int size, socks;
		long mem;

		if (sscanf(line, "%31s %u %u %ld", name, &size, &socks,
			   &mem) == 4 && !strcmp(name, "DLCP"))
			pages = mem;
	}
	fclose(f);
	return pages;
}

/* Bytes of receive memory of the socket on local port @port, or -1. */
static long sock_rmem(uint16_t port)
{
	char line[512];
	long rmem = -1;
	FILE *f = fopen("/proc/net/dlcp/sockets", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int sl, lport, tx, rx;
		char laddr[40], raddr[64];

		if (sscanf(line, " %u: %39[0-9A-F]:%x %63s %*x %x:%x", &sl, laddr,
			   &lport, raddr, &tx, &rx) == 6 && lport == port)
			rmem = rx;
	}
	fclose(f);
	return rmem;
}

/*
 * @n DATA packets to 127.0.0.1 port @dport, each the first kilobyte of a
 * 64 KiB message with a fresh id, from forged sources 127.1.x.y (all from
 * 127.1.0.1 if @one_host).
 */
static int flood(uint16_t dport, unsigned int n, int one_host)
{
	static uint8_t payload[1000];
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct dlcp_pkt_info pi = {
			.sport = 1000 + i % 50000, .dport = dport,
			.msg_id = 0x10000 + i, .msg_len = 65536,
		};
		struct dlcp_pkt_data_info di = { .dtype = DLCP_DTYPE_BYTES };
		uint8_t pkt[1200];
		char src[32];
		uint32_t sa, da = htonl(INADDR_LOOPBACK);
		size_t len;

		snprintf(src, sizeof(src), "127.1.%u.%u",
			 one_host ? 0 : (i >> 8) & 0xff,
			 one_host ? 1 : (i & 0xff) | 1);
		inet_pton(AF_INET, src, &sa);
		len = dlcp_pkt_build_data(pkt, sizeof(pkt), &pi, &di, payload,
					  sizeof(payload));
		if (!len)
			return -1;
		dlcp_pkt_finish4(pkt, len, sa, da);
		if (raw_send4(src, "127.0.0.1", pkt, len))
			return -1;
	}
	return 0;
}

/* S sends @n messages of 10 KB to R; how many arrived byte-exact. */
static int good_pair(int s, int r, int n)
{
	static uint8_t out[10000], in[10000];
	int i, ok = 0;

	for (i = 0; i < n; i++) {
		uint64_t seed = dlcp_payload_seed(2, i, sizeof(out));

		dlcp_payload_fill(out, sizeof(out), seed);
		if (send_to(s, "127.0.0.1", port_of(r), out, sizeof(out), 0) !=
		    sizeof(out))
			continue;
		if (recv_within(r, in, sizeof(in), NULL, WAIT_MS) ==
		    sizeof(in) &&
		    dlcp_payload_cmp(in, sizeof(in), seed) == sizeof(in))
			ok++;
	}
	return ok;
}

/*
 * A flood at one socket: it keeps at most net.dlcp.max_in_msgs messages
 * and net.dlcp.rmem bytes; another socket's transfers are unharmed.
 */
TEST(fresh_id_flood_per_socket)
{
	uint64_t inmsgs, rcvmem;
	int victim, s, r;
	long rmem;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	ASSERT_EQ(0, dlcp_sysctl_write("max_in_msgs", 256));
	ASSERT_EQ(0, dlcp_sysctl_write("rmem", 1 << 20));
	victim = bound4("127.0.0.1");
	s = bound4("127.0.0.1");
	r = bound4("127.0.0.1");
	ASSERT_LE(0, victim);
	ASSERT_LE(0, s);
	ASSERT_LE(0, r);
	inmsgs = snmp("DlcpDropInMsgs");
	rcvmem = snmp("DlcpDropRcvMem");
	ASSERT_EQ(0, flood(port_of(victim), 3000, 0));
	rmem = sock_rmem(port_of(victim));
	TH_LOG("after 3000 fresh ids: %ld bytes held, dropped %llu (messages) %llu (memory)",
	       rmem, (unsigned long long)(snmp("DlcpDropInMsgs") - inmsgs),
	       (unsigned long long)(snmp("DlcpDropRcvMem") - rcvmem));
	EXPECT_LT(0, rmem);
	EXPECT_GE(1 << 20, rmem);
	EXPECT_LT(inmsgs + rcvmem, snmp("DlcpDropInMsgs") +
		  snmp("DlcpDropRcvMem"));
	EXPECT_EQ(20, good_pair(s, r, 20));
	close(victim);
	close(s);
	close(r);
}

/*
 * One host opens as many messages as it can at a socket: it gets
 * net.dlcp.max_in_msgs_peer of them, and another host's messages to the
 * same socket still start and arrive. Two addresses share a count when
 * they hash to the same of 256 buckets (a new seed per socket): then the
 * case tries once more, with a new socket.
 */
TEST(one_host_cannot_take_a_socket)
{
	int victim, s, try, ok = 0;
	uint64_t peer;

	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	ASSERT_EQ(0, dlcp_sysctl_write("max_in_msgs", 256));
	ASSERT_EQ(0, dlcp_sysctl_write("max_in_msgs_peer", 64));
	s = bound4("127.0.0.2");
	ASSERT_LE(0, s);
	for (try = 0; try < 2 && ok != 20; try++) {
		victim = bound4("127.0.0.1");
		ASSERT_LE(0, victim);
		peer = snmp("DlcpDropPeerMsgs");
		ASSERT_EQ(0, flood(port_of(victim), 1000, 1));
		TH_LOG("one host, 1000 fresh ids: %llu dropped",
		       (unsigned long long)(snmp("DlcpDropPeerMsgs") - peer));
		EXPECT_EQ(peer + 1000 - 64, snmp("DlcpDropPeerMsgs"));
		ok = good_pair(s, victim, 20);
		close(victim);
	}
	EXPECT_EQ(20, ok);
	close(s);
}

/*
 * A flood at a socket with room to spare: net.dlcp.mem bounds the
 * protocol's pages (give or take each CPU's reserve of 1 MiB that the
 * core keeps before it counts), and they all come back at close().
 */
TEST(fresh_id_flood_protocol_limit)
{
	char old[64] = "", lim[] = "100 200 300\n";
	uint64_t protomem;
	long peak, after;
	int fd, victim;
	ssize_t n;

	fd = open_global(DLCP_MEM, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 1500));
	ASSERT_EQ(0, dlcp_sysctl_write("max_in_msgs", 100000));
	victim = bound4("127.0.0.1");
	ASSERT_LE(0, victim);
	protomem = snmp("DlcpDropProtoMem");
	ASSERT_EQ(strlen(lim), pwrite(fd, lim, strlen(lim), 0));
	n = flood(port_of(victim), 3000, 0);
	peak = proto_pages();
	ASSERT_EQ(strlen(old), pwrite(fd, old, strlen(old), 0));
	close(fd);
	ASSERT_EQ(0, n);
	TH_LOG("net.dlcp.mem 300 pages: %ld in use, %llu dropped", peak,
	       (unsigned long long)(snmp("DlcpDropProtoMem") - protomem));
	EXPECT_LT(protomem, snmp("DlcpDropProtoMem"));
	EXPECT_GE(300 + 2 * 256 + 16, peak);
	close(victim);
	usleep(100000);
	after = proto_pages();
	TH_LOG("after close: %ld pages", after);
	EXPECT_GE(2 * 256, after);	/* per-CPU reserves may stay */
}

/*
 * Outgoing messages count in net.dlcp.mem too: at its hard limit sendmsg()
 * fails with ENOBUFS (DlcpOutProtoMem) instead of taking more pages, and
 * the pages come back when the messages end. The messages go to a port
 * with no socket, so they stay until the socket closes.
 */
TEST(send_memory_protocol_limit)
{
	char old[64] = "", lim[64];
	static char msg[1 << 20];
	uint64_t refused;
	long before, held, after;
	int fd, s, i, err;
	ssize_t n;

	fd = open_global(DLCP_MEM, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlcp_new_netns());
	s = bound4("127.0.0.1");
	ASSERT_LE(0, s);
	memset(msg, 0x5a, sizeof(msg));
	before = proto_pages();
	ASSERT_LE(0, before);
	refused = snmp("DlcpOutProtoMem");
	/* 300 pages more than in use: 256 fit; a second message does not */
	snprintf(lim, sizeof(lim), "%ld %ld %ld\n", before + 100, before + 200,
		 before + 300);
	ASSERT_EQ(strlen(lim), pwrite(fd, lim, strlen(lim), 0));
	n = send_to(s, "127.0.0.1", 9, msg, sizeof(msg), 0);
	for (i = 0, err = 0; i < 4 && !err; i++)
		if (send_to(s, "127.0.0.1", 9, msg, sizeof(msg), 0) < 0)
			err = errno;
	held = proto_pages();
	ASSERT_EQ(strlen(old), pwrite(fd, old, strlen(old), 0));
	close(fd);
	TH_LOG("net.dlcp.mem %ld pages more: %ld held, then errno %d",
	       300L, held - before, err);
	EXPECT_EQ((ssize_t)sizeof(msg), n);
	EXPECT_EQ(ENOBUFS, err);
	EXPECT_EQ(refused + 1, snmp("DlcpOutProtoMem"));
	EXPECT_LE(before + 256, held);
	EXPECT_GE(before + 300, held);
	/* with room again, sending works */
	EXPECT_EQ((ssize_t)sizeof(msg),
		  send_to(s, "127.0.0.1", 9, msg, sizeof(msg), 0));
	close_now(s);
	usleep(100000);
	after = proto_pages();
	TH_LOG("after close: %ld pages", after);
	EXPECT_GE(before + 8, after);
}

/* ------------------------------------------------------------------ */
/* Memory safety: UDP GSO from small page fragments                     */
/* ------------------------------------------------------------------ */

#define HIGH_ORDER "/proc/sys/net/core/high_order_alloc_disable"
#define BIG_MSG		(4 << 20)
#define NR_BIG		6

/* Send NR_BIG messages of BIG_MSG bytes @tx -> @rx; 0 if all arrive exact */
static int big_transfers(struct __test_metadata *_metadata, int tx, int rx)
{
	uint8_t *out = malloc(BIG_MSG), *in = malloc(BIG_MSG);
	int i, bad = 0;

	ASSERT_TRUE(out && in);
	for (i = 0; i < NR_BIG; i++) {
		uint64_t seed = dlcp_payload_seed(7, i, BIG_MSG);
		ssize_t n;

		dlcp_payload_fill(out, BIG_MSG, seed);
		ASSERT_EQ(BIG_MSG, send_to(tx, "127.0.0.1", port_of(rx), out,
					   BIG_MSG, 0));
		n = recv_within(rx, in, BIG_MSG, NULL, 30000);
		ASSERT_EQ(BIG_MSG, n);
		if (dlcp_payload_cmp(in, BIG_MSG, seed) != BIG_MSG)
			bad++;
	}
	free(out);
	free(in);
	return bad;
}

/*
 * With net.core.high_order_alloc_disable (or a failed order-3 allocation)
 * the socket's page fragment is one page, smaller than a 9000-byte packet:
 * a super-packet must not be written into it. Then, with high-order pages
 * again, super-packets are built and the transfers stay exact.
 */
FIXTURE(big) {
};

FIXTURE_SETUP(big)
{
}

FIXTURE_TEARDOWN(big)
{
}

TEST_F_TIMEOUT(big, gso_small_page_frags, 240)
{
	char old[16] = "0";
	uint64_t gso0, gso1;
	int fd, tx, rx;
	ssize_t n;

	fd = open_global(HIGH_ORDER, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlcp_new_netns());
	ASSERT_EQ(0, dlcp_link_mtu("lo", 9000));
	ASSERT_EQ(0, dlcp_sysctl_write("encap", 1));
	ASSERT_EQ(0, dlcp_sysctl_write("udp_gso", 1));
	ASSERT_EQ(0, dlcp_sysctl_write("udp_entropy", 0));
	tx = bound4("127.0.0.1");
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, tx);
	ASSERT_LE(0, rx);

	ASSERT_EQ(1, pwrite(fd, "1", 1, 0));
	n = big_transfers(_metadata, tx, rx);
	ASSERT_EQ(strlen(old), pwrite(fd, old, strlen(old), 0));
	close(fd);
	EXPECT_EQ(0, n);

	gso0 = snmp("DlcpUdpGsoOutPkts");
	EXPECT_EQ(0, big_transfers(_metadata, tx, rx));
	gso1 = snmp("DlcpUdpGsoOutPkts");
	TH_LOG("super-packets with high-order pages: %llu",
	       (unsigned long long)(gso1 - gso0));
	EXPECT_LT(gso0, gso1);
	close(tx);
	close(rx);
}

/*
 * Above the first value of net.dlcp.mem the protocol is watched, not
 * limited: with the protocol's pages between the first and the second
 * value, a socket still takes what a transfer needs (4 MiB messages) and
 * no DATA is dropped for the protocol's sake.
 */
TEST_F_TIMEOUT(big, protocol_mem_first_value_is_no_limit, 120)
{
	char old[64] = "", lim[64];
	uint64_t protomem;
	long before;
	int fd, tx, rx, n;

	fd = open_global(DLCP_MEM, old, sizeof(old));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dlcp_new_netns());
	tx = bound4("127.0.0.1");
	rx = bound4("127.0.0.1");
	ASSERT_LE(0, tx);
	ASSERT_LE(0, rx);
	before = proto_pages();
	ASSERT_LE(0, before);
	protomem = snmp("DlcpDropProtoMem");
	snprintf(lim, sizeof(lim), "%ld %ld %ld\n", before + 16,
		 before + 100000, before + 200000);
	ASSERT_EQ(strlen(lim), pwrite(fd, lim, strlen(lim), 0));
	n = big_transfers(_metadata, tx, rx);
	ASSERT_EQ(strlen(old), pwrite(fd, old, strlen(old), 0));
	close(fd);
	TH_LOG("DlcpDropProtoMem +%llu",
	       (unsigned long long)(snmp("DlcpDropProtoMem") - protomem));
	EXPECT_EQ(0, n);
	EXPECT_EQ(protomem, snmp("DlcpDropProtoMem"));
	close(tx);
	close(rx);
}

TEST_HARNESS_MAIN
