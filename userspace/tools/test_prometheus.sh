#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of dlcpstat --prometheus on every counter the module has: a
# /proc/net/dlcp/snmp made of the names of kmod/dlcp_proc.c's
# dlcp_mib_names[], each with its own value, read with -f. The output must
# be the Prometheus text format (checked here line by line: HELP and TYPE
# once per metric before its samples, metric and label names, counters
# named *_total, no sample twice), hold every value once, name a few
# counters as docs/operating.md says, and pass "promtool check metrics"
# (Debian's prometheus package, tools/install-deps; skipped without it,
# e.g. in a package build). TAP on stdout; exit status 1 if anything failed.

TOP=$(cd "$(dirname "$0")/../.." && pwd -P)
DLCPSTAT=$TOP/userspace/tools/dlcpstat
n=0
failed=0

result()
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - prometheus: $2"
	else
		echo "not ok $n - prometheus: $2"
		failed=$((failed + 1))
	fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_prometheus.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "TAP version 13"
echo "1..5"

# every counter, the i-th with the value 1000 * i + 7
sed -n 's/^\t\[DLCP_MIB_[A-Z0-9_ +]*\]\t*= "\(Dlcp[A-Za-z0-9]*\)",$/\1/p' \
	"$TOP/kmod/dlcp_proc.c" | awk '{ print $1, 1000 * NR + 7 }' > "$tmp/snmp"
nr=$(wc -l < "$tmp/snmp")
"$DLCPSTAT" --prometheus -f "$tmp/snmp" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" = 0 ] && [ "$nr" -ge 80 ] && [ -s "$tmp/out" ]
result $? "dlcpstat --prometheus -f reads all $nr counters of kmod/dlcp_proc.c"
[ "$rc" = 0 ] || echo "# exit status $rc: $(head -n 1 "$tmp/err")"

# the exposition format, line by line; prints what is wrong
[ -s "$tmp/out" ] && awk '
	function bad(why) { print "line " NR ": " why ": " $0; nbad++ }
	/^# HELP / {
		if ($3 in help) bad("second HELP")
		help[$3] = 1; next
	}
	/^# TYPE / {
		if (!($3 in help)) bad("TYPE before HELP")
		if ($3 in type) bad("second TYPE")
		if ($4 != "counter" && $4 != "gauge") bad("type " $4)
		if ($4 == "counter" && $3 !~ /_total$/) bad("counter not *_total")
		type[$3] = $4; cur = $3; next
	}
	/^#/ { bad("other comment"); next }
	{
		if (!match($0, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) { bad("metric name"); next }
		name = substr($0, 1, RLENGTH)
		if (name != cur) bad("sample outside its metric " cur)
		rest = substr($0, RLENGTH + 1)
		if (rest ~ /^\{/) {
			lab = rest; sub(/\}.*/, "", lab); sub(/^\{/, "", lab)
			if (lab !~ /^[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*")*$/)
				bad("labels")
			sub(/^\{[^}]*\}/, "", rest)
		}
		if (rest !~ /^ [0-9]+$/) bad("value")
		key = $1
		if (key in seen) bad("sample twice")
		seen[key] = 1
	}
	END { exit nbad > 0 }
' "$tmp/out" > "$tmp/format" 2>&1
result $? "the output is the text exposition format (HELP, TYPE, *_total counters, one sample each)"
head -n 5 "$tmp/format" 2> /dev/null | sed 's/^/# /'

# every value once: the samples are the counters
diff <(awk '{ print $2 }' "$tmp/snmp" | sort) \
	<(grep -v '^#' "$tmp/out" | awk '{ print $NF }' | sort) > "$tmp/values"
result $? "every counter is a sample, with its value"
head -n 5 "$tmp/values" 2> /dev/null | sed 's/^/# /'

# names as docs/operating.md and dlcpstat(8) give them
v() { awk -v c="$1" '$1 == c { print $2 }' "$tmp/snmp"; }
{
	grep -qx "dlcp_in_bytes_lost_total $(v DlcpInBytesLost)" "$tmp/out" &&
		grep -qx "dlcp_in_csum_errors_total $(v DlcpInCsumErrors)" "$tmp/out" &&
		grep -qx "dlcp_udp_gso_out_pkts_total $(v DlcpUdpGsoOutPkts)" "$tmp/out" &&
		grep -qx "dlcp_out_class_total{class=\"3\"} $(v DlcpOutClass3)" "$tmp/out" &&
		grep -qx '# TYPE dlcp_out_msgs_lossy_total counter' "$tmp/out" &&
		[ "$(grep -c '^# TYPE dlcp_out_class_total ' "$tmp/out")" = 1 ]
}
result $? "names: dlcp_in_bytes_lost_total, dlcp_out_class_total{class=\"3\"}, ..."

if command -v promtool > /dev/null; then
	[ -s "$tmp/out" ] && promtool check metrics < "$tmp/out" > "$tmp/promtool" 2>&1
	result $? "promtool check metrics accepts it"
	head -n 5 "$tmp/promtool" 2> /dev/null | sed 's/^/# /'
else
	echo "ok $((n + 1)) - prometheus: promtool check metrics # SKIP no promtool (Debian package prometheus)"
	n=$((n + 1))
fi

[ "$failed" = 0 ]
