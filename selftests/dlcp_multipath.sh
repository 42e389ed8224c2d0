#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP over multipath fabrics: a router forwards to the receiver over two
# parallel links with an ECMP route hashing L4 ports
# (fib_multipath_hash_policy=1). In UDP mode the per-packet source port
# spreads one message over both links; in native mode (no ports to hash)
# a message takes one. With different delays and loss on the two links,
# messages still arrive byte-identical: order does not matter to DLCP.
#
#   ns_s 10.77.5.2 -- 10.77.5.1 ns_rt p1 10.77.6.1 -- 10.77.6.2 ns_r
#                                     p2 10.77.7.1 -- 10.77.7.2
#   the receiver's address 10.77.9.1 (on lo) is reached over p1 and p2
#
# Host multipath (DLCP_PATHS): the sender has a second link,
#   ns_s eth1 10.77.15.2 -- 10.77.15.1 s1 ns_rt
# and a host address 10.77.8.1 (on lo) that the router reaches over both;
# the sender's route to the receiver has a next hop over each link, and
# the socket sprays its packets over eth0 and eth1.

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

LOSS=$SELFTEST_DIR/dlcp_loss
DST=10.77.9.1
SRC=10.77.8.1
port=7500
tmpdir=

cleanup()
{
	ns_delete ns_s ns_rt ns_r
	return 0
}

setup()
{
	local ns dev l

	need_exec "$LOSS" || return 1
	modprobe -q veth 2> /dev/null
	modprobe -q sch_netem 2> /dev/null
	ns_create ns_s ns_rt ns_r || return 1
	ip -n ns_s link add eth0 type veth peer name s0 netns ns_rt &&
	ip -n ns_s link add eth1 type veth peer name s1 netns ns_rt &&
	ip -n ns_rt link add p1 type veth peer name r1 netns ns_r &&
	ip -n ns_rt link add p2 type veth peer name r2 netns ns_r || return 1
	ip -n ns_s addr add 10.77.5.2/24 dev eth0 &&
	ip -n ns_rt addr add 10.77.5.1/24 dev s0 &&
	ip -n ns_s addr add 10.77.15.2/24 dev eth1 &&
	ip -n ns_rt addr add 10.77.15.1/24 dev s1 &&
	ip -n ns_s addr add "$SRC/32" dev lo &&
	ip -n ns_rt addr add 10.77.6.1/24 dev p1 &&
	ip -n ns_rt addr add 10.77.7.1/24 dev p2 &&
	ip -n ns_r addr add 10.77.6.2/24 dev r1 &&
	ip -n ns_r addr add 10.77.7.2/24 dev r2 &&
	ip -n ns_r addr add "$DST/32" dev lo || return 1
	for l in "ns_s lo" "ns_s eth0" "ns_s eth1" "ns_rt s0" "ns_rt s1" \
		 "ns_rt p1" "ns_rt p2" "ns_r r1" "ns_r r2"; do
		read -r ns dev <<< "$l"
		ip -n "$ns" link set "$dev" up || return 1
	done
	ip -n ns_s route add default via 10.77.5.1 &&
	ip -n ns_s route add "$DST/32" nexthop via 10.77.5.1 dev eth0 \
		nexthop via 10.77.15.1 dev eth1 &&
	ip -n ns_rt route add "$SRC/32" nexthop via 10.77.5.2 dev s0 \
		nexthop via 10.77.15.2 dev s1 &&
	ip -n ns_r route add default via 10.77.6.1 &&
	ip -n ns_rt route add "$DST/32" nexthop via 10.77.6.2 dev p1 \
		nexthop via 10.77.7.2 dev p2 || return 1
	ip netns exec ns_rt sysctl -qw net.ipv4.ip_forward=1 &&
	ip netns exec ns_rt sysctl -qw net.ipv4.fib_multipath_hash_policy=1 &&
	ip netns exec ns_rt sysctl -qw net.ipv4.conf.all.rp_filter=0 &&
	ip netns exec ns_rt sysctl -qw \
		net.ipv4.conf.all.ignore_routes_with_linkdown=1 &&
	ip netns exec ns_rt sysctl -qw net.ipv4.conf.s1.rp_filter=0 &&
	ip netns exec ns_r sysctl -qw net.ipv4.conf.all.rp_filter=0 &&
	ip netns exec ns_r sysctl -qw net.ipv4.conf.r2.rp_filter=0
}

encap()	# 0 native, 1 UDP, on both ends
{
	ip netns exec ns_s sysctl -qw net.dlcp.encap="$1" &&
	ip netns exec ns_r sysctl -qw net.dlcp.encap="$1"
}

txbytes()	# DEV [NS]: bytes sent on DEV (of the router, or of NS)
{
	ip -n "${2:-ns_rt}" -s -j link show "$1" |
		/usr/bin/python3 -c 'import json, sys
print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'
}

# transfer COUNT SIZE [SENDER OPTIONS]: one byte-checked transfer to $DST
transfer()
{
	local rpid rc=0 count=$1 size=$2

	shift 2
	port=$((port + 1))
	rm -f "$tmpdir/ready"
	ip netns exec ns_r timeout 120 "$LOSS" recv --port "$port" \
		--count "$count" --size "$size" --budget 0 --expect exact \
		--ready "$tmpdir/ready" &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" || return 1
	ip netns exec ns_s timeout 120 "$LOSS" send --to "$DST" --port "$port" \
		--count "$count" --size "$size" --budget 0 \
		--expect-completion exact "$@" ||
		{ echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	return "$rc"
}

# spread: run a 4 MiB transfer, print and check the share of link p1
# spread NS DEV1 DEV2 MIN_PCT MAX_PCT [SENDER OPTIONS]: a 4 MiB transfer;
# the share of the bytes NS sent on DEV1 (of DEV1 and DEV2) must be in the
# range
spread()
{
	local ns=$1 d1=$2 d2=$3 min=$4 max=$5 a0 b0 a b pct

	shift 5
	a0=$(txbytes "$d1" "$ns")
	b0=$(txbytes "$d2" "$ns")
	transfer 1 4194304 "$@" || return 1
	a=$(($(txbytes "$d1" "$ns") - a0))
	b=$(($(txbytes "$d2" "$ns") - b0))
	pct=$((100 * a / (a + b)))
	echo "link $d1: $a bytes, link $d2: $b bytes ($pct% on $d1)${*:+, sender $*}"
	if [ "$pct" -lt "$min" ] || [ "$pct" -gt "$max" ]; then
		fail "share of $d1 not within $min..$max%"
	fi
}

case_udp_sprays_one_message()
{
	encap 1 || return 1
	spread ns_rt p1 p2 30 70
}

case_native_takes_one_path()
{
	encap 0 || return 1
	# either link, but (nearly) all of it on one
	spread ns_rt p1 p2 0 100 > "$tmpdir/out" ||
		{ cat "$tmpdir/out"; return 1; }
	cat "$tmpdir/out"
	grep -qE '\((9[5-9]|100|[0-4])% on p1\)' "$tmpdir/out" ||
		fail "native mode split over both links"
}

# impaired NS DEV1 DELAY1 LOSS1 DEV2 DELAY2 LOSS2 [SENDER OPTIONS]: four
# byte-checked 1 MiB messages in UDP mode with netem on the two links
impaired()
{
	local ns=$1 d1=$2 d2=$5 rc=0

	encap 1 || return 1
	tc -n "$ns" qdisc replace dev "$d1" root netem delay "$3" loss "$4" &&
	tc -n "$ns" qdisc replace dev "$d2" root netem delay "$6" loss "$7" ||
		return 1
	shift 7
	transfer 4 1048576 "$@" || rc=1
	tc -n "$ns" qdisc del dev "$d1" root
	tc -n "$ns" qdisc del dev "$d2" root
	return "$rc"
}

case_udp_paths_differ_delay_loss()
{
	impaired ns_rt p1 1ms 1% p2 6ms 2%
}

case_host_paths_spray()
{
	encap 0 || return 1
	# native mode: without DLCP_PATHS one next hop carries it all
	spread ns_s eth0 eth1 40 60 --from "$SRC" --paths eth0,eth1
}

case_host_paths_weights()
{
	encap 0 || return 1
	spread ns_s eth0 eth1 65 85 --from "$SRC" --paths eth0:3,eth1:1
}

case_host_paths_differ_delay_loss()
{
	impaired ns_s eth0 1ms 1% eth1 8ms 2% --from "$SRC" --paths eth0,eth1
}

case_host_paths_link_down()
{
	local s0 s1 rc=0

	encap 0 || return 1
	# eth1 loses its route: its packets go over eth0, counted
	ip -n ns_s link set eth1 down || return 1
	s0=$(snmp ns_s DlcpOutPathSkipped)
	transfer 2 1048576 --from "$SRC" --paths eth0,eth1 || rc=1
	s1=$(snmp ns_s DlcpOutPathSkipped)
	ip -n ns_s link set eth1 up
	ip -n ns_s route replace "$DST/32" nexthop via 10.77.5.1 dev eth0 \
		nexthop via 10.77.15.1 dev eth1
	echo "DlcpOutPathSkipped: $s0 -> $s1"
	[ "$s1" -gt "$s0" ] || fail "no packet moved off the dead path"
	return "$rc"
}

txpkts()	# NS DEV: packets NS sent on DEV
{
	ip -n "$1" -s -j link show "$2" |
		/usr/bin/python3 -c 'import json, sys
print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])'
}

# A receiver keeps the route of its last REPORT or STOP for the next; when
# its route to the sender changes between two messages from one sender
# port, the replies to the second take the new route.
case_replies_follow_route_change()
{
	local rpid rc=0 r1 r2 c0 c1 n sport

	encap 0 || return 1
	port=$((port + 1))
	sport=$((port + 100))	# ns_s is this run's own namespace
	rm -f "$tmpdir/ready"
	ip netns exec ns_r timeout 120 "$LOSS" recv --port "$port" \
		--count 2 --size 1048576 --budget 0 --expect exact \
		--ready "$tmpdir/ready" &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" || return 1
	ip netns exec ns_s timeout 60 "$LOSS" send --to "$DST" --port "$port" \
		--count 1 --size 1048576 --budget 0 --sport "$sport" \
		--expect-completion exact || { echo "FAIL: first sender"; rc=1; }
	ip -n ns_r route replace default via 10.77.7.1 dev r2 || rc=1
	r1=$(txpkts ns_r r1)
	r2=$(txpkts ns_r r2)
	c0=$(($(snmp ns_r DlcpReportsSent) + $(snmp ns_r DlcpStopsSent)))
	ip netns exec ns_s timeout 60 "$LOSS" send --to "$DST" --port "$port" \
		--count 1 --size 1048576 --budget 0 --sport "$sport" \
		--expect-completion exact || { echo "FAIL: second sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	c1=$(($(snmp ns_r DlcpReportsSent) + $(snmp ns_r DlcpStopsSent)))
	r1=$(($(txpkts ns_r r1) - r1))
	r2=$(($(txpkts ns_r r2) - r2))
	n=$((c1 - c0))
	ip -n ns_r route replace default via 10.77.6.1 dev r1
	echo "replies to the second message: $n; packets out of r1 $r1, r2 $r2"
	[ "$n" -gt 0 ] || fail "no reply counted"
	[ "$r2" -ge "$n" ] || fail "replies not on the new route (r2)"
	# r1 may send a neighbour probe, not the replies
	[ "$r1" -lt "$n" ] || fail "replies still on the old route (r1)"
	return "$rc"
}

CASES=(udp_sprays_one_message native_takes_one_path
       udp_paths_differ_delay_loss host_paths_spray host_paths_weights
       host_paths_differ_delay_loss host_paths_link_down
       replies_follow_route_change)

ktap_main "${CASES[@]}"
