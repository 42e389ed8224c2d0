#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP under memory pressure and teardown (bounded; tools/vm-run catches
# kernel warnings):
#
#  half_open_messages   a sender opens thousands of messages (raw-injected
#	DATA for new message ids of 64 MiB) and never finishes them: the
#	receiving socket's rx_mem (/proc/net/dlcp/sockets) never exceeds
#	net.dlcp.rmem (1 MiB for this case: 256 open messages, so that even
#	a debug kernel's slow injector exceeds it within the 1 s message
#	timeout) by more than two pages, DlcpDropRcvMem
#	counts the excess, every opened message is freed after
#	msg_timeout_ms (1 s) and counted in DlcpInMsgsTimeout, and a
#	well-behaved transfer to another socket of the same host completes
#	meanwhile, byte for byte;
#  receiver_never_reads a receiver that never calls recvmsg(): its memory
#	stays within rmem, the sender's memory within wmem, and every
#	message the sender sent gets a completion (delivered, or timed out);
#  teardown_cycles      N cycles (DLCP_STRESS_CYCLES, default 8) of heavy
#	traffic between two namespaces, torn down mid-flight in turn by
#	killing the processes, deleting the veth, deleting a namespace whose
#	sockets are live; then rmmod must succeed and insmod again;
#  rmmod_under_udp_traffic  rmmod, and insmod again, while DLCP packets
#	inside UDP keep arriving at a namespace's tunnel socket (net.dlcp.encap
#	1) from a plain UDP sender, which does not hold the module: the
#	namespace's exit must wait for the packets in the receive path.
#
# Topology: ns_sa (10.79.1.2) <-- veth --> ns_sb (10.79.1.1)

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

STRESS=$REPO_DIR/fuzz/dlcp_stress
LOSS=$SELFTEST_DIR/dlcp_loss
KO=${DLCP_KO:-$REPO_DIR/kmod/dlcp.ko}
CYCLES=${DLCP_STRESS_CYCLES:-8}
A=10.79.1.2
B=10.79.1.1
RMEM=4194304
HALF_RMEM=1048576	# rmem of case half_open_messages
PAGE=4096
tmpdir=

cleanup()
{
	jobs -p | xargs -r kill -9 2> /dev/null
	ns_delete ns_sa ns_sb
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
}

# topo: the two namespaces and their veth
topo()
{
	modprobe -q veth 2> /dev/null
	ns_create ns_sa ns_sb || return 1
	ip -n ns_sa link add eth0 type veth peer name eth0 netns ns_sb ||
		return 1
	ip -n ns_sa addr add "$A/24" dev eth0 || return 1
	ip -n ns_sb addr add "$B/24" dev eth0 || return 1
	ip -n ns_sa link set eth0 up && ip -n ns_sb link set eth0 up
}

setup()
{
	topo || return 1
	ip netns exec ns_sb sysctl -qw net.dlcp.rmem=$RMEM &&
	ip netns exec ns_sb sysctl -qw net.dlcp.msg_timeout_ms=1000 &&
	ip netns exec ns_sa sysctl -qw net.dlcp.msg_timeout_ms=1000 &&
	ip netns exec ns_sa sysctl -qw net.dlcp.wmem=8388608
}

# sock_field NS PORT FIELD: a field of PORT's line of /proc/net/dlcp/sockets
# (tx_mem, rx_mem, in_msgs, out_msgs), decimal; empty if no such socket.
sock_field()
{
	local v

	v=$(ip netns exec "$1" cat /proc/net/dlcp/sockets |
	    awk -v p="$(printf '%04X' "$2")" -v f="$3" '
		NR > 1 {
			split($2, la, ":"); split($5, m, ":")
			if (la[2] != p) next
			if (f == "tx_mem") print "0x" m[1]
			else if (f == "rx_mem") print "0x" m[2]
			else if (f == "out_msgs") print $6
			else if (f == "in_msgs") print $7
			exit
		}')
	[ -n "$v" ] && echo $((v))
}

d()	# NS COUNTER BEFORE
{
	echo $(($(snmp "$1" "$2") - $3))
}

case_half_open_messages()
{
	local spid rpid rc=0 maxmem rcvmem0 tmo0 data0 out0 nomem0 i rx_after
	local opened rcvmem tmo n

	# the count of opened messages below takes every DlcpDropRcvMem for
	# the flood's, so the transfer beside it must never reach its 1 MiB.
	# Its packets are copied into the messages' pages on arrival
	# (net.dlcp.rx_keep 0: kept packets cost their truesize, up to 1.6x
	# their bytes, and a message waiting for recvmsg() holds them all);
	# its four messages take half of the 1 MiB in pages, and the other
	# half leaves room for the truesize of a 64 KB super-packet, charged
	# whole before its bytes are copied
	ip netns exec ns_sb sysctl -qw net.dlcp.rmem=$HALF_RMEM \
		net.dlcp.rx_keep=0 || return 1
	rcvmem0=$(snmp ns_sb DlcpDropRcvMem)
	tmo0=$(snmp ns_sb DlcpInMsgsTimeout)
	data0=$(snmp ns_sb DlcpInDataPkts)
	nomem0=$(snmp ns_sb DlcpDropNoMem)
	out0=$(snmp ns_sa DlcpOutDataPkts)

	rm -f "$tmpdir/ready"
	# the sink samples its rx_mem every 10 ms and prints the maximum
	ip netns exec ns_sb "$STRESS" sink --port 7600 --time 120 \
		--ready "$tmpdir/ready" > "$tmpdir/sink.out" &
	spid=$!
	wait_for_file "$tmpdir/ready" 20 "$spid" || { fail "sink"; return 1; }
	ip netns exec ns_sa "$STRESS" halfopen --src "$A" --to "$B" \
		--port 7600 --count 10000 --rate 4000 &
	opened=$!
	# meanwhile, a real transfer to another socket of the same host
	rm -f "$tmpdir/ready2"
	ip netns exec ns_sb timeout 100 "$LOSS" recv --port 7601 --count 4 \
		--size 131072 --budget 0 --expect exact --timeout 90 \
		--ready "$tmpdir/ready2" &
	rpid=$!
	wait_for_file "$tmpdir/ready2" 20 "$rpid" || fail "receiver"
	ip netns exec ns_sa timeout 100 "$LOSS" send --to "$B" --port 7601 \
		--count 4 --size 131072 --budget 0 \
		--expect-completion exact || { fail "transfer: sender"; rc=1; }
	wait "$rpid" || { fail "transfer: receiver"; rc=1; }
	wait "$opened" || { fail "injector"; rc=1; }

	# every opened message is freed after msg_timeout_ms (guard timer)
	for i in $(seq 1 100); do
		n=$(sock_field ns_sb 7600 in_msgs)
		[ "${n:-1}" -eq 0 ] && break
		sleep 0.1
	done
	sleep 0.3
	rx_after=$(sock_field ns_sb 7600 rx_mem)
	echo "flooded socket: in_msgs $n, rx_mem $rx_after" \
	     "$((i / 10)) s after the flood"
	kill "$spid"
	wait "$spid" 2> /dev/null
	cat "$tmpdir/sink.out"
	maxmem=$(sed -n 's/.*rx_mem max \([0-9]*\) .*/\1/p' "$tmpdir/sink.out")
	ip netns exec ns_sb sysctl -qw net.dlcp.rmem=$RMEM net.dlcp.rx_keep=1
	echo "rx_mem of the flooded socket: max $maxmem bytes (rmem $HALF_RMEM)"
	[ "${maxmem:-0}" -gt 0 ] || { fail "no rx_mem sample"; rc=1; }
	[ "${maxmem:-0}" -le $((HALF_RMEM + 2 * PAGE)) ] ||
		{ fail "rx_mem $maxmem over rmem $HALF_RMEM + 2 pages"; rc=1; }
	[ "${n:-1}" -eq 0 ] ||
		{ fail "$n messages still held after 10 s"; rc=1; }
	[ "$rx_after" = 0 ] || { fail "rx_mem not back to 0"; rc=1; }

	rcvmem=$(d ns_sb DlcpDropRcvMem "$rcvmem0")
	tmo=$(d ns_sb DlcpInMsgsTimeout "$tmo0")
	# DATA that created a message: all the flood's DATA (the transfer's
	# are DlcpOutDataPkts of ns_sa) but those dropped for memory
	n=$(($(d ns_sb DlcpInDataPkts "$data0") - $(d ns_sa DlcpOutDataPkts "$out0") -
	     rcvmem - $(d ns_sb DlcpDropNoMem "$nomem0")))
	echo "DlcpDropRcvMem +$rcvmem, DlcpInMsgsTimeout +$tmo," \
	     "messages opened (DATA not dropped) $n"
	[ "$rcvmem" -gt 0 ] || { fail "DlcpDropRcvMem did not count"; rc=1; }
	[ "$tmo" -eq "$n" ] ||
		{ fail "DlcpInMsgsTimeout +$tmo, expected +$n"; rc=1; }
	return $rc
}

case_receiver_never_reads()
{
	local spid rc=0 maxrx maxtx out

	rm -f "$tmpdir/ready"
	ip netns exec ns_sb "$STRESS" sink --port 7610 --time 120 \
		--ready "$tmpdir/ready" > "$tmpdir/sink.out" &
	spid=$!
	wait_for_file "$tmpdir/ready" 20 "$spid" || { fail "sink"; return 1; }
	# blocking sends of 24 x 1 MiB with wmem 8 MiB; the sender samples
	# its tx_mem after every sendmsg() and prints the maximum
	out=$(ip netns exec ns_sa timeout 110 "$STRESS" blast --to "$B" \
		--port 7610 --count 24 --size 1048576 --completions --time 90) ||
		{ fail "sender: not every message completed"; rc=1; }
	echo "$out"
	kill "$spid"
	wait "$spid" 2> /dev/null
	cat "$tmpdir/sink.out"
	maxrx=$(sed -n 's/.*rx_mem max \([0-9]*\) .*/\1/p' "$tmpdir/sink.out")
	maxtx=$(echo "$out" | sed -n 's/.*tx_mem max \([0-9]*\) .*/\1/p')
	echo "receiver rx_mem max $maxrx (rmem $RMEM), sender tx_mem max" \
	     "$maxtx (wmem 8388608)"
	if [ -z "$maxrx" ] || [ -z "$maxtx" ]; then
		fail "no memory samples"
		rc=1
	fi
	[ "${maxrx:-0}" -le $((RMEM + 2 * PAGE)) ] ||
		{ fail "receiver memory over rmem"; rc=1; }
	[ "${maxtx:-0}" -le 8388608 ] ||
		{ fail "sender memory over wmem"; rc=1; }
	echo "$out" | grep -q ' [1-9][0-9]* exact' ||
		{ fail "nothing delivered before the receiver filled up"; rc=1; }
	echo "$out" | grep -q ' [1-9][0-9]* timeout' ||
		{ fail "no message timed out although nobody reads"; rc=1; }
	return $rc
}

# one_cycle N: traffic both ways and a flood, torn down mid-flight
one_cycle()
{
	local n=$1 pids=() how t0 t1 f m

	topo || return 1
	ip netns exec ns_sa sysctl -qw net.dlcp.rmem=$RMEM
	ip netns exec ns_sb sysctl -qw net.dlcp.rmem=$RMEM
	rm -f "$tmpdir"/sink.*
	ip netns exec ns_sb "$STRESS" sink --port 7700 --read \
		> "$tmpdir/sink.0" &
	pids+=($!)
	ip netns exec ns_sb "$STRESS" sink --port 7701 > "$tmpdir/sink.1" &
	pids+=($!)
	ip netns exec ns_sa "$STRESS" sink --port 7702 --read \
		> "$tmpdir/sink.2" &
	pids+=($!)
	sleep 0.3
	ip netns exec ns_sa "$STRESS" blast --to "$B" --port 7700 \
		--size 2097152 > /dev/null &
	pids+=($!)
	ip netns exec ns_sa "$STRESS" blast --to "$B" --port 7701 \
		--size 1048576 > /dev/null &
	pids+=($!)
	ip netns exec ns_sb "$STRESS" blast --to "$A" --port 7702 \
		--size 524288 --completions > /dev/null &
	pids+=($!)
	ip netns exec ns_sa "$STRESS" halfopen --src "$A" --to "$B" \
		--port 7701 --count 100000 --rate 2000 > /dev/null &
	pids+=($!)
	sleep $((1 + n % 2))
	t0=$SECONDS
	ip netns exec ns_sb cat /proc/net/dlcp/sockets | tail -n +2 |
		awk '{ print "  ns_sb", $2, $5, $6, $7 }'
	case $((n % 4)) in
	0)	how="kill -9 the processes, then ip netns del"
		kill -9 "${pids[@]}" 2> /dev/null
		ns_delete ns_sa ns_sb ;;
	1)	how="ip link del the veth under traffic, then kill"
		ip -n ns_sa link del eth0
		sleep 0.5
		kill "${pids[@]}" 2> /dev/null
		ns_delete ns_sa ns_sb ;;
	2)	how="ip netns del with live sockets and traffic, then kill"
		ns_delete ns_sa ns_sb
		sleep 0.5
		kill "${pids[@]}" 2> /dev/null ;;
	3)	how="SIGTERM (close with unfinished messages), ip netns del"
		kill "${pids[@]}" 2> /dev/null
		ns_delete ns_sb ns_sa ;;
	esac
	wait "${pids[@]}" 2> /dev/null
	t1=$SECONDS
	# the sinks that got SIGTERM report their largest rx_mem
	for f in "$tmpdir"/sink.*; do
		m=$(sed -n 's/.*rx_mem max \([0-9]*\) .*/\1/p' "$f")
		[ -z "$m" ] && continue
		echo "  $(cat "$f")"
		[ "$m" -le $((RMEM + 2 * PAGE)) ] ||
			{ fail "cycle $n: rx_mem $m over rmem"; return 1; }
	done
	rmmod_retry dlcp 10 || { fail "cycle $n: rmmod failed"; return 1; }
	echo "cycle $n: $how; processes gone after $((t1 - t0)) s," \
	     "rmmod after $((SECONDS - t1)) s more"
	insmod "$KO" || { fail "cycle $n: insmod $KO"; return 1; }
}

case_teardown_cycles()
{
	local n t0=$SECONDS

	ns_delete ns_sa ns_sb
	for n in $(seq 1 "$CYCLES"); do
		one_cycle "$n" || return 1
	done
	echo "$CYCLES teardown cycles (rmmod + insmod each) in $((SECONDS - t0)) s"
}

case_rmmod_under_udp_traffic()
{
	local n pid port rc=0 before

	ns_delete ns_sa ns_sb
	topo || return 1
	for n in 1 2 3 4; do
		ip netns exec ns_sb sysctl -qw net.dlcp.encap=1 ||
			{ fail "net.dlcp.encap=1"; rc=1; break; }
		port=$(ip netns exec ns_sb sysctl -n net.dlcp.udp_port)
		ip netns exec ns_sa "$STRESS" halfopen --src "$A" --to "$B" \
			--port 7703 --count 10000000 --rate 20000 \
			--msg-len 65536 --udp-port "$port" > /dev/null &
		pid=$!
		sleep 1
		before=$(snmp ns_sb DlcpUdpInPkts)
		rmmod_retry dlcp 10 || { fail "round $n: rmmod"; rc=1; }
		kill "$pid" 2> /dev/null
		wait "$pid" 2> /dev/null
		insmod "$KO" || { fail "round $n: insmod $KO"; return 1; }
		[ "$rc" -eq 0 ] || break
		echo "round $n: rmmod with $before packets in through UDP"
		[ "${before:-0}" -gt 0 ] ||
			{ fail "round $n: no packet came in through UDP"; rc=1; break; }
	done
	ns_delete ns_sa ns_sb
	return $rc
}

CASES=(
	half_open_messages
	receiver_never_reads
	teardown_cycles
	rmmod_under_udp_traffic
)
# DLCP_STRESS_CASES="a b": run only these cases
[ -n "${DLCP_STRESS_CASES:-}" ] && read -r -a CASES <<< "$DLCP_STRESS_CASES"

require_root
ktap_header "${#CASES[@]}"
if ! dlcp_loaded || [ ! -x "$STRESS" ] || [ ! -x "$LOSS" ]; then
	for c in "${CASES[@]}"; do
		ktap_result "$c" 1 "module not loaded, or $STRESS/$LOSS not built (make -C fuzz vm)"
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
