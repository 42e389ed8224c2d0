#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP fuzzing in the test VM (tools/vm-run catches kernel warnings):
#
#  - fuzz/dlcp_pktfuzz injects valid and mutated packets of every type
#    through a raw IPPROTO_DLCP socket into a DLCP socket in another
#    namespace and checks that /proc/net/dlcp/snmp accounts for every one
#    (per reason), while real transfers (selftests/dlcp_loss, checked byte
#    by byte) run between the same two namespaces and must complete;
#  - the same in UDP mode (net.dlcp.encap=1 in both namespaces, so the
#    real transfers go inside UDP too): dlcp_pktfuzz --udp sends 3 of 4
#    packets inside UDP to net.dlcp.udp_port (some with a broken UDP
#    checksum or length, which UDP must drop: /proc/net/snmp Udp InErrors),
#    the rest as raw IP; DlcpUdpInPkts must account for every one;
#  - fuzz/dlcp_sysfuzz runs random syscall sequences on DLCP sockets from
#    several threads and fails on any errno outside its allow-list;
#  - afterwards the module must unload (no leaked socket or module
#    reference) and load again.
#
# Seeded and bounded by default (make check). Knobs (environment):
#   DLCP_FUZZ_SEED=N       seed (default 1)
#   DLCP_FUZZ_PKTS=N       packets to inject (default 20000)
#   DLCP_FUZZ_RATE=N       packets a second at most (default 2000)
#   DLCP_FUZZ_RANGES=N     first cut one message into N pieces (default
#                          9000: past the 8192 ranges a message may have)
#   DLCP_FUZZ_SYSCALLS=N   syscalls (default 20000)
#   DLCP_FUZZ_SYSTIME=S    at most S seconds of syscalls (default 120)
#   DLCP_FUZZ_LONG=1       long run: 2000000 packets, 1000000 syscalls
#                          (give run_vm.sh / vm-run a timeout to match)
#
# Topology: ns_fa (injector, transfer sender, 10.78.1.2)
#           <-- veth --> ns_fb (fuzzed socket :7300, receiver :7401,
#                               10.78.1.1)

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

FUZZ_DIR=$REPO_DIR/fuzz
PKTFUZZ=$FUZZ_DIR/dlcp_pktfuzz
SYSFUZZ=$FUZZ_DIR/dlcp_sysfuzz
LOSS=$SELFTEST_DIR/dlcp_loss
KO=${DLCP_KO:-$REPO_DIR/kmod/dlcp.ko}
A=10.78.1.2
B=10.78.1.1
FPORT=7300
RPORT=7401

SEED=${DLCP_FUZZ_SEED:-1}
PKTS=${DLCP_FUZZ_PKTS:-20000}
RATE=${DLCP_FUZZ_RATE:-2000}
RANGES=${DLCP_FUZZ_RANGES:-9000}
SYSCALLS=${DLCP_FUZZ_SYSCALLS:-20000}
SYSTIME=${DLCP_FUZZ_SYSTIME:-120}
if [ "${DLCP_FUZZ_LONG:-}" = 1 ]; then
	PKTS=${DLCP_FUZZ_PKTS:-2000000}
	SYSCALLS=${DLCP_FUZZ_SYSCALLS:-1000000}
	SYSTIME=${DLCP_FUZZ_SYSTIME:-3600}
fi
tmpdir=

cleanup()
{
	ns_delete ns_fa ns_fb ns_fs
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
}

setup()
{
	modprobe -q veth 2> /dev/null
	ns_create ns_fa ns_fb || return 1
	ip -n ns_fa link add eth0 type veth peer name eth0 netns ns_fb ||
		return 1
	ip -n ns_fa addr add "$A/24" dev eth0 || return 1
	ip -n ns_fb addr add "$B/24" dev eth0 || return 1
	ip -n ns_fa link set eth0 up && ip -n ns_fb link set eth0 up || return 1
	# bound the fuzzed socket's memory; partial messages time out fast
	ip netns exec ns_fb sysctl -qw net.dlcp.rmem=16777216 &&
	ip netns exec ns_fb sysctl -qw net.dlcp.msg_timeout_ms=2000 &&
	ip netns exec ns_fa sysctl -qw net.dlcp.msg_timeout_ms=5000
}

# one real transfer ns_fa -> ns_fb, checked byte by byte
transfer()
{
	local rpid rc=0

	rm -f "$tmpdir/ready"
	ip netns exec ns_fb timeout 120 "$LOSS" recv --port "$RPORT" \
		--count 4 --size 262144 --budget 0 --expect exact \
		--ready "$tmpdir/ready" --timeout 100 &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" ||
		{ echo "FAIL: receiver did not start"; kill "$rpid"; return 1; }
	ip netns exec ns_fa timeout 120 "$LOSS" send --to "$B" --port "$RPORT" \
		--count 4 --size 262144 --budget 0 --expect-completion exact ||
		{ echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	return $rc
}

# pktfuzz_run [--udp]: inject, with real transfers alongside
pktfuzz_run()
{
	local fpid rc=0 n=0 bad=0

	rm -f "$tmpdir/done" "$tmpdir/settle" "$tmpdir/xfer" "$tmpdir"/xfer.*
	echo "seed $SEED, $PKTS packets, at most $RATE/s"
	ip netns exec ns_fa "$PKTFUZZ" --target-ns ns_fb --src "$A" --dst "$B" \
		--port "$FPORT" --avoid-port "$RPORT" --count "$PKTS" \
		--seed "$SEED" --rate "$RATE" --done-file "$tmpdir/done" \
		--settle-file "$tmpdir/settle" --settle 60 --ranges "$RANGES" \
		"$@" &
	fpid=$!
	# real transfers back to back for as long as the injection lasts
	while [ ! -e "$tmpdir/done" ] && kill -0 "$fpid" 2> /dev/null; do
		n=$((n + 1))
		transfer > "$tmpdir/xfer.$n" 2>&1 || bad=$((bad + 1))
	done
	touch "$tmpdir/settle"
	wait "$fpid" || rc=1
	echo "$n transfers during the injection (4 x 256 KiB each), $bad failed"
	for f in "$tmpdir"/xfer.*; do
		[ -s "$f" ] && sed 's/^/  xfer: /' "$f" | tail -5
	done
	echo "$n $bad" > "$tmpdir/xfer"
	ip netns exec ns_fb cat /proc/net/dlcp/sockets
	return $rc
}

case_pktfuzz_counters()
{
	pktfuzz_run
}

case_pktfuzz_transfer_intact()
{
	local n bad

	[ -s "$tmpdir/xfer" ] || { echo "FAIL: no transfer ran"; return 1; }
	read -r n bad < "$tmpdir/xfer"
	[ "$n" -ge 1 ] || { echo "FAIL: no transfer ran"; return 1; }
	[ "$bad" -eq 0 ] || { echo "FAIL: $bad of $n transfers failed"; return 1; }
	# and one more now that the injection is over
	transfer
}

# UDP mode: both namespaces in UDP mode (the transfers go inside UDP too),
# the injector sends most packets inside UDP; then the transfers must
# still have been intact, and one more runs after the injection
case_pktfuzz_udp_encap()
{
	local rc=0 ns

	for ns in ns_fa ns_fb; do
		ip netns exec "$ns" sysctl -qw net.dlcp.encap=1 ||
			{ echo "FAIL: net.dlcp.encap=1 in $ns"; return 1; }
	done
	pktfuzz_run --udp || rc=1
	case_pktfuzz_transfer_intact || rc=1
	ip netns exec ns_fb grep -E '^DlcpUdp(In|Out)Pkts' /proc/net/dlcp/snmp
	for ns in ns_fa ns_fb; do
		ip netns exec "$ns" sysctl -qw net.dlcp.encap=0
	done
	return $rc
}

case_sysfuzz()
{
	local rc

	ns_create ns_fs || return 1
	echo "seed $SEED, $SYSCALLS syscalls, at most $SYSTIME s"
	ip netns exec ns_fs sysctl -qw net.dlcp.msg_timeout_ms=1000
	ip netns exec ns_fs sysctl -qw net.dlcp.max_msg_size=4194304
	ip netns exec ns_fs sysctl -qw net.dlcp.wmem=8388608
	ip netns exec ns_fs sysctl -qw net.dlcp.rmem=8388608
	ip netns exec ns_fs timeout $((SYSTIME + 60)) "$SYSFUZZ" \
		--seed "$SEED" --count "$SYSCALLS" --threads 4 --time "$SYSTIME"
	rc=$?
	ip netns exec ns_fs cat /proc/net/dlcp/sockets
	ns_delete ns_fs
	return $rc
}

case_module_unload()
{
	local i

	ns_delete ns_fa ns_fb ns_fs
	for i in $(seq 1 100); do
		rmmod dlcp 2> /dev/null && break
		sleep 0.1
	done
	if dlcp_loaded; then
		echo "FAIL: rmmod dlcp still fails after 10 s:"
		rmmod dlcp
		grep -E '^dlcp ' /proc/modules
		return 1
	fi
	echo "rmmod after $i attempt(s)"
	insmod "$KO" || { echo "FAIL: insmod $KO"; return 1; }
}

CASES=(
	pktfuzz_counters
	pktfuzz_transfer_intact
	pktfuzz_udp_encap
	sysfuzz
	module_unload
)

require_root
ktap_header "${#CASES[@]}"
if ! dlcp_loaded || [ ! -x "$LOSS" ] || [ ! -x "$PKTFUZZ" ] ||
   [ ! -x "$SYSFUZZ" ]; then
	for c in "${CASES[@]}"; do
		ktap_result "$c" 1 "module not loaded, or $LOSS, $PKTFUZZ or $SYSFUZZ not built (make -C fuzz)"
	done
	ktap_finished
	exit "$KSFT_FAIL"
fi
tmpdir=$(mktemp -d) || exit "$KSFT_FAIL"
trap cleanup EXIT
if ! setup_log=$(setup 2>&1); then
	ktap_print_msg "$setup_log"
	for c in "${CASES[@]}"; do
		ktap_result "$c" 1 "setup failed"
	done
	ktap_finished
	exit "$KSFT_FAIL"
fi

for c in "${CASES[@]}"; do
	start=$SECONDS
	run_case "$c" "case_$c"
	echo "# $c: $((SECONDS - start)) s"
done
ktap_finished
