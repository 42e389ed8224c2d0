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
#  - the attacks of an off-path host (a third namespace, on links of its
#    own to the other two: it never sees their traffic), each while a
#    well-behaved pair of dlcp_pktfuzz and the real transfers run:
#    control packets and ICMP errors forged with the pair's addresses and
#    guessed message ids (none may take effect; the counters must show
#    where each went), fresh-id floods from forged hosts and messages that
#    never finish (the target socket's memory and messages, and DLCP's
#    pages, must stay within net.dlcp.rmem, max_in_msgs and net.dlcp.mem,
#    the limits' counters must grow, the pair must keep working and
#    everything must be freed afterwards);
#  - fuzz/dlcp_sysfuzz runs random syscall sequences on DLCP sockets from
#    several threads and fails on any errno outside its allow-list;
#  - afterwards the module must unload (no leaked socket or module
#    reference) and load again.
#
# Seeded and bounded by default (make check). Knobs (environment):
#   DLCP_FUZZ_SEED=N       seed (default 1)
#   DLCP_FUZZ_PKTS=N       fuzz packets to inject (default 20000)
#   DLCP_FUZZ_RATE=N       packets a second at most (default 2000)
#   DLCP_FUZZ_RANGES=N     first cut one message into N pieces (default
#                          9000: past the 8192 ranges a message may have)
#   DLCP_FUZZ_SPOOF=N      forged control packets (default 16000)
#   DLCP_FUZZ_FLOOD=N      fresh-id flood packets (default 28000)
#   DLCP_FUZZ_SLOW=N       never-finishing messages (default 2400), each
#   DLCP_FUZZ_SLOW_ROUNDS=R  sent a packet R times (default 4), every 2 s
#   DLCP_FUZZ_SYSCALLS=N   syscalls (default 20000)
#   DLCP_FUZZ_SYSTIME=S    at most S seconds of syscalls (default 120)
#   DLCP_FUZZ_CASES="..."  run only these cases (module_unload always runs)
#   DLCP_FUZZ_LONG=1       long run (make fuzz-long): 1000000 fuzz packets
#                          in each mode at 5000/s, attacks about ten times
#                          larger (200000 forged, 300000 flood, 4000
#                          messages x 30 rounds), then all at once with
#                          500000 fuzz packets: 3.5 million packets in
#                          all; 900 s of syscalls (about 35 minutes on
#                          the emulator: give vm-run a timeout to match)
#
# Topology: ns_fa (injector, transfer sender, the pair's sender S:
#                  10.78.1.2; the injector of the mixed attack 10.78.1.3)
#           <-- veth --> ns_fb (fuzzed socket :7300, receiver :7401, the
#                               pair's receiver R, 10.78.1.1; no route to
#                               the forged hosts 10.79.0.0/16)
#           ns_fc, the off-path host (the observer O 10.78.2.3), with a veth
#           to ns_fa (10.78.2.0/24) and one to ns_fb (10.78.3.0/24)

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

FUZZ_DIR=$REPO_DIR/fuzz
PKTFUZZ=$FUZZ_DIR/dlcp_pktfuzz
SYSFUZZ=$FUZZ_DIR/dlcp_sysfuzz
LOSS=$SELFTEST_DIR/dlcp_loss
KO=${DLCP_KO:-$REPO_DIR/kmod/dlcp.ko}
A=10.78.1.2
A2=10.78.1.3
B=10.78.1.1
C=10.78.2.3
FPORT=7300
RPORT=7401

SEED=${DLCP_FUZZ_SEED:-1}
PKTS=${DLCP_FUZZ_PKTS:-20000}
RATE=${DLCP_FUZZ_RATE:-2000}
RANGES=${DLCP_FUZZ_RANGES:-9000}
SPOOF=${DLCP_FUZZ_SPOOF:-16000}
FLOOD=${DLCP_FUZZ_FLOOD:-28000}
SLOW=${DLCP_FUZZ_SLOW:-2400}
SLOW_ROUNDS=${DLCP_FUZZ_SLOW_ROUNDS:-4}
SYSCALLS=${DLCP_FUZZ_SYSCALLS:-20000}
SYSTIME=${DLCP_FUZZ_SYSTIME:-120}
LONG=
if [ "${DLCP_FUZZ_LONG:-}" = 1 ]; then
	LONG=1
	PKTS=${DLCP_FUZZ_PKTS:-1000000}
	RATE=${DLCP_FUZZ_RATE:-5000}
	SPOOF=${DLCP_FUZZ_SPOOF:-200000}
	FLOOD=${DLCP_FUZZ_FLOOD:-300000}
	SLOW=${DLCP_FUZZ_SLOW:-4000}
	SLOW_ROUNDS=${DLCP_FUZZ_SLOW_ROUNDS:-30}
	SYSCALLS=${DLCP_FUZZ_SYSCALLS:-1000000}
	SYSTIME=${DLCP_FUZZ_SYSTIME:-900}
fi
tmpdir=
mem_saved=

cleanup()
{
	ns_delete ns_fa ns_fb ns_fc ns_fs
	[ -n "$mem_saved" ] && echo "$mem_saved" > /proc/sys/net/dlcp/mem
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
}

setup()
{
	local ns

	modprobe -q veth 2> /dev/null
	ns_create ns_fa ns_fb ns_fc || return 1
	for ns in ns_fa ns_fb ns_fc; do
		# forged sources arrive on the off-path host's links
		ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0 || return 1
	done
	ip -n ns_fa link add eth0 type veth peer name eth0 netns ns_fb ||
		return 1
	ip -n ns_fa addr add "$A/24" dev eth0 || return 1
	ip -n ns_fa addr add "$A2/24" dev eth0 || return 1
	ip -n ns_fb addr add "$B/24" dev eth0 || return 1
	ip -n ns_fa link set eth0 up && ip -n ns_fb link set eth0 up || return 1
	# the off-path host: a link to each, routes to their addresses
	ip -n ns_fc link add ea type veth peer name ec netns ns_fa &&
	ip -n ns_fc link add eb type veth peer name ec netns ns_fb || return 1
	ip -n ns_fc addr add "$C/24" dev ea &&
	ip -n ns_fa addr add 10.78.2.2/24 dev ec &&
	ip -n ns_fc addr add 10.78.3.3/24 dev eb &&
	ip -n ns_fb addr add 10.78.3.1/24 dev ec || return 1
	for ns in ns_fa ns_fb; do
		ip -n "$ns" link set ec up || return 1
	done
	ip -n ns_fc link set ea up && ip -n ns_fc link set eb up || return 1
	ip -n ns_fc route add "$B/32" via 10.78.3.1 &&
	ip -n ns_fc route add "$A/32" via 10.78.2.2 || return 1
	# no address resolution while injecting (packets would wait for it)
	ip -n ns_fc neigh replace 10.78.3.1 dev eb nud permanent \
		lladdr "$(mac ns_fb ec)" &&
	ip -n ns_fc neigh replace 10.78.2.2 dev ea nud permanent \
		lladdr "$(mac ns_fa ec)" &&
	ip -n ns_fa neigh replace "$B" dev eth0 nud permanent \
		lladdr "$(mac ns_fb eth0)" || return 1
	# answers to forged hosts go nowhere
	ip -n ns_fb route add blackhole 10.79.0.0/16 || return 1
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

# pktfuzz_run NS [OPTION...]: inject from NS (options after the usual
# ones override them), with real transfers alongside
pktfuzz_run()
{
	local fpid rc=0 n=0 bad=0 ns=$1
	shift

	rm -f "$tmpdir/done" "$tmpdir/settle" "$tmpdir/xfer" "$tmpdir"/xfer.*
	echo "seed $SEED, $PKTS packets, at most $RATE/s${*:+, $*}"
	ip netns exec "$ns" "$PKTFUZZ" --target-ns ns_fb --src "$A" --dst "$B" \
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

# attack_run MSG_TIMEOUT_MS OPTION...: an attack from the off-path host
# (ns_fc), the pair and the real transfers alongside, with the target's
# namespace limited: 8 MiB a socket, 1024 messages being received, 128 of
# them from one host, DLCP's pages below net.dlcp.mem's first value
attack_run()
{
	local rc=0 timeout=$1 n bad
	shift

	ip netns exec ns_fb sysctl -qw net.dlcp.rmem=8388608 \
		net.dlcp.max_in_msgs=1024 net.dlcp.max_in_msgs_peer=128 \
		net.dlcp.msg_timeout_ms="$timeout" ||
		{ echo "FAIL: sysctls of ns_fb"; return 1; }
	echo "net.dlcp.mem $(cat /proc/sys/net/dlcp/mem) (pages)"
	pktfuzz_run ns_fa --attacker-ns ns_fc --observer "$C" --pair-src "$A" \
		--ranges 0 "$@" || rc=1
	read -r n bad < "$tmpdir/xfer"
	if [ "$n" -lt 1 ] || [ "$bad" -ne 0 ]; then
		echo "FAIL: $bad of $n transfers failed"
		rc=1
	fi
	ip netns exec ns_fb sysctl -qw net.dlcp.rmem=16777216 \
		net.dlcp.max_in_msgs=4096 net.dlcp.max_in_msgs_peer=1024 \
		net.dlcp.msg_timeout_ms=2000
	return $rc
}

case_pktfuzz_counters()
{
	pktfuzz_run ns_fa
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
	pktfuzz_run ns_fa --udp || rc=1
	case_pktfuzz_transfer_intact || rc=1
	ip netns exec ns_fb grep -E '^DlcpUdp(In|Out)Pkts' /proc/net/dlcp/snmp
	for ns in ns_fa ns_fb; do
		ip netns exec "$ns" sysctl -qw net.dlcp.encap=0
	done
	return $rc
}

# forged REPORT, STOP, PROBE, ABORT, DATA and ICMP errors with guessed ids
case_attack_spoof()
{
	attack_run 2000 --count 0 --spoof "$SPOOF"
}

# fresh ids from forged hosts: the socket's memory, messages, one host's
case_attack_flood()
{
	attack_run 1000 --count 0 --rate $((RATE * 2)) --flood "$FLOOD"
}

# messages that never finish, a packet each every 2 s
case_attack_slowloris()
{
	attack_run 4000 --count 0 --slow "$SLOW" --slow-rounds "$SLOW_ROUNDS"
}

# all of it at once (half as many of each), with the fuzz packets (from
# another address of ns_fa, so that the target's answers to them do not
# reach S)
case_attack_mixed()
{
	attack_run 4000 --src "$A2" --count $((PKTS / 2)) \
		--spoof $((SPOOF / 2)) --flood $((FLOOD / 2)) --slow "$SLOW" \
		--slow-rounds "$SLOW_ROUNDS"
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

	ns_delete ns_fa ns_fb ns_fc ns_fs
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
	attack_spoof
	attack_flood
	attack_slowloris
)
[ -n "$LONG" ] && CASES+=(attack_mixed)
CASES+=(sysfuzz)
if [ -n "${DLCP_FUZZ_CASES:-}" ]; then
	read -r -a CASES <<< "$DLCP_FUZZ_CASES"
fi
CASES+=(module_unload)

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
# DLCP's pages (all namespaces) well above what the attacks may take
mem_saved=$(cat /proc/sys/net/dlcp/mem)
echo "8192 12288 16384" > /proc/sys/net/dlcp/mem
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
