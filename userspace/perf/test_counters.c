// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of the counter readers dlcp-perf uses (dlcpstat_lib): a
 * protocol's table of /proc/net/snmp, and "Name value" files such as
 * /proc/net/dlcp/snmp. TAP on stdout; exit status 1 if anything failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dlcpstat_lib.h"

static int nr, failed;

static void ok(int cond, const char *name)
{
	nr++;
	if (!cond)
		failed++;
	printf("%sok %d - counters: %s\n", cond ? "" : "not ", nr, name);
}

static int mib(const char *s, const char *proto, struct dlcpstat_table *t)
{
	FILE *f = fmemopen((void *)s, strlen(s), "r");
	int err;

	memset(t, 0, sizeof(*t));
	if (!f)
		return -errno;
	err = dlcpstat_parse_mib(f, proto, t);
	fclose(f);
	return err;
}

int main(void)
{
	static const char snmp[] =
		"Ip: Forwarding DefaultTTL InReceives\n"
		"Ip: 2 64 7357826\n"
		"Tcp: RtoAlgorithm MaxConn ActiveOpens RetransSegs\n"
		"Tcp: 1 -1 12 34\n"
		"Udp: InDatagrams\n"
		"Udp: 5\n";
	char path[] = "/tmp/test_counters.XXXXXX";
	struct dlcpstat_table t;
	unsigned int bad = 0;
	int found, fd, err;

	printf("TAP version 13\n1..8\n");

	err = mib(snmp, "Tcp", &t);
	ok(!err && t.nr == 4 && !strcmp(t.e[0].name, "TcpRtoAlgorithm") &&
	   !strcmp(t.e[3].name, "TcpRetransSegs") && t.e[3].value == 34,
	   "the Tcp table of /proc/net/snmp, in order, names prefixed");
	ok(dlcpstat_get(&t, "TcpMaxConn", &found) == UINT64_MAX && found &&
	   !dlcpstat_get(&t, "IpForwarding", &found) && !found,
	   "MaxConn -1 reads as UINT64_MAX; other tables left out");
	dlcpstat_free(&t);
	err = mib(snmp, "Udp", &t);
	ok(!err && t.nr == 1 && dlcpstat_get(&t, "UdpInDatagrams", NULL) == 5,
	   "another protocol's table");
	dlcpstat_free(&t);
	err = mib(snmp, "Sctp", &t);
	ok(!err && !t.nr, "no such table: nothing, no error");
	dlcpstat_free(&t);
	err = mib("Tcp: RetransSegs\n", "Tcp", &t);
	ok(err == -EINVAL && !t.nr, "a names line without its values");
	dlcpstat_free(&t);

	memset(&t, 0, sizeof(t));
	ok(dlcpstat_read_mib("/nonexistent/snmp", "Tcp", &t) == -ENOENT &&
	   dlcpstat_read("/nonexistent/snmp", &t, &bad) == -ENOENT,
	   "a file that is not there: -ENOENT");

	fd = mkstemp(path);
	if (fd < 0 || write(fd, "DlcpInPkts 7\nDlcpOutPkts x\n", 27) != 27) {
		perror(path);
		return 1;
	}
	close(fd);
	err = dlcpstat_read(path, &t, &bad);
	ok(err == -EBADMSG && bad == 2 && t.nr == 1 &&
	   dlcpstat_get(&t, "DlcpInPkts", NULL) == 7,
	   "a malformed line: -EBADMSG and its number, the lines before kept");
	dlcpstat_free(&t);
	unlink(path);

	if (access("/proc/net/snmp", R_OK)) {
		printf("ok 8 - counters: # SKIP no /proc/net/snmp\n");
		return failed ? 1 : 0;
	}
	err = dlcpstat_read_mib("/proc/net/snmp", "Tcp", &t);
	dlcpstat_get(&t, "TcpOutSegs", &found);
	if (found)
		dlcpstat_get(&t, "TcpRetransSegs", &found);
	ok(!err && found,
	   "this host's /proc/net/snmp has TcpOutSegs, TcpRetransSegs");
	dlcpstat_free(&t);
	return failed ? 1 : 0;
}
