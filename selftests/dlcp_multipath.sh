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

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

LOSS=$SELFTEST_DIR/dlcp_loss
DST=10.77.9.1
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
	ip -n ns_rt link add p1 type veth peer name r1 netns ns_r &&
	ip -n ns_rt link add p2 type veth peer name r2 netns ns_r || return 1
	ip -n ns_s addr add 10.77.5.2/24 dev eth0 &&
	ip -n ns_rt addr add 10.77.5.1/24 dev s0 &&
	ip -n ns_rt addr add 10.77.6.1/24 dev p1 &&
	ip -n ns_rt addr add 10.77.7.1/24 dev p2 &&
	ip -n ns_r addr add 10.77.6.2/24 dev r1 &&
	ip -n ns_r addr add 10.77.7.2/24 dev r2 &&
	ip -n ns_r addr add "$DST/32" dev lo || return 1
	for l in "ns_s eth0" "ns_rt s0" "ns_rt p1" "ns_rt p2" "ns_r r1" \
		 "ns_r r2"; do
		read -r ns dev <<< "$l"
		ip -n "$ns" link set "$dev" up || return 1
	done
	ip -n ns_s route add default via 10.77.5.1 &&
	ip -n ns_r route add default via 10.77.6.1 &&
	ip -n ns_rt route add "$DST/32" nexthop via 10.77.6.2 dev p1 \
		nexthop via 10.77.7.2 dev p2 || return 1
	ip netns exec ns_rt sysctl -qw net.ipv4.ip_forward=1 &&
	ip netns exec ns_rt sysctl -qw net.ipv4.fib_multipath_hash_policy=1 &&
	ip netns exec ns_r sysctl -qw net.ipv4.conf.all.rp_filter=0 &&
	ip netns exec ns_r sysctl -qw net.ipv4.conf.r2.rp_filter=0
}

encap()	# 0 native, 1 UDP, on both ends
{
	ip netns exec ns_s sysctl -qw net.dlcp.encap="$1" &&
	ip netns exec ns_r sysctl -qw net.dlcp.encap="$1"
}

txbytes()	# DEV: bytes the router sent on DEV
{
	ip -n ns_rt -s -j link show "$1" |
		/usr/bin/python3 -c 'import json, sys
print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'
}

# transfer COUNT SIZE: one byte-checked transfer to $DST
transfer()
{
	local rpid rc=0

	port=$((port + 1))
	rm -f "$tmpdir/ready"
	ip netns exec ns_r timeout 120 "$LOSS" recv --port "$port" \
		--count "$1" --size "$2" --budget 0 --expect exact \
		--ready "$tmpdir/ready" &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" || return 1
	ip netns exec ns_s timeout 120 "$LOSS" send --to "$DST" --port "$port" \
		--count "$1" --size "$2" --budget 0 --expect-completion exact ||
		{ echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	return "$rc"
}

# spread: run a 4 MiB transfer, print and check the share of link p1
spread()	# MIN_PCT MAX_PCT
{
	local a0 b0 a b pct

	a0=$(txbytes p1)
	b0=$(txbytes p2)
	transfer 1 4194304 || return 1
	a=$(($(txbytes p1) - a0))
	b=$(($(txbytes p2) - b0))
	pct=$((100 * a / (a + b)))
	echo "link p1: $a bytes, link p2: $b bytes ($pct% on p1)"
	if [ "$pct" -lt "$1" ] || [ "$pct" -gt "$2" ]; then
		fail "share of p1 not within $1..$2%"
	fi
}

case_udp_sprays_one_message()
{
	encap 1 || return 1
	spread 30 70
}

case_native_takes_one_path()
{
	encap 0 || return 1
	# either link, but (nearly) all of it on one
	spread 0 100 > "$tmpdir/out" || { cat "$tmpdir/out"; return 1; }
	cat "$tmpdir/out"
	grep -qE '\((9[5-9]|100|[0-4])% on p1\)' "$tmpdir/out" ||
		fail "native mode split over both links"
}

case_udp_paths_differ_delay_loss()
{
	encap 1 || return 1
	tc -n ns_rt qdisc replace dev p1 root netem delay 1ms loss 1% &&
	tc -n ns_rt qdisc replace dev p2 root netem delay 6ms loss 2% ||
		return 1
	transfer 4 1048576
	tc -n ns_rt qdisc del dev p1 root
	tc -n ns_rt qdisc del dev p2 root
	return 0
}

CASES=(udp_sprays_one_message native_takes_one_path
       udp_paths_differ_delay_loss)

ktap_main "${CASES[@]}"
