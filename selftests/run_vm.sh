#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In-guest entry point of the DLCP selftests (run as root inside the test
# VM by selftests/run.sh): loads kmod/dlcp.ko unless DLCP is loaded
# already, runs every test program and script, each under its own timeout,
# and prints one KTAP stream with one result line per test case:
#
#   TAP version 13
#   ok 1 dlcp_api.dlcp.socket_create
#   ...
#   # totals: N passed, N failed, N skipped
#   1..N
#
# The components' own output is kept as diagnostic ("# ") lines. A
# component that crashes, times out, or reports fewer results than it
# planned gets a "not ok" line for that, and each component is followed by
# a check of the kernel log. Exit status 0 only if nothing failed.
#
# usage: run_vm.sh [--ko PATH] [COMPONENT...]
#   COMPONENT: dlcp_api dlcp_api_msg dlcp_api_cmsg dlcp_raw dlcp_diag
#              dlcp_hostile dlcp_hostile_users dlcp_hostile_mem dlcp_netns
#              dlcp_loss dlcp_prio dlcp_trace dlcp_dlcpstat dlcp_dissector
#              dlcp_kunit dlcp_module ... (COMPONENTS below; default: all
#              in that order, but those marked slow, which run when named
#              or with DLCP_SLOW=1)
# Environment: DLCP_TIMEOUT_SCALE=N multiplies the component timeouts
# (the debug kernel of make debug-check is several times slower).

set -u
shopt -s lastpipe

HERE=$(cd "$(dirname "$0")" && pwd -P)
# shellcheck source=lib.sh
source "$HERE/lib.sh"

KO=$REPO_DIR/kmod/dlcp.ko

# component timeout(s) [slow], in the order they run; dlcp_kunit.sh and
# dlcp_module.sh unload and reload the module, so they go last. "slow"
# components (none today) run only when named or with DLCP_SLOW=1, for
# those that would take the suite past its time budget on TCG.
COMPONENTS=(
	"dlcp_api 90"
	"dlcp_api_msg 120"
	"dlcp_api_cmsg 90"
	"dlcp_raw 120"
	"dlcp_diag 180"
	"dlcp_hostile 120"
	"dlcp_hostile_users 90"
	"dlcp_hostile_mem 300"
	"dlcp_netns.sh 600"
	"dlcp_netns6.sh 600"
	"dlcp_loss.sh 600"
	"dlcp_loss_udp.sh 420"
	"dlcp_loss6.sh 480"
	"dlcp_prio.sh 900"
	"dlcp_pmtu.sh 180"
	"dlcp_gso.sh 600"
	"dlcp_multipath.sh 300"
	"dlcp_trace.sh 120"
	"dlcp_dlcpstat.sh 240"
	"dlcp_dissector.sh 240"
	"dlcp_fuzz.sh 480"
	"dlcp_stress.sh 480"
	"dlcp_libdlcp.sh 600"
	"dlcp_torch.sh 1500"
	"dlcp_perf.sh 240"
	"dlcp_security.sh 300"
	"dlcp_kunit.sh 120"
	"dlcp_module.sh 180"
)

# Kernel log lines that mean a kernel bug (as tools/vm-run checks).
PROBLEM_RE='BUG:|WARNING:|Oops|general protection fault|refcount_t:|list_add corruption|list_del corruption|kernel BUG|Kernel panic|UBSAN:|KASAN:|kmemleak:|INFO: task .* blocked|rcu: INFO|soft lockup|hard LOCKUP|sleeping function called from invalid context|scheduling while atomic|Bad page|possible circular locking|inconsistent lock state'
IGNORE_RE='RETBleed: WARNING|Spectre.*WARNING'

nr=0
npass=0
nfail=0
nskip=0

result()
{
	local ok=$1 name=$2 directive=${3:-}

	nr=$((nr + 1))
	if [[ $directive =~ ^SKIP ]]; then
		nskip=$((nskip + 1))
	elif [ "$ok" = ok ]; then
		npass=$((npass + 1))
	else
		nfail=$((nfail + 1))
	fi
	echo "$ok $nr $name${directive:+ # $directive}"
}

dmesg_lines()
{
	dmesg 2> /dev/null | wc -l
}

# run_component NAME TIMEOUT: run it, renumber its results into ours.
run_component()
{
	local name=$1 tmo=$2 prefix=${1%.sh}
	local rcfile rc planned=-1 results=0 failed=0 lastrun=""
	local line ok desc directive start k0
	local -a cmd

	if [ ! -x "$HERE/$name" ]; then
		result "not ok" "$prefix" "ERROR $name not built (make -C selftests)"
		return
	fi
	# DLCP_TIMEOUT_SCALE=N: N times the time (slow kernels: KASAN, lockdep)
	tmo=$((tmo * ${DLCP_TIMEOUT_SCALE:-1}))
	cmd=(timeout -k 10 "$tmo" "$HERE/$name")
	rcfile=$(mktemp)
	start=$SECONDS
	k0=$(dmesg_lines)
	echo "# ---- $name (timeout ${tmo}s)"

	{
		"${cmd[@]}" 2>&1 < /dev/null
		echo $? > "$rcfile"
	} | while IFS= read -r line; do
		line=${line%$'\r'}
		if [[ $line =~ ^(not ok|ok)\ [0-9]+(\ (.*))?$ ]]; then
			ok=${BASH_REMATCH[1]}
			desc=${BASH_REMATCH[3]}
			directive=
			if [[ $desc == *"#"* ]]; then
				directive=${desc#*#}
				directive=${directive# }
				desc=${desc%%#*}
			fi
			desc=${desc% }
			desc=${desc#- }		# TAP's optional "- "
			# the harness names skipped tests only in its RUN line
			[ -z "$desc" ] && desc=${lastrun:-$((results + 1))}
			results=$((results + 1))
			[ "$ok" = "not ok" ] && [[ ! $directive =~ ^SKIP ]] &&
				failed=$((failed + 1))
			result "$ok" "$prefix.$desc" "$directive"
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			planned=${BASH_REMATCH[1]}
			echo "# $line"
		elif [[ $line =~ ^#\ +RUN\ +([^ ]+)\ \.\.\.$ ]]; then
			lastrun=${BASH_REMATCH[1]}
			echo "$line"
		elif [[ $line == "#"* ]]; then
			echo "$line"
		elif [ -n "$line" ]; then
			echo "# $line"
		fi
	done
	rc=$(cat "$rcfile")
	rm -f "$rcfile"
	echo "# ---- $name: exit status $rc, $results results, $((SECONDS - start)) s"

	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		result "not ok" "$prefix" "TIMEOUT after ${tmo}s"
	elif [ "$planned" -ge 0 ] && [ "$results" -lt "$planned" ]; then
		result "not ok" "$prefix" "ERROR $((planned - results)) of $planned results missing (exit status $rc)"
	elif [ "$results" -eq 0 ] && [ "$rc" = "$KSFT_SKIP" ]; then
		result ok "$prefix" "SKIP"
	elif [ "$results" -eq 0 ]; then
		result "not ok" "$prefix" "ERROR no results (exit status $rc)"
	elif [ "$rc" != 0 ] && [ "$rc" != "$KSFT_SKIP" ] && [ "$failed" -eq 0 ]; then
		result "not ok" "$prefix" "ERROR exit status $rc but no failed test"
	fi

	# The kernel log since the component started.
	local klog
	klog=$(dmesg 2> /dev/null | tail -n +$((k0 + 1)) |
	       grep -E "$PROBLEM_RE" | grep -vE "$IGNORE_RE")
	if [ -n "$klog" ]; then
		ktap_print_msg "$(dmesg | tail -n +$((k0 + 1)) | head -100)"
		result "not ok" "$prefix.kernel_log" "kernel warnings during $name"
	else
		result ok "$prefix.kernel_log"
	fi
}

# Turn on, for the rest of the VM's life, the kernel's static keys that
# tests would otherwise switch on and off while packets flow: memory
# cgroups' socket accounting (a memory cgroup), the cgroup BPF hooks the
# tests attach to and receive timestamps (ping and tcpdump ask for them)
# (dlcp_pin_keys), tc ingress and egress (a clsact qdisc, on a dummy
# device in a namespace of its own), UDP encapsulation (DLCP's UDP port,
# net.dlcp.encap, in that namespace). Switching a key rewrites the
# kernel's text with breakpoints (text_poke_bp()), and under TCG a vCPU
# that runs the rewritten code meanwhile can trap on a breakpoint after
# it is gone: "Oops: int3" in softirq, a panic. Only in the VM.
pin_static_keys()
{
	local cg=/sys/fs/cgroup/dlcp-static-keys ns=dlcp-static-keys out

	[ "${DLCP_VM:-}" = 1 ] || return 0
	modprobe -q dummy 2> /dev/null
	if out=$({
		echo +memory > /sys/fs/cgroup/cgroup.subtree_control &&
		mkdir -p "$cg" &&
		"$HERE/dlcp_pin_keys" "$cg" &&
		ip netns add "$ns" &&
		ip -n "$ns" link add dlcp-keys type dummy &&
		tc -n "$ns" qdisc add dev dlcp-keys clsact &&
		ip netns exec "$ns" sysctl -qw net.dlcp.encap=1
	} 2>&1); then
		echo "# static keys on for the run"
	else
		ktap_print_msg "static keys not all on: $out"
	fi
}

# ------------------------------------------------------------------- main

selected=()
while [ $# -gt 0 ]; do
	case $1 in
	--ko)
		KO=$2
		shift 2
		;;
	-h | --help)
		sed -n '3,28p' "$0"
		exit 0
		;;
	*)
		selected+=("$1")
		shift
		;;
	esac
done

echo "TAP version 13"
echo "# DLCP selftests on $(uname -r), $(nproc) CPUs"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (run in the VM: selftests/run.sh)"
	exit "$KSFT_SKIP"
fi
if [ "${DLCP_VM:-}" != 1 ] && [ "${DLCP_ALLOW_HOST:-}" != 1 ]; then
	echo "1..0 # SKIP not in the test VM: use selftests/run.sh (DLCP_ALLOW_HOST=1 overrides)"
	exit "$KSFT_SKIP"
fi

modprobe -q veth 2> /dev/null
modprobe -q sch_netem 2> /dev/null
modprobe -q sch_tbf 2> /dev/null

if dlcp_loaded; then
	echo "# dlcp already loaded"
	result ok insmod
elif out=$(dlcp_insmod "$KO" 2>&1); then
	result ok insmod
else
	ktap_print_msg "insmod $KO: $out"
	result "not ok" insmod "ERROR cannot load $KO"
	echo "Bail out! DLCP module not loaded"
	echo "# totals: $npass passed, $nfail failed, $nskip skipped"
	echo "1..$nr"
	exit 1
fi
export DLCP_KO=$KO
pin_static_keys

for c in "${COMPONENTS[@]}"; do
	read -r name tmo slow <<< "$c"
	if [ ${#selected[@]} -gt 0 ]; then
		want=0
		for s in "${selected[@]}"; do
			[ "$s" = "$name" ] || [ "$s" = "${name%.sh}" ] && want=1
		done
		[ $want = 1 ] || continue
	elif [ -n "$slow" ] && [ "${DLCP_SLOW:-0}" != 1 ]; then
		echo "# $name: slow, not run (DLCP_SLOW=1 or name it to run it)"
		continue
	fi
	run_component "$name" "$tmo"
done

echo "# totals: $npass passed, $nfail failed, $nskip skipped"
echo "1..$nr"
[ "$nfail" -eq 0 ]
