#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP super-packets, natively (net.dlcp.gso) and inside UDP
# (net.dlcp.udp_gso, as a UDP tunnel's GSO packet), checksum offload, and
# received packets kept by reference until recvmsg (net.dlcp.rx_keep).
# A run of packets of one message leaves as one skb; a veth passes it whole
# and the receiver takes it whole (DlcpGsoInPkts, DlcpUdpGsoInPkts), or
# the kernel's GSO cuts it on the way: at the sender's device (tx-gso-list
# off), in tbf, or because the path MTU fell below its packets. Every transfer is checked byte by
# byte (dlcp_loss), over IPv4 and IPv6, and the sockets' write memory must
# come back whole where the kernel cuts super-packets (a socket freed: the
# module's use count; too much given back: a refcount warning).
#
# Topology: ns_gs (10.77.6.2, fd77:6::2) <-- veth --> ns_gr (10.77.6.1,
# fd77:6::1).

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

LOSS=$SELFTEST_DIR/dlcp_loss
port=7400
tmpdir=

cleanup()
{
	ns_delete ns_gs ns_gr
	return 0
}

setup()
{
	need_exec "$LOSS" || return 1
	modprobe -q veth 2> /dev/null
	modprobe -q sch_netem 2> /dev/null
	modprobe -q sch_tbf 2> /dev/null
	ns_create ns_gs ns_gr || return 1
	ip -n ns_gs link add eth0 type veth peer name eth0 netns ns_gr || return 1
	ip -n ns_gs addr add 10.77.6.2/24 dev eth0 &&
	ip -n ns_gr addr add 10.77.6.1/24 dev eth0 &&
	ip -n ns_gs addr add fd77:6::2/64 dev eth0 nodad &&
	ip -n ns_gr addr add fd77:6::1/64 dev eth0 nodad || return 1
	ip -n ns_gs link set eth0 up && ip -n ns_gr link set eth0 up
}

after_case()
{
	tc -n ns_gs qdisc del dev eth0 root 2> /dev/null
	ip netns exec ns_gs ethtool -K eth0 tx on tx-gso-list on > /dev/null 2>&1
	ip -n ns_gs link set eth0 mtu 1500
	ip -n ns_gr link set eth0 mtu 1500
	ip netns exec ns_gs sysctl -qw net.dlcp.gso=0 net.dlcp.udp_gso=0 \
		net.dlcp.udp_entropy=1
	ip netns exec ns_gr sysctl -qw net.dlcp.rx_keep=1 net.dlcp.rmem=134217728
	ip netns exec ns_gs sysctl -qw net.dlcp.encap=0
	ip netns exec ns_gr sysctl -qw net.dlcp.encap=0
	ip -n ns_gs link del tun0 2> /dev/null
	ip -n ns_gr link del tun0 2> /dev/null
	return 0
}

# gso_on ENC: super-packets natively (ENC native: net.dlcp.gso) or inside
# UDP (ENC udp: net.dlcp.udp_gso, a source port per packet where they are
# cut: udp_entropy 1); OUT_CTR and IN_CTR name the counters of
# super-packets sent and taken whole
gso_on()
{
	if [ "$1" = udp ]; then
		OUT_CTR=DlcpUdpGsoOutPkts IN_CTR=DlcpUdpGsoInPkts
		ip netns exec ns_gs sysctl -qw net.dlcp.encap=1 net.dlcp.udp_gso=1 &&
		ip netns exec ns_gr sysctl -qw net.dlcp.encap=1
	else
		OUT_CTR=DlcpGsoOutPkts IN_CTR=DlcpGsoInPkts
		ip netns exec ns_gs sysctl -qw net.dlcp.encap=0 net.dlcp.gso=1 &&
		ip netns exec ns_gr sysctl -qw net.dlcp.encap=0
	fi || fail "super-packets $1: a sysctl was refused"
}
OUT_CTR=DlcpGsoOutPkts
IN_CTR=DlcpGsoInPkts

counter_delta()	# NS COUNTER BEFORE
{
	echo $(($(snmp "$1" "$2") - $3))
}

# xfer FAMILY COUNT SIZE [BUDGET]: COUNT messages of SIZE bytes, exact
# (budget 0) unless BUDGET is given, checked byte by byte; XFER_WINDOW=W:
# at most W messages unfinished at a time; XFER_SENDERS=N: N senders at
# once to the one receiver, COUNT / N messages each; XFER_TO=ADDR: to that
# IPv4 address of ns_gr
xfer()
{
	local fam=$1 count=$2 size=$3 budget=${4:-0} to=${XFER_TO:-10.77.6.1}
	local rpid rc=0
	local senders=${XFER_SENDERS:-1} pids=() i

	[ "$fam" = 6 ] && to=fd77:6::1
	port=$((port + 1))
	rm -f "$tmpdir/ready"
	DLCP_FAMILY=$fam ip netns exec ns_gr timeout 120 "$LOSS" recv --port "$port" \
		--ready "$tmpdir/ready" --count "$count" --size "$size" \
		--budget "$budget" --expect exact &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" || fail "receiver did not start" || return 1
	for ((i = 0; i < senders; i++)); do
		DLCP_FAMILY=$fam ip netns exec ns_gs timeout 120 "$LOSS" send \
			--to "$to" --port "$port" --count $((count / senders)) \
			--size "$size" --budget "$budget" \
			${XFER_WINDOW:+--window "$XFER_WINDOW"} \
			--expect-completion exact &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || { echo "FAIL: sender"; rc=1; }
	done
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	return "$rc"
}

# mod_refs_back REFS: the module's use count is back to REFS or below.
# Every DLCP socket holds one until it is freed, which waits for the last
# of its packets in flight: a packet charged to the socket but never
# uncharged (a cut super-packet's share) keeps it. Below: sockets of the
# transfer before REFS was read may still have been on their way out (a
# socket is freed an RCU grace period after its close, ~150 ms in a quiet
# VM, longer on a busy host).
mod_refs_back()
{
	local i

	for i in $(seq "$(tscale 100)"); do
		[ "$(cat /sys/module/dlcp/refcnt)" -le "$1" ] && return 0
		sleep 0.1
	done
	fail "module use count $(cat /sys/module/dlcp/refcnt), $1 before: a socket was not freed"
}

# snap: the counters these cases look at, in both namespaces
snap()
{
	out0=$(snmp ns_gs "$OUT_CTR")
	data0=$(snmp ns_gs DlcpOutDataPkts)
	in0=$(snmp ns_gr "$IN_CTR")
	csum0=$(snmp ns_gr DlcpInCsumErrors)
	dropgso0=$(snmp ns_gr DlcpDropGso)
	cut0=$(snmp ns_gr DlcpUdpGsoCut)
}

# delta: what the last transfer did to them
delta()
{
	out=$(counter_delta ns_gs "$OUT_CTR" "$out0")
	data=$(counter_delta ns_gs DlcpOutDataPkts "$data0")
	in=$(counter_delta ns_gr "$IN_CTR" "$in0")
	csum=$(counter_delta ns_gr DlcpInCsumErrors "$csum0")
	dropgso=$(counter_delta ns_gr DlcpDropGso "$dropgso0")
	cut=$(counter_delta ns_gr DlcpUdpGsoCut "$cut0")
	echo "$out super-packets for $data data packets; $in received whole;" \
		"$csum checksum errors, $dropgso GSO drops, $cut cut at the receiver"
	[ "$csum" -eq 0 ] || fail "checksum errors" || return 1
	[ "$dropgso" -eq 0 ] || fail "GSO drops" || return 1
	[ "$cut" -eq 0 ] || fail "super-packets cut by the receiver"
}

# xfer_each CHECK...: for each encapsulation (native, udp) and family,
# with super-packets on: 4 x 1 MiB, the counters (delta), the sockets
# freed, then CHECK... (which sees $enc, $fam and delta's variables)
xfer_each()
{
	local enc fam refs check

	for enc in native udp; do
		gso_on "$enc" || return 1
		for fam in 4 6; do
			refs=$(cat /sys/module/dlcp/refcnt)
			snap
			xfer "$fam" 4 1048576 || return 1
			echo -n "$enc, IPv$fam: "
			delta || return 1
			mod_refs_back "$refs" || return 1
			for check in "$@"; do
				"$check" || return 1
			done
		done
	done
}

# some_sent: super-packets went out
some_sent()
{
	[ "$out" -gt 0 ] || fail "$enc, IPv$fam: no super-packet sent"
}

# all_whole, none_whole: every super-packet arrived whole, or none did
all_whole()
{
	[ "$in" -eq "$out" ] ||
		fail "$enc, IPv$fam: $out super-packets sent, $in received whole"
}

none_whole()
{
	[ "$in" -eq 0 ] || fail "$enc, IPv$fam: $in arrived whole"
}

# Super-packets pass the veth whole and the receiver takes them whole,
# natively and inside UDP; with net.dlcp.gso and net.dlcp.udp_gso 0 none
# is built.
case_gso_whole()
{
	local enc

	xfer_each some_sent all_whole || return 1
	for enc in native udp; do
		gso_on "$enc" || return 1
		ip netns exec ns_gs sysctl -qw net.dlcp.gso=0 net.dlcp.udp_gso=0 ||
			return 1
		snap
		xfer 4 2 1048576 || return 1
		delta || return 1
		[ "$out" -eq 0 ] || fail "$enc: super-packets with gso 0" || return 1
	done
}

# A device that does not take SKB_GSO_FRAGLIST: the sender's GSO cuts
# every super-packet through DLCP's net_offload (inside UDP, through the
# UDP tunnel's, which calls DLCP's); none arrives whole.
case_gso_cut_by_sender()
{
	ip netns exec ns_gs ethtool -K eth0 tx-gso-list off > /dev/null ||
		fail "ethtool -K eth0 tx-gso-list off" || return 1
	xfer_each some_sent none_whole
}

# entropy_on_wire: of 200 packets that ns_gr captured while 4 x 1 MiB came
# from ns_gs, inside UDP nearly every one has a source port of its own,
# natively over IPv6 a flow label of its own (udp_entropy 1), though they
# were cut from super-packets that carried their first packet's
entropy_on_wire()
{
	local filt="ip6 proto 253" v=-v what=labels n

	[ "$enc" = udp ] && filt="udp dst port 9253" v='' what=ports
	[ "$enc" = native ] && [ "$fam" = 4 ] && return 0
	# shellcheck disable=SC2086 # $v: no word when empty
	ip netns exec ns_gr timeout 60 tcpdump -i eth0 -n $v -s 128 -B 8192 -l \
		--immediate-mode -c 200 "$filt" > "$tmpdir/cap" 2> "$tmpdir/cap.err" &
	capture_ready "$tmpdir/cap.err" $! || return 1
	snap
	xfer "$fam" 4 1048576 || return 1
	wait
	echo -n "$enc, IPv$fam: "
	delta || return 1
	if [ "$enc" = udp ]; then
		# ... ADDR.SPORT > ADDR.9253: UDP ...
		n=$(awk '{ for (i = 3; i <= NF; i++)
			if ($i ~ /\.9253:$/ && $(i - 1) == ">") {
				k = split($(i - 2), a, "."); print a[k] } }' \
			"$tmpdir/cap" | sort -u | wc -l)
	else
		n=$(grep -o 'flowlabel 0x[0-9a-f]*' "$tmpdir/cap" | sort -u | wc -l)
	fi
	echo "$enc, IPv$fam: $(wc -l < "$tmpdir/cap") packets captured, $n $what"
	[ "$out" -gt 0 ] || fail "$enc, IPv$fam: no super-packet sent" || return 1
	[ "$n" -ge 100 ] || fail "$enc, IPv$fam: only $n $what in 200 packets"
}

# Cut where they leave, super-packets still spread one message over every
# path: the sender's GSO gives every packet its own path entropy, as it
# would have had sent alone (udp_entropy 1, the default).
case_gso_cut_entropy()
{
	ip netns exec ns_gs ethtool -K eth0 tx-gso-list off > /dev/null ||
		fail "ethtool -K eth0 tx-gso-list off" || return 1
	for enc in native udp; do
		gso_on "$enc" || return 1
		for fam in 4 6; do
			entropy_on_wire || return 1
		done
	done
}

# Checksum offload off (ethtool tx off): the kernel sums every packet
# before the device, single or cut from a super-packet, and the receiver
# checks the sums (the packets arrive CHECKSUM_NONE): DLCP's natively,
# UDP's (which covers the DLCP packet) inside UDP.
case_csum_offload_off()
{
	local how fam

	ip netns exec ns_gs ethtool -K eth0 tx off > /dev/null ||
		fail "ethtool -K eth0 tx off" || return 1
	for how in native-single native udp; do
		gso_on "${how%-single}" || return 1
		[ "$how" = native-single ] &&
			{ ip netns exec ns_gs sysctl -qw net.dlcp.gso=0 || return 1; }
		for fam in 4 6; do
			snap
			xfer "$fam" 4 1048576 || return 1
			echo -n "$how, IPv$fam: "
			delta || return 1
			[ "$how" = native-single ] || [ "$out" -gt 0 ] ||
				fail "no super-packet sent" || return 1
			[ "$in" -eq 0 ] || fail "$in arrived whole" || return 1
		done
	done
}

# netem_dropped: netem (under tbf) dropped packets
netem_dropped()
{
	local drops

	drops=$(tc -s -n ns_gs qdisc show dev eth0 |
		awk '/^qdisc netem/ { n = 1 } n && /dropped/ { gsub(/,/, "", $7); print $7; exit }')
	echo "$enc, IPv$fam: netem dropped $drops packets so far"
	[ "${drops:-0}" -gt 0 ] || fail "netem dropped nothing"
}

# Part of a super-packet lost: tbf cuts it (its packets exceed the burst)
# and netem under tbf drops some of the packets. Budget 0: every byte
# arrives in the end.
case_gso_partial_loss()
{
	tc -n ns_gs qdisc replace dev eth0 root handle 1: tbf rate 1gbit burst 1600 \
		latency 50ms &&
	tc -n ns_gs qdisc replace dev eth0 parent 1:1 handle 10: netem loss 3% ||
		fail "tbf and netem" || return 1
	xfer_each some_sent none_whole netem_dropped
}

# The path MTU falls while super-packets are in flight: IP cuts them, each
# packet is too big and answered with "fragmentation needed" (inside UDP,
# to the UDP socket of the port), and the messages are re-cut to the new
# size. Every byte arrives. (tbf slows the transfer down to make room for
# the change, and lets super-packets of up to 64 KB through whole; on a
# slow kernel, DLCP_TIMEOUT_SCALE times slower, as the change comes later.)
case_gso_mtu_falls()
{
	local enc fam mtu0 reseg

	tc -n ns_gs qdisc replace dev eth0 root tbf \
		rate "$((200 / ${DLCP_TIMEOUT_SCALE:-1}))mbit" burst 128k \
		latency "$(tscale 200)ms" || return 1
	for enc in native udp; do
		gso_on "$enc" || return 1
		for fam in 4 6; do
			ip -n ns_gs link set eth0 mtu 1500 &&
			ip -n ns_gr link set eth0 mtu 1500 || return 1
			mtu0=$(snmp ns_gs DlcpPmtuUpdates)
			reseg=$(snmp ns_gs DlcpResegmented)
			snap
			# once super-packets go out
			(
				for _ in $(seq 200); do
					[ "$(snmp ns_gs "$OUT_CTR")" -gt "$out0" ] && break
					sleep 0.05
				done
				ip -n ns_gs link set eth0 mtu 1280
			) &
			xfer "$fam" 8 4194304 || return 1
			wait
			echo -n "$enc, IPv$fam: "
			delta || return 1
			mtu0=$(counter_delta ns_gs DlcpPmtuUpdates "$mtu0")
			reseg=$(counter_delta ns_gs DlcpResegmented "$reseg")
			echo "$enc, IPv$fam: $mtu0 path MTU updates, $reseg messages re-cut"
			[ "$out" -gt 0 ] || fail "$enc, IPv$fam: no super-packet sent" ||
				return 1
			[ "$reseg" -gt 0 ] || fail "$enc, IPv$fam: no message re-cut" ||
				return 1
		done
	done
}

# rx_snap, rx_delta: DATA packets the receiver took, and of them kept
rx_snap()
{
	rdata0=$(snmp ns_gr DlcpInDataPkts)
	kept0=$(snmp ns_gr DlcpInDataKept)
}

rx_delta()
{
	rdata=$(counter_delta ns_gr DlcpInDataPkts "$rdata0")
	kept=$(counter_delta ns_gr DlcpInDataKept "$kept0")
	echo "$kept of $rdata data packets kept by reference"
}

# Packets that continue their message in order are kept by reference and
# copied once by recvmsg, natively (one by one and in super-packets) and
# inside UDP; with net.dlcp.rx_keep 0 every packet is copied on arrival.
# Every message is checked byte by byte.
case_rx_keep()
{
	local mode fam

	for mode in native gso udp; do
		[ "$mode" = gso ] && { ip netns exec ns_gs sysctl -qw net.dlcp.gso=1 || return 1; }
		if [ "$mode" = udp ]; then
			ip netns exec ns_gs sysctl -qw net.dlcp.encap=1 &&
			ip netns exec ns_gr sysctl -qw net.dlcp.encap=1 || return 1
		fi
		for fam in 4 6; do
			rx_snap
			xfer "$fam" 4 1048576 || return 1
			echo -n "$mode, IPv$fam: "
			rx_delta
			[ "$kept" -gt 0 ] || fail "$mode, IPv$fam: nothing kept" || return 1
		done
	done
	ip netns exec ns_gr sysctl -qw net.dlcp.rx_keep=0 || return 1
	rx_snap
	xfer 4 4 1048576 || return 1
	echo -n "rx_keep 0: "
	rx_delta
	[ "$kept" -eq 0 ] || fail "$kept packets kept with net.dlcp.rx_keep=0"
}

# Packets lost and reordered: a packet a few places late is kept in its
# place among its message's packets, a resent one (far behind) is copied
# into the message's pages.
case_rx_keep_reorder()
{
	local fam

	tc -n ns_gs qdisc replace dev eth0 root netem delay 1ms loss 2% reorder 25% 50% ||
		return 1
	for fam in 4 6; do
		rx_snap
		xfer "$fam" 4 1048576 || return 1
		echo -n "IPv$fam: "
		rx_delta
		[ "$kept" -gt 0 ] || fail "IPv$fam: nothing kept" || return 1
		[ "$kept" -lt "$rdata" ] || fail "IPv$fam: every packet kept" || return 1
	done
}

# A packet's truesize may be twice its payload: kept packets must leave
# room for the rest of every message being received in pages, or messages
# that fit the socket's limit in pages would stall at it, or lose packets
# at it. First messages of 4 MiB one at a time, net.dlcp.rmem a little
# above one; then three senders at once to one socket, eight 1 MiB
# messages each, one at a time, rmem at 3.5 MiB: room for the three in
# pages, not for three kept whole. Every message must arrive, exact, and
# in time.
case_rx_keep_rmem()
{
	local rcvmem0 rcvmem

	ip netns exec ns_gr sysctl -qw net.dlcp.rmem=$((4 * 1048576 + 524288)) || return 1
	rcvmem0=$(snmp ns_gr DlcpDropRcvMem)
	rx_snap
	XFER_WINDOW=1 xfer 4 3 4194304 || return 1
	echo -n "one at a time: "
	rx_delta
	rcvmem=$(counter_delta ns_gr DlcpDropRcvMem "$rcvmem0")
	echo "one at a time: $rcvmem packets dropped at the socket's limit"
	[ "$kept" -gt 0 ] || fail "nothing kept" || return 1
	[ "$kept" -lt "$rdata" ] || fail "every packet kept, past the limit" ||
		return 1

	ip netns exec ns_gr sysctl -qw net.dlcp.rmem=$((3 * 1048576 + 524288)) || return 1
	rcvmem0=$(snmp ns_gr DlcpDropRcvMem)
	rx_snap
	XFER_SENDERS=3 XFER_WINDOW=1 xfer 4 24 1048576 || return 1
	echo -n "three senders: "
	rx_delta
	rcvmem=$(counter_delta ns_gr DlcpDropRcvMem "$rcvmem0")
	echo "three senders: $rcvmem packets dropped at the socket's limit"
	[ "$kept" -gt 0 ] || fail "three senders: nothing kept"
}

# A new namespace's defaults: super-packets natively (net.dlcp.gso 1) and
# in UDP mode (net.dlcp.udp_gso 1, with a port per packet where they are
# cut: udp_entropy 1), taken whole across a veth.
case_gso_defaults()
{
	local v enc

	v=$(unshare -n sysctl -n net.dlcp.gso net.dlcp.udp_gso \
		net.dlcp.udp_entropy | tr '\n' ' ')
	echo "gso, udp_gso, udp_entropy: $v"
	[ "$v" = "1 1 1 " ] || fail "defaults $v, not 1 1 1" || return 1
	for enc in native udp; do
		gso_on "$enc" || return 1
		ip netns exec ns_gs sysctl -qw net.dlcp.gso=1 net.dlcp.udp_gso=1 \
			net.dlcp.udp_entropy=1 || return 1
		snap
		xfer 4 4 1048576 || return 1
		echo -n "$enc: "
		delta || return 1
		[ "$out" -gt 0 ] && [ "$in" -eq "$out" ] ||
			fail "$enc: $out super-packets, $in whole" || return 1
	done
}

# tunnel_up KIND: an IP-in-IP or VXLAN tunnel over eth0, 10.79.6.2 in
# ns_gs to 10.79.6.1 in ns_gr
tunnel_up()
{
	local ns a b

	for ns in ns_gs ns_gr; do
		if [ "$ns" = ns_gs ]; then a=2 b=1; else a=1 b=2; fi
		if [ "$1" = ipip ]; then
			ip -n "$ns" link add tun0 type ipip local "10.77.6.$a" \
				remote "10.77.6.$b" || return 1
		else
			ip -n "$ns" link add tun0 type vxlan id 42 dstport 4789 \
				local "10.77.6.$a" remote "10.77.6.$b" || return 1
		fi
		ip -n "$ns" addr add "10.79.6.$a/24" dev tun0 &&
		ip -n "$ns" link set tun0 up || return 1
	done
}

# Super-packets into a tunnel of the path (IP in IP, VXLAN): the tunnel
# adds its GSO type (SKB_GSO_IPXIP4, SKB_GSO_UDP_TUNNEL) and the kernel's
# segmentation of it calls DLCP's for the packets inside, where the
# underlying device cuts them (tx-gso-list off) or where they arrive.
# Nothing is lost on the way: the receiver counts every data packet the
# sender sent, resent ones included, but for a few. (A resend is not
# always counted a duplicate: one that overtook its original makes the
# super-packet holding the original partly new.)
case_gso_tunnel()
{
	local kind enc how rtx0 rtx sent0 sent got0 got

	for kind in ipip vxlan; do
		modprobe -q "$kind" 2> /dev/null
		tunnel_up "$kind" || fail "$kind tunnel" || return 1
		for enc in native udp; do
			gso_on "$enc" || return 1
			for how in whole "tx-gso-list off"; do
				# shellcheck disable=SC2086
				[ "$how" = whole ] ||
					ip netns exec ns_gs ethtool -K eth0 $how > /dev/null ||
					return 1
				rtx0=$(snmp ns_gs DlcpRetransPkts)
				sent0=$(snmp ns_gs DlcpOutDataPkts)
				got0=$(snmp ns_gr DlcpInDataPkts)
				snap
				XFER_TO=10.79.6.1 xfer 4 4 1048576 || return 1
				echo -n "$kind, $enc, $how: "
				delta || return 1
				rtx=$(counter_delta ns_gs DlcpRetransPkts "$rtx0")
				sent=$(counter_delta ns_gs DlcpOutDataPkts "$sent0")
				got=$(counter_delta ns_gr DlcpInDataPkts "$got0")
				echo "$kind, $enc, $how: $sent data packets sent" \
				     "($rtx resent), $got arrived"
				[ "$out" -gt 0 ] ||
					fail "$kind, $enc: no super-packet" || return 1
				[ $((sent - got)) -le 10 ] ||
					fail "$kind, $enc, $how: $((sent - got)) packets lost" ||
					return 1
			done
			ip netns exec ns_gs ethtool -K eth0 tx-gso-list on > /dev/null
		done
		ip -n ns_gs link del tun0 && ip -n ns_gr link del tun0 || return 1
	done
}

CASES=(
	gso_defaults
	gso_tunnel
	rx_keep
	rx_keep_reorder
	rx_keep_rmem
	gso_whole
	gso_cut_by_sender
	gso_cut_entropy
	csum_offload_off
	gso_partial_loss
	gso_mtu_falls
)
# DLCP_GSO_CASES="a b": run only these cases
[ -n "${DLCP_GSO_CASES:-}" ] && read -r -a CASES <<< "$DLCP_GSO_CASES"

ktap_main "${CASES[@]}"
