#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers of the DLCP selftest scripts: KTAP output, network
# namespaces, counters. Sourced, not run.

# kselftest exit codes
export KSFT_PASS=0
export KSFT_FAIL=1
export KSFT_SKIP=4

SELFTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_DIR=$(cd "$SELFTEST_DIR/.." && pwd -P)
XFER=$SELFTEST_DIR/dlcp_xfer
export SELFTEST_DIR REPO_DIR XFER

PATH=$PATH:/usr/sbin:/sbin
export PATH

# ------------------------------------------------------------------ KTAP

ktap_nr=0
ktap_pass=0
ktap_fail=0
ktap_skip=0

# ktap_header NR_TESTS
ktap_header()
{
	echo "TAP version 13"
	echo "1..$1"
}

ktap_print_msg()
{
	local line

	while IFS= read -r line; do
		echo "# $line"
	done <<< "$*"
}

# ktap_result NAME RC [DIAGNOSTIC]: RC 0 pass, KSFT_SKIP skip, else fail.
ktap_result()
{
	local name=$1 rc=$2 diag=${3:-}

	ktap_nr=$((ktap_nr + 1))
	case $rc in
	0)
		ktap_pass=$((ktap_pass + 1))
		echo "ok $ktap_nr $name"
		;;
	"$KSFT_SKIP")
		ktap_skip=$((ktap_skip + 1))
		echo "ok $ktap_nr $name # SKIP${diag:+ $diag}"
		;;
	*)
		ktap_fail=$((ktap_fail + 1))
		echo "not ok $ktap_nr $name${diag:+ # $diag}"
		;;
	esac
}

# ktap_finished: totals line; returns non-zero if anything failed.
ktap_finished()
{
	echo "# totals: $ktap_pass passed, $ktap_fail failed, $ktap_skip skipped"
	[ "$ktap_fail" -eq 0 ]
}

# ktap_skip_all REASON CASE...: every CASE skipped for REASON (after
# ktap_header), the totals, and the exit status of a skipped test.
ktap_skip_all()
{
	local reason=$1 c
	shift

	for c in "$@"; do
		ktap_result "$c" "$KSFT_SKIP" "$reason"
	done
	ktap_finished
	exit "$KSFT_SKIP"
}

# dlcp_state_dump: after a failed case, the DLCP state of every network
# namespace (counters that are not zero, sockets, peers), so that a failure
# in CI or on the debug kernel can be read from the log alone
dlcp_state_dump()
{
	local ns

	for ns in $(ip netns list 2> /dev/null | cut -d' ' -f1); do
		[ -r /proc/net/dlcp/snmp ] || return 0
		echo "state of $ns at the failure:"
		# shellcheck disable=SC2016  # awk fields
		ip netns exec "$ns" awk '$2 != 0 { printf "%s=%s ", $1, $2 } END { print "" }' \
			/proc/net/dlcp/snmp 2> /dev/null | fold -s -w 150
		ip netns exec "$ns" cat /proc/net/dlcp/sockets /proc/net/dlcp/peers 2> /dev/null
	done
}

# run_case NAME FUNCTION [ARGS...]: run a test function in a subshell with
# its output captured, print the output as diagnostics (always: timings and
# counters are worth seeing), then one result line. The functions bound
# their own run time (timeout(1), dlcp_xfer --timeout).
run_case()
{
	local name=$1 log rc
	shift

	log=$(mktemp)
	( "$@" ) > "$log" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq "$KSFT_SKIP" ] || dlcp_state_dump >> "$log" 2>&1
	sed 's/^/# /' "$log"
	rm -f "$log"
	ktap_result "$name" "$rc"
	return 0
}

# ktap_main CASE...: the body of a test script. Needs root; prints the KTAP
# header; makes $tmpdir (removed at exit, after the script's cleanup());
# runs the script's setup() (on failure its output is shown and every case
# fails); then runs each case_CASE with run_case, its time, and after_case()
# if the script has one; then the totals. Exits with the KTAP status.
ktap_main()
{
	local c start setup_log

	require_root
	ktap_header "$#"
	tmpdir=$(mktemp -d) || exit "$KSFT_FAIL"
	trap 'cleanup; rm -rf "$tmpdir"' EXIT
	if ! dlcp_loaded || ! setup_log=$(setup 2>&1); then
		ktap_print_msg "${setup_log:-dlcp module not loaded}"
		for c in "$@"; do
			ktap_result "$c" 1 "setup failed"
		done
		ktap_finished
		exit "$KSFT_FAIL"
	fi
	for c in "$@"; do
		start=$SECONDS
		run_case "$c" "case_$c"
		echo "# $c: $((SECONDS - start)) s"
		if declare -F after_case > /dev/null; then
			after_case
		fi
	done
	ktap_finished
	exit $?
}

# capture_ready ERRFILE PID: wait until the tcpdump writing its messages to
# ERRFILE says it is capturing (a loaded emulator can take seconds to start
# it). Capture with --immediate-mode (tcpdump drops the block of its ring
# that the kernel has not yet handed over when it is stopped), a snap
# length no larger than needed and a larger buffer (-B): in immediate mode
# every ring frame is snap length sized, and the default 2 MB of 256 KB
# frames overflows at once.
capture_ready()
{
	for _ in $(seq 1 300); do
		grep -q 'listening on' "$1" 2> /dev/null && return 0
		kill -0 "$2" 2> /dev/null || break
		sleep 0.1
	done
	echo "FAIL: tcpdump did not start: $(cat "$1" 2> /dev/null)"
	return 1
}

# kill_pidfile FILE: kill the processes whose pids FILE lists (one a line;
# cases run in subshells, so background pids are passed on in a file),
# wait until each has exited, and remove FILE. A process started in a
# case's subshell is not our child: poll its state (a zombie has closed
# its sockets) rather than wait(1) for it. A process still running 5 s
# after SIGTERM is killed (SIGKILL) and reported: fails.
kill_pidfile()
{
	local pid state i rc=0

	[ -f "$1" ] || return 0
	while read -r pid; do
		kill "$pid" 2> /dev/null
		for ((i = 0; i < 100; i++)); do
			state=$(awk '$1 == "State:" { print $2 }' \
				"/proc/$pid/status" 2> /dev/null)
			[ -z "$state" ] || [ "$state" = Z ] && break
			sleep 0.05
		done
		if [ -n "$state" ] && [ "$state" != Z ]; then
			echo "FAIL: pid $pid ($(tr '\0' ' ' \
				< "/proc/$pid/cmdline" 2> /dev/null)) still" \
				"running 5 s after SIGTERM (state $state)"
			kill -KILL "$pid" 2> /dev/null
			rc=1
		fi
	done < "$1"
	rm -f "$1"
	return $rc
}

# need_exec FILE: setup() helper: fail with a message if FILE is missing
need_exec()
{
	[ -x "$1" ] || fail "$1 not built (make -C selftests)"
}

# --------------------------------------------------------------- helpers

log() { echo "$*"; }

fail()
{
	echo "FAIL: $*"
	return 1
}

# tries N FN AGAIN FAILED: run FN up to N times while it returns 2 (saying
# AGAIN after each), for a case whose run may not be able to tell; N 2s
# fail (saying FAILED), as does a 1
tries()
{
	local n=$1 fn=$2 again=$3 failed=$4 try rc

	for ((try = 1; try <= n; try++)); do
		"$fn"
		rc=$?
		[ "$rc" -eq 2 ] || return "$rc"
		echo "$again (run $try of $n)"
	done
	fail "$failed"
}

# tscale SECONDS: SECONDS times DLCP_TIMEOUT_SCALE (slow debug kernels)
tscale()
{
	echo $(($1 * ${DLCP_TIMEOUT_SCALE:-1}))
}

# wait_for_file FILE SECONDS [PID]: until FILE exists; gives up early if
# process PID (the one to create it) has exited.
wait_for_file()
{
	local file=$1 end=$((SECONDS + $2)) pid=${3:-}

	while [ "$SECONDS" -le "$end" ]; do
		[ -e "$file" ] && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2> /dev/null; then
			[ -e "$file" ]
			return
		fi
		sleep 0.05
	done
	return 1
}

# require_root / require_module: skip the whole script if unmet.
require_root()
{
	if [ "$(id -u)" -ne 0 ]; then
		echo "TAP version 13"
		echo "1..0 # SKIP needs root"
		exit "$KSFT_SKIP"
	fi
}

# require_vm: these scripts load and unload modules and make namespaces:
# run them in the test VM (tools/vm-run sets DLCP_VM=1) unless told so.
require_vm()
{
	if [ "${DLCP_VM:-}" != 1 ] && [ "${DLCP_ALLOW_HOST:-}" != 1 ]; then
		echo "TAP version 13"
		echo "1..0 # SKIP not in the test VM (selftests/run.sh), DLCP_ALLOW_HOST=1 overrides"
		exit "$KSFT_SKIP"
	fi
}

dlcp_loaded()
{
	[ -e /proc/net/dlcp/snmp ]
}

# rmmod_retry MODULE SECONDS: unload MODULE, retrying for SECONDS, as
# socket teardown may finish asynchronously (RCU).
rmmod_retry()
{
	local mod=$1 i

	for ((i = 0; i < $2 * 10; i++)); do
		rmmod "$mod" 2> /dev/null && return 0
		sleep 0.1
	done
	rmmod "$mod"
}

# have_inet_diag: the kernel has inet_diag (CONFIG_INET_DIAG; a module on
# Debian's kernels, which dlcp.ko loads), so that sock_diag lists inet
# sockets; a kernel without it (the debug kernel of make debug-check) has
# no inet_diag_register, and dlcp.ko is built without its handler.
have_inet_diag()
{
	modprobe -q inet_diag 2> /dev/null
	grep -qE '[[:space:]]inet_diag_register([[:space:]]|$)' /proc/kallsyms
}

# dlcp_insmod KO [PARAM=VALUE...]: insmod, after modprobing the modules
# KO depends on (insmod does not; dlcp.ko needs udp_tunnel, for example).
dlcp_insmod()
{
	local ko=$1 dep
	shift

	for dep in $(modinfo -F depends "$ko" 2> /dev/null | tr , ' '); do
		modprobe -q "$dep" 2> /dev/null
	done
	insmod "$ko" "$@"
}

# snmp NS COUNTER: a counter of namespace NS ("" for the current one).
snmp()
{
	local ns=$1 name=$2

	if [ -n "$ns" ]; then
		ip netns exec "$ns" cat /proc/net/dlcp/snmp
	else
		cat /proc/net/dlcp/snmp
	fi | awk -v n="$name" '$1 == n { print $2; found = 1 }
		END { if (!found) print "missing" }'
}

# ------------------------------------------------------------ namespaces

# ns_create NAME...: new namespaces with lo up (deleted first if present).
ns_create()
{
	local ns

	for ns in "$@"; do
		ip netns del "$ns" 2> /dev/null
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up || return 1
	done
}

ns_delete()
{
	local ns

	for ns in "$@"; do
		ip netns del "$ns" 2> /dev/null
	done
	return 0
}

# mac NS DEV: the link-layer address of DEV in namespace NS
mac()
{
	ip -n "$1" -br link show dev "$2" | awk '{ print $3 }'
}
