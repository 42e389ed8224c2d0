#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP transfers between network namespaces over veth links: message sizes
# around the segment size and up to 16 MiB, on a clean link and under netem
# loss, reordering, duplication and corruption, a rate limit, and several
# senders at once. Every message is checked byte for byte by dlcp_xfer.
#
# Topology: the receiver's namespace ns_a has a point-to-point veth link to
# each sender namespace:
#
#   ns_b  eth0 10.77.0.2 <----> a_b 10.77.0.1  ns_a
#   ns_c  eth0 10.77.0.3 <----> a_c 10.77.0.1  ns_a
#   ns_d  eth0 10.77.0.4 <----> a_d 10.77.0.1  ns_a
#   ns_e  eth0 10.77.0.5 <----> a_e 10.77.0.1  ns_a
#
# Impairments are netem qdiscs on both ends of a link (data and reports).
#
# Environment: DLCP_BIG (size of the big message, default 16m),
# DLCP_XFER_TIMEOUT (seconds per transfer, default 90 times
# DLCP_TIMEOUT_SCALE), DLCP_FAMILY (4, or
# 6: the same suite over IPv6 with AF_INET6 sockets, addresses fd77::N;
# dlcp_netns6.sh).

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

BIG=${DLCP_BIG:-16m}
BIG_LOSSY=4m
XFER_TIMEOUT=${DLCP_XFER_TIMEOUT:-$(tscale 90)}
SENDERS=(b c d e)
FAMILY=${DLCP_FAMILY:-4}
if [ "$FAMILY" = 6 ]; then
	NET=fd77::
	IPHDR=40
	PY_AF=AF_INET6
else
	NET=10.77.0.
	IPHDR=20
	PY_AF=AF_INET
fi
RECV_ADDR=${NET}1
FAMILY_OPT=(--family "$FAMILY")
# IP header + DLCP data header
MTU_OVERHEAD=$((IPHDR + $("$XFER" hdrlen 2> /dev/null || echo 52)))

port=7000
tmpdir=
MSS=
# extra dlcp_xfer options of a case
RECV_OPTS=()
SEND_OPTS=()

cleanup()
{
	ns_delete ns_a ns_b ns_c ns_d ns_e
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
}

setup()
{
	local i x n

	modprobe -q veth 2> /dev/null
	modprobe -q sch_netem 2> /dev/null
	modprobe -q sch_tbf 2> /dev/null
	ns_create ns_a ns_b ns_c ns_d ns_e || return 1
	for i in "${!SENDERS[@]}"; do
		x=${SENDERS[$i]}
		n=$((i + 2))
		ip -n ns_a link add "a_$x" type veth peer name eth0 \
			netns "ns_$x" || return 1
		ip -n ns_a link set "a_$x" up || return 1
		ip -n "ns_$x" link set eth0 up || return 1
		link_addrs ns_a "a_$x" "$RECV_ADDR" "$NET$n" || return 1
		link_addrs "ns_$x" eth0 "$NET$n" "$RECV_ADDR" || return 1
	done
}

# link_addrs NS DEV LOCAL PEER: a point-to-point address pair
link_addrs()
{
	if [ "$FAMILY" = 6 ]; then
		ip -n "$1" -6 addr add "$3/128" dev "$2" nodad &&
		ip -n "$1" -6 route add "$4/128" dev "$2"
	else
		ip -n "$1" addr add "$3/32" peer "$4/32" dev "$2"
	fi
}

# impair SENDER QDISC...: put a qdisc on both ends of ns_a <-> ns_SENDER.
impair()
{
	local x=$1
	shift

	tc -n "ns_$x" qdisc replace dev eth0 root "$@" &&
	tc -n ns_a qdisc replace dev "a_$x" root "$@"
}

clear_impairments()
{
	local x

	for x in "${SENDERS[@]}"; do
		tc -n "ns_$x" qdisc del dev eth0 root 2> /dev/null
		tc -n ns_a qdisc del dev "a_$x" root 2> /dev/null
	done
	return 0
}

show_qdiscs()
{
	local x

	for x in "$@"; do
		echo "qdisc ns_$x eth0: $(tc -n "ns_$x" qdisc show dev eth0 | head -1)"
	done
}

# xfer SIZES THREADS SENDER...: a receiver in ns_a, one send process in
# each SENDER namespace (ids 0, 1, ... or, with THREADS > 1 and a single
# SENDER, one process of THREADS sender threads); checks everything
# arrived. RECV_OPTS and SEND_OPTS add dlcp_xfer options.
xfer()
{
	local sizes=$1 threads=$2
	shift 2
	local nsenders=$(($# * threads)) ready rpid rc=0 i=0 x pid
	local pids=()

	port=$((port + 1))
	ready=$tmpdir/ready.$port
	ip netns exec ns_a timeout $((XFER_TIMEOUT + 30)) "$XFER" recv \
		--port "$port" --sizes "$sizes" --senders "$nsenders" \
		--timeout "$XFER_TIMEOUT" --ready-file "$ready" \
		"${FAMILY_OPT[@]}" "${RECV_OPTS[@]}" &
	rpid=$!
	if ! wait_for_file "$ready" 20 "$rpid"; then
		kill "$rpid" 2> /dev/null
		wait "$rpid"
		fail "receiver did not start"
		return
	fi
	for x in "$@"; do
		ip netns exec "ns_$x" timeout $((XFER_TIMEOUT + 30)) "$XFER" \
			send --to "$RECV_ADDR" --port "$port" \
			--sizes "$sizes" --senders "$threads" \
			--id $((i * threads)) --timeout "$XFER_TIMEOUT" \
			"${FAMILY_OPT[@]}" "${SEND_OPTS[@]}" &
		pids+=($!)
		i=$((i + 1))
	done
	if ! wait "$rpid"; then
		echo "FAIL: receiver"
		rc=1
	fi
	for pid in "${pids[@]}"; do
		if ! wait "$pid"; then
			echo "FAIL: sender (pid $pid)"
			rc=1
		fi
	done
	return $rc
}

sizes_all()
{
	echo "1,$((MSS - 1)),$MSS,$((MSS + 1)),65536,1m,$BIG"
}

# ------------------------------------------------------------------ cases

case_segment_size()
{
	local mss

	mss=$(ip netns exec ns_b "$XFER" mss --to "$RECV_ADDR" \
		"${FAMILY_OPT[@]}") || return 1
	echo "DLCP_SEGMENT_SIZE towards $RECV_ADDR over MTU 1500: $mss"
	[ "$mss" -eq $((1500 - MTU_OVERHEAD)) ] ||
		fail "expected $((1500 - MTU_OVERHEAD))"
}

case_segment_size_mtu1280()
{
	local mss rc=0

	ip -n ns_c link set eth0 mtu 1280 || return 1
	ip -n ns_a link set a_c mtu 1280 || return 1
	mss=$(ip netns exec ns_c "$XFER" mss --to "$RECV_ADDR" \
		"${FAMILY_OPT[@]}") || rc=1
	echo "DLCP_SEGMENT_SIZE towards $RECV_ADDR over MTU 1280: $mss"
	if [ "$rc" -ne 0 ] || [ "$mss" -ne $((1280 - MTU_OVERHEAD)) ]; then
		fail "expected $((1280 - MTU_OVERHEAD))"
		rc=1
	fi
	# And a transfer over the smaller MTU.
	xfer "1,$((1280 - MTU_OVERHEAD + 1)),100000" 1 c || rc=1
	ip -n ns_c link set eth0 mtu 1500
	ip -n ns_a link set a_c mtu 1500
	return "$rc"
}

case_clean()
{
	local csum0 csum1

	csum0=$(snmp ns_a DlcpInCsumErrors)
	xfer "$(sizes_all)" 1 b || return 1
	csum1=$(snmp ns_a DlcpInCsumErrors)
	echo "ns_a DlcpInCsumErrors $csum0 -> $csum1"
	[ "$csum0" = "$csum1" ] || fail "checksum errors on a clean link"
}

case_loss()
{
	local r0 r1 rc=0

	impair b netem loss 5% limit 10000 || return 1
	show_qdiscs b
	r0=$(snmp ns_b DlcpRetransPkts)
	xfer "$(sizes_all)" 1 b || rc=1
	r1=$(snmp ns_b DlcpRetransPkts)
	echo "ns_b DlcpRetransPkts $r0 -> $r1"
	[ "$r1" -gt "$r0" ] 2> /dev/null ||
		{ fail "no retransmission under 5% loss"; rc=1; }
	clear_impairments
	return "$rc"
}

case_reorder()
{
	local rc=0

	impair b netem delay 2ms reorder 50% limit 10000 || return 1
	show_qdiscs b
	xfer "$(sizes_all)" 1 b || rc=1
	clear_impairments
	return "$rc"
}

case_duplicate()
{
	local rc=0

	impair b netem duplicate 10% limit 10000 || return 1
	show_qdiscs b
	xfer "$(sizes_all)" 1 b || rc=1
	clear_impairments
	return "$rc"
}

case_corrupt()
{
	local a0 b0 a1 b1 rc=0

	impair b netem corrupt 1% limit 10000 || return 1
	show_qdiscs b
	a0=$(snmp ns_a DlcpInCsumErrors)
	b0=$(snmp ns_b DlcpInCsumErrors)
	xfer "$(sizes_all)" 1 b || rc=1
	a1=$(snmp ns_a DlcpInCsumErrors)
	b1=$(snmp ns_b DlcpInCsumErrors)
	echo "DlcpInCsumErrors: ns_a $a0 -> $a1, ns_b $b0 -> $b1"
	# 1% of some 12000 packets are corrupted; most flips land in DLCP.
	[ $((a1 + b1)) -gt $((a0 + b0)) ] 2> /dev/null ||
		{ fail "corrupted packets not counted as checksum errors"; rc=1; }
	clear_impairments
	return "$rc"
}

case_combined()
{
	local rc=0

	impair b netem delay 1ms 1ms loss 2% duplicate 2% corrupt 0.5% \
		limit 10000 || return 1
	show_qdiscs b
	xfer "$(sizes_all)" 1 b || rc=1
	clear_impairments
	return "$rc"
}

case_rate_limited()
{
	local rc=0

	# A 20 Mbit/s bottleneck with a short queue: congestion drops.
	tc -n ns_b qdisc replace dev eth0 root tbf rate 20mbit burst 16kb \
		latency 20ms || return 1
	show_qdiscs b
	xfer "1,65536,1m,4m" 1 b || rc=1
	clear_impairments
	return "$rc"
}

# A 2% loss budget over a 5% loss link: messages may come lossy, within
# the budget, with their lost ranges listed and zeroed, and their first
# 4 KiB, sent critical, always intact.
case_loss_budget()
{
	local rc=0

	impair b netem loss 5% limit 10000 || return 1
	show_qdiscs b
	RECV_OPTS=(--budget 20000 --critical 4096 --min-lossy 1)
	SEND_OPTS=(--budget 20000 --critical 4096)
	xfer "1,65536,1m,$BIG_LOSSY" 1 b || rc=1
	clear_impairments
	return "$rc"
}

case_four_senders()
{
	xfer "1,$MSS,$((MSS + 1)),65536,1m,4m" 1 b c d e
}

case_four_senders_loss()
{
	local x rc=0

	for x in "${SENDERS[@]}"; do
		impair "$x" netem loss 2% limit 10000 || return 1
	done
	show_qdiscs "${SENDERS[@]}"
	xfer "1,$((MSS + 1)),65536,1m" 1 b c d e || rc=1
	clear_impairments
	return "$rc"
}

case_four_threads_one_host()
{
	xfer "1,$((MSS + 1)),65536,1m" 4 b
}

# peers_recv N SIZE X...: a Python receiver of N messages (up to SIZE
# bytes) on $port in each ns_X, in the background; their pids in rpids.
peers_recv()
{
	local n=$1 size=$2 x
	shift 2

	for x in "$@"; do
		ip netns exec "ns_$x" timeout "$(tscale 60)" /usr/bin/python3 -c '
import socket, sys
s = socket.socket(getattr(socket, sys.argv[5]), socket.SOCK_RDM, 0)
s.bind(("", int(sys.argv[1])))
open(sys.argv[2], "w").close()
for _ in range(int(sys.argv[3])):
	s.recv(int(sys.argv[4]))
' "$port" "$tmpdir/ready.$x" "$n" "$size" "$PY_AF" &
		rpids+=($!)
		wait_for_file "$tmpdir/ready.$x" 20 "$!" || return 1
	done
}

# peers_send N SIZE ADDR...: one socket in ns_a sends N messages of SIZE
# bytes to each ADDR in turn, waits until they are all done and prints
# /proc/net/dlcp/peers while the socket (and its peer state) still lives,
# then a line "max_reo_us REM_ADDR US" per destination: the widest
# reordering window the file showed during the transfer (read every 50 ms).
peers_send()
{
	ip netns exec ns_a timeout "$(tscale 60)" /usr/bin/python3 -c '
import socket, sys, threading, time
s = socket.socket(getattr(socket, sys.argv[4]), socket.SOCK_RDM, 0)
s.bind(("", 0))
lport = "%04X" % s.getsockname()[1]
mine = lambda r: r[1].endswith(":" + lport)
reo, done = {}, threading.Event()
def watch():
	while not done.wait(0.05):
		for r in [l.split() for l in open("/proc/net/dlcp/peers")][1:]:
			if mine(r):
				reo[r[2]] = max(reo.get(r[2], 0), int(r[10]))
w = threading.Thread(target=watch)
w.start()
for _ in range(int(sys.argv[2])):
	for a in sys.argv[5:]:
		s.sendto(bytes(int(sys.argv[3])), (a, int(sys.argv[1])))
for _ in range(500):
	rows = [l.split() for l in open("/proc/net/dlcp/sockets")][1:]
	if any(mine(r) and r[5] == "0" for r in rows):
		break
	time.sleep(0.1)
done.set()
w.join()
sys.stdout.write(open("/proc/net/dlcp/peers").read())
for a, us in sorted(reo.items()):
	print("max_reo_us", a, us)
' "$port" "$1" "$2" "$PY_AF" "${@:3}" ||
		{ echo "FAIL: the sender exited with status $?"; return 1; }
}

# peers_wait: wait for the receivers of peers_recv
peers_wait()
{
	local x rc=0

	for x in "${rpids[@]}"; do
		wait "$x" || { echo "FAIL: a receiver did not get its messages"; rc=1; }
	done
	return "$rc"
}

# peer_hex X: ns_X's address as /proc/net/dlcp/peers prints it (the
# address words in hex, as /proc/net/udp{,6} do)
peer_hex()
{
	local n

	case $1 in b) n=2 ;; c) n=3 ;; esac
	if [ "$FAMILY" = 6 ]; then
		echo "000077FD00000000000000000${n}000000"
	else
		echo "0${n}004D0A"
	fi
}

# peer_field OUT X COLUMN: a column of ns_X's line in peers output OUT
peer_field()
{
	echo "$1" | awk -v a="$(peer_hex "$2")" -v c="$3" '$3 == a { print $c }'
}

# peer_max_reo OUT X: the widest reordering window toward ns_X that
# peers_send saw during its transfer
peer_max_reo()
{
	echo "$1" | awk -v a="$(peer_hex "$2")" \
		'$1 == "max_reo_us" && $2 == a { print $3 }'
}

# One socket in ns_a sends to ns_b (no delay) and ns_c (150 ms each way):
# /proc/net/dlcp/peers has one congestion state per destination, each
# with its own round-trip time, and its own reordering window, between
# srtt/4 and 2 srtt plus net.dlcp.reorder_us.
case_peer_state()
{
	local rpids=() out rc=0 srtt_b srtt_c reo_b reo_c x

	port=$((port + 1))
	impair c netem delay 150ms
	peers_recv 8 $((1 << 20)) b c || rc=1
	out=$(peers_send 8 65536 "${NET}2" "${NET}3") || rc=1
	peers_wait || rc=1
	echo "$out"
	srtt_b=$(peer_field "$out" b 7)
	srtt_c=$(peer_field "$out" c 7)
	reo_b=$(peer_field "$out" b 11)
	reo_c=$(peer_field "$out" c 11)
	if [ "$(echo "$out" | grep -c ':')" -ne 2 ] || [ -z "$srtt_b" ] ||
	   [ -z "$srtt_c" ] || [ -z "$reo_b" ] || [ -z "$reo_c" ]; then
		echo "FAIL: expected one peer line per destination"
		return 1
	fi
	# c's path has 300 ms more round trip; queueing on a slow (debug)
	# kernel adds up to ~130 ms to both, so only the order is certain
	if ((srtt_c < 250000 || srtt_b >= srtt_c)); then
		echo "FAIL: srtt to b $srtt_b us, to c $srtt_c us (c has 300 ms RTT)"
		rc=1
	fi
	x=$(ip netns exec ns_a sysctl -n net.dlcp.reorder_us)
	if ((reo_b < srtt_b / 4 + x || reo_b > 2 * srtt_b + x ||
	     reo_c < srtt_c / 4 + x || reo_c > 2 * srtt_c + x)); then
		echo "FAIL: reordering windows $reo_b, $reo_c us: expected" \
		     "srtt/4 .. 2 srtt, plus $x"
		rc=1
	fi
	return "$rc"
}

# Half of the packets to ns_b overtake the rest by 10 ms (netem reorder),
# more than the first reordering window (srtt/4 + 4 ms): resends of
# segments that had only been overtaken reach the receiver as duplicates,
# its REPORTs say so (DlcpDupReports at the sender), and the sender widens
# the window of that path past the 10 ms; every message arrives. A run in
# which no packet sent after an overtaken one by more than the window
# arrived before it resends nothing needlessly and cannot tell: up to
# three runs.
reorder_window_transfer()
{
	local rpids=() out rc=0 srtt reo max dup0 dup1

	port=$((port + 1))
	impair b netem delay 10ms reorder 50% limit 10000 || return 1
	dup0=$(snmp ns_a DlcpDupReports)
	peers_recv 24 $((1 << 18)) b || rc=1
	out=$(peers_send 24 262144 "${NET}2") || rc=1
	peers_wait || rc=1
	clear_impairments
	dup1=$(snmp ns_a DlcpDupReports)
	echo "$out"
	srtt=$(peer_field "$out" b 7)
	reo=$(peer_field "$out" b 11)
	max=$(peer_max_reo "$out" b)
	echo "DlcpDupReports +$((dup1 - dup0)); srtt $srtt us," \
	     "reordering window $reo us, at most $max us during the transfer"
	[ "$rc" -eq 0 ] || return 1
	if ! [ "$dup1" -gt "$dup0" ] 2> /dev/null; then
		echo "no REPORT flagged a needless resend"
		return 2
	fi
	# without needless resends the window narrows again after some calm
	# rounds: what it reached during the transfer is the measure
	[ "${max:-0}" -gt 10000 ] ||
		fail "reordering window at most ${max:-?} us, not past 10 ms"
}

case_reorder_window()
{
	tries 3 reorder_window_transfer "this run cannot tell" \
		"no REPORT flagged a needless resend in three runs"
}

# ------------------------------------------------------------------- main

CASES=(
	segment_size
	segment_size_mtu1280
	clean
	loss
	reorder
	duplicate
	corrupt
	combined
	loss_budget
	rate_limited
	four_senders
	four_senders_loss
	four_threads_one_host
	peer_state
	reorder_window
)
# DLCP_NETNS_CASES="a b": run only these cases
[ -n "${DLCP_NETNS_CASES:-}" ] && read -r -a CASES <<< "$DLCP_NETNS_CASES"

require_root
require_vm
ktap_header "${#CASES[@]}"

if ! dlcp_loaded; then
	ktap_skip_all "dlcp module not loaded" "${CASES[@]}"
fi
if [ ! -x "$XFER" ]; then
	for c in "${CASES[@]}"; do
		ktap_result "$c" 1 "$XFER not built"
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

MSS=$(ip netns exec ns_b "$XFER" mss --to "$RECV_ADDR" "${FAMILY_OPT[@]}" \
	2> /dev/null)
[ "${MSS:-0}" -gt 0 ] 2> /dev/null || MSS=$((1500 - MTU_OVERHEAD))
ktap_print_msg "segment size $MSS, big message $BIG, $XFER_TIMEOUT s per transfer"

for i in "${!CASES[@]}"; do
	c=${CASES[$i]}
	# each case on ports of its own: nothing left over from the last one
	port=$((7000 + 100 * i))
	start=$SECONDS
	run_case "$c" "case_$c"
	echo "# $c: $((SECONDS - start)) s"
	clear_impairments
done

ktap_finished
