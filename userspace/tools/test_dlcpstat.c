// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of dlcpstat: the parser of /proc/net/dlcp/snmp lines and
 * the delta arithmetic, the parsers of sock_diag's answers and of
 * /proc/net/dlcp/{sockets,peers}, then the binary itself on sample files
 * (-f) with a private history file. TAP on stdout; exit status 1 if
 * anything failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>

#include "dlcpstat_lib.h"
#include "dlcpstat_prom.h"

static int nr, failed;

static int ok(int cond, const char *name)
{
	nr++;
	if (!cond)
		failed++;
	printf("%sok %d - dlcpstat: %s\n", cond ? "" : "not ", nr, name);
	return cond;
}

static int parse(const char *s, struct dlcpstat_table *t, unsigned int *bad)
{
	memset(t, 0, sizeof(*t));
	*bad = 0;
	return dlcpstat_parse_str(s, t, bad);
}

/* Run @cmd, return its output (static buffer) or NULL. */
static const char *run(const char *cmd)
{
	static char out[4096];
	size_t n;
	FILE *p = popen(cmd, "r");

	if (!p)
		return NULL;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	return pclose(p) == 0 ? out : NULL;
}


/*
 * A sock_diag answer as the kernel writes it: struct inet_diag_msg of an
 * AF_INET socket 10.1.2.3:7300 -> 10.1.2.4:7301, an attribute the parser
 * skips, then INET_DIAG_INFO with @nr_peers peers, each @peer_len bytes
 * (more than struct dlcp_diag_peer: what a later kernel may send).
 * Returns the length.
 */
static size_t diag_msg(uint8_t *buf, unsigned int nr_peers, size_t peer_len)
{
	struct inet_diag_msg r = { 0 };
	struct dlcp_diag_info di = { 0 };
	struct dlcp_diag_peer dp = { 0 };
	struct nlattr a;
	size_t off = 0, i, ilen = sizeof(di) + 8;
	uint32_t v = 7;

	r.idiag_family = AF_INET;
	r.idiag_state = 1;
	r.id.idiag_sport = htons(7300);
	r.id.idiag_dport = htons(7301);
	r.id.idiag_src[0] = htonl(0x0a010203);
	r.id.idiag_dst[0] = htonl(0x0a010204);
	r.id.idiag_cookie[0] = 5;
	r.idiag_uid = 1000;
	r.idiag_inode = 4242;
	memcpy(buf, &r, sizeof(r));
	off = NLA_ALIGN(sizeof(r));
	a.nla_type = INET_DIAG_MARK;
	a.nla_len = NLA_HDRLEN + 4;
	memcpy(buf + off, &a, sizeof(a));
	memcpy(buf + off + NLA_HDRLEN, &v, 4);
	off += NLA_ALIGN(a.nla_len);

	di.info_len = (uint16_t)ilen;	/* a longer structure than ours */
	di.peer_len = (uint16_t)peer_len;
	di.nr_peers = (uint16_t)(nr_peers + 3);
	di.nr_listed = (uint16_t)nr_peers;
	di.snd_mem = 1ULL << 33;
	di.out_msgs = 2;
	di.flight = 64;
	di.cwnd = 80;
	di.srtt_us = 1500;
	di.rcv_mem = 99;
	a.nla_type = INET_DIAG_INFO;
	a.nla_len = (uint16_t)(NLA_HDRLEN + ilen + nr_peers * peer_len);
	memcpy(buf + off, &a, sizeof(a));
	memset(buf + off + NLA_HDRLEN, 0xee, ilen + nr_peers * peer_len);
	memcpy(buf + off + NLA_HDRLEN, &di, sizeof(di));
	for (i = 0; i < nr_peers; i++) {
		dp.addr[2] = htonl(0xffff);
		dp.addr[3] = htonl(0x0a010204 + (uint32_t)i);
		dp.cwnd = 40 + (uint32_t)i;
		dp.srtt_us = 1500;
		dp.ssthresh = 0xffffffff;
		dp.rto_us = 10000;
		memcpy(buf + off + NLA_HDRLEN + ilen + i * peer_len, &dp,
		       sizeof(dp));
	}
	return off + NLA_ALIGN(a.nla_len);
}

/* @name's metric is @metric, with @label="@index" where @label is not "" */
static int prom_name_is(const char *name, const char *metric,
			const char *label, const char *index)
{
	char m[DLCPSTAT_METRIC_MAX], l[DLCPSTAT_METRIC_MAX];
	char i[DLCPSTAT_METRIC_MAX];

	dlcpstat_prom_name(name, m, l, i);
	if (!strcmp(m, metric) && !strcmp(l, label) && !strcmp(i, index))
		return 1;
	printf("# %s: '%s' '%s' '%s'\n", name, m, l, i);
	return 0;
}

/* the Prometheus names and the exposition of dlcpstat_prom.c */
static void test_prometheus(void)
{
	struct dlcpstat_table t;
	unsigned int bad;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ok(prom_name_is("DlcpInBytesLost", "dlcp_in_bytes_lost_total", "", "") &&
	   prom_name_is("DlcpUdpGsoOutPkts", "dlcp_udp_gso_out_pkts_total", "", "") &&
	   prom_name_is("DlcpInCsumErrors", "dlcp_in_csum_errors_total", "", "") &&
	   prom_name_is("DlcpICMPErrors", "dlcp_icmp_errors_total", "", "") &&
	   prom_name_is("Other-Name", "dlcp_other_name_total", "", ""),
	   "prometheus: CamelCase names in snake case, dlcp_ ... _total");
	ok(prom_name_is("DlcpOutClass0", "dlcp_out_class_total", "class", "0") &&
	   prom_name_is("DlcpOutClass7", "dlcp_out_class_total", "class", "7") &&
	   prom_name_is("Dlcp42", "dlcp_42_total", "", ""),
	   "prometheus: a numbered series is one metric with a label");
	memset(&t, 0, sizeof(t));
	f = open_memstream(&buf, &len);
	if (!f || dlcpstat_parse_str("DlcpOutClass0 1\nDlcpInPkts 2\n"
				     "DlcpOutClass1 3\n", &t, &bad))
		return;
	dlcpstat_prom_print(f, &t, "a\"b\\c");
	fclose(f);
	if (!ok(!strcmp(buf,
		   "# HELP dlcp_out_class_total DLCP counter DlcpOutClass<class> (see dlcp(7))\n"
		   "# TYPE dlcp_out_class_total counter\n"
		   "dlcp_out_class_total{netns=\"a\\\"b\\\\c\",class=\"0\"} 1\n"
		   "dlcp_out_class_total{netns=\"a\\\"b\\\\c\",class=\"1\"} 3\n"
		   "# HELP dlcp_in_pkts_total DLCP counter DlcpInPkts (see dlcp(7))\n"
		   "# TYPE dlcp_in_pkts_total counter\n"
		   "dlcp_in_pkts_total{netns=\"a\\\"b\\\\c\"} 2\n"),
		"prometheus: HELP, TYPE, the samples of a metric together, labels escaped"))
		printf("# got:\n%s", buf);
	free(buf);
	dlcpstat_free(&t);
}

int main(void)
{
	static const char snmp[] =
		"DlcpDropShort                   0\n"
		"DlcpInPkts                      12345\n"
		"DlcpOutPkts                     18446744073709551615\n"
		"\n# comment\n"
		"DlcpInMsgs 7\n";
	struct dlcpstat_table t, old;
	unsigned int bad;
	char dir[] = "/tmp/test_dlcpstat.XXXXXX", cmd[2048], path[64];
	const char *out;
	FILE *f;
	int found;

	printf("TAP version 13\n1..34\n");
	test_prometheus();

	ok(!parse(snmp, &t, &bad) && t.nr == 4, "parses the snmp format");
	ok(dlcpstat_get(&t, "DlcpInPkts", &found) == 12345 && found,
	   "value of a counter");
	ok(dlcpstat_get(&t, "DlcpOutPkts", NULL) == UINT64_MAX,
	   "64-bit values");
	dlcpstat_get(&t, "DlcpNope", &found);
	ok(!found, "missing counter not found");
	dlcpstat_free(&t);

	ok(parse("DlcpA 1\nDlcpB x\n", &t, &bad) && bad == 2,
	   "non-numeric value rejected with its line");
	dlcpstat_free(&t);
	ok(parse("DlcpA 18446744073709551616\n", &t, &bad) && bad == 1,
	   "overflowing value rejected");
	dlcpstat_free(&t);
	ok(parse("DlcpA 1\nDlcpA 2\n", &t, &bad) && bad == 2,
	   "duplicate name rejected");
	dlcpstat_free(&t);
	ok(parse("DlcpA 1 2\n", &t, &bad) && parse("DlcpA\n", &old, &bad),
	   "trailing junk and missing value rejected");
	dlcpstat_free(&t);
	dlcpstat_free(&old);

	ok(dlcpstat_delta(10, 4) == 6 && dlcpstat_delta(3, 9) == 3,
	   "delta, and counter reset counts from zero");
	parse("DlcpA 10\nDlcpB 5\nDlcpC 2\n", &t, &bad);
	parse("DlcpA 4\nDlcpB 9\n", &old, &bad);
	dlcpstat_diff(&t, &old);
	ok(t.e[0].value == 6 && t.e[1].value == 5 && t.e[2].value == 2,
	   "table diff");
	dlcpstat_free(&t);
	dlcpstat_free(&old);

	/* sock_diag's answers */
	{
		static uint8_t m[8192];
		struct dlcpstat_sock *sk = calloc(1, sizeof(*sk));
		char a[80];
		size_t len = diag_msg(m, 2, sizeof(struct dlcp_diag_peer) + 8);

		ok(sk && !dlcpstat_diag_parse(m, len, sk) &&
		   sk->family == AF_INET && sk->state == 1 &&
		   sk->lport == 7300 && sk->rport == 7301 &&
		   sk->inode == 4242 && sk->uid == 1000 && sk->cookie == 5,
		   "sock_diag: struct inet_diag_msg");
		dlcpstat_addr_str(a, sizeof(a), sk->laddr, sk->lport);
		ok(!strcmp(a, "10.1.2.3:7300"), "sock_diag: IPv4 address");
		ok(sk->have_info && sk->snd_mem == 1ULL << 33 &&
		   sk->out_msgs == 2 && sk->flight == 64 && sk->cwnd == 80 &&
		   sk->srtt_us == 1500 && sk->rcv_mem == 99 &&
		   sk->nr_peers == 5 && sk->nr_listed == 2,
		   "sock_diag: INET_DIAG_INFO, longer than this version's");
		dlcpstat_addr_str(a, sizeof(a), sk->peers[1].addr, -1);
		ok(sk->peers[0].cwnd == 40 && sk->peers[1].cwnd == 41 &&
		   sk->peers[1].full && sk->peers[1].rto_us == 10000 &&
		   sk->peers[1].inode == 4242 && !strcmp(a, "10.1.2.5"),
		   "sock_diag: peers, longer than this version's");
		ok(dlcpstat_diag_parse(m, len - 8, sk) &&
		   dlcpstat_diag_parse(m, 10, sk),
		   "sock_diag: a message cut short is refused");
		free(sk);
	}

	/* /proc/net/dlcp/sockets and peers */
	{
		struct dlcpstat_sock *sk = calloc(1, sizeof(*sk));
		struct dlcpstat_peer pe;
		char a[80];

		ok(sk && dlcpstat_proc_sock_parse("  sl local_address rem_address   st tx_mem:rx_mem        out_msgs in_msgs cwnd srtt_us uid inode\n", sk) == 1 &&
		   !dlcpstat_proc_sock_parse("   1: 0100007F:1C84 00000000:0000 07 00000010:00019909     2     1    32     1500     7 1376\n", sk) &&
		   sk->lport == 7300 && sk->state == 7 && sk->snd_mem == 16 &&
		   sk->rcv_mem == 0x19909 && sk->out_msgs == 2 &&
		   sk->in_msgs == 1 && sk->cwnd == 32 && sk->srtt_us == 1500 &&
		   sk->uid == 7 && sk->inode == 1376 && !sk->have_info,
		   "/proc sockets: a line of an IPv4 socket");
		dlcpstat_addr_str(a, sizeof(a), sk->laddr, sk->lport);
		ok(!strcmp(a, "127.0.0.1:7300") || /* big-endian host */
		   !strcmp(a, "1.0.0.127:7300"), "/proc sockets: IPv4 address");
		ok(!dlcpstat_proc_sock_parse("   0: 00000000000000000000000001000000:1C85 00000000000000000000000000000000:0000 01 00000000:00000000     0     0     0        0     0 1377\n", sk) &&
		   sk->family == AF_INET6 &&
		   dlcpstat_proc_sock_parse("   0: 0100007F:1C84 00000000:0000 07\n", sk) == -1,
		   "/proc sockets: an IPv6 line; a short one refused");
		dlcpstat_addr_str(a, sizeof(a), sk->raddr, sk->rport);
		ok(!strcmp(a, "*:*"), "wildcard address and port print as *:*");
		ok(!dlcpstat_proc_peer_parse("   0: 00000000:A822 0100007F     1       12    33    21243     10050   960         0   9310 1378\n", &pe) &&
		   pe.lport == 0xa822 && pe.msgs == 1 && pe.inflight == 12 &&
		   pe.cwnd == 33 && pe.srtt_us == 21243 &&
		   pe.rttvar_us == 10050 && pe.alpha == 960 &&
		   pe.reo_us == 9310 && pe.inode == 1378 && !pe.full,
		   "/proc peers: a line");
		free(sk);
	}

	/* the binary, on a sample file, with a private history */
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/snmp", dir);
	f = fopen(path, "w");
	fputs(snmp, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "./dlcpstat -f %s", path);
	out = run(cmd);
	ok(out && strstr(out, "DlcpInPkts") && !strstr(out, "DlcpDropShort"),
	   "binary hides zeros by default");
	snprintf(cmd, sizeof(cmd), "./dlcpstat -z -j -f %s InPkts DropShort",
		 path);
	out = run(cmd);
	ok(out && !strcmp(out, "{\"dlcp\":{\"DlcpDropShort\":0,\"DlcpInPkts\":12345}}\n"),
	   "binary -z -j with patterns");
	snprintf(cmd, sizeof(cmd), "./dlcpstat -j -p -f %s InPkts InMsgs",
		 path);
	out = run(cmd);
	ok(out && !strcmp(out, "{\n  \"dlcp\": {\n    \"DlcpInPkts\": 12345,\n"
			  "    \"DlcpInMsgs\": 7\n  }\n}\n"),
	   "binary -j -p: indented JSON");
	snprintf(cmd, sizeof(cmd),
		 "DLCPSTAT_HISTORY=%s/hist ./dlcpstat -d -f %s > /dev/null && "
		 "sed -i s/12345/12350/ %s && "
		 "DLCPSTAT_HISTORY=%s/hist ./dlcpstat -d -f %s", dir, path, path,
		 dir, path);
	out = run(cmd);
	ok(out && !strcmp(out, "DlcpInPkts                      5\n"),
	   "binary -d: delta since the last run");
	/* the history now holds 12350; the file goes to 12360 */
	snprintf(cmd, sizeof(cmd),
		 "sed -i s/12350/12360/ %s && "
		 "DLCPSTAT_HISTORY=%s/hist ./dlcpstat -d -a -s -f %s InPkts && "
		 "DLCPSTAT_HISTORY=%s/hist ./dlcpstat -d -n -f %s && "
		 "DLCPSTAT_HISTORY=%s/hist ./dlcpstat -d -z -f %s InPkts",
		 path, dir, path, dir, path, dir, path);
	out = run(cmd);
	ok(out && !strcmp(out, "DlcpInPkts                      12360\n"
			  "DlcpInPkts                      0\n"),
	   "binary -d -a: absolute values; -n: no output, history updated");
	snprintf(cmd, sizeof(cmd),
		 "DLCPSTAT_HISTORY=%s/hist ./dlcpstat -r -f %s InPkts && "
		 "DLCPSTAT_HISTORY=%s/hist ./dlcpstat -d -z -f %s InPkts",
		 dir, path, dir, path);
	out = run(cmd);
	ok(out && !strcmp(out, "DlcpInPkts                      12360\n"
			  "DlcpInPkts                      0\n"),
	   "binary -r: absolute values, history reset to them");
	snprintf(cmd, sizeof(cmd),
		 "rm -f %s/hist; DLCPSTAT_HISTORY=%s/hist ./dlcpstat -r -s -f %s"
		 " > /dev/null; test ! -e %s/hist && echo none",
		 dir, dir, path, dir);
	out = run(cmd);
	ok(out && !strcmp(out, "none\n"), "binary -r -s: history not written");
	snprintf(cmd, sizeof(cmd), "printf 'bad line here\\n' > %s; "
		 "./dlcpstat -f %s 2>&1; echo rc=$?", path, path);
	out = run(cmd);
	ok(out && strstr(out, "malformed") && strstr(out, "rc=1"),
	   "binary reports a malformed file");
	snprintf(path, sizeof(path), "%s/sockets", dir);
	f = fopen(path, "w");
	fputs("  sl local_address rem_address   st tx_mem:rx_mem        out_msgs in_msgs cwnd srtt_us uid inode\n"
	      "   1: 0100007F:1C84 00000000:0000 07 00000000:00000010     0     1     0        0     0 1376\n"
	      "   0: 00000000000000000000000001000000:1C85 00000000000000000000000001000000:1C84 01 00000000:00000000     0     0     0        0     0 1377\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "./dlcpstat -S -6 -j -f %s", path);
	out = run(cmd);
	ok(out && !strcmp(out, "{\"source\":\"proc\",\"sockets\":[{\"family\":\"inet6\","
			  "\"state\":\"ESTAB\",\"local\":\"::1\",\"lport\":7301,"
			  "\"peer\":\"::1\",\"rport\":7300,\"uid\":0,\"inode\":1377,"
			  "\"rcv_mem\":0,\"snd_mem\":0,\"out_msgs\":0,\"in_msgs\":0,"
			  "\"cwnd\":0,\"srtt_us\":0}]}\n"),
	   "binary -S -6 -j -f: sockets from a /proc file, as JSON");
	snprintf(cmd, sizeof(cmd), "./dlcpstat -S -f %s | awk 'NR > 1 { print $1, $4, $5 }'",
		 path);
	out = run(cmd);
	ok(out && (strstr(out, "UNCONN 127.0.0.1:7300 *:*\n") ||
		   strstr(out, "UNCONN 1.0.0.127:7300 *:*\n")) &&
	   strstr(out, "ESTAB [::1]:7301 [::1]:7300\n"),
	   "binary -S -f: a line per socket");
	snprintf(cmd, sizeof(cmd), "./dlcpstat -S 1 2>&1; echo rc=$?");
	out = run(cmd);
	ok(out && strstr(out, "rc=2"), "binary -S with an interval: usage error");

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return failed ? 1 : 0;
}
