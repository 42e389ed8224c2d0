// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP receive path selftests with hand-made packets.
 *
 * Packets are built with userspace/common/dlcp_pkt, mutated, and sent from
 * a raw IPPROTO_DLCP socket (the kernel adds the IP header) to a DLCP
 * socket bound on 127.0.0.1, in a network namespace of the test's own.
 * Each malformed packet must be dropped, counted under its reason in
 * /proc/net/dlcp/snmp (by exactly the number sent, no other drop counter
 * moving), and never reach the socket; the skb:kfree_skb trace event
 * (tracefs) must show each drop with the kernel's drop reason of that
 * counter. Well-formed packets, in any order and duplicated, must be
 * reassembled and delivered exactly once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <linux/dlcp.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#include "dlcp_pkt.h"
#include "dlcp_util.h"

#define NR_SENT		5
#define SPORT		33333	/* nobody binds it */
#define UNBOUND_PORT	9
#define MSG_LEN		1000
#define PLEN		100
#define BUF		2048

/* The highest header flag bit the protocol does not define. */
#define HF_UNKNOWN \
	(0x80 & ~DLCP_HF_ALL ? 0x80 : 0x40 & ~DLCP_HF_ALL ? 0x40 : 0)
_Static_assert(HF_UNKNOWN, "no unknown header flag left to test with");

/* Counters that must not move when a packet is dropped for a reason. */
static const char *const drop_counters[] = {
	"DlcpInCsumErrors", "DlcpDropShort", "DlcpDropVersion",
	"DlcpDropType", "DlcpDropHdrLen", "DlcpDropLen", "DlcpDropFlags",
	"DlcpDropMsgLen", "DlcpDropOffset", "DlcpDropGaps", "DlcpDropField",
	"DlcpDropNoSocket", "DlcpDropRcvMem", "DlcpInMsgs", "DlcpRetransPkts",
};

static uint32_t lo4(void)
{
	return htonl(INADDR_LOOPBACK);
}

static uint32_t seed_for(size_t len)
{
	return dlcp_csum_pseudo4(lo4(), lo4(), IPPROTO_DLCP, (uint16_t)len);
}

/* A valid DATA packet of @plen bytes at @offset, checksum not yet set. */
static size_t base_data(uint8_t *buf, uint16_t dport, uint32_t msg_id,
			uint32_t msg_len, uint32_t offset, size_t plen)
{
	struct dlcp_pkt_info pi = {
		.sport = SPORT, .dport = dport, .flags = 0, .prio = 0,
		.msg_id = msg_id, .msg_len = msg_len,
	};
	struct dlcp_pkt_data_info di = {
		.offset = offset, .tensor_id = 0x5eed, .iteration = 3,
		.layer = 1, .dtype = DLCP_DTYPE_BYTES,
	};
	uint8_t payload[BUF];
	size_t i;

	for (i = 0; i < plen; i++)
		payload[i] = (uint8_t)((offset + i) * 13 + 5);
	return dlcp_pkt_build_data(buf, BUF, &pi, &di, payload, plen);
}

/* ------------------------------------------------------------------ */
/* Malformations: each builds one packet into @buf, returns its length  */
/* ------------------------------------------------------------------ */

typedef size_t (*build_fn)(uint8_t *buf, uint16_t dport);

static size_t finish(uint8_t *buf, size_t len)
{
	dlcp_pkt_set_csum(buf, len, seed_for(len));
	return len;
}

/* Shorter than the common header; the checksum still verifies. */
static size_t b_short_common(uint8_t *buf, uint16_t dport)
{
	base_data(buf, dport, 1, MSG_LEN, 0, PLEN);
	dlcp_pkt_fix_csum_at(buf, 12, seed_for(12), 10);
	return 12;
}

/* A common header but not a whole DATA header. */
static size_t b_short_data(uint8_t *buf, uint16_t dport)
{
	base_data(buf, dport, 1, MSG_LEN, 0, PLEN);
	dlcp_put16(buf + 8, 40);
	return finish(buf, 40);
}

static size_t b_bad_csum(uint8_t *buf, uint16_t dport)
{
	size_t len = finish(buf, base_data(buf, dport, 1, MSG_LEN, 0, PLEN));

	buf[10] ^= 0x55;
	buf[11] ^= 0x0f;
	return len;
}

/* A zero checksum is not "no checksum": it is checked like any other. */
static size_t b_zero_csum(uint8_t *buf, uint16_t dport)
{
	uint32_t id;
	size_t len = 0;

	for (id = 1; id < 100; id++) {
		len = finish(buf, base_data(buf, dport, id, MSG_LEN, 0, PLEN));
		if (dlcp_get16(buf + 10) != 0 &&
		    dlcp_get16(buf + 10) != 0xffff)
			break;
	}
	dlcp_put16(buf + 10, 0);
	return len;
}

static size_t b_payload_flip(uint8_t *buf, uint16_t dport)
{
	size_t len = finish(buf, base_data(buf, dport, 1, MSG_LEN, 0, PLEN));

	buf[len - 1] ^= 0x01;
	return len;
}

static size_t b_version0(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	dlcp_pkt_set_ver_type(buf, 0, DLCP_T_DATA);
	return finish(buf, len);
}

static size_t b_version2(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	dlcp_pkt_set_ver_type(buf, DLCP_VERSION + 1, DLCP_T_DATA);
	return finish(buf, len);
}

static size_t b_type0(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	dlcp_pkt_set_ver_type(buf, DLCP_VERSION, 0);
	return finish(buf, len);
}

static size_t b_type_unknown(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	dlcp_pkt_set_ver_type(buf, DLCP_VERSION, __DLCP_T_MAX);
	return finish(buf, len);
}

static size_t b_doff_small(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	buf[6] = DLCP_DATA_HDR_LEN / 4 - 1;
	return finish(buf, len);
}

static size_t b_doff_past_end(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	buf[6] = (uint8_t)(len / 4 + 1);
	return finish(buf, len);
}

static size_t b_len_plus1(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	dlcp_put16(buf + 8, (uint16_t)(len + 1));
	return finish(buf, len);
}

static size_t b_len_minus1(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	dlcp_put16(buf + 8, (uint16_t)(len - 1));
	return finish(buf, len);
}

static size_t b_flags(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	buf[5] = HF_UNKNOWN;
	return finish(buf, len);
}

static size_t b_msglen_zero(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	dlcp_put32(buf + 16, 0);
	return finish(buf, len);
}

static size_t b_msglen_over_max(uint8_t *buf, uint16_t dport)
{
	long long max = 64 << 20;
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	dlcp_sysctl_read("max_msg_size", &max);
	dlcp_put32(buf + 16, (uint32_t)max + 1);
	return finish(buf, len);
}

static size_t b_offset_past_end(uint8_t *buf, uint16_t dport)
{
	return finish(buf, base_data(buf, dport, 1, MSG_LEN,
				     MSG_LEN - PLEN + 1, PLEN));
}

static size_t b_offset_at_end(uint8_t *buf, uint16_t dport)
{
	return finish(buf, base_data(buf, dport, 1, MSG_LEN, MSG_LEN, PLEN));
}

static size_t b_data_no_payload(uint8_t *buf, uint16_t dport)
{
	return finish(buf, base_data(buf, dport, 1, MSG_LEN, 0, 0));
}

static size_t b_gaps_unsorted(uint8_t *buf, uint16_t dport)
{
	static const struct dlcp_pkt_gap gaps[2] = { { 500, 600 },
						     { 100, 200 } };
	struct dlcp_pkt_info pi = { .sport = SPORT, .dport = dport,
				    .msg_id = 1, .msg_len = MSG_LEN };
	struct dlcp_pkt_report_info ri = { .scan_end = MSG_LEN };

	return finish(buf, dlcp_pkt_build_report(buf, BUF, &pi, &ri, gaps, 2));
}

static size_t b_gaps_count(uint8_t *buf, uint16_t dport)
{
	static const struct dlcp_pkt_gap gaps[1] = { { 100, 200 } };
	struct dlcp_pkt_info pi = { .sport = SPORT, .dport = dport,
				    .msg_id = 1, .msg_len = MSG_LEN };
	struct dlcp_pkt_report_info ri = { .scan_end = MSG_LEN };
	size_t len = dlcp_pkt_build_report(buf, BUF, &pi, &ri, gaps, 1);

	dlcp_put16(buf + 36, 2);
	return finish(buf, len);
}

static size_t b_field_dtype(uint8_t *buf, uint16_t dport)
{
	size_t len = base_data(buf, dport, 1, MSG_LEN, 0, PLEN);

	buf[38] = __DLCP_DTYPE_MAX;
	return finish(buf, len);
}

static size_t b_field_stop_lost(uint8_t *buf, uint16_t dport)
{
	struct dlcp_pkt_info pi = { .sport = SPORT, .dport = dport,
				    .msg_id = 1, .msg_len = MSG_LEN };

	return finish(buf, dlcp_pkt_build_stop(buf, BUF, &pi, MSG_LEN + 1, 0));
}

static size_t b_no_socket(uint8_t *buf, uint16_t dport)
{
	(void)dport;
	return finish(buf, base_data(buf, UNBOUND_PORT, 1, MSG_LEN, 0, PLEN));
}

/* ------------------------------------------------------------------ */
/* Fixture                                                              */
/* ------------------------------------------------------------------ */

/* A fresh netns, a DLCP socket on 127.0.0.1 and a raw socket. */
static void raw_setup(struct __test_metadata *_metadata, int *dlcp, int *raw,
		      uint16_t *port, struct sockaddr_in *lo)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct timeval tv = { .tv_sec = 3 };
	socklen_t alen = sizeof(a);

	ASSERT_EQ(0, dlcp_new_netns())
		TH_LOG("unshare(CLONE_NEWNET): %s (needs root)",
		       strerror(errno));
	*dlcp = socket(AF_INET, SOCK_DLCP, 0);
	ASSERT_LE(0, *dlcp) TH_LOG("DLCP socket: %s", strerror(errno));
	ASSERT_EQ(0, setsockopt(*dlcp, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	ASSERT_EQ(0, bind(*dlcp, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, getsockname(*dlcp, (struct sockaddr *)&a, &alen));
	*port = ntohs(a.sin_port);
	ASSERT_NE(UNBOUND_PORT, *port);
	ASSERT_NE(SPORT, *port);

	/* no STOP for the closed port: it would come back as a drop too */
	ASSERT_EQ(0, dlcp_sysctl_write("noport_rate", 0));
	*raw = socket(AF_INET, SOCK_RAW, IPPROTO_DLCP);
	ASSERT_LE(0, *raw) TH_LOG("raw socket: %s", strerror(errno));
	a.sin_port = 0;
	ASSERT_EQ(0, bind(*raw, (struct sockaddr *)&a, sizeof(a)));
	*lo = a;
}

/* Malformed packets: one variant per drop reason. */
FIXTURE(raw_drop) {
	int dlcp;
	int raw;
	uint16_t port;
	struct sockaddr_in lo;
};

/* @reason: the SKB_DROP_REASON_* of skb:kfree_skb, without its prefix */
FIXTURE_VARIANT(raw_drop) {
	build_fn build;
	const char *counter;
	const char *reason;
};

#define RAW_CASE(_name, _fn, _counter, _reason)			\
	FIXTURE_VARIANT_ADD(raw_drop, _name) {			\
		.build = _fn,					\
		.counter = _counter,				\
		.reason = _reason,				\
	}

RAW_CASE(short_common_hdr, b_short_common, "DlcpDropShort", "PKT_TOO_SMALL");
RAW_CASE(short_data_hdr, b_short_data, "DlcpDropShort", "PKT_TOO_SMALL");
RAW_CASE(bad_checksum, b_bad_csum, "DlcpInCsumErrors", "UDP_CSUM");
RAW_CASE(zero_checksum, b_zero_csum, "DlcpInCsumErrors", "UDP_CSUM");
RAW_CASE(payload_bit_flip, b_payload_flip, "DlcpInCsumErrors", "UDP_CSUM");
RAW_CASE(version_0, b_version0, "DlcpDropVersion", "UNHANDLED_PROTO");
RAW_CASE(version_next, b_version2, "DlcpDropVersion", "UNHANDLED_PROTO");
RAW_CASE(type_0, b_type0, "DlcpDropType", "UNHANDLED_PROTO");
RAW_CASE(type_unknown, b_type_unknown, "DlcpDropType", "UNHANDLED_PROTO");
RAW_CASE(doff_too_small, b_doff_small, "DlcpDropHdrLen", "NOT_SPECIFIED");
RAW_CASE(doff_past_end, b_doff_past_end, "DlcpDropHdrLen", "NOT_SPECIFIED");
RAW_CASE(len_field_plus_1, b_len_plus1, "DlcpDropLen", "NOT_SPECIFIED");
RAW_CASE(len_field_minus_1, b_len_minus1, "DlcpDropLen", "NOT_SPECIFIED");
RAW_CASE(unknown_flags, b_flags, "DlcpDropFlags", "NOT_SPECIFIED");
RAW_CASE(msg_len_zero, b_msglen_zero, "DlcpDropMsgLen", "NOT_SPECIFIED");
RAW_CASE(msg_len_over_max, b_msglen_over_max, "DlcpDropMsgLen",
	 "NOT_SPECIFIED");
RAW_CASE(offset_past_end, b_offset_past_end, "DlcpDropOffset", "NOT_SPECIFIED");
RAW_CASE(offset_at_end, b_offset_at_end, "DlcpDropOffset", "NOT_SPECIFIED");
RAW_CASE(data_no_payload, b_data_no_payload, "DlcpDropOffset", "NOT_SPECIFIED");
RAW_CASE(report_gaps_unsorted, b_gaps_unsorted, "DlcpDropGaps",
	 "NOT_SPECIFIED");
RAW_CASE(report_gaps_count, b_gaps_count, "DlcpDropGaps", "NOT_SPECIFIED");
RAW_CASE(data_bad_dtype, b_field_dtype, "DlcpDropField", "NOT_SPECIFIED");
RAW_CASE(stop_lost_too_big, b_field_stop_lost, "DlcpDropField",
	 "NOT_SPECIFIED");
RAW_CASE(no_socket, b_no_socket, "DlcpDropNoSocket", "NO_SOCKET");

FIXTURE_SETUP(raw_drop)
{
	self->dlcp = -1;
	self->raw = -1;
	raw_setup(_metadata, &self->dlcp, &self->raw, &self->port, &self->lo);
}

FIXTURE_TEARDOWN(raw_drop)
{
	if (self->dlcp >= 0)
		close(self->dlcp);
	if (self->raw >= 0)
		close(self->raw);
}

/* Well-formed packets. */
FIXTURE(raw_ok) {
	int dlcp;
	int raw;
	uint16_t port;
	struct sockaddr_in lo;
};

FIXTURE_SETUP(raw_ok)
{
	self->dlcp = -1;
	self->raw = -1;
	raw_setup(_metadata, &self->dlcp, &self->raw, &self->port, &self->lo);
}

FIXTURE_TEARDOWN(raw_ok)
{
	if (self->dlcp >= 0)
		close(self->dlcp);
	if (self->raw >= 0)
		close(self->raw);
}

static void send_raw(struct __test_metadata *_metadata, int fd,
		     const struct sockaddr_in *to, const void *pkt, size_t len)
{
	ASSERT_EQ((ssize_t)len, sendto(fd, pkt, len, 0,
				       (const struct sockaddr *)to,
				       sizeof(*to)))
		TH_LOG("raw sendto: %s", strerror(errno));
}

/*
 * Wait until counter @name has grown by @want from @before (loopback
 * delivery is quick but asynchronous), then a little longer to catch
 * over-counting.
 */
static void wait_counter(const struct dlcp_snmp *before, const char *name,
			 uint64_t want, struct dlcp_snmp *after)
{
	double end = dlcp_now() + 3.0;

	for (;;) {
		if (dlcp_snmp_read(after) == 0 &&
		    dlcp_snmp_get(after, name) - dlcp_snmp_get(before, name) >=
		    want)
			break;
		if (dlcp_now() > end)
			return;
		usleep(10 * 1000);
	}
	usleep(100 * 1000);
	dlcp_snmp_read(after);
}

TEST_F(raw_drop, dropped_and_counted)
{
	struct dlcp_snmp before, after;
	uint8_t pkt[BUF];
	unsigned int i;
	size_t len;
	char c;

	len = variant->build(pkt, self->port);
	ASSERT_LT(0, len);
	ASSERT_EQ(0, dlcp_snmp_read(&before)) TH_LOG("%s: %s", DLCP_SNMP_PATH,
						      strerror(errno));
	ASSERT_TRUE(dlcp_snmp_has(&before, variant->counter))
		TH_LOG("no counter %s", variant->counter);
	ASSERT_TRUE(dlcp_snmp_has(&before, "DlcpInPkts"));

	for (i = 0; i < NR_SENT; i++)
		send_raw(_metadata, self->raw, &self->lo, pkt, len);
	wait_counter(&before, variant->counter, NR_SENT, &after);

	EXPECT_EQ(NR_SENT, dlcp_snmp_get(&after, variant->counter) -
			   dlcp_snmp_get(&before, variant->counter))
		TH_LOG("%s grew by %llu, sent %d", variant->counter,
		       (unsigned long long)(dlcp_snmp_get(&after,
							  variant->counter) -
					    dlcp_snmp_get(&before,
							  variant->counter)),
		       NR_SENT);
	EXPECT_EQ(NR_SENT, dlcp_snmp_get(&after, "DlcpInPkts") -
			   dlcp_snmp_get(&before, "DlcpInPkts"));
	for (i = 0; i < sizeof(drop_counters) / sizeof(drop_counters[0]);
	     i++) {
		const char *n = drop_counters[i];

		if (!strcmp(n, variant->counter))
			continue;
		EXPECT_EQ(dlcp_snmp_get(&before, n), dlcp_snmp_get(&after, n))
			TH_LOG("%s moved too", n);
	}
	EXPECT_EQ(-1, recv(self->dlcp, &c, 1, MSG_DONTWAIT))
		TH_LOG("the socket received a malformed packet");
	EXPECT_EQ(EAGAIN, errno);
}

/*
 * skb:kfree_skb in a trace instance of the test's own, filtered to the
 * frees called from dlcp.ko's code (the event's return address, within
 * the module as /proc/modules places it).
 */
struct ktrace {
	char	dir[128];
};

static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

static int write_str(const char *dir, const char *file, const char *s)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Where dlcp.ko lies: [@start, @end). */
static int module_range(unsigned long *start, unsigned long *end)
{
	unsigned long size, addr;
	char line[512], name[64];
	FILE *f = fopen("/proc/modules", "r");
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lu %*s %*s %*s %lx", name, &size,
			   &addr) == 3 && !strcmp(name, "dlcp") && addr) {
			*start = addr;
			*end = addr + size;
			found = 0;
		}
	fclose(f);
	return found;
}

/* 0, or a reason to skip (no tracefs, addresses hidden). */
static const char *ktrace_start(struct __test_metadata *_metadata,
				struct ktrace *t)
{
	unsigned long start, end;
	char filter[128];
	size_t i;

	if (module_range(&start, &end))
		return "no address of dlcp in /proc/modules";
	t->dir[0] = '\0';
	for (i = 0; i < sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]); i++) {
		char inst[64];

		snprintf(inst, sizeof(inst), "%s/instances", tracefs_dirs[i]);
		if (access(inst, W_OK))
			continue;
		snprintf(t->dir, sizeof(t->dir), "%s/dlcp_raw.%d", inst,
			 (int)getpid());
		break;
	}
	if (!t->dir[0])
		return "no tracefs";
	rmdir(t->dir);
	if (mkdir(t->dir, 0700)) {
		t->dir[0] = '\0';
		return "no trace instance";
	}
	snprintf(filter, sizeof(filter), "location >= 0x%lx && location < 0x%lx",
		 start, end);
	EXPECT_EQ(0, write_str(t->dir, "events/skb/kfree_skb/filter", filter))
		TH_LOG("filter %s: %s", filter, strerror(errno));
	EXPECT_EQ(0, write_str(t->dir, "events/skb/kfree_skb/enable", "1"))
		TH_LOG("enable skb:kfree_skb: %s", strerror(errno));
	return NULL;
}

/*
 * Stop tracing; count the events, and those whose reason is @reason.
 * The instance is removed.
 */
static void ktrace_stop(struct ktrace *t, const char *reason,
			unsigned int *events, unsigned int *matching)
{
	char path[256], line[512], want[64];
	FILE *f;

	*events = *matching = 0;
	if (!t->dir[0])
		return;
	write_str(t->dir, "events/skb/kfree_skb/enable", "0");
	snprintf(want, sizeof(want), "reason: %s\n", reason);
	snprintf(path, sizeof(path), "%s/trace", t->dir);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *r = strstr(line, "reason: ");

		if (line[0] == '#' || !strstr(line, " kfree_skb: "))
			continue;
		if (!*events)
			printf("# e.g.%s", line);
		(*events)++;
		if (r && !strcmp(r, want))
			(*matching)++;
	}
	if (f)
		fclose(f);
	fflush(stdout);
	rmdir(t->dir);
}

/*
 * The drops of dlcp.ko free the packets with the kernel's drop reason of
 * their counter (skb:kfree_skb, as dropwatch sees them): one event per
 * packet sent, each with that reason, none for anything else.
 */
TEST_F(raw_drop, kfree_skb_reason)
{
	unsigned int i, events, matching;
	struct dlcp_snmp before, after;
	struct ktrace t = { "" };
	uint8_t pkt[BUF];
	const char *skip;
	size_t len;

	len = variant->build(pkt, self->port);
	ASSERT_LT(0, len);
	ASSERT_EQ(0, dlcp_snmp_read(&before));
	skip = ktrace_start(_metadata, &t);
	if (skip)
		SKIP(return, "%s", skip);
	for (i = 0; i < NR_SENT; i++)
		send_raw(_metadata, self->raw, &self->lo, pkt, len);
	wait_counter(&before, variant->counter, NR_SENT, &after);
	ktrace_stop(&t, variant->reason, &events, &matching);
	EXPECT_EQ(NR_SENT, dlcp_snmp_get(&after, variant->counter) -
			   dlcp_snmp_get(&before, variant->counter));
	EXPECT_EQ(NR_SENT, events)
		TH_LOG("%u kfree_skb events from dlcp.ko, sent %d", events,
		       NR_SENT);
	EXPECT_EQ(NR_SENT, matching)
		TH_LOG("%u of them with reason %s", matching, variant->reason);
}

/* ------------------------------------------------------------------ */
/* Well-formed packets                                                  */
/* ------------------------------------------------------------------ */

struct rxinfo {
	ssize_t n;
	struct sockaddr_in from;
	int have_info;
	struct dlcp_recv_info info;
};

static ssize_t recv_info(int fd, void *buf, size_t len, int flags,
			 struct rxinfo *r)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct dlcp_recv_info)) + 256];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = &r->from, .msg_namelen = sizeof(r->from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;

	r->have_info = 0;
	r->n = recvmsg(fd, &msg, flags);
	if (r->n < 0)
		return r->n;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_DLCP &&
		    cm->cmsg_type == DLCP_CMSG_RECV) {
			memcpy(&r->info, CMSG_DATA(cm), sizeof(r->info));
			r->have_info = 1;
		}
	return r->n;
}

/*
 * The positive control: a one-packet message made here is delivered, so
 * this file's checksums and pseudo-header agree with the module's.
 */
TEST_F(raw_ok, valid_single_packet_delivered)
{
	struct dlcp_snmp before, after;
	uint8_t pkt[BUF], buf[BUF];
	struct rxinfo r;
	size_t len;

	len = base_data(pkt, self->port, 4242, PLEN, 0, PLEN);
	pkt[5] = DLCP_HF_LAST;
	finish(pkt, len);
	ASSERT_EQ(0, dlcp_snmp_read(&before));
	send_raw(_metadata, self->raw, &self->lo, pkt, len);
	ASSERT_EQ(PLEN, recv_info(self->dlcp, buf, sizeof(buf), 0, &r))
		TH_LOG("crafted message not delivered: %s", strerror(errno));
	EXPECT_EQ(0, memcmp(buf, pkt + DLCP_DATA_HDR_LEN, PLEN));
	EXPECT_EQ(htonl(INADDR_LOOPBACK), r.from.sin_addr.s_addr);
	EXPECT_EQ(SPORT, ntohs(r.from.sin_port));
	ASSERT_TRUE(r.have_info);
	EXPECT_EQ(0x5eed, r.info.tensor_id);
	EXPECT_EQ(3, r.info.iteration);
	EXPECT_EQ(1, r.info.layer);
	EXPECT_EQ(PLEN, r.info.msg_len);
	EXPECT_EQ(4242, r.info.msg_id);
	EXPECT_EQ(DLCP_RECV_EXACT, r.info.status);
	ASSERT_EQ(0, dlcp_snmp_read(&after));
	EXPECT_EQ(1, dlcp_snmp_get(&after, "DlcpInMsgs") -
		     dlcp_snmp_get(&before, "DlcpInMsgs"));
	EXPECT_EQ(0, dlcp_snmp_get(&after, "DlcpInCsumErrors") -
		     dlcp_snmp_get(&before, "DlcpInCsumErrors"));
}

/*
 * A three-packet message sent backwards, with duplicates, and its first
 * packet again after delivery: one message, whole, delivered once.
 */
TEST_F(raw_ok, reassembly_any_order_once)
{
	static const uint32_t order[] = { 200, 200, 100, 0, 100, 0 };
	uint8_t pkt[BUF], buf[BUF], expect[300];
	struct rxinfo r;
	unsigned int i;
	size_t len;

	for (i = 0; i < 300; i++)
		expect[i] = (uint8_t)(i * 13 + 5);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		len = base_data(pkt, self->port, 77, 300, order[i], PLEN);
		if (order[i] == 200)
			pkt[5] = DLCP_HF_LAST;
		send_raw(_metadata, self->raw, &self->lo, pkt,
			 finish(pkt, len));
	}
	ASSERT_EQ(300, recv_info(self->dlcp, buf, sizeof(buf), 0, &r))
		TH_LOG("reassembled message not delivered: %s",
		       strerror(errno));
	EXPECT_EQ(0, memcmp(buf, expect, 300));
	/* A late packet of the delivered message does not start it again. */
	len = base_data(pkt, self->port, 77, 300, 0, PLEN);
	send_raw(_metadata, self->raw, &self->lo, pkt, finish(pkt, len));
	len = base_data(pkt, self->port, 77, 300, 100, PLEN);
	send_raw(_metadata, self->raw, &self->lo, pkt, finish(pkt, len));
	len = base_data(pkt, self->port, 77, 300, 200, PLEN);
	send_raw(_metadata, self->raw, &self->lo, pkt, finish(pkt, len));
	usleep(200 * 1000);
	EXPECT_EQ(-1, recv(self->dlcp, buf, sizeof(buf), MSG_DONTWAIT))
		TH_LOG("message delivered twice");
	EXPECT_EQ(EAGAIN, errno);
}

/*
 * Two packets of a message, the sender's ABORT, then its last packet: the
 * abort freed the first two, so the message never completes.
 */
TEST_F(raw_ok, abort_discards_partial)
{
	struct dlcp_pkt_info pi = { .sport = SPORT, .dport = self->port,
				    .msg_id = 88, .msg_len = 300 };
	uint8_t pkt[BUF], buf[BUF];
	size_t len;

	len = base_data(pkt, self->port, 88, 300, 0, PLEN);
	send_raw(_metadata, self->raw, &self->lo, pkt, finish(pkt, len));
	len = base_data(pkt, self->port, 88, 300, 100, PLEN);
	send_raw(_metadata, self->raw, &self->lo, pkt, finish(pkt, len));
	len = dlcp_pkt_build_abort(pkt, BUF, &pi, 300, 0);
	send_raw(_metadata, self->raw, &self->lo, pkt, finish(pkt, len));
	usleep(100 * 1000);
	len = base_data(pkt, self->port, 88, 300, 200, PLEN);
	pkt[5] = DLCP_HF_LAST;
	send_raw(_metadata, self->raw, &self->lo, pkt, finish(pkt, len));
	usleep(200 * 1000);
	EXPECT_EQ(-1, recv(self->dlcp, buf, sizeof(buf), MSG_DONTWAIT))
		TH_LOG("message delivered despite ABORT");
	EXPECT_EQ(EAGAIN, errno);
}

TEST_HARNESS_MAIN
