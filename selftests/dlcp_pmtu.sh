#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP path MTU: the sender's link has MTU 1500 but the router's link to
# the receiver only 1280. The first full-size segments draw ICMP
# "fragmentation needed" (DLCP sends with DF); the module lowers the path
# MTU, re-cuts the messages in flight, and the transfer completes
# byte-identical. No packet over the MTU is ever sent. The same over IPv6
# (ICMPv6 "packet too big"), and both inside UDP, where the error reaches
# the module through the UDP tunnel socket of its port.
#
#   ns_s 10.77.3.2 --(1500)-- 10.77.3.1 ns_rt 10.77.4.1 --(1280)-- 10.77.4.2 ns_r
#        fd77:3::2            fd77:3::1       fd77:4::1            fd77:4::2

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

LOSS=$SELFTEST_DIR/dlcp_loss
tmpdir=

cleanup()
{
	ns_delete ns_s ns_rt ns_r
	return 0
}

setup()
{
	need_exec "$LOSS" || return 1
	modprobe -q veth 2> /dev/null
	ns_create ns_s ns_rt ns_r || return 1
	ip -n ns_s link add eth0 type veth peer name s0 netns ns_rt &&
	ip -n ns_r link add eth0 type veth peer name r0 netns ns_rt || return 1
	ip -n ns_s addr add 10.77.3.2/24 dev eth0 &&
	ip -n ns_rt addr add 10.77.3.1/24 dev s0 &&
	ip -n ns_rt addr add 10.77.4.1/24 dev r0 &&
	ip -n ns_r addr add 10.77.4.2/24 dev eth0 || return 1
	ip -n ns_s addr add fd77:3::2/64 dev eth0 nodad &&
	ip -n ns_rt addr add fd77:3::1/64 dev s0 nodad &&
	ip -n ns_rt addr add fd77:4::1/64 dev r0 nodad &&
	ip -n ns_r addr add fd77:4::2/64 dev eth0 nodad || return 1
	ip -n ns_rt link set r0 mtu 1280 && ip -n ns_r link set eth0 mtu 1280 ||
		return 1
	for l in "ns_s eth0" "ns_rt s0" "ns_rt r0" "ns_r eth0"; do
		read -r ns dev <<< "$l"
		ip -n "$ns" link set "$dev" up || return 1
	done
	ip -n ns_s route add default via 10.77.3.1 &&
	ip -n ns_r route add default via 10.77.4.1 &&
	ip -n ns_s -6 route add default via fd77:3::1 &&
	ip -n ns_r -6 route add default via fd77:4::1 &&
	ip netns exec ns_rt sysctl -qw net.ipv4.ip_forward=1 &&
	ip netns exec ns_rt sysctl -qw net.ipv6.conf.all.forwarding=1
}

# pmtu_case 4|6 ENCAP: 3 MiB through the 1280-byte link, sender and
# receiver in encapsulation ENCAP (0 native, 1 UDP), from a fresh route
pmtu_case()
{
	local fam=$1 dst=10.77.4.2 rpid pmtu reseg rc=0

	[ "$fam" = 6 ] && dst=fd77:4::2
	for ns in ns_s ns_r; do
		ip netns exec "$ns" sysctl -qw net.dlcp.encap="$2" || return 1
	done
	# forget what earlier cases learnt
	ip -n ns_s route flush cache
	ip -n ns_s -6 route flush cache
	pmtu=$(snmp ns_s DlcpPmtuUpdates)
	reseg=$(snmp ns_s DlcpResegmented)
	rm -f "$tmpdir/ready"
	DLCP_FAMILY=$fam ip netns exec ns_r timeout 120 "$LOSS" recv \
		--port 7400 --count 3 --size 1048576 --budget 0 --expect exact \
		--ready "$tmpdir/ready" &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" || return 1
	DLCP_FAMILY=$fam ip netns exec ns_s timeout 120 "$LOSS" send \
		--to "$dst" --port 7400 --count 3 --size 1048576 --budget 0 \
		--expect-completion exact || { echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	echo "DlcpPmtuUpdates +$(($(snmp ns_s DlcpPmtuUpdates) - pmtu))," \
		"DlcpResegmented +$(($(snmp ns_s DlcpResegmented) - reseg))"
	ip -n ns_s route get "$dst" | head -2
	[ $(($(snmp ns_s DlcpPmtuUpdates) - pmtu)) -ge 1 ] ||
		{ echo "FAIL: no \"too big\" error handled"; rc=1; }
	[ $(($(snmp ns_s DlcpResegmented) - reseg)) -ge 1 ] ||
		{ echo "FAIL: no message re-cut"; rc=1; }
	ip -n ns_s route get "$dst" | grep -q 'mtu 1280' ||
		{ echo "FAIL: the route's PMTU was not lowered"; rc=1; }
	return "$rc"
}

case_pmtu_lowers_segments() { pmtu_case 4 0; }
case_pmtu_udp() { pmtu_case 4 1; }
case_pmtu6_packet_too_big() { pmtu_case 6 0; }
case_pmtu6_udp() { pmtu_case 6 1; }

CASES=(pmtu_lowers_segments pmtu_udp pmtu6_packet_too_big pmtu6_udp)

ktap_main "${CASES[@]}"
