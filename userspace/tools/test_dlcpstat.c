// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of dlcpstat: the parser of /proc/net/dlcp/snmp lines and
 * the delta arithmetic, then the binary itself on a sample file (-f) with a
 * private history file. TAP on stdout; exit status 1 if anything failed.
 */
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
	printf("%sok %d - dlcpstat: %s\n", cond ? "" : "not ", nr, name);
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

	printf("TAP version 13\n1..18\n");

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
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return failed ? 1 : 0;
}
